// SPDX-License-Identifier: MIT
/*
 * The persistent cache of built unwind tables (include/unwind_cache.h): one
 * entry file per build-id in a directory of root's alone, read through a
 * descriptor of that directory (openat, O_NOFOLLOW) so that the checked
 * directory is the one used; each entry checked in full (header, length,
 * crc32, build-id, file size, then the compact layout the BPF walker
 * relies on) before a word of it is used.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <endian.h>
#include <zlib.h>
#include "lib_io.h"
#include "log.h"
#include "unwind_cache.h"

#define ENTRY_SUFFIX ".unw"
#define TMP_PREFIX ".tmp."
/* the compact layout's bounds (user/unwind/unwind_compact.c) */
#define MAX_RULES 65536u

struct unwind_cache {
	char *dir;
	int dfd;
	pthread_mutex_t lock;
	struct unwind_cache_stats st;
	bool no_writes; /* the disk is full or read-only: no more writes this run */
	bool warned_write;
	uint32_t tmp_seq;
};

static uint32_t get_le32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return le32toh(v);
}

static uint64_t get_le64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return le64toh(v);
}

static void put_le32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, 4);
}

static void put_le64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, 8);
}

/* Header field offsets (include/unwind_cache.h) */
enum {
	OFF_MAGIC = 0,
	OFF_VERSION = 8,
	OFF_HDR_SIZE = 12,
	OFF_PAGE_SHIFT = 16,
	OFF_ID_LEN = 20,
	OFF_ID = 24,
	OFF_NR_ROWS = 44,
	OFF_FILE_SIZE = 48,
	OFF_BASE = 56,
	OFF_END = 64,
	OFF_CFI_BYTES = 72,
	OFF_NR_PAGES = 80,
	OFF_RULES = 84,
	OFF_NR_RULES = 88,
	OFF_NR_WORDS = 92,
};
_Static_assert(OFF_NR_WORDS + 4 == UNWIND_CACHE_HDR_SIZE, "header layout");
_Static_assert(OFF_ID + UNWIND_CACHE_ID_MAX == OFF_NR_ROWS, "build-id field");

int unwind_cache__encode(const struct unwind_cache_key *key, const struct unwind_cache_table *t,
			 uint8_t **out, size_t *out_len)
{
	size_t len;
	uint8_t *b;

	*out = NULL;
	*out_len = 0;
	if (!key->id_len || key->id_len > UNWIND_CACHE_ID_MAX || !t->nr_words || !t->words)
		return -EINVAL;
	len = UNWIND_CACHE_HDR_SIZE + (size_t)t->nr_words * 4 + 4;
	b = calloc(1, len);
	if (!b)
		return -ENOMEM;
	memcpy(b + OFF_MAGIC, UNWIND_CACHE_MAGIC, 8);
	put_le32(b + OFF_VERSION, UNWIND_CACHE_VERSION);
	put_le32(b + OFF_HDR_SIZE, UNWIND_CACHE_HDR_SIZE);
	put_le32(b + OFF_PAGE_SHIFT, BPFPROF_UNWIND_PAGE_SHIFT);
	put_le32(b + OFF_ID_LEN, (uint32_t)key->id_len);
	memcpy(b + OFF_ID, key->id, key->id_len);
	put_le32(b + OFF_NR_ROWS, t->nr_rows);
	put_le64(b + OFF_FILE_SIZE, key->file_size);
	put_le64(b + OFF_BASE, t->base);
	put_le64(b + OFF_END, t->end);
	put_le64(b + OFF_CFI_BYTES, t->cfi_bytes);
	put_le32(b + OFF_NR_PAGES, t->info.nr_pages);
	put_le32(b + OFF_RULES, t->info.rules);
	put_le32(b + OFF_NR_RULES, t->info.nr_rules);
	put_le32(b + OFF_NR_WORDS, t->nr_words);
	for (uint32_t i = 0; i < t->nr_words; i++)
		put_le32(b + UNWIND_CACHE_HDR_SIZE + (size_t)i * 4, t->words[i]);
	put_le32(b + len - 4, (uint32_t)crc32(0, b, (uInt)(len - 4)));
	*out = b;
	*out_len = len;
	return 0;
}

static int bad(char *why, size_t why_len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int bad(char *why, size_t why_len, const char *fmt, ...)
{
	va_list ap;

	if (why && why_len) {
		va_start(ap, fmt);
		vsnprintf(why, why_len, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/*
 * The words make a compact table the walker can use (unwind_compact.c): a
 * page index from nr_pages + 1 rising to the rules, rows with low pcs
 * in their page and rising within it, and rule indices below nr_rules.
 */
static int check_layout(const uint32_t *w, uint32_t nr_words, const struct bpfprof_unwind_table *in,
			uint64_t base, uint64_t end, char *why, size_t why_len)
{
	uint32_t p, i;

	if (end < base || end - base > (1ULL << 32))
		return bad(why, why_len, "malformed table: range 0x%llx-0x%llx",
			   (unsigned long long)base, (unsigned long long)end);
	if (!in->nr_pages || in->nr_pages > ((end - base) >> BPFPROF_UNWIND_PAGE_SHIFT) + 1)
		return bad(why, why_len, "malformed table: %u pages for a range of %llu bytes",
			   in->nr_pages, (unsigned long long)(end - base));
	if (!in->nr_rules || in->nr_rules > MAX_RULES || (uint64_t)in->nr_pages + 1 > in->rules ||
	    (uint64_t)in->rules + in->nr_rules != nr_words)
		return bad(why, why_len,
			   "malformed table: %u pages, rules at word %u, %u rules in %u words",
			   in->nr_pages, in->rules, in->nr_rules, nr_words);
	if (w[0] != in->nr_pages + 1 || w[in->nr_pages] != in->rules)
		return bad(why, why_len, "malformed table: page index from %u to %u", w[0],
			   w[in->nr_pages]);
	for (p = 0; p < in->nr_pages; p++) {
		if (w[p] > w[p + 1])
			return bad(why, why_len, "malformed table: page %u goes back", p);
		for (i = w[p]; i < w[p + 1]; i++) {
			if (BPFPROF_UNWIND_ROW_RULE(w[i]) >= in->nr_rules)
				return bad(why, why_len, "malformed table: word %u: rule %u of %u",
					   i, BPFPROF_UNWIND_ROW_RULE(w[i]), in->nr_rules);
			/*
			 * a row's 16 pc bits are the pc's low 16 (unwind_compact.c):
			 * those above the page's offset are its page's number
			 */
			if ((BPFPROF_UNWIND_ROW_PC(w[i]) ^ ((uint64_t)p << BPFPROF_UNWIND_PAGE_SHIFT)) &
			    0xffff & ~((1u << BPFPROF_UNWIND_PAGE_SHIFT) - 1))
				return bad(why, why_len,
					   "malformed table: word %u: pc 0x%x outside page %u", i,
					   BPFPROF_UNWIND_ROW_PC(w[i]), p);
			if (i > w[p] &&
			    BPFPROF_UNWIND_ROW_PC(w[i]) <= BPFPROF_UNWIND_ROW_PC(w[i - 1]))
				return bad(why, why_len,
					   "malformed table: word %u: rows out of order", i);
		}
	}
	return 0;
}

/*
 * The entry buf[0..len) for key, all but its words' layout checked (header,
 * size, crc32, build-id, file size): t's fields but words filled, nr_words
 * too. 0, or -EINVAL with why.
 */
static int decode_header(const uint8_t *buf, size_t len, const struct unwind_cache_key *key,
			 struct unwind_cache_table *t, char *why, size_t why_len)
{
	uint32_t v, nr_words, stored, crc, id_len;
	uint64_t want, fsize;

	memset(t, 0, sizeof(*t));
	if (len >= 8 && memcmp(buf, UNWIND_CACHE_MAGIC, 8))
		return bad(why, why_len, "bad magic");
	if (len < UNWIND_CACHE_HDR_SIZE + 4)
		return bad(why, why_len, "truncated: %zu bytes, less than a header", len);
	if ((v = get_le32(buf + OFF_VERSION)) != UNWIND_CACHE_VERSION)
		return bad(why, why_len, "format version %u, expected %u", v, UNWIND_CACHE_VERSION);
	if ((v = get_le32(buf + OFF_HDR_SIZE)) != UNWIND_CACHE_HDR_SIZE)
		return bad(why, why_len, "header size %u, expected %u", v, UNWIND_CACHE_HDR_SIZE);
	if ((v = get_le32(buf + OFF_PAGE_SHIFT)) != BPFPROF_UNWIND_PAGE_SHIFT)
		return bad(why, why_len, "page shift %u, expected %u", v,
			   BPFPROF_UNWIND_PAGE_SHIFT);
	nr_words = get_le32(buf + OFF_NR_WORDS);
	want = UNWIND_CACHE_HDR_SIZE + (uint64_t)nr_words * 4 + 4;
	if (len < want)
		return bad(why, why_len, "truncated: %zu bytes, the header says %llu", len,
			   (unsigned long long)want);
	if (len > want)
		return bad(why, why_len, "%llu bytes past the end the header gives (%llu)",
			   (unsigned long long)(len - want), (unsigned long long)want);
	stored = get_le32(buf + len - 4);
	crc = (uint32_t)crc32(0, buf, (uInt)(len - 4));
	if (stored != crc)
		return bad(why, why_len, "checksum mismatch: stored 0x%08x, computed 0x%08x",
			   stored, crc);
	id_len = get_le32(buf + OFF_ID_LEN);
	if (id_len != key->id_len || id_len > UNWIND_CACHE_ID_MAX ||
	    memcmp(buf + OFF_ID, key->id, id_len))
		return bad(why, why_len, "build-id mismatch: an entry for another file");
	fsize = get_le64(buf + OFF_FILE_SIZE);
	if (fsize != key->file_size)
		return bad(why, why_len,
			   "stale: built from a file of %llu bytes, this one has %llu",
			   (unsigned long long)fsize, (unsigned long long)key->file_size);

	t->nr_rows = get_le32(buf + OFF_NR_ROWS);
	t->base = get_le64(buf + OFF_BASE);
	t->end = get_le64(buf + OFF_END);
	t->cfi_bytes = get_le64(buf + OFF_CFI_BYTES);
	t->info.nr_pages = get_le32(buf + OFF_NR_PAGES);
	t->info.rules = get_le32(buf + OFF_RULES);
	t->info.nr_rules = get_le32(buf + OFF_NR_RULES);
	if (!nr_words)
		return bad(why, why_len, "malformed table: no words");
	t->nr_words = nr_words;
	return 0;
}

int unwind_cache__decode(const uint8_t *buf, size_t len, const struct unwind_cache_key *key,
			 struct unwind_cache_table *t, char *why, size_t why_len)
{
	int err = decode_header(buf, len, key, t, why, why_len);
	uint32_t i;

	if (err)
		return err;
	t->words = malloc((size_t)t->nr_words * 4);
	if (!t->words) {
		memset(t, 0, sizeof(*t));
		return -ENOMEM;
	}
	for (i = 0; i < t->nr_words; i++)
		t->words[i] = get_le32(buf + UNWIND_CACHE_HDR_SIZE + (size_t)i * 4);
	err = check_layout(t->words, t->nr_words, &t->info, t->base, t->end, why, why_len);
	if (err) {
		free(t->words);
		memset(t, 0, sizeof(*t));
	}
	return err;
}

void unwind_cache_table__release(struct unwind_cache_table *t)
{
	if (t->map)
		munmap(t->map, t->map_len);
	else
		free(t->words);
	t->map = NULL;
	t->map_len = 0;
	t->words = NULL;
}

/* The entry's file name: the build-id in hex, then ".unw" */
static void entry_name(const struct unwind_cache_key *key, char *name, size_t size)
{
	size_t n = 0;

	for (size_t i = 0; i < key->id_len && n + 3 < size; i++)
		n += snprintf(name + n, size - n, "%02x", key->id[i]);
	snprintf(name + n, size - n, "%s", ENTRY_SUFFIX);
}

static bool is_entry_name(const char *n)
{
	size_t len = strlen(n), sl = strlen(ENTRY_SUFFIX);

	return len > sl && len <= 2 * UNWIND_CACHE_ID_MAX + sl &&
	       !strcmp(n + len - sl, ENTRY_SUFFIX) && strspn(n, "0123456789abcdef") == len - sl;
}

/* mkdir -p, the missing directories 0700; existing ones as they are */
static int make_dirs(const char *dir)
{
	char *p = strdup(dir), *s;
	int err = 0;

	if (!p)
		return -ENOMEM;
	for (s = p + 1; !err; s++) {
		char c = *s;

		if (c != '/' && c)
			continue;
		*s = 0;
		if (mkdir(p, 0700) && errno != EEXIST)
			err = -errno;
		*s = c;
		if (!c)
			break;
	}
	free(p);
	return err;
}

struct dir_entry {
	char name[2 * UNWIND_CACHE_ID_MAX + 8];
	uint64_t size;
	struct timespec mtime;
};

static int cmp_mtime(const void *a, const void *b)
{
	const struct dir_entry *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
	return strcmp(x->name, y->name);
}

/*
 * Sum the entries on disk (and remove temporary files of writers that are
 * gone); where the total is over max, remove the least recently used until
 * it is not. Under c->lock.
 */
static void scan(struct unwind_cache *c, uint64_t max)
{
	struct dir_entry *ents = NULL, *grown;
	size_t nr = 0, cap = 0, i;
	uint64_t total = 0;
	struct dirent *de;
	DIR *d;
	int fd;

	fd = openat(c->dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d))) {
		struct stat sb;

		if (!strncmp(de->d_name, TMP_PREFIX, strlen(TMP_PREFIX))) {
			/* .tmp.PID.SEQ.NAME: a writer's, removed once it is gone */
			long pid = strtol(de->d_name + strlen(TMP_PREFIX), NULL, 10);

			if (pid > 0 && kill((pid_t)pid, 0) && errno == ESRCH)
				unlinkat(c->dfd, de->d_name, 0);
			continue;
		}
		if (!is_entry_name(de->d_name) ||
		    fstatat(c->dfd, de->d_name, &sb, AT_SYMLINK_NOFOLLOW) || !S_ISREG(sb.st_mode))
			continue;
		if (nr == cap) {
			cap = cap ? cap * 2 : 64;
			grown = realloc(ents, cap * sizeof(*ents));
			if (!grown)
				break;
			ents = grown;
		}
		snprintf(ents[nr].name, sizeof(ents[nr].name), "%s", de->d_name);
		ents[nr].size = (uint64_t)sb.st_size;
		ents[nr].mtime = sb.st_mtim;
		total += ents[nr].size;
		nr++;
	}
	closedir(d);
	if (total > max && nr) {
		qsort(ents, nr, sizeof(*ents), cmp_mtime);
		for (i = 0; i < nr && total > max; i++) {
			if (unlinkat(c->dfd, ents[i].name, 0))
				continue;
			total -= ents[i].size;
			c->st.evicted++;
			pr_debug(
				"unwind cache: removed '%s/%s' (%llu bytes, least recently used) for room\n",
				c->dir, ents[i].name, (unsigned long long)ents[i].size);
		}
	}
	free(ents);
	c->st.bytes = total;
}

struct unwind_cache *unwind_cache__open(const char *dir, uint64_t max_bytes, bool given)
{
	struct unwind_cache *c;
	struct stat sb = { 0 };
	int fd, err;

	if (!dir || !*dir || !strcmp(dir, "none"))
		return NULL;
	err = make_dirs(dir);
	if (err && err != -ENOMEM) {
		log__printf(
			given ? LOG_WARN : LOG_INFO,
			"bpfprof: unwind cache: cannot create '%s': %s: no cache this run (--unwind-cache DIR or none)\n",
			dir, strerror(-err));
		return NULL;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		pr_warn("unwind cache: '%s' refused: %s: no cache this run (--unwind-cache DIR or none)\n",
			dir,
			err == -ELOOP || err == -ENOTDIR ? "not a directory (or a symlink)" :
							   strerror(-err));
		return NULL;
	}
	if (fstat(fd, &sb) || sb.st_uid != geteuid() || (sb.st_mode & 077)) {
		/* the default directory, root's, met by a user with capabilities only: expected */
		bool quiet = !given && geteuid() && !sb.st_uid && !(sb.st_mode & 077);

		log__printf(
			quiet ? LOG_INFO : LOG_WARN,
			"bpfprof: unwind cache: '%s' refused: owned by uid %u with mode %04o, where it must be uid %u's with mode 0700 (no group or other access): no cache this run; fix it, or pick another --unwind-cache DIR or none\n",
			dir, (unsigned)sb.st_uid, (unsigned)(sb.st_mode & 07777),
			(unsigned)geteuid());
		close(fd);
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c || !(c->dir = strdup(dir))) {
		free(c);
		close(fd);
		return NULL;
	}
	c->dfd = fd;
	c->st.max_bytes = max_bytes;
	pthread_mutex_init(&c->lock, NULL);
	pthread_mutex_lock(&c->lock);
	scan(c, max_bytes);
	pthread_mutex_unlock(&c->lock);
	return c;
}

void unwind_cache__free(struct unwind_cache *c)
{
	if (!c)
		return;
	close(c->dfd);
	pthread_mutex_destroy(&c->lock);
	free(c->dir);
	free(c);
}

static void count(struct unwind_cache *c, uint64_t *field)
{
	pthread_mutex_lock(&c->lock);
	(*field)++;
	pthread_mutex_unlock(&c->lock);
}

int unwind_cache__get(struct unwind_cache *c, const struct unwind_cache_key *key, const char *name,
		      struct unwind_cache_table *t)
{
	char ename[2 * UNWIND_CACHE_ID_MAX + 8], why[160];
	struct timespec t0, t1;
	uint8_t *buf = NULL;
	struct stat sb;
	size_t got = 0;
	int fd, err;

	memset(t, 0, sizeof(*t));
	if (!c || !key->id_len || key->id_len > UNWIND_CACHE_ID_MAX)
		return -ENOENT;
	entry_name(key, ename, sizeof(ename));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	fd = openat(c->dfd, ename, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		if (err == -ENOENT) {
			count(c, &c->st.misses);
			return -ENOENT;
		}
		snprintf(why, sizeof(why), "cannot open: %s", strerror(-err));
		goto reject;
	}
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
		snprintf(why, sizeof(why), "not a regular file");
		goto reject;
	}
	if ((uint64_t)sb.st_size > UNWIND_CACHE_MAX_ENTRY) {
		snprintf(why, sizeof(why), "%llu bytes, more than an entry can be",
			 (unsigned long long)sb.st_size);
		goto reject;
	}
	/*
	 * the entry mapped from the page cache, its pages in one call, not
	 * copied into a buffer; on a little-endian host its words are the
	 * table's as they are, borrowed from the mapping (t->map) rather than
	 * copied out one by one: a 1.5 MB table (node) is a crc32 and a check
	 * of its words, not two copies and two buffers' page faults
	 */
	if (sb.st_size)
		buf = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	if (buf == MAP_FAILED)
		buf = NULL;
	if (buf)
		got = (size_t)sb.st_size;
	if (buf && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) {
		err = decode_header(buf, got, key, t, why, sizeof(why));
		if (!err) {
			/* 4-byte aligned: a page's start + 96 */
			t->words = (uint32_t *)(buf + UNWIND_CACHE_HDR_SIZE);
			err = check_layout(t->words, t->nr_words, &t->info, t->base, t->end, why,
					   sizeof(why));
		}
		if (!err) {
			t->map = buf;
			t->map_len = got;
			buf = NULL;
		} else {
			memset(t, 0, sizeof(*t));
		}
	} else {
		err = unwind_cache__decode(buf ? buf : (const uint8_t *)"", got, key, t, why,
					   sizeof(why));
	}
	if (buf)
		munmap(buf, got);
	if (err == -ENOMEM) {
		close(fd);
		return err;
	}
	if (err)
		goto reject;
	/* its use, for the least-recently-used order: mtime, as atime may not be kept */
	futimens(fd, NULL);
	close(fd);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	pthread_mutex_lock(&c->lock);
	c->st.hits++;
	c->st.read_ns +=
		(uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000ULL + t1.tv_nsec - t0.tv_nsec;
	pthread_mutex_unlock(&c->lock);
	return 0;
reject:
	if (fd >= 0)
		close(fd);
	pr_info("unwind cache: '%s/%s' (for '%s'): %s: removed, the table is rebuilt\n", c->dir,
		ename, name ? name : "?", why);
	unlinkat(c->dfd, ename, 0);
	count(c, &c->st.rejected);
	return -EINVAL;
}

int unwind_cache__put(struct unwind_cache *c, const struct unwind_cache_key *key,
		      const struct unwind_cache_table *t)
{
	char ename[2 * UNWIND_CACHE_ID_MAX + 8], tmp[2 * UNWIND_CACHE_ID_MAX + 48];
	uint8_t *buf;
	size_t len;
	uint32_t seq;
	int fd, err;

	if (!c)
		return 0;
	pthread_mutex_lock(&c->lock);
	err = c->no_writes ? -ENOSPC : 0;
	seq = c->tmp_seq++;
	pthread_mutex_unlock(&c->lock);
	if (err)
		return err;
	err = unwind_cache__encode(key, t, &buf, &len);
	if (err)
		return err;
	if (len > c->st.max_bytes) {
		free(buf);
		return -E2BIG; /* would only push everything else out */
	}
	entry_name(key, ename, sizeof(ename));
	snprintf(tmp, sizeof(tmp), TMP_PREFIX "%d.%u.%s", (int)getpid(), seq, ename);
	fd = openat(c->dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = -errno;
	} else {
		err = io__write_all(fd, buf, len);
		if (close(fd) && !err)
			err = -errno;
		if (!err && renameat(c->dfd, tmp, c->dfd, ename))
			err = -errno;
		if (err)
			unlinkat(c->dfd, tmp, 0);
	}
	free(buf);
	pthread_mutex_lock(&c->lock);
	if (err) {
		c->st.write_errors++;
		if (err == -ENOSPC || err == -EDQUOT || err == -EROFS)
			c->no_writes = true;
		if (!c->warned_write)
			pr_warn("unwind cache: cannot write '%s/%s': %s: tables not cached%s\n",
				c->dir, ename, strerror(-err),
				c->no_writes ? " for the rest of this run" : "");
		c->warned_write = true;
	} else {
		c->st.written++;
		c->st.bytes += len;
		if (c->st.bytes > c->st.max_bytes)
			scan(c, c->st.max_bytes);
	}
	pthread_mutex_unlock(&c->lock);
	return err;
}

void unwind_cache__stats(struct unwind_cache *c, struct unwind_cache_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	*st = c->st;
	pthread_mutex_unlock(&c->lock);
}

void unwind_cache__print(FILE *f, struct unwind_cache *c)
{
	struct unwind_cache_stats st;

	if (!c)
		return;
	unwind_cache__stats(c, &st);
	fprintf(f,
		"bpfprof: unwind cache '%s': %llu tables loaded from it in %.1f ms, %llu not in it, %llu bad entries "
		"rebuilt, %llu written (%llu failed), %llu removed for room; %.1f MiB on disk of %.0f MiB "
		"(--unwind-cache-size)\n",
		c->dir, (unsigned long long)st.hits, st.read_ns / 1e6,
		(unsigned long long)st.misses, (unsigned long long)st.rejected,
		(unsigned long long)st.written, (unsigned long long)st.write_errors,
		(unsigned long long)st.evicted, st.bytes / (double)(1 << 20),
		st.max_bytes / (double)(1 << 20));
}

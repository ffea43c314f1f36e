// SPDX-License-Identifier: MIT
/*
 * jitdump reader and the JIT symbol table it shares with the perf map reader
 * (include/sym_jitdump.h). Follows "JITDUMP specification version 2"
 * (tools/perf/Documentation/jitdump-specification.txt in the Linux kernel tree):
 * every field is read through a bounded cursor and converted from the
 * writer's byte order as it is read; every size and count is checked against
 * the bytes left in its record before use. Names live in one string arena;
 * entries are sorted by start address for lookups.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "array.h"
#include "lib_cursor.h"
#include "log.h"
#include "sym_jitdump.h"

/* On-disk sizes (spec sections III and IV); fields are read one by one. */
#define JITDUMP_FILE_HDR_SIZE 40 /* magic..flags */
#define JITDUMP_REC_HDR_SIZE 16 /* id, total_size, timestamp */
#define JITDUMP_LOAD_FIXED 40 /* pid, tid, vma, code_addr, code_size, code_index */
#define JITDUMP_MOVE_FIXED 48 /* pid, tid, vma, old, new, code_size, code_index */
#define JITDUMP_DEBUG_FIXED 16 /* code_addr, nr_entry */
#define JITDUMP_DEBUG_ENTRY_MIN 17 /* code_addr, line, discrim, "" */
#define JITDUMP_UNWIND_FIXED 24 /* unwind_data_size, eh_frame_hdr_size, mapped_size */

struct jit_entry {
	uint64_t start, size, timestamp;
	uint64_t code_index; /* jitdump LOAD/MOVE code_index; 0 for perf map */
	size_t seq; /* insertion order: breaks timestamp ties, later wins */
	size_t name_off; /* into jit_table.names */
};

struct jit_table {
	struct jit_entry *ents;
	size_t nr, cap;
	char *names; /* NUL-terminated names, back to back */
	size_t names_len, names_cap;
	uint64_t max_size; /* largest entry size: bounds the backward scan in lookups */
	bool sorted;
};

struct jit_table *jit_table__new(void)
{
	return calloc(1, sizeof(struct jit_table));
}

void jitdump__free(struct jit_table *t)
{
	if (!t)
		return;
	free(t->ents);
	free(t->names);
	free(t);
}

static int table_add_name(struct jit_table *t, const char *name, size_t len, size_t *off)
{
	void *names = t->names;

	if (len >= SIZE_MAX - t->names_len)
		return -ENOMEM;
	if (array__grow(&names, &t->names_cap, t->names_len + len + 1, 1))
		return -ENOMEM;
	t->names = names;
	memcpy(t->names + t->names_len, name, len);
	t->names[t->names_len + len] = '\0';
	*off = t->names_len;
	t->names_len += len + 1;
	return 0;
}

static int table_add(struct jit_table *t, uint64_t start, uint64_t size, uint64_t ts,
		     uint64_t code_index, size_t name_off)
{
	void *ents = t->ents;
	struct jit_entry *e;

	if (array__grow(&ents, &t->cap, t->nr + 1, sizeof(*e)))
		return -ENOMEM;
	t->ents = ents;
	e = &t->ents[t->nr];
	e->start = start;
	e->size = size;
	e->timestamp = ts;
	e->code_index = code_index;
	e->seq = t->nr;
	e->name_off = name_off;
	t->nr++;
	if (size > t->max_size)
		t->max_size = size;
	t->sorted = false;
	return 0;
}

int jit_table__add(struct jit_table *t, uint64_t start, uint64_t size, uint64_t timestamp,
		   const char *name, size_t name_len)
{
	size_t off;
	int err;

	err = table_add_name(t, name, name_len, &off);
	if (err)
		return err;
	return table_add(t, start, size, timestamp, 0, off);
}

static int cmp_entry(const void *a, const void *b)
{
	const struct jit_entry *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return 0;
}

void jit_table__finish(struct jit_table *t)
{
	if (!t || t->sorted)
		return;
	if (t->nr > 1)
		qsort(t->ents, t->nr, sizeof(*t->ents), cmp_entry);
	t->sorted = true;
}

/* Does a win over b: later timestamp, then later in the file. */
static bool newer(const struct jit_entry *a, const struct jit_entry *b)
{
	if (a->timestamp != b->timestamp)
		return a->timestamp > b->timestamp;
	return a->seq > b->seq;
}

const char *jitdump__lookup_at(const struct jit_table *t, uint64_t addr, uint64_t time,
			       uint64_t *off)
{
	const struct jit_entry *best = NULL;
	size_t lo = 0, hi, i;

	if (!t || !t->nr || !t->sorted)
		return NULL;
	/* hi: the first entry starting above addr */
	hi = t->nr;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->ents[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/*
	 * Every entry that may cover addr starts within max_size below it;
	 * overlapping entries (reused code) are few, so the scan is short.
	 */
	for (i = lo; i-- > 0;) {
		const struct jit_entry *e = &t->ents[i];

		if (addr - e->start >= t->max_size)
			break;
		if (addr - e->start >= e->size || e->timestamp > time)
			continue;
		if (!best || newer(e, best))
			best = e;
	}
	if (!best)
		return NULL;
	if (off)
		*off = addr - best->start;
	return t->names + best->name_off;
}

const char *jitdump__lookup(const struct jit_table *t, uint64_t addr, uint64_t *off)
{
	return jitdump__lookup_at(t, addr, UINT64_MAX, off);
}

size_t jitdump__count(const struct jit_table *t)
{
	return t ? t->nr : 0;
}

int jitdump__sym(const struct jit_table *t, size_t i, struct jit_sym *out)
{
	const struct jit_entry *e;

	if (!t || i >= t->nr)
		return -ENOENT;
	e = &t->ents[i];
	out->start = e->start;
	out->size = e->size;
	out->timestamp = e->timestamp;
	out->name = t->names + e->name_off;
	return 0;
}

/* Name offset of the newest LOAD or MOVE with this code_index, for a MOVE. */
static bool find_code_index(const struct jit_table *t, uint64_t code_index, size_t *name_off)
{
	size_t i;

	for (i = t->nr; i-- > 0;) {
		if (t->ents[i].code_index == code_index) {
			*name_off = t->ents[i].name_off;
			return true;
		}
	}
	return false;
}

struct rec {
	uint32_t id, total_size;
	uint64_t timestamp;
	size_t off; /* of the record header in the file, for messages */
};

/* 1: entry added, 0: skipped as inconsistent (warned, counted), -ENOMEM. */
static int parse_load(struct jit_table *t, struct cursor *c, const struct rec *r,
		      const char *origin)
{
	uint32_t pid, tid;
	uint64_t vma, code_addr, code_size, code_index;
	const char *name;
	size_t name_len, off;
	int err;

	if (!cursor__u32(c, &pid) || !cursor__u32(c, &tid) || !cursor__u64(c, &vma) ||
	    !cursor__u64(c, &code_addr) || !cursor__u64(c, &code_size) ||
	    !cursor__u64(c, &code_index)) {
		pr_warn("jitdump: %s: offset %zu: LOAD record of %u bytes shorter than its %d fixed bytes\n",
			origin, r->off, r->total_size, JITDUMP_REC_HDR_SIZE + JITDUMP_LOAD_FIXED);
		return 0;
	}
	if (!cursor__str(c, &name, &name_len)) {
		pr_warn("jitdump: %s: offset %zu: LOAD record name not NUL-terminated within its %u bytes\n",
			origin, r->off, r->total_size);
		return 0;
	}
	/* The code bytes follow (code_size of them); they are not needed to name it. */
	err = table_add_name(t, name, name_len, &off);
	if (!err)
		err = table_add(t, code_addr, code_size, r->timestamp, code_index, off);
	return err ? err : 1;
}

static int parse_move(struct jit_table *t, struct cursor *c, const struct rec *r,
		      const char *origin, struct jitdump_stats *st)
{
	uint32_t pid, tid;
	uint64_t vma, old_addr, new_addr, code_size, code_index;
	size_t name_off;
	int err;

	if (!cursor__u32(c, &pid) || !cursor__u32(c, &tid) || !cursor__u64(c, &vma) ||
	    !cursor__u64(c, &old_addr) || !cursor__u64(c, &new_addr) ||
	    !cursor__u64(c, &code_size) || !cursor__u64(c, &code_index)) {
		pr_warn("jitdump: %s: offset %zu: MOVE record of %u bytes shorter than its %d fixed bytes\n",
			origin, r->off, r->total_size, JITDUMP_REC_HDR_SIZE + JITDUMP_MOVE_FIXED);
		return 0;
	}
	if (!find_code_index(t, code_index, &name_off)) {
		pr_debug("jitdump: %s: offset %zu: MOVE of code_index %llu with no LOAD\n", origin,
			 r->off, (unsigned long long)code_index);
		st->nr_orphan_move++;
		return 1;
	}
	err = table_add(t, new_addr, code_size, r->timestamp, code_index, name_off);
	return err ? err : 1;
}

static int parse_debug_info(struct cursor *c, const struct rec *r, const char *origin)
{
	uint64_t code_addr, nr_entry, i;

	if (!cursor__u64(c, &code_addr) || !cursor__u64(c, &nr_entry)) {
		pr_warn("jitdump: %s: offset %zu: DEBUG_INFO record of %u bytes shorter than its %d fixed bytes\n",
			origin, r->off, r->total_size, JITDUMP_REC_HDR_SIZE + JITDUMP_DEBUG_FIXED);
		return 0;
	}
	if (nr_entry > cursor__left(c) / JITDUMP_DEBUG_ENTRY_MIN) {
		pr_warn("jitdump: %s: offset %zu: DEBUG_INFO nr_entry %llu does not fit in the %zu bytes left\n",
			origin, r->off, (unsigned long long)nr_entry, cursor__left(c));
		return 0;
	}
	/* Validated only: line tables are not used for naming yet. */
	for (i = 0; i < nr_entry; i++) {
		uint64_t addr;
		uint32_t line, discrim;
		const char *file;
		size_t file_len;

		if (!cursor__u64(c, &addr) || !cursor__u32(c, &line) || !cursor__u32(c, &discrim) ||
		    !cursor__str(c, &file, &file_len)) {
			pr_warn("jitdump: %s: offset %zu: DEBUG_INFO entry %llu of %llu overruns the record\n",
				origin, r->off, (unsigned long long)i,
				(unsigned long long)nr_entry);
			return 0;
		}
	}
	return 1;
}

static int parse_unwinding_info(struct cursor *c, const struct rec *r, const char *origin)
{
	uint64_t data_size, hdr_size, mapped_size;

	if (!cursor__u64(c, &data_size) || !cursor__u64(c, &hdr_size) ||
	    !cursor__u64(c, &mapped_size)) {
		pr_warn("jitdump: %s: offset %zu: UNWINDING_INFO record of %u bytes shorter than its %d fixed bytes\n",
			origin, r->off, r->total_size, JITDUMP_REC_HDR_SIZE + JITDUMP_UNWIND_FIXED);
		return 0;
	}
	if (data_size > cursor__left(c) || hdr_size > data_size) {
		pr_warn("jitdump: %s: offset %zu: UNWINDING_INFO sizes (data %llu, eh_frame_hdr %llu) exceed the %zu bytes left\n",
			origin, r->off, (unsigned long long)data_size, (unsigned long long)hdr_size,
			cursor__left(c));
		return 0;
	}
	return 1;
}

int jitdump__parse(const void *data, size_t len, const char *origin, struct jit_table **out,
		   struct jitdump_stats *stats)
{
	struct cursor c = { .p = data, .end = (const uint8_t *)data + len };
	struct jitdump_stats local, *st = stats ? stats : &local;
	uint32_t magic = 0, version = 0, hdr_size = 0, elf_mach = 0, pad1 = 0, pid = 0;
	uint64_t hdr_ts = 0, flags = 0;
	struct jit_table *t;
	int err = 0;

	*out = NULL;
	memset(st, 0, sizeof(*st));
	if (!origin)
		origin = "jitdump";
	if (len < JITDUMP_FILE_HDR_SIZE) {
		pr_warn("jitdump: %s: offset 0: file of %zu bytes shorter than the %d-byte header\n",
			origin, len, JITDUMP_FILE_HDR_SIZE);
		return -EINVAL;
	}
	cursor__u32(&c, &magic);
	if (magic == JITDUMP_MAGIC_SWAPPED) {
		c.swap = true;
	} else if (magic != JITDUMP_MAGIC) {
		pr_warn("jitdump: %s: offset 0: bad magic 0x%08x (want 0x%08x)\n", origin, magic,
			JITDUMP_MAGIC);
		return -EINVAL;
	}
	cursor__u32(&c, &version);
	cursor__u32(&c, &hdr_size);
	cursor__u32(&c, &elf_mach);
	cursor__u32(&c, &pad1);
	cursor__u32(&c, &pid);
	cursor__u64(&c, &hdr_ts);
	cursor__u64(&c, &flags);
	if (version < 1 || version > 2) {
		pr_warn("jitdump: %s: offset 4: unsupported version %u\n", origin, version);
		return -ENOTSUP;
	}
	if (hdr_size < JITDUMP_FILE_HDR_SIZE || hdr_size > len) {
		pr_warn("jitdump: %s: offset 8: header total_size %u outside [%d, file size %zu]\n",
			origin, hdr_size, JITDUMP_FILE_HDR_SIZE, len);
		return -EINVAL;
	}
	st->version = version;
	st->elf_mach = elf_mach;
	st->pid = pid;
	st->flags = flags;
	st->swapped = c.swap;
	/* A later version's header may be longer: skip to its declared end. */
	c.p = (const uint8_t *)data + hdr_size;

	t = jit_table__new();
	if (!t)
		return -ENOMEM;

	while (cursor__left(&c) > 0) {
		struct cursor body;
		struct rec r = { .off = (size_t)(c.p - (const uint8_t *)data) };
		const uint8_t *rec_start = c.p;
		int ret = 1;

		if (cursor__left(&c) < JITDUMP_REC_HDR_SIZE) {
			pr_debug(
				"jitdump: %s: offset %zu: %zu trailing bytes, a record header being written\n",
				origin, r.off, cursor__left(&c));
			st->truncated = true;
			break;
		}
		cursor__u32(&c, &r.id);
		cursor__u32(&c, &r.total_size);
		cursor__u64(&c, &r.timestamp);
		if (r.total_size < JITDUMP_REC_HDR_SIZE) {
			pr_warn("jitdump: %s: offset %zu: record id %u total_size %u below the %d-byte header, stopping\n",
				origin, r.off, r.id, r.total_size, JITDUMP_REC_HDR_SIZE);
			st->corrupt = true;
			c.p = rec_start;
			break;
		}
		if (r.total_size > (size_t)(c.end - rec_start)) {
			pr_debug(
				"jitdump: %s: offset %zu: record id %u of %u bytes, only %zu left: truncated\n",
				origin, r.off, r.id, r.total_size, (size_t)(c.end - rec_start));
			st->truncated = true;
			c.p = rec_start;
			break;
		}
		body.p = c.p;
		body.end = rec_start + r.total_size;
		body.swap = c.swap;
		switch (r.id) {
		case JIT_CODE_LOAD:
			ret = parse_load(t, &body, &r, origin);
			st->nr_load += ret == 1;
			break;
		case JIT_CODE_MOVE:
			ret = parse_move(t, &body, &r, origin, st);
			st->nr_move += ret == 1;
			break;
		case JIT_CODE_DEBUG_INFO:
			ret = parse_debug_info(&body, &r, origin);
			st->nr_debug_info += ret == 1;
			break;
		case JIT_CODE_CLOSE:
			st->nr_close++;
			break;
		case JIT_CODE_UNWINDING_INFO:
			ret = parse_unwinding_info(&body, &r, origin);
			st->nr_unwinding_info += ret == 1;
			break;
		default:
			pr_debug(
				"jitdump: %s: offset %zu: unknown record type %u, skipping %u bytes\n",
				origin, r.off, r.id, r.total_size);
			st->nr_unknown++;
			break;
		}
		if (ret < 0) {
			err = ret;
			break;
		}
		if (ret == 0)
			st->nr_bad++;
		c.p = rec_start + r.total_size;
	}
	st->bytes_used = (size_t)(c.p - (const uint8_t *)data);
	if (err) {
		jitdump__free(t);
		return err;
	}
	jit_table__finish(t);
	*out = t;
	return 0;
}

int jit_file__read_fd(int fd, const char *origin, uint64_t max_size, char **data, size_t *len)
{
	struct stat sb;
	size_t cap, n = 0;
	char *buf;

	*data = NULL;
	*len = 0;
	if (fstat(fd, &sb))
		return -errno;
	if (!S_ISREG(sb.st_mode)) {
		pr_warn("jit: %s: not a regular file, not read\n", origin);
		return -EINVAL;
	}
	if (max_size > SIZE_MAX / 2)
		max_size = SIZE_MAX / 2;
	if (sb.st_size < 0 || (uint64_t)sb.st_size > max_size) {
		pr_warn("jit: %s: %lld bytes over the %llu-byte cap, not read\n", origin,
			(long long)sb.st_size, (unsigned long long)max_size);
		return -EFBIG;
	}
	/* The writer may still be appending: read to EOF, up to the cap. */
	cap = (size_t)sb.st_size + 1;
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t r;

		if (n + 1 >= cap) {
			size_t ncap;
			char *nb;

			if (n >= max_size) {
				char probe;
				ssize_t r = read(fd, &probe, 1);

				if (r == 0)
					break;
				pr_warn("jit: %s: grew over the %llu-byte cap, not read\n", origin,
					(unsigned long long)max_size);
				free(buf);
				return -EFBIG;
			}
			ncap = cap * 2 > max_size + 1 ? (size_t)max_size + 1 : cap * 2;
			if (ncap <= cap)
				ncap = cap + 1;
			nb = realloc(buf, ncap);
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap = ncap;
		}
		r = read(fd, buf + n, cap - 1 - n);
		if (r < 0) {
			int err = -errno;

			if (err == -EINTR)
				continue;
			free(buf);
			return err;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	*data = buf;
	*len = n;
	return 0;
}

int jit_file__read(const char *path, uint64_t max_size, char **data, size_t *len)
{
	int fd, err;

	*data = NULL;
	*len = 0;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = jit_file__read_fd(fd, path, max_size, data, len);
	close(fd);
	return err;
}


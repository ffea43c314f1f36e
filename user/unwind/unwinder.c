// SPDX-License-Identifier: MIT
/*
 * The unwinder's user side (include/unwinder.h): files -> unwind tables, each
 * in a BPF array of its own, within a byte budget; processes -> LPM entries
 * of their executable mappings. One mutex guards the bookkeeping; tables are built outside it,
 * on the caller's thread (targets known before sampling) or on the
 * background thread (processes met while sampling), so that the reader of
 * the ring buffer never waits for libdw.
 *
 * The order of writes is what the BPF walker needs: a table's words before
 * its slot's description, every LPM entry of a process before unwind_procs says it is
 * ready, and on a re-read the new entries before the stale ones go, so that
 * a running walk never sees a half-registered process.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include <endian.h>
#include <arpa/inet.h>
#include "array.h"
#include "log.h"
#include "proc_file.h"
#include "procmaps.h"
#include "sym_debuginfod.h"
#include "sym_elf.h"
#include "unwind_table.h"
#include "unwind_cache.h"
#include "unwind_compact.h"
#include "unwinder.h"

#define MAX_SEGS 4
/*
 * The pool of words maps installed ahead of need (sink->install_rows): one
 * size class an octave, 4 KiB (1,024 words, a page) to 2 MiB (node's table
 * is 1.5 MB), two of each class up to 64 KiB (the small libraries a new
 * process maps several of). A table goes in the smallest class that holds
 * it, so at most twice its own size (exactly its pages at 4 KiB); larger
 * tables, and those whose class is empty, are loaded as before.
 */
#define SLOT_TABLE 1
#define SLOT_POOL 2 /* an installed words map of the pool, no table yet */
#define POOL_CLASSES 10
#define POOL_MIN_ROOM 1024u
#define POOL_MAX 16
/*
 * A refill waits for this long without a registration or a table written
 * into the pool: its grace period holds the thread, and a new process's
 * next registrations (libraries it maps after its first samples: node's
 * come within 100 ms) would wait for it; and a short run (`-- node` 0.5 s)
 * does not pay for maps it will not use (2-3 ms of CPU for the 15)
 */
#define POOL_IDLE_NS (1000 * 1000000ULL)
static uint32_t pool_class_count(int c)
{
	return c <= 4 ? 2 : 1;
}
/* unwinder__may_have_proc's slots: registered processes counted by pid modulo this */
#define PROC_SLOTS (1u << 16)
/*
 * Files no registered process maps any more, kept with their tables for
 * the next process that maps them: a host runs the same programs again and
 * again (a shell's commands, a build's compilers), and each rebuilt its
 * table (libdw's CFI, the rows, a map loaded: 0.3-3 ms of CPU a file cold,
 * and the time before its walks have tables). At most this many, the
 * oldest dropped first, and before any table in use when a slot or room
 * is wanted. Only files with a build-id: a dev + inode freed with the last
 * mapping may be another file's next.
 */
#define KEEP_FILES 32

/* One file's table: where its rows are, and how its addresses map. */
struct file_entry {
	uint8_t id[ELF_BUILD_ID_MAX];
	size_t id_len; /* 0: keyed by dev + inode */
	dev_t dev;
	ino_t ino;
	/*
	 * Slot, or BPFPROF_UNWIND_NO_TABLE; held while the entry lives, even
	 * once its words are dropped, as LPM entries of processes name it
	 */
	uint32_t table;
	bool loaded; /* its words are in the kernel (not dropped for room) */
	uint32_t nr_rows;
	uint64_t bytes; /* kernel memory of its words */
	uint64_t base; /* the table's base ELF vaddr */
	struct {
		uint64_t offset, vaddr, filesz;
	} segs[MAX_SEGS]; /* executable PT_LOADs */
	int nr_segs;
	uint32_t refs; /* mappings of registered processes using it */
	bool used;
	uint64_t kept; /* refs 0 and kept (KEEP_FILES): when, in u->kept_seq's order; 0: not kept */
};

/* An executable mapping as the LPM trie has it, for the user-space walk (unwinder__rule) */
struct proc_range {
	uint64_t start, end;
	struct bpfprof_unwind_mapping v;
	uint32_t nr_keys; /* its trie entries, in proc_entry.keys after the ranges' before it */
};

struct proc_entry {
	uint32_t pid;
	struct bpfprof_unwind_key *keys;
	size_t nr_keys, cap_keys;
	struct proc_range *ranges;
	size_t nr_ranges, cap_ranges;
	uint32_t *files; /* indices into u->files, one per reference */
	size_t nr_files, cap_files;
	uint64_t sig; /* its executable mappings' (maps_sig) */
};

struct job {
	uint32_t pid;
	uint64_t sig; /* maps_sig of maps */
	uint64_t queued_ns; /* CLOCK_MONOTONIC when queued */
	struct profile_mapping *maps;
	size_t nr_maps;
};

/* A file of bpfprof's own process, as identified (struct file_entry's keys) */
struct own_file {
	uint8_t id[ELF_BUILD_ID_MAX];
	size_t id_len; /* 0: by dev + inode */
	dev_t dev;
	ino_t ino;
};

struct unwinder {
	struct unwind_sink sink;
	bool build_tables;
	char proc_dir[64];
	pthread_mutex_t lock;
	struct file_entry *files;
	size_t nr_files, cap_files;
	struct proc_entry *procs;
	size_t nr_procs, cap_procs;
	uint8_t *slot_used; /* per table slot: 0 free, SLOT_TABLE or SLOT_POOL */
	/* the pool's installed, unwritten words maps (POOL_CLASSES) */
	struct pool_map {
		uint32_t slot, room; /* room: words */
		uint64_t bytes;
	} pool[POOL_MAX];
	uint32_t nr_pool;
	bool pool_off; /* an install failed: the pool is not refilled */
	bool pool_ready; /* its first fill is over (done, or nothing to do) */
	uint64_t idle_since_ns; /* mono_ns() at the end of the last registration */
	/*
	 * Registered processes by pid modulo PROC_SLOTS (under the lock;
	 * read without it, relaxed: unwinder__may_have_proc). At most 64 pids
	 * (2^22, pid_max's limit, over the slots) share one: no overflow.
	 */
	uint8_t *proc_slots;
	/*
	 * bpfprof's own process (unwinder__set_own_pid; 0: none), which gets
	 * no table built for it: own_missing, the files it mapped without a
	 * table at its last registration; own_maps, that registration's
	 * executable mappings (paths its own), to register it again once
	 * another process's registration gave one of those files a table
	 * (own_stale)
	 */
	uint32_t own_pid;
	struct own_file *own_missing, *own_known; /* own_known: its files identified so far */
	size_t nr_own_missing, cap_own_missing, nr_own_known, cap_own_known;
	struct profile_mapping *own_maps;
	size_t nr_own_maps;
	bool own_stale;
	uint32_t nr_kept; /* files kept with no reference (KEEP_FILES) */
	uint64_t kept_seq;
	struct unwinder_stats st;
	struct unwind_cache *cache; /* borrowed; NULL: none */
	bool warned_full, warned_evict;
	/* background thread */
	pthread_t thread;
	bool thread_started, stopping;
	pthread_cond_t cond;
	/* the pool's first fill over (pool_ready), for unwinder__wait_pool */
	pthread_cond_t pool_cond;
	struct job *jobs;
	size_t nr_jobs, cap_jobs;
	uint32_t busy_pid; /* the job the thread runs; 0: none */
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int unwinder__lpm_keys(uint32_t tgid, uint64_t start, uint64_t end, struct bpfprof_unwind_key *out,
		       size_t out_cap)
{
	size_t n = 0;

	while (start < end) {
		int k = start ? __builtin_ctzll(start) : 63;

		while (k > 0 && (k > 62 || end - start < (1ULL << k)))
			k--;
		if (n >= out_cap)
			return -E2BIG;
		out[n].prefixlen = 32 + 64 - k;
		out[n].tgid = htonl(tgid);
		out[n].addr = htobe64(start);
		n++;
		start += 1ULL << k;
	}
	return (int)n;
}

struct unwinder *unwinder__new(const struct unwind_sink *sink, bool build_tables,
			       const char *proc_dir)
{
	struct unwinder *u = calloc(1, sizeof(*u));
	pthread_condattr_t ca;

	if (!u)
		return NULL;
	u->sink = *sink;
	u->build_tables = build_tables && sink->load_table && sink->budget && sink->max_tables;
	snprintf(u->proc_dir, sizeof(u->proc_dir), "%s", proc_dir);
	pthread_mutex_init(&u->lock, NULL);
	/* timed waits on CLOCK_MONOTONIC (mono_ns) */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&u->cond, &ca);
	pthread_cond_init(&u->pool_cond, &ca);
	pthread_condattr_destroy(&ca);
	u->slot_used = calloc(sink->max_tables ? sink->max_tables : 1, 1);
	u->proc_slots = calloc(PROC_SLOTS, 1);
	if (!u->slot_used || !u->proc_slots) {
		unwinder__free(u);
		errno = ENOMEM;
		return NULL;
	}
	u->st.budget = sink->budget;
	return u;
}

static void proc_entry_free(struct proc_entry *pe)
{
	free(pe->ranges);
	free(pe->keys);
	free(pe->files);
}

/* A copy of maps' executable mappings, paths strdup'ed (maps_free). NULL on ENOMEM. */
static struct profile_mapping *maps_copy(const struct profile_mapping *maps, size_t nr_maps,
					 size_t *nr_out)
{
	struct profile_mapping *out = calloc(nr_maps ? nr_maps : 1, sizeof(*out));
	size_t n = 0;

	for (size_t i = 0; out && i < nr_maps; i++) {
		if (maps[i].perms[2] != 'x')
			continue;
		out[n] = maps[i];
		out[n].path = strdup(maps[i].path ? maps[i].path : "");
		if (!out[n].path) {
			for (size_t k = 0; k < n; k++)
				free((char *)out[k].path);
			free(out);
			return NULL;
		}
		n++;
	}
	*nr_out = n;
	return out;
}

static void maps_free(struct profile_mapping *maps, size_t nr_maps)
{
	for (size_t i = 0; i < nr_maps; i++)
		free((char *)maps[i].path);
	free(maps);
}

static void jobs_free(struct unwinder *u)
{
	for (size_t i = 0; i < u->nr_jobs; i++) {
		/* pending at the end: the paths unwinder__queue strdup'ed too */
		for (size_t k = 0; k < u->jobs[i].nr_maps; k++)
			free((char *)u->jobs[i].maps[k].path);
		free(u->jobs[i].maps);
	}
	free(u->jobs);
	u->jobs = NULL;
	u->nr_jobs = u->cap_jobs = 0;
}

void unwinder__free(struct unwinder *u)
{
	if (!u)
		return;
	if (u->thread_started) {
		pthread_mutex_lock(&u->lock);
		u->stopping = true;
		pthread_cond_signal(&u->cond);
		pthread_mutex_unlock(&u->lock);
		pthread_join(u->thread, NULL);
	}
	jobs_free(u);
	maps_free(u->own_maps, u->nr_own_maps);
	free(u->own_missing);
	free(u->own_known);
	for (size_t i = 0; i < u->nr_procs; i++)
		proc_entry_free(&u->procs[i]);
	free(u->procs);
	free(u->files);
	free(u->slot_used);
	free(u->proc_slots);
	pthread_mutex_destroy(&u->lock);
	pthread_cond_destroy(&u->cond);
	pthread_cond_destroy(&u->pool_cond);
	free(u);
}

/* The file a mapping maps, opened: map_files reaches deleted files and other mount namespaces. */
static int open_mapped(struct unwinder *u, uint32_t pid, const struct profile_mapping *m)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%u/map_files/%llx-%llx", u->proc_dir, pid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0)
		return fd;
	snprintf(path, sizeof(path), "%s/%u/root", u->proc_dir, pid);
	fd = proc_file__open_in(path, m->path, NULL, UINT64_MAX);
	if (fd >= 0 || !m->inode)
		return fd;
	/*
	 * the process is gone (a registration from its remembered maps): the
	 * same path in this mount namespace, if it is the very file mapped
	 */
	fd = proc_file__open_in("/", m->path, NULL, UINT64_MAX);
	if (fd >= 0) {
		struct stat st;

		if (fstat(fd, &st) || st.st_ino != m->inode || major(st.st_dev) != m->dev_major ||
		    minor(st.st_dev) != m->dev_minor) {
			close(fd);
			fd = -ENOENT;
		}
	}
	return fd;
}

static struct file_entry *find_file(struct unwinder *u, const uint8_t *id, size_t id_len, dev_t dev,
				    ino_t ino, uint32_t *idx)
{
	for (size_t i = 0; i < u->nr_files; i++) {
		struct file_entry *f = &u->files[i];

		if (!f->used)
			continue;
		if (id_len ? (f->id_len == id_len && !memcmp(f->id, id, id_len)) :
			     (!f->id_len && f->dev == dev && f->ino == ino)) {
			*idx = i;
			return f;
		}
	}
	return NULL;
}

/* What building a file's table produced, before it is placed. */
struct built {
	struct file_entry f;
	struct unwind_table *t;
	struct unwind_cache_table ct; /* its compact words (ct.words NULL: no table) */
	bool from_cache; /* ct read from the persistent cache, not built */
};

void unwinder__set_cache(struct unwinder *u, struct unwind_cache *c)
{
	u->cache = c;
}

/* Encode b->t (freed) into b->ct, outside the lock. -ENOMEM, else 0 (a table that cannot be encoded: warned, none). */
static int encode_built(struct built *b, const char *name)
{
	struct unwind_table *t = b->t;
	int err;

	b->t = NULL;
	if (!t || !t->nr_rows) {
		unwind_table__free(t);
		return 0;
	}
	err = unwind_compact__encode(t, &b->ct.words, &b->ct.nr_words, &b->ct.info);
	if (err && err != -ENOMEM)
		pr_warn("unwind: '%s': %u rows cannot be encoded: %s\n", name, t->nr_rows,
			strerror(-err));
	b->ct.base = t->base;
	b->ct.end = t->end;
	b->ct.nr_rows = t->nr_rows;
	b->ct.cfi_bytes = t->cfi_bytes;
	unwind_table__free(t);
	return err == -ENOMEM ? err : 0;
}

static void read_segs(Elf *elf, struct file_entry *f)
{
	size_t n, i;

	if (elf_getphdrnum(elf, &n))
		return;
	for (i = 0; i < n && f->nr_segs < MAX_SEGS; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		f->segs[f->nr_segs].offset = ph.p_offset;
		f->segs[f->nr_segs].vaddr = ph.p_vaddr;
		f->segs[f->nr_segs].filesz = ph.p_filesz;
		f->nr_segs++;
	}
}

/*
 * Whether the file's table can fit in the whole budget, judged from its CFI
 * section's size (a 4-byte row for about 5 bytes of .eh_frame on Debian's
 * libraries; 3/4 leaves a margin): a table that cannot fit is not built,
 * which spares seconds of libdw and tens of MB on a large binary.
 */
static bool fits(struct unwinder *u, Elf *elf, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx, cfi = 0;
	bool ok;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return true;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *sname;

		/* a debug file's .eh_frame has no bits */
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    !(sname = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(sname, ".eh_frame") || (!cfi && !strcmp(sname, ".debug_frame")))
			cfi = sh.sh_size;
	}
	ok = (uint64_t)cfi / 4 * 3 <= u->sink.budget;
	pthread_mutex_lock(&u->lock);
	if (!ok && !u->warned_full)
		pr_warn("unwind: '%s' (%zu KiB of CFI) cannot fit in --unwind-memory (%llu KiB): walked by frame pointers, as are later such files\n",
			name, cfi >> 10, (unsigned long long)u->sink.budget >> 10);
	if (!ok)
		u->warned_full = true;
	pthread_mutex_unlock(&u->lock);
	return ok;
}

/*
 * A file stripped of its CFI (no .eh_frame, no .debug_frame) may have
 * .debug_frame in its separate debug file, found as the symbolizer finds it
 * (build-id, then .gnu_debuglink; under the process's root, then the host's),
 * else in debuginfod's client cache when debuginfod is on (nothing is fetched
 * while sampling). Its addresses are the file's: the same link.
 */
static int build_from_debug_file(struct unwinder *u, int fd, const char *root, const char *name,
				 const struct file_entry *fe, struct unwind_table **t)
{
	struct elf_load_opts o = { .debug_root = root, .host_debug = true, .file_path = name };
	char self[64], cached[4200], *path = NULL;
	int dfd, err = -ENOENT;
	Elf *dbg;

	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	dfd = elf__open_debug_file(self, ".debug_frame", &o, &path);
	if (dfd == -ENOENT && fe->id_len && debuginfod__enabled() &&
	    !debuginfod__cached(fe->id, fe->id_len, cached, sizeof(cached))) {
		o.debug_file = cached;
		dfd = elf__open_debug_file(self, ".debug_frame", &o, &path);
	}
	if (dfd < 0)
		return dfd == -ENOMEM ? -ENOMEM : -ENOENT;
	dbg = elf_begin(dfd, ELF_C_READ_MMAP, NULL);
	if (dbg && !fits(u, dbg, name)) {
		u->st.nr_full++;
	} else if (dbg) {
		err = unwind_table__build(dbg, path, t);
		if (!err)
			pr_debug("unwind: '%s': CFI from its debug file '%s'\n", name, path);
	}
	elf_end(dbg);
	close(dfd);
	free(path);
	return err;
}

/* f's identity appended to a list of bpfprof's own files (v, n, cap). 0 or -ENOMEM. */
static int own_file_add(struct own_file **v, size_t *n, size_t *cap, const struct file_entry *f)
{
	struct own_file *o;

	if (array__grow((void **)v, cap, *n + 1, sizeof(**v)))
		return -ENOMEM;
	o = &(*v)[(*n)++];
	memcpy(o->id, f->id, sizeof(o->id));
	o->id_len = f->id_len;
	o->dev = f->dev;
	o->ino = f->ino;
	return 0;
}

/*
 * Identify the file and, unless the cache has it, build its table (no lock
 * held; !may_build: identified only, b->f's id, dev and inode). root: the
 * process's root directory, where its debug files are.
 */
static int build_file(struct unwinder *u, int fd, const char *name, const char *root,
		      struct built *b, bool *cached, bool may_build)
{
	struct unwind_cache_key key = { 0 };
	struct stat sb;
	Elf *elf;
	uint32_t idx;
	uint64_t t0;
	bool known = false;
	int err, len;

	memset(b, 0, sizeof(*b));
	t0 = mono_ns();
	if (fstat(fd, &sb))
		return -errno;
	b->f.dev = sb.st_dev;
	b->f.ino = sb.st_ino;
	/* the file a cached table was built from: no need to read its build-id again */
	pthread_mutex_lock(&u->lock);
	for (idx = 0; idx < u->nr_files; idx++) {
		const struct file_entry *f = &u->files[idx];

		/* in use (mapped: its inode cannot be another file's); a kept one by its build-id */
		if (f->used && !f->kept && f->dev == b->f.dev && f->ino == b->f.ino) {
			memcpy(b->f.id, f->id, sizeof(f->id));
			b->f.id_len = f->id_len;
			*cached = true;
			break;
		}
	}
	/* bpfprof's own files, identified at an earlier registration of it: mapped since */
	for (size_t i = 0; !*cached && !may_build && i < u->nr_own_known; i++) {
		const struct own_file *o = &u->own_known[i];

		if (o->dev == b->f.dev && o->ino == b->f.ino) {
			memcpy(b->f.id, o->id, sizeof(o->id));
			b->f.id_len = o->id_len;
			known = true;
			break;
		}
	}
	pthread_mutex_unlock(&u->lock);
	if (*cached) {
		__atomic_add_fetch(&u->st.id_ns, mono_ns() - t0, __ATOMIC_RELAXED);
		return 0;
	}
	if (!known) {
		len = elf__read_build_id_fd(fd, b->f.id);
		b->f.id_len = len > 0 ? (size_t)len : 0;
	}
	pthread_mutex_lock(&u->lock);
	if (!known && !may_build)
		own_file_add(&u->own_known, &u->nr_own_known, &u->cap_own_known, &b->f);
	*cached = find_file(u, b->f.id, b->f.id_len, b->f.dev, b->f.ino, &idx) != NULL;
	pthread_mutex_unlock(&u->lock);
	__atomic_add_fetch(&u->st.id_ns, mono_ns() - t0, __ATOMIC_RELAXED);
	b->f.table = BPFPROF_UNWIND_NO_TABLE;
	if (*cached || !may_build)
		return 0;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return 0; /* not ELF: no table */
	read_segs(elf, &b->f);
	memcpy(key.id, b->f.id, sizeof(key.id));
	key.id_len = b->f.id_len;
	key.file_size = (uint64_t)sb.st_size;
	t0 = mono_ns();
	err = u->build_tables ? unwind_cache__get(u->cache, &key, name, &b->ct) : -ENOENT;
	__atomic_add_fetch(&u->st.cache_ns, mono_ns() - t0, __ATOMIC_RELAXED);
	if (!err) {
		b->from_cache = true;
	} else if (err == -ENOMEM) {
		elf_end(elf);
		return err;
	} else if (u->build_tables && !fits(u, elf, name)) {
		u->st.nr_full++;
	} else if (u->build_tables) {
		t0 = mono_ns();
		err = unwind_table__build(elf, name, &b->t);
		if (err == -ENOENT)
			err = build_from_debug_file(u, fd, root, name, &b->f, &b->t);
		__atomic_add_fetch(&u->st.build_ns, mono_ns() - t0, __ATOMIC_RELAXED);
		if (err == -ENOMEM) {
			elf_end(elf);
			return err;
		}
		if (err)
			b->t = NULL; /* no CFI, or bad CFI (warned): frame pointers in this file */
		err = encode_built(b, name);
		if (err) {
			elf_end(elf);
			return err;
		}
		/* a failure to write costs only the cache */
		if (b->ct.words && key.id_len)
			unwind_cache__put(u->cache, &key, &b->ct);
	}
	elf_end(elf);
	return 0;
}

/*
 * The vDSO's table, from our own copy: the kernel maps one image into every
 * 64-bit process (the symbolizer names its frames the same way). Keyed as a
 * file with the id "[vdso]".
 */
static int build_vdso(struct unwinder *u, struct built *b, bool *cached, bool may_build)
{
	size_t size;
	const void *image = proc_file__own_vdso(&size);
	uint32_t idx;
	char *copy;
	Elf *elf;
	int err;

	memset(b, 0, sizeof(*b));
	memcpy(b->f.id, "[vdso]", 6);
	b->f.id_len = 6;
	b->f.table = BPFPROF_UNWIND_NO_TABLE;
	pthread_mutex_lock(&u->lock);
	*cached = find_file(u, b->f.id, b->f.id_len, 0, 0, &idx) != NULL;
	pthread_mutex_unlock(&u->lock);
	if (*cached || !may_build || !image || !size)
		return 0;
	copy = malloc(size);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, image, size);
	elf_version(EV_CURRENT);
	elf = elf_memory(copy, size);
	if (elf) {
		read_segs(elf, &b->f);
		if (u->build_tables) {
			err = unwind_table__build(elf, "[vdso]", &b->t);
			if (err)
				b->t = NULL;
		}
		elf_end(elf);
	}
	free(copy);
	return encode_built(b, "[vdso]");
}

static bool drop_oldest_kept(struct unwinder *u);

/*
 * Make room for `need` more bytes of tables: drop the tables the walk used
 * least recently (their `used` stamps) until the budget holds them. Under
 * the lock. Returns false when even dropping every other table is not
 * enough.
 */
static bool make_room(struct unwinder *u, uint64_t need, const char *name)
{
	if (need > u->sink.budget)
		return false;
	/* tables no process maps first */
	while (u->st.bytes + need > u->sink.budget && drop_oldest_kept(u))
		;
	while (u->st.bytes + need > u->sink.budget) {
		struct file_entry *victim = NULL;
		uint32_t victim_used = 0;

		for (size_t i = 0; i < u->nr_files; i++) {
			struct file_entry *f = &u->files[i];
			uint32_t used;

			if (!f->used || !f->loaded)
				continue;
			used = u->sink.table_used ? u->sink.table_used(u->sink.ctx, f->table) : 0;
			if (!victim || used < victim_used ||
			    (used == victim_used && f->bytes > victim->bytes)) {
				victim = f;
				victim_used = used;
			}
		}
		if (!victim)
			return false;
		if (!u->warned_evict)
			pr_warn("unwind tables reached --unwind-memory (%llu KiB) at '%s': the least recently used tables are dropped to make room (their files walked by frame pointers); raise --unwind-memory\n",
				(unsigned long long)u->sink.budget >> 10, name);
		u->warned_evict = true;
		u->sink.drop_table(u->sink.ctx, victim->table);
		victim->loaded = false;
		u->st.bytes -= victim->bytes;
		u->st.nr_rows -= victim->nr_rows;
		u->st.nr_tables--;
		u->st.nr_evicted++;
	}
	return true;
}

/*
 * The pool's map for a table of nr_words: the smallest that holds it, if
 * that is at most twice the table's pages (else its class is empty: none).
 * Index into u->pool, or -1. Under the lock.
 */
static int pool_find(const struct unwinder *u, uint32_t nr_words)
{
	uint32_t most = 2 * ((nr_words + POOL_MIN_ROOM - 1) / POOL_MIN_ROOM) * POOL_MIN_ROOM;
	int best = -1;

	for (uint32_t i = 0; i < u->nr_pool; i++)
		if (u->pool[i].room >= nr_words && u->pool[i].room <= most &&
		    (best < 0 || u->pool[i].room < u->pool[best].room))
			best = (int)i;
	return best;
}

/*
 * Table t's words written into one of the pool's installed maps, visible at
 * once (no grace period). Under the lock. Returns the slot, or
 * BPFPROF_UNWIND_NO_TABLE (no map of its size, no room, or the write
 * failed: that map dropped), *bytes its kernel memory.
 */
static uint32_t load_pooled(struct unwinder *u, const struct unwind_cache_table *t,
			    const char *name, uint64_t *bytes)
{
	int i = u->sink.fill_table ? pool_find(u, t->nr_words) : -1;
	struct pool_map pm;

	if (i < 0 || !make_room(u, u->pool[i].bytes, name))
		return BPFPROF_UNWIND_NO_TABLE;
	pm = u->pool[i];
	u->pool[i] = u->pool[--u->nr_pool];
	u->st.pool_maps--;
	u->st.pool_bytes -= pm.bytes;
	if (u->sink.fill_table(u->sink.ctx, pm.slot, &t->info, t->words, t->nr_words)) {
		u->sink.drop_table(u->sink.ctx, pm.slot);
		u->slot_used[pm.slot] = 0;
		return BPFPROF_UNWIND_NO_TABLE;
	}
	u->st.nr_pooled++;
	*bytes = pm.bytes;
	/*
	 * the thread refills the pool once idle: POOL_IDLE_NS from now (a
	 * registration made on another thread, -p's, wakes it too)
	 */
	u->idle_since_ns = mono_ns();
	pthread_cond_signal(&u->cond);
	return pm.slot;
}

/* Load a built table's words into a slot of its own; under the lock. 0, or -errno (warned). */
static int load_table(struct unwinder *u, struct file_entry *f, const struct unwind_cache_table *t,
		      const char *name)
{
	uint32_t slot;
	uint64_t bytes = 0;
	int err;

	slot = load_pooled(u, t, name, &bytes);
	if (slot != BPFPROF_UNWIND_NO_TABLE)
		goto loaded;
	for (slot = 0; slot < u->sink.max_tables && u->slot_used[slot]; slot++)
		;
	/* every slot taken: a kept table's, if any, is given up */
	if (slot == u->sink.max_tables && drop_oldest_kept(u))
		for (slot = 0; slot < u->sink.max_tables && u->slot_used[slot]; slot++)
			;
	if (slot == u->sink.max_tables) {
		if (!u->warned_full)
			pr_warn("unwind: more than %u files with tables: '%s' and later ones are walked by frame pointers\n",
				u->sink.max_tables, name);
		u->warned_full = true;
		u->st.nr_full++;
		return -ENOSPC;
	}
	if (!make_room(u, unwind_compact__kernel_bytes(t->nr_words), name)) {
		if (!u->warned_full)
			pr_warn("unwind: the table of '%s' (%u rows, %llu KiB) is larger than --unwind-memory (%llu KiB): walked by frame pointers\n",
				name, t->nr_rows,
				(unsigned long long)unwind_compact__kernel_bytes(t->nr_words) >> 10,
				(unsigned long long)u->sink.budget >> 10);
		u->warned_full = true;
		u->st.nr_full++;
		return -ENOSPC;
	}
	err = u->sink.load_table(u->sink.ctx, slot, &t->info, t->words, t->nr_words, &bytes);
	if (err) {
		pr_warn("unwind: cannot load the table of '%s': %s\n", name, strerror(-err));
		return err;
	}
loaded:
	u->slot_used[slot] = SLOT_TABLE;
	f->table = slot;
	f->loaded = true;
	f->nr_rows = t->nr_rows;
	f->base = t->base;
	f->bytes = bytes;
	u->st.nr_tables++;
	u->st.nr_rows += f->nr_rows;
	u->st.loaded_rows += f->nr_rows;
	u->st.loaded_bytes += bytes;
	u->st.bytes += bytes;
	if (u->st.bytes > u->st.peak_bytes)
		u->st.peak_bytes = u->st.bytes;
	return 0;
}

/* Whether file f is one bpfprof's own process mapped without a table (own_missing); under the lock */
static bool own_lacks(const struct unwinder *u, const struct file_entry *f)
{
	for (size_t i = 0; i < u->nr_own_missing; i++) {
		const struct own_file *o = &u->own_missing[i];

		if (o->id_len ? (o->id_len == f->id_len && !memcmp(o->id, f->id, o->id_len)) :
				(!f->id_len && o->dev == f->dev && o->ino == f->ino))
			return true;
	}
	return false;
}

/* Place a built file (and its table, if any); under the lock. Returns the file's index. */
static int place_file(struct unwinder *u, struct built *b, const char *name, uint32_t *out)
{
	struct file_entry *f;
	uint32_t idx;

	/* another thread may have built the same file meanwhile */
	if (find_file(u, b->f.id, b->f.id_len, b->f.dev, b->f.ino, &idx)) {
		u->st.nr_shared++;
		*out = idx;
		return 0;
	}
	for (idx = 0; idx < u->nr_files && u->files[idx].used; idx++)
		;
	if (idx == u->nr_files) {
		if (array__grow((void **)&u->files, &u->cap_files, u->nr_files + 1,
				sizeof(*u->files)))
			return -ENOMEM;
		u->nr_files++;
	}
	f = &u->files[idx];
	*f = b->f;
	f->used = true;
	f->refs = 0;
	if (b->ct.words) {
		if (b->from_cache) {
			u->st.nr_from_cache++;
		} else {
			u->st.nr_built++;
			u->st.cfi_bytes += b->ct.cfi_bytes;
		}
		uint64_t t0 = mono_ns();
		int err = load_table(u, f, &b->ct, name);

		u->st.load_ns += mono_ns() - t0;
		if (err == -ENOMEM)
			return -ENOMEM;
		if (!err && own_lacks(u, f))
			u->own_stale = true;
	} else if (u->build_tables) {
		u->st.nr_no_cfi++;
	}
	*out = idx;
	return 0;
}

/* The file and its table gone; under the lock. */
static void file_drop(struct unwinder *u, struct file_entry *f)
{
	if (f->kept) {
		f->kept = 0;
		u->nr_kept--;
	}
	if (f->table != BPFPROF_UNWIND_NO_TABLE) {
		if (f->loaded) {
			u->sink.drop_table(u->sink.ctx, f->table);
			u->st.nr_tables--;
			u->st.nr_rows -= f->nr_rows;
			u->st.bytes -= f->bytes;
		}
		u->slot_used[f->table] = 0;
	}
	f->used = false;
}

/* Drop the file kept longest; false when none is. Under the lock. */
static bool drop_oldest_kept(struct unwinder *u)
{
	struct file_entry *oldest = NULL;

	for (size_t i = 0; i < u->nr_files && u->nr_kept; i++)
		if (u->files[i].used && u->files[i].kept &&
		    (!oldest || u->files[i].kept < oldest->kept))
			oldest = &u->files[i];
	if (!oldest)
		return false;
	file_drop(u, oldest);
	u->st.nr_kept_dropped++;
	return true;
}

static void file_unref(struct unwinder *u, uint32_t idx)
{
	struct file_entry *f = &u->files[idx];

	if (!f->used || --f->refs)
		return;
	/* its table loaded, kept for the next process that maps it (KEEP_FILES) */
	if (f->id_len && f->loaded && f->table != BPFPROF_UNWIND_NO_TABLE) {
		f->kept = ++u->kept_seq;
		u->nr_kept++;
		if (u->nr_kept > KEEP_FILES)
			drop_oldest_kept(u);
		return;
	}
	file_drop(u, f);
}

/* A reference more to file idx: a kept one is in use again. Under the lock. */
static void file_ref(struct unwinder *u, uint32_t idx)
{
	struct file_entry *f = &u->files[idx];

	if (f->kept) {
		f->kept = 0;
		u->nr_kept--;
		u->st.nr_kept_used++;
	}
	f->refs++;
}

/* The bias of a mapping of file f: row pc = address - bias. */
static bool mapping_bias(const struct file_entry *f, const struct profile_mapping *m, __u64 *bias)
{
	for (int i = 0; i < f->nr_segs; i++) {
		uint64_t seg_start = f->segs[i].offset & ~4095ULL;

		if (m->offset >= seg_start && m->offset < f->segs[i].offset + f->segs[i].filesz) {
			*bias = m->start - m->offset + f->segs[i].offset - f->segs[i].vaddr +
				f->base;
			return true;
		}
	}
	return false;
}

static struct proc_entry *find_proc(struct unwinder *u, uint32_t pid)
{
	for (size_t i = 0; i < u->nr_procs; i++)
		if (u->procs[i].pid == pid)
			return &u->procs[i];
	return NULL;
}

static bool has_key(const struct bpfprof_unwind_key *keys, size_t n,
		    const struct bpfprof_unwind_key *k)
{
	for (size_t i = 0; i < n; i++)
		if (!memcmp(&keys[i], k, sizeof(*k)))
			return true;
	return false;
}

/*
 * Add the LPM entries of one mapping to `pe` (its keys, and their values
 * in *vals, grown with them), for set_entries to put in the trie.
 */
static int add_entries(struct proc_entry *pe, const struct profile_mapping *m,
		       const struct bpfprof_unwind_mapping *v, struct bpfprof_unwind_mapping **vals,
		       size_t *cap_vals)
{
	struct bpfprof_unwind_key keys[128];
	int n = unwinder__lpm_keys(pe->pid, m->start, m->end, keys, 128), i;

	if (n < 0)
		return n;
	if (array__grow((void **)&pe->ranges, &pe->cap_ranges, pe->nr_ranges + 1,
			sizeof(*pe->ranges)) ||
	    array__grow((void **)&pe->keys, &pe->cap_keys, pe->nr_keys + n, sizeof(*pe->keys)) ||
	    array__grow((void **)vals, cap_vals, pe->nr_keys + n, sizeof(**vals)))
		return -ENOMEM;
	pe->ranges[pe->nr_ranges++] = (struct proc_range){
		.start = m->start, .end = m->end, .v = *v, .nr_keys = (uint32_t)n
	};
	for (i = 0; i < n; i++) {
		(*vals)[pe->nr_keys] = *v;
		pe->keys[pe->nr_keys++] = keys[i];
	}
	return 0;
}

/* n entries into the trie, in order: one sink call where it takes them together. 0 or -errno. */
static int set_entries(struct unwinder *u, const struct bpfprof_unwind_key *keys,
		       const struct bpfprof_unwind_mapping *vals, size_t n)
{
	int err = 0;

	if (!n)
		return 0;
	if (u->sink.set_mappings)
		return u->sink.set_mappings(u->sink.ctx, keys, vals, (uint32_t)n);
	for (size_t i = 0; i < n && !err; i++)
		err = u->sink.set_mapping(u->sink.ctx, &keys[i], &vals[i]);
	return err;
}

/*
 * Whether old has range r with the same entry value (its trie entries are
 * r's already). Both in the maps' order, by start: *at, old's cursor,
 * moves forward; a range out of that order is only written again.
 */
static bool range_unchanged(const struct proc_entry *old, size_t *at, const struct proc_range *r)
{
	const struct proc_range *o;

	while (*at < old->nr_ranges && old->ranges[*at].start < r->start)
		(*at)++;
	if (*at == old->nr_ranges)
		return false;
	o = &old->ranges[*at];
	return o->start == r->start && o->end == r->end && o->v.table == r->v.table &&
	       o->v.bias == r->v.bias && o->v.start == r->v.start && o->v.end == r->v.end;
}

/*
 * fresh's entries into the trie, but those of a range that its process's
 * last registration (old; NULL: none) had with the same value: a
 * re-registration (bpfprof's own as tables come for its files, a process
 * once its libraries are loaded) wrote every entry again, each an LPM node
 * replaced in the kernel. vals: fresh->keys' values, compacted in place.
 * 0 or -errno.
 */
static int set_changed_entries(struct unwinder *u, const struct proc_entry *old,
			       const struct proc_entry *fresh, struct bpfprof_unwind_mapping *vals)
{
	struct bpfprof_unwind_key *keys;
	size_t k = 0, n = 0, at = 0;
	int err;

	if (!old)
		return set_entries(u, fresh->keys, vals, fresh->nr_keys);
	keys = malloc((fresh->nr_keys ?: 1) * sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	for (size_t r = 0; r < fresh->nr_ranges; r++) {
		const struct proc_range *pr = &fresh->ranges[r];

		if (!range_unchanged(old, &at, pr)) {
			memcpy(&keys[n], &fresh->keys[k], pr->nr_keys * sizeof(*keys));
			memmove(&vals[n], &vals[k], pr->nr_keys * sizeof(*vals));
			n += pr->nr_keys;
		}
		k += pr->nr_keys;
	}
	err = set_entries(u, keys, vals, n);
	free(keys);
	return err;
}

/* n entries out of the trie (those not there are left out) */
static void del_entries(struct unwinder *u, const struct bpfprof_unwind_key *keys, size_t n)
{
	if (!n)
		return;
	if (u->sink.del_mappings) {
		u->sink.del_mappings(u->sink.ctx, keys, (uint32_t)n);
		return;
	}
	for (size_t i = 0; i < n; i++)
		u->sink.del_mapping(u->sink.ctx, &keys[i]);
}

/* keys[0..n) not among have[0..nr_have), gathered into out (n of room): how many */
static size_t keys_not_in(const struct bpfprof_unwind_key *keys, size_t n,
			  const struct bpfprof_unwind_key *have, size_t nr_have,
			  struct bpfprof_unwind_key *out)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (!has_key(have, nr_have, &keys[i]))
			out[k++] = keys[i];
	return k;
}

static bool executable(const struct profile_mapping *m)
{
	return m->perms[2] == 'x';
}

/*
 * FNV-1a of the executable mappings (bounds, offset, file identity, path):
 * a request whose mappings are those registered or pending is not redone
 * (a process's notice, first sample and copies each ask for one)
 */
static uint64_t maps_sig(const struct profile_mapping *maps, size_t nr_maps)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < nr_maps; i++) {
		const struct profile_mapping *m = &maps[i];
		uint64_t v[5] = { m->start, m->end, m->offset, m->inode,
				  (uint64_t)m->dev_major << 32 | m->dev_minor };
		const unsigned char *b = (const unsigned char *)v;
		const char *path = m->path ? m->path : "";

		if (!executable(m))
			continue;
		for (size_t k = 0; k < sizeof(v); k++)
			h = (h ^ b[k]) * 1099511628211ULL;
		for (size_t k = 0; k <= strlen(path); k++)
			h = (h ^ (unsigned char)path[k]) * 1099511628211ULL;
	}
	return h;
}

/*
 * File f of bpfprof's own process has no table: remembered, so that a table
 * another registration gives it registers bpfprof again (own_again); *idx
 * none. Under the lock. 0 or -ENOMEM.
 */
static int own_missing_add(struct unwinder *u, const struct file_entry *f, uint32_t *idx)
{
	*idx = UINT32_MAX;
	return own_file_add(&u->own_missing, &u->nr_own_missing, &u->cap_own_missing, f);
}

/*
 * bpfprof's own process registered again, from its last registration's
 * mappings, where a registration since placed the table of a file it
 * mapped without one (own_stale): libc's, ld.so's, the vDSO's, which it
 * shares with the processes it profiles, now in the kernel for them.
 * On the caller's thread (the registrations', as a rule): a few files
 * identified again and the process's map entries, nothing built.
 */
static void own_again(struct unwinder *u)
{
	struct profile_mapping *maps;
	size_t n;
	int err;

	pthread_mutex_lock(&u->lock);
	if (!u->own_stale || !u->own_maps) {
		pthread_mutex_unlock(&u->lock);
		return;
	}
	maps = u->own_maps;
	n = u->nr_own_maps;
	u->own_maps = NULL;
	u->nr_own_maps = 0;
	u->st.nr_own_again++;
	pthread_mutex_unlock(&u->lock);
	err = unwinder__load(u, u->own_pid, maps, n);
	if (err)
		pr_debug("unwind: bpfprof's own process (pid %u) again: %s\n", u->own_pid,
			 strerror(-err));
	maps_free(maps, n);
}

void unwinder__set_own_pid(struct unwinder *u, uint32_t pid)
{
	u->own_pid = pid;
}

int unwinder__load(struct unwinder *u, uint32_t pid, const struct profile_mapping *maps,
		   size_t nr_maps)
{
	struct proc_entry old = { 0 }, *pe, fresh = { .pid = pid, .sig = maps_sig(maps, nr_maps) };
	bool own = u->own_pid && pid == u->own_pid;
	uint32_t own_untabled = 0;
	uint32_t *idx = calloc(nr_maps ? nr_maps : 1, sizeof(*idx));
	struct bpfprof_unwind_mapping *vals = NULL; /* fresh.keys' values */
	char root[sizeof(u->proc_dir) + 16];
	uint64_t t0;
	size_t i, cap_vals = 0;
	int err = 0;

	if (!idx)
		return -ENOMEM;
	if (own) {
		size_t n = 0;
		struct profile_mapping *copy = maps == u->own_maps ? NULL :
								     maps_copy(maps, nr_maps, &n);

		pthread_mutex_lock(&u->lock);
		/* identified again below; a table placed meanwhile is found there */
		u->nr_own_missing = 0;
		u->own_stale = false;
		if (copy) {
			maps_free(u->own_maps, u->nr_own_maps);
			u->own_maps = copy;
			u->nr_own_maps = n;
		}
		pthread_mutex_unlock(&u->lock);
	}
	snprintf(root, sizeof(root), "%s/%u/root", u->proc_dir, pid);
	/* files first, outside the lock (libdw takes tens of ms on a large binary) */
	for (i = 0; i < nr_maps; i++) {
		const struct profile_mapping *m = &maps[i];
		struct built b;
		bool cached = false;
		int fd;

		idx[i] = UINT32_MAX;
		if (!executable(m))
			continue;
		if (!strcmp(m->path, "[vdso]")) {
			err = build_vdso(u, &b, &cached, !own);
		} else {
			if (m->path[0] != '/')
				continue;
			t0 = mono_ns();
			fd = open_mapped(u, pid, m);
			__atomic_add_fetch(&u->st.id_ns, mono_ns() - t0, __ATOMIC_RELAXED);
			if (fd < 0)
				continue;
			err = build_file(u, fd, m->path, root, &b, &cached, !own);
			close(fd);
		}
		if (err)
			goto out;
		pthread_mutex_lock(&u->lock);
		if (!cached && own) {
			/* none built for bpfprof itself: the file's table, if another registration placed it */
			if (find_file(u, b.f.id, b.f.id_len, b.f.dev, b.f.ino, &idx[i]))
				u->st.nr_shared++;
			else
				err = own_missing_add(u, &b.f, &idx[i]);
		} else if (!cached) {
			err = place_file(u, &b, m->path, &idx[i]);
		} else if (find_file(u, b.f.id, b.f.id_len, b.f.dev, b.f.ino, &idx[i])) {
			u->st.nr_shared++;
		} else {
			idx[i] = UINT32_MAX; /* freed meanwhile: no table this time */
		}
		if (!err && idx[i] != UINT32_MAX)
			file_ref(u, idx[i]); /* held until the process entry takes it */
		pthread_mutex_unlock(&u->lock);
		unwind_table__free(b.t);
		unwind_cache_table__release(&b.ct);
		if (err)
			goto out;
	}

	pthread_mutex_lock(&u->lock);
	t0 = mono_ns();
	/* the tables placed above, visible before the entries that name them */
	if (u->sink.flush_tables)
		u->sink.flush_tables(u->sink.ctx);
	u->st.load_ns += mono_ns() - t0;
	t0 = mono_ns();
	u->st.nr_loads++;
	for (i = 0; i < nr_maps && !err; i++) {
		const struct profile_mapping *m = &maps[i];
		struct bpfprof_unwind_mapping v = {
			.table = BPFPROF_UNWIND_NO_TABLE,
			.start = m->start,
			.end = m->end,
		};

		if (!executable(m))
			continue;
		if (idx[i] != UINT32_MAX) {
			const struct file_entry *f = &u->files[idx[i]];

			if (f->table != BPFPROF_UNWIND_NO_TABLE && mapping_bias(f, m, &v.bias))
				v.table = f->table;
			if (array__grow((void **)&fresh.files, &fresh.cap_files, fresh.nr_files + 1,
					sizeof(*fresh.files)))
				err = -ENOMEM;
			else
				fresh.files[fresh.nr_files++] = idx[i];
			idx[i] = UINT32_MAX; /* the reference is fresh's now */
		}
		/* a file's code walked by frame pointers: its table was not built */
		if (own && v.table == BPFPROF_UNWIND_NO_TABLE &&
		    (m->path[0] == '/' || !strcmp(m->path, "[vdso]")))
			own_untabled++;
		if (!err)
			err = add_entries(&fresh, m, &v, &vals, &cap_vals);
	}
	/* the process's entries, all at once (before unwind_procs says it is ready) */
	if (!err)
		err = set_changed_entries(u, find_proc(u, pid), &fresh, vals);
	free(vals);
	if (err) {
		/* undo: entries of fresh that the old registration does not have */
		struct bpfprof_unwind_key *gone = malloc((fresh.nr_keys ?: 1) * sizeof(*gone));

		pe = find_proc(u, pid);
		if (gone)
			del_entries(u, gone,
				    keys_not_in(fresh.keys, fresh.nr_keys, pe ? pe->keys : NULL,
						pe ? pe->nr_keys : 0, gone));
		else
			for (i = 0; i < fresh.nr_keys; i++)
				if (!pe || !has_key(pe->keys, pe->nr_keys, &fresh.keys[i]))
					u->sink.del_mapping(u->sink.ctx, &fresh.keys[i]);
		free(gone);
		for (i = 0; i < fresh.nr_files; i++)
			file_unref(u, fresh.files[i]);
		proc_entry_free(&fresh);
		pthread_mutex_unlock(&u->lock);
		goto out;
	}
	pe = find_proc(u, pid);
	if (pe) {
		old = *pe;
		*pe = fresh;
	} else if (array__grow((void **)&u->procs, &u->cap_procs, u->nr_procs + 1,
			       sizeof(*u->procs))) {
		err = -ENOMEM;
	} else {
		u->procs[u->nr_procs++] = fresh;
		u->st.nr_procs++;
		__atomic_add_fetch(&u->proc_slots[pid % PROC_SLOTS], 1, __ATOMIC_RELAXED);
	}
	if (!err) {
		/* the stale entries go after the new ones are in */
		struct bpfprof_unwind_key *stale = malloc((old.nr_keys ?: 1) * sizeof(*stale));

		if (stale)
			del_entries(u, stale,
				    keys_not_in(old.keys, old.nr_keys, fresh.keys, fresh.nr_keys,
						stale));
		else
			for (i = 0; i < old.nr_keys; i++)
				if (!has_key(fresh.keys, fresh.nr_keys, &old.keys[i]))
					u->sink.del_mapping(u->sink.ctx, &old.keys[i]);
		free(stale);
		/*
		 * then the registration's time, which the walk's per-CPU cache of
		 * mappings holds its entries under (bpf/unwind.bpf.h map_cache):
		 * a mapping the walk found before the stale ones went is cached
		 * under the time before
		 */
		u->sink.set_proc(u->sink.ctx, pid, true);
		if (own)
			u->st.own_untabled = own_untabled;
		u->st.nr_entries += fresh.nr_keys;
		u->st.nr_entries -= old.nr_keys;
		for (i = 0; i < old.nr_files; i++)
			file_unref(u, old.files[i]);
		proc_entry_free(&old);
	} else {
		proc_entry_free(&fresh);
	}
	u->st.entries_ns += mono_ns() - t0;
	pthread_mutex_unlock(&u->lock);
out:
	pthread_mutex_lock(&u->lock);
	for (i = 0; i < nr_maps; i++)
		if (idx[i] != UINT32_MAX)
			file_unref(u, idx[i]);
	pthread_mutex_unlock(&u->lock);
	free(idx);
	if (!own && !err)
		own_again(u);
	return err;
}

/* Collects a process's mappings from its maps text. */
struct maps_buf {
	struct profile_mapping *maps;
	size_t nr, cap;
	char **paths;
	size_t nr_paths, cap_paths;
};

static void maps_buf_free(struct maps_buf *mb)
{
	for (size_t i = 0; i < mb->nr_paths; i++)
		free(mb->paths[i]);
	free(mb->paths);
	free(mb->maps);
}

static int collect_mapping(const struct procmaps_entry *e, void *ctx)
{
	struct maps_buf *mb = ctx;
	struct profile_mapping *m;
	char *path;

	if (e->perms[2] != 'x')
		return 0;
	if (array__grow((void **)&mb->maps, &mb->cap, mb->nr + 1, sizeof(*mb->maps)) ||
	    array__grow((void **)&mb->paths, &mb->cap_paths, mb->nr_paths + 1, sizeof(*mb->paths)))
		return -ENOMEM;
	path = strndup(e->path ? e->path : "", e->path_len);
	if (!path)
		return -ENOMEM;
	mb->paths[mb->nr_paths++] = path;
	m = &mb->maps[mb->nr++];
	memset(m, 0, sizeof(*m));
	m->start = e->start;
	m->end = e->end;
	m->offset = e->offset;
	m->inode = e->inode;
	m->dev_major = e->dev_major;
	m->dev_minor = e->dev_minor;
	memcpy(m->perms, e->perms, sizeof(m->perms));
	m->path = path;
	return 0;
}

int unwinder__load_text(struct unwinder *u, uint32_t pid, const char *text, size_t len)
{
	struct maps_buf mb = { 0 };
	int err;

	err = procmaps__parse(text, len, "maps", collect_mapping, &mb, NULL);
	if (!err)
		err = unwinder__load(u, pid, mb.maps, mb.nr);
	maps_buf_free(&mb);
	return err;
}

void unwinder__forget(struct unwinder *u, uint32_t pid)
{
	struct proc_entry *pe;
	size_t i;

	pthread_mutex_lock(&u->lock);
	pe = find_proc(u, pid);
	if (pe) {
		u->sink.set_proc(u->sink.ctx, pid, false);
		del_entries(u, pe->keys, pe->nr_keys);
		u->st.nr_entries -= pe->nr_keys;
		for (i = 0; i < pe->nr_files; i++)
			file_unref(u, pe->files[i]);
		proc_entry_free(pe);
		*pe = u->procs[--u->nr_procs];
		u->st.nr_procs--;
		__atomic_sub_fetch(&u->proc_slots[pid % PROC_SLOTS], 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&u->lock);
}

void unwinder__reap(struct unwinder *u)
{
	uint32_t *gone = NULL;
	size_t n = 0, i;

	pthread_mutex_lock(&u->lock);
	gone = calloc(u->nr_procs ? u->nr_procs : 1, sizeof(*gone));
	for (i = 0; gone && i < u->nr_procs; i++)
		if (kill((pid_t)u->procs[i].pid, 0) && errno == ESRCH)
			gone[n++] = u->procs[i].pid;
	pthread_mutex_unlock(&u->lock);
	for (i = 0; i < n; i++)
		unwinder__forget(u, gone[i]);
	free(gone);
}

/*
 * Refill the pool (POOL_CLASSES) while the tables and the pool take at most
 * half of the budget: the missing maps' slots reserved under the lock, then
 * installed without it (one update of the array of maps: one grace period,
 * which a registration queued meanwhile waits for on this thread, no
 * longer than its own flush would have). Called and returns with the lock
 * held. Returns whether any map went in (false: nothing to do).
 */
static bool pool_install(struct unwinder *u);

/* pthread_cond_timedwait until mono_ns() reaches until_ns (cond on CLOCK_MONOTONIC) */
static void timed_wait(pthread_cond_t *cond, pthread_mutex_t *lock, uint64_t until_ns)
{
	struct timespec ts = { .tv_sec = (time_t)(until_ns / 1000000000ULL),
			       .tv_nsec = (long)(until_ns % 1000000000ULL) };

	pthread_cond_timedwait(cond, lock, &ts);
}

static bool pool_fill(struct unwinder *u)
{
	bool any = pool_install(u);

	if (!u->pool_ready) {
		u->pool_ready = true;
		pthread_cond_broadcast(&u->pool_cond);
	}
	return any;
}

/* pool_fill's install */
static bool pool_install(struct unwinder *u)
{
	uint32_t ids[POOL_MAX], room[POOL_MAX], n = 0, slot = 0, have;
	uint64_t bytes[POOL_MAX], sum = u->st.bytes + u->st.pool_bytes, t0, c0;
	int got;

	if (u->pool_off || !u->build_tables || !u->sink.install_rows || !u->sink.fill_table)
		return false;
	for (int c = 0; c < POOL_CLASSES && u->nr_pool + n < POOL_MAX; c++) {
		uint32_t r = POOL_MIN_ROOM << c;

		have = 0;
		for (uint32_t i = 0; i < u->nr_pool; i++)
			have += u->pool[i].room == r;
		for (; have < pool_class_count(c) && u->nr_pool + n < POOL_MAX; have++) {
			sum += (uint64_t)r * 4;
			if (sum > u->sink.budget / 2)
				break;
			while (slot < u->sink.max_tables && u->slot_used[slot])
				slot++;
			if (slot == u->sink.max_tables)
				break;
			u->slot_used[slot] = SLOT_POOL;
			ids[n] = slot;
			room[n++] = r;
		}
	}
	if (!n)
		return false;
	pthread_mutex_unlock(&u->lock);
	t0 = mono_ns();
	c0 = thread_cpu_ns();
	got = u->sink.install_rows(u->sink.ctx, ids, room, n, bytes);
	c0 = thread_cpu_ns() - c0;
	pthread_mutex_lock(&u->lock);
	u->st.pool_install_ns += mono_ns() - t0;
	u->st.pool_install_cpu_ns += c0;
	u->st.nr_pool_installs++;
	for (uint32_t i = 0; i < n; i++) {
		if ((int)i >= got) {
			u->slot_used[ids[i]] = 0;
			continue;
		}
		u->pool[u->nr_pool++] =
			(struct pool_map){ .slot = ids[i], .room = room[i], .bytes = bytes[i] };
		u->st.pool_maps++;
		u->st.pool_bytes += bytes[i];
	}
	if (got < (int)n) {
		pr_debug("unwind: %d of %u words maps installed ahead of need: no more\n",
			 got < 0 ? 0 : got, n);
		u->pool_off = true;
	}
	return got > 0;
}

static void *worker(void *arg)
{
	struct unwinder *u = arg;

	pthread_mutex_lock(&u->lock);
	while (!u->stopping) {
		struct job j;

		if (!u->nr_jobs) {
			/* idle: the pool filled at once the first time, later after POOL_IDLE_NS */
			uint64_t due = u->idle_since_ns + POOL_IDLE_NS;

			if (u->pool_ready && mono_ns() < due)
				timed_wait(&u->cond, &u->lock, due);
			else if (!pool_fill(u))
				pthread_cond_wait(&u->cond, &u->lock);
			continue;
		}
		j = u->jobs[0];
		memmove(&u->jobs[0], &u->jobs[1], (u->nr_jobs - 1) * sizeof(*u->jobs));
		u->nr_jobs--;
		u->busy_pid = j.pid;
		u->st.wait_ns += mono_ns() - j.queued_ns;
		pthread_mutex_unlock(&u->lock);
		if (kill((pid_t)j.pid, 0) == 0 || errno != ESRCH) {
			struct timespec c0, c1;
			int err;

			clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
			err = unwinder__load(u, j.pid, j.maps, j.nr_maps);
			clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);

			if (err && err != -ENOENT)
				pr_debug("unwind: pid %u: %s\n", j.pid, strerror(-err));
			if (!err) {
				/* how long the process waited for its tables (-v, bench/cache.sh) */
				uint64_t wait = mono_ns() - j.queued_ns;

				pthread_mutex_lock(&u->lock);
				u->st.nr_queued++;
				u->st.ready_sum_ns += wait;
				u->st.ready_cpu_ns +=
					(uint64_t)(c1.tv_sec - c0.tv_sec) * 1000000000ULL +
					c1.tv_nsec - c0.tv_nsec;
				if (wait > u->st.ready_max_ns)
					u->st.ready_max_ns = wait;
				pthread_mutex_unlock(&u->lock);
			}
		}
		for (size_t i = 0; i < j.nr_maps; i++)
			free((char *)j.maps[i].path);
		free(j.maps);
		pthread_mutex_lock(&u->lock);
		u->busy_pid = 0;
		u->idle_since_ns = mono_ns();
	}
	pthread_mutex_unlock(&u->lock);
	return NULL;
}

/* The background thread, once; under the lock. 0 or -EAGAIN. */
static int start_thread(struct unwinder *u)
{
	if (u->thread_started)
		return 0;
	if (pthread_create(&u->thread, NULL, worker, u))
		return -EAGAIN;
	u->thread_started = true;
	/* its CPU apart in bench/overhead.sh (/proc/PID/task/TID/comm) */
	pthread_setname_np(u->thread, "bpfprof-unwind");
	return 0;
}

int unwinder__start(struct unwinder *u)
{
	int err;

	if (!u->build_tables || !u->sink.install_rows || !u->sink.fill_table)
		return 0;
	pthread_mutex_lock(&u->lock);
	err = start_thread(u);
	pthread_mutex_unlock(&u->lock);
	return err;
}

void unwinder__wait_pool(struct unwinder *u, unsigned int max_ms)
{
	uint64_t until = mono_ns() + (uint64_t)max_ms * 1000000ULL;

	pthread_mutex_lock(&u->lock);
	while (u->thread_started && !u->pool_ready && mono_ns() < until)
		timed_wait(&u->pool_cond, &u->lock, until);
	pthread_mutex_unlock(&u->lock);
}

int unwinder__queue(struct unwinder *u, uint32_t pid, const struct profile_mapping *maps,
		    size_t nr_maps)
{
	struct job j = { .pid = pid, .queued_ns = mono_ns(), .sig = maps_sig(maps, nr_maps) };
	const struct proc_entry *pe;
	size_t i;
	int err = 0;

	j.maps = calloc(nr_maps ? nr_maps : 1, sizeof(*j.maps));
	if (!j.maps)
		return -ENOMEM;
	for (i = 0; i < nr_maps; i++) {
		if (!executable(&maps[i]))
			continue;
		j.maps[j.nr_maps] = maps[i];
		j.maps[j.nr_maps].path = strdup(maps[i].path ? maps[i].path : "");
		if (!j.maps[j.nr_maps].path) {
			err = -ENOMEM;
			break;
		}
		j.nr_maps++;
	}
	pthread_mutex_lock(&u->lock);
	/* the same mappings registered (none other under way) or pending: nothing to redo */
	pe = find_proc(u, pid);
	for (i = 0; !err && i < u->nr_jobs && u->jobs[i].pid != pid; i++)
		;
	if (!err && (i < u->nr_jobs ? u->jobs[i].sig == j.sig :
				      u->busy_pid != pid && pe && pe->sig == j.sig)) {
		u->st.nr_skipped++;
		pthread_mutex_unlock(&u->lock);
		for (i = 0; i < j.nr_maps; i++)
			free((char *)j.maps[i].path);
		free(j.maps);
		return 0;
	}
	if (!err)
		err = start_thread(u);
	for (i = 0; !err && i < u->nr_jobs; i++) {
		if (u->jobs[i].pid != pid)
			continue;
		/* a newer snapshot of the same process replaces the pending one */
		struct job old = u->jobs[i];

		j.queued_ns = old.queued_ns; /* waiting since the first request */
		u->jobs[i] = j;
		j = old;
		break;
	}
	if (!err && i == u->nr_jobs) {
		if (array__grow((void **)&u->jobs, &u->cap_jobs, u->nr_jobs + 1,
				sizeof(*u->jobs))) {
			err = -ENOMEM;
		} else {
			u->jobs[u->nr_jobs++] = j;
			j.maps = NULL;
			j.nr_maps = 0;
		}
	}
	if (!err)
		pthread_cond_signal(&u->cond);
	pthread_mutex_unlock(&u->lock);
	for (i = 0; i < j.nr_maps; i++)
		free((char *)j.maps[i].path);
	free(j.maps);
	return err;
}

void unwinder__stats(struct unwinder *u, struct unwinder_stats *st)
{
	pthread_mutex_lock(&u->lock);
	*st = u->st;
	st->build_ns = __atomic_load_n(&u->st.build_ns, __ATOMIC_RELAXED);
	st->id_ns = __atomic_load_n(&u->st.id_ns, __ATOMIC_RELAXED);
	st->cache_ns = __atomic_load_n(&u->st.cache_ns, __ATOMIC_RELAXED);
	st->nr_kept = u->nr_kept;
	pthread_mutex_unlock(&u->lock);
}

bool unwinder__has_proc(struct unwinder *u, uint32_t pid)
{
	bool found;

	pthread_mutex_lock(&u->lock);
	found = find_proc(u, pid) != NULL;
	pthread_mutex_unlock(&u->lock);
	return found;
}

bool unwinder__may_have_proc(const struct unwinder *u, uint32_t pid)
{
	return __atomic_load_n(&u->proc_slots[pid % PROC_SLOTS], __ATOMIC_RELAXED) != 0;
}

int unwinder__rule(struct unwinder *u, uint32_t pid, uint64_t addr, uint32_t *rule)
{
	const struct bpfprof_unwind_table *info;
	const struct proc_entry *pe;
	const uint32_t *words;
	uint32_t nr_words;
	int err = -ENOENT;

	*rule = BPFPROF_UNWIND_NONE;
	pthread_mutex_lock(&u->lock);
	pe = find_proc(u, pid);
	if (!pe)
		err = -ESRCH;
	for (size_t i = 0; pe && i < pe->nr_ranges; i++) {
		const struct proc_range *r = &pe->ranges[i];

		if (addr < r->start || addr >= r->end)
			continue;
		err = 0;
		/* the words the BPF walk reads (a table dropped for room: none, NONE as there) */
		if (r->v.table != BPFPROF_UNWIND_NO_TABLE && u->sink.table_words &&
		    !u->sink.table_words(u->sink.ctx, r->v.table, &info, &words, &nr_words))
			*rule = unwind_compact__lookup(words, nr_words, info, addr - r->v.bias);
		break;
	}
	pthread_mutex_unlock(&u->lock);
	return err;
}

bool unwinder__pending(struct unwinder *u, uint32_t pid)
{
	bool found;

	pthread_mutex_lock(&u->lock);
	found = u->busy_pid == pid;
	for (size_t i = 0; !found && i < u->nr_jobs; i++)
		found = u->jobs[i].pid == pid;
	pthread_mutex_unlock(&u->lock);
	return found;
}

int unwinder__queue_text(struct unwinder *u, uint32_t pid, const char *text, size_t len)
{
	struct maps_buf mb = { 0 };
	int err;

	err = procmaps__parse(text, len, "maps", collect_mapping, &mb, NULL);
	if (!err)
		err = unwinder__queue(u, pid, mb.maps, mb.nr);
	maps_buf_free(&mb);
	return err;
}

// SPDX-License-Identifier: MIT
/*
 * Per-process JIT symbol sources (include/sym_jit.h): finding a process's
 * jitdump and perf map, holding them open safely, reading them when the
 * profile is symbolized.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "array.h"
#include "log.h"
#include "proc_file.h"
#include "procmaps.h"
#include "jit_tail.h"
#include "sym_jit.h"
#include "sym_perfmap.h"

/* Descriptors held at most: JIT runtimes are few on a host; past this, files are found again at the end. */
#define JIT_MAX_HELD 512

enum jit_kind { JIT_DUMP, JIT_MAP, JIT_KINDS };
_Static_assert(JIT_KINDS == JIT_CAPTURE_KINDS, "jit_capture's kinds are jit_kind's");

struct jit_source {
	int fd; /* -1 until found */
	char *path; /* as the process sees it; owned */
	bool refused; /* warned once: not retried */
	bool usable; /* opened and checked at least once */
};

struct jit_proc {
	uint32_t pid;
	uint32_t start; /* with pid, the process (profile_process.start); 0 unknown */
	uint64_t gen; /* the last generation (profile) that pinned or read it */
	bool ident_read, gone;
	struct proc_ident id;
	struct jit_source src[JIT_KINDS];
	struct jit_table *table; /* merged, NULL until read */
	bool loaded;
};

struct jit_procs {
	const char *proc_dir;
	uint64_t max_size;
	struct jit_proc *procs;
	size_t nr, cap;
	size_t nr_held;
	uint64_t gen; /* jit_procs__expire calls so far */
	bool warned_nosys;
};

struct jit_procs *jit_procs__new(const char *proc_dir, uint64_t max_size)
{
	struct jit_procs *jp = calloc(1, sizeof(*jp));

	if (!jp)
		return NULL;
	jp->proc_dir = proc_dir;
	jp->max_size = max_size;
	return jp;
}

void jit_procs__reload(struct jit_procs *jp)
{
	for (size_t i = 0; jp && i < jp->nr; i++) {
		jitdump__free(jp->procs[i].table);
		jp->procs[i].table = NULL;
		jp->procs[i].loaded = false;
	}
}

static void proc_free(struct jit_procs *jp, struct jit_proc *jpr)
{
	jitdump__free(jpr->table);
	jpr->table = NULL;
	for (int k = 0; k < JIT_KINDS; k++) {
		if (jpr->src[k].fd >= 0) {
			close(jpr->src[k].fd);
			jp->nr_held--;
		}
		jpr->src[k].fd = -1;
		free(jpr->src[k].path);
		jpr->src[k].path = NULL;
	}
}

void jit_procs__free(struct jit_procs *jp)
{
	if (!jp)
		return;
	for (size_t i = 0; i < jp->nr; i++)
		proc_free(jp, &jp->procs[i]);
	free(jp->procs);
	free(jp);
}

void jit_procs__expire(struct jit_procs *jp)
{
	size_t i, kept = 0;

	for (i = 0; i < jp->nr; i++) {
		if (jp->procs[i].gen + 1 < jp->gen) {
			proc_free(jp, &jp->procs[i]);
			continue;
		}
		jp->procs[kept++] = jp->procs[i];
	}
	jp->nr = kept;
	jp->gen++;
}

size_t jit_procs__count(const struct jit_procs *jp, size_t *nr_held)
{
	*nr_held = jp->nr_held;
	return jp->nr;
}

/* The newest entry of process (pid, start); start 0 on either side matches any. */
static struct jit_proc *find_proc(const struct jit_procs *jp, uint32_t pid, uint32_t start)
{
	for (size_t i = jp->nr; i-- > 0;)
		if (jp->procs[i].pid == pid &&
		    (!start || !jp->procs[i].start || jp->procs[i].start == start))
			return &jp->procs[i];
	return NULL;
}

static struct jit_proc *get_proc(struct jit_procs *jp, uint32_t pid, uint32_t start)
{
	struct jit_proc *jpr = find_proc(jp, pid, start);

	if (jpr) {
		if (!jpr->start)
			jpr->start = start;
		jpr->gen = jp->gen;
		return jpr;
	}
	if (array__grow((void **)&jp->procs, &jp->cap, jp->nr + 1, sizeof(*jp->procs)))
		return NULL;
	jpr = &jp->procs[jp->nr++];
	memset(jpr, 0, sizeof(*jpr));
	jpr->pid = pid;
	jpr->start = start;
	jpr->gen = jp->gen;
	for (int k = 0; k < JIT_KINDS; k++)
		jpr->src[k].fd = -1;
	return jpr;
}

void jit_procs__sources(const struct jit_procs *jp, uint32_t pid, uint32_t start, bool *dump,
			bool *map)
{
	const struct jit_proc *jpr = jp ? find_proc(jp, pid, start) : NULL;

	*dump = jpr && jpr->src[JIT_DUMP].usable;
	*map = jpr && jpr->src[JIT_MAP].usable;
}

bool jit_procs__has(const struct jit_procs *jp, uint32_t pid, uint32_t start)
{
	const struct jit_proc *jpr = jp ? find_proc(jp, pid, start) : NULL;

	return jpr && (jpr->src[JIT_DUMP].usable || jpr->src[JIT_MAP].usable);
}

/*
 * Whether path (len bytes) is a jit-<nspid>.dump, as perf's jit_detect()
 * looks for it; its path, less a " (deleted)" suffix, into out. A path the
 * runtime's file no longer has is kept: whatever took its place is checked
 * like any other file, and refused when it is not the runtime's own
 * regular file. No allocation (the notices' thread calls it).
 */
static bool jitdump_path(const char *path, size_t len, uint32_t nspid, char *out, size_t size)
{
	static const char deleted[] = " (deleted)";
	const char *base;
	char want[48];
	size_t wlen, blen;

	if (!len || path[0] != '/')
		return false;
	base = memrchr(path, '/', len) + 1;
	blen = len - (size_t)(base - path);
	wlen = (size_t)snprintf(want, sizeof(want), "jit-%u.dump", nspid);
	if (blen < wlen || memcmp(base, want, wlen) ||
	    (blen != wlen && (blen - wlen != sizeof(deleted) - 1 ||
			      memcmp(base + wlen, deleted, sizeof(deleted) - 1))))
		return false;
	if ((size_t)(base - path) + wlen >= size)
		return false;
	memcpy(out, path, (size_t)(base - path) + wlen);
	out[(base - path) + wlen] = '\0';
	return true;
}

/* The path of a mapped jit-<nspid>.dump of pr into out (jitdump_path). */
static bool find_jitdump_mapping(const struct profile_process *pr, uint32_t nspid, char *out,
				 size_t size)
{
	for (size_t i = 0; i < pr->nr_mappings; i++) {
		const char *path = pr->mappings[i].path;

		if (path && jitdump_path(path, strlen(path), nspid, out, size))
			return true;
	}
	return false;
}

/*
 * Open one source of process (pid, start) as id names it: the descriptor,
 * or -ENOENT/-ESRCH (not (yet) written), -ENOSYS (no openat2), another
 * -errno (refused: proc_file.h). *gone: the file was opened but the pid is
 * another process's now. The I/O half of a pin (jit_capture__read runs it
 * on the notices' thread); source_take does the bookkeeping.
 */
static int source_open(const char *proc_dir, uint32_t pid, uint32_t start,
		       const struct proc_ident *id, const char *path, uint64_t max_size, bool *gone)
{
	int fd = proc_file__open(proc_dir, pid, path, id, max_size);

	*gone = false;
	if (fd >= 0 && !proc_ident__same(proc_dir, pid, start)) {
		close(fd); /* the pid is another process's now */
		*gone = true;
		return -ESRCH;
	}
	return fd;
}

/*
 * What source_open gave (fd: a descriptor, taken or closed here, or its
 * error) into jpr's source k; warns once when refused. No I/O but close.
 */
static int source_take(struct jit_procs *jp, struct jit_proc *jpr, enum jit_kind k,
		       const char *path, int fd, bool gone)
{
	struct jit_source *s = &jpr->src[k];

	if (s->fd >= 0 || s->refused) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	if (gone) {
		jpr->gone = true;
		return 0;
	}
	if (fd == -ENOENT || fd == -ESRCH)
		return 0; /* not (yet) written */
	if (fd == -ENOSYS) {
		/* no openat2 (Linux < 5.6, some sandboxes): no safe way to open them */
		if (!jp->warned_nosys)
			pr_warn("openat2 unavailable: JIT files (jitdump, perf maps) not read\n");
		jp->warned_nosys = true;
		return 0;
	}
	if (!s->path) {
		s->path = strdup(path);
		if (!s->path) {
			if (fd >= 0)
				close(fd);
			return -ENOMEM;
		}
	}
	if (fd < 0) {
		s->refused = true;
		pr_warn("refusing JIT file '%s' of pid %u: %s\n", path, jpr->pid,
			proc_file__strerror(fd));
		return 0;
	}
	s->usable = true;
	if (jp->nr_held >= JIT_MAX_HELD) {
		close(fd); /* found: read by path at the end instead */
		return 0;
	}
	s->fd = fd;
	jp->nr_held++;
	return 0;
}

/* Open (or remember to open later) one source; warn once when refused. */
static int try_source(struct jit_procs *jp, struct jit_proc *jpr, enum jit_kind k, const char *path)
{
	bool gone;
	int fd;

	if (jpr->src[k].fd >= 0 || jpr->src[k].refused)
		return 0;
	fd = source_open(jp->proc_dir, jpr->pid, jpr->start, &jpr->id, path, jp->max_size, &gone);
	return source_take(jp, jpr, k, path, fd, gone);
}

static int pin_proc(struct jit_procs *jp, struct jit_proc *jpr, const struct profile_process *pr)
{
	char path[PATH_MAX];
	int err;

	if (jpr->gone)
		return 0;
	if (!jpr->ident_read) {
		if (proc_ident__read(jp->proc_dir, jpr->pid, &jpr->id) ||
		    !proc_ident__same(jp->proc_dir, jpr->pid, jpr->start)) {
			jpr->gone = true;
			return 0;
		}
		jpr->ident_read = true;
	}
	if (find_jitdump_mapping(pr, jpr->id.nspid, path, sizeof(path))) {
		err = try_source(jp, jpr, JIT_DUMP, path);
		if (err)
			return err;
	}
	snprintf(path, sizeof(path), "/tmp/perf-%u.map", jpr->id.nspid);
	return try_source(jp, jpr, JIT_MAP, path);
}

struct dump_find {
	uint32_t nspid;
	char *out;
	size_t size;
};

static int find_dump_line(const struct procmaps_entry *e, void *ctx)
{
	struct dump_find *f = ctx;

	return jitdump_path(e->path, e->path_len, f->nspid, f->out, f->size);
}

void jit_capture__read(const char *proc_dir, uint64_t max_size, uint32_t pid, uint32_t start,
		       const char *maps, size_t len, struct jit_capture *jc)
{
	struct dump_find f = { .out = jc->path[JIT_DUMP], .size = sizeof(jc->path[JIT_DUMP]) };

	/* field by field: the paths' 8 KiB are not touched (page faults on a fresh block) */
	jc->gone = jc->ident_read = jc->reused = false;
	for (int k = 0; k < JIT_CAPTURE_KINDS; k++) {
		jc->path[k][0] = '\0';
		jc->fd[k] = -ENOENT;
		jc->src_gone[k] = false;
	}
	if (proc_ident__read(proc_dir, pid, &jc->id)) {
		jc->gone = true;
		return;
	}
	if (!proc_ident__same(proc_dir, pid, start)) {
		jc->gone = jc->reused = true;
		return;
	}
	jc->ident_read = true;
	f.nspid = jc->id.nspid;
	if (procmaps__parse(maps, len, "jitdump search", find_dump_line, &f, NULL) > 0)
		jc->fd[JIT_DUMP] = source_open(proc_dir, pid, start, &jc->id, jc->path[JIT_DUMP],
					       max_size, &jc->src_gone[JIT_DUMP]);
	else
		jc->path[JIT_DUMP][0] = '\0';
	snprintf(jc->path[JIT_MAP], sizeof(jc->path[JIT_MAP]), "/tmp/perf-%u.map", jc->id.nspid);
	jc->fd[JIT_MAP] = source_open(proc_dir, pid, start, &jc->id, jc->path[JIT_MAP], max_size,
				      &jc->src_gone[JIT_MAP]);
}

void jit_capture__release(struct jit_capture *jc)
{
	for (int k = 0; k < JIT_CAPTURE_KINDS; k++) {
		if (jc->fd[k] >= 0)
			close(jc->fd[k]);
		jc->fd[k] = -ENOENT;
	}
}

int jit_procs__adopt(struct jit_procs *jp, uint32_t pid, uint32_t start, struct jit_capture *jc)
{
	struct jit_proc *jpr = get_proc(jp, pid, start);
	int err = 0;

	if (!jpr)
		return -ENOMEM;
	if (jc->gone && !jpr->ident_read) {
		jpr->gone = true;
		return 0;
	}
	if (jpr->gone || !jc->ident_read)
		return 0;
	if (!jpr->ident_read) {
		jpr->id = jc->id;
		jpr->ident_read = true;
	}
	for (int k = 0; k < JIT_CAPTURE_KINDS && !err; k++) {
		if (!jc->path[k][0])
			continue;
		err = source_take(jp, jpr, (enum jit_kind)k, jc->path[k], jc->fd[k],
				  jc->src_gone[k]);
		jc->fd[k] = -ENOENT; /* taken or closed */
	}
	return err;
}

int jit_procs__pin(struct jit_procs *jp, const struct profile *p, uint32_t proc)
{
	struct jit_proc *jpr = get_proc(jp, p->procs[proc].pid, p->procs[proc].start);

	return jpr ? pin_proc(jp, jpr, &p->procs[proc]) : -ENOMEM;
}

/* The whole file behind a source: its held fd, or its path opened now. */
static int read_source(struct jit_procs *jp, struct jit_proc *jpr, enum jit_kind k, char **data,
		       size_t *len)
{
	struct jit_source *s = &jpr->src[k];
	char origin[4200];
	int fd = s->fd, err;

	if (!s->usable || s->refused)
		return -ENOENT;
	snprintf(origin, sizeof(origin), "%s (pid %u)", s->path, jpr->pid);
	if (fd < 0) {
		fd = proc_file__open(jp->proc_dir, jpr->pid, s->path, &jpr->id, jp->max_size);
		if (fd < 0) {
			if (fd != -ENOENT && fd != -ESRCH)
				pr_warn("refusing JIT file %s: %s\n", origin,
					proc_file__strerror(fd));
			return fd;
		}
		if (!proc_ident__same(jp->proc_dir, jpr->pid, jpr->start)) {
			close(fd); /* another process's now */
			return -ESRCH;
		}
	} else if (lseek(fd, 0, SEEK_SET) < 0) {
		return -errno;
	}
	err = jit_file__read_fd(fd, origin, jp->max_size, data, len);
	if (fd != s->fd)
		close(fd);
	return err;
}

/* Add every entry of src to dst, in address order (timestamps kept). */
static int merge_into(struct jit_table *dst, const struct jit_table *src)
{
	struct jit_sym sym;

	for (size_t i = 0; i < jitdump__count(src); i++) {
		if (jitdump__sym(src, i, &sym))
			break;
		if (jit_table__add(dst, sym.start, sym.size, sym.timestamp, sym.name,
				   strlen(sym.name)))
			return -ENOMEM;
	}
	return 0;
}

/*
 * The jitdump's bytes, with what the running process has written but not
 * flushed yet appended (jit_tail.h): V8 writes through a stdio buffer.
 */
static int read_jitdump(struct jit_procs *jp, struct jit_proc *jpr, const struct profile *p,
			uint32_t proc, char **data, size_t *len)
{
	struct jit_source *s = &jpr->src[JIT_DUMP];
	char *tail = NULL, *all;
	size_t tail_len = 0;
	uint64_t pos = 0;
	int fd = s->fd, err;

	if (!s->usable || s->refused)
		return -ENOENT;
	if (fd < 0)
		fd = proc_file__open(jp->proc_dir, jpr->pid, s->path, &jpr->id, jp->max_size);
	/* the tail first: the file then holds at least the bytes before it; of this process only */
	if (fd >= 0 && !proc_ident__same(jp->proc_dir, jpr->pid, jpr->start)) {
		if (fd != s->fd)
			close(fd);
		fd = -ESRCH;
	}
	err = fd >= 0 ? jit_tail__read(jp->proc_dir, p, proc, fd, &tail, &tail_len, &pos) : fd;
	if (err && err != -ENOENT && err != -ESRCH)
		pr_debug("jitdump of pid %u: unflushed records not read: %s\n", jpr->pid,
			 strerror(-err));
	if (fd >= 0 && fd != s->fd)
		close(fd);
	err = read_source(jp, jpr, JIT_DUMP, data, len);
	if (err || !tail_len || pos > *len || pos + tail_len > jp->max_size) {
		free(tail);
		return err;
	}
	all = realloc(*data, pos + tail_len);
	if (!all) {
		free(tail);
		return 0; /* the file alone */
	}
	memcpy(all + pos, tail, tail_len);
	free(tail);
	pr_debug("jitdump of pid %u: %zu unflushed bytes read from its buffer at offset %llu\n",
		 jpr->pid, tail_len, (unsigned long long)pos);
	*data = all;
	*len = pos + tail_len;
	return 0;
}

static struct jit_table *load_proc(struct jit_procs *jp, struct jit_proc *jpr,
				   const struct profile *p, uint32_t proc)
{
	struct jit_table *dump = NULL, *map = NULL, *merged;
	char origin[4200], *data;
	size_t len;

	if (!read_jitdump(jp, jpr, p, proc, &data, &len)) {
		snprintf(origin, sizeof(origin), "%s (pid %u)", jpr->src[JIT_DUMP].path, jpr->pid);
		if (jitdump__parse(data, len, origin, &dump, NULL))
			pr_warn("JIT file %s not used\n", origin);
		free(data);
	}
	if (!read_source(jp, jpr, JIT_MAP, &data, &len)) {
		snprintf(origin, sizeof(origin), "%s (pid %u)", jpr->src[JIT_MAP].path, jpr->pid);
		perfmap__parse(data, len, origin, &map, NULL);
		free(data);
	}
	if (!dump || !map)
		return dump ? dump : map;
	/* perf map lines carry no time (0): any jitdump entry is newer */
	merged = jit_table__new();
	if (merged && (merge_into(merged, map) || merge_into(merged, dump))) {
		jitdump__free(merged);
		merged = NULL;
	}
	jitdump__free(dump);
	jitdump__free(map);
	if (merged)
		jit_table__finish(merged);
	return merged;
}

const struct jit_table *jit_procs__table(struct jit_procs *jp, const struct profile *p,
					 uint32_t proc)
{
	const struct profile_process *pr = &p->procs[proc];
	struct jit_proc *jpr = find_proc(jp, pr->pid, pr->start);

	if (!jpr) {
		/* never pinned (sampled before its maps were read): look now */
		if (jit_procs__pin(jp, p, proc))
			return NULL;
		jpr = find_proc(jp, pr->pid, pr->start);
	} else if (!jpr->loaded) {
		/* code compiled late may come with a file created late */
		pin_proc(jp, jpr, &p->procs[proc]);
	}
	if (jpr)
		jpr->gen = jp->gen;
	if (!jpr || jpr->loaded)
		return jpr ? jpr->table : NULL;
	jpr->loaded = true;
	if (jpr->src[JIT_DUMP].usable || jpr->src[JIT_MAP].usable)
		jpr->table = load_proc(jp, jpr, p, proc);
	return jpr->table;
}

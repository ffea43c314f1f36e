// SPDX-License-Identifier: MIT
/*
 * Address → function name for every location (include/symbolize.h). Only
 * addresses that were sampled are looked up; each ELF file is parsed once.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "array.h"
#include "buf.h"
#include "demangle.h"
#include "kallsyms.h"
#include "kernel_names.h"
#include "lib_hashmap.h"
#include "log.h"
#include "proc_file.h"
#include "procmaps.h"
#include "sym_debuginfod.h"
#include "sym_elf.h"
#include "sym_preload.h"
#include "sym_jit.h"
#include "sym_python.h"
#include "symbolize.h"

struct dso_entry {
	char *path; /* owned copy: the cache outlives each profile (--interval) */
	uint64_t inode;
	uint32_t dev_major, dev_minor; /* with inode: the file's identity across mount namespaces */
	struct elf_symtab *st; /* NULL when the file could not be read */
	uint8_t build_id[ELF_BUILD_ID_MAX];
	size_t build_id_len;
	uint32_t pid; /* a process that mapped it, to read it again */
	uint64_t gen; /* the last symbolizer__symbolize that named an address in it */
	bool debuginfod_tried;
	bool loaded; /* st read (or its reading failed); an entry ahead_of_naming made may wait */
};

/* A user location's symbol, looked up ahead of the naming loop (look_ahead) */
struct ahead {
	size_t loc; /* index in the profile's locations, increasing */
	size_t dso; /* index in sy->dsos */
	uint64_t file_off;
	const char *name; /* elf_symtab__lookup_offset's answer: the table's, stable */
	uint64_t off;
};

/* A file held open while its process lived, for when it is gone at symbolization. */
struct pinned_file {
	char *path;
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	int fd;
	uint64_t gen; /* the last profile (generation) a process mapping it was pinned in */
};

struct symbolizer {
	struct pinned_file *pins;
	size_t nr_pins, cap_pins, max_pins;
	const char *kallsyms_path;
	const char *proc_dir;
	struct ksyms *ks;
	bool ks_loaded;
	int ks_errno; /* errno of a failed load */
	pthread_t ks_thread; /* symbolizer__load_kernel_async's, until joined */
	bool ks_async;
	bool ks_idle; /* that thread runs under SCHED_IDLE until it is waited for */
	/*
	 * symbolizer__kernel_names_by_bpf: each profile's kernel frames named by
	 * the kernel's lookup (kn, opened on first need) rather than from
	 * /proc/kallsyms read whole; ks then holds only their symbols
	 */
	bool kn_wanted;
	bool kn_tried;
	struct kernel_names *kn;
	struct elf_symtab *vdso; /* our own [vdso]: every 64-bit process maps the same image */
	bool vdso_loaded;
	struct dso_entry *dsos;
	size_t nr_dsos, cap_dsos;
	struct jit_procs *jit; /* jitdumps and perf maps of the processes seen */
	/* the last process's JIT table: locations come clustered by process */
	uint32_t jit_proc;
	const struct jit_table *jit_table;
	bool jit_cached;
	/*
	 * Profiles symbolized so far: pins, files and JIT processes that the
	 * last two profiles did not use are let go (bounded for weeks of
	 * --interval)
	 */
	uint64_t gen;
	bool debuginfod; /* symbolizer__use_debuginfod called: fetch what is missing */
	bool no_debuginfod_later; /* symbolizer__expect_debuginfod(false) */
	bool no_demangle; /* symbolizer__set_demangle(false): names stay as the files spell them */
	struct debuginfod_opts debuginfod_opts;
	uint64_t load_ns; /* CPU loading symbol tables (get_dso, look_ahead's threads), for -vv */
	size_t nr_loaded;
	/*
	 * symbolizer__preload: the pinned files' tables read while sampling,
	 * until the first profile is symbolized (take_preloaded); for -vv, the
	 * tables it handed over and its thread's CPU
	 */
	struct sym_preload *preload;
	size_t nr_preloaded, preload_queued, preload_tried;
	uint64_t preload_ns;
	/* this profile's look-ups made ahead (look_ahead), name_user's cursor in them */
	struct ahead *ahead;
	size_t nr_ahead, at_ahead;
	/*
	 * The naming loop's strings interned, by the address they came from
	 * (intern_at): a file's base name, a symbol of a table; for this
	 * profile's naming only, while those tables are loaded: kept across
	 * the passes while sampling (no table is freed or replaced then),
	 * emptied when symbolizer__symbolize begins (expire, debuginfod and
	 * the tables read there may reuse a freed table's addresses)
	 */
	struct u64map interned;
	/*
	 * symbolizer__symbolize_ahead's passes over the profile in hand, on
	 * its owner's thread while sampling; reset when that profile is
	 * symbolized (symbolizer__symbolize) or another is passed
	 */
	struct {
		const struct profile *p; /* the profile they named; NULL: none yet */
		/* each process's maps_gen when its locations were last resolved (index < nr_gen) */
		uint32_t *maps_gen;
		size_t nr_gen, cap_gen;
		/* locations before it are named, or left to finalize for good */
		size_t from;
		uint32_t *named; /* one pass's locations named, for their demangling */
		size_t cap_named;
		/* each symbol demangled so far: interned symbol -> interned demangled form, 0 none */
		struct u64map demangled;
		size_t nr_passes, nr_named; /* for -vv and symbolizer__counts */
		size_t nr_reset; /* locations named again, their mappings changed (-vv) */
		uint64_t cpu_ns, resolve_ns, demangle_ns; /* the passes' CPU, of it these steps' */
	} run;
};

static uint64_t thread_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void join_kernel_load(struct symbolizer *sy);
static bool can_leave_idle(void);

struct symbolizer *symbolizer__new(const char *kallsyms_path, const char *proc_dir)
{
	struct symbolizer *sy = calloc(1, sizeof(*sy));
	struct rlimit rl;

	if (!sy)
		return NULL;
	sy->kallsyms_path = kallsyms_path;
	sy->proc_dir = proc_dir;
	sy->jit = jit_procs__new(proc_dir, JIT_FILE_MAX_SIZE);
	if (!sy->jit) {
		free(sy);
		return NULL;
	}
	/* one descriptor per executable file, leaving room for everything else */
	if (!getrlimit(RLIMIT_NOFILE, &rl)) {
		if (rl.rlim_cur < rl.rlim_max && rl.rlim_max != RLIM_INFINITY) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
		sy->max_pins = rl.rlim_cur > 256 ? (size_t)(rl.rlim_cur - 256) / 2 : 0;
	}
	return sy;
}

static void drop_dsos(struct symbolizer *sy)
{
	size_t i;

	for (i = 0; i < sy->nr_dsos; i++) {
		elf_symtab__free(sy->dsos[i].st);
		free(sy->dsos[i].path);
	}
	sy->nr_dsos = 0;
}

static void run_reset(struct symbolizer *sy)
{
	u64map__free(&sy->interned);
	free(sy->run.maps_gen);
	free(sy->run.named);
	u64map__free(&sy->run.demangled);
	memset(&sy->run, 0, sizeof(sy->run));
}

void symbolizer__free(struct symbolizer *sy)
{
	if (!sy)
		return;
	run_reset(sy);
	join_kernel_load(sy);
	sym_preload__free(sy->preload);
	drop_dsos(sy);
	free(sy->dsos);
	jit_procs__free(sy->jit);
	elf_symtab__free(sy->vdso);
	for (size_t i = 0; i < sy->nr_pins; i++) {
		close(sy->pins[i].fd);
		free(sy->pins[i].path);
	}
	free(sy->pins);
	ksyms__free(sy->ks);
	kernel_names__close(sy->kn);
	free(sy);
}

/* "/usr/lib/x.so (deleted)" → "/usr/lib/x.so" */
static void strip_deleted(char *path)
{
	static const char sfx[] = " (deleted)";
	size_t n = strlen(path), s = sizeof(sfx) - 1;

	if (n > s && !strcmp(path + n - s, sfx))
		path[n - s] = '\0';
}

static bool same_file(const char *path, uint64_t inode, uint32_t maj, uint32_t min,
		      const struct profile_mapping *m)
{
	return inode == m->inode && maj == m->dev_major && min == m->dev_minor &&
	       !strcmp(path, m->path);
}

static struct pinned_file *find_pin(const struct symbolizer *sy, const struct profile_mapping *m)
{
	size_t i;

	for (i = 0; i < sy->nr_pins; i++)
		if (same_file(sy->pins[i].path, sy->pins[i].inode, sy->pins[i].dev_major,
			      sy->pins[i].dev_minor, m))
			return &sy->pins[i];
	return NULL;
}

/*
 * Before a profile is symbolized: let go of what neither it nor the one
 * before used (pins, JIT processes) and of the files it and the two before
 * named nothing in. Their processes have exited, or were not sampled for two
 * profiles (pinned again when sampled).
 */
static void expire(struct symbolizer *sy)
{
	size_t i, kept = 0;

	for (i = 0; i < sy->nr_pins; i++) {
		if (sy->pins[i].gen + 1 < sy->gen) {
			close(sy->pins[i].fd);
			free(sy->pins[i].path);
			continue;
		}
		sy->pins[kept++] = sy->pins[i];
	}
	sy->nr_pins = kept;
	for (i = kept = 0; i < sy->nr_dsos; i++) {
		if (sy->dsos[i].gen + 2 < sy->gen) {
			elf_symtab__free(sy->dsos[i].st);
			free(sy->dsos[i].path);
			continue;
		}
		sy->dsos[kept++] = sy->dsos[i];
	}
	sy->nr_dsos = kept;
	jit_procs__expire(sy->jit);
}

void symbolizer__settle(struct symbolizer *sy)
{
	for (size_t i = 0; i < sy->nr_dsos; i++)
		if (sy->dsos[i].st)
			elf_symtab__settle(sy->dsos[i].st);
	if (sy->vdso)
		elf_symtab__settle(sy->vdso);
}

void symbolizer__counts(const struct symbolizer *sy, struct symbolizer_counts *c)
{
	c->nr_pins = sy->nr_pins;
	c->nr_files = sy->nr_dsos;
	c->nr_jit_procs = jit_procs__count(sy->jit, &c->nr_jit_fds);
	c->nr_preload_queued = sy->preload_queued;
	c->nr_preload_tried = sy->preload_tried;
	if (sy->preload)
		sym_preload__progress(sy->preload, &c->nr_preload_queued, &c->nr_preload_tried);
	c->nr_preloaded = sy->nr_preloaded;
	c->nr_ahead_passes = sy->run.nr_passes;
	c->nr_named_ahead = sy->run.nr_named;
}

int symbolizer__set_jit_max_size(struct symbolizer *sy, uint64_t bytes)
{
	struct jit_procs *jit = jit_procs__new(sy->proc_dir, bytes);

	if (!jit)
		return -ENOMEM;
	jit_procs__free(sy->jit);
	sy->jit = jit;
	return 0;
}

void symbolizer__jit_sources(const struct symbolizer *sy, const struct profile_process *pr,
			     bool *dump, bool *map)
{
	jit_procs__sources(sy->jit, pr->pid, pr->start, dump, map);
}

bool symbolizer__has_jit(const struct symbolizer *sy, const struct profile_process *pr)
{
	return jit_procs__has(sy->jit, pr->pid, pr->start);
}

const struct jit_table *symbolizer__jit_table(struct symbolizer *sy, const struct profile *p,
					      uint32_t proc)
{
	return jit_procs__table(sy->jit, p, proc);
}

/* Whether mapping m is a file's executable mapping, the kind pinned */
static bool pinnable(const struct profile_mapping *m)
{
	return m->path[0] == '/' && m->perms[2] == 'x';
}

/*
 * map_files' descriptor of mapping m of process pid, which reaches the very
 * file mapped (other mount namespaces, deleted files); -errno.
 */
static int open_map_file(const char *proc_dir, uint32_t pid, const struct profile_mapping *m)
{
	char file[128];
	int fd;

	snprintf(file, sizeof(file), "%s/%u/map_files/%llx-%llx", proc_dir, pid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
	fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	return fd < 0 ? -errno : fd;
}

/*
 * Hold fd (taken) as m's file, mapped by process pid, and queue it for
 * symbolizer__preload's reading. Returns 0 or -ENOMEM (fd closed).
 */
static int add_pin(struct symbolizer *sy, const struct profile_mapping *m, uint32_t pid, int fd)
{
	struct pinned_file *pin;

	if (array__grow((void **)&sy->pins, &sy->cap_pins, sy->nr_pins + 1, sizeof(*sy->pins))) {
		close(fd);
		return -ENOMEM;
	}
	pin = &sy->pins[sy->nr_pins];
	pin->path = strdup(m->path);
	if (!pin->path) {
		close(fd);
		return -ENOMEM;
	}
	pin->inode = m->inode;
	pin->dev_major = m->dev_major;
	pin->dev_minor = m->dev_minor;
	pin->fd = fd;
	pin->gen = sy->gen;
	sy->nr_pins++;
	/* each file once: a file pinned already is not added again */
	if (sy->preload && sym_preload__add(sy->preload, m->path, m->inode, m->dev_major,
					    m->dev_minor, pid, fd) == -ENOMEM)
		return -ENOMEM;
	return 0;
}

int symbolizer__pin(struct symbolizer *sy, const struct profile *p, uint32_t proc)
{
	const struct profile_process *pr = &p->procs[proc];
	size_t i;

	if (jit_procs__pin(sy->jit, p, proc))
		return -ENOMEM;

	for (i = 0; i < pr->nr_mappings; i++) {
		const struct profile_mapping *m = &pr->mappings[i];
		struct pinned_file *pin;
		int fd;

		if (!pinnable(m))
			continue;
		pin = find_pin(sy, m);
		if (pin) {
			pin->gen = sy->gen;
			continue;
		}
		if (sy->nr_pins >= sy->max_pins)
			return 0; /* out of descriptors to spend: symbolize by path at the end */
		fd = open_map_file(sy->proc_dir, pr->pid, m);
		if (fd < 0)
			continue;
		/*
		 * the file of this process's mapping, not of another that took
		 * its pid since (no inode check: overlayfs maps show the overlay
		 * inode, map_files opens the backing file)
		 */
		if (!proc_ident__same(sy->proc_dir, pr->pid, pr->start)) {
			close(fd);
			continue;
		}
		if (add_pin(sy, m, pr->pid, fd))
			return -ENOMEM;
	}
	return 0;
}

/* symbolizer__capture's walk of the maps text */
struct capture_walk {
	const char *proc_dir;
	uint32_t pid;
	size_t max_files;
	struct sym_capture *c;
	struct { /* each file's line, for one descriptor a file */
		const char *path;
		size_t len;
		uint64_t inode;
		uint32_t maj, min;
	} seen[SYM_CAPTURE_MAX_FILES];
};

static int capture_line(const struct procmaps_entry *e, void *ctx)
{
	struct capture_walk *w = ctx;
	struct sym_capture *c = w->c;
	struct profile_mapping m = { .start = e->start, .end = e->end };
	size_t i;
	int fd;

	if (!e->path_len || e->path[0] != '/' || e->perms[2] != 'x')
		return 0;
	if (c->nr_files >= w->max_files || c->nr_files >= SYM_CAPTURE_MAX_FILES)
		return 1; /* enough: the rest at the reader's own pin */
	/* one descriptor a file: a file's later executable mappings share it */
	for (i = 0; i < c->nr_files; i++)
		if (w->seen[i].len == e->path_len &&
		    !memcmp(w->seen[i].path, e->path, e->path_len) &&
		    w->seen[i].inode == e->inode && w->seen[i].maj == e->dev_major &&
		    w->seen[i].min == e->dev_minor)
			return 0;
	fd = open_map_file(w->proc_dir, w->pid, &m);
	if (fd < 0)
		return 0;
	w->seen[c->nr_files].path = e->path;
	w->seen[c->nr_files].len = e->path_len;
	w->seen[c->nr_files].inode = e->inode;
	w->seen[c->nr_files].maj = e->dev_major;
	w->seen[c->nr_files].min = e->dev_minor;
	c->files[c->nr_files].start = e->start;
	c->files[c->nr_files].end = e->end;
	c->files[c->nr_files++].fd = fd;
	return 0;
}

void symbolizer__capture(const char *proc_dir, uint64_t jit_max_size, uint32_t pid, uint32_t start,
			 const char *maps, size_t len, size_t max_files, struct sym_capture *c)
{
	struct capture_walk w = { .proc_dir = proc_dir, .pid = pid, .max_files = max_files, .c = c };

	c->nr_files = 0;
	if (max_files)
		procmaps__parse(maps, len, "notice", capture_line, &w, NULL);
	/*
	 * its identity read once, by the JIT files' capture, after the opens:
	 * the files of this process, not of another that took its pid since
	 * (as symbolizer__pin)
	 */
	jit_capture__read(proc_dir, jit_max_size, pid, start, maps, len, &c->jit);
	if (c->nr_files && c->jit.reused) {
		for (size_t i = 0; i < c->nr_files; i++)
			close(c->files[i].fd);
		c->nr_files = 0;
	}
}

void sym_capture__release(struct sym_capture *c)
{
	for (size_t i = 0; i < c->nr_files; i++)
		if (c->files[i].fd >= 0)
			close(c->files[i].fd);
	c->nr_files = 0;
	jit_capture__release(&c->jit);
}

int symbolizer__adopt(struct symbolizer *sy, const struct profile *p, uint32_t proc,
		      struct sym_capture *c)
{
	const struct profile_process *pr = &p->procs[proc];
	size_t i, j;

	if (jit_procs__adopt(sy->jit, pr->pid, pr->start, &c->jit))
		return -ENOMEM;
	for (i = 0; i < c->nr_files; i++) {
		const struct profile_mapping *m = NULL;
		struct pinned_file *pin;

		if (c->files[i].fd < 0)
			continue;
		/* the mapping it was opened for, by its address range */
		for (j = 0; j < pr->nr_mappings && !m; j++)
			if (pr->mappings[j].start == c->files[i].start &&
			    pr->mappings[j].end == c->files[i].end && pinnable(&pr->mappings[j]))
				m = &pr->mappings[j];
		if (!m)
			continue;
		pin = find_pin(sy, m);
		if (pin) {
			pin->gen = sy->gen; /* held already: c's is closed with c */
			continue;
		}
		if (sy->nr_pins >= sy->max_pins)
			return 0;
		if (add_pin(sy, m, pr->pid, c->files[i].fd)) {
			c->files[i].fd = -1;
			return -ENOMEM;
		}
		c->files[i].fd = -1; /* the symbolizer's now */
	}
	return 0;
}

/*
 * Load the ELF file at `path` inside the directory `root` through
 * proc_file__open_in: a file swapped for a symlink, or one outside the
 * process's root, is not read. NULL with errno set otherwise.
 */
static struct elf_symtab *load_in(const char *root, const char *path, const struct elf_load_opts *o)
{
	struct elf_symtab *st;
	char file[64];
	int fd = proc_file__open_in(root, path, NULL, UINT64_MAX);

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	snprintf(file, sizeof(file), "/proc/self/fd/%d", fd);
	st = elf_symtab__load_opts(file, o);
	close(fd);
	return st;
}

/* 0 when fd holds an ELF file with the GNU build-id of m (any when m has none), -ENOEXEC, -ESTALE */
static int check_build_id(int fd, const struct profile_mapping *m)
{
	uint8_t id[ELF_BUILD_ID_MAX];
	char file[64];
	int n;

	snprintf(file, sizeof(file), "/proc/self/fd/%d", fd);
	n = elf__read_build_id(file, id);
	if (n < 0)
		return -ENOEXEC;
	if (m->build_id_len && ((size_t)n != m->build_id_len || memcmp(id, m->build_id, (size_t)n)))
		return -ESTALE;
	return 0;
}

int symbolizer__open_file(struct symbolizer *sy, const struct profile *p, uint32_t proc,
			  const struct profile_mapping *m)
{
	const struct pinned_file *pin = find_pin(sy, m);
	char file[4096], root[64];
	int fd, err = -ENOENT, ret;

	if (m->path[0] != '/')
		return -ENOENT;
	if (pin) {
		fd = fcntl(pin->fd, F_DUPFD_CLOEXEC, 0);
		if (fd < 0)
			return -errno;
		err = check_build_id(fd, m);
		if (!err)
			return fd;
		close(fd);
	}
	snprintf(root, sizeof(root), "%s/%u/root", sy->proc_dir, p->procs[proc].pid);
	snprintf(file, sizeof(file), "%s", m->path);
	strip_deleted(file);
	/* a deleted file's path may name another file now: only a build-id can tell */
	if (strcmp(file, m->path) && !m->build_id_len)
		return err;
	/* the process's own view first (containers, chroots), then ours */
	for (int i = 0; i < 2; i++) {
		fd = proc_file__open_in(i ? "/" : root, file, NULL, UINT64_MAX);
		if (fd < 0) {
			if (err == -ENOENT)
				err = fd;
			continue;
		}
		ret = check_build_id(fd, m);
		if (!ret)
			return fd;
		close(fd);
		if (err == -ENOENT || err == -ENOEXEC)
			err = ret;
	}
	return err;
}

/*
 * The symbols of the file open at fd (a pin's), mapped at path by process
 * pid, with its debug file searched under the process's root and then the
 * host's, or debug_file (debuginfod's) when not NULL. Any thread: reads
 * only its arguments. NULL with errno set.
 */
static struct elf_symtab *load_pinned(const char *proc_dir, int fd, uint32_t pid, const char *path,
				      const char *debug_file)
{
	char file[4096], fdpath[64], root[64];
	struct elf_load_opts o = {
		.debug_root = root, .host_debug = true, .file_path = file, .debug_file = debug_file
	};

	snprintf(root, sizeof(root), "%s/%u/root", proc_dir, pid);
	snprintf(file, sizeof(file), "%s", path);
	strip_deleted(file);
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
	return elf_symtab__load_opts(fdpath, &o);
}

/* symbolizer__preload's reading (sym_preload_load_fn): the pin's table, as open_elf reads it first */
static struct elf_symtab *preload_load(void *proc_dir, int fd, uint32_t pid, const char *path)
{
	return load_pinned(proc_dir, fd, pid, path, NULL);
}

/*
 * The symbols of m's file: its pin's (load_pinned), else by path under the
 * process's root and then the host's, with its debug file searched the
 * same way, or debug_file (debuginfod's) when not NULL.
 */
static struct elf_symtab *open_elf(struct symbolizer *sy, uint32_t pid,
				   const struct profile_mapping *m, const char *debug_file)
{
	const struct pinned_file *pin = find_pin(sy, m);
	char file[4096], root[64];
	struct elf_load_opts o = {
		.debug_root = root, .host_debug = true, .file_path = file, .debug_file = debug_file
	};
	struct elf_symtab *st;

	snprintf(root, sizeof(root), "%s/%u/root", sy->proc_dir, pid);
	snprintf(file, sizeof(file), "%s", m->path);
	strip_deleted(file);
	if (pin) {
		st = load_pinned(sy->proc_dir, pin->fd, pid, m->path, debug_file);
		if (st)
			return st;
	}
	/* the process's own view first (containers, chroots), then ours */
	st = load_in(root, file, &o);
	if (st)
		return st;
	o.debug_root = "";
	st = load_in("/", file, &o);
	if (!st)
		pr_info("no symbols for '%s' (pid %u): %s\n", m->path, pid,
			errno == ELOOP ? "a symbolic link is on its path" : strerror(errno));
	return st;
}

/* The entry of m's file, found or added (its table not read yet: load_dso); NULL on ENOMEM */
static struct dso_entry *dso_entry_of(struct symbolizer *sy, uint32_t pid,
				      const struct profile_mapping *m)
{
	struct dso_entry *d;
	size_t i;

	for (i = sy->nr_dsos; i-- > 0;)
		if (sy->dsos[i].inode == m->inode && sy->dsos[i].dev_major == m->dev_major &&
		    sy->dsos[i].dev_minor == m->dev_minor && !strcmp(sy->dsos[i].path, m->path)) {
			sy->dsos[i].gen = sy->gen;
			return &sy->dsos[i];
		}
	if (array__grow((void **)&sy->dsos, &sy->cap_dsos, sy->nr_dsos + 1, sizeof(*sy->dsos)))
		return NULL;
	d = &sy->dsos[sy->nr_dsos];
	memset(d, 0, sizeof(*d));
	d->path = strdup(m->path);
	if (!d->path)
		return NULL;
	sy->nr_dsos++;
	d->inode = m->inode;
	d->dev_major = m->dev_major;
	d->dev_minor = m->dev_minor;
	d->pid = pid;
	d->gen = sy->gen;
	return d;
}

/* d's symbol table read; any thread, one entry each. Returns the CPU ns it took. */
static uint64_t load_dso(struct symbolizer *sy, struct dso_entry *d)
{
	struct profile_mapping m = { .path = d->path,
				     .inode = d->inode,
				     .dev_major = d->dev_major,
				     .dev_minor = d->dev_minor };
	uint64_t t0 = thread_ns();

	d->st = open_elf(sy, d->pid, &m, NULL);
	if (d->st)
		d->build_id_len = elf_symtab__build_id(d->st, d->build_id);
	d->loaded = true;
	return thread_ns() - t0;
}

int symbolizer__preload(struct symbolizer *sy, size_t max_files, uint64_t after_ns)
{
	if (sy->preload || sy->gen)
		return 0;
	/* SCHED_IDLE only where it can be raised back when finalize waits (as the kernel's read) */
	sy->preload = sym_preload__start(max_files, after_ns, can_leave_idle(), preload_load,
					 (void *)sy->proc_dir);
	return sy->preload ? 0 : -errno;
}

/*
 * f's table, read by symbolizer__preload's thread, made its file's entry's
 * (a file read already keeps its own; a failed read leaves the file to be
 * read the usual way). 0 or -ENOMEM.
 */
static int adopt_preloaded(struct symbolizer *sy, struct sym_preload_file *f)
{
	struct profile_mapping m = { .path = f->path,
				     .inode = f->inode,
				     .dev_major = f->dev_major,
				     .dev_minor = f->dev_minor };
	struct dso_entry *d;

	if (!f->st)
		return 0;
	d = dso_entry_of(sy, f->pid, &m);
	if (!d)
		return -ENOMEM;
	if (d->loaded)
		return 0;
	d->st = f->st;
	f->st = NULL;
	d->build_id_len = elf_symtab__build_id(d->st, d->build_id);
	d->loaded = true;
	sy->nr_preloaded++;
	return 0;
}

/*
 * The tables symbolizer__preload read, handed to their files' entries
 * before anything here reads a table (those a pass took already are theirs): its thread stopped (the table under
 * way finished), each table read becomes its entry's (a file read already
 * keeps its own), the files not read are read the usual way when named.
 * Once, at the first profile. 0 or -ENOMEM.
 */
static int take_preloaded(struct symbolizer *sy)
{
	struct sym_preload *pl = sy->preload;
	int err = 0;

	if (!pl)
		return 0;
	sym_preload__stop(pl);
	for (struct sym_preload_file *f = sym_preload__files(pl); f && !err; f = f->next)
		err = adopt_preloaded(sy, f);
	sy->preload_ns = sym_preload__cpu_ns(pl);
	sym_preload__progress(pl, &sy->preload_queued, &sy->preload_tried);
	sym_preload__free(pl); /* the tables not taken, and its descriptors */
	sy->preload = NULL;
	return err;
}

static struct dso_entry *get_dso(struct symbolizer *sy, uint32_t pid,
				 const struct profile_mapping *m)
{
	struct dso_entry *d = dso_entry_of(sy, pid, m);

	if (d && !d->loaded) {
		sy->load_ns += load_dso(sy, d);
		sy->nr_loaded++;
	}
	return d;
}

/*
 * The kernel maps one vDSO image into every (64-bit) process, so our own copy
 * names the frames of all of them, as perf does by dumping it.
 */
static struct elf_symtab *load_vdso(struct symbolizer *sy)
{
	size_t size;
	const void *image = proc_file__own_vdso(&size);
	char path[64];
	int fd;

	if (sy->vdso_loaded)
		return sy->vdso;
	sy->vdso_loaded = true;
	if (!image || !size)
		return NULL;
	fd = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		return NULL;
	if (write(fd, image, size) == (ssize_t)size) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		sy->vdso = elf_symtab__load(path, "");
	}
	close(fd);
	return sy->vdso;
}

static const char *dso_basename(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static void *load_kernel(void *arg)
{
	struct symbolizer *sy = arg;

	sy->ks = ksyms__load(sy->kallsyms_path);
	sy->ks_errno = sy->ks ? 0 : errno;
	return NULL;
}

/* CAP_SYS_NICE in the effective set: what leaving SCHED_IDLE needs (sched(7), can_nice()). */
static bool can_leave_idle(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = { { 0 } };

	if (syscall(SYS_capget, &hdr, data))
		return false;
	return data[CAP_TO_INDEX(CAP_SYS_NICE)].effective & CAP_TO_MASK(CAP_SYS_NICE);
}

void symbolizer__kernel_names_by_bpf(struct symbolizer *sy)
{
	sy->kn_wanted = true;
}

/* The kernel's lookup when wanted and it loads (once), else NULL: /proc/kallsyms is read. */
static struct kernel_names *kernel_namer(struct symbolizer *sy)
{
	if (!sy->kn_wanted)
		return NULL;
	if (!sy->kn_tried) {
		sy->kn_tried = true;
		sy->kn = kernel_names__open();
		if (!sy->kn)
			pr_debug("kernel names by BPF: %s; /proc/kallsyms is read\n", strerror(errno));
	}
	return sy->kn;
}

/* Stop using the kernel's lookup (it failed): from here kernel_symbols reads /proc/kallsyms. */
static void drop_kernel_namer(struct symbolizer *sy, int err)
{
	pr_debug("kernel names by BPF: %s; /proc/kallsyms is read\n", strerror(-err));
	kernel_names__close(sy->kn);
	sy->kn = NULL;
	sy->kn_wanted = false;
	ksyms__free(sy->ks);
	sy->ks = NULL;
	sy->ks_loaded = false;
}

/*
 * Name p's kernel locations by the kernel's lookup: sy->ks becomes a table of
 * just their symbols, which name_kernel then reads as it would the whole one.
 * Returns 0 (also when the lookup is not used or failed: the whole table is
 * then read when first needed), or -ENOMEM.
 */
static int kernel_symbols_of(struct symbolizer *sy, const struct profile *p)
{
	struct kernel_names *kn = kernel_namer(sy);
	uint64_t *addrs;
	size_t i, n = 0, len;
	char *text;
	int err;

	if (!kn)
		return 0;
	addrs = malloc((p->nr_locs ? p->nr_locs : 1) * sizeof(*addrs));
	if (!addrs)
		return -ENOMEM;
	for (i = 0; i < p->nr_locs; i++) {
		const struct profile_location *l = &p->locs[i];

		if (!l->dso && l->proc == PROFILE_KERNEL_PROC)
			addrs[n++] = l->addr - l->is_return;
	}
	err = kernel_names__kallsyms_text(kn, addrs, n, &text, &len);
	free(addrs);
	if (err) {
		drop_kernel_namer(sy, err);
		return err == -ENOMEM ? err : 0;
	}
	ksyms__free(sy->ks);
	sy->ks = ksyms__parse(text, len);
	free(text);
	if (!sy->ks) {
		drop_kernel_namer(sy, -ENOMEM);
		return -ENOMEM;
	}
	sy->ks_loaded = true;
	return 0;
}

int symbolizer__load_kernel_async(struct symbolizer *sy)
{
	struct sched_param sp = { 0 };
	int err;

	if (sy->ks_loaded || sy->ks_async || !sy->kallsyms_path || kernel_namer(sy))
		return 0;
	err = pthread_create(&sy->ks_thread, NULL, load_kernel, sy);
	if (err)
		return -err;
	sy->ks_async = true;
	/*
	 * Only idle CPU time: on a machine the workload keeps busy, the read
	 * would otherwise take its CPU while it is being measured. Raised back
	 * when waited for, which needs CAP_SYS_NICE: without it the thread
	 * stays a normal one.
	 */
	if (can_leave_idle())
		sy->ks_idle = !pthread_setschedparam(sy->ks_thread, SCHED_IDLE, &sp);
	return 0;
}

/* Wait for the background load, at normal priority from here. */
static void join_kernel_load(struct symbolizer *sy)
{
	struct sched_param sp = { 0 };

	if (!sy->ks_async)
		return;
	if (sy->ks_idle)
		pthread_setschedparam(sy->ks_thread, SCHED_OTHER, &sp);
	pthread_join(sy->ks_thread, NULL);
	sy->ks_async = sy->ks_idle = false;
}

/* The kernel symbols: the background load's (waited for), else read now. Reports a failure once. */
static void kernel_symbols(struct symbolizer *sy)
{
	if (sy->ks_loaded || !sy->kallsyms_path)
		return;
	sy->ks_loaded = true;
	if (sy->ks_async) {
		join_kernel_load(sy);
	} else {
		load_kernel(sy);
	}
	if (!sy->ks)
		pr_warn("cannot read '%s': %s; kernel frames stay unnamed\n", sy->kallsyms_path,
			strerror(sy->ks_errno));
	else if (ksyms__restricted(sy->ks))
		pr_warn("kernel addresses are hidden (kernel.kptr_restrict); kernel frames stay unnamed\n");
}

int symbolizer__kernel_text(struct symbolizer *sy, uint64_t *text, uint64_t *etext)
{
	struct kernel_names *kn = kernel_namer(sy);

	if (kn) {
		kernel_names__text_bounds(kn, text, etext);
		return 0;
	}
	kernel_symbols(sy);
	*text = sy->ks ? ksyms__addr(sy->ks, "_text") : 0;
	*etext = sy->ks ? ksyms__addr(sy->ks, "_etext") : 0;
	return *text && *etext > *text ? 0 : -ENOENT;
}

static int name_kernel(struct symbolizer *sy, struct profile *p, struct profile_location *l)
{
	const char *module = NULL, *name;
	char dso[128];
	uint64_t off;

	kernel_symbols(sy);
	l->dso = profile__intern(p, "[kernel.kallsyms]");
	if (!l->dso)
		return -ENOMEM;
	name = sy->ks ? ksyms__lookup(sy->ks, l->addr - l->is_return, &off, &module) : NULL;
	if (!name)
		return 0;
	if (module) {
		snprintf(dso, sizeof(dso), "[%s]", module);
		l->dso = profile__intern(p, dso);
	}
	l->func = profile__intern(p, name);
	l->func_offset = off + l->is_return;
	return l->func && l->dso ? 0 : -ENOMEM;
}

/* Code without a file behind it: anonymous memory, or a memfd. */
static bool maybe_jit(const struct profile_process *pr, int32_t mapping)
{
	const char *path = mapping < 0 ? "" : pr->mappings[mapping].path;

	return path[0] != '/' ? path[0] != '[' : !strncmp(path, "/memfd:", 7);
}

/* Name l from the process's jitdump or perf map. Returns 1 when named, 0, or -ENOMEM. */
static int name_jit(struct symbolizer *sy, struct profile *p, struct profile_location *l)
{
	const struct jit_table *t;
	const char *name;
	uint64_t off;

	if (!sy->jit_cached || sy->jit_proc != l->proc) {
		sy->jit_table = jit_procs__table(sy->jit, p, l->proc);
		sy->jit_proc = l->proc;
		sy->jit_cached = true;
	}
	t = sy->jit_table;
	if (!t)
		return 0;
	name = jitdump__lookup(t, l->addr - l->is_return, &off);
	if (!name)
		return 0;
	l->func = profile__intern(p, name);
	l->dso = profile__intern(p, "[jit]");
	l->func_offset = off + l->is_return;
	l->is_jit = true;
	return l->func && l->dso ? 1 : -ENOMEM;
}

/*
 * An address of a file that no symbol covers: "DSO+0xADDR", so that distinct
 * addresses stay distinct frames in the text outputs (func stays NULL: pprof
 * gets the address and mapping and no function). 0 or -ENOMEM.
 */
static int name_addr(struct profile *p, struct profile_location *l, uint64_t addr)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "%s+0x%llx", l->dso, (unsigned long long)addr);
	l->addr_name = profile__intern(p, buf);
	return l->addr_name ? 0 : -ENOMEM;
}

/*
 * profile__intern of a string that many locations name at the same address
 * (their mapping's file name, a symbol in a loaded table): hashed and
 * compared in full once, later found by its address (clang++: 13,600
 * locations in 6-8 files, most symbols named by several). The same string,
 * interned in the same order. NULL on ENOMEM.
 */
static const char *intern_at(struct symbolizer *sy, struct profile *p, const char *s)
{
	const char *in;
	uint64_t v;

	if (u64map__get(&sy->interned, (uintptr_t)s, &v))
		return (const char *)(uintptr_t)v;
	in = profile__intern(p, s);
	if (in && u64map__put(&sy->interned, (uintptr_t)s, (uintptr_t)in))
		return NULL;
	return in;
}

static int name_in_file(struct symbolizer *sy, struct profile *p, struct profile_location *l,
			struct profile_mapping *m, struct dso_entry *d);

static int name_user(struct symbolizer *sy, struct profile *p, struct profile_location *l)
{
	struct profile_process *pr = &p->procs[l->proc];
	struct profile_mapping *m;
	struct dso_entry *d;
	const char *name;
	uint64_t off;
	int err;

	err = sym_python__name(p, l);
	if (err)
		return err < 0 ? err : 0;
	if (maybe_jit(pr, l->mapping)) {
		err = name_jit(sy, p, l);
		if (err)
			return err < 0 ? err : 0;
	}
	if (l->mapping < 0) {
		l->dso = profile__intern(p, "[unknown]");
		return l->dso ? 0 : -ENOMEM;
	}
	m = &pr->mappings[l->mapping];
	if (m->path[0] == '/') {
		d = get_dso(sy, pr->pid, m);
		return d ? name_in_file(sy, p, l, m, d) : -ENOMEM;
	}
	l->dso = intern_at(sy, p, m->path[0] ? dso_basename(m->path) : "[anon]");
	if (!l->dso)
		return -ENOMEM;
	if (!strcmp(m->path, "[vdso]") && load_vdso(sy)) {
		name = elf_symtab__lookup_offset(sy->vdso, l->addr - l->is_return - m->start, &off);
		if (!name)
			return name_addr(p, l, l->addr - l->is_return - m->start);
		l->func = intern_at(sy, p, name);
		l->func_offset = off + l->is_return;
		return l->func ? 0 : -ENOMEM;
	}
	return 0; /* anonymous or pseudo ([heap], [stack]): no file to read */
}

/*
 * Name l, a location in m, a file's mapping, from d, its file's entry (its
 * table read): its DSO, function, offset and Go line, or "DSO+0xADDR";
 * m's build-id and debug path recorded. At finalize (name_user) and in the
 * passes while sampling (symbolizer__symbolize_ahead), the same names.
 */
static int name_in_file(struct symbolizer *sy, struct profile *p, struct profile_location *l,
			struct profile_mapping *m, struct dso_entry *d)
{
	const char *name, *src_file;
	uint64_t off, file_off, vaddr;
	uint32_t line;

	l->dso = intern_at(sy, p, dso_basename(m->path));
	if (!l->dso)
		return -ENOMEM;
	if (d->build_id_len && !m->build_id_len) {
		memcpy(m->build_id, d->build_id, d->build_id_len);
		m->build_id_len = (uint8_t)d->build_id_len;
	}
	if (d->st && elf_symtab__debug_path(d->st) && !m->debug_path) {
		m->debug_path = profile__intern(p, elf_symtab__debug_path(d->st));
		if (!m->debug_path)
			return -ENOMEM;
	}
	file_off = l->addr - l->is_return - m->start + m->offset;
	if (!d->st)
		return name_addr(p, l, file_off);
	/* looked up ahead, in another thread maybe (look_ahead) */
	while (sy->at_ahead < sy->nr_ahead && sy->ahead[sy->at_ahead].loc < (size_t)(l - p->locs))
		sy->at_ahead++;
	if (sy->at_ahead < sy->nr_ahead && sy->ahead[sy->at_ahead].loc == (size_t)(l - p->locs)) {
		name = sy->ahead[sy->at_ahead].name;
		off = sy->ahead[sy->at_ahead].off;
	} else {
		name = elf_symtab__lookup_offset(d->st, file_off, &off);
	}
	if (!name) {
		/* perf's form: the ELF virtual address, where the file tells it */
		if (elf_symtab__offset_to_vaddr(d->st, file_off, &vaddr))
			vaddr = file_off;
		return name_addr(p, l, vaddr);
	}
	/* a Go binary's file:line, for pprof (sym_gopclntab.h) */
	if (!elf_symtab__lookup_line(d->st, file_off, &src_file, &line)) {
		l->src_file = profile__intern(p, src_file);
		l->line = line;
		if (!l->src_file)
			return -ENOMEM;
	}
	l->func = intern_at(sy, p, name);
	l->func_offset = off + l->is_return;
	return l->func ? 0 : -ENOMEM;
}

void symbolizer__use_debuginfod(struct symbolizer *sy, const struct debuginfod_opts *o)
{
	sy->debuginfod = true;
	if (o)
		sy->debuginfod_opts = *o;
}

/* The file behind a location of a process, when it is one. */
static const struct profile_mapping *file_mapping(const struct profile *p,
						  const struct profile_location *l)
{
	const struct profile_mapping *m;

	if (l->proc == PROFILE_KERNEL_PROC || l->proc >= p->nr_procs || l->mapping < 0 ||
	    (size_t)l->mapping >= p->procs[l->proc].nr_mappings)
		return NULL;
	m = &p->procs[l->proc].mappings[l->mapping];
	return m->path[0] == '/' && strncmp(m->path, "/memfd:", 7) ? m : NULL;
}

/*
 * The files sampled whose names stop at .dynsym (no .symtab, no local debug
 * file, no MiniDebugInfo) but that have a build-id: fetch their debug files
 * from debuginfod, all at once, and read them again with it. Each file is
 * asked for once per run. 0 or -ENOMEM.
 */
static int fetch_debuginfo(struct symbolizer *sy, struct profile *p)
{
	struct debuginfod_req *reqs = NULL;
	size_t *which = NULL; /* index into sy->dsos: get_dso may move the array */
	size_t i, n = 0, cap = 0, cap_w = 0, named = 0;
	int err = 0, got;

	for (i = 0; i < p->nr_locs; i++) {
		const struct profile_location *l = &p->locs[i];
		const struct profile_mapping *m = l->dso ? NULL : file_mapping(p, l);
		struct dso_entry *d;

		if (!m)
			continue;
		d = get_dso(sy, p->procs[l->proc].pid, m);
		if (!d) {
			err = -ENOMEM;
			goto out;
		}
		if (!d->st || d->debuginfod_tried || !d->build_id_len ||
		    elf_symtab__names_src(d->st) != ELF_NAMES_DYNSYM)
			continue;
		d->debuginfod_tried = true;
		if (array__grow((void **)&reqs, &cap, n + 1, sizeof(*reqs)) ||
		    array__grow((void **)&which, &cap_w, n + 1, sizeof(*which))) {
			err = -ENOMEM;
			goto out;
		}
		memset(&reqs[n], 0, sizeof(reqs[n]));
		memcpy(reqs[n].build_id, d->build_id, d->build_id_len);
		reqs[n].build_id_len = d->build_id_len;
		which[n++] = (size_t)(d - sy->dsos);
	}
	if (!n)
		goto out;
	for (i = 0; i < n; i++)
		reqs[i].what = sy->dsos[which[i]].path;
	got = debuginfod__fetch(reqs, n, &sy->debuginfod_opts);
	if (got < 0) {
		err = got;
		goto out;
	}
	for (i = 0; i < n; i++) {
		struct dso_entry *d = &sy->dsos[which[i]];
		struct profile_mapping m = { .path = d->path,
					     .inode = d->inode,
					     .dev_major = d->dev_major,
					     .dev_minor = d->dev_minor };
		struct elf_symtab *st;

		if (!reqs[i].path) {
			if (reqs[i].err == -ETIME)
				pr_warn("debuginfod: no answer for '%s' within the %u ms deadline; its functions stay DSO+0xADDR "
					"(fetch it into the cache once with 'debuginfod-find debuginfo %s')\n",
					d->path,
					sy->debuginfod_opts.deadline_ms ?
						sy->debuginfod_opts.deadline_ms :
						DEBUGINFOD_DEADLINE_MS,
					d->path);
			else if (reqs[i].err != -ENOENT)
				pr_warn("debuginfod: '%s': %s\n", d->path, strerror(-reqs[i].err));
			else
				pr_info("debuginfod: no debug file for '%s' on the servers\n",
					d->path);
			continue;
		}
		st = open_elf(sy, d->pid, &m, reqs[i].path);
		if (st && elf_symtab__names_src(st) == ELF_NAMES_DEBUG_FILE) {
			elf_symtab__free(d->st);
			d->st = st;
			named++;
		} else {
			/* refused (warned by the reader): keep what the file had */
			elf_symtab__free(st);
		}
	}
	pr_info("debuginfod: %zu of %zu debug files fetched and used\n", named, n);
out:
	for (i = 0; i < n; i++)
		free(reqs[i].path);
	free(reqs);
	free(which);
	return err;
}

void symbolizer__set_demangle(struct symbolizer *sy, bool on)
{
	sy->no_demangle = !on;
}

/* Distinct symbols at least this many: their demangling is split over two threads */
#define DEMANGLE_SPLIT_MIN 512

/* Demangling syms[from, to): each one's text in text, at off[i] (SIZE_MAX: none) */
struct demangle_part {
	const char *const *syms;
	size_t *off;
	size_t from, to;
	struct buf text; /* owned: the demangled names, NUL-terminated, end to end */
};

static void *demangle_part(void *arg)
{
	struct demangle_part *d = arg;
	char buf[DEMANGLE_MAX];

	for (size_t i = d->from; i < d->to && !d->text.err; i++) {
		size_t n = demangle(d->syms[i], buf, sizeof(buf));

		d->off[i] = n ? d->text.len : SIZE_MAX;
		if (n)
			buf__put_bytes(&d->text, buf, n + 1);
	}
	return NULL;
}

/*
 * symbolizer__demangle_names over the locations which[0..n) (which NULL:
 * every location, n p->nr_locs), the demangling split over two threads
 * from DEMANGLE_SPLIT_MIN symbols when split. done, when not NULL: the
 * symbols of p demangled before (interned symbol -> its interned
 * demangled form, 0 for none), taken from there and added to.
 */
static int demangle_locs(struct profile *p, const uint32_t *which, size_t n, bool split,
			 struct u64map *done)
{
	/* interned symbol -> its index in syms + 1: each distinct symbol demangled once */
	struct u64map first = { 0 };
	const char **syms = NULL, **named = NULL;
	size_t *off = NULL, nr = 0, cap = 0, i;
	struct demangle_part part[2] = { 0 };
	pthread_t thread;
	bool threaded = false;
	uint64_t idx;
	int err = 0;

	/* the distinct symbols, in the locations' order */
	for (i = 0; i < n && !err; i++) {
		const struct profile_location *l = &p->locs[which ? which[i] : i];

		if (!l->func || l->sys_func || l->src_func ||
		    u64map__get(&first, (uintptr_t)l->func, &idx) ||
		    (done && u64map__get(done, (uintptr_t)l->func, &idx)))
			continue;
		err = array__grow((void **)&syms, &cap, nr + 1, sizeof(*syms));
		if (!err) {
			syms[nr++] = l->func;
			err = u64map__put(&first, (uintptr_t)l->func, nr);
		}
	}
	off = err ? NULL : malloc((nr ? nr : 1) * sizeof(*off));
	named = off ? calloc(nr ? nr : 1, sizeof(*named)) : NULL;
	if (!named) {
		err = -ENOMEM;
		goto out;
	}
	/*
	 * Demangled in two halves, the second in a thread of its own:
	 * libiberty's callbacks keep no state, and finalize's other CPU is
	 * idle while this one symbolizes (docs/BENCHMARKS.md)
	 */
	part[0] = (struct demangle_part){ .syms = syms, .off = off, .to = nr / 2 };
	part[1] = (struct demangle_part){ .syms = syms, .off = off, .from = nr / 2, .to = nr };
	if (split && nr >= DEMANGLE_SPLIT_MIN)
		threaded = !pthread_create(&thread, NULL, demangle_part, &part[1]);
	demangle_part(&part[0]);
	if (threaded)
		pthread_join(thread, NULL);
	else
		demangle_part(&part[1]);
	err = part[0].text.err ?: part[1].text.err;
	/* interned in the locations' order, as when each was demangled at its first location */
	for (i = 0; i < n && !err; i++) {
		struct profile_location *l = &p->locs[which ? which[i] : i];
		const struct demangle_part *d;
		size_t k;

		if (!l->func || l->sys_func || l->src_func)
			continue;
		if (!u64map__get(&first, (uintptr_t)l->func, &idx)) {
			/* demangled by an earlier call */
			if (done && u64map__get(done, (uintptr_t)l->func, &idx) && idx) {
				l->sys_func = l->func;
				l->func = (const char *)(uintptr_t)idx;
			}
			continue;
		}
		k = (size_t)idx - 1;
		d = &part[k >= part[1].from];
		if (d->off[k] == SIZE_MAX)
			continue;
		if (!named[k] &&
		    !(named[k] = profile__intern(p, (char *)d->text.data + d->off[k]))) {
			err = -ENOMEM;
			break;
		}
		l->sys_func = l->func;
		l->func = named[k];
	}
	for (i = 0; done && i < nr && !err; i++)
		err = u64map__put(done, (uintptr_t)syms[i], (uintptr_t)named[i]);
out:
	buf__free(&part[0].text);
	buf__free(&part[1].text);
	free(syms);
	free(off);
	free(named);
	u64map__free(&first);
	return err;
}

int symbolizer__demangle_names(struct profile *p)
{
	return demangle_locs(p, NULL, p->nr_locs, true, NULL);
}

/* Locations at least this many: their files' tables read and their symbols looked up over two threads */
#define AHEAD_SPLIT_MIN 512

/* One thread's share of look_ahead: the files of its bin */
struct ahead_part {
	struct symbolizer *sy;
	const uint8_t *bin; /* per entry of sy->dsos: the part that reads it */
	uint8_t which;
	uint64_t load_ns;
	size_t nr_loaded;
};

static void *ahead_part(void *arg)
{
	struct ahead_part *a = arg;
	struct symbolizer *sy = a->sy;

	for (size_t k = 0; k < sy->nr_ahead; k++) {
		struct ahead *h = &sy->ahead[k];
		struct dso_entry *d = &sy->dsos[h->dso];

		if (a->bin[h->dso] != a->which)
			continue;
		if (!d->loaded) {
			a->load_ns += load_dso(sy, d);
			a->nr_loaded++;
		}
		/* a table is read and searched by one thread only: its lazy index and names are its own */
		h->name = d->st ? elf_symtab__lookup_offset(d->st, h->file_off, &h->off) : NULL;
	}
	return NULL;
}

/*
 * The symbols of the locations in files, looked up before the naming loop,
 * over two threads (finalize's other CPU is idle while this one
 * symbolizes; docs/BENCHMARKS.md): each file's table, read and searched
 * in one of them, the files shared out by their locations. The naming loop
 * (name_user) takes the answers in the locations' order and interns them
 * as before: the same names, the same order. 0 or -ENOMEM.
 */
static int look_ahead(struct symbolizer *sy, const struct profile *p)
{
	const struct profile_mapping *last = NULL;
	struct ahead_part part[2] = { { .sy = sy, .which = 0 }, { .sy = sy, .which = 1 } };
	size_t i, cap = 0, d = 0, *count = NULL, load[2] = { 0 };
	uint8_t *bin = NULL;
	pthread_t thread;
	bool threaded = false;

	sy->nr_ahead = sy->at_ahead = 0;
	if (p->nr_locs < AHEAD_SPLIT_MIN)
		return 0;
	for (i = 0; i < p->nr_locs; i++) {
		const struct profile_location *l = &p->locs[i];
		const struct profile_mapping *m = l->dso ? NULL : file_mapping(p, l);

		if (!m)
			continue;
		if (m != last) {
			struct dso_entry *e = dso_entry_of(sy, p->procs[l->proc].pid, m);

			if (!e)
				return -ENOMEM;
			d = (size_t)(e - sy->dsos);
			last = m;
		}
		if (array__grow((void **)&sy->ahead, &cap, sy->nr_ahead + 1, sizeof(*sy->ahead)))
			return -ENOMEM;
		sy->ahead[sy->nr_ahead++] =
			(struct ahead){ .loc = i,
					.dso = d,
					.file_off = l->addr - l->is_return - m->start + m->offset };
	}
	count = calloc(sy->nr_dsos ? sy->nr_dsos : 1, sizeof(*count));
	bin = calloc(sy->nr_dsos ? sy->nr_dsos : 1, sizeof(*bin));
	if (!count || !bin) {
		free(count);
		free(bin);
		return -ENOMEM;
	}
	/* the files by their locations, largest first, each to the lighter part */
	for (i = 0; i < sy->nr_ahead; i++)
		count[sy->ahead[i].dso]++;
	for (;;) {
		size_t most = 0, k = SIZE_MAX;

		for (i = 0; i < sy->nr_dsos; i++)
			if (count[i] > most)
				most = count[k = i];
		if (k == SIZE_MAX)
			break;
		bin[k] = load[1] < load[0];
		load[bin[k]] += most;
		count[k] = 0;
	}
	part[0].bin = part[1].bin = bin;
	if (sy->nr_ahead >= AHEAD_SPLIT_MIN)
		threaded = !pthread_create(&thread, NULL, ahead_part, &part[1]);
	ahead_part(&part[0]);
	if (threaded)
		pthread_join(thread, NULL);
	else
		ahead_part(&part[1]);
	sy->load_ns += part[0].load_ns + part[1].load_ns;
	sy->nr_loaded += part[0].nr_loaded + part[1].nr_loaded;
	free(count);
	free(bin);
	return 0;
}

/*
 * The entry of m's file when its table is read already, else NULL (no
 * table is read here, nor an entry made)
 */
static struct dso_entry *dso_loaded(struct symbolizer *sy, const struct profile_mapping *m)
{
	for (size_t i = sy->nr_dsos; i-- > 0;) {
		struct dso_entry *d = &sy->dsos[i];

		if (d->inode == m->inode && d->dev_major == m->dev_major &&
		    d->dev_minor == m->dev_minor && !strcmp(d->path, m->path))
			return d->loaded ? d : NULL;
	}
	return NULL;
}

/*
 * Whether a pass may name l, and from which table: a user location in a
 * file's executable mapping (not JIT code, nor the Python or JavaScript
 * region: their names come from files and memory read at the end), whose
 * table is read and is not one that debuginfod may replace at the end
 * (.dynsym names and a build-id: fetch_debuginfo), unless it will not be
 * asked (symbolizer__expect_debuginfod). NULL: left to
 * finalize; *wait then says whether the preload may still bring its
 * table (pending: it has files queued it has not read). *mp: l's
 * mapping; *last_m and *last_d: the last mapping asked about and its entry.
 */
static struct dso_entry *ahead_entry(struct symbolizer *sy, struct profile *p,
				     const struct profile_location *l, bool pending,
				     struct profile_mapping **mp,
				     const struct profile_mapping **last_m,
				     struct dso_entry **last_d, bool *wait)
{
	const struct profile_process *pr;
	uint64_t look = l->addr - l->is_return;
	struct profile_mapping *m;
	struct dso_entry *d;

	*wait = false;
	if (l->proc == PROFILE_KERNEL_PROC || l->proc >= p->nr_procs || l->mapping < 0)
		return NULL;
	pr = &p->procs[l->proc];
	if (pr->py_start && look >= pr->py_start && look < pr->py_start + PROFILE_PY_REGION_SIZE)
		return NULL;
	m = &p->procs[l->proc].mappings[l->mapping];
	if (m->path[0] != '/' || maybe_jit(pr, l->mapping))
		return NULL;
	/* a mapping's locations come in runs */
	d = m == *last_m ? *last_d : dso_loaded(sy, m);
	*last_m = m;
	*last_d = d;
	if (!d || !d->st) {
		/* a table read later by the preload; else left to finalize's reading */
		*wait = !d && pending;
		return NULL;
	}
	if (!sy->no_debuginfod_later && d->build_id_len &&
	    elf_symtab__names_src(d->st) == ELF_NAMES_DYNSYM)
		return NULL;
	*mp = m;
	return d;
}

/*
 * Processes whose mappings changed since their locations were resolved
 * (maps_gen): those locations made again (profile__reset_locs), those
 * whose mapping changed to be named from the mappings of now.
 */
static void reset_moved(struct symbolizer *sy, struct profile *p)
{
	size_t n = sy->run.nr_gen < p->nr_procs ? sy->run.nr_gen : p->nr_procs, i, first, nr;

	for (i = 0; i < n && p->procs[i].maps_gen == sy->run.maps_gen[i]; i++)
		;
	if (i == n)
		return;
	first = profile__reset_locs(p, sy->run.maps_gen, n, &nr);
	if (first < sy->run.from)
		sy->run.from = first;
	sy->run.nr_reset += nr;
}

/* Each process's maps_gen, as its locations are resolved now. 0 or -ENOMEM. */
static int note_gens(struct symbolizer *sy, const struct profile *p)
{
	if (array__grow((void **)&sy->run.maps_gen, &sy->run.cap_gen, p->nr_procs,
			sizeof(*sy->run.maps_gen)))
		return -ENOMEM;
	for (size_t i = 0; i < p->nr_procs; i++)
		sy->run.maps_gen[i] = p->procs[i].maps_gen;
	sy->run.nr_gen = p->nr_procs;
	return 0;
}

int symbolizer__symbolize_ahead(struct symbolizer *sy, struct profile *p)
{
	const struct profile_mapping *last_m = NULL;
	struct dso_entry *last_d = NULL;
	uint64_t t0 = thread_ns(), t1, t2;
	size_t i, wait_from = SIZE_MAX, nr = 0, queued = 0, tried = 0;
	int err = 0;

	if (sy->run.p != p) {
		run_reset(sy);
		sy->run.p = p;
	}
	/*
	 * The tables still to come (asked first: every file tried by then is
	 * taken below), files not queued by now being read at the end; then
	 * the tables the preload has read so far, their entries' from here
	 */
	if (sy->preload)
		sym_preload__progress(sy->preload, &queued, &tried);
	if (sy->preload)
		for (struct sym_preload_file *f = sym_preload__take_read(sy->preload); f && !err;
		     f = f->next_read)
			err = adopt_preloaded(sy, f);
	if (!err)
		reset_moved(sy, p);
	if (!err)
		err = profile__resolve_locs(p);
	if (!err)
		err = note_gens(sy, p);
	t1 = thread_ns();
	for (i = sy->run.from; i < p->nr_locs && !err; i++) {
		struct profile_location *l = &p->locs[i];
		struct profile_mapping *m;
		struct dso_entry *d;
		bool wait;

		if (l->dso)
			continue;
		d = ahead_entry(sy, p, l, tried < queued, &m, &last_m, &last_d, &wait);
		if (!d) {
			if (wait && wait_from == SIZE_MAX)
				wait_from = i;
			continue;
		}
		err = array__grow((void **)&sy->run.named, &sy->run.cap_named, nr + 1,
				  sizeof(*sy->run.named));
		if (err)
			break;
		err = name_in_file(sy, p, l, m, d);
		/* in use by the profile symbolized next (expire) */
		d->gen = sy->gen + 1;
		sy->run.named[nr++] = (uint32_t)i;
	}
	if (!err)
		sy->run.from = wait_from < p->nr_locs ? wait_from : p->nr_locs;
	t2 = thread_ns();
	if (!err && !sy->no_demangle)
		err = demangle_locs(p, sy->run.named, nr, false, &sy->run.demangled);
	sy->run.nr_passes++;
	sy->run.nr_named += nr;
	sy->run.resolve_ns += t1 - t0;
	sy->run.demangle_ns += thread_ns() - t2;
	sy->run.cpu_ns += thread_ns() - t0;
	return err;
}

void symbolizer__expect_debuginfod(struct symbolizer *sy, bool maybe)
{
	sy->no_debuginfod_later = !maybe;
}

void symbolizer__forget_profile(struct symbolizer *sy, const struct profile *p)
{
	if (sy && sy->run.p == p)
		run_reset(sy);
}

int symbolizer__symbolize(struct symbolizer *sy, struct profile *p)
{
	uint64_t t0 = thread_ns(), t1, t2, t3, load0 = sy->load_ns, nr0 = sy->nr_loaded;
	size_t i, nr_unnamed = 0;
	int err = 0;

	u64map__free(&sy->interned); /* the passes' */
	/* named by the passes while sampling: those whose mappings have changed since, again */
	if (sy->run.p == p)
		reset_moved(sy, p);
	err = profile__resolve_locs(p);
	if (!err)
		err = take_preloaded(sy);
	if (err)
		return err;
	if (sy->debuginfod && debuginfod__enabled()) {
		err = fetch_debuginfo(sy, p);
		if (err)
			return err;
	}
	jit_procs__reload(sy->jit); /* JIT files grew since the last profile */
	sy->jit_cached = false;
	expire(sy);
	sy->gen++; /* what this profile uses, and what the next one pins */
	t1 = thread_ns();
	err = kernel_symbols_of(sy, p);
	if (err)
		return err;
	t2 = thread_ns();
	err = look_ahead(sy, p);
	for (i = 0; i < p->nr_locs && !err; i++) {
		struct profile_location *l = &p->locs[i];

		if (l->dso)
			continue;
		nr_unnamed++;
		err = l->proc == PROFILE_KERNEL_PROC ? name_kernel(sy, p, l) : name_user(sy, p, l);
	}
	free(sy->ahead);
	sy->ahead = NULL;
	sy->nr_ahead = sy->at_ahead = 0;
	u64map__free(&sy->interned);
	if (err)
		return err;
	t3 = thread_ns();
	err = sy->no_demangle ? 0 :
				demangle_locs(p, NULL, p->nr_locs, true,
					      sy->run.p == p ? &sy->run.demangled : NULL);
	/* where symbolizing's time goes (bench/finalize.sh, docs/BENCHMARKS.md) */
	pr_debug("symbolizing: CPU ms: %.1f locations and JIT files, %.1f kernel symbols, %.1f naming "
		 "%zu locations (of it %.1f loading %zu symbol tables), %.1f demangling\n",
		 (double)(t1 - t0) / 1e6, (double)(t2 - t1) / 1e6, (double)(t3 - t2) / 1e6,
		 p->nr_locs, (double)(sy->load_ns - load0) / 1e6, sy->nr_loaded - nr0,
		 (double)(thread_ns() - t3) / 1e6);
	if (sy->preload_ns)
		pr_debug("symbolizing: %zu symbol tables read while sampling, in %.1f ms of CPU\n",
			 sy->nr_preloaded, (double)sy->preload_ns / 1e6);
	sy->preload_ns = 0;
	if (sy->run.p == p)
		pr_debug("symbolizing: %zu of %zu locations named by %zu passes while sampling, in "
			 "%.1f ms of CPU (%.1f locations, %.1f demangling; %zu named again, their "
			 "mappings changed); %zu named here\n",
			 p->nr_locs - nr_unnamed, p->nr_locs, sy->run.nr_passes,
			 (double)sy->run.cpu_ns / 1e6, (double)sy->run.resolve_ns / 1e6,
			 (double)sy->run.demangle_ns / 1e6, sy->run.nr_reset, nr_unnamed);
	run_reset(sy);
	return err;
}

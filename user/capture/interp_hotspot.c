// SPDX-License-Identifier: MIT
/*
 * HotSpot behind the interpreter interface (include/interp.h,
 * include/interp_hotspot.h): a process's libjvm.so found among the
 * mappings the process table read, its gHotSpotVM* symbols looked up in
 * the file opened inside the process's root (proc_file.h, sym_elf.h), and
 * its vmStructs tables read from /proc/PID/mem (hotspot_vmstructs.h), once
 * per libjvm load address and process. As the OpenTelemetry eBPF profiler's
 * hotspot Loader does, a JVM caught before libjvm's initialisers ran (zero
 * strides, no table) is tried again at later reads of its maps.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "array.h"
#include "interp.h"
#include "interp_hotspot.h"
#include "hotspot_names.h"
#include "lib_hashmap.h"
#include "log.h"
#include "proc_file.h"
#include "sym_elf.h"

#define LIBJVM_MAX_SIZE (512ull << 20)
#define READ_TRIES 20 /* reads of a starting JVM's tables before it is given up */
#define RETRY_NS (50ull * 1000 * 1000)

/* A Java method as named: its function block in the profile's region */
struct hs_meth {
	uint64_t addr; /* Method* */
	uint32_t check; /* ConstMethod* >> 3 as BPF saw it; 0 not known */
	bool bad; /* unreadable or not a method */
	uint64_t code; /* its bytecodes' address (ConstMethod* + its size) */
	uint32_t code_size; /* their bytes */
	char *name, *file; /* "pkg.Class.method(int)", "Class.java" */
	struct hotspot_line *lines;
	uint32_t nr_lines;
	int32_t first, last; /* line range of its block */
	uint64_t block, gen; /* its block's start in the region, and the generation it is of */
};

/* Frames that stand for what could not be named */
enum hs_mark {
	HS_MARK_UNKNOWN, /* a Java frame whose method could not be read */
	HS_MARK_FULL, /* the region is full */
	HS_MARK_NR,
};
static const char *const hs_mark_names[HS_MARK_NR] = {
	"[unknown Java frame]",
	"[Java frames: no room left]",
};

#define MAX_METHODS 65536 /* a JVM's cache starts over past this */

struct jvm {
	uint32_t pid;
	uint32_t start; /* proc_ident__start's: a reused pid is another process */
	uint64_t base; /* libjvm.so's mapping of offset 0: its load address, 0 none */
	bool done; /* read, or given up (warned) */
	bool failed; /* given up */
	uint32_t tries, heap_tries;
	uint64_t retry_ns;
	struct hotspot_vm vm;
	/* the code cache's heaps: none until the VM has set them up (read again at later finds) */
	struct hotspot_heap heaps[HS_MAX_HEAPS];
	int nr_heaps;
	uint32_t stat; /* its entry in the summary's list + 1, 0 none */
	bool attached; /* its layout is in BPF (or could not be: warned) */
	bool gone; /* the process exited: names from the caches only */
	bool walked; /* the BPF walk has its layout: its samples may have Java frames */
	int mem_fd; /* its /proc/PID/mem, open while frames are named; -1 none */
	/* names: Method* -> methods[], (kind, address, offset, check) -> frame addresses */
	struct u64map method_idx;
	struct hs_meth *methods;
	size_t nr_methods, cap_methods;
	struct u64map frame_idx; /* -> index + 1 into runs */
	uint64_t *runs; /* a frame's addresses: a count, then that many */
	size_t nr_runs, cap_runs;
	uint64_t gen; /* the profile generation its blocks and frames belong to */
	uint64_t marks[HS_MARK_NR];
};

struct interp_hs {
	struct interp_env env;
	uint64_t gen; /* bumped at each new profile (interval) */
	const struct profile *gen_p;
	uint64_t gen_start;
	struct u64map by_pid; /* pid + 1 -> index + 1 into jvms */
	struct jvm *jvms;
	size_t nr_jvms, cap_jvms;
	struct hotspot_stats st;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int hs_new(const struct interp_env *env, void **state)
{
	struct interp_hs *hs = calloc(1, sizeof(*hs));

	if (!hs)
		return -ENOMEM;
	hs->env = *env;
	*state = hs;
	return 0;
}

/* j's names and frames, all of them (a new JVM behind its pid, or the end) */
static void caches_free(struct jvm *j)
{
	for (size_t i = 0; i < j->nr_methods; i++) {
		free(j->methods[i].name);
		free(j->methods[i].file);
		free(j->methods[i].lines);
	}
	free(j->methods);
	free(j->runs);
	u64map__free(&j->method_idx);
	u64map__free(&j->frame_idx);
	j->methods = NULL;
	j->runs = NULL;
	j->nr_methods = j->cap_methods = j->nr_runs = j->cap_runs = 0;
	memset(&j->method_idx, 0, sizeof(j->method_idx));
	memset(&j->frame_idx, 0, sizeof(j->frame_idx));
	memset(j->marks, 0, sizeof(j->marks));
	if (j->mem_fd >= 0)
		close(j->mem_fd);
	j->mem_fd = -1;
}

static void hs_free(void *state)
{
	struct interp_hs *hs = state;

	if (!hs)
		return;
	for (size_t i = 0; i < hs->nr_jvms; i++)
		caches_free(&hs->jvms[i]);
	u64map__free(&hs->by_pid);
	free(hs->jvms);
	free(hs);
}

static struct jvm *find_jvm(struct interp_hs *hs, uint32_t pid)
{
	uint64_t idx;

	return u64map__get(&hs->by_pid, (uint64_t)pid + 1, &idx) ? &hs->jvms[idx - 1] : NULL;
}

static struct jvm *get_jvm(struct interp_hs *hs, uint32_t pid)
{
	struct jvm *j = find_jvm(hs, pid);

	if (j)
		return j;
	if (array__grow((void **)&hs->jvms, &hs->cap_jvms, hs->nr_jvms + 1, sizeof(*hs->jvms)) ||
	    u64map__put(&hs->by_pid, (uint64_t)pid + 1, hs->nr_jvms + 1))
		return NULL;
	j = &hs->jvms[hs->nr_jvms++];
	memset(j, 0, sizeof(*j));
	j->pid = pid;
	j->mem_fd = -1;
	return j;
}

/* basename "libjvm.so" */
static bool is_libjvm(const char *path)
{
	const char *base = strrchr(path, '/');

	return base && !strcmp(base + 1, "libjvm.so");
}

struct mem {
	int fd;
};

static int mem_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct mem *m = ctx;
	ssize_t n;

	if (addr > INT64_MAX - len)
		return -EFAULT;
	n = pread(m->fd, buf, len, (off_t)addr);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

/* The JVM's summary entry: filled at its first outcome, the first HOTSPOT_STATS_JVMS JVMs */
/* j's heaps into its summary entry */
static void note_heaps(struct interp_hs *hs, const struct jvm *j)
{
	struct hotspot_jvm_stat *js;

	if (!j->stat)
		return;
	js = &hs->st.jvm[j->stat - 1];
	js->nr_heaps = (uint32_t)j->nr_heaps;
	for (int i = 0; i < j->nr_heaps && i < HOTSPOT_STATS_HEAPS; i++) {
		js->heap_low[i] = j->heaps[i].low;
		js->heap_high[i] = j->heaps[i].high;
	}
}

static void note(struct interp_hs *hs, struct jvm *j, const struct profile_process *pr, int err,
		 const char *why)
{
	struct hotspot_jvm_stat *js;

	if (err)
		hs->st.nr_unsupported++;
	else
		hs->st.nr_jvms++;
	if (hs->st.nr_listed == HOTSPOT_STATS_JVMS)
		return;
	js = &hs->st.jvm[hs->st.nr_listed++];
	j->stat = hs->st.nr_listed;
	memset(js, 0, sizeof(*js));
	js->pid = j->pid;
	snprintf(js->comm, sizeof(js->comm), "%s", pr->comm);
	js->err = err;
	js->why = why;
	memcpy(js->release, j->vm.release, sizeof(js->release));
	js->nr_structs = j->vm.nr_structs;
	js->nr_fields = j->vm.nr_fields;
	js->nr_types = j->vm.nr_types;
	js->nr_sizes = j->vm.nr_sizes;
	js->nr_ints = j->vm.nr_ints;
	js->nr_longs = j->vm.nr_longs;
	js->nr_consts = j->vm.nr_consts;
	js->code_low = j->vm.code_low;
	js->code_high = j->vm.code_high;
	note_heaps(hs, j);
}

/* <proc_dir>/<pid>/mem read-only, or -errno with *why */
static int open_mem(const struct interp_hs *hs, uint32_t pid, const char **why)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%u/mem", hs->env.proc_dir, pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		*why = "its memory cannot be opened";
		return -errno;
	}
	return fd;
}

/*
 * Read the tables of j's libjvm (path, mapped at j->base). Returns 0,
 * -EAGAIN (not initialised yet: try again), or another -errno with *why.
 */
static int read_tables(struct interp_hs *hs, struct jvm *j, const char *path, const char **why)
{
	uint64_t vals[HS_SYM_NR], sym[HS_SYM_NR];
	char root[PATH_MAX];
	struct mem m;
	int64_t delta = 0;
	int fd, err;

	snprintf(root, sizeof(root), "%s/%u/root", hs->env.proc_dir, j->pid);
	fd = proc_file__open_in(root, path, NULL, LIBJVM_MAX_SIZE);
	if (fd < 0) {
		*why = "libjvm.so cannot be opened in its root";
		return fd;
	}
	err = elf__dynsym_values(fd, path, hotspot_sym_names, HS_SYM_NR, vals, 0, &delta);
	close(fd);
	if (err) {
		*why = "libjvm.so is no ELF file with a .dynsym";
		return err;
	}
	for (unsigned i = 0; i < HS_SYM_NR; i++) {
		if (!vals[i]) {
			*why = "libjvm.so exports no gHotSpotVM* tables";
			return -ENOTSUP;
		}
		sym[i] = j->base + vals[i] - (uint64_t)delta;
	}
	m.fd = open_mem(hs, j->pid, why);
	if (m.fd < 0)
		return m.fd;
	err = hotspot_vmstructs__read(sym, mem_read, &m, &j->vm, why);
	close(m.fd);
	return err;
}

/*
 * The code cache's heaps of j (its tables read), into j->heaps. Returns
 * their number (0: not set up yet), or -errno with *why.
 */
static int read_heaps(struct interp_hs *hs, struct jvm *j, const char **why)
{
	struct mem m;
	int n;

	m.fd = open_mem(hs, j->pid, why);
	if (m.fd < 0)
		return m.fd;
	n = hotspot_vmstructs__heaps(&j->vm, mem_read, &m, j->heaps, HS_MAX_HEAPS, why);
	close(m.fd);
	j->nr_heaps = n > 0 ? n : 0;
	return n;
}

/* j's heaps for -v: " (low-high, 2^7-byte segments), ..." into buf */
static const char *heaps_str(const struct jvm *j, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int i = 0; i < j->nr_heaps && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "%s%llx-%llx", i ? ", " : "",
				      (unsigned long long)j->heaps[i].low,
				      (unsigned long long)j->heaps[i].high);
	return buf;
}

/* -v: the JVM found, what its tables gave; -vv: every field, heap and size */
static void log_found(const struct jvm *j, const struct profile_process *pr, const char *path)
{
	char heaps[HS_MAX_HEAPS * 40];

	pr_info("java: pid %u (%s): found HotSpot %s (%u.%u.%u+%u) in '%s': offsets read "
		"(%u structs fields, %u of them used; %u types, %u ints, %u longs), code cache "
		"%llx-%llx, %d code heaps%s%s\n",
		pr->pid, pr->comm, j->vm.release, j->vm.major, j->vm.minor, j->vm.security,
		j->vm.build, path, j->vm.nr_structs, j->vm.nr_fields, j->vm.nr_types, j->vm.nr_ints,
		j->vm.nr_longs, (unsigned long long)j->vm.code_low,
		(unsigned long long)j->vm.code_high, j->nr_heaps, j->nr_heaps ? ": " : "",
		heaps_str(j, heaps, sizeof(heaps)));
	for (unsigned f = 0; f < HS_FIELD_NR && log_verbosity >= LOG_DEBUG; f++) {
		char name[2 * HS_MAX_NAME];

		if (!hotspot_vm__has(&j->vm, f))
			continue;
		hotspot_field__name(&j->vm, f, name, sizeof(name));
		if (f < HS_F_CODEBLOB_NAME) /* the statics: an address */
			pr_debug("java: pid %u: field %s at 0x%llx\n", pr->pid, name,
				 (unsigned long long)j->vm.field[f]);
		else
			pr_debug("java: pid %u: field %s offset %llu\n", pr->pid, name,
				 (unsigned long long)j->vm.field[f]);
	}
	for (int h = 0; h < j->nr_heaps; h++)
		pr_debug(
			"java: pid %u: code heap %llx-%llx, segment map at %llx, %u-byte segments\n",
			pr->pid, (unsigned long long)j->heaps[h].low,
			(unsigned long long)j->heaps[h].high,
			(unsigned long long)j->heaps[h].segmap, 1u << j->heaps[h].log2_segment);
	for (unsigned t = 0; t < HS_TYPE_NR && log_verbosity >= LOG_DEBUG; t++)
		if (j->vm.size[t])
			pr_debug("java: pid %u: type %s size %u\n", pr->pid, hotspot_type__name(t),
				 j->vm.size[t]);
}

/*
 * The BPF walk's layout of j (struct bpfprof_hotspot_proc) from its tables
 * and heaps. Returns 0, or -ENOTSUP with *why when an offset the walk reads
 * is missing or lies past the bytes it reads of a CodeBlob.
 */
static int bpf_layout(const struct jvm *j, struct bpfprof_hotspot_proc *out, const char **why)
{
	static const enum hotspot_field blob_fields[] = {
		HS_F_CODEBLOB_NAME,	    HS_F_CODEBLOB_FRAME_COMPLETE, HS_F_CODEBLOB_FRAME_SIZE,
		HS_F_CODEBLOB_CODE_BEGIN,   HS_F_NMETHOD_COMPILE_ID,	  HS_F_NMETHOD_ORIG_PC,
		HS_F_NMETHOD_DEOPT_HANDLER, HS_F_CODEBLOB_SIZE,
	};
	const struct hotspot_vm *vm = &j->vm;
	uint16_t off[8];

	memset(out, 0, sizeof(*out));
	for (size_t k = 0; k < sizeof(blob_fields) / sizeof(blob_fields[0]); k++) {
		if (!hotspot_vm__has(vm, blob_fields[k]) ||
		    vm->field[blob_fields[k]] > BPFPROF_HS_BLOB_READ - 8) {
			*why = "a CodeBlob field the walk reads is missing or too far";
			return -ENOTSUP;
		}
		off[k] = (uint16_t)vm->field[blob_fields[k]];
	}
	if (!vm->size[HS_T_CONSTMETHOD] || vm->size[HS_T_HEAPBLOCK] > 64 ||
	    vm->field[HS_F_METHOD_CONSTMETHOD] > 4096) {
		*why = "ConstMethod's or HeapBlock's size is missing or absurd";
		return -ENOTSUP;
	}
	out->code_low = vm->code_low;
	out->code_high = vm->code_high;
	for (int h = 0; h < j->nr_heaps && h < BPFPROF_HS_HEAPS; h++) {
		out->heap[h].low = j->heaps[h].low;
		out->heap[h].high = j->heaps[h].high;
		out->heap[h].segmap = j->heaps[h].segmap;
		out->heap[h].log2_segment = j->heaps[h].log2_segment;
		out->nr_heaps++;
	}
	out->heapblock_size = (uint16_t)vm->size[HS_T_HEAPBLOCK];
	out->blob_name = off[0];
	out->blob_frame_complete = off[1];
	out->blob_frame_size = off[2];
	out->blob_code_begin = off[3];
	out->nm_compile_id = off[4];
	out->nm_orig_pc = off[5];
	out->nm_deopt = off[6];
	out->blob_size = off[7];
	out->code_offsets = vm->code_offsets;
	/* _deopt_handler_begin (JDK <= 22) is a pointer; the others are int offsets */
	out->deopt_offsets = (vm->field_alt[HS_F_NMETHOD_DEOPT_HANDLER] & 15) != 2;
	return 0;
}

/* Hand the BPF walk j's layout, once its heaps are known (-v says so, or why not) */
static void attach(struct interp_hs *hs, struct jvm *j, const struct profile_process *pr)
{
	struct bpfprof_hotspot_proc cfg;
	const char *why = NULL;
	int err;

	if (j->attached || !j->nr_heaps || !hs->env.attach)
		return;
	err = bpf_layout(j, &cfg, &why);
	if (!err)
		err = hs->env.attach(hs->env.attach_ctx, INTERP_HOTSPOT, j->pid, &cfg);
	if (err == -EOPNOTSUPP) {
		pr_info("java: pid %u (%s): Java frames not walked: this kernel's BPF build "
			"(legacy, without bpf_loop) has no room for HotSpot's step\n",
			pr->pid, pr->comm);
		j->attached = true;
		return;
	}
	if (err) {
		pr_warn("java: pid %u (%s): Java frames not walked: %s\n", pr->pid, pr->comm,
			why ? why : strerror(-err));
		j->attached = true; /* warned once */
		return;
	}
	j->attached = true;
	j->walked = true;
	hs->st.attached++;
	pr_info("java: pid %u (%s): Java frames walked in BPF\n", pr->pid, pr->comm);
}

static int find_jvm_of(struct interp_hs *hs, struct profile *p, uint32_t proc)
{
	const struct profile_process *pr = &p->procs[proc];
	const struct profile_mapping *lib = NULL;
	const char *why = NULL;
	struct jvm *j;
	uint32_t start = 0;
	uint64_t t0;
	char msg[160], heaps[HS_MAX_HEAPS * 40];
	int err, n;

	for (size_t i = 0; i < pr->nr_mappings && !lib; i++)
		if (!pr->mappings[i].offset && pr->mappings[i].path[0] == '/' &&
		    is_libjvm(pr->mappings[i].path))
			lib = &pr->mappings[i];
	j = find_jvm(hs, pr->pid);
	if (!lib) {
		if (j) /* an exec into something else */
			j->base = 0, j->done = false;
		return 0;
	}
	proc_ident__start(hs->env.proc_dir, pr->pid, &start);
	if (!j && !(j = get_jvm(hs, pr->pid)))
		return -ENOMEM;
	if (j->base != lib->start || j->start != start) {
		/* a new JVM behind this pid: first sight, exec, reused pid */
		memset(&j->vm, 0, sizeof(j->vm));
		j->base = lib->start;
		j->start = start;
		j->done = j->failed = false;
		j->tries = j->heap_tries = 0;
		j->retry_ns = 0;
		j->gone = false;
		j->nr_heaps = 0;
		j->stat = 0;
		if (j->attached && hs->env.attach)
			hs->env.attach(hs->env.attach_ctx, INTERP_HOTSPOT, j->pid, NULL);
		j->attached = j->walked = false;
		caches_free(j);
	}
	t0 = now_ns();
	if (t0 < j->retry_ns)
		return 0;
	if (j->done) {
		/* read, its heaps not set up at the time: once more */
		if (j->failed || j->nr_heaps || j->heap_tries >= READ_TRIES)
			return 0;
		j->heap_tries++;
		if (read_heaps(hs, j, &why) > 0) {
			pr_info("java: pid %u (%s): %d code heaps: %s\n", pr->pid, pr->comm,
				j->nr_heaps, heaps_str(j, heaps, sizeof(heaps)));
			note_heaps(hs, j);
			attach(hs, j, pr);
		} else {
			j->retry_ns = t0 + RETRY_NS;
		}
		return 0;
	}
	j->tries++;
	hs->st.table_reads++;
	err = read_tables(hs, j, lib->path, &why);
	if (!err && (n = read_heaps(hs, j, &why)) <= 0) {
		if (n < 0)
			err = n; /* forged heaps: no unwinding through them (-EFAULT: tried again) */
		else
			j->retry_ns = t0 + RETRY_NS; /* a JVM starting: its heaps at a later find */
	}
	hs->st.read_ns += now_ns() - t0;
	if (err == -ENOMEM)
		return err;
	if ((err == -EAGAIN || err == -EFAULT) && j->tries < READ_TRIES) {
		/* a JVM starting (libjvm's initialisers not run yet), or a read racing an unmap */
		j->retry_ns = t0 + RETRY_NS;
		pr_debug("java: pid %u (%s): %s: tried again later\n", pr->pid, pr->comm, why);
		return 0;
	}
	j->done = true;
	j->failed = err != 0;
	if (err) {
		if (err == -ENOTSUP && j->vm.missing)
			snprintf(msg, sizeof(msg), "%s (%s%s%s)", why, j->vm.missing,
				 j->vm.missing_name ? "::" : "",
				 j->vm.missing_name ? j->vm.missing_name : "");
		else
			snprintf(msg, sizeof(msg), "%s", why ? why : strerror(-err));
		pr_warn("java: pid %u (%s): HotSpot's tables in '%s' not usable: %s: profiled "
			"without Java frames\n",
			pr->pid, pr->comm, lib->path, msg);
		note(hs, j, pr, err, why);
		return 0;
	}
	log_found(j, pr, lib->path);
	note(hs, j, pr, 0, NULL);
	attach(hs, j, pr);
	return 0;
}

/*
 * find: the JVM of process proc (found, described, attached), and, once
 * the BPF walk has its layout, the process's interpreter-frame region in p
 * (a mapping: there before the outputs plan their JIT images).
 */
static int hs_find(void *state, struct profile *p, uint32_t proc)
{
	struct interp_hs *hs = state;
	struct profile_process *pr = &p->procs[proc];
	struct jvm *j;
	int err = find_jvm_of(hs, p, proc);

	if (err < 0)
		return err;
	j = find_jvm(hs, pr->pid);
	if (!j || !j->walked || pr->py_start)
		return err;
	return profile__add_py_region(p, proc, "[java]");
}

/* j's memory, opened at its first frame to name; -1 when gone or not readable */
static int jvm_mem(struct interp_hs *hs, struct jvm *j)
{
	const char *why;

	if (j->mem_fd < 0 && !j->gone)
		j->mem_fd = open_mem(hs, j->pid, &why);
	return j->mem_fd;
}

/*
 * The method at Method* addr (check: its ConstMethod* >> 3 as seen; 0 any):
 * cached, else (or reread: it changed since) read now
 */
static struct hs_meth *get_method(struct interp_hs *hs, struct jvm *j, uint64_t addr,
				  uint32_t check, bool reread, int *err)
{
	struct hotspot_method hm;
	struct hs_meth *m;
	struct mem mem;
	uint64_t idx, t0;
	char sig[HS_NAME_MAX], buf[3 * HS_NAME_MAX];
	int rerr;

	if (u64map__get(&j->method_idx, addr, &idx)) {
		m = &j->methods[idx - 1];
		if (!reread && (!check || !m->check || m->check == check))
			return m;
		/* the Method* holds another method now: read it again */
		hs->st.stale++;
		free(m->name);
		free(m->file);
		free(m->lines);
	} else {
		if (j->nr_methods >= MAX_METHODS) {
			caches_free(j); /* start over rather than grow without end */
			j->gen = 0;
		}
		if (array__grow((void **)&j->methods, &j->cap_methods, j->nr_methods + 1,
				sizeof(*j->methods)) ||
		    u64map__put(&j->method_idx, addr, j->nr_methods + 1)) {
			*err = -ENOMEM;
			return NULL;
		}
		m = &j->methods[j->nr_methods++];
	}
	memset(m, 0, sizeof(*m));
	m->addr = addr;
	m->check = check;
	mem.fd = jvm_mem(hs, j);
	t0 = now_ns();
	rerr = mem.fd < 0 ? -EBADF : hotspot_method__read(&j->vm, mem_read, &mem, addr, &hm);
	hs->st.methods_read++;
	if (!rerr && check && (uint32_t)(hm.cmethod >> 3) != check)
		rerr = -ESTALE; /* another method since the sample */
	if (rerr == -ENOMEM) {
		*err = rerr;
		return NULL;
	}
	if (rerr) {
		m->bad = true;
		hs->st.methods_failed++;
		hotspot_method__release(&hm);
		hs->st.name_ns += now_ns() - t0;
		return m;
	}
	snprintf(buf, sizeof(buf), "%s.%s%s", hm.klass, hm.name,
		 hotspot_sig__java(hm.sig, sig, sizeof(sig)));
	m->name = strdup(buf);
	m->file = strdup(hm.file);
	m->code = hm.cmethod + j->vm.size[HS_T_CONSTMETHOD];
	m->code_size = hm.code_size;
	m->lines = hm.lines;
	m->nr_lines = hm.nr_lines;
	hm.lines = NULL;
	m->first = hm.nr_lines ? hm.min_line : 0;
	m->last = hm.nr_lines ? hm.max_line : 0;
	if (m->last - m->first > 65535)
		m->last = m->first + 65535;
	hs->st.name_ns += now_ns() - t0;
	if (!m->name || !m->file) {
		*err = -ENOMEM;
		return NULL;
	}
	return m;
}

/* The marker's address (a one-line function of its own), 0 when there is no room */
static uint64_t marker(struct profile *p, uint32_t proc, struct jvm *j, enum hs_mark k, int *err)
{
	uint64_t start;
	int e;

	if (j->marks[k])
		return j->marks[k];
	e = profile__add_pyfunc(p, proc, hs_mark_names[k], "", 0, 1, &start);
	if (e == -ENOMEM)
		*err = e;
	if (e)
		return 0;
	j->marks[k] = start + 1;
	return j->marks[k];
}

/*
 * The address of method m at bytecode index bci (-1, or not in its table:
 * its first line) in the region, as a return address (its line at
 * address - 1): m's block is added at its first use in this generation.
 */
static uint64_t method_addr(struct profile *p, uint32_t proc, struct jvm *j, struct hs_meth *m,
			    int32_t bci, int *err)
{
	int32_t line;
	int e;

	if (m->bad)
		return marker(p, proc, j, HS_MARK_UNKNOWN, err);
	if (m->gen != j->gen || !m->block) {
		e = profile__add_pyfunc(p, proc, m->name, m->file, (uint32_t)m->first,
					(uint32_t)(m->last - m->first + 1), &m->block);
		if (e == -ENOMEM) {
			*err = e;
			return 0;
		}
		if (e)
			return marker(p, proc, j, HS_MARK_FULL, err);
		m->gen = j->gen;
	}
	line = bci >= 0 ? hotspot_lines__find(m->lines, m->nr_lines, (uint32_t)bci) : -1;
	if (line < m->first || line > m->last)
		line = m->first;
	return m->block + (uint64_t)(line - m->first) + 1;
}

/* A stub's name, as a function of its own ("[stub] StubRoutines (1)") */
static uint64_t stub_addr(struct interp_hs *hs, struct profile *p, uint32_t proc, struct jvm *j,
			  uint64_t blob, int *err)
{
	char name[80], buf[96];
	struct mem mem;
	uint64_t start;
	int e;

	mem.fd = jvm_mem(hs, j);
	if (mem.fd < 0 || hotspot_blob__name(&j->vm, mem_read, &mem, blob, name, sizeof(name)))
		snprintf(name, sizeof(name), "unknown");
	snprintf(buf, sizeof(buf), "[stub] %s", name);
	e = profile__add_pyfunc(p, proc, buf, "", 0, 1, &start);
	if (e == -ENOMEM)
		*err = e;
	return e ? 0 : start + 1;
}

/*
 * The addresses that stand for recorded frame (w0, w1) of j, innermost
 * first (a compiled pc with inlined methods gives several): cached by the
 * frame's words, which hold its check against reuse. Returns the run's
 * index in j->runs (its count, then its addresses), or -1 with *err set
 * on ENOMEM.
 */
static int64_t frame_run(struct interp_hs *hs, struct profile *p, uint32_t proc, struct jvm *j,
			 uint64_t w0, uint64_t w1, int *err)
{
	uint64_t key = hash__mix64(w0) ^ hash__mix64(w1 + 0x9e3779b97f4a7c15ull), idx;
	uint64_t addr = BPFPROF_HS_ADDR(w0), a[HS_SCOPES_MAX], method;
	uint32_t kind = BPFPROF_HS_KIND(w0), off = (uint32_t)w1, check = (uint32_t)(w1 >> 32);
	struct hotspot_scope sc[HS_SCOPES_MAX];
	struct hs_meth *m;
	struct mem mem;
	uint32_t cid;
	int n = 0, ns;

	if (!key)
		key = 1;
	if (u64map__get(&j->frame_idx, key, &idx)) {
		hs->st.frame_hits++;
		return (int64_t)idx - 1;
	}
	hs->st.frame_misses++;
	if (kind == BPFPROF_HS_INTERPRETED) {
		/* w1 is the bcp: in the method's bytecodes, else the Method* was reused: read again */
		int32_t bci = -1;

		m = get_method(hs, j, addr, 0, false, err);
		if (m && w1 && !m->bad && (w1 < m->code || w1 - m->code >= m->code_size)) {
			hs->st.stale++;
			m = get_method(hs, j, addr, 0, true, err);
		}
		if (!m)
			return -1;
		if (w1 && !m->bad && w1 >= m->code && w1 - m->code < m->code_size)
			bci = (int32_t)(w1 - m->code);
		a[n++] = method_addr(p, proc, j, m, bci, err);
	} else if (kind == BPFPROF_HS_COMPILED || kind == BPFPROF_HS_NATIVE) {
		mem.fd = jvm_mem(hs, j);
		if (mem.fd < 0 ||
		    hotspot_nmethod__method(&j->vm, mem_read, &mem, addr, &method, &cid) ||
		    cid != check) {
			if (mem.fd >= 0)
				hs->st.stale++;
			a[n++] = marker(p, proc, j, HS_MARK_UNKNOWN, err);
		} else {
			ns = kind == BPFPROF_HS_COMPILED ?
				     hotspot_scopes__read(&j->vm, mem_read, &mem, addr, off, sc,
							  HS_SCOPES_MAX) :
				     0;
			hs->st.scopes_read++;
			if (ns <= 0) {
				hs->st.scopes_failed += ns < 0;
				sc[0].method = method;
				sc[0].bci = -1;
				ns = 1;
			}
			for (int k = 0; k < ns && !*err; k++) {
				m = get_method(hs, j, sc[k].method, 0, false, err);
				if (m)
					a[n++] = method_addr(p, proc, j, m, sc[k].bci, err);
			}
		}
	} else {
		a[n++] = stub_addr(hs, p, proc, j, addr, err);
	}
	if (*err)
		return -1;
	if (array__grow((void **)&j->runs, &j->cap_runs, j->nr_runs + 1 + (size_t)n,
			sizeof(*j->runs)) ||
	    u64map__put(&j->frame_idx, key, j->nr_runs + 1)) {
		*err = -ENOMEM;
		return -1;
	}
	idx = j->nr_runs;
	j->runs[j->nr_runs++] = (uint64_t)n;
	for (int k = 0; k < n; k++)
		j->runs[j->nr_runs++] = a[k];
	return (int64_t)idx;
}

#define MERGE_MAX (BPFPROF_MAX_STACK + BPFPROF_MAX_PY_FRAMES + 1)

/*
 * Sample s of JVM j: each user address whose frame BPF stepped as a
 * code-cache frame is replaced by its Java frames (innermost first), the
 * others kept; the leaf's address is looked up as is, the others as
 * return addresses.
 */
static int hs_merge(void *state, struct profile *p, uint32_t proc, const struct bpfprof_sample *s,
		    uint64_t *out, uint16_t *nr_user)
{
	struct interp_hs *hs = state;
	const uint64_t *nat = (const uint64_t *)s->ips + s->nr_kernel, *w = nat + s->nr_user;
	struct jvm *j = find_jvm(hs, s->tgid);
	struct hotspot_jvm_stat *js;
	size_t npy = s->nr_py, r = 0, o = 0;
	int err = 0;

	if (!j || !j->done || j->failed)
		return 0;
	js = j->stat ? &hs->st.jvm[j->stat - 1] : NULL;
	if (js)
		js->samples++;
	if (!npy || s->py_stop < BPFPROF_STAT_HS_WALKS || s->py_stop > BPFPROF_STAT_HS_NO_RA) {
		if (js && (!j->walked || !s->nr_user))
			js->not_walked++;
		else if (js)
			js->no_java++;
		return 0;
	}
	if (js) {
		js->with_java++;
		if (s->py_stop >= BPFPROF_STAT_HS_NO_BLOB)
			js->java_stop[s->py_stop - BPFPROF_STAT_HS_NO_BLOB]++;
	}
	/* a new profile (interval): its own functions and frame addresses */
	if (hs->gen_p != p || hs->gen_start != p->start_ns) {
		hs->gen_p = p;
		hs->gen_start = p->start_ns;
		hs->gen++;
	}
	if (j->gen != hs->gen) {
		u64map__free(&j->frame_idx);
		memset(&j->frame_idx, 0, sizeof(j->frame_idx));
		j->nr_runs = 0;
		memset(j->marks, 0, sizeof(j->marks));
		j->gen = hs->gen;
	}
	if (profile__add_py_region(p, proc, "[java]") < 0)
		return -ENOMEM;
	if (!p->procs[proc].py_start)
		return 0;
	if (npy > BPFPROF_MAX_PY_FRAMES)
		npy = BPFPROF_MAX_PY_FRAMES;
	for (size_t i = 0; i < s->nr_user && o < MERGE_MAX; i++) {
		int64_t run;

		/*
		 * Java frames past the record's room (BPF stopped recording
		 * them, the native walk went on): the stack ends at the last
		 * one recorded, its root cut as --max-stack cuts one, not
		 * joined to the thread's root with its middle missing
		 */
		if (r >= npy && s->py_stop == BPFPROF_STAT_HS_LIMIT)
			break;
		if (r >= npy || BPFPROF_HS_INDEX(w[2 * r]) != i) {
			out[o++] = nat[i];
			continue;
		}
		run = frame_run(hs, p, proc, j, w[2 * r], w[2 * r + 1], &err);
		r++;
		if (run < 0)
			return err;
		for (uint64_t k = 0; k < j->runs[run] && o < MERGE_MAX; k++) {
			uint64_t a = j->runs[run + 1 + k];

			if (!a)
				continue;
			out[o] = o ? a : a - 1;
			o++;
			if (js)
				js->frames++;
		}
	}
	*nr_user = (uint16_t)o;
	return 1;
}

/*
 * pid has exited: out of BPF, its memory closed; what was read of it (its
 * tables, names and frames) stays, so that its samples still in the ring
 * are named, until a new JVM is found behind the pid.
 */
static void hs_forget(void *state, uint32_t pid)
{
	struct interp_hs *hs = state;
	struct jvm *j = find_jvm(hs, pid);

	if (!j)
		return;
	if (j->attached && hs->env.attach)
		hs->env.attach(hs->env.attach_ctx, INTERP_HOTSPOT, pid, NULL);
	if (j->mem_fd >= 0)
		close(j->mem_fd);
	j->mem_fd = -1;
	j->gone = true;
}

static void hs_stats(const void *state, void *out)
{
	*(struct hotspot_stats *)out = ((const struct interp_hs *)state)->st;
}

const struct interp_ops interp_hotspot = {
	.name = "HotSpot",
	.new = hs_new,
	.free = hs_free,
	.find = hs_find,
	.merge = hs_merge,
	.forget = hs_forget,
	.stats = hs_stats,
	.stats_size = sizeof(struct hotspot_stats),
};

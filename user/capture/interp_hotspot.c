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
#include "lib_hashmap.h"
#include "log.h"
#include "proc_file.h"
#include "sym_elf.h"

#define LIBJVM_MAX_SIZE (512ull << 20)
#define READ_TRIES 20 /* reads of a starting JVM's tables before it is given up */
#define RETRY_NS (50ull * 1000 * 1000)

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
};

struct interp_hs {
	struct interp_env env;
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

static void hs_free(void *state)
{
	struct interp_hs *hs = state;

	if (!hs)
		return;
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
		HS_F_CODEBLOB_NAME,	  HS_F_CODEBLOB_FRAME_COMPLETE, HS_F_CODEBLOB_FRAME_SIZE,
		HS_F_CODEBLOB_CODE_BEGIN, HS_F_NMETHOD_COMPILE_ID,	HS_F_NMETHOD_ORIG_PC,
		HS_F_NMETHOD_DEOPT_HANDLER,
	};
	const struct hotspot_vm *vm = &j->vm;
	uint16_t off[7];

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
	out->method_constmethod = (uint16_t)vm->field[HS_F_METHOD_CONSTMETHOD];
	out->constmethod_size = (uint16_t)vm->size[HS_T_CONSTMETHOD];
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
	if (err) {
		pr_warn("java: pid %u (%s): Java frames not walked: %s\n", pr->pid, pr->comm,
			why ? why : strerror(-err));
		j->attached = true; /* warned once */
		return;
	}
	j->attached = true;
	hs->st.attached++;
	pr_info("java: pid %u (%s): Java frames walked in BPF\n", pr->pid, pr->comm);
}

static int hs_find(void *state, struct profile *p, uint32_t proc)
{
	struct interp_hs *hs = state;
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
		j->nr_heaps = 0;
		j->stat = 0;
		if (j->attached && hs->env.attach)
			hs->env.attach(hs->env.attach_ctx, INTERP_HOTSPOT, j->pid, NULL);
		j->attached = false;
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

/* No Java frame is recorded yet (the BPF walk is the next step): the record's stack stands */
static int hs_merge(void *state, struct profile *p, uint32_t proc, const struct bpfprof_sample *s,
		    uint64_t *ips, uint16_t *nr_user)
{
	(void)state, (void)p, (void)proc, (void)s, (void)ips, (void)nr_user;
	return 0;
}

static void hs_forget(void *state, uint32_t pid)
{
	struct interp_hs *hs = state;
	struct jvm *j = find_jvm(hs, pid);

	if (j) {
		if (j->attached && hs->env.attach)
			hs->env.attach(hs->env.attach_ctx, INTERP_HOTSPOT, pid, NULL);
		j->attached = false;
		memset(&j->vm, 0, sizeof(j->vm));
		j->base = 0;
		j->done = j->failed = false;
		j->nr_heaps = 0;
	}
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

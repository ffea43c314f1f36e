/* SPDX-License-Identifier: MIT */
/*
 * The in-memory profile: the only thing writers consume. Sampling (user/capture/agg.c)
 * and trace conversion build it; writers take a `const struct profile *`.
 *
 *   profile ─┬─ procs[]     pid, comm, cgroup, mappings[] (from /proc/PID/maps)
 *            ├─ stacks[]    (proc, kernel ips, user ips) → count, value,      (distinct only)
 *            │                                             off_count, off_ns (--off-cpu)
 *            ├─ locs[]      (proc or kernel, addr) → mapping, function    (after profile__resolve_locs)
 *            └─ kernel      text bounds, loaded modules, build-id         (kernel_image.h)
 *
 * Memory grows with distinct stacks and processes, not with samples. Strings
 * (paths, function names) are interned in the profile and live until
 * profile__free().
 */
#ifndef BPFPROF_PROFILE_H
#define BPFPROF_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROFILE_COMM_LEN 16
#define PROFILE_BUILD_ID_MAX 20
/* Location owner for kernel addresses, which all processes share. */
#define PROFILE_KERNEL_PROC UINT32_MAX

struct profile_mapping {
	uint64_t start; /* first virtual address */
	uint64_t end; /* one past the last */
	uint64_t offset; /* file offset of `start` */
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	char perms[5]; /* "r-xp" as in /proc/PID/maps */
	const char *path; /* interned; "" for anonymous memory, "[vdso]" etc. for special */
	uint8_t build_id[PROFILE_BUILD_ID_MAX];
	uint8_t build_id_len; /* 0: unknown (not a file, or no GNU build-id note) */
	const char *debug_path; /* interned path of the separate debug file (build-id, debuglink,
				 * debuginfod) that named this mapping's functions, NULL if none */
	/*
	 * For readers that open files by the name the profile gives (.prof):
	 * NULL when path names the file on this machine; else an interned
	 * absolute path of a copy of it (dso_export.h), or "" when there is no
	 * file to name (a memfd or deleted file that could not be copied).
	 */
	const char *copy_path;
	/*
	 * Its process's maps_gen when profile__add_mapping put it there: a
	 * mapping of gen at most g was there, as it is, when maps_gen was g
	 * (profile__reset_locs)
	 */
	uint32_t gen;
};

/* A loaded kernel module as perf names it in its MMAP records. */
struct profile_module {
	const char *path; /* interned: its file ("/lib/modules/RELEASE/...ko[.xz]"), else "[name]" */
	uint64_t start; /* load address */
	uint64_t size; /* bytes, as /proc/modules gives it */
};

/*
 * The running kernel as capture and symbolization found it (kernel_image.h),
 * for writers that describe it (perf.data's kernel MMAPs and BUILD_ID).
 * Zeroed: unknown, and those writers leave the kernel out.
 */
struct profile_kernel {
	uint64_t text, etext; /* [_text, _etext), addresses; 0 when unreadable (kptr_restrict) */
	struct profile_module *modules; /* in /proc/modules order; owned by the profile */
	size_t nr_modules, cap_modules;
	uint8_t build_id[PROFILE_BUILD_ID_MAX];
	uint8_t build_id_len; /* 0: unknown */
};

/*
 * A Python function of a process (python_procs.h): its frames have
 * addresses in [start, start + size) of the process's Python region, the
 * line being first_line + (address - start) (return addresses: address - 1).
 * Strings interned in the profile.
 */
struct profile_pyfunc {
	uint64_t start, size;
	const char *name; /* co_qualname (co_name before 3.11), or "[...]" for a marker */
	const char *file; /* co_filename; "" for markers */
	uint32_t first_line; /* co_firstlineno */
};

/* Bytes of address space of a process's Python region: one per line of its functions */
#define PROFILE_PY_REGION_SIZE (512ull << 10)

struct profile_process {
	uint32_t pid; /* tgid, root pid namespace */
	/*
	 * Start time, USER_HZ ticks after boot (/proc/PID/stat's starttime),
	 * 0 unknown: with pid, the process's identity, which a reused pid
	 * does not share (two entries may have the same pid).
	 */
	uint32_t start;
	char comm[PROFILE_COMM_LEN];
	uint64_t cgroup_id;
	const char *cgroup_path; /* interned cgroup v2 path ("/system.slice/x"), NULL if unknown */
	const char *container_id; /* interned container id from the cgroup path, NULL if none */
	/*
	 * Sorted by start, never overlapping: a re-read of /proc/PID/maps adds
	 * new mappings and replaces those they overlap, and keeps the rest, so
	 * code that was unmapped during the run is still attributed.
	 */
	struct profile_mapping *mappings;
	size_t nr_mappings, cap_mappings;
	/*
	 * Bumped by each change profile__add_mapping makes to mappings[]:
	 * locations resolved before it (the symbolizer's passes while
	 * sampling) may name a mapping that is no longer there or has moved
	 * (profile__reset_locs). agg's compaction remaps them itself.
	 */
	uint32_t maps_gen;
	bool maps_missing; /* process gone before its maps could be read */
	/*
	 * JIT code as readers that symbolize from files see it (.prof,
	 * perf.data): each of the process's anonymous executable mappings
	 * that may hold JIT code, mapped onto a region of the process's JIT
	 * ELF image (jit_elf.h): path is the image, offset the region's place
	 * in it. In the order planned; empty when the process has no JIT files.
	 */
	struct profile_mapping *jit_maps;
	size_t nr_jit_maps, cap_jit_maps;
	uint64_t nr_samples; /* samples and off-CPU blocks */
	/*
	 * Python frames (python_procs.h): an executable anonymous mapping of
	 * PROFILE_PY_REGION_SIZE bytes at py_start that the process does not
	 * use (0: none), in mappings[] too, whose addresses stand for
	 * (function, line) pairs, so that every writer sees frames: the JIT
	 * images name them for .prof and perf.data. pyfuncs sorted by start.
	 */
	uint64_t py_start;
	/* the DSO its region's frames are named with: "[python]" when NULL, "[js]" for V8's */
	const char *py_dso;
	struct profile_pyfunc *pyfuncs;
	size_t nr_pyfuncs, cap_pyfuncs;
};

struct profile_stack {
	uint32_t proc; /* index into procs */
	uint16_t nr_kernel; /* ips[0..nr_kernel): kernel, leaf first */
	uint16_t nr_user; /* ips[nr_kernel..+nr_user): user, leaf first */
	uint64_t *ips; /* raw addresses as sampled (return addresses above the leaf) */
	uint32_t *locs; /* parallel to ips, set by profile__resolve_locs(); NULL before */
	uint64_t count; /* samples */
	uint64_t value; /* ns: count * period for sampling, self time for traces */
	/*
	 * --off-cpu: blocks that ended in this callchain (the task slept in
	 * it), and their total length, ns. A callchain can hold both kinds;
	 * count is 0 for one that was only blocked in.
	 */
	uint64_t off_count;
	uint64_t off_ns;
	uint32_t hash;
};

struct profile_location {
	uint64_t addr; /* raw address */
	uint32_t proc; /* owning process, or PROFILE_KERNEL_PROC */
	int32_t mapping; /* index into procs[proc].mappings, -1 when none */
	bool is_return; /* a return address (non-leaf frame): the call is at addr - 1 */
	bool is_jit; /* named from JIT metadata (jitdump, perf-PID.map) */
	/*
	 * Interned function name as people read it, NULL when unknown: the
	 * symbol demangled (demangle.h) unless the symbolizer was told not to
	 */
	const char *func;
	/* Interned symbol as the file spells it (mangled) when func is its demangled form, else NULL */
	const char *sys_func;
	const char *dso; /* interned DSO/module name ("[kernel.kallsyms]" for the kernel) */
	uint64_t func_offset; /* addr - symbol start, when func is set */
	/*
	 * Interned "DSO+0xADDR" for a frame in a file with no function covering
	 * it (func NULL), so that unnamed addresses stay apart in the text
	 * outputs; NULL otherwise. ADDR is the ELF virtual address perf prints
	 * for it (the file offset when the file was unreadable), of the call
	 * instruction for return addresses (addr - 1).
	 */
	const char *addr_name;
	/*
	 * Python frames: the function, its file and first line, the frame's
	 * line. Go frames (.gopclntab): src_file and line only. NULL/0 otherwise
	 */
	const char *src_func;
	const char *src_file;
	uint32_t start_line, line;
};

/*
 * The sample types a profile declares, and which one the single-kind writers
 * (.prof, folded, SVG) and the summary read, through profile__weight(): the
 * default is CPU. The pprof writer writes every type the profile holds as its
 * sample types (samples/count and cpu/nanoseconds; off-CPU blocks and
 * nanoseconds when p->offcpu), the perf.data writer one event per type.
 */
enum profile_view {
	PROFILE_VIEW_CPU = 0, /* samples (count) */
	PROFILE_VIEW_OFFCPU = 1, /* blocked time, µs (off_ns / 1000) */
	/*
	 * Each stack's value in µs, rounded to the nearest (value is ns: XRay's
	 * self time, each stack's count being calls): stacks under 0.5 µs weigh 0
	 */
	PROFILE_VIEW_VALUE_US = 2,
};

struct profile {
	const char *event; /* interned event name, e.g. "cpu-clock" */
	uint32_t freq_hz; /* sampling frequency, 0 when sampling by period */
	uint64_t period_ns; /* time one sample stands for, ns */
	uint64_t start_ns; /* CLOCK_MONOTONIC at start of collection */
	uint64_t end_ns; /* CLOCK_MONOTONIC at end of collection */
	uint64_t start_realtime_ns; /* CLOCK_REALTIME at start of collection */
	uint64_t nr_samples; /* sum of stack counts */
	uint64_t nr_lost; /* samples dropped before aggregation */
	bool offcpu; /* off-CPU blocks were collected (--off-cpu), maybe none */
	uint64_t offcpu_thresh_ns; /* shortest block kept */
	uint64_t nr_offcpu_blocks; /* sum of stack off_counts */
	uint64_t offcpu_ns; /* sum of stack off_ns */
	uint64_t nr_offcpu_lost; /* blocks dropped before aggregation */
	enum profile_view view; /* see enum profile_view; callers pass a copy with another view */

	struct profile_process *procs;
	size_t nr_procs, cap_procs;
	struct profile_stack *stacks;
	size_t nr_stacks, cap_stacks;
	struct profile_location *locs;
	size_t nr_locs, cap_locs;
	struct profile_kernel kernel;

	struct profile_index *index; /* private hash tables */
};

/*
 * One sample or off-CPU block as capture adds it, for writers that stream
 * them as they come (perf.data): who, on which CPU, when, where. Borrowed:
 * valid during the call it is passed to.
 */
struct profile_sample {
	uint32_t pid; /* tgid, root pid namespace */
	uint32_t tid;
	uint32_t cpu;
	uint64_t time_ns; /* CLOCK_MONOTONIC */
	const char *comm; /* the thread's name, NUL-terminated */
	const uint64_t *ips; /* nr_kernel kernel then nr_user user addresses, leaf first */
	uint16_t nr_kernel, nr_user;
	uint64_t off_ns; /* an off-CPU block's length, ns; 0 for a CPU sample */
};

/* Returns a new empty profile, or NULL (errno ENOMEM). Free with profile__free(). */
struct profile *profile__new(void);
void profile__free(struct profile *p);

/*
 * Intern a NUL-terminated string in the profile. Returns a pointer owned by
 * the profile (valid until profile__free), or NULL on ENOMEM.
 */
const char *profile__intern(struct profile *p, const char *s);

/*
 * Find or add the process with this tgid. Returns its index into p->procs
 * (stable; the pointer p->procs may move on add), or -ENOMEM. *created is set
 * when the process is new.
 */
int profile__process(struct profile *p, uint32_t pid, bool *created);
/* Index of the process with this tgid (the newest entry of it), or -ENOENT. */
int profile__find_process(const struct profile *p, uint32_t pid);

/*
 * The same for the process (pid, start): start 0 (unknown) matches the
 * pid's newest entry; an entry of start 0 matches any start and takes it.
 * A new entry of a pid that another process had is a new process (pid
 * reuse).
 */
int profile__process_start(struct profile *p, uint32_t pid, uint32_t start, bool *created);
int profile__find_process_start(const struct profile *p, uint32_t pid, uint32_t start);
/*
 * A new entry for (pid, start) even when one exists: a new image of the
 * process after an exec, found from then on as its newest. Returns its index
 * or -ENOMEM.
 */
int profile__add_process(struct profile *p, uint32_t pid, uint32_t start);

/*
 * Add `count` samples of one callchain of process `proc`. ips holds nr_kernel
 * kernel then nr_user user addresses, leaf first. Identical (proc, callchain)
 * pairs share one stack. Returns the stack index, or -ENOMEM. *created is set
 * when the stack is new.
 */
int profile__add_stack(struct profile *p, uint32_t proc, const uint64_t *ips, uint16_t nr_kernel,
		       uint16_t nr_user, uint64_t count, uint64_t value, bool *created);

/*
 * The hot path's split of profile__add_stack, for a caller with work to do
 * between hashing a callchain and adding it (the aggregator: the process
 * lookup): profile__stack_hash hashes the callchain of process id pid (the
 * pid of the entry it will go to: p->procs[proc].pid), profile__prefetch_stack
 * starts fetching its place in the stack index (a hint: it changes nothing,
 * and the index may grow meanwhile), and profile__add_stack_hashed adds it
 * as profile__add_stack does, with h that hash. Returns as profile__add_stack.
 */
uint32_t profile__stack_hash(uint32_t pid, const uint64_t *ips, uint16_t nr_kernel,
			     uint16_t nr_user);
/*
 * profile__stack_hash's value, the nr_kernel + nr_user addresses copied to
 * dst (not overlapping ips) in the same pass: for a caller that keeps a
 * copy of the record (the aggregator's queue), each address read once.
 */
uint32_t profile__stack_hash_copy(uint32_t pid, const uint64_t *ips, uint16_t nr_kernel,
				  uint16_t nr_user, uint64_t *dst);
void profile__prefetch_stack(const struct profile *p, uint32_t h);
/*
 * The next step ahead, once the slot is in (a caller that sees several
 * records at a time: the aggregator's queue): start fetching the key that
 * the first slot of hash h points to (nr_ips addresses after its header
 * word, up to 512 bytes of it) and the stack's entry. A hint as well:
 * nothing changes, and no key may match.
 */
void profile__prefetch_key(const struct profile *p, uint32_t h, size_t nr_ips);
int profile__add_stack_hashed(struct profile *p, uint32_t proc, uint32_t h, const uint64_t *ips,
			      uint16_t nr_kernel, uint16_t nr_user, uint64_t count, uint64_t value,
			      bool *created);

/*
 * Add `blocks` off-CPU blocks of total length off_ns (ns) to the stack of
 * this callchain (made with count 0 when new). Returns the stack index or
 * -ENOMEM; *created as for profile__add_stack.
 */
int profile__add_offcpu(struct profile *p, uint32_t proc, const uint64_t *ips, uint16_t nr_kernel,
			uint16_t nr_user, uint64_t blocks, uint64_t off_ns, bool *created);

/*
 * A stack's weight in p->view: samples (CPU), µs blocked (off-CPU, rounded
 * down per stack) or µs of value (rounded to the nearest), the unit the
 * single-kind writers put where a sample count goes.
 */
static inline uint64_t profile__weight(const struct profile *p, const struct profile_stack *s)
{
	switch (p->view) {
	case PROFILE_VIEW_OFFCPU:
		return s->off_ns / 1000;
	case PROFILE_VIEW_VALUE_US:
		return (s->value + 500) / 1000;
	default:
		return s->count;
	}
}

/* The sum of profile__weight over all stacks: p->nr_samples in the CPU view, µs in the others. */
uint64_t profile__total_weight(const struct profile *p);

/* Index of the mapping of process `proc` that contains addr, or -1. */
int profile__find_mapping(const struct profile *p, uint32_t proc, uint64_t addr);
/*
 * Index of the mapping of s->proc that user frame i of s (0: the leaf) falls
 * in, or -1: a return address (i > 0) is looked up one byte back, as it may
 * sit just past its mapping's end. Its location's, once resolved
 * (profile__resolve_locs: a load rather than a search, which a pass over
 * every frame of a large profile paid 300,000 times), else searched.
 */
int profile__user_frame_mapping(const struct profile *p, const struct profile_stack *s, size_t i);

/*
 * Insert a mapping into process `proc`, removing the existing mappings it
 * overlaps (the newer snapshot wins). An identical mapping is kept as is.
 * Returns 1 when the mapping is new, 0 when it was already there, or -ENOMEM.
 */
int profile__add_mapping(struct profile *p, uint32_t proc, const struct profile_mapping *m);

/*
 * Give process proc its Python region (struct profile_process: py_start, a
 * mapping of PROFILE_PY_REGION_SIZE bytes at an address no mapping of it
 * uses; V8's JavaScript frames use it too, a process having one
 * interpreter) if it has none, and its DSO name dso (interned; NULL: the
 * default) if it has none. Returns 1 when the region was added, 0 (there
 * already, or no free address), or -ENOMEM.
 */
int profile__add_py_region(struct profile *p, uint32_t proc, const char *dso);

/*
 * A Python function in process proc's region: its block of nr_lines
 * addresses (lines first_line ...), allocated after the last one (strings
 * interned). Returns 0 and its start in *start, -ENOSPC when the region is
 * full or the process has none, or -ENOMEM.
 */
int profile__add_pyfunc(struct profile *p, uint32_t proc, const char *name, const char *file,
			uint32_t first_line, uint32_t nr_lines, uint64_t *start);
/* The Python function of process proc whose block holds addr, or NULL. */
const struct profile_pyfunc *profile__find_pyfunc(const struct profile *p, uint32_t proc,
						  uint64_t addr);

/*
 * Append a loaded module to p->kernel.modules (path interned). Returns 0 or
 * -ENOMEM.
 */
int profile__add_module(struct profile *p, const char *path, uint64_t start, uint64_t size);

/*
 * Build p->locs and every stack's locs[] from the raw addresses: one location
 * per distinct (process, address, leaf or return address) for user frames and
 * per (address, leaf or return) for kernel frames, with its mapping. Names are filled later by the symbolizer.
 * Returns 0 or -ENOMEM. Idempotent, and incremental: the stacks added since
 * the last call get their locations (appended in the stacks' order, so
 * that calls made while sampling give the locations one call at the end
 * would), the others keep theirs.
 */
int profile__resolve_locs(struct profile *p);

/*
 * The locations of each process i < nr whose maps_gen is no longer
 * since[i] (the one their locations were resolved at; processes past nr
 * have none resolved) made as profile__resolve_locs would make them now:
 * each one's mapping looked up in its process's mappings of now; and where
 * that mapping was not there as it is at since[i] (or there is none), what
 * the symbolizer set (names, DSO, lines, is_jit) cleared, for it to name
 * them again (the others' names came from the same mapping). The mappings
 * keep the build-ids and debug paths the symbolizer recorded, which are
 * those of their files. Returns the index of the first location cleared,
 * or p->nr_locs when none was; *nr_cleared: how many were.
 */
size_t profile__reset_locs(struct profile *p, const uint32_t *since, size_t nr, size_t *nr_cleared);

#endif /* BPFPROF_PROFILE_H */

// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Stack sampler: runs on every cpu-clock (or hardware) perf event overflow,
 * keeps the samples of the targeted tasks, and sends pid, tid, cpu, time,
 * comm, cgroup and both stacks to userspace through a ring buffer. Records are
 * built in a per-CPU scratch slot and copied with bpf_ringbuf_output() so that
 * only the used part of the 2 KiB stack area travels. Lost records are counted
 * per CPU in `stats`. Layouts come from include/bpfprof_abi.h.
 *
 * The user stack is walked here, by frame pointers, rather than with
 * bpf_get_stack(BPF_F_USER_STACK): the kernel's walker (perf_callchain_user
 * in arch/x86/events/core.c) reads each frame with two __get_user calls, and
 * every user access has a fixed cost (SMAP's stac/clac, which a virtual
 * machine may trap) that made it 6 us of the 7.4 us a run took. This walk
 * copies the stack a page at a time (one bpf_probe_read_user per page the
 * frame chain touches, usually one or two) and follows the chain in the copy.
 * It stores what the kernel's walker stores (the interrupted user IP, then
 * each frame's return address) and stops where it stops (a frame that cannot
 * be read), and also at the second time the chain goes down or sideways
 * instead of towards the stack's base. One such jump is a stack switch that
 * perf follows too (a signal handler on its sigaltstack, Go's systemstack
 * from g0 to the goroutine's stack); past a function built without frame
 * pointers the saved "frame pointer" is garbage, which the kernel follows for
 * up to 127 frames of made-up callers, and random values go down about half
 * of the time.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "bpfprof_abi.h"

/*
 * Variants: this file is built several times (Makefile, BPF_VARIANT_*),
 * and user space loads the one the running kernel can take
 * (user/capture/kernel_features.c). Dead code behind a .rodata switch cannot hide everything: a
 * bpf_loop callback's address is rejected before 5.13 and a kfunc whose
 * prototype or address the kernel lacks fails the load, even where no path
 * reaches it, so those differ at build time:
 *
 *  BPFPROF_LEGACY      1: Linux 5.10 to 5.16 (no bpf_loop, 5.17): bounded
 *                      loops, the off-CPU switch-out time in a hash map
 *                      keyed by tid instead of task storage, the current
 *                      task and its user registers by CO-RE reads instead of
 *                      bpf_get_current_task_btf (5.11) and bpf_task_pt_regs
 *                      (5.15), preallocated hash maps (perf_event programs
 *                      may use run-time allocated ones from 6.1 only)
 *  BPFPROF_TASK_WORK   1: the task work kfunc of 6.18 (the _impl name with a
 *                      trailing `void *aux__prog`), 2: that of 7.x (the
 *                      plain name, 4 arguments); 0: none, user stacks of
 *                      off-CPU blocks are walked at sys_exit
 *
 * Every variant declares the same maps, programs and global variables in the
 * same order: they share one skeleton (the Makefile checks it).
 */
#ifndef BPFPROF_LEGACY
#define BPFPROF_LEGACY 0
#endif
#ifndef BPFPROF_TASK_WORK
#define BPFPROF_TASK_WORK 0
#endif

/*
 * Run fn(i, ctx) for i = 0..n-1 until it returns non-zero: bpf_loop, whose
 * callback the verifier checks once, where the kernel has it; else a bounded
 * loop (5.3) the verifier follows iteration by iteration, kept rolled so the
 * program stays small.
 */
#if BPFPROF_LEGACY
#define for_each_step(n, fn, ctx)                                       \
	do {                                                            \
		__u32 __step;                                           \
		_Pragma("clang loop unroll(disable)") for (__step = 0; __step < (n); __step++) \
			if (fn(__step, ctx))                            \
				break;                                  \
	} while (0)
#define step_fn static __always_inline long
#else
#define for_each_step(n, fn, ctx) bpf_loop(n, fn, ctx, 0)
#define step_fn static long /* a bpf_loop callback */
#endif

char LICENSE[] SEC("license") = "Dual MIT/GPL";

const volatile __u32 filter_mode = BPFPROF_FILTER_ALL;
const volatile bool filter_cgroup = false;
const volatile bool follow_forks = false;
/*
 * Command mode: the forked command becomes a target when it execs, as perf's
 * enable_on_exec does, so the profiler's own child before exec is not sampled.
 */
volatile __u32 exec_target = 0;
/* --max-stack: user frames a walk stores at most (BPFPROF_MAX_USER_STACK) */
const volatile __u32 max_user_stack = BPFPROF_MAX_STACK;
/* A sample's ips[]: kernel frames, then user frames */
#define MAX_IPS (BPFPROF_MAX_STACK + BPFPROF_MAX_USER_STACK)
/* --check-user-stacks: compare each user stack walked here with the kernel's walk */
const volatile bool check_user_stack = false;
/* ns per USER_HZ clock tick, the unit of /proc/PID/stat's starttime (sysconf(_SC_CLK_TCK)) */
const volatile __u64 clock_tick_ns = 10000000;
/* Wake the consumer only once this many bytes are queued; it also polls on a timer. */
const volatile __u64 wakeup_bytes = 64 * 1024;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 * 1024 * 1024); /* resized from --ringbuf-size before load */
} samples SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BPFPROF_MAX_TARGETS);
	__type(key, __u32); /* tgid */
	__type(value, __u8);
} targets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BPFPROF_MAX_CGROUPS);
	__type(key, __u64); /* cgroup v2 id */
	__type(value, __u8);
} cgroups SEC(".maps");

/*
 * Processes that have had a sample, and how many (up to WAKE_FIRST_SAMPLES)
 * since their exec: those first samples each wake the reader at once, so
 * that its maps are read while it still lives (a 60 ms process would be gone
 * by the next batch), and read again once the dynamic loader has mapped its
 * libraries. LRU: old entries just go.
 */
#define WAKE_FIRST_SAMPLES 4
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32); /* tgid */
	__type(value, __u8); /* samples seen, counted up to WAKE_FIRST_SAMPLES */
} seen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, BPFPROF_STAT_NR);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/*
 * Slots of the per-CPU record and walk state (scratch, ustack, walk_state,
 * search_state): an off-CPU block's user walk (at sys_exit, or as task work)
 * runs with interrupts on, and a sample taken meanwhile on the same CPU
 * walks too, in its own slot. `walk_slot` says whose the running walk is; a
 * sample sets it and puts the old value back when it ends (samples do not
 * nest: the interrupt that runs on_sample does not run it again).
 */
#define WALK_SLOTS 2
#define SLOT_SAMPLE 0
#define SLOT_OFFCPU 1

struct walk_slot {
	__u32 cur; /* the slot of the walk that runs */
	__u32 saved; /* on_sample: the slot it interrupted */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct walk_slot);
} walk_slot SEC(".maps");

/* The slot of the walk that runs on this CPU */
static __always_inline __u32 cur_slot(void)
{
	__u32 zero = 0;
	struct walk_slot *s = bpf_map_lookup_elem(&walk_slot, &zero);

	return s && s->cur == SLOT_OFFCPU ? SLOT_OFFCPU : SLOT_SAMPLE;
}

/* The off-CPU path's walk begins (1) or ends (0). */
static __always_inline void slot_offcpu(bool on)
{
	__u32 zero = 0;
	struct walk_slot *s = bpf_map_lookup_elem(&walk_slot, &zero);

	if (s)
		s->cur = on ? SLOT_OFFCPU : SLOT_SAMPLE;
}

/* A sample's walk begins: the slot it interrupts is kept for slot_sample_end. */
static __always_inline void slot_sample_begin(void)
{
	__u32 zero = 0;
	struct walk_slot *s = bpf_map_lookup_elem(&walk_slot, &zero);

	if (s) {
		s->saved = s->cur;
		s->cur = SLOT_SAMPLE;
	}
}

static __always_inline void slot_sample_end(void)
{
	__u32 zero = 0;
	struct walk_slot *s = bpf_map_lookup_elem(&walk_slot, &zero);

	if (s)
		s->cur = s->saved;
}

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, WALK_SLOTS);
	__type(key, __u32);
	__type(value, struct bpfprof_sample);
} scratch SEC(".maps");

/* --check-user-stacks: the kernel's walk of the same user stack */
struct ustack_check {
	__u64 ips[BPFPROF_MAX_STACK];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ustack_check);
} ucheck SEC(".maps");

/* A copy of part of the user stack (at most a page), which the walk reads frames from. */
#define USTACK_CHUNK 4096
struct ustack_chunk {
	__u64 data[USTACK_CHUNK / 8 + 1]; /* + 1: the verifier's bound on data[off + 1] */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, WALK_SLOTS);
	__type(key, __u32);
	__type(value, struct ustack_chunk);
} ustack SEC(".maps");

static __always_inline void stat_inc(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &idx);

	if (v)
		*v += 1;
}

#if BPFPROF_LEGACY
/* struct cgroup's ids of its ancestors, from the root down, until 6.0 (then ancestors[], pointers) */
struct cgroup___pre61 {
	__u64 ancestor_ids[0];
} __attribute__((preserve_access_index));

/*
 * The id of the current task's cgroup's ancestor at level (0: the root), 0
 * above the task's own level: what bpf_get_current_ancestor_cgroup_id gives,
 * which perf_event programs cannot call on 5.10, by CO-RE reads of the
 * cgroup (kernel/cgroup/cgroup.c, cgroup_ancestor()).
 */
static __always_inline __u64 ancestor_cgroup_id(int level)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct cgroup *cgrp = BPF_CORE_READ(task, cgroups, dfl_cgrp), *anc = NULL;
	__u64 id = 0;

	if (!cgrp || level > BPF_CORE_READ(cgrp, level))
		return 0;
	if (bpf_core_field_exists(((struct cgroup___pre61 *)cgrp)->ancestor_ids)) {
		bpf_probe_read_kernel(&id, sizeof(id),
				      (void *)cgrp +
					      bpf_core_field_offset(struct cgroup___pre61, ancestor_ids) +
					      level * 8);
		return id;
	}
	bpf_probe_read_kernel(&anc, sizeof(anc),
			      (void *)cgrp + bpf_core_field_offset(struct cgroup, ancestors) + level * 8);
	return anc ? BPF_CORE_READ(anc, kn, id) : 0;
}
#else
#define ancestor_cgroup_id(level) bpf_get_current_ancestor_cgroup_id(level)
#endif

static __always_inline void stat_add(__u32 idx, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &idx);

	if (v)
		*v += n;
}

/* The task's cgroup or one of its ancestors is in `cgroups` (--cgroup covers its subtree). */
static __always_inline bool in_cgroups(void)
{
	__u64 cg = bpf_get_current_cgroup_id();
	int level;

	if (bpf_map_lookup_elem(&cgroups, &cg))
		return true;
	for (level = 0; level < BPFPROF_MAX_CGROUP_DEPTH; level++) {
		cg = ancestor_cgroup_id(level);
		if (!cg)
			break; /* above the task's own level */
		if (bpf_map_lookup_elem(&cgroups, &cg))
			return true;
	}
	return false;
}

/* x86-64 and arm64: kernel addresses have the top bit set, user addresses never */
static __always_inline bool kernel_addr(__u64 ip)
{
	return ip >> 63;
}

/*
 * --call-graph dwarf: each executable mapping of a process whose tables are
 * loaded (unwind_procs) has entries here (include/bpfprof_abi.h, "Unwind
 * tables"); map sizes are set by user space before load.
 */
const volatile bool unwind_tables_on = false;
/*
 * A sample the tables cannot walk yet (the process's are being built, or a
 * pc in no registered mapping) is sent with its registers and the top of
 * its stack (struct bpfprof_sample_copy) for user space to walk with the
 * same rows once they are built, instead of being walked by frame pointers.
 */
const volatile bool copy_stacks = false; /* off with --check-user-stacks, which compares every walk */

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 262144);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct bpfprof_unwind_key);
	__type(value, struct bpfprof_unwind_mapping);
} unwind_mappings SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, BPFPROF_MAX_UNWIND_TABLES);
	__type(key, __u32);
	__type(value, struct bpfprof_unwind_table);
} unwind_tables SEC(".maps");

/*
 * Each table's words in an array of its own size: BPF_F_INNER_MAP (5.10)
 * lets inner arrays differ in max_entries; BPF_F_MMAPABLE lets user space
 * fill one with a memcpy.
 */
struct unwind_words_map {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_INNER_MAP | BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64); /* struct bpfprof_unwind_words: words 2i (low half), 2i + 1 */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, BPFPROF_MAX_UNWIND_TABLES);
	__type(key, __u32);
	__array(values, struct unwind_words_map);
} unwind_rows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
#if !BPFPROF_LEGACY /* before 6.1 a perf_event program takes preallocated hash maps only */
	__uint(map_flags, BPF_F_NO_PREALLOC); /* memory as processes come, not 1.3 MiB up front */
#endif
	__type(key, __u32); /* tgid whose mappings are all in unwind_mappings */
	__type(value, __u64); /* when they were (last) registered: bpf_ktime_get_ns(), CLOCK_MONOTONIC */
} unwind_procs SEC(".maps");

/*
 * A frame-pointer step whose return address is in no registered mapping is
 * taken for garbage (a register that was not a frame pointer), except this
 * long after a process's registration: there it is as likely code mapped
 * since (V8's code space appears 0.2 s into node, after its first
 * registration), so the sample goes to user space as a copy, walked once
 * the process is registered again. Bounded in time, so that a program
 * whose rbp is not a frame pointer (a JVM's compiled code) costs copies
 * for its first seconds only.
 */
#define YOUNG_NS (2ULL * 1000 * 1000 * 1000)

/*
 * The walk's state between bpf_loop steps: scalars only (the maps are looked
 * up in each step), and no counter carried from step to step, since the
 * verifier follows each different value of one through every step; step i
 * stores the (i + 2)th user address, at e->ips[nk + 1 + i].
 *
 * Registers are those of the frame being unwound: pc is its instruction
 * (the interrupted one for the leaf and below a signal frame, else a return
 * address, whose call is at pc - 1), sp and bp its rsp and rbp.
 */
struct walk {
	__u64 pc, sp, bp;
	__u64 base; /* user address of the chunk's first byte */
	__u64 len; /* bytes of the chunk that hold a copy; 0: none yet */
	__u64 nk; /* kernel addresses before the user ones */
	__u64 end; /* e->ips[nk..end) hold the user addresses */
	__u32 tgid;
	__u32 stop; /* enum bpfprof_stat of the walk's end; 0 while it goes on */
	__u8 tables; /* the process's mappings and tables are loaded */
	__u8 leaf; /* pc is not a return address */
	__u8 fp_prev; /* pc came from a frame-pointer step: not checked yet */
	__u8 jumped; /* a frame-pointer step went down or sideways once */
	__u8 walking; /* a walk was begun (walk_begin) */
	/*
	 * The sample goes to user space as a stack copy (BPFPROF_STAT_COPY_*:
	 * why), not as this walk's result: sample_send
	 */
	__u8 copy;
	__u8 kregs; /* ip0, sp0, bp0 are the task's saved user registers, not the sample's */
	__u8 after_syscall; /* ip0 follows a syscall instruction: its row is ip0 - 1's (walk_begin) */
	__u8 young; /* the process was registered less than YOUNG_NS before the sample */
	__u8 pad[2];
	__u64 ip0, sp0, bp0; /* the registers the walk began from */
	__u32 now; /* the sample's time >> 30 (about seconds): tables' `used` */
	__u32 steps; /* steps done: the legacy variant's walk goes on across tail calls */
};

/*
 * The walk's state lives in a map value, not on the BPF stack: the verifier
 * tracks no values in maps, so every bpf_loop step starts from the same
 * state and is verified once, where exact values on the stack (a flag, a
 * copy length) made it follow every combination through every step.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, WALK_SLOTS);
	__type(key, __u32);
	__type(value, struct walk);
} walk_state SEC(".maps");

/*
 * Read the 8 bytes at user address addr of the stack. Reads go through a copy
 * of the stack a page at a time (from the frame's sp, or the page's start,
 * to the page's end): every user access has a fixed cost (SMAP's stac/clac,
 * which a VM may trap), and a walk reads upwards, each page once. A copy
 * never starts below sp, where nothing of the walk lies, and never crosses
 * into a page the walk has not reached, which may not be mapped
 * (bpf_probe_read_user is all or nothing).
 */
static __always_inline int stack_read(struct walk *w, struct ustack_chunk *c, __u64 addr,
				      __u64 *val)
{
	__u64 off, start, len;

	if (addr & 7)
		return bpf_probe_read_user(val, 8, (const void *)addr) ? -1 : 0;
	if (!w->len || addr < w->base || addr + 8 > w->base + w->len) {
		start = addr & ~(__u64)(USTACK_CHUNK - 1);
		if (w->sp > start && w->sp <= addr)
			start = w->sp & ~7ULL;
		len = USTACK_CHUNK - (start & (USTACK_CHUNK - 1));
		if (bpf_probe_read_user(c->data, len & (2 * USTACK_CHUNK - 1), (const void *)start))
			return -1;
		w->base = start;
		w->len = len;
	}
	off = ((addr - w->base) / 8) & (USTACK_CHUNK / 8 - 1);
	*val = c->data[off];
	return 0;
}

/* Binary search state: table `table`'s rows l..r-1, the last whose low pc bits are <= off */
struct search {
	__u32 table;
	__u32 l, r; /* word indices */
	__u32 off; /* the pc's low 16 bits */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, WALK_SLOTS);
	__type(key, __u32);
	__type(value, struct search);
} search_state SEC(".maps");

/* Word i of table `table` (its words map `rows`); false when out of range */
static __always_inline bool table_word(void *rows, __u32 i, __u32 *val)
{
	__u32 key = i >> 1;
	__u64 *v;

	v = bpf_map_lookup_elem(rows, &key);
	if (!v)
		return false;
	/*
	 * little-endian: w[0] is the low half. No branch: the legacy variant's
	 * verifier follows each path through 16 frames x 17 search steps (a
	 * ternary here cost 14 % of walk_sample's 800,000 verified insns)
	 */
	*val = *v >> ((i & 1) * 32);
	return true;
}

step_fn search_step(__u32 i, void *data)
{
	struct search *q;
	void *rows;
	__u32 m, word, slot = cur_slot();

	q = bpf_map_lookup_elem(&search_state, &slot);
	if (!q || q->r - q->l <= 1)
		return 1;
	rows = bpf_map_lookup_elem(&unwind_rows, &q->table);
	if (!rows)
		return 1;
	m = q->l + (q->r - q->l) / 2;
	if (!table_word(rows, m, &word))
		return 1;
	if (BPFPROF_UNWIND_ROW_PC(word) <= q->off)
		q->l = m;
	else
		q->r = m;
	return 0;
}

/*
 * The rule of the row that covers rel in table `table`: its 64 KiB page's
 * rows from the page index, then a binary search among them (at most 65536:
 * 16 steps). `now`: the walk's time stamp, kept in the table's `used`.
 */
static __always_inline __u32 find_rule(__u32 table, __u64 rel, __u32 now)
{
	struct bpfprof_unwind_table *t = bpf_map_lookup_elem(&unwind_tables, &table);
	struct search *q;
	void *rows;
	__u32 page, lo, hi, word, slot = cur_slot();

	if (!t || !t->nr_pages || (rel >> BPFPROF_UNWIND_PAGE_SHIFT) >= t->nr_pages)
		return BPFPROF_UNWIND_NONE;
	if (t->used != now)
		t->used = now; /* for user space's choice of what goes when memory runs out */
	rows = bpf_map_lookup_elem(&unwind_rows, &table);
	page = rel >> BPFPROF_UNWIND_PAGE_SHIFT;
	if (!rows || !table_word(rows, page, &lo) || !table_word(rows, page + 1, &hi) || lo >= hi)
		return BPFPROF_UNWIND_NONE;
	if (!table_word(rows, lo, &word) || BPFPROF_UNWIND_ROW_PC(word) > (rel & 0xffff))
		return BPFPROF_UNWIND_NONE;
	q = bpf_map_lookup_elem(&search_state, &slot);
	if (!q)
		return BPFPROF_UNWIND_NONE;
	q->table = table;
	q->l = lo;
	q->r = hi;
	q->off = rel & 0xffff;
	for_each_step(17, search_step, NULL);
	rows = bpf_map_lookup_elem(&unwind_rows, &table);
	t = bpf_map_lookup_elem(&unwind_tables, &table);
	if (!rows || !t || !table_word(rows, q->l, &word) ||
	    BPFPROF_UNWIND_ROW_RULE(word) >= t->nr_rules ||
	    !table_word(rows, t->rules + BPFPROF_UNWIND_ROW_RULE(word), &word))
		return BPFPROF_UNWIND_NONE;
	return word;
}

static __always_inline long walk_stop(struct walk *w, __u32 reason)
{
	w->stop = reason;
	return 1;
}

/*
 * A frame-pointer step from a leaf frame whose function had not set up (or
 * had already torn down) its frame: at `push %rbp` the return address is at
 * [sp]; right after it ([pc - 1] is the push, [pc] `mov %rsp,%rbp`) at
 * [sp + 8]; at `ret` at [sp], rbp already the caller's (async-profiler
 * stackFrame_x64.cpp, framehop's prologue analysis). Returns the bytes of
 * stack the frame holds above sp, or 0 when the frame is a normal one.
 */
static __always_inline __u64 leaf_prologue(__u64 pc)
{
	__u8 code[4];

	if (bpf_probe_read_user(code, sizeof(code), (const void *)(pc - 1)))
		return 0;
	if (code[1] == 0x55 || code[1] == 0xc3 || (code[1] == 0xf3 && code[2] == 0xc3))
		return 8; /* push %rbp; ret; rep ret */
	if (code[0] == 0x55 && code[1] == 0x48 && code[2] == 0x89 && code[3] == 0xe5)
		return 16; /* push %rbp done, mov %rsp,%rbp next */
	return 0;
}

/*
 * One frame. Returns 1 to stop the walk (w->stop says why). Each rule comes
 * down to where the caller's return address, rbp and rsp are, so that the
 * stack is read in one place (fewer paths for the verifier to follow).
 */
step_fn walk_step(__u32 i, void *data)
{
	struct walk *w;
	struct bpfprof_sample *e;
	struct ustack_chunk *c;
	struct bpfprof_unwind_mapping *m;
	struct bpfprof_unwind_key key;
	__u64 pc, sp, bp, look, cfa, ra = 0, idx;
	__u64 ra_at, bp_at = 0, sp_at = 0, next_sp;
	__u32 zero = 0, rule = BPFPROF_UNWIND_NONE, kind;
	__s32 slot;
	bool fp_step = false, leaf = false;
	__u32 wslot = cur_slot();

	w = bpf_map_lookup_elem(&walk_state, &wslot);
	e = bpf_map_lookup_elem(&scratch, &wslot);
	c = bpf_map_lookup_elem(&ustack, &wslot);
	if (!w || !e || !c)
		return 1;
	pc = w->pc;
	sp = w->sp;
	bp = w->bp;
	look = w->leaf ? pc : pc - 1; /* a call may be the last instruction of a function */
	if (w->tables) {
		key.prefixlen = 96;
		key.tgid = bpf_htonl(w->tgid);
		key.addr = bpf_cpu_to_be64(look);
		m = bpf_map_lookup_elem(&unwind_mappings, &key);
		if (!m) {
			/* a frame-pointer step's return address outside the code: garbage, not a frame */
			if (w->fp_prev && w->end > w->nk + 1) {
				w->end--;
				/* or code mapped since: see YOUNG_NS */
				if (!BPFPROF_LEGACY && copy_stacks && w->young &&
				    wslot == SLOT_SAMPLE)
					w->copy = BPFPROF_STAT_COPY_FP_UNMAPPED;
			}
			/*
			 * a pc from the registers or a CFI step is code: a mapping
			 * registered since the process's maps were read (a library
			 * the dynamic loader mapped, dlopen), for user space to walk
			 */
			else if (!BPFPROF_LEGACY && copy_stacks && !w->fp_prev && wslot == SLOT_SAMPLE)
				w->copy = BPFPROF_STAT_COPY_NO_MAPPING; /* legacy: see sample_send */
			return walk_stop(w, BPFPROF_STAT_WALK_NO_MAPPING);
		}
		if (m->table != BPFPROF_UNWIND_NO_TABLE)
			rule = find_rule(m->table, look - m->bias, w->now);
	}

	kind = BPFPROF_UNWIND_KIND(rule);
	if (kind == BPFPROF_UNWIND_END)
		return walk_stop(w, BPFPROF_STAT_WALK_END);
	if (kind == BPFPROF_UNWIND_CFA) {
		cfa = ((rule & BPFPROF_UNWIND_CFA_RBP) ? bp : sp) + BPFPROF_UNWIND_CFA_OFF(rule);
		ra_at = cfa - 8;
		slot = BPFPROF_UNWIND_RBP_SLOT(rule);
		if (slot)
			bp_at = cfa + (__s64)slot * 8;
		next_sp = cfa;
	} else if (kind == BPFPROF_UNWIND_PLT) {
		cfa = sp + BPFPROF_UNWIND_CFA_OFF(rule) +
		      ((pc & 15) >= (__u64)BPFPROF_UNWIND_RBP_SLOT(rule) ? 8 : 0);
		ra_at = cfa - 8;
		next_sp = cfa;
	} else if (kind == BPFPROF_UNWIND_SIGNAL) {
		/*
		 * __restore_rt: rsp points at the rt_sigframe's ucontext (the
		 * handler's return popped pretcode); its uc_mcontext, struct
		 * sigcontext of arch/x86/include/uapi/asm/sigcontext.h, starts 40
		 * bytes in: rbp at +80, rsp at +120, rip at +128. The interrupted
		 * pc is not a return address.
		 */
		ra_at = sp + 40 + 128;
		bp_at = sp + 40 + 80;
		sp_at = sp + 40 + 120;
		next_sp = 0;
		leaf = true;
	} else {
		/* no row: a frame-pointer step, { saved rbp, return address } at rbp */
		__u64 above = (i == 0 && w->leaf && !check_user_stack) ? leaf_prologue(pc) : 0;

		fp_step = true;
		if (above) {
			ra_at = sp + above - 8;
			next_sp = sp + above;
		} else {
			if (!bp || (bp & 7) || kernel_addr(bp) || bp < sp)
				return walk_stop(w, BPFPROF_STAT_WALK_FP_END);
			ra_at = bp + 8;
			bp_at = bp;
			next_sp = bp + 16;
		}
	}

	if (stack_read(w, c, ra_at, &ra))
		return walk_stop(w,
				 fp_step ? BPFPROF_STAT_WALK_FP_END : BPFPROF_STAT_WALK_READ_FAULT);
	if (bp_at) {
		__u64 old_bp = bp;

		if (stack_read(w, c, bp_at, &bp))
			return walk_stop(w, fp_step ? BPFPROF_STAT_WALK_FP_END :
						      BPFPROF_STAT_WALK_READ_FAULT);
		if (fp_step && bp <= old_bp) {
			/* one jump is a stack switch (sigaltstack, Go's systemstack); two are garbage */
			if (bp == old_bp || w->jumped)
				bp = 0;
			w->jumped = 1;
		}
	}
	if (sp_at) {
		if (stack_read(w, c, sp_at, &next_sp))
			return walk_stop(w, BPFPROF_STAT_WALK_READ_FAULT);
		w->len = 0; /* the interrupted stack may be another one (sigaltstack) */
	}
	stat_inc(fp_step ? BPFPROF_STAT_FRAMES_FP : BPFPROF_STAT_FRAMES_CFI);

	if (!ra || kernel_addr(ra))
		return walk_stop(w, fp_step ? BPFPROF_STAT_WALK_FP_END : BPFPROF_STAT_WALK_BAD);
	if (!fp_step && !leaf && next_sp <= sp)
		return walk_stop(w, BPFPROF_STAT_WALK_BAD); /* CFI that does not go up the stack */
	idx = w->nk + 1 + i;
	if (idx >= w->nk + max_user_stack || idx >= MAX_IPS)
		return walk_stop(w, BPFPROF_STAT_WALK_LIMIT);
	e->ips[idx] = ra;
	w->end = idx + 1;
	w->pc = ra;
	w->sp = next_sp;
	w->bp = bp;
	w->leaf = leaf;
	w->fp_prev = fp_step;
	if (fp_step && !bp && !w->tables)
		return walk_stop(w, BPFPROF_STAT_WALK_FP_END);
	return 0;
}

/*
 * Begin a walk of the user stack from registers (ip, sp, bp) into
 * e->ips[nk...]: the leaf is stored, the rest is walk_step's, from step 0.
 * at_entry: the registers were saved at kernel entry (a sample taken in
 * kernel mode, an off-CPU block). Returns false when there is nothing to walk.
 */
static __always_inline bool walk_begin(struct bpfprof_sample *e, __u64 nk, __u32 tgid, __u64 ip,
				       __u64 sp, __u64 bp, bool at_entry)
{
	struct walk *w;
	__u32 slot = cur_slot();
	__u64 *reg;
	__u8 insn[2];

	w = bpf_map_lookup_elem(&walk_state, &slot);
	if (!w)
		return false;
	__builtin_memset(w, 0, sizeof(*w));
	if (!ip || kernel_addr(ip) || nk >= MAX_IPS)
		return false;
	w->walking = 1;
	w->pc = ip;
	w->sp = sp;
	w->bp = bp;
	w->nk = nk;
	w->end = nk + 1;
	w->tgid = tgid;
	w->leaf = 1;
	/*
	 * In a system call ip is the instruction after the `syscall`, which may
	 * be its function's last: glibc's __restore_rt (mov $15,%eax; syscall)
	 * ends its FDE there, and a sample in rt_sigreturn found no row (the
	 * matrix's nofp checks lost 0.5-1 % of their stacks so under load).
	 * Its row is looked up inside the instruction, at ip - 1, as for a
	 * return address; the CFA there is the same, `syscall` moves no stack.
	 */
	if (at_entry && !bpf_probe_read_user(insn, sizeof(insn), (const void *)(ip - 2)) &&
	    insn[0] == 0x0f && insn[1] == 0x05) {
		w->leaf = 0;
		w->after_syscall = 1;
	}
	w->now = e->time_ns >> 30;
	e->ips[nk] = ip;
	w->ip0 = ip;
	w->sp0 = sp;
	w->bp0 = bp;
	w->kregs = at_entry;
	reg = unwind_tables_on ? bpf_map_lookup_elem(&unwind_procs, &tgid) : NULL;
	w->tables = !!reg;
	w->young = reg && e->time_ns - *reg < YOUNG_NS;
	if (unwind_tables_on && !w->tables) {
		/* a sample's stack is copied for user space; an off-CPU block's is walked by frame pointers */
		if (copy_stacks && slot == SLOT_SAMPLE) {
			w->copy = BPFPROF_STAT_COPY_NOT_READY;
			return false;
		}
		stat_inc(BPFPROF_STAT_WALK_NOT_READY);
	}
	return true;
}

/* The sample's stack is to be copied for user space (walk_begin, walk_step) */
static __always_inline __u32 walk_copy(void)
{
	struct walk *w;
	__u32 slot;

	if (!copy_stacks)
		return 0; /* the verifier drops the copy's paths (read-only data) */
	slot = cur_slot();
	w = bpf_map_lookup_elem(&walk_state, &slot);
	return w && slot == SLOT_SAMPLE ? w->copy : 0;
}

/*
 * The walk's end: the number of user addresses stored, and in *stop the
 * reason it ended (0 when there was no walk).
 */
static __always_inline __u64 walk_end(__u32 *stop)
{
	struct walk *w;
	__u32 slot = cur_slot();

	*stop = 0;
	w = bpf_map_lookup_elem(&walk_state, &slot);
	if (!w || !w->walking)
		return 0;
	*stop = w->stop ? w->stop : BPFPROF_STAT_WALK_LIMIT;
	stat_inc(*stop);
	return w->end > w->nk ? w->end - w->nk : 0;
}

/* The number of user addresses the walk stored so far (as walk_end gives it, uncounted). */
static __always_inline __u64 walk_nu(void)
{
	struct walk *w;
	__u32 slot = cur_slot();
	__u64 n;

	w = bpf_map_lookup_elem(&walk_state, &slot);
	if (!w || !w->walking)
		return 0;
	n = w->end > w->nk ? w->end - w->nk : 0;
	return n > BPFPROF_MAX_USER_STACK ? BPFPROF_MAX_USER_STACK : n;
}

#if BPFPROF_LEGACY
/*
 * Without bpf_loop the verifier follows every step of a bounded loop, and
 * each frame's binary search with it: a whole walk in one program goes past
 * its 8192 pending branches. So a program walks WALK_FRAMES_PER_PROG frames
 * and tail-calls itself for the next ones, as the OpenTelemetry profiler and
 * Parca walk (16 frames a call: --max-stack's 512 frames in the 32 tail
 * calls a sample may make, the leaf being the first program's). Returns
 * true when the walk is over.
 */
#define WALK_FRAMES_PER_PROG 16
static __always_inline bool walk_some(void)
{
	struct walk *w;
	__u32 slot = cur_slot(), k;

	for (k = 0; k < WALK_FRAMES_PER_PROG; k++) {
		w = bpf_map_lookup_elem(&walk_state, &slot);
		if (!w || !w->walking || w->steps + 1 >= max_user_stack)
			return true;
		if (walk_step(w->steps, NULL))
			return true;
		w = bpf_map_lookup_elem(&walk_state, &slot);
		if (!w)
			return true;
		w->steps++;
	}
	return false;
}
#endif

/*
 * The running task. Before 5.11 (bpf_get_current_task_btf) its fields are
 * read with CO-RE reads, as here everywhere, so both give the same code.
 */
static __always_inline struct task_struct *current_task(void)
{
#if BPFPROF_LEGACY
	return (struct task_struct *)bpf_get_current_task();
#else
	return bpf_get_current_task_btf();
#endif
}

/*
 * The process's start time as /proc/PID/stat's starttime gives it (the
 * leader's start_boottime in USER_HZ ticks; an exec keeps it): with the tgid,
 * the identity of a process that a reused pid cannot take
 * (struct bpfprof_sample.start).
 */
static __always_inline __u32 process_start(struct task_struct *t)
{
	__u64 ns = BPF_CORE_READ(t, group_leader, start_boottime);

	return clock_tick_ns ? (__u32)(ns / clock_tick_ns) : 0;
}

/*
 * x86-64's kernel stack size (THREAD_SIZE: 16 KiB, 32 KiB with KASAN) for
 * the variant without bpf_task_pt_regs; set by user space.
 */
const volatile __u64 thread_size = 16384;

/*
 * The user registers a task saved at its kernel entry: bpf_task_pt_regs
 * (5.15), else task_pt_regs() of arch/x86/include/asm/processor.h, the
 * pt_regs at the top of the task's kernel stack (the OpenTelemetry profiler
 * does the same). That one is checked: a user code segment (__USER_CS, 0x33)
 * or nothing, so a wrong stack size gives no user stack, never garbage.
 */
static __always_inline struct pt_regs *task_user_regs(struct task_struct *task)
{
#if BPFPROF_LEGACY
	struct pt_regs *regs;
	void *stack = BPF_CORE_READ(task, stack);

	if (!stack)
		return NULL;
	regs = (struct pt_regs *)(stack + thread_size) - 1;
	if (BPF_CORE_READ(regs, cs) != 0x33)
		return NULL;
	return regs;
#else
	return (struct pt_regs *)bpf_task_pt_regs(task);
#endif
}

/*
 * Begin the user walk from the registers at the sample: the interrupted ones
 * for a sample taken in user mode, else those saved at kernel entry (none
 * for kernel threads, whose tasks have no mm). Returns false when there is
 * no user stack.
 */
static __always_inline bool user_stack_begin(struct bpf_perf_event_data *ctx,
					     struct bpfprof_sample *e, __u64 nk, __u32 tgid)
{
	__u64 ip = PT_REGS_IP(&ctx->regs), sp = PT_REGS_SP(&ctx->regs), bp = PT_REGS_FP(&ctx->regs);
	bool at_entry = nk || kernel_addr(ip);

	if (at_entry) {
		struct task_struct *task = current_task();
		struct pt_regs *regs;

		if (!BPF_CORE_READ(task, mm))
			ip = 0; /* a kernel thread: no user stack */
		regs = ip ? task_user_regs(task) : NULL;
		ip = regs ? PT_REGS_IP_CORE(regs) : 0;
		sp = regs ? PT_REGS_SP_CORE(regs) : 0;
		bp = regs ? PT_REGS_FP_CORE(regs) : 0;
		return walk_begin(e, nk, tgid, ip, sp, bp, true);
	}
	return walk_begin(e, nk, tgid, ip, sp, bp, false);
}

#include "python.bpf.h"

/* Whether the current task's samples are kept: a target tgid, in a --cgroup subtree. */
static __always_inline bool wanted(__u32 tgid)
{
	if (filter_mode == BPFPROF_FILTER_TGID && !bpf_map_lookup_elem(&targets, &tgid))
		return false;
	return !filter_cgroup || in_cgroups();
}

/* --check-unwind's copy of a sample's registers, stack and walk (below) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bpfprof_ustack_copy);
} ucopy SEC(".maps");

/*
 * One user frame of the walk's result (e->ips[nk + i]) for the two checks:
 * compared with the kernel's (ucheck, --check-user-stacks) or copied for user
 * space (ucopy, --check-unwind). The maps are looked up in each step: the
 * verifier does not carry map values into a bpf_loop callback.
 */
struct user_ips {
	__u64 nk, nu;
	bool copy; /* copy into ucopy, else compare with ucheck */
	bool differ;
};

step_fn user_ip_step(__u32 i, void *data)
{
	struct user_ips *m = data;
	struct bpfprof_ustack_copy *u;
	struct bpfprof_sample *e;
	struct ustack_check *c;
	__u32 zero = 0;
	__u64 idx = m->nk + i;

	e = bpf_map_lookup_elem(&scratch, &zero);
	if (!e || i >= m->nu || i >= BPFPROF_MAX_STACK || idx >= MAX_IPS)
		return 1;
	if (m->copy) {
		u = bpf_map_lookup_elem(&ucopy, &zero);
		if (!u)
			return 1;
		u->ips[i] = e->ips[idx];
		return 0;
	}
	c = bpf_map_lookup_elem(&ucheck, &zero);
	if (!c)
		return 1;
	if (e->ips[idx] != c->ips[i]) {
		m->differ = true;
		return 1;
	}
	return 0;
}

/*
 * --check-user-stacks: the walk above is right where its addresses are the
 * kernel's (perf_callchain_user), or their first part: the kernel goes on
 * through garbage frames where this walk stops (see the header comment).
 */
static __always_inline void check_user_walk(struct bpf_perf_event_data *ctx, __u64 nk, __u64 nu)
{
	struct ustack_check *c;
	struct user_ips m = { .nk = nk, .nu = nu };
	__u32 zero = 0;
	long ret;

	c = bpf_map_lookup_elem(&ucheck, &zero);
	if (!c)
		return;
	ret = bpf_get_stack(ctx, c->ips, sizeof(c->ips), BPF_F_USER_STACK);
	if (ret < 0 || (__u64)ret / 8 < nu) {
		stat_inc(BPFPROF_STAT_USTACK_DIFF);
		return;
	}
	for_each_step(BPFPROF_MAX_STACK, user_ip_step, &m);
	if (m.differ)
		stat_inc(BPFPROF_STAT_USTACK_DIFF);
	else
		stat_inc((__u64)ret / 8 == nu ? BPFPROF_STAT_USTACK_SAME :
						BPFPROF_STAT_USTACK_SHORTER);
}

/*
 * A process's first samples after its exec are also announced in `notices`
 * (struct bpfprof_notice), a small ring buffer that user space reads before
 * the samples' backlog, so that the process's maps and files are read while
 * it lives even when thousands of records wait before its own: at its first
 * sample, and at its first samples 10, 30 and 70 ms after it (what the
 * dynamic loader and a runtime map come in its first milliseconds: a 100 ms
 * JIT process's jitdump is mapped after its first sample). Full (2 730
 * notices unread): the notice is left out, the record still goes and is
 * read in its turn, as without notices.
 */
#define NOTICES 4
#define NOTICE_STEP_NS (10ULL * 1000 * 1000)
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} notices SEC(".maps");

struct notice_state {
	__u64 first_ns; /* the first sample's time */
	__u32 nr; /* notices sent */
	__u32 pad;
};

/* Processes noticed since their exec (on_exec forgets one). LRU: old entries just go. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32); /* tgid */
	__type(value, struct notice_state);
} noticed SEC(".maps");

static __always_inline void notice(__u32 tgid)
{
	__u64 id = bpf_get_current_pid_tgid(), now = bpf_ktime_get_ns();
	struct notice_state *st = bpf_map_lookup_elem(&noticed, &tgid), first = { .first_ns = now };
	struct bpfprof_notice n = {
		.type = BPFPROF_REC_NOTICE,
		.tgid = tgid,
		.time_ns = now,
	};

	if (!st) {
		bpf_map_update_elem(&noticed, &tgid, &first, BPF_ANY);
		st = bpf_map_lookup_elem(&noticed, &tgid);
		if (!st)
			return;
	} else if (st->nr >= NOTICES ||
		   now - st->first_ns < ((1ULL << st->nr) - 1) * NOTICE_STEP_NS) {
		return;
	}
	n.nr_seen = ++st->nr;
	/* an off-CPU block may be sent from another task: its start is then unknown */
	if (id >> 32 == tgid)
		n.start = process_start(current_task());
	bpf_ringbuf_output(&notices, &n, sizeof(n), BPF_RB_FORCE_WAKEUP);
}

/*
 * The ring buffer's wake-up policy for a record of process tgid: the reader
 * is woken once wakeup_bytes are waiting, and for a process's first
 * WAKE_FIRST_SAMPLES records (its maps are read while it still runs).
 */
static __always_inline __u64 ring_wakeup(__u32 tgid)
{
	__u64 flags = bpf_ringbuf_query(&samples, BPF_RB_AVAIL_DATA) >= wakeup_bytes ?
			      BPF_RB_FORCE_WAKEUP :
			      BPF_RB_NO_WAKEUP;
	__u8 *nr_seen = bpf_map_lookup_elem(&seen, &tgid);

	if (!nr_seen) {
		__u8 one = 1;

		bpf_map_update_elem(&seen, &tgid, &one, BPF_ANY);
		flags = BPF_RB_FORCE_WAKEUP;
	} else if (*nr_seen < WAKE_FIRST_SAMPLES) {
		*nr_seen += 1;
		flags = BPF_RB_FORCE_WAKEUP;
	}
	notice(tgid);
	return flags;
}

/*
 * --check-unwind: every check_unwind_every-th sample taken in user mode also
 * sends its registers and the top BPFPROF_CHECK_STACK_SIZE bytes of its
 * stack, next to the walk's result, for user space to unwind with libdwfl.
 */
const volatile __u32 check_unwind_every = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} ucopy_tick SEC(".maps");

static __always_inline void send_ustack_copy(struct bpf_perf_event_data *ctx, __u32 tgid, __u32 tid,
					     __u64 nk, __u64 nu, __u32 stop)
{
	struct pt_regs *r = (struct pt_regs *)&ctx->regs;
	struct bpfprof_ustack_copy *u;
	struct user_ips ci = { .nk = nk, .nu = nu, .copy = true };
	__u32 zero = 0, *tick;
	__u64 sp, first, second, size;

	tick = bpf_map_lookup_elem(&ucopy_tick, &zero);
	u = bpf_map_lookup_elem(&ucopy, &zero);
	if (!tick || !u || ++*tick < check_unwind_every)
		return;
	*tick = 0;
	u->type = BPFPROF_REC_USTACK_COPY;
	u->tgid = tgid;
	u->tid = tid;
	u->nr_user = nu > BPFPROF_MAX_STACK ? BPFPROF_MAX_STACK : nu; /* the copy's first frames */
	u->end_reached = stop == BPFPROF_STAT_WALK_END && nu <= BPFPROF_MAX_STACK;
	u->regs[0] = r->ax;
	u->regs[1] = r->dx;
	u->regs[2] = r->cx;
	u->regs[3] = r->bx;
	u->regs[4] = r->si;
	u->regs[5] = r->di;
	u->regs[6] = r->bp;
	u->regs[7] = r->sp;
	u->regs[8] = r->r8;
	u->regs[9] = r->r9;
	u->regs[10] = r->r10;
	u->regs[11] = r->r11;
	u->regs[12] = r->r12;
	u->regs[13] = r->r13;
	u->regs[14] = r->r14;
	u->regs[15] = r->r15;
	u->regs[16] = r->ip;
	for_each_step(BPFPROF_MAX_STACK, user_ip_step, &ci);
	/* to the end of sp's page, then the next page: each read all or nothing */
	sp = r->sp;
	first = USTACK_CHUNK - (sp & (USTACK_CHUNK - 1));
	size = 0;
	if (!bpf_probe_read_user(u->stack, first & (2 * USTACK_CHUNK - 1), (const void *)sp)) {
		size = first;
		second = BPFPROF_CHECK_STACK_SIZE - first;
		if (second > USTACK_CHUNK)
			second = USTACK_CHUNK;
		if (first <= USTACK_CHUNK && second && second <= USTACK_CHUNK &&
		    !bpf_probe_read_user(u->stack + first, second, (const void *)(sp + first)))
			size += second;
	}
	u->stack_size = size;
	size += BPFPROF_USTACK_COPY_HDR_SIZE;
	if (size > sizeof(*u))
		size = sizeof(*u);
	if (bpf_ringbuf_output(&samples, u, size, 0))
		stat_inc(BPFPROF_STAT_DROPPED);
	else
		stat_inc(BPFPROF_STAT_CHECK_COPIES);
}

/* The sample's record with its stack copied (struct bpfprof_sample_copy), and its user registers */
struct sample_copy_buf {
	struct bpfprof_sample_copy c;
	struct pt_regs regs;
};

/*
 * One a CPU, by CPU number (a per-CPU value may not pass 32 KiB): user space
 * sets max_entries to the possible CPUs before load
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sample_copy_buf);
} scopy SEC(".maps");

#define COPY_DATA_MAX (BPFPROF_MAX_STACK * 8 + BPFPROF_COPY_STACK_SIZE)

/*
 * Send sample e (nk kernel addresses) as a stack copy for user space to
 * walk: its header and kernel addresses, the registers the walk began from
 * (the sample's, or those the task saved at its kernel entry), and the user
 * stack from rsp, a page at a time (bpf_probe_read_user is all or nothing:
 * the copy ends at the first page not mapped), at most
 * BPFPROF_COPY_STACK_SIZE. The stack has not changed since the sample: the
 * program runs in its interrupt, before the task goes on.
 */
static __always_inline void send_sample_copy(struct bpf_perf_event_data *ctx,
					     struct bpfprof_sample *e, __u64 nk)
{
	struct sample_copy_buf *b;
	struct walk *w;
	struct pt_regs *r, *ur;
	__u32 cpu = bpf_get_smp_processor_id(), slot = SLOT_SAMPLE;
	__u64 sp, off, first, copied = 0, end, size;
	__u32 holes;

	b = bpf_map_lookup_elem(&scopy, &cpu);
	w = bpf_map_lookup_elem(&walk_state, &slot);
	if (!b || !w) {
		/* no buffer for this CPU: the sample is lost, and counted */
		stat_inc(BPFPROF_STAT_DROPPED);
		return;
	}
	r = &b->regs;
	if (w->kregs) {
		ur = task_user_regs(current_task());
		if (!ur || bpf_probe_read_kernel(r, sizeof(*r), ur))
			__builtin_memset(r, 0, sizeof(*r));
	} else {
		*r = ctx->regs;
	}
	b->c.type = BPFPROF_REC_SAMPLE_COPY;
	b->c.why = w->copy;
	/* walk_begin's finding (w->leaf is the current frame's once the walk has stepped) */
	b->c.after_syscall = w->after_syscall;
	b->c.regs[0] = r->ax;
	b->c.regs[1] = r->dx;
	b->c.regs[2] = r->cx;
	b->c.regs[3] = r->bx;
	b->c.regs[4] = r->si;
	b->c.regs[5] = r->di;
	b->c.regs[6] = w->bp0;
	b->c.regs[7] = w->sp0;
	b->c.regs[8] = r->r8;
	b->c.regs[9] = r->r9;
	b->c.regs[10] = r->r10;
	b->c.regs[11] = r->r11;
	b->c.regs[12] = r->r12;
	b->c.regs[13] = r->r13;
	b->c.regs[14] = r->r14;
	b->c.regs[15] = r->r15;
	b->c.regs[16] = w->ip0;
	b->c.code_ok = !bpf_probe_read_user(b->c.code, sizeof(b->c.code), (const void *)(w->ip0 - 1));
	e->nr_user = 0;
	e->nr_py = 0;
	e->py_stop = 0;
	__builtin_memcpy(b->c.hdr, e, BPFPROF_SAMPLE_HDR_SIZE);
	nk &= 0xff;
	if (nk > BPFPROF_MAX_STACK)
		nk = BPFPROF_MAX_STACK;
	off = nk * 8;
	if (off && bpf_probe_read_kernel(b->c.data, off, e->ips))
		return;
	/*
	 * To the end of rsp's page, then whole pages. A page not present is a
	 * hole (bpf_probe_read_user zeroes what it could not read), not the
	 * end: rsp's own page is missing in the fault that brings a new stack
	 * page in, and a large frame's untouched middle may be, while the
	 * return addresses above are there. The copy ends after the last page
	 * read (past the stack's top every read fails).
	 */
	sp = w->sp0;
	first = USTACK_CHUNK - (sp & (USTACK_CHUNK - 1));
	holes = 0;
	if (sp && off <= BPFPROF_MAX_STACK * 8) {
		if (bpf_probe_read_user(b->c.data + off, first, (const void *)sp))
			holes = 1;
		else
			copied = first;
		end = first;
#pragma unroll
		for (int k = 1; k < BPFPROF_COPY_STACK_SIZE / USTACK_CHUNK; k++) {
			if (end > BPFPROF_COPY_STACK_SIZE - USTACK_CHUNK)
				break;
			if (bpf_probe_read_user(b->c.data + off + end, USTACK_CHUNK,
						(const void *)(sp + end)))
				holes |= 1u << k;
			else
				copied = end + USTACK_CHUNK;
			end += USTACK_CHUNK;
		}
	}
	b->c.holes = holes & ((1u << ((copied + USTACK_CHUNK - 1 + (sp & (USTACK_CHUNK - 1))) /
				       USTACK_CHUNK)) - 1);
	b->c.stack_size = copied;
	size = BPFPROF_SAMPLE_COPY_HDR_SIZE + off + copied;
	if (size > sizeof(b->c))
		size = sizeof(b->c);
	if (bpf_ringbuf_output(&samples, &b->c, size, ring_wakeup(e->tgid))) {
		stat_inc(BPFPROF_STAT_DROPPED);
		return;
	}
	stat_inc(BPFPROF_STAT_SAMPLES);
	stat_inc(w->copy == BPFPROF_STAT_COPY_NO_MAPPING    ? BPFPROF_STAT_COPY_NO_MAPPING :
		 w->copy == BPFPROF_STAT_COPY_FP_UNMAPPED ? BPFPROF_STAT_COPY_FP_UNMAPPED :
							      BPFPROF_STAT_COPY_NOT_READY);
	stat_add(BPFPROF_STAT_COPY_BYTES, size);
}

/*
 * A sample's end, once its user walk is over: the checks, then the record
 * goes out. Everything comes from the per-CPU scratch record and walk
 * state, so that the legacy variant's last tail call can run it.
 */
/*
 * may_copy: the sample may go as a stack copy (send_sample_copy). A
 * constant: the legacy variant's walk_sample and py_walk_sample, whose
 * verification is near the 1 M instruction limit with --check-user-stacks'
 * 127-step comparison, leave the copy's code out; there a sample whose
 * tables were not ready is copied in on_sample, and a walk that meets a pc
 * in no registered mapping stops there, as before.
 */
static __always_inline void sample_send(struct bpf_perf_event_data *ctx, bool may_copy)
{
	struct bpfprof_sample *e;
	__u32 zero = 0, stop;
	__u64 nk, nu, npy, size;

	e = bpf_map_lookup_elem(&scratch, &zero);
	if (!e)
		return;
	nk = e->nr_kernel;
	if (nk > BPFPROF_MAX_STACK)
		nk = BPFPROF_MAX_STACK;
	if (may_copy && walk_copy()) {
		send_sample_copy(ctx, e, nk);
		return;
	}
	nu = walk_end(&stop);
	if (nu > BPFPROF_MAX_USER_STACK)
		nu = BPFPROF_MAX_USER_STACK;
	if (check_user_stack)
		check_user_walk(ctx, nk, nu);
	if (check_unwind_every && !nk && nu)
		send_ustack_copy(ctx, e->tgid, e->tid, nk, nu, stop);
	e->nr_user = nu;
	npy = e->nr_py;
	if (npy > BPFPROF_MAX_PY_FRAMES)
		npy = BPFPROF_MAX_PY_FRAMES;

	size = BPFPROF_SAMPLE_HDR_SIZE + (nk + nu + 2 * npy) * 8;
	if (size > sizeof(*e))
		size = sizeof(*e);
	if (bpf_ringbuf_output(&samples, e, size, ring_wakeup(e->tgid))) {
		stat_inc(BPFPROF_STAT_DROPPED);
		return;
	}
	stat_inc(BPFPROF_STAT_SAMPLES);
}

static __always_inline void sample_end(struct bpf_perf_event_data *ctx, bool may_copy)
{
	sample_send(ctx, may_copy);
	slot_sample_end(); /* the walk this sample interrupted, if any, goes on in its slot */
}

/* The legacy variant's walk of a sample's user stack: walk_sample, tail-called (slot 0). */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} walk_jmp_sample SEC(".maps");

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct bpfprof_sample *e;
	__u32 zero = 0;
	long kret;
	__u64 nk;

	if (tid == 0) /* the idle task: nothing to attribute */
		return 0;
#ifdef BPFPROF_BENCH_EMPTY_PROGRAM
	return 0; /* bench/floor.sh: what the perf events and the program's call cost alone */
#endif
	if (!wanted(tgid)) {
		stat_inc(BPFPROF_STAT_FILTERED);
		return 0;
	}

	e = bpf_map_lookup_elem(&scratch, &zero);
	if (!e)
		return 0;
	e->type = BPFPROF_REC_SAMPLE;
	e->cpu = bpf_get_smp_processor_id();
	e->tgid = tgid;
	e->tid = tid;
	e->time_ns = bpf_ktime_get_ns();
	e->cgroup_id = bpf_get_current_cgroup_id();
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	e->start = process_start(current_task());
	e->nr_py = 0;
	e->py_stop = 0;
	e->pad = 0;
	e->nr_user = 0;
	py_reset();

	kret = bpf_get_stack(ctx, e->ips, BPFPROF_MAX_STACK * 8, 0);
	nk = kret > 0 ? (__u64)kret / 8 : 0;
	if (nk > BPFPROF_MAX_STACK)
		nk = BPFPROF_MAX_STACK;
	e->nr_kernel = nk;
	slot_sample_begin();
	if (user_stack_begin(ctx, e, nk, tgid)) {
#if BPFPROF_LEGACY
		bpf_tail_call(ctx, &walk_jmp_sample, 0);
		/* no tail call (not set up): the leaf only, stopped at the frame limit */
#else
		for_each_step(max_user_stack - 1, walk_step, NULL);
		if (!walk_copy() && py_begin(e, nk, walk_nu(), tgid))
			for_each_step(PY_STEPS, py_step, NULL);
		py_end();
#endif
	}
	sample_end(ctx, true);
	return 0;
}

/* The legacy variant's Python walk of a sample: py_walk_sample, tail-called (slot 0). */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} py_jmp_sample SEC(".maps");

/* The legacy variant: the next WALK_FRAMES_PER_PROG frames of a sample's walk, then on or out. */
SEC("perf_event")
int walk_sample(struct bpf_perf_event_data *ctx)
{
#if BPFPROF_LEGACY
	struct bpfprof_sample *e;
	__u32 zero = 0, tgid;

	if (!walk_some())
		bpf_tail_call(ctx, &walk_jmp_sample, 0);
	e = bpf_map_lookup_elem(&scratch, &zero);
	if (!e)
		return 0;
	tgid = e->tgid;
	if (!walk_copy() && bpf_map_lookup_elem(&py_procs, &tgid))
		bpf_tail_call(ctx, &py_jmp_sample, 0);
	sample_end(ctx, false); /* legacy only: no copy here (sample_send) */
#endif
	return 0;
}

/*
 * The legacy variant's Python walk of a sample, after its native walk:
 * py_begin at the first call, then PY_FRAMES_PER_PROG steps a call, then out.
 */
SEC("perf_event")
int py_walk_sample(struct bpf_perf_event_data *ctx)
{
#if BPFPROF_LEGACY
	struct bpfprof_sample *e;
	struct py_walk *w;
	__u32 zero = 0;

	e = bpf_map_lookup_elem(&scratch, &zero);
	w = bpf_map_lookup_elem(&py_walk_state, &zero);
	if (!e || !w)
		return 0;
	if (!w->begun && !py_begin(e, e->nr_kernel & 0xff, walk_nu(), e->tgid)) {
		py_end();
		sample_end(ctx, false);
		return 0;
	}
	if (!py_some())
		bpf_tail_call(ctx, &py_jmp_sample, 0);
	py_end();
	sample_end(ctx, false);
#endif
	return 0;
}

/*
 * An exec: the process's next sample wakes the reader again (it is "new"
 * once more), so that the new program's maps and name are read while it
 * still runs; a 60 ms command forked by a shell and first sampled before its
 * exec would otherwise be gone by the next batch. Command mode: the command
 * becomes a target at its exec.
 */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	__u8 one = 1;

	bpf_map_delete_elem(&seen, &tgid);
	bpf_map_delete_elem(&noticed, &tgid);
	if (!exec_target || tgid != exec_target)
		return 0;
	bpf_map_update_elem(&targets, &tgid, &one, BPF_ANY);
	exec_target = 0;
	return 0;
}

/* Command mode: a child of a target becomes a target before it can run. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid, ctgid;
	__u8 one = 1;

	if (!follow_forks)
		return 0;
	ptgid = BPF_CORE_READ(parent, tgid);
	if (!bpf_map_lookup_elem(&targets, &ptgid))
		return 0;
	ctgid = BPF_CORE_READ(child, tgid);
	bpf_map_update_elem(&targets, &ctgid, &one, BPF_ANY);
	return 0;
}

/*
 * --off-cpu: where tasks in scope wait. Only tracepoints are used (kprobes
 * and fentry are not available on every kernel, this project's CI VMs
 * included):
 *
 *  - sched_switch, prev side: a task in scope that blocks (it is not
 *    runnable and was not preempted) gets its switch-out time stamped in
 *    `offcpu_start`;
 *  - sched_switch, next side: when a stamped task is picked to run again,
 *    the block's length is known; a block shorter than offcpu_thresh_ns is
 *    only counted. For a longer one the task's kernel stack is taken there
 *    (bpf_get_task_stack: the task has not run yet, so its saved stack is
 *    that of the block, from __schedule down to the kernel entry) and the
 *    record waits in `offcpu_pending` for the user stack;
 *  - sys_exit: the user stack can only be read in the task's own address
 *    space, that is once it runs. When the task leaves the system call it
 *    blocked in, its user registers are still those saved at that entry
 *    (compared: ip, sp and bp), and the user stack is walked from them with
 *    the sampler's walker. A block outside a system call (a page fault)
 *    keeps its kernel stack only: its record goes out, without user frames,
 *    at the task's next system call exit or next long block, never with
 *    another entry's user stack.
 *
 * So no stack is walked for short blocks, which are most context switches
 * of a busy machine. The idle task and bpfprof itself are never stamped.
 */
const volatile __u64 offcpu_thresh_ns = 500 * 1000;
const volatile __u32 self_tgid = 0;

/*
 * The switch-out time of each blocked task in scope, in the task itself
 * (task-local storage): a pointer away, where a hash map took a hashed
 * insert at every switch-out and a delete at every switch-in (on_switch
 * 175 ns a run against NN ns, bench/offcpu.sh). A task's slot is made at
 * its first block and freed with the task; 0: not blocked.
 */
#if BPFPROF_LEGACY
/*
 * Task storage for tracing programs is 5.13: before it, a hash map keyed by
 * tid, its entry deleted at the switch-in; LRU, so that the entries of
 * threads that exit while blocked go rather than fill it.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, BPFPROF_MAX_OFFCPU_BLOCKED);
	__type(key, __u32); /* tid */
	__type(value, __u64); /* switch-out time, bpf_ktime_get_ns() */
} offcpu_start SEC(".maps");
#else
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64); /* switch-out time, bpf_ktime_get_ns(); 0 while running */
} offcpu_start SEC(".maps");
#endif

/* The switch-out time of a stamped task, taken (reset) at its switch-in; 0: none. */
static __always_inline __u64 offcpu_take_start(struct task_struct *task)
{
	__u64 *start, t;
#if BPFPROF_LEGACY
	__u32 tid = task->pid;

	start = bpf_map_lookup_elem(&offcpu_start, &tid);
	if (!start)
		return 0;
	t = *start;
	bpf_map_delete_elem(&offcpu_start, &tid);
#else
	start = bpf_task_storage_get(&offcpu_start, task, 0, 0);
	if (!start)
		return 0;
	t = *start;
	*start = 0;
#endif
	return t;
}

/* Stamp a task that blocks with its switch-out time. Returns 0, or -1 when there is no slot. */
static __always_inline int offcpu_stamp(struct task_struct *task, __u64 now)
{
#if BPFPROF_LEGACY
	__u32 tid = task->pid;

	return bpf_map_update_elem(&offcpu_start, &tid, &now, BPF_ANY) ? -1 : 0;
#else
	__u64 *start = bpf_task_storage_get(&offcpu_start, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (!start)
		return -1;
	*start = now;
	return 0;
#endif
}

/* task_struct.state became __state in 5.14 */
struct task_struct___pre514 {
	long state;
} __attribute__((preserve_access_index));

/* 0: runnable (TASK_RUNNING) */
static __always_inline long task_state(struct task_struct *task)
{
	if (bpf_core_field_exists(task->__state))
		return BPF_CORE_READ(task, __state);
	return BPF_CORE_READ((struct task_struct___pre514 *)task, state);
}

/* Entries in offcpu_pending: sys_exit, run at every system call, looks no further while 0. */
__u64 offcpu_nr_pending = 0;

/* A long block with its kernel stack, waiting for its task to leave the kernel. */
struct offcpu_pending {
	struct bpf_task_work
		tw; /* offcpu_task_work: the user walk, run as the task returns to user mode */
	__u64 ip, sp, bp; /* the task's user registers while it was blocked */
	struct bpfprof_offcpu r; /* r.s.nr_user is 0 until then */
};

/* The same layout without the special field: the per-CPU buffer a pending block is built in. */
struct offcpu_pending_buf {
	__u64 tw;
	__u64 ip, sp, bp;
	struct bpfprof_offcpu r;
};

/*
 * Where the kernel has BPF task work (6.18: bpf_task_work_schedule_resume),
 * the user walk runs as task work when the task next returns to user mode,
 * after a system call or a page fault alike, and no program runs at every
 * system call; else at sys_exit (blocks outside a system call then keep
 * their kernel frames only). Set by user space, which loads a variant with
 * the kfunc (BPFPROF_TASK_WORK) only where the kernel's BTF has its exact
 * prototype.
 */
const volatile bool offcpu_task_work = false;
typedef int (*offcpu_task_work_fn)(struct bpf_map *map, void *key, void *value);
#if BPFPROF_TASK_WORK == 1
/* 6.18: kernel/bpf/helpers.c; aux__prog is filled in by the verifier */
extern int bpf_task_work_schedule_resume_impl(struct task_struct *task, struct bpf_task_work *tw,
					      void *map__map, offcpu_task_work_fn callback,
					      void *aux__prog) __ksym;
#define offcpu_task_work_add(task, tw, map, cb)                                  \
	bpf_task_work_schedule_resume_impl(task, tw, map, cb, NULL)
#elif BPFPROF_TASK_WORK == 2
/* 7.x: the plain name, the program's aux an implicit argument (the _impl name has no address) */
extern int bpf_task_work_schedule_resume(struct task_struct *task, struct bpf_task_work *tw,
					 void *map__map, offcpu_task_work_fn callback) __ksym;
#define offcpu_task_work_add(task, tw, map, cb) bpf_task_work_schedule_resume(task, tw, map, cb)
#endif

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BPFPROF_MAX_OFFCPU_PENDING);
	__uint(map_flags,
	       BPF_F_NO_PREALLOC); /* entries live microseconds: no 2 KiB per slot up front */
	__type(key, __u32); /* tid */
	__type(value, struct offcpu_pending);
} offcpu_pending SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct offcpu_pending_buf);
} offcpu_scratch SEC(".maps");

#ifdef BPFPROF_BENCH_OFFCPU_AGG
/*
 * bench/offcpu.sh's measure of the other transport, aggregation in BPF: a
 * hash of the callchain (bpf_loop over its frames) and a per-stack
 * {ns, blocks} update in a hash map, in place of the ring buffer. Only its
 * cost is of interest: user space reads nothing from it.
 */
struct offcpu_agg_val {
	__u64 ns, blocks;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64); /* tgid, callchain hash */
	__type(value, struct offcpu_agg_val);
} offcpu_agg SEC(".maps");

struct offcpu_hash {
	struct bpfprof_offcpu *r;
	__u64 h;
	__u64 n;
};

step_fn offcpu_hash_step(__u32 i, void *data)
{
	struct offcpu_hash *c = data;

	if (i >= c->n || i >= MAX_IPS)
		return 1;
	c->h = (c->h ^ c->r->s.ips[i]) * 0x100000001b3ULL;
	return 0;
}

static __always_inline void offcpu_send(struct bpfprof_offcpu *r)
{
	struct offcpu_hash c = { .r = r,
				 .h = 0xcbf29ce484222325ULL ^ r->s.tgid,
				 .n = (__u64)r->s.nr_kernel + r->s.nr_user };
	struct offcpu_agg_val *v, one = { .ns = r->off_ns, .blocks = 1 };

	for_each_step(MAX_IPS, offcpu_hash_step, &c);
	v = bpf_map_lookup_elem(&offcpu_agg, &c.h);
	if (v) {
		__sync_fetch_and_add(&v->ns, r->off_ns);
		__sync_fetch_and_add(&v->blocks, 1);
	} else if (bpf_map_update_elem(&offcpu_agg, &c.h, &one, BPF_NOEXIST)) {
		stat_inc(BPFPROF_STAT_OFFCPU_DROPPED);
		return;
	}
	stat_inc(BPFPROF_STAT_OFFCPU);
}
#else
/* Send a block record whose s.nr_kernel and s.nr_user are set. */
static __always_inline void offcpu_send(struct bpfprof_offcpu *r)
{
	__u64 size = BPFPROF_OFFCPU_HDR_SIZE + BPFPROF_SAMPLE_HDR_SIZE +
		     ((__u64)r->s.nr_kernel + r->s.nr_user + 2 * (__u64)r->s.nr_py) * 8;

	if (size > sizeof(*r))
		size = sizeof(*r);
	if (bpf_ringbuf_output(&samples, r, size, ring_wakeup(r->s.tgid)))
		stat_inc(BPFPROF_STAT_OFFCPU_DROPPED);
	else
		stat_inc(BPFPROF_STAT_OFFCPU);
}
#endif

#if BPFPROF_TASK_WORK
static int offcpu_task_cb(struct bpf_map *map, void *key, void *value);
#endif

/* next runs again after a stamped block: count it, or keep it with its kernel stack. */
static __always_inline void offcpu_switch_in(struct task_struct *next, __u64 now)
{
	__u32 tid = next->pid, zero = 0;
	struct offcpu_pending_buf *pd;
	struct offcpu_pending *old;
	struct pt_regs *regs;
	__u64 start, off;
	long kret;
	__u64 nk;

	start = offcpu_take_start(next);
	if (!start)
		return;
	off = now - start;
	if (off < offcpu_thresh_ns) {
		stat_inc(BPFPROF_STAT_OFFCPU_SHORT);
		stat_add(BPFPROF_STAT_OFFCPU_SHORT_NS, off);
		return;
	}
	pd = bpf_map_lookup_elem(&offcpu_scratch, &zero);
	if (!pd)
		return;
	pd->r.type = BPFPROF_REC_OFFCPU;
	pd->r.pad = 0;
	pd->r.off_ns = off;
	pd->r.s.type = BPFPROF_REC_SAMPLE;
	pd->r.s.cpu = bpf_get_smp_processor_id();
	pd->r.s.tgid = next->tgid;
	pd->r.s.tid = tid;
	pd->r.s.time_ns = now;
	pd->r.s.cgroup_id = BPF_CORE_READ(next, cgroups, dfl_cgrp, kn, id);
	bpf_probe_read_kernel(pd->r.s.comm, sizeof(pd->r.s.comm), next->comm);
	pd->r.s.start = process_start(next);
	pd->r.s.nr_py = 0;
	pd->r.s.py_stop = 0;
	pd->r.s.pad = 0;
	pd->r.s.nr_user = 0;
	kret = bpf_get_task_stack(next, pd->r.s.ips, BPFPROF_MAX_STACK * 8, 0);
	nk = kret > 0 ? (__u64)kret / 8 : 0;
	pd->r.s.nr_kernel = nk > BPFPROF_MAX_STACK ? BPFPROF_MAX_STACK : nk;
	if (!next->mm) { /* a kernel thread: no user stack to wait for */
		offcpu_send(&pd->r);
		return;
	}
	regs = task_user_regs(next);
	if (!regs)
		return;
	pd->ip = PT_REGS_IP_CORE(regs);
	pd->sp = PT_REGS_SP_CORE(regs);
	pd->bp = PT_REGS_FP_CORE(regs);
	/* an earlier block that never reached a system call exit (a page fault): kernel stack only */
	old = bpf_map_lookup_elem(&offcpu_pending, &tid);
	if (old) {
		stat_inc(BPFPROF_STAT_OFFCPU_KERNEL_ONLY);
		offcpu_send(&old->r);
	} else if (!bpf_map_update_elem(&offcpu_pending, &tid, pd, BPF_NOEXIST)) {
		__sync_fetch_and_add(&offcpu_nr_pending, 1);
		goto schedule;
	}
	if (old && !bpf_map_update_elem(&offcpu_pending, &tid, pd, BPF_EXIST))
		goto schedule;
	stat_inc(BPFPROF_STAT_OFFCPU_FULL);
	return;
schedule:
	if (!BPFPROF_TASK_WORK || !offcpu_task_work)
		return;
#if BPFPROF_TASK_WORK
	old = bpf_map_lookup_elem(&offcpu_pending, &tid);
	if (!old)
		return;
	if (offcpu_task_work_add(next, &old->tw, &offcpu_pending, offcpu_task_cb)) {
		/* no task work for it: kernel frames only, now */
		stat_inc(BPFPROF_STAT_OFFCPU_KERNEL_ONLY);
		offcpu_send(&old->r);
		if (!bpf_map_delete_elem(&offcpu_pending, &tid))
			__sync_fetch_and_add(&offcpu_nr_pending, -1);
	}
#endif
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u32 tid = prev->pid, tgid = prev->tgid;
	__u64 now = bpf_ktime_get_ns();

	if (next->pid)
		offcpu_switch_in(next, now);
	/* preempted or yielding (still runnable): waiting for a CPU, not blocked */
	if (!tid || tgid == self_tgid || preempt || task_state(prev) == 0)
		return 0;
	if (!wanted(tgid)) /* current is prev here: the cgroup helpers see its cgroup */
		return 0;
	if (offcpu_stamp(prev, now))
		stat_inc(BPFPROF_STAT_OFFCPU_FULL);
	return 0;
}

/* A pending block goes out as it is (kernel frames, and user frames if walked), and is forgotten. */
static __always_inline void offcpu_flush(struct offcpu_pending *pd, __u32 tid)
{
	offcpu_send(&pd->r);
	if (!bpf_map_delete_elem(&offcpu_pending, &tid))
		__sync_fetch_and_add(&offcpu_nr_pending, -1);
}

/*
 * The end of a pending block's user walk: its user part goes into the
 * block's record, which goes out.
 */
static __always_inline void offcpu_finish_end(__u32 tid)
{
	struct offcpu_pending *pd = bpf_map_lookup_elem(&offcpu_pending, &tid);
	struct bpfprof_sample *e;
	__u32 slot = SLOT_OFFCPU, stop;
	__u64 nk, nu, npy, size;

	nu = walk_end(&stop);
	slot_offcpu(false);
	e = bpf_map_lookup_elem(&scratch, &slot);
	if (!pd || !e)
		return;
	nk = pd->r.s.nr_kernel;
	if (nu > BPFPROF_MAX_USER_STACK)
		nu = BPFPROF_MAX_USER_STACK;
	npy = e->nr_py;
	if (npy > BPFPROF_MAX_PY_FRAMES)
		npy = BPFPROF_MAX_PY_FRAMES;
	/* only the user part (and Python's) goes back: the header and kernel part stay as taken */
	size = (nu + 2 * npy) * 8;
	if (size > (BPFPROF_MAX_USER_STACK + 2 * BPFPROF_MAX_PY_FRAMES) * 8)
		size = (BPFPROF_MAX_USER_STACK + 2 * BPFPROF_MAX_PY_FRAMES) * 8;
	if (nu && bpf_probe_read_kernel(&pd->r.s.ips[nk & BPFPROF_MAX_STACK], size,
					&e->ips[nk & BPFPROF_MAX_STACK]))
		nu = npy = 0;
	/*
	 * Interrupts are on here: a sample (on_sample, from the cpu-clock
	 * interrupt) that runs meanwhile on this CPU walks in its own slot,
	 * but another task's off-CPU walk may use this one (task work is
	 * preemptible). Each stamps its own time and thread first, so an
	 * unchanged stamp, read after the copy above, means nothing else
	 * touched the slot during the walk. Otherwise the walk is dropped.
	 */
	if (e->time_ns != pd->r.s.time_ns || e->tid != tid) {
		stat_inc(BPFPROF_STAT_OFFCPU_KERNEL_ONLY);
		nu = npy = 0;
	}
	pd->r.s.nr_user = nu;
	pd->r.s.nr_py = npy;
	pd->r.s.py_stop = npy ? e->py_stop : 0;
	offcpu_flush(pd, tid);
}

/* The legacy variant's Python walk of a pending block: py_walk_sys_exit, tail-called (slot 0). */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} py_jmp_sys_exit SEC(".maps");

/* The legacy variant's walk of a pending block's user stack: walk_sys_exit, tail-called (slot 0). */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} walk_jmp_sys_exit SEC(".maps");

/*
 * The task of a pending block, back from the kernel entry it blocked in
 * (user registers ip, sp, bp now): its user walk (into `scratch`, after the
 * kernel part, the same walk as for samples), then the record goes out.
 * ctx: the sys_exit program's, for the legacy variant's tail call.
 */
static __always_inline void offcpu_finish(void *ctx, struct offcpu_pending *pd, __u32 tid,
					  __u64 ip, __u64 sp, __u64 bp)
{
	struct bpfprof_sample *e;
	__u32 slot = SLOT_OFFCPU;
	__u64 nk, size;

	e = bpf_map_lookup_elem(&scratch, &slot);
	nk = pd->r.s.nr_kernel;
	if (!e || nk > BPFPROF_MAX_STACK) {
		offcpu_flush(pd, tid);
		return;
	}
	if (ip != pd->ip || sp != pd->sp || bp != pd->bp) {
		/* not the entry the task blocked in: no user stack rather than another one */
		stat_inc(BPFPROF_STAT_OFFCPU_KERNEL_ONLY);
		offcpu_flush(pd, tid);
		return;
	}
	size = BPFPROF_SAMPLE_HDR_SIZE + nk * 8;
	if (bpf_probe_read_kernel(e, size & 4095, &pd->r.s)) {
		offcpu_flush(pd, tid);
		return;
	}
	slot_offcpu(true);
	if (walk_begin(e, nk, bpf_get_current_pid_tgid() >> 32, pd->ip, pd->sp, pd->bp, true)) {
#if BPFPROF_LEGACY
		bpf_tail_call(ctx, &walk_jmp_sys_exit, 0);
#else
		for_each_step(max_user_stack - 1, walk_step, NULL);
		if (py_begin(e, nk, walk_nu(), bpf_get_current_pid_tgid() >> 32))
			for_each_step(PY_STEPS, py_step, NULL);
		py_end();
#endif
	}
	offcpu_finish_end(tid);
}

#if BPFPROF_TASK_WORK
/* offcpu_task_work: run by the kernel as the blocked task returns to user mode. */
static int offcpu_task_cb(struct bpf_map *map, void *key, void *value)
{
	struct pt_regs *regs = task_user_regs(current_task());

	if (!regs)
		return 0;
	offcpu_finish(NULL, value, *(__u32 *)key, PT_REGS_IP_CORE(regs), PT_REGS_SP_CORE(regs),
		      PT_REGS_FP_CORE(regs));
	return 0;
}
#endif

/* Without task work: the task's system call exit. */
SEC("tp_btf/sys_exit")
int BPF_PROG(on_sys_exit, struct pt_regs *regs, long ret)
{
	struct offcpu_pending *pd;
	__u32 tid;

	if (!offcpu_nr_pending)
		return 0;
	tid = (__u32)bpf_get_current_pid_tgid();
	pd = bpf_map_lookup_elem(&offcpu_pending, &tid);
	if (!pd)
		return 0;
	offcpu_finish(ctx, pd, tid, PT_REGS_IP_CORE(regs), PT_REGS_SP_CORE(regs),
		      PT_REGS_FP_CORE(regs));
	return 0;
}

/*
 * The legacy variant: the next WALK_FRAMES_PER_PROG frames of a pending
 * block's walk, then on or out. Loaded for sys_exit (tail calls stay among
 * programs of one type and hook), never attached.
 */
SEC("tp_btf/sys_exit")
int BPF_PROG(walk_sys_exit, struct pt_regs *regs, long ret)
{
#if BPFPROF_LEGACY
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	if (!walk_some())
		bpf_tail_call(ctx, &walk_jmp_sys_exit, 0);
	py_reset();
	if (bpf_map_lookup_elem(&py_procs, &tgid))
		bpf_tail_call(ctx, &py_jmp_sys_exit, 0);
	offcpu_finish_end((__u32)bpf_get_current_pid_tgid());
#endif
	return 0;
}

/*
 * The legacy variant's Python walk of a pending block, after its native
 * walk (as py_walk_sample for samples), then the record goes out.
 */
SEC("tp_btf/sys_exit")
int BPF_PROG(py_walk_sys_exit, struct pt_regs *regs, long ret)
{
#if BPFPROF_LEGACY
	struct bpfprof_sample *e;
	struct py_walk *w;
	__u32 zero = 0;

	e = py_record();
	w = py_state();
	if (!e || !w)
		return 0;
	if (!w->begun && !py_begin(e, e->nr_kernel & 0xff, walk_nu(), e->tgid)) {
		py_end();
		offcpu_finish_end((__u32)bpf_get_current_pid_tgid());
		return 0;
	}
	if (!py_some())
		bpf_tail_call(ctx, &py_jmp_sys_exit, 0);
	py_end();
	offcpu_finish_end((__u32)bpf_get_current_pid_tgid());
#endif
	return 0;
}

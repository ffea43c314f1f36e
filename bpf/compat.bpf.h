/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * What differs between kernels, in one place (as libbpf-tools' core_fixes.bpf.h):
 * the build-time variants, and the CO-RE shims for fields that moved.
 *
 * Variants: the program is built several times (Makefile, BPF_VARIANT_*),
 * and user space loads the one the running kernel can take
 * (user/capture/kernel_features.c). Dead code behind a .rodata switch cannot
 * hide everything: a bpf_loop callback's address is rejected before 5.13
 * and a kfunc whose prototype or address the kernel lacks fails the load,
 * even where no path reaches it, so those differ at build time:
 *
 *  BPFPROF_LEGACY      1: Linux 5.10 to 5.16 (no bpf_loop, 5.17): bounded
 *                      loops, the walks going on by tail calls (the entry
 *                      points in profile.bpf.c), the off-CPU switch-out time
 *                      in a hash map keyed by tid instead of task storage,
 *                      the current task and its user registers by CO-RE
 *                      reads instead of bpf_get_current_task_btf (5.11) and
 *                      bpf_task_pt_regs (5.15), preallocated hash maps
 *                      (perf_event programs may use run-time allocated ones
 *                      from 6.1 only)
 *  BPFPROF_TASK_WORK   1: the task work kfunc of 6.18 (the _impl name with a
 *                      trailing `void *aux__prog`), 2: that of 7.x (the
 *                      plain name, 4 arguments); 0: none, user stacks of
 *                      off-CPU blocks are walked at sys_exit
 *
 * Every variant declares the same maps, programs and global variables in the
 * same order: they share one skeleton (the Makefile checks it with
 * tools/skel-layout.sh). Elsewhere the variant shows only as the constants
 * below, which the compiler folds.
 */
#ifndef BPFPROF_COMPAT_BPF_H
#define BPFPROF_COMPAT_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "arch.bpf.h"

#ifndef BPFPROF_LEGACY
#define BPFPROF_LEGACY 0
#endif
#ifndef BPFPROF_TASK_WORK
#define BPFPROF_TASK_WORK 0
#endif

/* The walks go on by tail calls, a bounded number of frames a program (legacy) */
#define COMPAT_WALK_BY_TAIL_CALLS BPFPROF_LEGACY
/*
 * A walk may turn the sample into a stack copy midway (walk_step): not in
 * the legacy variant, whose tail-called walk programs leave the copy's code
 * out (their verification was near the 1 M instruction limit; since the
 * row search's rework, issue 34, walk_sample takes 260-294 k)
 */
#define COMPAT_COPY_IN_WALK (!BPFPROF_LEGACY)
/* The task work kfunc is there (offcpu.bpf.h) */
#define COMPAT_TASK_WORK (BPFPROF_TASK_WORK != 0)

/*
 * Run fn(i, ctx) for i = 0..n-1 until it returns non-zero: bpf_loop, whose
 * callback the verifier checks once, where the kernel has it; else a bounded
 * loop (5.3) the verifier follows iteration by iteration, kept rolled so the
 * program stays small.
 */
#if BPFPROF_LEGACY
/* clang-format off */
#define for_each_step(n, fn, ctx)                                               \
	do {                                                                    \
		__u32 __step;                                                   \
		_Pragma("clang loop unroll(disable)")                           \
		for (__step = 0; __step < (n); __step++)                        \
			if (fn(__step, ctx))                                    \
				break;                                          \
	} while (0)
/* clang-format on */
#define step_fn static __always_inline long
#else
#define for_each_step(n, fn, ctx) bpf_loop(n, fn, ctx, 0)
#define step_fn static long /* a bpf_loop callback */
#endif

/*
 * map_flags of a hash map a perf_event program uses: allocated as entries
 * come where the kernel lets it (6.1), preallocated before
 */
#if BPFPROF_LEGACY
#define COMPAT_PERF_HASH_FLAGS 0
#else
#define COMPAT_PERF_HASH_FLAGS BPF_F_NO_PREALLOC
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
 * The user registers a task saved at its kernel entry: bpf_task_pt_regs
 * (5.15), else the architecture's place for them on the task's kernel stack
 * (arch_stack_user_regs).
 */
static __always_inline struct pt_regs *task_user_regs(struct task_struct *task)
{
#if BPFPROF_LEGACY
	return arch_stack_user_regs(task);
#else
	return (struct pt_regs *)bpf_task_pt_regs(task);
#endif
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
		bpf_probe_read_kernel(
			&id, sizeof(id),
			(void *)cgrp + bpf_core_field_offset(struct cgroup___pre61, ancestor_ids) +
				level * 8);
		return id;
	}
	bpf_probe_read_kernel(&anc, sizeof(anc),
			      (void *)cgrp + bpf_core_field_offset(struct cgroup, ancestors) +
				      level * 8);
	return anc ? BPF_CORE_READ(anc, kn, id) : 0;
}
#else
#define ancestor_cgroup_id(level) bpf_get_current_ancestor_cgroup_id(level)
#endif

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

/*
 * A __u64 kept per task, for a map defined as
 *   struct { COMPAT_TASK_VALUE_MAP(max); } name SEC(".maps");
 * task-local storage from 5.13 for tracing programs (a pointer away: no
 * hashed insert and delete), made at the first set and freed with the
 * task; before, a hash map keyed by tid, LRU so that the entries of threads
 * that exit go rather than fill it (max: its size).
 */
#if BPFPROF_LEGACY
#define COMPAT_TASK_VALUE_MAP(max)           \
	__uint(type, BPF_MAP_TYPE_LRU_HASH); \
	__uint(max_entries, max);            \
	__type(key, __u32); /* tid */        \
	__type(value, __u64)
#else
#define COMPAT_TASK_VALUE_MAP(max)               \
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE); \
	__uint(map_flags, BPF_F_NO_PREALLOC);    \
	__type(key, int);                        \
	__type(value, __u64)
#endif

/* Task's value in map, taken: the entry goes (legacy) or is set to 0; 0 where there is none. */
static __always_inline __u64 compat_task_value_take(void *map, struct task_struct *task)
{
	__u64 *v, t;
#if BPFPROF_LEGACY
	__u32 tid = task->pid;

	v = bpf_map_lookup_elem(map, &tid);
	if (!v)
		return 0;
	t = *v;
	bpf_map_delete_elem(map, &tid);
#else
	v = bpf_task_storage_get(map, task, 0, 0);
	if (!v)
		return 0;
	t = *v;
	*v = 0;
#endif
	return t;
}

/* Set task's value in map. Returns 0, or -1 when there is no room for it. */
static __always_inline int compat_task_value_set(void *map, struct task_struct *task, __u64 val)
{
#if BPFPROF_LEGACY
	__u32 tid = task->pid;

	return bpf_map_update_elem(map, &tid, &val, BPF_ANY) ? -1 : 0;
#else
	__u64 *v = bpf_task_storage_get(map, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (!v)
		return -1;
	*v = val;
	return 0;
#endif
}

/*
 * Schedule callback(map, key, value) to run as task returns to user mode
 * (BPF task work): 0, or non-zero where it cannot be (or the variant has no
 * kfunc: COMPAT_TASK_WORK 0).
 */
typedef int (*compat_task_work_fn)(struct bpf_map *map, void *key, void *value);
#if BPFPROF_TASK_WORK == 1
/* 6.18: kernel/bpf/helpers.c; aux__prog is filled in by the verifier */
extern int bpf_task_work_schedule_resume_impl(struct task_struct *task, struct bpf_task_work *tw,
					      void *map__map, compat_task_work_fn callback,
					      void *aux__prog) __ksym;
#define compat_task_work_add(task, tw, map, cb) \
	bpf_task_work_schedule_resume_impl(task, tw, map, cb, NULL)
#elif BPFPROF_TASK_WORK == 2
/* 7.x: the plain name, the program's aux an implicit argument (the _impl name has no address) */
extern int bpf_task_work_schedule_resume(struct task_struct *task, struct bpf_task_work *tw,
					 void *map__map, compat_task_work_fn callback) __ksym;
#define compat_task_work_add(task, tw, map, cb) bpf_task_work_schedule_resume(task, tw, map, cb)
#else
#define compat_task_work_add(task, tw, map, cb) ((void)(cb), -1)
#endif

#endif /* BPFPROF_COMPAT_BPF_H */

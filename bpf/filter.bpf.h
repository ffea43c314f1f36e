/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Which tasks are profiled: the target processes (-p, a command and its
 * children) and the --cgroup subtrees.
 */
#ifndef BPFPROF_FILTER_BPF_H
#define BPFPROF_FILTER_BPF_H

#include "state.bpf.h"

const volatile __u32 filter_mode = BPFPROF_FILTER_ALL;
const volatile bool filter_cgroup = false;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, COMPAT_PERF_HASH_FLAGS); /* allocated as entries come: start-up */
	__uint(max_entries, BPFPROF_MAX_TARGETS);
	__type(key, __u32); /* tgid */
	__type(value, __u8);
} targets SEC(".maps");

/*
 * The targets again, by slot (include/bpfprof_abi.h): a sample of another
 * process, most of a -p run's samples on a busy host, is dropped by one
 * array load the verifier inlines, where a `targets` lookup is a helper
 * call, a hash and two cache lines (150-300 ns of the 550-690 such a
 * sample cost here; docs/BENCHMARKS.md, issue 34). Not in the legacy
 * variant (BPF's compare-and-swap is 5.12's): there `targets` alone.
 * Mappable: user space sets slots with the same atomics (session.c).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, BPFPROF_TARGET_SLOTS);
	__type(key, __u32);
	/* 0, the tgid, or BPFPROF_TARGET_SLOT_SHARED; 64 bits: BPF's atomics on 32 need -mcpu=v3 */
	__type(value, __u64);
} target_slots SEC(".maps");

/* Make tgid a target (on_exec, on_fork; user space: session__add_target) */
static __always_inline void target_add(__u32 tgid)
{
	__u8 one = 1;

	bpf_map_update_elem(&targets, &tgid, &one, BPF_ANY); /* first: SHARED sends lookups there */
#if !BPFPROF_LEGACY
	__u32 key = tgid % BPFPROF_TARGET_SLOTS;
	__u64 *slot, old;

	slot = bpf_map_lookup_elem(&target_slots, &key);
	if (!slot)
		return;
	old = __sync_val_compare_and_swap(slot, 0, tgid);
	if (old && old != tgid)
		__sync_lock_test_and_set(slot, BPFPROF_TARGET_SLOT_SHARED);
#endif
}

/* Whether tgid is a target: its slot, else (a shared slot; legacy) `targets` */
static __always_inline bool is_target(__u32 tgid)
{
#if !BPFPROF_LEGACY
	__u32 key = tgid % BPFPROF_TARGET_SLOTS;
	__u64 *slot = bpf_map_lookup_elem(&target_slots, &key);

	if (slot && *slot != BPFPROF_TARGET_SLOT_SHARED)
		return *slot == tgid && tgid; /* 0: an empty slot, and the idle task */
#endif
	return bpf_map_lookup_elem(&targets, &tgid);
}

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BPFPROF_MAX_CGROUPS);
	__type(key, __u64); /* cgroup v2 id */
	__type(value, __u8);
} cgroups SEC(".maps");

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

/* Whether the current task is in the --cgroup subtrees, where there are some */
static __always_inline bool wanted_cgroup(void)
{
	return !filter_cgroup || in_cgroups();
}

/* Whether the current task's samples are kept: a target tgid, in a --cgroup subtree. */
static __always_inline bool wanted(__u32 tgid)
{
	if (filter_mode == BPFPROF_FILTER_TGID && !is_target(tgid))
		return false;
	return wanted_cgroup();
}

#endif /* BPFPROF_FILTER_BPF_H */

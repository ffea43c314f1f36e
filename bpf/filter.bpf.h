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

/* Whether the current task's samples are kept: a target tgid, in a --cgroup subtree. */
static __always_inline bool wanted(__u32 tgid)
{
	if (filter_mode == BPFPROF_FILTER_TGID && !bpf_map_lookup_elem(&targets, &tgid))
		return false;
	return !filter_cgroup || in_cgroups();
}

#endif /* BPFPROF_FILTER_BPF_H */

/* SPDX-License-Identifier: MIT */
/*
 * The BPF <-> userspace ABI: ring-buffer record layouts, map keys and the
 * compile-time limits both sides agree on. bpf/profile.bpf.c includes it after
 * vmlinux.h; the user side includes <linux/types.h> first. Every record starts
 * with a __u32 type tag, padding is spelled out, and the sizes are asserted so
 * that both compilers check the same layout.
 */
#ifndef BPFPROF_ABI_H
#define BPFPROF_ABI_H

#ifndef __bpf__
#include <linux/types.h>	/* the BPF side gets these from vmlinux.h */
#endif

/* bpf_get_stack() depth per side; matches perf's default kernel.perf_event_max_stack */
#define BPFPROF_MAX_STACK 127
#define BPFPROF_TASK_COMM_LEN 16

enum bpfprof_rec_type {
	BPFPROF_REC_SAMPLE = 1,
};

/* Indices into the per-CPU `stats` array. */
enum bpfprof_stat {
	BPFPROF_STAT_SAMPLES = 0,	/* records submitted to the ring buffer */
	BPFPROF_STAT_DROPPED = 1,	/* ring buffer full: sample lost */
	BPFPROF_STAT_FILTERED = 2,	/* sample ran the program but matched no target */
	/* --check-user-stacks: the frame-pointer walk against bpf_get_stack(BPF_F_USER_STACK) */
	BPFPROF_STAT_USTACK_SAME = 3,	/* ours is the kernel's */
	BPFPROF_STAT_USTACK_SHORTER = 4,	/* ours is its first part: the kernel went on through garbage */
	BPFPROF_STAT_USTACK_DIFF = 5,	/* ours differs somewhere */
	BPFPROF_STAT_NR,
};

/*
 * One stack sample. Only the first
 *   offsetof(struct bpfprof_sample, ips) + (nr_kernel + nr_user) * 8
 * bytes are sent: ips[0..nr_kernel) are kernel addresses, leaf first, followed
 * by nr_user user addresses, leaf first. For a sample taken in kernel mode the
 * user part is the user stack at kernel entry (from the task's saved pt_regs).
 */
struct bpfprof_sample {
	__u32 type;		/* BPFPROF_REC_SAMPLE */
	__u32 cpu;
	__u32 tgid;		/* process id as the root pid namespace sees it */
	__u32 tid;
	__u64 time_ns;		/* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u64 cgroup_id;	/* cgroup v2 id of the task (inode number of its directory) */
	char comm[BPFPROF_TASK_COMM_LEN];
	__u16 nr_kernel;
	__u16 nr_user;
	__u32 pad;
	__u64 ips[2 * BPFPROF_MAX_STACK];
};

#define BPFPROF_SAMPLE_HDR_SIZE 56

_Static_assert(sizeof(struct bpfprof_sample) == BPFPROF_SAMPLE_HDR_SIZE + 2 * BPFPROF_MAX_STACK * 8,
	       "struct bpfprof_sample layout");

/* Target-filter modes, set in rodata before load. */
enum bpfprof_filter {
	BPFPROF_FILTER_ALL = 0,		/* every task except the idle task */
	BPFPROF_FILTER_TGID = 1,	/* tgids listed in the `targets` map */
};

#define BPFPROF_MAX_TARGETS 8192
#define BPFPROF_MAX_CGROUPS 64
/* ancestor levels checked for --cgroup subtrees */
#define BPFPROF_MAX_CGROUP_DEPTH 16

#endif /* BPFPROF_ABI_H */

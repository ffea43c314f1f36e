// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Stack sampler: runs on every cpu-clock (or hardware) perf event overflow,
 * keeps the samples of the targeted tasks, and sends pid, tid, cpu, time,
 * comm, cgroup and both stacks to userspace through a ring buffer. Records are
 * built in a per-CPU scratch slot and copied with bpf_ringbuf_output() so that
 * only the used part of the 2 KiB stack area travels. Lost records are counted
 * per CPU in `stats`. Layouts come from include/bpfprof_abi.h.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "bpfprof_abi.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

const volatile __u32 filter_mode = BPFPROF_FILTER_ALL;
const volatile bool filter_cgroup = false;
const volatile bool follow_forks = false;
/*
 * Command mode: the forked command becomes a target when it execs, as perf's
 * enable_on_exec does, so the profiler's own child before exec is not sampled.
 */
volatile __u32 exec_target = 0;
/* Wake the consumer only once this many bytes are queued; it also polls on a timer. */
const volatile __u64 wakeup_bytes = 64 * 1024;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 * 1024 * 1024); /* resized from --ringbuf-size before load */
} samples SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BPFPROF_MAX_TARGETS);
	__type(key, __u32);	/* tgid */
	__type(value, __u8);
} targets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BPFPROF_MAX_CGROUPS);
	__type(key, __u64);	/* cgroup v2 id */
	__type(value, __u8);
} cgroups SEC(".maps");

/*
 * Processes that have had a sample: a process's first sample wakes the
 * reader at once, so that its maps are read while it still lives (a 60 ms
 * process would be gone by the next batch). LRU: old entries just go.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);	/* tgid */
	__type(value, __u8);
} seen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, BPFPROF_STAT_NR);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bpfprof_sample);
} scratch SEC(".maps");

static __always_inline void stat_inc(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &idx);

	if (v)
		*v += 1;
}

/* The task's cgroup or one of its ancestors is in `cgroups` (--cgroup covers its subtree). */
static __always_inline bool in_cgroups(void)
{
	__u64 cg = bpf_get_current_cgroup_id();
	int level;

	if (bpf_map_lookup_elem(&cgroups, &cg))
		return true;
	for (level = 0; level < BPFPROF_MAX_CGROUP_DEPTH; level++) {
		cg = bpf_get_current_ancestor_cgroup_id(level);
		if (!cg)
			break; /* above the task's own level */
		if (bpf_map_lookup_elem(&cgroups, &cg))
			return true;
	}
	return false;
}

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct bpfprof_sample *e;
	__u32 zero = 0;
	long kret, uret;
	__u64 nk, nu, size, flags;

	if (tid == 0)	/* the idle task: nothing to attribute */
		return 0;
	if (filter_mode == BPFPROF_FILTER_TGID && !bpf_map_lookup_elem(&targets, &tgid)) {
		stat_inc(BPFPROF_STAT_FILTERED);
		return 0;
	}
	if (filter_cgroup && !in_cgroups()) {
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
	e->pad = 0;

	kret = bpf_get_stack(ctx, e->ips, BPFPROF_MAX_STACK * 8, 0);
	nk = kret > 0 ? (__u64)kret / 8 : 0;
	if (nk > BPFPROF_MAX_STACK)
		nk = BPFPROF_MAX_STACK;
	uret = bpf_get_stack(ctx, &e->ips[nk], BPFPROF_MAX_STACK * 8, BPF_F_USER_STACK);
	nu = uret > 0 ? (__u64)uret / 8 : 0;
	if (nu > BPFPROF_MAX_STACK)
		nu = BPFPROF_MAX_STACK;
	e->nr_kernel = nk;
	e->nr_user = nu;

	size = BPFPROF_SAMPLE_HDR_SIZE + (nk + nu) * 8;
	if (size > sizeof(*e))
		size = sizeof(*e);
	flags = bpf_ringbuf_query(&samples, BPF_RB_AVAIL_DATA) >= wakeup_bytes ?
			BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
	if (!bpf_map_lookup_elem(&seen, &tgid)) {
		__u8 one = 1;

		bpf_map_update_elem(&seen, &tgid, &one, BPF_ANY);
		flags = BPF_RB_FORCE_WAKEUP;
	}
	if (bpf_ringbuf_output(&samples, e, size, flags)) {
		stat_inc(BPFPROF_STAT_DROPPED);
		return 0;
	}
	stat_inc(BPFPROF_STAT_SAMPLES);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	__u8 one = 1;

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

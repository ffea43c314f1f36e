/* SPDX-License-Identifier: GPL-2.0 OR MIT */
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
 *  - the return to user mode: the user stack can only be read in the
 *    task's own address space, that is once it runs. Where the kernel has
 *    BPF task work the walk runs as the task returns to user mode, after a
 *    system call or a page fault alike; else when the task leaves the system
 *    call it blocked in (sys_exit), its user registers still those saved at
 *    that entry (compared: ip, sp and bp). The user stack is walked from
 *    them with the sampler's walk (walk.bpf.h). A block outside a system
 *    call (a page fault) keeps its kernel stack only there: its record goes
 *    out, without user frames, at the task's next system call exit or next
 *    long block, never with another entry's user stack.
 *
 * So no stack is walked for short blocks, which are most context switches
 * of a busy machine. The idle task and bpfprof itself are never stamped.
 */
#ifndef BPFPROF_OFFCPU_BPF_H
#define BPFPROF_OFFCPU_BPF_H

#include "state.bpf.h"
#include "filter.bpf.h"
#include "record.bpf.h"
#include "walk.bpf.h"

const volatile __u64 offcpu_thresh_ns = 500 * 1000;
const volatile __u32 self_tgid = 0;

/* The switch-out time of each blocked task in scope; 0: not blocked (compat.bpf.h) */
struct {
	COMPAT_TASK_VALUE_MAP(BPFPROF_MAX_OFFCPU_BLOCKED);
} offcpu_start SEC(".maps");

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
 * The user walk runs as BPF task work (6.18: bpf_task_work_schedule_resume)
 * and no program runs at every system call. Set by user space, which loads
 * a variant with the kfunc (BPFPROF_TASK_WORK) only where the kernel's BTF
 * has its exact prototype.
 */
const volatile bool offcpu_task_work = false;

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

/* Send a block record whose s.nr_kernel and s.nr_user are set. */
static __always_inline void offcpu_send(struct bpfprof_offcpu *r)
{
	if (bench_offcpu_send(r))
		return;
	stack_record_send(r, BPFPROF_OFFCPU_HDR_SIZE, sizeof(*r), &r->s, BPFPROF_STAT_OFFCPU,
			  BPFPROF_STAT_OFFCPU_DROPPED);
}

static int offcpu_task_cb(struct bpf_map *map, void *key, void *value);

/* next runs again after a stamped block: count it, or keep it with its kernel stack. */
static __always_inline void offcpu_switch_in(struct task_struct *next, __u64 now)
{
	__u32 tid = next->pid, zero = 0;
	struct offcpu_pending_buf *pd;
	struct offcpu_pending *old;
	struct pt_regs *regs;
	__u64 start, off;

	start = compat_task_value_take(&offcpu_start, next);
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
	stack_record_begin(&pd->r.s, next, next->tgid, tid, now, false);
	stack_record_kernel(&pd->r.s,
			    bpf_get_task_stack(next, pd->r.s.ips, BPFPROF_MAX_STACK * 8, 0));
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
	if (!COMPAT_TASK_WORK || !offcpu_task_work)
		return;
	old = bpf_map_lookup_elem(&offcpu_pending, &tid);
	if (!old)
		return;
	if (compat_task_work_add(next, &old->tw, &offcpu_pending, offcpu_task_cb)) {
		/* no task work for it: kernel frames only, now */
		stat_inc(BPFPROF_STAT_OFFCPU_KERNEL_ONLY);
		offcpu_send(&old->r);
		if (!bpf_map_delete_elem(&offcpu_pending, &tid))
			__sync_fetch_and_add(&offcpu_nr_pending, -1);
	}
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
	if (compat_task_value_set(&offcpu_start, prev, now))
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

/*
 * The task of a pending block, back from the kernel entry it blocked in
 * (user registers ip, sp, bp now): its user walk (into `scratch`, after the
 * kernel part, the same walk as for samples), then the record goes out.
 * ctx: the sys_exit program's, for the walk's tail calls (legacy).
 */
static __always_inline void offcpu_finish(void *ctx, struct offcpu_pending *pd, __u32 tid, __u64 ip,
					  __u64 sp, __u64 bp)
{
	struct bpfprof_sample *e;
	__u32 slot = SLOT_OFFCPU, tgid;
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
	tgid = bpf_get_current_pid_tgid() >> 32;
	if (walk_begin(e, nk, tgid, pd->ip, pd->sp, pd->bp, true))
		stack_walk(ctx, HOOK_SYS_EXIT, e, nk, tgid);
	offcpu_finish_end(tid);
}

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

#endif /* BPFPROF_OFFCPU_BPF_H */

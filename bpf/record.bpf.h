/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * A stack record (struct bpfprof_sample), built and sent the same way for
 * a sample (on_sample) and an off-CPU block (offcpu.bpf.h, inside struct
 * bpfprof_offcpu): its header from the task, its kernel addresses, then,
 * once the user walk is over, the used part only goes (the records are
 * built in per-CPU slots: only what holds addresses travels): a sample's
 * into its CPU's ring (cpu_ring.bpf.h), an off-CPU block's through the
 * `samples` ring buffer.
 */
#ifndef BPFPROF_RECORD_BPF_H
#define BPFPROF_RECORD_BPF_H

#include "state.bpf.h"
#include "process.bpf.h"
#include "cpu_ring.bpf.h"

/*
 * The header of a record of task (tgid, tid) at time now, no addresses yet.
 * current: the running task's (task unused: NULL), else task's, another
 * one's (read from its task_struct).
 */
static __always_inline void stack_record_begin(struct bpfprof_sample *e, struct task_struct *task,
					       __u32 tgid, __u32 tid, __u64 now, bool current)
{
	e->type = BPFPROF_REC_SAMPLE;
	e->cpu = bpf_get_smp_processor_id();
	e->tgid = tgid;
	e->tid = tid;
	e->time_ns = now;
	if (current) {
		struct cpu_state *cs;

#if BPFPROF_LEGACY
		bpf_get_current_comm(e->comm, sizeof(e->comm));
		bench_part(12);
		e->start = process_start_current();
#else
		/*
		 * the name and start by plain loads through the task's BTF
		 * pointer, what bpf_get_current_comm reads (task->comm, which
		 * __set_task_comm keeps NUL-padded): a helper's call and
		 * return cost tens of ns on this project's hosts (SRSO's
		 * return thunk; docs/BENCHMARKS.md, issue 34). The cgroup by
		 * its helper: the chain task->cgroups->dfl_cgrp->kn->id, each
		 * pointer load a few searches of the kernel's BTF for the
		 * verifier, cost 4-5 ms of start-up
		 */
		struct task_struct *t = bpf_get_current_task_btf();

		__builtin_memcpy(e->comm, t->comm, sizeof(e->comm));
		bench_part(12);
		e->start = process_start_of(t);
#endif
		/*
		 * 0 for a process whose first records this CPU has sent
		 * (proc_known): user space takes a process's cgroup from the
		 * record that opens it (agg.c new_process; /proc where 0), and
		 * the helper's chain of four dependent loads, cold at 999 Hz,
		 * cost 100-200 ns a sample (docs/BENCHMARKS.md, issue 34 part 6)
		 */
		cs = cpu_state_here();
		e->cgroup_id = cs && proc_known(cs, tgid, e->start) ? 0 :
								      bpf_get_current_cgroup_id();
	} else {
		e->cgroup_id = BPF_CORE_READ(task, cgroups, dfl_cgrp, kn, id);
		bpf_probe_read_kernel(e->comm, sizeof(e->comm), task->comm);
		e->start = process_start(task);
	}
	e->nr_py = 0;
	e->py_stop = 0;
	e->pad = 0;
	e->nr_user = 0;
}

/*
 * The kernel addresses bpf_get_stack or bpf_get_task_stack put in e->ips
 * (kret: what it returned): their number, at most BPFPROF_MAX_STACK
 */
static __always_inline __u64 stack_record_kernel(struct bpfprof_sample *e, long kret)
{
	__u64 nk = kret > 0 ? (__u64)kret / 8 : 0;

	if (nk > BPFPROF_MAX_STACK)
		nk = BPFPROF_MAX_STACK;
	e->nr_kernel = nk;
	return nk;
}

/* The length of record rec: hdr bytes of its own, then stack record s, at most size */
static __always_inline __u64 stack_record_len(__u64 hdr, __u64 size, struct bpfprof_sample *s)
{
	__u64 len = hdr + BPFPROF_SAMPLE_HDR_SIZE +
		    ((__u64)s->nr_kernel + s->nr_user + 2 * (__u64)s->nr_py) * 8;

	if (len > size)
		len = size;
	/*
	 * bounded again where it is used: kept across the wake-up's calls, it
	 * went to the stack, where 5.10's verifier forgets a scalar's bounds
	 * (5.16 keeps them)
	 */
	barrier_var(len);
	if (len > size)
		len = size;
	return len;
}

/*
 * Wake the reader now (a wake-up policy's BPF_RB_FORCE_WAKEUP for a record
 * that went into a CPU's ring): an empty record reserved and discarded in
 * `samples`, whose descriptor the reader's epoll waits on; it then drains
 * every ring. Rare (a batch's wake-up, a process's first records)
 */
static __always_inline void ring_wake_reader(void)
{
	void *w = bpf_ringbuf_reserve(&samples, 8, 0);

	if (w)
		bpf_ringbuf_discard(w, BPF_RB_FORCE_WAKEUP);
}

/*
 * Send record rec (size bytes at most): hdr bytes of its own, then stack
 * record s with its nr_kernel, nr_user and nr_py set, through `samples`;
 * counted in stat sent, or dropped when the ring buffer is full.
 */
static __always_inline void stack_record_send(void *rec, __u64 hdr, __u64 size,
					      struct bpfprof_sample *s, __u32 sent, __u32 dropped)
{
	__u64 len, flags;

	bench_part(8);
	flags = ring_wakeup(s->tgid, s->start);
	bench_part(9);
	len = stack_record_len(hdr, size, s);
	if (bpf_ringbuf_output(&samples, rec, len, flags))
		stat_inc(dropped);
	else
		stat_inc(sent);
	if (flags == BPF_RB_FORCE_WAKEUP)
		bench_part(10);
	else
		bench_part(13);
}

/*
 * Send sample record s, its nr_kernel, nr_user and nr_py set, through its
 * CPU's ring (s->cpu's: the program runs there); counted in
 * BPFPROF_STAT_SAMPLES, or BPFPROF_STAT_DROPPED when that ring is full.
 * The wake-up policy (its notices included) runs before the record goes,
 * as for `samples`, from the CPU ring's fill; a wake-up after it.
 */
static __always_inline void sample_record_send(struct bpfprof_sample *s)
{
	__u64 len, flags, need, batch = ring_batch_fill(cpu_ring_size);
	struct bpfprof_cpu_ring *r;

	bench_part(8);
	r = cpu_ring_of(s->cpu);
	if (!r) {
		stat_inc(BPFPROF_STAT_DROPPED);
		return;
	}
	len = stack_record_len(0, sizeof(*s), s);
	need = cpu_ring_need(len);
	/* the fill exact from where the policy may act (a batch's; the crowding's half is above) */
	flags = ring_wakeup_cpu(s->tgid, s->start,
				cpu_ring_fill(r, need < batch ? batch - need : 0) + need,
				cpu_ring_size);
	bench_part(9);
	len = stack_record_len(0, sizeof(*s), s);
	if (cpu_ring_put(r, s, len, true)) {
		stat_inc(BPFPROF_STAT_DROPPED);
	} else {
		stat_inc(BPFPROF_STAT_SAMPLES);
		if (flags == BPF_RB_FORCE_WAKEUP)
			ring_wake_reader();
	}
	if (flags == BPF_RB_FORCE_WAKEUP)
		bench_part(10);
	else
		bench_part(13);
}

#endif /* BPFPROF_RECORD_BPF_H */

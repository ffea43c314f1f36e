/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * A stack record (struct bpfprof_sample), built and sent the same way for
 * a sample (on_sample) and an off-CPU block (offcpu.bpf.h, inside struct
 * bpfprof_offcpu): its header from the task, its kernel addresses, then,
 * once the user walk is over, one ring buffer output of the used part only
 * (the records are built in per-CPU slots: only what holds addresses
 * travels).
 */
#ifndef BPFPROF_RECORD_BPF_H
#define BPFPROF_RECORD_BPF_H

#include "state.bpf.h"
#include "process.bpf.h"

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
#if BPFPROF_LEGACY
		e->cgroup_id = bpf_get_current_cgroup_id();
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

		e->cgroup_id = bpf_get_current_cgroup_id();
		__builtin_memcpy(e->comm, t->comm, sizeof(e->comm));
		bench_part(12);
		e->start = process_start_of(t);
#endif
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

/*
 * Send record rec (size bytes at most): hdr bytes of its own, then stack
 * record s with its nr_kernel, nr_user and nr_py set; counted in stat
 * sent, or dropped when the ring buffer is full.
 */
static __always_inline void stack_record_send(void *rec, __u64 hdr, __u64 size,
					      struct bpfprof_sample *s, __u32 sent, __u32 dropped)
{
	__u64 len, flags;

	bench_part(8);
	flags = ring_wakeup(s->tgid, s->start);
	bench_part(9);
	/*
	 * The length after the wake-up's calls, bounded next to the output:
	 * kept across them, it went to the stack, where 5.10's verifier
	 * forgets a scalar's bounds (5.16 keeps them)
	 */
	len = hdr + BPFPROF_SAMPLE_HDR_SIZE +
	      ((__u64)s->nr_kernel + s->nr_user + 2 * (__u64)s->nr_py) * 8;
	if (len > size)
		len = size;
	barrier_var(len);
	if (len > size)
		len = size;
	if (bpf_ringbuf_output(&samples, rec, len, flags))
		stat_inc(dropped);
	else
		stat_inc(sent);
	if (flags == BPF_RB_FORCE_WAKEUP)
		bench_part(10);
	else
		bench_part(13);
}

#endif /* BPFPROF_RECORD_BPF_H */

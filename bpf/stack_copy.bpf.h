/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Stack copies: a sample whose user stack the walk cannot do here (its
 * process's tables are not ready, or a pc in no registered mapping:
 * unwind.bpf.h) goes to user space as struct bpfprof_sample_copy, with its
 * registers and the top of its stack, for user/unwind/unwind_copies.c to
 * walk with the same step (include/unwind_walk_step.h) once the tables are
 * built.
 */
#ifndef BPFPROF_STACK_COPY_BPF_H
#define BPFPROF_STACK_COPY_BPF_H

#include "state.bpf.h"
#include "process.bpf.h"
#include "unwind.bpf.h"

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

/*
 * Send sample e (nk kernel addresses) as a stack copy for user space to
 * walk: its header and kernel addresses, the registers the walk began from
 * (the sample's, or those the task saved at its kernel entry), and the user
 * stack from sp, a page at a time (bpf_probe_read_user is all or nothing:
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
	__u64 sp, off, first, copied = 0, end, size, pages;
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
		*r = *arch_sample_regs(ctx);
	}
	b->c.type = BPFPROF_REC_SAMPLE_COPY;
	b->c.why = w->copy;
	/* walk_begin's finding (w->f.leaf is the current frame's once the walk has stepped) */
	b->c.after_syscall = w->after_syscall;
	arch_dwarf_regs(b->c.regs, r);
	/* the registers the walk began from */
	b->c.regs[ARCH_DWREG_FP] = w->bp0;
	b->c.regs[ARCH_DWREG_SP] = w->sp0;
	b->c.regs[ARCH_DWREG_RA] = w->ip0;
	b->c.code_ok =
		!bpf_probe_read_user(b->c.code, sizeof(b->c.code), (const void *)(w->ip0 - 1));
	e->nr_user = 0;
	e->nr_py = 0;
	e->py_stop = 0;
	__builtin_memcpy(b->c.hdr, e, BPFPROF_SAMPLE_HDR_SIZE);
	/*
	 * Bounded again here, however the caller bounded it: the compiler
	 * would drop this bound for the caller's and keep nk on the stack,
	 * where 5.10's verifier forgets a scalar's range (bounds of spilled
	 * scalars are 5.16)
	 */
	barrier_var(nk);
	nk &= 0xff;
	if (nk > BPFPROF_MAX_STACK)
		nk = BPFPROF_MAX_STACK;
	off = nk * 8;
	if (off && bpf_probe_read_kernel(b->c.data, off, e->ips))
		return;
	/*
	 * To the end of sp's page, then whole pages. A page not present is a
	 * hole (bpf_probe_read_user zeroes what it could not read), not the
	 * end: sp's own page is missing in the fault that brings a new stack
	 * page in, and a large frame's untouched middle may be, while the
	 * return addresses above are there. The copy ends after the last page
	 * read (past the stack's top every read fails).
	 */
	/*
	 * What each read found goes to the buffer (map memory), not to
	 * registers: the verifier then has one state after each read, where
	 * values kept in registers made it walk every combination of the 8
	 * reads' outcomes (2^8 paths: 46 000 of the 55 000 instructions it
	 * processed for on_sample, 90 ms of start-up). Read back, bounded.
	 */
	sp = w->sp0;
	first = USTACK_CHUNK - (sp & (USTACK_CHUNK - 1));
	b->c.holes = 0;
	b->c.stack_size = 0;
	if (sp && off <= BPFPROF_MAX_STACK * 8) {
		if (bpf_probe_read_user(b->c.data + off, first, (const void *)sp))
			b->c.holes = 1;
		else
			b->c.stack_size = first;
		end = first;
#pragma unroll
		for (int k = 1; k < BPFPROF_COPY_STACK_SIZE / USTACK_CHUNK; k++) {
			if (end > BPFPROF_COPY_STACK_SIZE - USTACK_CHUNK)
				break;
			if (bpf_probe_read_user(b->c.data + off + end, USTACK_CHUNK,
						(const void *)(sp + end)))
				b->c.holes |= 1u << k;
			else
				b->c.stack_size = end + USTACK_CHUNK;
			end += USTACK_CHUNK;
		}
	}
	copied = b->c.stack_size;
	holes = b->c.holes;
	barrier_var(copied);
	if (copied > BPFPROF_COPY_STACK_SIZE)
		copied = BPFPROF_COPY_STACK_SIZE;
	/* the holes among the pages read, up to the last one */
	pages = (copied + USTACK_CHUNK - 1 + (sp & (USTACK_CHUNK - 1))) / USTACK_CHUNK;
	b->c.holes = holes & ((1u << pages) - 1);
	b->c.stack_size = copied;
	size = BPFPROF_SAMPLE_COPY_HDR_SIZE + off + copied;
	if (size > sizeof(b->c))
		size = sizeof(b->c);
	if (bpf_ringbuf_output(&samples, &b->c, size, ring_wakeup(e->tgid, e->start))) {
		stat_inc(BPFPROF_STAT_DROPPED);
		return;
	}
	stat_inc(BPFPROF_STAT_SAMPLES);
	stat_inc(w->copy == BPFPROF_STAT_COPY_NO_MAPPING  ? BPFPROF_STAT_COPY_NO_MAPPING :
		 w->copy == BPFPROF_STAT_COPY_FP_UNMAPPED ? BPFPROF_STAT_COPY_FP_UNMAPPED :
							    BPFPROF_STAT_COPY_NOT_READY);
	stat_add(BPFPROF_STAT_COPY_BYTES, size);
}

/*
 * send_sample_copy of this CPU's sample record (scratch's SLOT_SAMPLE) with
 * nk kernel addresses; returns 0. A global function (not in the legacy
 * variant, which copies in on_sample only): the verifier checks it once,
 * where inlined in sample_send it followed the copy's code in each state
 * a walk ended in (1,947 of on_sample's processed instructions;
 * docs/BENCHMARKS.md, issue 34 start-up, second pass).
 */
#if BPFPROF_LEGACY
static __always_inline int sample_copy_send(struct bpf_perf_event_data *ctx, __u64 nk)
#else
__noinline int sample_copy_send(struct bpf_perf_event_data *ctx, __u64 nk)
#endif
{
	__u32 slot = SLOT_SAMPLE;
	struct bpfprof_sample *e = bpf_map_lookup_elem(&scratch, &slot);

	if (e)
		send_sample_copy(ctx, e, nk);
	return 0;
}

#endif /* BPFPROF_STACK_COPY_BPF_H */

/* SPDX-License-Identifier: MIT */
/*
 * One frame of the user-stack walk, the one source of both walkers: the BPF
 * program's (walk_step in bpf/unwind.bpf.h, clang -target bpf, over the
 * live stack) and user space's (user/unwind/unwind_step.c, gcc, over a
 * stack copy, include/unwind_step.h), so that a sample user space walks
 * aggregates as if BPF had walked it, and the two cannot drift (the
 * OpenTelemetry eBPF profiler builds its BPF unwinder for user-space tests
 * the same way).
 *
 * The rules, in order: the rule of the frame's pc (the leaf's, else pc - 1:
 * a call may be a function's last instruction) from the compact rows
 * (include/bpfprof_abi.h, "Unwind tables"); CFA, PLT, signal-frame and END
 * rows; a frame-pointer step where there is no row (with the leaf-prologue
 * repair); one stack switch allowed to a frame-pointer chain, the second
 * taken for garbage; the stop reasons of enum bpfprof_stat.
 *
 * The includer defines UNWIND_WALK_ENV (its walk's context type) before
 * including this header, and these accessors, declared here, after it:
 *
 *   int unwind_walk_rule(struct unwind_walk_frame *w, UNWIND_WALK_ENV *env,
 *                        __u64 look, __u32 *rule)
 *       *rule for user address look (BPFPROF_UNWIND_NONE where its mapping
 *       has no table, or no row covers it), 0; non-zero: look is in no
 *       registered executable mapping
 *   void unwind_walk_unmapped(struct unwind_walk_frame *w, UNWIND_WALK_ENV *env,
 *                             __u64 look, bool fp_dropped)
 *       the walk stops at look, in no mapping: a frame-pointer step's
 *       return address, dropped (fp_dropped), or a pc that is code
 *   bool unwind_walk_code(struct unwind_walk_frame *w, UNWIND_WALK_ENV *env,
 *                         __u64 pc, __u8 *code)
 *       the 4 bytes at pc - 1 of the leaf into code[]; false: not readable
 *       (the leaf-prologue repair is then skipped)
 *   int unwind_walk_read(struct unwind_walk_frame *w, UNWIND_WALK_ENV *env,
 *                        __u64 addr, __u64 *val)
 *       the 8 bytes of the stack at addr, 0; non-zero: not readable
 *   void unwind_walk_new_stack(struct unwind_walk_frame *w, UNWIND_WALK_ENV *env)
 *       a signal frame's sp was read: the interrupted stack may be another
 *   void unwind_walk_counted(struct unwind_walk_frame *w, UNWIND_WALK_ENV *env,
 *                            bool fp_step)
 *       a frame was stepped, by frame pointers or by a row
 *   bool unwind_walk_store(struct unwind_walk_frame *w, UNWIND_WALK_ENV *env,
 *                          __u64 idx, __u64 ra)
 *       ips[idx] = ra; false (nothing stored) past the walk's limit
 *   void unwind_walk_no_row(struct unwind_walk_frame *w, UNWIND_WALK_ENV *env,
 *                           __u32 i)
 *       frame i (w's registers) has no row: it is stepped by frame pointers,
 *       as code that a JIT wrote is (V8's JavaScript frames: bpf/v8.bpf.h
 *       looks at them here, and only here)
 *
 * What is x86-64's (signal frame, prologue bytes, kernel addresses) comes
 * from include/arch.h.
 */
#ifndef BPFPROF_UNWIND_WALK_STEP_H
#define BPFPROF_UNWIND_WALK_STEP_H

#ifndef __bpf__
#include <stdbool.h>
#endif
#include "bpfprof_abi.h"
#include "arch.h"

/*
 * The frame being unwound and the walk's progress. Registers are those of
 * the frame: pc its instruction (the interrupted one for the leaf and below
 * a signal frame, else a return address, whose call is at pc - 1), sp and
 * bp its stack and frame pointers.
 */
struct unwind_walk_frame {
	__u64 pc, sp, bp;
	__u64 nk; /* ips[] index of the leaf (BPF: after the kernel addresses) */
	__u64 end; /* ips[nk..end) hold the user addresses */
	__u32 stop; /* enum bpfprof_stat of the walk's end; 0 while it goes on */
	__u8 tables; /* the process's mappings and tables are loaded */
	__u8 leaf; /* pc is not a return address */
	__u8 fp_prev; /* pc came from a frame-pointer step: not checked yet */
	__u8 jumped; /* a frame-pointer step went down or sideways once */
};

/* The includer's accessors (above) */
static __always_inline int unwind_walk_rule(struct unwind_walk_frame *w, UNWIND_WALK_ENV *env,
					    __u64 look, __u32 *rule);
static __always_inline void unwind_walk_unmapped(struct unwind_walk_frame *w, UNWIND_WALK_ENV *env,
						 __u64 look, bool fp_dropped);
static __always_inline bool unwind_walk_code(struct unwind_walk_frame *w, UNWIND_WALK_ENV *env,
					     __u64 pc, __u8 *code);
static __always_inline int unwind_walk_read(struct unwind_walk_frame *w, UNWIND_WALK_ENV *env,
					    __u64 addr, __u64 *val);
static __always_inline void unwind_walk_new_stack(struct unwind_walk_frame *w,
						  UNWIND_WALK_ENV *env);
static __always_inline void unwind_walk_counted(struct unwind_walk_frame *w, UNWIND_WALK_ENV *env,
						bool fp_step);
static __always_inline bool unwind_walk_store(struct unwind_walk_frame *w, UNWIND_WALK_ENV *env,
					      __u64 idx, __u64 ra);
static __always_inline void unwind_walk_no_row(struct unwind_walk_frame *w, UNWIND_WALK_ENV *env,
					       __u32 i);

static __always_inline long unwind_walk_stop(struct unwind_walk_frame *w, __u32 reason)
{
	w->stop = reason;
	return 1;
}

/*
 * Step i of the walk (step 0 unwinds the leaf): the caller's return
 * address into ips[nk + 1 + i], its registers into *w. Returns 1 to stop
 * the walk (w->stop says why), 0 to go on. Each rule comes down to where
 * the caller's return address, bp and sp are, so that the stack is read in
 * one place (fewer paths for the BPF verifier to follow).
 *
 * fp_only, a constant: the includer knows that this frame is a
 * frame-pointer step that no hook looks at (w->tables 0, pc a return
 * address: w->leaf 0, and unwind_walk_no_row would do nothing), so that
 * the code is that step's alone, as unwind_walk_step would take it
 * (bpf/unwind.bpf.h walks such frames several a call;
 * tests/test_unwind_walk_fp.c checks that both walk alike).
 */
static __always_inline long unwind_walk_step_of(struct unwind_walk_frame *w, UNWIND_WALK_ENV *env,
						__u32 i, bool fp_only)
{
	__u64 pc = w->pc, sp = w->sp, bp = w->bp, look, cfa, ra = 0, idx;
	__u64 ra_at, bp_at = 0, sp_at = 0, next_sp;
	__u32 rule = BPFPROF_UNWIND_NONE, kind;
	__s32 slot;
	bool fp_step = false, leaf = false;

	look = w->leaf ? pc : pc - 1; /* a call may be the last instruction of a function */
	if (!fp_only && w->tables && unwind_walk_rule(w, env, look, &rule)) {
		/* a frame-pointer step's return address outside the code: garbage, not a frame */
		if (w->fp_prev && w->end > w->nk + 1) {
			w->end--;
			unwind_walk_unmapped(w, env, look, true);
		} else if (!w->fp_prev) {
			/* a pc from the registers or a CFI step is code: mapped since the registration */
			unwind_walk_unmapped(w, env, look, false);
		}
		return unwind_walk_stop(w, BPFPROF_STAT_WALK_NO_MAPPING);
	}

	kind = BPFPROF_UNWIND_KIND(rule);
	if (kind == BPFPROF_UNWIND_END)
		return unwind_walk_stop(w, BPFPROF_STAT_WALK_END);
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
		 * __restore_rt: sp points at the rt_sigframe's ucontext (the
		 * handler's return popped pretcode), whose saved registers give
		 * the interrupted frame; its pc is not a return address.
		 */
		ra_at = sp + ARCH_SIGFRAME_MCONTEXT + ARCH_SIGCONTEXT_IP;
		bp_at = sp + ARCH_SIGFRAME_MCONTEXT + ARCH_SIGCONTEXT_BP;
		sp_at = sp + ARCH_SIGFRAME_MCONTEXT + ARCH_SIGCONTEXT_SP;
		next_sp = 0;
		leaf = true;
	} else {
		/* no row: a frame-pointer step, { saved bp, return address } at bp */
		__u8 code[4];
		__u64 above;

		if (!fp_only)
			unwind_walk_no_row(w, env, i);
		above = (!fp_only && i == 0 && w->leaf && unwind_walk_code(w, env, pc, code)) ?
				arch_leaf_prologue(code) :
				0;
		fp_step = true;
		if (above) {
			ra_at = sp + above - 8;
			next_sp = sp + above;
		} else {
			if (!bp || (bp & 7) || arch_kernel_addr(bp) || bp < sp)
				return unwind_walk_stop(w, BPFPROF_STAT_WALK_FP_END);
			ra_at = bp + 8;
			bp_at = bp;
			next_sp = bp + 16;
		}
	}

	if (unwind_walk_read(w, env, ra_at, &ra))
		return unwind_walk_stop(w, fp_step ? BPFPROF_STAT_WALK_FP_END :
						     BPFPROF_STAT_WALK_READ_FAULT);
	if (bp_at) {
		__u64 old_bp = bp;

		if (unwind_walk_read(w, env, bp_at, &bp))
			return unwind_walk_stop(w, fp_step ? BPFPROF_STAT_WALK_FP_END :
							     BPFPROF_STAT_WALK_READ_FAULT);
		if (fp_step && bp <= old_bp) {
			/* one jump is a stack switch (sigaltstack, Go's systemstack); two are garbage */
			if (bp == old_bp || w->jumped)
				bp = 0;
			w->jumped = 1;
		}
	}
	if (sp_at) {
		if (unwind_walk_read(w, env, sp_at, &next_sp))
			return unwind_walk_stop(w, BPFPROF_STAT_WALK_READ_FAULT);
		unwind_walk_new_stack(w, env);
	}
	unwind_walk_counted(w, env, fp_step);

	if (!ra || arch_kernel_addr(ra))
		return unwind_walk_stop(w,
					fp_step ? BPFPROF_STAT_WALK_FP_END : BPFPROF_STAT_WALK_BAD);
	if (!fp_step && !leaf && next_sp <= sp)
		/* CFI that does not go up the stack */
		return unwind_walk_stop(w, BPFPROF_STAT_WALK_BAD);
	idx = w->nk + 1 + i;
	if (!unwind_walk_store(w, env, idx, ra))
		return unwind_walk_stop(w, BPFPROF_STAT_WALK_LIMIT);
	w->end = idx + 1;
	w->pc = ra;
	w->sp = next_sp;
	w->bp = bp;
	w->leaf = leaf;
	w->fp_prev = fp_step;
	if (fp_step && !bp && !w->tables)
		return unwind_walk_stop(w, BPFPROF_STAT_WALK_FP_END);
	return 0;
}

static __always_inline long unwind_walk_step(struct unwind_walk_frame *w, UNWIND_WALK_ENV *env,
					     __u32 i)
{
	return unwind_walk_step_of(w, env, i, false);
}

#endif /* BPFPROF_UNWIND_WALK_STEP_H */

// SPDX-License-Identifier: MIT
/*
 * User-space twin of the BPF user-stack walk (include/unwind_step.h): each
 * step below is walk_step of bpf/profile.bpf.c, line for line, reading the
 * stack from a copy instead of the live process.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include "unwind_step.h"

struct walk {
	const struct unwind_step_stack *stack;
	uint64_t pc, sp, bp;
	uint32_t end;
	uint32_t stop;
	bool tables, leaf, fp_prev, jumped;
};

static bool kernel_addr(uint64_t a)
{
	return a >> 63;
}

/* Whether the page of user address addr was a hole of the copy */
static bool in_hole(const struct unwind_step_stack *s, uint64_t addr)
{
	uint64_t page = (addr >> 12) - (s->addr >> 12);

	return page < 32 && (s->holes >> page) & 1;
}

/* The 8 bytes at addr, from the copy; false outside it or in a hole (BPF: a page not present) */
static bool stack_read(const struct walk *w, uint64_t addr, uint64_t *val)
{
	const struct unwind_step_stack *s = w->stack;

	if (!s->data || addr < s->addr || addr - s->addr > s->size ||
	    s->size - (addr - s->addr) < 8 || in_hole(s, addr) || in_hole(s, addr + 7))
		return false;
	memcpy(val, s->data + (addr - s->addr), 8);
	return true;
}

/* leaf_prologue of bpf/profile.bpf.c: code[] is the 4 bytes at pc - 1 */
static uint64_t leaf_prologue(const uint8_t *code)
{
	if (!code)
		return 0;
	if (code[1] == 0x55 || code[1] == 0xc3 || (code[1] == 0xf3 && code[2] == 0xc3))
		return 8; /* push %rbp; ret; rep ret */
	if (code[0] == 0x55 && code[1] == 0x48 && code[2] == 0x89 && code[3] == 0xe5)
		return 16; /* push %rbp done, mov %rsp,%rbp next */
	return 0;
}

static bool stop(struct walk *w, uint32_t reason)
{
	w->stop = reason;
	return true;
}

/* One frame (step i); true to stop, w->stop says why */
static bool step(struct walk *w, uint32_t i, const struct unwind_step_regs *regs,
		 unwind_step_rule_fn rule_fn, void *ctx, uint32_t max, uint64_t *ips,
		 struct unwind_step_result *res)
{
	uint64_t pc = w->pc, sp = w->sp, bp = w->bp, look, cfa, ra = 0, idx;
	uint64_t ra_at, bp_at = 0, sp_at = 0, next_sp;
	uint32_t rule = BPFPROF_UNWIND_NONE, kind;
	int32_t slot;
	bool fp_step = false, leaf = false;

	look = w->leaf ? pc : pc - 1; /* a call may be the last instruction of a function */
	if (w->tables && rule_fn(ctx, look, &rule) == -ENOENT) {
		/* a frame-pointer step's return address outside the code: garbage, not a frame */
		if (w->fp_prev && w->end > 1) {
			w->end--;
			res->unmapped_fp_pc = look;
		} else if (!w->fp_prev)
			res->unmapped_pc = look;
		return stop(w, BPFPROF_STAT_WALK_NO_MAPPING);
	}

	kind = BPFPROF_UNWIND_KIND(rule);
	if (kind == BPFPROF_UNWIND_END)
		return stop(w, BPFPROF_STAT_WALK_END);
	if (kind == BPFPROF_UNWIND_CFA) {
		cfa = ((rule & BPFPROF_UNWIND_CFA_RBP) ? bp : sp) + BPFPROF_UNWIND_CFA_OFF(rule);
		ra_at = cfa - 8;
		slot = BPFPROF_UNWIND_RBP_SLOT(rule);
		if (slot)
			bp_at = cfa + (int64_t)slot * 8;
		next_sp = cfa;
	} else if (kind == BPFPROF_UNWIND_PLT) {
		cfa = sp + BPFPROF_UNWIND_CFA_OFF(rule) +
		      ((pc & 15) >= (uint64_t)BPFPROF_UNWIND_RBP_SLOT(rule) ? 8 : 0);
		ra_at = cfa - 8;
		next_sp = cfa;
	} else if (kind == BPFPROF_UNWIND_SIGNAL) {
		/* __restore_rt: the ucontext's uc_mcontext at rsp + 40: rbp +80, rsp +120, rip +128 */
		ra_at = sp + 40 + 128;
		bp_at = sp + 40 + 80;
		sp_at = sp + 40 + 120;
		next_sp = 0;
		leaf = true;
	} else {
		/* no row: a frame-pointer step, { saved rbp, return address } at rbp */
		uint64_t above = (i == 0 && w->leaf) ? leaf_prologue(regs->code) : 0;

		fp_step = true;
		if (above) {
			ra_at = sp + above - 8;
			next_sp = sp + above;
		} else {
			if (!bp || (bp & 7) || kernel_addr(bp) || bp < sp)
				return stop(w, BPFPROF_STAT_WALK_FP_END);
			ra_at = bp + 8;
			bp_at = bp;
			next_sp = bp + 16;
		}
	}

	if (!stack_read(w, ra_at, &ra))
		return stop(w, fp_step ? BPFPROF_STAT_WALK_FP_END : BPFPROF_STAT_WALK_READ_FAULT);
	if (bp_at) {
		uint64_t old_bp = bp;

		if (!stack_read(w, bp_at, &bp))
			return stop(w, fp_step ? BPFPROF_STAT_WALK_FP_END :
						 BPFPROF_STAT_WALK_READ_FAULT);
		if (fp_step && bp <= old_bp) {
			/* one jump is a stack switch (sigaltstack, Go's systemstack); two are garbage */
			if (bp == old_bp || w->jumped)
				bp = 0;
			w->jumped = true;
		}
	}
	if (sp_at && !stack_read(w, sp_at, &next_sp))
		return stop(w, BPFPROF_STAT_WALK_READ_FAULT);
	if (fp_step)
		res->frames_fp++;
	else
		res->frames_cfi++;

	if (!ra || kernel_addr(ra))
		return stop(w, fp_step ? BPFPROF_STAT_WALK_FP_END : BPFPROF_STAT_WALK_BAD);
	if (!fp_step && !leaf && next_sp <= sp)
		return stop(w, BPFPROF_STAT_WALK_BAD); /* CFI that does not go up the stack */
	idx = 1 + (uint64_t)i;
	if (idx >= max)
		return stop(w, BPFPROF_STAT_WALK_LIMIT);
	ips[idx] = ra;
	w->end = (uint32_t)idx + 1;
	w->pc = ra;
	w->sp = next_sp;
	w->bp = bp;
	w->leaf = leaf;
	w->fp_prev = fp_step;
	if (fp_step && !bp && !w->tables)
		return stop(w, BPFPROF_STAT_WALK_FP_END);
	return false;
}

void unwind_step__walk(const struct unwind_step_regs *regs, const struct unwind_step_stack *stack,
		       unwind_step_rule_fn rule, void *ctx, uint32_t max, uint64_t *ips,
		       struct unwind_step_result *res)
{
	struct walk w = { .stack = stack };
	uint32_t i;

	memset(res, 0, sizeof(*res));
	if (!regs->ip || kernel_addr(regs->ip) || !max)
		return;
	if (max > BPFPROF_MAX_USER_STACK)
		max = BPFPROF_MAX_USER_STACK;
	w.pc = regs->ip;
	w.sp = regs->sp;
	w.bp = regs->bp;
	w.end = 1;
	w.leaf = !regs->after_syscall; /* as walk_begin */
	w.tables = rule != NULL;
	ips[0] = regs->ip;
	/* as the BPF program: max - 1 steps (bpf_loop's count), the leaf being stored already */
	for (i = 0; i + 1 < max; i++)
		if (step(&w, i, regs, rule, ctx, max, ips, res))
			break;
	res->nr = w.end;
	res->stop = w.stop ? w.stop : BPFPROF_STAT_WALK_LIMIT;
}

// SPDX-License-Identifier: MIT
/*
 * The BPF user-stack walk in user space (include/unwind_step.h): the same
 * step, include/unwind_walk_step.h, compiled here with accessors that read
 * the stack from a copy instead of the live process and look rules up
 * through the caller's function instead of the BPF maps.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include "unwind_step.h"

/* What a step reads and where it writes (UNWIND_WALK_ENV) */
struct step_env {
	const struct unwind_step_regs *regs;
	const struct unwind_step_stack *stack;
	unwind_step_rule_fn rule;
	void *ctx;
	uint32_t max;
	uint64_t *ips;
	struct unwind_step_result *res;
	bool no_row; /* the step's frame had no row (unwind_walk_no_row) */
};

#define UNWIND_WALK_ENV struct step_env
#include "unwind_walk_step.h"

/* Whether the page of user address addr was a hole of the copy */
static bool in_hole(const struct unwind_step_stack *s, uint64_t addr)
{
	uint64_t page = (addr >> 12) - (s->addr >> 12);

	return page < 32 && (s->holes >> page) & 1;
}

static __always_inline int unwind_walk_rule(struct unwind_walk_frame *w, struct step_env *env,
					    __u64 look, __u32 *rule)
{
	return env->rule(env->ctx, look, rule) == -ENOENT;
}

static __always_inline void unwind_walk_unmapped(struct unwind_walk_frame *w, struct step_env *env,
						 __u64 look, bool fp_dropped)
{
	if (fp_dropped)
		env->res->unmapped_fp_pc = look;
	else
		env->res->unmapped_pc = look;
}

/* The leaf's code bytes came with the copy (regs->code: the 4 bytes at ip - 1) */
static __always_inline bool unwind_walk_code(struct unwind_walk_frame *w, struct step_env *env,
					     __u64 pc, __u8 *code)
{
	if (!env->regs->code)
		return false;
	memcpy(code, env->regs->code, 4);
	return true;
}

/* The 8 bytes at addr, from the copy; outside it or in a hole it fails (BPF: a page not present) */
static __always_inline int unwind_walk_read(struct unwind_walk_frame *w, struct step_env *env,
					    __u64 addr, __u64 *val)
{
	const struct unwind_step_stack *s = env->stack;

	if (!s->data || addr < s->addr || addr - s->addr > s->size ||
	    s->size - (addr - s->addr) < 8 || in_hole(s, addr) || in_hole(s, addr + 7))
		return -1;
	memcpy(val, s->data + (addr - s->addr), 8);
	return 0;
}

static __always_inline void unwind_walk_new_stack(struct unwind_walk_frame *w, struct step_env *env)
{
}

static __always_inline void unwind_walk_counted(struct unwind_walk_frame *w, struct step_env *env,
						bool fp_step)
{
	if (fp_step)
		env->res->frames_fp++;
	else
		env->res->frames_cfi++;
}

static __always_inline bool unwind_walk_store(struct unwind_walk_frame *w, struct step_env *env,
					      __u64 idx, __u64 ra)
{
	if (idx >= env->max)
		return false;
	env->ips[idx] = ra;
	return true;
}

static __always_inline void unwind_walk_no_row(struct unwind_walk_frame *w, struct step_env *env,
					       __u32 i)
{
	env->no_row = true;
}

void unwind_step__walk(const struct unwind_step_regs *regs, const struct unwind_step_stack *stack,
		       unwind_step_rule_fn rule, void *ctx, uint32_t max, uint64_t *ips,
		       struct unwind_step_result *res)
{
	uint32_t nr;

	unwind_step__walk_frames(regs, stack, rule, ctx, max, ips, NULL, &nr, res);
}

void unwind_step__walk_frames(const struct unwind_step_regs *regs,
			      const struct unwind_step_stack *stack, unwind_step_rule_fn rule,
			      void *ctx, uint32_t max, uint64_t *ips,
			      struct unwind_step_frame *frames, uint32_t *nr_frames,
			      struct unwind_step_result *res)
{
	struct step_env env = {
		.regs = regs, .stack = stack, .rule = rule, .ctx = ctx, .ips = ips, .res = res
	};
	struct unwind_walk_frame w = { 0 };
	uint32_t i;

	memset(res, 0, sizeof(*res));
	*nr_frames = 0;
	if (!regs->ip || arch_kernel_addr(regs->ip) || !max)
		return;
	if (max > BPFPROF_MAX_USER_STACK)
		max = BPFPROF_MAX_USER_STACK;
	env.max = max;
	w.pc = regs->ip;
	w.sp = regs->sp;
	w.bp = regs->bp;
	w.end = 1;
	w.leaf = !regs->after_syscall; /* as walk_begin */
	w.tables = rule != NULL;
	ips[0] = regs->ip;
	/* as the BPF program: max - 1 steps (bpf_loop's count), the leaf being stored already */
	for (i = 0; i + 1 < max; i++) {
		bool stop;

		if (frames) {
			frames[i] = (struct unwind_step_frame){ w.pc, w.sp, w.bp, false };
			*nr_frames = i + 1;
		}
		env.no_row = false;
		stop = unwind_walk_step(&w, &env, i);
		if (frames)
			frames[i].no_row = env.no_row;
		if (stop)
			break;
	}
	res->nr = (uint32_t)w.end;
	res->stop = w.stop ? w.stop : BPFPROF_STAT_WALK_LIMIT;
}

// SPDX-License-Identifier: MIT
/*
 * cmocka tests for include/unwind_walk_step.h's fp_only step: the BPF walk
 * (walk_steps in bpf/unwind.bpf.h) steps plain frame-pointer frames with
 * unwind_walk_step_of(..., fp_only = true), the generic step's code with
 * the rule lookup, the no-row hook and the leaf-prologue repair compiled
 * out, where the walk has no tables and the frame is not the leaf. Each
 * test walks one frame chain both ways from a return address and checks
 * that they store the same addresses, stop for the same reason and leave
 * the same registers: a chain to rbp 0, a saved rbp below its frame or
 * equal to it, an unaligned rbp, a saved rbp outside the stack, a zero and a kernel
 * return address, and the frame limit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "unwind_step.h"

#define S 0x7ffe0000ULL /* the stack's first byte */
#define WORDS 64
#define CODE 0x401000ULL /* return addresses */

struct fp_env {
	uint64_t stack[WORDS]; /* S + 8 * i */
	uint64_t ips[WORDS];
	uint32_t max; /* ips[] the walk may fill */
	uint32_t frames_fp, frames_cfi, no_rows;
};

#define UNWIND_WALK_ENV struct fp_env
#include "unwind_walk_step.h"

/* no tables in these walks: never asked */
static __always_inline int unwind_walk_rule(struct unwind_walk_frame *w, struct fp_env *env,
					    __u64 look, __u32 *rule)
{
	fail_msg("rule looked up for %#llx without tables", (unsigned long long)look);
	return -1;
}

static __always_inline void unwind_walk_unmapped(struct unwind_walk_frame *w, struct fp_env *env,
						 __u64 look, bool fp_dropped)
{
}

static __always_inline bool unwind_walk_code(struct unwind_walk_frame *w, struct fp_env *env,
					     __u64 pc, __u8 *code)
{
	return false;
}

static __always_inline int unwind_walk_read(struct unwind_walk_frame *w, struct fp_env *env,
					    __u64 addr, __u64 *val)
{
	if (addr < S || addr + 8 > S + sizeof(env->stack) || (addr & 7))
		return -1;
	*val = env->stack[(addr - S) / 8];
	return 0;
}

static __always_inline void unwind_walk_new_stack(struct unwind_walk_frame *w, struct fp_env *env)
{
}

static __always_inline void unwind_walk_counted(struct unwind_walk_frame *w, struct fp_env *env,
						bool fp_step)
{
	if (fp_step)
		env->frames_fp++;
	else
		env->frames_cfi++;
}

static __always_inline bool unwind_walk_store(struct unwind_walk_frame *w, struct fp_env *env,
					      __u64 idx, __u64 ra)
{
	if (idx >= env->max)
		return false;
	env->ips[idx] = ra;
	return true;
}

static __always_inline void unwind_walk_no_row(struct unwind_walk_frame *w, struct fp_env *env,
					       __u32 i)
{
	env->no_rows++;
}

/* A frame record at stack word i: { saved rbp, return address } */
static void frame_at(struct fp_env *env, unsigned int i, uint64_t saved_bp, uint64_t ra)
{
	env->stack[i] = saved_bp;
	env->stack[i + 1] = ra;
}

/* The walk of env's stack from a return address, its rbp bp and sp: by each step */
static void walk(struct fp_env *env, struct unwind_walk_frame *w, uint64_t bp, bool fp_only)
{
	__u32 i;

	memset(w, 0, sizeof(*w));
	w->pc = CODE; /* a return address: not the leaf */
	w->sp = S;
	w->bp = bp;
	w->end = 1;
	env->ips[0] = CODE;
	for (i = 0; i < WORDS; i++)
		if (fp_only ? unwind_walk_step_of(w, env, i, true) : unwind_walk_step(w, env, i))
			return;
	fail_msg("the walk did not stop");
}

/* Both steps over env's stack from rbp bp: the same walk; returns its stop reason */
static uint32_t same_walk(const struct fp_env *init, uint64_t bp, uint64_t want_frames)
{
	struct fp_env a = *init, b = *init;
	struct unwind_walk_frame wa, wb;

	walk(&a, &wa, bp, false);
	walk(&b, &wb, bp, true);
	assert_int_equal(wa.end, wb.end);
	assert_int_equal(wa.end, want_frames);
	assert_memory_equal(a.ips, b.ips, sizeof(a.ips));
	assert_int_equal(wa.stop, wb.stop);
	assert_int_equal(wa.pc, wb.pc);
	assert_int_equal(wa.sp, wb.sp);
	assert_int_equal(wa.bp, wb.bp);
	assert_int_equal(wa.leaf, wb.leaf);
	assert_int_equal(wa.fp_prev, wb.fp_prev);
	assert_int_equal(wa.jumped, wb.jumped);
	assert_int_equal(a.frames_fp, b.frames_fp);
	assert_int_equal(a.frames_cfi, 0);
	assert_int_equal(b.frames_cfi, 0);
	/* the generic step calls the no-row hook at each frame, fp_only never */
	assert_int_equal(b.no_rows, 0);
	assert_true(a.no_rows > 0);
	return wa.stop;
}

static void init(struct fp_env *env, uint32_t max)
{
	memset(env, 0, sizeof(*env));
	env->max = max;
}

/* three frames up the stack, the last with rbp 0: the chain's end */
static void test_chain_to_zero(void **state)
{
	struct fp_env env;

	init(&env, WORDS);
	frame_at(&env, 2, S + 8 * 6, CODE + 0x10);
	frame_at(&env, 6, S + 8 * 12, CODE + 0x20);
	frame_at(&env, 12, 0, CODE + 0x30);
	assert_int_equal(same_walk(&env, S + 8 * 2, 4), BPFPROF_STAT_WALK_FP_END);
}

/*
 * a saved rbp below its frame (a stack switch, or garbage): its return
 * address is stored, the jump noted, and the next frame, below the new sp,
 * ends the walk
 */
static void test_jump_down(void **state)
{
	struct fp_env env;

	init(&env, WORDS);
	frame_at(&env, 20, S + 8 * 4, CODE + 0x10);
	frame_at(&env, 4, S + 8 * 30, CODE + 0x20);
	assert_int_equal(same_walk(&env, S + 8 * 20, 2), BPFPROF_STAT_WALK_FP_END);
}

/* a saved rbp equal to its frame's is garbage: rbp 0, the walk's end */
static void test_same_bp(void **state)
{
	struct fp_env env;

	init(&env, WORDS);
	frame_at(&env, 2, S + 8 * 6, CODE + 0x10);
	frame_at(&env, 6, S + 8 * 6, CODE + 0x20);
	assert_int_equal(same_walk(&env, S + 8 * 2, 3), BPFPROF_STAT_WALK_FP_END);
}

/* a saved rbp that is not 8-aligned ends the walk there */
static void test_unaligned(void **state)
{
	struct fp_env env;

	init(&env, WORDS);
	frame_at(&env, 2, S + 8 * 6 + 4, CODE + 0x10);
	assert_int_equal(same_walk(&env, S + 8 * 2, 2), BPFPROF_STAT_WALK_FP_END);
}

/* a saved rbp past the stack: its frame cannot be read */
static void test_unreadable(void **state)
{
	struct fp_env env;

	init(&env, WORDS);
	frame_at(&env, 2, S + 8 * 6, CODE + 0x10);
	frame_at(&env, 6, S + 8 * (WORDS + 100), CODE + 0x20);
	assert_int_equal(same_walk(&env, S + 8 * 2, 3), BPFPROF_STAT_WALK_FP_END);
}

/* a return address of 0 or in the kernel is no frame */
static void test_bad_return(void **state)
{
	struct fp_env env;

	init(&env, WORDS);
	frame_at(&env, 2, S + 8 * 6, CODE + 0x10);
	frame_at(&env, 6, S + 8 * 12, 0);
	assert_int_equal(same_walk(&env, S + 8 * 2, 2), BPFPROF_STAT_WALK_FP_END);
	frame_at(&env, 6, S + 8 * 12, 0xffffffff81000000ULL);
	assert_int_equal(same_walk(&env, S + 8 * 2, 2), BPFPROF_STAT_WALK_FP_END);
}

/* the walk stops at its limit of stored addresses */
static void test_limit(void **state)
{
	struct fp_env env;
	unsigned int i;

	init(&env, 4);
	for (i = 0; i < 10; i++)
		frame_at(&env, 2 + 4 * i, S + 8 * (2 + 4 * (i + 1)), CODE + 0x10 * (i + 1));
	assert_int_equal(same_walk(&env, S + 8 * 2, 4), BPFPROF_STAT_WALK_LIMIT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chain_to_zero), cmocka_unit_test(test_jump_down),
		cmocka_unit_test(test_same_bp),	      cmocka_unit_test(test_unaligned),
		cmocka_unit_test(test_unreadable),    cmocka_unit_test(test_bad_return),
		cmocka_unit_test(test_limit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

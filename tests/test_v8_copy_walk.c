// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/capture/v8_copy_walk.c (include/v8_copy_walk.h):
 * a stack copy with an optimized leaf frame, an interpreted caller, a
 * typed frame and a frame whose function slot is no JSFunction, over a
 * fake heap with 64-bit tagged fields: the two JavaScript frames recorded
 * as the BPF walk records them (object, offset, check, native index,
 * kind), the others skipped; the same walk again from the function cache
 * with no read of the heap; a function whose Code was replaced since (a
 * tier-up) read again; the frame limit.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "bpfprof_abi.h"
#include "v8_copy_walk.h"

#define HEAP 0x7f0000000000ull
#define SP 0x7ffd00000000ull
#define CODE1 0x50000000ull
#define CODE3 0x60000000ull

struct mem {
	uint8_t heap[0x1000];
	uint8_t stack[0x400];
	unsigned reads;
};

static int mem_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct mem *m = ctx;

	m->reads++;
	if (addr < HEAP || addr + len > HEAP + sizeof(m->heap))
		return -EFAULT;
	memcpy(buf, m->heap + (addr - HEAP), len);
	return 0;
}

static void put64(uint8_t *b, uint64_t off, uint64_t v)
{
	memcpy(b + off, &v, 8);
}

static void put32(uint8_t *b, uint64_t off, uint32_t v)
{
	memcpy(b + off, &v, 4);
}

static const struct bpfprof_v8_proc cfg = {
	.fp_marker = -8,
	.fp_function = -16,
	.fp_bytecode_array = -32,
	.fp_bytecode_offset = -40,
	.fp_low = -40,
	.flags = BPFPROF_V8_CODE_START_PTR,
	.code_kind_shift = 0,
	.kind_baseline = 3,
	.smi_shift = 32,
	.type_function_first = 2066,
	.type_function_last = 2081,
	.map_instance_type = 12,
	.fn_shared = 24,
	.fn_code = 48,
	.code_start = 8,
	.code_size = 16,
	.code_flags = 20,
	.code_kind_mask = 0xf,
};

/* tagged addresses of the fake heap's objects */
#define MAP_FN (HEAP + 0x100 + 1)
#define MAP_OTHER (HEAP + 0x180 + 1)
#define F1 (HEAP + 0x200 + 1)
#define S1 (HEAP + 0x280 + 1)
#define C1 (HEAP + 0x300 + 1)
#define F2 (HEAP + 0x400 + 1)
#define S2 (HEAP + 0x480 + 1)
#define C2 (HEAP + 0x500 + 1)
#define NOTFN (HEAP + 0x600 + 1)
#define BA (HEAP + 0x700 + 1)
#define CTX (HEAP + 0x780 + 1)
#define C3 (HEAP + 0x800 + 1)

static void code(struct mem *m, uint64_t c, uint64_t start, uint32_t size, uint32_t kind)
{
	put64(m->heap, c - 1 - HEAP + 8, start);
	put32(m->heap, c - 1 - HEAP + 16, size);
	put32(m->heap, c - 1 - HEAP + 20, kind);
}

static void function(struct mem *m, uint64_t f, uint64_t shared, uint64_t c)
{
	put64(m->heap, f - 1 - HEAP, MAP_FN);
	put64(m->heap, f - 1 - HEAP + 24, shared);
	put64(m->heap, f - 1 - HEAP + 48, c);
}

/*
 * frames[4] over m's stack, each stepped without a row: optimized leaf,
 * interpreted caller, typed frame, no JSFunction
 */
static void setup(struct mem *m, struct unwind_step_frame *fr, struct unwind_step_stack *st)
{
	uint16_t t = 2066, other = 5;

	memset(m, 0, sizeof(*m));
	memcpy(m->heap + 0x100 + 12, &t, 2);
	memcpy(m->heap + 0x180 + 12, &other, 2);
	function(m, F1, S1, C1);
	code(m, C1, CODE1, 0x100, 4); /* optimized (kind > baseline's 3) */
	function(m, F2, S2, C2);
	code(m, C2, 0x1000, 0x10, 1); /* the interpreter's entry: no compiled frame */
	put64(m->heap, NOTFN - 1 - HEAP, MAP_OTHER);
	/* frame 0: bp SP + 0x100 */
	put64(m->stack, 0x100 - 8, CTX);
	put64(m->stack, 0x100 - 16, F1);
	/* frame 1: bp SP + 0x200, interpreted: bytecode offset 58 */
	put64(m->stack, 0x200 - 8, CTX);
	put64(m->stack, 0x200 - 16, F2);
	put64(m->stack, 0x200 - 32, BA);
	put64(m->stack, 0x200 - 40, (uint64_t)58 << 32);
	/* frame 2: a typed frame's marker */
	put64(m->stack, 0x300 - 8, 0x1a);
	/* frame 3: a context, but no JSFunction */
	put64(m->stack, 0x3f0 - 8, CTX);
	put64(m->stack, 0x3f0 - 16, NOTFN);
	fr[0] = (struct unwind_step_frame){ CODE1 + 0x10, SP, SP + 0x100, true };
	fr[1] = (struct unwind_step_frame){ 0x12345, SP + 0x110, SP + 0x200, true };
	fr[2] = (struct unwind_step_frame){ 0x23456, SP + 0x210, SP + 0x300, true };
	fr[3] = (struct unwind_step_frame){ 0x34567, SP + 0x310, SP + 0x3f0, true };
	*st = (struct unwind_step_stack){ m->stack, SP, sizeof(m->stack), 0 };
}

static void test_frames(void **state)
{
	struct mem *m = calloc(1, sizeof(*m));
	struct v8_copy_cache *cache = calloc(1, sizeof(*cache));
	struct unwind_step_frame fr[4];
	struct unwind_step_stack st;
	uint64_t w[8];
	uint32_t stop, n;

	(void)state;
	setup(m, fr, &st);
	n = v8_copy_walk(&cfg, mem_read, m, cache, fr, 4, &st, w, 4, &stop);
	assert_int_equal(n, 2);
	assert_int_equal(stop, BPFPROF_STAT_V8_END);
	/* the optimized leaf: its Code, the pc's offset in it, no AFTER */
	assert_true(w[0] == C1);
	assert_true(w[1] == BPFPROF_V8_WORD1(0x10, BPFPROF_V8_CODE_CHECK(0x100, 4), 0,
					      BPFPROF_V8_OPTIMIZED));
	/* the interpreted caller: its SharedFunctionInfo, the bytecode offset, its BytecodeArray */
	assert_true(w[2] == S2);
	assert_true(w[3] ==
		    BPFPROF_V8_WORD1(58, BPFPROF_V8_PTR_CHECK(BA), 1, BPFPROF_V8_INTERPRETED));
	assert_true(m->reads > 0);

	/* again: both functions from the cache, no read */
	m->reads = 0;
	memset(w, 0, sizeof(w));
	n = v8_copy_walk(&cfg, mem_read, m, cache, fr, 4, &st, w, 4, &stop);
	assert_int_equal(n, 2);
	assert_true(w[0] == C1 && w[2] == S2);
	/* frame 3's non-function is read again each time (not cached): its 2 reads */
	assert_int_equal(m->reads, 2);

	/* tiered up: F1's Code is C3 now, the leaf runs in it: read again */
	code(m, C3, CODE3, 0x80, 5);
	put64(m->heap, F1 - 1 - HEAP + 48, C3);
	fr[0].pc = CODE3 + 0x20;
	n = v8_copy_walk(&cfg, mem_read, m, cache, fr, 4, &st, w, 4, &stop);
	assert_int_equal(n, 2);
	assert_true(w[0] == C3);
	assert_true(w[1] == BPFPROF_V8_WORD1(0x20, BPFPROF_V8_CODE_CHECK(0x80, 5), 0,
					      BPFPROF_V8_OPTIMIZED));

	/* one frame at most: the limit */
	n = v8_copy_walk(&cfg, mem_read, m, cache, fr, 4, &st, w, 1, &stop);
	assert_int_equal(n, 1);
	assert_int_equal(stop, BPFPROF_STAT_V8_LIMIT);

	/* a frame that had a row is native code's: not looked at, as the BPF walk's hook */
	fr[1].no_row = false;
	n = v8_copy_walk(&cfg, mem_read, m, cache, fr, 4, &st, w, 4, &stop);
	assert_int_equal(n, 1);
	assert_true(w[0] == C3);
	fr[1].no_row = true;

	/* the slots in a hole of the copy: nothing */
	st.holes = 1;
	n = v8_copy_walk(&cfg, mem_read, m, cache, fr, 4, &st, w, 4, &stop);
	assert_int_equal(n, 0);
	assert_int_equal(stop, BPFPROF_STAT_V8_NONE);
	free(cache);
	free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frames),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/unwind/unwind_step.c, the user-space twin of the BPF
 * walk (include/unwind_walk_step.h, walk_step in bpf/unwind.bpf.h): byte-level stacks made here, rows
 * encoded as the BPF maps hold them (unwind_compact__encode) and looked up
 * as the walk looks them up (unwind_compact__lookup), one test per rule kind
 * and per stop reason: CFI steps to an END row, a frame-pointer step where
 * there is no row, the leaf-prologue repair, PLT and signal-frame rows, a
 * read past the copy or in one of its holes, a pc in no mapping (and which pc), no tables at all,
 * CFI that does not go up the stack, the frame limit.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "unwind_compact.h"
#include "unwind_step.h"

#define CODE 0x400000ULL /* the mapping [CODE, CODE + 64 KiB): table base 0 */
#define S 0x7ffe0000ULL /* the stack copy's first byte */

#define CFA(rbp, off, slot) BPFPROF_UNWIND_RULE(BPFPROF_UNWIND_CFA, rbp, off, slot)

/*
 * The file's functions, by offset: _start (END), a (CFA rsp+16), b (a frame
 * pointer frame: CFA rbp+16, rbp saved at CFA-16), c (no CFI), a PLT entry,
 * __restore_rt (signal), d (CFA rsp+0: does not go up), no CFI, e (a
 * frame of 4 KiB + 16: CFA rsp+0x1010), then no CFI.
 */
static struct bpfprof_unwind_row rows[] = {
	{ 0x000, BPFPROF_UNWIND_RULE(BPFPROF_UNWIND_END, 0, 0, 0) },
	{ 0x010, CFA(0, 16, 0) },
	{ 0x100, CFA(1, 16, -2) },
	{ 0x200, BPFPROF_UNWIND_NONE },
	{ 0x300, BPFPROF_UNWIND_RULE(BPFPROF_UNWIND_PLT, 0, 8, 11) },
	{ 0x400, BPFPROF_UNWIND_RULE(BPFPROF_UNWIND_SIGNAL, 0, 0, 0) },
	{ 0x500, CFA(0, 0, 0) },
	{ 0x600, BPFPROF_UNWIND_NONE },
	{ 0x700, CFA(0, 0x1010, 0) },
	{ 0x800, BPFPROF_UNWIND_NONE },
};

struct fixture {
	uint32_t *words, nr_words;
	struct bpfprof_unwind_table info;
	uint64_t stack[64]; /* the copy: S + 8 * i */
	uint64_t ips[BPFPROF_MAX_USER_STACK];
	int lookups;
};

static int rule_of(void *ctx, uint64_t pc, uint32_t *rule)
{
	struct fixture *f = ctx;

	f->lookups++;
	if (pc < CODE || pc >= CODE + 0x10000)
		return -ENOENT;
	*rule = unwind_compact__lookup(f->words, f->nr_words, &f->info, pc - CODE);
	return 0;
}

static int setup(void **state)
{
	struct unwind_table t = { .base = 0, .end = 0x10000, .rows = rows, .nr_rows = sizeof(rows) / sizeof(rows[0]) };
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(unwind_compact__encode(&t, &f->words, &f->nr_words, &f->info), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	free(f->words);
	free(f);
	return 0;
}

static void walk(struct fixture *f, uint64_t ip, uint64_t sp, uint64_t bp, const uint8_t *code,
		 uint64_t stack_bytes, bool tables, uint32_t max, struct unwind_step_result *res)
{
	struct unwind_step_regs regs = { .ip = ip, .sp = sp, .bp = bp, .code = code };
	struct unwind_step_stack st = { .data = (const uint8_t *)f->stack,
					.addr = S,
					.size = stack_bytes };

	unwind_step__walk(&regs, &st, tables ? rule_of : NULL, f, max, f->ips, res);
}

/* b (frame pointer frame) -> a (rsp-based) -> _start: two CFI steps, then END */
static void test_cfi_to_end(void **state)
{
	struct fixture *f = *state;
	struct unwind_step_result res;

	memset(f->stack, 0xa5, sizeof(f->stack)); /* garbage wherever the walk must not read */
	f->stack[2] = S + 0x40; /* b's saved rbp at rbp = S + 0x10 */
	f->stack[3] = CODE + 0x050; /* b's return address: into a */
	f->stack[5] = CODE + 0x005; /* a: CFA = S + 0x20 + 16, return address at CFA - 8 */
	walk(f, CODE + 0x150, S, S + 0x10, NULL, sizeof(f->stack), true, 127, &res);
	assert_int_equal(res.stop, BPFPROF_STAT_WALK_END);
	assert_int_equal(res.nr, 3);
	assert_int_equal(f->ips[0], CODE + 0x150);
	assert_int_equal(f->ips[1], CODE + 0x050);
	assert_int_equal(f->ips[2], CODE + 0x005);
	assert_int_equal(res.frames_cfi, 2);
	assert_int_equal(res.frames_fp, 0);
	assert_int_equal(res.unmapped_pc, 0);
}

/*
 * Registers saved at a system call's entry whose ip follows the `syscall`
 * that ends a (ip is b's first byte): the leaf's row is ip - 1's, a's
 * (walk_begin's rule; glibc's __restore_rt ends so), and the walk reaches
 * _start; taken as a plain leaf the same registers get b's row and fail
 */
static void test_after_syscall(void **state)
{
	struct fixture *f = *state;
	struct unwind_step_result res;
	struct unwind_step_regs regs = { .ip = CODE + 0x100, .sp = S, .after_syscall = true };
	struct unwind_step_stack st = { .data = (const uint8_t *)f->stack,
					.addr = S,
					.size = sizeof(f->stack) };

	memset(f->stack, 0xa5, sizeof(f->stack));
	f->stack[1] = CODE + 0x005; /* a: CFA = S + 16, return address at S + 8 */
	unwind_step__walk(&regs, &st, rule_of, f, 127, f->ips, &res);
	assert_int_equal(res.stop, BPFPROF_STAT_WALK_END);
	assert_int_equal(res.nr, 2);
	assert_int_equal(f->ips[1], CODE + 0x005);
	assert_int_equal(res.frames_cfi, 1);
	regs.after_syscall = false;
	unwind_step__walk(&regs, &st, rule_of, f, 127, f->ips, &res);
	assert_int_not_equal(res.stop, BPFPROF_STAT_WALK_END);
}

/* c has no row: { saved rbp, return address } at rbp; then b with the restored rbp */
static void test_fp_step(void **state)
{
	struct fixture *f = *state;
	struct unwind_step_result res;

	memset(f->stack, 0xa5, sizeof(f->stack));
	f->stack[2] = S + 0x30; /* c's frame at rbp = S + 0x10 */
	f->stack[3] = CODE + 0x160; /* into b */
	f->stack[6] = S + 0x100; /* b's frame at rbp = S + 0x30 */
	f->stack[7] = CODE + 0x008; /* into _start */
	walk(f, CODE + 0x250, S, S + 0x10, NULL, sizeof(f->stack), true, 127, &res);
	assert_int_equal(res.stop, BPFPROF_STAT_WALK_END);
	assert_int_equal(res.nr, 3);
	assert_int_equal(f->ips[1], CODE + 0x160);
	assert_int_equal(f->ips[2], CODE + 0x008);
	assert_int_equal(res.frames_fp, 1);
	assert_int_equal(res.frames_cfi, 1);
}

/*
 * The frames an interpreter looks at (unwind_step__walk_frames): each
 * step's registers, and whether it found no row (V8's frames: the BPF
 * walk's hook runs there only): c's yes, b's (a row) no, _start's END no
 */
static void test_frames_no_row(void **state)
{
	struct fixture *f = *state;
	struct unwind_step_result res;
	struct unwind_step_regs regs = { .ip = CODE + 0x250, .sp = S, .bp = S + 0x10 };
	struct unwind_step_stack st = { .data = (const uint8_t *)f->stack,
					.addr = S,
					.size = sizeof(f->stack) };
	struct unwind_step_frame fr[8];
	uint32_t nr;

	memset(f->stack, 0xa5, sizeof(f->stack));
	f->stack[2] = S + 0x30;
	f->stack[3] = CODE + 0x160;
	f->stack[6] = S + 0x100;
	f->stack[7] = CODE + 0x008;
	unwind_step__walk_frames(&regs, &st, rule_of, f, 8, f->ips, fr, &nr, &res);
	assert_int_equal(res.stop, BPFPROF_STAT_WALK_END);
	assert_int_equal(nr, 3);
	assert_true(fr[0].pc == CODE + 0x250 && fr[0].bp == S + 0x10 && fr[0].no_row);
	assert_true(fr[1].pc == CODE + 0x160 && fr[1].bp == S + 0x30 && !fr[1].no_row);
	assert_true(fr[2].pc == CODE + 0x008 && !fr[2].no_row);
}

/* a leaf with no row at `push %rbp` (the byte at ip is 0x55): the return address is at [sp] */
static void test_leaf_prologue(void **state)
{
	struct fixture *f = *state;
	struct unwind_step_result res;
	const uint8_t push[4] = { 0xc3, 0x55, 0x48, 0x89 }, after[4] = { 0x55, 0x48, 0x89, 0xe5 };

	memset(f->stack, 0xa5, sizeof(f->stack));
	f->stack[0] = CODE + 0x009; /* into _start */
	walk(f, CODE + 0x260, S, 0, push, sizeof(f->stack), true, 127, &res);
	assert_int_equal(res.stop, BPFPROF_STAT_WALK_END);
	assert_int_equal(res.nr, 2);
	assert_int_equal(f->ips[1], CODE + 0x009);
	/* after the push (mov %rsp,%rbp next): at [sp + 8] */
	f->stack[0] = 0;
	f->stack[1] = CODE + 0x00a;
	walk(f, CODE + 0x261, S, 0, after, sizeof(f->stack), true, 127, &res);
	assert_int_equal(res.stop, BPFPROF_STAT_WALK_END);
	assert_int_equal(f->ips[1], CODE + 0x00a);
	/* neither: rbp 0 ends the frame-pointer chain */
	walk(f, CODE + 0x262, S, 0, NULL, sizeof(f->stack), true, 127, &res);
	assert_int_equal(res.stop, BPFPROF_STAT_WALK_FP_END);
	assert_int_equal(res.nr, 1);
}

/* the PLT rule: CFA = rsp + 8, + 8 once (rip & 15) >= 11 */
static void test_plt(void **state)
{
	struct fixture *f = *state;
	struct unwind_step_result res;

	memset(f->stack, 0xa5, sizeof(f->stack));
	f->stack[0] = CODE + 0x00b; /* rip & 15 < 11: CFA = sp + 8 */
	f->stack[1] = CODE + 0x00c; /* >= 11: CFA = sp + 16 */
	walk(f, CODE + 0x302, S, 0, NULL, sizeof(f->stack), true, 127, &res);
	assert_int_equal(res.stop, BPFPROF_STAT_WALK_END);
	assert_int_equal(f->ips[1], CODE + 0x00b);
	walk(f, CODE + 0x30b, S, 0, NULL, sizeof(f->stack), true, 127, &res);
	assert_int_equal(f->ips[1], CODE + 0x00c);
}

/* __restore_rt: rip, rsp and rbp from the ucontext at rsp (+40: rbp +80, rsp +120, rip +128) */
static void test_signal(void **state)
{
	struct fixture *f = *state;
	struct unwind_step_result res;

	memset(f->stack, 0xa5, sizeof(f->stack));
	f->stack[(40 + 80) / 8] = S + 0x1b0; /* the interrupted rbp */
	f->stack[(40 + 120) / 8] = S + 0x1a0; /* the interrupted rsp */
	f->stack[(40 + 128) / 8] =
		CODE + 0x020; /* the interrupted rip, in a: not a return address */
	f->stack[0x1a8 / 8] = CODE + 0x00d; /* a: CFA = rsp + 16, return address at rsp + 8 */
	walk(f, CODE + 0x400, S, 0, NULL, sizeof(f->stack), true, 127, &res);
	assert_int_equal(res.stop, BPFPROF_STAT_WALK_END);
	assert_int_equal(res.nr, 3);
	assert_int_equal(f->ips[1], CODE + 0x020);
	assert_int_equal(f->ips[2], CODE + 0x00d);
}

/* the return address past the copy: a read fault, as BPF's read of an unmapped page */
static void test_read_fault(void **state)
{
	struct fixture *f = *state;
	struct unwind_step_result res;

	memset(f->stack, 0xa5, sizeof(f->stack));
	f->stack[5] = CODE + 0x005;
	walk(f, CODE + 0x050, S + 0x20, 0, NULL, 0x28 + 7, true, 127, &res); /* 1 byte short */
	assert_int_equal(res.stop, BPFPROF_STAT_WALK_READ_FAULT);
	assert_int_equal(res.nr, 1);
	walk(f, CODE + 0x050, S + 0x20, 0, NULL, 0x30, true, 127, &res);
	assert_int_equal(res.stop, BPFPROF_STAT_WALK_END);
	/* below the copy */
	walk(f, CODE + 0x050, S - 0x100, 0, NULL, sizeof(f->stack), true, 127, &res);
	assert_int_equal(res.stop, BPFPROF_STAT_WALK_READ_FAULT);
}

/*
 * A copy with holes (pages not present when it was made, zeros in the
 * copy): e's frame starts in page 0, a hole (the page fault of a new stack
 * page), and its return address is in page 1: the walk goes on to _start.
 * With page 1 a hole too the read fails, as BPF's read of a page not
 * present does, although the copy's bytes are there.
 */
static void test_holes(void **state)
{
	struct fixture *f = *state;
	static uint64_t pages[3 * 512];
	struct unwind_step_result res;
	struct unwind_step_regs regs = { .ip = CODE + 0x750, .sp = S + 0xff0 };
	struct unwind_step_stack st = { .data = (const uint8_t *)pages, .addr = S + 0xff0 };

	memset(pages, 0, sizeof(pages));
	/* e: CFA = rsp + 0x1010 = S + 0x2000, its return address (into a) at S + 0x1ff8 */
	pages[(0x1ff8 - 0xff0) / 8] = CODE + 0x050;
	/* a: CFA = S + 0x2010, return address at S + 0x2008: into _start */
	pages[(0x2008 - 0xff0) / 8] = CODE + 0x005;
	st.size = 0x2010 - 0xff0;
	st.holes = 1; /* rsp's page */
	unwind_step__walk(&regs, &st, rule_of, f, 127, f->ips, &res);
	assert_int_equal(res.stop, BPFPROF_STAT_WALK_END);
	assert_int_equal(res.nr, 3);
	assert_int_equal(f->ips[1], CODE + 0x050);
	assert_int_equal(f->ips[2], CODE + 0x005);
	st.holes = 1 | 2;
	unwind_step__walk(&regs, &st, rule_of, f, 127, f->ips, &res);
	assert_int_equal(res.stop, BPFPROF_STAT_WALK_READ_FAULT);
	assert_int_equal(res.nr, 1);
	/* page 2 a hole: a's return address at S + 0x2008 */
	st.holes = 4;
	unwind_step__walk(&regs, &st, rule_of, f, 127, f->ips, &res);
	assert_int_equal(res.stop, BPFPROF_STAT_WALK_READ_FAULT);
	assert_int_equal(res.nr, 2);
}

/* a pc in no mapping: the leaf's is reported (mapped since); a frame-pointer step's is garbage */
static void test_no_mapping(void **state)
{
	struct fixture *f = *state;
	struct unwind_step_result res;

	walk(f, 0x500000, S, 0, NULL, sizeof(f->stack), true, 127, &res);
	assert_int_equal(res.stop, BPFPROF_STAT_WALK_NO_MAPPING);
	assert_int_equal(res.nr, 1);
	assert_int_equal(res.unmapped_pc, 0x500000);
	assert_int_equal(res.unmapped_fp_pc, 0);
	/*
	 * c (no row) steps by frame pointers to 0x500000: dropped, not reported
	 * as code, but as the frame-pointer step's (JIT code mapped since, or
	 * garbage: unwind_copies decides by the copy's why)
	 */
	memset(f->stack, 0xa5, sizeof(f->stack));
	f->stack[2] = S + 0x30;
	f->stack[3] = 0x500000;
	walk(f, CODE + 0x250, S, S + 0x10, NULL, sizeof(f->stack), true, 127, &res);
	assert_int_equal(res.stop, BPFPROF_STAT_WALK_NO_MAPPING);
	assert_int_equal(res.nr, 1);
	assert_int_equal(res.unmapped_pc, 0);
	assert_int_equal(res.unmapped_fp_pc, 0x4fffff);
	/* a CFI step's return address in no mapping: kept, and reported (pc - 1 looked up) */
	f->stack[5] = 0x500010;
	walk(f, CODE + 0x050, S + 0x20, 0, NULL, sizeof(f->stack), true, 127, &res);
	assert_int_equal(res.stop, BPFPROF_STAT_WALK_NO_MAPPING);
	assert_int_equal(res.nr, 2);
	assert_int_equal(res.unmapped_pc, 0x50000f);
}

/* no tables: frame pointers only, no lookups, ended where rbp is 0 */
static void test_no_tables(void **state)
{
	struct fixture *f = *state;
	struct unwind_step_result res;

	memset(f->stack, 0xa5, sizeof(f->stack));
	f->stack[2] = S + 0x30;
	f->stack[3] = CODE + 0x160;
	f->stack[6] = 0;
	f->stack[7] = CODE + 0x008;
	f->lookups = 0;
	walk(f, CODE + 0x150, S, S + 0x10, NULL, sizeof(f->stack), false, 127, &res);
	assert_int_equal(f->lookups, 0);
	assert_int_equal(res.stop, BPFPROF_STAT_WALK_FP_END);
	assert_int_equal(res.nr, 3);
	assert_int_equal(res.frames_fp, 2);
}

/* CFI whose CFA does not go up (d: CFA = rsp): a bad frame; and the frame limit */
static void test_bad_and_limit(void **state)
{
	struct fixture *f = *state;
	struct unwind_step_result res;

	memset(f->stack, 0, sizeof(f->stack));
	f->stack[0] = CODE + 0x050; /* not reached: the check comes after the read at CFA - 8 */
	walk(f, CODE + 0x550, S + 8, 0, NULL, sizeof(f->stack), true, 127, &res);
	assert_int_equal(res.stop, BPFPROF_STAT_WALK_BAD);
	assert_int_equal(res.nr, 1);
	/* a's chain of 8 frames, stopped at --max-stack 4 */
	for (int i = 0; i < 16; i++)
		f->stack[2 * i + 1] = CODE + 0x060;
	walk(f, CODE + 0x050, S, 0, NULL, sizeof(f->stack), true, 4, &res);
	assert_int_equal(res.stop, BPFPROF_STAT_WALK_LIMIT);
	assert_int_equal(res.nr, 4);
	/* a kernel address or 0 as the ip: no walk */
	walk(f, 0xffffffff81000000ULL, S, 0, NULL, sizeof(f->stack), true, 127, &res);
	assert_int_equal(res.stop, 0);
	assert_int_equal(res.nr, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_cfi_to_end, setup, teardown),
		cmocka_unit_test_setup_teardown(test_after_syscall, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fp_step, setup, teardown),
		cmocka_unit_test_setup_teardown(test_frames_no_row, setup, teardown),
		cmocka_unit_test_setup_teardown(test_leaf_prologue, setup, teardown),
		cmocka_unit_test_setup_teardown(test_plt, setup, teardown),
		cmocka_unit_test_setup_teardown(test_signal, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_fault, setup, teardown),
		cmocka_unit_test_setup_teardown(test_holes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_mapping, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_tables, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_and_limit, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

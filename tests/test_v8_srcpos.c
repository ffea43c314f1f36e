// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/symbolize/v8_srcpos.c (include/v8_srcpos.h): tables
 * written here as V8's SourcePositionTableBuilder writes them (deltas from
 * code offset -1 and position 0, zigzag VLQs, an expression's code delta as
 * -delta - 1), looked up at each offset; raw positions split into script
 * offset and inlining id; line and column from line ends; a baseline
 * bytecode offset table walked over bytecodes with prefixes; every
 * truncation and forged byte sequence refused or bounded.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "v8_srcpos.h"

struct entry {
	int64_t code, pos;
	int stmt;
};

static size_t put_int(uint8_t *out, int64_t v)
{
	uint64_t u = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
	size_t n = 0;

	do {
		uint8_t b = u & 0x7f;

		u >>= 7;
		out[n++] = b | (u ? 0x80 : 0);
	} while (u);
	return n;
}

/* V8's encoding of entries (each code offset >= the previous) */
static size_t encode(const struct entry *e, size_t nr, uint8_t *out)
{
	int64_t code = -1, pos = 0;
	size_t n = 0;

	for (size_t i = 0; i < nr; i++) {
		int64_t dc = e[i].code - code;

		n += put_int(out + n, e[i].stmt ? dc : -dc - 1);
		n += put_int(out + n, e[i].pos - pos);
		code = e[i].code;
		pos = e[i].pos;
	}
	return n;
}

/* A raw position: script offset, inlining id (-1: none) */
static int64_t raw_pos(int32_t script_off, int32_t inlining)
{
	return ((int64_t)(script_off + 1) << 1) | ((int64_t)(inlining + 1) << 31);
}

static void test_find(void **state)
{
	const struct entry e[] = {
		{ 0, raw_pos(10, -1), 1 }, { 4, raw_pos(25, -1), 0 },  { 9, raw_pos(18, -1), 1 },
		{ 9, raw_pos(30, -1), 0 }, { 40, raw_pos(200, 2), 1 }, { 41, raw_pos(5, -1), 0 },
	};
	uint8_t t[128];
	size_t len = encode(e, 6, t);
	int64_t raw;

	(void)state;
	assert_int_equal(v8_srcpos__find(t, len, 0, &raw), 0);
	assert_int_equal(V8_SRCPOS_SCRIPT_OFFSET(raw), 10);
	assert_int_equal(v8_srcpos__find(t, len, 3, &raw), 0);
	assert_int_equal(V8_SRCPOS_SCRIPT_OFFSET(raw), 10);
	assert_int_equal(v8_srcpos__find(t, len, 4, &raw), 0);
	assert_int_equal(V8_SRCPOS_SCRIPT_OFFSET(raw), 25);
	/* two entries at one offset: the last one */
	assert_int_equal(v8_srcpos__find(t, len, 9, &raw), 0);
	assert_int_equal(V8_SRCPOS_SCRIPT_OFFSET(raw), 30);
	assert_int_equal(V8_SRCPOS_INLINING_ID(raw), -1);
	assert_int_equal(v8_srcpos__find(t, len, 40, &raw), 0);
	assert_int_equal(V8_SRCPOS_SCRIPT_OFFSET(raw), 200);
	assert_int_equal(V8_SRCPOS_INLINING_ID(raw), 2);
	assert_int_equal(v8_srcpos__find(t, len, 1000, &raw), 0);
	assert_int_equal(V8_SRCPOS_SCRIPT_OFFSET(raw), 5);
	/* before the first entry, and an empty table */
	assert_int_equal(v8_srcpos__find(t, len, -1, &raw), -ENOENT);
	assert_int_equal(v8_srcpos__find(t, 0, 5, &raw), -ENOENT);
}

static void test_function_entry(void **state)
{
	/* the function entry's position at code offset -1 (kFunctionEntryBytecodeOffset) */
	const struct entry e[] = { { -1, raw_pos(3, -1), 1 }, { 2, raw_pos(7, -1), 1 } };
	uint8_t t[32];
	size_t len = encode(e, 2, t);
	int64_t raw;

	(void)state;
	assert_int_equal(v8_srcpos__find(t, len, 0, &raw), 0);
	assert_int_equal(V8_SRCPOS_SCRIPT_OFFSET(raw), 3);
	assert_int_equal(v8_srcpos__find(t, len, 2, &raw), 0);
	assert_int_equal(V8_SRCPOS_SCRIPT_OFFSET(raw), 7);
}

static void test_malformed(void **state)
{
	const struct entry e[] = { { 0, raw_pos(1, -1), 1 }, { 300, raw_pos(100000, -1), 1 } };
	uint8_t t[64], bad[16];
	size_t len = encode(e, 2, t);
	int64_t raw;

	(void)state;
	/* every truncation: an error or the entries before the cut, never past the bytes */
	for (size_t l = 0; l < len; l++) {
		int err = v8_srcpos__find(t, l, 1000, &raw);

		assert_true(err == -EINVAL || err == -ENOENT || err == 0);
	}
	assert_int_equal(v8_srcpos__find(t, len - 1, 1000, &raw), -EINVAL);
	/* a VLQ that never ends, one over 10 bytes */
	memset(bad, 0xff, sizeof(bad));
	assert_int_equal(v8_srcpos__find(bad, sizeof(bad), 5, &raw), -EINVAL);
	/* a code delta beyond 32 bits */
	len = put_int(bad, (int64_t)1 << 40);
	len += put_int(bad + len, 0);
	assert_int_equal(v8_srcpos__find(bad, len, (int64_t)1 << 41, &raw), -EINVAL);
}

static void test_line(void **state)
{
	/* "ab\ncd\n\nxyz": newlines at 2, 5, 6; the last line ends at the length, 10 */
	const uint32_t ends[] = { 2, 5, 6, 10 };
	uint32_t line, col;

	(void)state;
	assert_int_equal(v8_srcpos__line(ends, 4, 0, &line, &col), 0);
	assert_int_equal(line, 1);
	assert_int_equal(col, 1);
	assert_int_equal(v8_srcpos__line(ends, 4, 1, &line, &col), 0);
	assert_int_equal(line, 1);
	assert_int_equal(col, 2);
	assert_int_equal(v8_srcpos__line(ends, 4, 3, &line, &col), 0);
	assert_int_equal(line, 2);
	assert_int_equal(col, 1);
	assert_int_equal(v8_srcpos__line(ends, 4, 6, &line, &col), 0);
	assert_int_equal(line, 3);
	assert_int_equal(col, 1);
	assert_int_equal(v8_srcpos__line(ends, 4, 9, &line, &col), 0);
	assert_int_equal(line, 4);
	assert_int_equal(col, 3);
	assert_int_equal(v8_srcpos__line(ends, 4, 11, &line, &col), -ERANGE);
	assert_int_equal(v8_srcpos__line(ends, 4, -1, &line, &col), -ERANGE);
	assert_int_equal(v8_srcpos__line(ends, 0, 0, &line, &col), -ERANGE);
}

static void test_baseline(void **state)
{
	/* bytecodes: 5 opcodes, sizes per scale: op 4 is 2 bytes (4 and 8 wide) */
	uint8_t sizes[3 * 8] = {
		1, 1, 1, 1, 2, 3, 1, 1, /* scale 1 */
		1, 1, 1, 1, 3, 5, 1, 1, /* scale 2 */
		1, 1, 1, 1, 5, 9, 1, 1, /* scale 4 */
	};
	/* op4 at 0; Wide op4 at 2 (1 + 3); op5 at 6 (3); ExtraWide op5 at 9 (1 + 9) */
	const uint8_t bc[] = { 4, 0, 0, 4, 0, 0, 5, 0, 0, 1, 5, 0, 0, 0, 0, 0, 0, 0, 0 };
	/* machine code: prologue 10 bytes, then 4, 6, 0, 8 a bytecode */
	const uint8_t t[] = { 10, 4, 6, 0, 8 };
	int64_t bco;

	(void)state;
	/* (start, end]: a pc offset of 10 is the prologue's end */
	assert_int_equal(v8_srcpos__baseline(t, 5, bc, sizeof(bc), sizes, 8, 10, &bco), 0);
	assert_int_equal(bco, -1);
	assert_int_equal(v8_srcpos__baseline(t, 5, bc, sizeof(bc), sizes, 8, 11, &bco), 0);
	assert_int_equal(bco, 0);
	assert_int_equal(v8_srcpos__baseline(t, 5, bc, sizeof(bc), sizes, 8, 14, &bco), 0);
	assert_int_equal(bco, 0);
	assert_int_equal(v8_srcpos__baseline(t, 5, bc, sizeof(bc), sizes, 8, 15, &bco), 0);
	assert_int_equal(bco, 2);
	/* a bytecode with no machine code (0) is passed over */
	assert_int_equal(v8_srcpos__baseline(t, 5, bc, sizeof(bc), sizes, 8, 21, &bco), 0);
	assert_int_equal(bco, 9);
	assert_int_equal(v8_srcpos__baseline(t, 5, bc, sizeof(bc), sizes, 8, 28, &bco), 0);
	assert_int_equal(bco, 9);
	assert_int_equal(v8_srcpos__baseline(t, 5, bc, sizeof(bc), sizes, 8, 29, &bco), -ENOENT);
	/* bytecodes that end before the table: refused; an unknown opcode, a size 0 */
	assert_int_equal(v8_srcpos__baseline(t, 5, bc, 7, sizes, 8, 28, &bco), -EINVAL);
	{
		const uint8_t odd[] = { 4, 0, 9, 0, 0, 0 };

		assert_int_equal(v8_srcpos__baseline(t, 5, odd, sizeof(odd), sizes, 8, 21, &bco),
				 -EINVAL);
	}
	assert_int_equal(v8_srcpos__baseline(t, 5, bc, sizeof(bc), sizes, 0, 11, &bco), -EINVAL);
	assert_int_equal(v8_srcpos__baseline(t, 0, bc, sizeof(bc), sizes, 8, 11, &bco), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_find),	  cmocka_unit_test(test_function_entry),
		cmocka_unit_test(test_malformed), cmocka_unit_test(test_line),
		cmocka_unit_test(test_baseline),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

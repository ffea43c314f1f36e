// SPDX-License-Identifier: MIT
/*
 * Unit tests for user/symbolize/hotspot_names.c's decoders: HotSpot's
 * compressed line number tables (method.cpp read_pair: a pair byte, or 0xff
 * and two signed UNSIGNED5 ints) with X = 0 (JDK < 20) and X = 1, the
 * line of a bci (Method::line_number_from_bci), a scope's head (sender,
 * method index, bci + 1), truncated and forged input, and signatures in
 * Java form.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "hotspot_names.h"

/* (0, 10) by escape, then (5, 12) by a pair byte, then the end */
static void test_lines_x0_x1(void **state)
{
	/* zigzag(0) = 0, zigzag(10) = 20; with X = 1 every UNSIGNED5 byte is one more */
	const uint8_t x0[] = { 0xff, 0, 20, 5 << 3 | 2, 0 };
	const uint8_t x1[] = { 0xff, 1, 21, 5 << 3 | 2, 0 };
	struct hotspot_line *l;
	uint32_t n;

	(void)state;
	for (int x = 0; x <= 1; x++) {
		assert_int_equal(hotspot_lines__decode(x ? x1 : x0, sizeof(x0), (unsigned)x, &l, &n),
				 0);
		assert_int_equal(n, 2);
		assert_int_equal(l[0].bci, 0);
		assert_int_equal(l[0].line, 10);
		assert_int_equal(l[1].bci, 5);
		assert_int_equal(l[1].line, 12);
		assert_int_equal(hotspot_lines__find(l, n, 0), 10);
		assert_int_equal(hotspot_lines__find(l, n, 3), 10);
		assert_int_equal(hotspot_lines__find(l, n, 5), 12);
		assert_int_equal(hotspot_lines__find(l, n, 900), 12);
		free(l);
	}
	/* X = 1 has no byte 0 in its ints: x0's table read with X = 1 is refused */
	assert_int_equal(hotspot_lines__decode(x0, sizeof(x0), 1, &l, &n), -EBADMSG);
	assert_int_equal(hotspot_lines__find(NULL, 0, 3), -1);
}

/* A two-byte UNSIGNED5 int, a negative delta, and the greatest bci below wins */
static void test_lines_multibyte(void **state)
{
	/* 200 + (5 << 6) = 520 = zigzag(260); 3 = zigzag(-2) */
	const uint8_t t[] = { 0xff, 200, 5, 40, 0xff, 0, 3, 0 };
	struct hotspot_line *l;
	uint32_t n;

	(void)state;
	assert_int_equal(hotspot_lines__decode(t, sizeof(t), 0, &l, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(l[0].bci, 260);
	assert_int_equal(l[0].line, 20);
	assert_int_equal(l[1].bci, 260);
	assert_int_equal(l[1].line, 18);
	assert_int_equal(hotspot_lines__find(l, n, 261), 18);
	free(l);
}

static void test_lines_bad(void **state)
{
	const uint8_t open[] = { 8 | 1, 8 | 1 }; /* no terminator */
	const uint8_t cut[] = { 0xff, 200 }; /* an int cut short */
	const uint8_t longint[] = { 0xff, 255, 255, 255, 255, 255, 255, 0, 0 };
	const uint8_t negbci[] = { 0xff, 1, 0, 0 }; /* bci -1 */
	struct hotspot_line *l = (void *)1;
	uint32_t n = 7;

	(void)state;
	assert_int_equal(hotspot_lines__decode(open, sizeof(open), 0, &l, &n), -EBADMSG);
	assert_null(l);
	assert_int_equal(n, 0);
	assert_int_equal(hotspot_lines__decode(cut, sizeof(cut), 0, &l, &n), -EBADMSG);
	assert_int_equal(hotspot_lines__decode(longint, sizeof(longint), 0, &l, &n), -EBADMSG);
	assert_int_equal(hotspot_lines__decode(negbci, sizeof(negbci), 0, &l, &n), -EBADMSG);
	assert_int_equal(hotspot_lines__decode(open, 0, 0, &l, &n), -EBADMSG);
	/* an empty table */
	assert_int_equal(hotspot_lines__decode((const uint8_t[]){ 0 }, 1, 0, &l, &n), 0);
	assert_int_equal(n, 0);
	free(l);
}

static void test_scope(void **state)
{
	const uint8_t x1[] = { 6, 3, 9 }; /* sender 5, method 2, bci + 1 = 8 */
	const uint8_t entry[] = { 0, 1, 0 }; /* X = 0: sender 0, method 1, bci -1 */
	uint32_t sender, idx;
	int32_t bci;

	(void)state;
	assert_int_equal(hotspot_scope__decode(x1, sizeof(x1), 1, &sender, &idx, &bci), 0);
	assert_int_equal(sender, 5);
	assert_int_equal(idx, 2);
	assert_int_equal(bci, 7);
	assert_int_equal(hotspot_scope__decode(entry, sizeof(entry), 0, &sender, &idx, &bci), 0);
	assert_int_equal(sender, 0);
	assert_int_equal(bci, -1);
	assert_int_equal(hotspot_scope__decode(x1, 2, 1, &sender, &idx, &bci), -EBADMSG);
	assert_int_equal(hotspot_scope__decode(entry, sizeof(entry), 1, &sender, &idx, &bci),
			 -EBADMSG);
}

static void test_sig(void **state)
{
	char buf[128];

	(void)state;
	assert_string_equal(hotspot_sig__java("(JI[Ljava/lang/String;)V", buf, sizeof(buf)),
			    "(long, int, java.lang.String[])");
	assert_string_equal(hotspot_sig__java("()V", buf, sizeof(buf)), "()");
	assert_string_equal(hotspot_sig__java("([[DZ)I", buf, sizeof(buf)), "(double[][], boolean)");
	assert_string_equal(hotspot_sig__java("nonsense", buf, sizeof(buf)), "");
	assert_string_equal(hotspot_sig__java("(Ljava/lang/Object", buf, sizeof(buf)),
			    "(java.lang.Object)");
	/* bounded: truncated, terminated */
	assert_int_equal(strlen(hotspot_sig__java("(JJJJJJJJJJJJ)V", buf, 10)), 9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines_x0_x1),   cmocka_unit_test(test_lines_multibyte),
		cmocka_unit_test(test_lines_bad),     cmocka_unit_test(test_scope),
		cmocka_unit_test(test_sig),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

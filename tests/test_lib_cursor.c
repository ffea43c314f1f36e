// SPDX-License-Identifier: MIT
/*
 * cmocka tests for include/lib_cursor.h: reads in both byte orders, each
 * refused (cursor unmoved) when fewer bytes remain than it needs; strings
 * without a NUL refused; the hex lexer's digit counts, its stop at the first
 * non-digit, leading zeros, the 64-bit limit, the end bound.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "lib_cursor.h"

static void test_byte_orders(void **state)
{
	static const uint8_t be[] = { 0x01, 0x02, 0x03, 0x04, 0x05, 0x06,
				      0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c };
	bool host_le = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
	struct cursor c = { .p = be, .end = be + sizeof(be), .swap = host_le };
	uint32_t v32;
	uint64_t v64;

	/* data in big-endian order: swap on a little-endian host */
	assert_true(cursor__u32(&c, &v32));
	assert_int_equal(v32, 0x01020304);
	assert_true(cursor__u64(&c, &v64));
	assert_true(v64 == 0x05060708090a0b0cULL);
	assert_int_equal(cursor__left(&c), 0);
	assert_false(cursor__u32(&c, &v32));

	c = (struct cursor){ .p = be, .end = be + 7, .swap = !host_le };
	assert_false(cursor__u64(&c, &v64)); /* 7 bytes: refused, unmoved */
	assert_int_equal(cursor__left(&c), 7);
	assert_true(cursor__u32(&c, &v32));
	assert_int_equal(v32, 0x04030201); /* little-endian data */
	assert_false(cursor__u32(&c, &v32)); /* 3 left */
	assert_int_equal(cursor__left(&c), 3);

	assert_int_equal(bo__load16(be, host_le), 0x0102);
	assert_int_equal(bo__load16(be, !host_le), 0x0201);
	assert_int_equal(bo__load32(be + 4, host_le), 0x05060708);
	assert_true(bo__load64(be, !host_le) == 0x0807060504030201ULL);
}

static void test_str(void **state)
{
	static const uint8_t d[] = { 'a', 'b', 0, 'c', 'd' };
	struct cursor c = { .p = d, .end = d + sizeof(d) };
	const char *s;
	size_t len;

	assert_true(cursor__str(&c, &s, &len));
	assert_string_equal(s, "ab");
	assert_int_equal(len, 2);
	assert_false(cursor__str(&c, &s, &len)); /* "cd" has no NUL inside the data */
	assert_int_equal(cursor__left(&c), 2);
}

static int lex(const char *text, size_t len, uint64_t *v, size_t *used)
{
	const char *p = text;
	int n = lex__hex(&p, text + len, v);

	*used = (size_t)(p - text);
	return n;
}

static void test_hex(void **state)
{
	uint64_t v;
	size_t used;

	assert_int_equal(lex("7f3a-rest", 9, &v, &used), 4);
	assert_true(v == 0x7f3a);
	assert_int_equal(used, 4);
	assert_int_equal(lex("DEADbeef ", 9, &v, &used), 8);
	assert_true(v == 0xdeadbeef);
	assert_int_equal(lex("xyz", 3, &v, &used), 0);
	assert_int_equal(used, 0);
	assert_true(v == 0);
	assert_int_equal(lex("ffffffffffffffff", 16, &v, &used), 16);
	assert_true(v == UINT64_MAX);
	/* a 17th significant digit */
	assert_int_equal(lex("10000000000000000", 17, &v, &used), -ERANGE);
	/* leading zeros are digits, not significant ones */
	assert_int_equal(lex("00000000000000000001", 20, &v, &used), 20);
	assert_true(v == 1);
	/* end bounds the run even inside more digits */
	assert_int_equal(lex("123456", 3, &v, &used), 3);
	assert_true(v == 0x123);
	assert_int_equal(lex__hex_digit('g'), -1);
	assert_int_equal(lex__hex_digit('F'), 15);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_byte_orders),
		cmocka_unit_test(test_str),
		cmocka_unit_test(test_hex),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

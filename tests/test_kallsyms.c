// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/symbolize/kallsyms.c: a byte-exact kallsyms fixture with core
 * and module text symbols, data symbols that must be skipped and malformed
 * lines that must be counted; a kptr_restrict table; loading from a file and
 * from the real /proc/kallsyms.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "kallsyms.h"

/* Module lines come before core lines on purpose: the table must sort. */
static const char fixture[] = "ffffffffc0002000 t other_fn\t[othermod]\n"
			      "ffffffffc0001000 t mod_init_fn\t[mymod]\n"
			      "ffffffffc0001100 T mod_func\t[mymod]\n"
			      "ffffffff81000000 T _text\n"
			      "ffffffff81000000 t startup_64\n"
			      "ffffffff81000100 t secondary_startup\n"
			      "ffffffff81001000 T do_syscall_64\n"
			      "ffffffff81002000 D some_data\n"
			      "ffffffff81002100 W weak_func\n"
			      "ffffffff81003000 r rodata_sym\n"
			      "ffffffff81003100 b bss_sym\n"
			      "ffffffff81003200 A abs_sym\n"
			      "\n"
			      "bogus line here\n" /* bad: no address */
			      "ffffffff8100zz00 T badhex\n" /* bad: address */
			      "ffffffff81004000 T\n" /* bad: no name */
			      "ffffffff81004000 T name [unterminated\n" /* bad: module */
			      "1ffffffff81004000 T too_long\n" /* bad: 17 digits */
			      "ffffffff81004000 TT twochars\n" /* bad: type */
			      "ffffffff81004000 T a b\n"; /* bad: trailing junk, no newline */

#define NR_TEXT 8
#define NR_BAD 7

static struct ksyms *parse_fixture(void)
{
	/* An exact-length heap copy, no NUL: the sanitizers catch overreads. */
	size_t len = sizeof(fixture) - 1;
	struct ksyms *ks;
	char *buf;

	buf = malloc(len);
	assert_non_null(buf);
	memcpy(buf, fixture, len);
	ks = ksyms__parse(buf, len);
	free(buf);
	assert_non_null(ks);
	return ks;
}

static void test_counts(void **state)
{
	struct ksyms *ks = parse_fixture();

	assert_false(ksyms__restricted(ks));
	assert_int_equal(ksyms__count(ks), NR_TEXT);
	assert_int_equal(ksyms__nr_bad_lines(ks), NR_BAD);
	ksyms__free(ks);
}

static void test_lookup_core(void **state)
{
	struct ksyms *ks = parse_fixture();
	const char *mod = "sentinel";
	uint64_t off = 99;

	/* before the first symbol */
	assert_null(ksyms__lookup(ks, 0xffffffff80ffffffULL, &off, &mod));
	assert_null(ksyms__lookup(ks, 0, &off, &mod));

	/* exact start; the T alias wins over t at the same address */
	assert_string_equal(ksyms__lookup(ks, 0xffffffff81000000ULL, &off, &mod), "_text");
	assert_int_equal(off, 0);
	assert_null(mod);

	assert_string_equal(ksyms__lookup(ks, 0xffffffff810000ffULL, &off, &mod), "_text");
	assert_int_equal(off, 0xff);
	assert_string_equal(ksyms__lookup(ks, 0xffffffff81000100ULL, &off, &mod),
			    "secondary_startup");
	assert_int_equal(off, 0);

	/* inside, and across a skipped data symbol */
	assert_string_equal(ksyms__lookup(ks, 0xffffffff81001234ULL, &off, &mod), "do_syscall_64");
	assert_int_equal(off, 0x234);
	assert_string_equal(ksyms__lookup(ks, 0xffffffff81002050ULL, &off, &mod), "do_syscall_64");
	assert_int_equal(off, 0x1050);

	/* the last core symbol covers at most 1 MiB, not the gap to the modules */
	assert_string_equal(ksyms__lookup(ks, 0xffffffff81003100ULL, &off, &mod), "weak_func");
	assert_int_equal(off, 0x1000);
	assert_string_equal(ksyms__lookup(ks, 0xffffffff811020ffULL, &off, &mod), "weak_func");
	assert_int_equal(off, 0xfffff);
	assert_null(ksyms__lookup(ks, 0xffffffff81102100ULL, &off, &mod));
	assert_null(ksyms__lookup(ks, 0xffffffffc0000fffULL, &off, &mod));

	/* off and module may be NULL */
	assert_string_equal(ksyms__lookup(ks, 0xffffffff81001000ULL, NULL, NULL), "do_syscall_64");
	ksyms__free(ks);
}

static void test_lookup_module(void **state)
{
	struct ksyms *ks = parse_fixture();
	const char *mod = NULL;
	uint64_t off = 0;

	assert_string_equal(ksyms__lookup(ks, 0xffffffffc0001000ULL, &off, &mod), "mod_init_fn");
	assert_int_equal(off, 0);
	assert_string_equal(mod, "mymod");
	assert_string_equal(ksyms__lookup(ks, 0xffffffffc0001110ULL, &off, &mod), "mod_func");
	assert_int_equal(off, 0x10);
	assert_string_equal(mod, "mymod");
	/* the last symbol of mymod stops at the next module's first symbol */
	assert_string_equal(ksyms__lookup(ks, 0xffffffffc0001fffULL, &off, &mod), "mod_func");
	assert_int_equal(off, 0xeff);
	assert_string_equal(ksyms__lookup(ks, 0xffffffffc0002008ULL, &off, &mod), "other_fn");
	assert_int_equal(off, 8);
	assert_string_equal(mod, "othermod");
	/* last symbol of the table: 1 MiB at most */
	assert_string_equal(ksyms__lookup(ks, 0xffffffffc0101fffULL, &off, &mod), "other_fn");
	assert_null(ksyms__lookup(ks, 0xffffffffc0102000ULL, &off, &mod));
	assert_null(ksyms__lookup(ks, UINT64_MAX, &off, &mod));
	ksyms__free(ks);
}

static void test_addr(void **state)
{
	struct ksyms *ks = parse_fixture();

	assert_true(ksyms__addr(ks, "_text") == 0xffffffff81000000ULL);
	assert_true(ksyms__addr(ks, "startup_64") == 0xffffffff81000000ULL);
	assert_true(ksyms__addr(ks, "mod_func") == 0xffffffffc0001100ULL);
	/* data symbols are not kept, unknown names are 0 */
	assert_true(ksyms__addr(ks, "some_data") == 0);
	assert_true(ksyms__addr(ks, "abs_sym") == 0);
	assert_true(ksyms__addr(ks, "no_such_symbol") == 0);
	/* a bracketed module is not part of the name */
	assert_true(ksyms__addr(ks, "mod_func\t[mymod]") == 0);
	ksyms__free(ks);
}

static void test_restricted(void **state)
{
	static const char text[] = "0000000000000000 T _text\n"
				   "0000000000000000 T do_syscall_64\n"
				   "0000000000000000 D some_data\n"
				   "0000000000000000 t mod_fn\t[mymod]\n";
	struct ksyms *ks = ksyms__parse(text, sizeof(text) - 1);
	uint64_t off;

	assert_non_null(ks);
	assert_true(ksyms__restricted(ks));
	assert_int_equal(ksyms__count(ks), 0);
	assert_int_equal(ksyms__nr_bad_lines(ks), 0);
	assert_null(ksyms__lookup(ks, 0, &off, NULL));
	assert_null(ksyms__lookup(ks, 0xffffffff81000000ULL, &off, NULL));
	assert_true(ksyms__addr(ks, "_text") == 0);
	ksyms__free(ks);
}

static void test_empty_and_junk(void **state)
{
	static const char junk[] = { 'f',  'f',	 ' ', 'T', ' ', 'x', '\0', 'y', '\n',
				     '\0', '\n', '1', '2', ' ', 't', ' ',  'z' };
	struct ksyms *ks;

	ks = ksyms__parse("", 0);
	assert_non_null(ks);
	assert_false(ksyms__restricted(ks));
	assert_int_equal(ksyms__count(ks), 0);
	assert_null(ksyms__lookup(ks, 0x1000, NULL, NULL));
	ksyms__free(ks);

	/* NUL bytes inside lines make them malformed; the last line has no newline */
	ks = ksyms__parse(junk, sizeof(junk));
	assert_non_null(ks);
	assert_int_equal(ksyms__nr_bad_lines(ks), 2);
	assert_int_equal(ksyms__count(ks), 1);
	assert_string_equal(ksyms__lookup(ks, 0x13, NULL, NULL), "z");
	ksyms__free(ks);
}

static void test_load_file(void **state)
{
	char dir[] = "/tmp/test_kallsyms.XXXXXX", path[64];
	struct ksyms *ks;
	uint64_t off;
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/kallsyms", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(fixture, 1, sizeof(fixture) - 1, f), sizeof(fixture) - 1);
	assert_int_equal(fclose(f), 0);

	ks = ksyms__load(path);
	assert_non_null(ks);
	assert_int_equal(ksyms__count(ks), NR_TEXT);
	assert_int_equal(ksyms__nr_bad_lines(ks), NR_BAD);
	assert_string_equal(ksyms__lookup(ks, 0xffffffff81001010ULL, &off, NULL), "do_syscall_64");
	assert_int_equal(off, 0x10);
	ksyms__free(ks);

	assert_int_equal(unlink(path), 0);
	errno = 0;
	assert_null(ksyms__load(path));
	assert_int_equal(errno, ENOENT);
	assert_int_equal(rmdir(dir), 0);
}

static void test_proc_kallsyms(void **state)
{
	const char *name;
	struct ksyms *ks;
	uint64_t text, off = 1;

	ks = ksyms__load("/proc/kallsyms");
	if (!ks)
		skip();
	if (ksyms__restricted(ks)) {
		ksyms__free(ks);
		skip();
	}
	/* the file is far larger than one read: the loop must reach EOF */
	assert_true(ksyms__count(ks) > 1000);
	text = ksyms__addr(ks, "_text");
	assert_true(text != 0);
	name = ksyms__lookup(ks, text, &off, NULL);
	assert_non_null(name);
	assert_int_equal(off, 0);
	ksyms__free(ks);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts),	      cmocka_unit_test(test_lookup_core),
		cmocka_unit_test(test_lookup_module), cmocka_unit_test(test_addr),
		cmocka_unit_test(test_restricted),    cmocka_unit_test(test_empty_and_junk),
		cmocka_unit_test(test_load_file),     cmocka_unit_test(test_proc_kallsyms),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

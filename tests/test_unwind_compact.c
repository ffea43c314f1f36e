// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/unwind/unwind_compact.c: the compact words of real
 * files' tables (libc, python3.11, Debian's libLLVM-14 where installed) give
 * the rule of the 8-byte rows (unwind_table__lookup, itself checked against
 * readelf in test_unwind_table.c) at every row's first byte, the byte
 * before it and one past it; about 4 bytes a row; hand-made tables with
 * ranges that cross 64 KiB pages, empty pages, rows on page starts and
 * NONE gaps; malformed words read safely.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "unwind_compact.h"
#include "unwind_table.h"

#define R(off) BPFPROF_UNWIND_RULE(BPFPROF_UNWIND_CFA, 0, off, 0)

/* Every row boundary of t: the compact lookup is the row lookup. Returns bytes a row. */
static double check_table(const struct unwind_table *t)
{
	struct bpfprof_unwind_table info;
	uint32_t *words, nr_words, i;
	uint64_t checked = 0;

	assert_int_equal(unwind_compact__encode(t, &words, &nr_words, &info), 0);
	for (i = 0; i < t->nr_rows; i++) {
		uint64_t pc = t->rows[i].pc;

		for (int d = -1; d <= 1; d++) {
			if (pc + d > UINT32_MAX || (d < 0 && !pc))
				continue;
			if (unwind_compact__lookup(words, nr_words, &info, pc + d) !=
			    unwind_table__lookup(t, t->base + pc + d))
				fail_msg("row %u: pc 0x%llx%+d: compact 0x%x, rows 0x%x", i,
					 (unsigned long long)pc, d,
					 unwind_compact__lookup(words, nr_words, &info, pc + d),
					 unwind_table__lookup(t, t->base + pc + d));
			checked++;
		}
	}
	/* past the end and far past it */
	assert_int_equal(unwind_compact__lookup(words, nr_words, &info,
						(uint64_t)t->rows[t->nr_rows - 1].pc + 70000),
			 BPFPROF_UNWIND_NONE);
	assert_int_equal(unwind_compact__lookup(words, nr_words, &info, 1ULL << 40),
			 BPFPROF_UNWIND_NONE);
	assert_true(checked >= t->nr_rows);
	free(words);
	return (double)unwind_compact__kernel_bytes(nr_words) / t->nr_rows;
}

static double check_file(const char *path, uint32_t *rows)
{
	struct unwind_table *t;
	double per_row;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -1;
	assert_int_equal(unwind_table__build_fd(fd, path, &t), 0);
	close(fd);
	per_row = check_table(t);
	*rows = t->nr_rows;
	print_message("%s: %u rows, %.2f bytes a row in the kernel\n", path, t->nr_rows, per_row);
	unwind_table__free(t);
	return per_row;
}

static void test_real_files(void **state)
{
	static const char *const files[] = { "/lib/x86_64-linux-gnu/libc.so.6",
					     "/usr/bin/python3.11",
					     "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1" };
	uint32_t rows;
	int done = 0;

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		double per_row = check_file(files[i], &rows);

		if (per_row < 0)
			continue;
		done++;
		/* 4 bytes a row, plus page rows and the page-rounded array */
		if (rows > 100000)
			assert_true(per_row <= 4.2);
		else
			assert_true(per_row <= 5.0);
	}
	assert_true(done >= 1);
}

/* Pages of BPFPROF_UNWIND_PAGE_SHIFT: the rows, the index and the page-start rows */
static void test_pages(void **state)
{
	const uint64_t P = 1ULL << BPFPROF_UNWIND_PAGE_SHIFT;

	struct bpfprof_unwind_row rows[] = {
		{ 0x0, R(8) }, /* runs into page 1 */
		{ 2 * P - 0x10, R(16) }, /* last bytes of page 1 */
		{ 2 * P, R(24) }, /* on page 2's start */
		{ 2 * P + 0x10, BPFPROF_UNWIND_NONE }, /* a gap over pages 2-4 */
		{ 5 * P + 8, R(8) }, /* page 5, not at its start */
		{ 5 * P + 9, R(16) },
		{ 8 * P - 1, R(24) }, /* the last byte of page 7 */
		{ 8 * P, BPFPROF_UNWIND_NONE },
	};
	struct unwind_table t = { .base = 0x1000, .end = 8 * P + 0x1000, .rows = rows, .nr_rows = 8 };
	struct bpfprof_unwind_table info;
	uint32_t *words, nr_words;

	check_table(&t);
	assert_int_equal(unwind_compact__encode(&t, &words, &nr_words, &info), 0);
	assert_int_equal(info.nr_pages, 9);
	assert_int_equal(info.nr_rules, 4); /* NONE and three CFA rules */
	/* inside the first range, across pages 0 and 1 */
	assert_int_equal(unwind_compact__lookup(words, nr_words, &info, P), R(8));
	assert_int_equal(unwind_compact__lookup(words, nr_words, &info, 2 * P - 0x11), R(8));
	/* the gap: pages 3 and 4 are empty */
	assert_int_equal(unwind_compact__lookup(words, nr_words, &info, 3 * P),
			 BPFPROF_UNWIND_NONE);
	assert_int_equal(unwind_compact__lookup(words, nr_words, &info, 5 * P + 7),
			 BPFPROF_UNWIND_NONE);
	assert_int_equal(words[3], words[4]);
	/* a range that runs into the next pages gets a row at their starts */
	assert_int_equal(unwind_compact__lookup(words, nr_words, &info, 6 * P), R(16));
	assert_int_equal(unwind_compact__lookup(words, nr_words, &info, 8 * P - 2), R(16));
	assert_int_equal(unwind_compact__lookup(words, nr_words, &info, 8 * P - 1), R(24));
	assert_int_equal(unwind_compact__lookup(words, nr_words, &info, 8 * P),
			 BPFPROF_UNWIND_NONE);

	/* malformed words (a page index pointing anywhere) are read safely */
	for (uint32_t i = 0; i < nr_words; i++) {
		uint32_t saved = words[i];

		words[i] = 0xffffffffu;
		for (uint64_t pc = 0; pc < 9 * P; pc += P / 37)
			unwind_compact__lookup(words, nr_words, &info, pc);
		words[i] = saved;
	}
	info.rules = 0xfffffff0u;
	assert_int_equal(unwind_compact__lookup(words, nr_words, &info, 0x10), BPFPROF_UNWIND_NONE);
	free(words);

	/* no rows: nothing to encode */
	t.nr_rows = 0;
	assert_int_equal(unwind_compact__encode(&t, &words, &nr_words, &info), -ENOENT);
}

/*
 * 65536 distinct rules, met in no order and many times over (the set of
 * distinct rules grows from 1024 slots): all fit, stored sorted, each row's
 * index that of its rule; one more does not fit
 */
static void test_many_rules(void **state)
{
	uint32_t n = 3 * 65536, *words, nr_words;
	struct bpfprof_unwind_row *rows = calloc(n + 1, sizeof(*rows));
	struct unwind_table t = { .end = (uint64_t)(n + 1) * 4, .rows = rows, .nr_rows = n };
	struct bpfprof_unwind_table info;

	assert_non_null(rows);
	for (uint32_t i = 0; i < n; i++) {
		/* a permutation of 0..65535 (odd multiplier), three times over */
		uint32_t k = (i * 40503u) & 0xffff;

		rows[i].pc = i * 4;
		rows[i].rule = BPFPROF_UNWIND_RULE(BPFPROF_UNWIND_CFA, 0, k, (k >> 8) + 1);
	}
	check_table(&t);
	assert_int_equal(unwind_compact__encode(&t, &words, &nr_words, &info), 0);
	assert_int_equal(info.nr_rules, 65536);
	assert_int_equal(nr_words, info.rules + 65536);
	for (uint32_t i = 1; i < 65536; i++)
		assert_true(words[info.rules + i - 1] < words[info.rules + i]);
	free(words);
	/* one rule more */
	rows[n].pc = n * 4;
	rows[n].rule = BPFPROF_UNWIND_RULE(BPFPROF_UNWIND_CFA, 0, 0, 0x7f);
	t.nr_rows = n + 1;
	assert_int_equal(unwind_compact__encode(&t, &words, &nr_words, &info), -E2BIG);
	free(rows);
}

/* More than 65536 distinct rules do not fit a 16-bit index */
static void test_too_many_rules(void **state)
{
	uint32_t n = 70000, *words, nr_words;
	struct bpfprof_unwind_row *rows = calloc(n, sizeof(*rows));
	struct unwind_table t = { .rows = rows, .nr_rows = n };
	struct bpfprof_unwind_table info;

	assert_non_null(rows);
	for (uint32_t i = 0; i < n; i++) {
		rows[i].pc = i * 4;
		rows[i].rule =
			BPFPROF_UNWIND_RULE(BPFPROF_UNWIND_CFA, 0, i & 0xffff, (i >> 16) + 1);
	}
	assert_int_equal(unwind_compact__encode(&t, &words, &nr_words, &info), -E2BIG);
	free(rows);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_files),
		cmocka_unit_test(test_pages),
		cmocka_unit_test(test_many_rules),
		cmocka_unit_test(test_too_many_rules),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

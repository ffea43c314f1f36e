// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/symbolize/sym_perfmap.c (include/sym_perfmap.h): perf-PID.map
 * texts with and without 0x, upper-case hex, tabs, CRLF, names with spaces,
 * a last line without newline, malformed lines (missing fields, 17-digit
 * numbers, NUL bytes) skipped and counted, later lines winning at reused
 * addresses, and reading from a file while refusing symlinks.
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
#include "log.h"
#include "sym_perfmap.h"

static struct jit_table *parse_ok(const char *text, size_t len, struct perfmap_stats *st)
{
	struct jit_table *t = NULL;

	assert_int_equal(perfmap__parse(text, len, "fixture", &t, st), 0);
	assert_non_null(t);
	return t;
}

static void check_name(const struct jit_table *t, uint64_t addr, const char *want,
		       uint64_t want_off)
{
	uint64_t off = ~0ull;
	const char *name = perfmap__lookup(t, addr, &off);

	if (!want) {
		assert_null(name);
		return;
	}
	assert_non_null(name);
	assert_string_equal(name, want);
	assert_int_equal(off, want_off);
}

static void test_formats(void **state)
{
	static const char text[] = "7f0160023b80 378 JS:~hotA /tmp/app.js:1:14\n"
				   "0x7f0160024000 0x20 Interpreter::Dispatch(int, char const*)\n"
				   "0X7F0160025000 0X10 LazyCompile:*upper\r\n"
				   "\n"
				   "   \t\n"
				   "7f0160026000\t\t40\tname\twith tab  \n"
				   "  7f0160027000  8 indented\n"
				   "7f0160028000 10 last line, no newline";
	struct perfmap_stats st;
	struct jit_table *t = parse_ok(text, sizeof(text) - 1, &st);

	assert_int_equal(st.nr_lines, 6);
	assert_int_equal(st.nr_syms, 6);
	assert_int_equal(st.nr_bad, 0);
	check_name(t, 0x7f0160023b80, "JS:~hotA /tmp/app.js:1:14", 0);
	check_name(t, 0x7f0160023ef7, "JS:~hotA /tmp/app.js:1:14", 0x377);
	check_name(t, 0x7f0160023ef8, NULL, 0);
	check_name(t, 0x7f016002401f, "Interpreter::Dispatch(int, char const*)", 0x1f);
	check_name(t, 0x7f0160025001, "LazyCompile:*upper", 1);
	check_name(t, 0x7f0160026000, "name\twith tab", 0);
	check_name(t, 0x7f0160027007, "indented", 7);
	check_name(t, 0x7f016002800f, "last line, no newline", 0xf);
	check_name(t, 0x7f0160028010, NULL, 0);
	assert_int_equal(jitdump__count(t), 6);
	perfmap__free(t);
}

static void test_malformed_lines(void **state)
{
	static const char text[] = "1000 10 good\n"
				   "zz 10 bad start\n"
				   "2000 10\n"
				   "2000 10 \n"
				   "2000\n"
				   "10000000000000000 1 seventeen digits\n"
				   "3000 -1 negative\n"
				   "3000x 10 junk after number\n"
				   "0x 10 bare prefix\n"
				   "3000 0x name after bare size prefix\n"
				   "4000 10 has\0nul\n"
				   "ffffffffffff0000 ffff sixteen digits\n"
				   "5000 10 also good";
	struct perfmap_stats st;
	struct jit_table *t = parse_ok(text, sizeof(text) - 1, &st);

	assert_int_equal(st.nr_lines, 13);
	assert_int_equal(st.nr_syms, 3);
	assert_int_equal(st.nr_bad, 10);
	check_name(t, 0x1000, "good", 0);
	check_name(t, 0x2000, NULL, 0);
	check_name(t, 0x3000, NULL, 0);
	check_name(t, 0x4000, NULL, 0);
	check_name(t, 0xffffffffffff0010, "sixteen digits", 0x10);
	check_name(t, 0x5000, "also good", 0);
	perfmap__free(t);
}

static void test_later_line_wins(void **state)
{
	static const char text[] = "1000 100 old\n"
				   "1000 100 new\n"
				   "2000 100 big\n"
				   "2040 10 small\n"
				   "ffffffffffffff00 1000 wraps\n";
	struct jit_table *t = parse_ok(text, sizeof(text) - 1, NULL);

	check_name(t, 0x1010, "new", 0x10);
	check_name(t, 0x2045, "small", 5);
	check_name(t, 0x2020, "big", 0x20);
	check_name(t, 0x2060, "big", 0x60);
	check_name(t, UINT64_MAX, "wraps", 0xff);
	perfmap__free(t);
}

static void test_empty(void **state)
{
	struct perfmap_stats st;
	struct jit_table *t = parse_ok("", 0, &st);

	assert_int_equal(st.nr_lines + st.nr_syms + st.nr_bad, 0);
	check_name(t, 0, NULL, 0);
	perfmap__free(t);
	t = parse_ok("\n\n\r\n", 4, &st);
	assert_int_equal(st.nr_lines, 0);
	perfmap__free(t);
}

/* a file as bpfprof reads one: jit_file__read (O_NOFOLLOW, regular files, max_size cap), then the parser */
static int load(const char *path, uint64_t max_size, struct jit_table **out,
		struct perfmap_stats *stats)
{
	char *data;
	size_t len;
	int err;

	*out = NULL;
	err = jit_file__read(path, max_size, &data, &len);
	if (err)
		return err;
	err = perfmap__parse(data, len, path, out, stats);
	free(data);
	return err;
}

static void test_load_file(void **state)
{
	char dir[] = "/tmp/test_sym_perfmap.XXXXXX", path[64], link[64], cmd[96];
	static const char text[] = "1000 10 on disk\n";
	struct perfmap_stats st;
	struct jit_table *t;
	FILE *fp;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/perf-1.map", dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
	assert_int_equal(load(path, JIT_FILE_MAX_SIZE, &t, &st), 0);
	check_name(t, 0x1008, "on disk", 8);
	perfmap__free(t);
	assert_int_equal(load(path, 4, &t, &st), -EFBIG);
	snprintf(link, sizeof(link), "%s/perf-2.map", dir);
	assert_int_equal(symlink(path, link), 0);
	assert_int_equal(load(link, JIT_FILE_MAX_SIZE, &t, &st), -ELOOP);
	assert_null(t);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_formats),		cmocka_unit_test(test_malformed_lines),
		cmocka_unit_test(test_later_line_wins), cmocka_unit_test(test_empty),
		cmocka_unit_test(test_load_file),
	};

	log_verbosity = -1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}

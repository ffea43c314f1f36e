// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/write/report.c (include/report.h): the top functions by
 * self samples. Unnamed addresses of one stripped file are rows of their own
 * ("DSO+0xADDR", profile_location.addr_name), as perf report keeps them
 * apart; only frames with neither a name nor a file fold into "[unknown]".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "profile_fixture.h"
#include "profile.h"
#include "report.h"

static uint32_t add_proc(struct profile *p, uint32_t pid)
{
	bool created;
	int idx = profile__process(p, pid, &created);

	assert_true(idx >= 0);
	return (uint32_t)idx;
}

static void test_unnamed_rows_distinct(void **state)
{
	struct profile *p = profile__new();
	const uint64_t s1[] = { 0x7f0000015bc9ULL, 0x1200 }, s2[] = { 0x7f000001692bULL, 0x1200 };
	const uint64_t s3[] = { 0x1300, 0x1200 }, s4[] = { 0x7f1000000000ULL },
		       s5[] = { 0x7f2000000000ULL };
	struct report_top top[8];
	char text[4096] = "";
	uint32_t a;
	FILE *f;
	int n;

	(void)state;
	assert_non_null(p);
	p->period_ns = 1000000;
	a = add_proc(p, 7);
	add_stack(p, a, s1, 0, 2, 50);
	add_stack(p, a, s2, 0, 2, 30);
	add_stack(p, a, s3, 0, 2, 10);
	add_stack(p, a, s4, 0, 1, 6); /* no name, no file: [unknown] */
	add_stack(p, a, s5, 0, 1, 3); /* another one: the same [unknown] row */
	p->nr_samples = 99;
	assert_int_equal(profile__resolve_locs(p), 0);
	name_loc(p, a, 0x1200, "main", "xz", false);
	name_loc(p, a, 0x1300, "hot", "xz", false);
	addr_name_loc(p, a, 0x7f0000015bc9ULL, "liblzma.so.5.4.1", 0x15bc9);
	addr_name_loc(p, a, 0x7f000001692bULL, "liblzma.so.5.4.1", 0x1692b);
	name_loc(p, a, 0x7f1000000000ULL, NULL, "[anon]", false);
	name_loc(p, a, 0x7f2000000000ULL, NULL, "[anon]", false);

	n = report__top(p, top, 8);
	assert_int_equal(n, 4);
	assert_string_equal(top[0].func, "liblzma.so.5.4.1+0x15bc9");
	assert_int_equal(top[0].self, 50);
	assert_string_equal(top[1].func, "liblzma.so.5.4.1+0x1692b");
	assert_int_equal(top[1].self, 30);
	assert_string_equal(top[2].func, "hot");
	assert_null(top[3].func);
	assert_int_equal(top[3].self, 9);

	f = fmemopen(text, sizeof(text) - 1, "w");
	assert_non_null(f);
	report__summary(f, p, 1.0, 8);
	fclose(f);
	assert_non_null(
		strstr(text, "  50.51%       50  liblzma.so.5.4.1+0x15bc9 [liblzma.so.5.4.1]\n"));
	assert_non_null(
		strstr(text, "  30.30%       30  liblzma.so.5.4.1+0x1692b [liblzma.so.5.4.1]\n"));
	assert_non_null(strstr(text, "   9.09%        9  [unknown] [anon]\n"));
	profile__free(p);
}

static bool why(void *ctx, const struct profile *p, uint32_t proc, char *buf, size_t size)
{
	(void)ctx;
	snprintf(buf, size, "reason for pid %u", p->procs[proc].pid);
	return true;
}

/*
 * report__unnamed_jit: unnamed leaves in anonymous or memfd executable
 * memory are reported per process with the caller's reason; named JIT
 * frames, file-backed code, non-executable memory, addresses outside every
 * mapping (maps read too late) and kernel leaves are not.
 */
static void test_unnamed_jit(void **state)
{
	struct profile *p = profile__new();
	struct profile_mapping anon = { .start = 0x10000, .end = 0x20000, .perms = "rwxp" };
	struct profile_mapping memfd = {
		.start = 0x30000, .end = 0x40000, .perms = "r-xp", .inode = 5
	};
	struct profile_mapping data = { .start = 0x50000, .end = 0x60000, .perms = "rw-p" };
	struct profile_mapping file = {
		.start = 0x70000, .end = 0x80000, .perms = "r-xp", .inode = 6
	};
	const uint64_t jit[] = { 0x10100 }, named[] = { 0x10200 }, mfd[] = { 0x30100 },
		       rw[] = { 0x50100 };
	const uint64_t elf[] = { 0x70100 }, none[] = { 0x90000 },
		       kern[] = { 0xffffffff81000000ULL, 0x10100 };
	char text[2048] = "";
	uint32_t a, b;
	FILE *f;

	(void)state;
	assert_non_null(p);
	p->period_ns = 1000000;
	anon.path = profile__intern(p, "");
	memfd.path = profile__intern(p, "/memfd:jit (deleted)");
	data.path = profile__intern(p, "");
	file.path = profile__intern(p, "/usr/bin/node");
	a = add_proc(p, 7);
	b = add_proc(p, 8);
	assert_int_equal(profile__add_mapping(p, a, &anon), 1);
	assert_int_equal(profile__add_mapping(p, a, &data), 1);
	assert_int_equal(profile__add_mapping(p, a, &file), 1);
	assert_int_equal(profile__add_mapping(p, b, &memfd), 1);
	add_stack(p, a, jit, 0, 1, 30);
	add_stack(p, a, named, 0, 1, 100);
	add_stack(p, a, rw, 0, 1, 1);
	add_stack(p, a, elf, 0, 1, 2);
	add_stack(p, a, none, 0, 1, 4);
	add_stack(p, a, kern, 1, 1, 5);
	add_stack(p, b, mfd, 0, 1, 8);
	p->nr_samples = 150;
	memcpy(p->procs[a].comm, "node", 5);
	memcpy(p->procs[b].comm, "app", 4);
	assert_int_equal(profile__resolve_locs(p), 0);
	name_loc(p, a, 0x10200, "JS:*hotA", "[jit]", true);

	f = fmemopen(text, sizeof(text) - 1, "w");
	assert_non_null(f);
	assert_int_equal(report__unnamed_jit(f, p, why, NULL), 38);
	fclose(f);
	assert_non_null(strstr(
		text,
		"bpfprof: 30 samples (20.0 %) in JIT code of pid 7 (node) not named: reason for pid 7\n"));
	assert_non_null(strstr(
		text,
		"bpfprof: 8 samples (5.3 %) in JIT code of pid 8 (app) not named: reason for pid 8\n"));
	assert_int_equal(
		strlen(text),
		strlen("bpfprof: 30 samples (20.0 %) in JIT code of pid 7 (node) not named: reason for pid 7\n") +
			strlen("bpfprof: 8 samples (5.3 %) in JIT code of pid 8 (app) not named: reason for pid 8\n"));
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unnamed_rows_distinct),
		cmocka_unit_test(test_unnamed_jit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

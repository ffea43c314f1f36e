// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/unwind/walk_report.c: unwinder__root_walks counts the
 * samples and off-CPU blocks of stacks whose outermost user frame is Go's
 * root (runtime.goexit, mstart, rt0_go, also as .symtab's ".abi0" names)
 * and, for a frame-pointer walk only, glibc's (_start, start_thread, ...);
 * unwinder__print_walks adds them to the BPF counters' ends, never past the
 * number of walks.
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
#include "unwinder.h"

static struct profile *build(void)
{
	struct profile *p = profile__new();
	static const char *const roots[] = {
		"runtime.goexit", "runtime.mstart.abi0", "runtime.rt0_go",	   "start_thread",
		"main",		  "runtime.goexitx",	 "__libc_start_call_main", "runtime.clone"
	};
	bool created;
	int proc;
	size_t i;

	assert_non_null(p);
	proc = profile__process(p, 42, &created);
	assert_true(proc >= 0);
	/* one stack a root, 10 << i samples each: (leaf 0x1000 + i, outermost 0x2000 + i) */
	for (i = 0; i < 8; i++) {
		const uint64_t ips[] = { 0x1000 + i, 0x2000 + i };

		add_stack(p, (uint32_t)proc, ips, 0, 2, 10ull << i);
	}
	/* a kernel-only stack: no user walk */
	{
		const uint64_t k[] = { 0xffffffff81000000ull };

		add_stack(p, (uint32_t)proc, k, 1, 0, 1000);
	}
	assert_int_equal(profile__resolve_locs(p), 0);
	for (i = 0; i < 8; i++) {
		name_loc(p, (uint32_t)proc, 0x1000 + i, "work", "app", false);
		name_loc(p, (uint32_t)proc, 0x2000 + i, roots[i], "app", false);
	}
	return p;
}

static void test_root_walks(void **state)
{
	struct profile *p = build();
	const uint64_t go = 10 + 20 + 40 + 1280; /* goexit, mstart.abi0, rt0_go, clone */

	assert_int_equal(unwinder__root_walks(p, false), go);
	/* fp: start_thread and __libc_start_call_main too; never "main" or "runtime.goexitx" */
	assert_int_equal(unwinder__root_walks(p, true), go + 80 + 640);
	profile__free(p);
}

static void test_print_walks(void **state)
{
	uint64_t st[BPFPROF_STAT_NR] = { 0 };
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	st[BPFPROF_STAT_WALK_END] = 100;
	st[BPFPROF_STAT_WALK_BAD] = 900;
	f = open_memstream(&text, &len);
	assert_non_null(f);
	unwinder__print_walks(f, st, NULL, "dwarf", 890);
	/* more roots than walks left: capped */
	unwinder__print_walks(f, st, NULL, "fp", 5000);
	fclose(f);
	assert_non_null(strstr(text, "(--call-graph dwarf): 99.0% reached the end of the stack"));
	assert_non_null(strstr(text, "(--call-graph fp): 100.0% reached the end of the stack"));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_root_walks),
		cmocka_unit_test(test_print_walks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

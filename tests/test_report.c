// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/write/report.c (include/report.h): the top functions by
 * self samples. Unnamed addresses of one stripped file are rows of their own
 * ("DSO+0xADDR", profile_location.addr_name), as perf report keeps them
 * apart; only frames with neither a name nor a file fold into "[unknown]".
 * Then an interval's counters (one snapshot less another) and the counter
 * lines they feed.
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
#include "unwind_check.h"

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

/* Run call with FILE *f writing into the char array text (NUL-terminated: fmemopen's "w") */
#define PRINTED(text, call)                                      \
	do {                                                     \
		FILE *f = fmemopen(text, sizeof(text) - 1, "w"); \
		assert_non_null(f);                              \
		call;                                            \
		fclose(f);                                       \
	} while (0)

/* Every counter is now's less before's; what Python found so far is now's, not a difference. */
static void test_counters_diff(void **state)
{
	struct report_counters before = {
		.dropped = 10,
		.off = { .sent = 100,
			 .dropped = 1,
			 .full = 2,
			 .short_blocks = 30,
			 .short_ns = 4000,
			 .kernel_only = 5 },
		.py = { .nr_procs = 1,
			.nr_unsupported = 0,
			.versions = { 0x030b },
			.samples = 50,
			.with_frames = 40,
			.no_eval = 3,
			.no_tstate = 2,
			.walk_failed = 1,
			.not_walked = 4,
			.unsupported_samples = 0,
			.frames = 400,
			.truncated = 1,
			.code_reads = 20,
			.code_read_failed = 2,
			.code_read_ns = 20000,
			.frame_hits = 300,
			.frame_misses = 100 },
	};
	struct report_counters now = {
		.dropped = 25,
		.off = { .sent = 180,
			 .dropped = 1,
			 .full = 7,
			 .short_blocks = 31,
			 .short_ns = 9000,
			 .kernel_only = 5 },
		.py = { .nr_procs = 2,
			.nr_unsupported = 1,
			.versions = { 0x030b, 0x030c },
			.samples = 90,
			.with_frames = 70,
			.no_eval = 5,
			.no_tstate = 2,
			.walk_failed = 2,
			.not_walked = 6,
			.unsupported_samples = 8,
			.frames = 700,
			.truncated = 3,
			.code_reads = 26,
			.code_read_failed = 2,
			.code_read_ns = 26000,
			.frame_hits = 500,
			.frame_misses = 120 },
	};
	struct report_counters d;

	(void)state;
	report__counters_diff(&now, &before, &d);
	assert_int_equal(d.dropped, 15);
	assert_int_equal(d.off.sent, 80);
	assert_int_equal(d.off.dropped, 0);
	assert_int_equal(d.off.full, 5);
	assert_int_equal(d.off.short_blocks, 1);
	assert_int_equal(d.off.short_ns, 5000);
	assert_int_equal(d.off.kernel_only, 0);
	assert_int_equal(d.py.samples, 40);
	assert_int_equal(d.py.with_frames, 30);
	assert_int_equal(d.py.no_eval, 2);
	assert_int_equal(d.py.no_tstate, 0);
	assert_int_equal(d.py.walk_failed, 1);
	assert_int_equal(d.py.not_walked, 2);
	assert_int_equal(d.py.unsupported_samples, 8);
	assert_int_equal(d.py.frames, 300);
	assert_int_equal(d.py.truncated, 2);
	assert_int_equal(d.py.code_reads, 6);
	assert_int_equal(d.py.code_read_failed, 0);
	assert_int_equal(d.py.code_read_ns, 6000);
	assert_int_equal(d.py.frame_hits, 200);
	assert_int_equal(d.py.frame_misses, 20);
	/* found so far, not since the interval began */
	assert_int_equal(d.py.nr_procs, 2);
	assert_int_equal(d.py.nr_unsupported, 1);
	assert_int_equal(d.py.versions[0], 0x030b);
	assert_int_equal(d.py.versions[1], 0x030c);

	/* a snapshot less itself is nothing; the result may overwrite now */
	report__counters_diff(&now, &now, &now);
	assert_int_equal(now.dropped, 0);
	assert_int_equal(now.off.short_ns, 0);
	assert_int_equal(now.py.frames, 0);
	assert_int_equal(now.py.nr_procs, 2);
	/* a counter below its earlier value (a reset) counts nothing, not 2^64 - n */
	report__counters_diff(&before, &d, &d);
	assert_int_equal(d.dropped, 0);
	assert_int_equal(d.off.sent, 20);
	assert_int_equal(d.py.samples, 10);
}

static void test_lost_line(void **state)
{
	const uint64_t per_cpu[] = { 0, 3, 0, 9 };
	char text[512] = "";

	(void)state;
	PRINTED(text, report__lost(f, 0, per_cpu, 4, 8 << 20));
	assert_string_equal(text, "");
	PRINTED(text, report__lost(f, 7, per_cpu, 4, 8 << 20));
	/* the interval's total; each CPU's since the start; four times the ring buffer to try */
	assert_string_equal(text, "bpfprof: lost 7 samples: ring buffer full ( cpu1: 3 cpu3: 9 ); "
				  "consider --ringbuf-size 32M\n");
	PRINTED(text, report__lost(f, 1, per_cpu, 2, 4096));
	assert_string_equal(text, "bpfprof: lost 1 samples: ring buffer full ( cpu1: 3 ); "
				  "consider --ringbuf-size 4M\n");
}

static void test_progress_line(void **state)
{
	char text[256] = "";

	(void)state;
	PRINTED(text, report__progress(f, 2.04, 180, 3));
	assert_string_equal(text, "\r\033[Kbpfprof: 2.0 s, 180 samples, 3 lost");
}

static void test_offcpu_counts(void **state)
{
	struct session_offcpu_stats off = { .short_blocks = 12, .short_ns = 2500000 };
	char text[512] = "";

	(void)state;
	PRINTED(text, report__offcpu_counts(f, &off, 500));
	assert_string_equal(text,
			    "bpfprof: off-CPU: 12 blocks under 500 us left out (0.003 s in all)\n");
	off.kernel_only = 4;
	PRINTED(text, report__offcpu_counts(f, &off, 500));
	assert_non_null(strstr(text, "\nbpfprof: off-CPU: 4 blocks with kernel frames only ("));
}

static void test_python_line(void **state)
{
	struct python_stats st = { 0 };
	char text[1024] = "";

	(void)state;
	/* no interpreter found: no line */
	PRINTED(text, report__python(f, &st));
	assert_string_equal(text, "");
	st = (struct python_stats){ .nr_procs = 2,
				    .versions = { 0x030b, 0x030c },
				    .samples = 90,
				    .with_frames = 70,
				    .frames = 700,
				    .truncated = 3,
				    .no_eval = 5,
				    .no_tstate = 2,
				    .walk_failed = 1,
				    .not_walked = 12 };
	PRINTED(text, report__python(f, &st));
	assert_non_null(strstr(text, "bpfprof: Python: 90 samples of 2 interpreters (CPython 3.11, "
				     "3.12): 70 with Python frames (700 frames, 3 cut at "));
	assert_non_null(strstr(text,
			       "without: 5 with no eval loop in the native stack (C code, or a "
			       "walk cut short), 2 with no Python thread state, 1 chain not "
			       "readable, 12 before the interpreter was found\n"));
	assert_null(strstr(text, "unsupported"));
	st.nr_unsupported = 1;
	st.unsupported_samples = 8;
	PRINTED(text, report__python(f, &st));
	assert_non_null(strstr(text, "\nbpfprof: Python: 1 processes of unsupported versions or "
				     "layouts profiled natively (8 samples)\n"));
}

static void test_unwind_check_line(void **state)
{
	struct unwind_check_stats st = { .verdicts = { [UNWIND_CHECK_IDENTICAL] = 20,
						       [UNWIND_CHECK_BPF_SHORTER] = 3,
						       [UNWIND_CHECK_DWFL_SHORTER] = 2,
						       [UNWIND_CHECK_DIFFERENT] = 1,
						       [UNWIND_CHECK_FAILED] = 4 } };
	char text[512] = "";

	(void)state;
	PRINTED(text, report__unwind_check(f, &st));
	assert_string_equal(
		text, "bpfprof: BPF unwinds against libdwfl's (30 stacks checked): 20 identical, "
		      "3 shorter (BPF stopped first), 2 libdwfl stopped first (8 KB copy), 1 "
		      "different, 4 not checked\n");
	PRINTED(text, report__user_stacks(f, 7, 2, 1));
	assert_string_equal(text,
			    "bpfprof: user stacks against the kernel's walk: 7 the same, 2 its "
			    "first part, 1 different\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unnamed_rows_distinct),
		cmocka_unit_test(test_unnamed_jit),
		cmocka_unit_test(test_counters_diff),
		cmocka_unit_test(test_lost_line),
		cmocka_unit_test(test_progress_line),
		cmocka_unit_test(test_offcpu_counts),
		cmocka_unit_test(test_python_line),
		cmocka_unit_test(test_unwind_check_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

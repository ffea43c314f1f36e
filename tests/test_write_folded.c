// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/write/write_folded.c (include/write_folded.h): each case
 * builds a struct profile by hand (names set on p->locs here, no symbolizer)
 * and compares the whole output with literal text in the shape
 * stackcollapse-perf.pl --kernel --jit prints: `comm;root;...;leaf count`,
 * user frames then kernel frames, `_[k]` and `_[j]` suffixes, unnamed frames
 * as `[dso]` or `[unknown]`, identical folded stacks merged, lines sorted.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "profile_fixture.h"
#include "buf.h"
#include "profile.h"
#include "write_folded.h"

struct fixture {
	struct profile *p;
	struct buf out;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	f->p = profile__new();
	if (!f->p) {
		free(f);
		return -1;
	}
	f->p->period_ns = 1000000;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	buf__free(&f->out);
	profile__free(f->p);
	free(f);
	return 0;
}

static uint32_t add_proc(struct profile *p, uint32_t pid, const char *comm)
{
	bool created;
	int idx = profile__process(p, pid, &created);

	assert_true(idx >= 0);
	/* comm is a fixed array: at most its size, NUL-padded, unterminated when full */
	memset(p->procs[idx].comm, 0, sizeof(p->procs[idx].comm));
	memcpy(p->procs[idx].comm, comm, strnlen(comm, sizeof(p->procs[idx].comm)));
	return (uint32_t)idx;
}

static void check_text(const struct buf *out, const char *want)
{
	char *got = calloc(1, out->len + 1);

	assert_non_null(got);
	assert_int_equal(out->err, 0);
	memcpy(got, out->data, out->len);
	assert_string_equal(got, want);
	assert_int_equal(out->len, strlen(want));
	free(got);
}

#define K1 0xffffffff81000010ULL
#define K2 0xffffffff81000200ULL
#define K3 0xffffffff81000300ULL

static void test_user_kernel_jit_unknown(void **state)
{
	struct fixture *f = *state;
	struct profile *p = f->p;
	uint32_t a = add_proc(p, 10, "app");
	/* leaf first: hot <- via_x <- main */
	const uint64_t s1[] = { 0x1010, 0x1120, 0x1230 };
	/* kernel leaf <- kernel entry; user: unnamed in libc <- main */
	const uint64_t s2[] = { K1, K2, 0x7f0000001000ULL, 0x1240 };
	/* JIT frame <- unnamed in a file-less mapping <- main */
	const uint64_t s3[] = { 0x7f1000000100ULL, 0x7f2000000000ULL, 0x1250 };
	/* unnamed kernel frame, unnamed user frame in [vdso] */
	const uint64_t s4[] = { K3, 0x7ffff7fc1000ULL };

	add_stack(p, a, s1, 0, 3, 7);
	add_stack(p, a, s2, 2, 2, 3);
	add_stack(p, a, s3, 0, 3, 2);
	add_stack(p, a, s4, 1, 1, 1);
	assert_int_equal(profile__resolve_locs(p), 0);
	name_loc(p, a, 0x1010, "hot", "/usr/bin/app", false);
	name_loc(p, a, 0x1120, "via_x", "/usr/bin/app", false);
	name_loc(p, a, 0x1230, "main", "/usr/bin/app", false);
	name_loc(p, a, 0x1240, "main", "/usr/bin/app", false);
	name_loc(p, a, 0x1250, "main", "/usr/bin/app", false);
	name_loc(p, PROFILE_KERNEL_PROC, K1, "do_syscall_64", "[kernel.kallsyms]", false);
	name_loc(p, PROFILE_KERNEL_PROC, K2, "entry_SYSCALL_64", "[kernel.kallsyms]", false);
	name_loc(p, PROFILE_KERNEL_PROC, K3, NULL, "[kernel.kallsyms]", false);
	name_loc(p, a, 0x7f0000001000ULL, NULL, "/usr/lib/x86_64-linux-gnu/libc.so.6", false);
	name_loc(p, a, 0x7f1000000100ULL, "LazyCompile:*hotA /srv/app.js:6", "[jit]", true);
	name_loc(p, a, 0x7ffff7fc1000ULL, NULL, "[vdso]", false);
	/* 0x7f2000000000 keeps no name and no dso */

	assert_int_equal(write_folded(p, &f->out), 0);
	check_text(&f->out, "app;[vdso];[kernel.kallsyms]_[k] 1\n"
			    "app;main;[libc.so.6];entry_SYSCALL_64_[k];do_syscall_64_[k] 3\n"
			    "app;main;[unknown];LazyCompile:*hotA /srv/app.js:6_[j] 2\n"
			    "app;main;via_x;hot 7\n");
}

/* Stacks that differ only in addresses fold to one line; lines of several processes sort by text. */
static void test_merge_and_sort(void **state)
{
	struct fixture *f = *state;
	struct profile *p = f->p;
	uint32_t b = add_proc(p, 20, "bravo");
	uint32_t a = add_proc(p, 30, "alpha");
	uint32_t a2 = add_proc(p, 31, "alpha");
	const uint64_t s1[] = { 0x1010, 0x1200 }, s2[] = { 0x1018, 0x1204 }, s3[] = { 0x1010 };
	const uint64_t s4[] = { 0x5010, 0x5200 }, s5[] = { 0x2000, 0x1200 };

	add_stack(p, a, s1, 0, 2, 4);
	add_stack(p, b, s3, 0, 1, 1);
	add_stack(p, a, s2, 0, 2, 5); /* other addresses, same names */
	add_stack(p, a2, s4, 0, 2, 6); /* other process, same comm and names */
	add_stack(p, a, s5, 0, 2, 2);
	assert_int_equal(profile__resolve_locs(p), 0);
	name_loc(p, a, 0x1010, "f", "/a", false);
	name_loc(p, a, 0x1018, "f", "/a", false);
	name_loc(p, a, 0x1200, "main", "/a", false);
	name_loc(p, a, 0x1204, "main", "/a", false);
	name_loc(p, a, 0x2000, "F", "/a", false);
	name_loc(p, a2, 0x5010, "f", "/a", false);
	name_loc(p, a2, 0x5200, "main", "/a", false);
	name_loc(p, b, 0x1010, "z", "/b", false);

	assert_int_equal(write_folded(p, &f->out), 0);
	/* byte order: 'F' (0x46) sorts before 'f' (0x66) */
	check_text(&f->out, "alpha;main;F 2\n"
			    "alpha;main;f 15\n"
			    "bravo;z 1\n");
}

/*
 * Lines compare as bytes even where a frame's name is a prefix of another's:
 * "f;g" < "f_x" (';' 0x3b < '_' 0x5f), "f;z" < "fa" (';' < 'a'), and a line
 * before the longer line it begins.
 */
static void test_sort_across_frames(void **state)
{
	struct fixture *f = *state;
	struct profile *p = f->p;
	uint32_t a = add_proc(p, 10, "app");
	const uint64_t s1[] = { 0x30, 0x20, 0x10 }, s2[] = { 0x40, 0x10 }, s3[] = { 0x20, 0x10 };
	const uint64_t s4[] = { 0x60, 0x20, 0x10 }, s5[] = { 0x50, 0x10 };

	add_stack(p, a, s2, 0, 2, 1); /* main;f_x */
	add_stack(p, a, s5, 0, 2, 2); /* main;fa */
	add_stack(p, a, s1, 0, 3, 3); /* main;f;g */
	add_stack(p, a, s4, 0, 3, 4); /* main;f;z */
	add_stack(p, a, s3, 0, 2, 5); /* main;f */
	assert_int_equal(profile__resolve_locs(p), 0);
	name_loc(p, a, 0x10, "main", "/a", false);
	name_loc(p, a, 0x20, "f", "/a", false);
	name_loc(p, a, 0x30, "g", "/a", false);
	name_loc(p, a, 0x40, "f_x", "/a", false);
	name_loc(p, a, 0x50, "fa", "/a", false);
	name_loc(p, a, 0x60, "z", "/a", false);

	assert_int_equal(write_folded(p, &f->out), 0);
	check_text(&f->out, "app;main;f 5\n"
			    "app;main;f;g 3\n"
			    "app;main;f;z 4\n"
			    "app;main;f_x 1\n"
			    "app;main;fa 2\n");
}

static int drain_into(void *ctx, const void *data, size_t n)
{
	buf__put_bytes(ctx, data, n);
	return ((struct buf *)ctx)->err;
}

static int drain_fails(void *ctx, const void *data, size_t n)
{
	return -ENOSPC;
}

/*
 * With a drain (struct buf), text past BUF_DRAIN_AT goes to it as it comes:
 * what it got then what is left in the buffer is the text written whole, and
 * the buffer stays small; a drain's error is the writer's.
 */
static void test_drained(void **state)
{
	struct fixture *f = *state;
	struct profile *p = f->p;
	uint32_t a = add_proc(p, 10, "app");
	struct buf sink = { 0 }, b = { .drain = drain_into, .drain_ctx = &sink };
	struct buf bad = { .drain = drain_fails };
	char name[300];
	uint64_t i;

	/* 4000 lines of about 600 bytes: 2.4 MB */
	for (i = 0; i < 4000; i++) {
		const uint64_t ips[] = { 0x100000 + i, 0x10 };

		add_stack(p, a, ips, 0, 2, 1 + i % 7);
	}
	assert_int_equal(profile__resolve_locs(p), 0);
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	name_loc(p, a, 0x10, name, "/a", false);
	for (i = 0; i < 4000; i++) {
		snprintf(name, sizeof(name), "%0280llu", (unsigned long long)i);
		name_loc(p, a, 0x100000 + i, name, "/a", false);
	}
	assert_int_equal(write_folded(p, &f->out), 0);
	assert_true(f->out.len > 2 * BUF_DRAIN_AT);
	assert_int_equal(write_folded(p, &b), 0);
	assert_true(b.drained > 0);
	assert_true(b.cap <= 2 * BUF_DRAIN_AT + 4096);
	assert_int_equal(b.drained, sink.len);
	buf__put_bytes(&sink, b.data, b.len);
	assert_int_equal(sink.len, f->out.len);
	assert_memory_equal(sink.data, f->out.data, sink.len);
	assert_int_equal(write_folded(p, &bad), -ENOSPC);
	assert_int_equal(bad.err, -ENOSPC);
	buf__free(&sink);
	buf__free(&b);
	buf__free(&bad);
}

/*
 * Addresses of a stripped library that no symbol covers stay separate frames,
 * "DSO+0xADDR", never one "[liblzma.so.5]" for all of them (issue 15).
 */
static void test_unnamed_addresses_distinct(void **state)
{
	struct fixture *f = *state;
	struct profile *p = f->p;
	uint32_t a = add_proc(p, 40, "xz");
	const uint64_t s1[] = { 0x7f0000015bc9ULL, 0x1200 }, s2[] = { 0x7f000001692bULL, 0x1200 };
	const uint64_t s3[] = { 0x7f0000015bd0ULL, 0x1200 };

	add_stack(p, a, s1, 0, 2, 5);
	add_stack(p, a, s2, 0, 2, 3);
	add_stack(p, a, s3, 0, 2, 1);
	assert_int_equal(profile__resolve_locs(p), 0);
	name_loc(p, a, 0x1200, "main", "/usr/bin/xz", false);
	addr_name_loc(p, a, 0x7f0000015bc9ULL, "liblzma.so.5.4.1", 0x15bc9);
	addr_name_loc(p, a, 0x7f000001692bULL, "liblzma.so.5.4.1", 0x1692b);
	addr_name_loc(p, a, 0x7f0000015bd0ULL, "liblzma.so.5.4.1", 0x15bd0);

	assert_int_equal(write_folded(p, &f->out), 0);
	check_text(&f->out, "xz;main;liblzma.so.5.4.1+0x15bc9 5\n"
			    "xz;main;liblzma.so.5.4.1+0x15bd0 1\n"
			    "xz;main;liblzma.so.5.4.1+0x1692b 3\n");
}

/* ';' and line breaks in names and comm cannot break the line apart. */
static void test_separators_replaced(void **state)
{
	struct fixture *f = *state;
	struct profile *p = f->p;
	uint32_t a = add_proc(p, 10, "we;ird\nc");
	const uint64_t s[] = { 0x1010, 0x1200 };

	add_stack(p, a, s, 0, 2, 3);
	assert_int_equal(profile__resolve_locs(p), 0);
	name_loc(p, a, 0x1010, "operator;()\r\nx", "/a", false);
	name_loc(p, a, 0x1200, NULL, "/opt/x;y/lib\nz.so", false);

	assert_int_equal(write_folded(p, &f->out), 0);
	check_text(&f->out, "we:ird c;[lib z.so];operator:()  x 3\n");
}

/* A comm of the full 16 bytes without NUL is not read past; an empty one reads [unknown]. */
static void test_comm_edges(void **state)
{
	struct fixture *f = *state;
	struct profile *p = f->p;
	uint32_t full = add_proc(p, 10, "0123456789abcdefXYZ");
	uint32_t none = add_proc(p, 11, "");
	const uint64_t s[] = { 0x1010 };

	add_stack(p, full, s, 0, 1, 1);
	add_stack(p, none, s, 0, 1, 2);
	/* kernel-only stack: no user frames */
	{
		const uint64_t k[] = { K1 };

		add_stack(p, none, k, 1, 0, 4);
	}
	assert_int_equal(profile__resolve_locs(p), 0);
	name_loc(p, full, 0x1010, "f", "/a", false);
	name_loc(p, none, 0x1010, "g", "/a", false);
	name_loc(p, PROFILE_KERNEL_PROC, K1, "cpu_idle", "[kernel.kallsyms]", false);

	assert_int_equal(write_folded(p, &f->out), 0);
	check_text(&f->out, "0123456789abcdef;f 1\n"
			    "[unknown];cpu_idle_[k] 4\n"
			    "[unknown];g 2\n");
}

static void test_empty(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(write_folded(f->p, &f->out), 0);
	assert_int_equal(f->out.len, 0);
	assert_int_equal(f->out.err, 0);
}

/* Appends after existing content. */
static void test_appends(void **state)
{
	struct fixture *f = *state;
	struct profile *p = f->p;
	uint32_t a = add_proc(p, 10, "app");
	const uint64_t s[] = { 0x1010 };

	add_stack(p, a, s, 0, 1, 9);
	assert_int_equal(profile__resolve_locs(p), 0);
	name_loc(p, a, 0x1010, "f", "/a", false);
	buf__put_bytes(&f->out, "x\n", 2);
	assert_int_equal(write_folded(p, &f->out), 0);
	check_text(&f->out, "x\napp;f 9\n");
}

/*
 * The off-CPU view (--off-cpu, an output named offcpu*): the same profile,
 * blocked stacks weighed in µs (rounded down per stack), CPU-only stacks
 * left out; the CPU view leaves out stacks only blocked in.
 */
static void test_offcpu_view(void **state)
{
	struct fixture *f = *state;
	struct profile *p = f->p, v;
	uint32_t a = add_proc(p, 30, "alpha");
	const uint64_t run[] = { 0x1010, 0x1200 },
		       wait[] = { 0xffffffff81000010ULL, 0x1018, 0x1200 };
	bool created;

	p->offcpu = true;
	add_stack(p, a, run, 0, 2, 4);
	assert_true(profile__add_offcpu(p, a, wait, 1, 2, 3, 2500999, &created) >= 0);
	assert_true(profile__add_offcpu(p, a, run, 0, 2, 1, 999, &created) >=
		    0); /* under 1 µs: nothing */
	assert_int_equal(profile__resolve_locs(p), 0);
	name_loc(p, a, 0x1010, "spin", "/a", false);
	name_loc(p, a, 0x1018, "wait", "/a", false);
	name_loc(p, a, 0x1200, "main", "/a", false);
	name_loc(p, PROFILE_KERNEL_PROC, 0xffffffff81000010ULL, "hrtimer_nanosleep",
		 "[kernel.kallsyms]", false);

	assert_int_equal(write_folded(p, &f->out), 0);
	check_text(&f->out, "alpha;main;spin 4\n");
	v = *p;
	v.view = PROFILE_VIEW_OFFCPU;
	assert_int_equal(profile__total_weight(&v), 2500);
	assert_int_equal(profile__total_weight(p), 4);
	buf__free(&f->out);
	memset(&f->out, 0, sizeof(f->out));
	assert_int_equal(write_folded(&v, &f->out), 0);
	check_text(&f->out, "alpha;main;wait;hrtimer_nanosleep_[k] 2500\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_user_kernel_jit_unknown, setup, teardown),
		cmocka_unit_test_setup_teardown(test_merge_and_sort, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sort_across_frames, setup, teardown),
		cmocka_unit_test_setup_teardown(test_drained, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unnamed_addresses_distinct, setup, teardown),
		cmocka_unit_test_setup_teardown(test_separators_replaced, setup, teardown),
		cmocka_unit_test_setup_teardown(test_comm_edges, setup, teardown),
		cmocka_unit_test_setup_teardown(test_empty, setup, teardown),
		cmocka_unit_test_setup_teardown(test_appends, setup, teardown),
		cmocka_unit_test_setup_teardown(test_offcpu_view, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

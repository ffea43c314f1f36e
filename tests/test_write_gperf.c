// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/write/write_gperf.c (include/write_gperf.h), against
 * "Google CPU Profiler Binary Data File Format" (docs/cpuprofile-fileformat.html
 * in gperftools): each case builds a
 * struct profile by hand and compares the written bytes with an expected
 * image built here from literal slot values and literal maps text, never
 * with the writer's own helpers. Covers the header and period, records in
 * stack insertion order, kernel frames and kernel-only stacks, zero PCs,
 * address windows for several processes and the [vsyscall] mapping.
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
#include "write_gperf.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* 10101010 ns: period_us must be the truncated 10101, not a rounded 10102 */
#define PERIOD_NS 10101010ULL
#define PERIOD_US 10101

/* Each test gets an empty profile (period PERIOD_NS) and an empty buffer, freed even on failure. */
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
	f->p->period_ns = PERIOD_NS;
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

static uint32_t add_proc(struct profile *p, uint32_t pid)
{
	bool created;
	int idx = profile__process(p, pid, &created);

	assert_true(idx >= 0);
	assert_true(created);
	return (uint32_t)idx;
}

static void add_map(struct profile *p, uint32_t proc, uint64_t start, uint64_t end,
		    const char *perms, uint64_t offset, uint32_t maj, uint32_t min, uint64_t inode,
		    const char *path)
{
	struct profile_mapping m = {
		.start = start,
		.end = end,
		.offset = offset,
		.inode = inode,
		.dev_major = maj,
		.dev_minor = min,
	};

	assert_int_equal(strlen(perms), 4);
	memcpy(m.perms, perms, 5);
	m.path = profile__intern(p, path);
	assert_non_null(m.path);
	assert_int_equal(profile__add_mapping(p, proc, &m), 1);
}

/*
 * Check the whole output: nwords native pointer-size slots, then exactly the
 * maps text. Slots are compared one by one so a failure names the slot.
 */
static void check_output(const struct buf *out, const uintptr_t *words, size_t nwords,
			 const char *maps)
{
	size_t bin = nwords * sizeof(uintptr_t), i;
	char *text;

	assert_int_equal(out->err, 0);
	assert_true(out->len >= bin);
	for (i = 0; i < nwords; i++) {
		uintptr_t w;

		memcpy(&w, out->data + i * sizeof(w), sizeof(w));
		if (w != words[i])
			print_error("slot %zu: got %#llx, want %#llx\n", i, (unsigned long long)w,
				    (unsigned long long)words[i]);
		assert_int_equal(w, words[i]);
	}
	text = calloc(1, out->len - bin + 1);
	assert_non_null(text);
	memcpy(text, out->data + bin, out->len - bin);
	assert_string_equal(text, maps);
	free(text);
	assert_int_equal(out->len, bin + strlen(maps));
}

/* true when the slot value v appears anywhere in the binary part */
static bool has_slot(const struct buf *out, size_t nwords, uint64_t v)
{
	size_t i;

	for (i = 0; i < nwords && (i + 1) * sizeof(uintptr_t) <= out->len; i++) {
		uintptr_t w;

		memcpy(&w, out->data + i * sizeof(w), sizeof(w));
		if (w == (uintptr_t)v)
			return true;
	}
	return false;
}

static void test_slot_is_pointer_size(void **state)
{
	/* "words large enough to hold the program's pointer type": 8 bytes on x86_64 */
	assert_int_equal(sizeof(uintptr_t), sizeof(void *));
}

static void test_single_process(void **state)
{
	struct fixture *f = *state;
	struct profile *p = f->p;
	struct buf *out = &f->out;
	struct gperf_stats st;
	uint32_t a = add_proc(p, 1234);
	const uint64_t s1[] = { 0x401000, 0x402345, 0x403000 };
	/* one kernel frame, then two user frames: only the user part is written */
	const uint64_t s2[] = { 0xffffffff81000010ULL, 0x401100, 0x402000 };
	const uint64_t s3[] = { 0x7f0000001234ULL };
	static const uintptr_t want[] = {
		0,	   3,	     0,
		PERIOD_US, 0, /* header */
		8,	   3,	     0x401000,
		0x402345,  0x403000, /* s1, 5 + 3 samples merged */
		2,	   2,	     0x401100,
		0x402000, /* s2 */
		1,	   1,	     0x7f0000001234ULL, /* s3 */
		0,	   1,	     0, /* trailer */
	};
	static const char maps[] =
		"00400000-00452000 r-xp 00000000 08:01 131090    /usr/bin/app\n"
		"00651000-00652000 rw-p 00051000 08:01 131090    /usr/bin/app\n"
		"7f0000001000-7f0000002000 rw-p 00000000 00:00 0\n"
		"7ffd12340000-7ffd12361000 rw-p 00000000 00:00 0    [stack]\n"
		"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0    [vsyscall]\n";

	/* added out of order: the profile keeps them sorted by start */
	add_map(p, a, 0x7ffd12340000ULL, 0x7ffd12361000ULL, "rw-p", 0, 0, 0, 0, "[stack]");
	add_map(p, a, 0x400000, 0x452000, "r-xp", 0, 8, 1, 131090, "/usr/bin/app");
	add_map(p, a, 0xffffffffff600000ULL, 0xffffffffff601000ULL, "--xp", 0, 0, 0, 0,
		"[vsyscall]");
	add_map(p, a, 0x651000, 0x652000, "rw-p", 0x51000, 8, 1, 131090, "/usr/bin/app");
	add_map(p, a, 0x7f0000001000ULL, 0x7f0000002000ULL, "rw-p", 0, 0, 0, 0, "");

	add_stack(p, a, s1, 0, 3, 5);
	add_stack(p, a, s2, 1, 2, 2);
	add_stack(p, a, s1, 0, 3, 3);
	add_stack(p, a, s3, 0, 1, 1);

	memset(&st, 0xab, sizeof(st));
	assert_int_equal(write_gperf(p, out, &st), 0);
	check_output(out, want, ARRAY_SIZE(want), maps);
	assert_false(has_slot(out, ARRAY_SIZE(want), 0xffffffff81000010ULL));
	assert_int_equal(st.processes, 1);
	assert_int_equal(st.samples_written, 11);
	assert_int_equal(st.samples_skipped, 0);
}

static void test_period_floor(void **state)
{
	/* 999 ns rounds down to 0 µs; the header says at least 1 */
	struct fixture *f = *state;
	static const uintptr_t want[] = { 0, 3, 0, 1, 0, 0, 1, 0 };

	f->p->period_ns = 999;
	assert_int_equal(write_gperf(f->p, &f->out, NULL), 0);
	check_output(&f->out, want, ARRAY_SIZE(want), "");
}

static void test_period_1ms(void **state)
{
	struct fixture *f = *state;
	static const uintptr_t want[] = { 0, 3, 0, 1000, 0, 0, 1, 0 };

	f->p->period_ns = 1000000;
	assert_int_equal(write_gperf(f->p, &f->out, NULL), 0);
	check_output(&f->out, want, ARRAY_SIZE(want), "");
}

static void test_kernel_only_skipped(void **state)
{
	struct fixture *f = *state;
	struct profile *p = f->p;
	struct buf *out = &f->out;
	struct gperf_stats st;
	/* a kernel thread: only kernel frames */
	uint32_t kt = add_proc(p, 2);
	uint32_t a = add_proc(p, 500);
	const uint64_t kstack[] = { 0xffffffff81234567ULL, 0xffffffff81200000ULL };
	const uint64_t mixed[] = { 0xffffffff81999999ULL, 0x401000, 0x402000 };
	const uint64_t ustack[] = { 0x401234 };
	static const uintptr_t want[] = {
		0, 3, 0, PERIOD_US, 0, 3, 2, 0x401000, 0x402000, 6, 1, 0x401234, 0, 1, 0,
	};
	/* only process 500 has user frames: it alone is written, unshifted */
	static const char maps[] = "00400000-00500000 r-xp 00001000 fd:02 77    /opt/x y/bin\n";

	add_map(p, kt, 0x10000, 0x20000, "r-xp", 0, 8, 1, 99, "/not/written");
	add_map(p, a, 0x400000, 0x500000, "r-xp", 0x1000, 0xfd, 2, 77, "/opt/x y/bin");
	add_stack(p, kt, kstack, 2, 0, 4);
	add_stack(p, a, mixed, 1, 2, 3);
	add_stack(p, a, kstack, 2, 0, 9); /* a syscall-less kernel sample of pid 500 */
	add_stack(p, a, ustack, 0, 1, 6);

	assert_int_equal(write_gperf(p, out, &st), 0);
	check_output(out, want, ARRAY_SIZE(want), maps);
	assert_false(has_slot(out, ARRAY_SIZE(want), 0xffffffff81234567ULL));
	assert_false(has_slot(out, ARRAY_SIZE(want), 0xffffffff81200000ULL));
	assert_false(has_slot(out, ARRAY_SIZE(want), 0xffffffff81999999ULL));
	assert_int_equal(st.processes, 1);
	assert_int_equal(st.samples_written, 9);
	assert_int_equal(st.samples_skipped, 13);
}

static void test_only_kernel_stacks(void **state)
{
	struct fixture *f = *state;
	struct profile *p = f->p;
	struct buf *out = &f->out;
	struct gperf_stats st;
	uint32_t kt = add_proc(p, 2);
	const uint64_t kstack[] = { 0xffffffff81234567ULL };
	static const uintptr_t want[] = { 0, 3, 0, PERIOD_US, 0, 0, 1, 0 };

	add_map(p, kt, 0x10000, 0x20000, "r-xp", 0, 8, 1, 99, "/not/written");
	add_stack(p, kt, kstack, 1, 0, 7);
	assert_int_equal(write_gperf(p, out, &st), 0);
	check_output(out, want, ARRAY_SIZE(want), "");
	assert_int_equal(st.processes, 0);
	assert_int_equal(st.samples_written, 0);
	assert_int_equal(st.samples_skipped, 7);
}

static void test_zero_pc_cuts_chain(void **state)
{
	struct fixture *f = *state;
	struct profile *p = f->p;
	struct buf *out = &f->out;
	struct gperf_stats st;
	uint32_t a = add_proc(p, 77);
	const uint64_t cut[] = { 0x401000, 0x402000, 0, 0x403000 };
	const uint64_t kcut[] = { 0xffffffff81000000ULL, 0x401010, 0, 0x404000 };
	const uint64_t leaf0[] = { 0, 0x401000 };
	static const uintptr_t want[] = {
		0,
		3,
		0,
		PERIOD_US,
		0,
		3,
		2,
		0x401000,
		0x402000, /* cut at the 0, 0x403000 dropped */
		4,
		1,
		0x401010,
		/* leaf0 has depth 0 after the cut: skipped */
		0,
		1,
		0,
	};
	static const char maps[] = "00400000-00410000 r-xp 00000000 08:01 5    /bin/z\n";

	add_map(p, a, 0x400000, 0x410000, "r-xp", 0, 8, 1, 5, "/bin/z");
	add_stack(p, a, cut, 0, 4, 3);
	add_stack(p, a, kcut, 1, 3, 4);
	add_stack(p, a, leaf0, 0, 2, 5);
	assert_int_equal(write_gperf(p, out, &st), 0);
	check_output(out, want, ARRAY_SIZE(want), maps);
	assert_false(has_slot(out, ARRAY_SIZE(want), 0x403000));
	assert_false(has_slot(out, ARRAY_SIZE(want), 0x404000));
	assert_int_equal(st.samples_written, 7);
	assert_int_equal(st.samples_skipped, 5);
}

/*
 * Two processes. Mapping ends in the user half: 0x7ffd12361000 is the
 * highest, 0x7ffd12361000 - 1 has 47 significant bits, so windows are
 * 1 << 47 = 0x800000000000 apart. pid 900 has more samples than pid 300 and
 * gets window 0 although its pid is higher and it was added second.
 */
static void two_process_profile(struct profile *p, uint32_t *quiet, uint32_t *busy)
{
	const uint64_t q1[] = { 0x55550100, 0x55551200 };
	const uint64_t b1[] = { 0x401000, 0x7ffd12350000ULL };
	const uint64_t b2[] = { 0xffffffff81000000ULL, 0x402000 };

	*quiet = add_proc(p, 300);
	*busy = add_proc(p, 900);
	add_map(p, *quiet, 0x55550000, 0x55560000, "r-xp", 0x2000, 8, 3, 4242, "/usr/lib/libq.so");
	add_map(p, *quiet, 0x7ff000000000ULL, 0x7ff000001000ULL, "rw-p", 0, 0, 0, 0, "");
	/* kernel half: omitted for a shifted window (it would wrap past 2^64) */
	add_map(p, *quiet, 0xffffffffff600000ULL, 0xffffffffff601000ULL, "--xp", 0, 0, 0, 0,
		"[vsyscall]");
	add_map(p, *busy, 0x400000, 0x452000, "r-xp", 0, 8, 1, 131090, "/usr/bin/app");
	add_map(p, *busy, 0x7ffd12340000ULL, 0x7ffd12361000ULL, "rw-p", 0, 0, 0, 0, "[stack]");

	add_stack(p, *quiet, q1, 0, 2, 2);
	add_stack(p, *busy, b1, 0, 2, 5);
	add_stack(p, *busy, b2, 1, 1, 4);
}

static const uintptr_t two_proc_words[] = {
	0,
	3,
	0,
	PERIOD_US,
	0,
	/* pid 300, window 1: + 0x800000000000 */
	2,
	2,
	0x800055550100ULL,
	0x800055551200ULL,
	/* pid 900, window 0: unchanged */
	5,
	2,
	0x401000,
	0x7ffd12350000ULL,
	4,
	1,
	0x402000,
	0,
	1,
	0,
};

/* busiest first; offsets, devices and inodes unchanged; [vsyscall] of the shifted window dropped */
static const char two_proc_maps[] =
	"00400000-00452000 r-xp 00000000 08:01 131090    /usr/bin/app\n"
	"7ffd12340000-7ffd12361000 rw-p 00000000 00:00 0    [stack]\n"
	"800055550000-800055560000 r-xp 00002000 08:03 4242    /usr/lib/libq.so\n"
	"fff000000000-fff000001000 rw-p 00000000 00:00 0\n";

static void test_two_processes(void **state)
{
	struct fixture *f = *state;
	struct profile *p = f->p;
	struct buf *out = &f->out;
	uint32_t quiet, busy;
	struct gperf_stats st;

	two_process_profile(p, &quiet, &busy);
	/* per-process sample counts, as agg__record keeps them */
	p->procs[quiet].nr_samples = 2;
	p->procs[busy].nr_samples = 9;

	assert_int_equal(write_gperf(p, out, &st), 0);
	check_output(out, two_proc_words, ARRAY_SIZE(two_proc_words), two_proc_maps);
	assert_false(has_slot(out, ARRAY_SIZE(two_proc_words), 0xffffffff81000000ULL));
	assert_int_equal(st.processes, 2);
	assert_int_equal(st.samples_written, 11);
	assert_int_equal(st.samples_skipped, 0);
}

/*
 * The same profile built only through the profile__* API: the stack counts
 * (2 for pid 300, 9 for pid 900) say which process is busier.
 */
static void test_two_processes_busier_by_stacks(void **state)
{
	struct fixture *f = *state;
	struct profile *p = f->p;
	struct buf *out = &f->out;
	uint32_t quiet, busy;

	two_process_profile(p, &quiet, &busy);
	assert_int_equal(write_gperf(p, out, NULL), 0);
	/*
	 * Regression: user/write/write_gperf.c cmp_busiest() orders windows by
	 * procs[].nr_samples, which only user/capture/agg.c maintains; profile__add_stack
	 * leaves it 0, so a profile built through the profile API (the XRay
	 * reader's path) falls back to pid order and pid 300 (2 samples) gets
	 * window 0 instead of pid 900 (9 samples).
	 */
	check_output(out, two_proc_words, ARRAY_SIZE(two_proc_words), two_proc_maps);
}

static void test_two_processes_tie_by_pid(void **state)
{
	/* equal sample counts: the lower pid gets window 0 */
	struct fixture *f = *state;
	struct profile *p = f->p;
	struct buf *out = &f->out;
	uint32_t hi = add_proc(p, 20), lo = add_proc(p, 10);
	const uint64_t h[] = { 0x1100 }, l[] = { 0x1200 };
	static const uintptr_t want[] = {
		0, 3, 0,      PERIOD_US,
		0, 1, 1,      0x3100, /* pid 20: window 1; max end 0x2000 -> shift 13 */
		1, 1, 0x1200, /* pid 10: window 0 */
		0, 1, 0,
	};
	static const char maps[] = "00001000-00002000 r-xp 00000000 00:00 0    /b\n"
				   "00003000-00004000 r-xp 00000000 00:00 0    /a\n";

	add_map(p, hi, 0x1000, 0x2000, "r-xp", 0, 0, 0, 0, "/a");
	add_map(p, lo, 0x1000, 0x2000, "r-xp", 0, 0, 0, 0, "/b");
	add_stack(p, hi, h, 0, 1, 1);
	add_stack(p, lo, l, 0, 1, 1);
	p->procs[hi].nr_samples = 1;
	p->procs[lo].nr_samples = 1;
	assert_int_equal(write_gperf(p, out, NULL), 0);
	check_output(out, want, ARRAY_SIZE(want), maps);
}

static void test_pc_beyond_window_cut(void **state)
{
	/* max end 0x10000 -> shift 16; a PC at or above 0x10000 would land in window 1 */
	struct fixture *f = *state;
	struct profile *p = f->p;
	struct buf *out = &f->out;
	struct gperf_stats st;
	uint32_t a = add_proc(p, 1), b = add_proc(p, 2);
	const uint64_t sa[] = { 0x8000, 0x9000, 0x10000, 0x8100 };
	const uint64_t sb[] = { 0x123456789ULL };
	static const uintptr_t want[] = {
		0, 3, 0, PERIOD_US, 0, 3, 2, 0x8000, 0x9000, 0, 1, 0,
	};
	static const char maps[] = "00008000-00010000 r-xp 00000000 00:00 0    /a\n"
				   "00018000-00020000 r-xp 00000000 00:00 0    /b\n";

	add_map(p, a, 0x8000, 0x10000, "r-xp", 0, 0, 0, 0, "/a");
	add_map(p, b, 0x8000, 0x10000, "r-xp", 0, 0, 0, 0, "/b");
	add_stack(p, a, sa, 0, 4, 3);
	add_stack(p, b, sb, 0, 1, 1); /* leaf outside the window: nothing left */
	p->procs[a].nr_samples = 3;
	p->procs[b].nr_samples = 1;
	assert_int_equal(write_gperf(p, out, &st), 0);
	check_output(out, want, ARRAY_SIZE(want), maps);
	assert_int_equal(st.processes, 2);
	assert_int_equal(st.samples_written, 3);
	assert_int_equal(st.samples_skipped, 1);
}

static void test_windows_do_not_fit(void **state)
{
	/*
	 * max end 0x2000000000001000 -> shift 62: two windows fit below 2^63,
	 * three do not.
	 */
	struct fixture *f = *state;
	struct profile *p = f->p;
	struct buf *out = &f->out;
	const uint64_t ip[] = { 0x1000 };
	uint32_t i, procs[3];

	for (i = 0; i < 3; i++) {
		procs[i] = add_proc(p, 100 + i);
		add_map(p, procs[i], 0x1000, 0x2000, "r-xp", 0, 0, 0, 0, "/x");
		p->procs[procs[i]].nr_samples = 1;
	}
	add_map(p, procs[0], 0x2000000000000000ULL, 0x2000000000001000ULL, "rw-p", 0, 0, 0, 0, "");
	add_stack(p, procs[0], ip, 0, 1, 1);
	add_stack(p, procs[1], ip, 0, 1, 1);
	assert_int_equal(write_gperf(p, out, NULL), 0);
	buf__free(out);
	*out = (struct buf){ 0 };
	add_stack(p, procs[2], ip, 0, 1, 1);
	assert_int_equal(write_gperf(p, out, NULL), -E2BIG);
}

/* The off-CPU view: one "sample" per µs blocked, so the header's period is 1 µs. */
static void test_offcpu_view_period(void **state)
{
	struct fixture *f = *state;
	static const uintptr_t want[] = { 0, 3, 0, 1, 0, 0, 1, 0 };
	struct profile v;

	f->p->period_ns = 1000000;
	f->p->offcpu = true;
	v = *f->p;
	v.view = PROFILE_VIEW_OFFCPU;
	assert_int_equal(write_gperf(&v, &f->out, NULL), 0);
	check_output(&f->out, want, ARRAY_SIZE(want), "");
}

/*
 * The µs-of-value view (bpfprof xray's .prof: value = self time, ns): each
 * stack's count is its value rounded to the nearest µs, stacks under 0.5 µs
 * are left out, and the header's period is 1 µs.
 */
static void test_value_us_view(void **state)
{
	struct fixture *f = *state;
	struct profile *p = f->p, v;
	uint32_t a = add_proc(p, 77);
	bool created;
	const uint64_t s1[] = { 0x401000 }, s2[] = { 0x401100 }, s3[] = { 0x401200 };
	static const uintptr_t want[] = {
		0, 3, 0,	1, 0, /* header, period 1 µs */
		3, 1, 0x401000, /* 2500 ns: 3 µs (2.5 rounds up) */
		2, 1, 0x401100, /* 1499 + 500 ns in two calls: 2 µs */
		0, 1, 0, /* s3, 499 ns, weighs nothing; trailer */
	};

	add_map(p, a, 0x400000, 0x452000, "r-xp", 0, 8, 1, 7, "/x");
	assert_true(profile__add_stack(p, a, s1, 0, 1, 1, 2500, &created) >= 0);
	assert_true(profile__add_stack(p, a, s2, 0, 1, 1, 1499, &created) >= 0);
	assert_true(profile__add_stack(p, a, s2, 0, 1, 1, 500, &created) >= 0);
	assert_true(profile__add_stack(p, a, s3, 0, 1, 1, 499, &created) >= 0);
	v = *p;
	v.view = PROFILE_VIEW_VALUE_US;
	assert_int_equal(profile__total_weight(&v), 5);
	assert_int_equal(profile__total_weight(p), p->nr_samples);
	assert_int_equal(write_gperf(&v, &f->out, NULL), 0);
	check_output(&f->out, want, ARRAY_SIZE(want),
		     "00400000-00452000 r-xp 00000000 08:01 7    /x\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slot_is_pointer_size),
		cmocka_unit_test_setup_teardown(test_single_process, setup, teardown),
		cmocka_unit_test_setup_teardown(test_period_floor, setup, teardown),
		cmocka_unit_test_setup_teardown(test_period_1ms, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kernel_only_skipped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_only_kernel_stacks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_zero_pc_cuts_chain, setup, teardown),
		cmocka_unit_test_setup_teardown(test_two_processes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_two_processes_busier_by_stacks, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_two_processes_tie_by_pid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pc_beyond_window_cut, setup, teardown),
		cmocka_unit_test_setup_teardown(test_windows_do_not_fit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_offcpu_view_period, setup, teardown),
		cmocka_unit_test_setup_teardown(test_value_us_view, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

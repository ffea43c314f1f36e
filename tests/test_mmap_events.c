// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/capture/mmap_events.c (include/mmap_events.h): the
 * side-band records of a perf dummy event written byte by byte as the
 * kernel lays them out (include/uapi/linux/perf_event.h: PERF_RECORD_MMAP2,
 * FORK, EXIT, COMM with PERF_RECORD_MISC_COMM_EXEC, LOST; each ending with
 * sample_id_all's u32 pid, tid; u64 time), and the /proc/PID/maps text
 * rendered from them (fs/proc/task_mmu.c's format): fork copies, exec
 * resets, overlapping mappings split as VMAs are, the grace period after
 * exit, pid reuse told apart by start ticks, the memory bound, malformed
 * records, and maps_cache's fallback to it (maps_cache__peek: not it).
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <cmocka.h>
#include "maps_cache.h"
#include "mmap_events.h"

#define TICK_NS 10000000ULL /* USER_HZ 100 */
#define KEEP_NS 5000000000ULL
#define S 1000000000ULL

struct rec {
	uint8_t b[512];
	size_t n;
};

static void put(struct rec *r, const void *p, size_t n)
{
	memcpy(r->b + r->n, p, n);
	r->n += n;
}

static void put16(struct rec *r, uint16_t v)
{
	uint8_t x[2] = { (uint8_t)v, (uint8_t)(v >> 8) };

	put(r, x, 2);
}

static void put32(struct rec *r, uint32_t v)
{
	for (int i = 0; i < 4; i++) {
		uint8_t x = (uint8_t)(v >> (8 * i));

		put(r, &x, 1);
	}
}

static void put64(struct rec *r, uint64_t v)
{
	put32(r, (uint32_t)v);
	put32(r, (uint32_t)(v >> 32));
}

/* struct perf_event_header { u32 type; u16 misc; u16 size; }: size patched by end() */
static void begin(struct rec *r, uint32_t type, uint16_t misc)
{
	r->n = 0;
	put32(r, type);
	put16(r, misc);
	put16(r, 0);
}

/* sample_id (TID | TIME), then the size */
static void end(struct rec *r, uint32_t pid, uint64_t time)
{
	put32(r, pid);
	put32(r, pid);
	put64(r, time);
	r->b[6] = (uint8_t)r->n;
	r->b[7] = (uint8_t)(r->n >> 8);
}

/* PERF_RECORD_MMAP2 (10); prot: PROT_READ 1 | PROT_EXEC 4; flags: MAP_PRIVATE 2 */
static void mmap2(struct rec *r, uint32_t pid, uint64_t addr, uint64_t len, uint64_t pgoff,
		  uint32_t prot, const char *name, uint64_t time)
{
	size_t n = strlen(name) + 1, pad = (8 - n % 8) % 8;
	static const uint8_t zeros[8];

	begin(r, 10, 2 /* PERF_RECORD_MISC_USER */);
	put32(r, pid);
	put32(r, pid);
	put64(r, addr);
	put64(r, len);
	put64(r, pgoff);
	put32(r, 8); /* maj */
	put32(r, 1); /* min */
	put64(r, 1234); /* ino */
	put64(r, 0); /* ino_generation */
	put32(r, prot);
	put32(r, 2);
	put(r, name, n);
	put(r, zeros, pad);
	end(r, pid, time);
}

/* PERF_RECORD_FORK (7) / EXIT (4): u32 pid, ppid, tid, ptid; u64 time */
static void task(struct rec *r, uint32_t type, uint32_t pid, uint32_t ppid, uint32_t tid,
		 uint64_t time)
{
	begin(r, type, 0);
	put32(r, pid);
	put32(r, ppid);
	put32(r, tid);
	put32(r, ppid);
	put64(r, time);
	end(r, pid, time);
}

/* PERF_RECORD_COMM (3) with PERF_RECORD_MISC_COMM_EXEC (1 << 13): u32 pid, tid; char comm[] */
static void comm_exec(struct rec *r, uint32_t pid, const char *comm, uint64_t time)
{
	char c[16] = { 0 };

	begin(r, 3, 1 << 13);
	put32(r, pid);
	put32(r, pid);
	strncpy(c, comm, 15);
	put(r, c, 16);
	end(r, pid, time);
}

static void feed(struct mmap_events *m, struct rec *r)
{
	assert_int_equal(mmap_events__record(m, r->b, r->n), 0);
}

static void expect_maps(struct mmap_events *m, uint32_t pid, uint32_t start, const char *want)
{
	char *text = NULL;
	size_t len = 0;

	assert_int_equal(mmap_events__maps(m, pid, start, &text, &len), 0);
	assert_int_equal(len, strlen(want));
	assert_string_equal(text, want);
	free(text);
}

static void expect_none(struct mmap_events *m, uint32_t pid, uint32_t start)
{
	char *text = NULL;
	size_t len = 0;

	assert_int_equal(mmap_events__maps(m, pid, start, &text, &len), -ENOENT);
	assert_null(text);
}

static const char AS_LINE[] = "00400000-00402000 r-xp 00001000 08:01 1234 /usr/bin/as\n";
static const char LIBC_LINE[] =
	"7f0000000000-7f0000010000 r-xp 00028000 08:01 1234 /usr/lib/x86_64-linux-gnu/libc.so.6\n";

/* A process seen before its fork: only PROT_EXEC mappings kept, "//anon" blank, sorted. */
static void test_mmap2_render(void **state)
{
	struct mmap_events *m = mmap_events__new(1 << 20, KEEP_NS, TICK_NS);
	struct rec r;

	mmap2(&r, 100, 0x7f0000000000, 0x10000, 0x28000, 5, "/usr/lib/x86_64-linux-gnu/libc.so.6",
	      S);
	feed(m, &r);
	mmap2(&r, 100, 0x600000, 0x1000, 0, 3, "/usr/bin/as", S); /* rw-: not kept */
	feed(m, &r);
	mmap2(&r, 100, 0x400000, 0x2000, 0x1000, 5, "/usr/bin/as", S);
	feed(m, &r);
	mmap2(&r, 100, 0x10000, 0x1000, 0, 7, "//anon", S);
	feed(m, &r);
	expect_maps(m, 100, 0,
		    "00010000-00011000 rwxp 00000000 08:01 1234\n"
		    "00400000-00402000 r-xp 00001000 08:01 1234 /usr/bin/as\n"
		    "7f0000000000-7f0000010000 r-xp 00028000 08:01 1234 "
		    "/usr/lib/x86_64-linux-gnu/libc.so.6\n");
	/* unknown start: any start asked for matches */
	expect_maps(m, 100, 4242,
		    "00010000-00011000 rwxp 00000000 08:01 1234\n"
		    "00400000-00402000 r-xp 00001000 08:01 1234 /usr/bin/as\n"
		    "7f0000000000-7f0000010000 r-xp 00028000 08:01 1234 "
		    "/usr/lib/x86_64-linux-gnu/libc.so.6\n");
	expect_none(m, 101, 0);
	mmap_events__free(m);
}

/*
 * The executable mappings made, for mmap_events__take_exec: PROT_EXEC ones
 * only (a V8 //anon rwx code region among them), oldest first, taken once;
 * past MMAP_EVENTS_MAX_EXEC waiting the newest are dropped and counted
 */
static void test_take_exec(void **state)
{
	struct mmap_events *m = mmap_events__new(1 << 20, KEEP_NS, TICK_NS);
	struct mmap_events_exec x[MMAP_EVENTS_MAX_EXEC + 8];
	uint64_t dropped = 0;
	struct rec r;
	size_t n;

	(void)state;
	assert_int_equal(mmap_events__take_exec(m, x, 8, &dropped), 0);
	mmap2(&r, 100, 0x600000, 0x1000, 0, 3, "/usr/bin/as", S); /* rw-: not code */
	feed(m, &r);
	mmap2(&r, 100, 0x400000, 0x2000, 0x1000, 5, "/usr/bin/as", S);
	feed(m, &r);
	mmap2(&r, 100, 0x7f1098003000, 0x3c000, 0, 7, "//anon", S);
	feed(m, &r);
	n = mmap_events__take_exec(m, x, 8, &dropped);
	assert_int_equal(n, 2);
	assert_int_equal(x[0].pid, 100);
	assert_int_equal(x[0].start, 0x400000);
	assert_int_equal(x[0].end, 0x402000);
	assert_int_equal(x[1].start, 0x7f1098003000);
	assert_int_equal(x[1].end, 0x7f109803f000);
	assert_int_equal(dropped, 0);
	assert_int_equal(mmap_events__take_exec(m, x, 8, &dropped), 0);
	for (int i = 0; i < MMAP_EVENTS_MAX_EXEC + 3; i++) {
		mmap2(&r, 200, 0x400000 + 0x1000 * (uint64_t)i, 0x1000, 0, 5, "/usr/bin/cc1", S);
		feed(m, &r);
	}
	/* two at a time: the rest wait */
	assert_int_equal(mmap_events__take_exec(m, x, 2, &dropped), 2);
	assert_int_equal(x[1].start, 0x401000);
	n = mmap_events__take_exec(m, x, MMAP_EVENTS_MAX_EXEC + 8, &dropped);
	assert_int_equal(n, MMAP_EVENTS_MAX_EXEC - 2);
	assert_int_equal(x[0].start, 0x402000);
	assert_int_equal(dropped, 3);
	mmap_events__free(m);
}

static bool only_pid_300(void *ctx, uint32_t pid)
{
	(*(int *)ctx)++;
	return pid == 300;
}

/*
 * With a filter (registered processes only: proc_table.c's), take_exec gets
 * the executable mappings of the pids it wants, and the caller's poll is
 * woken once for all of a handing in, none for the others; every process's
 * mappings are kept as before (maps of a gone one rendered)
 */
static void test_exec_filter(void **state)
{
	struct mmap_events *m = mmap_events__new(1 << 20, KEEP_NS, TICK_NS);
	struct mmap_events_exec x[8];
	struct pollfd pfd = { .fd = mmap_events__wake_fd(m), .events = POLLIN };
	uint64_t dropped = 0;
	struct rec r;
	int asked = 0;

	(void)state;
	assert_true(pfd.fd >= 0);
	mmap_events__set_exec_filter(m, only_pid_300, &asked);
	mmap2(&r, 200, 0x400000, 0x2000, 0, 5, "/usr/bin/cc1", S);
	feed(m, &r);
	assert_int_equal(asked, 1);
	assert_int_equal(poll(&pfd, 1, 0), 0); /* not woken */
	assert_int_equal(mmap_events__take_exec(m, x, 8, &dropped), 0);
	expect_maps(m, 200, 0, "00400000-00402000 r-xp 00000000 08:01 1234 /usr/bin/cc1\n");
	mmap2(&r, 300, 0x600000, 0x1000, 0, 3, "/usr/bin/as", S); /* rw-: not code, not asked */
	feed(m, &r);
	assert_int_equal(asked, 1);
	mmap2(&r, 300, 0x400000, 0x2000, 0, 5, "/usr/bin/as", S);
	feed(m, &r);
	assert_int_equal(asked, 2);
	assert_int_equal(poll(&pfd, 1, 0), 1);
	assert_int_equal(mmap_events__take_exec(m, x, 8, &dropped), 1);
	assert_int_equal(x[0].pid, 300);
	assert_int_equal(x[0].start, 0x400000);
	assert_int_equal(poll(&pfd, 1, 0), 0); /* drained by the take */
	/* no filter: every pid's, as before */
	mmap_events__set_exec_filter(m, NULL, NULL);
	mmap2(&r, 200, 0x500000, 0x1000, 0, 5, "/usr/bin/cc1", S);
	feed(m, &r);
	assert_int_equal(mmap_events__take_exec(m, x, 8, &dropped), 1);
	assert_int_equal(x[0].pid, 200);
	assert_int_equal(asked, 2);
	assert_int_equal(dropped, 0);
	mmap_events__free(m);
}

/*
 * mmap_events__changes moves with a process's executable mappings made, its
 * exec, its exit and lost records; not with another's (unless it shares its
 * counter), nor with a data mapping or a thread's exit
 */
static void test_changes(void **state)
{
	struct mmap_events *m = mmap_events__new(1 << 20, KEEP_NS, TICK_NS);
	uint64_t c100, c101;
	struct rec r;

	(void)state;
	c100 = mmap_events__changes(m, 100);
	c101 = mmap_events__changes(m, 101);
	mmap2(&r, 100, 0x600000, 0x1000, 0, 3, "/usr/bin/as", S); /* rw-: not code */
	feed(m, &r);
	assert_true(mmap_events__changes(m, 100) == c100);
	mmap2(&r, 100, 0x400000, 0x2000, 0, 5, "/usr/bin/as", S);
	feed(m, &r);
	assert_true(mmap_events__changes(m, 100) != c100);
	assert_true(mmap_events__changes(m, 101) == c101);
	/* the same counter: pid + 16384 is told of 100's changes (never the reverse) */
	assert_true(mmap_events__changes(m, 100 + 16384) == mmap_events__changes(m, 100));
	c100 = mmap_events__changes(m, 100);
	task(&r, 4 /* EXIT */, 100, 1, 105, S + 1); /* a thread's */
	feed(m, &r);
	assert_true(mmap_events__changes(m, 100) == c100);
	comm_exec(&r, 100, "ld", S + 2);
	feed(m, &r);
	assert_true(mmap_events__changes(m, 100) != c100);
	c100 = mmap_events__changes(m, 100);
	task(&r, 4 /* EXIT */, 100, 1, 100, S + 3);
	feed(m, &r);
	assert_true(mmap_events__changes(m, 100) != c100);
	/* lost records: whose they were is not known, every process's moves */
	c100 = mmap_events__changes(m, 100);
	c101 = mmap_events__changes(m, 101);
	begin(&r, 2 /* PERF_RECORD_LOST */, 0);
	put64(&r, 1); /* id */
	put64(&r, 3); /* lost */
	end(&r, 0, S + 4);
	feed(m, &r);
	assert_true(mmap_events__changes(m, 100) != c100);
	assert_true(mmap_events__changes(m, 101) != c101);
	mmap_events__free(m);
}

/*
 * mmap_events__arm_changes: the descriptor is written at the first change
 * of a watched process after an arming (its executable mapping, one of a
 * pid sharing its counter, lost records), once; not without an arming, nor
 * for a data mapping or an unwatched process, nor once the watch is off
 */
static void test_changes_fd(void **state)
{
	struct mmap_events *m = mmap_events__new(1 << 20, KEEP_NS, TICK_NS);
	int fd = mmap_events__changes_fd(m);
	eventfd_t n;
	struct rec r;

	(void)state;
	assert_true(fd >= 0);
	mmap_events__watch_changes(m, 100, true);
	/* not armed: a change writes nothing */
	mmap2(&r, 100, 0x400000, 0x2000, 0, 5, "/usr/bin/as", S);
	feed(m, &r);
	assert_int_equal(eventfd_read(fd, &n), -1);
	mmap_events__arm_changes(m);
	mmap2(&r, 100, 0x600000, 0x1000, 0, 3, "/usr/bin/as", S); /* rw-: not code */
	feed(m, &r);
	mmap2(&r, 101, 0x400000, 0x2000, 0, 5, "/usr/bin/ld", S + 1); /* not watched */
	feed(m, &r);
	assert_int_equal(eventfd_read(fd, &n), -1);
	mmap2(&r, 100, 0x500000, 0x2000, 0, 5, "/usr/bin/as", S + 2);
	feed(m, &r);
	comm_exec(&r, 100 + 16384, "ld", S + 3); /* its counter's */
	feed(m, &r);
	assert_int_equal(eventfd_read(fd, &n), 0);
	assert_int_equal(n, 1); /* once an arming */
	mmap_events__arm_changes(m);
	comm_exec(&r, 100 + 16384, "ld", S + 4);
	feed(m, &r);
	assert_int_equal(eventfd_read(fd, &n), 0);
	/* lost records: any process's, watched or not */
	mmap_events__watch_changes(m, 100, false);
	mmap_events__arm_changes(m);
	mmap2(&r, 100, 0x700000, 0x2000, 0, 5, "/usr/bin/as", S + 5);
	feed(m, &r);
	assert_int_equal(eventfd_read(fd, &n), -1);
	begin(&r, 2 /* PERF_RECORD_LOST */, 0);
	put64(&r, 1); /* id */
	put64(&r, 3); /* lost */
	end(&r, 0, S + 6);
	feed(m, &r);
	assert_int_equal(eventfd_read(fd, &n), 0);
	assert_int_equal(n, 1);
	mmap_events__free(m);
}

/* fork copies the parent's, exec empties them, threads make no process, start ticks from the fork */
static void test_fork_exec(void **state)
{
	struct mmap_events *m = mmap_events__new(1 << 20, KEEP_NS, TICK_NS);
	struct mmap_events_stats st;
	uint64_t t = 123 * TICK_NS + 5000; /* tick 123 */
	struct rec r;

	mmap2(&r, 100, 0x7f0000000000, 0x10000, 0x28000, 5, "/usr/lib/x86_64-linux-gnu/libc.so.6",
	      S);
	feed(m, &r);
	task(&r, 7 /* FORK */, 100, 100, 101, t); /* a thread */
	feed(m, &r);
	task(&r, 7, 200, 100, 200, t);
	feed(m, &r);
	expect_maps(m, 200, 123, LIBC_LINE);
	expect_maps(m, 200, 122, LIBC_LINE); /* the fork stamped a tick after start_boottime */
	expect_none(m, 200, 124);
	expect_none(m, 101, 0);
	comm_exec(&r, 200, "as", t + 1000);
	feed(m, &r);
	expect_none(m, 200, 123); /* exec: nothing mapped yet */
	mmap2(&r, 200, 0x400000, 0x2000, 0x1000, 5, "/usr/bin/as", t + 2000);
	feed(m, &r);
	expect_maps(m, 200, 123, AS_LINE);
	expect_maps(m, 100, 0, LIBC_LINE); /* the parent's are its own */
	mmap_events__stats(m, &st);
	assert_int_equal(st.records, 5);
	assert_int_equal(st.nr_procs, 2);
	assert_int_equal(st.rendered, 4);
	mmap_events__free(m);
}

/* A mapping over others replaces what it covers: split, trimmed, gone; mprotect -x trims. */
static void test_overlap(void **state)
{
	struct mmap_events *m = mmap_events__new(1 << 20, KEEP_NS, TICK_NS);
	struct rec r;

	mmap2(&r, 7, 0x1000, 0x5000, 0, 5, "/a", S);
	feed(m, &r);
	mmap2(&r, 7, 0x10000, 0x1000, 0, 5, "/c", S);
	feed(m, &r);
	mmap2(&r, 7, 0x2000, 0x1000, 0x9000, 5, "/b", S); /* MAP_FIXED inside /a */
	feed(m, &r);
	mmap2(&r, 7, 0x5000, 0x1000, 0x4000, 1, "/a", S); /* mprotect(PROT_READ) of /a's end */
	feed(m, &r);
	mmap2(&r, 7, 0xf000, 0x3000, 0, 5, "/d", S); /* covers /c */
	feed(m, &r);
	expect_maps(m, 7, 0,
		    "00001000-00002000 r-xp 00000000 08:01 1234 /a\n"
		    "00002000-00003000 r-xp 00009000 08:01 1234 /b\n"
		    "00003000-00005000 r-xp 00002000 08:01 1234 /a\n"
		    "0000f000-00012000 r-xp 00000000 08:01 1234 /d\n");
	mmap_events__free(m);
}

/*
 * mmap_events__take_exits: the leaders' exits since the last take, in
 * order, not a thread's; past MMAP_EVENTS_MAX_EXITS, or records lost:
 * -E2BIG once, then counted afresh.
 */
static void test_take_exits(void **state)
{
	struct mmap_events *m = mmap_events__new(1 << 20, KEEP_NS, TICK_NS);
	uint32_t got[MMAP_EVENTS_MAX_EXITS];
	struct rec r;
	uint32_t i;

	assert_int_equal(mmap_events__take_exits(m, got), 0);
	task(&r, 4 /* EXIT */, 300, 1, 301, S); /* a thread's */
	feed(m, &r);
	task(&r, 4, 300, 1, 300, S + 1);
	feed(m, &r);
	task(&r, 4, 42, 1, 42, S + 2);
	feed(m, &r);
	assert_int_equal(mmap_events__take_exits(m, got), 2);
	assert_int_equal(got[0], 300);
	assert_int_equal(got[1], 42);
	assert_int_equal(mmap_events__take_exits(m, got), 0);
	/* one more than it keeps */
	for (i = 0; i <= MMAP_EVENTS_MAX_EXITS; i++) {
		task(&r, 4, 1000 + i, 1, 1000 + i, S + 10 + i);
		feed(m, &r);
	}
	assert_int_equal(mmap_events__take_exits(m, got), -E2BIG);
	task(&r, 4, 43, 1, 43, 2 * S);
	feed(m, &r);
	assert_int_equal(mmap_events__take_exits(m, got), 1);
	assert_int_equal(got[0], 43);
	/* lost records: any exit may have been among them */
	begin(&r, 2 /* PERF_RECORD_LOST */, 0);
	put64(&r, 1); /* id */
	put64(&r, 3); /* lost */
	end(&r, 0, 2 * S + 1);
	feed(m, &r);
	assert_int_equal(mmap_events__take_exits(m, got), -E2BIG);
	assert_int_equal(mmap_events__take_exits(m, got), 0);
	mmap_events__free(m);
}

/* An exited process is kept KEEP_NS (record time), then goes; a reused pid is another process. */
static void test_exit_and_reuse(void **state)
{
	struct mmap_events *m = mmap_events__new(1 << 20, KEEP_NS, TICK_NS);
	uint64_t exits;
	struct rec r;

	task(&r, 7, 200, 1, 200, 10 * S); /* tick 1000 */
	feed(m, &r);
	mmap2(&r, 200, 0x400000, 0x2000, 0x1000, 5, "/usr/bin/as", 10 * S);
	feed(m, &r);
	exits = mmap_events__exits(m);

	task(&r, 4 /* EXIT */, 200, 1, 201, 10 * S); /* a thread's exit: still alive */
	feed(m, &r);
	assert_true(mmap_events__exits(m) == exits);
	task(&r, 4, 200, 1, 200, 11 * S);
	feed(m, &r);
	/* the process's exit moves the count of exits */
	assert_true(mmap_events__exits(m) != exits);
	/* pid 200 again, a new process (tick 1200) with nothing mapped yet */
	task(&r, 7, 200, 1, 200, 12 * S);
	feed(m, &r);
	mmap2(&r, 200, 0x7f0000000000, 0x10000, 0x28000, 5, "/usr/lib/x86_64-linux-gnu/libc.so.6",
	      12 * S);
	feed(m, &r);
	expect_maps(m, 200, 1000, AS_LINE);
	expect_maps(m, 200, 1200, LIBC_LINE);
	expect_maps(m, 200, 0, LIBC_LINE);
	/* within its grace period */
	mmap2(&r, 300, 0x400000, 0x1000, 0, 5, "/x", 11 * S + KEEP_NS);
	feed(m, &r);
	expect_maps(m, 200, 1000, AS_LINE);
	mmap2(&r, 300, 0x400000, 0x1000, 0, 5, "/x", 12 * S + KEEP_NS);
	feed(m, &r);
	expect_none(m, 200, 1000);
	expect_maps(m, 200, 1200, LIBC_LINE);
	mmap_events__free(m);
}

/* Over the memory bound: the exited go first, then the oldest. */
static void test_bound(void **state)
{
	/* one mapping of a 3-byte name: its struct and 3 bytes; room for 3 */
	struct mmap_events *m = mmap_events__new(3 * 64 + 3 * 3, KEEP_NS, TICK_NS);
	struct mmap_events_stats st;
	struct rec r;

	for (uint32_t pid = 1; pid <= 3; pid++) {
		mmap2(&r, pid, 0x1000, 0x1000, 0, 5, "/ab", S);
		feed(m, &r);
	}
	mmap_events__stats(m, &st);
	assert_true(st.held_bytes <= 3 * 64 + 3 * 3);
	if (st.evicted) { /* a struct mapping over 64 bytes: the test's assumption */
		mmap_events__free(m);
		fail_msg("struct mapping is larger than assumed");
	}
	task(&r, 4, 2, 1, 2, S);
	feed(m, &r);
	mmap2(&r, 4, 0x1000, 0x1000, 0, 5, "/ab", S);
	feed(m, &r);
	expect_none(m, 2, 0); /* exited: went first */
	expect_maps(m, 1, 0, "00001000-00002000 r-xp 00000000 08:01 1234 /ab\n");
	mmap2(&r, 5, 0x1000, 0x1000, 0, 5, "/ab", S);
	feed(m, &r);
	expect_none(m, 1, 0); /* none exited: the oldest */
	expect_maps(m, 5, 0, "00001000-00002000 r-xp 00000000 08:01 1234 /ab\n");
	mmap_events__stats(m, &st);
	assert_int_equal(st.evicted, 2);
	assert_int_equal(st.nr_procs, 3);
	mmap_events__free(m);
}

/* Malformed records: -EINVAL, counted, nothing kept; LOST counted; unknown types ignored. */
static void test_malformed(void **state)
{
	struct mmap_events *m = mmap_events__new(1 << 20, KEEP_NS, TICK_NS);
	struct mmap_events_stats st;
	struct rec r;

	mmap2(&r, 9, 0x1000, 0x1000, 0, 5, "/abcdefg", S); /* 8 bytes with its NUL */
	/* header.size larger than the bytes given */
	assert_int_equal(mmap_events__record(m, r.b, r.n - 1), -EINVAL);
	/* filename without a NUL before the sample_id */
	memset(r.b + 8 + 64, 'h', 16); /* the name, its NUL and padding */
	assert_int_equal(mmap_events__record(m, r.b, r.n), -EINVAL);
	/* shorter than MMAP2's fixed part */
	begin(&r, 10, 0);
	put64(&r, 0);
	end(&r, 9, S);
	assert_int_equal(mmap_events__record(m, r.b, r.n), -EINVAL);
	/* a mapping of length 0 */
	mmap2(&r, 9, 0x1000, 0, 0, 5, "/a", S);
	assert_int_equal(mmap_events__record(m, r.b, r.n), -EINVAL);
	/* FORK cut short */
	begin(&r, 7, 0);
	put32(&r, 9);
	end(&r, 9, S);
	assert_int_equal(mmap_events__record(m, r.b, r.n), -EINVAL);
	/* header alone, too short */
	assert_int_equal(mmap_events__record(m, r.b, 4), -EINVAL);
	expect_none(m, 9, 0);
	/* PERF_RECORD_LOST (2): u64 id, lost */
	begin(&r, 2, 0);
	put64(&r, 1);
	put64(&r, 17);
	end(&r, 0, S);
	feed(m, &r);
	/* PERF_RECORD_SWITCH (14): not used */
	begin(&r, 14, 0);
	end(&r, 0, S);
	feed(m, &r);
	mmap_events__stats(m, &st);
	assert_int_equal(st.bad, 6);
	assert_int_equal(st.lost, 17);
	assert_int_equal(st.nr_procs, 0);
	mmap_events__free(m);
}

static int fallback(void *ctx, uint32_t pid, uint32_t start, char **text, size_t *len)
{
	return mmap_events__maps(ctx, pid, start, text, len);
}

/* maps_cache__get of a process it never read: rendered from the records, then kept. */
static void test_maps_cache_fallback(void **state)
{
	static const char JIT_LINE[] =
		"7f1000000000-7f1000001000 r--p 00000000 08:01 99 /tmp/jit-300.dump\n";
	struct mmap_events *m = mmap_events__new(1 << 20, KEEP_NS, TICK_NS);
	char early[256], want[512];
	struct maps_cache *c = maps_cache__new("/nonexistent");
	const char *text;
	size_t len, nr, bytes;
	struct rec r;

	task(&r, 7, 200, 1, 200, 10 * S);
	feed(m, &r);
	mmap2(&r, 200, 0x400000, 0x2000, 0x1000, 5, "/usr/bin/as", 10 * S);
	feed(m, &r);
	assert_null(maps_cache__get(c, 200, 1000, &len));
	maps_cache__set_fallback(c, fallback, m);
	assert_null(maps_cache__get(c, 201, 1000, &len));
	text = maps_cache__get(c, 200, 1000, &len);
	assert_non_null(text);
	assert_int_equal(len, strlen(AS_LINE));
	assert_memory_equal(text, AS_LINE, len);
	maps_cache__counts(c, &nr, &bytes);
	assert_int_equal(nr, 1);
	assert_int_equal(bytes, strlen(AS_LINE));

	/*
	 * kept: a read while the process was in its dynamic loader (its
	 * executable and a jitdump marker); its libc mapped after, seen by the
	 * events: their text, with the kept jit-*.dump line after it
	 */
	task(&r, 7, 300, 1, 300, 10 * S);
	feed(m, &r);
	mmap2(&r, 300, 0x400000, 0x2000, 0x1000, 5, "/usr/bin/as", 10 * S);
	feed(m, &r);
	mmap2(&r, 300, 0x7f0000000000, 0x10000, 0x28000, 5, "/usr/lib/x86_64-linux-gnu/libc.so.6",
	      10 * S);
	feed(m, &r);
	snprintf(early, sizeof(early), "%s%s", AS_LINE, JIT_LINE);
	assert_int_equal(maps_cache__put(c, 300, 1000, early, strlen(early)), 0);
	/* peek: the kept text as put, the fallback not asked; nothing for others */
	text = maps_cache__peek(c, 300, 1000, &len);
	assert_non_null(text);
	assert_int_equal(len, strlen(early));
	assert_memory_equal(text, early, len);
	assert_null(maps_cache__peek(c, 300, 999, &len));
	assert_null(maps_cache__peek(c, 301, 1000, &len));
	text = maps_cache__get(c, 300, 1000, &len);
	assert_non_null(text);
	snprintf(want, sizeof(want), "%s%s%s", AS_LINE, LIBC_LINE, JIT_LINE);
	assert_int_equal(len, strlen(want));
	assert_memory_equal(text, want, len);
	/* kept as many as the events know: the kept text stays */
	assert_int_equal(maps_cache__put(c, 300, 1000, want, strlen(want)), 0);
	text = maps_cache__get(c, 300, 1000, &len);
	assert_memory_equal(text, want, len);
	maps_cache__free(c);
	mmap_events__free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mmap2_render),
		cmocka_unit_test(test_take_exec),
		cmocka_unit_test(test_exec_filter),
		cmocka_unit_test(test_changes),
		cmocka_unit_test(test_changes_fd),
		cmocka_unit_test(test_fork_exec),
		cmocka_unit_test(test_overlap),
		cmocka_unit_test(test_exit_and_reuse),
		cmocka_unit_test(test_take_exits),
		cmocka_unit_test(test_bound),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_maps_cache_fallback),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: MIT
/*
 * cmocka tests for the process limits of user/capture/agg.c (include/agg.h): past
 * max_tracked processes holding whole maps snapshots, exited ones (gone from
 * a fake proc_dir, zombies, or their pid taken by another start time) are
 * reduced to the mappings their samples use, only once the records stamped
 * before they were seen gone are in, with every sampled address resolving
 * as before; a sample for a reduced entry (a reused pid) tracks it again;
 * past max_procs new processes go to "[other]" with kernel frames only.
 * Also process_gone against the real /proc (a reaped child). Records carry
 * CLOCK_MONOTONIC stamps, the clock the aggregator compares them with.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* nftw */
#endif
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "agg.h"
#include "bpfprof_abi.h"
#include "log.h"
#include "proc_table.h"
#include "profile.h"

#define AGG_TMPDIR_TEMPLATE "/tmp/test_agg_churn.XXXXXX"
#include "agg_fixture.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void write_stat(uint32_t pid, char state, unsigned long long start)
{
	write_proc_stat(pid, state, 1, start);
}

/* the process exits and is reaped: its directory goes */
static void reap(uint32_t pid)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%u", tmpdir, pid);
	assert_int_equal(nftw(path, rm_one, 4, FTW_DEPTH | FTW_PHYS), 0);
}

/* app (two pieces), libc, an unused library, and a JIT marker: 5 mappings */
static const char maps_app[] =
	"00400000-00401000 r--p 00000000 08:01 131090    /usr/bin/app\n"
	"00401000-00500000 r-xp 00001000 08:01 131090    /usr/bin/app\n"
	"7f0000000000-7f0000010000 r-xp 00000000 08:01 42    /usr/lib/libc.so.6\n"
	"7f0000100000-7f0000110000 r-xp 00000000 08:01 43    /usr/lib/libunused.so\n"
	"7f0000200000-7f0000201000 r-xp 00000000 08:01 44    /tmp/jit-%u.dump\n";

/* a live process in the fake /proc: maps, comm, stat */
static void spawn(uint32_t pid, unsigned long long start)
{
	char maps[sizeof(maps_app) + 16];

	snprintf(maps, sizeof(maps), maps_app, pid);
	write_proc_file(pid, "maps", maps);
	write_proc_file(pid, "comm", "app\n");
	write_stat(pid, 'R', start);
}

/* a sample of comm "app" */
static int send_app(struct agg *a, uint32_t tgid, uint64_t time_ns, const uint64_t *kips,
		    uint16_t nk, const uint64_t *uips, uint16_t nu)
{
	return send_sample(a, tgid, time_ns, "app", kips, nk, uips, nu);
}

static const uint64_t kstack[] = { 0xffffffff81000100ULL, 0xffffffff81000200ULL };
/* leaf in app's text, return into libc (main ← __libc_start_call_main), return just past app's end */
static const uint64_t ustack[] = { 0x401234, 0x7f0000001000ULL, 0x500000 };

static const struct profile_process *proc_of(const struct profile *p, uint32_t pid)
{
	int i = profile__find_process(p, pid);

	assert_true(i >= 0);
	return &p->procs[i];
}

static bool has_path(const struct profile_process *pr, const char *path)
{
	for (size_t i = 0; i < pr->nr_mappings; i++)
		if (!strcmp(pr->mappings[i].path, path))
			return true;
	return false;
}

/* every user location sits in the mapping that holds it (ip - 1 for returns), by path */
static void check_locs(const struct profile *p)
{
	size_t i;

	for (i = 0; i < p->nr_locs; i++) {
		const struct profile_location *l = &p->locs[i];
		const struct profile_mapping *m;
		uint64_t at = l->addr - l->is_return;

		if (l->proc == PROFILE_KERNEL_PROC)
			continue;
		assert_true(l->mapping >= 0);
		m = &p->procs[l->proc].mappings[l->mapping];
		assert_true(m->start <= at && at < m->end);
		if (at < 0x500000)
			assert_string_equal(m->path, "/usr/bin/app");
		else
			assert_string_equal(m->path, "/usr/lib/libc.so.6");
	}
}

/*
 * max_tracked 2: the third process runs a pass that sees 100 and 101 gone;
 * the first record stamped past that + the margin reduces them to app's
 * text, libc and the JIT marker (dropping app's r--p piece and the unused
 * library), and their addresses resolve as before.
 */
static void test_exited_reduced_to_sampled_mappings(void **state)
{
	struct fixture *f = *state;
	struct agg_stats st;
	uint64_t t = now_ns();

	agg__set_limits(f->a, 2, 0);
	spawn(100, 1000);
	spawn(101, 1001);
	assert_int_equal(send_app(f->a, 100, t, kstack, 2, ustack, 3), 0);
	assert_int_equal(send_app(f->a, 101, t, kstack, 2, ustack, 2), 0);
	assert_int_equal(proc_of(f->p, 100)->nr_mappings, 5);
	reap(100);
	reap(101);
	spawn(102, 1002);
	assert_int_equal(send_app(f->a, 102, t + 1 * MS, NULL, 0, ustack, 1), 0);
	agg__stats(f->a, &st);
	assert_int_equal(st.nr_passes, 1);
	/* seen gone, but their last samples may still be queued: kept whole */
	assert_int_equal(st.nr_compacted, 0);
	assert_int_equal(st.nr_tracked, 3);
	assert_int_equal(proc_of(f->p, 100)->nr_mappings, 5);
	/* a late sample of 100 stamped before it was seen gone is one of its last */
	assert_int_equal(send_app(f->a, 100, t + 2 * MS, kstack, 1, ustack, 3), 0);

	/* the first record stamped GONE_MARGIN_NS (10 ms) after that: they are reduced */
	spawn(103, 1003);
	assert_int_equal(send_app(f->a, 103, now_ns() + 20 * MS, NULL, 0, ustack, 1), 0);
	agg__stats(f->a, &st);
	assert_int_equal(st.nr_passes, 1);
	assert_int_equal(st.nr_compacted, 2);
	assert_int_equal(st.nr_tracked, 2); /* 102, 103: alive */
	assert_int_equal(st.nr_mappings_freed, 2 * (5 - 3));
	assert_int_equal(proc_of(f->p, 100)->nr_mappings, 3);
	assert_true(has_path(proc_of(f->p, 100), "/usr/bin/app"));
	assert_true(has_path(proc_of(f->p, 100), "/usr/lib/libc.so.6"));
	assert_true(has_path(proc_of(f->p, 100), "/tmp/jit-100.dump"));
	assert_false(has_path(proc_of(f->p, 100), "/usr/lib/libunused.so"));
	/* 101's samples never reached past libc's return */
	assert_int_equal(proc_of(f->p, 101)->nr_mappings, 3);
	assert_int_equal(proc_of(f->p, 102)->nr_mappings, 5);
	assert_int_equal(profile__resolve_locs(f->p), 0);
	check_locs(f->p);
	assert_int_equal(f->p->nr_samples, 5);
}

/* locations resolved before a pass keep pointing at their (moved) mapping */
static void test_resolved_locations_follow(void **state)
{
	struct fixture *f = *state;
	uint64_t t = now_ns();

	agg__set_limits(f->a, 1, 0);
	spawn(200, 7);
	assert_int_equal(send_app(f->a, 200, t, kstack, 2, ustack, 3), 0);
	assert_int_equal(profile__resolve_locs(f->p), 0);
	reap(200);
	spawn(201, 8);
	assert_int_equal(send_app(f->a, 201, t, NULL, 0, ustack, 1), 0);
	spawn(202, 9);
	assert_int_equal(send_app(f->a, 202, now_ns() + 20 * MS, NULL, 0, ustack, 1), 0);
	assert_int_equal(proc_of(f->p, 200)->nr_mappings, 3);
	assert_int_equal(profile__resolve_locs(f->p), 0);
	check_locs(f->p);
}

/*
 * A zombie has exited; a pid with another start time is another process;
 * a zombie leader whose other threads run on has not.
 */
static void test_zombie_and_reused_pid_are_gone(void **state)
{
	struct fixture *f = *state;
	struct agg_stats st;
	uint64_t t = now_ns();

	agg__set_limits(f->a, 3, 0);
	spawn(300, 50);
	spawn(301, 51);
	spawn(302, 52);
	spawn(303, 53);
	assert_int_equal(send_app(f->a, 300, t, NULL, 0, ustack, 2), 0);
	assert_int_equal(send_app(f->a, 301, t, NULL, 0, ustack, 2), 0);
	assert_int_equal(send_app(f->a, 302, t, NULL, 0, ustack, 2), 0);
	write_stat(300, 'Z', 50);
	write_stat(301, 'S', 9999); /* reused by a process started later */
	write_proc_stat(302, 'Z', 3, 52); /* the leader called pthread_exit */
	assert_int_equal(send_app(f->a, 303, t, NULL, 0, ustack, 2), 0);
	spawn(304, 54);
	assert_int_equal(send_app(f->a, 304, now_ns() + 20 * MS, NULL, 0, ustack, 2), 0);
	agg__stats(f->a, &st);
	assert_int_equal(st.nr_passes, 1);
	assert_int_equal(st.nr_compacted, 2);
	assert_int_equal(proc_of(f->p, 300)->nr_mappings, 3);
	assert_int_equal(proc_of(f->p, 301)->nr_mappings, 3);
	/* alive and unchanged: never reduced */
	assert_int_equal(proc_of(f->p, 302)->nr_mappings, 5);
	assert_int_equal(proc_of(f->p, 303)->nr_mappings, 5);
}

/* a sample stamped after a reduced entry's process was gone: its pid runs another process */
static void test_reused_pid_tracked_again(void **state)
{
	struct fixture *f = *state;
	struct agg_stats st;
	uint64_t t = now_ns();
	const uint64_t other_lib[] = { 0x7f0000101000ULL };

	agg__set_limits(f->a, 1, 0);
	spawn(400, 70);
	assert_int_equal(send_app(f->a, 400, t, NULL, 0, ustack, 1), 0);
	reap(400);
	spawn(401, 71);
	assert_int_equal(send_app(f->a, 401, t, NULL, 0, ustack, 1), 0);
	spawn(402, 72);
	assert_int_equal(send_app(f->a, 402, now_ns() + 20 * MS, NULL, 0, ustack, 1), 0);
	assert_int_equal(proc_of(f->p, 400)->nr_mappings, 2); /* app text and the JIT marker */
	agg__stats(f->a, &st);
	assert_int_equal(st.nr_tracked, 2);

	spawn(400, 80); /* the pid again, another process */
	assert_int_equal(send_app(f->a, 400, now_ns() + 40 * MS, NULL, 0, other_lib, 1), 0);
	agg__stats(f->a, &st);
	assert_int_equal(st.nr_tracked, 3);
	/* its maps were read while it runs: the library it samples in is known */
	assert_true(has_path(proc_of(f->p, 400), "/usr/lib/libunused.so"));
	assert_int_equal(proc_of(f->p, 400)->nr_mappings, 5);
}

/* max_procs 2: the third process goes to "[other]", kernel frames only; known ones keep theirs */
static void test_process_limit_other(void **state)
{
	struct fixture *f = *state;
	const struct profile_process *o;
	struct agg_stats st;
	uint64_t t = now_ns();
	size_t i;

	agg__set_limits(f->a, 0, 2);
	spawn(500, 1);
	spawn(501, 2);
	spawn(502, 3);
	spawn(503, 4);
	assert_int_equal(send_app(f->a, 500, t, kstack, 2, ustack, 3), 0);
	assert_int_equal(send_app(f->a, 501, t, kstack, 2, ustack, 3), 0);
	assert_int_equal(send_app(f->a, 502, t, kstack, 2, ustack, 3), 0);
	assert_int_equal(send_app(f->a, 503, t, kstack, 1, ustack, 2), 0);
	assert_int_equal(send_app(f->a, 502, t, kstack, 2, ustack, 1), 0);
	assert_int_equal(send_app(f->a, 500, t, kstack, 2, ustack, 3), 0);
	assert_int_equal(f->p->nr_procs, 3);
	assert_int_equal(profile__find_process(f->p, 502), -ENOENT);
	o = proc_of(f->p, AGG_OTHER_PID);
	assert_string_equal(o->comm, "[other]");
	assert_int_equal(o->nr_samples, 3);
	assert_int_equal(o->nr_mappings, 0);
	assert_int_equal(proc_of(f->p, 500)->nr_samples, 2);
	for (i = 0; i < f->p->nr_stacks; i++)
		if (f->p->stacks[i].proc == (uint32_t)profile__find_process(f->p, AGG_OTHER_PID))
			assert_int_equal(f->p->stacks[i].nr_user, 0);
	/* 502's two callchains fold to one: the same kernel frames */
	assert_int_equal(f->p->nr_stacks, 2 + 2);
	agg__stats(f->a, &st);
	assert_int_equal(st.nr_other_samples, 3);
	assert_int_equal(f->p->nr_samples, 6);
}

/*
 * Churn: 3000 processes of 5 mappings, each sampled then gone, with
 * max_tracked 64: whole snapshots held stay near 64, the rest keep 3.
 * Records are stamped 20 ms late here, so that each one may reduce what
 * the previous pass saw gone (the margin is tested above).
 */
static void test_churn_bounded(void **state)
{
	struct fixture *f = *state;
	struct agg_stats st;
	size_t held = 0, peak = 0, i;
	uint32_t pid;

	agg__set_limits(f->a, 64, 0);
	for (pid = 1000; pid < 4000; pid++) {
		spawn(pid, pid);
		assert_int_equal(send_app(f->a, pid, now_ns() + 20 * MS, kstack, 2, ustack, 3), 0);
		reap(pid);
		agg__stats(f->a, &st);
		if (st.nr_tracked > peak)
			peak = st.nr_tracked;
	}
	agg__stats(f->a, &st);
	for (i = 0; i < f->p->nr_procs; i++)
		held += f->p->procs[i].nr_mappings;
	assert_int_equal(f->p->nr_procs, 3000);
	assert_true(peak <= 64 + 64 / 8 + 1);
	assert_int_equal(st.nr_compacted, 3000 - st.nr_tracked);
	assert_int_equal(held, st.nr_tracked * 5 + st.nr_compacted * 3);
	/* all gone: each pass frees room for about max_tracked more */
	assert_true(st.nr_passes >= 3000 / 65 && st.nr_passes <= 3000 / 56 + 1);
	assert_int_equal(profile__resolve_locs(f->p), 0);
	check_locs(f->p);
}

/* the real /proc: ourselves alive; a reaped child gone */
static void test_real_proc(void **state)
{
	struct profile *p = profile__new();
	struct proc_table *pt = proc_table__new("/proc", false);
	struct agg *a = p && pt ? agg__new(p, pt, PERIOD_NS) : NULL;
	struct agg_stats st;
	pid_t child;
	uint64_t t = now_ns();

	assert_non_null(a);
	agg__set_limits(a, 1, 0);
	child = fork();
	assert_true(child >= 0);
	if (!child)
		_exit(0);
	assert_int_equal(waitpid(child, NULL, 0), child);
	/* the child's entry: its maps already gone, so none; our own after it */
	assert_int_equal(send_app(a, (uint32_t)child, t, NULL, 0, ustack, 1), 0);
	assert_int_equal(send_app(a, (uint32_t)getpid(), t, NULL, 0, ustack, 1), 0);
	assert_int_equal(send_app(a, (uint32_t)getppid(), now_ns() + 20 * MS, NULL, 0, ustack, 1),
			 0);
	agg__stats(a, &st);
	/* pass 1 saw the child gone, pass 2 reduced it; we and our parent live on */
	assert_int_equal(st.nr_compacted, 1);
	assert_int_equal(st.nr_tracked, 2);
	assert_true(p->procs[profile__find_process(p, (uint32_t)getpid())].nr_mappings > 3);
	agg__free(a);
	proc_table__free(pt);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_exited_reduced_to_sampled_mappings, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_resolved_locations_follow, setup, teardown),
		cmocka_unit_test_setup_teardown(test_zombie_and_reused_pid_are_gone, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_reused_pid_tracked_again, setup, teardown),
		cmocka_unit_test_setup_teardown(test_process_limit_other, setup, teardown),
		cmocka_unit_test_setup_teardown(test_churn_bounded, setup, teardown),
		cmocka_unit_test(test_real_proc),
	};

	return cmocka_run_group_tests(tests, setup_tmpdir, teardown_tmpdir);
}

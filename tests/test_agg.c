// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/capture/agg.c (include/agg.h) and profile__resolve_locs():
 * synthetic ring-buffer records (include/bpfprof_abi.h), each sent as exactly
 * BPFPROF_SAMPLE_HDR_SIZE + frames * 8 heap bytes so the sanitizers catch
 * overreads, against a fake proc_dir (mkdtemp) holding <pid>/maps and
 * <pid>/comm. Covers aggregation, per-process state, the comm fallback, the
 * maps snapshot and its rate-limited re-read, malformed records, the
 * observer hooks, and the locations built from the stacks.
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
#include <unistd.h>
#include <cmocka.h>
#include "agg.h"
#include "bpfprof_abi.h"
#include "log.h"
#include "proc_table.h"
#include "profile.h"

#define AGG_TMPDIR_TEMPLATE "/tmp/test_agg.XXXXXX"
#include "agg_fixture.h"

static const char maps_a[] =
	"00400000-00500000 r-xp 00000000 08:01 131090    /usr/bin/app\n"
	"7f0000000000-7f0000010000 r-xp 00000000 08:01 42    /usr/lib/libc.so.6\n";

static void test_aggregate_identical(void **state)
{
	struct fixture *f = *state;
	struct profile *p = f->p;
	const uint64_t k[] = { 0xffffffff81000100ULL, 0xffffffff81000200ULL };
	const uint64_t u1[] = { 0x401000, 0x402000, 0x7f0000001000ULL };
	const uint64_t u2[] = { 0x401004, 0x402000, 0x7f0000001000ULL };
	const struct profile_stack *s;
	int i;

	write_proc_file(1000, "maps", maps_a);
	write_proc_file(1000, "comm", "app\n");
	for (i = 0; i < 3; i++)
		assert_int_equal(send_sample(f->a, 1000, 1000 + (uint64_t)i, "app", k, 2, u1, 3),
				 0);
	assert_int_equal(send_sample(f->a, 1000, 2000, "app", k, 2, u2, 3), 0);
	/* same user part, no kernel part: another callchain */
	assert_int_equal(send_sample(f->a, 1000, 3000, "app", NULL, 0, u1, 3), 0);
	assert_int_equal(send_sample(f->a, 1000, 3001, "app", k, 2, u1, 3), 0);

	assert_int_equal(p->nr_procs, 1);
	assert_int_equal(p->procs[0].pid, 1000);
	assert_int_equal(p->procs[0].nr_samples, 6);
	assert_int_equal(p->procs[0].cgroup_id, 0xc0ffee);
	assert_int_equal(p->nr_samples, 6);
	assert_int_equal(p->nr_stacks, 3);
	s = &p->stacks[0];
	assert_int_equal(s->proc, 0);
	assert_int_equal(s->nr_kernel, 2);
	assert_int_equal(s->nr_user, 3);
	assert_int_equal(s->count, 4);
	assert_int_equal(s->value, 4 * PERIOD_NS);
	assert_int_equal(s->ips[0], 0xffffffff81000100ULL);
	assert_int_equal(s->ips[1], 0xffffffff81000200ULL);
	assert_int_equal(s->ips[2], 0x401000);
	assert_int_equal(s->ips[4], 0x7f0000001000ULL);
	s = &p->stacks[1];
	assert_int_equal(s->count, 1);
	assert_int_equal(s->value, PERIOD_NS);
	assert_int_equal(s->ips[2], 0x401004);
	s = &p->stacks[2];
	assert_int_equal(s->nr_kernel, 0);
	assert_int_equal(s->nr_user, 3);
	assert_int_equal(s->count, 1);
	assert_int_equal(s->ips[0], 0x401000);
	assert_int_equal(agg__nr_bad(f->a), 0);
}

static void test_processes_and_comm(void **state)
{
	struct fixture *f = *state;
	struct profile *p = f->p;
	const uint64_t u[] = { 0x401000, 0x402000 };
	int a, b, c;

	write_proc_file(2001, "maps", maps_a);
	write_proc_file(2001, "comm", "main-thread\n");
	write_proc_file(2002, "maps", maps_a);
	write_proc_file(2002, "comm", "abcdefghijklmno\n"); /* 15 characters, the kernel maximum */
	write_proc_file(2003, "maps", maps_a); /* no comm file */

	assert_int_equal(send_sample(f->a, 2001, 10, "worker-3", NULL, 0, u, 2), 0);
	assert_int_equal(send_sample(f->a, 2002, 11, "x", NULL, 0, u, 2), 0);
	assert_int_equal(send_sample(f->a, 2003, 12, "fallback-comm", NULL, 0, u, 2), 0);
	assert_int_equal(send_sample(f->a, 2001, 13, "worker-4", NULL, 0, u, 2), 0);

	assert_int_equal(p->nr_procs, 3);
	a = profile__find_process(p, 2001);
	b = profile__find_process(p, 2002);
	c = profile__find_process(p, 2003);
	assert_true(a >= 0 && b >= 0 && c >= 0);
	assert_true(a != b && b != c && a != c);
	/* same callchain, different processes: separate stacks */
	assert_int_equal(p->nr_stacks, 3);
	assert_int_equal(p->stacks[0].proc, a);
	assert_int_equal(p->stacks[0].count, 2);
	assert_int_equal(p->stacks[1].proc, b);
	assert_int_equal(p->stacks[2].proc, c);
	assert_int_equal(p->procs[a].nr_samples, 2);
	assert_int_equal(p->procs[b].nr_samples, 1);

	/* the process's comm, not the sampled thread's, and without the newline */
	assert_string_equal(p->procs[a].comm, "main-thread");
	assert_string_equal(p->procs[b].comm, "abcdefghijklmno");
	assert_string_equal(p->procs[c].comm, "fallback-comm");
}

/*
 * A first record of the main thread names its process by the record's
 * comm (the main thread's at the sample), not by a read of /proc/PID/comm
 * (here another name: a read would show)
 */
static void test_main_thread_comm(void **state)
{
	struct fixture *f = *state;
	struct profile *p = f->p;
	const uint64_t u[] = { 0x401000 };
	int a, b;

	write_proc_file(2201, "maps", maps_a);
	write_proc_file(2201, "comm", "from-proc\n");
	write_proc_file(2202, "maps", maps_a);
	write_proc_file(2202, "comm", "from-proc\n");
	sample_tid = 2201;
	assert_int_equal(send_sample(f->a, 2201, 10, "main-record", NULL, 0, u, 1), 0);
	sample_tid = 0; /* another thread of 2202: its process's comm read */
	assert_int_equal(send_sample(f->a, 2202, 11, "worker", NULL, 0, u, 1), 0);
	a = profile__find_process(p, 2201);
	b = profile__find_process(p, 2202);
	assert_true(a >= 0 && b >= 0);
	assert_string_equal(p->procs[a].comm, "main-record");
	assert_string_equal(p->procs[b].comm, "from-proc");
	/* its maps read all the same */
	assert_int_equal(p->procs[a].nr_mappings, 2);
}

/* <tmpdir>/<pid>/stat of a running process that started at tick `start` */
static void write_stat(uint32_t pid, const char *comm, uint32_t start)
{
	char buf[256];

	/* fields 4-21: ppid ... num_threads (20) itrealvalue; 22: starttime */
	snprintf(buf, sizeof(buf), "%u (%s) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %u 0 0\n", pid,
		 comm, start);
	write_proc_file(pid, "stat", buf);
}

/*
 * Issue 24, fault 2: a pid reused while the run goes on. Records carry the
 * process's start time: the old process's late records keep its entry, its
 * name and its maps (never merged with the new one's), the new process gets
 * an entry of its own, and an old process first read after the reuse gets
 * nothing of the new one.
 */
static void test_pid_reuse(void **state)
{
	static const char maps_new[] =
		"00400000-00500000 r-xp 00000000 08:01 777    /usr/bin/other\n"
		"00600000-00700000 r-xp 00000000 08:01 778    /usr/lib/libnew.so\n";
	struct fixture *f = *state;
	struct profile *p = f->p;
	const uint64_t u[] = { 0x401000 }, u_new[] = { 0x601000 };
	int old, fresh, late;

	write_proc_file(4100, "maps", maps_a);
	write_proc_file(4100, "comm", "old\n");
	write_stat(4100, "old", 500);
	sample_start = 500;
	assert_int_equal(send_sample(f->a, 4100, 10 * MS, "old", NULL, 0, u, 1), 0);

	/* the pid is another process's now */
	write_proc_file(4100, "maps", maps_new);
	write_proc_file(4100, "comm", "new\n");
	write_stat(4100, "new", 900);
	/* a late record of the old process, in code its maps lack: no re-read takes the new maps */
	assert_int_equal(send_sample(f->a, 4100, 20 * MS, "old", NULL, 0, u_new, 1), 0);
	sample_start = 900;
	assert_int_equal(send_sample(f->a, 4100, 30 * MS, "new", NULL, 0, u_new, 1), 0);
	/* a third process of that pid, first read after the pid went on to another */
	sample_start = 700;
	assert_int_equal(send_sample(f->a, 4100, 25 * MS, "between", NULL, 0, u, 1), 0);
	sample_start = 0;

	assert_int_equal(p->nr_procs, 3);
	old = profile__find_process_start(p, 4100, 500);
	fresh = profile__find_process_start(p, 4100, 900);
	late = profile__find_process_start(p, 4100, 700);
	assert_true(old >= 0 && fresh >= 0 && late >= 0);
	assert_true(old != fresh && fresh != late && old != late);
	assert_string_equal(p->procs[old].comm, "old");
	assert_int_equal(p->procs[old].nr_samples, 2);
	assert_int_equal(p->procs[old].nr_mappings, 2);
	assert_string_equal(p->procs[old].mappings[0].path, "/usr/bin/app");
	assert_string_equal(p->procs[old].mappings[1].path, "/usr/lib/libc.so.6");
	assert_string_equal(p->procs[fresh].comm, "new");
	assert_int_equal(p->procs[fresh].nr_mappings, 2);
	assert_string_equal(p->procs[fresh].mappings[1].path, "/usr/lib/libnew.so");
	/* the record's comm, and no maps: the new process's are not its own */
	assert_string_equal(p->procs[late].comm, "between");
	assert_int_equal(p->procs[late].nr_mappings, 0);
	assert_true(p->procs[late].maps_missing);
	/* the newest entry of a pid when no start is given */
	assert_int_equal(profile__find_process(p, 4100), late);
}

/*
 * Records go to the entry profile__find_process_start names, or a new one,
 * however the aggregator remembers the last entries found: pids sharing one
 * remembered place (4100 and 4164), starts unknown then known, a reused pid.
 */
static void test_process_lookup_sequence(void **state)
{
	static const struct {
		uint32_t tgid, start;
		int proc; /* the entry it must land on */
	} seq[] = {
		{ 4100, 0, 0 },	  { 4164, 0, 1 },   { 4100, 0, 0 },   { 4100, 500, 0 },
		{ 4100, 500, 0 }, { 4164, 0, 1 },   { 4100, 900, 2 }, { 4100, 500, 0 },
		{ 4100, 0, 2 },	  { 4100, 900, 2 }, { 4164, 700, 1 }, { 4164, 0, 1 },
		{ 4164, 800, 3 }, { 4164, 700, 1 }, { 4100, 900, 2 },
	};
	struct fixture *f = *state;
	struct profile *p = f->p;
	const uint64_t u[] = { 0x401000 };
	uint64_t want[4] = { 0 };
	int newest = -1;
	size_t i;

	write_proc_file(4100, "maps", maps_a);
	write_proc_file(4100, "comm", "app\n");
	write_proc_file(4164, "maps", maps_a);
	write_proc_file(4164, "comm", "app\n");
	for (i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
		sample_start = seq[i].start;
		assert_int_equal(
			send_sample(f->a, seq[i].tgid, (10 + i) * MS, "app", NULL, 0, u, 1), 0);
		want[seq[i].proc]++;
		if (seq[i].proc > newest)
			newest = seq[i].proc;
		assert_int_equal(p->nr_procs, newest + 1);
		for (int k = 0; k <= newest; k++)
			assert_int_equal(p->procs[k].nr_samples, want[k]);
	}
	sample_start = 0;
	assert_int_equal(p->nr_procs, 4);
	assert_int_equal(p->procs[0].start, 500);
	assert_int_equal(p->procs[1].start, 700);
	assert_int_equal(p->procs[2].start, 900);
	assert_int_equal(p->procs[3].start, 800);
}

static void test_comm_fallback_full_length(void **state)
{
	struct fixture *f = *state;
	struct profile *p = f->p;
	const uint64_t u[] = { 0x401000 };

	/* no directory at all: comm from the record, maps missing */
	assert_int_equal(send_sample(f->a, 3001, 10, "0123456789abcdef", NULL, 0, u, 1), 0);
	assert_int_equal(p->nr_procs, 1);
	/* a 16-byte comm without NUL is cut to 15 characters */
	assert_string_equal(p->procs[0].comm, "0123456789abcde");
	assert_true(p->procs[0].maps_missing);
	assert_int_equal(p->procs[0].nr_mappings, 0);
	assert_int_equal(p->nr_stacks, 1);
}

static void test_maps_snapshot_first_sample(void **state)
{
	struct fixture *f = *state;
	struct profile *p = f->p;
	const uint64_t u[] = { 0x401000 };
	const struct profile_process *pr;

	write_proc_file(4001, "maps", maps_a);
	assert_int_equal(send_sample(f->a, 4001, 5, "app", NULL, 0, u, 1), 0);
	pr = &p->procs[0];
	assert_false(pr->maps_missing);
	assert_int_equal(pr->nr_mappings, 2);
	assert_int_equal(pr->mappings[0].start, 0x400000);
	assert_int_equal(pr->mappings[0].end, 0x500000);
	assert_string_equal(pr->mappings[0].path, "/usr/bin/app");
	assert_int_equal(pr->mappings[1].start, 0x7f0000000000ULL);
	assert_string_equal(pr->mappings[1].path, "/usr/lib/libc.so.6");
}

/*
 * A young process's first 2 re-reads are not held back (test_maps_reread_burst):
 * use them up with new callchains outside every mapping, so that a test sees
 * the 100 ms rule.
 */
static void use_up_quick_rereads(struct agg *a, uint32_t tgid, uint64_t time_ns, const char *comm)
{
	for (uint64_t i = 0; i < 2; i++) {
		const uint64_t unknown[] = { 0x900000 + i };

		assert_int_equal(send_sample(a, tgid, time_ns, comm, NULL, 0, unknown, 1), 0);
	}
}

static void test_maps_reread(void **state)
{
	struct fixture *f = *state;
	struct profile *p = f->p;
	const uint64_t t0 = 5000 * MS;
	const uint64_t in_app[] = { 0x401000 };
	const uint64_t in_lib[] = { 0x7f1000001000ULL };
	const uint64_t in_lib2[] = { 0x7f1000002000ULL, 0x401000 };
	/* a return address exactly at the end of its mapping: looked up as ip - 1 */
	const uint64_t ret_at_end[] = { 0x401100, 0x500000 };
	const uint64_t in_jit[] = { 0x7f2000000100ULL };
	const uint64_t in_jit2[] = { 0x7f2000000200ULL };
	static const char maps_1[] =
		"00400000-00500000 r-xp 00000000 08:01 131090    /usr/bin/app\n";
	static const char maps_2[] =
		"00400000-00500000 r-xp 00000000 08:01 131090    /usr/bin/app\n"
		"7f1000000000-7f1000010000 r-xp 00000000 08:01 77    /usr/lib/libnew.so\n";
	static const char maps_3[] =
		"00400000-00500000 r-xp 00000000 08:01 131090    /usr/bin/app\n"
		"00500000-00600000 r--p 00100000 08:01 131090    /usr/bin/app\n"
		"7f1000000000-7f1000010000 r-xp 00000000 08:01 77    /usr/lib/libnew.so\n"
		"7f2000000000-7f2000001000 r-xp 00000000 00:00 0\n";

	write_proc_file(5001, "maps", maps_1);
	assert_int_equal(send_sample(f->a, 5001, t0, "app", NULL, 0, in_app, 1), 0);
	assert_int_equal(p->procs[0].nr_mappings, 1);
	use_up_quick_rereads(f->a, 5001, t0, "app");

	/* libnew.so is mapped now, and a sample lands in it within 100 ms: no re-read */
	write_proc_file(5001, "maps", maps_2);
	assert_int_equal(send_sample(f->a, 5001, t0 + 100 * MS - 1, "app", NULL, 0, in_lib, 1), 0);
	assert_int_equal(p->procs[0].nr_mappings, 1);

	/*
	 * the same callchain 100 ms later: the read put off above happens now
	 * (else code mapped early, JIT code, stays unknown while its
	 * callchains only repeat)
	 */
	assert_int_equal(send_sample(f->a, 5001, t0 + 100 * MS, "app", NULL, 0, in_lib, 1), 0);
	assert_int_equal(p->procs[0].nr_mappings, 2);
	/* and only once */
	write_proc_file(5001, "maps", maps_1);
	assert_int_equal(send_sample(f->a, 5001, t0 + 100 * MS, "app", NULL, 0, in_lib, 1), 0);
	assert_int_equal(p->procs[0].nr_mappings, 2);
	write_proc_file(5001, "maps", maps_2);

	/* a new callchain, all mapped: no re-read */
	{
		const uint64_t known[] = { 0x401234, 0x401000 };

		assert_int_equal(send_sample(f->a, 5001, t0 + 100 * MS, "app", NULL, 0, known, 2),
				 0);
		assert_int_equal(p->procs[0].nr_mappings, 2);
	}

	/* a new callchain in the library read above: known, no re-read */
	assert_int_equal(send_sample(f->a, 5001, t0 + 100 * MS, "app", NULL, 0, in_lib2, 2), 0);
	assert_int_equal(p->procs[0].nr_mappings, 2);
	assert_int_equal(p->procs[0].mappings[1].start, 0x7f1000000000ULL);
	assert_string_equal(p->procs[0].mappings[1].path, "/usr/lib/libnew.so");

	/* the clock restarts at the re-read */
	write_proc_file(5001, "maps", maps_3);
	assert_int_equal(send_sample(f->a, 5001, t0 + 150 * MS, "app", NULL, 0, in_jit, 1), 0);
	assert_int_equal(p->procs[0].nr_mappings, 2);
	/* a return address at a mapping's end counts as mapped (0x4fffff) */
	assert_int_equal(send_sample(f->a, 5001, t0 + 200 * MS - 1, "app", NULL, 0, ret_at_end, 2),
			 0);
	assert_int_equal(p->procs[0].nr_mappings, 2);
	/* the read put off at 150 ms comes with the first sample allowed, whatever its addresses */
	assert_int_equal(send_sample(f->a, 5001, t0 + 200 * MS, "app", NULL, 0, in_app, 1), 0);
	assert_int_equal(p->procs[0].nr_mappings, 4);
	assert_int_equal(send_sample(f->a, 5001, t0 + 200 * MS, "app", NULL, 0, in_jit2, 1), 0);
	assert_int_equal(p->procs[0].nr_mappings, 4);
	assert_int_equal(profile__find_mapping(p, 0, 0x7f2000000100ULL), 3);

	/* kernel frames never trigger a re-read */
	write_proc_file(5001, "maps", maps_a);
	{
		const uint64_t k[] = { 0xffffffff81000000ULL };

		assert_int_equal(send_sample(f->a, 5001, t0 + 240 * MS, "app", k, 1, in_app, 1), 0);
	}
	assert_int_equal(p->procs[0].nr_mappings, 4);
	assert_int_equal(p->nr_stacks, 10);
	assert_int_equal(agg__nr_bad(f->a), 0);
}

/* A sample of the process's main thread (tid == tgid), which carries the leader's comm. */
static int send_leader_sample(struct agg *a, uint32_t tgid, uint64_t time_ns, const char *comm,
			      const uint64_t *uips, uint16_t nu)
{
	struct bpfprof_sample s;
	size_t size = BPFPROF_SAMPLE_HDR_SIZE + (size_t)nu * 8;

	memset(&s, 0, sizeof(s));
	s.type = BPFPROF_REC_SAMPLE;
	s.tgid = s.tid = tgid;
	s.time_ns = time_ns;
	memcpy(s.comm, comm, strnlen(comm, sizeof(s.comm)));
	s.nr_user = nu;
	memcpy(s.ips, uips, (size_t)nu * 8);
	return agg__record(a, &s, size);
}

static void test_maps_reread_burst(void **state)
{
	/* a young process maps its libraries within ms: its first 2 re-reads are not held back */
	struct fixture *f = *state;
	struct profile *p = f->p;
	static const char maps_1[] =
		"00400000-00500000 r-xp 00000000 08:01 131090    /usr/bin/app\n";
	char maps[1024];
	uint64_t t0 = 7000 * MS, i;
	int len;

	write_proc_file(7001, "maps", maps_1);
	{
		const uint64_t u[] = { 0x401000 };

		assert_int_equal(send_sample(f->a, 7001, t0, "app", NULL, 0, u, 1), 0);
	}
	assert_int_equal(p->procs[0].nr_mappings, 1);
	/* each 1 ms later a library appears and a sample lands in it: read each time, twice */
	len = snprintf(maps, sizeof(maps), "%s", maps_1);
	for (i = 1; i <= 3; i++) {
		const uint64_t u[] = { 0x7f1000000000ULL + (i << 20) + 0x10 };

		len += snprintf(maps + len, sizeof(maps) - (size_t)len,
				"%llx-%llx r-xp 00000000 08:01 %llu    /usr/lib/lib%llu.so\n",
				(unsigned long long)(0x7f1000000000ULL + (i << 20)),
				(unsigned long long)(0x7f1000000000ULL + (i << 20) + 0x1000),
				(unsigned long long)(100 + i), (unsigned long long)i);
		write_proc_file(7001, "maps", maps);
		assert_int_equal(send_sample(f->a, 7001, t0 + i * MS, "app", NULL, 0, u, 1), 0);
		/* the third comes within 100 ms of the second: held back */
		assert_int_equal(p->procs[0].nr_mappings, 1 + (i < 3 ? i : 2));
	}
	/* then read at the first sample 100 ms after the last read */
	{
		const uint64_t u[] = { 0x401000 };

		assert_int_equal(send_sample(f->a, 7001, t0 + 101 * MS, "app", NULL, 0, u, 1), 0);
	}
	assert_int_equal(p->procs[0].nr_mappings, 3);
	{
		const uint64_t u[] = { 0x401000 };

		assert_int_equal(send_sample(f->a, 7001, t0 + 102 * MS, "app", NULL, 0, u, 1), 0);
	}
	assert_int_equal(p->procs[0].nr_mappings, 4);
}

static void test_jit_code_rereads_until_jitdump(void **state)
{
	/*
	 * Samples in JIT code (anonymous r-x) of a runtime whose jit-PID.dump is
	 * not mapped yet: the maps are read again (rate-limited) until it is;
	 * from then on JIT callchains read nothing.
	 */
	struct fixture *f = *state;
	struct profile *p = f->p;
	static const char maps_1[] =
		"00400000-00500000 r-xp 00000000 08:01 131090    /usr/bin/node\n"
		"7f2000000000-7f2000100000 r-xp 00000000 00:00 0\n";
	static const char maps_2[] =
		"00400000-00500000 r-xp 00000000 08:01 131090    /usr/bin/node\n"
		"7f2000000000-7f2000100000 r-xp 00000000 00:00 0\n"
		"7f3000000000-7f3000001000 r-xp 00000000 08:01 99    /tmp/jit-7201.dump\n";
	static const char maps_3[] =
		"00400000-00500000 r-xp 00000000 08:01 131090    /usr/bin/node\n"
		"7f2000000000-7f2000100000 r-xp 00000000 00:00 0\n"
		"7f3000000000-7f3000001000 r-xp 00000000 08:01 99    /tmp/jit-7201.dump\n"
		"7f4000000000-7f4000001000 r--p 00000000 00:00 0\n";
	uint64_t t0 = 9000 * MS;

	write_proc_file(7201, "maps", maps_1);
	{
		const uint64_t u[] = { 0x401000 };

		assert_int_equal(send_sample(f->a, 7201, t0, "node", NULL, 0, u, 1), 0);
	}
	use_up_quick_rereads(f->a, 7201, t0, "node");
	assert_int_equal(p->procs[0].nr_mappings, 2);
	write_proc_file(7201, "maps", maps_2);
	{
		const uint64_t jit[] = { 0x7f2000000100ULL, 0x401000 };

		/* known, but JIT code and no jitdump yet: read, 100 ms after the last read */
		assert_int_equal(send_sample(f->a, 7201, t0 + 100 * MS, "node", NULL, 0, jit, 2),
				 0);
	}
	assert_int_equal(p->procs[0].nr_mappings, 3);
	write_proc_file(7201, "maps", maps_3);
	{
		const uint64_t jit[] = { 0x7f2000000200ULL, 0x401000 };

		/* the jitdump is known now: a new JIT callchain reads nothing */
		assert_int_equal(send_sample(f->a, 7201, t0 + 200 * MS, "node", NULL, 0, jit, 2),
				 0);
	}
	assert_int_equal(p->procs[0].nr_mappings, 3);
}

static void test_code_in_non_exec_mapping_rereads(void **state)
{
	/*
	 * A runtime reserves its code space (---p) and makes parts executable
	 * later: a sample there means the copy is out of date.
	 */
	struct fixture *f = *state;
	struct profile *p = f->p;
	static const char maps_1[] = "00400000-00500000 r-xp 00000000 08:01 131090    /usr/bin/rt\n"
				     "7f2000000000-7f2000100000 ---p 00000000 00:00 0\n";
	static const char maps_2[] =
		"00400000-00500000 r-xp 00000000 08:01 131090    /usr/bin/rt\n"
		"7f2000000000-7f2000001000 r-xp 00000000 00:00 0\n"
		"7f2000001000-7f2000100000 ---p 00000000 00:00 0\n"
		"7f3000000000-7f3000001000 r-xp 00000000 08:01 99    /tmp/jit-7501.dump\n";
	const uint64_t u[] = { 0x401000 }, code[] = { 0x7f2000000100ULL, 0x401000 };
	uint64_t t0 = 12000 * MS;

	write_proc_file(7501, "maps", maps_1);
	assert_int_equal(send_sample(f->a, 7501, t0, "rt", NULL, 0, u, 1), 0);
	use_up_quick_rereads(f->a, 7501, t0, "rt");
	write_proc_file(7501, "maps", maps_2);
	assert_int_equal(send_sample(f->a, 7501, t0 + 100 * MS, "rt", NULL, 0, code, 2), 0);
	assert_int_equal(p->procs[0].nr_mappings, 4);
	assert_int_equal(p->procs[0].mappings[profile__find_mapping(p, 0, code[0])].perms[2], 'x');
}

static void test_exec_renames_and_rereads(void **state)
{
	/*
	 * A shell's child sampled between fork and exec: named and mapped as
	 * the shell. Its leader's next sample carries the new program's name:
	 * a new image of the process starts (issue 24, fault 1), an entry of
	 * its own with that name and the maps read at once; the samples before
	 * keep the shell's name and mappings.
	 */
	struct fixture *f = *state;
	struct profile *p = f->p;
	static const char maps_sh[] = "00400000-00500000 r-xp 00000000 08:01 11    /usr/bin/bash\n";
	static const char maps_app[] =
		"00400000-00500000 r-xp 00000000 08:01 12    /usr/bin/app\n"
		"55d000000000-55d000100000 r-xp 00000000 08:01 13    /usr/lib/libapp.so\n";
	const uint64_t in_sh[] = { 0x401000 }, in_app[] = { 0x401000 };
	const uint64_t in_app_lib[] = { 0x55d000000100ULL };
	uint64_t t0 = 8000 * MS;

	write_proc_file(7101, "maps", maps_sh);
	write_proc_file(7101, "comm", "spawn.sh\n");
	assert_int_equal(send_leader_sample(f->a, 7101, t0, "spawn.sh", in_sh, 1), 0);
	assert_string_equal(p->procs[0].comm, "spawn.sh");
	assert_int_equal(p->procs[0].nr_mappings, 1);
	/* only the exec may read the maps now */
	use_up_quick_rereads(f->a, 7101, t0, "spawn.sh");
	write_proc_file(7101, "maps", maps_app);
	/* an address the shell's image knows, under the new name: a new image, its maps read */
	assert_int_equal(send_leader_sample(f->a, 7101, t0 + MS, "app", in_app, 1), 0);
	assert_int_equal(p->nr_procs, 2);
	assert_int_equal(p->procs[1].pid, 7101);
	assert_string_equal(p->procs[1].comm, "app");
	assert_int_equal(p->procs[1].nr_mappings, 2);
	assert_string_equal(p->procs[1].mappings[0].path, "/usr/bin/app");
	assert_int_equal(p->procs[1].nr_samples, 1);
	/* the old image keeps its name, mapping and samples */
	assert_string_equal(p->procs[0].comm, "spawn.sh");
	assert_int_equal(p->procs[0].nr_mappings, 1);
	assert_string_equal(p->procs[0].mappings[0].path, "/usr/bin/bash");
	assert_int_equal(p->procs[0].nr_samples, 3);
	/* another thread's name never starts an image (send_sample: tid != tgid) */
	assert_int_equal(send_sample(f->a, 7101, t0 + 2 * MS, "worker", NULL, 0, in_app_lib, 1),
			 0);
	assert_int_equal(p->procs[1].nr_samples, 2);
	/* the same name again changes nothing */
	assert_int_equal(send_leader_sample(f->a, 7101, t0 + 3 * MS, "app", in_app_lib, 1), 0);
	assert_int_equal(p->nr_procs, 2);
	assert_int_equal(p->procs[1].nr_samples, 3);
	assert_int_equal(profile__find_process(p, 7101), 1);
}

static void test_maps_reread_after_missing(void **state)
{
	/* maps unreadable at the first sample, readable later */
	struct fixture *f = *state;
	struct profile *p = f->p;
	const uint64_t u1[] = { 0x401000 }, u2[] = { 0x401004 };

	assert_int_equal(send_sample(f->a, 6001, 1000 * MS, "late", NULL, 0, u1, 1), 0);
	assert_true(p->procs[0].maps_missing);
	write_proc_file(6001, "maps", maps_a);
	assert_int_equal(send_sample(f->a, 6001, 1100 * MS, "late", NULL, 0, u2, 1), 0);
	assert_false(p->procs[0].maps_missing);
	assert_int_equal(p->procs[0].nr_mappings, 2);
}

static void test_malformed(void **state)
{
	struct fixture *f = *state;
	struct profile *p = f->p;
	struct bpfprof_sample s;
	size_t size, bad = 0;
	uint8_t *buf;

	memset(&s, 0, sizeof(s));
	s.type = BPFPROF_REC_SAMPLE;
	s.tgid = 7001;
	s.nr_user = 0;

	/* every size below the header, from exact-size copies */
	for (size = 0; size < BPFPROF_SAMPLE_HDR_SIZE; size++) {
		buf = malloc(size ? size : 1);
		assert_non_null(buf);
		memcpy(buf, &s, size);
		assert_int_equal(agg__record(f->a, buf, size), -EINVAL);
		free(buf);
		bad++;
	}

	/* wrong type */
	s.type = 2;
	assert_int_equal(agg__record(f->a, &s, BPFPROF_SAMPLE_HDR_SIZE), -EINVAL);
	s.type = 0;
	assert_int_equal(agg__record(f->a, &s, sizeof(s)), -EINVAL);
	s.type = BPFPROF_REC_SAMPLE;
	bad += 2;

	/* more frames than the ABI allows, even with the bytes present */
	s.nr_user = BPFPROF_MAX_USER_STACK + 1;
	assert_int_equal(agg__record(f->a, &s, sizeof(s)), -EINVAL);
	s.nr_user = 0;
	s.nr_kernel = BPFPROF_MAX_STACK + 1;
	assert_int_equal(agg__record(f->a, &s, sizeof(s)), -EINVAL);
	s.nr_kernel = UINT16_MAX;
	s.nr_user = UINT16_MAX;
	assert_int_equal(agg__record(f->a, &s, sizeof(s)), -EINVAL);
	bad += 3;

	/* declared frames larger than the record */
	s.nr_kernel = 1;
	s.nr_user = 3;
	s.ips[0] = 0xffffffff81000000ULL;
	s.ips[1] = 0x401000;
	assert_int_equal(agg__record(f->a, &s, BPFPROF_SAMPLE_HDR_SIZE + 3 * 8), -EINVAL);
	assert_int_equal(agg__record(f->a, &s, BPFPROF_SAMPLE_HDR_SIZE), -EINVAL);
	bad += 2;

	assert_int_equal(agg__nr_bad(f->a), bad);
	assert_int_equal(p->nr_procs, 0);
	assert_int_equal(p->nr_stacks, 0);
	assert_int_equal(p->nr_samples, 0);

	/* the limits themselves are fine, as is a record longer than its frames */
	s.nr_kernel = BPFPROF_MAX_STACK;
	s.nr_user = BPFPROF_MAX_USER_STACK;
	assert_int_equal(agg__record(f->a, &s, sizeof(s)), 0);
	s.nr_kernel = 0;
	s.nr_user = 2;
	assert_int_equal(agg__record(f->a, &s, BPFPROF_SAMPLE_HDR_SIZE + 2 * 8 + 8), 0);
	/* and an empty callchain is a record, not an error */
	s.nr_user = 0;
	assert_int_equal(agg__record(f->a, &s, BPFPROF_SAMPLE_HDR_SIZE), 0);
	assert_int_equal(agg__nr_bad(f->a), bad);
	assert_int_equal(p->nr_procs, 1);
	assert_int_equal(p->nr_stacks, 3);
	assert_int_equal(p->nr_samples, 3);
	assert_int_equal(p->stacks[0].nr_kernel, BPFPROF_MAX_STACK);
	assert_int_equal(p->stacks[0].nr_user, BPFPROF_MAX_USER_STACK);
}

/* ---- profile__resolve_locs ---- */

#define K1 0xffffffff81000100ULL
#define K2 0xffffffff81000200ULL
#define K3 0xffffffff81000300ULL
#define U1 0x401000ULL
#define U2 0x500000ULL /* the end of mapping 0: inside it only as a return address */
#define U3 0x600010ULL
#define U4 0x700000ULL /* unmapped */

static void add_stack(struct profile *p, uint32_t proc, const uint64_t *ips, uint16_t nk,
		      uint16_t nu)
{
	bool created;

	assert_true(profile__add_stack(p, proc, ips, nk, nu, 1, PERIOD_NS, &created) >= 0);
	assert_true(created);
}

static const struct profile_location *loc(const struct profile *p, size_t stack, size_t frame)
{
	const struct profile_stack *s = &p->stacks[stack];

	assert_non_null(s->locs);
	assert_true(s->locs[frame] < p->nr_locs);
	return &p->locs[s->locs[frame]];
}

static void check_loc(const struct profile_location *l, uint64_t addr, uint32_t proc,
		      bool is_return, int mapping)
{
	assert_int_equal(l->addr, addr);
	assert_int_equal(l->proc, proc);
	assert_int_equal(l->is_return, is_return);
	assert_int_equal(l->mapping, mapping);
}

static void test_resolve_locs(void **state)
{
	struct profile *p = profile__new();
	struct profile_mapping m = { .perms = "r-xp" };
	const uint64_t s0[] = { K1, K2, U1, U2, U3 };
	const uint64_t s1[] = { U1, U2, U4 };
	const uint64_t s2[] = { K1, U1 };
	const uint64_t s3[] = { K1 };
	const uint64_t s4[] = { K3, K1, U2 };
	const uint64_t s5[] = { U3, U1 };
	uint32_t a, b, kp = PROFILE_KERNEL_PROC;
	bool created;
	size_t nr_locs;

	assert_non_null(p);
	a = (uint32_t)profile__process(p, 100, &created);
	b = (uint32_t)profile__process(p, 200, &created);
	m.path = profile__intern(p, "/usr/bin/app");
	m.start = 0x400000;
	m.end = 0x500000;
	assert_int_equal(profile__add_mapping(p, a, &m), 1);
	m.start = 0x600000;
	m.end = 0x601000;
	assert_int_equal(profile__add_mapping(p, a, &m), 1);
	/* pid 200 maps the same address range elsewhere in its list */
	m.start = 0x300000;
	m.end = 0x500000;
	assert_int_equal(profile__add_mapping(p, b, &m), 1);

	add_stack(p, a, s0, 2, 3);
	add_stack(p, a, s1, 0, 3);
	add_stack(p, b, s2, 1, 1);
	add_stack(p, a, s3, 1, 0);
	add_stack(p, a, s4, 2, 1);

	assert_int_equal(profile__resolve_locs(p), 0);

	/* s0: kernel leaf, kernel return, user leaf, user returns */
	check_loc(loc(p, 0, 0), K1, kp, false, -1);
	check_loc(loc(p, 0, 1), K2, kp, true, -1);
	check_loc(loc(p, 0, 2), U1, a, false, 0);
	check_loc(loc(p, 0, 3), U2, a, true, 0); /* found with U2 - 1 */
	check_loc(loc(p, 0, 4), U3, a, true, 1);
	/* s1: user only, leaf first; shares U1 (leaf) and U2 (return) with s0 */
	assert_int_equal(p->stacks[1].locs[0], p->stacks[0].locs[2]);
	assert_int_equal(p->stacks[1].locs[1], p->stacks[0].locs[3]);
	check_loc(loc(p, 1, 2), U4, a, true, -1);
	/* s2 of another process: the kernel leaf is shared, the user address is not */
	assert_int_equal(p->stacks[2].locs[0], p->stacks[0].locs[0]);
	assert_int_not_equal(p->stacks[2].locs[1], p->stacks[0].locs[2]);
	check_loc(loc(p, 2, 1), U1, b, false, 0);
	/* s3: kernel only */
	assert_int_equal(p->stacks[3].locs[0], p->stacks[0].locs[0]);
	/* s4: K1 as a return address and U2 as a leaf are other locations */
	check_loc(loc(p, 4, 0), K3, kp, false, -1);
	check_loc(loc(p, 4, 1), K1, kp, true, -1);
	assert_int_not_equal(p->stacks[4].locs[1], p->stacks[0].locs[0]);
	check_loc(loc(p, 4, 2), U2, a, false, -1); /* U2 itself is past the mapping */
	assert_int_not_equal(p->stacks[4].locs[2], p->stacks[0].locs[3]);

	/* K1 leaf, K2 ret, U1@a leaf, U2@a ret, U3@a ret, U4@a ret, U1@b leaf, K3 leaf, K1 ret, U2@a leaf */
	assert_int_equal(p->nr_locs, 10);

	/* idempotent */
	assert_int_equal(profile__resolve_locs(p), 0);
	assert_int_equal(p->nr_locs, 10);
	check_loc(loc(p, 0, 3), U2, a, true, 0);

	/* a stack added later is resolved against the existing locations */
	nr_locs = p->nr_locs;
	add_stack(p, a, s5, 0, 2);
	assert_int_equal(profile__resolve_locs(p), 0);
	check_loc(loc(p, 5, 0), U3, a, false, 1); /* U3 as a leaf: new */
	assert_int_not_equal(p->stacks[5].locs[1], p->stacks[0].locs[2]); /* U1 leaf */
	assert_int_equal(p->nr_locs, nr_locs + 2); /* U3 leaf and U1 return */
	check_loc(loc(p, 5, 1), U1, a, true, 0);
	profile__free(p);
}

/*
 * Stacks after one another share their root side: those locations are taken
 * from the stack before (same process, return addresses on both sides),
 * and are the ones a look-up frame by frame gives.
 */
static void test_resolve_locs_shared_root(void **state)
{
	struct profile *p = profile__new();
	struct profile_mapping m = { .perms = "r-xp", .start = 0x400000, .end = 0x500000 };
	const uint64_t L1 = 0x401000, L2 = 0x402000, R1 = 0x410000, R2 = 0x420000, R3 = 0x430000;
	const uint64_t t0[] = { L1, R1, R2, R3 }, t1[] = { L2, R1, R2, R3 }, t2[] = { R1, R2, R3 },
		       t3[] = { K1, R2, R3 }, t4[] = { L1, R1, R2, R3 };
	uint32_t a, b, kp = PROFILE_KERNEL_PROC;
	bool created;

	assert_non_null(p);
	a = (uint32_t)profile__process(p, 100, &created);
	b = (uint32_t)profile__process(p, 200, &created);
	m.path = profile__intern(p, "/usr/bin/app");
	assert_int_equal(profile__add_mapping(p, a, &m), 1);
	assert_int_equal(profile__add_mapping(p, b, &m), 1);
	add_stack(p, a, t0, 0, 4);
	add_stack(p, a, t1, 0, 4);
	add_stack(p, a, t2, 0, 3);
	add_stack(p, a, t3, 1, 2);
	add_stack(p, b, t4, 0, 4);
	assert_int_equal(profile__resolve_locs(p), 0);

	check_loc(loc(p, 0, 0), L1, a, false, 0);
	check_loc(loc(p, 0, 1), R1, a, true, 0);
	check_loc(loc(p, 0, 3), R3, a, true, 0);
	/* t1: a leaf of its own, the three returns t0's */
	check_loc(loc(p, 1, 0), L2, a, false, 0);
	for (size_t i = 1; i < 4; i++)
		assert_int_equal(p->stacks[1].locs[i], p->stacks[0].locs[i]);
	/* t2: R1 is its leaf, another location than t0's return R1; R2, R3 shared */
	check_loc(loc(p, 2, 0), R1, a, false, 0);
	assert_int_not_equal(p->stacks[2].locs[0], p->stacks[0].locs[1]);
	assert_int_equal(p->stacks[2].locs[1], p->stacks[0].locs[2]);
	assert_int_equal(p->stacks[2].locs[2], p->stacks[0].locs[3]);
	/* t3: a kernel leaf, then R2 as the user leaf (new), R3 shared */
	check_loc(loc(p, 3, 0), K1, kp, false, -1);
	check_loc(loc(p, 3, 1), R2, a, false, 0);
	assert_int_not_equal(p->stacks[3].locs[1], p->stacks[0].locs[2]);
	assert_int_equal(p->stacks[3].locs[2], p->stacks[0].locs[3]);
	/* t4: the same addresses in another process are other locations */
	for (size_t i = 0; i < 4; i++) {
		check_loc(loc(p, 4, i), t4[i], b, i > 0, 0);
		assert_int_not_equal(p->stacks[4].locs[i], p->stacks[0].locs[i]);
	}
	/* L1 R1 R2 R3 L2 R1-leaf R2-leaf K1 (a); L1 R1 R2 R3 (b) */
	assert_int_equal(p->nr_locs, 12);
	/* the frames' mappings, from their locations */
	assert_int_equal(profile__user_frame_mapping(p, &p->stacks[3], 1), 0);
	profile__free(p);
}

static void test_resolve_locs_from_records(void **state)
{
	struct fixture *f = *state;
	struct profile *p = f->p;
	const uint64_t k[] = { K1, K2 };
	const uint64_t u[] = { 0x401000, 0x7f0000010000ULL }; /* return at libc's end */
	uint32_t i;

	write_proc_file(8001, "maps", maps_a);
	assert_int_equal(send_sample(f->a, 8001, 1, "app", k, 2, u, 2), 0);
	assert_int_equal(send_sample(f->a, 8001, 2, "app", k, 2, u, 2), 0);
	assert_int_equal(profile__resolve_locs(p), 0);
	assert_int_equal(p->nr_stacks, 1);
	assert_int_equal(p->nr_locs, 4);
	for (i = 0; i < 4; i++)
		assert_int_equal(p->stacks[0].locs[i], i);
	check_loc(&p->locs[0], K1, PROFILE_KERNEL_PROC, false, -1);
	check_loc(&p->locs[1], K2, PROFILE_KERNEL_PROC, true, -1);
	check_loc(&p->locs[2], 0x401000, 0, false, 0);
	check_loc(&p->locs[3], 0x7f0000010000ULL, 0, true, 1);
}

/* ---- observer ---- */

struct event {
	char kind; /* 'm': maps_changed, 's': sample */
	uint32_t proc;
	uint64_t time_ns;
	size_t nr_mappings; /* what the observer saw at the time */
};

struct obs_log {
	struct event ev[32];
	size_t n;
	int fail_sample; /* returned by the sample callback */
};

static int on_maps(void *ctx, const struct profile *p, uint32_t proc, uint64_t time_ns)
{
	struct obs_log *l = ctx;

	assert_true(l->n < 32);
	l->ev[l->n++] = (struct event){ 'm', proc, time_ns, p->procs[proc].nr_mappings };
	return 0;
}

static int on_sample(void *ctx, const struct profile *p, uint32_t proc,
		     const struct profile_sample *s)
{
	struct obs_log *l = ctx;

	assert_true(l->n < 32);
	l->ev[l->n++] = (struct event){ 's', proc, s->time_ns, p->procs[proc].nr_mappings };
	return l->fail_sample;
}

static void check_event(const struct obs_log *l, size_t i, char kind, uint32_t proc,
			uint64_t time_ns, size_t nr_mappings)
{
	assert_true(i < l->n);
	assert_int_equal(l->ev[i].kind, kind);
	assert_int_equal(l->ev[i].proc, proc);
	assert_int_equal(l->ev[i].time_ns, time_ns);
	assert_int_equal(l->ev[i].nr_mappings, nr_mappings);
}

static void test_observer(void **state)
{
	struct fixture *f = *state;
	struct obs_log log = { .n = 0 };
	struct agg_observer obs = { .maps_changed = on_maps, .sample = on_sample, .ctx = &log };
	const uint64_t u1[] = { 0x401000 }, u2[] = { 0x7f0000000100ULL },
		       u3[] = { 0x7f0000000200ULL };
	const uint64_t u4[] = { 0x7f0000000300ULL }, u5[] = { 0x7f3000000000ULL };
	static const char maps_1[] =
		"00400000-00500000 r-xp 00000000 08:01 131090    /usr/bin/app\n";

	agg__set_observer(f->a, &obs);
	write_proc_file(9001, "maps", maps_1);

	/* first sample: the mappings first, then the sample */
	assert_int_equal(send_sample(f->a, 9001, 1000 * MS, "app", NULL, 0, u1, 1), 0);
	assert_int_equal(log.n, 2);
	check_event(&log, 0, 'm', 0, 1000 * MS, 1);
	check_event(&log, 1, 's', 0, 1000 * MS, 1);

	/* a re-read that adds a mapping is reported before its sample */
	write_proc_file(9001, "maps", maps_a);
	assert_int_equal(send_sample(f->a, 9001, 1200 * MS, "app", NULL, 0, u2, 1), 0);
	assert_int_equal(log.n, 4);
	check_event(&log, 2, 'm', 0, 1200 * MS, 2);
	check_event(&log, 3, 's', 0, 1200 * MS, 2);

	/* a re-read that adds nothing is not reported */
	assert_int_equal(send_sample(f->a, 9001, 1400 * MS, "app", NULL, 0, u5, 1), 0);
	assert_int_equal(log.n, 5);
	check_event(&log, 4, 's', 0, 1400 * MS, 2);

	/* a process whose maps cannot be read still gets its first report */
	assert_int_equal(send_sample(f->a, 9002, 1500 * MS, "gone", NULL, 0, u1, 1), 0);
	assert_int_equal(log.n, 7);
	check_event(&log, 5, 'm', 1, 1500 * MS, 0);
	check_event(&log, 6, 's', 1, 1500 * MS, 0);

	/* malformed records are not reported */
	assert_int_equal(agg__record(f->a, "x", 1), -EINVAL);
	assert_int_equal(log.n, 7);

	/* a callback's error is agg__record's, after the sample was counted */
	log.fail_sample = -EIO;
	assert_int_equal(send_sample(f->a, 9001, 1600 * MS, "app", NULL, 0, u3, 1), -EIO);
	assert_int_equal(log.n, 8);
	assert_int_equal(f->p->nr_samples, 5);

	/* NULL removes the observer */
	agg__set_observer(f->a, NULL);
	assert_int_equal(send_sample(f->a, 9001, 1700 * MS, "app", NULL, 0, u4, 1), 0);
	assert_int_equal(log.n, 8);
	assert_int_equal(f->p->nr_samples, 6);
	assert_int_equal(agg__nr_bad(f->a), 1);
}

/* The observer's calls in full, for two aggregators to be compared call for call */
struct call_log {
	struct call {
		char kind; /* 'm' maps, 's' sample, 'o' off-CPU block */
		uint32_t proc, pid, tid, nr_kernel, nr_user;
		uint64_t time_ns, off_ns, first_ip;
		size_t nr_mappings;
	} c[256];
	size_t n;
};

static int log_maps(void *ctx, const struct profile *p, uint32_t proc, uint64_t time_ns)
{
	struct call_log *l = ctx;

	assert_true(l->n < 256);
	l->c[l->n++] = (struct call){ .kind = 'm',
				      .proc = proc,
				      .time_ns = time_ns,
				      .nr_mappings = p->procs[proc].nr_mappings };
	return 0;
}

static void log_event(struct call_log *l, char kind, const struct profile *p, uint32_t proc,
		      const struct profile_sample *s)
{
	assert_true(l->n < 256);
	l->c[l->n++] = (struct call){ .kind = kind,
				      .proc = proc,
				      .pid = s->pid,
				      .tid = s->tid,
				      .nr_kernel = s->nr_kernel,
				      .nr_user = s->nr_user,
				      .time_ns = s->time_ns,
				      .off_ns = s->off_ns,
				      .first_ip = s->nr_kernel + s->nr_user ? s->ips[0] : 0,
				      .nr_mappings = p->procs[proc].nr_mappings };
}

static int log_sample(void *ctx, const struct profile *p, uint32_t proc,
		      const struct profile_sample *s)
{
	log_event(ctx, 's', p, proc, s);
	return 0;
}

static int log_offcpu(void *ctx, const struct profile *p, uint32_t proc,
		      const struct profile_sample *s)
{
	log_event(ctx, 'o', p, proc, s);
	return 0;
}

/* A frames hook standing for an interpreter's: its frames (their first words) after the user ones */
static int merge_py(void *ctx, struct profile *p, uint32_t proc, const struct bpfprof_sample *s,
		    uint64_t *ips, uint16_t *nr_user)
{
	const uint64_t *py = (const uint64_t *)s->ips + s->nr_kernel + s->nr_user;

	if (!s->nr_py)
		return 0;
	memcpy(ips, s->ips + s->nr_kernel, s->nr_user * sizeof(*ips));
	for (uint16_t i = 0; i < s->nr_py; i++)
		ips[s->nr_user + i] = py[2 * i];
	*nr_user = s->nr_user + s->nr_py;
	return 1;
}

/* One record of the mixed sequence below, in a buffer of exactly its size (the sanitizers' overreads) */
static void *mixed_record(unsigned i, size_t *size)
{
	static const char *const comms[] = { "app", "app", "sh", "app" };
	struct bpfprof_offcpu r;
	struct bpfprof_sample *s = &r.s;
	uint32_t tgid = 3001 + i % 4;
	uint16_t nk = i % 3, nu = 1 + i % 5, npy = i % 13 == 3 ? 2 : 0, j;
	bool off = i % 11 == 5;
	size_t hdr = off ? BPFPROF_OFFCPU_HDR_SIZE : 0;
	void *buf;

	memset(&r, 0, sizeof(r));
	r.type = BPFPROF_REC_OFFCPU;
	r.off_ns = 1000 + i;
	s->type = BPFPROF_REC_SAMPLE;
	s->tgid = tgid;
	s->tid = (i / 4) % 2 ? tgid + 1 : tgid; /* leaders' samples: the exec check */
	s->time_ns = 1000 * MS + i * MS;
	/* process 3003 execs at record 40: its leader's name changes */
	strcpy(s->comm, tgid == 3003 && i >= 40 ? "app" : comms[tgid - 3001]);
	s->nr_kernel = nk;
	s->nr_user = nu;
	for (j = 0; j < nk; j++)
		s->ips[j] = 0xffffffff81000000ULL + 0x100 * ((i / 7 + j) % 3);
	/* repeats (i / 7) and new stacks; one address of 3004's outside its maps (a re-read) */
	for (j = 0; j < nu; j++)
		s->ips[nk + j] = (j % 2 ? 0x7f0000000000ULL : 0x400000) + 0x40 * ((i / 7 + j) % 4);
	if (tgid == 3004 && i == 27)
		s->ips[nk] = 0x7f3000000000ULL;
	/* an interpreter's frames, two words each, after the user addresses */
	s->nr_py = npy;
	for (j = 0; j < 2 * npy; j++)
		s->ips[nk + nu + j] = 0x7f0000000800ULL + 0x40 * (j / 2) + (j % 2) * (i + 1);
	*size = hdr + BPFPROF_SAMPLE_HDR_SIZE + ((size_t)nk + nu + 2 * npy) * 8;
	buf = malloc(*size);
	assert_non_null(buf);
	memcpy(buf, off ? (void *)&r : (void *)s, *size);
	return buf;
}

/*
 * agg__queue then agg__flush makes what agg__record makes record by record:
 * the same processes (an exec's new image among them), stacks in the same
 * order with the same counts, maps re-read alike, the observer called with
 * the same events in the same order, an interpreter's frames as its hook
 * merges them; a malformed record is refused at once. Queued records come before one given to agg__record after them,
 * and are not in the profile before the flush.
 */
static void test_queue_same_as_record(void **state)
{
	struct fixture *f = *state, g = { 0 };
	struct call_log *want = calloc(1, sizeof(*want)), *got = calloc(1, sizeof(*got));
	struct agg_observer ow = { log_maps, log_sample, log_offcpu, want },
			    og = { log_maps, log_sample, log_offcpu, got };
	const unsigned n = 60;
	size_t i, j, size;
	void *buf;

	assert_non_null(want);
	assert_non_null(got);
	for (i = 0; i < 4; i++) {
		write_proc_file(3001 + i, "maps", maps_a);
		write_proc_file(3001 + i, "comm", i == 2 ? "sh\n" : "app\n");
	}
	g.p = profile__new();
	assert_non_null(g.p);
	g.a = agg__new(g.p, f->t, PERIOD_NS);
	assert_non_null(g.a);
	agg__queue_from(g.a, 0); /* queued from the first record */
	agg__set_frames(f->a, &(struct agg_frames){ .merge = merge_py });
	agg__set_frames(g.a, &(struct agg_frames){ .merge = merge_py });
	agg__set_observer(f->a, &ow);
	agg__set_observer(g.a, &og);
	for (i = 0; i < n; i++) {
		buf = mixed_record(i, &size);
		assert_int_equal(agg__record(f->a, buf, size), 0);
		/* the second half queued, but for one given to agg__record: the queued first */
		if (i == 45)
			assert_int_equal(agg__record(g.a, buf, size), 0);
		else
			assert_int_equal(agg__queue(g.a, buf, size), 0);
		free(buf);
		if (i == 20) {
			assert_true(g.p->nr_samples + g.p->nr_offcpu_blocks < i + 1);
			assert_int_equal(agg__flush(g.a), 0);
			assert_int_equal(g.p->nr_samples, f->p->nr_samples);
		}
		if (i == 30) { /* malformed: refused at once, nothing queued */
			assert_int_equal(agg__queue(g.a, "x", 1), -EINVAL);
			assert_int_equal(agg__nr_bad(g.a), 1);
		}
	}
	assert_int_equal(agg__flush(g.a), 0);
	assert_int_equal(agg__flush(g.a), 0); /* nothing left: nothing done */

	assert_int_equal(got->n, want->n);
	assert_true(want->n > n); /* maps calls beside every record's */
	for (i = 0; i < want->n; i++)
		assert_memory_equal(&got->c[i], &want->c[i], sizeof(want->c[i]));
	assert_int_equal(g.p->nr_procs, f->p->nr_procs);
	assert_int_equal(f->p->nr_procs, 5); /* 3003's exec: an image of its own */
	for (i = 0; i < f->p->nr_procs; i++) {
		assert_int_equal(g.p->procs[i].pid, f->p->procs[i].pid);
		assert_string_equal(g.p->procs[i].comm, f->p->procs[i].comm);
		assert_int_equal(g.p->procs[i].nr_samples, f->p->procs[i].nr_samples);
		assert_int_equal(g.p->procs[i].nr_mappings, f->p->procs[i].nr_mappings);
	}
	assert_int_equal(g.p->nr_samples, f->p->nr_samples);
	assert_int_equal(g.p->nr_offcpu_blocks, f->p->nr_offcpu_blocks);
	assert_true(f->p->nr_offcpu_blocks > 0);
	for (i = 0; i < f->p->nr_stacks && f->p->stacks[i].nr_user < 7; i++)
		;
	assert_true(i < f->p->nr_stacks); /* an interpreter's frames merged in */
	assert_int_equal(g.p->nr_stacks, f->p->nr_stacks);
	for (i = 0; i < f->p->nr_stacks; i++) {
		const struct profile_stack *a = &f->p->stacks[i], *b = &g.p->stacks[i];

		assert_int_equal(b->proc, a->proc);
		assert_int_equal(b->nr_kernel, a->nr_kernel);
		assert_int_equal(b->nr_user, a->nr_user);
		assert_int_equal(b->count, a->count);
		assert_int_equal(b->value, a->value);
		assert_int_equal(b->off_count, a->off_count);
		assert_int_equal(b->off_ns, a->off_ns);
		for (j = 0; j < (size_t)a->nr_kernel + a->nr_user; j++)
			assert_int_equal(b->ips[j], a->ips[j]);
	}
	agg__free(g.a);
	profile__free(g.p);
	free(want);
	free(got);
}

/* Records left queued are dropped with the aggregator (the sanitizers: nothing leaks) */
static void test_queue_free_pending(void **state)
{
	struct fixture *f = *state;
	size_t size;
	void *buf;

	write_proc_file(3001, "maps", maps_a);
	agg__queue_from(f->a, 0);
	buf = mixed_record(0, &size);
	assert_int_equal(agg__queue(f->a, buf, size), 0);
	assert_int_equal(agg__queue(f->a, buf, size), 0);
	free(buf);
	assert_int_equal(f->p->nr_samples, 0);
}

static int offcpu_seen;

static int on_offcpu(void *ctx, const struct profile *p, uint32_t proc,
		     const struct profile_sample *s)
{
	/* the model's event: the block's length, its process, its stacks */
	assert_int_equal(s->off_ns, 3000000);
	assert_int_equal(p->procs[proc].pid, s->pid);
	assert_true(s->nr_kernel + s->nr_user > 0);
	assert_string_equal(s->comm, "app");
	offcpu_seen++;
	return 0;
}

/*
 * Off-CPU blocks (BPFPROF_REC_OFFCPU): the sample layout after 16 bytes;
 * they add off_count and off_ns to the stack of their callchain, CPU counts
 * stay as they are, the observer's offcpu callback sees them, and a record
 * cut short is malformed.
 */
static void test_offcpu_records(void **state)
{
	struct fixture *f = *state;
	struct profile *p = f->p;
	struct agg_observer obs = { .offcpu = on_offcpu };
	const uint64_t k[] = { 0xffffffff81000100ULL };
	const uint64_t u[] = { 0x401000, 0x402000 };
	struct bpfprof_offcpu *r = calloc(1, sizeof(*r));
	size_t size = BPFPROF_OFFCPU_HDR_SIZE + BPFPROF_SAMPLE_HDR_SIZE + 3 * 8;
	void *buf;
	int i;

	assert_non_null(r);
	write_proc_file(1000, "maps", maps_a);
	write_proc_file(1000, "comm", "app\n");
	agg__set_observer(f->a, &obs);
	offcpu_seen = 0;
	assert_int_equal(send_sample(f->a, 1000, 1000, "app", k, 1, u, 2), 0);
	r->type = BPFPROF_REC_OFFCPU;
	r->off_ns = 3000000;
	r->s.type = BPFPROF_REC_SAMPLE;
	r->s.tgid = 1000;
	r->s.tid = 1001;
	r->s.time_ns = 2000;
	memcpy(r->s.comm, "app", 3);
	r->s.nr_kernel = 1;
	r->s.nr_user = 2;
	r->s.ips[0] = k[0];
	r->s.ips[1] = u[0];
	r->s.ips[2] = u[1];
	buf = malloc(size); /* exactly the bytes the BPF side sends */
	assert_non_null(buf);
	memcpy(buf, r, size);
	for (i = 0; i < 2; i++)
		assert_int_equal(agg__record(f->a, buf, size), 0);
	assert_int_equal(p->nr_stacks, 1);
	assert_int_equal(p->stacks[0].count, 1);
	assert_int_equal(p->stacks[0].value, PERIOD_NS);
	assert_int_equal(p->stacks[0].off_count, 2);
	assert_int_equal(p->stacks[0].off_ns, 6000000);
	assert_int_equal(p->nr_samples, 1);
	assert_int_equal(p->nr_offcpu_blocks, 2);
	assert_int_equal(p->offcpu_ns, 6000000);
	assert_int_equal(offcpu_seen, 2);
	/* one frame short, or only the 16-byte header: malformed, nothing counted */
	assert_int_equal(agg__record(f->a, buf, size - 8), -EINVAL);
	assert_int_equal(agg__record(f->a, buf, BPFPROF_OFFCPU_HDR_SIZE), -EINVAL);
	assert_int_equal(agg__nr_bad(f->a), 2);
	assert_int_equal(p->nr_offcpu_blocks, 2);
	free(buf);
	free(r);
}

/*
 * The cgroup comes from the record's cgroup id where a cache is set: a
 * process gone before its first record is read (no /proc entry) keeps its
 * cgroup and container id, also once the cgroup is removed; one still there
 * is not asked /proc, whose answer may be another cgroup by now.
 */
static void test_cgroup_from_record(void **state)
{
	static const char cid[] =
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	struct fixture *f = *state;
	char root[128], dir[PATH_MAX];
	const uint64_t u[] = { 0x401000 };
	struct cgroup_cache *c;
	struct stat st;

	snprintf(root, sizeof(root), "%s/cgroot", tmpdir);
	snprintf(dir, sizeof(dir), "%s/docker-%s.scope", root, cid);
	assert_int_equal(mkdir(root, 0755), 0);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(stat(dir, &st), 0);
	c = cgroup_cache__new(root);
	assert_non_null(c);
	proc_table__set_cgroups(f->t, c);

	/* 2100 has exited: nothing in the fake /proc */
	sample_cgroup_id = st.st_ino;
	assert_int_equal(send_sample(f->a, 2100, 1000, "gone", NULL, 0, u, 1), 0);
	/* 2101 is alive, but /proc says another cgroup now: the record's is kept */
	write_proc_file(2101, "cgroup", "0::/elsewhere\n");
	assert_int_equal(send_sample(f->a, 2101, 1001, "moved", NULL, 0, u, 1), 0);
	/* 2102's cgroup is removed before its first record is read: its path was cached */
	assert_int_equal(rmdir(dir), 0);
	assert_int_equal(send_sample(f->a, 2102, 1002, "late", NULL, 0, u, 1), 0);
	/* an id never seen while its cgroup existed: no cgroup, as before */
	sample_cgroup_id = st.st_ino + 1000003;
	assert_int_equal(send_sample(f->a, 2103, 1003, "unknown", NULL, 0, u, 1), 0);
	sample_cgroup_id = 0xc0ffee;

	assert_int_equal(f->p->nr_procs, 4);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(f->p->procs[i].cgroup_id, st.st_ino);
		assert_non_null(f->p->procs[i].cgroup_path);
		assert_string_equal(f->p->procs[i].cgroup_path, strrchr(dir, '/'));
		assert_non_null(f->p->procs[i].container_id);
		assert_string_equal(f->p->procs[i].container_id, cid);
	}
	assert_null(f->p->procs[3].cgroup_path);
	assert_null(f->p->procs[3].container_id);
	proc_table__set_cgroups(f->t, NULL);
	cgroup_cache__free(c);
	rmdir(root);
}

/* The stamp by which a run or interval is cut: samples and off-CPU blocks have one, nothing else. */
static void test_record_time(void **state)
{
	struct bpfprof_offcpu off = { .type = BPFPROF_REC_OFFCPU };
	struct bpfprof_sample s = { .type = BPFPROF_REC_SAMPLE, .time_ns = 1234 };
	uint32_t copy = BPFPROF_REC_USTACK_COPY;
	uint64_t t = 0;

	assert_int_equal(agg__record_time(&s, BPFPROF_SAMPLE_HDR_SIZE, &t), 0);
	assert_int_equal(t, 1234);
	off.s = s;
	off.s.time_ns = 5678;
	assert_int_equal(
		agg__record_time(&off, BPFPROF_OFFCPU_HDR_SIZE + BPFPROF_SAMPLE_HDR_SIZE, &t), 0);
	assert_int_equal(t, 5678);
	assert_int_equal(agg__record_time(&s, BPFPROF_SAMPLE_HDR_SIZE - 1, &t), -EINVAL);
	assert_int_equal(agg__record_time(&off, BPFPROF_OFFCPU_HDR_SIZE + 8, &t), -EINVAL);
	assert_int_equal(agg__record_time(&copy, sizeof(copy), &t), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_aggregate_identical, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cgroup_from_record, setup, teardown),
		cmocka_unit_test(test_record_time),
		cmocka_unit_test_setup_teardown(test_processes_and_comm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_main_thread_comm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pid_reuse, setup, teardown),
		cmocka_unit_test_setup_teardown(test_process_lookup_sequence, setup, teardown),
		cmocka_unit_test_setup_teardown(test_comm_fallback_full_length, setup, teardown),
		cmocka_unit_test_setup_teardown(test_maps_snapshot_first_sample, setup, teardown),
		cmocka_unit_test_setup_teardown(test_maps_reread, setup, teardown),
		cmocka_unit_test_setup_teardown(test_maps_reread_after_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_maps_reread_burst, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_renames_and_rereads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_jit_code_rereads_until_jitdump, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_code_in_non_exec_mapping_rereads, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_malformed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_observer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_queue_same_as_record, setup, teardown),
		cmocka_unit_test_setup_teardown(test_queue_free_pending, setup, teardown),
		cmocka_unit_test_setup_teardown(test_offcpu_records, setup, teardown),
		cmocka_unit_test(test_resolve_locs),
		cmocka_unit_test(test_resolve_locs_shared_root),
		cmocka_unit_test_setup_teardown(test_resolve_locs_from_records, setup, teardown),
	};

	return cmocka_run_group_tests(tests, setup_tmpdir, teardown_tmpdir);
}

// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/capture/proc_table.c (include/proc_table.h) over a
 * fake /proc made with mkdtemp (stat lines in proc(5)'s shape, maps in
 * fs/proc/task_mmu.c's): a process's facts (comm, start time, exit, zombie
 * leaders, pid reuse), its maps read once and remembered, a late record of a
 * process gone (or whose pid another holds now) named from what was
 * remembered, fork (a child's own entry), exec (a new image's maps read
 * through the table by the aggregator), the cgroup from /proc; over the
 * real /proc: one maps read handed to the unwinder (now and queued), to the
 * symbolizer at a notice, and to the copies' walker.
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
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "agg.h"
#include "bpfprof_abi.h"
#include "cgroup.h"
#include "interp.h"
#include "log.h"
#include "proc_file.h"
#include "proc_table.h"
#include "profile.h"
#include "python_procs.h"
#include "sample_record.h"
#include "symbolize.h"
#include "unwind_copies.h"
#include "unwinder.h"

#define FAKE_PROC_TEMPLATE "/tmp/test_proc_table.XXXXXX"
#include "fake_proc.h"

static const char maps_a[] =
	"00400000-00452000 r-xp 00000000 08:01 131090                             /usr/bin/app\n"
	"00651000-00652000 rw-p 00051000 08:01 131090                             /usr/bin/app\n"
	"7f1234560000-7f1234570000 r-xp 00000000 fd:01 2621                       /lib/liba.so\n";
/* the image after an exec: another program at overlapping addresses */
static const char maps_b[] =
	"00400000-00480000 r-xp 00000000 08:01 131091                             /usr/bin/other\n";

static void remove_file(uint32_t pid, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%u/%s", tmpdir, pid, name);
	unlink(path);
}

static struct proc_table *fake_table(bool remember)
{
	struct proc_table *t = proc_table__new(tmpdir, remember);

	assert_non_null(t);
	assert_string_equal(proc_table__proc_dir(t), tmpdir);
	return t;
}

/* The maps file opened and read whole; a gone pid's -ENOENT; pid 0: our own */
static void test_read_maps(void **state)
{
	char *text;
	size_t len;
	int fd;

	make_process(100, 5000, "app", maps_a);
	assert_int_equal(proc_table__read_maps(tmpdir, 100, &text, &len), 0);
	assert_int_equal(len, strlen(maps_a));
	assert_string_equal(text, maps_a);
	free(text);
	assert_int_equal(proc_table__read_maps(tmpdir, 99999, &text, &len), -ENOENT);
	fd = proc_table__open_maps("/proc", 0);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(proc_table__read_maps("/proc", 0, &text, &len), 0);
	assert_non_null(strstr(text, "[stack]"));
	free(text);
}

/* stat: the fields after the last ')'; a zombie leader with threads lives on; pid reuse */
static void test_facts(void **state)
{
	struct proc_table *t = fake_table(false);
	struct proc_stat st;
	char comm[PROFILE_COMM_LEN];

	make_process(101, 7000, "worker", maps_a);
	assert_int_equal(proc_table__stat(t, 101, &st), 0);
	assert_int_equal(st.state, 'S');
	assert_int_equal(st.nr_threads, 1);
	assert_int_equal(st.start_time, 7000);
	assert_int_equal(proc_table__start_time(t, 101), 7000);
	assert_int_equal(proc_table__start_time(t, 99999), 0);
	assert_int_equal(proc_table__comm(t, 101, 7000, comm), 0);
	assert_string_equal(comm, "worker");
	assert_false(proc_table__gone(t, 101, 7000));
	assert_true(proc_table__same(t, 101, 7000));
	assert_true(proc_table__same(t, 101, 0)); /* start unknown: any */

	/* pid reuse: another start time behind the pid now */
	write_proc_stat(101, 'R', 1, 7100);
	assert_true(proc_table__gone(t, 101, 7000));
	assert_false(proc_table__same(t, 101, 7000));
	assert_int_equal(proc_table__comm(t, 101, 7000, comm), -ESRCH);
	assert_false(proc_table__gone(t, 101, 7100));

	/* a zombie leader whose threads run on is not gone; alone, it is */
	write_proc_stat(101, 'Z', 3, 7100);
	assert_false(proc_table__gone(t, 101, 7100));
	write_proc_stat(101, 'Z', 1, 7100);
	assert_true(proc_table__gone(t, 101, 7100));
	write_proc_stat(101, 'X', 0, 7100);
	assert_true(proc_table__gone(t, 101, 7100));

	/* reaped: gone, and the same (nobody can have its pid yet) */
	remove_file(101, "stat");
	assert_true(proc_table__gone(t, 101, 7100));
	assert_true(proc_table__same(t, 101, 7100));
	assert_int_equal(proc_table__stat(t, 101, &st), -ENOENT);

	/* a line that does not parse */
	write_proc_file(102, "stat", "102 (x\n");
	assert_int_equal(proc_table__stat(t, 102, &st), -EINVAL);
	proc_table__free(t);
}

/*
 * The maps read once and remembered; a record arriving after its process
 * is gone, or after another took its pid, is named from the maps remembered
 * for its own (pid, start); nothing remembered: -ESRCH.
 */
static void test_maps_remembered(void **state)
{
	struct proc_table *t = fake_table(true);
	struct proc_table *bare = fake_table(false);
	const char *kept;
	bool remembered;
	size_t len, nr, bytes;
	char *text;

	make_process(110, 9000, "app", maps_a);
	assert_int_equal(proc_table__maps(t, 110, 9000, &text, &len, &remembered), 0);
	assert_false(remembered);
	assert_string_equal(text, maps_a);
	free(text);
	proc_table__counts(t, &nr, &bytes);
	assert_int_equal(nr, 1);
	/* remembered: the executable lines only */
	kept = proc_table__remembered(t, 110, 9000, &len);
	assert_non_null(kept);
	assert_non_null(strstr(kept, "/usr/bin/app"));
	assert_null(strstr(kept, "rw-p"));

	/* pid reuse: another process at 110 now; the old one's late record */
	make_process(110, 9500, "intruder", maps_b);
	assert_int_equal(proc_table__maps(t, 110, 9000, &text, &len, &remembered), 0);
	assert_true(remembered);
	assert_non_null(strstr(text, "/usr/bin/app"));
	assert_null(strstr(text, "/usr/bin/other"));
	free(text);
	/* the new one's own record reads its own maps */
	assert_int_equal(proc_table__maps(t, 110, 9500, &text, &len, &remembered), 0);
	assert_false(remembered);
	assert_string_equal(text, maps_b);
	free(text);

	/* gone (reaped): named from the memory; a zombie's empty maps too */
	write_proc_file(110, "maps", "");
	write_proc_stat(110, 'Z', 1, 9500);
	assert_int_equal(proc_table__maps(t, 110, 9500, &text, &len, &remembered), 0);
	assert_true(remembered);
	assert_non_null(strstr(text, "/usr/bin/other"));
	free(text);

	/* without a memory: /proc alone */
	assert_int_equal(proc_table__maps(bare, 110, 9500, &text, &len, &remembered), -ESRCH);
	assert_null(proc_table__remembered(bare, 110, 9500, &len));
	assert_int_equal(proc_table__remember(bare, 110, 9500, maps_a, strlen(maps_a)), -EINVAL);
	/* never seen, gone */
	assert_int_equal(proc_table__maps(t, 111, 1, &text, &len, &remembered), -ENOENT);
	proc_table__free(bare);
	proc_table__free(t);
}

/*
 * A record's cgroup id of 0 (BPF sends a process's id only in the records
 * that open it on a CPU: bpf/record.bpf.h) takes the id an earlier record
 * of the same process (pid, start) carried, in a later --interval profile
 * too, once /proc has no cgroup file for it; another start at that pid
 * does not. Over a cgroup cache of a temporary hierarchy (ids learnt by
 * scanning it: the directories' inode numbers).
 */
static void test_cgroup_id_remembered(void **state)
{
	char root[] = "/tmp/bpfprof-cgseen.XXXXXX", dir[PATH_MAX];
	struct proc_table *t = fake_table(false);
	struct profile *p1 = profile__new(), *p2 = profile__new();
	struct cgroup_cache *c;
	struct stat st;
	bool created;
	int proc;

	assert_non_null(p1);
	assert_non_null(p2);
	assert_non_null(mkdtemp(root));
	snprintf(dir, sizeof(dir), "%s/ctr.scope", root);
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(stat(dir, &st), 0);
	c = cgroup_cache__new(root);
	assert_non_null(c);
	proc_table__set_cgroups(t, c);

	/* the first profile: the record carries the id */
	make_process(130, 5, "ctr", maps_a);
	proc = profile__process_start(p1, 130, 5, &created);
	assert_true(proc >= 0);
	p1->procs[proc].cgroup_id = st.st_ino;
	assert_int_equal(proc_table__cgroup(t, p1, (uint32_t)proc), 0);
	assert_non_null(p1->procs[proc].cgroup_path);
	assert_non_null(strstr(p1->procs[proc].cgroup_path, "ctr.scope"));

	/* a later profile: 0 in its records, no cgroup file in /proc */
	proc = profile__process_start(p2, 130, 5, &created);
	assert_true(proc >= 0);
	assert_int_equal(p2->procs[proc].cgroup_id, 0);
	assert_int_equal(proc_table__cgroup(t, p2, (uint32_t)proc), 0);
	assert_int_equal(p2->procs[proc].cgroup_id, st.st_ino);
	assert_non_null(p2->procs[proc].cgroup_path);
	assert_non_null(strstr(p2->procs[proc].cgroup_path, "ctr.scope"));

	/* another process at the pid (another start): not its id */
	proc = profile__process_start(p2, 130, 9, &created);
	assert_true(proc >= 0);
	assert_int_equal(proc_table__cgroup(t, p2, (uint32_t)proc), 0);
	assert_int_equal(p2->procs[proc].cgroup_id, 0);
	assert_null(p2->procs[proc].cgroup_path);

	proc_table__free(t);
	cgroup_cache__free(c);
	profile__free(p1);
	profile__free(p2);
	rmdir(dir);
	rmdir(root);
}

/* The cgroup from /proc: path and container id interned into the profile */
static void test_cgroup(void **state)
{
	static const char cid[] =
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	struct proc_table *t = fake_table(false);
	struct profile *p = profile__new();
	char line[256];
	bool created;
	int proc;

	assert_non_null(p);
	make_process(120, 1, "ctr", maps_a);
	snprintf(line, sizeof(line), "0::/system.slice/docker-%s.scope\n", cid);
	write_proc_file(120, "cgroup", line);
	proc = profile__process_start(p, 120, 1, &created);
	assert_true(proc >= 0);
	assert_int_equal(proc_table__cgroup(t, p, (uint32_t)proc), 0);
	assert_non_null(p->procs[proc].cgroup_path);
	assert_non_null(strstr(p->procs[proc].cgroup_path, "docker-"));
	assert_string_equal(p->procs[proc].container_id, cid);
	/* gone: none, not an error */
	proc = profile__process_start(p, 121, 1, &created);
	assert_int_equal(proc_table__cgroup(t, p, (uint32_t)proc), 0);
	assert_null(p->procs[proc].cgroup_path);
	profile__free(p);
	proc_table__free(t);
}

/* A sample record of tgid with one user address, through the aggregator */
static int send(struct agg *a, uint32_t tgid, uint32_t start, uint64_t time_ns, const char *comm,
		uint64_t ip)
{
	struct one_ip_sample rec;

	one_ip_sample(&rec, tgid, start, time_ns, comm, ip);
	return agg__record(a, &rec, ONE_IP_SAMPLE_SIZE);
}

/*
 * Through the aggregator, which opens no file: fork (the child's own entry,
 * its name and maps from the table), exec (the leader's new name: a new
 * image whose maps the table reads at once), a late record of the image
 * before (its entry, not the new one's), and a late record of a process
 * gone since (named from the maps remembered).
 */
static void test_lifecycle(void **state)
{
	struct proc_table *t = fake_table(true);
	struct profile *p = profile__new();
	struct agg *a = p ? agg__new(p, t, 1000) : NULL;
	struct agg_stats st;
	int old, img, child;

	assert_non_null(a);
	make_process(130, 100, "parent", maps_a);
	assert_int_equal(send(a, 130, 100, 1000, "parent", 0x400100), 0);
	/* fork: the child, a new process with its parent's mappings */
	make_process(131, 101, "parent", maps_a);
	assert_int_equal(send(a, 131, 101, 1100, "parent", 0x400200), 0);
	child = profile__find_process_start(p, 131, 101);
	assert_true(child >= 0);
	assert_string_equal(p->procs[child].comm, "parent");
	assert_int_equal(p->procs[child].nr_mappings, 3);

	/* exec in the child: a new name and new maps */
	make_process(131, 101, "other", maps_b);
	assert_int_equal(send(a, 131, 101, 1200, "other", 0x400300), 0);
	assert_int_equal(p->nr_procs, 3);
	img = 2;
	assert_int_equal(p->procs[img].pid, 131);
	assert_string_equal(p->procs[img].comm, "other");
	assert_int_equal(p->procs[img].nr_mappings, 1);
	assert_string_equal(p->procs[img].mappings[0].path, "/usr/bin/other");
	/* the image before keeps its name and mappings */
	old = child;
	assert_string_equal(p->procs[old].comm, "parent");
	assert_string_equal(p->procs[old].mappings[0].path, "/usr/bin/app");

	/* the parent exits; its late record: named from the maps remembered */
	remove_file(130, "stat");
	remove_file(130, "maps");
	remove_file(130, "comm");
	assert_int_equal(send(a, 130, 100, 1300, "parent", 0x7f1234560100), 0);
	assert_int_equal(p->procs[profile__find_process_start(p, 130, 100)].nr_mappings, 3);
	agg__stats(a, &st);
	assert_true(st.nr_maps_reads >= 3);
	agg__free(a);
	profile__free(p);
	proc_table__free(t);
}

/* A minimal unwinder sink: registrations only (no tables) */
static int sink_set_mapping(void *ctx, const struct bpfprof_unwind_key *k,
			    const struct bpfprof_unwind_mapping *v)
{
	return 0;
}

static int sink_del_mapping(void *ctx, const struct bpfprof_unwind_key *k)
{
	return 0;
}

static int sink_set_proc(void *ctx, uint32_t tgid, bool ready)
{
	int *n = ctx;

	*n += ready;
	return 0;
}

/* The copies' view: registrations asked of the table */
static void wait_registered(struct unwinder *u, uint32_t pid)
{
	for (int i = 0; i < 2000 && !unwinder__has_proc(u, pid); i++)
		usleep(1000);
	assert_true(unwinder__has_proc(u, pid));
}

/*
 * One maps read handed to the unwinder: registered now (a -p target),
 * queued (an exec mapping, a copied stack), through the copies' view, and
 * from the maps remembered for a process gone; none without an unwinder.
 */
static void test_unwinder_fed(void **state)
{
	struct proc_table *t = proc_table__new("/proc", true);
	int ready = 0;
	struct unwind_sink sink = { .set_mapping = sink_set_mapping,
				    .del_mapping = sink_del_mapping,
				    .set_proc = sink_set_proc,
				    .ctx = &ready };
	struct unwinder *u = unwinder__new(&sink, false, "/proc");
	struct unwind_copies_procs procs;
	uint32_t pid = (uint32_t)getpid(), gone = 0x7ffffff0;
	const char *text;
	char *all;
	size_t len;

	assert_non_null(t);
	assert_non_null(u);
	assert_int_equal(proc_table__register(t, pid, true), 0); /* no unwinder: nothing */
	assert_false(unwinder__has_proc(u, pid));
	proc_table__set_unwinder(t, u);
	assert_int_equal(proc_table__register(t, pid, true), 0);
	assert_true(unwinder__has_proc(u, pid));
	assert_int_equal(ready, 1);
	unwinder__forget(u, pid);
	assert_int_equal(proc_table__register(t, pid, false), 0);
	wait_registered(u, pid);
	unwinder__forget(u, pid);
	assert_int_equal(proc_table__register(t, gone, true), -ENOENT);

	/* new maps merged by the aggregator: registered on the unwinder's thread */
	{
		struct profile *p = profile__new();
		bool created;
		int proc = p ? profile__process_start(p, pid, 0, &created) : -1;

		assert_true(proc >= 0);
		assert_true(proc_table__snapshot(p, (uint32_t)proc, "/proc") > 0);
		assert_int_equal(proc_table__maps_changed(t, p, (uint32_t)proc), 0);
		wait_registered(u, pid);
		unwinder__forget(u, pid);
		profile__free(p);
	}

	proc_table__copies_procs(t, &procs);
	assert_int_equal(procs.request(procs.ctx, pid), 0);
	wait_registered(u, pid);
	/* a process gone: its remembered maps */
	assert_null(procs.remembered(procs.ctx, gone, 0, &len));
	assert_int_equal(proc_table__read_maps("/proc", pid, &all, &len), 0);
	assert_int_equal(proc_table__remember(t, gone, 0, all, len), 0);
	free(all);
	text = procs.remembered(procs.ctx, gone, 0, &len);
	assert_non_null(text);
	assert_int_equal(unwinder__load_text(u, gone, text, len), 0);
	assert_true(unwinder__has_proc(u, gone));
	unwinder__forget(u, gone);
	unwinder__forget(u, pid);
	unwinder__free(u);
	proc_table__free(t);
}

/*
 * The notice of a process's first samples: its maps read once, remembered,
 * and its files pinned by the symbolizer; a notice of a gone process does
 * nothing; other records are ignored.
 */
static void test_notice_fed(void **state)
{
	struct proc_table *t = proc_table__new("/proc", true);
	struct symbolizer *sy = symbolizer__new("/proc/kallsyms", "/proc");
	struct bpfprof_notice n = { .type = BPFPROF_REC_NOTICE, .tgid = (uint32_t)getpid() };
	struct symbolizer_counts before, after;
	uint32_t start;
	size_t len, nr, bytes;

	assert_non_null(t);
	assert_non_null(sy);
	assert_int_equal(proc_ident__start("/proc", n.tgid, &start), 0);
	n.start = start;
	proc_table__set_symbolizer(t, sy);
	symbolizer__counts(sy, &before);
	assert_int_equal(proc_table__notice(t, &n, sizeof(n)), 0);
	symbolizer__counts(sy, &after);
	/* pinned through map_files/, which only root may open */
	if (!geteuid())
		assert_true(after.nr_pins > before.nr_pins);
	assert_non_null(proc_table__remembered(t, n.tgid, n.start, &len));
	assert_true(len > 0);
	proc_table__counts(t, &nr, &bytes);
	assert_int_equal(nr, 1);
	assert_int_equal(bytes, len);

	/* gone: nothing remembered, no error */
	n.tgid = 0x7ffffff0;
	assert_int_equal(proc_table__notice(t, &n, sizeof(n)), 0);
	proc_table__counts(t, &nr, &bytes);
	assert_int_equal(nr, 1);
	/* not a notice, or short */
	n.type = BPFPROF_REC_SAMPLE;
	assert_int_equal(proc_table__notice(t, &n, sizeof(n)), 0);
	assert_int_equal(proc_table__notice(t, &n, 4), 0);
	/* no notices' thread: nothing to take */
	assert_null(proc_table__notice_thread(t));
	assert_int_equal(proc_table__take_captured(t), 0);
	assert_false(proc_table__watching_mmaps(t));
	proc_table__exec_mappings(t); /* no mmap events: nothing */
	symbolizer__free(sy);
	proc_table__free(t);
}

/* The interpreters' registry: Python enabled or not, its counters, the aggregator's hook */
static void test_interps(void **state)
{
	struct interp_env env = { .proc_dir = tmpdir };
	struct interps *none = interps__new(&env, 0), *py = interps__new(&env, 1u << INTERP_PYTHON);
	struct proc_table *t = fake_table(false);
	struct profile *p = profile__new();
	struct agg *a = p ? agg__new(p, t, 1000) : NULL;
	struct python_stats st;
	uint64_t ips[BPFPROF_MAX_STACK + BPFPROF_MAX_PY_FRAMES + 1];
	struct bpfprof_sample s = { .type = BPFPROF_REC_SAMPLE, .tgid = 140 };
	uint16_t nr_user = 0;
	bool created;
	int proc;

	assert_non_null(none);
	assert_non_null(py);
	assert_non_null(a);
	assert_false(interps__has(none, INTERP_PYTHON));
	assert_true(interps__has(py, INTERP_PYTHON));
	assert_false(interps__has(NULL, INTERP_PYTHON));
	memset(&st, 0xa5, sizeof(st));
	assert_int_equal(interps__stats(none, INTERP_PYTHON, &st, sizeof(st)), -ENOENT);
	assert_int_equal(st.samples, 0xa5a5a5a5a5a5a5a5ULL); /* untouched */
	assert_int_equal(interps__stats(py, INTERP_PYTHON, &st, sizeof(st) - 1), -EINVAL);
	assert_int_equal(interps__stats(py, INTERP_PYTHON, &st, sizeof(st)), 0);
	assert_int_equal(st.nr_procs, 0);
	assert_int_equal(st.samples, 0);

	/* a native process: found nothing, merged nothing */
	make_process(140, 1, "native", maps_a);
	proc = profile__process_start(p, 140, 1, &created);
	assert_int_equal(proc_table__snapshot(p, (uint32_t)proc, tmpdir), 3);
	assert_int_equal(interps__find(py, p, (uint32_t)proc), 0);
	assert_int_equal(interps__merge(py, p, (uint32_t)proc, &s, ips, &nr_user), 0);
	assert_int_equal(interps__find(none, p, (uint32_t)proc), 0);
	assert_int_equal(interps__merge(none, p, (uint32_t)proc, &s, ips, &nr_user), 0);
	interps__forget(py, 140);
	interps__forget(py, 99999);
	interps__hook(py, a);
	interps__hook(none, a);
	interps__hook(NULL, a);
	assert_int_equal(send(a, 140, 1, 1000, "native", 0x400100), 0);
	agg__free(a);
	profile__free(p);
	proc_table__free(t);
	interps__free(none);
	interps__free(py);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_maps),	cmocka_unit_test(test_facts),
		cmocka_unit_test(test_maps_remembered), cmocka_unit_test(test_cgroup),
		cmocka_unit_test(test_cgroup_id_remembered),
		cmocka_unit_test(test_lifecycle),	cmocka_unit_test(test_unwinder_fed),
		cmocka_unit_test(test_notice_fed),	cmocka_unit_test(test_interps),
	};

	return cmocka_run_group_tests(tests, setup_tmpdir, teardown_tmpdir);
}

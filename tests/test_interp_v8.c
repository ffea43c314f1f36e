// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/capture/interp_v8.c through the interpreters'
 * registry (include/interp.h, INTERP_V8): a fake proc directory in a
 * temporary directory, <tmp>/proc/PID/root/... holding tests/v8_fixture.h's
 * ELF files where the processes' mappings name them (no map_files there:
 * the path inside the root is read). Each file is read once however many
 * processes map it; a forged one and a node without metadata are counted
 * (and warned about) per process; an unreadable file is not remembered;
 * --no-node's registry has no V8; merge leaves every sample as recorded.
 */
#include <errno.h>
#include <fcntl.h>
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
#include "interp.h"
#include "interp_v8.h"
#include "log.h"
#include "profile.h"
#include "v8_fixture.h"

static char tmp[64], proc_dir[96];

/* <proc>/<pid>/root/<path>: bytes (NULL: the directory only); the file's inode */
static uint64_t put_file(uint32_t pid, const char *path, const void *b, size_t len)
{
	char full[PATH_MAX], cmd[PATH_MAX + 16];
	struct stat sb;
	int fd;

	snprintf(full, sizeof(full), "%s/%u/root%s", proc_dir, pid, path);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", full);
	*strrchr(cmd, '/') = 0;
	strcat(cmd, "'");
	assert_int_equal(system(cmd), 0);
	if (!b)
		return 0;
	fd = open(full, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, b, len), (ssize_t)len);
	assert_int_equal(fstat(fd, &sb), 0);
	close(fd);
	return sb.st_ino;
}

static uint64_t put_fixture(uint32_t pid, const char *path, const struct v8_fopts *o)
{
	size_t len;
	uint8_t *b = v8_fixture(o, &len);
	uint64_t ino = put_file(pid, path, b, len);

	free(b);
	return ino;
}

/* Process pid in p with one r-xp mapping of path (inode ino) */
static uint32_t add_proc(struct profile *p, uint32_t pid, const char *path, uint64_t ino)
{
	struct profile_mapping m = { .start = 0x400000, .end = 0x500000, .inode = ino };
	bool created;
	int proc = profile__process_start(p, pid, 7, &created);

	assert_true(proc >= 0);
	snprintf(p->procs[proc].comm, sizeof(p->procs[proc].comm), "node");
	memcpy(m.perms, "r-xp", 5);
	m.path = profile__intern(p, path);
	assert_true(profile__add_mapping(p, (uint32_t)proc, &m) >= 0);
	return (uint32_t)proc;
}

static int setup(void **state)
{
	(void)state;
	snprintf(tmp, sizeof(tmp), "/tmp/test_interp_v8.XXXXXX");
	if (!mkdtemp(tmp))
		return -1;
	snprintf(proc_dir, sizeof(proc_dir), "%s/proc", tmp);
	log_verbosity = -1; /* the warnings are the point of some cases: not on the test's output */
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	return system(cmd);
}

static void test_find(void **state)
{
	struct interp_env env = { .proc_dir = proc_dir };
	struct interps *r = interps__new(&env, 1u << INTERP_V8);
	struct profile *p = profile__new();
	struct v8_fopts good = { 0 }, forged = { .drop = "v8dbg_off_fp_function" };
	struct v8_stats st;
	uint64_t ino_good, ino_forged, ips[BPFPROF_MAX_STACK + BPFPROF_MAX_PY_FRAMES + 1];
	struct bpfprof_sample s = { .type = BPFPROF_REC_SAMPLE, .tgid = 101 };
	uint16_t nr_user = 3;
	uint32_t a, b, c, d, e;

	(void)state;
	assert_non_null(r);
	assert_non_null(p);
	assert_true(interps__has(r, INTERP_V8));
	assert_false(interps__has(r, INTERP_PYTHON));
	/* two processes of one file (the same inode: one container's root seen twice) */
	ino_good = put_fixture(101, "/usr/bin/node", &good);
	a = add_proc(p, 101, "/usr/bin/node", ino_good);
	assert_int_equal(interps__find(r, p, a), 0);
	assert_int_equal(interps__stats(r, INTERP_V8, &st, sizeof(st)), 0);
	assert_int_equal(st.nr_procs, 1);
	assert_int_equal(st.nr_files, 1);
	assert_int_equal(st.nr_v8_files, 1);
	/* found again (maps re-read): neither read nor said again */
	assert_int_equal(interps__find(r, p, a), 0);
	assert_int_equal(interps__stats(r, INTERP_V8, &st, sizeof(st)), 0);
	assert_int_equal(st.nr_procs, 1);
	assert_int_equal(st.nr_files, 1);
	/* merge: the record's own stack stands */
	assert_int_equal(interps__merge(r, p, a, &s, ips, &nr_user), 0);
	assert_int_equal(nr_user, 3);

	/* forged metadata in a library: refused, counted once for its process */
	ino_forged = put_fixture(102, "/opt/app/libnode.so.115", &forged);
	b = add_proc(p, 102, "/opt/app/libnode.so.115", ino_forged);
	assert_int_equal(interps__find(r, p, b), 0);
	assert_int_equal(interps__find(r, p, b), 0);
	assert_int_equal(interps__stats(r, INTERP_V8, &st, sizeof(st)), 0);
	assert_int_equal(st.nr_bad, 1);
	assert_int_equal(st.nr_files, 2);
	assert_int_equal(st.nr_v8_files, 1);

	/* a node that is no ELF, and a library not named node without metadata */
	{
		static const char text[] = "#!/bin/sh\n";
		uint64_t ino = put_file(103, "/usr/local/bin/node18", text, sizeof(text));
		struct v8_fopts none = { .syms = (const struct v8_fsym[]){ { "other", 1 } },
					 .nr = 1,
					 .no_embedder = true };
		uint64_t ino_lib = put_fixture(104, "/usr/lib/libc.so.6", &none);

		c = add_proc(p, 103, "/usr/local/bin/node18", ino);
		d = add_proc(p, 104, "/usr/lib/libc.so.6", ino_lib);
	}
	assert_int_equal(interps__find(r, p, c), 0);
	assert_int_equal(interps__find(r, p, d), 0);
	assert_int_equal(interps__stats(r, INTERP_V8, &st, sizeof(st)), 0);
	assert_int_equal(st.nr_no_metadata, 1); /* node18 only: libc is nobody's V8 */
	assert_int_equal(st.nr_files, 4);
	assert_int_equal(st.nr_procs, 1);

	/* unreadable (its root has no such file): counted, not remembered */
	put_file(105, "/usr/bin/node", NULL, 0);
	e = add_proc(p, 105, "/usr/bin/node", 999);
	assert_int_equal(interps__find(r, p, e), 0);
	assert_int_equal(interps__stats(r, INTERP_V8, &st, sizeof(st)), 0);
	assert_int_equal(st.nr_unreadable, 1);
	assert_int_equal(st.nr_files, 4);
	/* the file appears (a later maps read): now read and found */
	{
		char path[PATH_MAX];
		struct stat sb;

		put_fixture(105, "/usr/bin/node", &good);
		snprintf(path, sizeof(path), "%s/105/root/usr/bin/node", proc_dir);
		assert_int_equal(stat(path, &sb), 0);
		p->procs[e].mappings[0].inode = sb.st_ino;
	}
	assert_int_equal(interps__find(r, p, e), 0);
	assert_int_equal(interps__stats(r, INTERP_V8, &st, sizeof(st)), 0);
	assert_int_equal(st.nr_procs, 2);
	assert_int_equal(st.nr_files, 5);

	/* forget, then a new process at the pid: said again */
	interps__forget(r, 101);
	p->procs[a].start = 8;
	assert_int_equal(interps__find(r, p, a), 0);
	assert_int_equal(interps__stats(r, INTERP_V8, &st, sizeof(st)), 0);
	assert_int_equal(st.nr_procs, 3);
	assert_int_equal(st.nr_files, 5); /* the file was not read again */

	interps__free(r);
	profile__free(p);
}

/* --no-node: a registry without V8 has no counters of it */
static void test_disabled(void **state)
{
	struct interp_env env = { .proc_dir = proc_dir };
	struct interps *r = interps__new(&env, 1u << INTERP_PYTHON);
	struct v8_stats st;

	(void)state;
	assert_non_null(r);
	assert_false(interps__has(r, INTERP_V8));
	assert_int_equal(interps__stats(r, INTERP_V8, &st, sizeof(st)), -ENOENT);
	interps__free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_find, setup, teardown),
		cmocka_unit_test_setup_teardown(test_disabled, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

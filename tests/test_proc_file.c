// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/symbolize/proc_file.c (include/proc_file.h): a fake proc
 * directory in a temporary directory, <tmp>/proc/4242/status written here and
 * <tmp>/proc/4242/root a plain directory standing for the process's root.
 * Covers the status parser (Uid:, NSpid: with nested namespaces) and every
 * refusal of proc_file__open: symlinks at the end and in the middle of a
 * path, absolute links and ".." that would leave the root, FIFOs (which must
 * not block), directories, foreign owners, root files not world-readable and
 * the size cap. Ownership cases chown files, so they need root (skipped
 * otherwise).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>
#include <cmocka.h>
#include "proc_file.h"

#define PID 4242
#define OWNER 4321 /* the fake process's uid */
#define STRANGER 5555 /* someone else */

struct fx {
	char tmp[64]; /* mkdtemp */
	char proc[96]; /* <tmp>/proc */
	char root[128]; /* <tmp>/proc/4242/root */
};

static void write_file(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void rpath(const struct fx *fx, const char *rel, char *out, size_t size)
{
	assert_true((size_t)snprintf(out, size, "%s%s", fx->root, rel) < size);
}

/* A file under the fake root: path as the process sees it, content, owner, mode. */
static void root_file(const struct fx *fx, const char *rel, const char *text, uid_t uid,
		      mode_t mode)
{
	char path[PATH_MAX];

	rpath(fx, rel, path, sizeof(path));
	write_file(path, text, strlen(text));
	assert_int_equal(chown(path, uid, 0), 0);
	assert_int_equal(chmod(path, mode), 0);
}

static void status(const struct fx *fx, uint32_t pid, const char *text)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%u", fx->proc, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%u/status", fx->proc, pid);
	write_file(path, text, strlen(text));
}

/* What /proc/PID/status looks like in a container: the NS* lines carry one pid per level. */
static const char status_text[] = "Name:\tnode\n"
				  "Umask:\t0022\n"
				  "State:\tS (sleeping)\n"
				  "Tgid:\t4242\n"
				  "Ngid:\t0\n"
				  "Pid:\t4242\n"
				  "PPid:\t4200\n"
				  "TracerPid:\t0\n"
				  "Uid:\t4321\t4321\t4321\t4321\n"
				  "Gid:\t100\t100\t100\t100\n"
				  "FDSize:\t64\n"
				  "Groups:\t100 \n"
				  "NStgid:\t4242\t71\n"
				  "NSpid:\t4242\t17\n"
				  "NSpgid:\t4242\t72\n"
				  "NSsid:\t4242\t73\n"
				  "VmPeak:\t  100000 kB\n";

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	char path[PATH_MAX];

	assert_non_null(fx);
	strcpy(fx->tmp, "/tmp/bpfprof-pf.XXXXXX");
	assert_non_null(mkdtemp(fx->tmp));
	snprintf(fx->proc, sizeof(fx->proc), "%s/proc", fx->tmp);
	snprintf(fx->root, sizeof(fx->root), "%s/%u/root", fx->proc, PID);
	assert_int_equal(mkdir(fx->proc, 0755), 0);
	status(fx, PID, status_text);
	assert_int_equal(mkdir(fx->root, 0755), 0);
	rpath(fx, "/tmp", path, sizeof(path));
	assert_int_equal(mkdir(path, 01777), 0);
	rpath(fx, "/etc", path, sizeof(path));
	assert_int_equal(mkdir(path, 0755), 0);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	char cmd[PATH_MAX];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", fx->tmp);
	free(fx);
	return 0;
}

static const struct proc_ident owner_id = { .nspid = 17, .uids = { OWNER, OWNER, OWNER, OWNER } };

/* openat2(2) (Linux 5.6) is what proc_file__open stands on; valgrind, for one, lacks it. */
static void need_openat2(void)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT };
	int fd = (int)syscall(SYS_openat2, AT_FDCWD, "/", &how, sizeof(how));

	if (fd < 0 && errno == ENOSYS)
		skip();
	if (fd >= 0)
		close(fd);
}

static void need_root(void)
{
	if (geteuid() != 0)
		skip();
}

static void test_ident_nested_namespaces(void **state)
{
	struct fx *fx = *state;
	struct proc_ident id;

	memset(&id, 0xaa, sizeof(id));
	assert_int_equal(proc_ident__read(fx->proc, PID, &id), 0);
	assert_int_equal(id.nspid, 17);
	for (int i = 0; i < 4; i++)
		assert_int_equal(id.uids[i], OWNER);

	/* three levels: the innermost is the last field; uids all different */
	status(fx, 4243,
	       "Name:\tx\nUid:\t1000\t1001\t1002\t1003\nNStgid:\t4243\t100\t5\nNSpid:\t4243\t100\t9\n"
	       "NSpgid:\t4243\t100\t6\n");
	assert_int_equal(proc_ident__read(fx->proc, 4243, &id), 0);
	assert_int_equal(id.nspid, 9);
	assert_int_equal(id.uids[0], 1000);
	assert_int_equal(id.uids[1], 1001);
	assert_int_equal(id.uids[2], 1002);
	assert_int_equal(id.uids[3], 1003);

	/* no namespace: one field */
	status(fx, 4244, "Name:\tx\nUid:\t0\t0\t0\t0\nNSpid:\t4244\n");
	assert_int_equal(proc_ident__read(fx->proc, 4244, &id), 0);
	assert_int_equal(id.nspid, 4244);
	assert_int_equal(id.uids[0], 0);
}

static void test_ident_missing_lines(void **state)
{
	struct fx *fx = *state;
	struct proc_ident id;

	/* kernels before 4.1: no NSpid line, the pid itself */
	status(fx, 4250, "Name:\told\nPid:\t4250\nUid:\t7\t8\t9\t10\nGid:\t0\t0\t0\t0\n");
	memset(&id, 0xaa, sizeof(id));
	assert_int_equal(proc_ident__read(fx->proc, 4250, &id), 0);
	assert_int_equal(id.nspid, 4250);
	assert_int_equal(id.uids[0], 7);
	assert_int_equal(id.uids[3], 10);

	/* no Uid: line, or one cut short: not an identity to check files against */
	status(fx, 4251, "Name:\tx\nNSpid:\t4251\t3\n");
	assert_true(proc_ident__read(fx->proc, 4251, &id) < 0);
	status(fx, 4252, "Name:\tx\nUid:\t1000\t1000\nNSpid:\t4252\n");
	assert_true(proc_ident__read(fx->proc, 4252, &id) < 0);
	status(fx, 4253, "");
	assert_true(proc_ident__read(fx->proc, 4253, &id) < 0);

	/* the process is gone */
	assert_int_equal(proc_ident__read(fx->proc, 9999, &id), -ENOENT);
}

/* Read everything from fd; checks it is a read-only descriptor. */
static void check_reads(int fd, const char *want)
{
	char buf[256];
	ssize_t n;

	assert_true(fd >= 0);
	assert_int_equal(fcntl(fd, F_GETFL) & O_ACCMODE, O_RDONLY);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	n = read(fd, buf, sizeof(buf) - 1);
	assert_true(n >= 0);
	buf[n] = '\0';
	assert_string_equal(buf, want);
	close(fd);
}

static void test_open_owned(void **state)
{
	struct fx *fx = *state;
	struct proc_ident id;
	int fd;

	need_openat2();
	need_root();
	root_file(fx, "/tmp/perf-17.map", "1000 10 f\n", OWNER, 0600);
	assert_int_equal(proc_ident__read(fx->proc, PID, &id), 0);
	fd = proc_file__open(fx->proc, PID, "/tmp/perf-17.map", &id, 1 << 20);
	check_reads(fd, "1000 10 f\n");

	/* any one of real, effective, saved, filesystem uid owns it */
	for (int k = 0; k < 4; k++) {
		struct proc_ident one = { .nspid = 17, .uids = { 1, 2, 3, 4 } };

		one.uids[k] = OWNER;
		fd = proc_file__open(fx->proc, PID, "/tmp/perf-17.map", &one, 1 << 20);
		check_reads(fd, "1000 10 f\n");
	}
	/* the path is the process's view: relative to its root, not ours */
	fd = proc_file__open(fx->proc, PID, "tmp/perf-17.map", &id, 1 << 20);
	check_reads(fd, "1000 10 f\n");
}

static void test_open_foreign_owner(void **state)
{
	struct fx *fx = *state;

	need_openat2();
	need_root();
	root_file(fx, "/tmp/other.map", "x\n", STRANGER, 0644);
	assert_int_equal(proc_file__open(fx->proc, PID, "/tmp/other.map", &owner_id, 1 << 20),
			 -EPERM);
	/* world-readable is not enough for someone else's file: only root's */
	root_file(fx, "/tmp/other.map", "x\n", STRANGER, 0666);
	assert_int_equal(proc_file__open(fx->proc, PID, "/tmp/other.map", &owner_id, 1 << 20),
			 -EPERM);
}

static void test_open_root_files(void **state)
{
	struct fx *fx = *state;
	int fd;

	need_openat2();
	need_root();
	root_file(fx, "/etc/secret", "s3cret\n", 0, 0600);
	assert_int_equal(proc_file__open(fx->proc, PID, "/etc/secret", &owner_id, 1 << 20), -EPERM);
	root_file(fx, "/etc/secret", "s3cret\n", 0, 0640);
	assert_int_equal(proc_file__open(fx->proc, PID, "/etc/secret", &owner_id, 1 << 20), -EPERM);
	root_file(fx, "/etc/public", "hello\n", 0, 0644);
	fd = proc_file__open(fx->proc, PID, "/etc/public", &owner_id, 1 << 20);
	check_reads(fd, "hello\n");
	root_file(fx, "/etc/public2", "hi\n", 0, 0604);
	fd = proc_file__open(fx->proc, PID, "/etc/public2", &owner_id, 1 << 20);
	check_reads(fd, "hi\n");
}

static void test_open_final_symlink(void **state)
{
	struct fx *fx = *state;
	char link[PATH_MAX];

	need_openat2();
	need_root();
	root_file(fx, "/tmp/real.map", "1000 10 f\n", OWNER, 0644);
	rpath(fx, "/tmp/perf-17.map", link, sizeof(link));
	assert_int_equal(symlink("real.map", link), 0);
	assert_int_equal(proc_file__open(fx->proc, PID, "/tmp/perf-17.map", &owner_id, 1 << 20),
			 -ELOOP);
	/* an absolute target is not followed either (into the root or out of it) */
	unlink(link);
	assert_int_equal(symlink("/tmp/real.map", link), 0);
	assert_int_equal(proc_file__open(fx->proc, PID, "/tmp/perf-17.map", &owner_id, 1 << 20),
			 -ELOOP);
	unlink(link);
	assert_int_equal(symlink("/etc/passwd", link), 0);
	assert_int_equal(proc_file__open(fx->proc, PID, "/tmp/perf-17.map", &owner_id, 1 << 20),
			 -ELOOP);
	/* a dangling link is still a link */
	unlink(link);
	assert_int_equal(symlink("/nonexistent", link), 0);
	assert_int_equal(proc_file__open(fx->proc, PID, "/tmp/perf-17.map", &owner_id, 1 << 20),
			 -ELOOP);
}

static void test_open_intermediate_symlink(void **state)
{
	struct fx *fx = *state;
	char path[PATH_MAX];

	need_openat2();
	need_root();
	rpath(fx, "/tmp/sub", path, sizeof(path));
	assert_int_equal(mkdir(path, 0755), 0);
	root_file(fx, "/tmp/sub/perf-17.map", "1000 10 f\n", OWNER, 0644);
	/* the file itself is fine... */
	check_reads(proc_file__open(fx->proc, PID, "/tmp/sub/perf-17.map", &owner_id, 1 << 20),
		    "1000 10 f\n");
	/* ...but not through a directory symlink, relative or absolute */
	rpath(fx, "/tmp/lnk", path, sizeof(path));
	assert_int_equal(symlink("sub", path), 0);
	assert_int_equal(proc_file__open(fx->proc, PID, "/tmp/lnk/perf-17.map", &owner_id, 1 << 20),
			 -ELOOP);
	rpath(fx, "/work", path, sizeof(path));
	assert_int_equal(symlink("/tmp/sub", path), 0);
	assert_int_equal(proc_file__open(fx->proc, PID, "/work/perf-17.map", &owner_id, 1 << 20),
			 -ELOOP);
	/* a link to the host's /etc */
	rpath(fx, "/hostetc", path, sizeof(path));
	assert_int_equal(symlink("/etc", path), 0);
	assert_int_equal(proc_file__open(fx->proc, PID, "/hostetc/passwd", &owner_id, 1 << 20),
			 -ELOOP);
}

static void test_open_stays_in_root(void **state)
{
	struct fx *fx = *state;
	struct proc_ident any = { .nspid = 17, .uids = { 0, 0, 0, 0 } };
	char path[PATH_MAX];
	int fd;

	need_openat2();
	/*
	 * The host's /etc/passwd exists and is root's, 0644: had ".." left
	 * the fake root, these would open it. Inside the root it is absent.
	 */
	assert_int_equal(access("/etc/passwd", R_OK), 0);
	assert_int_equal(proc_file__open(fx->proc, PID, "../../../../../../../../../../etc/passwd",
					 &any, 1 << 20),
			 -ENOENT);
	assert_int_equal(proc_file__open(fx->proc, PID, "/../../../../../../etc/passwd", &any,
					 1 << 20),
			 -ENOENT);
	assert_int_equal(proc_file__open(fx->proc, PID, "/tmp/../../../etc/passwd", &any, 1 << 20),
			 -ENOENT);
	/* the root's own /etc/passwd is what ".." reaches */
	rpath(fx, "/etc/passwd", path, sizeof(path));
	write_file(path, "inside:x:0:0::/:/bin/sh\n", 24);
	assert_int_equal(chmod(path, 0644), 0);
	if (geteuid() == 0)
		assert_int_equal(chown(path, 0, 0), 0);
	else
		any.uids[0] = geteuid();
	fd = proc_file__open(fx->proc, PID, "../../../etc/passwd", &any, 1 << 20);
	check_reads(fd, "inside:x:0:0::/:/bin/sh\n");
	fd = proc_file__open(fx->proc, PID, "/tmp/../../etc/passwd", &any, 1 << 20);
	check_reads(fd, "inside:x:0:0::/:/bin/sh\n");
}

static void on_alarm(int sig)
{
	(void)sig;
	/* async-signal-safe: a hang is a failure */
	static const char msg[] = "proc_file__open blocked on a FIFO\n";

	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(2);
	_exit(1);
}

static void test_open_fifo_no_hang(void **state)
{
	struct fx *fx = *state;
	struct proc_ident mine = { .nspid = 17, .uids = { 0, 0, 0, 0 } };
	char path[PATH_MAX];

	need_openat2();
	mine.uids[0] = geteuid();
	rpath(fx, "/tmp/perf-17.map", path, sizeof(path));
	assert_int_equal(mkfifo(path, 0644), 0);
	if (geteuid() == 0) {
		assert_int_equal(chown(path, OWNER, 0), 0);
		mine.uids[0] = OWNER;
	}
	signal(SIGALRM, on_alarm);
	alarm(5);
	assert_int_equal(proc_file__open(fx->proc, PID, "/tmp/perf-17.map", &mine, 1 << 20),
			 -EINVAL);
	alarm(0);
	signal(SIGALRM, SIG_DFL);
}

static void test_open_not_regular(void **state)
{
	struct fx *fx = *state;
	struct proc_ident mine = { .nspid = 17, .uids = { 0, 0, 0, 0 } };
	char path[PATH_MAX];

	need_openat2();
	mine.uids[0] = geteuid();
	rpath(fx, "/tmp/dir.map", path, sizeof(path));
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(proc_file__open(fx->proc, PID, "/tmp/dir.map", &mine, 1 << 20), -EINVAL);
	assert_int_equal(proc_file__open(fx->proc, PID, "/tmp", &mine, 1 << 20), -EINVAL);
	assert_int_equal(proc_file__open(fx->proc, PID, "/", &mine, 1 << 20), -EINVAL);
}

static void test_open_size_cap(void **state)
{
	struct fx *fx = *state;
	char text[101];

	need_openat2();
	need_root();
	memset(text, 'a', 100);
	text[100] = '\0';
	root_file(fx, "/tmp/perf-17.map", text, OWNER, 0644);
	assert_int_equal(proc_file__open(fx->proc, PID, "/tmp/perf-17.map", &owner_id, 99), -EFBIG);
	assert_int_equal(proc_file__open(fx->proc, PID, "/tmp/perf-17.map", &owner_id, 0), -EFBIG);
	/* exactly at the cap is fine */
	check_reads(proc_file__open(fx->proc, PID, "/tmp/perf-17.map", &owner_id, 100), text);
	/* an empty file is never over the cap */
	root_file(fx, "/tmp/empty", "", OWNER, 0644);
	check_reads(proc_file__open(fx->proc, PID, "/tmp/empty", &owner_id, 0), "");
}

static void test_open_missing(void **state)
{
	struct fx *fx = *state;

	need_openat2();
	assert_int_equal(proc_file__open(fx->proc, PID, "/tmp/perf-17.map", &owner_id, 1 << 20),
			 -ENOENT);
	assert_int_equal(proc_file__open(fx->proc, PID, "/nodir/perf-17.map", &owner_id, 1 << 20),
			 -ENOENT);
	/* the process (its root) is gone */
	assert_int_equal(proc_file__open(fx->proc, 9999, "/tmp/perf-17.map", &owner_id, 1 << 20),
			 -ENOENT);
}

static void test_strerror(void **state)
{
	static const int errs[] = { -ELOOP, -EXDEV,  -EINVAL, -EPERM,
				    -EFBIG, -ENOENT, -EACCES, -ESTALE };
	const char *seen[sizeof(errs) / sizeof(errs[0])];

	for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		const char *m = proc_file__strerror(errs[i]);

		assert_non_null(m);
		assert_true(strlen(m) > 0);
		seen[i] = m;
	}
	/* the refusals proc_file__open names are told apart */
	for (size_t i = 0; i < 5; i++)
		for (size_t j = i + 1; j < 5; j++)
			assert_string_not_equal(seen[i], seen[j]);
	assert_non_null(strstr(proc_file__strerror(-ELOOP), "link"));
	assert_non_null(strstr(proc_file__strerror(-EINVAL), "regular"));
	assert_string_equal(proc_file__strerror(-ENOENT), strerror(ENOENT));
}

/* Our vDSO's size from its image is its [vdso] mapping's in /proc/self/maps */
static void test_own_vdso(void **state)
{
	unsigned long long start = 0, end, want = 0;
	char line[512];
	size_t size;
	const void *image = proc_file__own_vdso(&size);
	FILE *f = fopen("/proc/self/maps", "r");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]") && sscanf(line, "%llx-%llx", &start, &end) == 2)
			want = end - start;
	fclose(f);
	if (!want)
		skip(); /* no vDSO (vdso=0) */
	assert_non_null(image);
	assert_int_equal(size, want);
	assert_int_equal((uintptr_t)image, start);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_ident_nested_namespaces, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ident_missing_lines, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_owned, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_foreign_owner, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_root_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_final_symlink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_intermediate_symlink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_stays_in_root, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_fifo_no_hang, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_not_regular, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_size_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_missing, setup, teardown),
		cmocka_unit_test(test_strerror),
		cmocka_unit_test(test_own_vdso),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

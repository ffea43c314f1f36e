// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/capture/preflight.c (include/preflight.h): facts gathered
 * from a fake /proc and /sys tree (mkdtemp) and the one message each failed
 * check gives: no perf events, no BTF, a user namespace, root without
 * capabilities, missing CAP_BPF / CAP_PERFMON, a restrictive
 * kernel.perf_event_paranoid without CAP_PERFMON, no BPF ring buffer.
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
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <cmocka.h>
#include "preflight.h"

#define CAPS_ALL "000001ffffffffff"
#define CAPS_BPF "0000008000000000" /* bit 39 */
#define CAPS_PERFMON "0000004000000000" /* bit 38 */
#define CAPS_BPF_PERFMON "000000c000000000"
#define CAPS_SYS_ADMIN "0000000000200000" /* bit 21 */

static char root[64], proc_dir[PATH_MAX], sys_dir[PATH_MAX];

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(path);
}

static void mkdirs(const char *path)
{
	char buf[PATH_MAX], *p;

	snprintf(buf, sizeof(buf), "%s", path);
	for (p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(buf, 0755);
			*p = '/';
		}
	mkdir(buf, 0755);
}

/* write DIR/REL with data (DIR's subdirectories made as needed); NULL data removes it */
static void put(const char *dir, const char *rel, const char *data)
{
	char path[PATH_MAX], parent[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	if (!data) {
		unlink(path);
		return;
	}
	snprintf(parent, sizeof(parent), "%s", path);
	*strrchr(parent, '/') = '\0';
	mkdirs(parent);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(data, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static void status(unsigned int uid, const char *caps)
{
	char buf[512];

	snprintf(buf, sizeof(buf),
		 "Name:\tbpfprof\nUmask:\t0022\nState:\tR (running)\nTgid:\t42\nPid:\t42\n"
		 "Uid:\t%u\t%u\t%u\t%u\nGid:\t%u\t%u\t%u\t%u\nCapInh:\t0000000000000000\n"
		 "CapPrm:\t%s\nCapEff:\t%s\nCapBnd:\t000001ffffffffff\nCapAmb:\t0000000000000000\n",
		 uid, uid, uid, uid, uid, uid, uid, uid, caps, caps);
	put(proc_dir, "self/status", buf);
}

/* A capable, ordinary system: root with every capability, paranoid 2, BTF. */
static int setup(void **state)
{
	strcpy(root, "/tmp/test_preflight.XXXXXX");
	if (!mkdtemp(root))
		return -1;
	snprintf(proc_dir, sizeof(proc_dir), "%s/proc", root);
	snprintf(sys_dir, sizeof(sys_dir), "%s/sys", root);
	status(0, CAPS_ALL);
	put(proc_dir, "self/uid_map", "         0          0 4294967295\n");
	put(proc_dir, "sys/kernel/perf_event_paranoid", "2\n");
	put(proc_dir, "sys/kernel/osrelease", "6.1.0-test-amd64\n");
	put(sys_dir, "kernel/btf/vmlinux", "BTF");
	return 0;
}

static int teardown(void **state)
{
	return nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* gather from the fake tree, set the probe result, check: returns the verdict, message in msg */
static int verdict(int ringbuf, char *msg, size_t size)
{
	struct preflight_facts f;

	assert_int_equal(preflight__gather(proc_dir, sys_dir, &f), 0);
	assert_int_equal(f.ringbuf, -1);
	f.ringbuf = ringbuf;
	f.exe = "/usr/local/bin/bpfprof";
	return preflight__check(&f, msg, size);
}

static void test_gather_reads_the_tree(void **state)
{
	struct preflight_facts f;

	status(1000, CAPS_BPF);
	put(proc_dir, "sys/kernel/perf_event_paranoid", "-1\n");
	assert_int_equal(preflight__gather(proc_dir, sys_dir, &f), 0);
	assert_int_equal(f.euid, 1000);
	assert_true(f.cap_eff == 0x0000008000000000ULL);
	assert_true(f.init_userns);
	assert_int_equal(f.perf_event_paranoid, -1);
	assert_true(f.btf);
	assert_string_equal(f.release, "6.1.0-test-amd64");
	assert_null(f.exe);
	put(sys_dir, "kernel/btf/vmlinux", NULL);
	put(proc_dir, "sys/kernel/perf_event_paranoid", NULL);
	put(proc_dir, "sys/kernel/osrelease", NULL);
	put(proc_dir, "self/uid_map", "0 100000 65536\n");
	assert_int_equal(preflight__gather(proc_dir, sys_dir, &f), 0);
	assert_false(f.btf);
	assert_int_equal(f.perf_event_paranoid, PREFLIGHT_NO_PERF_EVENTS);
	assert_string_equal(f.release, "");
	assert_false(f.init_userns);
}

static void test_gather_without_status(void **state)
{
	struct preflight_facts f;

	put(proc_dir, "self/status", NULL);
	assert_int_equal(preflight__gather(proc_dir, sys_dir, &f), -ENOENT);
}

/* status without Uid: and CapEff: lines: taken as an unprivileged user */
static void test_status_without_fields_is_unprivileged(void **state)
{
	char msg[512];

	put(proc_dir, "self/status", "Name:\tbpfprof\n");
	assert_int_equal(verdict(1, msg, sizeof(msg)), -EPERM);
	assert_non_null(strstr(msg, "(missing: CAP_BPF CAP_PERFMON)"));
}

static void test_root_with_everything_passes(void **state)
{
	char msg[512] = "x";

	assert_int_equal(verdict(1, msg, sizeof(msg)), 0);
	assert_string_equal(msg, "");
	/* not probed (privileges unknown): no verdict on the ring buffer */
	assert_int_equal(verdict(-1, msg, sizeof(msg)), 0);
}

static void test_user_with_both_caps_passes_whatever_paranoid(void **state)
{
	char msg[512];

	status(1000, CAPS_BPF_PERFMON);
	put(proc_dir, "sys/kernel/perf_event_paranoid", "4\n");
	assert_int_equal(verdict(1, msg, sizeof(msg)), 0);
	/* CAP_SYS_ADMIN stands in for both */
	status(1000, CAPS_SYS_ADMIN);
	assert_int_equal(verdict(1, msg, sizeof(msg)), 0);
}

static void test_user_without_caps(void **state)
{
	char msg[512];

	status(65534, "0000000000000000");
	assert_int_equal(verdict(-1, msg, sizeof(msg)), -EPERM);
	assert_string_equal(msg, "insufficient privileges: needs root, or CAP_BPF and CAP_PERFMON "
				 "(missing: CAP_BPF CAP_PERFMON); run it with sudo, or grant them: "
				 "sudo setcap cap_bpf,cap_perfmon+ep /usr/local/bin/bpfprof");
}

static void test_user_without_cap_bpf(void **state)
{
	char msg[512];

	status(1000, CAPS_PERFMON);
	assert_int_equal(verdict(-1, msg, sizeof(msg)), -EPERM);
	assert_non_null(strstr(msg, "(missing: CAP_BPF); run it with sudo"));
}

/* paranoid matters to a caller without CAP_PERFMON: that message names it */
static void test_paranoid_without_cap_perfmon(void **state)
{
	char msg[512];

	status(1000, CAPS_BPF);
	put(proc_dir, "sys/kernel/perf_event_paranoid", "2\n");
	assert_int_equal(verdict(-1, msg, sizeof(msg)), -EPERM);
	assert_string_equal(
		msg, "kernel.perf_event_paranoid is 2 and CAP_PERFMON is missing: without it "
		     "the kernel refuses CPU-wide perf events at this setting, and BPF sampling "
		     "programs at any; run it with sudo, or grant it: "
		     "sudo setcap cap_bpf,cap_perfmon+ep /usr/local/bin/bpfprof");
	/* at 0 or -1 the sysctl is not the obstacle: the missing capability is */
	put(proc_dir, "sys/kernel/perf_event_paranoid", "0\n");
	assert_int_equal(verdict(-1, msg, sizeof(msg)), -EPERM);
	assert_null(strstr(msg, "perf_event_paranoid"));
	assert_non_null(strstr(msg, "(missing: CAP_PERFMON)"));
}

static void test_root_without_caps(void **state)
{
	char msg[512];

	status(0, "0000013ffedfffff"); /* setpriv --bounding-set=-bpf,-perfmon,-sys_admin */
	assert_int_equal(verdict(-1, msg, sizeof(msg)), -EPERM);
	assert_string_equal(
		msg, "insufficient privileges: running as root but without CAP_BPF CAP_PERFMON "
		     "(a container that drops capabilities?); BPF sampling needs CAP_BPF and "
		     "CAP_PERFMON: give them to the container (docker run --cap-add BPF "
		     "--cap-add PERFMON) or run it on the host");
	status(0, "000001bffedfffff"); /* CAP_BPF kept, CAP_PERFMON and CAP_SYS_ADMIN dropped */
	assert_int_equal(verdict(-1, msg, sizeof(msg)), -EPERM);
	assert_non_null(strstr(msg, "running as root but without CAP_PERFMON ("));
}

static void test_user_namespace(void **state)
{
	char msg[512];

	put(proc_dir, "self/uid_map", "         0       1000          1\n");
	assert_int_equal(verdict(-1, msg, sizeof(msg)), -EPERM);
	assert_string_equal(
		msg,
		"running in a user namespace (a rootless container?): BPF and perf events "
		"need CAP_BPF and CAP_PERFMON in the initial user namespace; run it on the "
		"host or in a container given them (docker run --cap-add BPF --cap-add PERFMON)");
}

static void test_no_btf(void **state)
{
	char msg[512];

	put(sys_dir, "kernel/btf/vmlinux", NULL);
	assert_int_equal(verdict(1, msg, sizeof(msg)), -ENOTSUP);
	assert_string_equal(
		msg, "kernel BTF not found at /sys/kernel/btf/vmlinux: kernel 6.1.0-test-amd64 "
		     "was built without CONFIG_DEBUG_INFO_BTF=y; boot a kernel built with it "
		     "(5.4 or later)");
	/* the kernel comes first: a user has to fix it before privileges matter */
	status(1000, "0000000000000000");
	assert_int_equal(verdict(-1, msg, sizeof(msg)), -ENOTSUP);
	assert_non_null(strstr(msg, "kernel BTF not found"));
}

static void test_no_perf_events(void **state)
{
	char msg[512];

	put(proc_dir, "sys/kernel/perf_event_paranoid", NULL);
	assert_int_equal(verdict(1, msg, sizeof(msg)), -ENOTSUP);
	assert_string_equal(msg, "kernel 6.1.0-test-amd64 has no perf events (no "
				 "/proc/sys/kernel/perf_event_paranoid): boot a kernel built with "
				 "CONFIG_PERF_EVENTS=y");
}

static void test_no_ringbuf(void **state)
{
	char msg[512];

	put(proc_dir, "sys/kernel/osrelease", "5.4.0-150-generic\n");
	assert_int_equal(verdict(0, msg, sizeof(msg)), -ENOTSUP);
	assert_string_equal(
		msg, "kernel 5.4.0-150-generic has no BPF ring buffer (BPF_MAP_TYPE_RINGBUF, "
		     "Linux 5.8 or later): boot a newer kernel");
	/* an unknown release is said to be unknown */
	put(proc_dir, "sys/kernel/osrelease", NULL);
	assert_int_equal(verdict(0, msg, sizeof(msg)), -ENOTSUP);
	assert_non_null(strstr(msg, "kernel (unknown) has no BPF ring buffer"));
}

static void test_message_truncated_to_size(void **state)
{
	char msg[24];

	memset(msg, 'x', sizeof(msg));
	status(65534, "0000000000000000");
	assert_int_equal(verdict(-1, msg, 16), -EPERM);
	assert_int_equal(strlen(msg), 15);
	assert_int_equal(msg[16], 'x');
}

static void *hold(void *arg)
{
	for (;;)
		pause();
	return arg;
}

/* the state letter of /proc/<pid>/stat */
static char proc_state(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	char st = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')))
		st = p[2];
	fclose(f);
	return st;
}

/*
 * Issue 24, fault 1: a process whose main thread called pthread_exit is a
 * zombie leader while its other thread runs on: alive (it used to count as
 * exited, ending -p runs); dead once that thread is gone too.
 */
static void test_zombie_leader_alive(void **state)
{
	pid_t child = fork();
	int i, status;

	assert_true(child >= 0);
	if (!child) {
		pthread_t t;

		if (pthread_create(&t, NULL, hold, NULL))
			_exit(2);
		pthread_exit(NULL);
	}
	for (i = 0; i < 500 && proc_state(child) != 'Z'; i++)
		usleep(10000);
	assert_int_equal(proc_state(child), 'Z');
	assert_true(preflight__process_alive((uint32_t)child));
	kill(child, SIGKILL);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_false(preflight__process_alive((uint32_t)child));
	/* a zombie with no other thread (exited, not reaped) is dead */
	child = fork();
	assert_true(child >= 0);
	if (!child)
		_exit(0);
	for (i = 0; i < 500 && proc_state(child) != 'Z'; i++)
		usleep(10000);
	assert_false(preflight__process_alive((uint32_t)child));
	waitpid(child, &status, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_gather_reads_the_tree, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gather_without_status, setup, teardown),
		cmocka_unit_test_setup_teardown(test_status_without_fields_is_unprivileged, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_root_with_everything_passes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_user_with_both_caps_passes_whatever_paranoid,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_user_without_caps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_user_without_cap_bpf, setup, teardown),
		cmocka_unit_test_setup_teardown(test_paranoid_without_cap_perfmon, setup, teardown),
		cmocka_unit_test_setup_teardown(test_root_without_caps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_user_namespace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_btf, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_perf_events, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_ringbuf, setup, teardown),
		cmocka_unit_test_setup_teardown(test_message_truncated_to_size, setup, teardown),
		cmocka_unit_test(test_zombie_leader_alive),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: MIT
/* cmocka: container ids in cgroup paths, /proc/PID/cgroup parsing (user/capture/cgroup.c). */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "cgroup.h"

#define ID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void expect_id(const char *path, const char *want)
{
	char out[CGROUP_CONTAINER_ID_LEN + 1];
	int ret = cgroup__container_id(path, out);

	if (want) {
		assert_int_equal(ret, 0);
		assert_string_equal(out, want);
	} else {
		assert_int_equal(ret, -ENOENT);
		assert_string_equal(out, "");
	}
}

static void test_runtime_forms(void **state)
{
	expect_id("/system.slice/docker-" ID ".scope", ID); /* docker, systemd driver */
	expect_id("/docker/" ID, ID); /* docker, cgroupfs driver */
	expect_id("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234.slice/"
		  "cri-containerd-" ID ".scope",
		  ID); /* containerd CRI */
	expect_id("/kubepods/besteffort/pod0f5a/" ID, ID); /* kubelet, cgroupfs */
	expect_id("/machine.slice/libpod-" ID ".scope/container", ID); /* podman, nested */
	expect_id("/kubepods.slice/crio-" ID ".scope", ID); /* cri-o */
}

static void test_no_container(void **state)
{
	expect_id("/", NULL);
	expect_id("/user.slice/user-1000.slice/session-2.scope", NULL);
	/* 63 and 65 hex digits, upper case: not an id */
	expect_id("/docker/"
		  "123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		  NULL);
	expect_id("/docker/" ID "0", NULL);
	expect_id("/docker/0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef", NULL);
	expect_id("/system.slice/docker-" ID ".service.d", NULL);
}

static void test_proc_path(void **state)
{
	char dir[] = "/tmp/bpfprof-cg.XXXXXX", path[PATH_MAX], buf[PATH_MAX];
	static const char text[] = "12:memory:/old/v1\n0::/system.slice/docker-" ID ".scope\n";
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/42", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/42/cgroup", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);

	assert_int_equal(cgroup__proc_path(dir, 42, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/system.slice/docker-" ID ".scope");
	/* too small a buffer is an error, not a silent cut */
	assert_int_equal(cgroup__proc_path(dir, 42, buf, 10), -ENAMETOOLONG);
	/* v1-only process: no "0::" line */
	f = fopen(path, "w");
	fputs("12:memory:/x\n", f);
	fclose(f);
	assert_int_equal(cgroup__proc_path(dir, 42, buf, sizeof(buf)), -ENOENT);
	assert_int_equal(cgroup__proc_path(dir, 43, buf, sizeof(buf)), -ENOENT);

	unlink(path);
	snprintf(path, sizeof(path), "%s/42", dir);
	rmdir(path);
	rmdir(dir);
}

static void test_id_of_non_cgroup(void **state)
{
	uint64_t id = 0;

	assert_int_equal(cgroup__id("/tmp", &id), -EINVAL); /* not on cgroup2 */
	assert_int_equal(cgroup__id("/nonexistent-bpfprof-cgroup", &id), -ENOENT);
	assert_int_equal(cgroup__id("/etc/hostname", &id), -ENOTDIR);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_runtime_forms),
		cmocka_unit_test(test_no_container),
		cmocka_unit_test(test_proc_path),
		cmocka_unit_test(test_id_of_non_cgroup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

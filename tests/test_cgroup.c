// SPDX-License-Identifier: MIT
/*
 * cmocka: container ids in cgroup paths, /proc/PID/cgroup parsing, the
 * cgroup id -> path cache (user/capture/cgroup.c).
 */
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

static uint64_t ino_of(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_ino;
}

/*
 * A hierarchy that is not cgroup2 (a temporary directory): ids are learnt by
 * walking it, at the start and for an id not known yet; a path is kept after
 * its directory is removed, an id never found is remembered as gone, and
 * expire drops what went unused, then walks again.
 */
static void test_cache_walk(void **state)
{
	char root[] = "/tmp/bpfprof-cgc.XXXXXX", a[64], b[PATH_MAX], ct[PATH_MAX], late[PATH_MAX];
	const char *path = NULL, *cid = NULL;
	struct cgroup_cache_stats st;
	struct cgroup_cache *c;
	/* no directory has it: one made and removed between two walks */
	const uint64_t id_gone = 0x7ead0000beefULL;
	uint64_t id_b, id_ct;

	assert_non_null(mkdtemp(root));
	snprintf(a, sizeof(a), "%s/a.slice", root);
	snprintf(b, sizeof(b), "%s/b.scope", a);
	snprintf(ct, sizeof(ct), "%s/docker-" ID ".scope", a);
	snprintf(late, sizeof(late), "%s/late", a);
	assert_int_equal(mkdir(a, 0700), 0);
	assert_int_equal(mkdir(b, 0700), 0);
	assert_int_equal(mkdir(ct, 0700), 0);
	id_b = ino_of(b);
	id_ct = ino_of(ct);

	c = cgroup_cache__new(root);
	assert_non_null(c);
	/* made after the first walk (before b goes: a file system reuses inode numbers, kernfs not) */
	assert_int_equal(mkdir(late, 0700), 0);
	/* removed after the cache was made: named from the first walk */
	assert_int_equal(rmdir(b), 0);
	assert_int_equal(cgroup_cache__lookup(c, 0, &path, &cid), -ENOENT);
	assert_int_equal(cgroup_cache__lookup(c, ino_of(root), &path, &cid), 0);
	assert_string_equal(path, "/");
	assert_int_equal(cgroup_cache__lookup(c, id_b, &path, &cid), 0);
	assert_string_equal(path, "/a.slice/b.scope");
	assert_string_equal(cid, "");
	assert_int_equal(cgroup_cache__lookup(c, id_ct, &path, &cid), 0);
	assert_string_equal(path, "/a.slice/docker-" ID ".scope");
	assert_string_equal(cid, ID);
	cgroup_cache__stats(c, &st);
	assert_int_equal(st.walks, 1);
	assert_int_equal(st.entries, 4);

	/* late: found by another walk */
	assert_int_equal(cgroup_cache__lookup(c, ino_of(late), &path, &cid), 0);
	assert_string_equal(path, "/a.slice/late");
	assert_int_equal(rmdir(late), 0);
	/* unknown, and walked for once */
	assert_int_equal(cgroup_cache__lookup(c, id_gone, &path, &cid), -ENOENT);
	assert_int_equal(cgroup_cache__lookup(c, id_gone, &path, &cid), -ENOENT);
	cgroup_cache__stats(c, &st);
	assert_int_equal(st.walks, 3);
	assert_int_equal(st.unknown, 1);
	assert_int_equal(st.by_handle, 0);
	assert_int_equal(st.entries, 6);

	/* kept: what was looked up (root, b, ct, late, gone) and what exists (a) */
	cgroup_cache__expire(c);
	cgroup_cache__stats(c, &st);
	assert_int_equal(st.entries, 6);
	assert_int_equal(cgroup_cache__lookup(c, id_ct, &path, &cid), 0);
	/* unused for one interval and removed: dropped (b, late, gone) */
	cgroup_cache__expire(c);
	cgroup_cache__stats(c, &st);
	assert_int_equal(st.entries, 3);
	assert_int_equal(cgroup_cache__lookup(c, id_ct, &path, &cid), 0);
	assert_string_equal(path, "/a.slice/docker-" ID ".scope");
	assert_int_equal(cgroup_cache__lookup(c, id_b, &path, &cid), -ENOENT);
	cgroup_cache__free(c);

	/* a cache over nothing names nothing */
	c = cgroup_cache__new("/nonexistent-bpfprof-cgroup");
	assert_non_null(c);
	assert_int_equal(cgroup_cache__lookup(c, id_ct, &path, &cid), -ENOENT);
	cgroup_cache__free(c);

	rmdir(ct);
	rmdir(a);
	rmdir(root);
}

/*
 * The host's cgroup2 mount: this process's cgroup id names the path
 * /proc/self/cgroup prints; as root, a cgroup made after the cache is found
 * through its file handle, without a walk.
 */
static void test_cache_host(void **state)
{
	char own[PATH_MAX], root[PATH_MAX], dir[PATH_MAX], line[PATH_MAX + 64], mnt[PATH_MAX],
		type[64];
	FILE *f = fopen("/proc/self/mounts", "re");
	const char *path, *cid;
	struct cgroup_cache_stats st;
	struct cgroup_cache *c;
	uint64_t id;

	root[0] = '\0';
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %4095s %63s", mnt, type) == 2 && !strcmp(type, "cgroup2")) {
			snprintf(root, sizeof(root), "%s", mnt);
			break;
		}
	if (f)
		fclose(f);
	if (!root[0] || cgroup__proc_path("/proc", (uint32_t)getpid(), own, sizeof(own)))
		skip();
	snprintf(dir, sizeof(dir), "%s%s", root, own);
	if (cgroup__id(dir, &id))
		skip();
	c = cgroup_cache__new(NULL);
	assert_non_null(c);
	assert_int_equal(cgroup_cache__lookup(c, id, &path, &cid), 0);
	assert_string_equal(path, own);
	snprintf(dir, sizeof(dir), "%s/bpfprof-test-cgroup.%d", root, (int)getpid());
	if (geteuid() == 0 && !mkdir(dir, 0755)) {
		assert_int_equal(cgroup__id(dir, &id), 0);
		assert_int_equal(cgroup_cache__lookup(c, id, &path, &cid), 0);
		rmdir(dir);
		assert_string_equal(path, strrchr(dir, '/'));
		cgroup_cache__stats(c, &st);
		assert_int_equal(st.by_handle, 1);
		assert_int_equal(st.walks, 1);
	}
	cgroup_cache__free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_runtime_forms),
		cmocka_unit_test(test_no_container),
		cmocka_unit_test(test_proc_path),
		cmocka_unit_test(test_id_of_non_cgroup),
		cmocka_unit_test(test_cache_walk),
		cmocka_unit_test(test_cache_host),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

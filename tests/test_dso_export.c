// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/write/dso_export.c (include/dso_export.h): perf's
 * buildid.dir and record.build-id from a system and a user perfconfig; the
 * build-id cache layout perf's build_id_cache__add writes (DIR/<path>/<id>/elf
 * and debug, the relative .build-id/xx/rest link, " (deleted)" dropped,
 * existing entries kept, names with "." or ".." components refused); and
 * the .prof copies: a deleted file with a space in its path is copied under
 * a name without spaces and named by copy_path (its debug file, swapped for
 * a secret, is not what is copied), a non-ELF file (a memfd of
 * JIT code) gets "" and a file pprof can open where it is stays as it is.
 * Files are made in a temporary directory; the ELF file is this test's own
 * executable.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <cmocka.h>
#include "dso_export.h"
#include "profile_fixture.h"
#include "sym_elf.h"

struct fx {
	char tmp[64];
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	snprintf(f->tmp, sizeof(f->tmp), "/tmp/test_dso_export.XXXXXX");
	assert_non_null(mkdtemp(f->tmp));
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->tmp);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

static void write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

/* The whole content of a file, NUL-terminated, in a new buffer; *len its size. */
static char *slurp(const char *path, size_t *len)
{
	struct stat sb;
	char *buf;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &sb), 0);
	buf = malloc((size_t)sb.st_size + 1);
	assert_non_null(buf);
	assert_int_equal(pread(fd, buf, (size_t)sb.st_size, 0), sb.st_size);
	buf[sb.st_size] = '\0';
	close(fd);
	if (len)
		*len = (size_t)sb.st_size;
	return buf;
}

static void test_buildid_dir(void **state)
{
	struct fx *f = *state;
	char etc[128], home[128], user[160], *dir;

	snprintf(etc, sizeof(etc), "%s/perfconfig", f->tmp);
	snprintf(home, sizeof(home), "%s/home", f->tmp);
	snprintf(user, sizeof(user), "%s/.perfconfig", home);
	assert_int_equal(mkdir(home, 0755), 0);

	/* no config at all: $HOME/.debug */
	dir = dso_export__buildid_dir(etc, home);
	assert_non_null(dir);
	assert_true(!strcmp(dir + strlen(dir) - 12, "/home/.debug"));
	free(dir);
	errno = 0;
	assert_null(dso_export__buildid_dir(etc, NULL));
	assert_int_equal(errno, ENOENT);

	/* the system file, then the user's, which wins; comments, case, quotes */
	write_file(
		etc,
		"# perf\n[BuildID]\n\tdir = /var/cache/perf ; system\n[record]\n\tbuild-id = cache\n");
	dir = dso_export__buildid_dir(etc, home);
	assert_string_equal(dir, "/var/cache/perf");
	free(dir);
	assert_non_null(dir = dso_export__buildid_dir(etc, NULL));
	assert_string_equal(dir, "/var/cache/perf");
	free(dir);
	write_file(user, "[core]\n\tdir = /not/this\n[buildid]\n\tDir = \"/home/u/my cache\"\n");
	dir = dso_export__buildid_dir(etc, home);
	assert_string_equal(dir, "/home/u/my cache");
	free(dir);

	/* perf record obeys record.build-id = no-cache / skip: so do we */
	write_file(user, "[record]\n\tbuild-id = no-cache\n");
	errno = 0;
	assert_null(dso_export__buildid_dir(etc, home));
	assert_int_equal(errno, ECANCELED);
	write_file(user, "[record]\nbuild-id=skip\n");
	assert_null(dso_export__buildid_dir(etc, home));
	write_file(user, "[record]\nbuild-id=mmap\n");
	assert_non_null(dir = dso_export__buildid_dir(etc, home));
	free(dir);
}

static void test_cache_add(void **state)
{
	struct fx *f = *state;
	static const uint8_t id[20] = { 0xab, 0xcd, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
					0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12 };
	struct dso_export_stats st = { 0 };
	char cache[128], src[128], dbg[128], path[512], link[512];
	char *text;
	ssize_t n;
	int fd, dfd;

	snprintf(cache, sizeof(cache), "%s/cache/nested", f->tmp);
	snprintf(src, sizeof(src), "%s/bin", f->tmp);
	snprintf(dbg, sizeof(dbg), "%s/bin.debug", f->tmp);
	write_file(src, "ELF bytes");
	write_file(dbg, "DWARF bytes");
	fd = open(src, O_RDONLY);
	dfd = open(dbg, O_RDONLY);
	assert_true(fd >= 0 && dfd >= 0);
	/* the binary deleted (its mapping says so): copied; the debug file: copied */
	assert_int_equal(unlink(src), 0);

	assert_int_equal(dso_export__cache_add(cache, "/opt/odd dir/app (deleted)", id, 20, fd, dfd,
					       &st),
			 0);
	assert_int_equal(st.files, 2);
	assert_int_equal(st.bytes, 9 + 11);
	snprintf(path, sizeof(path),
		 "%s/opt/odd dir/app/abcd0102030405060708090a0b0c0d0e0f101112/elf", cache);
	text = slurp(path, NULL);
	assert_string_equal(text, "ELF bytes");
	free(text);
	snprintf(path, sizeof(path),
		 "%s/opt/odd dir/app/abcd0102030405060708090a0b0c0d0e0f101112/debug", cache);
	text = slurp(path, NULL);
	assert_string_equal(text, "DWARF bytes");
	free(text);
	snprintf(path, sizeof(path), "%s/.build-id/ab/cd0102030405060708090a0b0c0d0e0f101112",
		 cache);
	n = readlink(path, link, sizeof(link) - 1);
	assert_true(n > 0);
	link[n] = '\0';
	assert_string_equal(link, "../../opt/odd dir/app/abcd0102030405060708090a0b0c0d0e0f101112");
	/* through the link, as perf report opens it */
	snprintf(path + strlen(path), sizeof(path) - strlen(path), "/elf");
	text = slurp(path, NULL);
	assert_string_equal(text, "ELF bytes");
	free(text);

	/* a second run keeps what is there */
	memset(&st, 0, sizeof(st));
	assert_int_equal(dso_export__cache_add(cache, "/opt/odd dir/app", id, 20, fd, -1, &st), 0);
	assert_int_equal(st.files, 0);
	assert_int_equal(st.present, 1);

	/* a file that still exists on the same file system: hard-linked, as perf does */
	{
		static const uint8_t id2[4] = { 1, 2, 3, 4 };
		struct stat a, b;

		memset(&st, 0, sizeof(st));
		assert_int_equal(dso_export__cache_add(cache, "/usr/bin/dbg", id2, 4, dfd, -1, &st),
				 0);
		assert_int_equal(st.files, 1);
		assert_int_equal(st.bytes, 0);
		snprintf(path, sizeof(path), "%s/usr/bin/dbg/01020304/elf", cache);
		assert_int_equal(stat(path, &a), 0);
		assert_int_equal(stat(dbg, &b), 0);
		assert_true(a.st_ino == b.st_ino && a.st_nlink == 2);
	}

	/* names from a process never climb out of the cache */
	assert_int_equal(dso_export__cache_add(cache, "/opt/../../etc/x", id, 20, fd, -1, NULL),
			 -EINVAL);
	assert_int_equal(dso_export__cache_add(cache, "/opt/./x", id, 20, fd, -1, NULL), -EINVAL);
	assert_int_equal(dso_export__cache_add(cache, "relative/x", id, 20, fd, -1, NULL), -EINVAL);
	assert_int_equal(dso_export__cache_add(cache, "/opt/x", id, 0, fd, -1, NULL), -EINVAL);
	snprintf(path, sizeof(path), "%s/etc", f->tmp);
	assert_int_equal(access(path, F_OK), -1);
	close(fd);
	close(dfd);
}

/* Copy this test's executable to path; its build-id into m. */
static void copy_self(const char *path, struct profile_mapping *m)
{
	size_t len;
	char *elf = slurp("/proc/self/exe", &len);
	FILE *fp = fopen(path, "w");
	struct stat sb;
	int n;

	assert_non_null(fp);
	assert_int_equal(fwrite(elf, 1, len, fp), len);
	fclose(fp);
	free(elf);
	assert_int_equal(stat(path, &sb), 0);
	m->inode = sb.st_ino;
	m->dev_major = major(sb.st_dev);
	m->dev_minor = minor(sb.st_dev);
	n = elf__read_build_id(path, m->build_id);
	assert_true(n >= 0);
	m->build_id_len = (uint8_t)n;
}

static void test_prof_files(void **state)
{
	struct fx *f = *state;
	struct profile *p = profile__new();
	struct symbolizer *sy;
	struct profile_mapping gone = { .start = 0x1000, .end = 0x2000, .perms = "r-xp" };
	struct profile_mapping here = { .start = 0x3000, .end = 0x4000, .perms = "r-xp" };
	struct profile_mapping memfd = {
		.start = 0x5000, .end = 0x6000, .perms = "r-xp", .inode = 7
	};
	struct profile_mapping cold = {
		.start = 0x7000, .end = 0x8000, .perms = "r-xp", .inode = 8
	};
	struct dso_export_stats st = { 0 };
	char fake_proc[128], odd[128], file[160], keep[160], outdir[160], expect[256], path[200];
	const uint64_t ips[] = { 0x1100, 0x3100, 0x5100 };
	char *a, *b;
	int proc;
	bool created;

	assert_non_null(p);
	/* a proc directory without the process: the files are read by path */
	snprintf(fake_proc, sizeof(fake_proc), "%s/proc", f->tmp);
	assert_int_equal(mkdir(fake_proc, 0755), 0);
	sy = symbolizer__new(NULL, fake_proc);
	assert_non_null(sy);
	snprintf(odd, sizeof(odd), "%s/odd dir", f->tmp);
	assert_int_equal(mkdir(odd, 0755), 0);
	snprintf(file, sizeof(file), "%s/burn er", odd);
	copy_self(file, &gone);
	snprintf(path, sizeof(path), "%s (deleted)", file);
	gone.path = profile__intern(p, path);
	/* its "debug file" swapped for a secret since the symbolizer read it: the binary is copied, not that */
	snprintf(path, sizeof(path), "%s/secret", f->tmp);
	write_file(path, "root:secret:1:0:99999:7:::");
	gone.debug_path = profile__intern(p, path);
	snprintf(keep, sizeof(keep), "%s/plain", f->tmp);
	copy_self(keep, &here);
	here.path = profile__intern(p, keep);
	memfd.path = profile__intern(p, "/memfd:jit (deleted)");
	cold.path = profile__intern(p, "/memfd:cold (deleted)");

	proc = profile__process(p, 4242, &created);
	assert_true(proc >= 0);
	assert_int_equal(profile__add_mapping(p, proc, &gone), 1);
	assert_int_equal(profile__add_mapping(p, proc, &here), 1);
	assert_int_equal(profile__add_mapping(p, proc, &memfd), 1);
	assert_int_equal(profile__add_mapping(p, proc, &cold), 1);
	add_stack(p, proc, ips, 0, 3, 5);
	p->procs[proc].nr_samples = 5;
	assert_int_equal(profile__resolve_locs(p), 0);

	snprintf(outdir, sizeof(outdir), "%s/out.prof.bin", f->tmp);
	assert_int_equal(dso_export__prof_files(p, sy, outdir, 0640, &st), 0);
	assert_int_equal(st.files, 1);
	assert_int_equal(st.failed, 1); /* /memfd:jit: gone, no build-id to find it by */

	/* the deleted file with spaces: a copy without spaces, the same bytes */
	snprintf(expect, sizeof(expect), "%s/burn_er-%02x%02x%02x%02x%02x%02x", outdir,
		 gone.build_id[0], gone.build_id[1], gone.build_id[2], gone.build_id[3],
		 gone.build_id[4], gone.build_id[5]);
	assert_non_null(p->procs[proc].mappings[0].copy_path);
	assert_string_equal(p->procs[proc].mappings[0].copy_path, expect);
	a = slurp(expect, NULL);
	b = slurp(file, NULL);
	assert_memory_equal(a, b, 64);
	free(a);
	free(b);
	/* a file pprof opens where it is: unchanged; code in memfds: no file name */
	assert_null(p->procs[proc].mappings[1].copy_path);
	assert_string_equal(p->procs[proc].mappings[2].copy_path, "");
	assert_string_equal(p->procs[proc].mappings[3].copy_path, "");

	symbolizer__free(sy);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_buildid_dir, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cache_add, setup, teardown),
		cmocka_unit_test_setup_teardown(test_prof_files, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: MIT
/*
 * cmocka: output files (user/write/output.c): complete or absent, never through a
 * symbolic link, mode 0600 unless asked, no temporary left behind on any
 * path. Every check looks at the directory and the files themselves.
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
#include <dirent.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <cmocka.h>
#include "output.h"

struct fixture {
	char dir[64];
	char path[PATH_MAX]; /* dir/out.prof */
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	strcpy(f->dir, "/tmp/bpfprof-output.XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/out.prof", f->dir);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd))
		return -1;
	free(f);
	return 0;
}

/* Names in dir, sorted and joined by spaces ("" when empty): what a user would see. */
static void listing(const char *dir, char *out, size_t size)
{
	struct dirent **de;
	int n, i;

	out[0] = '\0';
	n = scandir(dir, &de, NULL, alphasort);
	assert_true(n >= 0);
	for (i = 0; i < n; i++) {
		if (strcmp(de[i]->d_name, ".") && strcmp(de[i]->d_name, "..")) {
			if (out[0])
				strncat(out, " ", size - strlen(out) - 1);
			strncat(out, de[i]->d_name, size - strlen(out) - 1);
		}
		free(de[i]);
	}
	free(de);
}

static void write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	assert_int_equal(fputs(text, fp) >= 0, 1);
	assert_int_equal(fclose(fp), 0);
}

static void assert_file_is(const char *path, const char *text)
{
	char got[256] = { 0 };
	FILE *fp = fopen(path, "r");

	assert_non_null(fp);
	assert_true(fread(got, 1, sizeof(got) - 1, fp) < sizeof(got) - 1);
	fclose(fp);
	assert_string_equal(got, text);
}

static struct buf text_buf(const char *text)
{
	struct buf b = { 0 };

	buf__put_bytes(&b, text, strlen(text));
	assert_int_equal(b.err, 0);
	return b;
}

static void test_commit_writes_mode_0600_whatever_the_umask(void **state)
{
	struct fixture *f = *state;
	struct output o = { .path = f->path, .fd = -1 };
	struct buf b = text_buf("profile bytes\n");
	char names[256];
	struct stat st;
	mode_t old = umask(0);

	assert_int_equal(output__open(&o), 0);
	assert_true(o.fd >= 0);
	/* nothing carries the final name before the commit */
	assert_int_equal(access(f->path, F_OK), -1);
	assert_int_equal(output__commit(&o, &b), 0);
	umask(old);
	assert_file_is(f->path, "profile bytes\n");
	assert_int_equal(lstat(f->path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);
	listing(f->dir, names, sizeof(names));
	assert_string_equal(names, "out.prof");
	assert_int_equal(o.fd, -1);
	assert_null(o.tmp_path);
	buf__free(&b);
}

static void test_explicit_mode_is_exact(void **state)
{
	struct fixture *f = *state;
	struct output o = { .path = f->path, .fd = -1, .mode = 0644 };
	struct buf b = text_buf("x");
	struct stat st;
	mode_t old = umask(077);

	assert_int_equal(output__open(&o), 0);
	assert_int_equal(output__commit(&o, &b), 0);
	umask(old);
	assert_int_equal(stat(f->path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	buf__free(&b);
}

/* The old file is replaced by a new inode in one step: a reader holding it open keeps the old bytes. */
static void test_commit_replaces_existing_file_atomically(void **state)
{
	struct fixture *f = *state;
	struct output o = { .path = f->path, .fd = -1 };
	struct buf b = text_buf("new\n");
	struct stat before, after;
	char old[8] = { 0 };
	int rfd;

	write_file(f->path, "old\n");
	assert_int_equal(chmod(f->path, 0644), 0);
	assert_int_equal(stat(f->path, &before), 0);
	rfd = open(f->path, O_RDONLY);
	assert_true(rfd >= 0);
	assert_int_equal(output__open(&o), 0);
	/* open leaves the existing file alone until the commit */
	assert_file_is(f->path, "old\n");
	assert_int_equal(output__commit(&o, &b), 0);
	assert_file_is(f->path, "new\n");
	assert_int_equal(stat(f->path, &after), 0);
	assert_true(before.st_ino != after.st_ino);
	assert_int_equal(after.st_mode & 07777, 0600);
	assert_int_equal(pread(rfd, old, sizeof(old) - 1, 0), 4);
	assert_string_equal(old, "old\n");
	close(rfd);
	buf__free(&b);
}

static void test_symlink_refused_and_untouched(void **state)
{
	struct fixture *f = *state;
	struct output o = { .path = f->path, .fd = -1 };
	char victim[PATH_MAX], names[256], link[PATH_MAX] = { 0 };

	snprintf(victim, sizeof(victim), "%s/victim", f->dir);
	write_file(victim, "precious\n");
	assert_int_equal(symlink("victim", f->path), 0);
	assert_int_equal(output__open(&o), -ELOOP);
	assert_int_equal(o.fd, -1);
	assert_null(o.tmp_path);
	assert_file_is(victim, "precious\n");
	assert_true(readlink(f->path, link, sizeof(link) - 1) > 0);
	assert_string_equal(link, "victim");
	listing(f->dir, names, sizeof(names));
	assert_string_equal(names, "out.prof victim");
	/* abort after a refused open is harmless */
	output__abort(&o);
}

/* A dangling link pointing where a file would be created: nothing appears there. */
static void test_dangling_symlink_refused(void **state)
{
	struct fixture *f = *state;
	struct output o = { .path = f->path, .fd = -1 };
	char target[PATH_MAX], names[256];

	snprintf(target, sizeof(target), "%s/created-through-link", f->dir);
	assert_int_equal(symlink(target, f->path), 0);
	assert_int_equal(output__open(&o), -ELOOP);
	assert_int_equal(access(target, F_OK), -1);
	listing(f->dir, names, sizeof(names));
	assert_string_equal(names, "out.prof");
}

/* A link planted after open (during the run) is replaced, never written through. */
static void test_symlink_planted_during_run_not_followed(void **state)
{
	struct fixture *f = *state;
	struct output o = { .path = f->path, .fd = -1 };
	struct buf b = text_buf("profile\n");
	char victim[PATH_MAX], names[256];
	struct stat st;

	snprintf(victim, sizeof(victim), "%s/victim", f->dir);
	write_file(victim, "precious\n");
	assert_int_equal(output__open(&o), 0);
	assert_int_equal(symlink("victim", f->path), 0);
	assert_int_equal(output__commit(&o, &b), 0);
	assert_file_is(victim, "precious\n");
	assert_int_equal(lstat(f->path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_file_is(f->path, "profile\n");
	listing(f->dir, names, sizeof(names));
	assert_string_equal(names, "out.prof victim");
	buf__free(&b);
}

/*
 * Pages of path in the page cache past its first 256 KiB (valgrind reads a
 * file it sees mapped from its start): cachestat(2) (Linux 6.5; 451 on every
 * architecture), else mincore(2) on a fresh mapping, which touches none
 */
#define SKIPPED_BYTES (256u << 10)
static size_t resident_pages(const char *path)
{
	long page = sysconf(_SC_PAGESIZE);
	struct {
		uint64_t off, len;
	} range = { SKIPPED_BYTES, 0 };
	struct {
		uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
	} cs;
	unsigned char vec[512];
	size_t n = 0, len;
	struct stat st;
	void *m;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	if (!syscall(451, fd, &range, &cs, 0)) {
		close(fd);
		return (size_t)cs.nr_cache;
	}
	assert_int_equal(fstat(fd, &st), 0);
	len = (size_t)st.st_size;
	assert_true(len / (size_t)page <= sizeof(vec));
	m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	assert_true(m != MAP_FAILED);
	assert_int_equal(mincore(m, len, vec), 0);
	for (size_t i = SKIPPED_BYTES / (size_t)page; i < (len + (size_t)page - 1) / (size_t)page;
	     i++)
		n += vec[i] & 1;
	munmap(m, len);
	close(fd);
	return n;
}

/* A clean file of 1 MiB, its pages in the page cache (written, fsynced, read back) */
static void cached_file(const char *path)
{
	static char block[1 << 20], back[1 << 20];
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);

	memset(block, 'p', sizeof(block));
	assert_true(fd >= 0);
	assert_int_equal(write(fd, block, sizeof(block)), sizeof(block));
	assert_int_equal(fsync(fd), 0);
	assert_int_equal(pread(fd, back, sizeof(back), 0), sizeof(back));
	close(fd);
}

/*
 * The file an output will replace: its page cache given back, its bytes
 * kept; a link planted at the path is not followed (the file it names
 * keeps its cache), a FIFO is not opened (nothing blocks), stdout is left.
 */
static void test_drop_replaced_cache(void **state)
{
	struct fixture *f = *state;
	struct output o = { .path = f->path, .fd = -1 }, out = { .path = "-", .fd = -1 };
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	char victim[PATH_MAX], names[256];
	struct statfs sfs;
	struct stat st;
	ino_t ino;

	assert_int_equal(statfs(f->dir, &sfs), 0);
	if (sfs.f_type == 0x01021994) /* TMPFS_MAGIC: its pages are the file, none to drop */
		skip();
	cached_file(f->path);
	assert_int_equal(stat(f->path, &st), 0);
	ino = st.st_ino;
	assert_int_equal(resident_pages(f->path), ((1u << 20) - SKIPPED_BYTES) / page);
	assert_int_equal(output__open(&o), 0);
	output__drop_replaced_cache(&o);
	assert_int_equal(resident_pages(f->path), 0);
	/* the bytes are the disk's still: the same file, the same size, until the commit */
	assert_int_equal(stat(f->path, &st), 0);
	assert_int_equal(st.st_size, 1 << 20);
	assert_int_equal(st.st_ino, ino);

	/* a link planted at the path during the run */
	snprintf(victim, sizeof(victim), "%s/victim", f->dir);
	cached_file(victim);
	assert_int_equal(unlink(f->path), 0);
	assert_int_equal(symlink("victim", f->path), 0);
	output__drop_replaced_cache(&o);
	assert_int_equal(resident_pages(victim), ((1u << 20) - SKIPPED_BYTES) / page);
	/* a FIFO: left alone at once */
	assert_int_equal(unlink(f->path), 0);
	assert_int_equal(mkfifo(f->path, 0600), 0);
	output__drop_replaced_cache(&o);
	output__drop_replaced_cache(&out);
	output__abort(&o);
	listing(f->dir, names, sizeof(names));
	assert_string_equal(names, "out.prof victim");
}

static void test_non_regular_targets_refused(void **state)
{
	struct fixture *f = *state;
	char sub[PATH_MAX], slash[PATH_MAX], names[256];
	struct output o = { .fd = -1 };

	snprintf(sub, sizeof(sub), "%s/sub", f->dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	o.path = sub;
	assert_int_equal(output__open(&o), -EISDIR);
	snprintf(slash, sizeof(slash), "%s/", f->dir);
	o.path = slash;
	assert_int_equal(output__open(&o), -EISDIR);
	o.path = "";
	assert_int_equal(output__open(&o), -EINVAL);
	/* a FIFO: refused at once, without blocking on it */
	assert_int_equal(mkfifo(f->path, 0600), 0);
	o.path = f->path;
	assert_int_equal(output__open(&o), -EINVAL);
	/* a device: /dev/null must never be replaced by a profile (root could) */
	o.path = "/dev/null";
	assert_int_equal(output__open(&o), -EINVAL);
	listing(f->dir, names, sizeof(names));
	assert_string_equal(names, "out.prof sub");
}

static void test_missing_directory(void **state)
{
	struct fixture *f = *state;
	char path[PATH_MAX];
	struct output o = { .path = path, .fd = -1 };

	snprintf(path, sizeof(path), "%s/missing/out.prof", f->dir);
	assert_int_equal(output__open(&o), -ENOENT);
	/* a file where a directory should be */
	snprintf(path, sizeof(path), "%s/file", f->dir);
	write_file(path, "");
	strcat(path, "/out.prof");
	assert_int_equal(output__open(&o), -ENOTDIR);
	assert_null(o.tmp_path);
}

static void test_abort_leaves_nothing(void **state)
{
	struct fixture *f = *state;
	struct output o = { .path = f->path, .fd = -1 };
	struct output o2 = { .path = f->path, .fd = -1 };
	char names[256];

	write_file(f->path, "old\n");
	assert_int_equal(output__open(&o), 0);
	assert_true(write(o.fd, "partial", 7) == 7);
	output__abort(&o);
	output__abort(&o); /* twice is fine */
	assert_file_is(f->path, "old\n");
	listing(f->dir, names, sizeof(names));
	assert_string_equal(names, "out.prof");
	/* the signal-safe variant, then the ordinary one, as main does */
	assert_int_equal(output__open(&o2), 0);
	assert_true(write(o2.fd, "partial", 7) == 7);
	output__abort_signal_safe(&o2);
	output__abort(&o2);
	assert_file_is(f->path, "old\n");
	listing(f->dir, names, sizeof(names));
	assert_string_equal(names, "out.prof");
}

/* A writer that ran out of memory: the old file stays, no temporary. */
static void test_commit_of_failed_buffer(void **state)
{
	struct fixture *f = *state;
	struct output o = { .path = f->path, .fd = -1 };
	struct buf b = text_buf("half");
	char names[256];

	write_file(f->path, "old\n");
	b.err = -ENOMEM;
	assert_int_equal(output__open(&o), 0);
	assert_int_equal(output__commit(&o, &b), -ENOMEM);
	assert_file_is(f->path, "old\n");
	listing(f->dir, names, sizeof(names));
	assert_string_equal(names, "out.prof");
	buf__free(&b);
}

/*
 * A write that fails half way (the file size limit here; a full disk in
 * tests/integration/faults.sh): error returned, old file kept, no temporary.
 */
static void test_commit_write_error(void **state)
{
	struct fixture *f = *state;
	struct output o = { .path = f->path, .fd = -1 };
	struct rlimit old, lim;
	struct buf b = { 0 };
	char names[256];
	void (*old_xfsz)(int);
	int err;

	write_file(f->path, "old\n");
	buf__put_zeros(&b, 65536);
	assert_int_equal(output__open(&o), 0);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = 4096;
	old_xfsz = signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	err = output__commit(&o, &b);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, old_xfsz);
	assert_int_equal(err, -EFBIG);
	assert_file_is(f->path, "old\n");
	listing(f->dir, names, sizeof(names));
	assert_string_equal(names, "out.prof");
	assert_null(o.tmp_path);
	buf__free(&b);
}

/* The target became a directory during the run: rename fails, nothing left over. */
static void test_commit_rename_error(void **state)
{
	struct fixture *f = *state;
	struct output o = { .path = f->path, .fd = -1 };
	struct buf b = text_buf("profile\n");
	char inner[PATH_MAX + 8], names[256];

	assert_int_equal(output__open(&o), 0);
	assert_int_equal(mkdir(f->path, 0755), 0);
	snprintf(inner, sizeof(inner), "%s/keep", f->path);
	write_file(inner, "inside\n");
	assert_true(output__commit(&o, &b) < 0);
	assert_file_is(inner, "inside\n");
	listing(f->dir, names, sizeof(names));
	assert_string_equal(names, "out.prof");
	buf__free(&b);
}

/* perf.data is streamed into o->fd while sampling and committed with b == NULL. */
static void test_streamed_content(void **state)
{
	struct fixture *f = *state;
	struct output o = { .path = f->path, .fd = -1 };

	assert_int_equal(output__open(&o), 0);
	assert_int_equal(pwrite(o.fd, "HEADERxx", 8, 0), 8);
	assert_int_equal(pwrite(o.fd, "hd", 2, 0), 2); /* rewritten in place, as the header is */
	assert_int_equal(output__commit(&o, NULL), 0);
	assert_file_is(f->path, "hdADERxx");
}

static void test_formats(void **state)
{
	assert_int_equal(output__format_from_path("a.prof"), OUTPUT_GPERF);
	assert_int_equal(output__format_from_path("perf.data"), OUTPUT_PERFDATA);
	assert_int_equal(output__format_from_path("x.pb.gz"), OUTPUT_PPROF);
	assert_int_equal(output__format_from_path("x.pprof"), OUTPUT_PPROF);
	assert_int_equal(output__format_from_path("x.folded"), OUTPUT_FOLDED);
	assert_int_equal(output__format_from_path("x.svg"), OUTPUT_SVG);
	assert_int_equal(output__format_from_path(".prof"), OUTPUT_NONE);
	assert_int_equal(output__format_from_path("prof"), OUTPUT_NONE);
	assert_int_equal(output__format_from_name("perf"), OUTPUT_PERFDATA);
	assert_int_equal(output__format_from_name("nope"), OUTPUT_NONE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_commit_writes_mode_0600_whatever_the_umask,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_explicit_mode_is_exact, setup, teardown),
		cmocka_unit_test_setup_teardown(test_commit_replaces_existing_file_atomically,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_symlink_refused_and_untouched, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_dangling_symlink_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symlink_planted_during_run_not_followed, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_drop_replaced_cache, setup, teardown),
		cmocka_unit_test_setup_teardown(test_non_regular_targets_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_directory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_abort_leaves_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_commit_of_failed_buffer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_commit_write_error, setup, teardown),
		cmocka_unit_test_setup_teardown(test_commit_rename_error, setup, teardown),
		cmocka_unit_test_setup_teardown(test_streamed_content, setup, teardown),
		cmocka_unit_test(test_formats),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: MIT */
/*
 * A fake /proc for the cmocka drivers of the process table, the aggregator
 * and the interval: a temporary directory `tmpdir` (made from the includer's
 * FAKE_PROC_TEMPLATE, "/tmp/NAME.XXXXXX", by setup_tmpdir, removed with its
 * contents by teardown_tmpdir) holding <pid>/stat, comm, maps files as
 * proc(5) lays them out. Include after <cmocka.h> (and <ftw.h>, which wants
 * _GNU_SOURCE for nftw's FTW_DEPTH | FTW_PHYS). Every function is static and
 * may go unused by one driver.
 */
#ifndef BPFPROF_TESTS_FAKE_PROC_H
#define BPFPROF_TESTS_FAKE_PROC_H

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "log.h"

#ifndef FAKE_PROC_TEMPLATE
#error "define FAKE_PROC_TEMPLATE (\"/tmp/NAME.XXXXXX\") before including fake_proc.h"
#endif

#define FAKE_PROC_UNUSED __attribute__((unused))

static char tmpdir[64];

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(path);
}

/* A cmocka group setup: tmpdir made, the expected warnings of the cases silenced */
static FAKE_PROC_UNUSED int setup_tmpdir(void **state)
{
	strcpy(tmpdir, FAKE_PROC_TEMPLATE);
	if (!mkdtemp(tmpdir))
		return -1;
	log_verbosity = -1;
	return 0;
}

static FAKE_PROC_UNUSED int teardown_tmpdir(void **state)
{
	return nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* <dir>/<pid>/<name> with data[0..len) as its whole content */
static void write_proc_file_in(const char *dir, uint32_t pid, const char *name, const char *data,
			       size_t len)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%u", dir, pid);
	if (mkdir(path, 0755) && errno != EEXIST)
		fail_msg("mkdir '%s': %s", path, strerror(errno));
	snprintf(path, sizeof(path), "%s/%u/%s", dir, pid, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* <tmpdir>/<pid>/<name> with the text data as its whole content */
static FAKE_PROC_UNUSED void write_proc_file(uint32_t pid, const char *name, const char *data)
{
	write_proc_file_in(tmpdir, pid, name, data, strlen(data));
}

/* <tmpdir>/<pid>/stat as proc(5) has it: state field 3, threads 20, starttime 22; a comm with ") " in it */
static FAKE_PROC_UNUSED void write_proc_stat(uint32_t pid, char state, unsigned threads,
					     unsigned long long start)
{
	char buf[512];

	snprintf(
		buf, sizeof(buf),
		"%u (odd) (name) %c 1 %u %u 0 -1 4194304 100 0 0 0 5 1 0 0 20 0 %u 0 %llu 8192000 300 "
		"18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n",
		pid, state, pid, pid, threads, start);
	write_proc_file(pid, "stat", buf);
}

/* A live process of the fake /proc: stat (one thread, sleeping), comm, maps */
static FAKE_PROC_UNUSED void make_process(uint32_t pid, unsigned long long start, const char *comm,
					  const char *maps)
{
	char c[64];

	write_proc_stat(pid, 'S', 1, start);
	snprintf(c, sizeof(c), "%s\n", comm);
	write_proc_file(pid, "comm", c);
	write_proc_file(pid, "maps", maps);
}

#endif /* BPFPROF_TESTS_FAKE_PROC_H */

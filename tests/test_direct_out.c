// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/write/direct_out.c: bytes appended in pieces of every
 * size (one byte, a block less one, more than a chunk) reach the file in
 * order and whole, aligned part direct and tail buffered, and the caller's
 * plain write after direct_out__end lands at the end with O_DIRECT off
 * again; a file shorter than a block; a descriptor that refuses O_DIRECT
 * (/dev/full) gets buffered writes and their error.
 */
#include <errno.h>
#include <fcntl.h>
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
#include "direct_out.h"

/* A temporary file in $TMPDIR or /tmp, unlinked at once; its descriptor. */
static int tmp_file(void)
{
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/test_direct_out.XXXXXX", dir);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	return fd;
}

static uint8_t *pattern(size_t n)
{
	uint8_t *p = malloc(n);
	uint32_t x = 12345;

	assert_non_null(p);
	for (size_t i = 0; i < n; i++) {
		x = x * 1103515245 + 12345;
		p[i] = (uint8_t)(x >> 16);
	}
	return p;
}

static void assert_file_is(int fd, const uint8_t *want, size_t n)
{
	uint8_t *got = malloc(n + 1);
	struct stat st;

	assert_non_null(got);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_size, n);
	assert_int_equal(pread(fd, got, n + 1, 0), n);
	assert_memory_equal(got, want, n);
	free(got);
}

static void test_pieces(void **state)
{
	/* more than two chunks, not a multiple of the block, then the caller's tail */
	size_t pieces[] = { 1,	    DIRECT_OUT_ALIGN - 1, 3,  DIRECT_OUT_CHUNK + 5,
			    100000, DIRECT_OUT_CHUNK,	  777 };
	size_t n = 0, off = 0, i, tail = 1000;
	struct direct_out d;
	uint8_t *data;
	int fd = tmp_file();

	for (i = 0; i < sizeof(pieces) / sizeof(pieces[0]); i++)
		n += pieces[i];
	data = pattern(n + tail);
	direct_out__init(&d, fd);
	for (i = 0; i < sizeof(pieces) / sizeof(pieces[0]); i++) {
		assert_int_equal(direct_out__write(&d, data + off, pieces[i]), 0);
		off += pieces[i];
	}
	assert_int_equal(direct_out__end(&d), 0);
	assert_null(d.stage);
	assert_int_equal(fcntl(fd, F_GETFL) & O_DIRECT, 0);
	/* output__sync's plain write of what the writer kept */
	assert_int_equal(write(fd, data + n, tail), tail);
	assert_file_is(fd, data, n + tail);
	close(fd);
	free(data);
}

static void test_under_a_block(void **state)
{
	uint8_t *data = pattern(100);
	struct direct_out d;
	int fd = tmp_file();

	direct_out__init(&d, fd);
	assert_int_equal(direct_out__write(&d, data, 60), 0);
	assert_int_equal(direct_out__write(&d, data + 60, 40), 0);
	assert_int_equal(direct_out__end(&d), 0);
	assert_file_is(fd, data, 100);
	/* nothing written: nothing to do */
	direct_out__init(&d, fd);
	assert_int_equal(direct_out__end(&d), 0);
	assert_file_is(fd, data, 100);
	close(fd);
	free(data);
}

static void test_refused(void **state)
{
	uint8_t *data = pattern(DIRECT_OUT_CHUNK + 1);
	struct direct_out d;
	int fd = open("/dev/full", O_WRONLY);

	if (fd < 0) {
		free(data);
		skip();
	}
	direct_out__init(&d, fd);
	/* the whole chunk goes out (buffered: /dev/full takes no O_DIRECT), and fails */
	assert_int_equal(direct_out__write(&d, data, DIRECT_OUT_CHUNK + 1), -ENOSPC);
	assert_false(d.direct);
	/* the failed chunk is not written twice: nothing is left for the end */
	assert_int_equal(direct_out__end(&d), 0);
	close(fd);
	free(data);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pieces),
		cmocka_unit_test(test_under_a_block),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

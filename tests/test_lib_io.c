// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/lib/lib_io.c: a write larger than a pipe's buffer arrives
 * whole (short writes retried) while a reader drains it; pwrite at an offset
 * leaves the descriptor's offset alone; a full device (/dev/full) and a
 * closed descriptor give -ENOSPC and -EBADF.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "lib_io.h"

#define BIG (1 << 20)

static void *drain(void *arg)
{
	int fd = *(int *)arg;
	size_t *got = calloc(1, sizeof(*got));
	char buf[4096];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		*got += (size_t)n;
	return got;
}

static void test_short_writes(void **state)
{
	char *data = malloc(BIG);
	pthread_t t;
	size_t *got;
	int p[2];

	assert_non_null(data);
	memset(data, 'x', BIG);
	assert_int_equal(pipe(p), 0);
	assert_int_equal(pthread_create(&t, NULL, drain, &p[0]), 0);
	assert_int_equal(io__write_all(p[1], data, BIG), 0);
	close(p[1]);
	assert_int_equal(pthread_join(t, (void **)&got), 0);
	assert_int_equal(*got, BIG);
	free(got);
	close(p[0]);
	free(data);
}

static void test_pwrite_and_errors(void **state)
{
	char path[] = "/tmp/test_lib_io.XXXXXX", buf[16] = { 0 };
	int fd = mkstemp(path), full;

	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(io__write_all(fd, "0123456789", 10), 0);
	assert_int_equal(io__pwrite_all(fd, "ab", 2, 3), 0);
	assert_int_equal(lseek(fd, 0, SEEK_CUR), 10);
	assert_int_equal(pread(fd, buf, 10, 0), 10);
	assert_string_equal(buf, "012ab56789");
	close(fd);
	assert_int_equal(io__write_all(fd, "x", 1), -EBADF);
	full = open("/dev/full", O_WRONLY);
	if (full >= 0) {
		assert_int_equal(io__write_all(full, "x", 1), -ENOSPC);
		close(full);
	}
}

/*
 * io__read_upto: a pipe written in two parts reads whole up to the buffer's
 * size (more may follow), then to the end of file; a bad fd is -EBADF
 */
static void test_read_upto(void **state)
{
	char buf[16], big[64];
	size_t n = 99;
	int p[2];

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(io__write_all(p[1], "0123456789", 10), 0);
	assert_int_equal(io__write_all(p[1], "abcdefghij", 10), 0);
	close(p[1]);
	assert_int_equal(io__read_upto(p[0], buf, sizeof(buf), &n), 0);
	assert_int_equal(n, sizeof(buf));
	assert_memory_equal(buf, "0123456789abcdef", 16);
	assert_int_equal(io__read_upto(p[0], big, sizeof(big), &n), 0);
	assert_int_equal(n, 4);
	assert_memory_equal(big, "ghij", 4);
	assert_int_equal(io__read_upto(p[0], big, sizeof(big), &n), 0);
	assert_int_equal(n, 0);
	close(p[0]);
	assert_int_equal(io__read_upto(-1, big, sizeof(big), &n), -EBADF);
	assert_int_equal(n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_short_writes),
		cmocka_unit_test(test_pwrite_and_errors),
		cmocka_unit_test(test_read_upto),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/symbolize/proc_mem.c (include/proc_mem.h): a
 * temporary file stands for /proc/PID/mem (its offsets for addresses).
 * Reads within a line come from the line until proc_mem__forget (the file
 * rewritten in between is not seen, then is); reads across lines and at the
 * file's short last line are made as asked; reads past the end, and with
 * nothing open, fail.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "proc_mem.h"

#define NR_LINES (PROC_MEM_LINES + 2) /* two lines share a slot with others */
#define SIZE (NR_LINES * PROC_MEM_LINE + 100) /* the last line short */

static char path[64];
static int fd = -1;

/* byte i of the file's generation gen */
static uint8_t byte(size_t i, unsigned int gen)
{
	return (uint8_t)(i * 7 + gen * 31);
}

static void write_gen(unsigned int gen)
{
	static uint8_t buf[SIZE];

	for (size_t i = 0; i < SIZE; i++)
		buf[i] = byte(i, gen);
	assert_int_equal(pwrite(fd, buf, SIZE, 0), SIZE);
}

static int setup(void **state)
{
	snprintf(path, sizeof(path), "/tmp/test_proc_mem.XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	write_gen(0);
	return 0;
}

static int teardown(void **state)
{
	close(fd);
	unlink(path);
	return 0;
}

static void check(struct proc_mem *m, uint64_t addr, size_t len, unsigned int gen)
{
	uint8_t buf[3 * PROC_MEM_LINE];

	assert_true(len <= sizeof(buf));
	assert_int_equal(proc_mem__read(m, addr, buf, len), 0);
	for (size_t i = 0; i < len; i++)
		assert_int_equal(buf[i], byte(addr + i, gen));
}

static void test_lines(void **state)
{
	struct proc_mem *m = proc_mem__new();
	uint64_t v;

	assert_non_null(m);
	assert_false(proc_mem__is_open(m));
	assert_int_equal(proc_mem__read(m, 8, &v, sizeof(v)), -EIO);
	assert_int_equal(proc_mem__open(m, path), 0);
	assert_true(proc_mem__is_open(m));

	write_gen(0);
	check(m, 8, 8, 0);
	check(m, PROC_MEM_LINE + 40, 2, 0);
	/* the memory changes: reads within the lines read keep their bytes ... */
	write_gen(1);
	check(m, 0, PROC_MEM_LINE, 0);
	check(m, PROC_MEM_LINE + 100, 8, 0);
	/* ... a line not read yet, and a read across lines, see it as it is */
	check(m, 2 * PROC_MEM_LINE + 4, 4, 1);
	check(m, PROC_MEM_LINE - 4, 8, 1);
	check(m, 10, 2 * PROC_MEM_LINE, 1);
	/* forgotten: read again */
	proc_mem__forget(m);
	check(m, 8, 8, 1);
	check(m, PROC_MEM_LINE + 100, 8, 1);

	/* the short last line: read as asked, up to the end and no further */
	check(m, NR_LINES * PROC_MEM_LINE, 100, 1);
	check(m, SIZE - 8, 8, 1);
	assert_int_equal(proc_mem__read(m, SIZE - 4, &v, sizeof(v)), -EIO);
	assert_int_equal(proc_mem__read(m, SIZE + 64, &v, sizeof(v)), -EIO);
	/* a line whose slot another took is read again */
	write_gen(2);
	check(m, 8, 8, 1);
	check(m, (uint64_t)PROC_MEM_LINES * PROC_MEM_LINE + 8, 8, 2);
	check(m, 8, 8, 2);
	proc_mem__free(m);
	proc_mem__free(NULL);
}

static void test_open_fails(void **state)
{
	struct proc_mem *m = proc_mem__new();
	uint32_t v;

	assert_non_null(m);
	assert_int_equal(proc_mem__open(m, "/nonexistent/proc/1/mem"), -ENOENT);
	assert_false(proc_mem__is_open(m));
	assert_int_equal(proc_mem__read(m, 4096, &v, sizeof(v)), -EIO);
	proc_mem__free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_open_fails),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

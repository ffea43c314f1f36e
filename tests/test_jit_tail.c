// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/symbolize/jit_tail.c (include/jit_tail.h): a child process
 * writes a file through a fully buffered stdio FILE (as V8 writes its
 * jitdump) and does not flush the end; jit_tail__read must return exactly
 * the bytes not yet in the file, at the file's position, so that file +
 * tail is what the child wrote. Also: nothing buffered gives an empty tail,
 * a file the child has not open is -ENOENT, a process without libc's FILE
 * list (this test reads its own maps for it) is handled.
 */
#include <errno.h>
#include <fcntl.h>
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
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "jit_tail.h"
#include "proc_table.h"
#include "procmaps.h"

#define WRITTEN 10000 /* bytes the child writes: 2 blocks of 4096 flushed, 1808 buffered */

struct child {
	pid_t pid;
	char path[64];
	int go[2]; /* parent -> child: exit now */
	int ready[2]; /* child -> parent: written */
};

static void start(struct child *c, size_t n, bool flush)
{
	char b;
	int fd;

	snprintf(c->path, sizeof(c->path), "/tmp/test_jit_tail.XXXXXX");
	fd = mkstemp(c->path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(pipe(c->go), 0);
	assert_int_equal(pipe(c->ready), 0);
	c->pid = fork();
	assert_true(c->pid >= 0);
	if (!c->pid) {
		FILE *f = fopen(c->path, "w");

		/* EOF on go when the test dies: never left waiting */
		close(c->go[1]);
		close(c->ready[0]);
		if (!f)
			_exit(1);
		setvbuf(f, NULL, _IOFBF, 2 << 20); /* what V8 asks for; glibc gives st_blksize */
		for (size_t i = 0; i < n; i++)
			fputc((int)(i * 7 % 251), f);
		if (flush)
			fflush(f);
		if (write(c->ready[1], "r", 1) != 1 || read(c->go[0], &b, 1) < 0)
			_exit(1);
		_exit(0); /* without fclose: the tail dies with the child, as in a crash */
	}
	close(c->go[0]);
	close(c->ready[1]);
	assert_int_equal(read(c->ready[0], &b, 1), 1);
}

static void stop(struct child *c)
{
	assert_int_equal(write(c->go[1], "g", 1), 1);
	waitpid(c->pid, NULL, 0);
	close(c->go[1]);
	close(c->ready[0]);
	unlink(c->path);
}

static struct profile *profile_of(pid_t pid)
{
	struct profile *p = profile__new();
	bool created;

	assert_non_null(p);
	assert_int_equal(profile__process(p, (uint32_t)pid, &created), 0);
	assert_true(proc_table__snapshot(p, 0, "/proc") >= 0);
	return p;
}

static void test_unflushed_tail(void **state)
{
	struct profile *p;
	struct child c;
	char *tail = NULL;
	size_t len = 0;
	uint64_t pos = 0;
	struct stat sb;
	int fd;

	(void)state;
	start(&c, WRITTEN, false);
	p = profile_of(c.pid);
	fd = open(c.path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(jit_tail__read("/proc", p, 0, fd, &tail, &len, &pos), 0);
	assert_int_equal(fstat(fd, &sb), 0);
	/* the tail continues the file exactly where it ends */
	assert_int_equal(pos, (uint64_t)sb.st_size);
	assert_true(pos < WRITTEN);
	assert_int_equal(pos + len, WRITTEN);
	for (size_t i = 0; i < len; i++)
		assert_int_equal((unsigned char)tail[i], (unsigned char)((pos + i) * 7 % 251));
	free(tail);
	close(fd);
	profile__free(p);
	stop(&c);
}

static void test_flushed_nothing_left(void **state)
{
	struct profile *p;
	struct child c;
	char *tail = (char *)1;
	size_t len = 1;
	uint64_t pos = 0;
	int fd;

	(void)state;
	start(&c, WRITTEN, true);
	p = profile_of(c.pid);
	fd = open(c.path, O_RDONLY);
	assert_int_equal(jit_tail__read("/proc", p, 0, fd, &tail, &len, &pos), 0);
	assert_int_equal(len, 0);
	assert_null(tail);
	assert_int_equal(pos, WRITTEN);
	close(fd);
	profile__free(p);
	stop(&c);
}

static void test_file_not_open_there(void **state)
{
	struct profile *p;
	struct child c;
	char *tail;
	size_t len;
	uint64_t pos;
	int fd = open("/proc/self/exe", O_RDONLY);

	(void)state;
	start(&c, 100, false);
	p = profile_of(c.pid);
	assert_int_equal(jit_tail__read("/proc", p, 0, fd, &tail, &len, &pos), -ENOENT);
	close(fd);
	profile__free(p);
	stop(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unflushed_tail),
		cmocka_unit_test(test_flushed_nothing_left),
		cmocka_unit_test(test_file_not_open_there),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

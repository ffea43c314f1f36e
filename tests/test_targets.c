// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/capture/targets.c: the command is held before its exec until
 * released (a file it would create does not exist before), then runs and its
 * exit status is kept; a command never released exits unrun (its file never
 * appears); a -p target's pidfd reports its exit at once and is handed to
 * unwatch and closed; a target without a pidfd (past TARGETS_MAX_PIDFDS, or
 * refused by watch) is looked up in /proc, every TARGETS_CHECK_NS only;
 * stop_child ends a running command with SIGTERM.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "targets.h"

static char tmp[] = "/tmp/test_targets.XXXXXX";

static int setup_all(void **state)
{
	return mkdtemp(tmp) ? 0 : -1;
}

static int teardown_all(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	return system(cmd);
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* Wait up to 5 s for the command to exit. */
static bool wait_exit(struct targets *t)
{
	for (int i = 0; i < 500; i++) {
		if (targets__child_exited(t))
			return true;
		sleep_ms(10);
	}
	return false;
}

static void test_command_gate(void **state)
{
	char file[128], script[256];
	char *argv[] = { "sh", "-c", script, NULL };
	struct targets t;

	snprintf(file, sizeof(file), "%s/ran", tmp);
	snprintf(script, sizeof(script), "touch '%s'; exit 3", file);
	targets__init(&t, NULL, 0);
	assert_int_equal(targets__start_command(&t, argv), 0);
	assert_true(t.child > 0);
	sleep_ms(100);
	/* held before its exec: nothing ran yet */
	assert_int_not_equal(access(file, F_OK), 0);
	assert_false(targets__child_exited(&t));
	targets__release(&t);
	assert_true(wait_exit(&t));
	assert_true(WIFEXITED(t.child_status));
	assert_int_equal(WEXITSTATUS(t.child_status), 3);
	assert_int_equal(access(file, F_OK), 0);
	targets__close(&t);

	/* never released: it exits unrun (127) */
	unlink(file);
	targets__init(&t, NULL, 0);
	assert_int_equal(targets__start_command(&t, argv), 0);
	targets__close(&t);
	assert_true(t.child_done);
	assert_int_equal(WEXITSTATUS(t.child_status), 127);
	assert_int_not_equal(access(file, F_OK), 0);

	/* a missing program: the child says so and exits 127 after the release */
	{
		char *missing[] = { "/nonexistent/program-of-test-targets", NULL };

		targets__init(&t, NULL, 0);
		assert_int_equal(targets__start_command(&t, missing), 0);
		targets__release(&t);
		assert_true(wait_exit(&t));
		assert_int_equal(WEXITSTATUS(t.child_status), 127);
		targets__close(&t);
	}
}

static void test_stop_child(void **state)
{
	char *argv[] = { "sleep", "30", NULL };
	struct targets t;

	targets__init(&t, NULL, 0);
	assert_int_equal(targets__start_command(&t, argv), 0);
	targets__release(&t);
	sleep_ms(50);
	assert_false(targets__child_exited(&t));
	targets__stop_child(&t);
	assert_true(t.child_done);
	assert_true(WIFSIGNALED(t.child_status));
	assert_int_equal(WTERMSIG(t.child_status), SIGTERM);
	targets__close(&t);
}

static int nr_watched, nr_unwatched, refuse_watch;

static int watch(void *ctx, int fd)
{
	nr_watched++;
	return refuse_watch ? -ENOSPC : 0;
}

static void unwatch(void *ctx, int fd)
{
	nr_unwatched++;
}

static pid_t spawn_sleeper(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (!pid) {
		pause();
		_exit(0);
	}
	return pid;
}

static void test_pidfds_and_proc(void **state)
{
	uint32_t pids[2];
	struct targets t;
	pid_t a = spawn_sleeper(), b = spawn_sleeper();
	uint64_t now = TARGETS_CHECK_NS;

	pids[0] = (uint32_t)a;
	pids[1] = (uint32_t)b;
	nr_watched = nr_unwatched = refuse_watch = 0;
	targets__init(&t, pids, 2);
	targets__open_pidfds(&t, watch, NULL);
	if (t.fds[0] < 0)
		skip(); /* no pidfd_open (Linux < 5.3) */
	assert_int_equal(nr_watched, 2);
	assert_true(targets__alive(&t, now, unwatch, NULL));
	/* a exits: its pidfd says so on the next call, whatever the time */
	kill(a, SIGKILL);
	assert_int_equal(waitpid(a, NULL, 0), a);
	assert_true(targets__alive(&t, now + 1, unwatch, NULL));
	assert_true(t.gone[0]);
	assert_int_equal(t.fds[0], -1);
	assert_int_equal(nr_unwatched, 1);
	kill(b, SIGKILL);
	assert_int_equal(waitpid(b, NULL, 0), b);
	assert_false(targets__alive(&t, now + 2, unwatch, NULL));
	targets__close(&t);

	/* watch refused: no pidfd, /proc instead, looked up every TARGETS_CHECK_NS */
	a = spawn_sleeper();
	pids[0] = (uint32_t)a;
	refuse_watch = 1;
	targets__init(&t, pids, 1);
	targets__open_pidfds(&t, watch, NULL);
	assert_int_equal(t.fds[0], -1);
	assert_true(targets__alive(&t, now, unwatch, NULL));
	kill(a, SIGKILL);
	assert_int_equal(waitpid(a, NULL, 0), a);
	/* too soon after the last look-up: still counted alive */
	assert_true(targets__alive(&t, now + TARGETS_CHECK_NS / 2, unwatch, NULL));
	assert_false(targets__alive(&t, now + TARGETS_CHECK_NS, unwatch, NULL));
	targets__close(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_command_gate),
		cmocka_unit_test(test_stop_child),
		cmocka_unit_test(test_pidfds_and_proc),
	};

	return cmocka_run_group_tests(tests, setup_all, teardown_all);
}

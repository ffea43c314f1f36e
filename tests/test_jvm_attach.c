// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/symbolize/jvm_attach.c (include/jvm_attach.h): the reply
 * parser, and the whole exchange against a stand-in for HotSpot's attach
 * listener, a child process that does what attachListener_linux.cpp does:
 * on SIGQUIT it looks for .attach_pid<pid> in its working directory, binds
 * /tmp/.java_pid<pid>, takes one request, checks it is
 * "1\0jcmd\0Compiler.perfmap\0\0\0", writes /tmp/perf-<pid>.map and answers
 * "0\n". Also: a process that does not catch SIGQUIT is never signalled
 * (-EPERM, and it lives on); an answer other than 0 is -EPROTO; a perf map
 * that existed before is not removed.
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
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "jvm_attach.h"

static void test_parse_reply(void **state)
{
	int st = 99;

	(void)state;
	assert_int_equal(jvm_attach__parse_reply("0\n", 2, &st), 0);
	assert_int_equal(st, 0);
	assert_int_equal(jvm_attach__parse_reply("0", 1, &st), 0);
	assert_int_equal(jvm_attach__parse_reply("101\nProtocol mismatch", 20, &st), 0);
	assert_int_equal(st, 101);
	assert_int_equal(jvm_attach__parse_reply("-1\nx", 4, &st), 0);
	assert_int_equal(st, -1);
	assert_int_equal(jvm_attach__parse_reply("", 0, &st), -EPROTO);
	assert_int_equal(jvm_attach__parse_reply("x\n", 2, &st), -EPROTO);
	assert_int_equal(jvm_attach__parse_reply("0x\n", 3, &st), -EPROTO);
	assert_int_equal(jvm_attach__parse_reply("99999999999999\n", 15, &st), -EPROTO);
}

static volatile sig_atomic_t quit, term;

static void on_quit(int sig)
{
	(void)sig;
	quit = 1;
}

static void on_term(int sig)
{
	(void)sig;
	term = 1;
}

/* The stand-in listener; answer: the reply to send. Exits 0 when the request was right. */
static void listener(const char *answer)
{
	static const char want[] = "1\0jcmd\0Compiler.perfmap\0\0";
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char trig[64], map[64], req[64];
	struct stat sb;
	size_t len = 0;
	int s, c, ok;
	FILE *f;

	while (!quit)
		pause();
	snprintf(trig, sizeof(trig), ".attach_pid%d", (int)getpid());
	if (stat(trig, &sb))
		_exit(3); /* SIGQUIT without the trigger file: a JVM would print a thread dump */
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/tmp/.java_pid%d", (int)getpid());
	s = socket(AF_UNIX, SOCK_STREAM, 0);
	if (s < 0 || bind(s, (struct sockaddr *)&sa, sizeof(sa)) || listen(s, 1))
		_exit(4);
	c = accept(s, NULL, NULL);
	unlink(sa.sun_path);
	while (c >= 0 && len < sizeof(want)) {
		ssize_t n = read(c, req + len, sizeof(req) - len);

		if (n <= 0)
			break;
		len += (size_t)n;
	}
	ok = len == sizeof(want) && !memcmp(req, want, sizeof(want));
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(map, "w");
	if (f) {
		fputs("7f0000001000 40 long Hot.hotA(long)\n", f);
		fclose(f);
	}
	if (c >= 0 && write(c, answer, strlen(answer)) < 0)
		ok = 0;
	close(c);
	close(s);
	while (!term)
		pause(); /* a JVM runs on */
	_exit(ok ? 0 : 5);
}

/* The last listener started: what a test's teardown removes if an assertion ended it early */
static pid_t listener_pid = -1;

static pid_t start_listener(const char *answer, bool catch_quit)
{
	pid_t pid;

	quit = 0;
	signal(SIGQUIT, catch_quit ? on_quit : SIG_DFL);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		if (!catch_quit)
			for (;;)
				pause();
		signal(SIGTERM, on_term);
		listener(answer);
	}
	signal(SIGQUIT, SIG_DFL);
	usleep(50000); /* the child's SigCgt is set before fork, but let it reach pause() */
	listener_pid = pid;
	return pid;
}

/*
 * Nothing left behind however a test ended: the listener, its perf map (a
 * /tmp/perf-PID.map, which perf record -a would read), socket and trigger.
 */
static int teardown_listener(void **state)
{
	char path[64];

	(void)state;
	if (listener_pid <= 0)
		return 0;
	kill(listener_pid, SIGKILL);
	waitpid(listener_pid, NULL, 0);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)listener_pid);
	unlink(path);
	snprintf(path, sizeof(path), "/tmp/.java_pid%d", (int)listener_pid);
	unlink(path);
	snprintf(path, sizeof(path), ".attach_pid%d", (int)listener_pid);
	unlink(path);
	listener_pid = -1;
	return 0;
}

/* the child's exit status after SIGTERM; -1 when it died of another signal */
static int stop(pid_t pid)
{
	int status;

	kill(pid, SIGTERM);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (pid == listener_pid)
		listener_pid = -1; /* reaped: its pid may be another process's now */
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM ? 0 :
	       WIFEXITED(status)				  ? WEXITSTATUS(status) :
								    -1;
}

static void test_attach_and_remove(void **state)
{
	struct jvm_perfmap pm;
	char map[64], trig[64];
	pid_t pid;

	(void)state;
	pid = start_listener("0\n", true);
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)pid);
	snprintf(trig, sizeof(trig), ".attach_pid%d", (int)pid);
	unlink(map);
	assert_int_equal(jvm_attach__perfmap("/proc", (uint32_t)pid, 3000, &pm), 0);
	assert_true(pm.created);
	assert_int_equal(pm.nspid, (uint32_t)pid);
	assert_int_equal(access(map, F_OK), 0);
	assert_int_equal(access(trig, F_OK), -1); /* the trigger is removed */
	assert_int_equal(jvm_attach__release(&pm), 0);
	assert_int_equal(access(map, F_OK), -1); /* the map it caused, removed */
	assert_int_equal(kill(pid, 0), 0); /* the "JVM" runs on */
	assert_int_equal(stop(pid), 0); /* and got the right request */
}

static void test_existing_map_kept(void **state)
{
	struct jvm_perfmap pm;
	char map[64];
	pid_t pid;
	FILE *f;

	(void)state;
	pid = start_listener("0\n", true);
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)pid);
	f = fopen(map, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(jvm_attach__perfmap("/proc", (uint32_t)pid, 3000, &pm), 0);
	assert_false(pm.created);
	assert_int_equal(jvm_attach__release(&pm), 0);
	assert_int_equal(access(map, F_OK), 0); /* not ours to remove */
	unlink(map);
	stop(pid);
}

static void test_error_answer(void **state)
{
	struct jvm_perfmap pm;
	char map[64];
	pid_t pid;

	(void)state;
	pid = start_listener("1\nUnknown diagnostic command\n", true);
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)pid);
	assert_int_equal(jvm_attach__perfmap("/proc", (uint32_t)pid, 3000, &pm), -EPROTO);
	assert_int_equal(jvm_attach__release(&pm), 0);
	unlink(map);
	stop(pid);
}

static void test_no_sigquit_handler_never_signalled(void **state)
{
	struct jvm_perfmap pm;
	pid_t pid;

	(void)state;
	pid = start_listener("0\n", false);
	assert_int_equal(jvm_attach__perfmap("/proc", (uint32_t)pid, 500, &pm), -EPERM);
	assert_int_equal(jvm_attach__release(&pm), 0);
	assert_int_equal(kill(pid, 0), 0); /* SIGQUIT would have killed it */
	assert_int_equal(stop(pid), 0);
}

static void test_gone(void **state)
{
	struct jvm_perfmap pm;
	pid_t pid = fork();

	(void)state;
	if (!pid)
		_exit(0);
	waitpid(pid, NULL, 0);
	assert_int_equal(jvm_attach__perfmap("/proc", (uint32_t)pid, 500, &pm), -ESRCH);
	assert_int_equal(jvm_attach__release(&pm), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_reply),
		cmocka_unit_test_teardown(test_attach_and_remove, teardown_listener),
		cmocka_unit_test_teardown(test_existing_map_kept, teardown_listener),
		cmocka_unit_test_teardown(test_error_answer, teardown_listener),
		cmocka_unit_test_teardown(test_no_sigquit_handler_never_signalled, teardown_listener),
		cmocka_unit_test_teardown(test_gone, teardown_listener),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

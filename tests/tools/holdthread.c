// SPDX-License-Identifier: MIT
/*
 * holdthread TID COMMAND [ARGS...]: hold thread TID stopped (ptrace(2):
 * PTRACE_SEIZE, then PTRACE_INTERRUPT: a ptrace-stop of that thread alone;
 * the other threads of its process run on) while COMMAND runs, then let it
 * go (PTRACE_DETACH). Exits with COMMAND's status; 2 when TID could not be
 * held, saying why. life.sh holds bpfprof's main thread, the samples'
 * reader, as a backlog of records holds it, while a short process lives.
 * If this tool dies, the kernel detaches the thread (a tracer's exit).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	pid_t tid, child;
	int st;

	if (argc < 3 || (tid = (pid_t)atoi(argv[1])) <= 0) {
		fprintf(stderr, "usage: holdthread TID COMMAND [ARGS...]\n");
		return 2;
	}
	if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) || ptrace(PTRACE_INTERRUPT, tid, NULL, NULL)) {
		fprintf(stderr, "holdthread: thread %d: %s\n", tid, strerror(errno));
		return 2;
	}
	/* the stop: only then is the thread held */
	if (waitpid(tid, &st, __WALL) != tid || !WIFSTOPPED(st)) {
		fprintf(stderr, "holdthread: thread %d did not stop (status %#x)\n", tid, st);
		return 2;
	}
	child = fork();
	if (child < 0) {
		perror("holdthread: fork");
		return 2;
	}
	if (!child) {
		execvp(argv[2], argv + 2);
		fprintf(stderr, "holdthread: %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	while (waitpid(child, &st, 0) < 0 && errno == EINTR)
		;
	if (ptrace(PTRACE_DETACH, tid, NULL, NULL))
		fprintf(stderr, "holdthread: detach %d: %s\n", tid, strerror(errno));
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

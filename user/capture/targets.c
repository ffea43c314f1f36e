// SPDX-License-Identifier: MIT
/* The command and the -p targets of a run, and when they exit (include/targets.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "preflight.h"
#include "targets.h"

void targets__init(struct targets *t, const uint32_t *pids, int nr_pids)
{
	int i;

	memset(t, 0, sizeof(*t));
	t->pids = pids;
	t->nr_pids = nr_pids < TARGETS_MAX ? nr_pids : TARGETS_MAX;
	for (i = 0; i < TARGETS_MAX; i++)
		t->fds[i] = -1;
	t->child = -1;
	t->go = -1;
	t->child_fd = -1;
	t->exec_fd = -1;
}

int targets__start_command(struct targets *t, char **argv)
{
	int fds[2], efds[2], err;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	/* the exec's errno, if it fails: a successful exec closes the pipe (O_CLOEXEC) */
	if (pipe2(efds, O_CLOEXEC)) {
		err = -errno;
		close(fds[0]);
		close(fds[1]);
		return err;
	}
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(fds[0]);
		close(fds[1]);
		close(efds[0]);
		close(efds[1]);
		return err;
	}
	if (pid == 0) {
		char c;

		close(fds[1]);
		close(efds[0]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		if (read(fds[0], &c, 1) != 0)
			_exit(127); /* the profiler failed: never run unprofiled */
		execvp(argv[0], argv);
		err = errno;
		fprintf(stderr, "bpfprof: cannot run '%s': %s\n", argv[0], strerror(err));
		if (write(efds[1], &err, sizeof(err)) != sizeof(err))
			_exit(127);
		_exit(err == ENOENT ? 127 : 126);
	}
	close(fds[0]);
	close(efds[1]);
	t->go = fds[1];
	t->exec_fd = efds[0];
	t->child = pid;
	return 0;
}

int targets__exec_errno(struct targets *t)
{
	int err = 0;

	/* the child wrote before it exited: no wait once it is reaped */
	if (t->exec_fd < 0 || !t->child_done || read(t->exec_fd, &err, sizeof(err)) != sizeof(err))
		return 0;
	return err;
}

int targets__exec_status(struct targets *t)
{
	int err = targets__exec_errno(t);

	return !err ? 0 : err == ENOENT ? 127 : 126;
}

static int pidfd_open_watched(pid_t pid, int (*watch)(void *ctx, int fd), void *ctx)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);

	if (fd >= 0 && watch && watch(ctx, fd)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

void targets__open_pidfds(struct targets *t, int (*watch)(void *ctx, int fd), void *ctx)
{
	int i;

	for (i = 0; i < t->nr_pids && i < TARGETS_MAX_PIDFDS; i++)
		t->fds[i] = pidfd_open_watched((pid_t)t->pids[i], watch, ctx);
	if (t->child > 0)
		t->child_fd = pidfd_open_watched(t->child, watch, ctx);
}

void targets__release(struct targets *t)
{
	if (t->go >= 0) {
		close(t->go); /* the command execs now */
		t->go = -1;
	}
}

bool targets__child_exited(struct targets *t)
{
	if (t->child <= 0 || t->child_done)
		return t->child_done;
	if (waitpid(t->child, &t->child_status, WNOHANG) == t->child)
		t->child_done = true;
	return t->child_done;
}

bool targets__need_looks(const struct targets *t)
{
	if (t->child > 0 && !t->child_done && t->child_fd < 0)
		return true;
	for (int i = 0; i < t->nr_pids; i++)
		if (!t->gone[i] && t->fds[i] < 0)
			return true;
	return false;
}

/* A pidfd turns readable once its process has exited. */
static bool pidfd_exited(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, 0) == 1;
}

/*
 * pid is dead by /proc three times 10 ms apart: a non-leader thread's exec
 * (de_thread, fs/exec.c) has a moment where the old leader is a zombie and
 * the thread not yet in its place, which one look took for the end (-p on a
 * process that execs: "every target process has exited" while it ran on).
 */
static bool process_dead(uint32_t pid)
{
	for (int i = 0; i < 3; i++) {
		if (i)
			usleep(10000);
		if (preflight__process_alive(pid))
			return false;
	}
	return true;
}

bool targets__alive(struct targets *t, uint64_t now, void (*unwatch)(void *ctx, int fd), void *ctx)
{
	bool any = false, slow = now - t->last_check >= TARGETS_CHECK_NS;
	int i;

	for (i = 0; i < t->nr_pids; i++) {
		if (t->gone[i])
			continue;
		if (t->fds[i] >= 0) {
			t->gone[i] = pidfd_exited(t->fds[i]);
			if (t->gone[i]) {
				if (unwatch)
					unwatch(ctx, t->fds[i]);
				close(t->fds[i]);
				t->fds[i] = -1;
				/*
				 * a thread of it lives on (a kernel whose pidfd
				 * reports the leader's exit, e.g. at a non-leader
				 * thread's exec): watched by /proc from now on
				 */
				t->gone[i] = process_dead(t->pids[i]);
			}
		} else if (slow) {
			t->gone[i] = process_dead(t->pids[i]);
		}
		any |= !t->gone[i];
	}
	if (slow)
		t->last_check = now;
	return any;
}

void targets__stop_child(struct targets *t)
{
	if (t->child <= 0 || t->child_done)
		return;
	kill(t->child, SIGTERM);
	while (waitpid(t->child, &t->child_status, 0) < 0 && errno == EINTR)
		; /* a signal now is the first of two: the second abandons the outputs */
	t->child_done = true;
}

void targets__close(struct targets *t)
{
	int i;

	if (t->exec_fd >= 0) {
		close(t->exec_fd);
		t->exec_fd = -1;
	}
	if (t->go >= 0) {
		/* never released: a byte instead of EOF tells the child to exit unrun */
		if (write(t->go, "x", 1) != 1)
			kill(t->child, SIGKILL);
		close(t->go);
		t->go = -1;
	}
	if (t->child > 0 && !t->child_done) {
		waitpid(t->child, &t->child_status, 0);
		t->child_done = true;
	}
	for (i = 0; i < t->nr_pids; i++)
		if (t->fds[i] >= 0) {
			close(t->fds[i]);
			t->fds[i] = -1;
		}
	if (t->child_fd >= 0) {
		close(t->child_fd);
		t->child_fd = -1;
	}
}

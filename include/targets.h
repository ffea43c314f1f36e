/* SPDX-License-Identifier: MIT */
/*
 * The processes a run profiles, as capture waits on them: the command that
 * bpfprof starts (forked, held before its exec until it is a target: a pipe
 * "gate" whose EOF lets it exec, a byte makes it exit unrun) and the -p
 * targets. Exits end the run as soon as they happen: the command and the
 * first TARGETS_MAX_PIDFDS -p targets get a pidfd (pidfd_open(2), Linux 5.3)
 * that the caller's poll waits on; the others are looked up in /proc every
 * TARGETS_CHECK_NS.
 */
#ifndef BPFPROF_TARGETS_H
#define BPFPROF_TARGETS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define TARGETS_MAX 1024 /* -p targets: CLI_MAX_PIDS */
#define TARGETS_MAX_PIDFDS 64
#define TARGETS_CHECK_NS 200000000ULL

struct targets {
	const uint32_t *pids; /* borrowed: the -p list */
	int nr_pids;
	int fds[TARGETS_MAX]; /* pidfd of each -p target, -1 for none */
	bool gone[TARGETS_MAX];
	pid_t child; /* the command, -1 when there is none */
	int go; /* the gate's write end; -1 once released or closed */
	int child_fd; /* the command's pidfd, -1 for none */
	bool child_done; /* reaped; its wait status in child_status */
	int child_status;
	int exec_fd; /* read end of the pipe where the child writes its exec's errno; -1 for none */
	uint64_t last_check; /* ns: the last /proc look-up of targets without a pidfd */
};

/* No command yet, nr_pids (at most TARGETS_MAX) -p targets, no pidfds. */
void targets__init(struct targets *t, const uint32_t *pids, int nr_pids);

/*
 * Fork the command argv (NULL-terminated), held before its exec. Returns 0
 * or -errno (no child then).
 */
int targets__start_command(struct targets *t, char **argv);

/*
 * Open the pidfds and hand each to watch(ctx, fd), which returns 0 or an
 * error (the fd is then closed and that process looked up in /proc instead).
 */
void targets__open_pidfds(struct targets *t, int (*watch)(void *ctx, int fd), void *ctx);

/* Let the command exec (EOF on its gate). */
void targets__release(struct targets *t);

/* Whether the command has exited (reaped then, status kept). */
bool targets__child_exited(struct targets *t);

/*
 * Whether an exit can be missed by a poll on the pidfds: the command, or a
 * -p target still running, has no pidfd (more than TARGETS_MAX_PIDFDS, a
 * kernel before 5.3, or one the poll refused), so it must be looked for.
 */
bool targets__need_looks(const struct targets *t);

/*
 * Whether any -p target still runs at time now (ns, CLOCK_MONOTONIC): a
 * pidfd is polled every call, and closed once its process is gone (after
 * unwatch(ctx, fd) when unwatch is not NULL); the others are looked up in
 * /proc every TARGETS_CHECK_NS.
 */
bool targets__alive(struct targets *t, uint64_t now, void (*unwatch)(void *ctx, int fd), void *ctx);

/*
 * After the command was reaped: the errno of its failed exec (ENOENT,
 * EACCES, ENOEXEC...), 0 when it ran (whatever its exit status) or was
 * never released.
 */
int targets__exec_errno(struct targets *t);

/*
 * The exit status of a wrapper whose command could not be started, as
 * shells, time(1) and timeout(1) give it: 127 when not found (ENOENT), 126
 * when found but not executable; 0 when it ran or was never released.
 */
int targets__exec_status(struct targets *t);

/* The run ended first (duration, signal): SIGTERM to the command, as perf does, and reap it. */
void targets__stop_child(struct targets *t);

/*
 * The end: a command never released is told to exit unrun (a byte on its
 * gate) and reaped; every pidfd is closed.
 */
void targets__close(struct targets *t);

#endif /* BPFPROF_TARGETS_H */

// SPDX-License-Identifier: MIT
/*
 * Off-CPU test workload: each round runs three parts for fixed lengths of
 * wall time, each in its own function so that profiles can name them:
 *
 *   spin_part  burns the CPU for SPIN_US        (never blocks)
 *   sleep_part blocks in nanosleep for SLEEP_US
 *   pipe_part  blocks in read(2) on a pipe that a second thread (feeder)
 *              writes to PIPE_US after being told to
 *
 * The design split of a round is 2 : 4 : 2 (spin : sleep : pipe). Timer
 * slack and wake-up latency lengthen the blocks on a busy machine, so the
 * workload also measures the wall time each part really took and prints
 * the totals at exit (stdout, one "part ns" line each): the off-CPU time a
 * profiler finds in sleep_part and pipe_part should match those.
 * The blocking system calls are made from the parts themselves (x86-64
 * syscall instruction), not through libc: libc is built without frame
 * pointers, and a frame-pointer walk that starts inside a libc function
 * skips that function's caller (perf record -g loses it too), so the part
 * would vanish from the stack. Built with frame pointers and without
 * inlining (see the Makefile).
 *
 * usage: offcpu [SECONDS] [SLEEP_US] [SPIN_US]   (default 3 s, 4000 us; pipe
 * is half of SLEEP_US, and spin too unless SPIN_US says otherwise: 0 for a
 * run that only needs the blocks)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
static int go_pipe[2], data_pipe[2];
static long sleep_us = 4000;

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

/* A system call made right here, so that the user stack starts in the calling function. */
static inline __attribute__((always_inline)) long syscall3(long nr, long a, long b, long c)
{
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r11", "memory");
	return ret;
}

__attribute__((noinline)) void spin_part(long us)
{
	unsigned long long end = now_ns() + (unsigned long long)us * 1000;
	unsigned long x = sink;

	while (now_ns() < end)
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
}

__attribute__((noinline)) void sleep_part(long us)
{
	struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = us % 1000000 * 1000 };

	syscall3(SYS_nanosleep, (long)&ts, 0, 0);
}

__attribute__((noinline)) void pipe_part(void)
{
	char c = 'g';

	if (syscall3(SYS_write, go_pipe[1], (long)&c, 1) != 1 ||
	    syscall3(SYS_read, data_pipe[0], (long)&c, 1) != 1)
		exit(1);
}

/* The feeder: told to go, waits PIPE_US, then gives pipe_part its byte. */
__attribute__((noinline)) void *feeder(void *arg)
{
	char c;

	while (syscall3(SYS_read, go_pipe[0], (long)&c, 1) == 1) {
		struct timespec ts = { .tv_sec = 0, .tv_nsec = sleep_us / 2 * 1000 };

		syscall3(SYS_nanosleep, (long)&ts, 0, 0);
		if (syscall3(SYS_write, data_pipe[1], (long)&c, 1) != 1)
			break;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 3;
	unsigned long long end, t0, t1, t2, t3, spin = 0, sleep = 0, pipe_ns = 0;
	long spin_us;
	pthread_t t;

	if (argc > 2)
		sleep_us = atol(argv[2]);
	spin_us = argc > 3 ? atol(argv[3]) : sleep_us / 2;
	if (pipe(go_pipe) || pipe(data_pipe) || pthread_create(&t, NULL, feeder, NULL))
		return 1;
	end = now_ns() + (unsigned long long)(seconds * 1e9);
	while ((t0 = now_ns()) < end) {
		spin_part(spin_us);
		t1 = now_ns();
		sleep_part(sleep_us);
		t2 = now_ns();
		pipe_part();
		t3 = now_ns();
		spin += t1 - t0;
		sleep += t2 - t1;
		pipe_ns += t3 - t2;
	}
	close(go_pipe[1]);
	pthread_join(t, NULL);
	printf("spin_part %llu\nsleep_part %llu\npipe_part %llu\n", spin, sleep, pipe_ns);
	return 0;
}

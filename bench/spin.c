// SPDX-License-Identifier: MIT
/*
 * Fixed-work CPU load for the overhead benchmarks: one worker process per
 * online CPU, pinned to it, each running the same number of iterations of an
 * integer loop at the bottom of a DEPTH-deep call chain (built with frame
 * pointers, so a profiler has a real stack to walk on every sample). Prints
 * the wall time from the start of the workers to the end of the slowest, so
 * anything a profiler takes from the CPUs shows up as a longer time.
 *
 * usage: spin [-i ITERATIONS] [-d DEPTH] [-j WORKERS]
 * prints: "elapsed_s S workers N iterations I"
 * SIGTERM or SIGINT stops the workers too (scripts use a huge -i as an
 * endless load and stop it by the parent's pid).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_setaffinity */
#endif
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
static pid_t workers_pid[1024];
static long nr_workers;

static void on_term(int sig)
{
	for (long i = 0; i < nr_workers; i++)
		kill(workers_pid[i], SIGKILL);
	_exit(128 + sig);
}

__attribute__((noinline)) static unsigned long leaf(unsigned long n, unsigned long x)
{
	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

/* one frame per level, so every sample carries depth + a few frames */
__attribute__((noinline)) static unsigned long descend(unsigned depth, unsigned long n, unsigned long x)
{
	if (!depth)
		return leaf(n, x);
	x = descend(depth - 1, n, x);
	sink = x;	/* not a tail call: the frame stays on the stack */
	return x;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void work(unsigned long iters, unsigned depth)
{
	const unsigned long chunk = 1000000;
	unsigned long done = 0, x = 1;

	/* return to the top now and then, as real programs do */
	while (done < iters) {
		unsigned long n = iters - done < chunk ? iters - done : chunk;

		x = descend(depth, n, x);
		done += n;
	}
	sink = x;
}

int main(int argc, char **argv)
{
	unsigned long iters = 2000000000UL;
	unsigned depth = 16;
	long workers = sysconf(_SC_NPROCESSORS_ONLN), i;
	double t0, t1;
	int opt;

	while ((opt = getopt(argc, argv, "i:d:j:")) != -1) {
		switch (opt) {
		case 'i': iters = strtoul(optarg, NULL, 0); break;
		case 'd': depth = strtoul(optarg, NULL, 0); break;
		case 'j': workers = strtol(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: spin [-i ITERATIONS] [-d DEPTH] [-j WORKERS]\n");
			return 2;
		}
	}
	if (workers < 1)
		workers = 1;
	if (workers > (long)(sizeof(workers_pid) / sizeof(workers_pid[0])))
		workers = sizeof(workers_pid) / sizeof(workers_pid[0]);
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	t0 = now_s();
	for (i = 0; i < workers; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (!pid) {
			cpu_set_t set;

			signal(SIGTERM, SIG_DFL);
			signal(SIGINT, SIG_DFL);
			CPU_ZERO(&set);
			CPU_SET(i % sysconf(_SC_NPROCESSORS_ONLN), &set);
			sched_setaffinity(0, sizeof(set), &set);
			work(iters, depth);
			_exit(0);
		}
		workers_pid[nr_workers++] = pid;
	}
	for (i = 0; i < workers; i++)
		wait(NULL);
	t1 = now_s();
	printf("elapsed_s %.4f workers %ld iterations %lu\n", t1 - t0, workers, iters);
	return 0;
}

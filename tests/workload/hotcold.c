// SPDX-License-Identifier: MIT
/*
 * Test and demo workload with a known CPU split: hot_a does 3 units of work
 * for every unit hot_b does, so hot_a holds 75 % and hot_b 25 % of the
 * samples. hot_a is reached from two callers (via_x: 2 units, via_y: 1 unit)
 * and hot_b from one (via_z), so callers can be checked too, and no single
 * return address covers nearly all samples (pprof drops such a frame).
 * Each round's unit is drawn at random between 0.5 and 1.5 of UNIT (the 3:1
 * split holds in every round): a round of fixed length can fall into step
 * with the sampling timer, whose period is just as regular, so that every
 * sample lands at the same few points of the round (seen: 87 % hot_a at
 * 99 Hz); rounds of random length cannot.
 * hot_a and hot_b, the same code, start on a 64-byte boundary each: at
 * different offsets their loops ran at different speeds (the split came
 * out 76/23 under perf record as under bpfprof, and a 4-sigma check
 * failed under load at 80/17).
 * Built with frame pointers and without inlining (see the Makefile).
 *
 * usage: hotcold [SECONDS] [--fork] [--duty PCT] [--cpu]   (default 5 s;
 * --fork runs the same loop in a child process too, for multi-process
 * profiles; --duty sleeps after each round so that the rounds take PCT % of
 * the wall time, 1-100, default 100: a workload that lives through a long
 * check, such as continuous mode's intervals, at a fraction of the CPU.
 * Samples fall only while it runs, so the split and callers stay as they are;
 * --cpu makes SECONDS the CPU time each process spends rather than wall
 * time, so that a profile of it holds about SECONDS x HZ samples however
 * loaded the machine is)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define UNIT 200000

static volatile unsigned long sink;

__attribute__((noinline, aligned(64))) void hot_a(unsigned long n)
{
	unsigned long x = sink;

	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
}

__attribute__((noinline, aligned(64))) void hot_b(unsigned long n)
{
	unsigned long x = sink;

	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
}

__attribute__((noinline)) void via_x(unsigned long unit)
{
	hot_a(2 * unit);
}

__attribute__((noinline)) void via_y(unsigned long unit)
{
	hot_a(unit);
}

__attribute__((noinline)) void via_z(unsigned long unit)
{
	hot_b(unit);
}

static clockid_t clock_id = CLOCK_MONOTONIC;

static double now(void)
{
	struct timespec ts;

	clock_gettime(clock_id, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Sleep for SECONDS (under a second): the idle part of a --duty round. */
static void pause_for(double seconds)
{
	struct timespec ts = { 0, (long)(seconds * 1e9) };

	if (seconds > 0 && seconds < 1)
		nanosleep(&ts, NULL);
}

__attribute__((noinline)) void run(double seconds, int duty)
{
	double end = now() + seconds;
	unsigned int seed = (unsigned int)getpid();

	while (now() < end) {
		unsigned long unit = UNIT / 2 + (unsigned long)rand_r(&seed) % UNIT;
		double t0 = now();

		via_x(unit);
		via_y(unit);
		via_z(unit);
		if (duty < 100)
			pause_for((now() - t0) * (100 - duty) / duty);
	}
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 5.0;
	int duty = 100, fork_too = 0;
	pid_t child = -1;

	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--fork"))
			fork_too = 1;
		else if (!strcmp(argv[i], "--duty") && i + 1 < argc)
			duty = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--cpu"))
			clock_id = CLOCK_PROCESS_CPUTIME_ID;
	}
	if (duty < 1 || duty > 100) {
		fprintf(stderr, "hotcold: --duty wants 1-100\n");
		return 2;
	}
	if (fork_too)
		child = fork();
	run(seconds, duty);
	if (child > 0)
		waitpid(child, NULL, 0);
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * A workload built like distribution code, -O2 -fomit-frame-pointer, with
 * known callers, for the unwinding tests (tests/integration/unwind.sh):
 *
 *   main -> run -> via_x -> hot_a          (main thread, 4 of 8 rounds)
 *   main -> run -> via_y -> hot_b          (main thread, 2 of 8 rounds)
 *   main -> run -> via_lib -> lib_hot      (main thread, 2 of 8 rounds; a PLT call
 *                                           into libnofp_lib.so)
 *   SIGALRM every 20 ms -> on_alarm -> hot_sig   (on the main thread's stack,
 *                                           through the kernel's signal frame
 *                                           and __restore_rt)
 *   worker thread: worker -> via_t -> hot_t (start_thread, clone3)
 *
 * Every function is noinline and does work after its call, so that neither
 * inlining nor a tail call removes a frame. Usage: nofp SECONDS [ALARM_US]:
 * ALARM_US (default 20000) is the SIGALRM period; a shorter one gives the
 * handler more of a short profile's samples.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

unsigned long lib_hot(unsigned long n);

static volatile unsigned long sink;
static volatile int done;

#define SPIN(name)                                                           \
	__attribute__((noinline)) static unsigned long name(unsigned long n) \
	{                                                                    \
		unsigned long x = n;                                         \
		for (unsigned long i = 0; i < n; i++)                        \
			x = x * 2862933555777941757UL + 3037000493UL;        \
		sink = x;                                                    \
		return x;                                                    \
	}

SPIN(hot_a)
SPIN(hot_b)
SPIN(hot_t)
SPIN(hot_sig)

#define CALLER(name, callee)                                                 \
	__attribute__((noinline)) static unsigned long name(unsigned long n) \
	{                                                                    \
		unsigned long r = callee(n);                                 \
		sink += r;                                                   \
		return r ^ n;                                                \
	}

CALLER(via_x, hot_a)
CALLER(via_y, hot_b)
CALLER(via_lib, lib_hot)
CALLER(via_t, hot_t)

static void on_alarm(int sig)
{
	sink += hot_sig(200000);
}

static void *worker(void *arg)
{
	while (!done)
		sink += via_t(1000000);
	return NULL;
}

__attribute__((noinline)) static void run(double seconds)
{
	struct timespec t0, t;
	unsigned long round = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		switch (round++ % 8) {
		case 0:
		case 1:
		case 2:
		case 3:
			sink += via_x(1000000);
			break;
		case 4:
		case 5:
			sink += via_y(1000000);
			break;
		default:
			sink += via_lib(1000000);
			break;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
	sink += round;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	long alarm_us = argc > 2 ? atol(argv[2]) : 20000;
	struct timeval every = { alarm_us / 1000000, alarm_us % 1000000 };
	struct itimerval it = { every, every };
	pthread_t th;

	if (alarm_us < 1000)
		return 2;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	if (pthread_create(&th, NULL, worker, NULL))
		return 1;
	run(argc > 1 ? atof(argv[1]) : 3);
	done = 1;
	pthread_join(th, NULL);
	return 0;
}

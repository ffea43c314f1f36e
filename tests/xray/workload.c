// SPDX-License-Identifier: MIT
/*
 * XRay workload for `bpfprof xray` tests: a known call graph, run under the
 * XRay runtime in the mode given on the command line, then finalized and
 * flushed so the trace file is complete. Build with
 *   clang -O1 -fxray-instrument -fxray-instruction-threshold=1 workload.c -o xray-workload -lpthread
 * Run with XRAY_OPTIONS="patch_premain=false xray_logfile_base=DIR/xray-log."
 * (the program selects, initializes, finalizes and flushes the mode itself).
 *
 *   main ─ run(ITERS) ─┬─ via_x ─ hot_a            (called ITERS times)
 *                      ├─ via_y ─┬─ hot_a
 *                      │         └─ hot_b          (argument logged)
 *                      ├─ rec(DEPTH)               (recursion)
 *                      └─ tail_caller ⇒ hot_b      (tail call: Tail_Exit)
 *   worker thread: run(ITERS / 2)
 *
 * Usage: xray-workload fdr|basic [ITERS [THREADS]] (THREADS 1: no worker).
 * Known calls for I iterations per thread: hot_a 2I, hot_b 2I, spin 4I + 5 ceil(I/16).
 * XRAY_WORKLOAD_CONFIG replaces the
 * mode's configuration string (e.g. a larger buffer_max for the benchmark).
 */
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The runtime's C entry points (xray_log_interface.h and xray_interface.h are C++ headers). */
extern int __xray_log_select_mode(const char *mode);
extern int __xray_log_init_mode(const char *mode, const char *config);
extern int __xray_log_finalize(void);
extern int __xray_log_flushLog(void);
extern int __xray_patch(void);

static volatile unsigned long sink;

__attribute__((noinline)) void spin(unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		sink += i;
}

__attribute__((noinline)) void hot_a(void)
{
	spin(400);
}

__attribute__((noinline, xray_log_args(1))) void hot_b(unsigned n)
{
	spin(n);
}

__attribute__((noinline)) void via_x(void)
{
	hot_a();
}

__attribute__((noinline)) void via_y(unsigned i)
{
	hot_a();
	hot_b(100 + (i & 7));
}

__attribute__((noinline)) unsigned rec(unsigned d)
{
	if (!d)
		return 0;
	spin(20);
	return rec(d - 1) + 1;
}

/* ends in a jump to hot_b at -O1 and above: XRay logs a Tail_Exit for tail_caller */
__attribute__((noinline)) void tail_caller(unsigned n)
{
	sink++;
	hot_b(n);
}

__attribute__((noinline, xray_always_instrument)) void event(unsigned i)
{
	char msg[16];
	int len = snprintf(msg, sizeof(msg), "iter %u", i);

	__xray_customevent(msg, (size_t)len);
}

__attribute__((noinline)) void run(unsigned iters)
{
	for (unsigned i = 0; i < iters; i++) {
		via_x();
		via_y(i);
		if (!(i % 16))
			rec(5);
		tail_caller(50);
		if (!(i % 256))
			event(i);
	}
}

static void *worker(void *arg)
{
	run((unsigned)(size_t)arg);
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned iters = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 0) : 2000;
	const char *mode = argc > 1 && !strcmp(argv[1], "basic") ? "xray-basic" : "xray-fdr";
	const char *cfg = !strcmp(mode, "xray-fdr") ?
		"func_duration_threshold_us=0 buffer_size=65536 buffer_max=1024" :
		"func_duration_threshold_us=0 max_stack_depth=64";
	bool worker_thread = !(argc > 3 && !strcmp(argv[3], "1"));
	pthread_t t;

	if (getenv("XRAY_WORKLOAD_CONFIG") && *getenv("XRAY_WORKLOAD_CONFIG"))
		cfg = getenv("XRAY_WORKLOAD_CONFIG");

	/* clang 14's runtime registers the modes lazily: select before init */
	if (__xray_log_select_mode(mode) != 0 ||
	    __xray_log_init_mode(mode, cfg) != 2 /* XRAY_LOG_INITIALIZED */) {
		fprintf(stderr, "xray-workload: cannot initialize %s\n", mode);
		return 1;
	}
	__xray_patch();
	if (worker_thread && pthread_create(&t, NULL, worker, (void *)(size_t)(iters / 2)))
		return 1;
	run(iters);
	if (worker_thread)
		pthread_join(t, NULL);
	__xray_log_finalize();
	__xray_log_flushLog();
	return 0;
}

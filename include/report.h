/* SPDX-License-Identifier: MIT */
/*
 * End-of-run summary on stderr: duration, samples, lost samples, processes
 * and the top functions by self samples (the leaf frame of each callchain,
 * kernel leaf when the sample was taken in the kernel), as perf report's
 * "Self" column counts them.
 */
#ifndef BPFPROF_REPORT_H
#define BPFPROF_REPORT_H

#include <stdio.h>
#include "profile.h"

struct report_top {
	const char *
		func; /* the function, else "DSO+0xADDR" (profile_location.addr_name), NULL when unnamed */
	const char *dso;
	uint64_t self; /* profile__weight: samples, or µs blocked in the off-CPU view */
};

/*
 * Fill top[0..n) with the n functions with the most self samples (in
 * p->view: off-CPU, the most µs blocked, by user leaf), most first, ties by
 * name. The profile must be symbolized. Returns the number
 * filled (≤ n) or -ENOMEM.
 */
int report__top(const struct profile *p, struct report_top *top, int n);

/* Print the summary. duration_s: wall time sampled, seconds. */
void report__summary(FILE *f, const struct profile *p, double duration_s, int top_n);

/*
 * When p->offcpu: the off-CPU line (blocks, threshold, time blocked, lost)
 * and the top_n functions by time blocked, each block's user leaf (its
 * kernel leaf is the scheduler's), or its kernel leaf for kernel threads.
 */
void report__offcpu_summary(FILE *f, const struct profile *p, int top_n);

/*
 * Why samples of process proc in code without a file stayed unnamed, and
 * what would name them, written into buf (NUL-terminated). Returns false
 * to print the line without a reason.
 */
typedef bool (*report_jit_why_fn)(void *ctx, const struct profile *p, uint32_t proc, char *buf,
				  size_t size);

/*
 * For each process whose samples were taken in executable memory without a
 * file behind it (anonymous or memfd: JIT code) and stayed unnamed: "bpfprof: N samples (X %) in JIT code of pid P (COMM)
 * not named: WHY". Counts samples taken in user mode (leaf frame). Returns
 * the number of such samples.
 */
uint64_t report__unnamed_jit(FILE *f, const struct profile *p, report_jit_why_fn why, void *ctx);

#endif /* BPFPROF_REPORT_H */

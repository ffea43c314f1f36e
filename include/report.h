/* SPDX-License-Identifier: MIT */
/*
 * End-of-run summary on stderr: duration, samples, lost samples, processes
 * and the top functions by self samples (the leaf frame of each callchain,
 * kernel leaf when the sample was taken in the kernel), as perf report's
 * "Self" column counts them; then the counters of each stage (lost samples,
 * off-CPU blocks, the walks, Python, what the run holds), one line each.
 * Printed after each profile (the run, or one --interval), in this order:
 * report__summary, report__unnamed_jit, report__lost, report__offcpu_summary,
 * report__offcpu_counts, report__walks, report__held, report__python, report__v8,
 * report__bpf_cost, report__unwind_check, report__user_stacks.
 */
#ifndef BPFPROF_REPORT_H
#define BPFPROF_REPORT_H

#include <stdio.h>
#include "profile.h"
#include "interp_v8.h"
#include "python_procs.h"
#include "session.h"

/* the modules whose counters the summary prints (their headers) */
struct maps_cache;
struct mmap_events;
struct notice_thread;
struct symbolizer;
struct unwind_cache;
struct unwind_check;
struct unwind_check_stats;
struct unwind_copies;
struct unwinder;

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

/*
 * The counters a summary gives per profile (the run, or one --interval).
 * Each only grows while the run lasts, so a profile's figures are a
 * snapshot taken when it ends less one taken when it began
 * (report__counters_diff), never fields subtracted one by one.
 */
struct report_counters {
	uint64_t dropped; /* samples lost: the ring buffer was full (session__stats) */
	struct session_offcpu_stats off; /* --off-cpu's blocks (session__offcpu_stats) */
	/*
	 * Python's (python_procs__stats): zeros without it. nr_procs,
	 * nr_unsupported and versions are what was found so far, not counters.
	 */
	struct python_stats py;
};

/*
 * d = now - before, counter by counter; the Python fields that are not
 * counters are now's. A counter below its earlier value (none should be)
 * gives 0. d may be now.
 */
void report__counters_diff(const struct report_counters *now, const struct report_counters *before,
			   struct report_counters *d);

/*
 * The progress line on a terminal, "\r" first so that the next one replaces
 * it: elapsed_s seconds sampled, the profile's samples, the samples lost.
 */
void report__progress(FILE *f, double elapsed_s, uint64_t samples, uint64_t lost);

/*
 * When lost: "lost N samples: ring buffer full (cpuC: N ...)" with the
 * drops of each of nr_cpus CPUs since the start (per_cpu), and a
 * --ringbuf-size four times ringbuf_bytes (bytes) to try.
 */
void report__lost(FILE *f, uint64_t lost, const uint64_t *per_cpu, int nr_cpus,
		  uint64_t ringbuf_bytes);

/*
 * --off-cpu: the profile's blocks left out (off: its counters' difference;
 * under thresh_us µs, with kernel frames only), those not followed (past
 * BPFPROF_MAX_OFFCPU_PENDING) and those lost (warnings).
 */
void report__offcpu_counts(FILE *f, const struct session_offcpu_stats *off, uint64_t thresh_us);

/*
 * How the user-stack walks ended since the start: bpf (session__walk_stats)
 * plus the walks of stack copies (c), through unwinder__print_walks with
 * u's tables (mode "dwarf" or "fp") and roots (unwinder__root_walks since
 * the start); at -v the unwind cache (uc), the copies' and the mmap events'
 * (m) counters. u, c, uc and m may be NULL.
 */
void report__walks(FILE *f, const uint64_t bpf[BPFPROF_STAT_NR], uint64_t roots, struct unwinder *u,
		   const struct unwind_copies *c, struct unwind_cache *uc, struct mmap_events *m,
		   const char *mode);

/*
 * At -v only, what the run holds after each profile (bounded by design):
 * RSS and descriptors (/proc/self), sy's files and tables, u's processes
 * and entries, mc's remembered maps, the BPF maps' entries (me), the
 * notices' thread's counters (nt). u and nt may be NULL.
 */
void report__held(FILE *f, const struct symbolizer *sy, struct unwinder *u,
		  const struct maps_cache *mc, const struct session_map_entries *me,
		  struct notice_thread *nt);

/*
 * Python frames: the profile's samples of Python processes (st: the
 * counters' difference, report_counters.py), how many had Python frames
 * and why the others had none; nothing when no interpreter was found. A
 * plain struct, whichever module counts it.
 */
void report__python(FILE *f, const struct python_stats *st);

/*
 * The HotSpot JVMs found so far (interp_hotspot.h), for the summary: with
 * -v one line per JVM (its version and the offsets read, or why its tables
 * could not be used), the first HOTSPOT_STATS_JVMS of them; nothing when
 * no process mapped libjvm.so.
 */
struct hotspot_stats;
void report__hotspot(FILE *f, const struct hotspot_stats *st);

/*
 * -v: V8 found so far (interp_v8.h's counters since the start, not per
 * profile): processes with a usable V8, with unusable metadata, node files
 * unreadable or without metadata; nothing when no file was read. Then per
 * process (the first V8_STATS_PROCS) its samples with JavaScript frames
 * and why the others had none, the naming's cost, and the BPF walk's
 * counters (bpf: BPFPROF_STAT_V8_*, since the start).
 */
void report__v8(FILE *f, const struct v8_stats *st, const uint64_t bpf[BPFPROF_STAT_NR]);

/* -v: the BPF program's cost a sample (run_ns over runs, kernel.bpf_stats_enabled), when it ran. */
void report__bpf_cost(uint64_t run_ns, uint64_t runs);

/*
 * --check-unwind: check one copied stack (rec, size bytes) against libdwfl
 * (unwind_check__sample); at -vv print both walks of one that differs.
 * c NULL: nothing.
 */
void report__check_stack(struct unwind_check *c, const struct bpfprof_ustack_copy *rec,
			 size_t size);

/* --check-unwind: the verdicts of every stack checked so far. */
void report__unwind_check(FILE *f, const struct unwind_check_stats *st);

/* --check-user-stacks: user walks against the kernel's (session__check_stats) since the start. */
void report__user_stacks(FILE *f, uint64_t same, uint64_t shorter, uint64_t differ);

#endif /* BPFPROF_REPORT_H */

/* SPDX-License-Identifier: MIT */
/*
 * An interval: the ring-buffer records of one profile period (the whole
 * run, or one --interval) → the aggregator → its outputs (run_outputs.h)
 * and its summary (report.h). It owns the period's profile and
 * aggregator, the run's clock of periods (its start, the -d deadline, the
 * next --interval boundary, and so each period's cut), the records read
 * past a cut and carried to the next period, and the record path's buffers
 * for stack copies. What it borrows (options, outputs, symbolizer, process
 * table, the session and the unwinder's parts) is main's.
 *
 * Order: interval__new; interval__begin (the first period's outputs, before
 * the session); interval__attach once the session is set up;
 * interval__start when sampling starts; then, while polling, the session's
 * records through interval__on_record and interval__on_notice,
 * interval__release and interval__batch_read after each poll, and at each
 * boundary passed interval__end_at_boundary then interval__begin_next; at
 * the run's end interval__last, the session stopped, interval__take_rest,
 * interval__end; interval__free.
 *
 * Times are CLOCK_MONOTONIC ns, as the records' stamps (bpf_ktime_get_ns).
 * Records are the ring buffer's (include/bpfprof_abi.h). interval.c calls
 * the session (session.h), so it is linked with main.o and session.o, not
 * into the library; tests/test_interval.c links it with stubs of those calls.
 */
#ifndef BPFPROF_INTERVAL_H
#define BPFPROF_INTERVAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cli.h"

struct interval;
struct interps;
struct proc_table;
struct profile;
struct run_outputs;
struct session;
struct symbolizer;
struct unwind_cache;
struct unwind_check;
struct unwind_copies;
struct unwinder;

/*
 * The capture's parts, set up with the session: main's (main.c), lent to the
 * interval from interval__attach on. NULL: not in use.
 */
struct interval_capture {
	struct session *s;
	/* the interpreters, Python's frames merged into the samples' stacks (interp.h) */
	struct interps *interps;
	/* --call-graph: the BPF walker's view of the processes, for the summary's walk counters */
	struct unwinder *unwinder;
	/* --unwind-cache: built tables kept across runs (NULL: none, or refused) */
	struct unwind_cache *unwind_cache;
	/* --call-graph dwarf: samples sent with a stack copy for want of tables, walked here (unwind_copies.h) */
	struct unwind_copies *copies;
	/* --check-unwind: libdwfl's unwind of copied stacks against the BPF walk */
	struct unwind_check *checker;
};

/*
 * The run's intervals, none begun yet. cfg, out, sy and procs are borrowed
 * for its life. With --call-graph dwarf, the buffers a stack copy's sample
 * is made in are allocated here. Returns NULL on -ENOMEM.
 */
struct interval *interval__new(const struct bpfprof_config *cfg, struct run_outputs *out,
			       struct symbolizer *sy, struct proc_table *procs);

/* Drop the period in hand (interval__drop) and free the carried records. NULL is a no-op. */
void interval__free(struct interval *iv);

/*
 * A fresh profile, aggregator and outputs (temporary files) for a period.
 * boundary: when the last period ended (its ring buffer drained at its
 * boundary), 0 for the first. It starts there, not once the last period is
 * written: the samples queued meanwhile are its own, and stamps one
 * interval apart do not share a second (a 1 s interval written in 0.6 s
 * used to overwrite the previous one's files). Returns 0 or -errno
 * (message printed where the outputs fail); interval__drop either way.
 */
int interval__begin(struct interval *iv, uint64_t boundary);

/* Drop what interval__begin made: streams, temporaries (if not committed), profile. */
void interval__drop(struct interval *iv);

/* The session and the unwinder's parts (copied), and the interpreters' hook on the period's aggregator. */
void interval__attach(struct interval *iv, const struct interval_capture *c);

/*
 * The session's on_record (session_record_fn; ctx: the interval). A stack
 * copy is walked here (or kept until its process is registered); a record
 * stamped at or past the cut is carried to the next period and stops the
 * ring buffer's consumer (-ECANCELED, after libbpf has counted it consumed),
 * or dropped in the last period. The others are queued to the aggregator
 * (agg__queue): in the profile once the poll's interval__release has run.
 * Returns 0, -ECANCELED, or -ENOMEM.
 */
int interval__on_record(void *ctx, void *data, size_t size);

/* The session's on_notice: a process's first samples noticed (proc_table__notice). */
int interval__on_notice(void *ctx, void *data, size_t size);

/*
 * The run loop starts: the first period's start, its first boundary and its
 * cut, from since_ns (CLOCK_MONOTONIC ns, when the profiled samples began:
 * -a's at the events' attach, session__sampling_ns), else (0, or a time
 * to come) from now. Under -a samples are recorded from the attach on,
 * tens of ms of set-up before the run loop on a loaded host: counted from
 * then, the first period holds no sample older than its start, and -d is
 * that long a sampling.
 */
void interval__start(struct interval *iv, uint64_t since_ns);

/*
 * How long the next poll may wait (ms) at time now (ns, CLOCK_MONOTONIC):
 * until the earliest of due_ns (the caller's own next work, same clock; 0:
 * none), the run's end or the next boundary, INTERVAL_HELD_RETRY_NS while
 * stack copies wait for their registrations (which wake no one), and
 * INTERVAL_POLL_MAX_NS. Records need no timer: the BPF side wakes the poll
 * once a batch is queued, and for a process's first records; the notices
 * and mmap events have descriptors of their own in the poll. 0 once a
 * deadline has passed.
 */
#define INTERVAL_HELD_RETRY_NS (100ULL * 1000 * 1000)
#define INTERVAL_POLL_MAX_NS (1000ULL * 1000 * 1000)
int interval__poll_timeout_ms(const struct interval *iv, uint64_t now, uint64_t due_ns);

/*
 * The stack copies whose processes are registered now (all: every one, as
 * a period ends), walked and taken as samples; then every record queued by
 * interval__on_record is in the profile (agg__flush). Returns 0 or -ENOMEM.
 */
int interval__release(struct interval *iv, bool all);

/*
 * A pass of the symbolizer over the period's profile while sampling
 * (symbolizer__symbolize_ahead): the locations seen so far resolved and
 * named, so that the period's end names only those new since; on the
 * thread that polls (the profile's owner). Returns 0 or -ENOMEM.
 */
int interval__symbolize_ahead(struct interval *iv);

/*
 * A ring-buffer batch was read: perf.data's round marker, not while stack
 * copies wait for their process's tables: their samples come later than
 * newer ones, and perf report rejects a record older than what a marker let
 * it deliver ("out of order events").
 */
void interval__batch_read(struct interval *iv);

/*
 * Whether the -d deadline has passed at now; once it has, the run's cut is
 * the deadline, however late the loop got there.
 */
bool interval__deadline_passed(struct interval *iv, uint64_t now);

/* Whether now has passed the next boundary (before the -d deadline, if one has passed). */
bool interval__boundary_passed(const struct interval *iv, uint64_t now);

/*
 * End the period at its boundary: its records are those stamped before it,
 * however late they are read; the copies kept for a registration are its
 * own, walked now; then symbolized, written, summed up (interval__end) and
 * dropped. Returns 0 or -errno.
 */
int interval__end_at_boundary(struct interval *iv);

/*
 * The next period, from the last one's boundary, with the records carried
 * past it. Returns 0 or -errno.
 */
int interval__begin_next(struct interval *iv);

/* The period's profile (borrowed until the period is dropped; NULL between periods). */
const struct profile *interval__profile(const struct interval *iv);

/* The period's cut (0: none), for the process table's reaping (proc_table__reap). */
uint64_t interval__cut_ns(const struct interval *iv);

/* The progress line (report__progress) at now: the run's time, the period's samples and drops. */
void interval__progress(struct interval *iv, uint64_t now);

/*
 * The run's end was decided: this is the last period, cut at the deadline
 * or now; records past the cut are dropped, not carried. Before the
 * session is stopped.
 */
void interval__last(struct interval *iv);

/*
 * With the session stopped: the copies still kept, then the records carried
 * past an earlier cut; the period ends at its cut. Returns 0 or -ENOMEM.
 */
int interval__take_rest(struct interval *iv);

/*
 * Everything queued belongs to the period: the ring buffer drained, then
 * the profile symbolized and written to its outputs, and its summary and
 * counters printed to stderr. Returns 0 or -errno (the first failure).
 */
int interval__end(struct interval *iv);

#endif /* BPFPROF_INTERVAL_H */

/* SPDX-License-Identifier: MIT */
/*
 * Aggregator: turns ring-buffer sample records (include/bpfprof_abi.h) into
 * the profile's distinct (process, callchain) counts. The first sample of a
 * process snapshots its maps (through the process table, proc_table.h,
 * which also gives its comm, start time and cgroup: no file is opened
 * here); a new callchain with a user address
 * outside every known mapping triggers a re-read (rate-limited per process),
 * so code mapped later, and processes that exit later, are still attributed.
 * No BPF here: tests feed it synthetic records.
 *
 * Process churn (-a on a busy machine) is bounded by two limits:
 *  - tracked: once more processes than this hold their whole maps snapshot,
 *    those that have exited are reduced to the mappings their samples fall
 *    in (lossless: every sampled address resolves as before); only after the
 *    ring buffer can hold no more of their samples;
 *  - processes: the profile holds at most this many; samples of further new
 *    processes go to one "[other]" entry (pid 0) with their kernel frames
 *    only, with a warning naming --interval, which bounds each profile.
 */
#ifndef BPFPROF_AGG_H
#define BPFPROF_AGG_H

#include <stddef.h>
#include <stdint.h>
#include "bpfprof_abi.h"
#include "profile.h"

struct agg;
struct proc_table;

/* Defaults of agg__set_limits */
#define AGG_MAX_TRACKED 256
#define AGG_MAX_PROCS 65536
/* pid of the "[other]" entry: tgid 0 (the idle task) is never sampled */
#define AGG_OTHER_PID 0

/*
 * New aggregator filling `p` (borrowed; must outlive the aggregator),
 * learning of processes from t (borrowed; must outlive it: its maps
 * remembered, cgroup cache and proc_dir are the run's). period_ns is the
 * weight of one sample, ns. Returns NULL with errno ENOMEM.
 */
struct agg *agg__new(struct profile *p, struct proc_table *t, uint64_t period_ns);
void agg__free(struct agg *a);

/*
 * Consume one ring-buffer record of `size` bytes (include/bpfprof_abi.h): a
 * sample (BPFPROF_REC_SAMPLE: count 1, value period_ns) or an off-CPU block
 * (BPFPROF_REC_OFFCPU: off_count 1, off_ns its length), both of a stack.
 * Returns 0, -EINVAL for a record whose type or sizes make no sense
 * (counted, logged at debug), or -ENOMEM (fatal for the caller).
 */
int agg__record(struct agg *a, const void *data, size_t size);

/*
 * The same, for a caller that hands over many records in a row (the ring
 * buffer's reader, a poll's batch), on a profile larger than the caches
 * (below): the record is checked (-EINVAL as above, at once) and copied,
 * and aggregated 8 records later,
 * or at agg__flush or the next agg__record, in the order taken. Meanwhile
 * its place in the stack index, then its stored key, are fetched from
 * memory, while the records before it are aggregated. Everything
 * agg__record does happens as it would, in the same order (observer calls,
 * maps reads, stack indices), only later: flush before reading the profile
 * or anything the observer wrote. Returns 0, -EINVAL, or the error
 * (agg__record's) of the earlier record aggregated now. Records queued at
 * agg__free are dropped.
 */
int agg__queue(struct agg *a, const void *data, size_t size);

/*
 * While the profile's stacks take less than AGG_QUEUE_FROM_BYTES (their
 * index slots, entries and keys: about 360 bytes a 32-frame stack),
 * agg__queue aggregates each record at once, as agg__record: their memory
 * answers soon enough, and the copy and the queue's own work (a third more
 * instructions a record) would be all it brought. Measured on the 2-vCPU
 * VM (bench/agg_replay, 32 frames): the queue costs 24-30 % more a sample
 * at 2000-6000 stacks (0.7-2.2 MB), saves 7-23 % at 10 000 (3.6 MB) and 29 %
 * at 30 000. The profile only grows: once past it, every record is queued.
 * agg__queue_from sets another size (0: always queued; tests).
 */
#define AGG_QUEUE_FROM_BYTES (3u << 20)
void agg__queue_from(struct agg *a, size_t bytes);

/*
 * Aggregate every queued record, oldest first. Returns 0 or the first
 * error among them (agg__record's); the rest are aggregated still.
 */
int agg__flush(struct agg *a);

/*
 * The time stamp (CLOCK_MONOTONIC ns) of a sample or off-CPU record, for
 * cutting the stream at a run's or interval's end. Returns 0, or -EINVAL
 * for any other record.
 */
int agg__record_time(const void *data, size_t size, uint64_t *time_ns);

/*
 * Streaming consumers (the perf.data writer) see what the aggregator sees, in
 * order: a process's mappings before its first sample. Each callback returns
 * 0 or -errno; an error is returned by agg__record. Any callback may be NULL.
 */
struct agg_observer {
	/*
	 * After the first maps snapshot of a process, and after any re-read
	 * that added mappings; time_ns is the time of the sample that caused it.
	 */
	int (*maps_changed)(void *ctx, const struct profile *p, uint32_t proc, uint64_t time_ns);
	/*
	 * Every accepted sample record, after its process is known, as the
	 * model's event: the record's own stacks (user frames included for the
	 * "[other]" entry, which keeps only kernel frames in p).
	 */
	int (*sample)(void *ctx, const struct profile *p, uint32_t proc,
		      const struct profile_sample *s);
	/* Every accepted off-CPU block (BPFPROF_REC_OFFCPU), after its process is known; s->off_ns set. */
	int (*offcpu)(void *ctx, const struct profile *p, uint32_t proc,
		      const struct profile_sample *s);
	void *ctx;
};

/*
 * Frames the BPF program records beside the native ones (the
 * interpreters', interp.h: interps__hook installs this), handled by another
 * module: `maps` runs after each maps
 * read of a process (before the observer hears of it) and returns how many
 * mappings it added to the process (or -errno), `merge` on every
 * record of a process that is not "[other]", and returns 1 with the user
 * stack to keep in ips (room for BPFPROF_MAX_STACK + BPFPROF_MAX_PY_FRAMES
 * + 1 addresses) and *nr_user, 0 to keep the record's own, or -errno.
 */
struct agg_frames {
	int (*maps)(void *ctx, struct profile *p, uint32_t proc);
	int (*merge)(void *ctx, struct profile *p, uint32_t proc, const struct bpfprof_sample *s,
		     uint64_t *ips, uint16_t *nr_user);
	void *ctx;
};

/* Install the frames hook (copied); NULL removes it. */
void agg__set_frames(struct agg *a, const struct agg_frames *f);

/* Install an observer (copied); NULL removes it. */
void agg__set_observer(struct agg *a, const struct agg_observer *obs);

/* Records rejected as malformed so far. */
uint64_t agg__nr_bad(const struct agg *a);

/*
 * Limits on processes holding whole maps snapshots (max_tracked) and on
 * processes in the profile (max_procs); see above. 0 keeps a limit as it is.
 */
void agg__set_limits(struct agg *a, size_t max_tracked, size_t max_procs);

struct agg_stats {
	uint64_t nr_tracked; /* processes holding their whole maps snapshot now */
	uint64_t nr_compacted; /* exited processes reduced to their sampled mappings */
	uint64_t nr_mappings_freed; /* mappings dropped by that */
	uint64_t nr_passes; /* eviction passes run */
	uint64_t nr_other_procs; /* new processes past max_procs */
	uint64_t nr_other_samples; /* their samples, in "[other]" */
	uint64_t nr_maps_reads; /* maps reads, first ones included */
	uint64_t nr_maps_remembered; /* of them, processes gone: named from the maps remembered */
};

void agg__stats(const struct agg *a, struct agg_stats *st);

#endif /* BPFPROF_AGG_H */

/* SPDX-License-Identifier: MIT */
/*
 * Samples sent with a stack copy (struct bpfprof_sample_copy,
 * include/bpfprof_abi.h) because the BPF walk had no tables for them yet:
 * each is walked here with the same rules and rows (include/unwind_step.h,
 * unwinder__rule) and turned back into the struct bpfprof_sample the BPF
 * program would have sent, for the aggregator.
 *
 * A record of a process that is not registered yet is kept while the
 * unwinder's thread registers it from /proc/PID/maps (its tables built or
 * shared: the BPF walk of its next samples takes them too), so that the
 * ring buffer's reader never waits for a table's build; so is one whose
 * walk meets a code address in none of its registered mappings (mapped
 * since: the dynamic loader's libraries, dlopen), registered again at most
 * every RELOAD_NS per process, then walked once more. A process gone
 * before it was registered is registered from the maps remembered at its
 * first sample (its files opened by path where they are the very files
 * mapped); one whose maps were not remembered has no tables: its copy is
 * walked by frame pointers and counted as BPFPROF_STAT_WALK_NOT_READY.
 */
#ifndef BPFPROF_UNWIND_COPIES_H
#define BPFPROF_UNWIND_COPIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "bpfprof_abi.h"
#include "unwind_step.h"
#include "unwinder.h"

struct unwind_copies;

/*
 * Where the copies' processes come from: the process table (proc_table.h,
 * proc_table__copies_procs), which alone reads a process's maps.
 */
struct unwind_copies_procs {
	/*
	 * The maps text remembered for process (pid, start), for a process
	 * gone before it was registered; NULL when none. Borrowed.
	 */
	const char *(*remembered)(void *ctx, uint32_t pid, uint32_t start, size_t *len);
	/* Read pid's maps now and queue its registration with u: 0, or -errno (-ENOENT: gone) */
	int (*request)(void *ctx, uint32_t pid);
	void *ctx;
};

/*
 * New walker of copies over u's registrations (borrowed); max_stack:
 * --max-stack; procs (copied; NULL: no registration is asked for, none
 * remembered). NULL: ENOMEM
 */
struct unwind_copies *unwind_copies__new(struct unwinder *u, uint32_t max_stack,
					 const struct unwind_copies_procs *procs);
void unwind_copies__free(struct unwind_copies *c);

/*
 * An interpreter's frames of a copy's walk, as the BPF walk's step hooks
 * record them (V8's: interp.h, interps__copy_frames): process pid's frames
 * (frames[i]: step i's pc, sp and bp; the user addresses as ips) over its
 * stack copy; at most max_frames frames of 2 words into words, newest
 * first, as the record carries them after its user addresses. Returns the
 * frames written and *stop (enum bpfprof_stat: why they ended), 0 for none.
 */
typedef uint32_t (*unwind_copies_interp_fn)(void *ctx, uint32_t pid,
					     const struct unwind_step_frame *frames, uint32_t nr,
					     const struct unwind_step_stack *stack, uint64_t *words,
					     uint32_t max_frames, uint32_t *stop);

/* Set the interpreters' look at each copy's frames (NULL: none, as before) */
void unwind_copies__set_interp(struct unwind_copies *c, unwind_copies_interp_fn fn, void *ctx);

/*
 * Walk copy record rec (size: the bytes received) into *out, a sample as
 * the BPF program sends it (*out_size: its bytes to hand to agg__record).
 * A record of a process not registered yet, or whose walk met a pc in none
 * of its mappings, is kept instead (returns 1) while its registration is
 * made on the unwinder's thread (asked for here), for
 * unwind_copies__release. Returns 0, 1, or -EINVAL for a malformed record
 * (its size, nr_kernel or stack_size out of bounds; warned once), -ENOMEM.
 */
int unwind_copies__sample(struct unwind_copies *c, const void *rec, size_t size,
			  struct bpfprof_sample *out, size_t *out_size);

/* A released record's sample (borrowed for the call). 0 or -errno (-ENOMEM stops the release). */
typedef int (*unwind_copies_emit_fn)(void *ctx, const struct bpfprof_sample *s, size_t size);

/*
 * Walk the kept records whose registration is done (all: every one, once
 * the registrations they wait for are made, 3 s at most: the run's end)
 * and hand each sample to emit, in their order. Returns 0 or -ENOMEM.
 */
int unwind_copies__release(struct unwind_copies *c, bool all, unwind_copies_emit_fn emit,
			   void *ctx);

/*
 * The last sample's copy as --check-unwind's record (its registers, the
 * first BPFPROF_CHECK_STACK_SIZE bytes of its stack and the user-space
 * walk's frames), for libdwfl to check the walk. *size: bytes used.
 */
void unwind_copies__check_record(const struct unwind_copies *c, const void *rec,
				 struct bpfprof_ustack_copy *out, size_t *size);

/*
 * Records kept now, waiting for their registration: while there are some,
 * perf.data's streams write no FINISHED_ROUND marker, since their samples,
 * older than what came since, must reach perf before it sorts past them.
 */
size_t unwind_copies__nr_held(const struct unwind_copies *c);

struct unwind_copies_stats {
	uint64_t walks; /* copies walked */
	uint64_t walk_ns; /* CPU time walking them (the rules' lookups included), ns */
	uint64_t loads; /* registrations asked for them (unwind_copies_procs.request) */
	uint64_t load_ns; /* time asking for them (reading /proc/PID/maps), ns */
	uint64_t held; /* records kept until their process was registered */
	uint64_t gone_loads; /* processes gone registered from their remembered maps */
};

/*
 * The walks' counts, enum bpfprof_stat (the WALK_* ends, FRAMES_*,
 * WALK_NOT_READY), to add to the BPF program's; and *cs (may be NULL).
 */
void unwind_copies__stats(const struct unwind_copies *c, uint64_t st[BPFPROF_STAT_NR],
			  struct unwind_copies_stats *cs);

#endif /* BPFPROF_UNWIND_COPIES_H */

/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The state every part of the BPF program shares (the OpenTelemetry
 * profiler's tracemgmt.h plays this role): the records' shared ring buffer
 * (the CPUs' own rings are cpu_ring.bpf.h's), the
 * per-CPU counters, the per-CPU record being built and the walk slots that
 * say whose it is. Layouts come from include/bpfprof_abi.h.
 */
#ifndef BPFPROF_STATE_BPF_H
#define BPFPROF_STATE_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "bpfprof_abi.h"
#include "compat.bpf.h"

/* --max-stack: user frames a walk stores at most (BPFPROF_MAX_USER_STACK) */
const volatile __u32 max_user_stack = BPFPROF_MAX_STACK;
/* A sample's ips[]: kernel frames, then user frames */
#define MAX_IPS (BPFPROF_MAX_STACK + BPFPROF_MAX_USER_STACK)
/*
 * --check-user-stacks: compare each user stack walked here with the
 * kernel's walk (check.bpf.h); the walk then stores what the kernel's does
 */
const volatile bool check_user_stack = false;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 * 1024 * 1024); /* resized from --ringbuf-size before load */
} samples SEC(".maps");

/* samples' size in bytes, from --ringbuf-size (a helper call a record saved) */
const volatile __u64 samples_bytes = 8 * 1024 * 1024;

/*
 * More than half of a ring waits for the reader: a record's user walk is
 * shed (walk_begin) so that its bytes, and the time a walk takes, go to
 * keeping records rather than to losing them once it is full. As the last
 * record sent from this CPU into each ring found it (ring_crowd_note, from
 * the wake-up policy's figure), a bit a ring: the CPU's own ring
 * (cpu_ring.bpf.h), which a sample's record goes to, and `samples`, which
 * an off-CPU block's and a stack copy's go to; either sheds a sample's
 * walk (a walk may end in a copy), the shared one alone an off-CPU
 * block's, whose record does not go into the CPU's ring: only samples
 * note that ring's bit, and on a CPU that idles (an off-CPU block's
 * sleep) none clears it. `samples`' positions are written by the
 * other CPUs and the reader, and reading them cold at every walk's start
 * cost a second pair of cache misses a sample; the fill moves by a
 * record's bytes from one sample to the next. Once set, the shared bit is
 * cleared by the next sample's record, which then queries `samples` (shed
 * walks send no copy that would).
 */
#define CROWD_CPU_RING 1u
#define CROWD_SHARED 2u

/*
 * Slots of the per-CPU record and walk state (scratch, ustack, walk_state,
 * py_walk_state): an off-CPU block's user walk (at sys_exit,
 * or as task work) runs with interrupts on, and a sample taken meanwhile on
 * the same CPU walks too, in its own slot. `slot` says whose the
 * running walk is; a sample sets it and puts the old value back when it
 * ends (samples do not nest: the interrupt that runs on_sample does not run
 * it again).
 */
#define WALK_SLOTS 2
#define SLOT_SAMPLE 0
#define SLOT_OFFCPU 1

struct walk_slot {
	__u32 cur; /* the slot of the walk that runs */
	__u32 saved; /* on_sample: the slot it interrupted */
};

/*
 * The last process on this CPU whose first records were all sent: its
 * owner and its meaning are process.bpf.h's (ring_wakeup_here, proc_known)
 */
struct known_proc {
	__u32 tgid, start, gen, pad; /* gen: exec_gen(tgid) when noted */
};

/*
 * This CPU's small state that every sample reads, in one value: a per-CPU
 * array's look-up loads the map's line and the value's, and at 999 Hz
 * both are cold at each sample (docs/BENCHMARKS.md, issue 34 part 6), so
 * three maps (the walk slot, the rings' crowding, the known process) cost
 * six lines where one map costs two. One owner a field: slot the walk
 * slots' functions below, crowded ring_crowded and ring_crowd_note,
 * known process.bpf.h.
 */
struct cpu_state {
	struct walk_slot slot;
	__u32 crowded; /* CROWD_* bits */
	__u32 pad;
	struct known_proc known;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_state);
} cpu_state SEC(".maps");

/* This CPU's cpu_state (NULL only to the verifier) */
static __always_inline struct cpu_state *cpu_state_here(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&cpu_state, &zero);
}

/* bits: the rings (CROWD_*) the record's bytes may go to */
static __always_inline bool ring_crowded(__u32 bits)
{
	struct cpu_state *cs = cpu_state_here();

	return cs && (cs->crowded & bits);
}

/*
 * crowded: more than half of ring `bit` (CROWD_*) waits for the reader.
 * Returns the bits as they were.
 */
static __always_inline __u32 ring_crowd_note(__u32 bit, bool crowded)
{
	struct cpu_state *cs = cpu_state_here();
	__u32 old;

	if (!cs)
		return 0;
	old = cs->crowded;
	cs->crowded = crowded ? old | bit : old & ~bit;
	return old;
}

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, BPFPROF_STAT_NR);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/* Counter idx of this CPU += n, in the caller (stat_add's body; a walk's per-frame count) */
static __always_inline void stat_add_here(__u32 idx, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &idx);

	if (v)
		*v += n;
}

/*
 * Counter idx of this CPU += n; returns 0. A global function but in the
 * legacy variant: each inlined lookup of a per-CPU array is a patch of
 * the whole program at load (do_misc_fixups: the instructions and their
 * verifier data moved, every branch adjusted), and 44 of on_sample's 140 or so
 * were the counters' (docs/BENCHMARKS.md, issue 34 start-up, second pass)
 */
#if BPFPROF_LEGACY
static __always_inline int stat_add(__u32 idx, __u64 n)
#else
__noinline int stat_add(__u32 idx, __u64 n)
#endif
{
	stat_add_here(idx, n);
	return 0;
}

static __always_inline void stat_inc(__u32 idx)
{
	stat_add(idx, 1);
}

/*
 * The slot of the walk that runs on this CPU. From the map's value, masked
 * (cur is SLOT_SAMPLE or SLOT_OFFCPU): no branch, so the verifier does not
 * follow the two slots apart as exact keys through the program's lookups
 */
static __always_inline __u32 cur_slot(void)
{
	struct cpu_state *cs = cpu_state_here();

	return cs ? cs->slot.cur & SLOT_OFFCPU : SLOT_SAMPLE;
}

/* The off-CPU path's walk begins (1) or ends (0). */
static __always_inline void slot_offcpu(bool on)
{
	struct cpu_state *cs = cpu_state_here();
	struct walk_slot *s = cs ? &cs->slot : NULL;

	if (s)
		s->cur = on ? SLOT_OFFCPU : SLOT_SAMPLE;
}

/* A sample's walk begins: the slot it interrupts is kept for slot_sample_end. */
static __always_inline void slot_sample_begin(void)
{
	struct cpu_state *cs = cpu_state_here();
	struct walk_slot *s = cs ? &cs->slot : NULL;

	if (s) {
		s->saved = s->cur;
		s->cur = SLOT_SAMPLE;
	}
}

static __always_inline void slot_sample_end(void)
{
	struct cpu_state *cs = cpu_state_here();
	struct walk_slot *s = cs ? &cs->slot : NULL;

	if (s)
		s->cur = s->saved;
}

/* The record being built, one a slot: a sample's, or an off-CPU block's user walk */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, WALK_SLOTS);
	__type(key, __u32);
	__type(value, struct bpfprof_sample);
} scratch SEC(".maps");

/*
 * Bench builds (Makefile bench-floor-bin, bench-offcpu-agg-bin:
 * -DBPFPROF_BENCH -Ibench) replace these hooks in bench/bench.bpf.h; the
 * production program has none.
 */
#ifdef BPFPROF_BENCH
#include "bench.bpf.h"
#endif
#ifndef bench_sample_skip
#define bench_sample_skip(ctx) false /* on_sample returns at once */
#endif
#ifndef bench_walk_skip
#define bench_walk_skip() false /* the user walk stops after the leaf */
#endif
#ifndef bench_row_search_skip
#define bench_row_search_skip() false /* every frame a frame-pointer step */
#endif
#ifndef bench_read_time
#define bench_read_time(end) /* a user-stack read's time */
#endif
#ifndef bench_walk_time_begin
#define bench_walk_time_begin() /* the native walk's time */
#define bench_walk_time_end(frames)
#endif
#ifndef bench_v8_frame_skip
#define bench_v8_frame_skip() false /* the V8 hook returns at each step but the first */
#endif
#ifndef bench_hook_time
#define bench_hook_time(k, end) /* an interpreter hook k's time (bench parts k) */
#endif
#ifndef bench_part
#define bench_part(k) /* on_sample's part k ends */
#endif
#ifndef bench_offcpu_send
#define bench_offcpu_send(r) false /* an off-CPU record was dealt with instead of sent */
#endif

#endif /* BPFPROF_STATE_BPF_H */

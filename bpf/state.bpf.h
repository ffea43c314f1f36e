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
 * The CPUs' own rings, which a sample's record goes to (their protocol is
 * cpu_ring.bpf.h's), one value a possible CPU; its size set before load
 * from cpu_ring_size. Here because each holds its CPU's cpu_state too.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1); /* libbpf_num_possible_cpus(), before load */
	__uint(key_size, sizeof(__u32));
	__uint(value_size, BPFPROF_CPU_RING_HDR_SIZE + (1 << 20) + BPFPROF_CPU_RING_SLACK);
} cpu_rings SEC(".maps");

/*
 * A CPU ring's data bytes, a power of two (BPFPROF_CPU_RING_MIN to _MAX),
 * from --ringbuf-size. A constant to the verifier (read-only data), which
 * so bounds a record's offset (head & (size - 1)) below it
 */
const volatile __u64 cpu_ring_size = 1 << 20;

/* CPU cpu's ring, NULL where none (the map sized for fewer CPUs) */
static __always_inline struct bpfprof_cpu_ring *cpu_ring_of(__u32 cpu)
{
	return bpf_map_lookup_elem(&cpu_rings, &cpu);
}

/*
 * This CPU's small state that every sample reads, in one place: a per-CPU
 * array's look-up loads the map's line and the value's, and at 999 Hz
 * both were cold at each sample (docs/BENCHMARKS.md, issue 34 part 6), so
 * three such maps (the walk slot, the rings' crowding, the known process)
 * cost six lines. It lives in the CPU's ring, in the line of its head
 * that BPF alone writes (struct bpfprof_cpu_ring's bpf_own), which every
 * sample's record writes anyway: no line of its own. One owner a field:
 * slot the walk slots' functions below, crowded ring_crowded and
 * ring_crowd_note, known process.bpf.h, ring_tail_seen cpu_ring.bpf.h.
 */
struct cpu_state {
	struct walk_slot slot;
	__u32 crowded; /* CROWD_* bits */
	__u32 pad;
	struct known_proc known;
	__u64 ring_tail_seen; /* the ring's tail as this CPU last read it (cpu_ring_fill) */
};

_Static_assert(sizeof(struct cpu_state) <= sizeof(((struct bpfprof_cpu_ring *)0)->bpf_own),
	       "cpu_state fits in the ring head's line");

/*
 * This CPU's cpu_state, NULL only where its ring is missing (the rings
 * are sized for the possible CPUs)
 */
static __always_inline struct cpu_state *cpu_state_here(void)
{
	struct bpfprof_cpu_ring *r = cpu_ring_of(bpf_get_smp_processor_id());

	return r ? (struct cpu_state *)r->bpf_own : NULL;
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

/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * A process's life as the program sees it: its identity (start time), its
 * first records, which wake the reader and are announced in `notices` so
 * that its maps are read while it lives, and its exec and fork (on_exec,
 * on_fork), which make it new again or a target.
 */
#ifndef BPFPROF_PROCESS_BPF_H
#define BPFPROF_PROCESS_BPF_H

#include "state.bpf.h"
#include "filter.bpf.h"

const volatile bool follow_forks = false;
/*
 * Command mode: the forked command becomes a target when it execs, as perf's
 * enable_on_exec does, so the profiler's own child before exec is not sampled.
 */
volatile __u32 exec_target = 0;
/* ns per USER_HZ clock tick, the unit of /proc/PID/stat's starttime (sysconf(_SC_CLK_TCK)) */
const volatile __u64 clock_tick_ns = 10000000;

/*
 * Processes that have had a sample, and how many (up to WAKE_FIRST_SAMPLES)
 * since their exec: those first samples each wake the reader at once, so
 * that its maps are read while it still lives (a 60 ms process would be gone
 * by the next batch), and read again once the dynamic loader has mapped its
 * libraries. LRU: old entries just go.
 */
#define WAKE_FIRST_SAMPLES 4
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32); /* tgid */
	__type(value, __u8); /* samples seen, counted up to WAKE_FIRST_SAMPLES */
} seen SEC(".maps");

/*
 * The process's start time as /proc/PID/stat's starttime gives it (the
 * leader's start_boottime in USER_HZ ticks; an exec keeps it): with the tgid,
 * the identity of a process that a reused pid cannot take
 * (struct bpfprof_sample.start).
 */
static __always_inline __u32 process_start(struct task_struct *t)
{
	__u64 ns = BPF_CORE_READ(t, group_leader, start_boottime);

	return clock_tick_ns ? (__u32)(ns / clock_tick_ns) : 0;
}

/*
 * process_start of the running task (t: its BTF pointer, which the kernel
 * gives in every variant but legacy), by plain loads rather than two
 * bpf_probe_read_kernel calls
 */
#if !BPFPROF_LEGACY
static __always_inline __u32 process_start_of(struct task_struct *t)
{
	__u64 ns = t->group_leader->start_boottime;

	return clock_tick_ns ? (__u32)(ns / clock_tick_ns) : 0;
}
#endif

static __always_inline __u32 process_start_current(void)
{
#if BPFPROF_LEGACY
	return process_start(current_task());
#else
	return process_start_of(bpf_get_current_task_btf());
#endif
}

/*
 * A process's first samples after its exec are also announced in `notices`
 * (struct bpfprof_notice), a small ring buffer that user space reads before
 * the samples' backlog, so that the process's maps and files are read while
 * it lives even when thousands of records wait before its own: at its first
 * sample, and at its first samples 10, 30 and 70 ms after it (what the
 * dynamic loader and a runtime map come in its first milliseconds: a 100 ms
 * JIT process's jitdump is mapped after its first sample). Full (2 730
 * notices unread): the notice is left out, the record still goes and is
 * read in its turn, as without notices.
 */
#define NOTICES 4
#define NOTICE_STEP_NS (10ULL * 1000 * 1000)
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} notices SEC(".maps");

struct notice_state {
	__u64 first_ns; /* the first sample's time */
	__u32 nr; /* notices sent */
	__u32 pad;
};

/* Processes noticed since their exec (on_exec forgets one). LRU: old entries just go. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32); /* tgid */
	__type(value, struct notice_state);
} noticed SEC(".maps");

/*
 * Sends the due notice of process (tgid, start: its record's), if any.
 * Returns true once all its notices are sent.
 */
static __always_inline bool notice(__u32 tgid, __u32 start)
{
	__u64 id = bpf_get_current_pid_tgid(), now = bpf_ktime_get_ns();
	struct notice_state *st = bpf_map_lookup_elem(&noticed, &tgid), first = { .first_ns = now };
	struct bpfprof_notice n = {
		.type = BPFPROF_REC_NOTICE,
		.tgid = tgid,
		.time_ns = now,
	};

	if (!st) {
		bpf_map_update_elem(&noticed, &tgid, &first, BPF_ANY);
		st = bpf_map_lookup_elem(&noticed, &tgid);
		if (!st)
			return false;
	} else if (st->nr >= NOTICES) {
		return true;
	} else if (now - st->first_ns < ((1ULL << st->nr) - 1) * NOTICE_STEP_NS) {
		return false;
	}
	n.nr_seen = ++st->nr;
	/*
	 * an off-CPU block may be sent from another task: its start is then
	 * unknown. The record's own start, not process_start_current()
	 * again: each BTF pointer load the verifier meets costs it a few
	 * linear searches of the kernel's BTF (btf_nested_type_is_trusted),
	 * about 1 ms of start-up for each of ring_wakeup's inlined copies
	 */
	if (id >> 32 == tgid)
		n.start = start;
	bpf_ringbuf_output(&notices, &n, sizeof(n), BPF_RB_FORCE_WAKEUP);
	return false;
}

/*
 * A forced wake-up costs the CPU that sends it an interrupt to itself
 * (irq_work) and the reader's wake-up: 10 us a record on this project's
 * VMs (docs/BENCHMARKS.md, issue 34), where a record costs 0.5 us. A batch
 * (an eighth of a ring waiting) wakes the reader once a BATCH_WAKE_GAP_NS at most,
 * from whichever CPU: while the reader is behind, it is awake and reading
 * (its epoll is level-triggered: it sleeps only on an empty ring), and
 * waking it again at every record took more than a third of the program's
 * time under load. CLOCK_MONOTONIC ns of the last one.
 */
#define BATCH_WAKE_GAP_NS (10ULL * 1000 * 1000)
__u64 batch_woken_ns = 0;

/* The fill of a ring of size bytes from which a batch wakes the reader: below it a known process's record changes nothing */
static __always_inline __u64 ring_batch_fill(__u64 size)
{
	return size / 8;
}

/*
 * Execs seen by on_exec, a counter a slot of tgids (tgid % EXEC_GEN_SLOTS):
 * a change makes the per-CPU caches of a process's state miss (known_proc
 * below, the walk's code cache in unwind.bpf.h). One counter for every
 * process was written by each exec on the host and read at each sample:
 * where hundreds of processes start a second (a build), each sample read
 * it cold and missed its CPU's known_proc (the `seen` and `noticed`
 * look-ups again) after any exec anywhere; a slot's counter moves with
 * the execs of 1 tgid in 4,096, its cache line with 1 in 256.
 */
#define EXEC_GEN_SLOTS 4096
__u32 exec_gens[EXEC_GEN_SLOTS] = {};

static __always_inline __u32 exec_gen(__u32 tgid)
{
	return *(volatile __u32 *)&exec_gens[tgid & (EXEC_GEN_SLOTS - 1)];
}

/*
 * The last process on this CPU whose first records were all sent (woken
 * for and noticed), in cpu_state.known (state.bpf.h): its next records
 * skip the `seen` and `noticed` lookups, the wake-up policy's call when no
 * wake-up is due (ring_wakeup_idle), and their cgroup id (the record's
 * header: user space takes a process's cgroup from the record that opens
 * it, the first ones). It is that process while its tgid's slot saw no
 * exec since (exec_gen) and its start time is the same (a pid reused by a
 * fork).
 */
static __always_inline bool proc_known(struct cpu_state *cs, __u32 tgid, __u32 start)
{
	return cs->known.tgid == tgid && cs->known.start == start &&
	       cs->known.gen == exec_gen(tgid);
}

/*
 * The wake-up policy for a record of process (tgid, start) going into a
 * ring of size bytes where avail bytes wait for the reader, this record's
 * included: the reader is woken once an eighth of the ring waits
 * (BATCH_WAKE_GAP_NS apart at most), and for a process's first
 * WAKE_FIRST_SAMPLES records (its maps are read while it still runs).
 * Notes whether more than half of the ring waits (ring_crowd_note). The
 * ring is the record's CPU's (cpu_ring, cpu_ring.bpf.h) or `samples`; a
 * wake-up wakes the reader for both.
 */
static __always_inline __u64 ring_wakeup_here(__u32 tgid, __u32 start, __u64 avail, __u64 size,
					      bool cpu_ring)
{
	__u64 flags = BPF_RB_NO_WAKEUP, now;
	__u32 gen = exec_gen(tgid);
	struct cpu_state *cs = cpu_state_here();
	struct known_proc *k = cs ? &cs->known : NULL;
	__u8 *nr_seen;
	bool woken_for = false;

	/* the shared ring's bit, once set, cleared by a sample's record (state.bpf.h) */
	if (!cpu_ring)
		ring_crowd_note(CROWD_SHARED, avail > size / 2);
	else if (ring_crowd_note(CROWD_CPU_RING, avail > size / 2) & CROWD_SHARED)
		ring_crowd_note(CROWD_SHARED,
				bpf_ringbuf_query(&samples, BPF_RB_AVAIL_DATA) > samples_bytes / 2);
	if (avail >= ring_batch_fill(size)) {
		now = bpf_ktime_get_ns();
		if (now - batch_woken_ns >= BATCH_WAKE_GAP_NS) {
			batch_woken_ns = now;
			flags = BPF_RB_FORCE_WAKEUP;
		}
	}
	if (k && k->tgid == tgid && k->start == start && k->gen == gen)
		return flags;
	nr_seen = bpf_map_lookup_elem(&seen, &tgid);
	if (!nr_seen) {
		__u8 one = 1;

		bpf_map_update_elem(&seen, &tgid, &one, BPF_ANY);
		flags = BPF_RB_FORCE_WAKEUP;
	} else if (*nr_seen < WAKE_FIRST_SAMPLES) {
		*nr_seen += 1;
		flags = BPF_RB_FORCE_WAKEUP;
	} else {
		woken_for = true;
	}
	if (notice(tgid, start) && woken_for && k) {
		k->tgid = tgid;
		k->start = start;
		k->gen = gen;
	}
	return flags;
}

/*
 * ring_wakeup_here in a global function but in the legacy variant: the
 * verifier checks its branches (the first records, the notices) once, in a
 * frame of its own, rather than in each state a record goes out in, where
 * they and their stack were copied at every branch (docs/BENCHMARKS.md,
 * issue 34 start-up, second pass). The flags of bpf_ringbuf_output.
 */
#if BPFPROF_LEGACY
static __always_inline int ring_wakeup_flags(__u32 tgid, __u32 start, __u64 avail, __u64 size,
					     bool cpu_ring)
#else
__noinline int ring_wakeup_flags(__u32 tgid, __u32 start, __u64 avail, __u64 size, bool cpu_ring)
#endif
{
	return (int)ring_wakeup_here(tgid, start, avail, size, cpu_ring);
}

/*
 * Whether ring_wakeup_here(tgid, start, avail, size, true) would return
 * BPF_RB_NO_WAKEUP and change nothing, from this CPU's state alone:
 * process (tgid, start) known here, neither ring crowded (the notes would
 * leave the bits as they are), and less than a batch waiting. Most of a
 * CPU-bound process's records: the global function's call and its
 * look-ups are skipped (issue 34 part 6)
 */
static __always_inline bool ring_wakeup_idle(__u32 tgid, __u32 start, __u64 avail, __u64 size)
{
	struct cpu_state *cs = cpu_state_here();

	return cs && !cs->crowded && avail < ring_batch_fill(size) && proc_known(cs, tgid, start);
}

/* The wake-up flags of a record of (tgid, start) in a CPU's ring of size bytes where avail wait */
static __always_inline __u64 ring_wakeup_cpu(__u32 tgid, __u32 start, __u64 avail, __u64 size)
{
	if (ring_wakeup_idle(tgid, start, avail, size))
		return BPF_RB_NO_WAKEUP;
	return (__u32)ring_wakeup_flags(tgid, start, avail, size, true);
}

/* ... of a record going into `samples` (its fill from the ring: a helper call) */
static __always_inline __u64 ring_wakeup(__u32 tgid, __u32 start)
{
	return (__u32)ring_wakeup_flags(tgid, start, bpf_ringbuf_query(&samples, BPF_RB_AVAIL_DATA),
					samples_bytes, false);
}

/*
 * An exec: the process's next sample wakes the reader again (it is "new"
 * once more), so that the new program's maps and name are read while it
 * still runs; a 60 ms command forked by a shell and first sampled before its
 * exec would otherwise be gone by the next batch. Command mode: the command
 * becomes a target at its exec. A raw tracepoint rather than tp_btf: the
 * same arguments, read through BPF_CORE_READ, without a tracing program's
 * BTF id, which libbpf finds by parsing the whole of the kernel's BTF at
 * each load (user/capture/core_btf.c spares the CO-RE relocations that
 * parse; docs/BENCHMARKS.md, issue 34).
 */
SEC("raw_tp/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);

	bpf_map_delete_elem(&seen, &tgid);
	bpf_map_delete_elem(&noticed, &tgid);
	/* after the deletes: known_proc's entries for the slot's tgids are stale */
	__sync_fetch_and_add(&exec_gens[tgid & (EXEC_GEN_SLOTS - 1)], 1);
	if (!exec_target || tgid != exec_target)
		return 0;
	target_add(tgid);
	exec_target = 0;
	return 0;
}

/* Command mode: a child of a target becomes a target before it can run. */
SEC("raw_tp/sched_process_fork") /* raw: as on_exec */
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid, ctgid;

	if (!follow_forks)
		return 0;
	ptgid = BPF_CORE_READ(parent, tgid);
	if (!is_target(ptgid))
		return 0;
	ctgid = BPF_CORE_READ(child, tgid);
	target_add(ctgid);
	return 0;
}

#endif /* BPFPROF_PROCESS_BPF_H */

/* SPDX-License-Identifier: MIT */
/*
 * Sampling session: loads bpf/profile.bpf.c, opens one perf event per online
 * CPU (perf_event_open(2), cpu-clock by default), attaches the program to
 * each and delivers ring-buffer records to a callback. The only module that
 * touches the BPF skeleton.
 */
#ifndef BPFPROF_SESSION_H
#define BPFPROF_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "bpfprof_abi.h"
#include "interp.h"
#include "unwinder.h"

struct session;

/* Called for every record; a negative return stops the current poll with that error. */
typedef int (*session_record_fn)(void *ctx, void *data, size_t size);

struct session_opts {
	const char *event; /* "cpu-clock" or "cycles" */
	uint32_t freq_hz; /* samples per second per CPU */
	uint64_t ringbuf_bytes; /* ring buffer size, power of two, ≥ page size */
	bool filter_tgid; /* only tgids added with session__add_target */
	bool follow_forks; /* children of targets become targets (command mode) */
	bool check_user_stacks; /* compare each user walk with the kernel's (session__check_stats) */
	bool offcpu; /* --off-cpu: also send blocks (struct bpfprof_offcpu) */
	uint64_t offcpu_thresh_ns; /* blocks shorter than this are counted, not sent */
	/*
	 * User stacks walked with the unwinder's maps (session__unwind_sink):
	 * tables of at most unwind_budget bytes of kernel memory in all (each
	 * allocated as its file comes), 0 for mappings only (--call-graph fp).
	 */
	bool unwind;
	uint64_t unwind_budget;
	/*
	 * Samples of processes whose tables are not ready sent with a stack
	 * copy (struct bpfprof_sample_copy) for user space to walk, instead of
	 * walked by frame pointers (needs unwind and a budget)
	 */
	bool copy_stacks;
	uint32_t max_user_stack; /* --max-stack: 1..BPFPROF_MAX_USER_STACK; 0: BPFPROF_MAX_STACK */
	uint32_t check_unwind_every; /* --check-unwind: a stack copy every N user-mode samples; 0 none */
	/*
	 * The interpreters' unwinders (BPFPROF_WALK_*) the sampler is verified
	 * with at start-up (interp_walks), and those it is verified with
	 * again, all at once, in place of the first when a process of one of
	 * them is first attached (interp_more; session__interp_attach): an
	 * interpreter no process runs costs no verifier time. --off-cpu and
	 * the legacy variant, whose other programs walk too, load all of them.
	 */
	uint32_t interp_walks, interp_more;
	const uint64_t *cgroup_ids; /* cgroup v2 ids to keep; NULL: all */
	size_t nr_cgroups;
	session_record_fn on_record;
	/*
	 * The notices of a process's first samples (struct bpfprof_notice),
	 * handed over before the samples queued ahead of its own: read its
	 * maps and files there. NULL: not read. Same ctx as on_record.
	 */
	session_record_fn on_notice;
	void *ctx;
};

/*
 * Load, open the perf events and attach. Returns 0 and a new session in
 * *out, or -errno with the reason already printed (-ENOENT when the event
 * has no hardware support, -EPERM/-EACCES for privileges).
 */
int session__open(const struct session_opts *opts, struct session **out);
/*
 * What session__open cost the calling thread, CPU time in ns
 * (CLOCK_THREAD_CPUTIME_ID; nearly all of it kernel time): probing the
 * kernel's features, creating the maps and loading the programs (the
 * verifier's work: the variants tried, one where the probes choose right),
 * opening and attaching the perf events and the rest; the variants tried;
 * and, read only at log level -v, the kernel memory of the maps created
 * (bytes, their fdinfo's memlock) and the instructions the verifier
 * processed for the programs loaded (bpf_prog_info.verified_insns, 5.16).
 */
struct session_startup {
	uint64_t probe_ns, load_ns, attach_ns;
	uint32_t nr_loads;
	uint64_t map_bytes, verified_insns;
};
void session__startup(const struct session *s, struct session_startup *st);
/* Add a process to the target set. Returns 0 or -errno. */
int session__add_target(struct session *s, uint32_t tgid);
/*
 * Make tgid a target when it next execs (the command, forked and waiting to
 * exec): its samples start at the exec, as with perf's enable_on_exec.
 * Needs opts.follow_forks. Returns 0 or -errno.
 */
int session__add_target_on_exec(struct session *s, uint32_t tgid);
/*
 * Wait up to timeout_ms (ms) for records, or for a watched descriptor to
 * become readable, and consume what is queued. Returns records consumed, or
 * -errno (-EINTR on a signal).
 */
int session__poll(struct session *s, int timeout_ms);
/*
 * Also end session__poll's wait when fd becomes readable (a pidfd: the
 * process exited, pidfd_open(2)), so that an exit is seen at once instead of
 * at the next timeout. The caller keeps fd open while it is watched and
 * unwatches it once seen, as it stays readable. Returns 0 or -errno.
 */
int session__watch_fd(struct session *s, int fd);
void session__unwatch_fd(struct session *s, int fd);
/*
 * The `notices` ring buffer map's descriptor (owned by the session: open
 * until session__close), for a reader of its own (notice_thread.h).
 */
int session__notices_fd(const struct session *s);

/*
 * Processes whose interpreter layout the BPF walk has now (Python, HotSpot,
 * V8: session__interp_attach): their records' frames are named from the
 * process's memory when the records are read, so the reader reads them
 * soon (main.c). A count kept by the attaches and detaches; an entry the
 * kernel dropped otherwise may leave it high, never low.
 */
uint32_t session__nr_interp_procs(const struct session *s);
/*
 * From now on the notices are read elsewhere (notice_thread.h): the
 * session no longer consumes them nor calls on_notice. Call before that
 * other reader starts, or while this thread is not polling: a ring has one
 * consumer at a time.
 */
void session__notices_elsewhere(struct session *s);
/* Stop sampling: disable the perf events so no record arrives after this. */
void session__stop(struct session *s);
/* Consume everything still queued. Returns records consumed or -errno. */
int session__drain(struct session *s);
/*
 * Totals summed over CPUs: records delivered by BPF and records dropped
 * because the ring buffer was full. per_cpu_dropped (optional, nr_cpus
 * entries, caller-allocated) receives the per-CPU drops.
 */
void session__stats(struct session *s, uint64_t *samples, uint64_t *dropped,
		    uint64_t *per_cpu_dropped);
int session__nr_cpus(const struct session *s);
/*
 * When sampling began: CLOCK_MONOTONIC ns (the clock of the records'
 * time_ns, bpf_ktime_get_ns) just before the first CPU's event had the
 * sampler attached, from which on samples may be recorded; 0 before.
 */
uint64_t session__sampling_ns(const struct session *s);
/*
 * With opts.check_user_stacks, samples whose frame-pointer walk (BPF) gave:
 * the addresses the kernel's own walk (bpf_get_stack, BPF_F_USER_STACK, as
 * perf record -g uses) gave; their first part (the kernel went on past a
 * frame without frame pointers); something else. Zeros otherwise.
 */
void session__check_stats(struct session *s, uint64_t *same, uint64_t *shorter, uint64_t *differ);
/*
 * With opts.offcpu, summed over CPUs: blocks sent, blocks lost to a full ring
 * buffer, switch-outs not followed because the table of blocked threads
 * (BPFPROF_MAX_OFFCPU_THREADS) was full, and blocks below the threshold
 * with their total ns. Zeros otherwise.
 */
struct session_offcpu_stats {
	uint64_t sent, dropped, full, short_blocks, short_ns;
	uint64_t kernel_only; /* sent without user frames: not blocked in a system call */
};
void session__offcpu_stats(struct session *s, struct session_offcpu_stats *st);
/*
 * The unwinder's view of the session's BPF maps (include/unwinder.h); rows
 * is mapped until session__close. Only meaningful with opts.unwind.
 */
void session__unwind_sink(struct session *s, struct unwind_sink *sink);
/*
 * Walk the Python frames of process tgid's samples with this layout
 * (python_procs.h), or no longer (cfg NULL). Returns 0 or -errno (-E2BIG:
 * BPFPROF_MAX_PY_PROCS processes already).
 */
int session__python_set(struct session *s, uint32_t tgid, const struct bpfprof_py_proc *cfg);

/*
 * The interpreters' attach (interp.h, interp_attach_fn; ctx: the session):
 * kind's layout for tgid into its BPF map (INTERP_PYTHON: as
 * session__python_set), or out of it (layout NULL). 0 or -errno
 * (-EOPNOTSUPP: a kind the BPF side does not walk).
 */
int session__interp_attach(void *ctx, enum interp_kind kind, uint32_t tgid, const void *layout);
/* Every `stats` counter (enum bpfprof_stat), summed over CPUs. */
void session__walk_stats(struct session *s, uint64_t stats[BPFPROF_STAT_NR]);
/*
 * The sampling program's total run time (ns) and runs since load, tail calls
 * of the legacy variant's walk included: counted only while the kernel's
 * BPF statistics are on (sysctl kernel.bpf_stats_enabled=1, Linux 5.1), else
 * zeros. Returns 0 or -errno (BPF_OBJ_GET_INFO_BY_FD).
 */
int session__bpf_run_time(struct session *s, uint64_t *run_ns, uint64_t *runs);

/*
 * The entries of the BPF maps that gain one per process, file mapping or
 * thread (issue 24, bounded by design), counted key by key
 * (BPF_MAP_GET_NEXT_KEY: one system call an entry, so for -v only). -1 for
 * a map not created in this run (off-CPU maps without --off-cpu; the
 * unwinder's without --call-graph dwarf) or not iterable (offcpu_start as
 * task storage). `seen` and `noticed` are LRU maps: full at their size on a
 * busy host, by design. Never fails: a map that cannot be read counts -1.
 */
struct session_map_entries {
	int64_t unwind_procs; /* processes with unwind tables registered */
	int64_t unwind_mappings; /* LPM entries: their mappings */
	int64_t py_procs; /* Python processes walked */
	int64_t targets; /* -p targets */
	int64_t seen, noticed; /* LRU: processes sampled, noticed (16384 each at most) */
	int64_t offcpu_start, offcpu_pending; /* --off-cpu: threads blocked, blocks pending */
};
void session__map_entries(struct session *s, struct session_map_entries *e);
/*
 * Drop the `seen` and `noticed` entries (BPF LRU maps keyed by tgid), and
 * `v8_procs`' (a hash), of processes that no longer exist (kill(tgid, 0): ESRCH), so that they follow
 * the processes alive rather than fill up with those gone. A pid taken again
 * in between loses nothing but a notice more. Each map's keys by
 * BPF_MAP_LOOKUP_BATCH (a system call a 256; GET_NEXT_KEY, one a key, where
 * the kernel has no batch for it: before 5.6), one kill() a tgid, one delete
 * an entry dropped; call it about once a second. Returns the entries dropped.
 */
size_t session__forget_gone(struct session *s);

/*
 * The same, about once a second, for the processes that exited since the
 * last call: tgids (n of them: mmap_events__take_exits; n < 0: not known,
 * more exited or records were lost) by key, a kill() and two deletes a
 * tgid (about 3 us here), where session__forget_gone's walk visits every bucket of two
 * 16,384-entry LRU maps, taking and releasing each bucket's lock (0.1 ms
 * here whatever exited; 2-3 walks in a 3 s run, a tenth of the reader's
 * CPU: docs/BENCHMARKS.md, "benchmark 2's own CPU, fifth pass"). A tgid
 * still there (a zombie its parent has not reaped) is looked at again at
 * the next calls, 4 at most. The walk instead, where moved
 * (proc_table__exits_moved) says any exited: when n < 0 (and at the next
 * call), while an interpreter's process is known (v8_procs are the
 * walk's), and every 30th call, for what keys miss (a zombie kept longer,
 * a process that exited before the mmap events began, a thread sampled
 * past its leader's exit). Returns the entries dropped.
 */
size_t session__forget_exited(struct session *s, const uint32_t *tgids, int n, bool moved);
void session__close(struct session *s);

/*
 * Route libbpf's messages through log__printf (include/log.h): its warnings
 * at -v (bpfprof reports the failure itself), its debug output at -vv.
 * Call once, before the first libbpf call.
 */
void session__libbpf_log(void);

#endif /* BPFPROF_SESSION_H */

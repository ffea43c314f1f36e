/* SPDX-License-Identifier: MIT */
/*
 * Each process's executable mappings as they happen (issue 22 item 3), the
 * way perf learns of them: a system-wide, per-CPU perf "dummy" software
 * event (PERF_TYPE_SOFTWARE / PERF_COUNT_SW_DUMMY) with mmap2, comm,
 * comm_exec and task set, read through libbpf's perf_buffer__new_raw on a
 * thread of its own. It keeps, per process, the PROT_EXEC file mappings of
 * its PERF_RECORD_MMAP2 records; a fork (PERF_RECORD_FORK with pid != ppid)
 * copies the parent's to the child, an exec (PERF_RECORD_COMM with
 * PERF_RECORD_MISC_COMM_EXEC) empties them, an exit (PERF_RECORD_EXIT of the
 * thread group leader) starts a grace period after which they go.
 *
 * What for: a process that lives tens of ms (an `as` in a `make -j2`) may be
 * gone before bpfprof reads its /proc/PID/maps; its maps are then rendered
 * from this history as /proc/PID/maps text (mmap_events__maps), so that
 * maps_cache.h's users (the registration of stack copies, the aggregator's
 * mappings) take them unchanged.
 *
 * Record layouts: include/uapi/linux/perf_event.h (enum perf_event_type),
 * with sample_id_all and sample_type PERF_SAMPLE_TID | PERF_SAMPLE_TIME: a
 * struct sample_id { u32 pid, tid; u64 time; } ends every non-sample record.
 * Times are CLOCK_BOOTTIME ns (use_clockid), so that a fork's time names
 * the child's start in clock ticks as /proc/PID/stat's starttime does
 * (kernel/fork.c sets start_boottime just before perf_event_fork()).
 *
 * Identity (issue 24): a process is (tgid, start ticks); a reused pid gets a
 * new entry at its fork. Processes that existed before the event was opened
 * have start 0 (unknown) and only the mappings made since (incomplete).
 *
 * Thread safety: mmap_events__record, __maps and __stats lock the object;
 * __start and __free are the owner's, called from one thread.
 */
#ifndef BPFPROF_MMAP_EVENTS_H
#define BPFPROF_MMAP_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mmap_events;

struct mmap_events_stats {
	uint64_t records; /* records handled */
	uint64_t bytes; /* their bytes */
	uint64_t lost; /* records the kernel lost (PERF_RECORD_LOST) */
	uint64_t bad; /* malformed records skipped */
	uint64_t rendered; /* maps texts rendered for mmap_events__maps */
	uint64_t evicted; /* processes dropped for the memory bound before their grace period */
	size_t nr_procs; /* processes held now */
	size_t held_bytes; /* their memory (mappings and names), bytes */
};

/*
 * An empty history. max_bytes: bound on the memory held for mappings
 * (bytes; the processes that exited first go, then the oldest); keep_ns: how
 * long an exited process's mappings stay (ns of the records' clock);
 * tick_ns: ns of a clock tick (1e9 / sysconf(_SC_CLK_TCK)), 0 when record
 * times are not CLOCK_BOOTTIME (starts then unknown). NULL with errno ENOMEM.
 */
struct mmap_events *mmap_events__new(size_t max_bytes, uint64_t keep_ns, uint64_t tick_ns);

/* Stops the reader thread (if started), closes the events, frees all. NULL: nothing. */
void mmap_events__free(struct mmap_events *m);

/*
 * Stops the reader thread (if started) and waits for it: no callback runs
 * after it returns (the exec filter's context may then be freed). The
 * history stays readable. NULL or stopped already: nothing.
 */
void mmap_events__stop(struct mmap_events *m);

/*
 * Handle one record: size bytes at rec, starting with its struct
 * perf_event_header (header.size ≤ size). MMAP2, FORK, COMM, EXIT and LOST
 * are used; other types are ignored. Returns 0, -EINVAL for a malformed
 * record (shorter than its type's layout, a filename without NUL; counted,
 * nothing kept from it) or -ENOMEM.
 */
int mmap_events__record(struct mmap_events *m, const void *rec, size_t size);

/*
 * The executable mappings of process (pid, start) as /proc/PID/maps lines
 * ("start-end r-xp offset maj:min inode path\n", fs/proc/task_mmu.c's
 * format; ascending addresses; an anonymous mapping has no path). start: in
 * clock ticks after boot, 0 for the newest process of pid; a process whose
 * fork was seen matches start or start+1 (its fork's record is stamped a
 * few us after start_boottime). *text: malloc'd, NUL-terminated, the
 * caller's; *len its bytes. Returns 0, -ENOENT when no such process or no
 * mapping is known, or -ENOMEM.
 */
int mmap_events__maps(struct mmap_events *m, uint32_t pid, uint32_t start, char **text,
		      size_t *len);

/*
 * Open the dummy event on every online CPU (pages_per_cpu: data pages of
 * each ring, a power of 2) and start the thread that reads it. Returns 0;
 * -errno from bpf_map_create or perf_event_open (-EACCES, -EPERM without
 * CAP_PERFMON, -ENOENT/-EINVAL on kernels without the fields used), or
 * from pthread_create. On error nothing is left open.
 */
int mmap_events__start(struct mmap_events *m, size_t pages_per_cpu);

void mmap_events__stats(struct mmap_events *m, struct mmap_events_stats *st);

/* An executable mapping made (mmap, or mprotect adding PROT_EXEC): user addresses [start, end) */
struct mmap_events_exec {
	uint32_t pid; /* tgid */
	uint64_t start, end;
};

#define MMAP_EVENTS_MAX_EXEC 64

/*
 * The executable mappings made since the last call, oldest first, at most
 * max into out[]; those past MMAP_EVENTS_MAX_EXEC waiting were dropped
 * (counted in *dropped, may be NULL). What for: a runtime's JIT code space
 * made executable after its process was registered for the unwinder (V8's
 * //anon rwx region), whose frames a frame-pointer step from a builtin
 * otherwise takes for garbage until the next registration. Cheap when none
 * waits (one atomic load, no lock). Returns how many were stored.
 */
size_t mmap_events__take_exec(struct mmap_events *m, struct mmap_events_exec *out, size_t max,
			      uint64_t *dropped);

/*
 * A number that changes whenever process pid's executable mappings may have
 * changed since it was read: an executable mapping made (PERF_RECORD_MMAP2
 * with PROT_EXEC: mmap, or mprotect adding it), an exec (COMM with
 * COMM_EXEC), its exit, records lost (any pid's), or the same of another
 * pid sharing its counter (pid modulo 16,384: a change told where there was
 * none, never the reverse). Unmappings make no record: not counted. It
 * counts the records handled, which the reader thread (mmap_events__start)
 * does within about 10 ms of the kernel writing them. Any thread, without the
 * lock. What for: the notices' thread rereads a process's maps only when
 * this changed since its last read (notice_thread__use_mmap_events).
 */
uint64_t mmap_events__changes(const struct mmap_events *m, uint32_t pid);

/*
 * A descriptor (an eventfd; -1: none) written once at the first move of a
 * watched process's mmap_events__changes (mmap_events__watch_changes: its
 * pid, or one sharing its counter; lost records move every process's)
 * after mmap_events__arm_changes, and not again before the next arming;
 * the caller reads it to drain it. Any thread, without the lock; watches
 * are counted (on twice, off twice). What for: the notices' thread, whose
 * rechecks read nothing while their processes' counters stand still, arms
 * it, looks at the counters once more, and sleeps without a timer when
 * none moved, rather than waking at each recheck's time to find nothing
 * (notice_thread.c); the host's other processes, whose mappings change all
 * the time on a build host, do not wake it. Arm, then read the counters: a
 * change between the two is seen by the read or writes the descriptor.
 */
int mmap_events__changes_fd(const struct mmap_events *m);
void mmap_events__arm_changes(struct mmap_events *m);
void mmap_events__watch_changes(struct mmap_events *m, uint32_t pid, bool on);

/*
 * A count that moves whenever a process exits on the host (PERF_RECORD_EXIT
 * of a thread-group leader) or records were lost (any process's exit may
 * have been among them), handled within about 10 ms of the kernel writing
 * them. Any thread, without the lock. What for: session__forget_gone's
 * look at BPF's per-process maps (a walk of their buckets, a kill() a key)
 * finds nothing to drop while no process has exited (proc_table__exits_moved).
 */
uint64_t mmap_events__exits(const struct mmap_events *m);

#define MMAP_EVENTS_MAX_EXITS 16

/*
 * The tgids of the processes that exited (PERF_RECORD_EXIT of a
 * thread-group leader) since the last call, oldest first, into out[]
 * (room for MMAP_EVENTS_MAX_EXITS); returns how many, or -E2BIG when more
 * exited meanwhile or records were lost (whose exits they held is not
 * known). Reader thread, under the lock. What for: session__forget_exited
 * drops BPF's per-process entries of those few processes by key, where a
 * walk of the maps' buckets costs 0.1 ms whatever exited, and the keys
 * about 3 us each: past this many a second the walk is as cheap
 * (docs/BENCHMARKS.md, "benchmark 2's own CPU, fifth pass").
 */
int mmap_events__take_exits(struct mmap_events *m, uint32_t *out);

/*
 * Keep for mmap_events__take_exec only the executable mappings of the
 * processes wanted(ctx, pid) says yes to (NULL: all, the default). Called
 * on the reader thread with the object's lock held: it must not block
 * (unwinder__may_have_proc). Why: on a host that starts hundreds of
 * processes a second, each exec maps a few executables; those of processes
 * that are not registered were queued (crowding the MMAP_EVENTS_MAX_EXEC
 * slots) and woke the caller's poll for nothing. The mappings themselves
 * are kept either way (mmap_events__maps).
 */
void mmap_events__set_exec_filter(struct mmap_events *m, bool (*wanted)(void *ctx, uint32_t pid),
				  void *ctx);

/*
 * A descriptor readable while executable mappings wait for
 * mmap_events__take_exec (an eventfd the reader thread signals and
 * take_exec drains), for the caller's poll: such a mapping of a registered
 * process is registered at once, not at the next batch of records (its
 * samples meanwhile go as stack copies). -1 when there is none.
 */
int mmap_events__wake_fd(const struct mmap_events *m);

#endif /* BPFPROF_MMAP_EVENTS_H */

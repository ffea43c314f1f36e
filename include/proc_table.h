/* SPDX-License-Identifier: MIT */
/*
 * The process table: the one owner of what happens to a process, and the
 * only module that opens /proc/PID/maps, as perf's util/machine.c owns
 * process state through machine__process_{mmap2,fork,comm}_event, and the
 * OpenTelemetry eBPF profiler's process manager reads a process's mappings
 * once and fans them out to its BPF maps and interpreter handlers. (libdw
 * reads the file too, inside --check-unwind's debug check, unwind_check.c:
 * dwfl_linux_proc_report reports the process's vDSO from its auxv, which
 * the maps text alone does not give libdwfl.)
 *
 * Events, and what each does (user/capture/proc_table.c):
 *  - first sample, and a later one outside the known mappings: the
 *    aggregator asks the table for the process's comm, start time, cgroup
 *    and maps (proc_table__comm, __start_time, __cgroup, __maps); the maps
 *    read is remembered for the run (maps_cache.h), and a process /proc no
 *    longer has (exited, or its pid reused: another start time) is named
 *    from what was remembered: a record that arrives after its process is
 *    gone. Merged into the profile, new maps go to the consumers
 *    (proc_table__maps_changed: the symbolizer pins the process's files,
 *    the unwinder registers it), the interpreters (interp.h, through the
 *    aggregator's frames hook) and the aggregator's observer (perf.data);
 *  - exit and pid reuse: proc_table__gone and proc_table__same, from
 *    /proc/PID/stat (reaped, a zombie, another start time); once a second
 *    proc_table__reap lets exited processes' registrations and remembered
 *    maps go;
 *  - the notice of a process's first samples (BPFPROF_REC_NOTICE), read
 *    here or captured on the notices' thread (notice_thread.h): its maps
 *    are read and remembered, and its files pinned by the symbolizer while
 *    it lives (proc_table__notice, proc_table__take_captured);
 *  - exec and mmap: perf's MMAP2 records (mmap_events.h), opened by
 *    proc_table__watch_mmaps, remember a process's executable mappings as
 *    they happen (a process gone before a read is named from them), and an
 *    executable mapping the unwinder's registration lacks (the new image
 *    after an exec, a dlopen) has the process registered again at once
 *    (proc_table__exec_mappings); a registration under way when it came
 *    (a process registered at a sample in its execve) is looked at again
 *    once it is done. The exec's new image in the profile (an entry of its
 *    own with the new name, its maps read at once) is the aggregator's
 *    (agg.h), and it reads those maps through this table;
 *  - fork: a child is a new process to the table at its first sample or
 *    notice (the BPF side follows forks, session.h);
 *  - a stack copied for want of tables: its process registered with the
 *    unwinder (proc_table__register), or, gone, from the maps remembered
 *    (proc_table__remembered).
 *
 * The consumers, below capture in the stages' order (README "Layout":
 * symbolize, unwind, then capture), are called directly; the copies' walker
 * (unwind_copies.h), which asks for registrations, reaches the table through
 * the callbacks proc_table__copies_procs fills.
 *
 * One thread: the ring buffer's reader, but for the stateless readers
 * (proc_table__open_maps, proc_table__read_maps), which any thread may call.
 */
#ifndef BPFPROF_PROC_TABLE_H
#define BPFPROF_PROC_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cgroup.h"
#include "proc_file.h"
#include "profile.h"

struct proc_table;
struct maps_cache;
struct mmap_events;
struct notice_thread;

/*
 * Open <proc_dir>/<pid>/maps (pid 0: the profiler's own, /proc/self/maps)
 * read-only, close-on-exec. Returns the fd (the caller closes it) or -errno
 * (-ENOENT: gone). The one place the file is opened; any thread.
 */
int proc_table__open_maps(const char *proc_dir, uint32_t pid);

/*
 * Read <proc_dir>/<pid>/maps (proc(5); fs/proc/task_mmu.c show_map_vma())
 * into a new NUL-terminated buffer owned by the caller (free()). Returns 0
 * and *text, *len, or -errno (-ENOENT/-ESRCH when the process is gone). Any
 * thread.
 */
int proc_table__read_maps(const char *proc_dir, uint32_t pid, char **text, size_t *len);

/*
 * proc_table__read_maps + procmaps__merge (procmaps.h) into process proc of
 * p, for its pid. Returns the mappings added, or -errno.
 */
int proc_table__snapshot(struct profile *p, uint32_t proc, const char *proc_dir);

/*
 * New table reading under proc_dir ("/proc" except in tests; copied).
 * remember: keep each process's last maps for the run (maps_cache.h), and
 * name a process /proc no longer has from them; false for tests that want
 * /proc alone. Returns NULL with errno ENOMEM.
 */
struct proc_table *proc_table__new(const char *proc_dir, bool remember);
void proc_table__free(struct proc_table *t);

/* Where the table reads: "/proc" except in tests (borrowed for t's life). */
const char *proc_table__proc_dir(const struct proc_table *t);

/*
 * Name each new process's cgroup from its record's cgroup id through c
 * (borrowed; must outlive t) rather than /proc/PID/cgroup, which a process
 * gone before its first record is read no longer has. NULL: from /proc.
 */
void proc_table__set_cgroups(struct proc_table *t, struct cgroup_cache *c);

/*
 * Read <proc_dir>/<pid>/stat (proc_stat__read of include/proc_file.h).
 * Returns 0 or -errno (-ENOENT once the process is reaped, -EINVAL for a
 * line that does not parse).
 */
int proc_table__stat(const struct proc_table *t, uint32_t pid, struct proc_stat *ps);

/* The start time (clock ticks after boot) of the process now behind pid, 0 if unknown. */
uint64_t proc_table__start_time(const struct proc_table *t, uint32_t pid);

/*
 * Whether the process now behind pid is the one of start time `start`
 * (any, when 0). Checked after reading one of its /proc files: a process
 * that had a sample before the read and still holds the pid after it held
 * it during the read (a pid is not given to another while it lives); one
 * reaped since counts as the same (its pid could not have been taken and
 * freed again meanwhile).
 */
bool proc_table__same(const struct proc_table *t, uint32_t pid, uint64_t start);

/*
 * Whether the process of start time `start_time` (0: unknown, any) behind
 * pid has exited: reaped, a zombie without threads (a zombie leader whose
 * threads run on after pthread_exit is not), dead, or its pid reused.
 */
bool proc_table__gone(const struct proc_table *t, uint32_t pid, uint64_t start_time);

/*
 * The comm of process pid (its main thread) into comm (PROFILE_COMM_LEN,
 * NUL-terminated). Returns 0, or -ESRCH when it cannot be read or the pid
 * is another process's now (start: as proc_table__same).
 */
int proc_table__comm(const struct proc_table *t, uint32_t pid, uint64_t start,
		     char comm[PROFILE_COMM_LEN]);

/*
 * The cgroup of process proc of p (pr->cgroup_id set: the record's): its
 * cgroup v2 path and container id interned into p (cgroup_path,
 * container_id). From the cgroup cache where one is set and the id known
 * (a record's id of 0, which BPF sends once a CPU has sent the process's
 * first records, is taken from an earlier record of the same process,
 * pid and start, of this run: pr->cgroup_id set to it), else
 * /proc/PID/cgroup; a process gone has none (0). Returns 0 or -ENOMEM.
 */
int proc_table__cgroup(struct proc_table *t, struct profile *p, uint32_t proc);

/*
 * The maps text of process (pid, start) (start: the record's, compared as
 * proc_table__same does) into *text (malloc'd, the caller's) and *len: read
 * from /proc and remembered, or, the pid gone, empty (a zombie) or
 * another's, the last maps remembered for it (read while it lived, by an
 * earlier profile, at its notice, or rendered from its MMAP2 records).
 * *remembered says which. Returns 0, -ESRCH (gone, nothing remembered),
 * -ENOMEM or another -errno.
 */
int proc_table__maps(struct proc_table *t, uint32_t pid, uint64_t start, char **text, size_t *len,
		     bool *remembered);

/*
 * The maps text remembered for (pid, start) (maps_cache__get: start 0 the
 * newest), borrowed until the next call on t; NULL when none, or the table
 * remembers nothing.
 */
const char *proc_table__remembered(struct proc_table *t, uint32_t pid, uint32_t start, size_t *len);

/*
 * Remember text (len bytes) as the maps of (pid, start), as a read would
 * (maps_cache__put). Returns 0, -ENOMEM, or -EINVAL when t remembers nothing.
 */
int proc_table__remember(struct proc_table *t, uint32_t pid, uint32_t start, const char *text,
			 size_t len);

/*
 * A profile (interval) starts at start_ns (CLOCK_MONOTONIC): the maps of
 * processes gone before it are let go (maps_cache__new_profile, __expire).
 */
void proc_table__new_profile(struct proc_table *t, uint64_t start_ns, uint64_t now_ns);

/*
 * Exit, once a second while sampling: the unwinder forgets the exited
 * processes (unwinder__reap: tables of files no process maps any more go),
 * and the maps of exited processes that the current profile (cut at cut_ns,
 * 0 none) has taken go (amortized). now_ns: CLOCK_MONOTONIC.
 */
void proc_table__reap(struct proc_table *t, uint64_t now_ns, uint64_t cut_ns);

/*
 * Whether a process may have exited since the look before the last one
 * (mmap_events__exits moved; always true without the mmap events, and at
 * the first two looks): what an exit-driven clean-up (session__forget_gone,
 * once a second) asks before its walk. Two looks, not one: a process seen
 * exited at one look may still be a zombie (kill(pid, 0) succeeds) until its
 * parent reaps it, which makes no record; the next look, a second later,
 * finds it reaped.
 */
bool proc_table__exits_moved(struct proc_table *t);

/* The maps remembered (borrowed; NULL: nothing remembered), for -v's counters (report.h). */
const struct maps_cache *proc_table__maps_cache(const struct proc_table *t);

/* Processes and bytes of maps text remembered, for -v. */
void proc_table__counts(const struct proc_table *t, size_t *nr, size_t *bytes);

/*
 * The consumers of the maps the table reads (both borrowed, outliving t;
 * NULL: none): the unwinder (unwinder.h) registers processes from them, the
 * symbolizer (symbolize.h) pins the files of a noticed process. The
 * aggregator's reads reach the symbolizer, the unwinder and the
 * interpreters through its observer and frames hook (agg.h).
 */
struct unwinder;
struct symbolizer;
void proc_table__set_unwinder(struct proc_table *t, struct unwinder *u);
void proc_table__set_symbolizer(struct proc_table *t, struct symbolizer *sy);
/*
 * The interpreters (borrowed; NULL: none): a noticed process's Python
 * interpreter is found from its notice's maps while it lives, so that the
 * BPF walk has its layout from then on, not from the aggregator's first
 * record of it, which waits for its copies' registration (a 0.3 s process
 * could be gone by then: no Python frames)
 */
struct interps;
void proc_table__set_interps(struct proc_table *t, struct interps *r);

/*
 * Process proc of p has new maps (its first read, a re-read that added
 * mappings, a new image after an exec; merged by the aggregator): the
 * symbolizer pins the files it maps while it lives, and the unwinder
 * registers it on its thread (unwinder__queue). Returns 0 or -ENOMEM.
 */
int proc_table__maps_changed(struct proc_table *t, const struct profile *p, uint32_t proc);

/*
 * The copies' view of the table (unwind_copies.h): the maps remembered,
 * and registrations asked for (proc_table__register, queued).
 */
struct unwind_copies_procs;
void proc_table__copies_procs(struct proc_table *t, struct unwind_copies_procs *out);

/*
 * Register process pid with the unwinder from its maps read now: at once
 * (now: the -p targets before sampling) or queued on the unwinder's thread
 * (a copied stack waiting for its tables, an exec mapping). Returns 0,
 * -ENOENT (gone), -ENOMEM or another -errno; 0 with no unwinder set.
 */
int proc_table__register(struct proc_table *t, uint32_t pid, bool now);

/*
 * Find the interpreters of kinds (a mask of 1 << enum interp_kind) that
 * process pid runs now, from its maps, through the interpreters set with
 * proc_table__set_interps: for a -p target before its sampling starts, so
 * that its first samples are walked (a V8 found at the first sample's maps
 * leaves the samples of its metadata's read unwalked). Returns 0, -ENOMEM,
 * or -errno when the process cannot be read (then found as before).
 */
int proc_table__find_interps(struct proc_table *t, uint32_t pid, uint32_t kinds);

/*
 * The notice of a process's first samples (a BPFPROF_REC_NOTICE record of
 * size bytes; anything else is ignored), read on this thread: its maps read
 * and remembered, its files pinned by the symbolizer while it lives, so
 * that it is named however late its records are read, also after it has
 * exited and deleted its JIT files. Returns 0 (gone: nothing to do), or
 * -ENOMEM.
 */
int proc_table__notice(struct proc_table *t, const void *data, size_t size);

/*
 * Read the notices on a thread of their own (notice_thread.h: a reader
 * behind a backlog read them too late) from the ring map_fd (borrowed: the
 * session's, open until proc_table__close_notices). Returns 0 (the session
 * must then leave the ring to it: session__notices_elsewhere), or -errno:
 * no thread, the notices stay this thread's (proc_table__notice).
 */
int proc_table__start_notices(struct proc_table *t, int map_fd, uint64_t jit_max_size);

/* No notice comes after the session's stop: those left are captured, the thread ends. */
void proc_table__stop_notices(struct proc_table *t);

/* The thread freed, what it captured and nobody took too: before the session closes its ring. */
void proc_table__close_notices(struct proc_table *t);

/*
 * The mmap events' reader thread stopped (mmap_events__stop): before the
 * unwinder its exec filter asks (proc_table__set_unwinder) is freed.
 */
void proc_table__stop_mmaps(struct proc_table *t);

/* The notices' thread (borrowed; NULL: none), for -v's counters. */
struct notice_thread *proc_table__notice_thread(const struct proc_table *t);

/*
 * Take what the notices' thread captured into the maps remembered and the
 * symbolizer, which are this (the reader's) thread's: no I/O but close(2).
 * Called before each record and before a profile is symbolized, so that a
 * process's first records find what its notices captured; one atomic load
 * when nothing waits, nothing without the thread. Returns 0 or -ENOMEM.
 */
int proc_table__take_captured(struct proc_table *t);

/*
 * The notices' thread's wake-up (notice_thread__wake_fd; -1 without the
 * thread), for the run loop's poll, and what the loop calls when it wakes:
 * the wake-up drained, then proc_table__take_captured. So a short process's
 * capture, and its Python interpreter's find with it, comes while it lives,
 * not at the reader's next batch of records. Returns 0 or -ENOMEM.
 */
int proc_table__notices_wake_fd(const struct proc_table *t);
int proc_table__take_noticed(struct proc_table *t);

/*
 * --call-graph dwarf: learn of executable mappings as they happen (perf's
 * dummy event with MMAP2 records, mmap_events.h), so that a process gone
 * before its maps were read still has them, and its exec mappings register
 * it again. pages: data pages of each CPU's ring. Where the events cannot
 * be opened, one -v line and the table goes on with /proc alone.
 */
void proc_table__watch_mmaps(struct proc_table *t, size_t pages);

/* Whether the MMAP2 records are watched (proc_table__watch_mmaps succeeded). */
bool proc_table__watching_mmaps(const struct proc_table *t);

/* The MMAP2 records' memory (borrowed; NULL: not watched), for -v's counters. */
struct mmap_events *proc_table__mmap_events(const struct proc_table *t);

/*
 * Executable mappings made since a process was registered with the
 * unwinder (mmap_events__take_exec): where one is not in its registration,
 * register it again from its maps now, rather than when a sample's walk or
 * the aggregator next meets an address there: a frame-pointer step into
 * code no registration holds is taken for garbage (the walk ends there),
 * and the legacy variant sends no copy for a leaf there. A registration
 * under way (from maps read before this mapping maybe: a process registered
 * at a sample in its execve, collect2's child before it is ld) is looked at
 * again once done, every 5 ms at most. Call before each record; nothing
 * without watched mmaps and an unwinder.
 */
void proc_table__exec_mappings(struct proc_table *t);

#endif /* BPFPROF_PROC_TABLE_H */

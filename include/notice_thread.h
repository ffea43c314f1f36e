/* SPDX-License-Identifier: MIT */
/*
 * The notices' thread (issue 24, fault 4: the first samples): what a
 * process's samples need to be named later (its /proc/PID/maps, its files
 * held open: map_files, jitdump, perf map) is captured when BPF notices the
 * process (struct bpfprof_notice, the `notices` ring buffer), on a thread of
 * its own that waits on that ring buffer alone, not behind the samples'
 * reader: a reader held back by a backlog of records (both CPUs busy at a
 * high frequency) read the notices over a second late, after a 100 ms
 * process had exited and deleted its jitdump.
 *
 * Threads: the notices' thread does the I/O (its maps read,
 * symbolizer__capture) into items of its own and queues them (lock-free:
 * notice_thread__take costs one load when none wait); the reader takes
 * them and merges them into the maps cache and the symbolizer (a profile
 * of the process built from the text, symbolizer__adopt), which stay the
 * reader's alone. The thread takes no lock the reader holds, malloc's
 * included (notice_thread.c).
 *
 * Rechecks: BPF notices a process at its first sample after exec and 10,
 * 30 and 70 ms later (wall time); a process that gets little CPU (a loaded
 * machine) is still in its dynamic loader then, before it has mapped its
 * jitdump. So each noticed process is watched: its maps are read again
 * NOTICE_RECHECK_FIRST_MS after its last notice, then after twice that
 * wait each time, up to a wait of NOTICE_RECHECK_LAST_MS (about 5 s after
 * its notices in all), and captured again when they changed. At most
 * NOTICE_WATCH_MAX processes are watched (past that, the one due last
 * leaves); a gone process leaves at its next recheck.
 *
 * Rechecks: BPF notices a process at its first sample after its exec and
 * 10, 30 and 70 ms later (wall time); a process that gets little CPU (a
 * loaded machine) is still in its dynamic loader then, before it has
 * mapped its jitdump. So each noticed process is watched: its maps are
 * read again NOTICE_RECHECK_FIRST_MS after its last notice, then after
 * twice the last wait each time, up to a wait of NOTICE_RECHECK_LAST_MS
 * (about 20 s after its notices in all), and captured again when they
 * changed. At most NOTICE_WATCH_MAX processes are watched (past that, the
 * one due last leaves); a gone process leaves at its next recheck. A
 * wake-up also makes the rechecks due within a quarter of their wait; with
 * the mmap events (notice_thread__use_mmap_events) a recheck reads the maps
 * only after an event of the process's mappings.
 *
 * Priority and bounds: SCHED_FIFO priority 1 where permitted (CAP_SYS_NICE;
 * refused: normal priority, said once at -v), so that a loaded machine's
 * CFS tasks do not hold it back. Per notice or recheck it does one maps
 * read, and only when the maps changed since the process's last capture
 * at most NOTICE_MAX_FILES map_files opens, two JIT file opens and a few
 * /proc reads (a notice of unchanged maps: the JIT files and /proc reads;
 * a recheck of unchanged maps: nothing more; with the mmap events, a later
 * notice or a recheck with no event of the process since: no maps read). At real-time priority it
 * uses at most NOTICE_RT_BUDGET_MS of CPU in each NOTICE_RT_WINDOW_MS
 * (the thread's CPU clock), past which it runs at normal priority until
 * the window ends: a fork storm shares the CPU like any task. At most
 * NOTICE_MAX_QUEUED items wait for the reader, past which captures are
 * dropped (counted). The kernel's ring (64 KiB) bounds the notices.
 */
#ifndef BPFPROF_NOTICE_THREAD_H
#define BPFPROF_NOTICE_THREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "profile.h"
#include "symbolize.h"

#define NOTICE_MAX_FILES 64
#define NOTICE_WATCH_MAX 256
#define NOTICE_RECHECK_FIRST_MS 40
#define NOTICE_RECHECK_LAST_MS 10240
#define NOTICE_MAX_QUEUED 1024
#define NOTICE_RT_WINDOW_MS 100
#define NOTICE_RT_BUDGET_MS 20

#define NOTICE_MAPS_FIRST (256 * 1024) /* the thread's maps buffer, bytes: at the start */
#define NOTICE_MAPS_MAX (16 * 1024 * 1024) /* at most (a longer maps text is cut) */
/* A capture's block: one of a pool this size (a longer maps text: a block of its own) */
#define NOTICE_BLOCK_BYTES (64 * 1024)
#define NOTICE_POOL_MAX 64 /* blocks kept for reuse, at most */

/*
 * One process's capture, for the reader: a block mmap'd by the thread
 * (which must not take the malloc lock), text after the struct; given back
 * to the thread's pool by notice_item__free, which must come before
 * notice_thread__free.
 */
struct notice_thread;
struct notice_item {
	struct notice_item *next; /* the queue's, then the list notice_thread__take gives */
	size_t bytes; /* of the block */
	struct notice_thread *pool; /* whose pool it goes back to */
	uint32_t pid, start; /* the process (struct bpfprof_notice) */
	char *maps; /* its /proc/PID/maps text as read (in the block); maps_len bytes */
	size_t maps_len;
	/*
	 * A later notice of maps unchanged since the process's last capture
	 * (no mapping event since, no perf map new) of a process with a
	 * python3.N mapped: no text (maps NULL), no file held; the maps
	 * remembered at that capture stand for it
	 */
	bool unchanged;
	/*
	 * mmap_events__changes of the process read before its maps were
	 * (changes_known: the thread uses the mmap events): the maps are still
	 * current while the count has not moved (proc_table__maps)
	 */
	uint64_t changes;
	bool changes_known;
	struct sym_capture files; /* what symbolizer__adopt takes (owned until then) */
};

struct notice_thread_opts {
	int map_fd; /* the `notices` BPF ring buffer map (borrowed: open until notice_thread__free) */
	const char *proc_dir; /* "/proc" except in tests (borrowed) */
	uint64_t jit_max_size; /* cap per JIT file, bytes (--jit-max-size) */
	bool realtime; /* ask for SCHED_FIFO 1 */
};

/*
 * Start the thread: it consumes the ring of o->map_fd from now on (no other
 * consumer may read it). Signals are blocked on it. Returns 0 and *out, or
 * -errno (nothing started: the caller reads the notices itself).
 */
int notice_thread__start(const struct notice_thread_opts *o, struct notice_thread **out);

/*
 * The items captured since the last take, oldest first (a list through
 * next; each the caller's, notice_item__free). NULL when none: then a
 * single atomic load. Any thread, but meant for the reader's.
 */
struct notice_item *notice_thread__take(struct notice_thread *nt);

/*
 * An eventfd (owned by nt) readable once a capture has been queued since the
 * last notice_thread__drain_wake, for the reader's poll: a short process's
 * capture (its Python interpreter's find: /proc/PID/mem) is merged while it
 * lives, not at the reader's next batch of records. -1 when none (nt NULL).
 */
int notice_thread__wake_fd(const struct notice_thread *nt);

/* Reset the wake-up (a nonblocking eventfd read); the caller takes the captures after. */
void notice_thread__drain_wake(struct notice_thread *nt);

/* Close what it holds and give its block back (or unmap it). NULL is fine. */
void notice_item__free(struct notice_item *it);

/*
 * Consume the notices left in the ring, then end and join the thread.
 * What it captured stays for notice_thread__take. Idempotent.
 */
void notice_thread__stop(struct notice_thread *nt);

/* Stop, free what was never taken, free nt. NULL is fine. */
void notice_thread__free(struct notice_thread *nt);

struct notice_thread_stats {
	uint64_t notices; /* read from the ring */
	uint64_t captured; /* queued for the reader */
	uint64_t rechanged; /* of those, by a recheck that found the maps changed */
	uint64_t spared; /* rechecks not made: no mapping event since the last read */
	uint64_t notices_spared; /* later notices (10, 30, 70 ms) of unchanged maps: nothing read */
	uint64_t gone; /* the process had exited (or its pid was another's) when read */
	uint64_t dropped; /* captured, but NOTICE_MAX_QUEUED waited: let go */
	uint64_t demoted; /* windows in which the real-time budget ran out */
	uint64_t max_delay_ns; /* the latest a notice was read after it was sent */
	uint64_t timer_spared; /* sleeps without the rechecks' timer: no watched process changed */
	bool realtime; /* running at SCHED_FIFO */
};

struct mmap_events;

/*
 * From now on a recheck reads the maps only if m's count of the process's
 * changes moved since its last read (mmap_events__changes: executable
 * mappings made, an exec, its exit, records lost), else the process is
 * taken as unchanged (counted in spared): the recheck is to find executable
 * mappings made after the notices (a jitdump, a JIT's code), which m tells
 * of, and changes no other mapping makes matter to a capture (executable
 * file mappings, the jitdump). m is borrowed (its reader thread started),
 * and must outlive nt's thread (notice_thread__stop). A process's first
 * notice reads its maps whatever m says; its later ones (BPF's at 10, 30
 * and 70 ms) read nothing when m's count has not moved since the last read
 * and no perf map (no mapping) appeared (notices_spared): a process with a
 * python3.N mapped gets an item marked unchanged for the reader (its
 * layout retried while it lives), any other nothing. A runtime that maps its jitdump without
 * PROT_EXEC makes no event: its jitdump is found by the aggregator's own
 * read at its first JIT frame (agg.c), as for a recheck. And the thread
 * sleeps without a timer while no watched process's count has moved
 * (mmap_events__arm_changes: woken at the first move), as each of those
 * rechecks would read nothing: the rechecks' wake-ups, 9-14 in a 3 s run
 * of 8 processes, were a third of the thread's (timer_spared).
 */
void notice_thread__use_mmap_events(struct notice_thread *nt, struct mmap_events *m);

/* Counters so far (relaxed reads: for -v). */
void notice_thread__stats(struct notice_thread *nt, struct notice_thread_stats *st);

#endif /* BPFPROF_NOTICE_THREAD_H */

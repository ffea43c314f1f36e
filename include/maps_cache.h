/* SPDX-License-Identifier: MIT */
/*
 * The run's memory of each process's maps (issue 24, the first and the last
 * samples): for every process (pid, start time) the last /proc/PID/maps
 * text read for it, cut to the lines symbolization needs (executable
 * mappings, a runtime's jit-PID.dump marker). Profiles come and go with
 * --interval; this outlives them, so a process whose records are read only
 * after it exited (its last interval written after it, a reader behind a
 * backlog) is still named from its last maps. Owned by the process table
 * (proc_table.h), which fills it from the aggregator's
 * reads and from the notices of a process's first samples (captured before
 * the ring buffer's backlog is read); looked up when /proc no longer has
 * the process.
 *
 * Bounded by design: an entry goes once its process has exited and no
 * profile still to be read can hold its records (maps_cache__expire), so
 * the table follows the processes alive, not those ever seen.
 */
#ifndef BPFPROF_MAPS_CACHE_H
#define BPFPROF_MAPS_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct maps_cache;

/* proc_dir: "/proc" except in tests (borrowed). NULL with errno ENOMEM. */
struct maps_cache *maps_cache__new(const char *proc_dir);
void maps_cache__free(struct maps_cache *c);

/*
 * Remember the maps text (len bytes) of process (pid, start), replacing
 * what was kept: only its executable and jit-*.dump lines are copied. The
 * entry counts as used by the current profile. Returns 0 or -ENOMEM.
 */
int maps_cache__put(struct maps_cache *c, uint32_t pid, uint32_t start, const char *text,
		    size_t len);

/*
 * The text kept for (pid, start) (start 0: the newest entry of pid), or NULL.
 * Borrowed until the next call on c; *len its bytes. The entry counts as
 * used by the current profile. None kept, or fewer executable mappings kept
 * than the fallback (maps_cache__set_fallback) knows: the fallback's text
 * (with the kept jit-*.dump lines), kept from then on.
 */
const char *maps_cache__get(struct maps_cache *c, uint32_t pid, uint32_t start, size_t *len);

/*
 * The text kept for (pid, start) as maps_cache__get gives it, but without
 * the fallback: for a process alive whose kept maps are known current (a
 * later notice of unchanged maps, proc_table.c). NULL when none is kept.
 */
const char *maps_cache__peek(struct maps_cache *c, uint32_t pid, uint32_t start, size_t *len);

/*
 * A new profile (interval) starts at start_ns (CLOCK_MONOTONIC): from now on
 * puts and gets count as used by it.
 */
void maps_cache__new_profile(struct maps_cache *c, uint64_t start_ns);

/*
 * Let go of the entries no profile still to be read can need: of a process
 * seen exited (now_ns: CLOCK_MONOTONIC) whose records all belong to ended
 * profiles (it was gone by the current one's start), or to the current one
 * (cut_ns: where its sampled time ends, 0 for none), which has taken its
 * maps already. Costs one /proc/PID/stat read per entry not yet seen
 * exited. force: run now; else only once the table has doubled since the
 * last pass (amortized).
 */
void maps_cache__expire(struct maps_cache *c, uint64_t now_ns, uint64_t cut_ns, bool force);

/*
 * Where maps_cache__get looks when it holds nothing for a process: fn
 * renders maps text of (pid, start) (0 and *text malloc'd, the callee's to
 * give, or -errno) from another memory of the process's mappings
 * (mmap_events.h: perf's MMAP2 records); the text is then kept as
 * maps_cache__put keeps it. fn NULL: none (the default).
 */
typedef int (*maps_cache_fallback_fn)(void *ctx, uint32_t pid, uint32_t start, char **text,
				      size_t *len);
void maps_cache__set_fallback(struct maps_cache *c, maps_cache_fallback_fn fn, void *ctx);

/* Entries and bytes of text held, for -v. */
void maps_cache__counts(const struct maps_cache *c, size_t *nr, size_t *bytes);

#endif /* BPFPROF_MAPS_CACHE_H */

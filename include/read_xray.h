/* SPDX-License-Identifier: MIT */
/*
 * LLVM XRay trace reader: FDR mode version 1 as "XRay Flight Data Recorder
 * Trace Format" (llvm/docs/XRayFDRFormat.rst in llvm-project) describes
 * it, FDR versions 2–5
 * as LLVM's runtimes write them (BufferExtents-delimited thread blocks, PID
 * records, delta-encoded custom and typed events), and basic ("naive") mode
 * versions 1–3 (32-byte records with absolute TSCs). Either byte order.
 *
 * Each thread's call stack is rebuilt from entries and exits into a call
 * tree; when a file is done its tree becomes profile stacks of the process
 * the trace names (pid 0 when the format has none): user ips = function
 * addresses leaf first (from the instrumentation map, or the bare function
 * id without one), value = self time in ns (TSC ticks × 1e9 /
 * cycle_frequency), count = calls that ended on that path. Entries still open
 * at the end of a thread's data are closed at its last timestamp: their time
 * is kept, but they are not counted as calls. An exit that does not match the
 * innermost entry closes the frames above the matching one (their exits were
 * lost); one with no matching entry is ignored. Both are counted in stats.
 *
 * Malformed input: the file, byte offset and problem are printed with
 * pr_warn. A broken file header rejects the file; damage inside a thread
 * buffer drops the rest of that buffer (that thread's open frames are closed
 * at its last good timestamp) and reading resumes at the next buffer. Either
 * way the read returns -EINVAL, and the good buffers stay in the profile:
 * the caller decides whether a partial result is worth writing.
 */
#ifndef BPFPROF_READ_XRAY_H
#define BPFPROF_READ_XRAY_H

#include <stddef.h>
#include <stdint.h>
#include "profile.h"
#include "xray_instr_map.h"

struct xray_reader;

/* Per function, summed over every file read (for --account). */
struct xray_func_stats {
	uint32_t id; /* function id */
	uint64_t calls; /* completed calls (an exit matched an entry) */
	double total_ns; /* exit - entry of those calls, nested recursion included */
	double self_ns; /* total minus time in instrumented callees */
};

struct xray_read_stats {
	uint64_t files;
	uint64_t records; /* function records */
	uint64_t buffers; /* thread buffers (blocks) read */
	uint64_t bad_buffers; /* buffers cut short by damage */
	uint64_t unmatched_exits; /* exits with no matching entry: ignored */
	uint64_t unwound_frames; /* frames closed by an exit of a caller */
	uint64_t open_at_end; /* frames closed at the end of a thread's data */
	uint64_t unknown_ids; /* calls of ids the map does not know */
	uint64_t custom_events, typed_events, call_args;
};

/*
 * A reader that adds to p. map may be NULL (frames become the bare function
 * ids, named "fn#ID" by xray_reader__name). Returns NULL with errno ENOMEM.
 */
struct xray_reader *xray_reader__new(struct profile *p, const struct xray_instr_map *map);
void xray_reader__free(struct xray_reader *r);

/*
 * Read one trace file (mmapped). Returns 0, -errno when it cannot be opened
 * (message printed), -EINVAL when malformed (see above), -ENOTSUP for a
 * valid header of an unsupported type or version, -ENOMEM.
 */
int xray_reader__read_file(struct xray_reader *r, const char *path);
/* Same for bytes in memory; name is used in messages. */
int xray_reader__read_mem(struct xray_reader *r, const char *name, const uint8_t *data, size_t len);

/*
 * Name every location of the profile from the map (or "fn#ID"): calls
 * profile__resolve_locs and sets func/dso. Returns 0 or -ENOMEM.
 */
int xray_reader__name_locs(struct xray_reader *r);

/* Per-function stats, one per function entered, in no particular order; borrowed. */
const struct xray_func_stats *xray_reader__func_stats(const struct xray_reader *r, size_t *nr);
const struct xray_read_stats *xray_reader__stats(const struct xray_reader *r);
/* "name" from the map, else "fn#ID"; borrowed until the next call. */
const char *xray_reader__name(struct xray_reader *r, uint32_t id);

#endif /* BPFPROF_READ_XRAY_H */

/* SPDX-License-Identifier: MIT */
/*
 * gperftools CPU profile writer (.prof), per "Google CPU Profiler Binary
 * Data File Format" (docs/cpuprofile-fileformat.html in gperftools):
 * native-endian words of
 * pointer size; header {0, 3, 0, period_us, 0}; per stack {count, depth,
 * pc[0..depth)} leaf first with raw PCs (readers subtract 1 from return
 * addresses themselves); trailer {0, 1, 0}; then the text of /proc/PID/maps.
 *
 * The format has one address space and no pids. With several processes each
 * gets its own address window: its PCs and its mapping lines are shifted by
 * the same delta (window index << shift), so file offsets, and with them
 * pprof's symbolization, stay right. A lone process keeps its real addresses.
 * Only user frames are written; samples without a user stack (kernel
 * threads) have nothing to attribute in this format and are skipped.
 */
#ifndef BPFPROF_WRITE_GPERF_H
#define BPFPROF_WRITE_GPERF_H

#include <stdint.h>
#include "buf.h"
#include "profile.h"

struct gperf_stats {
	uint64_t samples_written;
	uint64_t samples_skipped; /* no user frames */
	uint32_t processes; /* address windows used */
};

/*
 * Append the profile to out. period_us comes from p->period_ns / 1000
 * (at least 1). Returns 0, or -ENOMEM (also left in out->err), or -E2BIG
 * when the processes' addresses cannot be given separate windows.
 * stats may be NULL.
 */
int write_gperf(const struct profile *p, struct buf *out, struct gperf_stats *stats);

#endif /* BPFPROF_WRITE_GPERF_H */

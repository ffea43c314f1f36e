/* SPDX-License-Identifier: MIT */
/* Continuous mode's output directory: interval stamps and --keep pruning. */
#ifndef BPFPROF_OUTDIR_H
#define BPFPROF_OUTDIR_H

#include <stdint.h>

/* "20261122T123000Z": an interval's start, UTC, to the second */
#define OUTDIR_STAMP_LEN 16

/* Format CLOCK_REALTIME ns as a stamp (OUTDIR_STAMP_LEN chars + NUL). */
void outdir__stamp(uint64_t realtime_ns, char out[OUTDIR_STAMP_LEN + 1]);

/*
 * Keep the newest `keep` sets in dir: a set is every file named STAMP-NAME
 * for one STAMP and NAME among names[0..nr_names). Other files are never
 * touched. Returns the number of files removed, or -errno when dir cannot
 * be read; keep <= 0 removes nothing.
 */
int outdir__prune(const char *dir, const char *const *names, int nr_names, int keep);

#endif /* BPFPROF_OUTDIR_H */

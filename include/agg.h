/* SPDX-License-Identifier: MIT */
/*
 * Aggregator: turns ring-buffer sample records (include/bpfprof_abi.h) into
 * the profile's distinct (process, callchain) counts. The first sample of a
 * process snapshots its /proc/PID/maps; a new callchain with a user address
 * outside every known mapping triggers a re-read (rate-limited per process),
 * so code mapped later, and processes that exit later, are still attributed.
 * No BPF here: tests feed it synthetic records.
 */
#ifndef BPFPROF_AGG_H
#define BPFPROF_AGG_H

#include <stddef.h>
#include <stdint.h>
#include "profile.h"

struct agg;

/*
 * New aggregator filling `p` (borrowed; must outlive the aggregator).
 * proc_dir is "/proc" except in tests. period_ns is the weight of one
 * sample, ns. Returns NULL with errno ENOMEM.
 */
struct agg *agg__new(struct profile *p, const char *proc_dir, uint64_t period_ns);
void agg__free(struct agg *a);

/*
 * Consume one ring-buffer record of `size` bytes. Returns 0, -EINVAL for a
 * record whose type or sizes make no sense (counted, logged at debug), or
 * -ENOMEM (fatal for the caller).
 */
int agg__record(struct agg *a, const void *data, size_t size);

/* Records rejected as malformed so far. */
uint64_t agg__nr_bad(const struct agg *a);

#endif /* BPFPROF_AGG_H */

/* SPDX-License-Identifier: MIT */
/*
 * pprof profile.proto writer (.pb.gz, .pprof): encoded with protobuf-c from
 * the project's copy of profile.proto, gzip-compressed with zlib, as pprof
 * producers do. Sample types samples/count and cpu/nanoseconds; period,
 * duration and time of collection; symbolized functions and locations (user,
 * kernel, JIT); mappings with file name and build-id; labels pid, comm,
 * cgroup and container_id where known.
 * Ref: github.com/google/pprof proto/profile.proto.
 */
#ifndef BPFPROF_WRITE_PPROF_H
#define BPFPROF_WRITE_PPROF_H

#include <stdbool.h>
#include "buf.h"
#include "profile.h"

/*
 * Append the gzip-compressed profile to out. The profile must be
 * symbolized (symbolizer__symbolize), so that p->locs and every stack's
 * locs are set. Returns 0, -ENOMEM, or -EINVAL when the profile has no
 * resolved locations.
 */
int write_pprof(const struct profile *p, struct buf *out);

/*
 * write_pprof with only the samples of the processes i where procs[i] is
 * true (procs: p->nr_procs entries; NULL keeps all), and only the
 * locations, functions and mappings those samples use. --push writes one
 * such profile per service. Same returns as write_pprof.
 */
int write_pprof_procs(const struct profile *p, const bool *procs, struct buf *out);

#endif /* BPFPROF_WRITE_PPROF_H */

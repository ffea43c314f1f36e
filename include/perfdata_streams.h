/* SPDX-License-Identifier: MIT */
/*
 * The perf.data outputs of one profile, streamed to as the aggregator
 * hears of processes and samples (agg_observer, include/agg.h), so that
 * memory does not grow with the samples (include/write_perfdata.h). An
 * output that fails while streaming (disk full) is dropped with a warning,
 * its temporary removed (output__abort); the others go on.
 */
#ifndef BPFPROF_PERFDATA_STREAMS_H
#define BPFPROF_PERFDATA_STREAMS_H

#include <stdbool.h>
#include <stdint.h>
#include "cli.h"
#include "output.h"
#include "profile.h"
#include "write_perfdata.h"

struct symbolizer;

struct perfdata_streams {
	struct output *outputs; /* borrowed: the outputs, opened (output__open) */
	int nr_outputs;
	/* a writer for each perf.data output; NULL for other formats or after a failure */
	struct perfdata_writer *w[CLI_MAX_OUTPUTS];
	int err[CLI_MAX_OUTPUTS]; /* -errno: why output i was dropped; 0 */
};

/*
 * A writer for each perf.data output among outputs[0..nr_outputs), on its
 * temporary file. The kernel they describe (text, modules, build-id) goes
 * into p first (kernel_image__read), its text bounds from sy's kallsyms:
 * one read of it a run, not two an interval. Returns 0 or -errno (message
 * printed); the streams opened are freed by perfdata_streams__close.
 */
int perfdata_streams__open(struct perfdata_streams *ps, struct output *outputs, int nr_outputs,
			   const struct perfdata_opts *po, struct profile *p,
			   struct symbolizer *sy);

/* A process's mappings (perfdata__maps), at time_ns (CLOCK_MONOTONIC), to every stream. */
void perfdata_streams__maps(struct perfdata_streams *ps, const struct profile *p, uint32_t proc,
			    uint64_t time_ns);

/* A CPU sample, or an off-CPU block (offcpu), to every stream. */
void perfdata_streams__sample(struct perfdata_streams *ps, const struct profile_sample *s,
			      bool offcpu);

/*
 * FINISHED_ROUND to every stream, after a ring-buffer batch: perf report
 * then delivers what came before it, and rejects a record older than that
 * ("out of order events"). Not while records older than the batch's are
 * kept back (the caller's to know).
 */
void perfdata_streams__round(struct perfdata_streams *ps);

/* Whether a perf.data output is still being written. */
bool perfdata_streams__active(const struct perfdata_streams *ps);

/*
 * End output i's stream (perfdata__finish with p: lost samples, feature
 * sections), its samples and off-CPU samples in *samples and *offcpu.
 * Returns 0 (then output__commit with no buffer renames it into place),
 * -errno of the failure that dropped it (its warning already printed), or
 * perfdata__finish's -errno.
 */
int perfdata_streams__finish(struct perfdata_streams *ps, int i, const struct profile *p,
			     uint64_t *samples, uint64_t *offcpu);

/* Free the writers (their files are the outputs': not touched) and forget the failures. */
void perfdata_streams__close(struct perfdata_streams *ps);

#endif /* BPFPROF_PERFDATA_STREAMS_H */

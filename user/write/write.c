// SPDX-License-Identifier: MIT
/* The output table (include/write.h) and its adapters to each writer's own call. */
#include <errno.h>
#include <string.h>
#include "write.h"
#include "write_folded.h"
#include "write_gperf.h"
#include "write_otlp.h"
#include "write_pprof.h"
#include "write_svg.h"

static int gperf(const struct profile *p, struct buf *b, const struct write_opts *o,
		 struct write_result *r)
{
	struct gperf_stats gs = { 0 };
	int err = write_gperf(p, b, &gs);

	r->samples = gs.samples_written;
	r->skipped = gs.samples_skipped;
	return err;
}

static int pprof(const struct profile *p, struct buf *b, const struct write_opts *o,
		 struct write_result *r)
{
	return write_pprof(p, b);
}

static int otlp(const struct profile *p, struct buf *b, const struct write_opts *o,
		struct write_result *r)
{
	return write_otlp(p, NULL, b);
}

static int folded(const struct profile *p, struct buf *b, const struct write_opts *o,
		  struct write_result *r)
{
	return write_folded(p, b);
}

static int svg(const struct profile *p, struct buf *b, const struct write_opts *o,
	       struct write_result *r)
{
	return write_svg(p, b, o && o->title ? o->title : "bpfprof CPU flame graph");
}

const struct writer writers[] = {
	{ OUTPUT_GPERF, "prof", ".prof", gperf },	{ OUTPUT_GPERF, "gperf", NULL, gperf },
	{ OUTPUT_PERFDATA, "perf", ".data", NULL }, /* perf.data, out.data */
	{ OUTPUT_PERFDATA, "perfdata", NULL, NULL },	{ OUTPUT_SVG, "svg", ".svg", svg },
	{ OUTPUT_PPROF, "pprof", ".pb.gz", pprof },	{ OUTPUT_PPROF, "pprof", ".pprof", pprof },
	{ OUTPUT_FOLDED, "folded", ".folded", folded },	{ OUTPUT_OTLP, "otlp", ".otlp", otlp },
};

const size_t nr_writers = sizeof(writers) / sizeof(writers[0]);

const struct writer *writer__of(enum output_format f)
{
	size_t i;

	for (i = 0; i < nr_writers; i++)
		if (writers[i].format == f)
			return &writers[i];
	return NULL;
}

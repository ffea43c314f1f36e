// SPDX-License-Identifier: MIT
/* perf.data outputs streamed while sampling (include/perfdata_streams.h). */
#include <errno.h>
#include <string.h>
#include "kernel_image.h"
#include "log.h"
#include "perfdata_streams.h"
#include "symbolize.h"

/* A perf.data output that fails while streaming (disk full) is dropped; the others go on. */
static void stream_failed(struct perfdata_streams *ps, int i, int err)
{
	pr_warn("cannot write '%s': %s; no file written\n", ps->outputs[i].path, strerror(-err));
	ps->err[i] = err;
	perfdata__free(ps->w[i]);
	ps->w[i] = NULL;
	output__abort(&ps->outputs[i]);
}

int perfdata_streams__open(struct perfdata_streams *ps, struct output *outputs, int nr_outputs,
			   const struct perfdata_opts *po, struct profile *p, struct symbolizer *sy)
{
	bool have_kernel = false;
	int i, err;

	memset(ps, 0, sizeof(*ps));
	ps->outputs = outputs;
	ps->nr_outputs = nr_outputs;
	for (i = 0; i < nr_outputs; i++) {
		if (outputs[i].format != OUTPUT_PERFDATA)
			continue;
		if (!have_kernel) {
			uint64_t text, etext;

			if (symbolizer__kernel_text(sy, &text, &etext))
				text = etext = 0;
			err = kernel_image__read(p, text, etext, NULL);
			if (err)
				return err;
			have_kernel = true;
		}
		ps->w[i] = perfdata__new(outputs[i].fd, po, p);
		if (!ps->w[i]) {
			err = -errno;
			pr_warn("cannot write '%s': %s\n", outputs[i].path, strerror(-err));
			return err;
		}
	}
	return 0;
}

void perfdata_streams__maps(struct perfdata_streams *ps, const struct profile *p, uint32_t proc,
			    uint64_t time_ns)
{
	int i, err;

	for (i = 0; i < ps->nr_outputs; i++)
		if (ps->w[i] && (err = perfdata__maps(ps->w[i], p, proc, time_ns)))
			stream_failed(ps, i, err);
}

void perfdata_streams__sample(struct perfdata_streams *ps, const struct profile_sample *s,
			      bool offcpu)
{
	int i, err;

	for (i = 0; i < ps->nr_outputs; i++)
		if (ps->w[i] &&
		    (err = offcpu ? perfdata__offcpu(ps->w[i], s) : perfdata__sample(ps->w[i], s)))
			stream_failed(ps, i, err);
}

void perfdata_streams__round(struct perfdata_streams *ps)
{
	int i, err;

	for (i = 0; i < ps->nr_outputs; i++)
		if (ps->w[i] && (err = perfdata__round(ps->w[i])))
			stream_failed(ps, i, err);
}

bool perfdata_streams__active(const struct perfdata_streams *ps)
{
	for (int i = 0; i < ps->nr_outputs; i++)
		if (ps->w[i])
			return true;
	return false;
}

int perfdata_streams__finish(struct perfdata_streams *ps, int i, const struct profile *p,
			     uint64_t *samples, uint64_t *offcpu)
{
	*samples = *offcpu = 0;
	if (ps->err[i] || !ps->w[i])
		return ps->err[i];
	*samples = perfdata__nr_samples(ps->w[i]);
	*offcpu = perfdata__nr_offcpu(ps->w[i]);
	return perfdata__finish(ps->w[i], p);
}

void perfdata_streams__close(struct perfdata_streams *ps)
{
	for (int i = 0; i < ps->nr_outputs; i++)
		perfdata__free(ps->w[i]);
	memset(ps, 0, sizeof(*ps));
}

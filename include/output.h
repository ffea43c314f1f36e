/* SPDX-License-Identifier: MIT */
/*
 * Output files: format chosen from the name (or --format), written completely
 * or not at all. output__open creates a temporary file beside the target
 * (mode 0600, O_EXCL, so a planted symlink is never followed) before sampling
 * starts, so an unwritable path fails early; output__commit writes, fsyncs and
 * renames it over the target; output__abort removes it.
 */
#ifndef BPFPROF_OUTPUT_H
#define BPFPROF_OUTPUT_H

#include <stddef.h>
#include "buf.h"

enum output_format {
	OUTPUT_NONE = 0,
	OUTPUT_GPERF,		/* gperftools CPU profile, .prof */
	OUTPUT_PERFDATA,	/* perf.data (PERFILE2), .data; streamed, needs a seekable file */
	OUTPUT_SVG,		/* flame graph, .svg */
	OUTPUT_PPROF,		/* pprof profile.proto, gzip, .pb.gz / .pprof */
	OUTPUT_FOLDED,		/* folded stacks, .folded */
};

struct output {
	const char *path;	/* as given; "-" is stdout */
	enum output_format format;
	char *tmp_path;		/* owned; NULL for stdout or after commit/abort */
	int fd;			/* -1 when closed */
};

/* Format for a file name ("x.prof"), or OUTPUT_NONE when the extension is unknown. */
enum output_format output__format_from_path(const char *path);
/* Format by name ("prof", "gperf"), or OUTPUT_NONE. */
enum output_format output__format_from_name(const char *name);
const char *output__format_name(enum output_format f);

/* Create the temporary file. Returns 0 or -errno, with the message printed. */
int output__open(struct output *o);
/*
 * Write all of b (NULL: the content was already written to o->fd), fsync,
 * rename into place. Returns 0 or -errno (message printed, temporary removed).
 */
int output__commit(struct output *o, const struct buf *b);
/* Remove the temporary file, if any. Safe to call twice. */
void output__abort(struct output *o);
/* Async-signal-safe: unlink the temporary (for a second Ctrl-C during writing). */
void output__abort_signal_safe(struct output *o);

#endif /* BPFPROF_OUTPUT_H */

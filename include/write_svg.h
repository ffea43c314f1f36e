/* SPDX-License-Identifier: MIT */
/*
 * Flame graph (.svg): a self-contained interactive SVG in the manner of
 * flamegraph.pl (hover details, click to zoom, search), built from the same
 * merged call tree as the folded output. Widths are sample counts.
 */
#ifndef BPFPROF_WRITE_SVG_H
#define BPFPROF_WRITE_SVG_H

#include "buf.h"
#include "profile.h"

/* Append the SVG document to out (profile symbolized). title: shown on top. Returns 0 or -ENOMEM. */
int write_svg(const struct profile *p, struct buf *out, const char *title);

#endif /* BPFPROF_WRITE_SVG_H */

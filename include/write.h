/* SPDX-License-Identifier: MIT */
/*
 * The output table: one row per way of naming an output format, {format,
 * name as --format takes it, file name extension, write function}, shared by
 * `bpfprof` and `bpfprof xray` (output.c finds formats in it; both mains
 * write through it). Every buffer writer is called the same way; perf.data
 * has no write function: it is streamed as samples come (write_perfdata.h)
 * and finished by its caller.
 */
#ifndef BPFPROF_WRITE_H
#define BPFPROF_WRITE_H

#include <stddef.h>
#include <stdint.h>
#include "buf.h"
#include "output.h"
#include "profile.h"

struct write_opts {
	const char *title; /* the flame graph's title; NULL: "bpfprof CPU flame graph" */
};

struct write_result {
	uint64_t samples; /* .prof: samples written (in the view's unit) */
	uint64_t skipped; /* .prof: samples without user frames, left out */
};

struct writer {
	enum output_format format;
	const char *name; /* as --format takes it */
	const char *ext; /* file name extension; NULL for a second name of a format */
	/*
	 * Append the whole file for p to b; r (zeroed first) gets the counts a
	 * writer reports. Returns 0 or -errno (write_*.h say which). NULL for
	 * perf.data.
	 */
	int (*write)(const struct profile *p, struct buf *b, const struct write_opts *o,
		     struct write_result *r);
};

extern const struct writer writers[];
extern const size_t nr_writers;

/* The row of format f (its first name), or NULL for OUTPUT_NONE. */
const struct writer *writer__of(enum output_format f);

#endif /* BPFPROF_WRITE_H */

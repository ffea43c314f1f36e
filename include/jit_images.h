/* SPDX-License-Identifier: MIT */
/*
 * The JIT images of one profile (include/jit_elf.h): which processes get
 * them, planned as their mappings appear (perf.data names the images in
 * its MMAP2 records then) and written once the profile is symbolized, into
 * one directory beside the outputs; and, for the summary, why a process's
 * JIT code stayed unnamed and what would name it (report__unnamed_jit).
 */
#ifndef BPFPROF_JIT_IMAGES_H
#define BPFPROF_JIT_IMAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "profile.h"

struct jvm_perfmaps;
struct symbolizer;

/*
 * Plan images (jit_elf__plan) for process proc's anonymous executable
 * mappings in dir (absolute) when it may hold JIT code that gets names: a
 * jitdump or perf map was found (sy), it runs Python, or it is a JVM that
 * will be asked for its perf map at the end (ask_jvm: not --no-jvm-perfmap,
 * jvm_perfmap.h). dir NULL: no image is written. Returns 0 or -ENOMEM.
 */
int jit_images__plan(struct profile *p, uint32_t proc, const struct symbolizer *sy, const char *dir,
		     bool ask_jvm);

/*
 * Write the images of every sampled process with JIT symbols (sy's, and
 * its Python functions, sym_python.h) into dir, created if need be, with
 * mode (the outputs' --output-mode), so that .prof and perf.data readers
 * name its JIT frames. dir NULL: nothing. A failure (warned) costs those
 * names only.
 */
void jit_images__write(struct profile *p, struct symbolizer *sy, const char *dir, unsigned mode);

/* Where report__unnamed_jit's reasons come from (borrowed). */
struct jit_images_why {
	const struct symbolizer *sy; /* the JIT files found for each process */
	const struct jvm_perfmaps *jvm; /* the JVMs asked for their perf map (may be NULL) */
	bool no_jvm_perfmap; /* --no-jvm-perfmap: none was asked */
};

/*
 * report_jit_why_fn (report.h), ctx a struct jit_images_why: why process
 * proc's JIT code stayed unnamed (no JIT file, not in its jitdump or perf
 * map yet, the JVM wrote no map and why) and the remedy, in buf. Returns
 * true.
 */
bool jit_images__why_unnamed(void *ctx, const struct profile *p, uint32_t proc, char *buf,
			     size_t size);

#endif /* BPFPROF_JIT_IMAGES_H */

/* SPDX-License-Identifier: MIT */
/*
 * The BPF walk's V8 step (bpf/v8.bpf.h, v8_frame) in user space, for the
 * samples the BPF program sent as stack copies (their process's unwind
 * tables not loaded yet: include/unwind_copies.h): the JavaScript frames
 * of a copy's walk recorded as the BPF walk records them (two words a
 * frame, include/bpfprof_abi.h struct bpfprof_v8_proc), so that V8's
 * naming (interp_v8.c's merge) takes them alike. The frame's slots come
 * from the copy, the JSFunction, its map's type and its Code from the
 * process's memory; a cache of recent functions, checked against each
 * frame as BPF's is, spares those reads for a function seen again.
 */
#ifndef BPFPROF_V8_COPY_WALK_H
#define BPFPROF_V8_COPY_WALK_H

#include <stdint.h>
#include "bpfprof_abi.h"
#include "unwind_step.h"

/* Read len bytes of the process at addr: 0, or -errno */
typedef int (*v8_copy_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

#define V8_COPY_FNS 256

/* A JSFunction as last read (as BPF's struct v8_fn) */
struct v8_copy_fn {
	uint64_t fn, shared, code, start;
	uint32_t size, ckind;
};

/* One process's cache of functions (zeroed: empty) */
struct v8_copy_cache {
	struct v8_copy_fn fns[V8_COPY_FNS];
};

/*
 * The JavaScript frames among frames[0..nr) (a copy's walk steps: pc, sp,
 * bp; frame i stands for user address i) of a process of layout cfg, its
 * stack copy stack and its memory read through read(ctx): at most
 * max_frames frames of two words into words, newest first. Returns the
 * frames recorded, with *stop BPFPROF_STAT_V8_END (some),
 * BPFPROF_STAT_V8_LIMIT (max_frames reached) or BPFPROF_STAT_V8_NONE
 * (none). Everything read is the process's to forge: as in BPF, a frame
 * that does not check is skipped, user space's naming checks the rest.
 */
uint32_t v8_copy_walk(const struct bpfprof_v8_proc *cfg, v8_copy_read_fn read, void *ctx,
		      struct v8_copy_cache *cache, const struct unwind_step_frame *frames,
		      uint32_t nr, const struct unwind_step_stack *stack, uint64_t *words,
		      uint32_t max_frames, uint32_t *stop);

#endif /* BPFPROF_V8_COPY_WALK_H */

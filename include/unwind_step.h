/* SPDX-License-Identifier: MIT */
/*
 * The BPF walk of a user stack (walk_step in bpf/unwind.bpf.h), in user
 * space, over a copy of the stack: for the samples the BPF program sent as
 * struct bpfprof_sample_copy (include/bpfprof_abi.h) because their process's
 * tables were not ready. Each step is the BPF program's own source,
 * include/unwind_walk_step.h, compiled here, over the same compact rows
 * (unwinder__rule): the same rules, checks and stop reasons (enum
 * bpfprof_stat), so that a copied sample aggregates as if BPF had walked it.
 *
 * One difference is inherent: BPF reads the live stack, this reads the copy
 * (from the sample's rsp up, BPFPROF_COPY_STACK_SIZE at most). A read
 * outside it, or in one of its holes, fails as a read of a page not
 * present does in BPF.
 */
#ifndef BPFPROF_UNWIND_STEP_H
#define BPFPROF_UNWIND_STEP_H

#include <stdbool.h>
#include <stdint.h>
#include "bpfprof_abi.h"

/* The registers a walk begins from, and the 4 code bytes at ip - 1 (NULL: not readable) */
struct unwind_step_regs {
	uint64_t ip, sp, bp;
	const uint8_t *code;
	/* ip follows a syscall instruction at kernel entry: its row is ip - 1's */
	bool after_syscall;
};

/*
 * A copy of the user stack: user addresses [addr, addr + size), but for
 * the pages not present when it was made: bit k of holes, k counted in
 * 4 KiB pages from addr's page (struct bpfprof_sample_copy's holes)
 */
struct unwind_step_stack {
	const uint8_t *data;
	uint64_t addr, size;
	uint32_t holes;
};

/*
 * The rule for user address pc: 0 with *rule (BPFPROF_UNWIND_NONE where the
 * mapping has no table, or no row covers pc), or -ENOENT when pc is in no
 * registered executable mapping (the BPF walk's BPFPROF_STAT_WALK_NO_MAPPING).
 */
typedef int (*unwind_step_rule_fn)(void *ctx, uint64_t pc, uint32_t *rule);

struct unwind_step_result {
	uint32_t nr; /* addresses stored in ips[], leaf first */
	uint32_t stop; /* enum bpfprof_stat of the walk's end; 0: no walk (ip 0 or a kernel address) */
	uint32_t frames_cfi, frames_fp; /* frames stepped by a row, by frame pointers */
	/*
	 * stop BPFPROF_STAT_WALK_NO_MAPPING at a pc that is code (the leaf's,
	 * or a CFI step's): that pc, whose mapping the registration lacks
	 * (mapped since); 0 otherwise
	 */
	uint64_t unmapped_pc;
	/*
	 * stop BPFPROF_STAT_WALK_NO_MAPPING after a frame-pointer step: the
	 * return address it found (garbage, or code mapped since); 0 otherwise
	 */
	uint64_t unmapped_fp_pc;
};

/*
 * Walk the stack from regs into ips[0..max) (max: --max-stack, at most
 * BPFPROF_MAX_USER_STACK). rule NULL: the process has no tables (every step
 * by frame pointers, as BPF walks a process not ready). Fills *res; reads
 * only stack->data[0..size) and regs->code[0..4).
 */
void unwind_step__walk(const struct unwind_step_regs *regs, const struct unwind_step_stack *stack,
		       unwind_step_rule_fn rule, void *ctx, uint32_t max, uint64_t *ips,
		       struct unwind_step_result *res);

/* A frame as the walk's step i began: the state the BPF walk's interpreter hooks see */
struct unwind_step_frame {
	uint64_t pc, sp, bp;
	bool no_row; /* stepped by frame pointers where no row was found (unwind_walk_no_row) */
};

/*
 * unwind_step__walk, and each step's frame into frames[0..*nr_frames)
 * (room for max), for an interpreter's look at the frames (V8's, as
 * bpf/v8.bpf.h's v8_frame sees them at each step).
 */
void unwind_step__walk_frames(const struct unwind_step_regs *regs,
			      const struct unwind_step_stack *stack, unwind_step_rule_fn rule,
			      void *ctx, uint32_t max, uint64_t *ips,
			      struct unwind_step_frame *frames, uint32_t *nr_frames,
			      struct unwind_step_result *res);

#endif /* BPFPROF_UNWIND_STEP_H */

/* SPDX-License-Identifier: MIT */
/*
 * The row generator of user/unwind/unwind_table.c's fast path: a call frame
 * instruction interpreter (DWARF 5 section 6.4.2) for the part of CFI the
 * rule word can say, run once per FDE from its start to its end, where libdw
 * replays the FDE from its start for every row (87 ms per MiB of CFI).
 * It tracks only the CFA, rbp (6), rsp (7) and the return address (16),
 * from libdw's x86-64 ABI initial state (elfutils backends/x86_64_cfi.c:
 * rbx, rbp, r12-r15 "same value", rsp "val_offset(0)", everything else,
 * the return address included, undefined), and turns each row into the rule
 * word exactly as frame_rule does from libdw's answers. Anything outside the
 * common subset (expressions other than the PLT's, DW_CFA_set_loc, a row
 * past the FDE's end, unbalanced restore_state, a return address column
 * other than 16) makes it give up on that FDE, which libdw then builds: so
 * the tables are libdw's, row for row (tests/test_unwind_table.c compares
 * both on the host's files), only faster.
 */
#ifndef BPFPROF_UNWIND_ROWS_FAST_H
#define BPFPROF_UNWIND_ROWS_FAST_H

#include <stdbool.h>
#include <stdint.h>

/* Where one register is, as frame_rule sees it */
enum fast_reg_kind {
	FAST_UNDEF, /* also any register not saved */
	FAST_SAME,
	FAST_OFFSET, /* at CFA + off */
	FAST_VAL_OFFSET, /* = CFA + off */
	FAST_OTHER, /* in another register, an expression: no rule word says it */
};

struct fast_reg {
	uint8_t kind;
	int64_t off;
};

struct fast_state {
	uint8_t cfa_kind; /* 0: register + offset, 1: the PLT expression, 2: another expression */
	uint64_t cfa_reg;
	int64_t cfa_off;
	unsigned int plt_threshold;
	struct fast_reg rbp, rsp, ra;
};

/* A row found: [loc, next advance) has state s; returns 0 or -errno to stop */
typedef int (*fast_row_fn)(void *ctx, uint64_t loc, const struct fast_state *s);

/*
 * Run a CIE's initial instructions into *init (from the ABI's initial
 * state), then an FDE's from loc `start` to `end`, calling row() at each row
 * start. caf/daf: the CIE's code and data alignment factors. Returns 0, 1
 * (not in the subset handled: the caller uses libdw for this FDE), or what
 * row() returned.
 */
int fast_rows_cie(const uint8_t *p, const uint8_t *end, int64_t daf, struct fast_state *init);
int fast_rows_fde(const uint8_t *p, const uint8_t *end, uint64_t caf, int64_t daf,
		  const struct fast_state *init, uint64_t start, uint64_t fde_end, fast_row_fn row,
		  void *ctx);

#endif /* BPFPROF_UNWIND_ROWS_FAST_H */

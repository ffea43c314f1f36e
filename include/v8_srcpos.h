/* SPDX-License-Identifier: MIT */
/*
 * V8's source-position tables and line ends, decoded from bytes read out of
 * a node process (pure functions: no memory of the process here).
 *
 * A table (V8 src/codegen/source-position-table.cc) is a run of entries,
 * each two zigzag VLQ integers (7 bits a byte, least significant first, bit
 * 7 "more"): the code offset's delta, negated minus one for an expression
 * (a statement's is not), and the source position's delta, both from the
 * previous entry, the first from code offset -1 (the function entry) and
 * position 0. A position (src/codegen/source-position.h) is bit 0
 * "external", bits 1-30 the script offset + 1, bits 31-46 the inlining id
 * + 1 (0: not inlined). The input is hostile: every byte is bounds-checked,
 * an integer longer than 10 bytes or an offset going backwards is an error.
 */
#ifndef BPFPROF_V8_SRCPOS_H
#define BPFPROF_V8_SRCPOS_H

#include <stddef.h>
#include <stdint.h>

/* The script offset of a raw position (-1: none), and its inlining id (-1: the code's own function) */
#define V8_SRCPOS_SCRIPT_OFFSET(raw) ((int32_t)(((uint64_t)(raw) >> 1) & 0x3fffffff) - 1)
#define V8_SRCPOS_INLINING_ID(raw) ((int32_t)(((uint64_t)(raw) >> 31) & 0xffff) - 1)

/*
 * The position in effect at code offset off of the table t (len bytes): the
 * last entry whose code offset is at most off, into *raw. Returns 0,
 * -ENOENT when no entry is at or before off (an empty table), -EINVAL when
 * the table is malformed before that entry.
 */
int v8_srcpos__find(const uint8_t *t, size_t len, int64_t off, int64_t *raw);

/*
 * The line and column (both from 1) of script offset off, from the offsets
 * of the script's line ends (ends[i]: the offset of line i + 1's newline,
 * or the source's length for the last line; n entries, ascending). Returns
 * 0, or -ERANGE when off is past the last line's end or negative.
 */
int v8_srcpos__line(const uint32_t *ends, size_t n, int64_t off, uint32_t *line, uint32_t *col);

/*
 * Baseline (Sparkplug) code: the bytecode offset whose machine code holds pc
 * offset pc_off, from the code's bytecode offset table (t, len bytes: one
 * unsigned VLQ a bytecode, the size of its machine code, the first one the
 * prologue's) and the bytecodes (bc, bc_len bytes) with their sizes
 * (sizes: V8's Bytecodes::kBytecodeSizes, 3 rows of nr_bytecodes: operand
 * scale 1, 2, 4; the prefixes Wide 0 / ExtraWide 1 and their Debug forms
 * 2 / 3 choose the row of the bytecode after them, as
 * src/baseline/bytecode-offset-iterator.cc walks them). Returns 0 with
 * *bc_off (-1: the prologue), -ENOENT when pc_off is past the table, or
 * -EINVAL when a table or bytecode is malformed.
 */
int v8_srcpos__baseline(const uint8_t *t, size_t len, const uint8_t *bc, size_t bc_len,
			const uint8_t *sizes, size_t nr_bytecodes, int64_t pc_off, int64_t *bc_off);

#endif /* BPFPROF_V8_SRCPOS_H */

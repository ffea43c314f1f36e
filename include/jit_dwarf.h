/* SPDX-License-Identifier: MIT */
/*
 * Minimal DWARF 4 for a JIT image (jit_elf.h): one compile unit with one
 * DW_TAG_subprogram (name, low_pc, high_pc) per function, and a line table
 * with one row per function start. `go tool pprof` names C/C++ frames only
 * from DWARF (cmd/pprof's SourceLine: .gopclntab, else DWARF; it never
 * reads .symtab), so the image carries it beside its .symtab. Layout per the
 * DWARF 4 standard, sections 6.2 (line number program), 7.5 (.debug_info
 * and .debug_abbrev encodings).
 */
#ifndef BPFPROF_JIT_DWARF_H
#define BPFPROF_JIT_DWARF_H

#include <stddef.h>
#include <stdint.h>
#include "buf.h"

/* A function of the image: addresses are the image's virtual addresses. */
struct jit_dwarf_fn {
	uint64_t low, high; /* [low, high), high > low */
	const char *name;
};

/*
 * Append .debug_info, .debug_abbrev and .debug_line for fns (sorted by low,
 * not overlapping) to the three buffers; `unit_name` names the compile unit
 * and the line table's one file. Returns 0 or -ENOMEM (also in the bufs' err).
 */
int jit_dwarf__build(const struct jit_dwarf_fn *fns, size_t nr, const char *unit_name,
		     struct buf *info, struct buf *abbrev, struct buf *line);

#endif /* BPFPROF_JIT_DWARF_H */

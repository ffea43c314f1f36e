/* SPDX-License-Identifier: MIT */
/*
 * Go's own function table (.gopclntab), which Go keeps for its tracebacks
 * and which -ldflags="-s -w" and strip leave in place: function names and
 * file:line of any code address of a Go binary, Go 1.16 and later (the
 * header's magic names the layout: 0xfffffffa 1.16-1.17, 0xfffffff0
 * 1.18-1.19, 0xfffffff1 1.20 on). Read as hostile input: every offset,
 * count and varint bounded; a table that fails the header and function-table
 * checks is refused whole. Inlined frames are not expanded.
 * Refs: Go's runtime/symtab.go (pcHeader, _func, pcvalue), runtime2.go;
 * debug/gosym/pclntab.go.
 */
#ifndef BPFPROF_SYM_GOPCLNTAB_H
#define BPFPROF_SYM_GOPCLNTAB_H

#include <stddef.h>
#include <stdint.h>

/* Largest table read, bytes (a 200 MB Go binary's is about 60 MB) */
#define GO_PCLNTAB_MAX_SIZE (512u << 20)

struct go_pclntab;

/*
 * Parse a copy of the table's bytes (the section's contents). text_start:
 * the link-time address of the text section, used when the header has none
 * (0 from Go 1.26; before 1.18 the table holds absolute addresses).
 * Returns a new table (free with go_pclntab__free), or NULL with errno
 * EINVAL (no table of a known version, or a bad one), EFBIG (larger than
 * GO_PCLNTAB_MAX_SIZE), ENOMEM.
 */
struct go_pclntab *go_pclntab__parse(const void *data, size_t size, uint64_t text_start);
void go_pclntab__free(struct go_pclntab *t);

/* The Go release the layout first came with: 116, 118 or 120 */
unsigned int go_pclntab__version(const struct go_pclntab *t);
/* Number of functions */
size_t go_pclntab__count(const struct go_pclntab *t);

struct go_func_info {
	const char *name; /* borrowed until go_pclntab__free; "main.work" */
	uint64_t entry; /* the function's first address, link-time */
	const char *file; /* borrowed; NULL when unknown */
	uint32_t line; /* 0 when unknown */
};

/*
 * The function whose code holds pc (a link-time virtual address: the ELF
 * vaddr) and the file and line of the instruction at pc. Returns 0, or
 * -ENOENT when no function holds pc or its entry is malformed (then *out is
 * unset).
 */
int go_pclntab__lookup(const struct go_pclntab *t, uint64_t pc, struct go_func_info *out);

/* Function i of the table, for readers that take every function (unwind_table.c) */
struct go_func_span {
	uint64_t entry, end; /* [entry, end): link-time addresses */
	const char *name; /* borrowed; NULL when its name is out of the table */
};

/* Function i (< go_pclntab__count). Returns 0, or -ENOENT when its entry is malformed. */
int go_pclntab__func(const struct go_pclntab *t, size_t i, struct go_func_span *out);

/*
 * The SP delta table (pcsp) of function i: fn(ctx, start, end, delta) for
 * each run of addresses [start, end) inside the function, in order, delta
 * being the bytes the function has pushed on the stack since its entry (0
 * at the entry: the return address sits at SP + delta). Returns 0, fn's
 * first non-zero return, or -ENOENT when the function or its table is
 * malformed (runs already given stand).
 */
int go_pclntab__sp_runs(const struct go_pclntab *t, size_t i,
			int (*fn)(void *ctx, uint64_t start, uint64_t end, int32_t delta),
			void *ctx);

#endif /* BPFPROF_SYM_GOPCLNTAB_H */

/* SPDX-License-Identifier: MIT */
/*
 * Compact unwind tables: a table's rows (include/unwind_table.h, 8 bytes a
 * row) as the words the BPF walker reads (include/bpfprof_abi.h, "Unwind
 * tables"): a 4 KiB page index, then 4-byte rows of 16 low pc bits and a
 * 16-bit index into the table's distinct rules, then those rules. About 4
 * bytes a row instead of 8: a file has a few hundred distinct rules
 * (libc 170, libLLVM-14 about 1,000), and a row at the start of each page
 * that begins inside a covered range.
 */
#ifndef BPFPROF_UNWIND_COMPACT_H
#define BPFPROF_UNWIND_COMPACT_H

#include <stdint.h>
#include "bpfprof_abi.h"
#include "unwind_table.h"

/*
 * Encode t. Returns 0 with *words (nr_words of them; free()) and *info
 * (used 0), or -ENOENT (no rows), -E2BIG (more than 65536 distinct rules,
 * or rows spanning more than 4 GiB), -ENOMEM.
 */
int unwind_compact__encode(const struct unwind_table *t, uint32_t **words, uint32_t *nr_words,
			   struct bpfprof_unwind_table *info);

/*
 * The rule at row pc `rel` (address - bias), found as the BPF walker finds
 * it (find_rule in bpf/unwind.bpf.h): BPFPROF_UNWIND_NONE outside the
 * table. Reads only words[0..nr_words): safe on any input.
 */
uint32_t unwind_compact__lookup(const uint32_t *words, uint32_t nr_words,
				const struct bpfprof_unwind_table *info, uint64_t rel);

/* Kernel memory of a table of nr_words words: an array of 8-byte elements, page-rounded (mmapable) */
uint64_t unwind_compact__kernel_bytes(uint32_t nr_words);

#endif /* BPFPROF_UNWIND_COMPACT_H */

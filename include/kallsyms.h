/* SPDX-License-Identifier: MIT */
/*
 * Kernel symbols from /proc/kallsyms ("ADDR TYPE NAME [MODULE]" per line, see
 * kernel/kallsyms.c s_show()). Text symbols (t/T/w/W) only, sorted; a symbol
 * covers up to the next one. When kptr_restrict hides addresses every
 * address reads as 0: the table is then marked restricted and empty.
 */
#ifndef BPFPROF_KALLSYMS_H
#define BPFPROF_KALLSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ksyms;

/*
 * Parse a kallsyms file (normally "/proc/kallsyms"). Returns a new table owned
 * by the caller (free with ksyms__free), or NULL with errno (open failure,
 * ENOMEM). Malformed lines are skipped and counted (ksyms__nr_bad_lines).
 */
struct ksyms *ksyms__load(const char *path);
/* Same from a memory buffer of len bytes (tests, fuzzing). */
struct ksyms *ksyms__parse(const char *text, size_t len);
void ksyms__free(struct ksyms *ks);

/*
 * Symbol containing addr. Returns the name (borrowed until ksyms__free) and
 * sets *off to the distance from the symbol start and *module to the module
 * name without brackets, or NULL for the core kernel. NULL when addr is below
 * the first symbol or the table is restricted.
 */
const char *ksyms__lookup(const struct ksyms *ks, uint64_t addr, uint64_t *off,
			  const char **module);

/* Address of a symbol by exact name (e.g. "_text"), or 0 when absent. */
uint64_t ksyms__addr(const struct ksyms *ks, const char *name);

/* True when every address was 0 (kptr_restrict, or not root). */
bool ksyms__restricted(const struct ksyms *ks);
size_t ksyms__count(const struct ksyms *ks);
size_t ksyms__nr_bad_lines(const struct ksyms *ks);

#endif /* BPFPROF_KALLSYMS_H */

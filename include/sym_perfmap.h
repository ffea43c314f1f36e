/* SPDX-License-Identifier: MIT */
/*
 * /tmp/perf-PID.map reader (perf's tools/perf/Documentation/jit-interface.txt):
 * one line per JIT function, "START SIZE name", START and SIZE in hex with or
 * without 0x (JDK agents write 0x), the name running to the end of the line
 * and possibly holding spaces. PID is the in-namespace pid of the writer.
 * Lines carry no time: a later line wins over an earlier one at the same
 * address (code reuse). The result is a jit_table (sym_jitdump.h).
 */
#ifndef BPFPROF_SYM_PERFMAP_H
#define BPFPROF_SYM_PERFMAP_H

#include <stddef.h>
#include <stdint.h>
#include "sym_jitdump.h"

struct perfmap_stats {
	size_t nr_lines; /* non-empty lines */
	size_t nr_syms; /* entries added */
	size_t nr_bad; /* malformed lines, skipped */
};

/*
 * Parse a perf map text of len bytes (need not be NUL-terminated). Malformed
 * lines are skipped and counted; the first few are warned about, naming
 * `origin`, the line number and its byte offset. stats may be NULL.
 * Returns 0 and a new table in *out (free with perfmap__free), or -ENOMEM.
 */
int perfmap__parse(const char *text, size_t len, const char *origin, struct jit_table **out,
		   struct perfmap_stats *stats);


/* Newest line covering addr (see jitdump__lookup). */
static inline const char *perfmap__lookup(const struct jit_table *t, uint64_t addr, uint64_t *off)
{
	return jitdump__lookup(t, addr, off);
}

static inline void perfmap__free(struct jit_table *t)
{
	jitdump__free(t);
}

#endif /* BPFPROF_SYM_PERFMAP_H */

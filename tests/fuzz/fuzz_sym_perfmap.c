// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for user/symbolize/sym_perfmap.c: any bytes as a perf-PID.map
 * text, parsed, then every entry looked up at its first and last byte.
 * Built and run by `make fuzz`; seeds in tests/fuzz/corpus/sym_perfmap.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "log.h"
#include "sym_perfmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfmap_stats st;
	struct jit_table *t;
	struct jit_sym s;
	size_t i, n;

	log_verbosity = -1;
	if (perfmap__parse((const char *)data, size, "fuzz", &t, &st))
		return 0;
	n = jitdump__count(t);
	if (n != st.nr_syms || st.nr_syms + st.nr_bad != st.nr_lines)
		__builtin_trap();
	for (i = 0; i < n; i++) {
		uint64_t off, last;

		if (jitdump__sym(t, i, &s) || !s.name || !s.name[0] || strchr(s.name, '\n'))
			__builtin_trap();
		if (!s.size)
			continue;
		/* the last byte, or the top of the address space for a range that wraps */
		last = s.start + (s.size - 1) < s.start ? UINT64_MAX : s.start + (s.size - 1);
		/* a newer overlapping entry may win, but some entry covers both ends */
		if (!perfmap__lookup(t, s.start, &off) || !perfmap__lookup(t, last, &off))
			__builtin_trap();
	}
	perfmap__free(t);
	return 0;
}

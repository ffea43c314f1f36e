// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for user/symbolize/sym_jitdump.c: any bytes as a jitdump, parsed,
 * then every entry looked up at its first and last byte (some entry,
 * maybe a newer overlapping one, must cover both) and just past its end. Built and run by `make fuzz`; seeds in
 * tests/fuzz/corpus/sym_jitdump.
 */
#include <stddef.h>
#include <stdint.h>
#include "log.h"
#include "sym_jitdump.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jitdump_stats st;
	struct jit_table *t;
	struct jit_sym s;
	size_t i, n;

	log_verbosity = -1;
	if (jitdump__parse(data, size, "fuzz", &t, &st))
		return 0;
	if (st.bytes_used > size)
		__builtin_trap();
	n = jitdump__count(t);
	for (i = 0; i < n; i++) {
		uint64_t off, last;

		if (jitdump__sym(t, i, &s) || !s.name)
			__builtin_trap();
		if (!s.size)
			continue;
		/* the last byte, or the top of the address space for a range that wraps */
		last = s.start + (s.size - 1) < s.start ? UINT64_MAX : s.start + (s.size - 1);
		/* a newer overlapping entry may win, but some entry covers both ends */
		if (!jitdump__lookup(t, s.start, &off) || !jitdump__lookup(t, last, &off))
			__builtin_trap();
		jitdump__lookup_at(t, s.start + s.size, s.timestamp, NULL);
	}
	jitdump__free(t);
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for user/symbolize/procmaps.c: any bytes as a /proc/PID/maps text,
 * parsed and merged into a profile, then every address of every mapping
 * looked up. Built and run by `make fuzz`; seeds in tests/fuzz/corpus/procmaps.
 */
#include <stddef.h>
#include <stdint.h>
#include "log.h"
#include "procmaps.h"
#include "profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile *p = profile__new();
	bool created;
	size_t i;
	int proc;

	log_verbosity = -1;
	if (!p)
		return 0;
	proc = profile__process(p, 1, &created);
	if (proc >= 0 &&
	    procmaps__merge(p, (uint32_t)proc, (const char *)data, size, "fuzz") >= 0) {
		const struct profile_process *pr = &p->procs[proc];

		for (i = 0; i < pr->nr_mappings; i++) {
			/* sorted and disjoint: each mapping finds itself at both ends */
			if (profile__find_mapping(p, (uint32_t)proc, pr->mappings[i].start) !=
				    (int)i ||
			    profile__find_mapping(p, (uint32_t)proc, pr->mappings[i].end - 1) !=
				    (int)i)
				__builtin_trap();
		}
	}
	profile__free(p);
	return 0;
}

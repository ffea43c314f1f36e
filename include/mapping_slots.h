/* SPDX-License-Identifier: MIT */
/*
 * The part of a profile's mapping table the pprof and OTLP writers share:
 * which (process, mapping) pairs the written locations use, and the address
 * range of the kernel locations, which both writers cover with one
 * "[kernel.kallsyms]" mapping. Each writer then numbers the slots it keeps
 * in its own order (pprof: busiest process first; OTLP: profile order).
 * Ref: github.com/google/pprof proto/profile.proto (Mapping, Location.address).
 */
#ifndef BPFPROF_MAPPING_SLOTS_H
#define BPFPROF_MAPPING_SLOTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "profile.h"

#define MAPPING_SLOT_USED 1u /* a written location is in the mapping */
#define MAPPING_SLOT_NAMED 2u /* ... and one of them has a function name */

struct mapping_slots {
	size_t *base; /* per process: its first slot in mark[] */
	uint32_t *mark; /* per (process, mapping): MAPPING_SLOT_* bits, 0 unused; the
			 * writer may overwrite a slot with its own mapping id */
	size_t nr; /* slots: the processes' nr_mappings summed */
	bool kernel; /* a kernel location is written */
	bool kernel_named; /* ... and one of them has a function name */
	uint64_t kernel_start; /* lowest kernel location address */
	uint64_t kernel_limit; /* highest + 1 (the highest itself at UINT64_MAX) */
};

/*
 * The address pprof and OTLP expect in a Location: inside the call
 * instruction for a return address (addr - 1), else addr.
 */
uint64_t loc_call_address(const struct profile_location *l);

/*
 * Fill ms (zeroed first) from the locations of p that are written: those i
 * with keep[i] (keep: p->nr_locs entries; NULL writes every location).
 * Addresses are loc_call_address's. Returns 0 or -ENOMEM; free with
 * mapping_slots__free either way.
 */
int mapping_slots__build(struct mapping_slots *ms, const struct profile *p, const bool *keep);

/*
 * The slot of location l in ms->mark, or -1 for a kernel location or one
 * outside every mapping of its process.
 */
ptrdiff_t mapping_slots__of(const struct mapping_slots *ms, const struct profile *p,
			    const struct profile_location *l);

void mapping_slots__free(struct mapping_slots *ms);

#endif /* BPFPROF_MAPPING_SLOTS_H */

// SPDX-License-Identifier: MIT
/*
 * Mapping slots of the pprof and OTLP writers (include/mapping_slots.h): one
 * slot per (process, mapping), the processes' mappings back to back in
 * profile order, marked by the written locations that fall in them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "mapping_slots.h"

uint64_t loc_call_address(const struct profile_location *l)
{
	return l->is_return && l->addr ? l->addr - 1 : l->addr;
}

ptrdiff_t mapping_slots__of(const struct mapping_slots *ms, const struct profile *p,
			    const struct profile_location *l)
{
	if (l->proc >= p->nr_procs || l->mapping < 0 ||
	    (size_t)l->mapping >= p->procs[l->proc].nr_mappings)
		return -1;
	return (ptrdiff_t)(ms->base[l->proc] + (size_t)l->mapping);
}

int mapping_slots__build(struct mapping_slots *ms, const struct profile *p, const bool *keep)
{
	uint64_t kmin = UINT64_MAX, kmax = 0;
	size_t i, nprocs = p->nr_procs ? p->nr_procs : 1;

	memset(ms, 0, sizeof(*ms));
	ms->base = calloc(nprocs, sizeof(*ms->base));
	if (!ms->base)
		return -ENOMEM;
	for (i = 0; i < p->nr_procs; i++) {
		ms->base[i] = ms->nr;
		ms->nr += p->procs[i].nr_mappings;
	}
	ms->mark = calloc(ms->nr + 1, sizeof(*ms->mark));
	if (!ms->mark)
		return -ENOMEM;

	for (i = 0; i < p->nr_locs; i++) {
		const struct profile_location *l = &p->locs[i];
		ptrdiff_t slot;

		if (keep && !keep[i])
			continue;
		if (l->proc == PROFILE_KERNEL_PROC) {
			uint64_t a = loc_call_address(l);

			ms->kernel = true;
			ms->kernel_named |= l->func != NULL;
			kmin = a < kmin ? a : kmin;
			kmax = a > kmax ? a : kmax;
			continue;
		}
		slot = mapping_slots__of(ms, p, l);
		if (slot >= 0)
			ms->mark[slot] |= MAPPING_SLOT_USED | (l->func ? MAPPING_SLOT_NAMED : 0u);
	}
	if (ms->kernel) {
		ms->kernel_start = kmin;
		ms->kernel_limit = kmax + 1 ? kmax + 1 : kmax;
	}
	return 0;
}

void mapping_slots__free(struct mapping_slots *ms)
{
	free(ms->base);
	free(ms->mark);
	memset(ms, 0, sizeof(*ms));
}

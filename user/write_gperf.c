// SPDX-License-Identifier: MIT
/*
 * gperftools CPU profile writer (include/write_gperf.h,
 * ../shared/specs/gperftools-cpu-profile-format.html, "Binary Header",
 * "Profile Records", "Binary Trailer", "Text List of Mapped Objects").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "write_gperf.h"

typedef uintptr_t slot_t; /* "native-endian words of pointer size" */

static void put_slot(struct buf *out, uint64_t v)
{
	slot_t s = (slot_t)v;

	buf__put_bytes(out, &s, sizeof(s));
}

/* Highest user address used by any process with a written sample. */
static uint64_t max_user_addr(const struct profile *p, const uint8_t *used)
{
	uint64_t max = 0;
	size_t i, j;

	for (i = 0; i < p->nr_procs; i++) {
		const struct profile_process *pr = &p->procs[i];

		if (!used[i])
			continue;
		if (pr->nr_mappings && pr->mappings[pr->nr_mappings - 1].end > max)
			max = pr->mappings[pr->nr_mappings - 1].end;
	}
	for (i = 0; i < p->nr_stacks; i++) {
		const struct profile_stack *s = &p->stacks[i];

		for (j = 0; j < s->nr_user; j++)
			if (s->ips[s->nr_kernel + j] > max)
				max = s->ips[s->nr_kernel + j];
	}
	return max;
}

static void put_maps_text(struct buf *out, const struct profile_process *pr, uint64_t delta)
{
	size_t i;

	for (i = 0; i < pr->nr_mappings; i++) {
		const struct profile_mapping *m = &pr->mappings[i];

		/* the shape of fs/proc/task_mmu.c show_map_vma() */
		buf__printf(out, "%08llx-%08llx %s %08llx %02x:%02x %llu",
			    (unsigned long long)(m->start + delta), (unsigned long long)(m->end + delta),
			    m->perms, (unsigned long long)m->offset, m->dev_major, m->dev_minor,
			    (unsigned long long)m->inode);
		if (m->path && m->path[0])
			buf__printf(out, "%*s%s", 26 - 2 * (int)sizeof(void *) > 0 ? 7 : 1, "", m->path);
		buf__put_bytes(out, "\n", 1);
	}
}

int write_gperf(const struct profile *p, struct buf *out, struct gperf_stats *stats)
{
	struct gperf_stats st = { 0 };
	uint64_t period_us = p->period_ns / 1000, *delta;
	uint8_t *used;
	unsigned shift = 0;
	uint32_t window = 0;
	size_t i, j;

	used = calloc(p->nr_procs ? p->nr_procs : 1, 1);
	delta = calloc(p->nr_procs ? p->nr_procs : 1, sizeof(*delta));
	if (!used || !delta) {
		free(used);
		free(delta);
		return out->err = -ENOMEM;
	}
	for (i = 0; i < p->nr_stacks; i++)
		if (p->stacks[i].nr_user)
			used[p->stacks[i].proc] = 1;
	for (i = 0; i < p->nr_procs; i++)
		st.processes += used[i];
	if (st.processes > 1) {
		uint64_t max = max_user_addr(p, used);

		shift = max ? 64 - (unsigned)__builtin_clzll(max) : 1;
		/* windows must fit below the kernel half, where pprof reads user code */
		if (shift >= 63 || (uint64_t)st.processes > (1ULL << (63 - shift))) {
			free(used);
			free(delta);
			return -E2BIG;
		}
		for (i = 0; i < p->nr_procs; i++)
			if (used[i])
				delta[i] = (uint64_t)window++ << shift;
	}

	/* header: hdr count 0, hdr words 3, version 0, sampling period (µs), padding 0 */
	put_slot(out, 0);
	put_slot(out, 3);
	put_slot(out, 0);
	put_slot(out, period_us ? period_us : 1);
	put_slot(out, 0);

	for (i = 0; i < p->nr_stacks; i++) {
		const struct profile_stack *s = &p->stacks[i];
		const uint64_t *ips = s->ips + s->nr_kernel;
		unsigned depth = s->nr_user;

		/* a zero PC ends the perl reader's walk: cut the chain there */
		for (j = 0; j < s->nr_user; j++)
			if (!ips[j]) {
				depth = (unsigned)j;
				break;
			}
		if (!depth) {
			st.samples_skipped += s->count;
			continue;
		}
		put_slot(out, s->count);
		put_slot(out, depth);
		for (j = 0; j < depth; j++)
			put_slot(out, ips[j] + delta[s->proc]);
		st.samples_written += s->count;
	}

	/* trailer: count 0, depth 1, pc 0 */
	put_slot(out, 0);
	put_slot(out, 1);
	put_slot(out, 0);

	for (i = 0; i < p->nr_procs; i++)
		if (used[i])
			put_maps_text(out, &p->procs[i], delta[i]);

	free(used);
	free(delta);
	if (stats)
		*stats = st;
	return out->err;
}

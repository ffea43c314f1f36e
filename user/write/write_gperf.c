// SPDX-License-Identifier: MIT
/*
 * gperftools CPU profile writer (include/write_gperf.h; "Google CPU Profiler
 * Binary Data File Format", docs/cpuprofile-fileformat.html in gperftools:
 * "Binary Header",
 * "Profile Records", "Binary Trailer", "Text List of Mapped Objects").
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "write_gperf.h"

typedef uintptr_t slot_t; /* "native-endian words of pointer size" */

static void put_slot(struct buf *out, uint64_t v)
{
	slot_t s = (slot_t)v;

	buf__put_bytes(out, &s, sizeof(s));
}

/* [vsyscall] sits in the kernel half: no user PC is there, and no window fits it */
#define USER_HALF (1ULL << 63)

/*
 * End of the highest user-half mapping of the processes with written samples:
 * the size every address window must have.
 */
static uint64_t max_user_addr(const struct profile *p, const uint8_t *used)
{
	uint64_t max = 0;
	size_t i, j;

	for (i = 0; i < p->nr_procs; i++) {
		const struct profile_process *pr = &p->procs[i];

		if (!used[i])
			continue;
		for (j = 0; j < pr->nr_mappings; j++)
			if (pr->mappings[j].end <= USER_HALF && pr->mappings[j].end > max)
				max = pr->mappings[j].end;
	}
	return max;
}

static void put_map_line(struct buf *out, const struct profile_mapping *m, uint64_t delta)
{
	/* a copy where the path names no file pprof can open here (dso_export.h) */
	const char *path = m->copy_path ? m->copy_path : m->path;

	/* the shape of fs/proc/task_mmu.c show_map_vma() */
	buf__printf(out, "%08llx-%08llx %s %08llx %02x:%02x %llu",
		    (unsigned long long)(m->start + delta), (unsigned long long)(m->end + delta),
		    m->perms, (unsigned long long)m->offset, m->dev_major, m->dev_minor,
		    (unsigned long long)m->inode);
	if (path && path[0])
		buf__printf(out, "    %s", path);
	buf__put_bytes(out, "\n", 1);
}

static bool has_jit_map(const struct profile_process *pr, const struct profile_mapping *m)
{
	for (size_t i = 0; i < pr->nr_jit_maps; i++)
		if (pr->jit_maps[i].start < m->end && m->start < pr->jit_maps[i].end)
			return true;
	return false;
}

/*
 * The process's mappings, with its JIT code mapped onto its JIT image
 * (jit_elf.h) in place of the anonymous memory, so that pprof names it.
 */
static void put_maps_text(struct buf *out, const struct profile_process *pr, uint64_t delta)
{
	size_t i;

	for (i = 0; i < pr->nr_mappings; i++) {
		const struct profile_mapping *m = &pr->mappings[i];

		if ((delta && m->end > USER_HALF) || has_jit_map(pr, m))
			continue;
		put_map_line(out, m, delta);
	}
	for (i = 0; i < pr->nr_jit_maps; i++)
		if (pr->jit_maps[i].build_id_len) /* its image was written */
			put_map_line(out, &pr->jit_maps[i], delta);
}

struct busiest_ctx {
	const struct profile *p;
	const uint64_t *written; /* samples written per process */
};

static int cmp_busiest(const void *a, const void *b, void *ctx)
{
	const struct busiest_ctx *c = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (c->written[x] != c->written[y])
		return c->written[x] > c->written[y] ? -1 : 1;
	return c->p->procs[x].pid < c->p->procs[y].pid ? -1 :
							 c->p->procs[x].pid > c->p->procs[y].pid;
}

int write_gperf(const struct profile *p, struct buf *out, struct gperf_stats *stats)
{
	struct gperf_stats st = { 0 };
	uint64_t period_us = p->period_ns / 1000, *delta;
	uint64_t *written;
	uint32_t *order;
	uint8_t *used;
	unsigned shift = 0;
	uint32_t window = 0;
	size_t i, j;

	used = calloc(p->nr_procs ? p->nr_procs : 1, 1);
	delta = calloc(p->nr_procs ? p->nr_procs : 1, sizeof(*delta));
	order = calloc(p->nr_procs ? p->nr_procs : 1, sizeof(*order));
	written = calloc(p->nr_procs ? p->nr_procs : 1, sizeof(*written));
	if (!used || !delta || !order || !written) {
		free(used);
		free(delta);
		free(order);
		free(written);
		return out->err = -ENOMEM;
	}
	for (i = 0; i < p->nr_stacks; i++)
		if (p->stacks[i].nr_user) {
			used[p->stacks[i].proc] = 1;
			written[p->stacks[i].proc] += profile__weight(p, &p->stacks[i]);
		}
	for (i = 0; i < p->nr_procs; i++)
		st.processes += used[i];
	if (st.processes > 1) {
		uint64_t max = max_user_addr(p, used);

		shift = max > 1 ? 64 - (unsigned)__builtin_clzll(max - 1) : 1;
		/* windows must fit below the kernel half, where pprof reads user code */
		if (shift >= 63 || (uint64_t)st.processes > (1ULL << (63 - shift))) {
			free(used);
			free(delta);
			free(order);
			free(written);
			return -E2BIG;
		}
		for (i = 0; i < p->nr_procs; i++)
			if (used[i])
				order[window++] = (uint32_t)i;
		/* busiest process first: pprof names the profile after the first mapping */
		qsort_r(order, window, sizeof(*order), cmp_busiest,
			&(struct busiest_ctx){ .p = p, .written = written });
		for (i = 0; i < window; i++)
			delta[order[i]] = (uint64_t)i << shift;
	}

	/* header: hdr count 0, hdr words 3, version 0, sampling period (µs), padding 0 */
	put_slot(out, 0);
	put_slot(out, 3);
	put_slot(out, 0);
	/* the other views' counts are µs (blocked, of value): one "sample" per µs */
	put_slot(out, period_us && p->view == PROFILE_VIEW_CPU ? period_us : 1);
	put_slot(out, 0);

	for (i = 0; i < p->nr_stacks; i++) {
		const struct profile_stack *s = &p->stacks[i];
		const uint64_t *ips = s->ips + s->nr_kernel;
		unsigned depth = s->nr_user;
		uint64_t count = profile__weight(p, s);

		/*
		 * A zero PC ends the perl reader's walk, and a PC beyond the
		 * window would land in another process's: both can only come
		 * from a frame-pointer walk gone astray, so cut the chain there.
		 */
		for (j = 0; j < s->nr_user; j++)
			if (!ips[j] || (shift && ips[j] >> shift)) {
				depth = (unsigned)j;
				break;
			}
		if (!count)
			continue;
		if (!depth) {
			st.samples_skipped += count;
			continue;
		}
		put_slot(out, count);
		put_slot(out, depth);
		for (j = 0; j < depth; j++)
			put_slot(out, ips[j] + delta[s->proc]);
		st.samples_written += count;
	}

	/* trailer: count 0, depth 1, pc 0 */
	put_slot(out, 0);
	put_slot(out, 1);
	put_slot(out, 0);

	if (st.processes == 1)
		for (i = 0; i < p->nr_procs; i++)
			if (used[i])
				order[0] = (uint32_t)i;
	for (i = 0; i < st.processes; i++)
		put_maps_text(out, &p->procs[order[i]], delta[order[i]]);

	free(used);
	free(delta);
	free(order);
	free(written);
	if (stats)
		*stats = st;
	return out->err;
}

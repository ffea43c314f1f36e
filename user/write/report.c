// SPDX-License-Identifier: MIT
/* Summary of a profile: totals and top functions by self samples (include/report.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "log.h"
#include "report.h"

struct leaf {
	const char *func;
	const char *dso;
	uint64_t self;
};

static int cmp_key(const void *a, const void *b)
{
	const struct leaf *x = a, *y = b;

	if (x->func != y->func)
		return (uintptr_t)x->func < (uintptr_t)y->func ? -1 : 1;
	if (x->dso != y->dso)
		return (uintptr_t)x->dso < (uintptr_t)y->dso ? -1 : 1;
	return 0;
}

static int cmp_self(const void *a, const void *b)
{
	const struct leaf *x = a, *y = b;

	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	return strcmp(x->func ? x->func : "", y->func ? y->func : "");
}

int report__top(const struct profile *p, struct report_top *top, int n)
{
	struct leaf *leaves;
	size_t nr = 0, i, out;
	int filled = 0;

	leaves = calloc(p->nr_stacks ? p->nr_stacks : 1, sizeof(*leaves));
	if (!leaves)
		return -ENOMEM;
	for (i = 0; i < p->nr_stacks; i++) {
		const struct profile_stack *s = &p->stacks[i];
		const struct profile_location *l;
		uint64_t w = profile__weight(p, s);
		/* a block's kernel leaf is always the scheduler's: name where the program waits */
		size_t leaf = p->view == PROFILE_VIEW_OFFCPU && s->nr_user ? s->nr_kernel : 0;

		if (!s->locs || !(s->nr_kernel + s->nr_user) || !w)
			continue;
		l = &p->locs[s->locs[leaf]];
		/* an unnamed address is its own row ("DSO+0xADDR"), never one per DSO */
		leaves[nr++] = (struct leaf){ l->func ? l->func : l->addr_name, l->dso, w };
	}
	/* fold leaves of the same (function, DSO): both are interned pointers */
	qsort(leaves, nr, sizeof(*leaves), cmp_key);
	for (i = 0, out = 0; i < nr; i++) {
		if (out && !cmp_key(&leaves[out - 1], &leaves[i]))
			leaves[out - 1].self += leaves[i].self;
		else
			leaves[out++] = leaves[i];
	}
	qsort(leaves, out, sizeof(*leaves), cmp_self);
	for (i = 0; i < out && filled < n; i++, filled++)
		top[filled] = (struct report_top){ leaves[i].func, leaves[i].dso, leaves[i].self };
	free(leaves);
	return filled;
}

void report__summary(FILE *f, const struct profile *p, double duration_s, int top_n)
{
	struct report_top top[64];
	int n, i;

	fprintf(f, "bpfprof: %.2f s, %llu samples, %llu lost, %zu processes, %s at %u Hz\n",
		duration_s, (unsigned long long)p->nr_samples, (unsigned long long)p->nr_lost,
		p->nr_procs, p->event ? p->event : "?", p->freq_hz);
	if (top_n > 64)
		top_n = 64;
	n = report__top(p, top, top_n);
	if (n <= 0 || !p->nr_samples)
		return;
	fprintf(f, "%8s %8s  %s\n", "self%", "samples", "function [dso]");
	for (i = 0; i < n; i++) {
		const char *dso = top[i].dso ? top[i].dso : "?";
		bool bracketed = dso[0] == '['; /* [kernel.kallsyms], [vdso] */

		fprintf(f, "%7.2f%% %8llu  %s %s%s%s\n",
			100.0 * (double)top[i].self / (double)p->nr_samples,
			(unsigned long long)top[i].self, top[i].func ? top[i].func : "[unknown]",
			bracketed ? "" : "[", dso, bracketed ? "" : "]");
	}
}

void report__offcpu_summary(FILE *f, const struct profile *p, int top_n)
{
	struct report_top top[64];
	struct profile v = *p;
	uint64_t total;
	int n, i;

	if (!p->offcpu)
		return;
	v.view = PROFILE_VIEW_OFFCPU;
	fprintf(f, "bpfprof: off-CPU: %llu blocks of %llu us or more, %.3f s blocked, %llu lost\n",
		(unsigned long long)p->nr_offcpu_blocks,
		(unsigned long long)(p->offcpu_thresh_ns / 1000), (double)p->offcpu_ns / 1e9,
		(unsigned long long)p->nr_offcpu_lost);
	if (top_n > 64)
		top_n = 64;
	total = profile__total_weight(&v);
	n = report__top(&v, top, top_n);
	if (n <= 0 || !total)
		return;
	fprintf(f, "%8s %10s  %s\n", "off%", "off-CPU ms",
		"user leaf (kernel leaf without one) [dso]");
	for (i = 0; i < n; i++) {
		const char *dso = top[i].dso ? top[i].dso : "?";
		bool bracketed = dso[0] == '[';

		fprintf(f, "%7.2f%% %10.1f  %s %s%s%s\n",
			100.0 * (double)top[i].self / (double)total, (double)top[i].self / 1000.0,
			top[i].func ? top[i].func : "[unknown]", bracketed ? "" : "[", dso,
			bracketed ? "" : "]");
	}
}

/* processes named by report__unnamed_jit, the first seen */
#define REPORT_JIT_LINES 10

/*
 * A leaf in memory that may hold JIT code: anonymous or memfd, executable.
 * Not an address outside every mapping: that is a process whose maps were
 * read too late (short-lived, exec'd), not JIT code.
 */
static bool jit_leaf(const struct profile *p, const struct profile_location *l)
{
	const struct profile_mapping *m;

	if (l->proc == PROFILE_KERNEL_PROC || l->func || l->is_jit || l->mapping < 0)
		return false;
	m = &p->procs[l->proc].mappings[l->mapping];
	return m->perms[2] == 'x' && (!m->path[0] || !strncmp(m->path, "/memfd:", 7));
}

uint64_t report__unnamed_jit(FILE *f, const struct profile *p, report_jit_why_fn why, void *ctx)
{
	uint64_t *per_proc, total = 0;
	char reason[512];
	size_t i, shown = 0;

	per_proc = calloc(p->nr_procs ? p->nr_procs : 1, sizeof(*per_proc));
	if (!per_proc)
		return 0;
	for (i = 0; i < p->nr_stacks; i++) {
		const struct profile_stack *s = &p->stacks[i];

		if (!s->locs || s->nr_kernel || !s->nr_user || !s->count)
			continue;
		if (jit_leaf(p, &p->locs[s->locs[0]]))
			per_proc[s->proc] += s->count;
	}
	for (i = 0; i < p->nr_procs; i++) {
		if (!per_proc[i])
			continue;
		total += per_proc[i];
		if (++shown > REPORT_JIT_LINES)
			continue;
		reason[0] = '\0';
		if (!why || !why(ctx, p, (uint32_t)i, reason, sizeof(reason)))
			snprintf(reason, sizeof(reason), "no JIT symbols cover them");
		fprintf(f,
			"bpfprof: %llu samples (%.1f %%) in JIT code of pid %u (%s) not named: %s\n",
			(unsigned long long)per_proc[i],
			p->nr_samples ? 100.0 * (double)per_proc[i] / (double)p->nr_samples : 0,
			p->procs[i].pid, p->procs[i].comm, reason);
	}
	if (shown > REPORT_JIT_LINES)
		fprintf(f, "bpfprof: and %zu more processes with unnamed samples in JIT code\n",
			shown - REPORT_JIT_LINES);
	free(per_proc);
	return total;
}

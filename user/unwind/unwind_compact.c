// SPDX-License-Identifier: MIT
/*
 * Compact unwind tables (include/unwind_compact.h): the layout of the
 * OpenTelemetry profiler's stack deltas (a u16 address delta and a u16 rule
 * index under a per-64-KiB-page index, nativeunwind/stackdeltatypes and
 * support/ebpf/native_stack_trace.h), with the rules kept per table rather
 * than in one global array, so that a table is self-contained: loaded,
 * dropped and cached on its own; and smaller pages (BPFPROF_UNWIND_PAGE_SHIFT),
 * so that the walk's search reads fewer cache lines.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "unwind_compact.h"

#define PAGE_SIZE_PC (1u << BPFPROF_UNWIND_PAGE_SHIFT)
#define MAX_RULES 65536u
/* binary search steps: enough for 65536 rows in a page */
#define SEARCH_STEPS 17

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Index of rule in the sorted, unique rules[0..n) (present by construction) */
static uint32_t rule_index(const uint32_t *rules, uint32_t n, uint32_t rule)
{
	uint32_t lo = 0, hi = n;

	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (rules[mid] <= rule)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

int unwind_compact__encode(const struct unwind_table *t, uint32_t **words, uint32_t *nr_words,
			   struct bpfprof_unwind_table *info)
{
	uint32_t *rules = NULL, *w = NULL, nr_rules = 0, nr_pages, p, i, pos, cur;
	uint64_t cap;

	*words = NULL;
	*nr_words = 0;
	memset(info, 0, sizeof(*info));
	if (!t || !t->nr_rows)
		return -ENOENT;
	/* rows are sorted: the last has the largest pc */
	nr_pages = (t->rows[t->nr_rows - 1].pc >> BPFPROF_UNWIND_PAGE_SHIFT) + 1;

	rules = malloc((size_t)t->nr_rows * sizeof(*rules));
	if (!rules)
		return -ENOMEM;
	for (i = 0; i < t->nr_rows; i++)
		rules[i] = t->rows[i].rule;
	qsort(rules, t->nr_rows, sizeof(*rules), cmp_u32);
	for (i = 0; i < t->nr_rows; i++)
		if (!nr_rules || rules[nr_rules - 1] != rules[i])
			rules[nr_rules++] = rules[i];
	if (nr_rules > MAX_RULES) {
		free(rules);
		return -E2BIG;
	}

	/* page index, rows (at most one added a page), rules */
	cap = (uint64_t)nr_pages + 1 + t->nr_rows + nr_pages + nr_rules;
	if (cap > UINT32_MAX) {
		free(rules);
		return -E2BIG;
	}
	w = malloc(cap * sizeof(*w));
	if (!w) {
		free(rules);
		return -ENOMEM;
	}
	pos = nr_pages + 1;
	cur = BPFPROF_UNWIND_NONE; /* the rule in force before the first row */
	for (p = 0, i = 0; p < nr_pages; p++) {
		uint64_t start = (uint64_t)p << BPFPROF_UNWIND_PAGE_SHIFT;

		w[p] = pos;
		if ((i >= t->nr_rows || t->rows[i].pc != start) && cur != BPFPROF_UNWIND_NONE)
			w[pos++] = (start & 0xffff) | (uint32_t)rule_index(rules, nr_rules, cur) << 16;
		for (; i < t->nr_rows && t->rows[i].pc < start + PAGE_SIZE_PC; i++) {
			cur = t->rows[i].rule;
			w[pos++] = (t->rows[i].pc & 0xffff) |
				   (uint32_t)rule_index(rules, nr_rules, cur) << 16;
		}
	}
	w[nr_pages] = pos;
	info->nr_pages = nr_pages;
	info->rules = pos;
	info->nr_rules = nr_rules;
	memcpy(&w[pos], rules, (size_t)nr_rules * sizeof(*rules));
	pos += nr_rules;
	free(rules);
	/* give back the room of the page-start rows not needed */
	*words = realloc(w, (size_t)pos * sizeof(*w));
	if (!*words)
		*words = w;
	*nr_words = pos;
	return 0;
}

uint32_t unwind_compact__lookup(const uint32_t *words, uint32_t nr_words,
				const struct bpfprof_unwind_table *info, uint64_t rel)
{
	uint64_t page = rel >> BPFPROF_UNWIND_PAGE_SHIFT;
	uint32_t lo, hi, off = rel & 0xffff, idx;

	if (!info->nr_pages || page >= info->nr_pages || page + 1 >= nr_words)
		return BPFPROF_UNWIND_NONE;
	lo = words[page];
	hi = words[page + 1];
	if (lo >= hi || lo >= nr_words || BPFPROF_UNWIND_ROW_PC(words[lo]) > off)
		return BPFPROF_UNWIND_NONE;
	for (int step = 0; step < SEARCH_STEPS && hi - lo > 1; step++) {
		uint32_t m = lo + (hi - lo) / 2;

		if (m >= nr_words)
			return BPFPROF_UNWIND_NONE;
		if (BPFPROF_UNWIND_ROW_PC(words[m]) <= off)
			lo = m;
		else
			hi = m;
	}
	idx = BPFPROF_UNWIND_ROW_RULE(words[lo]);
	if (idx >= info->nr_rules || (uint64_t)info->rules + idx >= nr_words)
		return BPFPROF_UNWIND_NONE;
	return words[info->rules + idx];
}

uint64_t unwind_compact__kernel_bytes(uint32_t nr_words)
{
	uint64_t data = ((uint64_t)nr_words + 1) / 2 * 8;

	/* the array's pages, plus its struct bpf_array header page */
	return ((data + 4095) & ~4095ULL) + 4096;
}

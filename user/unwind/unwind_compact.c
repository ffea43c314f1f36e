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

/*
 * A table's distinct rules, each with its index among them sorted: an
 * open-addressing hash of the rules (a few hundred to a few thousand in a
 * file of 10^5-10^6 rows). The rules were all the rows' sorted (a qsort of
 * every row, most of a cold registration's encoding), then found by a
 * binary search a row.
 */
struct rule_set {
	uint32_t *key, *idx;
	uint8_t *used;
	uint32_t mask, n;
	uint32_t *rules; /* the distinct rules, in the order met, then sorted */
};

static uint32_t rule_slot(const struct rule_set *rs, uint32_t rule)
{
	uint32_t i = (rule * 0x9e3779b1u) & rs->mask;

	while (rs->used[i] && rs->key[i] != rule)
		i = (i + 1) & rs->mask;
	return i;
}

static int rule_set_init(struct rule_set *rs, uint32_t cap)
{
	memset(rs, 0, sizeof(*rs));
	rs->mask = cap - 1;
	rs->key = malloc((size_t)cap * sizeof(*rs->key));
	rs->idx = malloc((size_t)cap * sizeof(*rs->idx));
	rs->used = calloc(cap, 1);
	return rs->key && rs->idx && rs->used ? 0 : -ENOMEM;
}

static void rule_set_free(struct rule_set *rs)
{
	free(rs->key);
	free(rs->idx);
	free(rs->used);
	free(rs->rules);
}

/* Adds rule if new (the set grown past half full); 0, -E2BIG past MAX_RULES, or -ENOMEM */
static int rule_set_add(struct rule_set *rs, uint32_t rule)
{
	uint32_t i = rule_slot(rs, rule);

	if (rs->used[i])
		return 0;
	if (rs->n == MAX_RULES)
		return -E2BIG;
	if (rs->n + 1 > (rs->mask + 1) / 2) {
		struct rule_set bigger;

		if (rule_set_init(&bigger, (rs->mask + 1) * 2)) {
			bigger.rules = NULL;
			rule_set_free(&bigger);
			return -ENOMEM;
		}
		bigger.rules = rs->rules;
		rs->rules = NULL;
		for (uint32_t k = 0; k <= rs->mask; k++) {
			if (!rs->used[k])
				continue;
			i = rule_slot(&bigger, rs->key[k]);
			bigger.used[i] = 1;
			bigger.key[i] = rs->key[k];
		}
		bigger.n = rs->n;
		rule_set_free(rs);
		*rs = bigger;
		i = rule_slot(rs, rule);
	}
	rs->used[i] = 1;
	rs->key[i] = rule;
	rs->rules[rs->n++] = rule;
	return 0;
}

/* Index of rule among the sorted distinct rules (present by construction) */
static uint32_t rule_index(const struct rule_set *rs, uint32_t rule)
{
	return rs->idx[rule_slot(rs, rule)];
}

int unwind_compact__encode(const struct unwind_table *t, uint32_t **words, uint32_t *nr_words,
			   struct bpfprof_unwind_table *info)
{
	uint32_t *rules, *w = NULL, nr_rules, nr_pages, p, i, pos, cur;
	struct rule_set rs;
	uint64_t cap;
	int err;

	*words = NULL;
	*nr_words = 0;
	memset(info, 0, sizeof(*info));
	if (!t || !t->nr_rows)
		return -ENOENT;
	/* rows are sorted: the last has the largest pc */
	nr_pages = (t->rows[t->nr_rows - 1].pc >> BPFPROF_UNWIND_PAGE_SHIFT) + 1;

	/* the distinct rules, sorted, and each one's index (rule_index) */
	err = rule_set_init(&rs, 1024);
	if (!err && !(rs.rules = malloc((size_t)MAX_RULES * sizeof(*rs.rules))))
		err = -ENOMEM;
	for (i = 0; !err && i < t->nr_rows; i++)
		err = rule_set_add(&rs, t->rows[i].rule);
	if (err) {
		rule_set_free(&rs);
		return err;
	}
	nr_rules = rs.n;
	rules = rs.rules;
	qsort(rules, nr_rules, sizeof(*rules), cmp_u32);
	for (i = 0; i < nr_rules; i++)
		rs.idx[rule_slot(&rs, rules[i])] = i;

	/* page index, rows (at most one added a page), rules */
	cap = (uint64_t)nr_pages + 1 + t->nr_rows + nr_pages + nr_rules;
	if (cap > UINT32_MAX) {
		rule_set_free(&rs);
		return -E2BIG;
	}
	w = malloc(cap * sizeof(*w));
	if (!w) {
		rule_set_free(&rs);
		return -ENOMEM;
	}
	pos = nr_pages + 1;
	cur = BPFPROF_UNWIND_NONE; /* the rule in force before the first row */
	for (p = 0, i = 0; p < nr_pages; p++) {
		uint64_t start = (uint64_t)p << BPFPROF_UNWIND_PAGE_SHIFT;

		w[p] = pos;
		if ((i >= t->nr_rows || t->rows[i].pc != start) && cur != BPFPROF_UNWIND_NONE)
			w[pos++] = (start & 0xffff) | (uint32_t)rule_index(&rs, cur) << 16;
		for (; i < t->nr_rows && t->rows[i].pc < start + PAGE_SIZE_PC; i++) {
			cur = t->rows[i].rule;
			w[pos++] = (t->rows[i].pc & 0xffff) | (uint32_t)rule_index(&rs, cur) << 16;
		}
	}
	w[nr_pages] = pos;
	info->nr_pages = nr_pages;
	info->rules = pos;
	info->nr_rules = nr_rules;
	memcpy(&w[pos], rules, (size_t)nr_rules * sizeof(*rules));
	pos += nr_rules;
	rule_set_free(&rs);
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

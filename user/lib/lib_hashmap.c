// SPDX-License-Identifier: MIT
/* Index maps, string set and u64 map (include/lib_hashmap.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "array.h"
#include "lib_hashmap.h"

static int init_cap(struct idxmap *m, size_t cap)
{
	if (cap > (size_t)UINT32_MAX + 1)
		return -ENOMEM;
	m->slots = malloc(cap * sizeof(*m->slots));
	if (!m->slots)
		return -ENOMEM;
	memset(m->slots, 0xff, cap * sizeof(*m->slots));
	m->mask = (uint32_t)(cap - 1);
	m->used = 0;
	return 0;
}

int idxmap__init(struct idxmap *m, size_t max_entries)
{
	size_t cap = 16;

	while (cap < max_entries * 2)
		cap *= 2;
	return init_cap(m, cap);
}

void idxmap__free(struct idxmap *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

int idxmap__reserve(struct idxmap *m, uint32_t (*hash_of)(void *ctx, uint32_t idx), void *ctx)
{
	struct idxmap n;
	uint32_t i;

	if (!m->slots)
		return idxmap__init(m, 8);
	if (((size_t)m->used + 1) * 2 <= (size_t)m->mask + 1)
		return 0;
	if (init_cap(&n, ((size_t)m->mask + 1) * 2))
		return -ENOMEM;
	for (i = 0; i <= m->mask; i++)
		if (m->slots[i] != IDXMAP_EMPTY)
			idxmap__insert(&n, hash_of(ctx, m->slots[i]), m->slots[i]);
	free(m->slots);
	*m = n;
	return 0;
}

void idxmap__insert(struct idxmap *m, uint32_t h, uint32_t idx)
{
	uint32_t pos;

	idxmap__for_each(m, h, pos)
		;
	m->slots[pos] = idx;
	m->used++;
}

static int keyidx_init_cap(struct keyidx *m, size_t cap)
{
	if (cap > (size_t)UINT32_MAX + 1)
		return -ENOMEM;
	m->slots = calloc(cap, sizeof(*m->slots));
	if (!m->slots)
		return -ENOMEM;
	m->mask = (uint32_t)(cap - 1);
	m->used = 0;
	return 0;
}

int keyidx__init(struct keyidx *m, size_t max_entries)
{
	size_t cap = 16;

	while (cap < max_entries * 2)
		cap *= 2;
	return keyidx_init_cap(m, cap);
}

void keyidx__free(struct keyidx *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

int keyidx__reserve(struct keyidx *m)
{
	struct keyidx n;
	uint32_t i;

	if (!m->slots)
		return keyidx__init(m, 8);
	if (((size_t)m->used + 1) * 2 <= (size_t)m->mask + 1)
		return 0;
	if (keyidx_init_cap(&n, ((size_t)m->mask + 1) * 2))
		return -ENOMEM;
	for (i = 0; i <= m->mask; i++)
		if (m->slots[i].key)
			keyidx__insert(&n, m->slots[i].hash, m->slots[i].idx, m->slots[i].key);
	free(m->slots);
	*m = n;
	return 0;
}

void keyidx__insert(struct keyidx *m, uint32_t h, uint32_t idx, const void *key)
{
	uint32_t pos;

	keyidx__for_each(m, h, pos)
		;
	m->slots[pos] = (struct keyidx_slot){ .hash = h, .idx = idx, .key = key };
	m->used++;
}

int strset__init(struct strset *ss, bool own_copies)
{
	memset(ss, 0, sizeof(*ss));
	ss->own_copies = own_copies;
	return idxmap__init(&ss->map, 512);
}

void strset__free(struct strset *ss)
{
	size_t i;

	if (ss->own_copies)
		for (i = 0; i < ss->nr; i++)
			free((char *)ss->strs[i]);
	free(ss->strs);
	free(ss->hashes);
	idxmap__free(&ss->map);
	memset(ss, 0, sizeof(*ss));
}

static uint32_t hash_of(void *ctx, uint32_t idx)
{
	return ((struct strset *)ctx)->hashes[idx];
}

static int64_t find(const struct strset *ss, const char *s, uint32_t h)
{
	uint32_t pos;

	idxmap__for_each(&ss->map, h, pos) {
		uint32_t i = ss->map.slots[pos];

		if (ss->hashes[i] == h && !strcmp(ss->strs[i], s))
			return i;
	}
	return -ENOENT;
}

int64_t strset__find(const struct strset *ss, const char *s)
{
	return find(ss, s, hash__str(s));
}

int64_t strset__add(struct strset *ss, const char *s)
{
	uint32_t h = hash__str(s);
	int64_t i = find(ss, s, h);
	size_t cap = ss->cap;
	const char *copy = s;

	if (i >= 0)
		return i;
	if (ss->nr >= UINT32_MAX - 1 || idxmap__reserve(&ss->map, hash_of, ss) ||
	    array__grow((void **)&ss->strs, &cap, ss->nr + 1, sizeof(*ss->strs)))
		return -ENOMEM;
	cap = ss->cap;
	if (array__grow((void **)&ss->hashes, &cap, ss->nr + 1, sizeof(*ss->hashes)))
		return -ENOMEM;
	ss->cap = cap;
	if (ss->own_copies && !(copy = strdup(s)))
		return -ENOMEM;
	ss->strs[ss->nr] = copy;
	ss->hashes[ss->nr] = h;
	idxmap__insert(&ss->map, h, (uint32_t)ss->nr);
	return (int64_t)ss->nr++;
}

/* murmur3's fmix64, first half: enough to spread pids and pointers */
static size_t u64_hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return (size_t)k;
}

/* Slot of key, or of the free slot where it would go. cap must be nonzero. */
static size_t u64map__slot(const struct u64map *m, uint64_t key)
{
	size_t i = u64_hash(key) & (m->cap - 1);

	while (m->keys[i] && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

bool u64map__get(const struct u64map *m, uint64_t key, uint64_t *val)
{
	size_t i;

	if (!m->cap)
		return false;
	i = u64map__slot(m, key);
	if (!m->keys[i])
		return false;
	if (val)
		*val = m->vals[i];
	return true;
}

int u64map__put(struct u64map *m, uint64_t key, uint64_t val)
{
	size_t i;

	if ((m->nr + 1) * 2 > m->cap) {
		struct u64map n = { .cap = m->cap ? m->cap * 2 : 64 };
		size_t j;

		n.keys = calloc(n.cap, sizeof(*n.keys));
		n.vals = calloc(n.cap, sizeof(*n.vals));
		if (!n.keys || !n.vals) {
			free(n.keys);
			free(n.vals);
			return -ENOMEM;
		}
		for (j = 0; j < m->cap; j++)
			if (m->keys[j]) {
				i = u64map__slot(&n, m->keys[j]);
				n.keys[i] = m->keys[j];
				n.vals[i] = m->vals[j];
			}
		n.nr = m->nr;
		free(m->keys);
		free(m->vals);
		*m = n;
	}
	i = u64map__slot(m, key);
	if (!m->keys[i])
		m->nr++;
	m->keys[i] = key;
	m->vals[i] = val;
	return 0;
}

void u64map__free(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

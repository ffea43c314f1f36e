// SPDX-License-Identifier: MIT
/*
 * The profile container (include/profile.h): processes, distinct stacks and
 * locations, with open-addressing hash indexes that hold array indices, so the
 * arrays may grow (realloc) without invalidating the tables. Sampling feeds it
 * one record at a time; the stack index is the aggregation hot path.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "array.h"
#include "profile.h"

#define EMPTY UINT32_MAX

/* Open addressing with linear probing over uint32 slots (EMPTY = free). */
struct idx_table {
	uint32_t *slots;
	uint32_t mask;	/* capacity - 1, capacity a power of two */
	uint32_t used;
};

struct strset_entry {
	uint32_t hash;
	char *s;
};

struct profile_index {
	struct idx_table procs;	/* by pid */
	struct idx_table stacks;	/* by stack hash */
	struct idx_table locs;	/* by (proc, addr) */
	struct idx_table str_index;	/* into strs[] */
	struct strset_entry *strs;
	size_t nr_strs, cap_strs;
};

static inline uint64_t mix64(uint64_t h)
{
	/* splitmix64 finalizer: cheap, good avalanche for address-like keys */
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	h ^= h >> 31;
	return h;
}

static uint32_t hash_str(const char *s)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

static int table_init(struct idx_table *t, uint32_t cap)
{
	t->slots = malloc(sizeof(*t->slots) * cap);
	if (!t->slots)
		return -ENOMEM;
	memset(t->slots, 0xff, sizeof(*t->slots) * cap);
	t->mask = cap - 1;
	t->used = 0;
	return 0;
}

/*
 * Keep the load factor under 1/2. `rehash(ctx, idx)` gives the stored hash of
 * an entry so that growing does not touch the keys.
 */
static int table_grow_if_needed(struct idx_table *t, uint32_t (*hash_of)(void *, uint32_t), void *ctx)
{
	struct idx_table n;
	uint32_t i;

	if ((t->used + 1) * 2 <= t->mask + 1)
		return 0;
	if (t->mask + 1 > UINT32_MAX / 2)
		return -ENOMEM;
	if (table_init(&n, (t->mask + 1) * 2))
		return -ENOMEM;
	for (i = 0; i <= t->mask; i++) {
		uint32_t idx = t->slots[i], pos;

		if (idx == EMPTY)
			continue;
		pos = hash_of(ctx, idx) & n.mask;
		while (n.slots[pos] != EMPTY)
			pos = (pos + 1) & n.mask;
		n.slots[pos] = idx;
		n.used++;
	}
	free(t->slots);
	*t = n;
	return 0;
}

static uint32_t str_hash_of(void *ctx, uint32_t idx)
{
	return ((struct profile_index *)ctx)->strs[idx].hash;
}

static uint32_t proc_hash_of(void *ctx, uint32_t idx)
{
	return (uint32_t)mix64(((struct profile *)ctx)->procs[idx].pid);
}

static uint32_t stack_hash_of(void *ctx, uint32_t idx)
{
	return ((struct profile *)ctx)->stacks[idx].hash;
}

static uint32_t loc_hash(uint32_t proc, uint64_t addr, bool is_return)
{
	return (uint32_t)mix64(addr ^ ((uint64_t)proc << 47) ^ proc ^ ((uint64_t)is_return << 63));
}

static uint32_t loc_hash_of(void *ctx, uint32_t idx)
{
	const struct profile_location *l = &((struct profile *)ctx)->locs[idx];

	return loc_hash(l->proc, l->addr, l->is_return);
}

struct profile *profile__new(void)
{
	struct profile *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->index = calloc(1, sizeof(*p->index));
	if (!p->index || table_init(&p->index->procs, 64) || table_init(&p->index->stacks, 1024) ||
	    table_init(&p->index->locs, 1024) || table_init(&p->index->str_index, 1024)) {
		profile__free(p);
		errno = ENOMEM;
		return NULL;
	}
	return p;
}

void profile__free(struct profile *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->nr_procs; i++) {
		free(p->procs[i].mappings);
		free(p->procs[i].jit_maps);
	}
	for (i = 0; i < p->nr_stacks; i++) {
		free(p->stacks[i].ips);
		free(p->stacks[i].locs);
	}
	free(p->procs);
	free(p->stacks);
	free(p->locs);
	if (p->index) {
		for (i = 0; i < p->index->nr_strs; i++)
			free(p->index->strs[i].s);
		free(p->index->strs);
		free(p->index->procs.slots);
		free(p->index->stacks.slots);
		free(p->index->locs.slots);
		free(p->index->str_index.slots);
		free(p->index);
	}
	free(p);
}

const char *profile__intern(struct profile *p, const char *s)
{
	struct profile_index *ix = p->index;
	uint32_t h = hash_str(s), pos;
	char *copy;

	for (pos = h & ix->str_index.mask; ix->str_index.slots[pos] != EMPTY; pos = (pos + 1) & ix->str_index.mask) {
		struct strset_entry *e = &ix->strs[ix->str_index.slots[pos]];

		if (e->hash == h && !strcmp(e->s, s))
			return e->s;
	}
	if (table_grow_if_needed(&ix->str_index, str_hash_of, ix) ||
	    array__grow((void **)&ix->strs, &ix->cap_strs, ix->nr_strs + 1, sizeof(*ix->strs)))
		return NULL;
	copy = strdup(s);
	if (!copy)
		return NULL;
	for (pos = h & ix->str_index.mask; ix->str_index.slots[pos] != EMPTY; pos = (pos + 1) & ix->str_index.mask)
		;
	ix->strs[ix->nr_strs] = (struct strset_entry){ .hash = h, .s = copy };
	ix->str_index.slots[pos] = ix->nr_strs++;
	ix->str_index.used++;
	return copy;
}

int profile__find_process(const struct profile *p, uint32_t pid)
{
	const struct idx_table *t = &p->index->procs;
	uint32_t pos;

	for (pos = (uint32_t)mix64(pid) & t->mask; t->slots[pos] != EMPTY; pos = (pos + 1) & t->mask)
		if (p->procs[t->slots[pos]].pid == pid)
			return t->slots[pos];
	return -ENOENT;
}

int profile__process(struct profile *p, uint32_t pid, bool *created)
{
	struct idx_table *t = &p->index->procs;
	int idx = profile__find_process(p, pid);
	uint32_t pos;

	*created = false;
	if (idx >= 0)
		return idx;
	if (p->nr_procs >= INT32_MAX || table_grow_if_needed(t, proc_hash_of, p) ||
	    array__grow((void **)&p->procs, &p->cap_procs, p->nr_procs + 1, sizeof(*p->procs)))
		return -ENOMEM;
	memset(&p->procs[p->nr_procs], 0, sizeof(p->procs[0]));
	p->procs[p->nr_procs].pid = pid;
	for (pos = (uint32_t)mix64(pid) & t->mask; t->slots[pos] != EMPTY; pos = (pos + 1) & t->mask)
		;
	t->slots[pos] = p->nr_procs;
	t->used++;
	*created = true;
	return p->nr_procs++;
}

/*
 * 64 x 64 -> 128-bit multiply, folded (wyhash's "mum"): one multiply mixes 16
 * bytes. The products of different frame pairs do not depend on each other,
 * so the CPU overlaps them; a serial mix per frame (h = mix(h ^ ip)) costs a
 * multiply latency per frame and was most of the aggregation time.
 */
static inline uint64_t mum(uint64_t a, uint64_t b)
{
#ifdef __SIZEOF_INT128__
	__uint128_t r = (__uint128_t)a * b;

	return (uint64_t)r ^ (uint64_t)(r >> 64);
#else
	return mix64(a) ^ mix64(b + 0x9e3779b97f4a7c15ULL);
#endif
}

static uint32_t stack_hash(uint32_t proc, const uint64_t *ips, uint16_t nk, uint16_t nu)
{
	static const uint64_t k0 = 0xa0761d6478bd642fULL, k1 = 0xe7037ed1a0b428dbULL,
			      k2 = 0x8ebc6af09c88c6e3ULL;
	uint64_t h = mix64(((uint64_t)proc << 32) | ((uint32_t)nk << 16) | nu), acc = 0;
	unsigned i, n = (unsigned)nk + nu;

	/* each pair's key depends on its position, so swapped frames hash apart */
	for (i = 0; i + 1 < n; i += 2)
		acc += mum(ips[i] ^ (k0 + i * k2), ips[i + 1] ^ k1);
	if (i < n)
		acc += mum(ips[i] ^ (k0 + i * k2), k1);
	h = mix64(h ^ acc);
	return (uint32_t)(h ^ (h >> 32));
}

int profile__add_stack(struct profile *p, uint32_t proc, const uint64_t *ips, uint16_t nr_kernel,
		       uint16_t nr_user, uint64_t count, uint64_t value, bool *created)
{
	struct idx_table *t = &p->index->stacks;
	uint32_t h = stack_hash(proc, ips, nr_kernel, nr_user), pos;
	size_t n = (size_t)nr_kernel + nr_user;
	struct profile_stack *s;

	*created = false;
	for (pos = h & t->mask; t->slots[pos] != EMPTY; pos = (pos + 1) & t->mask) {
		s = &p->stacks[t->slots[pos]];
		if (s->hash == h && s->proc == proc && s->nr_kernel == nr_kernel &&
		    s->nr_user == nr_user && !memcmp(s->ips, ips, n * sizeof(*ips))) {
			s->count += count;
			s->value += value;
			p->nr_samples += count;
			return t->slots[pos];
		}
	}
	if (p->nr_stacks >= INT32_MAX || table_grow_if_needed(t, stack_hash_of, p) ||
	    array__grow((void **)&p->stacks, &p->cap_stacks, p->nr_stacks + 1, sizeof(*p->stacks)))
		return -ENOMEM;
	s = &p->stacks[p->nr_stacks];
	memset(s, 0, sizeof(*s));
	s->ips = malloc(n ? n * sizeof(*ips) : 1);
	if (!s->ips)
		return -ENOMEM;
	memcpy(s->ips, ips, n * sizeof(*ips));
	s->proc = proc;
	s->nr_kernel = nr_kernel;
	s->nr_user = nr_user;
	s->count = count;
	s->value = value;
	s->hash = h;
	for (pos = h & t->mask; t->slots[pos] != EMPTY; pos = (pos + 1) & t->mask)
		;
	t->slots[pos] = p->nr_stacks;
	t->used++;
	p->nr_samples += count;
	*created = true;
	return p->nr_stacks++;
}

int profile__add_offcpu(struct profile *p, uint32_t proc, const uint64_t *ips, uint16_t nr_kernel,
			uint16_t nr_user, uint64_t blocks, uint64_t off_ns, bool *created)
{
	int st = profile__add_stack(p, proc, ips, nr_kernel, nr_user, 0, 0, created);

	if (st < 0)
		return st;
	p->stacks[st].off_count += blocks;
	p->stacks[st].off_ns += off_ns;
	p->nr_offcpu_blocks += blocks;
	p->offcpu_ns += off_ns;
	return st;
}

uint64_t profile__total_weight(const struct profile *p)
{
	uint64_t sum = 0;
	size_t i;

	if (p->view != PROFILE_VIEW_OFFCPU)
		return p->nr_samples;
	for (i = 0; i < p->nr_stacks; i++)
		sum += profile__weight(p, &p->stacks[i]);
	return sum;
}

int profile__find_mapping(const struct profile *p, uint32_t proc, uint64_t addr)
{
	const struct profile_process *pr = &p->procs[proc];
	size_t lo = 0, hi = pr->nr_mappings;

	/* the last mapping starting at or below addr is the only candidate */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pr->mappings[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0 && addr < pr->mappings[lo - 1].end)
		return (int)(lo - 1);
	return -1;
}

int profile__add_mapping(struct profile *p, uint32_t proc, const struct profile_mapping *m)
{
	struct profile_process *pr = &p->procs[proc];
	size_t first, last, i;

	if (m->end <= m->start)
		return 0;
	/* [first, last): existing mappings that overlap m */
	for (first = 0; first < pr->nr_mappings && pr->mappings[first].end <= m->start; first++)
		;
	for (last = first; last < pr->nr_mappings && pr->mappings[last].start < m->end; last++)
		;
	if (last == first + 1) {
		const struct profile_mapping *o = &pr->mappings[first];

		if (o->start == m->start && o->end == m->end && o->offset == m->offset &&
		    o->inode == m->inode && o->path == m->path)
			return 0;
	}
	if (last == first &&
	    array__grow((void **)&pr->mappings, &pr->cap_mappings, pr->nr_mappings + 1, sizeof(*m)))
		return -ENOMEM;
	/* replace [first, last) with m */
	i = last - first;
	if (i != 1)
		memmove(&pr->mappings[first + 1], &pr->mappings[last],
			(pr->nr_mappings - last) * sizeof(*m));
	pr->mappings[first] = *m;
	pr->nr_mappings = pr->nr_mappings + 1 - i;
	return 1;
}

static int intern_loc(struct profile *p, uint32_t proc, uint64_t addr, bool is_return, uint32_t *out)
{
	struct idx_table *t = &p->index->locs;
	uint32_t h = loc_hash(proc, addr, is_return), pos;
	struct profile_location *l;

	for (pos = h & t->mask; t->slots[pos] != EMPTY; pos = (pos + 1) & t->mask) {
		l = &p->locs[t->slots[pos]];
		if (l->addr == addr && l->proc == proc && l->is_return == is_return) {
			*out = t->slots[pos];
			return 0;
		}
	}
	if (p->nr_locs >= INT32_MAX || table_grow_if_needed(t, loc_hash_of, p) ||
	    array__grow((void **)&p->locs, &p->cap_locs, p->nr_locs + 1, sizeof(*p->locs)))
		return -ENOMEM;
	l = &p->locs[p->nr_locs];
	memset(l, 0, sizeof(*l));
	l->addr = addr;
	l->proc = proc;
	l->is_return = is_return;
	l->mapping = proc == PROFILE_KERNEL_PROC ? -1 : profile__find_mapping(p, proc, addr - is_return);
	for (pos = h & t->mask; t->slots[pos] != EMPTY; pos = (pos + 1) & t->mask)
		;
	t->slots[pos] = p->nr_locs;
	t->used++;
	*out = p->nr_locs++;
	return 0;
}

int profile__resolve_locs(struct profile *p)
{
	size_t i, j;

	for (i = 0; i < p->nr_stacks; i++) {
		struct profile_stack *s = &p->stacks[i];
		size_t n = (size_t)s->nr_kernel + s->nr_user;

		if (s->locs)
			continue;
		s->locs = malloc(n ? n * sizeof(*s->locs) : 1);
		if (!s->locs)
			return -ENOMEM;
		for (j = 0; j < n; j++) {
			uint32_t owner = j < s->nr_kernel ? PROFILE_KERNEL_PROC : s->proc;
			/* leaf of each side is the interrupted instruction; the rest return addresses */
			bool ret = j != 0 && j != s->nr_kernel;

			if (intern_loc(p, owner, s->ips[j], ret, &s->locs[j])) {
				free(s->locs);
				s->locs = NULL;
				return -ENOMEM;
			}
		}
	}
	return 0;
}

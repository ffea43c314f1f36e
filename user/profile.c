// SPDX-License-Identifier: MIT
/*
 * The profile container (include/profile.h): processes, distinct stacks and
 * locations, with open-addressing hash indexes that hold array indices, so the
 * arrays may grow (realloc) without invalidating the tables. Sampling feeds it
 * one record at a time; the stack index is the aggregation hot path.
 *
 * A repeated stack (nearly every sample) costs one hash of its addresses and
 * one slot probe, then a compare against its stored key, read straight from
 * the slot (struct keyidx): the key, a header word (proc, nr_kernel, nr_user)
 * and then the addresses, lies contiguous in a key arena, so the compare
 * reads one run of memory, while the stack's entry, where the counts go, is
 * fetched in parallel. With more stacks than the caches hold, that is one
 * memory round trip before the compare instead of two (slot, entry, then its
 * separately allocated addresses), and nothing is allocated on a repeat.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "array.h"
#include "lib_hash_words.h"
#include "lib_hashmap.h"
#include "profile.h"

/*
 * Where the stacks' keys live: chunks that never move (stacks[].ips point
 * into them), each key a header word then its addresses. Chunks double from
 * KEY_CHUNK_MIN to KEY_CHUNK_MAX words; a key that does not fit the rest of
 * the current one starts the next.
 */
#define KEY_CHUNK_MIN 512
#define KEY_CHUNK_MAX (128 * 1024)

struct key_arena {
	uint64_t **chunks; /* owned */
	size_t nr_chunks, cap_chunks;
	uint64_t *next; /* the current chunk's free part */
	size_t left; /* its words */
};

struct profile_index {
	struct idxmap procs; /* by pid */
	struct keyidx stacks; /* by stack hash, keys in stack_keys */
	struct key_arena stack_keys;
	struct idxmap locs; /* by (proc, addr) */
	struct strset strs; /* interned strings, owned */
	/*
	 * profile__resolve_locs: the stacks before it have their locations
	 * (a call while sampling starts there, not at the first of thousands)
	 */
	size_t nr_stacks_resolved;
	/*
	 * The stacks' locs[] (profile__resolve_locs), two to a word: one
	 * allocation a chunk, not one a stack (thousands of mallocs made,
	 * and freed at the exit, by each profile)
	 */
	struct key_arena loc_lists;
};

static uint32_t proc_hash_of(void *ctx, uint32_t idx)
{
	return (uint32_t)hash__mix64(((struct profile *)ctx)->procs[idx].pid);
}

static uint32_t loc_hash(uint32_t proc, uint64_t addr, bool is_return)
{
	return (uint32_t)hash__mix64(addr ^ ((uint64_t)proc << 47) ^ proc ^
				     ((uint64_t)is_return << 63));
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
	if (!p->index || idxmap__init(&p->index->procs, 32) ||
	    keyidx__init(&p->index->stacks, 512) || idxmap__init(&p->index->locs, 512) ||
	    strset__init(&p->index->strs, true)) {
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
		free(p->procs[i].pyfuncs);
	}
	free(p->procs);
	free(p->stacks);
	free(p->locs);
	free(p->kernel.modules);
	if (p->index) {
		strset__free(&p->index->strs);
		idxmap__free(&p->index->procs);
		keyidx__free(&p->index->stacks);
		for (i = 0; i < p->index->stack_keys.nr_chunks; i++)
			free(p->index->stack_keys.chunks[i]);
		free(p->index->stack_keys.chunks);
		for (i = 0; i < p->index->loc_lists.nr_chunks; i++)
			free(p->index->loc_lists.chunks[i]);
		free(p->index->loc_lists.chunks);
		idxmap__free(&p->index->locs);
		free(p->index);
	}
	free(p);
}

const char *profile__intern(struct profile *p, const char *s)
{
	int64_t i = strset__add(&p->index->strs, s);

	return i < 0 ? NULL : p->index->strs.strs[i];
}

int profile__add_module(struct profile *p, const char *path, uint64_t start, uint64_t size)
{
	struct profile_kernel *k = &p->kernel;
	const char *s = profile__intern(p, path);

	if (!s || array__grow((void **)&k->modules, &k->cap_modules, k->nr_modules + 1,
			      sizeof(*k->modules)))
		return -ENOMEM;
	k->modules[k->nr_modules++] = (struct profile_module){ s, start, size };
	return 0;
}

int profile__add_py_region(struct profile *p, uint32_t proc, const char *dso)
{
	struct profile_process *pr = &p->procs[proc];
	struct profile_mapping m = { 0 };
	uint64_t at;
	int tries;

	if (dso && !pr->py_dso && !(pr->py_dso = profile__intern(p, dso)))
		return -ENOMEM;
	if (pr->py_start)
		return 0;
	for (at = 0x6ffff0000000ull, tries = 0; tries < 64; tries++, at -= 1ull << 30) {
		bool clash = false;

		for (size_t i = 0; i < pr->nr_mappings && !clash; i++)
			clash = pr->mappings[i].start < at + PROFILE_PY_REGION_SIZE &&
				at < pr->mappings[i].end;
		if (!clash)
			break;
	}
	if (tries == 64)
		return 0;
	m.start = at;
	m.end = at + PROFILE_PY_REGION_SIZE;
	memcpy(m.perms, "r-xp", 5);
	m.path = profile__intern(p, "");
	if (!m.path || profile__add_mapping(p, proc, &m) < 0)
		return -ENOMEM;
	pr->py_start = at;
	return 1;
}

int profile__add_pyfunc(struct profile *p, uint32_t proc, const char *name, const char *file,
			uint32_t first_line, uint32_t nr_lines, uint64_t *start)
{
	struct profile_process *pr = &p->procs[proc];
	/* one more: readers that look a return address up as it is (perf) land in the block too */
	uint64_t at = 0, size = (nr_lines ? nr_lines : 1) + 1;
	const char *n, *f;

	if (!pr->py_start)
		return -ENOSPC;
	if (pr->nr_pyfuncs) {
		const struct profile_pyfunc *last = &pr->pyfuncs[pr->nr_pyfuncs - 1];

		at = last->start - pr->py_start + last->size;
	}
	at = (at + 3) & ~3ull; /* a gap, so that no return address - 1 lands in the previous one */
	if (at + size + 4 > PROFILE_PY_REGION_SIZE)
		return -ENOSPC;
	n = profile__intern(p, name);
	f = profile__intern(p, file);
	if (!n || !f ||
	    array__grow((void **)&pr->pyfuncs, &pr->cap_pyfuncs, pr->nr_pyfuncs + 1,
			sizeof(*pr->pyfuncs)))
		return -ENOMEM;
	pr->pyfuncs[pr->nr_pyfuncs++] = (struct profile_pyfunc){ .start = pr->py_start + at + 1,
								 .size = size,
								 .name = n,
								 .file = f,
								 .first_line = first_line };
	*start = pr->py_start + at + 1;
	return 0;
}

const struct profile_pyfunc *profile__find_pyfunc(const struct profile *p, uint32_t proc,
						  uint64_t addr)
{
	const struct profile_process *pr = &p->procs[proc];
	size_t l = 0, r = pr->nr_pyfuncs;

	while (l < r) {
		size_t m = l + (r - l) / 2;

		if (pr->pyfuncs[m].start + pr->pyfuncs[m].size <= addr)
			l = m + 1;
		else
			r = m;
	}
	if (l < pr->nr_pyfuncs && pr->pyfuncs[l].start <= addr)
		return &pr->pyfuncs[l];
	return NULL;
}

int profile__find_process_start(const struct profile *p, uint32_t pid, uint32_t start)
{
	const struct idxmap *t = &p->index->procs;
	int best = -ENOENT;
	uint32_t pos;

	idxmap__for_each(t, (uint32_t)hash__mix64(pid), pos) {
		const struct profile_process *pr = &p->procs[t->slots[pos]];

		if (pr->pid != pid || (start && pr->start && pr->start != start))
			continue;
		if ((int)t->slots[pos] > best)
			best = (int)t->slots[pos]; /* the newest */
	}
	return best;
}

int profile__find_process(const struct profile *p, uint32_t pid)
{
	return profile__find_process_start(p, pid, 0);
}

int profile__process_start(struct profile *p, uint32_t pid, uint32_t start, bool *created)
{
	int idx = profile__find_process_start(p, pid, start);

	*created = false;
	if (idx >= 0) {
		if (!p->procs[idx].start)
			p->procs[idx].start = start;
		return idx;
	}
	idx = profile__add_process(p, pid, start);
	*created = idx >= 0;
	return idx;
}

int profile__add_process(struct profile *p, uint32_t pid, uint32_t start)
{
	struct idxmap *t = &p->index->procs;

	if (p->nr_procs >= INT32_MAX || idxmap__reserve(t, proc_hash_of, p) ||
	    array__grow((void **)&p->procs, &p->cap_procs, p->nr_procs + 1, sizeof(*p->procs)))
		return -ENOMEM;
	memset(&p->procs[p->nr_procs], 0, sizeof(p->procs[0]));
	p->procs[p->nr_procs].pid = pid;
	p->procs[p->nr_procs].start = start;
	idxmap__insert(t, (uint32_t)hash__mix64(pid), p->nr_procs);
	return p->nr_procs++;
}

int profile__process(struct profile *p, uint32_t pid, bool *created)
{
	return profile__process_start(p, pid, 0, created);
}

/*
 * Seeded with the process's pid rather than its entry's index, so that a
 * record can be hashed before its entry is looked up (entries of one pid:
 * an exec's images, a reused pid, share hashes, told apart by the key).
 * hash_words (lib_hash_words.h): about one vector instruction an address;
 * the 128-bit multiply a frame pair it replaced was a third of a sample's
 * instructions.
 */
static inline uint64_t stack_seed(uint32_t pid, uint16_t nk, uint16_t nu)
{
	return ((uint64_t)pid << 32) | ((uint32_t)nk << 16) | nu;
}

static inline uint32_t fold32(uint64_t h)
{
	return (uint32_t)(h ^ (h >> 32));
}

uint32_t profile__stack_hash(uint32_t pid, const uint64_t *ips, uint16_t nk, uint16_t nu)
{
	return fold32(hash_words(stack_seed(pid, nk, nu), ips, (size_t)nk + nu, NULL));
}

uint32_t profile__stack_hash_copy(uint32_t pid, const uint64_t *ips, uint16_t nk, uint16_t nu,
				  uint64_t *dst)
{
	return fold32(hash_words(stack_seed(pid, nk, nu), ips, (size_t)nk + nu, dst));
}

/* At most this much of a key is fetched ahead: deeper stacks' roots rarely differ */
#define PREFETCH_KEY_BYTES 512

void profile__prefetch_stack(const struct profile *p, uint32_t h)
{
	const struct keyidx *t = &p->index->stacks;

	__builtin_prefetch(&t->slots[h & t->mask]);
}

void profile__prefetch_key(const struct profile *p, uint32_t h, size_t nr_ips)
{
	const struct keyidx *t = &p->index->stacks;
	size_t bytes = (1 + nr_ips) * sizeof(uint64_t), i;
	uint32_t pos;

	if (bytes > PREFETCH_KEY_BYTES)
		bytes = PREFETCH_KEY_BYTES;
	keyidx__for_each(t, h, pos) {
		const char *k = t->slots[pos].key;

		if (t->slots[pos].hash != h)
			continue;
		/*
		 * the key's lines (a 32-frame key: 264 bytes, over 5 or 6), the
		 * entry the counts go to. The last line is often asked for
		 * twice; a loop asking each line once was not faster on the
		 * 2-vCPU VM (7-11 % slower a sample in two batches of 41
		 * rounds in turn, 2026-11-29, within its batches' spread)
		 */
		for (i = 0; i < bytes; i += 64)
			__builtin_prefetch(k + i);
		__builtin_prefetch(k + bytes - 1);
		__builtin_prefetch(&p->stacks[t->slots[pos].idx], 1);
		return;
	}
}

/* The header word of a stack's key: what, beside its addresses, tells stacks apart */
static inline uint64_t key_header(uint32_t proc, uint16_t nk, uint16_t nu)
{
	return ((uint64_t)proc << 32) | ((uint32_t)nk << 16) | nu;
}

/* Room for a key of `words` words in the arena. Returns it, or NULL. */
static uint64_t *key_alloc(struct key_arena *a, size_t words)
{
	uint64_t *key;

	if (a->left < words) {
		size_t size = a->nr_chunks ?
				      KEY_CHUNK_MIN << (a->nr_chunks < 8 ? a->nr_chunks : 8) :
				      KEY_CHUNK_MIN;

		if (size > KEY_CHUNK_MAX)
			size = KEY_CHUNK_MAX;
		if (size < words)
			size = words;
		if (array__grow((void **)&a->chunks, &a->cap_chunks, a->nr_chunks + 1,
				sizeof(*a->chunks)) ||
		    !(a->next = malloc(size * sizeof(*a->next)))) {
			a->left = 0;
			return NULL;
		}
		a->chunks[a->nr_chunks++] = a->next;
		a->left = size;
	}
	key = a->next;
	a->next += words;
	a->left -= words;
	return key;
}

int profile__add_stack(struct profile *p, uint32_t proc, const uint64_t *ips, uint16_t nr_kernel,
		       uint16_t nr_user, uint64_t count, uint64_t value, bool *created)
{
	uint32_t h = profile__stack_hash(p->procs[proc].pid, ips, nr_kernel, nr_user);

	return profile__add_stack_hashed(p, proc, h, ips, nr_kernel, nr_user, count, value,
					 created);
}

int profile__add_stack_hashed(struct profile *p, uint32_t proc, uint32_t h, const uint64_t *ips,
			      uint16_t nr_kernel, uint16_t nr_user, uint64_t count, uint64_t value,
			      bool *created)
{
	struct keyidx *t = &p->index->stacks;
	uint32_t pos;
	uint64_t hdr = key_header(proc, nr_kernel, nr_user), *key;
	size_t n = (size_t)nr_kernel + nr_user;
	struct profile_stack *s;

	*created = false;
	keyidx__for_each(t, h, pos) {
		const uint64_t *k = t->slots[pos].key;

		if (t->slots[pos].hash != h)
			continue;
		/* the counts go there if the key matches: fetch it meanwhile */
		s = &p->stacks[t->slots[pos].idx];
		__builtin_prefetch(s, 1);
		if (k[0] == hdr && !memcmp(k + 1, ips, n * sizeof(*ips))) {
			s->count += count;
			s->value += value;
			p->nr_samples += count;
			return t->slots[pos].idx;
		}
	}
	if (p->nr_stacks >= INT32_MAX || keyidx__reserve(t) ||
	    array__grow((void **)&p->stacks, &p->cap_stacks, p->nr_stacks + 1, sizeof(*p->stacks)))
		return -ENOMEM;
	key = key_alloc(&p->index->stack_keys, 1 + n);
	if (!key)
		return -ENOMEM;
	key[0] = hdr;
	memcpy(key + 1, ips, n * sizeof(*ips));
	s = &p->stacks[p->nr_stacks];
	memset(s, 0, sizeof(*s));
	s->ips = key + 1;
	s->proc = proc;
	s->nr_kernel = nr_kernel;
	s->nr_user = nr_user;
	s->count = count;
	s->value = value;
	s->hash = h;
	keyidx__insert(t, h, p->nr_stacks, key);
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

	if (p->view == PROFILE_VIEW_CPU)
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

int profile__user_frame_mapping(const struct profile *p, const struct profile_stack *s, size_t i)
{
	/* intern_loc's look-up, made when the location was */
	if (s->locs)
		return p->locs[s->locs[s->nr_kernel + i]].mapping;
	return profile__find_mapping(p, s->proc, s->ips[s->nr_kernel + i] - (i > 0));
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
	pr->mappings[first].gen = ++pr->maps_gen;
	return 1;
}

static int intern_loc(struct profile *p, uint32_t proc, uint64_t addr, bool is_return,
		      uint32_t *out)
{
	struct idxmap *t = &p->index->locs;
	uint32_t h = loc_hash(proc, addr, is_return), pos;
	struct profile_location *l;

	idxmap__for_each(t, h, pos) {
		l = &p->locs[t->slots[pos]];
		if (l->addr == addr && l->proc == proc && l->is_return == is_return) {
			*out = t->slots[pos];
			return 0;
		}
	}
	if (p->nr_locs >= INT32_MAX || idxmap__reserve(t, loc_hash_of, p) ||
	    array__grow((void **)&p->locs, &p->cap_locs, p->nr_locs + 1, sizeof(*p->locs)))
		return -ENOMEM;
	l = &p->locs[p->nr_locs];
	memset(l, 0, sizeof(*l));
	l->addr = addr;
	l->proc = proc;
	l->is_return = is_return;
	l->mapping = proc == PROFILE_KERNEL_PROC ? -1 :
						   profile__find_mapping(p, proc, addr - is_return);
	idxmap__insert(t, h, p->nr_locs);
	*out = p->nr_locs++;
	return 0;
}

/*
 * How many user frames of s, from its root, are those of prev (the same
 * process, the same return addresses), the leaf left out: their locations
 * are prev's. Stacks come in the order they were first sampled, and one
 * after another they share most of their root side (a C++ compiler's 48
 * frames a stack), which is then not looked up again frame by frame.
 */
static size_t shared_root(const struct profile_stack *s, const struct profile_stack *prev)
{
	const uint64_t *a = s->ips + s->nr_kernel + s->nr_user,
		       *b = prev->ips + prev->nr_kernel + prev->nr_user;
	size_t n = 0, max;

	if (!prev->locs || prev->proc != s->proc || !s->nr_user || !prev->nr_user)
		return 0;
	max = (size_t)(s->nr_user < prev->nr_user ? s->nr_user : prev->nr_user) - 1;
	while (n < max && a[-1 - (long)n] == b[-1 - (long)n])
		n++;
	return n;
}

int profile__resolve_locs(struct profile *p)
{
	size_t i = p->index->nr_stacks_resolved, j;
	const struct profile_stack *prev = i ? &p->stacks[i - 1] : NULL;

	for (; i < p->nr_stacks; i++) {
		struct profile_stack *s = &p->stacks[i];
		size_t n = (size_t)s->nr_kernel + s->nr_user, shared;

		if (s->locs) {
			prev = s;
			p->index->nr_stacks_resolved = i + 1;
			continue;
		}
		s->locs = (uint32_t *)key_alloc(&p->index->loc_lists, n ? (n + 1) / 2 : 1);
		if (!s->locs)
			return -ENOMEM;
		shared = prev ? shared_root(s, prev) : 0;
		for (j = 0; j < shared; j++)
			s->locs[n - 1 - j] =
				prev->locs[(size_t)prev->nr_kernel + prev->nr_user - 1 - j];
		for (j = 0; j < n - shared; j++) {
			uint32_t owner = j < s->nr_kernel ? PROFILE_KERNEL_PROC : s->proc;
			/* leaf of each side is the interrupted instruction; the rest return addresses */
			bool ret = j != 0 && j != s->nr_kernel;

			if (intern_loc(p, owner, s->ips[j], ret, &s->locs[j])) {
				s->locs = NULL; /* its room stays in the arena */
				return -ENOMEM;
			}
		}
		prev = s;
		p->index->nr_stacks_resolved = i + 1;
	}
	return 0;
}

size_t profile__reset_locs(struct profile *p, const uint32_t *since, size_t nr, size_t *nr_cleared)
{
	size_t first = p->nr_locs;

	*nr_cleared = 0;
	for (size_t i = 0; i < p->nr_locs; i++) {
		struct profile_location *l = &p->locs[i];
		const struct profile_process *pr;
		int m;

		if (l->proc == PROFILE_KERNEL_PROC || l->proc >= nr ||
		    p->procs[l->proc].maps_gen == since[l->proc])
			continue;
		pr = &p->procs[l->proc];
		m = profile__find_mapping(p, l->proc, l->addr - l->is_return);
		/* its mapping there, as it is, when it was resolved: the same names */
		if (m >= 0 && pr->mappings[m].gen <= since[l->proc] && l->mapping >= 0) {
			l->mapping = m;
			continue;
		}
		*l = (struct profile_location){
			.addr = l->addr,
			.proc = l->proc,
			.is_return = l->is_return,
			.mapping = m,
		};
		if (first == p->nr_locs)
			first = i;
		(*nr_cleared)++;
	}
	return first;
}

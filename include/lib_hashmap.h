/* SPDX-License-Identifier: MIT */
/*
 * The hash containers every module shares (libbpf's hashmap.h and strset.h
 * show the shape; neither is installed by libbpf, they are internal to it):
 *
 * - struct idxmap: an open-addressing set of u32 indices into an array the
 *   caller owns, linear probing, IDXMAP_EMPTY in free slots, load factor
 *   kept at or under 1/2. The caller hashes and compares its own keys, so the
 *   probe loop stays inline at the call site (idxmap__for_each) and a lookup
 *   costs no indirect call; only growing asks the caller for each entry's
 *   hash.
 * - struct keyidx: an idxmap whose slots also keep each entry's 32-bit hash
 *   and a pointer to its key, for sets larger than the caches (the profile's
 *   distinct stacks): see below.
 * - struct strset: interned strings in insertion order (index = position),
 *   found by content through an idxmap; owned copies or borrowed pointers.
 * - struct u64map: nonzero u64 keys, each with a u64 value, stored in the
 *   table itself, for keys that are not indices (pids, pointers).
 * - hash__str (FNV-1a, 32 bits) and hash__mix64 (splitmix64's finalizer).
 */
#ifndef BPFPROF_LIB_HASHMAP_H
#define BPFPROF_LIB_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IDXMAP_EMPTY UINT32_MAX

/* FNV-1a of a NUL-terminated string, 32 bits (http://www.isthe.com/chongo/tech/comp/fnv/). */
static inline uint32_t hash__str(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

/* splitmix64's finalizer: cheap, good avalanche for address-like keys. */
static inline uint64_t hash__mix64(uint64_t h)
{
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	h ^= h >> 31;
	return h;
}

struct idxmap {
	uint32_t *slots; /* owned; IDXMAP_EMPTY or an index */
	uint32_t mask; /* capacity - 1, capacity a power of two; 0 before init */
	uint32_t used;
};

/*
 * Empty map with room for max_entries at load 1/2 (capacity a power of two,
 * at least 16). Returns 0 or -ENOMEM.
 */
int idxmap__init(struct idxmap *m, size_t max_entries);
void idxmap__free(struct idxmap *m);

/*
 * Make room for one more entry: past load 1/2, double the capacity and
 * re-place every entry by hash_of(ctx, index); a zeroed map (never
 * initialized) gets its first 16 slots. Returns 0 or -ENOMEM (the map is
 * unchanged then).
 */
int idxmap__reserve(struct idxmap *m, uint32_t (*hash_of)(void *ctx, uint32_t idx), void *ctx);

/* Put idx in the first free slot of hash h's probe sequence; idxmap__reserve first. */
void idxmap__insert(struct idxmap *m, uint32_t h, uint32_t idx);

/*
 * The probe sequence of hash h: pos runs over the occupied slots from h's
 * first one to the first free one. Compare m->slots[pos] with the key there.
 */
#define idxmap__for_each(m, h, pos)                                      \
	for ((pos) = (h) & (m)->mask; (m)->slots[(pos)] != IDXMAP_EMPTY; \
	     (pos) = ((pos) + 1) & (m)->mask)

/*
 * struct keyidx: open addressing, linear probing, load factor at or under
 * 1/2, like idxmap, but a slot (16 bytes) holds the entry's 32-bit hash and
 * a pointer to its key (caller-owned, stable, never NULL: NULL marks a free
 * slot) beside its index. A probe skips the other hashes without reading an
 * entry, and a hit reaches the key straight from the slot, while the entry
 * itself can be fetched in parallel: on a set far larger than the caches,
 * one memory round trip before the key instead of two (slot, entry, key).
 * Growing re-places slots by their stored hashes, so needs no callback.
 */
struct keyidx_slot {
	uint32_t hash;
	uint32_t idx;
	const void *key; /* NULL: free */
};

struct keyidx {
	struct keyidx_slot *slots; /* owned */
	uint32_t mask; /* capacity - 1, capacity a power of two; 0 before init */
	uint32_t used;
};

/*
 * Empty map with room for max_entries at load 1/2 (capacity a power of two,
 * at least 16). Returns 0 or -ENOMEM.
 */
int keyidx__init(struct keyidx *m, size_t max_entries);
void keyidx__free(struct keyidx *m);

/*
 * Make room for one more entry: past load 1/2, double the capacity; a zeroed
 * map gets its first 16 slots. Returns 0 or -ENOMEM (the map is unchanged then).
 */
int keyidx__reserve(struct keyidx *m);

/* Put (h, idx, key) in the first free slot of h's probe sequence; keyidx__reserve first. */
void keyidx__insert(struct keyidx *m, uint32_t h, uint32_t idx, const void *key);

/*
 * The probe sequence of hash h: pos runs over the occupied slots from h's
 * first one to the first free one; skip those whose hash is not h, compare
 * m->slots[pos].key with the key sought.
 */
#define keyidx__for_each(m, h, pos)                                           \
	for ((pos) = (h) & (m)->mask; (m)->slots[(pos)].key;                  \
	     (pos) = ((pos) + 1) & (m)->mask)

struct strset {
	const char **strs; /* in insertion order; owned copies when own_copies */
	uint32_t *hashes; /* hash__str of each */
	size_t nr, cap;
	struct idxmap map;
	bool own_copies;
};

/*
 * An empty set. own_copies: strset__add stores strdup copies (freed by
 * strset__free); else the caller's pointers, which must outlive the set.
 * Returns 0 or -ENOMEM.
 */
int strset__init(struct strset *ss, bool own_copies);
void strset__free(struct strset *ss);
/* Index of s, adding it at the end when new; -ENOMEM. */
int64_t strset__add(struct strset *ss, const char *s);
/* Index of s, or -ENOENT. */
int64_t strset__find(const struct strset *ss, const char *s);

struct u64map {
	uint64_t *keys; /* 0: free slot */
	uint64_t *vals;
	size_t nr, cap; /* cap: a power of two, or 0 before the first put */
};

/* Whether key (nonzero) is in m; its value in *val when val is not NULL. A zeroed map is empty. */
bool u64map__get(const struct u64map *m, uint64_t key, uint64_t *val);
/* Set key's (nonzero) value, adding it when new. Returns 0 or -ENOMEM (m unchanged). */
int u64map__put(struct u64map *m, uint64_t key, uint64_t val);
void u64map__free(struct u64map *m);

#endif /* BPFPROF_LIB_HASHMAP_H */

/* SPDX-License-Identifier: MIT */
/*
 * The persistent cache of built unwind tables (--unwind-cache, default
 * /var/cache/bpfprof/unwind): one file per build-id holding a file's compact
 * table (include/unwind_compact.h, the words the BPF walker reads), so that
 * a restarted agent, or the next run, loads every known binary's table
 * without reading its CFI again. Files without a build-id are not cached
 * (nothing else names their contents across runs); nor is the vDSO.
 *
 * An entry is a file of our own format, all fields little-endian:
 *
 *   offset size
 *        0    8  magic "BPFPUNWC"
 *        8    4  format version (UNWIND_CACHE_VERSION)
 *       12    4  header size, bytes (96)
 *       16    4  BPFPROF_UNWIND_PAGE_SHIFT the words were laid out with
 *       20    4  build-id length, 1..20
 *       24   20  build-id, zero-padded
 *       44    4  rows as built (before the compact layout), for -v
 *       48    8  the source file's size, bytes (a stale entry: same build-id,
 *                other contents)
 *       56    8  table base, ELF vaddr
 *       64    8  table end, ELF vaddr
 *       72    8  CFI bytes the table was built from, for -v
 *       80    4  nr_pages   \
 *       84    4  rules       > struct bpfprof_unwind_table (used: 0)
 *       88    4  nr_rules   /
 *       92    4  nr_words
 *       96       nr_words 4-byte words
 *      end-4  4  zlib crc32 of every byte before it
 *
 * An entry that is corrupt, truncated, of another format or version, of
 * another build-id or file size, or whose words are not a well-formed
 * compact table, is never used: it is removed (a -v message names the file
 * and the problem) and the table rebuilt and written anew.
 *
 * The directory must be a directory owned by the user bpfprof runs as
 * (root) with no group or other permissions (0700); anything else is refused
 * with one warning and the run goes on without a cache. Entries are written
 * to a temporary file and renamed into place; their total size is bounded
 * (--unwind-cache-size), the least recently used (their mtime, set on each
 * use) removed first; a failed write (a full disk) costs only the cache.
 */
#ifndef BPFPROF_UNWIND_CACHE_H
#define BPFPROF_UNWIND_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "bpfprof_abi.h"

/* Bump on any change to the layout above, the rule word or the table builder's output. */
#define UNWIND_CACHE_VERSION 2 /* 2: no rbp slot below an rsp-based CFA's rsp */
#define UNWIND_CACHE_MAGIC "BPFPUNWC"
#define UNWIND_CACHE_HDR_SIZE 96
#define UNWIND_CACHE_ID_MAX 20
/* --unwind-cache default, and --unwind-cache-size's: about 60 libLLVM-14 tables */
#define UNWIND_CACHE_DEFAULT_DIR "/var/cache/bpfprof/unwind"
#define UNWIND_CACHE_DEFAULT_BYTES (256ULL << 20)
/* The largest entry read: a table's words are at most 4M rows + pages + rules */
#define UNWIND_CACHE_MAX_ENTRY (64ULL << 20)

/* What a cache entry is for: the file's build-id and size. */
struct unwind_cache_key {
	uint8_t id[UNWIND_CACHE_ID_MAX];
	size_t id_len; /* 1..UNWIND_CACHE_ID_MAX */
	uint64_t file_size; /* bytes */
};

/* A built table as the cache holds it. */
struct unwind_cache_table {
	uint64_t base, end; /* ELF vaddrs: rows' pcs are relative to base */
	uint64_t cfi_bytes; /* CFI section bytes it was built from */
	uint32_t nr_rows; /* rows as built (struct unwind_table.nr_rows) */
	struct bpfprof_unwind_table info; /* the words' layout (used: 0) */
	/*
	 * owned by whoever filled it: unwind_cache_table__release (free(),
	 * or, from unwind_cache__get, the entry's mapping let go)
	 */
	uint32_t *words;
	uint32_t nr_words;
	void *map; /* NULL, or the mapped entry words points into (map_len bytes) */
	size_t map_len;
};

/* Let t's words go (free() them, or unmap the entry they are in); t->words NULL after. */
void unwind_cache_table__release(struct unwind_cache_table *t);

/*
 * Encode an entry: *out (free()) of *out_len bytes. 0, -EINVAL (a key or
 * table that cannot be written: id_len out of range, no words), -ENOMEM.
 */
int unwind_cache__encode(const struct unwind_cache_key *key, const struct unwind_cache_table *t,
			 uint8_t **out, size_t *out_len);

/*
 * Decode and check the entry buf[0..len) for key: 0 with *t (t->words
 * malloc'ed: free()), or -EINVAL with why[0..why_len) saying what is wrong
 * ("bad magic", "format version 7, expected 1", "build-id mismatch",
 * "truncated: ...", "checksum mismatch ...", "malformed table: ..."), or
 * -ENOMEM. Reads only buf[0..len): safe on any input.
 */
int unwind_cache__decode(const uint8_t *buf, size_t len, const struct unwind_cache_key *key,
			 struct unwind_cache_table *t, char *why, size_t why_len);

struct unwind_cache;

/*
 * Open the cache at dir (created, 0700, with missing parents, where absent),
 * holding at most max_bytes of entries. dir "none" or NULL: no cache, NULL
 * returned quietly. A directory that is not ours (another owner, group or
 * other permissions, not a directory, a symlink) gives one warning and
 * NULL: the run goes on without a cache. One that cannot be created is
 * warned the same where `given` (named by the user), and said only at -v
 * otherwise (the default, where a user with CAP_BPF but not root cannot
 * write). Free with unwind_cache__free.
 */
struct unwind_cache *unwind_cache__open(const char *dir, uint64_t max_bytes, bool given);
void unwind_cache__free(struct unwind_cache *c);

/*
 * The table cached for key: 0 with *t (unwind_cache_table__release: its
 * words may be in the entry's read-only mapping, not malloc'ed), -ENOENT (none;
 * c NULL), -EINVAL (an entry was there but bad: removed, said at -v with
 * `name`, the file's path, and the problem), -ENOMEM. Thread-safe.
 */
int unwind_cache__get(struct unwind_cache *c, const struct unwind_cache_key *key, const char *name,
		      struct unwind_cache_table *t);

/*
 * Store t for key (atomically: temporary file, then rename), then remove the
 * least recently used entries while the total is over the bound. Returns 0,
 * or -errno (a failed write is warned once; after ENOSPC, EDQUOT or EROFS
 * no more writes are tried this run). c NULL: nothing, 0. Thread-safe.
 */
int unwind_cache__put(struct unwind_cache *c, const struct unwind_cache_key *key,
		      const struct unwind_cache_table *t);

struct unwind_cache_stats {
	uint64_t hits; /* tables read from the cache */
	uint64_t misses; /* no entry */
	uint64_t rejected; /* entries there but bad: removed and rebuilt */
	uint64_t written; /* entries written */
	uint64_t write_errors; /* entries not written */
	uint64_t evicted; /* entries removed for room */
	uint64_t bytes; /* entries on disk now, bytes (as this run knows it) */
	uint64_t read_ns; /* wall time reading and checking the entries found, ns */
	uint64_t max_bytes; /* the bound */
};

void unwind_cache__stats(struct unwind_cache *c, struct unwind_cache_stats *st);

/* One -v line on the cache (its directory, hits, misses, rejected, written, bytes); c NULL: nothing. */
void unwind_cache__print(FILE *f, struct unwind_cache *c);

#endif /* BPFPROF_UNWIND_CACHE_H */

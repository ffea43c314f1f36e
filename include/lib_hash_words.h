/* SPDX-License-Identifier: MIT */
/*
 * A hash of an array of 64-bit words (a callchain's addresses) that costs
 * about one vector instruction a word: XXH3's accumulate step
 * (https://github.com/Cyan4973/xxHash, doc/xxhash_spec.md, "Accumulate"),
 * four 64-bit lanes, word i in lane i % 4:
 *
 *   dk = w[i] ^ key(i);  acc[i % 4] += lo32(dk) * hi32(dk);  acc[(i % 4) ^ 1] += w[i]
 *
 * with key(i) = K0 + i * K1, so that the same word at another position
 * hashes apart, the seed and n xored into lanes 0 and 2 at the start; then
 * the lanes folded by two 64 x 64 -> 128-bit multiplies (XXH3's mergeAccs)
 * and splitmix64's finalizer. The 32 x 32
 * -> 64-bit products are what SSE2's pmuludq and AVX2's vpmuludq do two and
 * four at a time; the word added to the neighbouring lane keeps every input
 * bit in the sum when a product is 0.
 *
 * One value on every machine and for every implementation: AVX2 where the
 * CPU has it (chosen once, at the first call), else SSE2 on x86-64, else
 * plain C. Not for untrusted keys' adversaries: a hash table's hash.
 */
#ifndef BPFPROF_LIB_HASH_WORDS_H
#define BPFPROF_LIB_HASH_WORDS_H

#include <stddef.h>
#include <stdint.h>

/*
 * The hash of w[0..n) with seed (any 64-bit value: the caller's own part of
 * the key, e.g. a process id and the array's split). When dst is not NULL
 * the n words are also copied to it (not overlapping w) as they are read:
 * one pass for a caller that keeps a copy. No allocation; n may be 0.
 */
uint64_t hash_words(uint64_t seed, const uint64_t *w, size_t n, uint64_t *dst);

/*
 * The implementations, for tests and benchmarks: HASH_WORDS_C (portable),
 * HASH_WORDS_SSE2, HASH_WORDS_AVX2. hash_words__impls() says which this
 * machine runs (a bit each); hash_words__with() calls one (it must be
 * among them) and returns what hash_words returns.
 */
enum hash_words_impl {
	HASH_WORDS_C = 0,
	HASH_WORDS_SSE2 = 1,
	HASH_WORDS_AVX2 = 2,
};
unsigned hash_words__impls(void);
uint64_t hash_words__with(enum hash_words_impl impl, uint64_t seed, const uint64_t *w, size_t n,
			  uint64_t *dst);

#endif /* BPFPROF_LIB_HASH_WORDS_H */

// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/lib/lib_hash_words.c (include/lib_hash_words.h):
 * every implementation the machine runs (C, SSE2, AVX2) against a reference
 * written here from the header's formula, for 0 to 70 words (each tail
 * length), with and without the copy (the copy exact, nothing written past
 * it); and the hash's quality on callchain-like keys: one changed or two
 * swapped frames, another seed or a prefix hash apart, 100 000 keys that
 * differ in one frame give 100 000 values and fill 32 768 buckets evenly,
 * a flipped input bit flips about half the output bits.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "lib_hash_words.h"

static uint64_t rng_state = 0x243f6a8885a308d3ULL;

static uint64_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

/* The header's formula, word by word */
static uint64_t reference(uint64_t seed, const uint64_t *w, size_t n)
{
	uint64_t acc[4] = { 0x00000000C2B2AE3DULL ^ seed, 0x9E3779B185EBCA87ULL,
			    0xC2B2AE3D27D4EB4FULL ^ n, 0x165667B19E3779F9ULL };
	__uint128_t m0, m1;
	uint64_t h;

	for (size_t i = 0; i < n; i++) {
		uint64_t dk = w[i] ^ (0xa0761d6478bd642fULL + i * 0x8ebc6af09c88c6e3ULL);

		acc[i % 4] += (dk & 0xffffffffULL) * (dk >> 32);
		acc[(i % 4) ^ 1] += w[i];
	}
	m0 = (__uint128_t)(acc[0] ^ 0xe7037ed1a0b428dbULL) * (acc[1] ^ 0x8ebc6af09c88c6e3ULL);
	m1 = (__uint128_t)(acc[2] ^ 0x589965cc75374cc3ULL) * (acc[3] ^ 0x1d8e4e27c47d124fULL);
	h = ((uint64_t)m0 ^ (uint64_t)(m0 >> 64)) + ((uint64_t)m1 ^ (uint64_t)(m1 >> 64));
	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
	h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
	return h ^ (h >> 31);
}

/* Every implementation here, every length 0..70, with and without the copy: the reference's value */
static void test_impls_agree(void **state)
{
	unsigned impls = hash_words__impls();
	uint64_t w[72], dst[74];

	assert_true(impls & (1u << HASH_WORDS_C));
#if defined(__x86_64__)
	assert_true(impls & (1u << HASH_WORDS_SSE2));
#endif
	for (unsigned round = 0; round < 20; round++) {
		uint64_t seed = rng();

		for (size_t i = 0; i < 72; i++)
			w[i] = round & 1 ? rng() : 0x7f0000400000ULL + (rng() & 0xffffff);
		for (size_t n = 0; n <= 70; n++) {
			uint64_t want = reference(seed, w, n);

			assert_true(hash_words(seed, w, n, NULL) == want);
			for (int impl = HASH_WORDS_C; impl <= HASH_WORDS_AVX2; impl++) {
				if (!(impls & (1u << impl)))
					continue;
				assert_true(hash_words__with(impl, seed, w, n, NULL) == want);
				memset(dst, 0xa5, sizeof(dst));
				assert_true(hash_words__with(impl, seed, w, n, dst + 1) == want);
				assert_memory_equal(dst + 1, w, n * sizeof(*w));
				/* nothing written around the copy */
				assert_true(dst[0] == 0xa5a5a5a5a5a5a5a5ULL);
				assert_true(dst[n + 1] == 0xa5a5a5a5a5a5a5a5ULL);
			}
			memset(dst, 0, sizeof(dst));
			assert_true(hash_words(seed, w, n, dst) == want);
			assert_memory_equal(dst, w, n * sizeof(*w));
		}
	}
}

/* A 32-frame callchain: 8 kernel, 24 user, callers shared, the leaf i's own */
static void callchain(uint64_t *ips, unsigned i)
{
	for (unsigned j = 0; j < 32; j++)
		ips[j] = (j < 8 ? 0xffffffff81000000ULL : 0x555555554000ULL) + j * 0x1000 + 0x40;
	ips[0] += (uint64_t)i * 4;
}

static void test_apart(void **state)
{
	uint64_t ips[32], h;

	callchain(ips, 7);
	h = hash_words(1000, ips, 32, NULL);
	/* another seed, a prefix, one frame one byte on, two frames swapped */
	assert_true(hash_words(1001, ips, 32, NULL) != h);
	assert_true(hash_words(1000, ips, 31, NULL) != h);
	for (unsigned j = 0; j < 32; j++) {
		ips[j] += 1;
		assert_true(hash_words(1000, ips, 32, NULL) != h);
		ips[j] -= 1;
	}
	for (unsigned j = 0; j + 4 < 32; j++) {
		uint64_t t = ips[j];

		ips[j] = ips[j + 4]; /* the same lane */
		ips[j + 4] = t;
		assert_true(hash_words(1000, ips, 32, NULL) != h);
		ips[j + 4] = ips[j];
		ips[j] = t;
	}
	assert_true(hash_words(1000, ips, 32, NULL) == h);
}

#define NR_CHAINS 100000
#define BUCKETS 32768

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Keys one frame apart (the leaf, or a caller 20 deep): distinct values, buckets evenly filled */
static void test_spread(void **state)
{
	uint64_t *hs = malloc(NR_CHAINS * sizeof(*hs)), ips[32];
	unsigned *buckets = calloc(BUCKETS, sizeof(*buckets)), max = 0;

	assert_non_null(hs);
	assert_non_null(buckets);
	for (unsigned i = 0; i < NR_CHAINS; i++) {
		callchain(ips, i % 2 ? i : 0);
		if (!(i % 2))
			ips[20] += (uint64_t)i * 8;
		hs[i] = hash_words(4242ULL << 32 | 8 << 16 | 24, ips, 32, NULL);
		buckets[(uint32_t)(hs[i] ^ (hs[i] >> 32)) % BUCKETS]++;
	}
	qsort(hs, NR_CHAINS, sizeof(*hs), cmp_u64);
	for (unsigned i = 1; i < NR_CHAINS; i++)
		assert_true(hs[i] != hs[i - 1]);
	/* 3.05 a bucket on average: a Poisson tail past 20 is under 1e-9 a bucket */
	for (unsigned b = 0; b < BUCKETS; b++)
		max = buckets[b] > max ? buckets[b] : max;
	assert_true(max <= 20);
	free(hs);
	free(buckets);
}

/* Each input bit flipped, one at a time: on average half the 64 output bits change */
static void test_avalanche(void **state)
{
	uint64_t ips[32];
	unsigned long flips = 0, trials = 0;

	for (unsigned r = 0; r < 8; r++) {
		uint64_t h;

		callchain(ips, r * 977);
		h = hash_words(r, ips, 32, NULL);
		for (unsigned j = 0; j < 32; j++)
			for (unsigned b = 0; b < 64; b++) {
				ips[j] ^= 1ULL << b;
				flips += __builtin_popcountll(hash_words(r, ips, 32, NULL) ^ h);
				trials++;
				ips[j] ^= 1ULL << b;
			}
	}
	assert_true(flips > 31 * trials && flips < 33 * trials);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_impls_agree),
		cmocka_unit_test(test_apart),
		cmocka_unit_test(test_spread),
		cmocka_unit_test(test_avalanche),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

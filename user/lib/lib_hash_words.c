// SPDX-License-Identifier: MIT
/*
 * hash_words (include/lib_hash_words.h): XXH3's accumulate over four lanes,
 * in plain C, SSE2 and AVX2, all three the same function of their input
 * (tests/test_lib_hash_words.c checks them against each other). Each
 * implementation comes twice, with and without the copy, so that neither
 * loop tests for it.
 */
#include <string.h>
#include "lib_hash_words.h"
#include "lib_hashmap.h" /* hash__mix64 */
#if defined(__x86_64__)
#include <immintrin.h>
#endif

/* key(i) = K0 + i * K1 (wyhash's primes) */
#define K0 0xa0761d6478bd642fULL
#define K1 0x8ebc6af09c88c6e3ULL

/* The lanes' start (XXH3's XXH3_INIT_ACC) and their fold's secret (wyhash's _wyp) */
static const uint64_t acc_init[4] = { 0x00000000C2B2AE3DULL, 0x9E3779B185EBCA87ULL,
				      0xC2B2AE3D27D4EB4FULL, 0x165667B19E3779F9ULL };
#define S0 0xe7037ed1a0b428dbULL
#define S1 0x8ebc6af09c88c6e3ULL
#define S2 0x589965cc75374cc3ULL
#define S3 0x1d8e4e27c47d124fULL

typedef uint64_t (*hash_fn)(uint64_t seed, const uint64_t *w, size_t n, uint64_t *dst);

/* 64 x 64 -> 128-bit multiply, the halves xored (wyhash's mum) */
static inline uint64_t mum(uint64_t a, uint64_t b)
{
#ifdef __SIZEOF_INT128__
	__uint128_t r = (__uint128_t)a * b;

	return (uint64_t)r ^ (uint64_t)(r >> 64);
#else
	uint64_t ha = a >> 32, hb = b >> 32, la = (uint32_t)a, lb = (uint32_t)b;
	uint64_t rh = ha * hb, rm0 = ha * lb, rm1 = hb * la, rl = la * lb, t = rl + (rm0 << 32), c;

	c = t < rl;
	rl = t + (rm1 << 32);
	c += rl < t;
	rh += (rm0 >> 32) + (rm1 >> 32) + c;
	return rl ^ rh;
#endif
}

/* One word into the lanes, as every implementation does it for word i */
static inline void acc_word(uint64_t acc[4], uint64_t w, size_t i)
{
	uint64_t dk = w ^ (K0 + i * K1);

	acc[i & 3] += (uint64_t)(uint32_t)dk * (dk >> 32);
	acc[(i & 3) ^ 1] += w;
}

/* The words from i on (fewer than a vector's), then the lanes folded */
static inline uint64_t finish(uint64_t acc[4], const uint64_t *w, size_t i, size_t n, uint64_t *dst)
{
	for (; i < n; i++) {
		if (dst)
			dst[i] = w[i];
		acc_word(acc, w[i], i);
	}
	return hash__mix64(mum(acc[0] ^ S0, acc[1] ^ S1) + mum(acc[2] ^ S2, acc[3] ^ S3));
}

/* Four words a turn in four registers (an array indexed by i % 4 stays in memory) */
static inline __attribute__((always_inline)) uint64_t hash_c(uint64_t seed, const uint64_t *w,
							     size_t n, uint64_t *dst)
{
	uint64_t a0 = acc_init[0] ^ seed, a1 = acc_init[1], a2 = acc_init[2] ^ n, a3 = acc_init[3];
	uint64_t acc[4], k = K0;
	size_t i;

	for (i = 0; i + 4 <= n; i += 4, k += 4 * K1) {
		uint64_t w0 = w[i], w1 = w[i + 1], w2 = w[i + 2], w3 = w[i + 3];
		uint64_t x0 = w0 ^ k, x1 = w1 ^ (k + K1), x2 = w2 ^ (k + 2 * K1),
			 x3 = w3 ^ (k + 3 * K1);

		if (dst) {
			dst[i] = w0;
			dst[i + 1] = w1;
			dst[i + 2] = w2;
			dst[i + 3] = w3;
		}
		a0 += (uint64_t)(uint32_t)x0 * (x0 >> 32) + w1;
		a1 += (uint64_t)(uint32_t)x1 * (x1 >> 32) + w0;
		a2 += (uint64_t)(uint32_t)x2 * (x2 >> 32) + w3;
		a3 += (uint64_t)(uint32_t)x3 * (x3 >> 32) + w2;
	}
	acc[0] = a0;
	acc[1] = a1;
	acc[2] = a2;
	acc[3] = a3;
	return finish(acc, w, i, n, dst);
}

static uint64_t hash_c_copy(uint64_t seed, const uint64_t *w, size_t n, uint64_t *dst)
{
	if (!dst)
		__builtin_unreachable(); /* hash_words's choice */
	return hash_c(seed, w, n, dst);
}

static uint64_t hash_c_only(uint64_t seed, const uint64_t *w, size_t n, uint64_t *dst)
{
	return hash_c(seed, w, n, NULL);
}

#if defined(__x86_64__)
/*
 * Four words a turn as two vectors of lanes (0, 1) and (2, 3): pmuludq
 * multiplies the low 32 bits of each 64-bit lane, here dk by dk >> 32;
 * pshufd 0x4e swaps a vector's two words, each word going to lane ^ 1.
 */
static inline __attribute__((always_inline)) uint64_t hash_sse2(uint64_t seed, const uint64_t *w,
								size_t n, uint64_t *dst)
{
	__m128i a01 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)acc_init),
				    _mm_set_epi64x(0, (long long)seed)),
		a23 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(acc_init + 2)),
				    _mm_set_epi64x(0, (long long)n));
	__m128i k01 = _mm_set_epi64x((long long)(K0 + K1), (long long)K0),
		k23 = _mm_set_epi64x((long long)(K0 + 3 * K1), (long long)(K0 + 2 * K1));
	const __m128i step = _mm_set1_epi64x((long long)(4 * K1));
	uint64_t acc[4];
	size_t i;

	for (i = 0; i + 4 <= n; i += 4) {
		__m128i d01 = _mm_loadu_si128((const __m128i *)(w + i)),
			d23 = _mm_loadu_si128((const __m128i *)(w + i + 2));
		__m128i x01 = _mm_xor_si128(d01, k01), x23 = _mm_xor_si128(d23, k23);

		if (dst) {
			_mm_storeu_si128((__m128i *)(dst + i), d01);
			_mm_storeu_si128((__m128i *)(dst + i + 2), d23);
		}
		a01 = _mm_add_epi64(a01, _mm_mul_epu32(x01, _mm_srli_epi64(x01, 32)));
		a23 = _mm_add_epi64(a23, _mm_mul_epu32(x23, _mm_srli_epi64(x23, 32)));
		a01 = _mm_add_epi64(a01, _mm_shuffle_epi32(d01, 0x4e));
		a23 = _mm_add_epi64(a23, _mm_shuffle_epi32(d23, 0x4e));
		k01 = _mm_add_epi64(k01, step);
		k23 = _mm_add_epi64(k23, step);
	}
	_mm_storeu_si128((__m128i *)acc, a01);
	_mm_storeu_si128((__m128i *)(acc + 2), a23);
	return finish(acc, w, i, n, dst);
}

static uint64_t hash_sse2_copy(uint64_t seed, const uint64_t *w, size_t n, uint64_t *dst)
{
	if (!dst)
		__builtin_unreachable(); /* hash_words's choice */
	return hash_sse2(seed, w, n, dst);
}

static uint64_t hash_sse2_only(uint64_t seed, const uint64_t *w, size_t n, uint64_t *dst)
{
	return hash_sse2(seed, w, n, NULL);
}

/* The same, the four lanes in one vector (vpshufd swaps words within each 128-bit half) */
static inline __attribute__((always_inline, target("avx2"))) uint64_t
hash_avx2(uint64_t seed, const uint64_t *w, size_t n, uint64_t *dst)
{
	__m256i a = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)acc_init),
				     _mm256_set_epi64x(0, (long long)n, 0, (long long)seed));
	__m256i k = _mm256_set_epi64x((long long)(K0 + 3 * K1), (long long)(K0 + 2 * K1),
				      (long long)(K0 + K1), (long long)K0);
	const __m256i step = _mm256_set1_epi64x((long long)(4 * K1));
	uint64_t acc[4];
	size_t i;

	/* eight words a turn while there are (half the loop's own instructions), then four */
	for (i = 0; i + 8 <= n; i += 8) {
		__m256i d0 = _mm256_loadu_si256((const __m256i *)(w + i)),
			d1 = _mm256_loadu_si256((const __m256i *)(w + i + 4));
		__m256i x0 = _mm256_xor_si256(d0, k), x1;

		k = _mm256_add_epi64(k, step);
		x1 = _mm256_xor_si256(d1, k);
		k = _mm256_add_epi64(k, step);
		if (dst) {
			_mm256_storeu_si256((__m256i *)(dst + i), d0);
			_mm256_storeu_si256((__m256i *)(dst + i + 4), d1);
		}
		a = _mm256_add_epi64(a, _mm256_mul_epu32(x0, _mm256_srli_epi64(x0, 32)));
		a = _mm256_add_epi64(a, _mm256_shuffle_epi32(d0, 0x4e));
		a = _mm256_add_epi64(a, _mm256_mul_epu32(x1, _mm256_srli_epi64(x1, 32)));
		a = _mm256_add_epi64(a, _mm256_shuffle_epi32(d1, 0x4e));
	}
	if (i + 4 <= n) {
		__m256i d = _mm256_loadu_si256((const __m256i *)(w + i)),
			x = _mm256_xor_si256(d, k);

		if (dst)
			_mm256_storeu_si256((__m256i *)(dst + i), d);
		a = _mm256_add_epi64(a, _mm256_mul_epu32(x, _mm256_srli_epi64(x, 32)));
		a = _mm256_add_epi64(a, _mm256_shuffle_epi32(d, 0x4e));
		i += 4;
	}
	_mm256_storeu_si256((__m256i *)acc, a);
	return finish(acc, w, i, n, dst);
}

static __attribute__((target("avx2"))) uint64_t hash_avx2_copy(uint64_t seed, const uint64_t *w,
							       size_t n, uint64_t *dst)
{
	if (!dst)
		__builtin_unreachable(); /* hash_words's choice */
	return hash_avx2(seed, w, n, dst);
}

static __attribute__((target("avx2"))) uint64_t hash_avx2_only(uint64_t seed, const uint64_t *w,
							       size_t n, uint64_t *dst)
{
	return hash_avx2(seed, w, n, NULL);
}
#endif

/* [impl][with the copy] */
static const hash_fn impls[3][2] = {
	[HASH_WORDS_C] = { hash_c_only, hash_c_copy },
#if defined(__x86_64__)
	[HASH_WORDS_SSE2] = { hash_sse2_only, hash_sse2_copy },
	[HASH_WORDS_AVX2] = { hash_avx2_only, hash_avx2_copy },
#endif
};

static hash_fn chosen_only = hash_c_only, chosen_copy = hash_c_copy;

unsigned hash_words__impls(void)
{
	unsigned set = 1u << HASH_WORDS_C;

#if defined(__x86_64__)
	__builtin_cpu_init();
	set |= 1u << HASH_WORDS_SSE2;
	if (__builtin_cpu_supports("avx2"))
		set |= 1u << HASH_WORDS_AVX2;
#endif
	return set;
}

/* Before main: the best of this machine's, so that hash_words is one indirect call */
static __attribute__((constructor)) void choose(void)
{
	unsigned set = hash_words__impls();
	int best = set & (1u << HASH_WORDS_AVX2) ? HASH_WORDS_AVX2 :
		   set & (1u << HASH_WORDS_SSE2) ? HASH_WORDS_SSE2 :
						   HASH_WORDS_C;

	chosen_only = impls[best][0];
	chosen_copy = impls[best][1];
}

uint64_t hash_words(uint64_t seed, const uint64_t *w, size_t n, uint64_t *dst)
{
	return dst ? chosen_copy(seed, w, n, dst) : chosen_only(seed, w, n, NULL);
}

uint64_t hash_words__with(enum hash_words_impl impl, uint64_t seed, const uint64_t *w, size_t n,
			  uint64_t *dst)
{
	return impls[impl][dst != NULL](seed, w, n, dst);
}

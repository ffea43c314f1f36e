/* SPDX-License-Identifier: MIT */
/*
 * Inflating a writer's gzip output in tests (pprof .pb.gz, OTLP push
 * bodies) with zlib: one gzip member (RFC 1952), nothing after it.
 * Include after <cmocka.h>.
 */
#ifndef BPFPROF_TEST_GUNZIP_FIXTURE_H
#define BPFPROF_TEST_GUNZIP_FIXTURE_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <zlib.h>

/* The inflated bytes of in[0..len) (caller frees), their length in *out_len. */
static inline uint8_t *gunzip(const uint8_t *in, size_t len, size_t *out_len)
{
	z_stream zs = { 0 };
	size_t cap = 4096, n = 0;
	uint8_t *out = malloc(cap);
	int zerr;

	assert_non_null(out);
	assert_int_equal(inflateInit2(&zs, 16 + MAX_WBITS), Z_OK);
	zs.next_in = (Bytef *)in;
	zs.avail_in = (uInt)len;
	do {
		if (n == cap) {
			cap *= 2;
			out = realloc(out, cap);
			assert_non_null(out);
		}
		zs.next_out = out + n;
		zs.avail_out = (uInt)(cap - n);
		zerr = inflate(&zs, Z_NO_FLUSH);
		n = cap - zs.avail_out;
	} while (zerr == Z_OK);
	assert_int_equal(zerr, Z_STREAM_END);
	assert_int_equal(zs.avail_in, 0); /* one member, nothing after it */
	inflateEnd(&zs);
	*out_len = n;
	return out;
}

#endif /* BPFPROF_TEST_GUNZIP_FIXTURE_H */

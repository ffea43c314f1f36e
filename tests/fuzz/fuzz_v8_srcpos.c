// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for user/symbolize/v8_srcpos.c: any bytes as a V8
 * source-position table (looked up at an offset the first bytes give), as
 * a baseline bytecode offset table walked over bytecodes and a
 * kBytecodeSizes table cut from the input, and as line ends. Built and run
 * by `make fuzz`; seeds in tests/fuzz/corpus/v8_srcpos (tables as V8 writes
 * them).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "v8_srcpos.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int64_t off = 0, raw, bco;
	uint32_t ends[64], line, col;
	size_t nr_ends = 0, third;
	uint16_t off16 = 0;

	if (size < 2)
		return 0;
	memcpy(&off16, data, 2);
	off = (int16_t)off16;
	data += 2;
	size -= 2;
	v8_srcpos__find(data, size, off, &raw);
	/* thirds: bytecode offset table, bytecodes, sizes (3 rows) */
	third = size / 3;
	if (third >= 3)
		v8_srcpos__baseline(data, third, data + third, third, data + 2 * third,
				    (size - 2 * third) / 3, off, &bco);
	/* line ends: ascending by construction from the bytes */
	for (size_t i = 0; i < size && nr_ends < 64; i++)
		ends[nr_ends] = (nr_ends ? ends[nr_ends - 1] : 0) + data[i], nr_ends++;
	v8_srcpos__line(ends, nr_ends, off, &line, &col);
	return 0;
}

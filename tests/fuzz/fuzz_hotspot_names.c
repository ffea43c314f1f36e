// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for user/symbolize/hotspot_names.c's decoders of
 * HotSpot's debug information: the compressed line number table and a
 * scope's head (UNSIGNED5 ints, X = 0 or 1), and a signature turned to Java
 * form. Input: a byte whose bit 0 is X, then the bytes decoded. Whatever the
 * bytes, the decoders must end, never read past them, and give bcis within
 * 0-65535 and terminated names. Built and run by `make fuzz`; seeds in
 * tests/fuzz/corpus/hotspot_names.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "hotspot_names.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hotspot_line *l;
	uint32_t n, sender, idx;
	int32_t bci;
	char sig[64], out[48];
	unsigned x;

	if (!size)
		return 0;
	x = data[0] & 1;
	data++, size--;
	if (!hotspot_lines__decode(data, size, x, &l, &n)) {
		for (uint32_t i = 0; i < n; i++)
			if (l[i].bci > 65535)
				abort();
		(void)hotspot_lines__find(l, n, size);
		free(l);
	}
	if (!hotspot_scope__decode(data, size, x, &sender, &idx, &bci) && bci < -1)
		abort();
	n = size < sizeof(sig) - 1 ? (uint32_t)size : sizeof(sig) - 1;
	memcpy(sig, data, n);
	sig[n] = '\0';
	hotspot_sig__java(sig, out, sizeof(out));
	if (strlen(out) >= sizeof(out))
		abort();
	return 0;
}

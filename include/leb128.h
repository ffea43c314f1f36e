/* SPDX-License-Identifier: MIT */
/*
 * LEB128 numbers (DWARF 5 section 7.6), as call frame information encodes
 * them: read by the table builder (user/unwind/unwind_table.c) and the row
 * generator (user/unwind/unwind_rows_fast.c).
 */
#ifndef BPFPROF_LEB128_H
#define BPFPROF_LEB128_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Read an unsigned (sign false) or signed LEB128 number at *p, not past end,
 * into *v, and advance *p past it. Returns false, *p and *v undefined, when
 * it runs past end or past 64 bits.
 */
static inline bool leb128_read(const uint8_t **p, const uint8_t *end, bool sign, uint64_t *v)
{
	uint64_t r = 0;
	unsigned int shift = 0;
	uint8_t b;

	do {
		if (*p >= end || shift >= 64)
			return false;
		b = *(*p)++;
		r |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (sign && shift < 64 && (b & 0x40))
		r |= ~0ull << shift;
	*v = r;
	return true;
}

#endif /* BPFPROF_LEB128_H */

// SPDX-License-Identifier: MIT
/*
 * V8's source-position tables, baseline bytecode offset tables and line
 * ends (include/v8_srcpos.h).
 */
#include <errno.h>
#include "v8_srcpos.h"

/* One VLQ at *i of t: unsigned into *v. 0, or -EINVAL (past the end, over 10 bytes). */
static int vlq(const uint8_t *t, size_t len, size_t *i, uint64_t *v)
{
	uint64_t x = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		if (*i >= len || shift > 63)
			return -EINVAL;
		b = t[(*i)++];
		x |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	*v = x;
	return 0;
}

/* A zigzag VLQ */
static int zigzag(const uint8_t *t, size_t len, size_t *i, int64_t *v)
{
	uint64_t u;

	if (vlq(t, len, i, &u))
		return -EINVAL;
	*v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
	return 0;
}

int v8_srcpos__find(const uint8_t *t, size_t len, int64_t off, int64_t *raw)
{
	int64_t code = -1, pos = 0, dc, dp;
	size_t i = 0;
	int found = -ENOENT;

	while (i < len) {
		if (zigzag(t, len, &i, &dc) || zigzag(t, len, &i, &dp))
			return -EINVAL;
		/* V8 encodes DecodeInt<int>: a code delta beyond 32 bits is not its */
		if (dc > INT32_MAX || dc < INT32_MIN)
			return -EINVAL;
		/* a statement's delta as is, an expression's as -delta - 1: offsets only go up */
		dc = dc >= 0 ? dc : -(dc + 1);
		if (dp > ((int64_t)1 << 48) || dp < -((int64_t)1 << 48))
			return -EINVAL;
		code += dc;
		pos += dp;
		if (code > off)
			break;
		*raw = pos;
		found = 0;
	}
	return found;
}

int v8_srcpos__line(const uint32_t *ends, size_t n, int64_t off, uint32_t *line, uint32_t *col)
{
	size_t l = 0, r = n;

	if (off < 0 || !n || off > (int64_t)ends[n - 1])
		return -ERANGE;
	/* the first line whose end is at or after off */
	while (l < r) {
		size_t m = l + (r - l) / 2;

		if ((int64_t)ends[m] < off)
			l = m + 1;
		else
			r = m;
	}
	*line = (uint32_t)l + 1;
	*col = (uint32_t)(off - (l ? (int64_t)ends[l - 1] + 1 : 0)) + 1;
	return 0;
}

/* The size of the bytecode at offset at (its prefix included); 0: malformed */
static size_t bytecode_size(const uint8_t *bc, size_t bc_len, size_t at, const uint8_t *sizes,
			    size_t nr)
{
	size_t row = 0, pre = 0, sz;
	uint8_t op;

	if (at >= bc_len)
		return 0;
	op = bc[at];
	if (op <= 3) { /* Wide, ExtraWide, DebugBreakWide, DebugBreakExtraWide */
		row = (op & 1) ? 2 : 1;
		pre = 1;
		if (at + 1 >= bc_len)
			return 0;
		op = bc[at + 1];
	}
	if (op >= nr)
		return 0;
	sz = sizes[row * nr + op];
	if (!sz)
		return 0;
	return pre + sz;
}

int v8_srcpos__baseline(const uint8_t *t, size_t len, const uint8_t *bc, size_t bc_len,
			const uint8_t *sizes, size_t nr_bytecodes, int64_t pc_off, int64_t *bc_off)
{
	uint64_t end, d;
	size_t i = 0, at = 0, sz;
	int64_t cur = -1; /* the prologue */

	if (!nr_bytecodes || vlq(t, len, &i, &end))
		return -EINVAL;
	/* each entry's pc range is (start, end] */
	while ((int64_t)end < pc_off) {
		if (i >= len)
			return -ENOENT;
		if (vlq(t, len, &i, &d) || d > (1u << 30))
			return -EINVAL;
		if (cur >= 0) {
			sz = bytecode_size(bc, bc_len, at, sizes, nr_bytecodes);
			if (!sz)
				return -EINVAL;
			at += sz;
		}
		if (at >= bc_len)
			return -EINVAL;
		cur = (int64_t)at;
		end += d;
	}
	*bc_off = cur;
	return 0;
}

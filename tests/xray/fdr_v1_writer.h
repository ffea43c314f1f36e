/* SPDX-License-Identifier: MIT */
/*
 * A writer of XRay FDR version 1 traces, written from "XRay Flight Data
 * Recorder Trace Format" (llvm/docs/XRayFDRFormat.rst in llvm-project)
 * alone (little-endian): 32-byte
 * header, fixed-size thread buffers, 16-byte metadata records (first byte
 * kind << 1 | 1), 8-byte function records (u32 id << 4 | action << 1, u32
 * TSC delta), EndOfBuffer then filler to the buffer size. Used by
 * tests/xray/gen_v1.c and tests/test_read_xray.c.
 */
#ifndef BPFPROF_TESTS_FDR_V1_WRITER_H
#define BPFPROF_TESTS_FDR_V1_WRITER_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct v1w {
	uint8_t *data;
	size_t len, cap;
	size_t buf_start;	/* offset of the current thread buffer */
	uint64_t buf_size;
};

static inline void v1w_put(struct v1w *w, const void *p, size_t n)
{
	if (w->len + n > w->cap) {
		w->cap = (w->len + n) * 2 + 4096;
		w->data = realloc(w->data, w->cap);
		if (!w->data)
			abort();
	}
	memcpy(w->data + w->len, p, n);
	w->len += n;
}

/* Little-endian value in `bytes` bytes (up to 15; beyond 8 they are zero). */
static inline void v1w_le(struct v1w *w, uint64_t v, int bytes)
{
	uint8_t b[16];
	int i;

	for (i = 0; i < bytes; i++)
		b[i] = i < 8 ? (uint8_t)(v >> (8 * i)) : 0;
	v1w_put(w, b, (size_t)bytes);
}

/* File header: version 1, type 1 (FDR), constant + nonstop TSC. */
static inline void v1w_header(struct v1w *w, uint64_t freq, uint64_t buf_size)
{
	w->buf_size = buf_size;
	v1w_le(w, 1, 2);
	v1w_le(w, 1, 2);
	v1w_le(w, 3, 4);
	v1w_le(w, freq, 8);
	v1w_le(w, buf_size, 8);
	v1w_le(w, 0, 8);
}

/* Metadata record: kind, then up to 15 data bytes given as (value, width) pairs, zero padded. */
static inline void v1w_md(struct v1w *w, unsigned kind, uint64_t a, int an, uint64_t b, int bn)
{
	uint8_t first = (uint8_t)(kind << 1 | 1);

	v1w_put(w, &first, 1);
	v1w_le(w, a, an);
	v1w_le(w, b, bn);
	v1w_le(w, 0, 15 - an - bn);
}

static inline void v1w_fn(struct v1w *w, unsigned action, uint32_t id, uint32_t delta)
{
	v1w_le(w, (uint64_t)id << 4 | action << 1, 4);
	v1w_le(w, delta, 4);
}

/* NewBuffer (2-byte tid), WallClockTime, NewCPUId. */
static inline void v1w_begin(struct v1w *w, uint16_t tid, uint16_t cpu, uint64_t tsc)
{
	w->buf_start = w->len;
	v1w_md(w, 0, tid, 2, 0, 0);
	v1w_md(w, 4, 1500000000, 8, 250000, 4);
	v1w_md(w, 2, cpu, 2, tsc, 8);
}

/* EndOfBuffer, then filler bytes (which look like records on purpose) to the buffer size. */
static inline void v1w_end(struct v1w *w)
{
	v1w_md(w, 1, 0, 0, 0, 0);
	while (w->len - w->buf_start < w->buf_size) {
		uint8_t junk = (w->len & 1) ? 0x03 : 0xAB;

		v1w_put(w, &junk, 1);
	}
}

/*
 * The reference trace and its known result (1 GHz: 1 tick = 1 ns):
 *   tid 1: f1 ─┬─ f2 (Entry_Args, 2 CallArguments; custom event; TSCWrap)
 *              │    └─ f3 (mid-buffer NewCPUId) ; f2 leaves by Tail_Exit
 *              └─ f4
 *   tid 2: f1
 */
#define V1_F1_CALLS 2
#define V1_F1_TOTAL 4294968206ULL
#define V1_F1_SELF 670ULL
#define V1_F2_TOTAL 4294967496ULL
#define V1_F2_SELF 4294967266ULL
#define V1_F3_TOTAL 230ULL
#define V1_F4_TOTAL 40ULL

static inline void v1w_reference(struct v1w *w)
{
	v1w_header(w, 1000000000, 512);
	v1w_begin(w, 1, 0, 1000);
	v1w_fn(w, 0, 1, 0);		/* f1 @1000 */
	v1w_fn(w, 3, 2, 100);		/* f2 @1100, with arguments */
	v1w_md(w, 6, 42, 8, 0, 0);
	v1w_md(w, 6, 7, 8, 0, 0);
	v1w_md(w, 5, 5, 4, 1200, 8);	/* custom event, 5 bytes */
	v1w_put(w, "hello", 5);
	v1w_md(w, 3, (1ULL << 32) + 1000, 8, 0, 0); /* TSCWrap */
	v1w_fn(w, 0, 3, 50);		/* f3 @2^32+1050 */
	v1w_md(w, 2, 1, 2, (1ULL << 32) + 1250, 8); /* NewCPUId mid-buffer */
	v1w_fn(w, 1, 3, 30);		/* f3 exits @2^32+1280: 230 */
	v1w_fn(w, 2, 2, 20);		/* f2 Tail_Exit @2^32+1300 */
	v1w_fn(w, 0, 4, 10);		/* f4 @2^32+1310 */
	v1w_fn(w, 1, 4, 40);		/* exits @2^32+1350: 40 */
	v1w_fn(w, 1, 1, 60);		/* f1 exits @2^32+1410 */
	v1w_end(w);
	v1w_begin(w, 2, 1, 5000);
	v1w_fn(w, 0, 1, 0);
	v1w_fn(w, 1, 1, 500);
	v1w_end(w);
}

#endif /* BPFPROF_TESTS_FDR_V1_WRITER_H */

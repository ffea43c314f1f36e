/* SPDX-License-Identifier: MIT */
/*
 * Growable byte buffer for writers: append with put_* helpers in native or
 * explicit byte order, then hand the bytes to an output in one write.
 * Allocation failure is sticky: buf->err becomes -ENOMEM, later puts are
 * ignored, and the writer checks buf->err once at the end.
 */
#ifndef BPFPROF_BUF_H
#define BPFPROF_BUF_H

#include <stddef.h>
#include <stdint.h>

struct buf {
	uint8_t *data; /* owned; freed by buf__free() */
	size_t len;
	size_t cap;
	int err; /* 0, -ENOMEM, or drain's error */
	/*
	 * Optional, for writers that only append (folded, SVG): once len
	 * reaches BUF_DRAIN_AT, the bytes go to drain (0 or -errno) rather
	 * than the buffer growing, and the buffer is reused; drained counts
	 * them. Tens of MB are written through a buffer that stays in the
	 * cache, without a page fault for each 4 KiB of fresh memory.
	 */
	int (*drain)(void *ctx, const void *p, size_t n);
	void *drain_ctx;
	size_t drained;
};

#define BUF_DRAIN_AT (1u << 20)

void buf__free(struct buf *b);
/* Make room for n more bytes; returns 0 or -ENOMEM (also stored in b->err). */
int buf__reserve(struct buf *b, size_t n);
void buf__put_bytes(struct buf *b, const void *p, size_t n);
void buf__put_u32(struct buf *b, uint32_t v); /* native endian */
void buf__put_u64(struct buf *b, uint64_t v); /* native endian */
void buf__put_zeros(struct buf *b, size_t n);
/* printf-style append of text, no terminating NUL stored. */
void buf__printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif /* BPFPROF_BUF_H */

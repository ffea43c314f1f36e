// SPDX-License-Identifier: MIT
/* Growable output buffer with sticky -ENOMEM (see include/buf.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "buf.h"

void buf__free(struct buf *b)
{
	if (!b)
		return;
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

int buf__reserve(struct buf *b, size_t n)
{
	size_t want, cap;
	uint8_t *p;

	if (b->err)
		return b->err;
	if (n > SIZE_MAX - b->len)
		return b->err = -ENOMEM;
	want = b->len + n;
	if (want <= b->cap)
		return 0;
	if (b->drain && b->len >= BUF_DRAIN_AT) {
		int err = b->drain(b->drain_ctx, b->data, b->len);

		if (err)
			return b->err = err;
		b->drained += b->len;
		b->len = 0;
		want = n;
		if (want <= b->cap)
			return 0;
	}
	cap = b->cap ? b->cap : 4096;
	while (cap < want)
		cap = cap > SIZE_MAX / 2 ? want : cap * 2;
	p = realloc(b->data, cap);
	if (!p)
		return b->err = -ENOMEM;
	b->data = p;
	b->cap = cap;
	return 0;
}

void buf__put_bytes(struct buf *b, const void *p, size_t n)
{
	/* writers append a few bytes at a time: test the room here, call out only to grow */
	if (!n || b->err || (n > b->cap - b->len && buf__reserve(b, n)))
		return;
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

void buf__put_u32(struct buf *b, uint32_t v)
{
	buf__put_bytes(b, &v, sizeof(v));
}

void buf__put_u64(struct buf *b, uint64_t v)
{
	buf__put_bytes(b, &v, sizeof(v));
}

void buf__put_zeros(struct buf *b, size_t n)
{
	if (!n || buf__reserve(b, n))
		return;
	memset(b->data + b->len, 0, n);
	b->len += n;
}

void buf__printf(struct buf *b, const char *fmt, ...)
{
	size_t room;
	va_list ap;
	int n;

	if (b->err)
		return;
	/* format straight into the free room; only text that does not fit is formatted twice */
	if (b->cap - b->len < 256 && buf__reserve(b, 256))
		return;
	room = b->cap - b->len;
	va_start(ap, fmt);
	n = vsnprintf((char *)b->data + b->len, room, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= room) {
		if (buf__reserve(b, (size_t)n + 1))
			return;
		va_start(ap, fmt);
		vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	b->len += n;
}

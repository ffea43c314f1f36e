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
	if (!n || buf__reserve(b, n))
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
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || buf__reserve(b, (size_t)n + 1))
		return;
	va_start(ap, fmt);
	vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += n;
}

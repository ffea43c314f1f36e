/* SPDX-License-Identifier: MIT */
/*
 * Bounded reading for the parsers: a cursor over [p, end) whose reads check
 * the bytes that remain first and convert from the file's byte order (swap:
 * the file's order is not ours, detected once from its magic), unchecked
 * loads for callers that checked a record's size already, and the hex lexer
 * of the text formats (/proc/PID/maps, /proc/kallsyms, perf-PID.map).
 */
#ifndef BPFPROF_LIB_CURSOR_H
#define BPFPROF_LIB_CURSOR_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct cursor {
	const uint8_t *p, *end;
	bool swap; /* the data's byte order is not the host's */
};

/* Loads of the data's byte order at p, which the caller has bounds-checked. */
static inline uint16_t bo__load16(const uint8_t *p, bool swap)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return swap ? __builtin_bswap16(v) : v;
}

static inline uint32_t bo__load32(const uint8_t *p, bool swap)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return swap ? __builtin_bswap32(v) : v;
}

static inline uint64_t bo__load64(const uint8_t *p, bool swap)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return swap ? __builtin_bswap64(v) : v;
}

static inline size_t cursor__left(const struct cursor *c)
{
	return (size_t)(c->end - c->p);
}

/* Read a u32 and advance; false (cursor unmoved) when fewer than 4 bytes remain. */
static inline bool cursor__u32(struct cursor *c, uint32_t *v)
{
	if (cursor__left(c) < 4)
		return false;
	*v = bo__load32(c->p, c->swap);
	c->p += 4;
	return true;
}

static inline bool cursor__u64(struct cursor *c, uint64_t *v)
{
	if (cursor__left(c) < 8)
		return false;
	*v = bo__load64(c->p, c->swap);
	c->p += 8;
	return true;
}

/* A NUL-terminated string at the cursor, moved past its NUL; *len excludes it. False: no NUL left. */
static inline bool cursor__str(struct cursor *c, const char **s, size_t *len)
{
	const uint8_t *nul = memchr(c->p, 0, cursor__left(c));

	if (!nul)
		return false;
	*s = (const char *)c->p;
	*len = (size_t)(nul - c->p);
	c->p = nul + 1;
	return true;
}

/* Value of hex digit c, or -1. */
static inline int lex__hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * The hex digits at *p (before end, no "0x"): their value in *v and *p past
 * them. Returns how many digits there were (0: none, *v = 0), or -ERANGE when
 * the value needs more than 64 bits (a 17th significant digit; *p and *v are
 * then unspecified). Leading zeros count as digits: callers that bound the
 * field's width compare the count.
 */
static inline int lex__hex(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;
	int n = 0, d;

	for (; s < end && (d = lex__hex_digit(*s)) >= 0; s++, n++) {
		if (x >> 60)
			return -ERANGE;
		x = x << 4 | (uint64_t)d;
	}
	*v = x;
	*p = s;
	return n;
}

#endif /* BPFPROF_LIB_CURSOR_H */

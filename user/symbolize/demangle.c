// SPDX-License-Identifier: MIT
/*
 * Symbol demangling through libiberty (include/demangle.h). Its callback
 * entry points write the result in pieces; bounded_put() keeps what fits.
 * Linked from libiberty.a: cp-demangle.o, rust-demangle.o and safe-ctype.o
 * (README "Dependencies" says why and under which licences).
 */
#include <stdbool.h>
#include <string.h>
#include <libiberty/demangle.h>
#include "demangle.h"

struct bounded {
	char *out;
	size_t cap; /* bytes of out, the NUL included */
	size_t len; /* bytes kept */
	bool cut; /* more came than fitted */
};

static void bounded_put(const char *s, size_t n, void *opaque)
{
	struct bounded *b = opaque;
	size_t room = b->cap - 1 - b->len;

	if (b->cut)
		return;
	if (n > room) {
		n = room;
		b->cut = true;
	}
	memcpy(b->out + b->len, s, n);
	b->len += n;
}

/* Cut b's text so that the mark fits after it, at the start of a UTF-8 character */
static void mark_cut(struct bounded *b)
{
	size_t keep = b->cap - sizeof(DEMANGLE_CUT_MARK);

	if (b->len > keep)
		b->len = keep;
	while (b->len && ((unsigned char)b->out[b->len] & 0xc0) == 0x80)
		b->len--;
	memcpy(b->out + b->len, DEMANGLE_CUT_MARK, sizeof(DEMANGLE_CUT_MARK) - 1);
	b->len += sizeof(DEMANGLE_CUT_MARK) - 1;
}

size_t demangle(const char *sym, char *out, size_t cap)
{
	/* the parameter types and their qualifiers, as c++filt and perf report show them */
	const int opts = DMGL_PARAMS | DMGL_ANSI;
	struct bounded b = { .out = out, .cap = cap };
	bool ok;

	if (cap < sizeof(DEMANGLE_CUT_MARK) + 1 || !sym || sym[0] != '_' ||
	    (sym[1] != 'Z' && sym[1] != 'R') ||
	    strnlen(sym, DEMANGLE_MAX_INPUT + 1) > DEMANGLE_MAX_INPUT)
		return 0;
	ok = rust_demangle_callback(sym, opts, bounded_put, &b);
	if (!ok) {
		b = (struct bounded){ .out = out, .cap = cap };
		ok = sym[1] == 'Z' && cplus_demangle_v3_callback(sym, opts, bounded_put, &b);
	}
	if (!ok || !b.len)
		return 0;
	if (b.cut)
		mark_cut(&b);
	out[b.len] = '\0';
	return b.len;
}

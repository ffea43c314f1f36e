// SPDX-License-Identifier: MIT
/*
 * .gopclntab reader (include/sym_gopclntab.h). The layouts, from Go's
 * runtime/symtab.go and runtime2.go (pointer-sized words are ps bytes):
 *
 *   pcHeader  magic u32, 0 u8, 0 u8, quantum u8, ps u8, then words:
 *             1.16: nfunc nfiles              funcname cu filetab pctab pcln
 *             1.18: nfunc nfiles textStart    funcname cu filetab pctab pcln
 *             (offsets from the header's start)
 *   functab   at pcln, nfunc + 1 entries, sorted, the last one the end of code:
 *             1.16: {entry word (absolute), funcoff word}
 *             1.18: {entryoff u32 (from textStart), funcoff u32}
 *   _func     at pcln + funcoff: nameoff (into funcname), pcfile and pcln
 *             (into pctab), cuOffset (into cu, u32s); 1.16 starts with a
 *             word entry, 1.18 with a u32 entryoff
 *   pcvalue   tables: (zig-zag value delta, pc delta / quantum) uvarint
 *             pairs from value -1 at the entry; a zero value delta past the
 *             first pair ends the table
 *   file      filetab + cu[cuOffset + pcvalue(pcfile)], a C string
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "sym_gopclntab.h"

struct go_pclntab {
	uint8_t *data; /* size bytes and a NUL, so that every string in it ends */
	size_t size;
	unsigned int version; /* 116, 118, 120 */
	uint8_t quantum; /* pc deltas' unit, bytes */
	uint8_t ps; /* pointer size */
	uint64_t nfunc;
	uint64_t text_start;
	uint64_t funcname, cu, filetab, pctab, pcln; /* region offsets */
};

static bool rd_u32(const struct go_pclntab *t, uint64_t off, uint32_t *v)
{
	if (off > t->size || t->size - off < 4)
		return false;
	memcpy(v, t->data + off, 4);
	return true;
}

static bool rd_word(const struct go_pclntab *t, uint64_t off, uint64_t *v)
{
	uint32_t w;

	if (t->ps == 4) {
		if (!rd_u32(t, off, &w))
			return false;
		*v = w;
		return true;
	}
	if (off > t->size || t->size - off < 8)
		return false;
	memcpy(v, t->data + off, 8);
	return true;
}

/* Entry i of the function table: the function's first address and its _func's offset in pcln */
static bool functab(const struct go_pclntab *t, uint64_t i, uint64_t *entry, uint64_t *funcoff)
{
	uint32_t e, f;

	if (t->version >= 118) {
		if (!rd_u32(t, t->pcln + i * 8, &e) || !rd_u32(t, t->pcln + i * 8 + 4, &f))
			return false;
		*entry = t->text_start + e;
		*funcoff = f;
		return true;
	}
	return rd_word(t, t->pcln + i * 2 * t->ps, entry) &&
	       rd_word(t, t->pcln + i * 2 * t->ps + t->ps, funcoff);
}

struct go_pclntab *go_pclntab__parse(const void *data, size_t size, uint64_t text_start)
{
	struct go_pclntab *t;
	uint64_t w[8], prev = 0, entry, funcoff, i, es;
	unsigned int nw, k;
	uint32_t magic;

	if (size < 8) {
		errno = EINVAL;
		return NULL;
	}
	if (size > GO_PCLNTAB_MAX_SIZE) {
		errno = EFBIG;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t || !(t->data = malloc(size + 1))) {
		free(t);
		errno = ENOMEM;
		return NULL;
	}
	memcpy(t->data, data, size);
	t->data[size] = '\0';
	t->size = size;
	memcpy(&magic, t->data, 4);
	switch (magic) {
	case 0xfffffffa:
		t->version = 116;
		break;
	case 0xfffffff0:
		t->version = 118;
		break;
	case 0xfffffff1:
		t->version = 120;
		break;
	default:
		goto bad; /* Go 1.2-1.15's 0xfffffffb, another byte order, not a table */
	}
	t->quantum = t->data[6];
	t->ps = t->data[7];
	if (t->data[4] || t->data[5] || (t->quantum != 1 && t->quantum != 2 && t->quantum != 4) ||
	    (t->ps != 4 && t->ps != 8))
		goto bad;
	nw = t->version >= 118 ? 8 : 7;
	for (k = 0; k < nw; k++)
		if (!rd_word(t, 8 + (uint64_t)k * t->ps, &w[k]))
			goto bad;
	t->nfunc = w[0];
	if (t->version >= 118) {
		t->text_start = w[2] ? w[2] : text_start;
		k = 3;
	} else {
		k = 2;
	}
	t->funcname = w[k];
	t->cu = w[k + 1];
	t->filetab = w[k + 2];
	t->pctab = w[k + 3];
	t->pcln = w[k + 4];
	if (t->funcname > size || t->cu > size || t->filetab > size || t->pctab > size ||
	    t->pcln > size)
		goto bad;
	/* nfunc + 1 entries in what follows pcln, each function's _func in pcln's region */
	es = t->version >= 118 ? 8 : 2 * (uint64_t)t->ps;
	if (!t->nfunc || t->nfunc >= (size - t->pcln) / es)
		goto bad;
	for (i = 0; i <= t->nfunc; i++) {
		if (!functab(t, i, &entry, &funcoff) || entry < prev ||
		    (i < t->nfunc && funcoff >= size - t->pcln))
			goto bad;
		prev = entry;
	}
	return t;
bad:
	go_pclntab__free(t);
	errno = EINVAL;
	return NULL;
}

void go_pclntab__free(struct go_pclntab *t)
{
	if (!t)
		return;
	free(t->data);
	free(t);
}

unsigned int go_pclntab__version(const struct go_pclntab *t)
{
	return t->version;
}

size_t go_pclntab__count(const struct go_pclntab *t)
{
	return (size_t)t->nfunc;
}

/* An unsigned LEB128 of at most 32 bits at *off, which it passes */
static bool uvarint(const struct go_pclntab *t, uint64_t *off, uint32_t *v)
{
	uint32_t r = 0;
	unsigned int shift;

	for (shift = 0; shift < 35; shift += 7) {
		uint8_t b;

		if (*off >= t->size)
			return false;
		b = t->data[(*off)++];
		r |= (uint32_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = r;
			return true;
		}
	}
	return false;
}

/*
 * The value of pc-value table tab (an offset into pctab; 0: none) at pc in
 * the function starting at entry, as the runtime's pcvalue(); -1 unknown.
 */
static int64_t pcvalue(const struct go_pclntab *t, uint32_t tab, uint64_t entry, uint64_t pc)
{
	uint64_t off = t->pctab + tab, cur = entry;
	int64_t val = -1;
	uint32_t uv, pcd;

	if (!tab)
		return -1;
	/* each step reads two bytes at least: the table's end bounds the loop */
	for (;;) {
		bool first = cur == entry;

		if (!uvarint(t, &off, &uv) || (!uv && !first))
			return -1;
		val += (int32_t)(-(uv & 1) ^ (uv >> 1));
		if (!uvarint(t, &off, &pcd))
			return -1;
		cur += (uint64_t)pcd * t->quantum;
		if (pc < cur)
			return val;
	}
}

int go_pclntab__lookup(const struct go_pclntab *t, uint64_t pc, struct go_func_info *out)
{
	uint64_t lo = 0, hi = t->nfunc, mid, entry, end, funcoff, f, fields;
	uint32_t nameoff, pcfile, pcln, cuoff, fileoff;
	int64_t fileno, line;

	if (!functab(t, 0, &entry, &funcoff) || !functab(t, t->nfunc, &end, &funcoff) ||
	    pc < entry || pc >= end)
		return -ENOENT;
	/* the last entry at or below pc */
	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (!functab(t, mid, &entry, &funcoff))
			return -ENOENT;
		if (entry <= pc)
			lo = mid;
		else
			hi = mid;
	}
	if (!functab(t, lo, &entry, &funcoff))
		return -ENOENT;
	f = t->pcln + funcoff;
	/* nameoff, then 1.16's pcfile at +16 from it, pcln +20, cuOffset +28 */
	fields = t->version >= 118 ? f + 4 : f + t->ps;
	if (!rd_u32(t, fields, &nameoff) || !rd_u32(t, fields + 16, &pcfile) ||
	    !rd_u32(t, fields + 20, &pcln) || !rd_u32(t, fields + 28, &cuoff))
		return -ENOENT;
	if (t->funcname + nameoff >= t->size || !t->data[t->funcname + nameoff])
		return -ENOENT;
	out->name = (const char *)t->data + t->funcname + nameoff;
	out->entry = entry;
	out->file = NULL;
	out->line = 0;
	line = pcvalue(t, pcln, entry, pc);
	if (line > 0 && line <= UINT32_MAX)
		out->line = (uint32_t)line;
	fileno = pcvalue(t, pcfile, entry, pc);
	if (fileno >= 0 && rd_u32(t, t->cu + 4 * ((uint64_t)cuoff + (uint64_t)fileno), &fileoff) &&
	    fileoff != UINT32_MAX && t->filetab + fileoff < t->size &&
	    t->data[t->filetab + fileoff])
		out->file = (const char *)t->data + t->filetab + fileoff;
	return 0;
}

int go_pclntab__func(const struct go_pclntab *t, size_t i, struct go_func_span *out)
{
	uint64_t funcoff, next_off;
	uint32_t nameoff;

	if (i >= t->nfunc || !functab(t, i, &out->entry, &funcoff) ||
	    !functab(t, i + 1, &out->end, &next_off) ||
	    !rd_u32(t, (t->version >= 118 ? t->pcln + funcoff + 4 : t->pcln + funcoff + t->ps),
		    &nameoff))
		return -ENOENT;
	out->name = t->funcname + nameoff < t->size && t->data[t->funcname + nameoff] ?
			    (const char *)t->data + t->funcname + nameoff :
			    NULL;
	return 0;
}

int go_pclntab__sp_runs(const struct go_pclntab *t, size_t i,
			int (*fn)(void *ctx, uint64_t start, uint64_t end, int32_t delta),
			void *ctx)
{
	struct go_func_span f;
	uint64_t funcoff, next_off, off, cur;
	uint32_t pcsp, uv, pcd;
	int64_t val = -1;
	int err;

	if (go_pclntab__func(t, i, &f) || !functab(t, i, &f.entry, &funcoff) ||
	    !functab(t, i + 1, &f.end, &next_off))
		return -ENOENT;
	/* pcsp: 12 bytes past nameoff in every layout */
	if (!rd_u32(t, (t->version >= 118 ? t->pcln + funcoff + 4 : t->pcln + funcoff + t->ps) + 12,
		    &pcsp) ||
	    !pcsp)
		return -ENOENT;
	off = t->pctab + pcsp;
	cur = f.entry;
	/* as pcvalue(): each step reads two bytes at least, so the table's end bounds the loop */
	while (cur < f.end) {
		uint64_t next;

		if (!uvarint(t, &off, &uv))
			return -ENOENT;
		if (!uv && cur != f.entry)
			return 0; /* the table's end */
		val += (int32_t)(-(uv & 1) ^ (uv >> 1));
		if (!uvarint(t, &off, &pcd))
			return -ENOENT;
		next = cur + (uint64_t)pcd * t->quantum;
		if (next > f.end)
			next = f.end;
		if (next > cur && val >= 0 && val <= INT32_MAX) {
			err = fn(ctx, cur, next, (int32_t)val);
			if (err)
				return err;
		}
		cur = next;
	}
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * CPython code objects, strings and line tables read from another process
 * (include/py_code.h). Layouts per minor version for x86-64; line tables per
 * CPython's Objects/locations.md (3.11+) and Objects/lnotab_notes.txt (3.10's
 * co_linetable, co_lnotab before).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "bpfprof_abi.h"
#include "py_code.h"

/*
 * Offsets from CPython's own headers per minor version: Include/cpython/
 * pystate.h and Include/internal/pycore_runtime.h (the thread state, the
 * runtime's TSS key), Include/cpython/frameobject.h (3.8-3.10) and
 * Include/internal/pycore_frame.h (3.11+: _PyInterpreterFrame),
 * Include/cpython/code.h, Include/cpython/unicodeobject.h; checked on x86-64
 * with ctypes against pyenv's 3.8-3.10 builds and Debian's 3.11. The
 * project's docs/INTERPRETERS.md holds the derivation.
 */
static const struct py_layout layouts[] = {
	{ .version = 0x0308,
	  .rt_tss = 1392,
	  .ts_thread_id = 176,
	  .ts_cframe = PY_NONE,
	  .ts_frame = 24,
	  .f_code = 32,
	  .f_previous = 24,
	  .f_instr = 104,
	  .f_entry = PY_NONE,
	  .entry = BPFPROF_PY_ENTRY_EACH,
	  .lasti = 1,
	  .co_argcount = 16,
	  .co_flags = 36,
	  .co_firstlineno = 40,
	  .co_filename = 104,
	  .co_name = 112,
	  .co_qualname = PY_NONE,
	  .co_linetable = 120,
	  .code_size = 176,
	  .ascii_size = 48,
	  .compact_size = 72 },
	{ .version = 0x0309,
	  .rt_tss = 584,
	  .ts_thread_id = 176,
	  .ts_cframe = PY_NONE,
	  .ts_frame = 24,
	  .f_code = 32,
	  .f_previous = 24,
	  .f_instr = 104,
	  .f_entry = PY_NONE,
	  .entry = BPFPROF_PY_ENTRY_EACH,
	  .lasti = 1,
	  .co_argcount = 16,
	  .co_flags = 36,
	  .co_firstlineno = 40,
	  .co_filename = 104,
	  .co_name = 112,
	  .co_qualname = PY_NONE,
	  .co_linetable = 120,
	  .code_size = 176,
	  .ascii_size = 48,
	  .compact_size = 72 },
	{ .version = 0x030a,
	  .rt_tss = 584,
	  .ts_thread_id = 176,
	  .ts_cframe = PY_NONE,
	  .ts_frame = 24,
	  .f_code = 32,
	  .f_previous = 24,
	  .f_instr = 96,
	  .f_entry = PY_NONE,
	  .entry = BPFPROF_PY_ENTRY_EACH,
	  .lasti = 1,
	  .co_argcount = 16,
	  .co_flags = 36,
	  .co_firstlineno = 40,
	  .co_filename = 104,
	  .co_name = 112,
	  .co_qualname = PY_NONE,
	  .co_linetable = 120,
	  .code_size = 176,
	  .ascii_size = 48,
	  .compact_size = 72 },
	{ .version = 0x030b,
	  .rt_tss = 592,
	  .ts_thread_id = 152,
	  .ts_cframe = 56,
	  .ts_frame = 8,
	  .f_code = 32,
	  .f_previous = 48,
	  .f_instr = 56,
	  .f_entry = 68,
	  .entry = BPFPROF_PY_ENTRY_FLAG,
	  .co_argcount = 56,
	  .co_flags = 48,
	  .co_firstlineno = 72,
	  .co_filename = 112,
	  .co_name = 120,
	  .co_qualname = 128,
	  .co_linetable = 136,
	  .code_size = 184,
	  .ascii_size = 48,
	  .compact_size = 72 },
	{ .version = 0x030c,
	  .rt_tss = 1544,
	  .ts_thread_id = 136,
	  .ts_cframe = 56,
	  .ts_frame = 0,
	  .f_code = 0,
	  .f_previous = 8,
	  .f_instr = 56,
	  .f_entry = 70,
	  .entry = BPFPROF_PY_ENTRY_SHIM,
	  .co_argcount = 52,
	  .co_flags = 48,
	  .co_firstlineno = 68,
	  .co_filename = 112,
	  .co_name = 120,
	  .co_qualname = 128,
	  .co_linetable = 136,
	  .code_size = 192,
	  .ascii_size = 40,
	  .compact_size = 56 },
	{ .version = 0x030d,
	  .rt_tss = 2160,
	  .ts_thread_id = 152,
	  .ts_cframe = PY_NONE,
	  .ts_frame = 72,
	  .f_code = 0,
	  .f_previous = 8,
	  .f_instr = 56,
	  .f_entry = 70,
	  .entry = BPFPROF_PY_ENTRY_SHIM,
	  .co_argcount = 52,
	  .co_flags = 48,
	  .co_firstlineno = 68,
	  .co_filename = 112,
	  .co_name = 120,
	  .co_qualname = 128,
	  .co_linetable = 136,
	  .code_size = 200,
	  .ascii_size = 40,
	  .compact_size = 56 },
};

const struct py_layout *py_layout__get(uint16_t version)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].version == version)
			return &layouts[i];
	return NULL;
}

static uint64_t get_u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t get_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Append code point cp as UTF-8 if it fits in the 4 bytes left before *n reaches size - 4. */
static bool put_utf8(char *out, size_t size, size_t *n, uint32_t cp)
{
	uint8_t b[4];
	size_t k;

	if (cp < 0x80) {
		b[0] = (uint8_t)cp;
		k = 1;
	} else if (cp < 0x800) {
		b[0] = (uint8_t)(0xc0 | cp >> 6);
		b[1] = (uint8_t)(0x80 | (cp & 0x3f));
		k = 2;
	} else if (cp < 0x10000) {
		b[0] = (uint8_t)(0xe0 | cp >> 12);
		b[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
		b[2] = (uint8_t)(0x80 | (cp & 0x3f));
		k = 3;
	} else {
		b[0] = (uint8_t)(0xf0 | cp >> 18);
		b[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3f));
		b[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
		b[3] = (uint8_t)(0x80 | (cp & 0x3f));
		k = 4;
	}
	if (*n + k + 4 > size) /* room for "...\0" */
		return false;
	memcpy(out + *n, b, k);
	*n += k;
	return true;
}

int py_str__read(const struct py_layout *L, const struct py_types *types, py_read_fn rd, void *ctx,
		 uint64_t addr, char *out, size_t size)
{
	uint8_t hdr[72], *data;
	uint64_t len, data_addr;
	uint32_t state, kind;
	size_t n = 0, i;
	bool ascii;
	int err;

	if (size < 8 || !addr || (addr & 7))
		return -EINVAL;
	err = rd(ctx, addr, hdr, L->ascii_size);
	if (err)
		return err;
	if (types->str && get_u64(hdr + 8) != types->str)
		return -EINVAL;
	len = get_u64(hdr + 16);
	state = get_u32(hdr + 32);
	kind = (state >> 2) & 7;
	ascii = (state >> 6) & 1;
	if (!((state >> 5) & 1) || len > PY_STR_MAX_CHARS ||
	    (kind != 1 && kind != 2 && kind != 4) || (ascii && kind != 1))
		return -EINVAL;
	data_addr = addr + (ascii ? L->ascii_size : L->compact_size);
	data = malloc(len * kind + 1);
	if (!data)
		return -ENOMEM;
	err = len ? rd(ctx, data_addr, data, len * kind) : 0;
	for (i = 0; !err && i < len; i++) {
		uint32_t cp = kind == 1 ? data[i] :
			      kind == 2 ? (uint32_t)data[2 * i] | (uint32_t)data[2 * i + 1] << 8 :
					  get_u32(data + 4 * i);

		if ((ascii && cp >= 0x80) || cp >= 0x110000 || (cp >= 0xd800 && cp < 0xe000) ||
		    cp == 0) {
			err = -EINVAL;
			break;
		}
		if (!put_utf8(out, size, &n, cp)) {
			memcpy(out + n, "...", 3);
			n += 3;
			break;
		}
	}
	free(data);
	out[err ? 0 : n] = '\0';
	return err;
}

/* A bytes object: its size (bounded) and data, malloc'd. */
static int read_bytes(const struct py_types *types, py_read_fn rd, void *ctx, uint64_t addr,
		      uint8_t **out, size_t *len)
{
	uint8_t hdr[32];
	uint64_t size;
	int err;

	*out = NULL;
	*len = 0;
	if (!addr || (addr & 7))
		return -EINVAL;
	err = rd(ctx, addr, hdr, sizeof(hdr));
	if (err)
		return err;
	if (types->bytes && get_u64(hdr + 8) != types->bytes)
		return -EINVAL;
	size = get_u64(hdr + 16);
	if (size > PY_LINETABLE_MAX)
		return -EINVAL;
	if (!size)
		return 0;
	*out = malloc(size);
	if (!*out)
		return -ENOMEM;
	err = rd(ctx, addr + 32, *out, size);
	if (err) {
		free(*out);
		*out = NULL;
		return err;
	}
	*len = size;
	return 0;
}

int py_code__read(const struct py_layout *L, const struct py_types *types, py_read_fn rd, void *ctx,
		  uint64_t addr, struct py_code *out)
{
	uint8_t hdr[256];
	uint16_t name_off;
	int err;

	memset(out, 0, sizeof(*out));
	if (!addr || (addr & 7) || L->code_size > sizeof(hdr))
		return -EINVAL;
	err = rd(ctx, addr, hdr, L->code_size);
	if (err)
		return err;
	if (types->code && get_u64(hdr + 8) != types->code)
		return -EINVAL;
	out->firstlineno = (int32_t)get_u32(hdr + L->co_firstlineno);
	out->csum = BPFPROF_PY_CSUM(get_u32(hdr + L->co_firstlineno), get_u32(hdr + L->co_flags),
				    get_u32(hdr + L->co_argcount));
	if (out->firstlineno < 0)
		return -EINVAL;
	name_off = L->co_qualname != PY_NONE ? L->co_qualname : L->co_name;
	err = py_str__read(L, types, rd, ctx, get_u64(hdr + name_off), out->name,
			   sizeof(out->name));
	if (!err)
		err = py_str__read(L, types, rd, ctx, get_u64(hdr + L->co_filename), out->file,
				   sizeof(out->file));
	if (!err)
		err = read_bytes(types, rd, ctx, get_u64(hdr + L->co_linetable), &out->linetable,
				 &out->linetable_len);
	if (err)
		py_code__release(out);
	return err;
}

void py_code__release(struct py_code *c)
{
	free(c->linetable);
	c->linetable = NULL;
	c->linetable_len = 0;
}

/* 3.11+ varints: 6-bit chunks, least significant first, bit 6 = more. false past the end. */
static bool varint(const uint8_t *t, size_t len, size_t *i, uint32_t *v)
{
	uint32_t shift = 0;

	*v = 0;
	for (;;) {
		if (*i >= len || shift > 30)
			return false;
		*v |= (uint32_t)(t[*i] & 63) << shift;
		shift += 6;
		if (!(t[(*i)++] & 64))
			return true;
	}
}

static bool svarint(const uint8_t *t, size_t len, size_t *i, int32_t *v)
{
	uint32_t u;

	if (!varint(t, len, i, &u))
		return false;
	*v = (u & 1) ? -(int32_t)(u >> 1) : (int32_t)(u >> 1);
	return true;
}

/* Objects/locations.md: entries of [first byte: 1 code:4 length-1:3] then per code */
static int find_311(const uint8_t *t, size_t len, int32_t first, int64_t off, int32_t *max)
{
	int64_t unit = 0, target = off < 0 ? -1 : off / 2;
	int32_t line = first, found = first, delta;
	size_t i = 0;
	bool hit = false;
	uint32_t v;

	*max = first;
	while (i < len) {
		uint8_t b = t[i++];
		uint32_t code = (b >> 3) & 15, n = (b & 7) + 1;
		bool loc = true;

		if (!(b & 128))
			break; /* not the first byte of an entry: malformed */
		if (code == 15) {
			loc = false;
		} else if (code == 14) {
			if (!svarint(t, len, &i, &delta) || !varint(t, len, &i, &v) ||
			    !varint(t, len, &i, &v) || !varint(t, len, &i, &v))
				break;
			line += delta;
		} else if (code == 13) {
			if (!svarint(t, len, &i, &delta))
				break;
			line += delta;
		} else if (code >= 10) {
			line += (int32_t)code - 10;
			i += 2;
		} else {
			i += 1;
		}
		if (i > len)
			break;
		if (loc && line > *max && line < (1 << 24))
			*max = line;
		if (!hit && target >= unit && target < unit + n) {
			hit = true;
			found = loc && line > 0 ? line : first;
		}
		unit += n;
	}
	return found;
}

/* 3.10's co_linetable: (bytes, signed line delta or -128 for none) pairs */
static int find_310(const uint8_t *t, size_t len, int32_t first, int64_t off, int32_t *max)
{
	int64_t start = 0;
	int32_t line = first, found = first;
	bool hit = off < 0;

	*max = first;
	for (size_t i = 0; i + 1 < len; i += 2) {
		int8_t ld = (int8_t)t[i + 1];
		int64_t end = start + t[i];

		if (ld != -128)
			line += ld;
		if (ld != -128 && line > *max && line < (1 << 24))
			*max = line;
		if (!hit && off >= start && off < end) {
			hit = true;
			found = ld == -128 || line <= 0 ? first : line;
		}
		start = end;
	}
	return found;
}

/* co_lnotab (3.8, 3.9): (address increment, signed line increment) pairs */
static int find_lnotab(const uint8_t *t, size_t len, int32_t first, int64_t off, int32_t *max)
{
	int64_t addr = 0;
	int32_t line = first, found = first;
	bool done = off < 0;

	*max = first;
	for (size_t i = 0; i + 1 < len; i += 2) {
		addr += t[i];
		if (addr > off)
			done = true;
		line += (int8_t)t[i + 1];
		if (line > *max && line < (1 << 24))
			*max = line;
		if (!done)
			found = line;
	}
	return found > 0 ? found : first;
}

int py_line__find(uint16_t version, const uint8_t *tab, size_t len, int32_t firstlineno,
		  int64_t off, int32_t *max_line)
{
	int32_t max;
	int line;

	if (!tab)
		len = 0;
	if (version >= 0x030b)
		line = find_311(tab, len, firstlineno, off, &max);
	else if (version == 0x030a)
		line = find_310(tab, len, firstlineno, off, &max);
	else
		line = find_lnotab(tab, len, firstlineno, off, &max);
	if (max_line)
		*max_line = max;
	return line;
}

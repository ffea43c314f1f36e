// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for user/capture/py_code.c: the input's first byte picks
 * a CPython version (3.8 + byte % 6), the rest is a process's memory at
 * 0x10000, with a code object at its start whose pointers lead anywhere;
 * every string that comes out must be NUL-terminated UTF-8 that fits, and
 * each line looked up in the code object's line table (and in the input
 * read as one) must be decoded without reading out of bounds. Types are
 * checked against fixed addresses, as bpfprof checks them against the
 * process's PyCode_Type, PyUnicode_Type, PyBytes_Type. Built and run by
 * `make fuzz`; seeds in tests/fuzz/corpus/py_code.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "log.h"
#include "py_code.h"

#define BASE 0x10000ull

struct mem {
	const uint8_t *b;
	size_t n;
};

static int rd(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct mem *m = ctx;

	if (addr < BASE || addr - BASE > m->n || len > m->n - (addr - BASE))
		return -EFAULT;
	memcpy(buf, m->b + (addr - BASE), len);
	return 0;
}

/* NUL-terminated within size, and well-formed UTF-8 (no surrogates, <= U+10FFFF) */
static void check_utf8(const char *s, size_t size)
{
	const uint8_t *p = (const uint8_t *)s;
	size_t n = strnlen(s, size);

	if (n == size)
		__builtin_trap();
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t k;

		if (p[i] < 0x80) {
			i++;
			continue;
		}
		k = p[i] >= 0xf0 ? 4 : p[i] >= 0xe0 ? 3 : 2;
		if (p[i] < 0xc2 || p[i] > 0xf4 || i + k > n)
			__builtin_trap();
		cp = p[i] & (0x7f >> k);
		for (size_t j = 1; j < k; j++) {
			if ((p[i + j] & 0xc0) != 0x80)
				__builtin_trap();
			cp = cp << 6 | (p[i + j] & 0x3f);
		}
		if (cp >= 0x110000 || (cp >= 0xd800 && cp < 0xe000) ||
		    cp < (k == 2 ? 0x80u :
			  k == 3 ? 0x800u :
				   0x10000u))
			__builtin_trap();
		i += k;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct py_types types = { 0xc0de0000, 0x57200000, 0xb7e50000 };
	const struct py_layout *L;
	struct mem m;
	struct py_code c;
	int32_t max;

	log_verbosity = -1;
	if (size < 1)
		return 0;
	L = py_layout__get((uint16_t)(0x0308 + data[0] % 6));
	if (!L)
		__builtin_trap();
	m.b = data + 1;
	m.n = size - 1;
	if (!py_code__read(L, &types, rd, &m, BASE, &c)) {
		check_utf8(c.name, sizeof(c.name));
		check_utf8(c.file, sizeof(c.file));
		if (c.linetable_len > PY_LINETABLE_MAX || (c.linetable_len && !c.linetable))
			__builtin_trap();
		for (int64_t off = -2; off < (int64_t)c.linetable_len * 2 + 4; off += 2)
			py_line__find(L->version, c.linetable, c.linetable_len, c.firstlineno, off,
				      &max);
		py_code__release(&c);
	}
	/* the input as a line table of that version */
	for (int64_t off = -2; off < 64; off += 2)
		if (py_line__find(L->version, m.b, m.n, 5, off, &max) < 0 && 0)
			__builtin_trap();
	return 0;
}

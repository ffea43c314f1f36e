// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/capture/py_code.c (include/py_code.h): the line
 * tables of one function as CPython 3.8 (co_lnotab), 3.10, 3.11, 3.12 and
 * 3.13 wrote them (tests/py_code_tables.h, made with co_lines() and
 * dis.findlinestarts on this machine's interpreters: every instruction's
 * line must be CPython's); code objects and strings of 3.11 and 3.12 laid
 * out byte by byte in a fake address space (ASCII, Latin-1, UCS-2 and UCS-4
 * names to UTF-8), and the hostile ones refused: another type, a str not
 * compact, a surrogate, a NUL, an ASCII flag over a byte >= 0x80, a length
 * past the limit, a line table too long, a pointer to nothing.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "bpfprof_abi.h"
#include "py_code.h"

struct line_range {
	int start, end, line;
};
#include "py_code_tables.h"

static void check_table(uint16_t version, const uint8_t *tab, size_t len, int first, int max,
			const struct line_range *r, size_t n)
{
	int32_t got_max = 0;

	for (size_t i = 0; i < n; i++)
		for (int off = r[i].start; off < r[i].end; off++)
			assert_int_equal(py_line__find(version, tab, len, first, off, &got_max),
					 r[i].line);
	assert_int_equal(got_max, max);
	/* not started yet: the first line; past the end: the first line (3.10+), the last (lnotab) */
	assert_int_equal(py_line__find(version, tab, len, first, -2, NULL), first);
	if (version >= 0x030a)
		assert_int_equal(py_line__find(version, tab, len, first, 100000, NULL), first);
	/* every truncation decodes without reading past it */
	for (size_t k = 0; k < len; k++)
		py_line__find(version, tab, k, first, r[n - 1].start, NULL);
}

#define CHECK(v, name, ver)                                                                 \
	check_table(ver, name##_tab, sizeof(name##_tab), v##_FIRST, v##_MAX, name##_ranges, \
		    sizeof(name##_ranges) / sizeof(name##_ranges[0]))

static void test_line_tables(void **state)
{
	CHECK(V38, v38, 0x0308);
	CHECK(V310, v310, 0x030a);
	CHECK(V311, v311, 0x030b);
	CHECK(V312, v312, 0x030c);
	CHECK(V313, v313, 0x030d);
}

static void test_line_table_hostile(void **state)
{
	/* not an entry's first byte; a varint that never ends; no location */
	static const uint8_t junk[] = { 0x00, 0x01 }, endless[] = { 0xe8, 0x7f, 0x7f, 0x7f },
			     none[] = { 0xf8, 0xd8, 0x08, 0x09 };
	int32_t max;

	assert_int_equal(py_line__find(0x030b, junk, sizeof(junk), 7, 0, &max), 7);
	assert_int_equal(max, 7);
	assert_int_equal(py_line__find(0x030b, endless, sizeof(endless), 7, 0, &max), 7);
	assert_int_equal(py_line__find(0x030b, none, sizeof(none), 7, 0, NULL), 7);
	assert_int_equal(py_line__find(0x030b, none, sizeof(none), 7, 2, NULL), 8);
	assert_int_equal(py_line__find(0x030b, NULL, 0, 9, 4, &max), 9);
}

/* A fake address space: segments of bytes at addresses */
#define MEM_BASE 0x10000ull
#define MEM_SIZE 8192
struct mem {
	uint8_t b[MEM_SIZE];
	int reads;
};

static int mem_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct mem *m = ctx;

	m->reads++;
	if (addr < MEM_BASE || addr - MEM_BASE > MEM_SIZE || len > MEM_SIZE - (addr - MEM_BASE))
		return -EFAULT;
	memcpy(buf, m->b + (addr - MEM_BASE), len);
	return 0;
}

static void put64(struct mem *m, uint64_t addr, uint64_t v)
{
	memcpy(m->b + (addr - MEM_BASE), &v, 8);
}

static void put32(struct mem *m, uint64_t addr, uint32_t v)
{
	memcpy(m->b + (addr - MEM_BASE), &v, 4);
}

#define CODE_TYPE 0xc0de0000ull
#define STR_TYPE 0x57200000ull
#define BYTES_TYPE 0xb7e50000ull
static const struct py_types types = { CODE_TYPE, STR_TYPE, BYTES_TYPE };

/* A compact str at addr: kind 1, 2 or 4; ascii; n characters from data */
static void put_str(struct mem *m, const struct py_layout *L, uint64_t addr, int kind, bool ascii,
		    const void *data, uint64_t n)
{
	put64(m, addr + 8, STR_TYPE);
	put64(m, addr + 16, n);
	put32(m, addr + 32, (uint32_t)(kind << 2 | 1 << 5 | (ascii ? 1 << 6 : 0)));
	memcpy(m->b + (addr - MEM_BASE) + (ascii ? L->ascii_size : L->compact_size), data,
	       n * (uint64_t)kind);
}

static void put_bytes(struct mem *m, uint64_t addr, const void *data, uint64_t n)
{
	put64(m, addr + 8, BYTES_TYPE);
	put64(m, addr + 16, n);
	memcpy(m->b + (addr - MEM_BASE) + 32, data, n);
}

#define CODE MEM_BASE
#define NAME (MEM_BASE + 0x400)
#define FILE_ (MEM_BASE + 0x800)
#define TAB (MEM_BASE + 0xc00)

/* A code object of layout L named `name` (ASCII) in /srv/app.py, firstlineno 2, v311's table */
static void put_code(struct mem *m, const struct py_layout *L)
{
	memset(m, 0, sizeof(*m));
	put64(m, CODE + 8, CODE_TYPE);
	put32(m, CODE + L->co_firstlineno, 2);
	put32(m, CODE + L->co_flags, 3);
	put32(m, CODE + L->co_argcount, 2);
	put64(m, CODE + L->co_qualname, NAME);
	put64(m, CODE + L->co_filename, FILE_);
	put64(m, CODE + L->co_linetable, TAB);
	put_str(m, L, NAME, 1, true, "Cls.meth", 8);
	put_str(m, L, FILE_, 1, true, "/srv/app.py", 11);
	put_bytes(m, TAB, v311_tab, sizeof(v311_tab));
}

static void test_code_object(void **state)
{
	const struct py_layout *L;
	struct py_code c;
	struct mem *m = malloc(sizeof(*m));

	assert_non_null(m);
	for (uint16_t v = 0x030b; v <= 0x030d; v++) {
		L = py_layout__get(v);
		assert_non_null(L);
		put_code(m, L);
		assert_int_equal(py_code__read(L, &types, mem_read, m, CODE, &c), 0);
		assert_string_equal(c.name, "Cls.meth");
		assert_string_equal(c.file, "/srv/app.py");
		assert_int_equal(c.firstlineno, 2);
		assert_int_equal(c.csum, BPFPROF_PY_CSUM(2, 3, 2));
		assert_int_equal(c.linetable_len, sizeof(v311_tab));
		assert_memory_equal(c.linetable, v311_tab, sizeof(v311_tab));
		py_code__release(&c);
	}
	assert_null(py_layout__get(0x030e));
	assert_null(py_layout__get(0x0307));
	free(m);
}

static void test_names_utf8(void **state)
{
	const struct py_layout *L = py_layout__get(0x030c);
	static const uint8_t latin1[] = { 'g', 'r', 0xf6, 0xdf, 'e' }; /* größe */
	static const uint16_t ucs2[] = { 0x3bb, 'x' }; /* λx */
	static const uint32_t ucs4[] = { 0x1f40d, '!' }; /* 🐍! */
	char out[64];
	struct mem *m = malloc(sizeof(*m));

	assert_non_null(m);
	memset(m, 0, sizeof(*m));
	put_str(m, L, NAME, 1, false, latin1, 5);
	assert_int_equal(py_str__read(L, &types, mem_read, m, NAME, out, sizeof(out)), 0);
	assert_string_equal(out, "gr\xc3\xb6\xc3\x9f"
				 "e");
	put_str(m, L, NAME, 2, false, ucs2, 2);
	assert_int_equal(py_str__read(L, &types, mem_read, m, NAME, out, sizeof(out)), 0);
	assert_string_equal(out, "\xce\xbbx");
	put_str(m, L, NAME, 4, false, ucs4, 2);
	assert_int_equal(py_str__read(L, &types, mem_read, m, NAME, out, sizeof(out)), 0);
	assert_string_equal(out, "\xf0\x9f\x90\x8d!");
	/* cut at a character, with "..." */
	put_str(m, L, NAME, 1, true, "abcdefghijklmnop", 16);
	assert_int_equal(py_str__read(L, &types, mem_read, m, NAME, out, 12), 0);
	assert_string_equal(out, "abcdefgh...");
	free(m);
}

static void test_hostile(void **state)
{
	const struct py_layout *L = py_layout__get(0x030b);
	static const uint16_t surrogate[] = { 0xd800 };
	static const uint32_t too_big[] = { 0x110000 };
	struct py_code c;
	char out[64];
	struct mem *m = malloc(sizeof(*m));

	assert_non_null(m);
	put_code(m, L);
	put64(m, CODE + 8, CODE_TYPE + 8); /* another type */
	assert_int_equal(py_code__read(L, &types, mem_read, m, CODE, &c), -EINVAL);
	put_code(m, L);
	put64(m, CODE + L->co_qualname, 0x1234568); /* a pointer to nothing */
	assert_int_equal(py_code__read(L, &types, mem_read, m, CODE, &c), -EFAULT);
	put_code(m, L);
	put64(m, CODE + L->co_qualname, NAME + 4); /* misaligned */
	assert_int_equal(py_code__read(L, &types, mem_read, m, CODE, &c), -EINVAL);
	put_code(m, L);
	put64(m, TAB + 16, PY_LINETABLE_MAX + 1); /* a line table too long */
	assert_int_equal(py_code__read(L, &types, mem_read, m, CODE, &c), -EINVAL);
	put_code(m, L);
	put64(m, TAB + 8, STR_TYPE); /* not bytes */
	assert_int_equal(py_code__read(L, &types, mem_read, m, CODE, &c), -EINVAL);
	put_code(m, L);
	put32(m, CODE + L->co_firstlineno, (uint32_t)-5);
	assert_int_equal(py_code__read(L, &types, mem_read, m, CODE, &c), -EINVAL);

	memset(m, 0, sizeof(*m));
	put_str(m, L, NAME, 2, false, surrogate, 1);
	assert_int_equal(py_str__read(L, &types, mem_read, m, NAME, out, sizeof(out)), -EINVAL);
	put_str(m, L, NAME, 4, false, too_big, 1);
	assert_int_equal(py_str__read(L, &types, mem_read, m, NAME, out, sizeof(out)), -EINVAL);
	put_str(m, L, NAME, 1, true, "a\x80", 2); /* ASCII flag, a byte >= 0x80 */
	assert_int_equal(py_str__read(L, &types, mem_read, m, NAME, out, sizeof(out)), -EINVAL);
	put_str(m, L, NAME, 1, true, "a\0b", 3); /* a NUL */
	assert_int_equal(py_str__read(L, &types, mem_read, m, NAME, out, sizeof(out)), -EINVAL);
	put_str(m, L, NAME, 3, false, "abc", 1); /* kind 3 */
	assert_int_equal(py_str__read(L, &types, mem_read, m, NAME, out, sizeof(out)), -EINVAL);
	put_str(m, L, NAME, 1, true, "abc", 3);
	put32(m, NAME + 32, 1 << 2 | 1 << 6); /* not compact */
	assert_int_equal(py_str__read(L, &types, mem_read, m, NAME, out, sizeof(out)), -EINVAL);
	put_str(m, L, NAME, 1, true, "abc", 3);
	put64(m, NAME + 16, PY_STR_MAX_CHARS + 1); /* too long */
	assert_int_equal(py_str__read(L, &types, mem_read, m, NAME, out, sizeof(out)), -EINVAL);
	free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_line_tables), cmocka_unit_test(test_line_table_hostile),
		cmocka_unit_test(test_code_object), cmocka_unit_test(test_names_utf8),
		cmocka_unit_test(test_hostile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/write/jit_dwarf.c (include/jit_dwarf.h). The one-function
 * fixture is assembled here byte by byte from the DWARF 4 standard: 7.5.3
 * (abbreviation tables), 7.5.1.1 (compile unit header), 7.5.4 (attribute
 * encodings), 6.2.4 (line number program header), 6.2.5 (line number
 * opcodes); constants from <dwarf.h>. Larger cases are read back with a
 * small DWARF 4 reader written here from the same sections (abbrev-driven
 * DIE walk, the line number state machine), itself checked against the
 * hand-assembled bytes first.
 */
#include <dwarf.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "buf.h"
#include "jit_dwarf.h"

#define LE32(v) (uint8_t)(v), (uint8_t)((v) >> 8), (uint8_t)((v) >> 16), (uint8_t)((v) >> 24)
#define LE64(v) LE32((uint64_t)(v)&0xffffffffu), LE32((uint64_t)(v) >> 32)

/* .debug_abbrev (7.5.3): code, tag, children flag, (attribute, form) pairs ending 0 0; table ends with code 0. */
static const uint8_t want_abbrev[] = {
	1,
	DW_TAG_compile_unit,
	DW_CHILDREN_yes,
	DW_AT_name,
	DW_FORM_string,
	DW_AT_stmt_list,
	DW_FORM_sec_offset,
	DW_AT_low_pc,
	DW_FORM_addr,
	DW_AT_high_pc,
	DW_FORM_data8,
	0,
	0,
	2,
	DW_TAG_subprogram,
	DW_CHILDREN_no,
	DW_AT_name,
	DW_FORM_string,
	DW_AT_low_pc,
	DW_FORM_addr,
	DW_AT_high_pc,
	DW_FORM_data8,
	0,
	0,
	0,
};

/*
 * .debug_info (7.5.1.1): unit_length, version 4, debug_abbrev_offset,
 * address_size; then the CU DIE and one subprogram DIE, and the 0 that ends
 * the CU's children. unit_length = 2 + 4 + 1 + (1 + 2 + 4 + 8 + 8) + (1 + 2 + 8 + 8) + 1 = 50.
 */
static const uint8_t want_info[] = {
	LE32(50),
	4,
	0, /* version */
	LE32(0), /* debug_abbrev_offset */
	8, /* address_size */
	1, /* abbrev 1: DW_TAG_compile_unit */
	'u',
	0, /* DW_AT_name, string */
	LE32(0), /* DW_AT_stmt_list, sec_offset */
	LE64(0x1000), /* DW_AT_low_pc, addr */
	LE64(0x10), /* DW_AT_high_pc, data8: a length (DWARF 4, 2.17.2) */
	2, /* abbrev 2: DW_TAG_subprogram */
	'f',
	0,
	LE64(0x1000),
	LE64(0x10),
	0, /* end of children */
};

/*
 * .debug_line (6.2.4): unit_length, version, header_length, then
 * minimum_instruction_length .. file_names; header_length counts the bytes
 * after its own field up to the program: 6 single bytes + 12 opcode
 * lengths + 1 (no include directories) + "u\0" dir mtime length (5) + 1 = 25.
 * Program (6.2.5): DW_LNE_set_address 0x1000 (0, ULEB 9, opcode, 8 bytes),
 * DW_LNS_copy, DW_LNS_advance_pc 0x10, DW_LNE_end_sequence (0, 1, opcode):
 * 12 + 2 + 3 = 17. unit_length = 2 + 4 + 25 + 17 = 48.
 */
static const uint8_t want_line[] = {
	LE32(48),
	4,
	0, /* version */
	LE32(25), /* header_length */
	1, /* minimum_instruction_length */
	1, /* maximum_operations_per_instruction */
	1, /* default_is_stmt */
	(uint8_t)-5, /* line_base */
	14, /* line_range */
	13, /* opcode_base */
	/* standard_opcode_lengths, DW_LNS_copy .. DW_LNS_set_isa (6.2.5.2) */
	0,
	1,
	1,
	1,
	1,
	0,
	0,
	0,
	1,
	0,
	0,
	1,
	0, /* include_directories: none */
	'u',
	0,
	0,
	0,
	0, /* file 1: name, directory index, mtime, length */
	0, /* end of file_names */
	0,
	9,
	DW_LNE_set_address,
	LE64(0x1000),
	DW_LNS_copy,
	DW_LNS_advance_pc,
	0x10,
	0,
	1,
	DW_LNE_end_sequence,
};

static void skip_unless_little_endian(void)
{
	if (__BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__)
		skip(); /* the fixture bytes above are little-endian */
}

static void assert_bytes(const struct buf *b, size_t from, const uint8_t *want, size_t len)
{
	assert_int_equal(b->err, 0);
	assert_int_equal(b->len - from, len);
	if (memcmp(b->data + from, want, len)) {
		for (size_t i = 0; i < len; i++)
			if (b->data[from + i] != want[i]) {
				fprintf(stderr,
					"first difference at byte %zu: 0x%02x, want 0x%02x\n", i,
					b->data[from + i], want[i]);
				break;
			}
		fail();
	}
}

/* --- a small DWARF 4 reader (32-bit DWARF, little-endian host) --- */

struct rd {
	const uint8_t *p, *end;
};

static uint64_t rd_u(struct rd *r, int n)
{
	uint64_t v = 0;

	assert_true(r->end - r->p >= n);
	for (int i = 0; i < n; i++)
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	return v;
}

static uint64_t rd_uleb(struct rd *r)
{
	uint64_t v = 0;
	int shift = 0;
	uint8_t b;

	do {
		assert_true(r->p < r->end);
		b = *r->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	return v;
}

static int64_t rd_sleb(struct rd *r)
{
	int64_t v = 0;
	int shift = 0;
	uint8_t b;

	do {
		assert_true(r->p < r->end);
		b = *r->p++;
		v |= (int64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		v |= -((int64_t)1 << shift);
	return v;
}

static const char *rd_str(struct rd *r)
{
	const char *s = (const char *)r->p;
	const uint8_t *nul = memchr(r->p, 0, (size_t)(r->end - r->p));

	assert_non_null(nul);
	r->p = nul + 1;
	return s;
}

struct abbrev {
	uint64_t code, tag;
	bool children;
	size_t nr;
	uint64_t at[16], form[16];
};

static size_t read_abbrevs(const uint8_t *data, size_t len, struct abbrev *out, size_t max)
{
	struct rd r = { data, data + len };
	size_t n = 0;

	for (;;) {
		uint64_t code = rd_uleb(&r);

		if (!code)
			break;
		assert_true(n < max);
		out[n].code = code;
		out[n].tag = rd_uleb(&r);
		out[n].children = rd_u(&r, 1) == DW_CHILDREN_yes;
		out[n].nr = 0;
		for (;;) {
			uint64_t at = rd_uleb(&r), form = rd_uleb(&r);

			if (!at && !form)
				break;
			assert_true(out[n].nr < 16);
			out[n].at[out[n].nr] = at;
			out[n].form[out[n].nr++] = form;
		}
		n++;
	}
	assert_true(r.p == r.end); /* nothing after the table's end */
	return n;
}

struct die {
	uint64_t tag;
	int depth;
	const char *name;
	uint64_t low_pc, high_pc, stmt_list;
	bool has_low, has_high, has_stmt;
};

/* Walk the one CU of .debug_info; returns the number of DIEs (null entries excluded). */
static size_t read_dies(const uint8_t *info, size_t info_len, const uint8_t *abbr, size_t abbr_len,
			struct die *out, size_t max)
{
	struct abbrev ab[8];
	size_t nab = read_abbrevs(abbr, abbr_len, ab, 8), n = 0;
	struct rd r = { info, info + info_len };
	uint64_t unit_length;
	const uint8_t *unit_end;
	int depth = 0;

	unit_length = rd_u(&r, 4);
	assert_true(unit_length < 0xfffffff0u); /* 32-bit DWARF */
	assert_int_equal(unit_length, info_len - 4);
	unit_end = r.p + unit_length;
	assert_int_equal(rd_u(&r, 2), 4); /* version */
	assert_int_equal(rd_u(&r, 4), 0); /* debug_abbrev_offset */
	assert_int_equal(rd_u(&r, 1), 8); /* address_size */
	while (r.p < unit_end) {
		uint64_t code = rd_uleb(&r);
		const struct abbrev *a = NULL;
		struct die d = { 0 };

		if (!code) {
			assert_true(depth > 0);
			depth--;
			continue;
		}
		for (size_t i = 0; i < nab; i++)
			if (ab[i].code == code)
				a = &ab[i];
		assert_non_null(a);
		d.tag = a->tag;
		d.depth = depth;
		for (size_t i = 0; i < a->nr; i++) {
			uint64_t v = 0;

			switch (a->form[i]) {
			case DW_FORM_string:
				if (a->at[i] == DW_AT_name)
					d.name = rd_str(&r);
				else
					rd_str(&r);
				continue;
			case DW_FORM_addr:
			case DW_FORM_data8:
				v = rd_u(&r, 8);
				break;
			case DW_FORM_sec_offset:
			case DW_FORM_data4:
				v = rd_u(&r, 4);
				break;
			case DW_FORM_data2:
				v = rd_u(&r, 2);
				break;
			case DW_FORM_data1:
				v = rd_u(&r, 1);
				break;
			case DW_FORM_udata:
				v = rd_uleb(&r);
				break;
			default:
				fail_msg("unexpected form 0x%llx", (unsigned long long)a->form[i]);
			}
			if (a->at[i] == DW_AT_low_pc)
				d.low_pc = v, d.has_low = true;
			else if (a->at[i] == DW_AT_high_pc) {
				/* a constant class form is a length from low_pc (DWARF 4, 2.17.2) */
				assert_true(a->form[i] != DW_FORM_addr);
				d.high_pc = v, d.has_high = true;
			} else if (a->at[i] == DW_AT_stmt_list)
				d.stmt_list = v, d.has_stmt = true;
		}
		if (d.has_high)
			d.high_pc += d.low_pc;
		assert_true(n < max);
		out[n++] = d;
		if (a->children)
			depth++;
	}
	assert_true(r.p == unit_end);
	assert_int_equal(depth, 0);
	return n;
}

struct row {
	uint64_t addr;
	uint64_t line, file;
	bool end_sequence;
};

struct line_prog {
	const char *file1;
	size_t nr_rows, nr_set_address;
	struct row rows[16];
	uint64_t set_address[16];
};

/* Run the line number program of the one unit (6.2.2 state machine, 6.2.5 opcodes). */
static void read_lines(const uint8_t *data, size_t len, struct line_prog *lp)
{
	struct rd r = { data, data + len };
	uint64_t unit_length, header_length, addr = 0, line = 1, file = 1;
	const uint8_t *unit_end, *prog;
	uint8_t min_inst, opcode_base, line_range, lengths[32];
	int8_t line_base;

	memset(lp, 0, sizeof(*lp));
	unit_length = rd_u(&r, 4);
	assert_int_equal(unit_length, len - 4);
	unit_end = r.p + unit_length;
	assert_int_equal(rd_u(&r, 2), 4);
	header_length = rd_u(&r, 4);
	prog = r.p + header_length;
	min_inst = (uint8_t)rd_u(&r, 1);
	assert_true(min_inst >= 1);
	assert_int_equal(rd_u(&r, 1), 1); /* maximum_operations_per_instruction: not VLIW */
	rd_u(&r, 1); /* default_is_stmt */
	line_base = (int8_t)rd_u(&r, 1);
	line_range = (uint8_t)rd_u(&r, 1);
	assert_true(line_range > 0);
	opcode_base = (uint8_t)rd_u(&r, 1);
	assert_true(opcode_base >= 1 && opcode_base <= 32);
	for (int i = 1; i < opcode_base; i++)
		lengths[i] = (uint8_t)rd_u(&r, 1);
	while (*rd_str(&r))
		; /* include_directories */
	for (int i = 0;; i++) {
		const char *name = rd_str(&r);

		if (!*name)
			break;
		if (i == 0)
			lp->file1 = name;
		rd_uleb(&r), rd_uleb(&r), rd_uleb(&r);
	}
	assert_true(r.p == prog); /* header_length is right */
	while (r.p < unit_end) {
		uint8_t op = (uint8_t)rd_u(&r, 1);

		if (op >= opcode_base) {
			uint8_t adj = op - opcode_base;

			addr += (uint64_t)(adj / line_range) * min_inst;
			line += line_base + adj % line_range;
			lp->rows[lp->nr_rows++] = (struct row){ addr, line, file, false };
		} else if (op == 0) {
			uint64_t n = rd_uleb(&r);
			const uint8_t *next = r.p + n;
			uint8_t ext = (uint8_t)rd_u(&r, 1);

			if (ext == DW_LNE_set_address) {
				assert_int_equal(n, 9);
				addr = rd_u(&r, 8);
				lp->set_address[lp->nr_set_address++] = addr;
			} else if (ext == DW_LNE_end_sequence) {
				lp->rows[lp->nr_rows++] = (struct row){ addr, line, file, true };
				addr = 0, line = 1, file = 1;
			} else {
				fail_msg("unexpected extended opcode %u", ext);
			}
			assert_true(r.p == next);
		} else if (op == DW_LNS_copy) {
			lp->rows[lp->nr_rows++] = (struct row){ addr, line, file, false };
		} else if (op == DW_LNS_advance_pc) {
			addr += rd_uleb(&r) * min_inst;
		} else if (op == DW_LNS_advance_line) {
			line += (uint64_t)rd_sleb(&r);
		} else if (op == DW_LNS_set_file) {
			file = rd_uleb(&r);
		} else if (op == DW_LNS_const_add_pc) {
			addr += (uint64_t)((255 - opcode_base) / line_range) * min_inst;
		} else if (op == DW_LNS_fixed_advance_pc) {
			addr += rd_u(&r, 2);
		} else {
			for (int i = 0; i < lengths[op]; i++)
				rd_uleb(&r);
		}
		assert_true(lp->nr_rows < 16 && lp->nr_set_address < 16);
	}
	assert_true(r.p == unit_end);
}

/* --- tests --- */

static void test_reader_reads_fixture(void **state)
{
	struct line_prog lp;
	struct die d[4];

	skip_unless_little_endian();
	/* the reader against the hand-assembled bytes, before it is trusted with more */
	assert_int_equal(
		read_dies(want_info, sizeof(want_info), want_abbrev, sizeof(want_abbrev), d, 4), 2);
	assert_int_equal(d[0].tag, DW_TAG_compile_unit);
	assert_string_equal(d[0].name, "u");
	assert_int_equal(d[0].low_pc, 0x1000);
	assert_int_equal(d[0].high_pc, 0x1010);
	assert_int_equal(d[1].tag, DW_TAG_subprogram);
	assert_int_equal(d[1].depth, 1);
	assert_string_equal(d[1].name, "f");
	read_lines(want_line, sizeof(want_line), &lp);
	assert_string_equal(lp.file1, "u");
	assert_int_equal(lp.nr_rows, 2);
	assert_int_equal(lp.rows[0].addr, 0x1000);
	assert_int_equal(lp.rows[0].line, 1);
	assert_false(lp.rows[0].end_sequence);
	assert_int_equal(lp.rows[1].addr, 0x1010);
	assert_true(lp.rows[1].end_sequence);
}

static void test_one_function_bytes(void **state)
{
	const struct jit_dwarf_fn fns[] = { { 0x1000, 0x1010, "f" } };
	struct buf info = { 0 }, abbrev = { 0 }, line = { 0 };

	skip_unless_little_endian();
	assert_int_equal(jit_dwarf__build(fns, 1, "u", &info, &abbrev, &line), 0);
	assert_bytes(&abbrev, 0, want_abbrev, sizeof(want_abbrev));
	assert_bytes(&info, 0, want_info, sizeof(want_info));
	assert_bytes(&line, 0, want_line, sizeof(want_line));
	buf__free(&info);
	buf__free(&abbrev);
	buf__free(&line);
}

/* "Append": bytes already in .debug_info stay, the unit follows them unchanged. */
static void test_appends_to_info(void **state)
{
	const struct jit_dwarf_fn fns[] = { { 0x1000, 0x1010, "f" } };
	struct buf info = { 0 }, abbrev = { 0 }, line = { 0 };

	skip_unless_little_endian();
	buf__put_bytes(&info, "\xde\xad\xbe", 3);
	assert_int_equal(jit_dwarf__build(fns, 1, "u", &info, &abbrev, &line), 0);
	assert_memory_equal(info.data, "\xde\xad\xbe", 3);
	assert_bytes(&info, 3, want_info, sizeof(want_info));
	assert_bytes(&abbrev, 0, want_abbrev, sizeof(want_abbrev));
	assert_bytes(&line, 0, want_line, sizeof(want_line));
	buf__free(&info);
	buf__free(&abbrev);
	buf__free(&line);
}

static void test_two_functions(void **state)
{
	/* a gap between them; a name with spaces and a long unit name */
	const struct jit_dwarf_fn fns[] = {
		{ 0x1000, 0x1040, "JS:*hot /app.js:1:14" },
		{ 0x1100, 0x11a0, "second" },
	};
	struct buf info = { 0 }, abbrev = { 0 }, line = { 0 };
	struct line_prog lp;
	struct die d[8];

	skip_unless_little_endian();
	assert_int_equal(jit_dwarf__build(fns, 2, "jitted-77-0.so", &info, &abbrev, &line), 0);
	/* same abbreviations whatever the functions */
	assert_bytes(&abbrev, 0, want_abbrev, sizeof(want_abbrev));

	assert_int_equal(read_dies(info.data, info.len, abbrev.data, abbrev.len, d, 8), 3);
	assert_int_equal(d[0].tag, DW_TAG_compile_unit);
	assert_int_equal(d[0].depth, 0);
	assert_string_equal(d[0].name, "jitted-77-0.so");
	assert_true(d[0].has_stmt);
	assert_int_equal(d[0].stmt_list, 0);
	assert_int_equal(d[0].low_pc, 0x1000);
	assert_int_equal(d[0].high_pc, 0x11a0);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(d[1 + i].tag, DW_TAG_subprogram);
		assert_int_equal(d[1 + i].depth, 1);
		assert_string_equal(d[1 + i].name, fns[i].name);
		assert_int_equal(d[1 + i].low_pc, fns[i].low);
		assert_int_equal(d[1 + i].high_pc, fns[i].high);
	}
	/* unit length: header 11 + CU (1 + 15 + 4 + 16) + fns (1 + 21 + 16) + (1 + 7 + 16) + 1 */
	assert_int_equal(info.len, 11 + 36 + 38 + 24 + 1);

	read_lines(line.data, line.len, &lp);
	assert_string_equal(lp.file1, "jitted-77-0.so");
	assert_int_equal(lp.nr_set_address, 2);
	assert_int_equal(lp.set_address[0], 0x1000);
	assert_int_equal(lp.set_address[1], 0x1100);
	assert_int_equal(lp.nr_rows, 3);
	assert_int_equal(lp.rows[0].addr, 0x1000);
	assert_int_equal(lp.rows[0].line, 1);
	assert_int_equal(lp.rows[0].file, 1);
	assert_false(lp.rows[0].end_sequence);
	assert_int_equal(lp.rows[1].addr, 0x1100);
	assert_int_equal(lp.rows[1].line, 1);
	assert_false(lp.rows[1].end_sequence);
	assert_int_equal(lp.rows[2].addr, 0x11a0); /* the sequence ends after the last function */
	assert_true(lp.rows[2].end_sequence);
	buf__free(&info);
	buf__free(&abbrev);
	buf__free(&line);
}

/* Addresses and lengths past 2^32 and a length over 127 (a multi-byte ULEB in advance_pc). */
static void test_large_values(void **state)
{
	const struct jit_dwarf_fn fns[] = {
		{ 0x7f0000001000ull, 0x7f0000001008ull, "a" },
		{ 0x7f0000002000ull, 0x7f0000012345ull, "b" },
	};
	struct buf info = { 0 }, abbrev = { 0 }, line = { 0 };
	struct line_prog lp;
	struct die d[8];
	static const uint8_t tail[] = { DW_LNS_advance_pc,  0xc5, 0x86, 0x04, 0, 1,
					DW_LNE_end_sequence };

	skip_unless_little_endian();
	assert_int_equal(jit_dwarf__build(fns, 2, "x", &info, &abbrev, &line), 0);
	assert_int_equal(read_dies(info.data, info.len, abbrev.data, abbrev.len, d, 8), 3);
	assert_int_equal(d[0].low_pc, 0x7f0000001000ull);
	assert_int_equal(d[0].high_pc, 0x7f0000012345ull);
	assert_int_equal(d[2].low_pc, 0x7f0000002000ull);
	assert_int_equal(d[2].high_pc, 0x7f0000012345ull);
	/* 0x10345 = ULEB c5 86 04 */
	assert_true(line.len > sizeof(tail));
	assert_memory_equal(line.data + line.len - sizeof(tail), tail, sizeof(tail));
	read_lines(line.data, line.len, &lp);
	assert_int_equal(lp.nr_rows, 3);
	assert_int_equal(lp.rows[2].addr, 0x7f0000012345ull);
	buf__free(&info);
	buf__free(&abbrev);
	buf__free(&line);
}

/* No functions: a CU with no children, a sequence with only its end. */
static void test_no_functions(void **state)
{
	struct buf info = { 0 }, abbrev = { 0 }, line = { 0 };
	struct line_prog lp;
	struct die d[4];

	skip_unless_little_endian();
	assert_int_equal(jit_dwarf__build(NULL, 0, "empty", &info, &abbrev, &line), 0);
	assert_int_equal(read_dies(info.data, info.len, abbrev.data, abbrev.len, d, 4), 1);
	assert_int_equal(d[0].tag, DW_TAG_compile_unit);
	assert_int_equal(d[0].high_pc, d[0].low_pc);
	read_lines(line.data, line.len, &lp);
	assert_int_equal(lp.nr_set_address, 0);
	assert_int_equal(lp.nr_rows, 1);
	assert_true(lp.rows[0].end_sequence);
	buf__free(&info);
	buf__free(&abbrev);
	buf__free(&line);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reader_reads_fixture),
		cmocka_unit_test(test_one_function_bytes),
		cmocka_unit_test(test_appends_to_info),
		cmocka_unit_test(test_two_functions),
		cmocka_unit_test(test_large_values),
		cmocka_unit_test(test_no_functions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

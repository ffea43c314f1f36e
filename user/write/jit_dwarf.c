// SPDX-License-Identifier: MIT
/* DWARF 4 for JIT images (include/jit_dwarf.h); 32-bit DWARF, 8-byte addresses. */
#include <dwarf.h>
#include <errno.h>
#include <string.h>
#include "jit_dwarf.h"

static void put_u8(struct buf *b, uint8_t v)
{
	buf__put_bytes(b, &v, 1);
}

static void put_u16(struct buf *b, uint16_t v)
{
	buf__put_bytes(b, &v, 2);
}

static void put_uleb(struct buf *b, uint64_t v)
{
	do {
		uint8_t byte = v & 0x7f;

		v >>= 7;
		put_u8(b, byte | (v ? 0x80 : 0));
	} while (v);
}

static void put_str(struct buf *b, const char *s)
{
	buf__put_bytes(b, s, strlen(s) + 1);
}

/* Patch a u32 length at `at` to cover everything after it. */
static void end_length(struct buf *b, size_t at)
{
	uint32_t len = (uint32_t)(b->len - at - 4);

	if (!b->err)
		memcpy(b->data + at, &len, 4);
}

enum { ABBREV_CU = 1, ABBREV_FN = 2 };

/*
 * The two abbreviations .debug_info uses (DWARF 4, 7.5.3): a compile unit
 * with its line program, and one subprogram per function.
 */
static const struct {
	uint8_t code, children;
	uint16_t tag;
	uint16_t attr_form[5][2]; /* (attribute, form) pairs, ending with (0, 0) */
} abbrevs[] = {
	{ ABBREV_CU,
	  DW_CHILDREN_yes,
	  DW_TAG_compile_unit,
	  { { DW_AT_name, DW_FORM_string },
	    { DW_AT_stmt_list, DW_FORM_sec_offset },
	    { DW_AT_low_pc, DW_FORM_addr },
	    { DW_AT_high_pc, DW_FORM_data8 } /* a length since DWARF 4 */ } },
	{ ABBREV_FN,
	  DW_CHILDREN_no,
	  DW_TAG_subprogram,
	  { { DW_AT_name, DW_FORM_string },
	    { DW_AT_low_pc, DW_FORM_addr },
	    { DW_AT_high_pc, DW_FORM_data8 } } },
};

static void put_abbrevs(struct buf *a)
{
	size_t i, j;

	for (i = 0; i < sizeof(abbrevs) / sizeof(abbrevs[0]); i++) {
		put_uleb(a, abbrevs[i].code);
		put_uleb(a, abbrevs[i].tag);
		put_u8(a, abbrevs[i].children);
		for (j = 0; abbrevs[i].attr_form[j][0]; j++) {
			put_uleb(a, abbrevs[i].attr_form[j][0]);
			put_uleb(a, abbrevs[i].attr_form[j][1]);
		}
		put_uleb(a, 0), put_uleb(a, 0);
	}
	put_uleb(a, 0);
}

/* One sequence: a row at each function start, line 1 of the one file. */
static void put_line_program(struct buf *l, const struct jit_dwarf_fn *fns, size_t nr,
			     const char *unit_name)
{
	size_t unit = l->len, header;

	buf__put_u32(l, 0); /* unit_length, patched */
	put_u16(l, 4);
	header = l->len;
	buf__put_u32(l, 0); /* header_length, patched */
	put_u8(l, 1); /* minimum_instruction_length */
	put_u8(l, 1); /* maximum_operations_per_instruction */
	put_u8(l, 1); /* default_is_stmt */
	put_u8(l, (uint8_t)-5); /* line_base */
	put_u8(l, 14); /* line_range */
	put_u8(l, 13); /* opcode_base: standard opcodes 1..12 */
	static const uint8_t std_lengths[12] = { 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1 };
	buf__put_bytes(l, std_lengths, sizeof(std_lengths));
	put_u8(l, 0); /* include_directories: none */
	put_str(l, unit_name); /* file 1 */
	put_uleb(l, 0), put_uleb(l, 0), put_uleb(l, 0);
	put_u8(l, 0); /* end of file_names */
	end_length(l, header);
	for (size_t i = 0; i < nr; i++) {
		put_u8(l, 0), put_uleb(l, 9), put_u8(l, DW_LNE_set_address);
		buf__put_u64(l, fns[i].low);
		put_u8(l, DW_LNS_copy);
	}
	if (nr) {
		put_u8(l, DW_LNS_advance_pc);
		put_uleb(l, fns[nr - 1].high - fns[nr - 1].low);
	}
	put_u8(l, 0), put_uleb(l, 1), put_u8(l, DW_LNE_end_sequence);
	end_length(l, unit);
}

int jit_dwarf__build(const struct jit_dwarf_fn *fns, size_t nr, const char *unit_name,
		     struct buf *info, struct buf *abbrev, struct buf *line)
{
	uint64_t low = nr ? fns[0].low : 0, high = nr ? fns[nr - 1].high : 0;
	size_t unit = info->len, abbrev_off = abbrev->len, line_off = line->len;

	put_abbrevs(abbrev);
	put_line_program(line, fns, nr, unit_name);

	buf__put_u32(info, 0); /* unit_length, patched */
	put_u16(info, 4);
	buf__put_u32(info, (uint32_t)abbrev_off); /* debug_abbrev_offset */
	put_u8(info, 8); /* address_size */
	put_uleb(info, ABBREV_CU);
	put_str(info, unit_name);
	buf__put_u32(info, (uint32_t)line_off); /* stmt_list: the line program above */
	buf__put_u64(info, low);
	buf__put_u64(info, high - low);
	for (size_t i = 0; i < nr; i++) {
		put_uleb(info, ABBREV_FN);
		put_str(info, fns[i].name);
		buf__put_u64(info, fns[i].low);
		buf__put_u64(info, fns[i].high - fns[i].low);
	}
	put_u8(info, 0); /* end of the CU's children */
	end_length(info, unit);
	return info->err ? info->err : abbrev->err ? abbrev->err : line->err;
}

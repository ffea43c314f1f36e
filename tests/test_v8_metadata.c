// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/symbolize/v8_metadata.c (include/v8_metadata.h) on
 * byte-level ELF fixtures (tests/v8_fixture.h) written to a memfd: node 20's
 * metadata read back value for value, .bss symbols as 0, the version with its
 * embedder suffix, the fallbacks by version, .dynsym before .symtab; then
 * each refusal: no v8dbg_ symbols, not ELF, a required symbol missing, a
 * value out of range, a value outside its section, a symbol of the wrong
 * size, inconsistent tags; truncations of the fixture never crash.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>
#include "v8_fixture.h"
#include "v8_metadata.h"

/* Read the bytes as a file: the reader's return, md and why filled */
static int read_bytes(const void *b, size_t len, struct v8_metadata *md, char *why, size_t size)
{
	int fd = memfd_create("v8md", MFD_CLOEXEC), err;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, b, len), (ssize_t)len);
	err = v8_metadata__read(fd, md, why, size);
	close(fd);
	return err;
}

static int read_fixture(const struct v8_fopts *o, struct v8_metadata *md, char *why, size_t size)
{
	size_t len;
	uint8_t *b = v8_fixture(o, &len);
	int err = read_bytes(b, len, md, why, size);

	free(b);
	return err;
}

static void test_node20(void **state)
{
	struct v8_fopts o = { 0 };
	struct v8_metadata md;
	char why[160], ver[64];

	(void)state;
	assert_int_equal(read_fixture(&o, &md, why, sizeof(why)), 0);
	assert_string_equal(why, "");
	assert_string_equal(v8_metadata__version(&md, ver, sizeof(ver)), "11.3.244.8-node.38");
	assert_int_equal(md.nr_symbols, NODE20_NR - 4); /* the 4 Version ints are not v8dbg_ */
	assert_int_equal(md.nr_read, NODE20_NR);
	/* tagging: SmiTag is a .bss symbol (0) */
	assert_int_equal(md.smi_tag, 0);
	assert_int_equal(md.smi_tag_mask, 1);
	assert_int_equal(md.smi_shift_size, 31);
	assert_int_equal(md.heap_object_tag, 1);
	assert_int_equal(md.heap_object_tag_mask, 3);
	assert_int_equal(md.tagged_size, 8);
	assert_false(md.pointer_compression);
	/* frames */
	assert_int_equal(md.fp_context, -8);
	assert_int_equal(md.fp_function, -16);
	assert_int_equal(md.fp_bytecode_array, -32);
	assert_int_equal(md.fp_bytecode_offset, -40);
	assert_int_equal(md.fp_args, 16);
	assert_int_equal(md.reg_bytecode_offset, 9);
	assert_int_equal(md.ft_entry, 1);
	assert_int_equal(md.ft_interpreted, 13);
	assert_int_equal(md.ft_baseline, 14);
	assert_int_equal(md.ft_maglev, 15);
	assert_int_equal(md.ft_turbofan, 16);
	assert_int_equal(md.ft_stub, 17);
	assert_int_equal(md.ft_internal, 22);
	assert_int_equal(md.ft_builtin_exit, 25);
	/* types and fields */
	assert_int_equal(md.type_js_function, 2066);
	assert_int_equal(md.type_js_function_last, 2081); /* class constructors: +15 */
	assert_int_equal(md.type_shared_function_info, 262);
	assert_int_equal(md.type_code, 245);
	assert_int_equal(md.type_bytecode_array, 191);
	assert_int_equal(md.type_script, 167);
	assert_int_equal(md.type_scope_info, 261);
	assert_int_equal(md.map_instance_type, 12);
	assert_int_equal(md.js_function_shared, 24);
	assert_int_equal(md.sfi_name_or_scope_info, 16);
	assert_int_equal(md.sfi_script_or_debug_info, 32);
	assert_int_equal(md.script_name, 16);
	assert_int_equal(md.script_source, 8);
	assert_int_equal(md.script_line_ends, 56);
	assert_int_equal(md.code_source_position_table, 24);
	assert_int_equal(md.bytecode_array_data, 54);
	assert_int_equal(md.code_kind_baseline, 11);
	assert_int_equal(md.deopt_inlining_positions, 7);
	/* not exported by 11.3: the fallbacks checked on node 20 */
	assert_int_equal(md.js_function_code, 48);
	assert_true(md.js_function_code_derived);
	assert_int_equal(md.code_instruction_start, 40);
	assert_int_equal(md.code_flags, 48);
	assert_int_equal(md.code_instruction_size, 56);
	assert_true(md.code_fields_derived);
	assert_int_equal(md.bytecode_array_source_position_table, 32);
	/* a type node 20 does not have */
	assert_int_equal(md.type_trusted_byte_array, V8MD_ABSENT);
}

/*
 * node 18 (V8 10.2): Code holds its instructions after a 128-byte header;
 * its tables, deoptimization slots and BytecodeArray's positions derived
 * from that shape, as node 18's live objects have them
 */
static void test_node18(void **state)
{
	struct v8_fopts o = { .syms = node18_syms, .nr = NODE18_NR };
	struct v8_metadata md;
	char why[160], ver[64];

	(void)state;
	if (read_fixture(&o, &md, why, sizeof(why)))
		fail_msg("refused: %s", why);
	assert_string_equal(v8_metadata__version(&md, ver, sizeof(ver)), "10.2.154.26-node.38");
	assert_int_equal(md.nr_read, NODE18_NR);
	assert_int_equal(md.ft_interpreted, 12);
	assert_int_equal(md.ft_turbofan, 14); /* OptimizedFrame */
	assert_int_equal(md.type_js_function, 2065);
	assert_int_equal(md.type_code, 240);
	/* JSFunction.code as a CodeT, exported */
	assert_int_equal(md.js_function_code, 48);
	assert_false(md.js_function_code_derived);
	/* instructions inline: no pointer field, the header's size */
	assert_int_equal(md.code_instruction_start, V8MD_ABSENT);
	assert_int_equal(md.code_header_size, 128);
	assert_int_equal(md.code_instruction_size, 40);
	assert_int_equal(md.code_flags, 48);
	assert_false(md.code_fields_derived);
	/* relocation info 8, deoptimization data 16, positions 24, CodeDataContainer 32 */
	assert_int_equal(md.code_source_position_table, 24);
	assert_int_equal(md.code_deoptimization_data, 16);
	assert_true(md.code_tables_derived);
	assert_int_equal(md.bytecode_array_source_position_table, 32);
	assert_int_equal(md.bytecode_array_data, 56);
	assert_int_equal(md.deopt_shared_function_info, 6);
	assert_int_equal(md.deopt_literal_array, 2);
	assert_int_equal(md.deopt_inlining_positions, 7);
	assert_true(md.deopt_indexes_derived);
	assert_int_equal(md.sfi_function_data, 8);
	assert_int_equal(md.code_kind_baseline, 11);
}

/*
 * node 22 (V8 12.4): Code apart from its InstructionStream, its start a
 * pointer; its tables before the wrapper, BytecodeArray's positions after
 * its wrapper, as node 22's live objects have them
 */
static void test_node22(void **state)
{
	struct v8_fopts o = { .syms = node22_syms, .nr = NODE22_NR };
	struct v8_metadata md;
	char ver[64];

	(void)state;
	assert_int_equal(read_fixture(&o, &md, NULL, 0), 0);
	assert_string_equal(v8_metadata__version(&md, ver, sizeof(ver)), "12.4.254.21-node.38");
	/* FirstJSFunctionType too, an alternative of type_JSFunction's read first */
	assert_int_equal(md.nr_read, NODE22_NR - 1);
	assert_int_equal(md.type_js_function, 2066);
	assert_int_equal(md.type_js_function_last, 2082); /* exported */
	assert_int_equal(md.js_function_shared, 32);
	assert_int_equal(md.js_function_code, 24);
	assert_int_equal(md.sfi_script_or_debug_info, 32);
	assert_int_equal(md.code_instruction_start, 40);
	assert_int_equal(md.code_header_size, V8MD_ABSENT);
	assert_int_equal(md.code_flags, 48);
	assert_int_equal(md.code_instruction_size, 52);
	/* deoptimization data (or a baseline Code's BytecodeArray) 8, positions 16, wrapper 24 */
	assert_int_equal(md.code_source_position_table, 16);
	assert_int_equal(md.code_deoptimization_data, 8);
	assert_true(md.code_tables_derived);
	/* length 8, wrapper 16, positions 24 */
	assert_int_equal(md.bytecode_array_wrapper, 16);
	assert_int_equal(md.bytecode_array_source_position_table, 24);
	assert_int_equal(md.bytecode_array_data, 64);
	assert_int_equal(md.sfi_function_data, 8);
	assert_int_equal(md.type_trusted_byte_array, 212);
	assert_int_equal(md.type_trusted_fixed_array, 213);
	assert_int_equal(md.deopt_shared_function_info, 6); /* exported */
	assert_false(md.deopt_indexes_derived);
	assert_int_equal(md.code_kind_baseline, 10);
	/* without the CodeWrapper type the shape is unknown: no tables derived */
	o.drop = "v8dbg_type_CodeWrapper__CODE_WRAPPER_TYPE";
	assert_int_equal(read_fixture(&o, &md, NULL, 0), 0);
	assert_int_equal(md.code_source_position_table, V8MD_ABSENT);
	assert_int_equal(md.code_deoptimization_data, V8MD_ABSENT);
	assert_false(md.code_tables_derived);
}

/* The same from .dynsym alone (a binary with .symtab stripped) */
static void test_dynsym(void **state)
{
	struct v8_fopts o = { .dynsym = true };
	struct v8_metadata md;
	char ver[64];

	(void)state;
	assert_int_equal(read_fixture(&o, &md, NULL, 0), 0);
	assert_string_equal(v8_metadata__version(&md, ver, sizeof(ver)), "11.3.244.8-node.38");
	assert_int_equal(md.fp_function, -16);
}

/* Fallbacks follow the version; optional values stay absent */
static void test_versions(void **state)
{
	struct v8_fopts o = { .set = "_ZN2v88internal7Version6minor_E", .set_value = 8 };
	struct v8_metadata md;
	char ver[64];

	(void)state;
	/* 11.8.244: JSFunction::code moved before shared (11.7.368) */
	assert_int_equal(read_fixture(&o, &md, NULL, 0), 0);
	assert_int_equal(md.js_function_code, 24 - 8);
	/* 12.3.244: no Code fallbacks known for its shape (no CodeWrapper, no header size) */
	o.set = "_ZN2v88internal7Version6major_E";
	o.set_value = 12;
	assert_int_equal(read_fixture(&o, &md, NULL, 0), 0);
	assert_int_equal(md.code_instruction_start, V8MD_ABSENT);
	assert_false(md.code_fields_derived);
	/* BytecodeArray without a wrapper: its positions 3 words after its length, any version */
	assert_int_equal(md.bytecode_array_source_position_table, 8 + 3 * 8);
	assert_true(md.bytecode_spt_derived);
	/* 13.x: no JSFunction::code derived (a dispatch handle there) */
	o.set_value = 13;
	assert_int_equal(read_fixture(&o, &md, NULL, 0), 0);
	assert_int_equal(md.js_function_code, V8MD_ABSENT);
	assert_false(md.js_function_code_derived);
	/* optional frame type missing: absent, not 0 */
	o = (struct v8_fopts){ .drop = "v8dbg_frametype_MaglevFrame" };
	assert_int_equal(read_fixture(&o, &md, NULL, 0), 0);
	assert_int_equal(md.ft_maglev, V8MD_ABSENT);
	/* patch 0 is not printed, as V8 does; no embedder: no suffix */
	o = (struct v8_fopts){ .drop = "_ZN2v88internal7Version6patch_E", .no_embedder = true };
	assert_int_equal(read_fixture(&o, &md, NULL, 0), 0);
	assert_string_equal(v8_metadata__version(&md, ver, sizeof(ver)), "11.3.244");
	/* an embedder_ pointing out of every section: no suffix, no read */
	o = (struct v8_fopts){ .embedder_ptr = 0x7fff00000000ull };
	assert_int_equal(read_fixture(&o, &md, NULL, 0), 0);
	assert_string_equal(md.embedder, "");
	/* pointing at binary data (a value, not text): no suffix */
	o = (struct v8_fopts){ .embedder_ptr = V8F_DATA_ADDR };
	assert_int_equal(read_fixture(&o, &md, NULL, 0), 0);
	assert_string_equal(md.embedder, "");
}

/* The old name of TurbofanFrame (OptimizedFrame) stands in for it */
static void test_alternate_name(void **state)
{
	struct v8_fsym syms[NODE20_NR];
	struct v8_fopts o = { .syms = syms, .nr = NODE20_NR };
	struct v8_metadata md;

	(void)state;
	memcpy(syms, node20_syms, sizeof(syms));
	for (size_t i = 0; i < NODE20_NR; i++)
		if (!strcmp(syms[i].name, "v8dbg_frametype_TurbofanFrame"))
			syms[i].name = "v8dbg_frametype_OptimizedFrame";
	assert_int_equal(read_fixture(&o, &md, NULL, 0), 0);
	assert_int_equal(md.ft_turbofan, 16);
}

static void test_not_v8(void **state)
{
	static const struct v8_fsym other[] = { { "some_global", 5 }, { "v8_not_dbg", 7 } };
	struct v8_fopts o = { .syms = other, .nr = 2, .no_embedder = true };
	struct v8_metadata md;
	static const char text[] = "#!/bin/sh\necho node\n";

	(void)state;
	assert_int_equal(read_fixture(&o, &md, NULL, 0), -ENOENT);
	assert_int_equal(md.nr_symbols, 0);
	assert_int_equal(read_bytes(text, sizeof(text), &md, NULL, 0), -ENOEXEC);
	assert_int_equal(read_bytes("", 0, &md, NULL, 0), -ENOEXEC);
}

/* One refusal: its return and the start of its reason */
static void refused(const struct v8_fopts *o, const char *why_start)
{
	struct v8_metadata md;
	char why[160];

	assert_int_equal(read_fixture(o, &md, why, sizeof(why)), -EINVAL);
	if (strncmp(why, why_start, strlen(why_start)))
		fail_msg("reason \"%s\", expected \"%s...\"", why, why_start);
}

static void test_missing(void **state)
{
	struct v8_fopts o = { .drop = "v8dbg_off_fp_function" };

	(void)state;
	refused(&o, "v8dbg_off_fp_function: missing");
	o.drop = "v8dbg_type_JSFunction__JS_FUNCTION_TYPE";
	refused(&o, "v8dbg_type_JSFunction__JS_FUNCTION_TYPE: missing");
	o.drop = "_ZN2v88internal7Version6major_E";
	refused(&o, "_ZN2v88internal7Version6major_E: missing");
	o.drop = "v8dbg_class_JSFunction__shared__SharedFunctionInfo";
	refused(&o, "v8dbg_class_JSFunction__shared__SharedFunctionInfo: missing");
}

/* V8's metadata are data: a function of a metadata's name is not read (nor counted) */
static void test_function_not_metadata(void **state)
{
	struct v8_fopts o = { .func = "v8dbg_off_fp_function" };
	struct v8_metadata md;
	char why[160];

	(void)state;
	refused(&o, "v8dbg_off_fp_function: missing");
	o.func = "v8dbg_off_fp_args"; /* an optional one: read without it */
	assert_int_equal(read_fixture(&o, &md, why, sizeof(why)), 0);
	assert_int_equal(md.nr_symbols, NODE20_NR - 4 - 1);
	assert_int_equal(md.nr_read, NODE20_NR - 1);
}

static void test_absurd(void **state)
{
	static const struct {
		const char *sym;
		int32_t v;
		const char *why;
	} cases[] = {
		{ "v8dbg_off_fp_function", -4104, "v8dbg_off_fp_function: frame offset -4104" },
		{ "v8dbg_off_fp_function", -12, "v8dbg_off_fp_function: frame offset -12" },
		{ "v8dbg_off_fp_function", -8, "v8dbg_off_fp_function: the context's slot" },
		{ "v8dbg_frametype_InterpretedFrame", 200,
		  "v8dbg_frametype_InterpretedFrame: frame type 200" },
		{ "v8dbg_frametype_EntryFrame", -1, "v8dbg_frametype_EntryFrame: frame type -1" },
		{ "v8dbg_type_Code__CODE_TYPE", 70000,
		  "v8dbg_type_Code__CODE_TYPE: instance type 70000" },
		{ "v8dbg_class_Script__name__Object", 1 << 20,
		  "v8dbg_class_Script__name__Object: field offset" },
		{ "v8dbg_class_Script__name__Object", -8,
		  "v8dbg_class_Script__name__Object: field offset -8" },
		{ "v8dbg_scopeinfo_idx_first_vars", 300,
		  "v8dbg_scopeinfo_idx_first_vars: index 300" },
		{ "v8dbg_SmiShiftSize", 17, "v8dbg_SmiShiftSize: 17 (31 or 0" },
		{ "v8dbg_SmiShiftSize", 40, "v8dbg_SmiShiftSize: 40 out of range" },
		{ "v8dbg_HeapObjectTag", 5, "v8dbg_HeapObjectTag: tag 5 under mask 3" },
		{ "v8dbg_HeapObjectTagMask", 0x100, "v8dbg_HeapObjectTag: tag 1 under mask 256" },
		{ "v8dbg_SmiTag", 1, "v8dbg_SmiTag: same tag as heap objects" },
		{ "v8dbg_SystemPointerSize", 4, "v8dbg_SystemPointerSize: 4, not a 64-bit build" },
		{ "v8dbg_TaggedSize", 2, "v8dbg_TaggedSize: size 2" },
		{ "v8dbg_StringEncodingMask", -8, "v8dbg_StringEncodingMask: -8 is negative" },
		{ "_ZN2v88internal7Version6major_E", 7, "V8 7.3: versions 8.1 and later" },
		{ "_ZN2v88internal7Version6build_E", 1 << 30,
		  "_ZN2v88internal7Version6build_E: version number" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct v8_fopts o = { .set = cases[i].sym, .set_value = cases[i].v };

		refused(&o, cases[i].why);
	}
}

static void test_bad_symbols(void **state)
{
	struct v8_fopts o = { .outside = "v8dbg_off_fp_context" };

	(void)state;
	refused(&o, "v8dbg_off_fp_context: value outside its section");
	o = (struct v8_fopts){ .size8 = "v8dbg_frametype_StubFrame" };
	refused(&o, "v8dbg_frametype_StubFrame: a 8-byte symbol");
}

/* Pointer compression (TaggedSize 4, SmiShiftSize 0) is read and said */
static void test_pointer_compression(void **state)
{
	struct v8_fsym syms[NODE20_NR];
	struct v8_fopts o = { .syms = syms, .nr = NODE20_NR };
	struct v8_metadata md;

	(void)state;
	memcpy(syms, node20_syms, sizeof(syms));
	for (size_t i = 0; i < NODE20_NR; i++) {
		if (!strcmp(syms[i].name, "v8dbg_TaggedSize"))
			syms[i].value = 4;
		if (!strcmp(syms[i].name, "v8dbg_SmiShiftSize"))
			syms[i].value = 0;
	}
	assert_int_equal(read_fixture(&o, &md, NULL, 0), 0);
	assert_true(md.pointer_compression);
	assert_int_equal(md.tagged_size, 4);
}

/* Every prefix of the fixture, and single flipped bytes: a return, no crash */
static void test_truncated(void **state)
{
	struct v8_fopts o = { 0 };
	struct v8_metadata md;
	size_t len;
	uint8_t *b = v8_fixture(&o, &len);
	char why[160];

	(void)state;
	for (size_t n = 0; n < len; n += 7)
		assert_true(read_bytes(b, n, &md, why, sizeof(why)) <= 0);
	for (size_t i = 0; i < len; i += 13) {
		b[i] ^= 0xa5;
		assert_true(read_bytes(b, len, &md, why, sizeof(why)) <= 0);
		b[i] ^= 0xa5;
	}
	assert_int_equal(read_bytes(b, len, &md, why, sizeof(why)), 0);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_node20),
		cmocka_unit_test(test_node18),
		cmocka_unit_test(test_node22),
		cmocka_unit_test(test_dynsym),
		cmocka_unit_test(test_versions),
		cmocka_unit_test(test_alternate_name),
		cmocka_unit_test(test_not_v8),
		cmocka_unit_test(test_missing),
		cmocka_unit_test(test_function_not_metadata),
		cmocka_unit_test(test_absurd),
		cmocka_unit_test(test_bad_symbols),
		cmocka_unit_test(test_pointer_compression),
		cmocka_unit_test(test_truncated),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

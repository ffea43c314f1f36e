/* SPDX-License-Identifier: MIT */
/*
 * Byte-level ELF fixtures for V8's postmortem metadata (v8_metadata.h): a
 * 64-bit little-endian ELF with .data (the symbols' values), .bss (those of
 * value 0, read as zeros), a symbol table (.symtab or .dynsym), .strtab and
 * .shstrtab, written by hand so that every byte a test or a fuzz seed varies
 * is known. node20_syms are the values node 20 (V8 11.3.244.8-node.38)
 * exports for the names the reader knows, read from /usr/bin/node with
 * readelf and the file's bytes; node18_syms and node22_syms those of node
 * 18 and 22.
 */
#ifndef BPFPROF_TESTS_V8_FIXTURE_H
#define BPFPROF_TESTS_V8_FIXTURE_H

#include <elf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct v8_fsym {
	const char *name;
	int32_t value;
};

static const struct v8_fsym node20_syms[] = {
	{ "_ZN2v88internal7Version6major_E", 11 },
	{ "_ZN2v88internal7Version6minor_E", 3 },
	{ "_ZN2v88internal7Version6build_E", 244 },
	{ "_ZN2v88internal7Version6patch_E", 8 },
	{ "v8dbg_HeapObjectTag", 1 },
	{ "v8dbg_HeapObjectTagMask", 3 },
	{ "v8dbg_SmiTag", 0 },
	{ "v8dbg_SmiTagMask", 1 },
	{ "v8dbg_SmiShiftSize", 31 },
	{ "v8dbg_TaggedSize", 8 },
	{ "v8dbg_SystemPointerSize", 8 },
	{ "v8dbg_off_fp_context", -8 },
	{ "v8dbg_off_fp_context_or_frame_type", -8 },
	{ "v8dbg_off_fp_function", -16 },
	{ "v8dbg_off_fp_bytecode_array", -32 },
	{ "v8dbg_off_fp_bytecode_offset", -40 },
	{ "v8dbg_off_fp_args", 16 },
	{ "v8dbg_InterpreterBytecodeOffsetRegister", 9 },
	{ "v8dbg_InterpreterBytecodeArrayRegister", 12 },
	{ "v8dbg_frametype_EntryFrame", 1 },
	{ "v8dbg_frametype_ConstructEntryFrame", 2 },
	{ "v8dbg_frametype_ExitFrame", 3 },
	{ "v8dbg_frametype_InterpretedFrame", 13 },
	{ "v8dbg_frametype_BaselineFrame", 14 },
	{ "v8dbg_frametype_MaglevFrame", 15 },
	{ "v8dbg_frametype_TurbofanFrame", 16 },
	{ "v8dbg_frametype_StubFrame", 17 },
	{ "v8dbg_frametype_BuiltinFrame", 24 },
	{ "v8dbg_frametype_BuiltinExitFrame", 25 },
	{ "v8dbg_frametype_InternalFrame", 22 },
	{ "v8dbg_frametype_ConstructFrame", 23 },
	{ "v8dbg_frametype_NativeFrame", 26 },
	{ "v8dbg_frametype_BuiltinContinuationFrame", 19 },
	{ "v8dbg_frametype_JavaScriptBuiltinContinuationFrame", 20 },
	{ "v8dbg_frametype_JavaScriptBuiltinContinuationWithCatchFrame", 21 },
	{ "v8dbg_frametype_TurbofanStubWithContextFrame", 18 },
	{ "v8dbg_type_JSFunction__JS_FUNCTION_TYPE", 2066 },
	{ "v8dbg_type_SharedFunctionInfo__SHARED_FUNCTION_INFO_TYPE", 262 },
	{ "v8dbg_type_Code__CODE_TYPE", 245 },
	{ "v8dbg_type_InstructionStream__INSTRUCTION_STREAM_TYPE", 252 },
	{ "v8dbg_type_BytecodeArray__BYTECODE_ARRAY_TYPE", 191 },
	{ "v8dbg_type_ByteArray__BYTE_ARRAY_TYPE", 190 },
	{ "v8dbg_type_FixedArray__FIXED_ARRAY_TYPE", 175 },
	{ "v8dbg_type_WeakFixedArray__WEAK_FIXED_ARRAY_TYPE", 240 },
	{ "v8dbg_type_Script__SCRIPT_TYPE", 167 },
	{ "v8dbg_type_ScopeInfo__SCOPE_INFO_TYPE", 261 },
	{ "v8dbg_type_Map__MAP_TYPE", 255 },
	{ "v8dbg_type_Oddball__ODDBALL_TYPE", 131 },
	{ "v8dbg_FirstNonstringType", 128 },
	{ "v8dbg_class_HeapObject__map__Map", 0 },
	{ "v8dbg_class_Map__instance_type__uint16_t", 12 },
	{ "v8dbg_class_JSFunction__shared__SharedFunctionInfo", 24 },
	{ "v8dbg_class_SharedFunctionInfo__function_data__Object", 8 },
	{ "v8dbg_class_SharedFunctionInfo__name_or_scope_info__Object", 16 },
	{ "v8dbg_class_SharedFunctionInfo__script_or_debug_info__HeapObject", 32 },
	{ "v8dbg_class_Script__name__Object", 16 },
	{ "v8dbg_class_Script__source__Object", 8 },
	{ "v8dbg_class_Script__line_ends__Object", 56 },
	{ "v8dbg_class_Code__deoptimization_data__FixedArray", 16 },
	{ "v8dbg_class_Code__source_position_table__ByteArray", 24 },
	{ "v8dbg_class_InstructionStream__instruction_start__uintptr_t", 16 },
	{ "v8dbg_class_BytecodeArray__data__uintptr_t", 54 },
	{ "v8dbg_class_FixedArrayBase__length__SMI", 8 },
	{ "v8dbg_class_FixedArray__data__uintptr_t", 16 },
	{ "v8dbg_class_String__length__int32_t", 12 },
	{ "v8dbg_class_SeqOneByteString__chars__char", 16 },
	{ "v8dbg_class_SeqTwoByteString__chars__char", 16 },
	{ "v8dbg_class_ConsString__first__String", 16 },
	{ "v8dbg_class_ConsString__second__String", 24 },
	{ "v8dbg_class_ThinString__actual__String", 16 },
	{ "v8dbg_class_SlicedString__parent__String", 16 },
	{ "v8dbg_class_SlicedString__offset__SMI", 24 },
	{ "v8dbg_StringRepresentationMask", 7 },
	{ "v8dbg_StringEncodingMask", 8 },
	{ "v8dbg_SeqStringTag", 0 },
	{ "v8dbg_ConsStringTag", 1 },
	{ "v8dbg_SlicedStringTag", 3 },
	{ "v8dbg_ThinStringTag", 5 },
	{ "v8dbg_ExternalStringTag", 2 },
	{ "v8dbg_OneByteStringTag", 8 },
	{ "v8dbg_TwoByteStringTag", 0 },
	{ "v8dbg_CodeKindFieldMask", 15 },
	{ "v8dbg_CodeKindFieldShift", 0 },
	{ "v8dbg_CodeKindBaseline", 11 },
	{ "v8dbg_CodeKindInterpretedFunction", 10 },
	{ "v8dbg_scopeinfo_idx_first_vars", 3 },
	{ "v8dbg_scopeinfo_idx_ncontextlocals", 2 },
	{ "v8dbg_scopeinfo_idx_nparams", 1 },
	{ "v8dbg_DeoptimizationDataInlinedFunctionCountIndex", 1 },
	{ "v8dbg_DeoptimizationDataLiteralArrayIndex", 2 },
	{ "v8dbg_DeoptimizationDataSharedFunctionInfoIndex", 6 },
	{ "v8dbg_DeoptimizationDataInliningPositionsIndex", 7 },
};

#define NODE20_NR (sizeof(node20_syms) / sizeof(node20_syms[0]))

/*
 * node 18.20.8 (V8 10.2.154.26) and 22.23.5 (V8 12.4.254.21), the official
 * builds (tools/fetch-node.sh), read the same way: the names the reader knows
 * with their values. 18: Code holds its instructions (Code's
 * instruction_start__uintptr_t is its header's size), JSFunction.code is a
 * CodeT, no DeoptimizationData slots; 22: Code apart from its
 * InstructionStream (instruction_start__Address, CodeWrapper), BytecodeArray
 * with a wrapper, no Code tables, no SharedFunctionInfo::function_data.
 */
static const struct v8_fsym node18_syms[] = {
	{ "_ZN2v88internal7Version6major_E", 10 },
	{ "_ZN2v88internal7Version6minor_E", 2 },
	{ "_ZN2v88internal7Version6build_E", 154 },
	{ "_ZN2v88internal7Version6patch_E", 26 },
	{ "v8dbg_CodeKindBaseline", 11 },
	{ "v8dbg_CodeKindFieldMask", 15 },
	{ "v8dbg_CodeKindFieldShift", 0 },
	{ "v8dbg_CodeKindInterpretedFunction", 10 },
	{ "v8dbg_ConsStringTag", 1 },
	{ "v8dbg_ExternalStringTag", 2 },
	{ "v8dbg_FirstNonstringType", 128 },
	{ "v8dbg_HeapObjectTag", 1 },
	{ "v8dbg_HeapObjectTagMask", 3 },
	{ "v8dbg_InterpreterBytecodeArrayRegister", 12 },
	{ "v8dbg_InterpreterBytecodeOffsetRegister", 9 },
	{ "v8dbg_OneByteStringTag", 8 },
	{ "v8dbg_SeqStringTag", 0 },
	{ "v8dbg_SlicedStringTag", 3 },
	{ "v8dbg_SmiShiftSize", 31 },
	{ "v8dbg_SmiTag", 0 },
	{ "v8dbg_SmiTagMask", 1 },
	{ "v8dbg_StringEncodingMask", 8 },
	{ "v8dbg_StringRepresentationMask", 7 },
	{ "v8dbg_SystemPointerSize", 8 },
	{ "v8dbg_TaggedSize", 8 },
	{ "v8dbg_ThinStringTag", 5 },
	{ "v8dbg_TwoByteStringTag", 0 },
	{ "v8dbg_class_BytecodeArray__data__uintptr_t", 56 },
	{ "v8dbg_class_Code__flags__uint32_t", 48 },
	{ "v8dbg_class_Code__instruction_size__int", 40 },
	{ "v8dbg_class_Code__instruction_start__uintptr_t", 128 },
	{ "v8dbg_class_ConsString__first__String", 16 },
	{ "v8dbg_class_ConsString__second__String", 24 },
	{ "v8dbg_class_ExternalString__resource__Object", 16 },
	{ "v8dbg_class_FixedArrayBase__length__SMI", 8 },
	{ "v8dbg_class_FixedArray__data__uintptr_t", 16 },
	{ "v8dbg_class_HeapObject__map__Map", 0 },
	{ "v8dbg_class_JSFunction__code__CodeT", 48 },
	{ "v8dbg_class_JSFunction__shared__SharedFunctionInfo", 24 },
	{ "v8dbg_class_Map__instance_type__uint16_t", 12 },
	{ "v8dbg_class_Script__line_ends__Object", 56 },
	{ "v8dbg_class_Script__name__Object", 16 },
	{ "v8dbg_class_Script__source__Object", 8 },
	{ "v8dbg_class_SeqOneByteString__chars__char", 16 },
	{ "v8dbg_class_SeqTwoByteString__chars__char", 16 },
	{ "v8dbg_class_SharedFunctionInfo__function_data__Object", 8 },
	{ "v8dbg_class_SharedFunctionInfo__name_or_scope_info__Object", 16 },
	{ "v8dbg_class_SharedFunctionInfo__script_or_debug_info__HeapObject", 32 },
	{ "v8dbg_class_SlicedString__offset__SMI", 24 },
	{ "v8dbg_class_SlicedString__parent__String", 16 },
	{ "v8dbg_class_String__length__int32_t", 12 },
	{ "v8dbg_class_ThinString__actual__String", 16 },
	{ "v8dbg_frametype_BaselineFrame", 13 },
	{ "v8dbg_frametype_BuiltinContinuationFrame", 16 },
	{ "v8dbg_frametype_BuiltinExitFrame", 22 },
	{ "v8dbg_frametype_BuiltinFrame", 21 },
	{ "v8dbg_frametype_ConstructEntryFrame", 2 },
	{ "v8dbg_frametype_ConstructFrame", 20 },
	{ "v8dbg_frametype_EntryFrame", 1 },
	{ "v8dbg_frametype_ExitFrame", 3 },
	{ "v8dbg_frametype_InternalFrame", 19 },
	{ "v8dbg_frametype_InterpretedFrame", 12 },
	{ "v8dbg_frametype_JavaScriptBuiltinContinuationFrame", 17 },
	{ "v8dbg_frametype_JavaScriptBuiltinContinuationWithCatchFrame", 18 },
	{ "v8dbg_frametype_NativeFrame", 23 },
	{ "v8dbg_frametype_OptimizedFrame", 14 },
	{ "v8dbg_frametype_StubFrame", 15 },
	{ "v8dbg_off_fp_args", 16 },
	{ "v8dbg_off_fp_bytecode_array", -32 },
	{ "v8dbg_off_fp_bytecode_offset", -40 },
	{ "v8dbg_off_fp_context", -8 },
	{ "v8dbg_off_fp_context_or_frame_type", -8 },
	{ "v8dbg_off_fp_function", -16 },
	{ "v8dbg_scopeinfo_idx_first_vars", 3 },
	{ "v8dbg_scopeinfo_idx_ncontextlocals", 2 },
	{ "v8dbg_scopeinfo_idx_nparams", 1 },
	{ "v8dbg_type_ByteArray__BYTE_ARRAY_TYPE", 194 },
	{ "v8dbg_type_BytecodeArray__BYTECODE_ARRAY_TYPE", 195 },
	{ "v8dbg_type_Code__CODE_TYPE", 240 },
	{ "v8dbg_type_FixedArray__FIXED_ARRAY_TYPE", 179 },
	{ "v8dbg_type_JSFunction__JS_FUNCTION_TYPE", 2065 },
	{ "v8dbg_type_Map__MAP_TYPE", 250 },
	{ "v8dbg_type_Oddball__ODDBALL_TYPE", 131 },
	{ "v8dbg_type_ScopeInfo__SCOPE_INFO_TYPE", 256 },
	{ "v8dbg_type_Script__SCRIPT_TYPE", 170 },
	{ "v8dbg_type_SharedFunctionInfo__SHARED_FUNCTION_INFO_TYPE", 257 },
	{ "v8dbg_type_WeakFixedArray__WEAK_FIXED_ARRAY_TYPE", 237 },
};

#define NODE18_NR (sizeof(node18_syms) / sizeof(node18_syms[0]))

static const struct v8_fsym node22_syms[] = {
	{ "_ZN2v88internal7Version6major_E", 12 },
	{ "_ZN2v88internal7Version6minor_E", 4 },
	{ "_ZN2v88internal7Version6build_E", 254 },
	{ "_ZN2v88internal7Version6patch_E", 21 },
	{ "v8dbg_CodeKindBaseline", 10 },
	{ "v8dbg_CodeKindFieldMask", 15 },
	{ "v8dbg_CodeKindFieldShift", 0 },
	{ "v8dbg_CodeKindInterpretedFunction", 9 },
	{ "v8dbg_ConsStringTag", 1 },
	{ "v8dbg_DeoptimizationDataInlinedFunctionCountIndex", 1 },
	{ "v8dbg_DeoptimizationDataInliningPositionsIndex", 7 },
	{ "v8dbg_DeoptimizationDataLiteralArrayIndex", 2 },
	{ "v8dbg_DeoptimizationDataSharedFunctionInfoIndex", 6 },
	{ "v8dbg_ExternalStringTag", 2 },
	{ "v8dbg_FirstJSFunctionType", 2066 },
	{ "v8dbg_FirstNonstringType", 128 },
	{ "v8dbg_HeapObjectTag", 1 },
	{ "v8dbg_HeapObjectTagMask", 3 },
	{ "v8dbg_InterpreterBytecodeArrayRegister", 12 },
	{ "v8dbg_InterpreterBytecodeOffsetRegister", 9 },
	{ "v8dbg_LastJSFunctionType", 2082 },
	{ "v8dbg_OneByteStringTag", 8 },
	{ "v8dbg_SeqStringTag", 0 },
	{ "v8dbg_SlicedStringTag", 3 },
	{ "v8dbg_SmiShiftSize", 31 },
	{ "v8dbg_SmiTag", 0 },
	{ "v8dbg_SmiTagMask", 1 },
	{ "v8dbg_StringEncodingMask", 8 },
	{ "v8dbg_StringRepresentationMask", 7 },
	{ "v8dbg_SystemPointerSize", 8 },
	{ "v8dbg_TaggedSize", 8 },
	{ "v8dbg_ThinStringTag", 5 },
	{ "v8dbg_TwoByteStringTag", 0 },
	{ "v8dbg_class_BytecodeArray__data__uintptr_t", 64 },
	{ "v8dbg_class_BytecodeArray__wrapper__Tagged_BytecodeWrapper_", 16 },
	{ "v8dbg_class_Code__flags__uint32_t", 48 },
	{ "v8dbg_class_Code__instruction_size__int", 52 },
	{ "v8dbg_class_Code__instruction_start__Address", 40 },
	{ "v8dbg_class_ConsString__first__String", 16 },
	{ "v8dbg_class_ConsString__second__String", 24 },
	{ "v8dbg_class_ExternalString__resource__Object", 16 },
	{ "v8dbg_class_FixedArrayBase__length__SMI", 8 },
	{ "v8dbg_class_FixedArray__data__uintptr_t", 16 },
	{ "v8dbg_class_HeapObject__map__Map", 0 },
	{ "v8dbg_class_InstructionStream__instruction_start__uintptr_t", 32 },
	{ "v8dbg_class_JSFunction__code__Tagged_Code_", 24 },
	{ "v8dbg_class_JSFunction__shared__SharedFunctionInfo", 32 },
	{ "v8dbg_class_Map__instance_type__uint16_t", 12 },
	{ "v8dbg_class_Script__line_ends__Object", 56 },
	{ "v8dbg_class_Script__name__Object", 16 },
	{ "v8dbg_class_Script__source__Object", 8 },
	{ "v8dbg_class_SeqOneByteString__chars__char", 16 },
	{ "v8dbg_class_SeqTwoByteString__chars__char", 16 },
	{ "v8dbg_class_SharedFunctionInfo__name_or_scope_info__Tagged_Object_", 16 },
	{ "v8dbg_class_SharedFunctionInfo__script__Tagged_HeapObject_", 32 },
	{ "v8dbg_class_SlicedString__offset__SMI", 24 },
	{ "v8dbg_class_SlicedString__parent__String", 16 },
	{ "v8dbg_class_String__length__int32_t", 12 },
	{ "v8dbg_class_ThinString__actual__String", 16 },
	{ "v8dbg_frametype_BaselineFrame", 14 },
	{ "v8dbg_frametype_BuiltinContinuationFrame", 19 },
	{ "v8dbg_frametype_BuiltinExitFrame", 26 },
	{ "v8dbg_frametype_BuiltinFrame", 25 },
	{ "v8dbg_frametype_ConstructEntryFrame", 2 },
	{ "v8dbg_frametype_ConstructFrame", 23 },
	{ "v8dbg_frametype_EntryFrame", 1 },
	{ "v8dbg_frametype_ExitFrame", 3 },
	{ "v8dbg_frametype_InternalFrame", 22 },
	{ "v8dbg_frametype_InterpretedFrame", 13 },
	{ "v8dbg_frametype_JavaScriptBuiltinContinuationFrame", 20 },
	{ "v8dbg_frametype_JavaScriptBuiltinContinuationWithCatchFrame", 21 },
	{ "v8dbg_frametype_MaglevFrame", 15 },
	{ "v8dbg_frametype_NativeFrame", 28 },
	{ "v8dbg_frametype_StubFrame", 17 },
	{ "v8dbg_frametype_TurbofanFrame", 16 },
	{ "v8dbg_frametype_TurbofanStubWithContextFrame", 18 },
	{ "v8dbg_off_fp_args", 16 },
	{ "v8dbg_off_fp_bytecode_array", -32 },
	{ "v8dbg_off_fp_bytecode_offset", -40 },
	{ "v8dbg_off_fp_context", -8 },
	{ "v8dbg_off_fp_context_or_frame_type", -8 },
	{ "v8dbg_off_fp_function", -16 },
	{ "v8dbg_scopeinfo_idx_first_vars", 3 },
	{ "v8dbg_scopeinfo_idx_ncontextlocals", 2 },
	{ "v8dbg_scopeinfo_idx_nparams", 1 },
	{ "v8dbg_type_ByteArray__BYTE_ARRAY_TYPE", 186 },
	{ "v8dbg_type_BytecodeArray__BYTECODE_ARRAY_TYPE", 205 },
	{ "v8dbg_type_CodeWrapper__CODE_WRAPPER_TYPE", 153 },
	{ "v8dbg_type_Code__CODE_TYPE", 206 },
	{ "v8dbg_type_FixedArray__FIXED_ARRAY_TYPE", 174 },
	{ "v8dbg_type_InstructionStream__INSTRUCTION_STREAM_TYPE", 210 },
	{ "v8dbg_type_JSFunction__JS_FUNCTION_TYPE", 2066 },
	{ "v8dbg_type_Map__MAP_TYPE", 264 },
	{ "v8dbg_type_Oddball__ODDBALL_TYPE", 131 },
	{ "v8dbg_type_ProtectedFixedArray__PROTECTED_FIXED_ARRAY_TYPE", 211 },
	{ "v8dbg_type_ScopeInfo__SCOPE_INFO_TYPE", 272 },
	{ "v8dbg_type_Script__SCRIPT_TYPE", 167 },
	{ "v8dbg_type_SharedFunctionInfo__SHARED_FUNCTION_INFO_TYPE", 274 },
	{ "v8dbg_type_TrustedByteArray__TRUSTED_BYTE_ARRAY_TYPE", 212 },
	{ "v8dbg_type_TrustedFixedArray__TRUSTED_FIXED_ARRAY_TYPE", 213 },
	{ "v8dbg_type_WeakFixedArray__WEAK_FIXED_ARRAY_TYPE", 247 },
};

#define NODE22_NR (sizeof(node22_syms) / sizeof(node22_syms[0]))
#define V8F_DATA_ADDR 0x5650000ull
#define V8F_BSS_ADDR 0x5700000ull
#define V8F_EMBEDDER "-node.38"

/* How a fixture departs from node 20's */
struct v8_fopts {
	const struct v8_fsym *syms; /* NULL: node20_syms */
	size_t nr;
	const char *drop; /* a symbol left out */
	const char *set; /* a symbol given value set_value */
	int32_t set_value;
	const char *size8; /* a symbol given st_size 8 */
	const char *outside; /* a symbol whose value is past .data */
	const char *func; /* a symbol typed a function (STT_FUNC), not data */
	bool dynsym; /* the table is .dynsym, not .symtab */
	bool no_embedder; /* no Version::embedder_ */
	uint64_t embedder_ptr; /* nonzero: embedder_ points there instead */
};

struct v8_fbuf {
	uint8_t *b;
	size_t len, cap;
};

static size_t v8f_put(struct v8_fbuf *f, const void *p, size_t n)
{
	size_t at = f->len;

	if (f->len + n > f->cap) {
		f->cap = (f->len + n) * 2 + 256;
		f->b = realloc(f->b, f->cap);
		if (!f->b)
			abort();
	}
	memcpy(f->b + f->len, p, n);
	f->len += n;
	return at;
}

static void v8f_align(struct v8_fbuf *f, size_t a)
{
	static const uint8_t zero[16];

	while (f->len % a)
		v8f_put(f, zero, 1);
}

/* The fixture's bytes (malloc'd, *len bytes) */
static uint8_t *v8_fixture(const struct v8_fopts *o, size_t *len)
{
	static const char shstr[] = "\0.data\0.bss\0.symtab\0.strtab\0.shstrtab\0.dynsym\0.dynstr";
	const struct v8_fsym *syms = o->syms ? o->syms : node20_syms;
	size_t nr = o->syms ? o->nr : NODE20_NR;
	struct v8_fbuf f = { 0 }, data = { 0 }, str = { 0 }, sym = { 0 };
	Elf64_Ehdr eh = { 0 };
	Elf64_Shdr sh[6] = { 0 };
	Elf64_Sym s = { 0 };
	uint32_t nbss = 0;
	uint64_t ptr;
	size_t at, str_at;

	v8f_put(&str, "", 1);
	v8f_put(&sym, &s, sizeof(s));
	for (size_t i = 0; i < nr + 1; i++) {
		const char *name = i < nr ? syms[i].name : "_ZN2v88internal7Version9embedder_E";
		int32_t v = i < nr ? syms[i].value : 0;

		if (i == nr && o->no_embedder)
			break;
		if (o->drop && !strcmp(name, o->drop))
			continue;
		if (o->set && !strcmp(name, o->set))
			v = o->set_value;
		memset(&s, 0, sizeof(s));
		s.st_name = (uint32_t)v8f_put(&str, name, strlen(name) + 1);
		s.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_OBJECT);
		if (i == nr) { /* embedder_: a pointer to its string, both in .data */
			v8f_align(&data, 8);
			at = v8f_put(&data, V8F_EMBEDDER, sizeof(V8F_EMBEDDER));
			ptr = o->embedder_ptr ? o->embedder_ptr : V8F_DATA_ADDR + at;
			v8f_align(&data, 8);
			s.st_value = V8F_DATA_ADDR + v8f_put(&data, &ptr, sizeof(ptr));
			s.st_size = 8;
			s.st_shndx = 1;
		} else if (!v) {
			s.st_value = V8F_BSS_ADDR + 4 * nbss++;
			s.st_size = 4;
			s.st_shndx = 2;
		} else {
			s.st_value = V8F_DATA_ADDR + v8f_put(&data, &v, sizeof(v));
			s.st_size = 4;
			s.st_shndx = 1;
		}
		if (o->size8 && !strcmp(name, o->size8))
			s.st_size = 8;
		if (o->outside && !strcmp(name, o->outside))
			s.st_value = V8F_DATA_ADDR + 0x100000;
		if (o->func && !strcmp(name, o->func))
			s.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
		v8f_put(&sym, &s, sizeof(s));
	}
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_EXEC;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_ehsize = sizeof(eh);
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = 6;
	eh.e_shstrndx = 5;
	v8f_put(&f, &eh, sizeof(eh));

	sh[1] = (Elf64_Shdr){ .sh_name = 1,
			      .sh_type = SHT_PROGBITS,
			      .sh_flags = SHF_ALLOC | SHF_WRITE,
			      .sh_addr = V8F_DATA_ADDR,
			      .sh_offset = f.len,
			      .sh_size = data.len,
			      .sh_addralign = 8 };
	v8f_put(&f, data.b, data.len);
	sh[2] = (Elf64_Shdr){ .sh_name = 7,
			      .sh_type = SHT_NOBITS,
			      .sh_flags = SHF_ALLOC | SHF_WRITE,
			      .sh_addr = V8F_BSS_ADDR,
			      .sh_offset = f.len,
			      .sh_size = 4 * nbss + 4,
			      .sh_addralign = 4 };
	v8f_align(&f, 8);
	sh[3] = (Elf64_Shdr){ .sh_name = o->dynsym ? 38 : 12,
			      .sh_type = o->dynsym ? SHT_DYNSYM : SHT_SYMTAB,
			      .sh_flags = o->dynsym ? SHF_ALLOC : 0,
			      .sh_offset = f.len,
			      .sh_size = sym.len,
			      .sh_link = 4,
			      .sh_info = 1,
			      .sh_addralign = 8,
			      .sh_entsize = sizeof(Elf64_Sym) };
	v8f_put(&f, sym.b, sym.len);
	str_at = f.len;
	v8f_put(&f, str.b, str.len);
	sh[4] = (Elf64_Shdr){ .sh_name = o->dynsym ? 46 : 20,
			      .sh_type = SHT_STRTAB,
			      .sh_offset = str_at,
			      .sh_size = str.len,
			      .sh_addralign = 1 };
	sh[5] = (Elf64_Shdr){ .sh_name = 28,
			      .sh_type = SHT_STRTAB,
			      .sh_offset = f.len,
			      .sh_size = sizeof(shstr),
			      .sh_addralign = 1 };
	v8f_put(&f, shstr, sizeof(shstr));
	v8f_align(&f, 8);
	((Elf64_Ehdr *)f.b)->e_shoff = f.len;
	v8f_put(&f, sh, sizeof(sh));
	free(data.b);
	free(str.b);
	free(sym.b);
	*len = f.len;
	return f.b;
}

#endif /* BPFPROF_TESTS_V8_FIXTURE_H */

// SPDX-License-Identifier: MIT
/*
 * V8's postmortem metadata from an ELF file (include/v8_metadata.h): the
 * v8dbg_* symbols of .dynsym then .symtab (the first of a name wins), each a
 * 4-byte int whose value is in its section's bytes (0 in .bss), matched
 * against the table below, range-checked, then the documented fallbacks for
 * what a version does not export.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "v8_metadata.h"

#define PFX "v8dbg_"
/* symbols read per table at most: node 20's .symtab has 107k */
#define MAX_SYMS (16u << 20)

/* What a value is, for its range check */
enum kind {
	K_FP, /* frame pointer offset: [-4096, 4096], pointer-aligned */
	K_FT, /* frame type: [0, 63] (a marker fits a byte) */
	K_TYPE, /* instance type: u16 */
	K_OFF, /* field offset in an object: [0, 4096) */
	K_IDX, /* slot index in an array: [0, 256) */
	K_MASK, /* bit mask or tag: non-negative */
	K_SHIFT, /* [0, 31] */
	K_REG, /* x86-64 / arm64 register number: [0, 31] */
	K_SIZE, /* 4 or 8 */
	K_VER, /* version number: [0, 99999] */
};

struct entry {
	const char *names; /* alternatives, '|'-separated, oldest V8 naming last */
	uint16_t off; /* of the int32_t in struct v8_metadata */
	uint8_t kind;
	bool required;
};

#define F(field) offsetof(struct v8_metadata, field)
#define C(cls, fld) PFX "class_" cls "__" fld
#define R(n, f, k)               \
	{                        \
		n, F(f), k, true \
	}
#define O(n, f, k)                \
	{                         \
		n, F(f), k, false \
	}
#define VER(n) "_ZN2v88internal7Version" n
/* v8::internal::interpreter::Bytecodes::kBytecodeSizes: baseline frames' bytecode walk */
#define BYTECODE_SIZES "_ZN2v88internal11interpreter9Bytecodes14kBytecodeSizesE"

static const struct entry table[] = {
	R(VER("6major_E"), major, K_VER),
	R(VER("6minor_E"), minor, K_VER),
	R(VER("6build_E"), build, K_VER),
	O(VER("6patch_E"), patch, K_VER),

	R(PFX "HeapObjectTag", heap_object_tag, K_MASK),
	R(PFX "HeapObjectTagMask", heap_object_tag_mask, K_MASK),
	R(PFX "SmiTag", smi_tag, K_MASK),
	R(PFX "SmiTagMask", smi_tag_mask, K_MASK),
	R(PFX "SmiShiftSize", smi_shift_size, K_SHIFT),
	O(PFX "TaggedSize", tagged_size, K_SIZE),
	O(PFX "SystemPointerSize", system_pointer_size, K_SIZE),

	R(PFX "off_fp_context", fp_context, K_FP),
	O(PFX "off_fp_context_or_frame_type", fp_context_or_frame_type, K_FP),
	R(PFX "off_fp_function", fp_function, K_FP),
	R(PFX "off_fp_bytecode_array", fp_bytecode_array, K_FP),
	R(PFX "off_fp_bytecode_offset", fp_bytecode_offset, K_FP),
	O(PFX "off_fp_args", fp_args, K_FP),
	O(PFX "InterpreterBytecodeOffsetRegister", reg_bytecode_offset, K_REG),
	O(PFX "InterpreterBytecodeArrayRegister", reg_bytecode_array, K_REG),

	R(PFX "frametype_EntryFrame", ft_entry, K_FT),
	R(PFX "frametype_ConstructEntryFrame", ft_construct_entry, K_FT),
	R(PFX "frametype_ExitFrame", ft_exit, K_FT),
	R(PFX "frametype_InterpretedFrame", ft_interpreted, K_FT),
	O(PFX "frametype_BaselineFrame", ft_baseline, K_FT),
	O(PFX "frametype_MaglevFrame", ft_maglev, K_FT),
	R(PFX "frametype_TurbofanFrame|" PFX "frametype_TurbofanJSFrame|" PFX
	      "frametype_OptimizedFrame",
	  ft_turbofan, K_FT),
	R(PFX "frametype_StubFrame", ft_stub, K_FT),
	O(PFX "frametype_BuiltinFrame", ft_builtin, K_FT),
	O(PFX "frametype_BuiltinExitFrame", ft_builtin_exit, K_FT),
	R(PFX "frametype_InternalFrame", ft_internal, K_FT),
	O(PFX "frametype_ConstructFrame", ft_construct, K_FT),
	O(PFX "frametype_NativeFrame", ft_native, K_FT),
	O(PFX "frametype_BuiltinContinuationFrame", ft_builtin_continuation, K_FT),
	O(PFX "frametype_JavaScriptBuiltinContinuationFrame", ft_js_builtin_continuation, K_FT),
	O(PFX "frametype_JavaScriptBuiltinContinuationWithCatchFrame",
	  ft_js_builtin_continuation_catch, K_FT),
	O(PFX "frametype_TurbofanStubWithContextFrame", ft_turbofan_stub_with_context, K_FT),

	R(PFX "type_JSFunction__JS_FUNCTION_TYPE|" PFX "FirstJSFunctionType", type_js_function,
	  K_TYPE),
	O(PFX "LastJSFunctionType", type_js_function_last, K_TYPE),
	R(PFX "type_SharedFunctionInfo__SHARED_FUNCTION_INFO_TYPE", type_shared_function_info,
	  K_TYPE),
	R(PFX "type_Code__CODE_TYPE", type_code, K_TYPE),
	O(PFX "type_InstructionStream__INSTRUCTION_STREAM_TYPE", type_instruction_stream, K_TYPE),
	R(PFX "type_BytecodeArray__BYTECODE_ARRAY_TYPE", type_bytecode_array, K_TYPE),
	R(PFX "type_ByteArray__BYTE_ARRAY_TYPE", type_byte_array, K_TYPE),
	R(PFX "type_FixedArray__FIXED_ARRAY_TYPE", type_fixed_array, K_TYPE),
	O(PFX "type_WeakFixedArray__WEAK_FIXED_ARRAY_TYPE", type_weak_fixed_array, K_TYPE),
	O(PFX "type_TrustedByteArray__TRUSTED_BYTE_ARRAY_TYPE", type_trusted_byte_array, K_TYPE),
	O(PFX "type_TrustedFixedArray__TRUSTED_FIXED_ARRAY_TYPE", type_trusted_fixed_array, K_TYPE),
	O(PFX "type_ProtectedFixedArray__PROTECTED_FIXED_ARRAY_TYPE", type_protected_fixed_array,
	  K_TYPE),
	O(PFX "type_CodeWrapper__CODE_WRAPPER_TYPE", type_code_wrapper, K_TYPE),
	O(PFX "type_SharedFunctionInfoWrapper__SHARED_FUNCTION_INFO_WRAPPER_TYPE",
	  type_shared_function_info_wrapper, K_TYPE),
	R(PFX "type_Script__SCRIPT_TYPE", type_script, K_TYPE),
	R(PFX "type_ScopeInfo__SCOPE_INFO_TYPE", type_scope_info, K_TYPE),
	O(PFX "type_Map__MAP_TYPE", type_map, K_TYPE),
	O(PFX "type_Oddball__ODDBALL_TYPE", type_oddball, K_TYPE),
	R(PFX "FirstNonstringType", type_first_nonstring, K_TYPE),

	O(C("HeapObject", "map__Map") "|" C("HeapObject", "map__Tagged_Map_"), heap_object_map,
	  K_OFF),
	R(C("Map", "instance_type__uint16_t"), map_instance_type, K_OFF),
	R(C("JSFunction", "shared__SharedFunctionInfo") "|" C("JSFunction",
							      "shared__Tagged_SharedFunctionInfo_"),
	  js_function_shared, K_OFF),
	O(C("JSFunction", "code__Code") "|" C("JSFunction", "code__Tagged_Code_") "|" C(
		  "JSFunction", "code__CodeT"),
	  js_function_code, K_OFF),
	O(C("SharedFunctionInfo", "function_data__Object") "|" C("SharedFunctionInfo",
								 "function_data__Tagged_Object_"),
	  sfi_function_data, K_OFF),
	R(C("SharedFunctionInfo", "name_or_scope_info__Object") "|" C(
		  "SharedFunctionInfo",
		  "name_or_scope_info__Tagged_Object_") "|" C("SharedFunctionInfo",
							      "name_or_scope_info__Tagged_NameOrScopeInfoT_"),
	  sfi_name_or_scope_info, K_OFF),
	R(C("SharedFunctionInfo", "script_or_debug_info__HeapObject") "|" C(
		  "SharedFunctionInfo",
		  "script_or_debug_info__Object") "|" C("SharedFunctionInfo",
							"script__Tagged_HeapObject_"),
	  sfi_script_or_debug_info, K_OFF),
	R(C("Script", "name__Object") "|" C("Script", "name__Tagged_Object_"), script_name, K_OFF),
	R(C("Script", "source__Object") "|" C("Script", "source__Tagged_Object_"), script_source,
	  K_OFF),
	O(C("Script", "line_ends__Object") "|" C("Script", "line_ends__Tagged_Object_"),
	  script_line_ends, K_OFF),
	O(C("Code", "deoptimization_data__FixedArray") "|" C(
		  "Code", "deoptimization_data__Tagged_FixedArray_"),
	  code_deoptimization_data, K_OFF),
	O(C("Code", "source_position_table__ByteArray") "|" C(
		  "Code", "source_position_table__Tagged_ByteArray_"),
	  code_source_position_table, K_OFF),
	/* the shape of Code by the type V8 names: a pointer field, or the header's size */
	O(C("Code", "instruction_start__Address"), code_instruction_start, K_OFF),
	O(C("Code", "instruction_start__uintptr_t"), code_header_size, K_OFF),
	O(C("Code", "instruction_size__int"), code_instruction_size, K_OFF),
	O(C("Code", "flags__uint32_t"), code_flags, K_OFF),
	O(C("InstructionStream", "instruction_start__uintptr_t"),
	  instruction_stream_instruction_start, K_OFF),
	R(C("BytecodeArray", "data__uintptr_t"), bytecode_array_data, K_OFF),
	O(C("BytecodeArray", "wrapper__Tagged_BytecodeWrapper_"), bytecode_array_wrapper, K_OFF),
	O(C("BytecodeArray", "source_position_table__Object") "|" C(
		  "BytecodeArray", "source_position_table__Tagged_HeapObject_"),
	  bytecode_array_source_position_table, K_OFF),
	R(C("FixedArrayBase", "length__SMI"), fixed_array_length, K_OFF),
	R(C("FixedArray", "data__uintptr_t"), fixed_array_data, K_OFF),
	R(C("String", "length__int32_t"), string_length, K_OFF),
	R(C("SeqOneByteString", "chars__char"), seq_one_byte_chars, K_OFF),
	R(C("SeqTwoByteString", "chars__char"), seq_two_byte_chars, K_OFF),
	O(C("ConsString", "first__String") "|" C("ConsString", "first__Tagged_String_"), cons_first,
	  K_OFF),
	O(C("ConsString", "second__String") "|" C("ConsString", "second__Tagged_String_"),
	  cons_second, K_OFF),
	O(C("ThinString", "actual__String") "|" C("ThinString", "actual__Tagged_String_"),
	  thin_actual, K_OFF),
	O(C("SlicedString", "parent__String") "|" C("SlicedString", "parent__Tagged_String_"),
	  sliced_parent, K_OFF),
	O(C("SlicedString", "offset__SMI"), sliced_offset, K_OFF),
	O(C("ExternalString", "resource__Object"), external_resource, K_OFF),

	R(PFX "StringRepresentationMask", string_representation_mask, K_MASK),
	R(PFX "StringEncodingMask", string_encoding_mask, K_MASK),
	R(PFX "SeqStringTag", seq_string_tag, K_MASK),
	O(PFX "ConsStringTag", cons_string_tag, K_MASK),
	O(PFX "SlicedStringTag", sliced_string_tag, K_MASK),
	O(PFX "ThinStringTag", thin_string_tag, K_MASK),
	O(PFX "ExternalStringTag", external_string_tag, K_MASK),
	R(PFX "OneByteStringTag", one_byte_string_tag, K_MASK),
	R(PFX "TwoByteStringTag", two_byte_string_tag, K_MASK),

	O(PFX "CodeKindFieldMask", code_kind_mask, K_MASK),
	O(PFX "CodeKindFieldShift", code_kind_shift, K_SHIFT),
	O(PFX "CodeKindBaseline", code_kind_baseline, K_MASK),
	O(PFX "CodeKindInterpretedFunction", code_kind_interpreted, K_MASK),

	R(PFX "scopeinfo_idx_first_vars", scope_info_first_vars, K_IDX),
	R(PFX "scopeinfo_idx_ncontextlocals", scope_info_ncontextlocals, K_IDX),
	O(PFX "scopeinfo_idx_nparams", scope_info_nparams, K_IDX),
	O(PFX "DeoptimizationDataInlinedFunctionCountIndex", deopt_inlined_count, K_IDX),
	O(PFX "DeoptimizationDataLiteralArrayIndex", deopt_literal_array, K_IDX),
	O(PFX "DeoptimizationDataSharedFunctionInfoIndex", deopt_shared_function_info, K_IDX),
	O(PFX "DeoptimizationDataInliningPositionsIndex", deopt_inlining_positions, K_IDX),
	O(PFX "DeoptimizationDataWrappedSharedFunctionInfoIndex",
	  deopt_wrapped_shared_function_info, K_IDX),
};

#define NR_ENTRIES (sizeof(table) / sizeof(table[0]))
#define EMBEDDER VER("9embedder_E")

struct reader {
	Elf *e;
	struct v8_metadata *md;
	bool seen[NR_ENTRIES];
	GElf_Sym embedder;
	bool have_embedder;
	char *why;
	size_t why_size;
};

static int fail(struct reader *r, const char *fmt, ...)
{
	va_list ap;

	if (r->why && r->why_size) {
		va_start(ap, fmt);
		vsnprintf(r->why, r->why_size, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static int32_t *slot(struct v8_metadata *md, const struct entry *en)
{
	return (int32_t *)((char *)md + en->off);
}

/* The entry named name (an alternative of its names), or -1 */
static int lookup(const char *name)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < NR_ENTRIES; i++) {
		const char *p = table[i].names;

		while (*p) {
			const char *bar = strchr(p, '|');
			size_t n = bar ? (size_t)(bar - p) : strlen(p);

			if (n == len && !memcmp(p, name, n))
				return (int)i;
			p += n + (bar ? 1 : 0);
		}
	}
	return -1;
}

/*
 * n bytes at virtual address (or, in a relocatable file, section offset)
 * addr of section shndx into out: 0, or -1 when outside its bytes. A
 * SHT_NOBITS section (.bss) reads as zeros.
 */
static int section_bytes(Elf *e, size_t shndx, uint64_t addr, void *out, size_t n)
{
	Elf_Scn *scn;
	Elf_Data *d;
	GElf_Shdr sh;
	uint64_t at;

	if (shndx == SHN_UNDEF || shndx >= SHN_LORESERVE)
		return -1;
	scn = elf_getscn(e, shndx);
	if (!scn || !gelf_getshdr(scn, &sh) || addr < sh.sh_addr ||
	    addr - sh.sh_addr > sh.sh_size || sh.sh_size - (addr - sh.sh_addr) < n)
		return -1;
	if (sh.sh_type == SHT_NOBITS) {
		memset(out, 0, n);
		return 0;
	}
	d = elf_rawdata(scn, NULL);
	at = addr - sh.sh_addr;
	if (!d || !d->d_buf || d->d_size < n || at > d->d_size - n)
		return -1;
	memcpy(out, (const char *)d->d_buf + at, n);
	return 0;
}

/* The section of an allocated address (non-relocatable files), 0 if none */
static size_t section_of(Elf *e, uint64_t addr, size_t n)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_ALLOC) && addr >= sh.sh_addr &&
		    addr - sh.sh_addr < sh.sh_size && sh.sh_size - (addr - sh.sh_addr) >= n)
			return elf_ndxscn(scn);
	}
	return 0;
}

static int take(struct reader *r, int idx, const char *name, const GElf_Sym *s)
{
	const struct entry *en = &table[idx];
	int32_t v;

	if (r->seen[idx])
		return 0; /* .dynsym's, read first, stands */
	if (s->st_size != sizeof(v))
		return fail(r, "%s: a %llu-byte symbol, not an int", name,
			    (unsigned long long)s->st_size);
	if (section_bytes(r->e, s->st_shndx, s->st_value, &v, sizeof(v)))
		return fail(r, "%s: value outside its section", name);
	switch (en->kind) {
	case K_FP:
		if (v < -4096 || v > 4096 || v % 8)
			return fail(r, "%s: frame offset %d out of range", name, v);
		break;
	case K_FT:
		if (v < 0 || v > 63)
			return fail(r, "%s: frame type %d out of range", name, v);
		break;
	case K_TYPE:
		if (v < 0 || v > 0xffff)
			return fail(r, "%s: instance type %d out of range", name, v);
		break;
	case K_OFF:
		if (v < 0 || v >= 4096)
			return fail(r, "%s: field offset %d out of range", name, v);
		break;
	case K_IDX:
		if (v < 0 || v >= 256)
			return fail(r, "%s: index %d out of range", name, v);
		break;
	case K_MASK:
		if (v < 0)
			return fail(r, "%s: %d is negative", name, v);
		break;
	case K_SHIFT:
	case K_REG:
		if (v < 0 || v > 31)
			return fail(r, "%s: %d out of range", name, v);
		break;
	case K_SIZE:
		if (v != 4 && v != 8)
			return fail(r, "%s: size %d is neither 4 nor 8", name, v);
		break;
	case K_VER:
		if (v < 0 || v > 99999)
			return fail(r, "%s: version number %d out of range", name, v);
		break;
	}
	*slot(r->md, en) = v;
	r->seen[idx] = true;
	r->md->nr_read++;
	return 0;
}

/* symbols whose name is fetched ahead of the one looked at */
#define SCAN_AHEAD 16

/* A 64-bit file's symbols in memory form, whose names can be fetched ahead; NULL if not */
static const Elf64_Sym *syms_ahead(Elf *e, const Elf_Data *d, const Elf_Data *names)
{
	if (gelf_getclass(e) != ELFCLASS64 || !d || !d->d_buf || d->d_type != ELF_T_SYM ||
	    (uintptr_t)d->d_buf % _Alignof(Elf64_Sym) || !names || !names->d_buf)
		return NULL;
	return d->d_buf;
}

/* One symbol table: its v8dbg_ count into *count, the table's values into r */
static int scan(struct reader *r, Elf_Scn *scn, const GElf_Shdr *sh, uint32_t *count)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t n, ent = gelf_fsize(r->e, ELF_T_SYM, 1, EV_CURRENT);
	Elf_Scn *strscn = elf_getscn(r->e, sh->sh_link);
	Elf_Data *names = strscn ? elf_rawdata(strscn, NULL) : NULL;
	const Elf64_Sym *ahead = syms_ahead(r->e, d, names);

	*count = 0;
	if (!d || !ent)
		return 0;
	/* by the symbol's real size, not the header's sh_entsize (a forged one) */
	n = d->d_size / ent;
	if (n > MAX_SYMS)
		n = MAX_SYMS;
	for (size_t i = 1; i < n; i++) {
		GElf_Sym s;
		const char *name;
		int idx, err;

		/*
		 * Names are scattered over megabytes (node: 12 MB): a miss each.
		 * Asking for the one SCAN_AHEAD symbols on lets the misses overlap.
		 */
		if (ahead && i + SCAN_AHEAD < n &&
		    ELF64_ST_TYPE(ahead[i + SCAN_AHEAD].st_info) != STT_FUNC &&
		    ahead[i + SCAN_AHEAD].st_name < names->d_size)
			__builtin_prefetch((const char *)names->d_buf +
					   ahead[i + SCAN_AHEAD].st_name);
		if (!gelf_getsym(d, (int)i, &s) || !s.st_name)
			continue;
		/*
		 * V8's metadata are data (int constants, a table, a pointer): a
		 * function's name is never one, and node has 154,000 of them in
		 * 12 MB of names, each a cache miss to read.
		 */
		if (GELF_ST_TYPE(s.st_info) == STT_FUNC)
			continue;
		name = elf_strptr(r->e, sh->sh_link, s.st_name);
		if (!name)
			continue;
		if (!strncmp(name, PFX, sizeof(PFX) - 1)) {
			(*count)++;
		} else if (!strcmp(name, BYTECODE_SIZES)) {
			/* const data: its bytes are the file's; 3 rows (operand scales 1, 2, 4) */
			if (!r->md->nr_bytecodes && s.st_size && s.st_size % 3 == 0 &&
			    s.st_size <= sizeof(r->md->bytecode_sizes) &&
			    !section_bytes(r->e, s.st_shndx, s.st_value, r->md->bytecode_sizes,
					   s.st_size))
				r->md->nr_bytecodes = (uint32_t)(s.st_size / 3);
			continue;
		} else if (name[0] != '_' || strncmp(name, VER(""), sizeof(VER("")) - 1)) {
			continue;
		}
		if (!strcmp(name, EMBEDDER)) {
			if (!r->have_embedder)
				r->embedder = s;
			r->have_embedder = true;
			continue;
		}
		idx = lookup(name);
		if (idx >= 0 && (err = take(r, idx, name, &s)))
			return err;
	}
	return 0;
}

/* Version::embedder_: a pointer to a short string; "" where it cannot be read (PIE: relocated) */
static void read_embedder(struct reader *r)
{
	char *out = r->md->embedder;
	uint64_t ptr;
	size_t shndx, i;

	out[0] = 0;
	if (!r->have_embedder || r->embedder.st_size != sizeof(ptr) ||
	    section_bytes(r->e, r->embedder.st_shndx, r->embedder.st_value, &ptr, sizeof(ptr)) ||
	    !ptr || !(shndx = section_of(r->e, ptr, 1)))
		return;
	for (i = 0; i + 1 < sizeof(r->md->embedder); i++) {
		char c;

		if (section_bytes(r->e, shndx, ptr + i, &c, 1))
			break;
		if (!c) {
			out[i] = 0;
			return;
		}
		/* "-node.38": anything else is not a version suffix */
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      c == '-' || c == '.' || c == '_' || c == '+'))
			break;
		out[i] = c;
	}
	out[0] = 0; /* too long, or not text */
}

static bool at_least(const struct v8_metadata *md, int major, int minor, int build)
{
	if (md->major != major)
		return md->major > major;
	if (md->minor != minor)
		return md->minor > minor;
	return md->build >= build;
}

/*
 * What the metadata lacks, from the fallbacks the OpenTelemetry profiler
 * uses (interpreter/nodev8/v8.go), each checked against live objects of
 * node 18 (V8 10.2), 20 (11.3) and 22 (12.4): only within the versions, or
 * for the object shapes the metadata shows, they are known for
 * (docs/INTERPRETERS.md, "What differs between versions").
 */
static void derive(struct v8_metadata *md)
{
	int32_t ts;

	if (md->fp_context_or_frame_type == V8MD_ABSENT)
		md->fp_context_or_frame_type = md->fp_context;
	if (md->heap_object_map == V8MD_ABSENT)
		md->heap_object_map = 0;
	if (md->system_pointer_size == V8MD_ABSENT)
		md->system_pointer_size = 8;
	if (md->tagged_size == V8MD_ABSENT)
		md->tagged_size = md->system_pointer_size;
	md->pointer_compression = md->tagged_size == 4;
	ts = md->tagged_size;
	/* JS_CLASS_CONSTRUCTOR_TYPE is the last closure type: JSFunction + 15 on 11.3 */
	if (md->type_js_function_last == V8MD_ABSENT)
		md->type_js_function_last = md->type_js_function + 15;
	/*
	 * JSFunction::code sits next to shared: after it before 11.7.368,
	 * before it since; 13.x (leaptiering, node 24) has a dispatch handle
	 * there instead, an index into a table the metadata does not give:
	 * no Code, so frames without code offsets (interpreted ones keep theirs)
	 */
	if (md->js_function_code == V8MD_ABSENT && md->major < 13) {
		md->js_function_code = at_least(md, 11, 7, 368) ? md->js_function_shared - 8 :
								  md->js_function_shared + 24;
		md->js_function_code_derived = true;
	}
	/* Code (ex CodeDataContainer) of 11.1.204 to 11.x: start pointer, flags, size after spt */
	if (md->code_instruction_start == V8MD_ABSENT && md->code_header_size == V8MD_ABSENT &&
	    md->code_source_position_table >= 0 && at_least(md, 11, 1, 204) && md->major == 11) {
		md->code_instruction_start = md->code_source_position_table + 16;
		md->code_flags = md->code_source_position_table + 24;
		md->code_instruction_size = md->code_source_position_table + 32;
		md->code_fields_derived = true;
	}
	/*
	 * Code's deoptimization data (or a baseline Code's BytecodeArray) and
	 * source-position table (a baseline Code's bytecode offsets), where
	 * the metadata lacks them, by the shape of Code it shows (OTel's
	 * fallbacks; checked on live objects of node 18 and 22):
	 * - with a CodeWrapper type (12.x): deoptimization data, positions,
	 *   wrapper, InstructionStream, then the instruction start pointer;
	 * - instructions inline (Code__instruction_start__uintptr_t, before
	 *   11.1): relocation info, deoptimization data, positions, the
	 *   CodeDataContainer, then the instruction size.
	 */
	if (md->code_source_position_table == V8MD_ABSENT) {
		if (md->code_instruction_start >= 3 * ts && md->type_code_wrapper >= 0)
			md->code_source_position_table = md->code_instruction_start - 3 * ts;
		else if (md->code_header_size >= 0 && md->code_instruction_start == V8MD_ABSENT &&
			 md->code_instruction_size >= 2 * ts)
			md->code_source_position_table = md->code_instruction_size - 2 * ts;
		md->code_tables_derived = md->code_source_position_table != V8MD_ABSENT;
	}
	if (md->code_deoptimization_data == V8MD_ABSENT && md->code_tables_derived &&
	    md->code_source_position_table >= ts)
		md->code_deoptimization_data = md->code_source_position_table - ts;
	/*
	 * BytecodeArray's source positions: after its wrapper where it has one
	 * (12.x: length, wrapper, positions, handler table, constant pool),
	 * else the third field after the length (constant pool, handler table,
	 * positions: "lost in V8 9.4", OTel; checked on node 18 and 20)
	 */
	if (md->bytecode_array_source_position_table == V8MD_ABSENT) {
		md->bytecode_array_source_position_table = md->bytecode_array_wrapper >= 0 ?
								   md->bytecode_array_wrapper + ts :
								   md->fixed_array_length + 3 * ts;
		md->bytecode_spt_derived = true;
	}
	/* DeoptimizationData's slots, exported since 11.x, the same since 9.x (OTel; node 18) */
	if (md->deopt_inlined_count == V8MD_ABSENT && md->deopt_literal_array == V8MD_ABSENT &&
	    md->deopt_shared_function_info == V8MD_ABSENT &&
	    md->deopt_wrapped_shared_function_info == V8MD_ABSENT &&
	    md->deopt_inlining_positions == V8MD_ABSENT) {
		md->deopt_inlined_count = 1;
		md->deopt_literal_array = 2;
		md->deopt_shared_function_info = 6;
		md->deopt_inlining_positions = 7;
		md->deopt_indexes_derived = true;
	}
	/* "changing with V8_SANDBOX, but Node doesn't turn that on" (OTel, 12.x) */
	if (md->sfi_function_data == V8MD_ABSENT)
		md->sfi_function_data = 8;
}

/* Relations between values that each passed its own range */
static int cross_check(struct reader *r)
{
	struct v8_metadata *md = r->md;

	if (md->major < 8 || md->major > 99)
		return fail(r, "V8 %d.%d: versions 8.1 and later are known", md->major, md->minor);
	if (md->system_pointer_size != 8)
		return fail(r, PFX "SystemPointerSize: %d, not a 64-bit build",
			    md->system_pointer_size);
	if (!md->heap_object_tag_mask || md->heap_object_tag_mask > 7 ||
	    (md->heap_object_tag & ~md->heap_object_tag_mask))
		return fail(r, PFX "HeapObjectTag: tag %d under mask %d", md->heap_object_tag,
			    md->heap_object_tag_mask);
	if (!md->smi_tag_mask || md->smi_tag_mask > 7 || (md->smi_tag & ~md->smi_tag_mask))
		return fail(r, PFX "SmiTag: tag %d under mask %d", md->smi_tag, md->smi_tag_mask);
	if (md->smi_tag == md->heap_object_tag)
		return fail(r, PFX "SmiTag: same tag as heap objects (%d)", md->smi_tag);
	if (md->smi_shift_size != 31 && md->smi_shift_size != 0)
		return fail(r, PFX "SmiShiftSize: %d (31 or 0 are known)", md->smi_shift_size);
	if (md->fp_function == md->fp_context)
		return fail(r, PFX "off_fp_function: the context's slot (%d)", md->fp_function);
	if (md->js_function_code != V8MD_ABSENT &&
	    (md->js_function_code < 0 || md->js_function_code >= 4096))
		return fail(r, "JSFunction::code: derived offset %d out of range",
			    md->js_function_code);
	return 0;
}

const char *v8_metadata__version(const struct v8_metadata *md, char *buf, size_t size)
{
	if (md->patch > 0)
		snprintf(buf, size, "%d.%d.%d.%d%s", md->major, md->minor, md->build, md->patch,
			 md->embedder);
	else
		snprintf(buf, size, "%d.%d.%d%s", md->major, md->minor, md->build, md->embedder);
	return buf;
}

int v8_metadata__read(int fd, struct v8_metadata *md, char *why, size_t why_size)
{
	struct reader r = { .md = md, .why = why, .why_size = why_size };
	uint32_t count, best = 0;
	int err = 0;

	memset(md, 0, sizeof(*md));
	if (why && why_size)
		why[0] = 0;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOEXEC;
	r.e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!r.e || elf_kind(r.e) != ELF_K_ELF) {
		elf_end(r.e);
		return -ENOEXEC;
	}
	for (size_t i = 0; i < NR_ENTRIES; i++)
		*slot(md, &table[i]) = V8MD_ABSENT;
	/* .dynsym first (what the loader exports), then .symtab */
	for (int pass = 0; pass < 2 && !err; pass++) {
		Elf_Scn *scn = NULL;

		while (!err && (scn = elf_nextscn(r.e, scn))) {
			GElf_Shdr sh;

			if (!gelf_getshdr(scn, &sh) ||
			    sh.sh_type != (pass ? SHT_SYMTAB : SHT_DYNSYM))
				continue;
			err = scan(&r, scn, &sh, &count);
			if (count > best)
				best = count;
		}
	}
	md->nr_symbols = best;
	if (!err && !best)
		err = -ENOENT;
	if (!err &&
	    (gelf_getclass(r.e) != ELFCLASS64 || elf_getident(r.e, NULL)[EI_DATA] != ELFDATA2LSB))
		err = fail(&r, "not a 64-bit little-endian file");
	for (size_t i = 0; !err && i < NR_ENTRIES; i++)
		if (table[i].required && !r.seen[i]) {
			const char *bar = strchr(table[i].names, '|');

			err = fail(&r, "%.*s: missing",
				   (int)(bar ? (size_t)(bar - table[i].names) :
					       strlen(table[i].names)),
				   table[i].names);
		}
	if (!err) {
		read_embedder(&r);
		derive(md);
		err = cross_check(&r);
	}
	elf_end(r.e);
	return err;
}

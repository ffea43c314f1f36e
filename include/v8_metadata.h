/* SPDX-License-Identifier: MIT */
/*
 * V8's postmortem metadata: the v8dbg_* integers that V8's
 * tools/gen-postmortem-metadata.py compiles into every build that keeps them
 * (node exports 531 in node 20), plus v8::internal::Version's numbers. They
 * give, for the build at hand, the frame layout below the frame pointer, the
 * frame-type markers, the heap object tags, instance types and field offsets
 * a JavaScript frame is named through (JSFunction -> SharedFunctionInfo ->
 * name / Script -> name, source, line ends; Code / BytecodeArray and their
 * source-position tables). Nothing of a V8 build is compiled into bpfprof:
 * each value comes from the ELF file's own .dynsym/.symtab and its section
 * data (.data; .bss symbols are 0).
 *
 * The file belongs to an observed process and may be forged: every symbol,
 * section and value is bounds-checked and every value range-checked; an
 * unusable build is refused with the reason.
 *
 * Refs: V8 tools/gen-postmortem-metadata.py, src/execution/frame-constants.h,
 * frames.h (TypeToMarker: t << 1); the OpenTelemetry eBPF profiler's
 * interpreter/nodev8/v8.go (alternate names across versions, fallbacks for
 * fields the metadata lacks); ELF gABI (symbol table, sections).
 */
#ifndef BPFPROF_V8_METADATA_H
#define BPFPROF_V8_METADATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* An optional value the build does not export (and bpfprof could not derive) */
#define V8MD_ABSENT INT32_MIN

/*
 * What the BPF walk and the namer need of one V8 build. Offsets in bytes;
 * fp_* are relative to the frame pointer (negative: below it); type_* are
 * instance types (Map::instance_type); ft_* are StackFrame::Type values,
 * stored in a frame's context slot as the marker ft << 1 (low bit 0, while
 * a context is a tagged pointer, low bit 1). Optional values are V8MD_ABSENT
 * when missing; *_derived says a value came from a documented fallback.
 */
struct v8_metadata {
	/* Version::major_, minor_, build_, patch_; embedder_ ("-node.38") or "" */
	int32_t major, minor, build, patch;
	char embedder[32];
	/* v8dbg_* data symbols in the file (the larger of its .dynsym and .symtab
	 * counts; functions are not looked at) */
	uint32_t nr_symbols;
	/* the values of the table (v8_metadata.c) read from the file */
	uint32_t nr_read;

	/* tagging (include/v8-internal.h): Smi = value << (smi_shift_size + 1) */
	int32_t heap_object_tag, heap_object_tag_mask, smi_tag, smi_tag_mask, smi_shift_size;
	int32_t tagged_size, system_pointer_size;
	bool pointer_compression; /* tagged_size 4: fields hold 32-bit offsets from the cage base */

	/* frame layout (frame-constants.h) */
	int32_t fp_context, fp_context_or_frame_type, fp_function;
	int32_t fp_bytecode_array, fp_bytecode_offset, fp_args;
	/* registers of the interpreter (a leaf Ignition handler's live bytecode offset) */
	int32_t reg_bytecode_offset, reg_bytecode_array;

	/* frame types (frames.h STACK_FRAME_TYPE_LIST) */
	int32_t ft_entry, ft_construct_entry, ft_exit, ft_interpreted, ft_baseline, ft_maglev;
	int32_t ft_turbofan; /* TurbofanFrame, OptimizedFrame before 9.x */
	int32_t ft_stub, ft_builtin, ft_builtin_exit, ft_internal, ft_construct, ft_native;
	int32_t ft_builtin_continuation, ft_js_builtin_continuation;
	int32_t ft_js_builtin_continuation_catch, ft_turbofan_stub_with_context;

	/* instance types (instance-type.h) */
	int32_t type_js_function, type_js_function_last; /* [first, last] of closures */
	int32_t type_shared_function_info, type_code, type_instruction_stream;
	int32_t type_bytecode_array, type_byte_array, type_fixed_array, type_weak_fixed_array;
	int32_t type_trusted_byte_array, type_trusted_fixed_array, type_protected_fixed_array;
	/* 12.x: CodeWrapper (a Code's shape: see code_instruction_start), 13.x: the SFI's wrapper */
	int32_t type_code_wrapper, type_shared_function_info_wrapper;
	int32_t type_script, type_scope_info, type_map, type_oddball, type_first_nonstring;

	/* fields */
	int32_t heap_object_map, map_instance_type;
	int32_t js_function_shared, js_function_code;
	int32_t sfi_function_data, sfi_name_or_scope_info, sfi_script_or_debug_info;
	int32_t script_name, script_source, script_line_ends;
	int32_t code_deoptimization_data, code_source_position_table;
	/*
	 * Where a Code's instructions are, one of two shapes: a pointer field
	 * at code_instruction_start (11.1+: Code__instruction_start__Address,
	 * or derived on 11.x), or inline, code_header_size bytes after the
	 * Code's start (before 11.1: Code__instruction_start__uintptr_t, the
	 * header's size, node 18)
	 */
	int32_t code_instruction_start, code_header_size, code_instruction_size, code_flags;
	int32_t instruction_stream_instruction_start;
	/* BytecodeArray's wrapper (12.x: trusted space); its tables follow it */
	int32_t bytecode_array_data, bytecode_array_wrapper, bytecode_array_source_position_table;
	int32_t fixed_array_length, fixed_array_data;
	int32_t string_length, seq_one_byte_chars, seq_two_byte_chars;
	int32_t cons_first, cons_second, thin_actual, sliced_parent, sliced_offset;
	/* ExternalString's resource; its cached data pointer follows (not in uncached strings) */
	int32_t external_resource;
	bool js_function_code_derived, code_fields_derived, bytecode_spt_derived;
	bool code_tables_derived; /* Code's deoptimization data and source positions: fallbacks */
	bool deopt_indexes_derived; /* DeoptimizationData's slots: fallbacks (node 18) */

	/* string instance-type bits (instance-type.h) */
	int32_t string_representation_mask, string_encoding_mask;
	int32_t seq_string_tag, cons_string_tag, sliced_string_tag, thin_string_tag;
	int32_t external_string_tag, one_byte_string_tag, two_byte_string_tag;

	/* Code::kind in Code::flags (code-kind.h) */
	int32_t code_kind_mask, code_kind_shift, code_kind_baseline, code_kind_interpreted;

	/*
	 * Bytecodes::kBytecodeSizes (its symbol's bytes, 3 rows of
	 * nr_bytecodes: operand scale 1, 2, 4); nr_bytecodes 0: not found
	 */
	uint8_t bytecode_sizes[3 * 256];
	uint32_t nr_bytecodes;

	/* slots of ScopeInfo and DeoptimizationData */
	int32_t scope_info_first_vars, scope_info_ncontextlocals, scope_info_nparams;
	int32_t deopt_inlined_count, deopt_literal_array, deopt_shared_function_info;
	int32_t deopt_inlining_positions;
	/* 13.x: the slot of a SharedFunctionInfoWrapper (deopt_shared_function_info absent) */
	int32_t deopt_wrapped_shared_function_info;
};

/*
 * Read the metadata of the ELF file open at fd (the caller keeps fd).
 * Returns 0 with *md filled; -ENOENT when the file has no v8dbg_ symbols
 * (not V8: nothing said); -EINVAL when it has some but the build is unusable
 * (a required value missing, unreadable or out of range, or a big-endian or
 * 32-bit file), -ENOEXEC when fd is not an ELF file, -ENOMEM. On -EINVAL,
 * why (why_size bytes, may be NULL) names the symbol and the reason, e.g.
 * "v8dbg_off_fp_function: -4100 out of range"; md->nr_symbols is set.
 */
int v8_metadata__read(int fd, struct v8_metadata *md, char *why, size_t why_size);

/* "11.3.244.8-node.38": the version V8 reports (process.versions.v8) into buf; returns buf */
const char *v8_metadata__version(const struct v8_metadata *md, char *buf, size_t size);

#endif /* BPFPROF_V8_METADATA_H */

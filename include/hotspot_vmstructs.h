/* SPDX-License-Identifier: MIT */
/*
 * HotSpot's self-description as bpfprof reads it from a JVM's memory: the
 * four tables libjvm.so exports for debuggers (gHotSpotVMStructs,
 * gHotSpotVMTypes, gHotSpotVMIntConstants, gHotSpotVMLongConstants, with
 * their gHotSpotVM*EntryArrayStride and *Offset layout symbols), built by
 * HotSpot's src/hotspot/share/runtime/vmStructs.cpp and read the way the
 * Serviceability Agent (sun.jvm.hotspot.HotSpotTypeDataBase) and the
 * OpenTelemetry eBPF profiler (interpreter/hotspot/data.go) read them:
 * every entry's type and field names compared, a struct field giving its
 * offset (or, static, its address), a type its size, a constant its value.
 * No offset is compiled in for one build: what the unwinder and the namer
 * need (struct hotspot_vm) all comes from the tables.
 *
 * The JVM is hostile input: a process can forge its tables. Layout symbols
 * are checked (strides <= HS_MAX_STRIDE and holding their fields), tables
 * are walked up to HS_MAX_ENTRIES each, names read up to HS_MAX_NAME bytes
 * and must be printable, offsets and sizes are bounded (HS_MAX_OFFSET), a
 * field given twice with two values refuses the tables, and a field the
 * unwinder cannot do without missing refuses them too. Memory is read
 * through a callback (no /proc of its own), so tests and the fuzz harness
 * read from a buffer.
 */
#ifndef BPFPROF_HOTSPOT_VMSTRUCTS_H
#define BPFPROF_HOTSPOT_VMSTRUCTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HS_MAX_ENTRIES 16384 /* per table; JDK 17 has 788 structs, 768 types */
#define HS_MAX_STRIDE 256 /* bytes of one entry (48 and 40 in JDK 17 and 25) */
#define HS_MAX_NAME 256 /* bytes of a type or field name, its NUL included */
#define HS_MAX_OFFSET (1u << 16) /* field offsets and type sizes are below (OTel: 64 KiB) */
#define HS_RELEASE_MAX 64 /* bytes kept of the VM release string, NUL included */

/*
 * Read len bytes of the JVM's memory at addr into buf: 0, or -errno (all
 * or nothing: a short read is -EFAULT). Never asked to cross a 4 KiB page
 * for a name.
 */
typedef int (*hotspot_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

/* The libjvm.so symbols read: all .dynsym exports of every JDK since 8 */
enum hotspot_sym {
	HS_SYM_STRUCTS, /* gHotSpotVMStructs: pointer to the first VMStructEntry */
	HS_SYM_STRUCT_STRIDE,
	HS_SYM_STRUCT_TYPE_NAME,
	HS_SYM_STRUCT_FIELD_NAME,
	HS_SYM_STRUCT_IS_STATIC,
	HS_SYM_STRUCT_OFFSET,
	HS_SYM_STRUCT_ADDRESS,
	HS_SYM_TYPES, /* gHotSpotVMTypes */
	HS_SYM_TYPE_STRIDE,
	HS_SYM_TYPE_TYPE_NAME,
	HS_SYM_TYPE_SIZE,
	HS_SYM_INTS, /* gHotSpotVMIntConstants */
	HS_SYM_INT_STRIDE,
	HS_SYM_INT_NAME,
	HS_SYM_INT_VALUE,
	HS_SYM_LONGS, /* gHotSpotVMLongConstants */
	HS_SYM_LONG_STRIDE,
	HS_SYM_LONG_NAME,
	HS_SYM_LONG_VALUE,
	HS_SYM_NR,
};

/* Their names, in enum hotspot_sym's order (e.g. "gHotSpotVMStructEntryArrayStride") */
extern const char *const hotspot_sym_names[HS_SYM_NR];

/*
 * The struct fields read. Names with alternatives across JDKs (JDK 17 | 25):
 * CompiledMethod | nmethod, _code_begin | _code_offset, _flags |
 * _flags._flags, ... (the table in hotspot_vmstructs.c). Statics (HS_S_*)
 * give the variable's address, the others an offset into the object.
 */
enum hotspot_field {
	/* statics */
	HS_S_VM_RELEASE, /* Abstract_VM_Version::_s_vm_release (const char *) */
	HS_S_VM_MAJOR, /* ::_vm_major_version (int) */
	HS_S_VM_MINOR,
	HS_S_VM_SECURITY,
	HS_S_VM_BUILD,
	HS_S_JDK_CURRENT, /* JDK_Version::_current (JDK <= 20) */
	HS_S_CODECACHE_HEAPS, /* CodeCache::_heaps (GrowableArray<CodeHeap*> *) */
	HS_S_CODECACHE_LOW, /* CodeCache::_low_bound (address) */
	HS_S_CODECACHE_HIGH, /* CodeCache::_high_bound */
	/* offsets */
	HS_F_CODEBLOB_NAME,
	HS_F_CODEBLOB_FRAME_COMPLETE,
	HS_F_CODEBLOB_FRAME_SIZE,
	/* which one matched (field_alt) says pointer or offset from the blob */
	HS_F_CODEBLOB_CODE_BEGIN, /* _code_begin (pointer, <= 22) | _code_offset (int, 23+) */
	HS_F_CODEBLOB_CODE_END, /* _code_end (pointer) | _data_offset (int) */
	HS_F_CODEBLOB_SIZE,
	HS_F_CODEBLOB_KIND, /* JDK 25 */
	HS_F_CODEBLOB_RELOCATION_SIZE,
	HS_F_CODEBLOB_MUTABLE_DATA,
	HS_F_CODEHEAP_MEMORY,
	HS_F_CODEHEAP_SEGMAP,
	HS_F_CODEHEAP_LOG2_SEGMENT,
	HS_F_VSPACE_LOW,
	HS_F_VSPACE_HIGH,
	HS_F_GROWABLE_LEN, /* GrowableArrayBase::_len | GenericGrowableArray::_len */
	HS_F_GROWABLE_DATA, /* GrowableArray<int>::_data */
	HS_F_NMETHOD_METHOD, /* CompiledMethod | nmethod ::_method */
	HS_F_NMETHOD_COMPILE_ID,
	HS_F_NMETHOD_COMP_LEVEL,
	HS_F_NMETHOD_ORIG_PC,
	HS_F_NMETHOD_DEOPT_HANDLER, /* _deopt_handler_begin | _deopt_handler_offset | ... */
	HS_F_NMETHOD_SCOPES_PCS,
	HS_F_NMETHOD_SCOPES_DATA, /* _scopes_data_begin | _scopes_data_offset */
	HS_F_NMETHOD_DEPENDENCIES,
	HS_F_NMETHOD_METADATA,
	HS_F_NMETHOD_IMMUTABLE_DATA, /* JDK 23+ */
	HS_F_METHOD_CONSTMETHOD,
	HS_F_CONSTMETHOD_CONSTANTS,
	HS_F_CONSTMETHOD_CODE_SIZE,
	HS_F_CONSTMETHOD_FLAGS, /* _flags (u2, <= 20) | _flags._flags (u4, 21+) */
	HS_F_CONSTMETHOD_NAME_INDEX,
	HS_F_CONSTMETHOD_SIGNATURE_INDEX,
	HS_F_CPOOL_HOLDER,
	HS_F_CPOOL_SOURCE_FILE,
	HS_F_KLASS_NAME,
	HS_F_SYMBOL_LENGTH, /* _length (u2) | _length_and_refcount */
	HS_F_SYMBOL_BODY,
	HS_F_PCDESC_PC_OFFSET,
	HS_F_PCDESC_SCOPE_DECODE,
	HS_FIELD_NR,
};

/* The type sizes read (VMTypes' size) */
enum hotspot_type {
	HS_T_CODEBLOB,
	HS_T_NMETHOD,
	HS_T_CODEHEAP,
	HS_T_HEAPBLOCK,
	HS_T_METHOD,
	HS_T_CONSTMETHOD,
	HS_T_CPOOL,
	HS_T_KLASS,
	HS_T_SYMBOL,
	HS_T_PCDESC,
	HS_TYPE_NR,
};

/* The int constants read */
enum hotspot_const {
	HS_C_INVOCATION_ENTRY_BCI, /* InvocationEntryBci (-1) */
	HS_C_FRAME_SENDER_SP, /* frame::interpreter_frame_sender_sp_offset (words, -1) */
	HS_C_FRAME_LAST_SP, /* frame::interpreter_frame_last_sp_offset (-2) */
	HS_C_HAS_LINENUMBERS, /* ConstMethod::_has_linenumber_table | ConstMethodFlags::_misc_... */
	HS_C_BLOBKIND_NMETHOD, /* CodeBlobKind::Nmethod (JDK 25) */
	HS_CONST_NR,
};

/* What a JVM's tables say */
struct hotspot_vm {
	char release[HS_RELEASE_MAX]; /* "17.0.15+6-Debian-1deb12u1", "" unread */
	uint32_t major, minor, security, build; /* Abstract_VM_Version's ints; 0 unread */
	/* entries walked per table, and of them the fields, types and constants known */
	uint32_t nr_structs, nr_types, nr_ints, nr_longs;
	uint32_t nr_fields, nr_sizes, nr_consts;
	/* address (statics) or offset; valid where bit i of have_field */
	uint64_t field[HS_FIELD_NR];
	uint64_t have_field;
	uint8_t field_alt[HS_FIELD_NR]; /* which names matched: type alternative << 4 | field's */
	uint32_t size[HS_TYPE_NR]; /* 0: not in the tables */
	int64_t constant[HS_CONST_NR];
	uint32_t have_const; /* bit i: constant[i] read */
	/* the code cache's reservation (CodeCache::_low_bound, _high_bound), 0 before it is set up */
	uint64_t code_low, code_high;
	uint64_t heaps; /* CodeCache::_heaps' value: its GrowableArray, 0 not yet */
	/*
	 * Derived for the unwinder and the namer: CodeBlob's code bounds are
	 * int offsets from the blob (_code_offset, JDK 23+), not pointers; the
	 * UNSIGNED5 excluded bytes of the debug and line tables (1 from JDK 20,
	 * jdk-20+15: OTel unsigned5.go; 0 before).
	 */
	bool code_offsets;
	uint8_t unsigned5_x;
	/* -ENOTSUP: the type ("nmethod|CompiledMethod") and field wanted and missing; static */
	const char *missing, *missing_name;
};

/* Whether field f was read. */
static inline bool hotspot_vm__has(const struct hotspot_vm *vm, enum hotspot_field f)
{
	return vm->have_field >> f & 1;
}

/*
 * Read the tables of the JVM whose symbols are at the run-time addresses
 * sym[] (load bias added; every entry non-zero) through rd(ctx, ...), into
 * *vm. Returns 0, or -errno with *why set (a static string for one warning,
 * e.g. "gHotSpotVMStructs' entry stride 4096 out of bounds"): -EFAULT
 * (unreadable memory), -EBADMSG (a malformed or forged table), -ENOTSUP (a
 * field the unwinder needs is not in the tables: a JVM of another kind).
 * *vm holds what was read either way.
 */
int hotspot_vmstructs__read(const uint64_t sym[HS_SYM_NR], hotspot_read_fn rd, void *ctx,
			    struct hotspot_vm *vm, const char **why);

/*
 * "Abstract_VM_Version::_s_vm_release", "CompiledMethod::_method": the names
 * of field f as vm's tables gave them (vm NULL, or f not read: its first
 * names), into buf (size bytes); returns buf.
 */
const char *hotspot_field__name(const struct hotspot_vm *vm, enum hotspot_field f, char *buf,
				size_t size);

#define HS_MAX_HEAPS 8 /* CodeHeaps: 3 with the segmented code cache, 1 without */

/* One CodeHeap of the code cache: where JIT code, stubs and the interpreter lie */
struct hotspot_heap {
	uint64_t low, high; /* its reservation: _memory's _low_boundary, _high_boundary */
	uint64_t segmap; /* _segmap's _low_boundary: one byte a segment (heap.cpp find_start) */
	uint32_t log2_segment; /* _log2_segment_size: 7 (128-byte segments) */
};

/*
 * The code cache's heaps, read now from CodeCache::_heaps (a
 * GrowableArray<CodeHeap*>: _len, _data) with the offsets vm holds, into
 * heaps[0..max). Each must lie within CodeCache's bounds (re-read now),
 * have a segment map and a segment size of 16 bytes to 64 KiB. Returns
 * the number of heaps (0: the JVM has not set up its code cache yet), or
 * -errno with *why: -EFAULT (unreadable), -EBADMSG (forged or absurd).
 */
int hotspot_vmstructs__heaps(const struct hotspot_vm *vm, hotspot_read_fn rd, void *ctx,
			     struct hotspot_heap *heaps, size_t max, const char **why);

/* "ConstMethod", ...: the name of type t in gHotSpotVMTypes */
const char *hotspot_type__name(enum hotspot_type t);

#endif /* BPFPROF_HOTSPOT_VMSTRUCTS_H */

// SPDX-License-Identifier: MIT
/*
 * HotSpot's vmStructs tables read from a JVM's memory (include/hotspot_vmstructs.h).
 * The entry layouts are HotSpot's vmStructs.hpp (VMStructEntry, VMTypeEntry,
 * VMIntConstantEntry, VMLongConstantEntry), described at run time by the
 * layout symbols rather than assumed; the names wanted are the ones the
 * OpenTelemetry eBPF profiler's interpreter/hotspot/data.go reads, with its
 * alternatives across JDK 8 to 26.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hotspot_vmstructs.h"

#define PAGE 4096u

_Static_assert(HS_TYPE_NR <= 16 && HS_CONST_NR <= 16, "vals[] of hotspot_vmstructs__read");
_Static_assert(HS_FIELD_NR <= 64, "have_field's bits");

const char *const hotspot_sym_names[HS_SYM_NR] = {
	[HS_SYM_STRUCTS] = "gHotSpotVMStructs",
	[HS_SYM_STRUCT_STRIDE] = "gHotSpotVMStructEntryArrayStride",
	[HS_SYM_STRUCT_TYPE_NAME] = "gHotSpotVMStructEntryTypeNameOffset",
	[HS_SYM_STRUCT_FIELD_NAME] = "gHotSpotVMStructEntryFieldNameOffset",
	[HS_SYM_STRUCT_IS_STATIC] = "gHotSpotVMStructEntryIsStaticOffset",
	[HS_SYM_STRUCT_OFFSET] = "gHotSpotVMStructEntryOffsetOffset",
	[HS_SYM_STRUCT_ADDRESS] = "gHotSpotVMStructEntryAddressOffset",
	[HS_SYM_TYPES] = "gHotSpotVMTypes",
	[HS_SYM_TYPE_STRIDE] = "gHotSpotVMTypeEntryArrayStride",
	[HS_SYM_TYPE_TYPE_NAME] = "gHotSpotVMTypeEntryTypeNameOffset",
	[HS_SYM_TYPE_SIZE] = "gHotSpotVMTypeEntrySizeOffset",
	[HS_SYM_INTS] = "gHotSpotVMIntConstants",
	[HS_SYM_INT_STRIDE] = "gHotSpotVMIntConstantEntryArrayStride",
	[HS_SYM_INT_NAME] = "gHotSpotVMIntConstantEntryNameOffset",
	[HS_SYM_INT_VALUE] = "gHotSpotVMIntConstantEntryValueOffset",
	[HS_SYM_LONGS] = "gHotSpotVMLongConstants",
	[HS_SYM_LONG_STRIDE] = "gHotSpotVMLongConstantEntryArrayStride",
	[HS_SYM_LONG_NAME] = "gHotSpotVMLongConstantEntryNameOffset",
	[HS_SYM_LONG_VALUE] = "gHotSpotVMLongConstantEntryValueOffset",
};

/* A wanted name: alternatives separated by '|', the first the newest JDK's or the usual one */
struct wanted {
	const char *types;
	const char *names;
	bool is_static;
	bool required; /* the unwinder or the namer cannot do without it */
};

#define NM "nmethod|CompiledMethod"

static const struct wanted fields[HS_FIELD_NR] = {
	[HS_S_VM_RELEASE] = { "Abstract_VM_Version", "_s_vm_release", true, true },
	[HS_S_VM_MAJOR] = { "Abstract_VM_Version", "_vm_major_version", true, false },
	[HS_S_VM_MINOR] = { "Abstract_VM_Version", "_vm_minor_version", true, false },
	[HS_S_VM_SECURITY] = { "Abstract_VM_Version", "_vm_security_version", true, false },
	[HS_S_VM_BUILD] = { "Abstract_VM_Version", "_vm_build_number", true, false },
	[HS_S_JDK_CURRENT] = { "JDK_Version", "_current", true, false },
	[HS_S_CODECACHE_HEAPS] = { "CodeCache", "_heaps", true, true },
	[HS_S_CODECACHE_LOW] = { "CodeCache", "_low_bound", true, true },
	[HS_S_CODECACHE_HIGH] = { "CodeCache", "_high_bound", true, true },
	[HS_F_CODEBLOB_NAME] = { "CodeBlob", "_name", false, true },
	[HS_F_CODEBLOB_FRAME_COMPLETE] = { "CodeBlob", "_frame_complete_offset", false, true },
	[HS_F_CODEBLOB_FRAME_SIZE] = { "CodeBlob", "_frame_size", false, true },
	[HS_F_CODEBLOB_CODE_BEGIN] = { "CodeBlob", "_code_begin|_code_offset", false, true },
	[HS_F_CODEBLOB_CODE_END] = { "CodeBlob", "_code_end|_data_offset", false, true },
	[HS_F_CODEBLOB_SIZE] = { "CodeBlob", "_size", false, false },
	[HS_F_CODEBLOB_KIND] = { "CodeBlob", "_kind", false, false },
	[HS_F_CODEBLOB_RELOCATION_SIZE] = { "CodeBlob", "_relocation_size", false, false },
	[HS_F_CODEBLOB_MUTABLE_DATA] = { "CodeBlob", "_mutable_data", false, false },
	[HS_F_CODEHEAP_MEMORY] = { "CodeHeap", "_memory", false, true },
	[HS_F_CODEHEAP_SEGMAP] = { "CodeHeap", "_segmap", false, true },
	[HS_F_CODEHEAP_LOG2_SEGMENT] = { "CodeHeap", "_log2_segment_size", false, true },
	[HS_F_VSPACE_LOW] = { "VirtualSpace", "_low_boundary", false, true },
	[HS_F_VSPACE_HIGH] = { "VirtualSpace", "_high_boundary", false, true },
	[HS_F_GROWABLE_LEN] = { "GrowableArrayBase|GenericGrowableArray", "_len", false, true },
	[HS_F_GROWABLE_DATA] = { "GrowableArray<int>", "_data", false, true },
	[HS_F_NMETHOD_METHOD] = { NM, "_method", false, true },
	[HS_F_NMETHOD_COMPILE_ID] = { NM, "_compile_id", false, true },
	[HS_F_NMETHOD_COMP_LEVEL] = { NM, "_comp_level", false, false },
	[HS_F_NMETHOD_ORIG_PC] = { NM, "_orig_pc_offset", false, false },
	[HS_F_NMETHOD_DEOPT_HANDLER] = { NM,
					 "_deopt_handler_entry_offset|_deopt_handler_offset|"
					 "_deopt_handler_begin|_deoptimize_offset",
					 false, false },
	[HS_F_NMETHOD_SCOPES_PCS] = { NM, "_scopes_pcs_offset", false, false },
	[HS_F_NMETHOD_SCOPES_DATA] = { NM, "_scopes_data_offset|_scopes_data_begin", false, false },
	[HS_F_NMETHOD_DEPENDENCIES] = { NM, "_dependencies_offset", false, false },
	[HS_F_NMETHOD_METADATA] = { NM, "_metadata_offset|_oops_offset", false, false },
	[HS_F_NMETHOD_IMMUTABLE_DATA] = { NM, "_immutable_data", false, false },
	[HS_F_METHOD_CONSTMETHOD] = { "Method", "_constMethod", false, true },
	[HS_F_CONSTMETHOD_CONSTANTS] = { "ConstMethod", "_constants", false, true },
	[HS_F_CONSTMETHOD_CODE_SIZE] = { "ConstMethod", "_code_size", false, true },
	[HS_F_CONSTMETHOD_FLAGS] = { "ConstMethod", "_flags._flags|_flags", false, true },
	[HS_F_CONSTMETHOD_NAME_INDEX] = { "ConstMethod", "_name_index", false, true },
	[HS_F_CONSTMETHOD_SIGNATURE_INDEX] = { "ConstMethod", "_signature_index", false, true },
	[HS_F_CPOOL_HOLDER] = { "ConstantPool", "_pool_holder", false, true },
	[HS_F_CPOOL_SOURCE_FILE] = { "ConstantPool", "_source_file_name_index", false, false },
	[HS_F_KLASS_NAME] = { "Klass", "_name", false, true },
	[HS_F_SYMBOL_LENGTH] = { "Symbol", "_length|_length_and_refcount", false, true },
	[HS_F_SYMBOL_BODY] = { "Symbol", "_body", false, true },
	[HS_F_PCDESC_PC_OFFSET] = { "PcDesc", "_pc_offset", false, false },
	[HS_F_PCDESC_SCOPE_DECODE] = { "PcDesc", "_scope_decode_offset", false, false },
};

static const struct wanted types[HS_TYPE_NR] = {
	[HS_T_CODEBLOB] = { NULL, "CodeBlob", false, false },
	[HS_T_NMETHOD] = { NULL, "nmethod", false, false },
	[HS_T_CODEHEAP] = { NULL, "CodeHeap", false, false },
	[HS_T_HEAPBLOCK] = { NULL, "HeapBlock", false, true },
	[HS_T_METHOD] = { NULL, "Method", false, false },
	[HS_T_CONSTMETHOD] = { NULL, "ConstMethod", false, true },
	[HS_T_CPOOL] = { NULL, "ConstantPool", false, true },
	[HS_T_KLASS] = { NULL, "Klass", false, false },
	[HS_T_SYMBOL] = { NULL, "Symbol", false, false },
	[HS_T_PCDESC] = { NULL, "PcDesc", false, false },
};

static const struct wanted consts[HS_CONST_NR] = {
	[HS_C_INVOCATION_ENTRY_BCI] = { NULL, "InvocationEntryBci", false, false },
	[HS_C_FRAME_SENDER_SP] = { NULL, "frame::interpreter_frame_sender_sp_offset", false,
				   false },
	[HS_C_FRAME_LAST_SP] = { NULL, "frame::interpreter_frame_last_sp_offset", false, false },
	[HS_C_HAS_LINENUMBERS] = { NULL,
				   "ConstMethodFlags::_misc_has_linenumber_table|"
				   "ConstMethod::_has_linenumber_table",
				   false, false },
	[HS_C_BLOBKIND_NMETHOD] = { NULL, "CodeBlobKind::Nmethod", false, false },
};

/* The index of s among alts ("a|b|c"), or -1 */
static int alt_index(const char *alts, const char *s)
{
	size_t n = strlen(s);

	for (int i = 0; alts && *alts; i++) {
		const char *bar = strchr(alts, '|');
		size_t len = bar ? (size_t)(bar - alts) : strlen(alts);

		if (len == n && !memcmp(alts, s, n))
			return i;
		if (!bar)
			break;
		alts = bar + 1;
	}
	return -1;
}

const char *hotspot_type__name(enum hotspot_type t)
{
	return (unsigned)t < HS_TYPE_NR ? types[t].names : "?";
}

/* The alternative number k of alts ("a|b|c"), its length into *len */
static const char *alt_nth(const char *alts, unsigned k, int *len)
{
	while (k-- && strchr(alts, '|'))
		alts = strchr(alts, '|') + 1;
	*len = (int)strcspn(alts, "|");
	return alts;
}

const char *hotspot_field__name(const struct hotspot_vm *vm, enum hotspot_field f, char *buf,
				size_t size)
{
	unsigned alt = vm && hotspot_vm__has(vm, f) ? vm->field_alt[f] : 0;
	const char *t, *n;
	int tl, nl;

	if ((unsigned)f >= HS_FIELD_NR) {
		snprintf(buf, size, "?");
		return buf;
	}
	t = alt_nth(fields[f].types, alt >> 4, &tl);
	n = alt_nth(fields[f].names, alt & 15, &nl);
	snprintf(buf, size, "%.*s::%.*s", tl, t, nl, n);
	return buf;
}

static uint64_t get_u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static int32_t get_i32(const uint8_t *p)
{
	int32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * The NUL-terminated name at addr into buf (HS_MAX_NAME bytes), read a page
 * piece at a time (a name near the end of a mapping is still read).
 * Returns 0, -EFAULT (unreadable), -EBADMSG (unterminated or not printable).
 */
static int read_name(hotspot_read_fn rd, void *ctx, uint64_t addr, char *buf)
{
	size_t got = 0;

	while (got < HS_MAX_NAME) {
		uint64_t at = addr + got;
		size_t n = PAGE - (size_t)(at % PAGE), end;

		if (at < addr)
			return -EFAULT; /* wrapped */
		if (n > HS_MAX_NAME - got)
			n = HS_MAX_NAME - got;
		if (rd(ctx, at, buf + got, n))
			return -EFAULT;
		end = strnlen(buf + got, n);
		for (size_t i = got; i < got + end; i++)
			if (buf[i] < 0x20 || buf[i] > 0x7e)
				return -EBADMSG;
		if (end < n)
			return 0;
		got += n;
	}
	return -EBADMSG;
}

/* One table's layout: where it is and where an entry keeps what is read */
struct table {
	const char *what; /* for messages */
	uint64_t at; /* first entry */
	uint64_t stride;
	uint64_t off[5]; /* the layout offsets read, as the walker wants them */
	size_t nr_off;
};

/*
 * The layout of a table from its symbols: the array's address (the pointer
 * at sym[base]), its stride and field offsets (u64 each, widths[i] bytes of
 * field i within the stride). Returns 0 or -errno with *why.
 */
static int read_layout(const uint64_t sym[HS_SYM_NR], hotspot_read_fn rd, void *ctx,
		       enum hotspot_sym base, const enum hotspot_sym *offs, const uint8_t *widths,
		       size_t n, struct table *t, const char **why)
{
	if (rd(ctx, sym[base], &t->at, sizeof(t->at)) ||
	    rd(ctx, sym[base + 1], &t->stride, sizeof(t->stride))) {
		*why = "the tables' symbols are not readable";
		return -EFAULT;
	}
	if (!t->at || !t->stride) {
		/* .bss, set by libjvm's initialisers: a JVM caught in its dynamic loading */
		*why = "its tables are not set up yet (libjvm's initialisers have not run)";
		return -EAGAIN;
	}
	if (t->stride < 8 || t->stride > HS_MAX_STRIDE || t->stride % 4) {
		*why = "a table's entry stride is out of bounds";
		return -EBADMSG;
	}
	t->nr_off = n;
	for (size_t i = 0; i < n; i++) {
		if (rd(ctx, sym[offs[i]], &t->off[i], sizeof(t->off[i]))) {
			*why = "the tables' symbols are not readable";
			return -EFAULT;
		}
		if (t->off[i] > t->stride - widths[i]) {
			*why = "a table's field offset lies outside its entry";
			return -EBADMSG;
		}
	}
	return 0;
}

/* Field alternative (low 4 bits) first, then type alternative: the lower, the preferred */
static unsigned rank(uint8_t alt)
{
	return (unsigned)(alt & 15) << 4 | alt >> 4;
}

/*
 * Entries are read HS_BATCH at a time (one read for 16 entries, not 16),
 * one at a time where a batch is not readable whole (the table's end near
 * the end of its mapping).
 */
#define HS_BATCH 16

struct cursor {
	const struct table *t;
	uint32_t first, n; /* entries first .. first + n - 1 in buf */
	uint8_t buf[HS_BATCH * HS_MAX_STRIDE];
};

/* Entry i of c's table (stride bytes, borrowed until the next call), or NULL: not readable */
static const uint8_t *entry(struct cursor *c, hotspot_read_fn rd, void *ctx, uint32_t i)
{
	uint64_t stride = c->t->stride, addr = c->t->at + (uint64_t)i * stride;

	if (c->n && i >= c->first && i - c->first < c->n)
		return c->buf + (i - c->first) * stride;
	if (addr < c->t->at || addr > UINT64_MAX - HS_BATCH * stride)
		return NULL; /* wrapped */
	c->n = 0;
	if (!rd(ctx, addr, c->buf, HS_BATCH * stride))
		c->n = HS_BATCH;
	else if (!rd(ctx, addr, c->buf, stride))
		c->n = 1;
	else
		return NULL;
	c->first = i;
	return c->buf;
}

/*
 * Record value v of wanted entry i under alternative code alt (type
 * alternative << 4 | name's): the most preferred names present win (JDK 17
 * has both CodeBlob::_code_end, the pointer wanted, and _data_offset, JDK
 * 25's only one). The same names twice with another value are a forgery.
 */
static int record(uint64_t *vals, uint64_t *have, uint8_t *alts, unsigned i, uint8_t alt,
		  uint64_t v, uint32_t *nr, const char **why)
{
	if (*have >> i & 1) {
		if (alts[i] == alt && vals[i] != v) {
			*why = "a field is given twice with two values";
			return -EBADMSG;
		}
		if (rank(alt) < rank(alts[i])) {
			alts[i] = alt;
			vals[i] = v;
		}
		return 0;
	}
	*have |= 1ull << i;
	alts[i] = alt;
	vals[i] = v;
	(*nr)++;
	return 0;
}

static int walk_structs(const uint64_t sym[HS_SYM_NR], hotspot_read_fn rd, void *ctx,
			struct hotspot_vm *vm, const char **why)
{
	static const enum hotspot_sym offs[] = { HS_SYM_STRUCT_TYPE_NAME, HS_SYM_STRUCT_FIELD_NAME,
						 HS_SYM_STRUCT_IS_STATIC, HS_SYM_STRUCT_OFFSET,
						 HS_SYM_STRUCT_ADDRESS };
	static const uint8_t widths[] = { 8, 8, 4, 8, 8 };
	char type[HS_MAX_NAME], name[HS_MAX_NAME];
	uint64_t last_type_at = 0;
	struct cursor c = { 0 };
	struct table t;
	int err;

	err = read_layout(sym, rd, ctx, HS_SYM_STRUCTS, offs, widths, 5, &t, why);
	if (err)
		return err;
	c.t = &t;
	for (uint32_t i = 0;; i++) {
		uint64_t type_at, name_at;
		bool is_static, have_name;
		const uint8_t *e;

		if (i == HS_MAX_ENTRIES) {
			*why = "gHotSpotVMStructs has no end within its bound";
			return -EBADMSG;
		}
		e = entry(&c, rd, ctx, i);
		if (!e) {
			*why = "gHotSpotVMStructs is not readable";
			return -EFAULT;
		}
		type_at = get_u64(e + t.off[0]);
		if (!type_at)
			break;
		vm->nr_structs++;
		/* a type's fields follow one another, their names one string: read it once */
		err = type_at == last_type_at ? 0 : read_name(rd, ctx, type_at, type);
		last_type_at = err ? 0 : type_at;
		if (err) {
			*why = err == -EFAULT ? "a type name of gHotSpotVMStructs is not readable" :
						"a type name of gHotSpotVMStructs is malformed";
			return err;
		}
		name_at = get_u64(e + t.off[1]);
		is_static = get_i32(e + t.off[2]) != 0;
		have_name = false;
		for (unsigned f = 0; f < HS_FIELD_NR; f++) {
			int ta = alt_index(fields[f].types, type), fa;
			uint64_t v;

			if (ta < 0)
				continue;
			if (!name_at) {
				*why = "a field of gHotSpotVMStructs has no name";
				return -EBADMSG;
			}
			if (!have_name) { /* read once per entry, for a type wanted */
				err = read_name(rd, ctx, name_at, name);
				if (err) {
					*why = err == -EFAULT ?
						       "a field name of gHotSpotVMStructs is not readable" :
						       "a field name of gHotSpotVMStructs is malformed";
					return err;
				}
				have_name = true;
			}
			fa = alt_index(fields[f].names, name);
			if (fa < 0)
				continue;
			if (is_static != fields[f].is_static) {
				*why = "a field of gHotSpotVMStructs is static where it is not";
				return -EBADMSG;
			}
			v = get_u64(e + (is_static ? t.off[4] : t.off[3]));
			if (is_static ? !v : v >= HS_MAX_OFFSET) {
				*why = "a field of gHotSpotVMStructs has an absurd offset or address";
				return -EBADMSG;
			}
			err = record(vm->field, &vm->have_field, vm->field_alt, f,
				     (uint8_t)(ta << 4 | fa), v, &vm->nr_fields, why);
			if (err)
				return err;
		}
	}
	return 0;
}

/*
 * The types table (size_bytes 8: sizes, each < HS_MAX_OFFSET) or a constants
 * table (size_bytes 4: ints, 8: longs): names matched against want[] (n of
 * them), values into vals. Counts every entry into *nr_entries.
 */
static int walk_named(const uint64_t sym[HS_SYM_NR], hotspot_read_fn rd, void *ctx,
		      enum hotspot_sym base, enum hotspot_sym name_sym, enum hotspot_sym value_sym,
		      uint8_t value_width, const struct wanted *want, unsigned n, bool sizes,
		      uint64_t *vals, uint64_t *have, uint32_t *nr_entries, uint32_t *nr_found,
		      const char **why)
{
	const enum hotspot_sym offs[] = { name_sym, value_sym };
	const uint8_t widths[] = { 8, value_width };
	uint8_t alts[64] = { 0 };
	char name[HS_MAX_NAME];
	struct cursor c = { 0 };
	struct table t;
	int err;

	err = read_layout(sym, rd, ctx, base, offs, widths, 2, &t, why);
	if (err)
		return err;
	c.t = &t;
	for (uint32_t i = 0;; i++) {
		const uint8_t *e;
		uint64_t name_at;

		if (i == HS_MAX_ENTRIES) {
			*why = "a types or constants table has no end within its bound";
			return -EBADMSG;
		}
		e = entry(&c, rd, ctx, i);
		if (!e) {
			*why = "a types or constants table is not readable";
			return -EFAULT;
		}
		name_at = get_u64(e + t.off[0]);
		if (!name_at)
			break;
		(*nr_entries)++;
		err = read_name(rd, ctx, name_at, name);
		if (err) {
			*why = err == -EFAULT ?
				       "a name in a types or constants table is not readable" :
				       "a name in a types or constants table is malformed";
			return err;
		}
		for (unsigned k = 0; k < n; k++) {
			int a = alt_index(want[k].names, name);
			uint64_t v;

			if (a < 0)
				continue;
			v = value_width == 4 ? (uint64_t)(int64_t)get_i32(e + t.off[1]) :
					       get_u64(e + t.off[1]);
			if (sizes && (!v || v >= HS_MAX_OFFSET)) {
				*why = "a type of gHotSpotVMTypes has an absurd size";
				return -EBADMSG;
			}
			err = record(vals, have, alts, k, (uint8_t)a, v, nr_found, why);
			if (err)
				return err;
		}
	}
	return 0;
}

/* The VM's version from the statics: release string, the four ints; CodeCache's bounds. */
static int read_statics(hotspot_read_fn rd, void *ctx, struct hotspot_vm *vm, const char **why)
{
	uint32_t *ints[] = { &vm->major, &vm->minor, &vm->security, &vm->build };
	uint64_t str;
	char buf[HS_MAX_NAME];

	if (rd(ctx, vm->field[HS_S_VM_RELEASE], &str, sizeof(str)) || !str ||
	    read_name(rd, ctx, str, buf)) {
		*why = "the VM release string is not readable";
		return -EFAULT;
	}
	if (strlen(buf) >= sizeof(vm->release) || !buf[0]) {
		*why = "the VM release string is malformed";
		return -EBADMSG;
	}
	strcpy(vm->release, buf);
	for (unsigned i = 0; i < 4; i++) {
		int32_t v;

		if (hotspot_vm__has(vm, HS_S_VM_MAJOR + i) &&
		    !rd(ctx, vm->field[HS_S_VM_MAJOR + i], &v, sizeof(v)) && v >= 0 && v < 100000)
			*ints[i] = (uint32_t)v;
	}
	if (rd(ctx, vm->field[HS_S_CODECACHE_LOW], &vm->code_low, sizeof(vm->code_low)) ||
	    rd(ctx, vm->field[HS_S_CODECACHE_HIGH], &vm->code_high, sizeof(vm->code_high)) ||
	    rd(ctx, vm->field[HS_S_CODECACHE_HEAPS], &vm->heaps, sizeof(vm->heaps))) {
		*why = "CodeCache's bounds are not readable";
		return -EFAULT;
	}
	if (vm->code_low > vm->code_high) {
		*why = "CodeCache's bounds are reversed";
		return -EBADMSG;
	}
	vm->code_offsets = (vm->field_alt[HS_F_CODEBLOB_CODE_BEGIN] & 15) == 1; /* _code_offset */
	vm->unsigned5_x = vm->major >= 20;
	return 0;
}

/*
 * The pages read, for the reads within one page: names lie side by side
 * in libjvm's .rodata, entries side by side in its .data, so 1,700 reads
 * of a JDK 17's tables become some 100. A page not readable whole is not
 * kept: the read goes to the process as asked.
 */
#define PC_SLOTS 32

struct pcache {
	hotspot_read_fn rd;
	void *ctx;
	struct {
		uint64_t page; /* its address + 1; 0 empty */
		uint8_t b[PAGE];
	} slot[PC_SLOTS];
};

static int pcache_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct pcache *pc = ctx;
	uint64_t page = addr & ~(uint64_t)(PAGE - 1);
	unsigned i = (unsigned)(page / PAGE) % PC_SLOTS;

	if (len > PAGE - (addr - page))
		return pc->rd(pc->ctx, addr, buf, len);
	if (pc->slot[i].page != page + 1) {
		if (pc->rd(pc->ctx, page, pc->slot[i].b, PAGE)) {
			pc->slot[i].page = 0;
			return pc->rd(pc->ctx, addr, buf, len);
		}
		pc->slot[i].page = page + 1;
	}
	memcpy(buf, pc->slot[i].b + (addr - page), len);
	return 0;
}

static int read_all(const uint64_t sym[HS_SYM_NR], hotspot_read_fn rd, void *ctx,
		    struct hotspot_vm *vm, const char **why);

int hotspot_vmstructs__read(const uint64_t sym[HS_SYM_NR], hotspot_read_fn rd, void *ctx,
			    struct hotspot_vm *vm, const char **why)
{
	struct pcache *pc = malloc(sizeof(*pc));
	int err;

	memset(vm, 0, sizeof(*vm));
	if (!pc) {
		*why = "out of memory";
		return -ENOMEM;
	}
	pc->rd = rd;
	pc->ctx = ctx;
	for (unsigned i = 0; i < PC_SLOTS; i++)
		pc->slot[i].page = 0;
	err = read_all(sym, pcache_read, pc, vm, why);
	free(pc);
	return err;
}

static int read_all(const uint64_t sym[HS_SYM_NR], hotspot_read_fn rd, void *ctx,
		    struct hotspot_vm *vm, const char **why)
{
	uint64_t vals[16], have = 0; /* HS_TYPE_NR, HS_CONST_NR at most */
	uint32_t nr_found = 0;
	int err;

	memset(vm, 0, sizeof(*vm));
	*why = NULL;
	for (unsigned i = 0; i < HS_SYM_NR; i++) {
		if (!sym[i]) {
			*why = "libjvm.so lacks a gHotSpotVM* symbol";
			return -ENOTSUP;
		}
	}
	err = walk_structs(sym, rd, ctx, vm, why);
	if (err)
		return err;
	memset(vals, 0, sizeof(vals));
	err = walk_named(sym, rd, ctx, HS_SYM_TYPES, HS_SYM_TYPE_TYPE_NAME, HS_SYM_TYPE_SIZE, 8,
			 types, HS_TYPE_NR, true, vals, &have, &vm->nr_types, &nr_found, why);
	if (err)
		return err;
	for (unsigned i = 0; i < HS_TYPE_NR; i++)
		vm->size[i] = have >> i & 1 ? (uint32_t)vals[i] : 0;
	vm->nr_sizes = nr_found;
	have = 0;
	nr_found = 0;
	memset(vals, 0, sizeof(vals));
	err = walk_named(sym, rd, ctx, HS_SYM_INTS, HS_SYM_INT_NAME, HS_SYM_INT_VALUE, 4, consts,
			 HS_CONST_NR, false, vals, &have, &vm->nr_ints, &nr_found, why);
	if (err)
		return err;
	for (unsigned i = 0; i < HS_CONST_NR; i++)
		vm->constant[i] = (int64_t)vals[i];
	vm->have_const = (uint32_t)have;
	vm->nr_consts = nr_found;
	/* the longs: walked for their bound and count; none is needed yet */
	have = 0;
	nr_found = 0;
	err = walk_named(sym, rd, ctx, HS_SYM_LONGS, HS_SYM_LONG_NAME, HS_SYM_LONG_VALUE, 8, NULL,
			 0, false, vals, &have, &vm->nr_longs, &nr_found, why);
	if (err)
		return err;
	for (unsigned f = 0; f < HS_FIELD_NR; f++) {
		if (fields[f].required && !hotspot_vm__has(vm, f)) {
			vm->missing = fields[f].types;
			vm->missing_name = fields[f].names;
			*why = "a field the unwinder needs is not in gHotSpotVMStructs";
			return -ENOTSUP;
		}
	}
	for (unsigned i = 0; i < HS_TYPE_NR; i++) {
		if (types[i].required && !vm->size[i]) {
			vm->missing = types[i].names;
			*why = "a type the unwinder needs is not in gHotSpotVMTypes";
			return -ENOTSUP;
		}
	}
	return read_statics(rd, ctx, vm, why);
}

static int read_u64(hotspot_read_fn rd, void *ctx, uint64_t addr, uint64_t *v)
{
	return addr > UINT64_MAX - 8 ? -EFAULT : rd(ctx, addr, v, sizeof(*v));
}

int hotspot_vmstructs__heaps(const struct hotspot_vm *vm, hotspot_read_fn rd, void *ctx,
			     struct hotspot_heap *heaps, size_t max, const char **why)
{
	uint64_t arr, data, low, high, mem, vlow, vhigh, segmap;
	int32_t len;

	*why = NULL;
	if (!hotspot_vm__has(vm, HS_S_CODECACHE_HEAPS) || !hotspot_vm__has(vm, HS_F_GROWABLE_LEN)) {
		*why = "no CodeCache::_heaps in the tables";
		return -ENOTSUP;
	}
	if (read_u64(rd, ctx, vm->field[HS_S_CODECACHE_HEAPS], &arr) ||
	    read_u64(rd, ctx, vm->field[HS_S_CODECACHE_LOW], &low) ||
	    read_u64(rd, ctx, vm->field[HS_S_CODECACHE_HIGH], &high)) {
		*why = "CodeCache's statics are not readable";
		return -EFAULT;
	}
	if (!arr || !high)
		return 0; /* not set up yet */
	if (low >= high) {
		*why = "CodeCache's bounds are reversed";
		return -EBADMSG;
	}
	if (arr > UINT64_MAX - HS_MAX_OFFSET ||
	    rd(ctx, arr + vm->field[HS_F_GROWABLE_LEN], &len, sizeof(len)) ||
	    read_u64(rd, ctx, arr + vm->field[HS_F_GROWABLE_DATA], &data)) {
		*why = "CodeCache::_heaps is not readable";
		return -EFAULT;
	}
	if (len < 0 || len > HS_MAX_HEAPS || (size_t)len > max) {
		*why = "CodeCache::_heaps has an absurd length";
		return -EBADMSG;
	}
	mem = vm->field[HS_F_CODEHEAP_MEMORY];
	vlow = vm->field[HS_F_VSPACE_LOW];
	vhigh = vm->field[HS_F_VSPACE_HIGH];
	segmap = vm->field[HS_F_CODEHEAP_SEGMAP];
	for (int i = 0; i < len; i++) {
		struct hotspot_heap *hp = &heaps[i];
		uint64_t heap;
		int32_t log2;

		if (data > UINT64_MAX - 8 * HS_MAX_HEAPS ||
		    read_u64(rd, ctx, data + 8 * (uint64_t)i, &heap) || !heap ||
		    heap > UINT64_MAX - 2 * HS_MAX_OFFSET ||
		    read_u64(rd, ctx, heap + mem + vlow, &hp->low) ||
		    read_u64(rd, ctx, heap + mem + vhigh, &hp->high) ||
		    read_u64(rd, ctx, heap + segmap + vlow, &hp->segmap) ||
		    rd(ctx, heap + vm->field[HS_F_CODEHEAP_LOG2_SEGMENT], &log2, sizeof(log2))) {
			*why = "a CodeHeap is not readable";
			return -EFAULT;
		}
		if (hp->low >= hp->high || hp->low < low || hp->high > high) {
			*why = "a CodeHeap lies outside the code cache";
			return -EBADMSG;
		}
		if (!hp->segmap || log2 < 4 || log2 > 16) {
			*why = "a CodeHeap has no segment map or an absurd segment size";
			return -EBADMSG;
		}
		hp->log2_segment = (uint32_t)log2;
	}
	return len;
}

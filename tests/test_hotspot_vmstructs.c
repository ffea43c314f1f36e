// SPDX-License-Identifier: MIT
/*
 * Unit tests for user/symbolize/hotspot_vmstructs.c: a synthetic JVM image
 * built byte by byte (the four tables, their layout symbols, names and
 * statics, laid out as HotSpot's vmStructs.hpp entries are), good and
 * broken in every way a forged or half-initialised JVM could be; and the
 * real tables of OpenJDK 17.0.15 and Temurin 25.0.3 recorded from running
 * JVMs (tests/fuzz/corpus/hotspot_vmstructs, tools/hotspot-dump.c), whose
 * offsets are the ones the Serviceability Agent (jhsdb clhsdb
 * vmstructsdump) gave for the same JVMs.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "hotspot_vmstructs.h"

#define BASE 0x100000ull
#define IMG_SIZE (64u << 10)
/* where things lie in the image, from BASE */
#define SYMS 0x0 /* HS_SYM_NR u64 cells */
#define STRUCTS 0x1000 /* 48-byte entries */
#define TYPES 0x5000 /* 40-byte entries */
#define INTS 0x7000 /* 16-byte entries */
#define LONGS 0x8000
#define STATICS 0x9000
#define STRINGS 0xa000

struct img {
	uint8_t b[IMG_SIZE];
	size_t used; /* bytes readable from BASE (the rest: unmapped) */
	size_t str; /* next string */
	size_t nr_structs, nr_types, nr_ints, nr_longs;
	/* an endless table: reads in [endless, endless + 1 GiB) repeat the stride bytes at STRUCTS */
	uint64_t endless, endless_stride;
	uint64_t sym[HS_SYM_NR];
	uint64_t reads;
};

static int rd(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct img *im = ctx;

	im->reads++;
	if (im->endless && addr >= im->endless && addr < im->endless + (1ull << 30)) {
		uint64_t in = (addr - im->endless) % im->endless_stride;

		if (in + len > im->endless_stride)
			return -EFAULT;
		memcpy(buf, im->b + STRUCTS + in, len);
		return 0;
	}
	if (addr < BASE || addr - BASE > im->used || len > im->used - (addr - BASE))
		return -EFAULT;
	memcpy(buf, im->b + (addr - BASE), len);
	return 0;
}

static void put64(struct img *im, size_t at, uint64_t v)
{
	memcpy(im->b + at, &v, 8);
}

static void put32(struct img *im, size_t at, uint32_t v)
{
	memcpy(im->b + at, &v, 4);
}

/* a NUL-terminated string in the image; its address */
static uint64_t str(struct img *im, const char *s)
{
	size_t n = strlen(s) + 1;
	uint64_t at = BASE + im->str;

	assert_true(im->str + n <= IMG_SIZE);
	memcpy(im->b + im->str, s, n);
	im->str += n;
	return at;
}

static void add_field(struct img *im, const char *type, const char *field, bool is_static,
		      uint64_t value)
{
	size_t e = STRUCTS + im->nr_structs++ * 48;

	assert_true(e + 96 <= TYPES);
	put64(im, e + 0, str(im, type));
	put64(im, e + 8, str(im, field));
	put64(im, e + 16, str(im, "int"));
	put32(im, e + 24, is_static);
	put64(im, e + 32, is_static ? 0 : value);
	put64(im, e + 40, is_static ? value : 0);
}

static void add_type(struct img *im, const char *type, uint64_t size)
{
	size_t e = TYPES + im->nr_types++ * 40;

	put64(im, e + 0, str(im, type));
	put64(im, e + 32, size);
}

static void add_const(struct img *im, bool is_long, const char *name, int64_t v)
{
	size_t e = is_long ? LONGS + im->nr_longs++ * 16 : INTS + im->nr_ints++ * 16;

	put64(im, e, str(im, name));
	if (is_long)
		put64(im, e + 8, (uint64_t)v);
	else
		put32(im, e + 8, (uint32_t)(int32_t)v);
}

/* A JDK 17-like image: every field the reader needs, and a few it does not */
static struct img *build(void)
{
	struct img *im = calloc(1, sizeof(*im));
	static const struct {
		const char *type, *field;
		uint64_t off;
	} offs[] = {
		{ "CodeBlob", "_name", 96 },
		{ "CodeBlob", "_frame_complete_offset", 20 },
		{ "CodeBlob", "_frame_size", 28 },
		{ "CodeBlob", "_data_offset", 24 }, /* before _code_end: the latter still wins */
		{ "CodeBlob", "_code_begin", 32 },
		{ "CodeBlob", "_code_end", 40 },
		{ "CodeHeap", "_memory", 8 },
		{ "CodeHeap", "_segmap", 120 },
		{ "CodeHeap", "_log2_segment_size", 256 },
		{ "VirtualSpace", "_low_boundary", 0 },
		{ "VirtualSpace", "_high_boundary", 8 },
		{ "GrowableArrayBase", "_len", 0 },
		{ "GrowableArray<int>", "_data", 8 },
		{ "CompiledMethod", "_method", 112 },
		{ "nmethod", "_compile_id", 304 },
		{ "Method", "_constMethod", 8 },
		{ "ConstMethod", "_constants", 8 },
		{ "ConstMethod", "_code_size", 32 },
		{ "ConstMethod", "_flags", 28 },
		{ "ConstMethod", "_name_index", 34 },
		{ "ConstMethod", "_signature_index", 36 },
		{ "ConstantPool", "_pool_holder", 24 },
		{ "Klass", "_name", 24 },
		{ "Symbol", "_length", 4 },
		{ "Symbol", "_body", 6 },
		{ "Thread", "_osthread", 200 }, /* not wanted */
	};

	assert_non_null(im);
	im->used = IMG_SIZE;
	im->str = STRINGS;
	/* layout symbols: cells in SYMS, their values as libjvm's initialisers set them */
	for (int i = 0; i < HS_SYM_NR; i++)
		im->sym[i] = BASE + SYMS + 8 * (uint64_t)i;
	put64(im, SYMS + 8 * HS_SYM_STRUCTS, BASE + STRUCTS);
	put64(im, SYMS + 8 * HS_SYM_STRUCT_STRIDE, 48);
	put64(im, SYMS + 8 * HS_SYM_STRUCT_TYPE_NAME, 0);
	put64(im, SYMS + 8 * HS_SYM_STRUCT_FIELD_NAME, 8);
	put64(im, SYMS + 8 * HS_SYM_STRUCT_IS_STATIC, 24);
	put64(im, SYMS + 8 * HS_SYM_STRUCT_OFFSET, 32);
	put64(im, SYMS + 8 * HS_SYM_STRUCT_ADDRESS, 40);
	put64(im, SYMS + 8 * HS_SYM_TYPES, BASE + TYPES);
	put64(im, SYMS + 8 * HS_SYM_TYPE_STRIDE, 40);
	put64(im, SYMS + 8 * HS_SYM_TYPE_TYPE_NAME, 0);
	put64(im, SYMS + 8 * HS_SYM_TYPE_SIZE, 32);
	put64(im, SYMS + 8 * HS_SYM_INTS, BASE + INTS);
	put64(im, SYMS + 8 * HS_SYM_INT_STRIDE, 16);
	put64(im, SYMS + 8 * HS_SYM_INT_NAME, 0);
	put64(im, SYMS + 8 * HS_SYM_INT_VALUE, 8);
	put64(im, SYMS + 8 * HS_SYM_LONGS, BASE + LONGS);
	put64(im, SYMS + 8 * HS_SYM_LONG_STRIDE, 16);
	put64(im, SYMS + 8 * HS_SYM_LONG_NAME, 0);
	put64(im, SYMS + 8 * HS_SYM_LONG_VALUE, 8);
	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++)
		add_field(im, offs[i].type, offs[i].field, false, offs[i].off);
	/* statics: the release string's pointer, version ints, the code cache */
	put64(im, STATICS, str(im, "17.0.99+1-test"));
	put32(im, STATICS + 8, 17);
	put32(im, STATICS + 12, 0);
	put32(im, STATICS + 16, 99);
	put64(im, STATICS + 24, 0x7f0000000000ull); /* _low_bound */
	put64(im, STATICS + 32, 0x7f000f000000ull); /* _high_bound */
	put64(im, STATICS + 40, 0x5555000);
	add_field(im, "Abstract_VM_Version", "_s_vm_release", true, BASE + STATICS);
	add_field(im, "Abstract_VM_Version", "_vm_major_version", true, BASE + STATICS + 8);
	add_field(im, "Abstract_VM_Version", "_vm_minor_version", true, BASE + STATICS + 12);
	add_field(im, "Abstract_VM_Version", "_vm_security_version", true, BASE + STATICS + 16);
	add_field(im, "CodeCache", "_low_bound", true, BASE + STATICS + 24);
	add_field(im, "CodeCache", "_high_bound", true, BASE + STATICS + 32);
	add_field(im, "CodeCache", "_heaps", true, BASE + STATICS + 40);
	add_type(im, "HeapBlock", 16);
	add_type(im, "ConstMethod", 48);
	add_type(im, "ConstantPool", 72);
	add_type(im, "JavaThread", 1024); /* not wanted */
	add_const(im, false, "InvocationEntryBci", -1);
	add_const(im, false, "frame::interpreter_frame_sender_sp_offset", -1);
	add_const(im, false, "ConstMethod::_has_linenumber_table", 1);
	add_const(im, true, "markWord::hash_mask", 0x7fffffff);
	return im;
}

static int read_img(struct img *im, struct hotspot_vm *vm, const char **why)
{
	return hotspot_vmstructs__read(im->sym, rd, im, vm, why);
}

static void test_good(void **state)
{
	struct img *im = build();
	struct hotspot_vm vm;
	const char *why = "unset";
	char name[128];

	(void)state;
	assert_int_equal(read_img(im, &vm, &why), 0);
	assert_null(why);
	assert_string_equal(vm.release, "17.0.99+1-test");
	assert_int_equal(vm.major, 17);
	assert_int_equal(vm.security, 99);
	assert_int_equal(vm.nr_structs, 33);
	/* 25 + 7 statics less Thread::_osthread (not wanted) and _data_offset (_code_end's) */
	assert_int_equal(vm.nr_fields, 31);
	assert_int_equal(vm.nr_types, 4);
	assert_int_equal(vm.nr_sizes, 3);
	assert_int_equal(vm.nr_ints, 3);
	assert_int_equal(vm.nr_longs, 1);
	assert_int_equal(vm.field[HS_F_METHOD_CONSTMETHOD], 8);
	assert_int_equal(vm.field[HS_F_CODEHEAP_LOG2_SEGMENT], 256);
	assert_int_equal(vm.field[HS_F_NMETHOD_METHOD], 112);
	assert_string_equal(hotspot_field__name(&vm, HS_F_NMETHOD_METHOD, name, sizeof(name)),
			    "CompiledMethod::_method");
	/* _code_end preferred over _data_offset, whatever their order */
	assert_int_equal(vm.field[HS_F_CODEBLOB_CODE_END], 40);
	assert_string_equal(hotspot_field__name(&vm, HS_F_CODEBLOB_CODE_END, name, sizeof(name)),
			    "CodeBlob::_code_end");
	assert_false(hotspot_vm__has(&vm, HS_F_CODEBLOB_KIND));
	assert_false(hotspot_vm__has(&vm, HS_S_JDK_CURRENT));
	assert_int_equal(vm.field[HS_S_VM_RELEASE], BASE + STATICS);
	assert_int_equal(vm.size[HS_T_CONSTMETHOD], 48);
	assert_int_equal(vm.size[HS_T_NMETHOD], 0);
	assert_int_equal(vm.constant[HS_C_INVOCATION_ENTRY_BCI], -1);
	assert_int_equal(vm.constant[HS_C_HAS_LINENUMBERS], 1);
	assert_true(vm.have_const & 1u << HS_C_FRAME_SENDER_SP);
	assert_false(vm.have_const & 1u << HS_C_BLOBKIND_NMETHOD);
	assert_int_equal(vm.code_low, 0x7f0000000000ull);
	assert_int_equal(vm.code_high, 0x7f000f000000ull);
	assert_int_equal(vm.heaps, 0x5555000);
	free(im);
}

/* Cut anywhere: an error with its reason, or the whole read when all it needs is there */
static void test_truncated(void **state)
{
	struct img *im = build();
	struct hotspot_vm vm;
	const char *why;
	size_t full = im->str;

	(void)state;
	for (size_t cut = 0; cut < full; cut += 61) {
		int err;

		im->used = cut;
		err = read_img(im, &vm, &why);
		assert_int_not_equal(err, 0);
		assert_non_null(why);
	}
	/* whole pages: a name is read up to HS_MAX_NAME bytes within its page */
	im->used = (full + 4095) & ~4095ul;
	assert_int_equal(read_img(im, &vm, &why), 0);
	free(im);
}

static void test_layout_bounds(void **state)
{
	struct hotspot_vm vm;
	const char *why;
	struct img *im;

	(void)state;
	/* a stride of 4096: refused before any entry is read */
	im = build();
	put64(im, SYMS + 8 * HS_SYM_STRUCT_STRIDE, 4096);
	assert_int_equal(read_img(im, &vm, &why), -EBADMSG);
	assert_non_null(strstr(why, "stride"));
	free(im);
	/* zero strides: libjvm's initialisers have not run (a JVM starting): try again */
	im = build();
	put64(im, SYMS + 8 * HS_SYM_TYPE_STRIDE, 0);
	assert_int_equal(read_img(im, &vm, &why), -EAGAIN);
	free(im);
	/* a NULL table */
	im = build();
	put64(im, SYMS + 8 * HS_SYM_STRUCTS, 0);
	assert_int_equal(read_img(im, &vm, &why), -EAGAIN);
	free(im);
	/* a field offset outside the entry */
	im = build();
	put64(im, SYMS + 8 * HS_SYM_STRUCT_ADDRESS, 44);
	assert_int_equal(read_img(im, &vm, &why), -EBADMSG);
	assert_non_null(strstr(why, "outside its entry"));
	free(im);
	/* a symbol missing in libjvm */
	im = build();
	im->sym[HS_SYM_LONG_VALUE] = 0;
	assert_int_equal(read_img(im, &vm, &why), -ENOTSUP);
	free(im);
}

/* A table with no NULL entry: the walk stops at HS_MAX_ENTRIES */
static void test_absurd_count(void **state)
{
	struct img *im = build();
	struct hotspot_vm vm;
	const char *why;

	(void)state;
	im->endless = 0x40000000;
	im->endless_stride = 48;
	put64(im, SYMS + 8 * HS_SYM_STRUCTS, im->endless);
	assert_int_equal(read_img(im, &vm, &why), -EBADMSG);
	assert_non_null(strstr(why, "no end"));
	assert_int_equal(vm.nr_structs, HS_MAX_ENTRIES);
	/* the entry's names, read for each entry, and the entry: bounded */
	assert_true(im->reads < 4ull * HS_MAX_ENTRIES);
	free(im);
}

static void test_absurd_values(void **state)
{
	struct hotspot_vm vm;
	const char *why;
	struct img *im;

	(void)state;
	im = build();
	put64(im, STRUCTS + 48 * 2 + 32, 1u << 20); /* CodeBlob::_frame_size at 1 MiB */
	assert_int_equal(read_img(im, &vm, &why), -EBADMSG);
	assert_non_null(strstr(why, "absurd offset"));
	free(im);
	im = build();
	put64(im, TYPES + 40 * 1 + 32, 1ull << 40); /* ConstMethod's size */
	assert_int_equal(read_img(im, &vm, &why), -EBADMSG);
	assert_non_null(strstr(why, "absurd size"));
	free(im);
	/* a static entry where an offset is wanted */
	im = build();
	put32(im, STRUCTS + 48 * 0 + 24, 1);
	put64(im, STRUCTS + 48 * 0 + 40, BASE);
	assert_int_equal(read_img(im, &vm, &why), -EBADMSG);
	free(im);
	/* the code cache's bounds reversed */
	im = build();
	put64(im, STATICS + 24, 0x7f0010000000ull);
	assert_int_equal(read_img(im, &vm, &why), -EBADMSG);
	free(im);
}

static void test_conflicts(void **state)
{
	struct hotspot_vm vm;
	const char *why;
	struct img *im;

	(void)state;
	/* the same field again with another value: forged */
	im = build();
	add_field(im, "Klass", "_name", false, 32);
	assert_int_equal(read_img(im, &vm, &why), -EBADMSG);
	assert_non_null(strstr(why, "twice"));
	free(im);
	/* again with the same value: fine */
	im = build();
	add_field(im, "Klass", "_name", false, 24);
	assert_int_equal(read_img(im, &vm, &why), 0);
	assert_int_equal(vm.field[HS_F_KLASS_NAME], 24);
	free(im);
	/* a field the unwinder needs is missing: another kind of JVM, named */
	im = build();
	put64(im, STRUCTS + 48 * 22 + 8, str(im, "_not_name")); /* Klass::_name */
	assert_int_equal(read_img(im, &vm, &why), -ENOTSUP);
	assert_string_equal(vm.missing, "Klass");
	assert_string_equal(vm.missing_name, "_name");
	free(im);
}

static void test_bad_strings(void **state)
{
	struct hotspot_vm vm;
	const char *why;
	struct img *im;
	char longname[400];

	(void)state;
	/* a type name with no NUL within HS_MAX_NAME */
	im = build();
	memset(longname, 'A', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	put64(im, STRUCTS + 48 * 3, str(im, longname));
	assert_int_equal(read_img(im, &vm, &why), -EBADMSG);
	assert_non_null(strstr(why, "malformed"));
	free(im);
	/* unterminated at the end of readable memory */
	im = build();
	im->used = im->str;
	memset(im->b + im->str - 8, 'B', 8);
	put64(im, STRUCTS + 48 * 3, BASE + im->str - 8);
	assert_int_equal(read_img(im, &vm, &why), -EFAULT);
	free(im);
	/* not printable */
	im = build();
	put64(im, STRUCTS + 48 * 4 + 8, str(im, "_code\x01"));
	assert_int_equal(read_img(im, &vm, &why), -EBADMSG);
	free(im);
	/* a name pointer to nowhere */
	im = build();
	put64(im, TYPES + 40 * 2, 0xdead0000);
	assert_int_equal(read_img(im, &vm, &why), -EFAULT);
	free(im);
	/* the release string empty */
	im = build();
	put64(im, STATICS, str(im, ""));
	assert_int_equal(read_img(im, &vm, &why), -EBADMSG);
	free(im);
}

/* Pointers that lead back into themselves end as bad names, not loops */
static void test_looping_pointers(void **state)
{
	struct hotspot_vm vm;
	const char *why;
	struct img *im;

	(void)state;
	/* gHotSpotVMStructs points at its own cell: entry 0's type name is that pointer's bytes */
	im = build();
	put64(im, SYMS + 8 * HS_SYM_STRUCTS, BASE + SYMS + 8 * HS_SYM_STRUCTS);
	assert_int_not_equal(read_img(im, &vm, &why), 0);
	free(im);
	/* a type name pointing at its own entry */
	im = build();
	put64(im, STRUCTS + 48 * 5, BASE + STRUCTS + 48 * 5);
	assert_int_not_equal(read_img(im, &vm, &why), 0);
	free(im);
	/* the release string's pointer pointing at itself */
	im = build();
	put64(im, STATICS, BASE + STATICS);
	assert_int_not_equal(read_img(im, &vm, &why), 0);
	free(im);
}

/* CodeCache::_heaps: a GrowableArray at HEAPS of 3 CodeHeap pointers, as JDK 17 lays them out */
#define HEAPS 0xf000

static void add_heaps(struct img *im, int32_t len)
{
	static const uint64_t bounds[3][2] = {
		{ 0x7f0007000000ull, 0x7f000f000000ull },
		{ 0x7f0000000000ull, 0x7f0006800000ull },
		{ 0x7f0006800000ull, 0x7f0007000000ull },
	};

	put64(im, STATICS + 40, BASE + HEAPS);
	put32(im, HEAPS, (uint32_t)len); /* GrowableArrayBase::_len @0 */
	put64(im, HEAPS + 8, BASE + HEAPS + 0x100); /* GrowableArray<int>::_data @8 */
	for (int i = 0; i < 3; i++) {
		size_t heap = HEAPS + 0x200 + 0x400 * (size_t)i;

		put64(im, HEAPS + 0x100 + 8 * (size_t)i, BASE + heap);
		put64(im, heap + 8 + 0,
		      bounds[i][0]); /* _memory @8: VirtualSpace low @0, high @8 */
		put64(im, heap + 8 + 8, bounds[i][1]);
		put64(im, heap + 120, 0x5000000 + 0x100000 * (uint64_t)i); /* _segmap's low */
		put32(im, heap + 256, 7); /* _log2_segment_size */
	}
}

static void test_heaps(void **state)
{
	struct hotspot_heap heaps[HS_MAX_HEAPS];
	struct hotspot_vm vm;
	const char *why;
	struct img *im;

	(void)state;
	/* not set up yet: _heaps NULL */
	im = build();
	put64(im, STATICS + 40, 0);
	assert_int_equal(read_img(im, &vm, &why), 0);
	assert_int_equal(hotspot_vmstructs__heaps(&vm, rd, im, heaps, HS_MAX_HEAPS, &why), 0);
	/* set up since the tables were read: read now */
	add_heaps(im, 3);
	assert_int_equal(hotspot_vmstructs__heaps(&vm, rd, im, heaps, HS_MAX_HEAPS, &why), 3);
	assert_int_equal(heaps[0].low, 0x7f0007000000ull);
	assert_int_equal(heaps[0].high, 0x7f000f000000ull);
	assert_int_equal(heaps[1].low, 0x7f0000000000ull);
	assert_int_equal(heaps[2].high, 0x7f0007000000ull);
	assert_int_equal(heaps[2].segmap, 0x5200000);
	assert_int_equal(heaps[1].log2_segment, 7);
	/* room for 2 only, an absurd length */
	assert_int_equal(hotspot_vmstructs__heaps(&vm, rd, im, heaps, 2, &why), -EBADMSG);
	put32(im, HEAPS, 1000);
	assert_int_equal(hotspot_vmstructs__heaps(&vm, rd, im, heaps, HS_MAX_HEAPS, &why),
			 -EBADMSG);
	put32(im, HEAPS, (uint32_t)-1);
	assert_int_equal(hotspot_vmstructs__heaps(&vm, rd, im, heaps, HS_MAX_HEAPS, &why),
			 -EBADMSG);
	put32(im, HEAPS, 3);
	/* a heap outside the code cache */
	put64(im, HEAPS + 0x200 + 8 + 8, 0x7f00ffffffffull);
	assert_int_equal(hotspot_vmstructs__heaps(&vm, rd, im, heaps, HS_MAX_HEAPS, &why),
			 -EBADMSG);
	assert_non_null(strstr(why, "outside"));
	put64(im, HEAPS + 0x200 + 8 + 8, 0x7f000f000000ull);
	/* an absurd segment size; a heap pointer to nowhere */
	put32(im, HEAPS + 0x600 + 256, 40);
	assert_int_equal(hotspot_vmstructs__heaps(&vm, rd, im, heaps, HS_MAX_HEAPS, &why),
			 -EBADMSG);
	put32(im, HEAPS + 0x600 + 256, 7);
	put64(im, HEAPS + 0x100 + 16, 0xdead0000);
	assert_int_equal(hotspot_vmstructs__heaps(&vm, rd, im, heaps, HS_MAX_HEAPS, &why), -EFAULT);
	free(im);
}

/* tools/hotspot-dump.c's image (the fuzz harness's input format) into an img-like reader */
struct dump {
	uint8_t *b;
	size_t n;
	uint64_t sym[HS_SYM_NR];
};

static int dump_rd(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct dump *d = ctx;

	for (size_t at = sizeof(d->sym); at + 12 <= d->n;) {
		uint64_t a;
		uint32_t n;

		memcpy(&a, d->b + at, 8);
		memcpy(&n, d->b + at + 8, 4);
		at += 12;
		if (n > d->n - at)
			return -EFAULT;
		if (addr >= a && addr - a <= n && len <= n - (addr - a)) {
			memcpy(buf, d->b + at + (addr - a), len);
			return 0;
		}
		at += n;
	}
	return -EFAULT;
}

static void load_dump(struct dump *d, const char *path)
{
	FILE *f = fopen(path, "rb");

	assert_non_null(f);
	d->b = malloc(1 << 20);
	assert_non_null(d->b);
	d->n = fread(d->b, 1, 1 << 20, f);
	fclose(f);
	assert_true(d->n > sizeof(d->sym));
	memcpy(d->sym, d->b, sizeof(d->sym));
}

/* The values jhsdb clhsdb vmstructsdump gave for the same JVMs (and RUNTIMES' table) */
static void test_real_jdk17(void **state)
{
	struct hotspot_vm vm;
	const char *why;
	struct dump d;
	char name[128];

	(void)state;
	load_dump(&d, "tests/fuzz/corpus/hotspot_vmstructs/openjdk17");
	assert_int_equal(hotspot_vmstructs__read(d.sym, dump_rd, &d, &vm, &why), 0);
	assert_string_equal(vm.release, "17.0.15+6-Debian-1deb12u1");
	assert_int_equal(vm.major, 17);
	assert_int_equal(vm.security, 15);
	assert_int_equal(vm.nr_structs, 788);
	assert_int_equal(vm.nr_types, 768);
	assert_int_equal(vm.nr_ints, 398);
	assert_int_equal(vm.nr_longs, 86);
	assert_int_equal(vm.field[HS_F_CODEBLOB_NAME], 96);
	assert_int_equal(vm.field[HS_F_CODEBLOB_FRAME_SIZE], 28);
	assert_int_equal(vm.field[HS_F_CODEBLOB_CODE_BEGIN], 32);
	assert_string_equal(hotspot_field__name(&vm, HS_F_CODEBLOB_CODE_END, name, sizeof(name)),
			    "CodeBlob::_code_end");
	assert_int_equal(vm.field[HS_F_NMETHOD_METHOD], 112);
	assert_int_equal(vm.field[HS_F_NMETHOD_COMPILE_ID], 304);
	assert_int_equal(vm.field[HS_F_NMETHOD_METADATA], 260);
	assert_int_equal(vm.field[HS_F_CODEHEAP_SEGMAP], 120);
	assert_int_equal(vm.field[HS_F_CODEHEAP_LOG2_SEGMENT], 256);
	assert_int_equal(vm.field[HS_F_CONSTMETHOD_CODE_SIZE], 32);
	assert_int_equal(vm.field[HS_F_CONSTMETHOD_NAME_INDEX], 34);
	assert_int_equal(vm.field[HS_F_CPOOL_SOURCE_FILE], 54);
	assert_int_equal(vm.size[HS_T_CONSTMETHOD], 48);
	assert_int_equal(vm.size[HS_T_HEAPBLOCK], 16);
	assert_int_equal(vm.size[HS_T_CPOOL], 72);
	assert_int_equal(vm.constant[HS_C_INVOCATION_ENTRY_BCI], -1);
	assert_int_equal(vm.constant[HS_C_FRAME_LAST_SP], -2);
	assert_int_equal(vm.constant[HS_C_HAS_LINENUMBERS], 1);
	assert_true(hotspot_vm__has(&vm, HS_S_JDK_CURRENT));
	assert_false(vm.code_offsets);
	assert_int_equal(vm.unsigned5_x, 0);
	assert_true(vm.code_low && vm.code_high - vm.code_low == 240ull << 20);
	free(d.b);
}

static void test_real_jdk25(void **state)
{
	struct hotspot_vm vm;
	const char *why;
	struct dump d;
	char name[128];

	(void)state;
	load_dump(&d, "tests/fuzz/corpus/hotspot_vmstructs/temurin25");
	assert_int_equal(hotspot_vmstructs__read(d.sym, dump_rd, &d, &vm, &why), 0);
	assert_string_equal(vm.release, "25.0.3+9-LTS");
	assert_int_equal(vm.major, 25);
	assert_int_equal(vm.nr_structs, 585);
	assert_int_equal(vm.nr_types, 335);
	assert_int_equal(vm.nr_ints, 346);
	assert_int_equal(vm.nr_longs, 97);
	assert_int_equal(vm.field[HS_F_CODEBLOB_NAME], 8);
	assert_int_equal(vm.field[HS_F_CODEBLOB_FRAME_SIZE], 44);
	assert_int_equal(vm.field[HS_F_CODEBLOB_FRAME_COMPLETE], 54);
	assert_int_equal(vm.field[HS_F_CODEBLOB_CODE_BEGIN], 36);
	assert_string_equal(hotspot_field__name(&vm, HS_F_CODEBLOB_CODE_BEGIN, name, sizeof(name)),
			    "CodeBlob::_code_offset");
	assert_int_equal(vm.field[HS_F_CODEBLOB_KIND], 56);
	assert_int_equal(vm.field[HS_F_NMETHOD_METHOD], 80);
	assert_string_equal(hotspot_field__name(&vm, HS_F_NMETHOD_METHOD, name, sizeof(name)),
			    "nmethod::_method");
	assert_int_equal(vm.field[HS_F_NMETHOD_COMPILE_ID], 212);
	assert_int_equal(vm.field[HS_F_NMETHOD_IMMUTABLE_DATA], 96);
	assert_int_equal(vm.field[HS_F_NMETHOD_DEOPT_HANDLER], 176);
	assert_int_equal(vm.field[HS_F_CODEHEAP_MEMORY], 0);
	assert_int_equal(vm.field[HS_F_CODEHEAP_SEGMAP], 112);
	assert_int_equal(vm.field[HS_F_CONSTMETHOD_CODE_SIZE], 34);
	assert_string_equal(hotspot_field__name(&vm, HS_F_CONSTMETHOD_FLAGS, name, sizeof(name)),
			    "ConstMethod::_flags._flags");
	assert_int_equal(vm.size[HS_T_CONSTMETHOD], 56);
	assert_int_equal(vm.size[HS_T_HEAPBLOCK], 8);
	assert_int_equal(vm.constant[HS_C_BLOBKIND_NMETHOD], 1);
	assert_int_equal(vm.constant[HS_C_HAS_LINENUMBERS], 1);
	assert_false(hotspot_vm__has(&vm, HS_S_JDK_CURRENT));
	assert_true(vm.code_offsets);
	assert_int_equal(vm.unsigned5_x, 1);
	free(d.b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_heaps),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_layout_bounds),
		cmocka_unit_test(test_absurd_count),
		cmocka_unit_test(test_absurd_values),
		cmocka_unit_test(test_conflicts),
		cmocka_unit_test(test_bad_strings),
		cmocka_unit_test(test_looping_pointers),
		cmocka_unit_test(test_real_jdk17),
		cmocka_unit_test(test_real_jdk25),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

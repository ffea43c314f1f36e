// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/symbolize/v8_names.c (include/v8_names.h) on a
 * byte-level fake V8 heap laid out with node 20's metadata (tests/
 * v8_fixture.h read by v8_metadata.c): an interpreted frame named with its
 * script and the line and column of its bytecode offset (line ends counted
 * in the source string), cached on the second look; names from a
 * ScopeInfo (the inferred name of an anonymous function), cons, sliced,
 * thin and two-byte strings; an optimized frame whose inlined function
 * comes first; then hostile memory: a self-referencing cons string, an
 * object of the wrong type, an untagged word, an unreadable address, a
 * BytecodeArray that is not the frame's, a Code whose check differs; the
 * same frames in node 18's and 22's layouts, and a pc named by the range of
 * a Code of each shape.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>
#include "bpfprof_abi.h"
#include "v8_fixture.h"
#include "v8_metadata.h"
#include "v8_names.h"

#define HEAP_BASE 0x7f0000000000ull
#define HEAP_SIZE (64u << 10)

struct heap {
	uint8_t b[HEAP_SIZE];
	uint64_t next; /* the next free address */
	uint64_t maps[512]; /* instance type -> its map (tagged) */
	struct v8_metadata md;
};

static int heap_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct heap *h = ctx;

	if (addr < HEAP_BASE || addr + len > HEAP_BASE + HEAP_SIZE || addr + len < addr)
		return -EFAULT;
	memcpy(buf, h->b + (addr - HEAP_BASE), len);
	return 0;
}

static void put(struct heap *h, uint64_t obj, int32_t off, const void *v, size_t n)
{
	uint64_t at = obj - 1 + (uint64_t)off - HEAP_BASE;

	assert_true(at + n <= HEAP_SIZE);
	memcpy(h->b + at, v, n);
}

static void put64(struct heap *h, uint64_t obj, int32_t off, uint64_t v)
{
	put(h, obj, off, &v, 8);
}

static uint64_t smi(int64_t v)
{
	return (uint64_t)v << 32;
}

/* A new object of instance type (size bytes): its tagged address */
static uint64_t alloc(struct heap *h, uint16_t type, size_t size)
{
	uint64_t obj = h->next + 1;

	h->next += (size + 15) & ~15ull;
	assert_true(h->next <= HEAP_BASE + HEAP_SIZE);
	if (!h->maps[type]) {
		uint64_t map = h->next + 1;

		h->next += 32;
		put(h, map, h->md.map_instance_type, &type, 2);
		h->maps[type] = map;
	}
	put64(h, obj, 0, h->maps[type]);
	return obj;
}

static uint64_t str1(struct heap *h, const char *s)
{
	int32_t len = (int32_t)strlen(s);
	uint64_t o = alloc(h, 8, 16 + (size_t)len); /* SeqOneByteString */

	put(h, o, h->md.string_length, &len, 4);
	put(h, o, h->md.seq_one_byte_chars, s, (size_t)len);
	return o;
}

/* A heap laid out with the metadata of fixture o (node 20's by default) */
static struct heap *heap_new_as(const struct v8_fopts *o)
{
	struct heap *h = calloc(1, sizeof(*h));
	size_t len;
	uint8_t *b = v8_fixture(o, &len);
	int fd = memfd_create("v8md", MFD_CLOEXEC);
	char why[160];

	assert_non_null(h);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, b, len), (ssize_t)len);
	assert_int_equal(v8_metadata__read(fd, &h->md, why, sizeof(why)), 0);
	close(fd);
	free(b);
	h->next = HEAP_BASE + 64;
	return h;
}

static struct heap *heap_new(void)
{
	struct v8_fopts o = { 0 };

	return heap_new_as(&o);
}

/* zigzag VLQ as V8 writes it */
static size_t put_int(uint8_t *out, int64_t v)
{
	uint64_t u = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
	size_t n = 0;

	do {
		out[n] = u & 0x7f;
		u >>= 7;
		out[n++] |= u ? 0x80 : 0;
	} while (u);
	return n;
}

static uint64_t byte_array(struct heap *h, const uint8_t *d, size_t n)
{
	/* tables are in trusted space from 12.x (node 22) */
	uint64_t o = alloc(h,
			   (uint16_t)(h->md.type_trusted_byte_array >= 0 ?
					      h->md.type_trusted_byte_array :
					      h->md.type_byte_array),
			   16 + n);

	put64(h, o, h->md.fixed_array_length, smi((int64_t)n));
	put(h, o, h->md.fixed_array_data, d, n);
	return o;
}

/* A one-entry source-position table: code offset 0 at script offset off (inlining id, -1: none) */
static uint64_t table(struct heap *h, int32_t off, int32_t inlining)
{
	uint8_t t[16];
	size_t n = put_int(t, 1); /* code delta 1 from -1: offset 0, a statement */

	n += put_int(t + n, ((int64_t)(off + 1) << 1) | ((int64_t)(inlining + 1) << 31));
	return byte_array(h, t, n);
}

static const char SRC[] = "'use strict';\n// two\nfunction leaf() {\n  work();\n}\n";
#define WORK_OFF 41 /* "work();" on line 4, column 3 */

/* A script and a function: SFI with BytecodeArray; *ba its bytecode */
static uint64_t function(struct heap *h, uint64_t name, uint64_t *ba, uint64_t *script)
{
	const struct v8_metadata *md = &h->md;
	uint64_t sfi = alloc(h, (uint16_t)md->type_shared_function_info, 64);
	uint64_t undef = alloc(h, 131, 16);

	if (!*script) {
		*script = alloc(h, (uint16_t)md->type_script, 64);
		put64(h, *script, md->script_source, str1(h, SRC));
		put64(h, *script, md->script_name, str1(h, "/app/x.js"));
		put64(h, *script, md->script_line_ends, undef);
	}
	*ba = alloc(h, (uint16_t)md->type_bytecode_array, 64);
	put64(h, *ba, md->fixed_array_length, smi(4));
	put64(h, *ba, md->bytecode_array_source_position_table, table(h, WORK_OFF, -1));
	put64(h, sfi, md->sfi_function_data, *ba);
	put64(h, sfi, md->sfi_name_or_scope_info, name);
	put64(h, sfi, md->sfi_script_or_debug_info, *script);
	return sfi;
}

static uint64_t interp_w1(const struct heap *h, uint64_t ba, int bc_off)
{
	return BPFPROF_V8_WORD1(bc_off + h->md.bytecode_array_data - 1, BPFPROF_V8_PTR_CHECK(ba), 3,
				BPFPROF_V8_INTERPRETED);
}

static void test_interpreted(void **state)
{
	struct heap *h = heap_new();
	uint64_t ba, script = 0, sfi = function(h, str1(h, "leaf"), &ba, &script);
	struct v8_names *n = v8_names__new(&h->md, NULL, 0, heap_read, h);
	struct v8_names_stats st;
	struct v8_name out[4];

	(void)state;
	assert_non_null(n);
	assert_int_equal(v8_names__frame(n, sfi, interp_w1(h, ba, 2), false, out, 4), 1);
	assert_string_equal(out[0].func, "leaf");
	assert_string_equal(out[0].file, "/app/x.js");
	assert_int_equal(out[0].line, 4);
	assert_int_equal(out[0].col, 3);
	/* again: from the cache */
	assert_int_equal(v8_names__frame(n, sfi, interp_w1(h, ba, 2), false, out, 4), 1);
	assert_string_equal(out[0].func, "leaf");
	v8_names__stats(n, &st);
	assert_int_equal(st.frames, 2);
	assert_int_equal(st.frame_hits, 1);
	assert_int_equal(st.funcs, 1);
	assert_int_equal(st.scripts, 1);
	/* a BytecodeArray that is not the function's (flushed and compiled again): no line */
	assert_int_equal(v8_names__frame(n, sfi,
					 BPFPROF_V8_WORD1(60, BPFPROF_V8_PTR_CHECK(ba) ^ 1, 0,
							  BPFPROF_V8_INTERPRETED),
					 false, out, 4),
			 1);
	assert_string_equal(out[0].func, "leaf");
	assert_int_equal(out[0].line, 0);
	v8_names__free(n);
	free(h);
}

static void test_names(void **state)
{
	struct heap *h = heap_new();
	const struct v8_metadata *md = &h->md;
	struct v8_names *n = v8_names__new(md, NULL, 0, heap_read, h);
	uint64_t ba, script = 0, sfi, scope, cons, sliced, thin, two, self;
	struct v8_name out[2];
	int32_t len;
	uint16_t u16[3] = { 'e', 0xe9, 0x4e2d }; /* e, é, 中 */

	(void)state;
	/* a ScopeInfo: flags, params, 1 context local (name, info), '' name, -1, inferred name */
	scope = alloc(h, (uint16_t)md->type_scope_info, 96);
	put64(h, scope, 8, smi(0));
	put64(h, scope, 16, smi(0));
	put64(h, scope, 24, smi(1));
	put64(h, scope, 32, str1(h, "local"));
	put64(h, scope, 40, smi(7));
	put64(h, scope, 48, str1(h, ""));
	put64(h, scope, 56, smi(-1));
	put64(h, scope, 64, str1(h, "obj.method"));
	/* ba is function()'s: set before interp_w1 reads it (arguments have no order) */
	sfi = function(h, scope, &ba, &script);
	assert_int_equal(v8_names__frame(n, sfi, interp_w1(h, ba, 0), true, out, 2), 1);
	assert_string_equal(out[0].func, "obj.method");

	/* cons "ha" + "ndler" */
	cons = alloc(h, 8 | 1, 32);
	len = 7;
	put(h, cons, md->string_length, &len, 4);
	put64(h, cons, md->cons_first, str1(h, "ha"));
	put64(h, cons, md->cons_second, str1(h, "ndler"));
	sfi = function(h, cons, &ba, &script);
	assert_int_equal(v8_names__frame(n, sfi, interp_w1(h, ba, 0), true, out, 2), 1);
	assert_string_equal(out[0].func, "handler");

	/* sliced: "xxrunyy"[2, 5) */
	sliced = alloc(h, 8 | 3, 32);
	len = 3;
	put(h, sliced, md->string_length, &len, 4);
	put64(h, sliced, md->sliced_parent, str1(h, "xxrunyy"));
	put64(h, sliced, md->sliced_offset, smi(2));
	/* thin: to the sliced one */
	thin = alloc(h, 8 | 5, 32);
	put(h, thin, md->string_length, &len, 4);
	put64(h, thin, md->thin_actual, sliced);
	sfi = function(h, thin, &ba, &script);
	assert_int_equal(v8_names__frame(n, sfi, interp_w1(h, ba, 0), true, out, 2), 1);
	assert_string_equal(out[0].func, "run");

	/* two-byte: UTF-8 out */
	two = alloc(h, 0, 32);
	len = 3;
	put(h, two, md->string_length, &len, 4);
	put(h, two, md->seq_two_byte_chars, u16, sizeof(u16));
	sfi = function(h, two, &ba, &script);
	assert_int_equal(v8_names__frame(n, sfi, interp_w1(h, ba, 0), true, out, 2), 1);
	assert_string_equal(out[0].func, "e\xc3\xa9\xe4\xb8\xad");

	/* a cons string that is its own first part: bounded, no name */
	self = alloc(h, 8 | 1, 32);
	len = 4;
	put(h, self, md->string_length, &len, 4);
	put64(h, self, md->cons_first, self);
	put64(h, self, md->cons_second, self);
	sfi = function(h, self, &ba, &script);
	assert_int_equal(v8_names__frame(n, sfi, interp_w1(h, ba, 0), true, out, 2), 1);
	assert_string_equal(out[0].func, "(anonymous)");
	v8_names__free(n);
	free(h);
}

static void test_optimized_inlined(void **state)
{
	struct heap *h = heap_new();
	const struct v8_metadata *md = &h->md;
	uint64_t ba, script = 0, outer = function(h, str1(h, "leaf"), &ba, &script);
	uint64_t inner = function(h, str1(h, "helper"), &ba, &script);
	uint64_t code = alloc(h, (uint16_t)md->type_code, 64);
	uint64_t deopt = alloc(h, (uint16_t)md->type_fixed_array, 16 + 8 * 8);
	uint64_t lits = alloc(h, (uint16_t)md->type_fixed_array, 24);
	uint32_t flags = 13, size = 0x400;
	struct {
		int64_t pos;
		int32_t fn_id, pad;
	} ip = { ((int64_t)(WORK_OFF + 1) << 1), 0,
		 0 }; /* called at work(), in the outer function */
	struct v8_names *n = v8_names__new(md, NULL, 0, heap_read, h);
	struct v8_name out[4];
	uint64_t w1 =
		BPFPROF_V8_WORD1(0x21, BPFPROF_V8_CODE_CHECK(size, flags), 2, BPFPROF_V8_OPTIMIZED);

	(void)state;
	put(h, code, md->code_flags, &flags, 4);
	put(h, code, md->code_instruction_size, &size, 4);
	/* the inlined function's own position: "function leaf" on line 3, column 1 */
	put64(h, code, md->code_source_position_table, table(h, 21, 0));
	put64(h, code, md->code_deoptimization_data, deopt);
	put64(h, deopt, md->fixed_array_length, smi(8));
	put64(h, deopt, md->fixed_array_data + 8 * md->deopt_literal_array, lits);
	put64(h, deopt, md->fixed_array_data + 8 * md->deopt_shared_function_info, outer);
	put64(h, deopt, md->fixed_array_data + 8 * md->deopt_inlining_positions,
	      byte_array(h, (const uint8_t *)&ip, sizeof(ip)));
	put64(h, lits, md->fixed_array_length, smi(1));
	put64(h, lits, md->fixed_array_data, inner);
	assert_int_equal(v8_names__frame(n, code, w1, false, out, 4), 2);
	assert_string_equal(out[0].func, "helper");
	assert_int_equal(out[0].line, 3);
	assert_int_equal(out[0].col, 1);
	assert_string_equal(out[1].func, "leaf");
	assert_int_equal(out[1].line, 4);
	assert_int_equal(out[1].col, 3);
	/* a Code whose size or kind is not the walk's: not named (another object there now) */
	assert_int_equal(v8_names__frame(n, code, w1 ^ (1ull << 32), false, out, 4), 0);
	v8_names__free(n);
	free(h);
}

/*
 * Node 18's and 22's shapes (tests/v8_fixture.h): an interpreted frame
 * (BytecodeArray's positions 3 words after its length; after its wrapper),
 * an optimized frame with its inlined function (Code's tables derived from
 * its shape; node 22's DeoptimizationData a TrustedFixedArray), then a pc in
 * that Code named by its range: the instructions right after node 18's
 * 128-byte header, or at node 22's instruction start pointer.
 */
static void other_version(const struct v8_fopts *o)
{
	struct heap *h = heap_new_as(o);
	const struct v8_metadata *md = &h->md;
	uint64_t ba, script = 0, outer = function(h, str1(h, "leaf"), &ba, &script);
	uint64_t inner = function(h, str1(h, "helper"), &ba, &script);
	uint64_t code = alloc(h, (uint16_t)md->type_code, 256);
	uint64_t deopt =
		alloc(h,
		      (uint16_t)(md->type_trusted_fixed_array >= 0 ? md->type_trusted_fixed_array :
								     md->type_fixed_array),
		      16 + 8 * 8);
	uint64_t lits = alloc(h, (uint16_t)md->type_fixed_array, 24);
	uint32_t flags = 13, size = 0x400;
	struct {
		int64_t pos;
		int32_t fn_id, pad;
	} ip = { ((int64_t)(WORK_OFF + 1) << 1), 0, 0 };
	struct v8_names *n = v8_names__new(md, NULL, 0, heap_read, h);
	struct v8_name out[4];
	uint64_t start = md->code_header_size >= 0 ? code - 1 + (uint64_t)md->code_header_size :
						     0x7e0000001000ull;
	uint64_t w1 =
		BPFPROF_V8_WORD1(0x21, BPFPROF_V8_CODE_CHECK(size, flags), 2, BPFPROF_V8_OPTIMIZED);

	assert_non_null(n);
	assert_true(md->code_tables_derived);
	/* interpreted: line 4, column 3 */
	assert_int_equal(v8_names__frame(n, inner, interp_w1(h, ba, 2), false, out, 4), 1);
	assert_string_equal(out[0].func, "helper");
	assert_int_equal(out[0].line, 4);
	/* optimized, its inlined function first */
	put(h, code, md->code_flags, &flags, 4);
	put(h, code, md->code_instruction_size, &size, 4);
	if (md->code_instruction_start >= 0)
		put64(h, code, md->code_instruction_start, start);
	put64(h, code, md->code_source_position_table, table(h, 21, 0));
	put64(h, code, md->code_deoptimization_data, deopt);
	put64(h, deopt, md->fixed_array_length, smi(8));
	put64(h, deopt, md->fixed_array_data + 8 * md->deopt_literal_array, lits);
	put64(h, deopt, md->fixed_array_data + 8 * md->deopt_shared_function_info, outer);
	put64(h, deopt, md->fixed_array_data + 8 * md->deopt_inlining_positions,
	      byte_array(h, (const uint8_t *)&ip, sizeof(ip)));
	put64(h, lits, md->fixed_array_length, smi(1));
	put64(h, lits, md->fixed_array_data, inner);
	assert_int_equal(v8_names__frame(n, code, w1, false, out, 4), 2);
	assert_string_equal(out[0].func, "helper");
	assert_int_equal(out[0].line, 3);
	assert_string_equal(out[1].func, "leaf");
	assert_int_equal(out[1].line, 4);
	/* a return address in that Code, with no frame record: named by its range */
	assert_int_equal(v8_names__pc(n, start + 0x21, false, out, 4), 2);
	assert_string_equal(out[1].func, "leaf");
	/* past its end: not */
	assert_int_equal(v8_names__pc(n, start + size + 1, false, out, 4), 0);
	v8_names__free(n);
	free(h);
}

static void test_node18(void **state)
{
	struct v8_fopts o = { .syms = node18_syms, .nr = NODE18_NR };

	(void)state;
	other_version(&o);
}

static void test_node22(void **state)
{
	struct v8_fopts o = { .syms = node22_syms, .nr = NODE22_NR };

	(void)state;
	other_version(&o);
}

static void test_hostile(void **state)
{
	struct heap *h = heap_new();
	uint64_t ba, script = 0, sfi = function(h, str1(h, "leaf"), &ba, &script);
	struct v8_names *n = v8_names__new(&h->md, NULL, 0, heap_read, h);
	struct v8_names_stats st;
	struct v8_name out[2];

	(void)state;
	/* not a heap object's tag, unreadable, the wrong type (a string), a kind unknown */
	assert_int_equal(v8_names__frame(n, sfi - 1, interp_w1(h, ba, 0), true, out, 2), 0);
	assert_int_equal(v8_names__frame(n, 0x1000001, interp_w1(h, ba, 0), true, out, 2), 0);
	assert_int_equal(v8_names__frame(n, str1(h, "x"), interp_w1(h, ba, 0), true, out, 2), 0);
	assert_int_equal(v8_names__frame(n, sfi, BPFPROF_V8_WORD1(0, 0, 0, 7), true, out, 2), 0);
	/* the script's source unreadable: named, no line */
	put64(h, script, h->md.script_source, 0x1000001);
	sfi = function(h, str1(h, "f2"), &ba, &script);
	assert_int_equal(v8_names__frame(n, sfi, interp_w1(h, ba, 0), true, out, 2), 1);
	assert_string_equal(out[0].func, "f2");
	assert_int_equal(out[0].line, 0);
	v8_names__stats(n, &st);
	assert_int_equal(st.bad, 4);
	v8_names__free(n);
	free(h);
}

/*
 * A script's source that could not be read (a cons string being flattened,
 * a source moved while read): its frames named without a line and not
 * cached, the source read again at the next look; one never readable is
 * given up after SCRIPT_TRIES reads (7 retries at the 2nd, 3rd, 5th ...
 * 65th look since the failure before, that one's included: 134 looks),
 * then cached
 */
static void test_script_retry(void **state)
{
	struct heap *h = heap_new();
	uint64_t ba, script = 0, sfi = function(h, str1(h, "leaf"), &ba, &script), src;
	struct v8_names *n = v8_names__new(&h->md, NULL, 0, heap_read, h);
	struct v8_names_stats st;
	struct v8_name out[2];
	int k;

	(void)state;
	memcpy(&src, h->b + (script - 1 + h->md.script_source - HEAP_BASE), 8);
	put64(h, script, h->md.script_source, 0x1000001);
	assert_int_equal(v8_names__frame(n, sfi, interp_w1(h, ba, 2), false, out, 2), 1);
	assert_string_equal(out[0].func, "leaf");
	assert_int_equal(out[0].line, 0);
	/* readable again: the next look reads it, with the line */
	put64(h, script, h->md.script_source, src);
	assert_int_equal(v8_names__frame(n, sfi, interp_w1(h, ba, 2), false, out, 2), 1);
	assert_int_equal(out[0].line, 4);
	assert_int_equal(out[0].col, 3);
	v8_names__stats(n, &st);
	assert_int_equal(st.frame_hits, 0);
	assert_int_equal(st.script_retries, 1);
	assert_int_equal(st.scripts, 1);
	/* now cached */
	assert_int_equal(v8_names__frame(n, sfi, interp_w1(h, ba, 2), false, out, 2), 1);
	assert_int_equal(out[0].line, 4);
	v8_names__stats(n, &st);
	assert_int_equal(st.frame_hits, 1);
	v8_names__free(n);

	/* never readable: 134 looks read it 7 more times, then the lineless result is kept */
	put64(h, script, h->md.script_source, 0x1000001);
	n = v8_names__new(&h->md, NULL, 0, heap_read, h);
	assert_non_null(n);
	for (k = 0; k < 134; k++) {
		assert_int_equal(v8_names__frame(n, sfi, interp_w1(h, ba, 2), false, out, 2), 1);
		assert_int_equal(out[0].line, 0);
	}
	v8_names__stats(n, &st);
	assert_int_equal(st.script_retries, 7);
	assert_int_equal(st.frame_hits, 0);
	assert_int_equal(v8_names__frame(n, sfi, interp_w1(h, ba, 2), false, out, 2), 1);
	assert_int_equal(out[0].line, 0);
	v8_names__stats(n, &st);
	assert_int_equal(st.script_retries, 7);
	assert_int_equal(st.frame_hits, 1);
	assert_int_equal(st.scripts, 0);
	v8_names__free(n);
	free(h);
}

/*
 * A Script whose name was not readable when its function was first named:
 * the file is read again at the next looks (up to SCRIPT_TRIES), and the
 * frame is not cached without it meanwhile
 */
static void test_file_retry(void **state)
{
	struct heap *h = heap_new();
	uint64_t ba, script = 0, sfi = function(h, str1(h, "leaf"), &ba, &script), name;
	struct v8_names *n = v8_names__new(&h->md, NULL, 0, heap_read, h);
	struct v8_names_stats st;
	struct v8_name out[2];
	int k;

	(void)state;
	assert_non_null(n);
	memcpy(&name, h->b + (script - 1 + h->md.script_name - HEAP_BASE), 8);
	put64(h, script, h->md.script_name, 0x1000001);
	assert_int_equal(v8_names__frame(n, sfi, interp_w1(h, ba, 2), false, out, 2), 1);
	assert_string_equal(out[0].func, "leaf");
	assert_string_equal(out[0].file, "");
	/* readable now: the next look has it, and the one after from the cache */
	put64(h, script, h->md.script_name, name);
	assert_int_equal(v8_names__frame(n, sfi, interp_w1(h, ba, 2), false, out, 2), 1);
	assert_string_equal(out[0].file, "/app/x.js");
	assert_int_equal(out[0].line, 4);
	assert_int_equal(v8_names__frame(n, sfi, interp_w1(h, ba, 2), false, out, 2), 1);
	assert_string_equal(out[0].file, "/app/x.js");
	v8_names__stats(n, &st);
	assert_int_equal(st.frame_hits, 1);
	assert_int_equal(st.funcs, 1);
	v8_names__free(n);

	/* a script without a name (eval): tried a bounded number of times, then cached */
	put64(h, script, h->md.script_name, 0x1000001);
	n = v8_names__new(&h->md, NULL, 0, heap_read, h);
	assert_non_null(n);
	for (k = 0; k < 10; k++) {
		assert_int_equal(v8_names__frame(n, sfi, interp_w1(h, ba, 2), false, out, 2), 1);
		assert_string_equal(out[0].file, "");
	}
	v8_names__stats(n, &st);
	assert_true(st.frame_hits >= 1 && st.frame_hits <= 3);
	v8_names__free(n);
	free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_interpreted),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_optimized_inlined),
		cmocka_unit_test(test_node18),
		cmocka_unit_test(test_node22),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_script_retry),
		cmocka_unit_test(test_file_retry),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

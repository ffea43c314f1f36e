// SPDX-License-Identifier: MIT
/*
 * Unit tests for user/symbolize/hotspot_names.c's decoders: HotSpot's
 * compressed line number tables (method.cpp read_pair: a pair byte, or 0xff
 * and two signed UNSIGNED5 ints) with X = 0 (JDK < 20) and X = 1, the
 * line of a bci (Method::line_number_from_bci), a scope's head (sender,
 * method index, bci + 1), truncated and forged input, and signatures in
 * Java form; and the readers over a synthetic JVM memory with JDK 17's
 * offsets: a method's names, file and lines, an nmethod's inlined scopes,
 * forged names, pointers, scope chains and PcDesc tables.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "hotspot_names.h"

/*
 * A JVM's memory: IMG bytes at BASE, with JDK 17's offsets (the tables'
 * values on OpenJDK 17.0.15): a Method, its ConstMethod with 4 bytes of
 * bytecode and a line table, its ConstantPool (holder, name, signature and
 * source file Symbols), the holder Klass; an nmethod whose PcDescs and
 * scopes give the method inlined into itself (two scopes).
 */
#define BASE 0x10000000ull
#define IMG 8192
static uint8_t img[IMG];

static int rd(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	if (addr < BASE || addr - BASE > IMG || len > IMG - (addr - BASE))
		return -EFAULT;
	memcpy(buf, img + (addr - BASE), len);
	return 0;
}

static void put(uint64_t at, const void *v, size_t n)
{
	memcpy(img + (at - BASE), v, n);
}

static void put64(uint64_t at, uint64_t v)
{
	put(at, &v, 8);
}

static void put32(uint64_t at, uint32_t v)
{
	put(at, &v, 4);
}

static void put16(uint64_t at, uint16_t v)
{
	put(at, &v, 2);
}

static void symbol(uint64_t at, const char *str)
{
	put16(at + 4, (uint16_t)strlen(str));
	put(at + 6, str, strlen(str));
}

#define METHOD (BASE + 0x100)
#define CMETHOD (BASE + 0x200)
#define CPOOL (BASE + 0x400)
#define KLASS (BASE + 0x600)
#define SYMS (BASE + 0x800)
#define NM (BASE + 0x1000)

static void jvm17(struct hotspot_vm *vm)
{
	/* zigzag(0), zigzag(10) then (bci 2, line 12) */
	const uint8_t lines[] = { 0xff, 0, 20, 2 << 3 | 2, 0 };
	/* scopes data: [0] null; [1] outer: sender 0, method 1, bci+1 3; [4] inner: sender 1, method 1, bci+1 1 */
	const uint8_t scopes[] = { 0, 0, 1, 3, 1, 1, 1 };

	memset(vm, 0, sizeof(*vm));
	memset(img, 0, sizeof(img));
	vm->field[HS_F_METHOD_CONSTMETHOD] = 8;
	vm->field[HS_F_CONSTMETHOD_CONSTANTS] = 8;
	vm->field[HS_F_CONSTMETHOD_CODE_SIZE] = 32;
	vm->field[HS_F_CONSTMETHOD_FLAGS] = 28;
	vm->field_alt[HS_F_CONSTMETHOD_FLAGS] = 1; /* _flags, u2 */
	vm->field[HS_F_CONSTMETHOD_NAME_INDEX] = 34;
	vm->field[HS_F_CONSTMETHOD_SIGNATURE_INDEX] = 36;
	vm->field[HS_F_CPOOL_HOLDER] = 24;
	vm->field[HS_F_CPOOL_SOURCE_FILE] = 54;
	vm->field[HS_F_KLASS_NAME] = 24;
	vm->field[HS_F_SYMBOL_LENGTH] = 4;
	vm->field[HS_F_SYMBOL_BODY] = 6;
	vm->field[HS_F_NMETHOD_METHOD] = 112;
	vm->field[HS_F_NMETHOD_COMPILE_ID] = 304;
	vm->field[HS_F_NMETHOD_SCOPES_PCS] = 268;
	vm->field[HS_F_NMETHOD_DEPENDENCIES] = 272;
	vm->field[HS_F_NMETHOD_SCOPES_DATA] = 120;
	vm->field[HS_F_NMETHOD_METADATA] = 260;
	vm->field[HS_F_PCDESC_PC_OFFSET] = 0;
	vm->field[HS_F_PCDESC_SCOPE_DECODE] = 4;
	for (int f = HS_F_NMETHOD_METHOD; f <= HS_F_PCDESC_SCOPE_DECODE; f++)
		if (f != HS_F_NMETHOD_COMP_LEVEL && f != HS_F_NMETHOD_ORIG_PC &&
		    f != HS_F_NMETHOD_DEOPT_HANDLER && f != HS_F_NMETHOD_IMMUTABLE_DATA)
			vm->have_field |= 1ull << f;
	vm->have_field |= 1ull << HS_F_CPOOL_SOURCE_FILE;
	vm->size[HS_T_CONSTMETHOD] = 48;
	vm->size[HS_T_CPOOL] = 72;
	vm->size[HS_T_PCDESC] = 16;
	vm->constant[HS_C_HAS_LINENUMBERS] = 1;
	vm->have_const = 1u << HS_C_HAS_LINENUMBERS;

	put64(METHOD + 8, CMETHOD);
	put64(CMETHOD + 8, CPOOL);
	put16(CMETHOD + 32, 4); /* code size */
	put16(CMETHOD + 28, 1); /* has line numbers */
	put16(CMETHOD + 34, 1);
	put16(CMETHOD + 36, 2);
	put(CMETHOD + 48 + 4, lines, sizeof(lines));
	put64(CPOOL + 24, KLASS);
	put16(CPOOL + 54, 3);
	put64(CPOOL + 72 + 8, SYMS | 1); /* a tagged Symbol* */
	put64(CPOOL + 72 + 16, SYMS + 0x40);
	put64(CPOOL + 72 + 24, SYMS + 0x80);
	put64(KLASS + 24, SYMS + 0xc0);
	symbol(SYMS, "leafA");
	symbol(SYMS + 0x40, "(I[Ljava/lang/String;)J");
	symbol(SYMS + 0x80, "JavaChain.java");
	symbol(SYMS + 0xc0, "pkg/JavaChain$Inner");

	put64(NM + 112, METHOD);
	put32(NM + 304, 77);
	put32(NM + 268, 0x200); /* PcDescs at NM + 0x200 .. 0x230 */
	put32(NM + 272, 0x230);
	put64(NM + 120, NM + 0x300); /* scopes data */
	put32(NM + 260, 0x400); /* metadata */
	put32(NM + 0x200, (uint32_t)-1); /* pc offset -1: no scope */
	put32(NM + 0x210, 0x40);
	put32(NM + 0x214, 4); /* the inner scope */
	put32(NM + 0x220, 0x80);
	put32(NM + 0x224, 1);
	put(NM + 0x300, scopes, sizeof(scopes));
	put64(NM + 0x400, METHOD);
}

static void test_method_read(void **state)
{
	struct hotspot_method m;
	struct hotspot_vm vm;

	(void)state;
	jvm17(&vm);
	assert_int_equal(hotspot_method__read(&vm, rd, NULL, METHOD, &m), 0);
	assert_string_equal(m.klass, "pkg.JavaChain$Inner");
	assert_string_equal(m.name, "leafA");
	assert_string_equal(m.sig, "(I[Ljava/lang/String;)J");
	assert_string_equal(m.file, "JavaChain.java");
	assert_int_equal(m.cmethod, CMETHOD);
	assert_int_equal(m.code_size, 4);
	assert_int_equal(m.nr_lines, 2);
	assert_int_equal(m.min_line, 10);
	assert_int_equal(m.max_line, 12);
	assert_int_equal(hotspot_lines__find(m.lines, m.nr_lines, 3), 12);
	hotspot_method__release(&m);

	/* no file: still a method */
	put16(CPOOL + 54, 0);
	assert_int_equal(hotspot_method__read(&vm, rd, NULL, METHOD, &m), 0);
	assert_string_equal(m.file, "");
	hotspot_method__release(&m);
	/* a name with a control character, a Symbol past the memory, a misaligned Method* */
	put(SYMS + 6, "le\001fA", 5);
	assert_int_equal(hotspot_method__read(&vm, rd, NULL, METHOD, &m), -EBADMSG);
	put(SYMS + 6, "leafA", 5);
	put64(CPOOL + 72 + 8, BASE + IMG - 4);
	assert_int_equal(hotspot_method__read(&vm, rd, NULL, METHOD, &m), -EBADMSG);
	put64(CPOOL + 72 + 8, BASE + IMG - 8);
	put16(BASE + IMG - 4, 100); /* its bytes past the memory's end */
	assert_int_equal(hotspot_method__read(&vm, rd, NULL, METHOD, &m), -EFAULT);
	assert_int_equal(hotspot_method__read(&vm, rd, NULL, METHOD + 1, &m), -EBADMSG);
	assert_int_equal(hotspot_method__read(&vm, rd, NULL, 0x20, &m), -EFAULT); /* unreadable */
	/* a malformed line table (an int of more than 5 bytes): the method, without lines */
	put64(CPOOL + 72 + 8, SYMS);
	memset(img + (CMETHOD + 48 + 4 - BASE), 0xff, 8);
	assert_int_equal(hotspot_method__read(&vm, rd, NULL, METHOD, &m), 0);
	assert_int_equal(m.nr_lines, 0);
	hotspot_method__release(&m);
}

static void test_scopes_read(void **state)
{
	struct hotspot_scope sc[HS_SCOPES_MAX];
	struct hotspot_vm vm;
	uint64_t method;
	uint32_t cid;

	(void)state;
	jvm17(&vm);
	assert_int_equal(hotspot_nmethod__method(&vm, rd, NULL, NM, &method, &cid), 0);
	assert_int_equal(method, METHOD);
	assert_int_equal(cid, 77);
	/* a return address at 0x40: its own PcDesc, inner then outer scope */
	assert_int_equal(hotspot_scopes__read(&vm, rd, NULL, NM, 0x40, sc, HS_SCOPES_MAX), 2);
	assert_int_equal(sc[0].method, METHOD);
	assert_int_equal(sc[0].bci, 0);
	assert_int_equal(sc[1].bci, 2);
	/* a leaf at 0x41: the next PcDesc's (one scope) */
	assert_int_equal(hotspot_scopes__read(&vm, rd, NULL, NM, 0x41, sc, HS_SCOPES_MAX), 1);
	assert_int_equal(sc[0].bci, 2);
	/* past the last PcDesc: none */
	assert_int_equal(hotspot_scopes__read(&vm, rd, NULL, NM, 0x81, sc, HS_SCOPES_MAX), 0);
	/* a scope naming itself as its sender: ends, no loop */
	img[NM + 0x304 - BASE] = 4;
	assert_int_equal(hotspot_scopes__read(&vm, rd, NULL, NM, 0x40, sc, HS_SCOPES_MAX), 1);
	/* a method index past the metadata */
	img[NM + 0x304 - BASE] = 1;
	img[NM + 0x305 - BASE] = 200;
	assert_int_equal(hotspot_scopes__read(&vm, rd, NULL, NM, 0x40, sc, HS_SCOPES_MAX),
			 -EBADMSG);
	/* an absurd PcDesc table */
	put32(NM + 272, 0x100);
	assert_int_equal(hotspot_scopes__read(&vm, rd, NULL, NM, 0x40, sc, HS_SCOPES_MAX),
			 -EBADMSG);
}

/* (0, 10) by escape, then (5, 12) by a pair byte, then the end */
static void test_lines_x0_x1(void **state)
{
	/* zigzag(0) = 0, zigzag(10) = 20; with X = 1 every UNSIGNED5 byte is one more */
	const uint8_t x0[] = { 0xff, 0, 20, 5 << 3 | 2, 0 };
	const uint8_t x1[] = { 0xff, 1, 21, 5 << 3 | 2, 0 };
	struct hotspot_line *l;
	uint32_t n;

	(void)state;
	for (int x = 0; x <= 1; x++) {
		assert_int_equal(
			hotspot_lines__decode(x ? x1 : x0, sizeof(x0), (unsigned)x, &l, &n), 0);
		assert_int_equal(n, 2);
		assert_int_equal(l[0].bci, 0);
		assert_int_equal(l[0].line, 10);
		assert_int_equal(l[1].bci, 5);
		assert_int_equal(l[1].line, 12);
		assert_int_equal(hotspot_lines__find(l, n, 0), 10);
		assert_int_equal(hotspot_lines__find(l, n, 3), 10);
		assert_int_equal(hotspot_lines__find(l, n, 5), 12);
		assert_int_equal(hotspot_lines__find(l, n, 900), 12);
		free(l);
	}
	/* X = 1 has no byte 0 in its ints: x0's table read with X = 1 is refused */
	assert_int_equal(hotspot_lines__decode(x0, sizeof(x0), 1, &l, &n), -EBADMSG);
	assert_int_equal(hotspot_lines__find(NULL, 0, 3), -1);
}

/* A two-byte UNSIGNED5 int, a negative delta, and the greatest bci below wins */
static void test_lines_multibyte(void **state)
{
	/* 200 + (5 << 6) = 520 = zigzag(260); 3 = zigzag(-2) */
	const uint8_t t[] = { 0xff, 200, 5, 40, 0xff, 0, 3, 0 };
	struct hotspot_line *l;
	uint32_t n;

	(void)state;
	assert_int_equal(hotspot_lines__decode(t, sizeof(t), 0, &l, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(l[0].bci, 260);
	assert_int_equal(l[0].line, 20);
	assert_int_equal(l[1].bci, 260);
	assert_int_equal(l[1].line, 18);
	assert_int_equal(hotspot_lines__find(l, n, 261), 18);
	free(l);
}

static void test_lines_bad(void **state)
{
	const uint8_t open[] = { 8 | 1, 8 | 1 }; /* no terminator */
	const uint8_t cut[] = { 0xff, 200 }; /* an int cut short */
	const uint8_t longint[] = { 0xff, 255, 255, 255, 255, 255, 255, 0, 0 };
	const uint8_t negbci[] = { 0xff, 1, 0, 0 }; /* bci -1 */
	struct hotspot_line *l = (void *)1;
	uint32_t n = 7;

	(void)state;
	assert_int_equal(hotspot_lines__decode(open, sizeof(open), 0, &l, &n), -EBADMSG);
	assert_null(l);
	assert_int_equal(n, 0);
	assert_int_equal(hotspot_lines__decode(cut, sizeof(cut), 0, &l, &n), -EBADMSG);
	assert_int_equal(hotspot_lines__decode(longint, sizeof(longint), 0, &l, &n), -EBADMSG);
	assert_int_equal(hotspot_lines__decode(negbci, sizeof(negbci), 0, &l, &n), -EBADMSG);
	assert_int_equal(hotspot_lines__decode(open, 0, 0, &l, &n), -EBADMSG);
	/* an empty table */
	assert_int_equal(hotspot_lines__decode((const uint8_t[]){ 0 }, 1, 0, &l, &n), 0);
	assert_int_equal(n, 0);
	free(l);
}

static void test_scope(void **state)
{
	const uint8_t x1[] = { 6, 3, 9 }; /* sender 5, method 2, bci + 1 = 8 */
	const uint8_t entry[] = { 0, 1, 0 }; /* X = 0: sender 0, method 1, bci -1 */
	uint32_t sender, idx;
	int32_t bci;

	(void)state;
	assert_int_equal(hotspot_scope__decode(x1, sizeof(x1), 1, &sender, &idx, &bci), 0);
	assert_int_equal(sender, 5);
	assert_int_equal(idx, 2);
	assert_int_equal(bci, 7);
	assert_int_equal(hotspot_scope__decode(entry, sizeof(entry), 0, &sender, &idx, &bci), 0);
	assert_int_equal(sender, 0);
	assert_int_equal(bci, -1);
	assert_int_equal(hotspot_scope__decode(x1, 2, 1, &sender, &idx, &bci), -EBADMSG);
	assert_int_equal(hotspot_scope__decode(entry, sizeof(entry), 1, &sender, &idx, &bci),
			 -EBADMSG);
}

static void test_sig(void **state)
{
	char buf[128];

	(void)state;
	assert_string_equal(hotspot_sig__java("(JI[Ljava/lang/String;)V", buf, sizeof(buf)),
			    "(long, int, java.lang.String[])");
	assert_string_equal(hotspot_sig__java("()V", buf, sizeof(buf)), "()");
	assert_string_equal(hotspot_sig__java("([[DZ)I", buf, sizeof(buf)),
			    "(double[][], boolean)");
	assert_string_equal(hotspot_sig__java("nonsense", buf, sizeof(buf)), "");
	assert_string_equal(hotspot_sig__java("(Ljava/lang/Object", buf, sizeof(buf)),
			    "(java.lang.Object)");
	/* bounded: truncated, terminated */
	assert_int_equal(strlen(hotspot_sig__java("(JJJJJJJJJJJJ)V", buf, 10)), 9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines_x0_x1), cmocka_unit_test(test_lines_multibyte),
		cmocka_unit_test(test_lines_bad),   cmocka_unit_test(test_scope),
		cmocka_unit_test(test_sig),	    cmocka_unit_test(test_method_read),
		cmocka_unit_test(test_scopes_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

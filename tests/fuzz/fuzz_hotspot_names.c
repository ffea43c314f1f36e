// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for user/symbolize/hotspot_names.c's decoders of
 * HotSpot's debug information: the compressed line number table and a
 * scope's head (UNSIGNED5 ints, X = 0 or 1), and a signature turned to Java
 * form; and, with bit 1 of the first byte, the readers over a forged JVM
 * memory (the rest of the input, at MEM_BASE, with JDK 17's offsets): a
 * Method at +0x100, an nmethod at +0x1000, a pc offset from the input.
 * Input: a byte whose bit 0 is X, then the bytes. Whatever the bytes, the
 * decoders and readers must end, never read past them, and give bcis
 * within range and terminated, printable names. Built and run by `make fuzz`; seeds in
 * tests/fuzz/corpus/hotspot_names.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "hotspot_names.h"

#define MEM_BASE 0x10000000ull

struct mem {
	const uint8_t *b;
	size_t len;
};

static int rd(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct mem *m = ctx;

	if (addr < MEM_BASE || addr - MEM_BASE > m->len || len > m->len - (addr - MEM_BASE))
		return -1;
	memcpy(buf, m->b + (addr - MEM_BASE), len);
	return 0;
}

/* JDK 17.0.15's offsets, as its tables give them */
static void jvm17(struct hotspot_vm *vm, unsigned x)
{
	static const struct {
		enum hotspot_field f;
		uint64_t off;
	} fs[] = {
		{ HS_F_METHOD_CONSTMETHOD, 8 },
		{ HS_F_CONSTMETHOD_CONSTANTS, 8 },
		{ HS_F_CONSTMETHOD_CODE_SIZE, 32 },
		{ HS_F_CONSTMETHOD_FLAGS, 28 },
		{ HS_F_CONSTMETHOD_NAME_INDEX, 34 },
		{ HS_F_CONSTMETHOD_SIGNATURE_INDEX, 36 },
		{ HS_F_CPOOL_HOLDER, 24 },
		{ HS_F_CPOOL_SOURCE_FILE, 54 },
		{ HS_F_KLASS_NAME, 24 },
		{ HS_F_SYMBOL_LENGTH, 4 },
		{ HS_F_SYMBOL_BODY, 6 },
		{ HS_F_NMETHOD_METHOD, 112 },
		{ HS_F_NMETHOD_COMPILE_ID, 304 },
		{ HS_F_NMETHOD_SCOPES_PCS, 268 },
		{ HS_F_NMETHOD_DEPENDENCIES, 272 },
		{ HS_F_NMETHOD_SCOPES_DATA, 120 },
		{ HS_F_NMETHOD_METADATA, 260 },
		{ HS_F_PCDESC_PC_OFFSET, 0 },
		{ HS_F_PCDESC_SCOPE_DECODE, 4 },
		{ HS_F_CODEBLOB_NAME, 96 },
	};

	memset(vm, 0, sizeof(*vm));
	for (size_t i = 0; i < sizeof(fs) / sizeof(fs[0]); i++) {
		vm->field[fs[i].f] = fs[i].off;
		vm->have_field |= 1ull << fs[i].f;
	}
	vm->field_alt[HS_F_CONSTMETHOD_FLAGS] = 1;
	vm->size[HS_T_CONSTMETHOD] = 48;
	vm->size[HS_T_CPOOL] = 72;
	vm->size[HS_T_PCDESC] = 16;
	vm->constant[HS_C_HAS_LINENUMBERS] = 1;
	vm->have_const = 1u << HS_C_HAS_LINENUMBERS;
	vm->unsigned5_x = (uint8_t)x;
}

static void check_name(const char *s)
{
	size_t n = strnlen(s, HS_NAME_MAX);

	if (n >= HS_NAME_MAX)
		abort();
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			abort();
}

static void fuzz_memory(const uint8_t *data, size_t size, unsigned x)
{
	struct hotspot_scope sc[HS_SCOPES_MAX];
	struct hotspot_method m;
	struct hotspot_vm vm;
	struct mem mem = { data, size };
	uint64_t method;
	uint32_t cid, pcoff = size >= 4 ? data[0] | data[1] << 8 : 0;
	char name[64];
	int n;

	jvm17(&vm, x);
	if (!hotspot_method__read(&vm, rd, &mem, MEM_BASE + 0x100, &m)) {
		check_name(m.klass);
		check_name(m.name);
		check_name(m.sig);
		check_name(m.file);
		for (uint32_t i = 0; i < m.nr_lines; i++)
			if (m.lines[i].bci > 65535)
				abort();
	}
	hotspot_method__release(&m);
	n = hotspot_scopes__read(&vm, rd, &mem, MEM_BASE + 0x1000, pcoff, sc, HS_SCOPES_MAX);
	if (n > HS_SCOPES_MAX)
		abort();
	for (int i = 0; i < n; i++)
		if (sc[i].bci < -1 || sc[i].bci > 65535 || !sc[i].method)
			abort();
	(void)hotspot_nmethod__method(&vm, rd, &mem, MEM_BASE + 0x1000, &method, &cid);
	if (!hotspot_blob__name(&vm, rd, &mem, MEM_BASE + 0x1000, name, sizeof(name)))
		check_name(name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hotspot_line *l;
	uint32_t n, sender, idx;
	int32_t bci;
	char sig[64], out[48];
	unsigned x;

	if (!size)
		return 0;
	x = data[0] & 1;
	if (data[0] & 2) {
		fuzz_memory(data + 1, size - 1, x);
		return 0;
	}
	data++, size--;
	if (!hotspot_lines__decode(data, size, x, &l, &n)) {
		for (uint32_t i = 0; i < n; i++)
			if (l[i].bci > 65535)
				abort();
		(void)hotspot_lines__find(l, n, size);
		free(l);
	}
	if (!hotspot_scope__decode(data, size, x, &sender, &idx, &bci) && bci < -1)
		abort();
	n = size < sizeof(sig) - 1 ? (uint32_t)size : sizeof(sig) - 1;
	memcpy(sig, data, n);
	sig[n] = '\0';
	hotspot_sig__java(sig, out, sizeof(out));
	if (strlen(out) >= sizeof(out))
		abort();
	return 0;
}

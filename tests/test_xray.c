// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/xray/xray_instr_map.c and user/xray/xray_account.c. The
 * instrumentation maps are ELF files assembled here with gcc from sleds
 * written by hand (SLEDS_S below: fa, fb, fc, two sleds each for fa and
 * fb), in the three shapes the reader knows: version 0 absolute addresses in
 * a PIE, where only the R_X86_64_RELATIVE relocations' addends hold them (the
 * section's own words are zeroed after linking, so a reader that ignored the
 * relocations would find nothing); version 2 self-relative addresses in a
 * PIE; version 0 absolute in a fixed-address executable. Ids are numbered as
 * LLVM does (one more each time the function changes), a PIE is placed at
 * XRAY_PIE_BASE, names come from the symbol table. Refusals: no section
 * (-ENODATA), a section whose size is not a multiple of 32 (-EINVAL), not an
 * ELF file (-EINVAL), no file (-ENOENT). The account table of the reference
 * version 1 trace (tests/xray/fdr_v1_writer.h) is checked line by line, and a
 * failed write is reported.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "log.h"
#include "profile.h"
#include "read_xray.h"
#include "xray/fdr_v1_writer.h"
#include "xray_account.h"
#include "xray_instr_map.h"

/* fa, fb, fc and their sleds; -DREL: version 2 (self-relative), else version 0 (absolute) */
static const char SLEDS_S[] =
	"	.text\n"
	"	.globl fa\n"
	"	.type fa, @function\n"
	"fa:	nop\n"
	"	ret\n"
	"	.size fa, .-fa\n"
	"	.globl fb\n"
	"	.type fb, @function\n"
	"fb:	nop\n"
	"	ret\n"
	"	.size fb, .-fb\n"
	"	.globl fc\n"
	"	.type fc, @function\n"
	"fc:	nop\n"
	"	ret\n"
	"	.size fc, .-fc\n"
	"	.globl _start\n"
	"_start:	ret\n"
	"/* 32-byte sleds: address, function, kind, always, version, 13 pad */\n"
	"#ifdef REL\n"
	"#define SLED(site, fn, kind) .quad site - . ; .quad fn - . ; .byte kind, 0, 2 ; .zero 13\n"
	"#else\n"
	"#define SLED(site, fn, kind) .quad site ; .quad fn ; .byte kind, 0, 0 ; .zero 13\n"
	"#endif\n"
	"	.section xray_instr_map, \"aw\"\n"
	"	SLED(fa, fa, 0)\n"
	"	SLED(fa+1, fa, 1)\n"
	"	SLED(fb, fb, 0)\n"
	"	SLED(fb+1, fb, 1)\n"
	"	SLED(fc, fc, 0)\n";

static char tmp[] = "/tmp/test_xray.XXXXXX";

#define TEST_TMP_DIR tmp
#include "test_files.h"

static bool have_x86_64;

/* Zero the function field (bytes 8-15) of every sled of the file's xray_instr_map. */
static void zero_function_fields(const char *path)
{
	int fd = open(path, O_RDWR);
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	uint64_t off = 0, size = 0;
	static const uint8_t zero[8];
	GElf_Shdr shdr;
	Elf *elf;

	assert_true(fd >= 0);
	assert_int_not_equal(elf_version(EV_CURRENT), EV_NONE);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &shdr) &&
		    !strcmp(elf_strptr(elf, shstrndx, shdr.sh_name), "xray_instr_map")) {
			off = shdr.sh_offset;
			size = shdr.sh_size;
		}
	elf_end(elf);
	assert_true(size && size % 32 == 0);
	for (uint64_t i = 0; i < size; i += 32)
		assert_int_equal(pwrite(fd, zero, 8, (off_t)(off + i + 8)), 8);
	close(fd);
}

static int setup_all(void **state)
{
	const char *src;
	FILE *f;

	log_verbosity = -1;
	if (!mkdtemp(tmp))
		return -1;
	src = tpath("sleds.S");
	f = fopen(src, "w");
	if (!f || fputs(SLEDS_S, f) < 0 || fclose(f))
		return -1;
#ifdef __x86_64__
	have_x86_64 = true;
	if (sh("gcc -nostdlib -fPIE -pie -Wl,-e,_start -Wl,-z,notext %s -o %s", src,
	       tpath("v0-pie")) ||
	    sh("gcc -DREL -nostdlib -fPIE -pie -Wl,-e,_start %s -o %s", src, tpath("v2-pie")) ||
	    sh("gcc -nostdlib -no-pie -static -Wl,-e,_start %s -o %s", src, tpath("v0-fixed")) ||
	    sh("printf '\\t.globl _start\\n_start: ret\\n' | gcc -nostdlib -no-pie -static -Wl,-e,_start -x assembler - -o %s",
	       tpath("none")))
		return -1;
	/* a section of 33 bytes: one sled and a stray byte */
	if (sh("printf '\\t.section xray_instr_map,\"a\"\\n\\t.zero 33\\n\\t.globl _start\\n_start: ret\\n' | "
	       "gcc -nostdlib -no-pie -static -Wl,-e,_start -x assembler - -o %s",
	       tpath("odd")))
		return -1;
#endif
	return 0;
}

static int teardown_all(void **state)
{
	return sh("rm -rf '%s'", tmp);
}

/* Link-time address of symbol `name` in file path (nm). */
static uint64_t nm_addr(const char *path, const char *name)
{
	char cmd[512], line[256];
	unsigned long long a = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm '%s'", path);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		char type, sym[128];

		if (sscanf(line, "%llx %c %127s", &a, &type, sym) == 3 && !strcmp(sym, name))
			break;
		a = 0;
	}
	pclose(p);
	assert_true(a != 0);
	return a;
}

/* The map of `file`: ids 1-3 are fa, fb, fc at base + their link-time addresses. */
static void check_map(const char *file, uint64_t base)
{
	struct xray_instr_map *m = NULL;
	static const char *const names[] = { NULL, "fa", "fb", "fc" };

	if (!have_x86_64)
		skip();
	assert_int_equal(xray_instr_map__load(tpath(file), &m), 0);
	assert_non_null(m);
	/* five sleds, three functions: fa's and fb's exit sleds share their ids */
	assert_int_equal(xray_instr_map__nr_funcs(m), 3);
	for (uint32_t id = 1; id <= 3; id++) {
		assert_int_equal(xray_instr_map__addr(m, id),
				 base + nm_addr(tpath(file), names[id]));
		assert_non_null(xray_instr_map__name(m, id));
		assert_string_equal(xray_instr_map__name(m, id), names[id]);
	}
	assert_int_equal(xray_instr_map__addr(m, 4), 0);
	assert_null(xray_instr_map__name(m, 4));
	assert_string_equal(xray_instr_map__path(m), tpath(file));
	xray_instr_map__free(m);
}

/* Version 0 sleds in a PIE: addresses from the relocations alone. */
static void test_pie_relocations(void **state)
{
	if (!have_x86_64)
		skip();
	zero_function_fields(tpath("v0-pie"));
	check_map("v0-pie", XRAY_PIE_BASE);
}

static void test_pie_relative(void **state)
{
	check_map("v2-pie", XRAY_PIE_BASE);
}

static void test_fixed_address(void **state)
{
	check_map("v0-fixed", 0);
}

/* The mappings a PIE gets: its PT_LOAD segments at XRAY_PIE_BASE, with path and build-id. */
static void test_mappings(void **state)
{
	struct xray_instr_map *m = NULL;
	struct profile *p = profile__new();
	const struct profile_process *pr;
	bool created, exec = false;
	int proc;

	if (!have_x86_64)
		skip();
	assert_non_null(p);
	assert_int_equal(xray_instr_map__load(tpath("v2-pie"), &m), 0);
	proc = profile__process(p, 1, &created);
	assert_true(proc >= 0);
	assert_int_equal(xray_instr_map__add_mappings(m, p, (uint32_t)proc), 0);
	pr = &p->procs[proc];
	assert_true(pr->nr_mappings >= 2);
	for (size_t i = 0; i < pr->nr_mappings; i++) {
		const struct profile_mapping *mp = &pr->mappings[i];

		assert_true(mp->start >= XRAY_PIE_BASE);
		assert_int_equal(mp->start % 4096, 0);
		assert_string_equal(mp->path, tpath("v2-pie"));
		if (mp->perms[2] == 'x') {
			exec = true;
			assert_true(mp->start <= xray_instr_map__addr(m, 1) &&
				    xray_instr_map__addr(m, 3) < mp->end);
		}
	}
	assert_true(exec);
	xray_instr_map__free(m);
	profile__free(p);
}

static void test_refused(void **state)
{
	struct xray_instr_map *m = NULL;

	if (!have_x86_64)
		skip();
	assert_int_equal(xray_instr_map__load(tpath("none"), &m), -ENODATA);
	assert_null(m);
	assert_int_equal(xray_instr_map__load(tpath("odd"), &m), -EINVAL);
	assert_null(m);
	assert_int_equal(xray_instr_map__load(tpath("sleds.S"), &m), -EINVAL);
	assert_null(m);
	assert_int_equal(xray_instr_map__load(tpath("missing"), &m), -ENOENT);
	assert_null(m);
}

/* --account of the reference v1 trace: sorted by id, completed calls, seconds with 9 decimals. */
static void test_account(void **state)
{
	struct profile *p = profile__new();
	struct xray_reader *r = p ? xray_reader__new(p, NULL) : NULL;
	struct v1w w = { 0 };
	char *text = NULL, line[4][160];
	size_t len = 0;
	FILE *f;

	assert_non_null(r);
	v1w_reference(&w);
	assert_int_equal(xray_reader__read_mem(r, "v1", w.data, w.len), 0);
	f = open_memstream(&text, &len);
	assert_non_null(f);
	assert_int_equal(xray_account__print(r, f), 0);
	fclose(f);
	snprintf(line[0], sizeof(line[0]), "%9u %12llu %16.9f %16.9f  %s\n", 1,
		 (unsigned long long)V1_F1_CALLS, V1_F1_TOTAL / 1e9, V1_F1_SELF / 1e9, "fn#1");
	snprintf(line[1], sizeof(line[1]), "%9u %12u %16.9f %16.9f  %s\n", 2, 1, V1_F2_TOTAL / 1e9,
		 V1_F2_SELF / 1e9, "fn#2");
	snprintf(line[2], sizeof(line[2]), "%9u %12u %16.9f %16.9f  %s\n", 3, 1, V1_F3_TOTAL / 1e9,
		 V1_F3_TOTAL / 1e9, "fn#3");
	snprintf(line[3], sizeof(line[3]), "%9u %12u %16.9f %16.9f  %s\n", 4, 1, V1_F4_TOTAL / 1e9,
		 V1_F4_TOTAL / 1e9, "fn#4");
	{
		char want[1024];

		snprintf(
			want, sizeof(want),
			"Functions with latencies: 4\n"
			"   funcid        calls         total(s)          self(s)  function\n%s%s%s%s",
			line[0], line[1], line[2], line[3]);
		assert_string_equal(text, want);
	}
	free(text);

	/* a write that fails is an error, not a short table */
	f = fopen("/dev/full", "w");
	if (f) {
		assert_int_equal(xray_account__print(r, f), -EIO);
		fclose(f);
	}
	free(w.data);
	xray_reader__free(r);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pie_relocations), cmocka_unit_test(test_pie_relative),
		cmocka_unit_test(test_fixed_address),	cmocka_unit_test(test_mappings),
		cmocka_unit_test(test_refused),		cmocka_unit_test(test_account),
	};

	return cmocka_run_group_tests(tests, setup_all, teardown_all);
}

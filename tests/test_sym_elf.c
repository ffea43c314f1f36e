// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/symbolize/sym_elf.c against real binaries built at test time
 * with cc: PIE, non-PIE, shared object, a 32-bit shared object, and stripped
 * executables whose symbols live in a separate debug file (.gnu_debuglink or
 * the .build-id tree). Expected values come from other tools: symbol
 * addresses and sizes from nm, symbol counts from readelf -s, build-ids from
 * readelf -n; file offsets are derived here from the PT_LOAD headers. Then
 * non-ELF, truncated, random and mutated inputs, which must not crash.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "sym_elf.h"

static const char hot_src[] =
	"__attribute__((noinline, used)) int hot_alpha(int x)\n"
	"{\n"
	"	return x * 3 + 1;\n"
	"}\n"
	"__attribute__((noinline, used)) int hot_beta(int x)\n"
	"{\n"
	"	int s = 0;\n"
	"	for (int i = 0; i < x; i++)\n"
	"		s += hot_alpha(i);\n"
	"	return s;\n"
	"}\n"
	"static __attribute__((noinline, used)) int hot_local(int x)\n"
	"{\n"
	"	return x ^ 0x5a;\n"
	"}\n"
	/*
	 * hot_nosize has no .size: it must extend to the next symbol, 32 bytes
	 * on. aaa_alias is a LOCAL size-0 alias of the GLOBAL sized hot_sized.
	 */
	"__asm__(\".text\\n.p2align 4\\n\"\n"
	"	\".globl hot_nosize\\n.type hot_nosize, @function\\nhot_nosize:\\n\"\n"
	"	\"ret\\n.skip 31, 0xcc\\n\"\n"
	"	\".type aaa_alias, @function\\naaa_alias:\\n\"\n"
	"	\".globl hot_sized\\n.type hot_sized, @function\\nhot_sized:\\n\"\n"
	"	\"ret\\n.skip 15, 0xcc\\n.size hot_sized, .-hot_sized\\n\");\n"
	"#ifndef NO_MAIN\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"	return hot_beta(argc) + hot_local(argc);\n"
	"}\n"
	"#else\n"
	"int call_local(int x)\n"
	"{\n"
	"	return hot_local(x);\n"
	"}\n"
	"#endif\n";

static char tmp_dir[] = "/tmp/test_sym_elf.XXXXXX";

#define TEST_TMP_DIR tmp_dir
#include "test_files.h"

static bool have_m32;

static void *read_file(const char *path, size_t *len)
{
	struct stat sb;
	void *buf;
	FILE *f;

	f = fopen(path, "rb");
	if (!f)
		return NULL;
	if (fstat(fileno(f), &sb) || !(buf = malloc(sb.st_size ? sb.st_size : 1))) {
		fclose(f);
		return NULL;
	}
	*len = fread(buf, 1, sb.st_size, f);
	fclose(f);
	return buf;
}

static int group_setup(void **state)
{
	if (!mkdtemp(tmp_dir))
		return -1;
	if (write_file(tpath("hot.c"), hot_src, sizeof(hot_src) - 1))
		return -1;
	if (sh("cd %s && cc -O0 -g -fPIE -pie -Wl,--build-id -o pie hot.c", tmp_dir) ||
	    sh("cd %s && cc -O0 -g -fno-pie -no-pie -Wl,--build-id -o nopie hot.c", tmp_dir) ||
	    sh("cd %s && cc -O0 -g -shared -fPIC -DNO_MAIN -Wl,--build-id -o libhot.so hot.c",
	       tmp_dir))
		return -1;
	/* stripped + .gnu_debuglink to the kept debug info */
	if (sh("cd %s && cp pie stripped && objcopy --only-keep-debug stripped stripped.debug && "
	       "strip --strip-debug --strip-unneeded stripped && "
	       "objcopy --add-gnu-debuglink=stripped.debug stripped",
	       tmp_dir))
		return -1;
	/* stripped, debuglink naming a debug file of another build */
	if (sh("cd %s && objcopy --only-keep-debug nopie nopie.debug && cp pie wronglink && "
	       "strip --strip-debug --strip-unneeded wronglink && "
	       "objcopy --add-gnu-debuglink=nopie.debug wronglink",
	       tmp_dir))
		return -1;
	/* stripped, no debuglink: only the build-id tree can find its symbols */
	if (sh("cd %s && cp pie nolink && strip --strip-debug --strip-unneeded nolink", tmp_dir))
		return -1;
	/* optional: 32-bit, if the toolchain can build it without a 32-bit libc */
	have_m32 = !sh("cd %s && cc -m32 -O0 -shared -fPIC -nostdlib -DNO_MAIN -Wl,--build-id "
		       "-o libhot32.so hot.c 2>/dev/null",
		       tmp_dir);
	return 0;
}

static int group_teardown(void **state)
{
	if (tmp_dir[strlen(tmp_dir) - 1] == 'X')
		return 0;
	return sh("rm -rf '%s'", tmp_dir) ? -1 : 0;
}

/* Symbol address and size as nm prints them; true when found. */
static bool nm_symbol(const char *file, const char *name, uint64_t *addr, uint64_t *size)
{
	unsigned long long a, s;
	char cmd[600], line[512], type, sym[256];
	bool found = false;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm -S --defined-only '%s' 2>/dev/null", file);
	p = popen(cmd, "r");
	if (!p)
		return false;
	while (fgets(line, sizeof(line), p)) {
		/* nm -S prints no size column for size-0 symbols */
		if (sscanf(line, "%llx %llx %c %255s", &a, &s, &type, sym) != 4) {
			s = 0;
			if (sscanf(line, "%llx %c %255s", &a, &type, sym) != 3)
				continue;
		}
		if (!strcmp(sym, name)) {
			*addr = a;
			*size = s;
			found = true;
		}
	}
	pclose(p);
	return found;
}

/* Distinct non-zero addresses of defined FUNC/IFUNC symbols, per readelf -sW. */
static size_t readelf_func_count(const char *file)
{
	char cmd[600], line[1024], type[32], bind[32], vis[32], ndx[32];
	unsigned long long value, size, addrs[4096];
	size_t n = 0, i;
	unsigned int num;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -sW '%s' 2>/dev/null", file);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	while (fgets(line, sizeof(line), p)) {
		if (sscanf(line, " %u: %llx %llu %31s %31s %31s %31s", &num, &value, &size, type,
			   bind, vis, ndx) != 7)
			continue;
		if ((strcmp(type, "FUNC") && strcmp(type, "IFUNC")) || !value ||
		    !strcmp(ndx, "UND") || !strcmp(ndx, "ABS"))
			continue;
		for (i = 0; i < n && addrs[i] != value; i++)
			;
		if (i == n && n < sizeof(addrs) / sizeof(addrs[0]))
			addrs[n++] = value;
	}
	pclose(p);
	return n;
}

/* Build-id as readelf -n prints it ("Build ID: <hex>"); its length, or 0. */
static size_t readelf_build_id(const char *file, uint8_t id[ELF_BUILD_ID_MAX])
{
	char cmd[600], line[512], *h;
	unsigned int byte;
	size_t n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -n '%s' 2>/dev/null", file);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	while (fgets(line, sizeof(line), p)) {
		h = strstr(line, "Build ID: ");
		if (!h || n)
			continue;
		for (h += 10; n < ELF_BUILD_ID_MAX && sscanf(h, "%2x", &byte) == 1; h += 2)
			id[n++] = byte;
	}
	pclose(p);
	return n;
}

/* File offset of vaddr through the file's own PT_LOAD headers (inverse of the code under test). */
static bool vaddr_to_offset(const char *file, uint64_t vaddr, uint64_t *off)
{
	bool found = false;
	size_t phnum, i;
	GElf_Phdr ph;
	Elf *elf;
	int fd;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return false;
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && !elf_getphdrnum(elf, &phnum)) {
		for (i = 0; i < phnum && !found; i++) {
			if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
				continue;
			if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz) {
				*off = vaddr - ph.p_vaddr + ph.p_offset;
				found = true;
			}
		}
	}
	elf_end(elf);
	close(fd);
	return found;
}

static bool has_section_type(const char *file, Elf64_Word type)
{
	Elf_Scn *scn = NULL;
	bool found = false;
	GElf_Shdr shdr;
	Elf *elf;
	int fd;

	elf_version(EV_CURRENT);
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while (elf && (scn = elf_nextscn(elf, scn)))
		found |= gelf_getshdr(scn, &shdr) && shdr.sh_type == type;
	elf_end(elf);
	close(fd);
	return found;
}

/*
 * name must resolve at its start, one byte in and at its last byte, and not
 * one past its end; addresses from nm on sym_file, offsets from the phdrs of
 * bin (the same file unless the symbols came from a debug file).
 */
static void check_symbol(const struct elf_symtab *st, const char *bin, const char *sym_file,
			 const char *name)
{
	uint64_t vaddr, size, off, got_vaddr, sym_off;
	const char *got;

	assert_true(nm_symbol(sym_file, name, &vaddr, &size));
	assert_true(size > 1);
	assert_true(vaddr_to_offset(bin, vaddr, &off));

	assert_int_equal(elf_symtab__offset_to_vaddr(st, off, &got_vaddr), 0);
	assert_int_equal(got_vaddr, vaddr);

	sym_off = 12345;
	got = elf_symtab__lookup_offset(st, off, &sym_off);
	assert_non_null(got);
	assert_string_equal(got, name);
	assert_int_equal(sym_off, 0);

	got = elf_symtab__lookup_offset(st, off + 1, &sym_off);
	assert_non_null(got);
	assert_string_equal(got, name);
	assert_int_equal(sym_off, 1);

	got = elf_symtab__lookup_offset(st, off + size - 1, &sym_off);
	assert_non_null(got);
	assert_string_equal(got, name);
	assert_int_equal(sym_off, size - 1);

	got = elf_symtab__lookup_offset(st, off + size, &sym_off);
	assert_true(!got || strcmp(got, name));
}

/*
 * elf__read_build_id_fd (its PT_NOTE read by pread where it can) gives
 * libelf's answer (elf_build_id_libelf_only) on the same descriptor, and
 * leaves its offset alone; returns that answer.
 */
static int check_fd_same(const char *path)
{
	uint8_t fast[ELF_BUILD_ID_MAX] = { 0 }, slow[ELF_BUILD_ID_MAX] = { 0 };
	int fd = open(path, O_RDONLY | O_CLOEXEC), n, want;

	if (fd < 0)
		return -errno;
	n = elf__read_build_id_fd(fd, fast);
	assert_int_equal(lseek(fd, 0, SEEK_CUR), 0);
	elf_build_id_libelf_only = true;
	want = elf__read_build_id_fd(fd, slow);
	elf_build_id_libelf_only = false;
	close(fd);
	assert_int_equal(n, want);
	if (n > 0)
		assert_memory_equal(fast, slow, (size_t)n);
	return n;
}

static void check_build_id(const struct elf_symtab *st, const char *file)
{
	uint8_t want[ELF_BUILD_ID_MAX], got[ELF_BUILD_ID_MAX];
	size_t want_len;

	want_len = readelf_build_id(file, want);
	assert_int_equal(want_len, 20); /* ld's default sha1 */
	assert_int_equal(elf_symtab__build_id(st, got), want_len);
	assert_memory_equal(got, want, want_len);
	memset(got, 0, sizeof(got));
	assert_int_equal(elf__read_build_id(file, got), (int)want_len);
	assert_memory_equal(got, want, want_len);
	assert_int_equal(check_fd_same(file), (int)want_len);
}

static void check_binary(const char *name, const char *const *funcs, size_t nr_funcs)
{
	const char *bin = tpath(name);
	struct elf_symtab *st;
	size_t i;

	st = elf_symtab__load(bin, "");
	assert_non_null(st);
	assert_int_equal(elf_symtab__count(st), readelf_func_count(bin));
	for (i = 0; i < nr_funcs; i++)
		check_symbol(st, bin, bin, funcs[i]);
	check_build_id(st, bin);
	elf_symtab__free(st);
}

static void test_pie(void **state)
{
	static const char *const funcs[] = { "hot_alpha", "hot_beta", "hot_local", "main" };

	check_binary("pie", funcs, 4);
}

/*
 * The lazy index (buckets of addresses built when a lookup first needs
 * them) answers as the whole table built at once: every file offset of the
 * binaries, looked up in a scrambled order on a fresh table, against a
 * table whose buckets elf_symtab__settle built first; the count the same
 * before and after a settle.
 */
static void check_lazy_index(const char *name)
{
	const char *bin = tpath(name);
	struct elf_symtab *lazy = elf_symtab__load(bin, ""), *built = elf_symtab__load(bin, "");
	uint64_t off, i, size, lazy_off, built_off, x = 88172645463325252ULL;
	const char *a, *b;
	struct stat sb;
	size_t named = 0;

	assert_non_null(lazy);
	assert_non_null(built);
	assert_int_equal(stat(bin, &sb), 0);
	size = (uint64_t)sb.st_size;
	elf_symtab__settle(built);
	for (i = 0; i < 4 * size; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		off = i < size ? (i * 7919) % size : x % size;
		lazy_off = built_off = UINT64_MAX;
		a = elf_symtab__lookup_offset(lazy, off, &lazy_off);
		b = elf_symtab__lookup_offset(built, off, &built_off);
		if (!a || !b) {
			assert_ptr_equal(a, b);
			continue;
		}
		assert_string_equal(a, b);
		assert_int_equal(lazy_off, built_off);
		named++;
	}
	assert_true(named > 0);
	assert_int_equal(elf_symtab__count(lazy), elf_symtab__count(built));
	elf_symtab__free(lazy);
	elf_symtab__free(built);
}

static void test_lazy_index(void **state)
{
	check_lazy_index("pie");
	check_lazy_index("nopie");
	check_lazy_index("libhot.so");
}

static void test_nopie(void **state)
{
	static const char *const funcs[] = { "hot_alpha", "hot_beta", "hot_local", "main" };
	uint64_t vaddr, size;

	/* a fixed-address executable: vaddr far from the file offset */
	assert_true(nm_symbol(tpath("nopie"), "hot_alpha", &vaddr, &size));
	assert_true(vaddr >= 0x400000);
	check_binary("nopie", funcs, 4);
}

static void test_shared(void **state)
{
	static const char *const funcs[] = { "hot_alpha", "hot_beta", "hot_local", "call_local" };

	/* hot_alpha is in both .symtab and .dynsym: counted once */
	check_binary("libhot.so", funcs, 4);
}

static void test_shared_32bit(void **state)
{
	static const char *const funcs[] = { "hot_alpha", "hot_beta", "hot_local", "call_local" };

	if (!have_m32)
		skip();
	check_binary("libhot32.so", funcs, 4);
}

static void test_stripped_debuglink(void **state)
{
	static const char *const funcs[] = { "hot_alpha", "hot_beta", "hot_local", "main" };
	const char *bin = tpath("stripped"), *dbg = tpath("stripped.debug");
	struct elf_symtab *st;
	size_t i;

	assert_false(has_section_type(bin, SHT_SYMTAB));
	assert_true(has_section_type(dbg, SHT_SYMTAB));
	st = elf_symtab__load(bin, "");
	assert_non_null(st);
	/* all function symbols of the debug file (the stripped .dynsym adds none) */
	assert_int_equal(elf_symtab__count(st), readelf_func_count(dbg));
	for (i = 0; i < 4; i++)
		check_symbol(st, bin, dbg, funcs[i]);
	check_build_id(st, bin);
	/* a debug file's notes: sections whose PT_NOTE may be empty (libelf's read of the sections) */
	assert_int_equal(check_fd_same(dbg), 20);
	elf_symtab__free(st);
}

/* hot_alpha of pie must not resolve in a table without its debug symbols. */
static void check_no_hot_alpha(const struct elf_symtab *st)
{
	uint64_t vaddr, size, off;
	const char *got;

	assert_true(nm_symbol(tpath("pie"), "hot_alpha", &vaddr, &size));
	assert_true(vaddr_to_offset(tpath("pie"), vaddr, &off));
	got = elf_symtab__lookup_offset(st, off, NULL);
	assert_true(!got || strcmp(got, "hot_alpha"));
	assert_true(elf_symtab__count(st) < readelf_func_count(tpath("pie")));
}

static void test_stripped_missing_debug(void **state)
{
	struct elf_symtab *st;

	/* the debuglink names stripped.debug, which is not next to this copy */
	assert_int_equal(
		sh("mkdir -p %s/alone && cp %s %s/alone/", tmp_dir, tpath("stripped"), tmp_dir), 0);
	st = elf_symtab__load(tpath("alone/stripped"), "");
	assert_non_null(st);
	check_no_hot_alpha(st);
	elf_symtab__free(st);
}

static void test_stripped_wrong_build_id(void **state)
{
	struct elf_symtab *st;

	/* nopie.debug exists next to it and has a .symtab, but another build-id */
	st = elf_symtab__load(tpath("wronglink"), "");
	assert_non_null(st);
	check_no_hot_alpha(st);
	elf_symtab__free(st);
}

static void test_build_id_tree(void **state)
{
	static const char *const funcs[] = { "hot_alpha", "hot_beta", "hot_local", "main" };
	uint8_t id[ELF_BUILD_ID_MAX];
	char hex[2 * ELF_BUILD_ID_MAX + 1], bin[512], dbg[512];
	struct elf_symtab *st;
	size_t i, len;

	/* tpath() reuses its buffers: keep copies */
	snprintf(bin, sizeof(bin), "%s", tpath("nolink"));
	snprintf(dbg, sizeof(dbg), "%s", tpath("stripped.debug"));

	len = readelf_build_id(bin, id);
	assert_int_equal(len, 20);
	for (i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);

	/* no debug root: nothing to find */
	st = elf_symtab__load(bin, "");
	assert_non_null(st);
	check_no_hot_alpha(st);
	elf_symtab__free(st);

	assert_int_equal(sh("mkdir -p %s/root/usr/lib/debug/.build-id/%.2s && "
			    "cp %s %s/root/usr/lib/debug/.build-id/%.2s/%s.debug",
			    tmp_dir, hex, dbg, tmp_dir, hex, hex + 2),
			 0);
	st = elf_symtab__load(bin, tpath("root"));
	assert_non_null(st);
	for (i = 0; i < 4; i++)
		check_symbol(st, bin, dbg, funcs[i]);
	elf_symtab__free(st);
}

/*
 * A given debug file (debuginfod's) must carry the file's build-id; the
 * right one names the functions and is reported as the debug path.
 */
static void test_given_debug_file(void **state)
{
	char bin[512], dbg[512], other[512];
	struct elf_load_opts o = { .debug_root = "/nonexistent" };
	struct elf_symtab *st;

	snprintf(bin, sizeof(bin), "%s", tpath("nolink"));
	snprintf(dbg, sizeof(dbg), "%s", tpath("stripped.debug"));
	snprintf(other, sizeof(other), "%s", tpath("nopie.debug"));

	o.debug_file = dbg;
	st = elf_symtab__load_opts(bin, &o);
	assert_non_null(st);
	assert_int_equal(elf_symtab__names_src(st), ELF_NAMES_DEBUG_FILE);
	assert_string_equal(elf_symtab__debug_path(st), dbg);
	check_symbol(st, bin, dbg, "hot_local");
	elf_symtab__free(st);

	/* another build's debug file: refused, only .dynsym */
	o.debug_file = other;
	st = elf_symtab__load_opts(bin, &o);
	assert_non_null(st);
	assert_int_equal(elf_symtab__names_src(st), ELF_NAMES_DYNSYM);
	assert_null(elf_symtab__debug_path(st));
	check_no_hot_alpha(st);
	elf_symtab__free(st);

	/* no such file, and a file that is no ELF file */
	o.debug_file = tpath("no-such-debug-file");
	st = elf_symtab__load_opts(bin, &o);
	assert_non_null(st);
	assert_int_equal(elf_symtab__names_src(st), ELF_NAMES_DYNSYM);
	elf_symtab__free(st);
	o.debug_file = tpath("hot.c");
	st = elf_symtab__load_opts(bin, &o);
	assert_non_null(st);
	assert_int_equal(elf_symtab__names_src(st), ELF_NAMES_DYNSYM);
	elf_symtab__free(st);
}

/*
 * The build-id tree of a container's root: its malformed entries are
 * refused (a truncated copy, garbage, another build's file), and the
 * file stays with .dynsym; the host's tree is searched after the root's.
 */
static void test_bad_build_id_tree_entries(void **state)
{
	static const char *const bad[] = {
		"head -c 3000 %s > %s", /* truncated: headers cut */
		"cp %s %s && truncate -s -200 %s", /* truncated: section headers past EOF */
		"head -c 4096 /dev/urandom > %s", /* garbage */
	};
	char hex[2 * ELF_BUILD_ID_MAX + 1], bin[512], dbg[512], entry[1024], root[512];
	struct elf_load_opts o = { .host_debug = true, .debug_root = root };
	uint8_t id[ELF_BUILD_ID_MAX];
	struct elf_symtab *st;
	size_t i, len;

	snprintf(bin, sizeof(bin), "%s", tpath("nolink"));
	snprintf(dbg, sizeof(dbg), "%s", tpath("stripped.debug"));
	len = readelf_build_id(bin, id);
	assert_int_equal(len, 20);
	for (i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	assert_int_equal(sh("mkdir -p %s/badroot/usr/lib/debug/.build-id/%.2s", tmp_dir, hex), 0);
	snprintf(entry, sizeof(entry), "%s/badroot/usr/lib/debug/.build-id/%.2s/%s.debug", tmp_dir,
		 hex, hex + 2);
	snprintf(root, sizeof(root), "%s", tpath("badroot")); /* tpath() reuses its buffers */
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (i == 0)
			assert_int_equal(sh(bad[0], dbg, entry), 0);
		else if (i == 1)
			assert_int_equal(sh(bad[1], dbg, entry, entry), 0);
		else
			assert_int_equal(sh(bad[2], entry), 0);
		st = elf_symtab__load_opts(bin, &o);
		assert_non_null(st);
		assert_int_equal(elf_symtab__names_src(st), ELF_NAMES_DYNSYM);
		check_no_hot_alpha(st);
		elf_symtab__free(st);
	}
	/* another build's debug file under this build-id */
	assert_int_equal(sh("cp %s %s", tpath("nopie.debug"), entry), 0);
	st = elf_symtab__load_opts(bin, &o);
	assert_non_null(st);
	assert_int_equal(elf_symtab__names_src(st), ELF_NAMES_DYNSYM);
	elf_symtab__free(st);
	/* the right one: named, the path inside the root reported */
	assert_int_equal(sh("cp %s %s", dbg, entry), 0);
	st = elf_symtab__load_opts(bin, &o);
	assert_non_null(st);
	assert_int_equal(elf_symtab__names_src(st), ELF_NAMES_DEBUG_FILE);
	assert_string_equal(elf_symtab__debug_path(st), entry);
	check_symbol(st, bin, dbg, "hot_local");
	elf_symtab__free(st);
}

static void check_nosize_and_alias(const char *name)
{
	uint64_t vaddr, size, alias, off, sym_off;
	const char *bin = tpath(name);
	struct elf_symtab *st;

	st = elf_symtab__load(bin, "");
	assert_non_null(st);
	assert_true(nm_symbol(bin, "hot_nosize", &vaddr, &size));
	assert_int_equal(size, 0);
	assert_true(vaddr_to_offset(bin, vaddr, &off));
	assert_string_equal(elf_symtab__lookup_offset(st, off + 31, &sym_off), "hot_nosize");
	assert_int_equal(sym_off, 31);

	/* the global name wins over the local alias at the same address */
	assert_true(nm_symbol(bin, "aaa_alias", &alias, &size));
	assert_true(nm_symbol(bin, "hot_sized", &vaddr, &size));
	assert_int_equal(size, 16);
	assert_int_equal(vaddr, alias);
	assert_true(vaddr_to_offset(bin, vaddr, &off));
	assert_string_equal(elf_symtab__lookup_offset(st, off, &sym_off), "hot_sized");
	assert_int_equal(sym_off, 0);
	assert_string_equal(elf_symtab__lookup_offset(st, off + 15, &sym_off), "hot_sized");
	assert_int_equal(sym_off, 15);
	/* hot_nosize stops where hot_sized starts */
	assert_true(nm_symbol(bin, "hot_nosize", &alias, &size));
	assert_int_equal(vaddr - alias, 32);
	elf_symtab__free(st);
}

static void test_nosize_and_alias(void **state)
{
	check_nosize_and_alias("pie");
	check_nosize_and_alias("libhot.so");
	if (have_m32)
		check_nosize_and_alias("libhot32.so");
}

static void test_outside_loads(void **state)
{
	struct elf_symtab *st;
	uint64_t vaddr = 7;

	st = elf_symtab__load(tpath("pie"), NULL);
	assert_non_null(st);
	assert_int_equal(elf_symtab__offset_to_vaddr(st, UINT64_MAX - 1, &vaddr), -ENOENT);
	assert_int_equal(vaddr, 7);
	assert_null(elf_symtab__lookup_offset(st, UINT64_MAX - 1, NULL));
	assert_null(elf_symtab__lookup_offset(st, 1ULL << 40, NULL));
	elf_symtab__free(st);
}

/* e_entry of an ELF file, 0 when unreadable */
static uint64_t entry_of(const char *path)
{
	uint64_t e = 0;
	char cmd[512];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -h '%s' | awk '/Entry point/ { print $4 }'", path);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	if (fscanf(p, "%" SCNx64, &e) != 1)
		e = 0;
	pclose(p);
	return e;
}

/*
 * An executable without .symtab (_start is not in .dynsym) names its entry
 * function _start from e_entry; with .symtab, _start is the symbol's.
 */
static void test_entry_point(void **state)
{
	const char *bin = tpath("nolink");
	uint64_t entry = entry_of(bin), off, sym_off = 7;
	struct elf_symtab *st;
	const char *name;

	assert_false(has_section_type(bin, SHT_SYMTAB));
	assert_true(entry != 0);
	assert_true(vaddr_to_offset(bin, entry, &off));
	st = elf_symtab__load(bin, "/nonexistent-debug-root");
	assert_non_null(st);
	name = elf_symtab__lookup_offset(st, off, &sym_off);
	assert_non_null(name);
	assert_string_equal(name, "_start");
	assert_int_equal(sym_off, 0);
	name = elf_symtab__lookup_offset(st, off + 0x10, &sym_off);
	assert_non_null(name);
	assert_string_equal(name, "_start");
	assert_int_equal(sym_off, 0x10);
	/* not past ELF_ENTRY_SPAN (64 bytes) */
	name = elf_symtab__lookup_offset(st, off + 64, NULL);
	assert_true(!name || strcmp(name, "_start"));
	elf_symtab__free(st);
	/* the unstripped build names it from its symbol, as before */
	st = elf_symtab__load(tpath("pie"), NULL);
	assert_non_null(st);
	assert_true(vaddr_to_offset(tpath("pie"), entry_of(tpath("pie")), &off));
	name = elf_symtab__lookup_offset(st, off + 0x10, NULL);
	assert_non_null(name);
	assert_string_equal(name, "_start");
	elf_symtab__free(st);
}

/*
 * The dynamic loader as Debian ships it (no .symtab), without the build-id
 * and debuglink by which a libc6-dbg could name it: the return address of
 * _start's call of _dl_start (what a stack sampled while ld.so loads a
 * program ends in) is _start.
 */
static void test_ld_so_entry(void **state)
{
	const char *ld = "/lib64/ld-linux-x86-64.so.2", *copy = tpath("ld.so");
	uint64_t entry, off;
	struct elf_symtab *st;
	const char *name;

	if (access(ld, R_OK) || has_section_type(ld, SHT_SYMTAB) ||
	    sh("objcopy --remove-section .note.gnu.build-id --remove-section .gnu_debuglink %s %s",
	       ld, copy)) {
		skip();
		return;
	}
	entry = entry_of(copy);
	assert_true(entry != 0);
	assert_true(vaddr_to_offset(copy, entry, &off));
	st = elf_symtab__load(copy, "/nonexistent-debug-root");
	assert_non_null(st);
	/* x86-64: mov %rsp,%rdi (3 bytes), call _dl_start (5): returns to entry + 8 */
	name = elf_symtab__lookup_offset(st, off + 7, NULL);
	assert_non_null(name);
	assert_string_equal(name, "_start");
	elf_symtab__free(st);
}

static void test_not_elf(void **state)
{
	static const char text[] = "hello, this is not an ELF file\n";
	uint8_t id[ELF_BUILD_ID_MAX];
	const char *path = tpath("text.txt");

	assert_int_equal(write_file(path, text, sizeof(text) - 1), 0);
	assert_int_equal(elf__read_build_id(path, id), -EINVAL);
	errno = 0;
	assert_null(elf_symtab__load(path, ""));
	assert_int_equal(errno, EINVAL);

	assert_int_equal(elf__read_build_id(tpath("hot.c"), id), -EINVAL);
	assert_int_equal(elf__read_build_id(tpath("no-such-file"), id), -ENOENT);
	errno = 0;
	assert_null(elf_symtab__load(tpath("no-such-file"), ""));
	assert_int_equal(errno, ENOENT);
	/* a directory is not an ELF file either */
	assert_int_equal(elf__read_build_id(tmp_dir, id), -EINVAL);
}

/* Load must give NULL with EINVAL, or a table that answers lookups. */
static void check_survives(const char *path)
{
	uint8_t id[ELF_BUILD_ID_MAX];
	struct elf_symtab *st;
	uint64_t off;
	int ret;

	errno = 0;
	st = elf_symtab__load(path, "");
	if (!st) {
		assert_int_equal(errno, EINVAL);
	} else {
		for (off = 0; off < 0x3000; off += 0x40)
			elf_symtab__lookup_offset(st, off, NULL);
		assert_true(elf_symtab__build_id(st, id) <= ELF_BUILD_ID_MAX);
		elf_symtab__free(st);
	}
	ret = elf__read_build_id(path, id);
	assert_true(ret == -EINVAL || (ret >= 0 && ret <= ELF_BUILD_ID_MAX));
	check_fd_same(path);
}

static void test_truncated(void **state)
{
	static const size_t cuts[] = { 0, 4, 16, 63, 64, 100, 600, 4096, 8192 };
	const char *path = tpath("truncated");
	size_t len, i;
	uint8_t *buf;

	buf = read_file(tpath("pie"), &len);
	assert_non_null(buf);
	assert_true(len > 8192);
	for (i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		assert_int_equal(write_file(path, buf, cuts[i]), 0);
		check_survives(path);
	}
	/* the 100-byte prefix has a valid header whose tables lie past EOF */
	assert_int_equal(write_file(path, buf, 100), 0);
	errno = 0;
	assert_null(elf_symtab__load(path, ""));
	assert_int_equal(errno, EINVAL);
	free(buf);
}

static void test_random_bytes(void **state)
{
	const char *path = tpath("random");
	uint8_t buf[4096];
	size_t i;

	srand(12345);
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = rand();
	buf[0] = 0; /* not the ELF magic */
	assert_int_equal(write_file(path, buf, sizeof(buf)), 0);
	errno = 0;
	assert_null(elf_symtab__load(path, ""));
	assert_int_equal(errno, EINVAL);

	/* ELF magic and class, random rest */
	memcpy(buf, "\177ELF\2\1\1", 7);
	assert_int_equal(write_file(path, buf, sizeof(buf)), 0);
	check_survives(path);
}

/* Corrupt headers and section/program header tables of a real binary. */
static void test_mutations(void **state)
{
	const char *path = tpath("mutated");
	Elf64_Ehdr *eh;
	uint8_t *orig, *buf;
	size_t len, i, j, pos;
	uint64_t shoff;

	orig = read_file(tpath("libhot.so"), &len);
	assert_non_null(orig);
	buf = malloc(len);
	assert_non_null(buf);
	eh = (Elf64_Ehdr *)orig; /* libhot.so is built for this 64-bit host */
	shoff = eh->e_shoff;
	assert_true(shoff < len);
	srand(4321);
	for (i = 0; i < 300; i++) {
		memcpy(buf, orig, len);
		for (j = 0; j < 8; j++) {
			/* mostly section headers, sometimes program headers or anywhere */
			switch (rand() % 3) {
			case 0:
				pos = shoff + rand() % (len - shoff);
				break;
			case 1:
				pos = rand() % 0x300;
				break;
			default:
				pos = rand() % len;
				break;
			}
			buf[pos] = rand() % 4 ? rand() : 0xff;
		}
		assert_int_equal(write_file(path, buf, len), 0);
		check_survives(path);
	}
	free(buf);
	free(orig);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pie),
		cmocka_unit_test(test_lazy_index),
		cmocka_unit_test(test_nopie),
		cmocka_unit_test(test_shared),
		cmocka_unit_test(test_shared_32bit),
		cmocka_unit_test(test_stripped_debuglink),
		cmocka_unit_test(test_stripped_missing_debug),
		cmocka_unit_test(test_stripped_wrong_build_id),
		cmocka_unit_test(test_build_id_tree),
		cmocka_unit_test(test_given_debug_file),
		cmocka_unit_test(test_bad_build_id_tree_entries),
		cmocka_unit_test(test_nosize_and_alias),
		cmocka_unit_test(test_outside_loads),
		cmocka_unit_test(test_entry_point),
		cmocka_unit_test(test_ld_so_entry),
		cmocka_unit_test(test_not_elf),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_random_bytes),
		cmocka_unit_test(test_mutations),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

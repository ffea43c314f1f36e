// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/symbolize/sym_minidebug.c and the MiniDebugInfo path of
 * user/symbolize/sym_elf.c, on binaries built at test time the way Fedora's
 * find-debuginfo (add_minidebug) builds them: the function symbols that
 * .dynsym lacks, kept by objcopy --keep-symbols from the --only-keep-debug
 * file, compressed with xz, added as .gnu_debugdata to the stripped binary.
 * Then the bad inputs: .gnu_debugdata that is not xz, a truncated xz stream,
 * xz data followed by garbage, an xz stream holding no ELF file, and output
 * over the size limit; each must leave the file's .dynsym names and nothing
 * else, never a crash.
 */
#include <errno.h>
#include <fcntl.h>
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
#include "log.h"
#include "sym_elf.h"
#include "sym_minidebug.h"

static const char src[] = "static __attribute__((noinline, used)) int hot_static(int x)\n"
			  "{\n"
			  "	return x * 3 + 1;\n"
			  "}\n"
			  "__attribute__((noinline, used)) int hot_global(int x)\n"
			  "{\n"
			  "	return hot_static(x) ^ 0x5a;\n"
			  "}\n"
			  "int main(int argc, char **argv)\n"
			  "{\n"
			  "	return hot_global(argc);\n"
			  "}\n";

static char tmp_dir[] = "/tmp/test_sym_minidebug.XXXXXX";

#define TEST_TMP_DIR tmp_dir
#include "test_files.h"

static void *read_file(const char *path, size_t *len)
{
	struct stat sb;
	void *buf;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &sb) || !(buf = malloc(sb.st_size + 1))) {
		close(fd);
		return NULL;
	}
	*len = (size_t)read(fd, buf, sb.st_size);
	close(fd);
	return buf;
}

/*
 * BIN with .gnu_debugdata as find-debuginfo adds it, from the debug file
 * BIN.full: FUNC symbols not in .dynsym, objcopy -S --keep-symbols, xz.
 * DATA, when not empty, replaces the compressed file (for the bad inputs).
 */
static int add_minidebug(const char *bin, const char *data)
{
	return sh(
		"cd %s && objcopy --only-keep-debug %s %s.full && strip --strip-all %s && "
		"nm -D %s --format=posix --defined-only | awk '{ print $1 }' | sort > %s.dyn && "
		"nm %s.full --format=sysv --defined-only | "
		"awk -F '|' '{ if ($4 ~ \"FUNC\") { sub(/ +$/, \"\", $1); print $1 } }' | sort > %s.funcs && "
		"comm -13 %s.dyn %s.funcs > %s.keep && "
		"objcopy -S --remove-section .gdb_index --remove-section .comment --keep-symbols=%s.keep "
		"%s.full %s.mini && xz -f %s.mini && "
		"objcopy --add-section .gnu_debugdata=%s%s %s && readelf -SW %s | grep -q ' .gnu_debugdata '",
		tmp_dir, bin, bin, bin, bin, bin, bin, bin, bin, bin, bin, bin, bin, bin, bin,
		data[0] ? data : bin, data[0] ? "" : ".mini.xz", bin, bin);
}

static int group_setup(void **state)
{
	FILE *f;

	(void)state;
	log_verbosity = -1;
	if (!mkdtemp(tmp_dir))
		return -1;
	f = fopen(tpath("hot.c"), "w");
	if (!f || fputs(src, f) < 0 || fclose(f))
		return -1;
	if (sh("cd %s && cc -O0 -g -Wl,--build-id -o plain hot.c && cp plain mini && cp plain notxz && "
	       "cp plain truncxz && cp plain trailing && cp plain notelf && cp plain stripped && "
	       "strip --strip-all stripped",
	       tmp_dir))
		return -1;
	if (add_minidebug("mini", ""))
		return -1;
	/* the bad ones: each gets another .gnu_debugdata */
	if (sh("cd %s && head -c 300 /dev/urandom > junk && cp mini.mini.xz trunc.xz && truncate -s -40 trunc.xz && "
	       "cat mini.mini.xz junk > trail.xz && head -c 5000 /dev/urandom | xz > notelf.xz",
	       tmp_dir))
		return -1;
	if (add_minidebug("notxz", tpath("junk")) || add_minidebug("truncxz", tpath("trunc.xz")) ||
	    add_minidebug("trailing", tpath("trail.xz")) ||
	    add_minidebug("notelf", tpath("notelf.xz")))
		return -1;
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	if (tmp_dir[strlen(tmp_dir) - 1] == 'X')
		return 0;
	return sh("rm -rf '%s'", tmp_dir) ? -1 : 0;
}

/* Whether a lookup at some file offset of the first 64 KiB names `name`. */
static bool names(const struct elf_symtab *st, const char *name)
{
	const char *got;
	uint64_t off;

	for (off = 0; off < 65536; off++) {
		got = elf_symtab__lookup_offset(st, off, NULL);
		if (got && !strcmp(got, name))
			return true;
	}
	return false;
}

static void test_named_from_minidebuginfo(void **state)
{
	struct elf_symtab *st;

	(void)state;
	/* without .gnu_debugdata, the stripped binary names neither */
	st = elf_symtab__load(tpath("stripped"), "/nonexistent");
	assert_non_null(st);
	assert_int_equal(elf_symtab__names_src(st), ELF_NAMES_DYNSYM);
	assert_false(names(st, "hot_static"));
	assert_false(names(st, "hot_global"));
	elf_symtab__free(st);

	st = elf_symtab__load(tpath("mini"), "/nonexistent");
	assert_non_null(st);
	assert_int_equal(elf_symtab__names_src(st), ELF_NAMES_MINIDEBUG);
	assert_null(elf_symtab__debug_path(st));
	assert_true(names(st, "hot_static"));
	assert_true(names(st, "hot_global"));
	assert_true(names(st, "main"));
	elf_symtab__free(st);
}

static void check_refused(const char *bin)
{
	struct elf_symtab *st = elf_symtab__load(tpath(bin), "/nonexistent");

	assert_non_null(st);
	assert_int_equal(elf_symtab__names_src(st), ELF_NAMES_DYNSYM);
	assert_false(names(st, "hot_static"));
	elf_symtab__free(st);
}

static void test_bad_debugdata(void **state)
{
	(void)state;
	check_refused("notxz");
	check_refused("truncxz");
	check_refused("trailing");
	check_refused("notelf");
}

static void test_decompress(void **state)
{
	size_t len, plain_len;
	void *xz = read_file(tpath("mini.mini.xz"), &len);
	void *junk;
	struct stat sb;
	int fd;

	(void)state;
	assert_non_null(xz);
	assert_int_equal(stat(tpath("mini.full"), &sb), 0); /* exists; the kept part is smaller */
	fd = minidebug__decompress(xz, len, MINIDEBUG_MAX_SIZE, "test");
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &sb), 0);
	plain_len = (size_t)sb.st_size;
	assert_true(plain_len > len);
	close(fd);
	/* one byte under the output's size: refused */
	assert_int_equal(minidebug__decompress(xz, len, plain_len - 1, "test"), -EFBIG);
	/* exactly the size: accepted */
	fd = minidebug__decompress(xz, len, plain_len, "test");
	assert_true(fd >= 0);
	close(fd);
	/* every truncation of the stream is refused */
	for (size_t cut = 0; cut < len; cut += 7)
		assert_int_equal(minidebug__decompress(xz, cut, MINIDEBUG_MAX_SIZE, "test"),
				 -EINVAL);
	junk = read_file(tpath("junk"), &len);
	assert_non_null(junk);
	assert_int_equal(minidebug__decompress(junk, len, MINIDEBUG_MAX_SIZE, "test"), -EINVAL);
	free(junk);
	free(xz);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_named_from_minidebuginfo),
		cmocka_unit_test(test_bad_debugdata),
		cmocka_unit_test(test_decompress),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for user/symbolize/sym_minidebug.c and the MiniDebugInfo path of
 * user/symbolize/sym_elf.c: any bytes as the xz contents of `.gnu_debugdata`,
 * decompressed under a small limit (so that the fuzzer explores the limit
 * too), and what comes out read as the embedded ELF file, with symbol and
 * offset lookups. Built and run by `make fuzz`; seeds in
 * tests/fuzz/corpus/sym_minidebug (xz-compressed mini ELF files made as
 * find-debuginfo makes them, and a few broken streams).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
#include "log.h"
#include "sym_elf.h"
#include "sym_minidebug.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf_symtab *st;
	char path[64];
	uint64_t off;
	size_t i;
	int fd;

	log_verbosity = -1;
	fd = minidebug__decompress(data, size, 1 << 20, "fuzz");
	if (fd < 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	st = elf_symtab__load(path, "/nonexistent-debug-root");
	if (st) {
		for (i = 0; i < 65536; i += 61)
			elf_symtab__lookup_offset(st, i, &off);
		elf_symtab__free(st);
	}
	close(fd);
	return 0;
}

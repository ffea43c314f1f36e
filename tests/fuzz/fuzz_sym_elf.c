// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for user/symbolize/sym_elf.c: any bytes as an ELF file (through a
 * memfd, since the reader opens paths), then symbol, offset and build-id
 * lookups; the build-id read from the descriptor (a PT_NOTE by pread where it
 * can) must equal libelf's. Built and run by `make fuzz`; seeds in
 * tests/fuzz/corpus/sym_elf.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "log.h"
#include "sym_elf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t id[ELF_BUILD_ID_MAX], fast[ELF_BUILD_ID_MAX], slow[ELF_BUILD_ID_MAX];
	struct elf_symtab *st;
	char path[64];
	uint64_t off, va;
	size_t i;
	int fd, n;

	log_verbosity = -1;
	fd = memfd_create("fuzz-elf", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	elf__read_build_id(path, id);
	n = elf__read_build_id_fd(fd, fast);
	elf_build_id_libelf_only = true;
	if (n != elf__read_build_id_fd(fd, slow) || (n > 0 && memcmp(fast, slow, (size_t)n)))
		abort();
	elf_build_id_libelf_only = false;
	/* debug_root points nowhere, so no file outside the input is read */
	st = elf_symtab__load(path, "/nonexistent-debug-root");
	if (st) {
		elf_symtab__build_id(st, id);
		for (i = 0; i < size && i < 65536; i += 97) {
			elf_symtab__lookup_offset(st, i, &off);
			elf_symtab__offset_to_vaddr(st, i, &va);
		}
		elf_symtab__free(st);
	}
	close(fd);
	return 0;
}

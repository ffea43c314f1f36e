// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for user/symbolize/sym_gopclntab.c: any bytes as a Go
 * .gopclntab section, then lookups at addresses taken from the input (its
 * 32-bit words as offsets from the text start, its 64-bit words as
 * addresses) and across the first 64 KiB of text. Built and run by `make
 * fuzz`; seeds in tests/fuzz/corpus/gopclntab: the tables test_gopclntab
 * builds (--write-seeds) and the real one of a Go 1.19 binary.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "log.h"
#include "sym_gopclntab.h"

#define TEXT 0x401000ULL

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct go_pclntab *t;
	struct go_func_info fi;
	uint64_t pc, w64;
	uint32_t w32;
	size_t i;

	log_verbosity = -1;
	t = go_pclntab__parse(data, size, TEXT);
	if (!t)
		return 0;
	for (i = 0; i + 8 <= size && i < 4096; i += 4) {
		memcpy(&w32, data + i, 4);
		memcpy(&w64, data + i, 8);
		go_pclntab__lookup(t, TEXT + w32, &fi);
		go_pclntab__lookup(t, w64, &fi);
	}
	for (pc = TEXT; pc < TEXT + 0x10000; pc += 61)
		if (!go_pclntab__lookup(t, pc, &fi) && fi.file)
			(void)strlen(fi.file);
	go_pclntab__free(t);
	return 0;
}

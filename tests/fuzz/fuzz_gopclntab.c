// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for user/symbolize/sym_gopclntab.c: any bytes as a Go
 * .gopclntab section, then lookups at addresses taken from the input (its
 * 32-bit words as offsets from the text start, its 64-bit words as
 * addresses) and across the first 64 KiB of text, and every function's
 * span and SP delta runs (what unwind_table.c builds rows from). Built and run by `make
 * fuzz`; seeds in tests/fuzz/corpus/gopclntab: the tables test_gopclntab
 * builds (--write-seeds) and the real one of a Go 1.19 binary.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "log.h"
#include "sym_gopclntab.h"

#define TEXT 0x401000ULL

static int sp_run(void *ctx, uint64_t start, uint64_t end, int32_t delta)
{
	return start >= end || delta < 0; /* never: the reader gives only such runs */
}

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
	/* every function's span and SP runs, as unwind_table.c reads them (the first 4096) */
	for (i = 0; i < go_pclntab__count(t) && i < 4096; i++) {
		struct go_func_span f;

		if (!go_pclntab__func(t, i, &f) && f.name)
			(void)strlen(f.name);
		go_pclntab__sp_runs(t, i, sp_run, NULL);
	}
	go_pclntab__free(t);
	return 0;
}

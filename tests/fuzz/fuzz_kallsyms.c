// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for user/symbolize/kallsyms.c: any bytes as a /proc/kallsyms text,
 * then lookups around every symbol. Built and run by `make fuzz`; seeds in
 * tests/fuzz/corpus/kallsyms.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "kallsyms.h"
#include "log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ksyms *ks;
	const char *module;
	uint64_t off, addr = 0;
	size_t i;

	log_verbosity = -1;
	ks = ksyms__parse((const char *)data, size);
	if (!ks)
		return 0;
	/* probe addresses taken from the input itself, and their neighbours */
	for (i = 0; i + 8 <= size && i < 4096; i += 8) {
		memcpy(&addr, data + i, 8);
		ksyms__lookup(ks, addr, &off, &module);
		ksyms__lookup(ks, addr - 1, &off, &module);
	}
	ksyms__addr(ks, "_text");
	ksyms__free(ks);
	return 0;
}

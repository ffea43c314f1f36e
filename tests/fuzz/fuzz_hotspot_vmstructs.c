// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for user/symbolize/hotspot_vmstructs.c, the reader of a
 * JVM's gHotSpotVM* tables. The input is a process image: HS_SYM_NR
 * little-endian u64 symbol addresses, then segments {u64 address, u32
 * length, bytes} (a read is served by the first segment that holds it
 * whole). Whatever the image, the reader must end (bounded walks), never
 * read outside what it is given, and on success give printable names and
 * offsets within their bounds, and code heaps inside the code cache. Built and run by `make fuzz`; seeds in
 * tests/fuzz/corpus/hotspot_vmstructs, one of them OpenJDK 17's real tables
 * as tools/hotspot-dump.c records them from a running JVM.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "hotspot_vmstructs.h"

#define MAX_SEGS 4096

struct seg {
	uint64_t addr;
	const uint8_t *b;
	uint32_t len;
};

struct image {
	struct seg segs[MAX_SEGS];
	size_t nr;
	uint64_t reads;
};

static int rd(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct image *im = ctx;

	im->reads++;
	for (size_t i = 0; i < im->nr; i++) {
		const struct seg *s = &im->segs[i];

		if (addr >= s->addr && addr - s->addr <= s->len &&
		    len <= s->len - (addr - s->addr)) {
			memcpy(buf, s->b + (addr - s->addr), len);
			return 0;
		}
	}
	return -EFAULT;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct image im;
	uint64_t sym[HS_SYM_NR];
	struct hotspot_vm vm;
	const char *why;
	size_t at;

	if (size < sizeof(sym))
		return 0;
	memcpy(sym, data, sizeof(sym));
	im.nr = 0;
	im.reads = 0;
	for (at = sizeof(sym); at + 12 <= size && im.nr < MAX_SEGS;) {
		struct seg *s = &im.segs[im.nr++];

		memcpy(&s->addr, data + at, 8);
		memcpy(&s->len, data + at + 8, 4);
		at += 12;
		if (s->len > size - at)
			s->len = (uint32_t)(size - at);
		s->b = data + at;
		at += s->len;
	}
	if (hotspot_vmstructs__read(sym, rd, &im, &vm, &why)) {
		if (!why)
			__builtin_trap(); /* every failure says why */
		return 0;
	}
	if (!vm.release[0] || strnlen(vm.release, sizeof(vm.release)) == sizeof(vm.release))
		__builtin_trap();
	for (size_t i = 0; vm.release[i]; i++)
		if (vm.release[i] < 0x20 || vm.release[i] > 0x7e)
			__builtin_trap();
	for (unsigned f = HS_F_CODEBLOB_NAME; f < HS_FIELD_NR; f++)
		if (hotspot_vm__has(&vm, f) && vm.field[f] >= HS_MAX_OFFSET)
			__builtin_trap();
	for (unsigned t = 0; t < HS_TYPE_NR; t++)
		if (vm.size[t] >= HS_MAX_OFFSET)
			__builtin_trap();
	if (vm.nr_structs > HS_MAX_ENTRIES || vm.code_low > vm.code_high)
		__builtin_trap();
	/* the code heaps the tables lead to: each inside the code cache */
	{
		struct hotspot_heap heaps[HS_MAX_HEAPS];
		int n = hotspot_vmstructs__heaps(&vm, rd, &im, heaps, HS_MAX_HEAPS, &why);

		if (n > HS_MAX_HEAPS || (n < 0 && !why))
			__builtin_trap();
		for (int i = 0; i < n; i++)
			if (heaps[i].low >= heaps[i].high || heaps[i].log2_segment > 16)
				__builtin_trap();
	}
	return 0;
}

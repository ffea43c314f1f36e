// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for user/unwind/unwind_cache.c's reader: any bytes as a
 * cache entry, decoded twice: as they are, for the key the entry names, and
 * with their crc32 made right, so that mutations get past the checksum to
 * the header and layout checks. An entry that is accepted must be a table
 * the walker can read: every row found by unwind_compact__lookup gives one
 * of the table's rules, and encoding it again gives the same bytes.
 * Built and run by `make fuzz`; seeds in tests/fuzz/corpus/unwind_cache:
 * entries bpfprof wrote for small binaries of this machine (true, the
 * dynamic loader, the nofp workload and its library, built by gcc and by
 * clang-14 with gold) and the unit test's hand-made entry.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <endian.h>
#include <zlib.h>
#include "log.h"
#include "unwind_cache.h"
#include "unwind_compact.h"

static void check(const uint8_t *data, size_t size)
{
	struct unwind_cache_key key = { 0 };
	struct unwind_cache_table t;
	uint8_t *again;
	size_t len, i;
	char why[160];
	uint32_t p;

	if (size < UNWIND_CACHE_HDR_SIZE)
		return;
	/* the key the entry claims: the reader's other checks are reached */
	key.id_len = data[20] <= UNWIND_CACHE_ID_MAX && data[20] ? data[20] : 20;
	memcpy(key.id, data + 24, UNWIND_CACHE_ID_MAX);
	memset(key.id + key.id_len, 0, UNWIND_CACHE_ID_MAX - key.id_len);
	memcpy(&key.file_size, data + 48, 8);
	if (unwind_cache__decode(data, size, &key, &t, why, sizeof(why)))
		return;
	if (!t.words || !t.nr_words || t.info.rules + t.info.nr_rules != t.nr_words)
		abort();
	for (p = 0; p < t.info.nr_pages; p++) {
		for (i = t.words[p]; i < t.words[p + 1]; i++) {
			uint64_t pc = ((uint64_t)p << BPFPROF_UNWIND_PAGE_SHIFT) |
				      BPFPROF_UNWIND_ROW_PC(t.words[i]);
			uint32_t rule = unwind_compact__lookup(t.words, t.nr_words, &t.info, pc);

			if (rule != t.words[t.info.rules + BPFPROF_UNWIND_ROW_RULE(t.words[i])])
				abort();
			if (pc)
				unwind_compact__lookup(t.words, t.nr_words, &t.info, pc - 1);
		}
	}
	if (unwind_cache__encode(&key, &t, &again, &len))
		abort();
	/* the writer zeroes the id's padding: the rest, and the sum where the padding was zero */
	if (len != size || memcmp(again, data, 24) ||
	    memcmp(again + 44, data + 44, size - 44 - 4) ||
	    (!memcmp(again + 24, data + 24, 20) && memcmp(again + size - 4, data + size - 4, 4)))
		abort();
	free(again);
	free(t.words);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy;
	uint32_t crc;

	log_verbosity = -1;
	check(data, size);
	if (size < UNWIND_CACHE_HDR_SIZE + 4 || size > (64u << 20))
		return 0;
	copy = malloc(size);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	crc = htole32((uint32_t)crc32(0, copy, (uInt)(size - 4)));
	memcpy(copy + size - 4, &crc, 4);
	check(copy, size);
	free(copy);
	return 0;
}

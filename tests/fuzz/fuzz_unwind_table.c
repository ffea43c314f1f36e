// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for user/unwind/unwind_table.c: any bytes as an ELF file
 * (through a memfd, as the builder reads descriptors), then the table's
 * invariants (rows sorted, pcs inside [base, end)) and lookups across it,
 * and its compact words (user/unwind/unwind_compact.c, what the BPF walker
 * reads): the same rule at every row's first byte and the byte before.
 * Built and run by `make fuzz`; seeds in tests/fuzz/corpus/unwind_table: small
 * -O2 -fomit-frame-pointer programs (one with a PLT, one with .debug_frame
 * only), hand-written CFI for every rule, the CFI sections of xz and
 * liblzma cut out with objcopy, and nofp built by clang-14 and gold (its
 * .eh_frame typed SHT_X86_64_UNWIND), also without section headers (read
 * through PT_GNU_EH_FRAME).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include "log.h"
#include "unwind_compact.h"
#include "unwind_table.h"

/* The compact words of t give t's rules */
static void check_compact(const struct unwind_table *t)
{
	struct bpfprof_unwind_table info;
	uint32_t *words, nr_words, i;

	if (unwind_compact__encode(t, &words, &nr_words, &info))
		return; /* -E2BIG: more than 65536 rules, no table */
	for (i = 0; i < t->nr_rows; i++) {
		uint64_t pc = t->rows[i].pc;

		if (unwind_compact__lookup(words, nr_words, &info, pc) !=
		    unwind_table__lookup(t, t->base + pc))
			abort();
		if (pc && unwind_compact__lookup(words, nr_words, &info, pc - 1) !=
				  unwind_table__lookup(t, t->base + pc - 1))
			abort();
	}
	free(words);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct unwind_table *t = NULL;
	uint64_t span, a;
	uint32_t i;
	int fd;

	log_verbosity = -1;
	fd = memfd_create("fuzz-unwind", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	if (!unwind_table__build_fd(fd, "fuzz", &t)) {
		span = t->end - t->base;
		if (!t->nr_rows || span > UINT32_MAX)
			abort();
		for (i = 0; i < t->nr_rows; i++) {
			if (t->rows[i].pc > span || (i && t->rows[i].pc <= t->rows[i - 1].pc))
				abort();
			if (i && t->rows[i].rule == t->rows[i - 1].rule)
				abort();
			if (unwind_table__lookup(t, t->base + t->rows[i].pc) != t->rows[i].rule &&
			    t->rows[i].pc < span)
				abort();
		}
		/* the end of the table has no CFI */
		if (unwind_table__lookup(t, t->end) || unwind_table__lookup(t, t->base - 1))
			abort();
		for (a = t->base; a < t->end && a - t->base < 65536; a += 7)
			unwind_table__lookup(t, a);
		check_compact(t);
		unwind_table__free(t);
	}
	close(fd);
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for user/unwind/unwind_table.c: any bytes as an ELF file
 * (through a memfd, as the builder reads descriptors), then the table's
 * invariants (rows sorted, pcs inside [base, end)) and lookups across it.
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
#include "unwind_table.h"

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
		unwind_table__free(t);
	}
	close(fd);
	return 0;
}

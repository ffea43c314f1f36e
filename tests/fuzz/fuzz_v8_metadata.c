// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for user/symbolize/v8_metadata.c: any bytes as an ELF
 * file (through a memfd, as the reader takes a descriptor) with V8's
 * postmortem metadata, then the version printed from what was read. Built
 * and run by `make fuzz`; seeds in tests/fuzz/corpus/v8_metadata (node 20's
 * metadata in tests/v8_fixture.h's ELF, from .symtab and from .dynsym; node
 * 18's and 22's, whose other shapes take other derivations).
 */
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>
#include "log.h"
#include "v8_metadata.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct v8_metadata md;
	char why[160], ver[64];
	int fd;

	log_verbosity = -1;
	fd = memfd_create("fuzz-v8", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) == (ssize_t)size &&
	    (!v8_metadata__read(fd, &md, why, sizeof(why)) || md.nr_symbols))
		v8_metadata__version(&md, ver, sizeof(ver));
	close(fd);
	return 0;
}

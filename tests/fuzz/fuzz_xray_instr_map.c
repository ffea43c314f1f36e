// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for user/xray/xray_instr_map.c: any bytes as an XRay
 * instrumented ELF file (through a memfd, since the reader opens paths): its
 * xray_instr_map sleds (versions 0-2, R_*_RELATIVE relocations), program
 * headers and symbols; then every id's address and name, and the mappings it
 * synthesizes. Built and run by `make fuzz`; seeds in
 * tests/fuzz/corpus/xray_instr_map (the PIE and fixed-address sled files of
 * tests/test_xray.c, a section of a bad size, a file without the section).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>
#include "log.h"
#include "profile.h"
#include "xray_instr_map.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xray_instr_map *m = NULL;
	struct profile *p;
	char path[64];
	bool created;
	uint32_t id, n;
	int fd, proc;

	log_verbosity = -1;
	fd = memfd_create("fuzz-xray-map", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (!xray_instr_map__load(path, &m)) {
		n = xray_instr_map__nr_funcs(m);
		for (id = 0; id <= n + 1 && id < 4096; id++) {
			xray_instr_map__addr(m, id);
			xray_instr_map__name(m, id);
		}
		p = profile__new();
		proc = p ? profile__process(p, 1, &created) : -1;
		if (proc >= 0)
			xray_instr_map__add_mappings(m, p, (uint32_t)proc);
		profile__free(p);
		xray_instr_map__free(m);
	}
	close(fd);
	return 0;
}

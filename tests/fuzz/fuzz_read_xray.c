// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for user/xray/read_xray.c: any bytes as a trace file, without
 * an instrumentation map, then naming the locations. Build (until a Makefile
 * `fuzz` rule exists):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude -D_GNU_SOURCE \
 *     tests/fuzz/fuzz_read_xray.c user/xray/read_xray.c user/profile.c user/lib/log.c \
 *     user/xray/xray_instr_map.c user/symbolize/sym_elf.c user/lib/array.c $(pkg-config --cflags --libs libelf libbpf) \
 *     -o .output/fuzz_read_xray
 *   .output/fuzz_read_xray -max_len=65536 CORPUS_DIR
 * Seeds: traces written by tests/xray/gen_v1 and by the XRay workload.
 */
#include <stddef.h>
#include <stdint.h>
#include "log.h"
#include "profile.h"
#include "read_xray.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile *p = profile__new();
	struct xray_reader *r = p ? xray_reader__new(p, NULL) : NULL;

	log_verbosity = -1;
	if (r) {
		xray_reader__read_mem(r, "fuzz", data, size);
		xray_reader__name_locs(r);
	}
	xray_reader__free(r);
	profile__free(p);
	return 0;
}

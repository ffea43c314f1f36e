/* SPDX-License-Identifier: MIT */
/*
 * The profile the pprof and OTLP writer tests both decode, built by hand
 * through profile_fixture.h (include it first):
 *   pid 1234 "app", cgroup /system.slice/app.service, no container:
 *     /usr/bin/app 0x400000-0x452000 (build-id APP_ID), libc
 *     0x7f0000000000-0x7f0000200000 offset 0x28000 (the caller's build-id,
 *     or none), JIT code 0x7f1000000000-0x7f1000100000 (anonymous)
 *   pid 99 "worker", cgroup and container id:
 *     /usr/bin/app 0x400000-0x452000 (no build-id)
 * Stacks, in this insertion order:
 *   S0 app: hot <- main                                  5
 *   S1 app: kernel do_syscall_64 <- entry; user libc(unnamed) <- main   3
 *   S2 worker: hot <- 0x500000 (no mapping, unnamed)     2
 *   S3 app: JS:foo (jit)                                 1
 * A test may add stacks of its own between two_process_stacks and
 * profile__resolve_locs, then two_process_names names S0-S3's locations.
 */
#ifndef BPFPROF_TESTS_TWO_PROCESS_PROFILE_H
#define BPFPROF_TESTS_TWO_PROCESS_PROFILE_H

#include <stdint.h>
#include "profile.h"

static const uint8_t APP_ID[20] = { 0xde, 0xad, 0xbe, 0xef, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05,
				    0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0xff };
#define APP_ID_HEX "deadbeef000102030405060708090a0b0c0d0eff"

#define K_LEAF 0xffffffff81000010ULL
#define K_RET 0xffffffff81000200ULL

struct two_procs {
	uint32_t app, wrk; /* process indexes */
};

/* The processes, mappings and stacks S0-S3 above; libc's build-id libc_id when libc_id_len */
static inline struct two_procs two_process_stacks(struct profile *p, const uint8_t *libc_id,
						  uint8_t libc_id_len)
{
	struct two_procs t = {
		.app = add_labeled_proc(p, 1234, "app", "/system.slice/app.service", NULL),
		.wrk = add_labeled_proc(p, 99, "worker", "/kubepods/pod1/cri-containerd-0123abcd",
					"0123abcd"),
	};
	const uint64_t s0[] = { 0x401010, 0x402020 };
	const uint64_t s1[] = { K_LEAF, K_RET, 0x7f0000001000ULL, 0x402030 };
	const uint64_t s2[] = { 0x401010, 0x500000 };
	const uint64_t s3[] = { 0x7f1000000100ULL };

	add_file_mapping(p, t.app, 0x7f0000000000ULL, 0x7f0000200000ULL, 0x28000,
			 "/usr/lib/x86_64-linux-gnu/libc.so.6", libc_id, libc_id_len);
	add_file_mapping(p, t.app, 0x400000, 0x452000, 0, "/usr/bin/app", APP_ID, sizeof(APP_ID));
	add_file_mapping(p, t.app, 0x7f1000000000ULL, 0x7f1000100000ULL, 0, "", NULL, 0);
	add_file_mapping(p, t.wrk, 0x400000, 0x452000, 0, "/usr/bin/app", NULL, 0);

	add_stack(p, t.app, s0, 0, 2, 5);
	add_stack(p, t.app, s1, 2, 2, 3);
	add_stack(p, t.wrk, s2, 0, 2, 2);
	add_stack(p, t.app, s3, 0, 1, 1);
	return t;
}

/* S0-S3's names as a symbolizer sets them (after profile__resolve_locs) */
static inline void two_process_names(struct profile *p, struct two_procs t)
{
	name_loc(p, t.app, 0x401010, "hot", "/usr/bin/app", false);
	name_loc(p, t.app, 0x402020, "main", "/usr/bin/app", false);
	name_loc(p, t.app, 0x402030, "main", "/usr/bin/app", false);
	name_loc(p, PROFILE_KERNEL_PROC, K_LEAF, "do_syscall_64", "[kernel.kallsyms]", false);
	name_loc(p, PROFILE_KERNEL_PROC, K_RET, "entry_SYSCALL_64", "[kernel.kallsyms]", false);
	name_loc(p, t.app, 0x7f0000001000ULL, NULL, "/usr/lib/x86_64-linux-gnu/libc.so.6", false);
	name_loc(p, t.wrk, 0x401010, "hot", "/usr/bin/app", false);
	name_loc(p, t.app, 0x7f1000000100ULL, "JS:foo /app.js:1:1", "[jit]", true);
}

#endif /* BPFPROF_TESTS_TWO_PROCESS_PROFILE_H */

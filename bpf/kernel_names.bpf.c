// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Kernel symbol names for the addresses a profile holds, from the kernel's
 * own lookup (kallsyms_lookup through bpf_snprintf's "%pS"), run on demand by
 * BPF_PROG_RUN: naming a profile's few hundred kernel frames costs well under
 * a millisecond where reading /proc/kallsyms whole (the kernel formatting
 * 100 000+ lines) costs 40-60 ms of CPU a run (issue 34).
 * user/symbolize/kernel_names.c fills `addrs` and `nr`, runs name_addrs and
 * reads `names`; text_bounds gives _text and _etext (perf.data's header) and
 * _einittext, where the image's code ends.
 * SEC("syscall") programs need 5.14, bpf_kallsyms_lookup_name 5.16: where
 * this object does not load, /proc/kallsyms is read as before.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "kernel_names_abi.h"

__u64 addrs[KNAMES_BATCH];
char names[KNAMES_BATCH][KNAMES_LEN];
__s32 lens[KNAMES_BATCH]; /* bpf_snprintf's result: the length with its NUL, or -errno */
__u32 nr;
__u64 text, etext, einittext;

const char text_sym[] = "_text";
const char etext_sym[] = "_etext";
const char einittext_sym[] = "_einittext";

SEC("syscall")
int name_addrs(void *ctx)
{
	for (__u32 i = 0; i < KNAMES_BATCH; i++) {
		if (i >= nr)
			break;
		lens[i] = bpf_snprintf(names[i], KNAMES_LEN, "%pS", &addrs[i], sizeof(addrs[i]));
	}
	return 0;
}

SEC("syscall")
int text_bounds(void *ctx)
{
	if (bpf_kallsyms_lookup_name(text_sym, sizeof(text_sym), 0, &text) ||
	    bpf_kallsyms_lookup_name(etext_sym, sizeof(etext_sym), 0, &etext) ||
	    bpf_kallsyms_lookup_name(einittext_sym, sizeof(einittext_sym), 0, &einittext))
		return 1;
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";

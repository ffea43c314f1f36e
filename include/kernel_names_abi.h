/* SPDX-License-Identifier: MIT */
/*
 * What bpf/kernel_names.bpf.c and user/symbolize/kernel_names.c share: a
 * batch of kernel addresses in, their "%pS" names out (the kernel's
 * sprint_symbol(): "NAME+0xOFF/0xSIZE [MODULE]", or "0xADDR" when no symbol
 * holds it).
 */
#ifndef BPFPROF_KERNEL_NAMES_ABI_H
#define BPFPROF_KERNEL_NAMES_ABI_H

#define KNAMES_BATCH 128
/* KSYM_NAME_LEN (512 since 6.1) + "+0x/0x" and two 16-digit numbers + " [MODULE]" */
#define KNAMES_LEN 640

#endif

/* SPDX-License-Identifier: MIT */
/*
 * The architecture's facts for the user-stack walk (include/arch_x86.h),
 * chosen here for both compilers: the BPF target's (__TARGET_ARCH_*, from
 * the Makefile), and x86-64 in user space, whose unwinder reads x86-64
 * tables only (unwind_table.c rejects other ELF machines). An arm64 port
 * adds arch_arm64.h and its case here, and bpf/arch_arm64.bpf.h.
 */
#ifndef BPFPROF_ARCH_H
#define BPFPROF_ARCH_H

#if defined(__bpf__) && !defined(__TARGET_ARCH_x86)
#error "bpf/: only x86-64 is written (include/arch_x86.h, bpf/arch_x86.bpf.h)"
#endif
#include "arch_x86.h"

#endif /* BPFPROF_ARCH_H */

/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The target architecture's part of the BPF program (__TARGET_ARCH_*, from
 * the Makefile): an arm64 port adds arch_arm64.bpf.h and its case here.
 */
#ifndef BPFPROF_ARCH_BPF_H
#define BPFPROF_ARCH_BPF_H

#if defined(__TARGET_ARCH_x86)
#include "arch_x86.bpf.h"
#else
#error "bpf/: only x86-64 is written (bpf/arch_x86.bpf.h, include/arch_x86.h)"
#endif

#endif /* BPFPROF_ARCH_BPF_H */

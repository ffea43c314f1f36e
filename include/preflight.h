/* SPDX-License-Identifier: MIT */
/* Checks before sampling: privileges, BTF, target processes (/proc). */
#ifndef BPFPROF_PREFLIGHT_H
#define BPFPROF_PREFLIGHT_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Root, or CAP_BPF + CAP_PERFMON (or CAP_SYS_ADMIN), and kernel BTF at
 * /sys/kernel/btf/vmlinux. Returns 0, or -EPERM / -ENOTSUP with a message
 * printed that says what is missing.
 */
int preflight__check_system(void);

/* True while pid exists and is not a zombie (from /proc/PID/stat). */
bool preflight__process_alive(uint32_t pid);

/* The tgid of pid (itself for a process, its process for a thread), or 0 if unknown. */
uint32_t preflight__tgid_of(uint32_t pid);

#endif /* BPFPROF_PREFLIGHT_H */

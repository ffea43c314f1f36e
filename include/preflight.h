/* SPDX-License-Identifier: MIT */
/*
 * Checks before sampling: the kernel (perf events, BTF, BPF ring buffer),
 * privileges (CAP_BPF + CAP_PERFMON, kernel.perf_event_paranoid, user
 * namespaces) and the target processes (/proc). Facts are gathered from a
 * proc and a sys directory, so tests feed a fake tree; the verdict is a pure
 * function of the facts with one message per failure that says what to do.
 */
#ifndef BPFPROF_PREFLIGHT_H
#define BPFPROF_PREFLIGHT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* perf_event_paranoid when the sysctl file is missing (no perf events) */
#define PREFLIGHT_NO_PERF_EVENTS INT32_MIN

struct preflight_facts {
	uint32_t euid; /* from Uid: of PROC/self/status */
	uint64_t cap_eff; /* CapEff: of PROC/self/status */
	bool init_userns; /* PROC/self/uid_map maps all of the initial namespace (or is unreadable) */
	int32_t perf_event_paranoid; /* PROC/sys/kernel/perf_event_paranoid, or PREFLIGHT_NO_PERF_EVENTS */
	bool btf; /* SYS/kernel/btf/vmlinux exists */
	int ringbuf; /* BPF_MAP_TYPE_RINGBUF: 1 yes, 0 no, -1 not known (not probed) */
	char release[65]; /* PROC/sys/kernel/osrelease, "" if unknown */
	const char *exe; /* program path for the setcap hint (borrowed) */
};

/*
 * Fill f from proc_dir ("/proc") and sys_dir ("/sys"); ringbuf is left -1
 * and exe NULL. Returns 0, or -errno when PROC/self/status is unreadable.
 */
int preflight__gather(const char *proc_dir, const char *sys_dir, struct preflight_facts *f);

/*
 * The verdict on f, in the order a user has to fix things: perf events, BTF,
 * user namespace, capabilities, perf_event_paranoid, ring buffer. Returns 0,
 * or -ENOTSUP (the kernel lacks a feature) / -EPERM (privileges) with one
 * line in msg (without the "bpfprof: " prefix and newline; truncated to size).
 */
int preflight__check(const struct preflight_facts *f, char *msg, size_t size);

/*
 * The system's verdict: gathers from /proc and /sys, probes the ring buffer
 * map type (libbpf_probe_bpf_map_type) once privileges are known to suffice,
 * and prints the message. Returns 0, -EPERM or -ENOTSUP.
 */
int preflight__check_system(void);

/*
 * True while process pid exists and has a thread that is not a zombie: its
 * leader (/proc/PID/stat), or, when the leader is a zombie, another of its
 * threads (/proc/PID/task/TID/stat: the main thread called pthread_exit, or
 * a non-leader thread is in the middle of an exec).
 */
bool preflight__process_alive(uint32_t pid);
/* The same under proc_dir ("/proc" except in tests). */
bool preflight__process_alive_in(const char *proc_dir, uint32_t pid);

/* The tgid of pid (itself for a process, its process for a thread), or 0 if unknown. */
uint32_t preflight__tgid_of(uint32_t pid);

#endif /* BPFPROF_PREFLIGHT_H */

/* SPDX-License-Identifier: MIT */
/*
 * What the running kernel offers bpfprof's BPF programs, probed at start
 * (never read off the version: RHEL's 4.18 and 5.14 carry 6.x BPF), and the
 * variant of the BPF program that is loaded for it. The facts come from
 * libbpf's probes (libbpf_probe_bpf_helper, libbpf_probe_bpf_map_type) and
 * the kernel's BTF; the decisions are pure functions of them, so that tests
 * give any set of features. Kernel history: the release that brought each
 * helper and map type (the kernel's include/uapi/linux/bpf.h history, as
 * BCC's docs/kernel-versions.md lists it) and the "Variants" comment of
 * bpf/compat.bpf.h.
 */
#ifndef BPFPROF_KERNEL_FEATURES_H
#define BPFPROF_KERNEL_FEATURES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct btf;

/* BPF task work (kernel/bpf/helpers.c), which walks off-CPU user stacks at the return to user mode */
enum features_task_work {
	FEATURES_TASK_WORK_NONE = 0,
	/* 6.18: bpf_task_work_schedule_resume_impl(task, tw, map, callback, void *aux__prog) */
	FEATURES_TASK_WORK_IMPL,
	/* 7.x: bpf_task_work_schedule_resume(task, tw, map, callback); _impl has no address */
	FEATURES_TASK_WORK_PLAIN,
};

struct kernel_features {
	char release[65]; /* uname -r, for messages */
	uint32_t version; /* KERNEL_VERSION(a, b, c) of the upstream release (kernel_features__kernel_version), 0 unknown */
	bool btf; /* /sys/kernel/btf/vmlinux: CO-RE needs it */
	bool ringbuf; /* BPF_MAP_TYPE_RINGBUF, 5.8 */
	bool get_task_stack; /* bpf_get_task_stack, 5.9 */
	bool bpf_loop; /* bpf_loop and callbacks, 5.17 */
	bool task_storage; /* BPF_MAP_TYPE_TASK_STORAGE (5.11; from tracing programs 5.13) */
	bool current_task_btf; /* bpf_get_current_task_btf, 5.11 */
	bool task_pt_regs; /* bpf_task_pt_regs, 5.15 */
	enum features_task_work task_work;
};

/* The variants of the BPF program built into the binary (Makefile BPF_VARIANT_*, bpf/compat.bpf.h). */
enum bpf_variant {
	BPF_VARIANT_MODERN = 0, /* bpf_loop, task storage, BTF task helpers: 5.17+ */
	BPF_VARIANT_TASK_WORK, /* MODERN with 6.18's task work kfunc */
	BPF_VARIANT_TASK_WORK7, /* MODERN with 7.x's task work kfunc */
	BPF_VARIANT_LEGACY, /* bounded loops, hash maps, CO-RE reads: 5.10+ */
	BPF_VARIANT_NR,
};

/* "modern", "task-work", "task-work-7", "legacy"; NULL for an unknown value. Static storage. */
const char *kernel_features__variant_name(enum bpf_variant v);
/* The variant named name (as above). Returns 0, or -EINVAL for an unknown name. */
int kernel_features__variant_from_name(const char *name, enum bpf_variant *v);

/*
 * Probe the running kernel into f. Needs the privileges to create maps and
 * load programs (the probes do both). Returns 0; a probe that cannot answer
 * leaves its feature false. f->task_work stays NONE: only --off-cpu asks
 * (kernel_features__probe_task_work).
 */
int kernel_features__probe(struct kernel_features *f);

/*
 * f->task_work from the running kernel's BTF (kernel_features__task_work_from_btf).
 * Apart from kernel_features__probe because parsing vmlinux's BTF takes
 * about 10 ms of CPU, and only the off-CPU variants' choice needs it.
 */
void kernel_features__probe_task_work(struct kernel_features *f);

/*
 * The task work kfunc that btf (a kernel's BTF) declares with the exact
 * prototype a variant calls: the plain 4-argument name (7.x) first, else the
 * _impl name whose fifth argument is `void *` (6.18). 7.x keeps the _impl
 * name in BTF with a `struct bpf_prog_aux *` argument and no address, which
 * must not be taken for 6.18's. NONE for a NULL btf.
 */
enum features_task_work kernel_features__task_work_from_btf(const struct btf *btf);

/*
 * The upstream version as KERNEL_VERSION(a, b, c) (a << 16 | b << 8 | c, c
 * capped at 255): from Ubuntu's /proc/version_signature (its last word,
 * "5.15.131") when given, else Debian's "Debian 6.1.192-2" in uname -v
 * (uname -r is "6.1.0-56-amd64" there, the ABI, not the release), else
 * release. libbpf's get_kernel_version() reads the same. Any argument may be
 * NULL. Returns 0 when nothing parses.
 */
uint32_t kernel_features__kernel_version(const char *release, const char *uname_version,
				  const char *version_signature);

/*
 * A feature below bpfprof's floor (Linux 5.10: BTF, the ring buffer,
 * bpf_get_task_stack), as one line naming it and the kernel that brought it
 * into msg; NULL when none is missing.
 */
const char *kernel_features__missing(const struct kernel_features *f, char *msg, size_t size);

/*
 * The variants to try, best first, into out (room for BPF_VARIANT_NR),
 * with the reason for the first in why (one line, truncated to size).
 * offcpu: --off-cpu, which alone uses task work. The legacy variant is
 * always last, for kernels whose probes said yes to a feature the verifier
 * then refused (partial backports). Returns the number of variants.
 */
size_t kernel_features__choose(const struct kernel_features *f, bool offcpu, enum bpf_variant *out,
			char *why, size_t size);

/*
 * Whether BPF reads of user memory from NMI context (a hardware event such
 * as cycles) may touch the wrong address space on a kernel of this version:
 * copy_from_user_nofault lacked its nmi_uaccess_okay() check from 5.19 until
 * 6.4 (d319f344561d "mm: Fix copy_from_user_nofault()"), backported to
 * 6.1.36. The check is inlined, so unlike the OpenTelemetry profiler, which
 * disassembles the function, the version is all that is read; 0 (unknown)
 * is taken as safe. Timer events (cpu-clock) do not run in NMI context.
 */
bool kernel_features__nmi_uaccess_unsafe(uint32_t version);

#endif /* BPFPROF_KERNEL_FEATURES_H */

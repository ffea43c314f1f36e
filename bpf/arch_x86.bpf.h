/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * What the BPF program knows of x86-64 alone, beside what it shares with
 * user space's walk (include/arch_x86.h): struct pt_regs's fields, where a
 * task's user registers lie on its kernel stack, the thread's TLS base.
 * Sources: arch/x86/include/asm/ptrace.h (struct pt_regs),
 * arch/x86/include/asm/processor.h (task_pt_regs()), arch/x86/include/asm/
 * page_64_types.h (THREAD_SIZE), arch/x86/include/asm/processor.h
 * (struct thread_struct's fsbase).
 */
#ifndef BPFPROF_ARCH_X86_BPF_H
#define BPFPROF_ARCH_X86_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "arch.h"

/*
 * The kernel stack size (THREAD_SIZE: 16 KiB, 32 KiB with KASAN) for the
 * variant without bpf_task_pt_regs; set by user space.
 */
const volatile __u64 thread_size = 16384;

/*
 * The user registers task saved at its kernel entry, where task_pt_regs()
 * finds them: the pt_regs at the top of its kernel stack (the OpenTelemetry
 * profiler does the same). Checked: a user code segment or nothing, so a
 * wrong stack size gives no user stack, never garbage.
 */
static __always_inline struct pt_regs *arch_stack_user_regs(struct task_struct *task)
{
	struct pt_regs *regs;
	void *stack = BPF_CORE_READ(task, stack);

	if (!stack)
		return NULL;
	regs = (struct pt_regs *)(stack + thread_size) - 1;
	if (BPF_CORE_READ(regs, cs) != ARCH_USER_CS)
		return NULL;
	return regs;
}

/* The registers a sample interrupted (a perf_event program's context holds a struct pt_regs) */
static __always_inline struct pt_regs *arch_sample_regs(struct bpf_perf_event_data *ctx)
{
	return (struct pt_regs *)&ctx->regs;
}

/*
 * The sample interrupted user mode: the kernel's user_mode()
 * (arch/x86/include/asm/ptrace.h), the CPL in cs's low bits
 */
/*
 * cs in the perf_event program's context: the user ABI's struct pt_regs
 * (arch/x86/include/uapi/asm/ptrace.h: r15 ... orig_ax, ip, cs), at a fixed
 * offset, read whole. Not by vmlinux.h's field: the kernel's own struct
 * made cs a u16 in a union (6.x), which CO-RE then relocates to a 2-byte
 * load the context refuses (and an 8-byte one is refused where it is u16)
 */
#define ARCH_CTX_CS_OFF (17 * 8)
static __always_inline bool arch_sample_user_mode(struct bpf_perf_event_data *ctx)
{
	return (*(volatile __u64 *)((void *)ctx + ARCH_CTX_CS_OFF) & 3) != 0;
}

/* r's registers in DWARF order (include/arch_x86.h) into out[0..ARCH_NR_DWREGS) */
static __always_inline void arch_dwarf_regs(__u64 *out, const struct pt_regs *r)
{
	out[0] = r->ax;
	out[1] = r->dx;
	out[2] = r->cx;
	out[3] = r->bx;
	out[4] = r->si;
	out[5] = r->di;
	out[ARCH_DWREG_FP] = r->bp;
	out[ARCH_DWREG_SP] = r->sp;
	out[8] = r->r8;
	out[9] = r->r9;
	out[10] = r->r10;
	out[11] = r->r11;
	out[12] = r->r12;
	out[13] = r->r13;
	out[14] = r->r14;
	out[15] = r->r15;
	out[ARCH_DWREG_RA] = r->ip;
}

/* The thread's TLS base (the fs base), which glibc's thread pointer is */
static __always_inline __u64 arch_tls_base(struct task_struct *task)
{
	return BPF_CORE_READ(task, thread.fsbase);
}

/* User ip, saved at a kernel entry, follows a system call instruction */
static __always_inline bool arch_after_syscall(__u64 ip)
{
	__u8 insn[ARCH_SYSCALL_INSN_LEN];

	return !bpf_probe_read_user(insn, sizeof(insn), (const void *)(ip - sizeof(insn))) &&
	       arch_is_syscall(insn);
}

#endif /* BPFPROF_ARCH_X86_BPF_H */

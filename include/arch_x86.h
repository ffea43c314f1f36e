/* SPDX-License-Identifier: MIT */
/*
 * What the user-stack walk knows of x86-64 alone, in one place for both of
 * its compilers: clang -target bpf (bpf/arch_x86.bpf.h adds the kernel's
 * side: pt_regs, the saved user registers, the TLS base) and gcc for user
 * space (user/unwind). An arm64 port adds arch_arm64.h beside it and a case
 * in include/arch.h.
 *
 * Sources: the x86-64 psABI (DWARF register numbers, figure 3.36; the red
 * zone, 3.2.2), the kernel's arch/x86/include/uapi/asm/sigcontext.h and
 * arch/x86/kernel/signal_64.c (the signal frame), arch/x86/include/asm/
 * segment.h (__USER_CS), the Intel SDM's opcode tables (syscall 0f 05,
 * push %rbp 55, mov %rsp,%rbp 48 89 e5, ret c3, rep ret f3 c3).
 */
#ifndef BPFPROF_ARCH_X86_H
#define BPFPROF_ARCH_X86_H

#ifndef __bpf__
#include <linux/types.h> /* the BPF side gets these from vmlinux.h */
#endif

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/*
 * DWARF register numbers, also the order of the regs[] of struct
 * bpfprof_ustack_copy and struct bpfprof_sample_copy: rax rdx rcx rbx rsi
 * rdi rbp rsp r8-r15, then the return address column (rip)
 */
#define ARCH_DWREG_FP 6
#define ARCH_DWREG_SP 7
#define ARCH_DWREG_RA 16
#define ARCH_NR_DWREGS 17

/*
 * Bytes below sp that a leaf function may use without moving sp: they
 * hold no return address, so a walk reads nothing there (a stack copy
 * starts at sp)
 */
#define ARCH_RED_ZONE 128

/* The user code segment selector (__USER_CS): pt_regs.cs of a task in user mode */
#define ARCH_USER_CS 0x33

/*
 * The rt_sigframe at a signal handler's return into __restore_rt: sp points
 * at its ucontext, whose uc_mcontext (struct sigcontext) starts 40 bytes in
 */
#define ARCH_SIGFRAME_MCONTEXT 40
#define ARCH_SIGCONTEXT_BP 80
#define ARCH_SIGCONTEXT_SP 120
#define ARCH_SIGCONTEXT_IP 128

/* The length of the system call instruction (`syscall`, 0f 05) */
#define ARCH_SYSCALL_INSN_LEN 2

/* Kernel addresses have the top bit set (x86-64 and arm64 alike), user addresses never. */
static __always_inline int arch_kernel_addr(__u64 addr)
{
	return addr >> 63;
}

/* Whether insn[0..1], the bytes before a kernel entry's user ip, are a `syscall` */
static __always_inline int arch_is_syscall(const __u8 *insn)
{
	return insn[0] == 0x0f && insn[1] == 0x05;
}

/*
 * A frame-pointer step from a leaf frame whose function had not set up (or
 * had already torn down) its frame, from code[0..3], the bytes at pc - 1:
 * at `push %rbp` the return address is at [sp]; right after it ([pc - 1]
 * is the push, [pc] `mov %rsp,%rbp`) at [sp + 8]; at `ret` at [sp], rbp
 * already the caller's (async-profiler stackFrame_x64.cpp, framehop's
 * prologue analysis). Returns the bytes of stack the frame holds above sp,
 * or 0 when the frame is a normal one.
 */
static __always_inline __u64 arch_leaf_prologue(const __u8 *code)
{
	if (code[1] == 0x55 || code[1] == 0xc3 || (code[1] == 0xf3 && code[2] == 0xc3))
		return 8; /* push %rbp; ret; rep ret */
	if (code[0] == 0x55 && code[1] == 0x48 && code[2] == 0x89 && code[3] == 0xe5)
		return 16; /* push %rbp done, mov %rsp,%rbp next */
	return 0;
}

#endif /* BPFPROF_ARCH_X86_H */

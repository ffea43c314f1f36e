/* SPDX-License-Identifier: MIT */
/*
 * Kernel frames' names from the kernel's own symbol lookup, for the
 * addresses a profile holds (bpf/kernel_names.bpf.c: bpf_snprintf's "%pS",
 * i.e. kallsyms_lookup, the lookup /proc/kallsyms's lines come from),
 * instead of reading /proc/kallsyms whole: a few hundred lookups against the
 * kernel formatting 100 000+ lines (40-60 ms of CPU a run, issue 34).
 * Needs 5.16 (SEC("syscall") programs, bpf_kallsyms_lookup_name) and
 * CAP_BPF + CAP_PERFMON; where it does not load, callers read /proc/kallsyms.
 * One difference: at an address several symbols share (about 170 in a
 * kernel, mostly SYSCALL_DEFINE0's __do_sys_X with its __x64_sys_X and
 * __ia32_sys_X aliases), the kernel names the first in /proc/kallsyms's
 * order, where the table read from it prefers a global one (ksyms__lookup).
 */
#ifndef BPFPROF_KERNEL_NAMES_H
#define BPFPROF_KERNEL_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kernel_names;

/*
 * Load the program and read the core kernel's text bounds. Returns the
 * namer (free with kernel_names__close), or NULL with errno when the kernel
 * or the privileges refuse it (libbpf's error).
 */
struct kernel_names *kernel_names__open(void);
void kernel_names__close(struct kernel_names *kn);

/* _text and _etext (kallsyms_lookup_name), read at open. */
void kernel_names__text_bounds(const struct kernel_names *kn, uint64_t *text, uint64_t *etext);

/*
 * The symbols holding addrs[0..n) (any order, repeats allowed), as
 * /proc/kallsyms lines ("ADDR T NAME" or "ADDR T NAME\t[MODULE]", ADDR the
 * symbol's start), one per symbol, for ksyms__parse. An address no symbol
 * holds gets no line. *text is malloc'd, owned by the caller, *len its
 * length. A JITed BPF program's symbol gets the module "bpf", as
 * /proc/kallsyms shows it (%pS gives it none). Returns 0, or -errno
 * (-ENOMEM, BPF_PROG_RUN's error, -ENAMETOOLONG for a name %pS truncated).
 */
int kernel_names__kallsyms_text(struct kernel_names *kn, const uint64_t *addrs, size_t n,
				char **text, size_t *len);

/* One symbol as kernel_names__parse reads it; strings point into the parsed text. */
struct kernel_sym {
	uint64_t start; /* the symbol's address */
	const char *name;
	const char *module; /* NULL for the core kernel */
};

/*
 * Read one "%pS" result s for addr (kernel/kallsyms.c __sprint_symbol():
 * "NAME+0xOFF/0xSIZE" or "NAME+0xOFF/0xSIZE [MODULE]"), splitting s in
 * place. A module-less "bpf_*" symbol outside the kernel image's code [text, image_end)
 * (_text, _einittext) gets the module "bpf", as /proc/kallsyms lists BPF's JITed
 * code. Returns
 * false for "0xADDR" (no symbol holds addr) or a malformed s.
 */
bool kernel_names__parse(char *s, uint64_t addr, uint64_t text, uint64_t image_end,
			 struct kernel_sym *sym);

#endif /* BPFPROF_KERNEL_NAMES_H */

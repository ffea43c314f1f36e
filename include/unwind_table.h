/* SPDX-License-Identifier: MIT */
/*
 * Unwind tables from CFI: one ELF file's .eh_frame (else .debug_frame) turned
 * into the sorted rows the BPF walker reads (struct bpfprof_unwind_row and the
 * rule word in include/bpfprof_abi.h). CFI is read with libdw's CFI API
 * (dwarf_getcfi_elf, dwarf_cfi_addrframe, dwarf_frame_info, dwarf_frame_cfa,
 * dwarf_frame_register), not an interpreter of our own; the DWARF rules are
 * those of the DWARF 5 standard, section 6.4, and the x86-64 psABI's register
 * numbering (rbp 6, rsp 7, return address 16).
 *
 * Files come from unprivileged users: malformed CFI gives -EINVAL with one
 * warning naming the file and the section offset, and a row that cannot be
 * expressed is BPFPROF_UNWIND_NONE (a frame-pointer step), never END.
 */
#ifndef BPFPROF_UNWIND_TABLE_H
#define BPFPROF_UNWIND_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <libelf.h>
#include "bpfprof_abi.h"

struct unwind_table {
	uint64_t base;		/* ELF virtual address that row pcs are relative to */
	uint64_t end;		/* ELF virtual address one past the last covered byte */
	struct bpfprof_unwind_row *rows; /* sorted by pc, adjacent rows differ in rule */
	uint32_t nr_rows;
	/* what the build saw, for -v and the benchmarks */
	uint32_t nr_fdes;	/* FDEs read */
	uint32_t nr_none;	/* rows that became BPFPROF_UNWIND_NONE (not expressible) */
	uint64_t cfi_bytes;	/* size of the CFI section read, bytes */
};

/*
 * Build the table of an ELF file already opened with libelf. `name` is only
 * used in messages. Returns 0 and *out (free with unwind_table__free), or
 * -ENOENT when the file has no CFI section, -EINVAL when its CFI is
 * malformed (warned once, naming the file and offset), -ENOTSUP for a
 * machine other than x86-64, -ENOMEM.
 */
int unwind_table__build(Elf *elf, const char *name, struct unwind_table **out);

/* The same from an open file descriptor (not closed). */
int unwind_table__build_fd(int fd, const char *name, struct unwind_table **out);

void unwind_table__free(struct unwind_table *t);

/*
 * The rule in force at ELF virtual address vaddr (BPFPROF_UNWIND_NONE
 * outside the table), as the BPF walker finds it: the last row whose pc is
 * at or below vaddr - base.
 */
uint32_t unwind_table__lookup(const struct unwind_table *t, uint64_t vaddr);

#endif /* BPFPROF_UNWIND_TABLE_H */

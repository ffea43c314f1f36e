/* SPDX-License-Identifier: MIT */
/*
 * Unwind tables from CFI: one ELF file's .eh_frame, of any section type but
 * SHT_NOBITS (SHT_PROGBITS, or SHT_X86_64_UNWIND from LLVM and gold), else its
 * .debug_frame, else (no section headers) the .eh_frame that PT_GNU_EH_FRAME
 * points to, turned into the sorted rows the BPF walker reads (struct bpfprof_unwind_row and the
 * rule word in include/bpfprof_abi.h). CFI is read with libdw's CFI API
 * (dwarf_getcfi_elf, dwarf_cfi_addrframe, dwarf_frame_info, dwarf_frame_cfa,
 * dwarf_frame_register), not an interpreter of our own; the DWARF rules are
 * those of the DWARF 5 standard, section 6.4, and the x86-64 psABI's register
 * numbering (rbp 6, rsp 7, return address 16).
 *
 * A Go binary without any CFI section (-ldflags="-s -w") gets rows from its
 * own function table instead (.gopclntab's SP deltas, sym_gopclntab.h):
 * CFA = rsp + delta + 8, rbp at [CFA - 16] once the frame is set up, a
 * frame-pointer step at Go's roots (runtime.goexit, mstart, rt0_go), where
 * the chain ends.
 *
 * Files come from unprivileged users: malformed CFI gives -EINVAL with one
 * warning naming the file and the section offset, and a row that cannot be
 * expressed is BPFPROF_UNWIND_NONE (a frame-pointer step), never END.
 */
#ifndef BPFPROF_UNWIND_TABLE_H
#define BPFPROF_UNWIND_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <libelf.h>
#include "bpfprof_abi.h"

struct unwind_table {
	uint64_t base; /* ELF virtual address that row pcs are relative to */
	uint64_t end; /* ELF virtual address one past the last covered byte */
	struct bpfprof_unwind_row *rows; /* sorted by pc, adjacent rows differ in rule */
	uint32_t nr_rows;
	/* what the build saw, for -v and the benchmarks */
	uint32_t nr_fdes; /* FDEs read */
	uint32_t nr_none; /* CFI rows that became BPFPROF_UNWIND_NONE (not expressible),
				   before merging; the NONE rows ending FDEs not counted */
	uint64_t cfi_bytes; /* size of the CFI section read, bytes */
};

/*
 * Build the table of an ELF file already opened with libelf (not closed).
 * `name` is only used in messages. Returns 0 and *out (free with
 * unwind_table__free), or
 *   -ENOENT   no CFI section and no usable Go function table (a separate
 *             debug file's .debug_frame is the caller's to find:
 *             include/sym_elf.h), or no FDE in it that could be used;
 *   -EINVAL   malformed CFI: an entry running past the section, a CIE pointer
 *             to no CIE, an FDE range wrapping around, more than 4M rows or
 *             more CFI work than 1024 bytes run per byte of CFI (warned once,
 *             naming the file, the section and the offset);
 *   -ENOTSUP  not ELFCLASS64 x86-64, or FDEs spanning more than 4 GiB;
 *   -ENOMEM.
 * Smaller damage costs only the FDEs concerned, with one warning per kind
 * naming the first offset: FDEs of a CIE whose augmentation or pointer
 * encoding is not handled (only absptr, [us]data2/4/8, [us]leb128, pcrel)
 * are left out; FDEs overlapping an earlier-starting one are left out; an
 * FDE libdw rejects (unknown opcode, bad expression, DW_CFA_restore_state
 * without remember) becomes one NONE row.
 * Time: about 50-70 ms per MB of .eh_frame (libdw replays an FDE's program
 * from its start for every row).
 */
int unwind_table__build(Elf *elf, const char *name, struct unwind_table **out);

/* The same from an open file descriptor (not closed; read with ELF_C_READ_MMAP). */
int unwind_table__build_fd(int fd, const char *name, struct unwind_table **out);

void unwind_table__free(struct unwind_table *t);

/*
 * Rows come from the fast generator (user/unwind/unwind_rows_fast.h) where
 * an FDE is in the subset it handles, from libdw otherwise; true: libdw for
 * every FDE (the tests' oracle, and the benchmark's baseline).
 */
extern bool unwind_table_libdw_only;

/*
 * The rule in force at ELF virtual address vaddr (BPFPROF_UNWIND_NONE
 * outside the table), as the BPF walker finds it: the last row whose pc is
 * at or below vaddr - base.
 */
uint32_t unwind_table__lookup(const struct unwind_table *t, uint64_t vaddr);

#endif /* BPFPROF_UNWIND_TABLE_H */

// SPDX-License-Identifier: MIT
/*
 * Unwind tables from CFI (see include/unwind_table.h). The FDEs of .eh_frame
 * of any section type (else .debug_frame; in a file without section headers,
 * the .eh_frame PT_GNU_EH_FRAME points to) are enumerated with libdw's
 * dwarf_next_cfi, their initial_location and address_range decoded with the
 * pointer encoding of their CIE's 'R' augmentation (LSB 5.0, "Exception
 * Frames"; .debug_frame: plain address-size values, DWARF 5 section 6.4.1).
 * Each FDE's rows then
 * come from libdw itself: dwarf_cfi_addrframe at the FDE's start gives the
 * row and its [start, end), the next row starts at end, until the FDE ends.
 * Each row's CFA, return-address and rbp rules (dwarf_frame_cfa,
 * dwarf_frame_register) become one rule word of include/bpfprof_abi.h, or
 * BPFPROF_UNWIND_NONE where the word cannot say what the CFI says.
 *
 * libdw's register rules, as dwarf_frame_register reports them (elfutils
 * 0.188, libdw/dwarf_frame_register.c; the x86-64 backend's ABI initial state
 * in backends/x86_64_cfi.c makes rbx, rbp, r12-r15 and the return address
 * "same value" and rsp "val_offset(0)" until the CIE says otherwise):
 *   undefined         nops 0, ops == ops_mem
 *   same value        nops 0, ops == NULL
 *   offset(N)         DW_OP_call_frame_cfa [DW_OP_plus_uconst N]  (N as a u64)
 *   val_offset(N)     the same, then DW_OP_stack_value
 *   register, expressions: anything else
 * and dwarf_frame_cfa gives one DW_OP_bregx (number: register, number2:
 * offset) for "register + offset", the expression's ops for
 * DW_CFA_def_cfa_expression.
 *
 * Work is bounded: libdw re-runs an FDE's program from its start for every
 * row, so the instruction bytes run per FDE and per file are capped, and so
 * are the rows (UNWIND_TABLE_MAX_ROWS).
 */
#include <errno.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "arch.h"
#include "leb128.h"
#include "array.h"
#include "log.h"
#include "sym_gopclntab.h"
#include "unwind_rows_fast.h"
#include "unwind_table.h"

bool unwind_table_libdw_only;

/* More rows than any file of a Debian host has (libc: ~30k, python3.11: ~80k) */
#define UNWIND_TABLE_MAX_ROWS (4u << 20)
/*
 * Instruction bytes libdw may run for one FDE (its program length times its
 * rows) and for a whole file (UNWIND_WORK_PER_BYTE per byte of CFI, at least
 * UNWIND_FILE_MIN_WORK). Measured on the 2 208 ELF files of this Debian host:
 * at most 294 bytes run per byte of CFI, the largest FDE (gcc's lto-dump,
 * 20 KB and 6 680 rows) 134 MB; libc 1.7 MB, python3.11 4.0 MB.
 */
#define UNWIND_FDE_MAX_WORK (256ull << 20)
#define UNWIND_WORK_PER_BYTE 1024
#define UNWIND_FILE_MIN_WORK (64ull << 20)

/* DWARF register numbers of the frame pointer, stack pointer and return address (include/arch.h) */
#define DWREG_RBP ARCH_DWREG_FP
#define DWREG_RSP ARCH_DWREG_SP
#define DWREG_RA ARCH_DWREG_RA

/* DW_EH_PE_* pointer encodings (LSB 5.0, table 10-5 and 10-6) */
#define EH_PE_absptr 0x00
#define EH_PE_uleb128 0x01
#define EH_PE_udata2 0x02
#define EH_PE_udata4 0x03
#define EH_PE_udata8 0x04
#define EH_PE_sleb128 0x09
#define EH_PE_sdata2 0x0a
#define EH_PE_sdata4 0x0b
#define EH_PE_sdata8 0x0c
#define EH_PE_pcrel 0x10
#define EH_PE_indirect 0x80
#define EH_PE_omit 0xff
#define EH_PE_UNSUPPORTED 0x100 /* ours: FDEs of this CIE are skipped */

struct cie_info {
	Dwarf_Off off;
	unsigned int enc; /* FDE pointer encoding, or EH_PE_UNSUPPORTED */
	bool signal; /* 'S' augmentation: signal trampoline */
	bool bad; /* initial instructions not accepted (check_insns) */
	bool aug_z; /* FDEs carry augmentation data, length first */
	bool fast; /* its FDEs can go through the fast row generator */
	uint64_t caf; /* code alignment factor */
	int64_t daf; /* data alignment factor */
	struct fast_state init; /* the state after its initial instructions */
};

struct fde_info {
	uint64_t start, end; /* ELF virtual addresses */
	Dwarf_Off off; /* section offset, for messages */
	size_t len; /* bytes of the entry, for the work bound */
	bool signal;
	const char *bad; /* why its instructions are not handed to libdw */
	const struct cie_info *cie;
	const uint8_t *insns, *insns_end; /* its call frame instructions */
	/* ours, not an FDE: .init or .fini in crti.o's shape (crt_prologue), no CFI */
	uint8_t crt_prologue;
};

struct builder {
	const char *name;
	const char *sec; /* ".eh_frame" or ".debug_frame" */
	Elf_Data *data;
	uint64_t sh_addr;
	bool eh;
	unsigned char ident[EI_NIDENT];
	Dwarf_CFI *cfi;

	struct cie_info *cies;
	size_t nr_cies, cap_cies;
	struct fde_info *fdes;
	size_t nr_fdes, cap_fdes;

	struct unwind_table *t;
	size_t cap_rows;
	uint64_t work, max_work;
	size_t nr_fast_gave_up; /* FDEs the fast generator left to libdw */
	size_t nr_crt; /* entries of add_crt_entries among fdes */
	/* per-file warnings, one line each at the end */
	size_t skipped_enc, skipped_overlap, skipped_bad;
	Dwarf_Off first_enc, first_overlap, first_bad;
	const char *first_bad_msg;
};

/* array__grow returning the array: NULL when out of memory (the old one untouched) */
static void *grow(void *ptr, size_t *cap, size_t need, size_t elem)
{
	return array__grow(&ptr, cap, need, elem) ? NULL : ptr;
}

static uint64_t read_unaligned(const uint8_t *p, size_t n, bool big)
{
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * (big ? n - 1 - i : i));
	return v;
}

/*
 * Decode one encoded pointer at *p (not past end) with encoding enc; the
 * application (pcrel) is applied for pointers, not for lengths (enc & 0x0f).
 * Returns 0, -EINVAL when it runs past end, -ENOTSUP for encodings not
 * handled (textrel, datarel, funcrel, aligned, indirect).
 */
static int read_encoded(struct builder *b, const uint8_t **p, const uint8_t *end, unsigned int enc,
			uint64_t *v)
{
	bool big = b->ident[EI_DATA] == ELFDATA2MSB;
	const uint8_t *at = *p;
	size_t n = 0;
	uint64_t x;
	bool sign = false;

	switch (enc & 0x0f) {
	case EH_PE_absptr:
		n = 8;
		break;
	case EH_PE_udata2:
		n = 2;
		break;
	case EH_PE_sdata2:
		n = 2;
		sign = true;
		break;
	case EH_PE_udata4:
		n = 4;
		break;
	case EH_PE_sdata4:
		n = 4;
		sign = true;
		break;
	case EH_PE_udata8:
	case EH_PE_sdata8:
		n = 8;
		break;
	case EH_PE_uleb128:
		if (!leb128_read(p, end, false, &x))
			return -EINVAL;
		break;
	case EH_PE_sleb128:
		if (!leb128_read(p, end, true, &x))
			return -EINVAL;
		break;
	default:
		return -ENOTSUP;
	}
	if (n) {
		if ((size_t)(end - *p) < n)
			return -EINVAL;
		x = read_unaligned(*p, n, big);
		if (sign && n < 8 && (x >> (8 * n - 1)) & 1)
			x |= ~0ull << (8 * n);
		*p += n;
	}
	switch (enc & 0x70) {
	case 0:
		break;
	case EH_PE_pcrel:
		x += b->sh_addr + (uint64_t)(at - (const uint8_t *)b->data->d_buf);
		break;
	default:
		return -ENOTSUP;
	}
	*v = x;
	return 0;
}

/* The FDE pointer encoding from a CIE's augmentation (LSB 5.0, "The CIE") */
static unsigned int cie_fde_encoding(struct builder *b, const Dwarf_CIE *cie, bool *signal)
{
	const char *a = cie->augmentation;
	const uint8_t *p = cie->augmentation_data;
	const uint8_t *end = p ? p + cie->augmentation_data_size : NULL;
	unsigned int enc = EH_PE_absptr;
	uint64_t skip;

	*signal = false;
	if (!a || !*a)
		return EH_PE_absptr;
	if (*a != 'z' || !p)
		return EH_PE_UNSUPPORTED; /* "eh" and other pre-'z' forms */
	for (a++; *a; a++) {
		switch (*a) {
		case 'L':
			if (p >= end)
				return EH_PE_UNSUPPORTED;
			p++;
			break;
		case 'R':
			if (p >= end)
				return EH_PE_UNSUPPORTED;
			enc = *p++;
			break;
		case 'P': {
			unsigned int penc;

			if (p >= end)
				return EH_PE_UNSUPPORTED;
			penc = *p++ & ~EH_PE_indirect;
			if (read_encoded(b, &p, end, penc & 0x0f, &skip))
				return EH_PE_UNSUPPORTED;
			break;
		}
		case 'S':
			*signal = true;
			break;
		case 'B': /* aarch64 B-key, 'G' MTE: no data */
		case 'G':
			break;
		default:
			/* an augmentation not understood: its FDEs may mean anything */
			return EH_PE_UNSUPPORTED;
		}
	}
	if (enc == EH_PE_omit || (enc & EH_PE_indirect))
		return EH_PE_UNSUPPORTED;
	return enc;
}

/*
 * Check call frame instructions before libdw runs them (DWARF 5 section
 * 6.4.2, table 7.29, and the GNU opcodes libdw knows): libdw grows its
 * register array to the largest register number an instruction names (up to
 * 2^28 entries, copied for every row and every DW_CFA_remember_state), so a
 * 1 KB .eh_frame naming register 200 000 000 took 1.5 GB and 9 minutes. Only
 * register numbers up to UNWIND_MAX_DWREG (x86-64 uses 0-130) and
 * DW_CFA_remember_state nested up to UNWIND_MAX_NESTING pass. enc: the FDE
 * pointer encoding, for DW_CFA_set_loc. Returns NULL or what is wrong.
 */
#define UNWIND_MAX_DWREG 255
#define UNWIND_MAX_NESTING 64
static const char *check_insns(struct builder *b, const uint8_t *p, const uint8_t *end,
			       unsigned int enc)
{
	unsigned int depth = 0;
	uint64_t reg, v;

	while (p < end) {
		uint8_t op = *p++;

		switch (op & 0xc0) {
		case DW_CFA_advance_loc:
			continue;
		case DW_CFA_offset:
			if (!leb128_read(&p, end, false, &v))
				return "truncated instruction";
			continue;
		case DW_CFA_restore:
			continue;
		}
		reg = 0;
		switch (op) {
		case DW_CFA_nop:
		case DW_CFA_GNU_window_save:
			break;
		case DW_CFA_set_loc:
			if (read_encoded(b, &p, end, enc, &v))
				return "bad DW_CFA_set_loc";
			break;
		case DW_CFA_advance_loc1:
		case DW_CFA_advance_loc2:
		case DW_CFA_advance_loc4:
		case DW_CFA_MIPS_advance_loc8: {
			size_t n = op == DW_CFA_advance_loc1 ? 1 :
				   op == DW_CFA_advance_loc2 ? 2 :
				   op == DW_CFA_advance_loc4 ? 4 :
							       8;

			if ((size_t)(end - p) < n)
				return "truncated instruction";
			p += n;
			break;
		}
		case DW_CFA_def_cfa_offset:
		case DW_CFA_GNU_args_size:
		case DW_CFA_def_cfa_offset_sf:
			if (!leb128_read(&p, end, op == DW_CFA_def_cfa_offset_sf, &v))
				return "truncated instruction";
			break;
		case DW_CFA_restore_extended:
		case DW_CFA_undefined:
		case DW_CFA_same_value:
		case DW_CFA_def_cfa_register:
			if (!leb128_read(&p, end, false, &reg))
				return "truncated instruction";
			break;
		case DW_CFA_offset_extended:
		case DW_CFA_register:
		case DW_CFA_def_cfa:
		case DW_CFA_offset_extended_sf:
		case DW_CFA_def_cfa_sf:
		case DW_CFA_val_offset:
		case DW_CFA_val_offset_sf:
		case DW_CFA_GNU_negative_offset_extended:
			if (!leb128_read(&p, end, false, &reg) ||
			    !leb128_read(&p, end,
				      op == DW_CFA_offset_extended_sf || op == DW_CFA_def_cfa_sf ||
					      op == DW_CFA_val_offset_sf,
				      &v))
				return "truncated instruction";
			break;
		case DW_CFA_expression:
		case DW_CFA_val_expression:
			if (!leb128_read(&p, end, false, &reg))
				return "truncated instruction";
			/* fall through */
		case DW_CFA_def_cfa_expression:
			if (!leb128_read(&p, end, false, &v) || v > (uint64_t)(end - p))
				return "truncated expression";
			p += v;
			break;
		case DW_CFA_remember_state:
			if (++depth > UNWIND_MAX_NESTING)
				return "DW_CFA_remember_state nested too deep";
			break;
		case DW_CFA_restore_state:
			if (depth)
				depth--;
			break;
		default:
			return "unknown call frame instruction";
		}
		if (reg > UNWIND_MAX_DWREG)
			return "register number out of range";
	}
	return NULL;
}

static const struct cie_info *find_cie(struct builder *b, Dwarf_Off off)
{
	size_t lo = 0, hi = b->nr_cies;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (b->cies[mid].off == off)
			return &b->cies[mid];
		if (b->cies[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Walk the section with dwarf_next_cfi: CIEs first (pass 0), then FDEs (pass 1) */
static int collect_entries(struct builder *b)
{
	int pass;

	for (pass = 0; pass < 2; pass++) {
		Dwarf_Off off = 0, next;
		Dwarf_CFI_Entry e;
		int r;

		while (off < b->data->d_size) {
			r = dwarf_next_cfi(b->ident, b->data, b->eh, off, &next, &e);
			if (r == 1)
				break;
			if (r < 0) {
				pr_warn("unwind: '%s': %s at 0x%llx: %s\n", b->name, b->sec,
					(unsigned long long)off, dwarf_errmsg(-1));
				return -EINVAL;
			}
			if (next <= off || next > b->data->d_size) {
				pr_warn("unwind: '%s': %s at 0x%llx: entry length runs past the section\n",
					b->name, b->sec, (unsigned long long)off);
				return -EINVAL;
			}
			if (dwarf_cfi_cie_p(&e)) {
				struct cie_info *c;

				if (pass)
					goto next;
				b->cies = grow(b->cies, &b->cap_cies, b->nr_cies + 1,
					       sizeof(*b->cies));
				if (!b->cies)
					return -ENOMEM;
				c = &b->cies[b->nr_cies++];
				c->off = off;
				c->enc = cie_fde_encoding(b, &e.cie, &c->signal);
				c->aug_z = e.cie.augmentation && e.cie.augmentation[0] == 'z';
				c->bad = c->enc != EH_PE_UNSUPPORTED &&
					 check_insns(b, e.cie.initial_instructions,
						     e.cie.initial_instructions_end, c->enc);
				c->caf = e.cie.code_alignment_factor;
				c->daf = e.cie.data_alignment_factor;
				c->fast = !c->bad && !unwind_table_libdw_only &&
					  e.cie.return_address_register == DWREG_RA &&
					  !fast_rows_cie(e.cie.initial_instructions,
							 e.cie.initial_instructions_end, c->daf,
							 &c->init);
			} else {
				const struct cie_info *c;
				const uint8_t *p = e.fde.start;
				struct fde_info *f;
				uint64_t start, range;
				int err;

				if (!pass)
					goto next;
				c = find_cie(b, e.fde.CIE_pointer);
				if (!c) {
					pr_warn("unwind: '%s': %s at 0x%llx: FDE's CIE pointer 0x%llx is no CIE\n",
						b->name, b->sec, (unsigned long long)off,
						(unsigned long long)e.fde.CIE_pointer);
					return -EINVAL;
				}
				if (c->enc == EH_PE_UNSUPPORTED) {
					if (!b->skipped_enc++)
						b->first_enc = off;
					goto next;
				}
				err = read_encoded(b, &p, e.fde.end, c->enc, &start);
				if (!err)
					err = read_encoded(b, &p, e.fde.end, c->enc & 0x0f, &range);
				if (err == -ENOTSUP) {
					if (!b->skipped_enc++)
						b->first_enc = off;
					goto next;
				}
				if (err) {
					pr_warn("unwind: '%s': %s at 0x%llx: FDE truncated\n",
						b->name, b->sec, (unsigned long long)off);
					return -EINVAL;
				}
				if (!range)
					goto next;
				if (start + range < start) {
					pr_warn("unwind: '%s': %s at 0x%llx: FDE range 0x%llx+0x%llx overflows\n",
						b->name, b->sec, (unsigned long long)off,
						(unsigned long long)start,
						(unsigned long long)range);
					return -EINVAL;
				}
				b->fdes = grow(b->fdes, &b->cap_fdes, b->nr_fdes + 1,
					       sizeof(*b->fdes));
				if (!b->fdes)
					return -ENOMEM;
				f = &b->fdes[b->nr_fdes++];
				memset(f, 0, sizeof(*f));
				f->start = start;
				f->end = start + range;
				f->off = off;
				f->len = next - off;
				f->signal = c->signal;
				f->bad = c->bad ? "its CIE's instructions not accepted" : NULL;
				/* then the augmentation data ('z': its length first), then instructions */
				if (!f->bad && c->aug_z) {
					uint64_t aug_len;

					if (!leb128_read(&p, e.fde.end, false, &aug_len) ||
					    aug_len > (uint64_t)(e.fde.end - p))
						f->bad = "truncated augmentation data";
					else
						p += aug_len;
				}
				if (!f->bad)
					f->bad = check_insns(b, p, e.fde.end, c->enc);
				f->cie = c;
				f->insns = p;
				f->insns_end = e.fde.end;
			}
next:
			off = next;
		}
	}
	return 0;
}

static int fde_cmp(const void *a, const void *b)
{
	const struct fde_info *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

static bool op_cfa_plus(const Dwarf_Op *ops, size_t nops, int64_t *off)
{
	if (nops == 1 && ops[0].atom == DW_OP_call_frame_cfa) {
		*off = 0;
		return true;
	}
	if (nops == 2 && ops[0].atom == DW_OP_call_frame_cfa && ops[1].atom == DW_OP_plus_uconst) {
		*off = (int64_t)ops[1].number;
		return true;
	}
	return false;
}

/*
 * The standard PLT CFA expression (binutils elf_x86_64_eh_frame_plt):
 *   DW_OP_breg7 8; DW_OP_breg16 0; DW_OP_lit15; DW_OP_and; DW_OP_lit11 (10 for
 *   IBT and non-lazy PLTs); DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus
 * Returns the threshold, or 0 when ops are anything else.
 */
static int plt_threshold(const Dwarf_Op *ops, size_t nops, unsigned int *off)
{
	static const uint8_t pat[] = { DW_OP_breg7, DW_OP_breg16, DW_OP_lit15, DW_OP_and, 0,
				       DW_OP_ge,    DW_OP_lit3,	  DW_OP_shl,   DW_OP_plus };
	size_t i;

	if (nops != sizeof(pat))
		return 0;
	for (i = 0; i < nops; i++)
		if (pat[i] && ops[i].atom != pat[i])
			return 0;
	if ((int64_t)ops[0].number < 0 || ops[0].number > BPFPROF_UNWIND_CFA_OFF_MAX ||
	    ops[1].number != 0)
		return 0;
	if (ops[4].atom != DW_OP_lit10 && ops[4].atom != DW_OP_lit11)
		return 0;
	*off = ops[0].number;
	return ops[4].atom - DW_OP_lit0;
}

/*
 * The rule word of a CFA row. A slot below an rsp-based CFA's rsp is an
 * epilogue's: the function popped rbp, and CFI (GCC's after `pop %rbp`,
 * node's OpenSSL) still says "saved at CFA - 16", below rsp. rbp holds that
 * value already: unchanged, so that neither walk reads below rsp (the
 * stack copy of a sample starts at rsp; a signal may overwrite it live).
 */
static uint32_t cfa_rule(bool cfa_rbp, int64_t off, int64_t slot)
{
	if (!cfa_rbp && off + slot * 8 < 0)
		slot = 0;
	return BPFPROF_UNWIND_RULE(BPFPROF_UNWIND_CFA, cfa_rbp, off, slot);
}

/* One libdw frame state -> rule word (see the "Unwind tables" block of bpfprof_abi.h) */
static uint32_t frame_rule(Dwarf_Frame *f, bool signal)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;
	int64_t off;
	int64_t slot = 0;
	unsigned int cfa_reg, cfa_off;
	int threshold = 0;

	if (signal)
		return BPFPROF_UNWIND_SIGNAL;

	/* the return address: undefined is the end of the stack, else at CFA - 8 */
	if (dwarf_frame_register(f, DWREG_RA, mem, &ops, &nops))
		return BPFPROF_UNWIND_NONE;
	if (nops == 0 && ops)
		return BPFPROF_UNWIND_END;
	if (!op_cfa_plus(ops, nops, &off) || off != -8)
		return BPFPROF_UNWIND_NONE;

	/* rsp must be the CFA itself (val_offset(0), the ABI's initial rule) */
	if (dwarf_frame_register(f, DWREG_RSP, mem, &ops, &nops) || nops != 2 ||
	    ops[0].atom != DW_OP_call_frame_cfa || ops[1].atom != DW_OP_stack_value)
		return BPFPROF_UNWIND_NONE;

	if (dwarf_frame_cfa(f, &ops, &nops) || nops == 0)
		return BPFPROF_UNWIND_NONE;
	if (nops == 1 && ops[0].atom == DW_OP_bregx) {
		cfa_reg = ops[0].number;
		off = (int64_t)ops[0].number2;
	} else if (nops == 1 && ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
		cfa_reg = ops[0].atom - DW_OP_breg0;
		off = (int64_t)ops[0].number;
	} else {
		threshold = plt_threshold(ops, nops, &cfa_off);
		if (!threshold)
			return BPFPROF_UNWIND_NONE;
		cfa_reg = DWREG_RSP;
		off = cfa_off;
	}
	if ((cfa_reg != DWREG_RSP && cfa_reg != DWREG_RBP) || off < 0 ||
	    off > BPFPROF_UNWIND_CFA_OFF_MAX)
		return BPFPROF_UNWIND_NONE;

	/* rbp: unchanged (same value, undefined) or saved at CFA + 8 * slot */
	if (dwarf_frame_register(f, DWREG_RBP, mem, &ops, &nops))
		return BPFPROF_UNWIND_NONE;
	if (nops) {
		int64_t rbp_off;

		if (!op_cfa_plus(ops, nops, &rbp_off) || rbp_off == 0 || rbp_off % 8)
			return BPFPROF_UNWIND_NONE;
		slot = rbp_off / 8;
		if (slot < BPFPROF_UNWIND_RBP_SLOT_MIN || slot > BPFPROF_UNWIND_RBP_SLOT_MAX)
			return BPFPROF_UNWIND_NONE;
	}
	if (threshold) {
		if (slot)
			return BPFPROF_UNWIND_NONE;
		return BPFPROF_UNWIND_RULE(BPFPROF_UNWIND_PLT, 0, cfa_off, threshold);
	}
	return cfa_rule(cfa_reg == DWREG_RBP, off, slot);
}

/* Append a row, merged into the last one when the rule is the same */
static int push_row(struct builder *b, uint64_t pc, uint32_t rule)
{
	struct unwind_table *t = b->t;

	if (t->nr_rows && t->rows[t->nr_rows - 1].rule == rule)
		return 0;
	if (t->nr_rows && t->rows[t->nr_rows - 1].pc == pc) {
		/* an empty range: the later row wins */
		t->rows[t->nr_rows - 1].rule = rule;
		if (t->nr_rows > 1 && t->rows[t->nr_rows - 2].rule == rule)
			t->nr_rows--;
		return 0;
	}
	if (t->nr_rows >= UNWIND_TABLE_MAX_ROWS)
		return -E2BIG;
	t->rows = grow(t->rows, &b->cap_rows, t->nr_rows + 1, sizeof(*t->rows));
	if (!t->rows)
		return -ENOMEM;
	t->rows[t->nr_rows].pc = pc;
	t->rows[t->nr_rows].rule = rule;
	t->nr_rows++;
	return 0;
}

/* The rule word of a row of the fast generator: frame_rule's decisions, from its state */
static uint32_t fast_rule(const struct fast_state *s, bool signal)
{
	int64_t slot = 0;

	if (signal)
		return BPFPROF_UNWIND_SIGNAL;
	if (s->ra.kind == FAST_UNDEF)
		return BPFPROF_UNWIND_END;
	if (s->ra.kind != FAST_OFFSET || s->ra.off != -8)
		return BPFPROF_UNWIND_NONE;
	if (s->rsp.kind != FAST_VAL_OFFSET || s->rsp.off != 0)
		return BPFPROF_UNWIND_NONE;
	if (s->cfa_kind == 2 || s->cfa_off < 0 || s->cfa_off > BPFPROF_UNWIND_CFA_OFF_MAX ||
	    (s->cfa_kind == 0 && s->cfa_reg != DWREG_RSP && s->cfa_reg != DWREG_RBP))
		return BPFPROF_UNWIND_NONE;
	if (s->rbp.kind == FAST_OFFSET) {
		if (!s->rbp.off || s->rbp.off % 8)
			return BPFPROF_UNWIND_NONE;
		slot = s->rbp.off / 8;
		if (slot < BPFPROF_UNWIND_RBP_SLOT_MIN || slot > BPFPROF_UNWIND_RBP_SLOT_MAX)
			return BPFPROF_UNWIND_NONE;
	} else if (s->rbp.kind != FAST_SAME && s->rbp.kind != FAST_UNDEF) {
		return BPFPROF_UNWIND_NONE;
	}
	if (s->cfa_kind == 1)
		return slot ? BPFPROF_UNWIND_NONE :
			      BPFPROF_UNWIND_RULE(BPFPROF_UNWIND_PLT, 0, s->cfa_off,
						  s->plt_threshold);
	return cfa_rule(s->cfa_reg == DWREG_RBP, s->cfa_off, slot);
}

struct fast_ctx {
	struct builder *b;
	bool signal;
	uint32_t nr_none;
};

static int push_row(struct builder *b, uint64_t pc, uint32_t rule);

static int fast_row(void *ctx, uint64_t loc, const struct fast_state *s)
{
	struct fast_ctx *c = ctx;
	uint32_t rule = fast_rule(s, c->signal);

	if (rule == BPFPROF_UNWIND_NONE)
		c->nr_none++;
	return push_row(c->b, loc - c->b->t->base, rule);
}

/*
 * The rows of one FDE by the fast generator. Returns 0, 1 when it gave up
 * (the table as it was before: libdw's turn), or -errno.
 */
static int fde_rows_fast(struct builder *b, const struct fde_info *fde)
{
	struct unwind_table *t = b->t;
	struct fast_ctx c = { .b = b, .signal = fde->signal };
	uint32_t first = t->nr_rows;
	struct bpfprof_unwind_row before = first ? t->rows[first - 1] : (struct bpfprof_unwind_row){ 0 };
	int r;

	r = fast_rows_fde(fde->insns, fde->insns_end, fde->cie->caf, fde->cie->daf,
			  &fde->cie->init, fde->start, fde->end, fast_row, &c);
	if (r == 1) {
		/* push_row may have merged into the row before this FDE's: put it back */
		t->nr_rows = first;
		if (first)
			t->rows[first - 1] = before;
		return 1;
	}
	if (!r)
		t->nr_none += c.nr_none;
	return r;
}

/*
 * The rows of one FDE, appended to the table. An FDE whose program libdw
 * rejects (unknown opcode, bad expression, a frame state from another FDE)
 * or that runs past the work bound gets one NONE row: its rows found so far
 * are dropped. Returns 0, -ENOMEM, -E2BIG, or -EOVERFLOW (file work bound).
 */
static int fde_rows(struct builder *b, const struct fde_info *fde)
{
	struct unwind_table *t = b->t;
	uint32_t first = t->nr_rows, nr_none = 0;
	uint64_t addr = fde->start, work = 0;
	const char *why = fde->bad;
	int err;

	if (!why && fde->cie->fast) {
		err = fde_rows_fast(b, fde);
		if (err <= 0)
			return err;
		b->nr_fast_gave_up++;
	}
	while (!why && addr < fde->end) {
		Dwarf_Frame *f = NULL;
		Dwarf_Addr s, e;
		bool signal = false;
		uint32_t rule;

		work += fde->len;
		b->work += fde->len;
		if (b->work > b->max_work)
			return -EOVERFLOW;
		if (work > UNWIND_FDE_MAX_WORK) {
			why = "too many rows for its length";
			break;
		}
		if (dwarf_cfi_addrframe(b->cfi, addr, &f)) {
			why = dwarf_errmsg(-1);
			break;
		}
		if (dwarf_frame_info(f, &s, &e, &signal) < 0 || s > addr || e <= addr ||
		    s < fde->start || e > fde->end) {
			free(f);
			why = "libdw's frame is not this FDE's";
			break;
		}
		rule = frame_rule(f, signal || fde->signal);
		free(f);
		if (rule == BPFPROF_UNWIND_NONE)
			nr_none++;
		err = push_row(b, addr - t->base, rule);
		if (err)
			return err;
		addr = e;
	}
	if (why) {
		if (!b->skipped_bad++) {
			b->first_bad = fde->off;
			b->first_bad_msg = why;
		}
		/* drop what this FDE added; the row before it stays as it was */
		t->nr_rows = first;
		nr_none = 1;
		err = push_row(b, fde->start - t->base, BPFPROF_UNWIND_NONE);
		if (err)
			return err;
	}
	t->nr_none += nr_none;
	return 0;
}

/*
 * The length of the prologue of glibc's crti.o _init/_fini (sysdeps/x86_64/
 * crti.S, crtn.S): [endbr64] sub $8,%rsp ... add $8,%rsp; ret, the body the
 * .init contributions of other objects (OpenSSL's OPENSSL_cpuid_setup call in
 * node). crti.S has no CFI, so a sample under a constructor called from
 * _init ended there. 0: not that shape.
 */
static unsigned int crt_prologue(const uint8_t *code, size_t size)
{
	static const uint8_t endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
	static const uint8_t sub8[4] = { 0x48, 0x83, 0xec, 0x08 };
	static const uint8_t add8_ret[5] = { 0x48, 0x83, 0xc4, 0x08, 0xc3 };
	unsigned int p = 0;

	if (size >= 4 && !memcmp(code, endbr64, 4))
		p = 4;
	if (size < p + 4 + 5 || memcmp(code + p, sub8, 4) ||
	    memcmp(code + size - 5, add8_ret, 5))
		return 0;
	return p + 4;
}

/*
 * Entries for .init and .fini where no FDE covers them and their code is
 * crti.o's (crt_prologue). Returns 0 or -ENOMEM.
 */
static int add_crt_entries(struct builder *b, Elf *elf)
{
	static const char *const names[] = { ".init", ".fini" };
	size_t shstrndx, i;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		Elf_Data *d;
		unsigned int p;
		uint64_t lo, hi;
		bool named = false, covered = false;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || sh.sh_size > 4096)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		for (i = 0; name && i < sizeof(names) / sizeof(names[0]); i++)
			named |= !strcmp(name, names[i]);
		if (!named)
			continue;
		lo = sh.sh_addr;
		hi = sh.sh_addr + sh.sh_size;
		for (i = 0; i < b->nr_fdes && !covered; i++) {
			covered = b->fdes[i].start < sh.sh_addr + sh.sh_size &&
				  b->fdes[i].end > sh.sh_addr;
			lo = b->fdes[i].start < lo ? b->fdes[i].start : lo;
			hi = b->fdes[i].end > hi ? b->fdes[i].end : hi;
		}
		/* not where a table of this file can reach (hostile headers): left alone */
		if (sh.sh_addr + sh.sh_size < sh.sh_addr || hi - lo > UINT32_MAX)
			continue;
		d = covered ? NULL : elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size != sh.sh_size ||
		    !(p = crt_prologue(d->d_buf, d->d_size)))
			continue;
		b->fdes = grow(b->fdes, &b->cap_fdes, b->nr_fdes + 1, sizeof(*b->fdes));
		if (!b->fdes)
			return -ENOMEM;
		memset(&b->fdes[b->nr_fdes], 0, sizeof(b->fdes[0]));
		b->fdes[b->nr_fdes].start = sh.sh_addr;
		b->fdes[b->nr_fdes].end = sh.sh_addr + sh.sh_size;
		b->fdes[b->nr_fdes].off = (Dwarf_Off)-1;
		b->fdes[b->nr_fdes].crt_prologue = (uint8_t)p;
		b->nr_fdes++;
		b->nr_crt++;
	}
	return 0;
}

/* The rows of a crti.o _init/_fini: CFA rsp+8, rsp+16 after the sub, rsp+8 at the ret */
static int crt_rows(struct builder *b, const struct fde_info *fde)
{
	uint64_t base = b->t->base;
	int err;

	err = push_row(b, fde->start - base, cfa_rule(false, 8, 0));
	if (!err)
		err = push_row(b, fde->start + fde->crt_prologue - base, cfa_rule(false, 16, 0));
	if (!err)
		err = push_row(b, fde->end - 1 - base, cfa_rule(false, 8, 0));
	return err;
}

static int build_rows(struct builder *b)
{
	struct unwind_table *t = b->t;
	size_t i, n = 0;
	int err;

	if (!b->nr_fdes)
		return 0;
	qsort(b->fdes, b->nr_fdes, sizeof(*b->fdes), fde_cmp);
	/* overlapping FDEs (bad input): the earlier start wins, the other is dropped */
	for (i = 0; i < b->nr_fdes; i++) {
		if (n && b->fdes[i].start < b->fdes[n - 1].end) {
			if (!b->skipped_overlap++)
				b->first_overlap = b->fdes[i].off;
			continue;
		}
		b->fdes[n++] = b->fdes[i];
	}
	b->nr_fdes = n;
	t->nr_fdes = n - b->nr_crt;
	if (!n)
		return 0;
	t->base = b->fdes[0].start;
	t->end = b->fdes[n - 1].end;
	if (t->end - t->base > UINT32_MAX) {
		pr_warn("unwind: '%s': %s: FDEs span 0x%llx..0x%llx, more than 4 GiB\n", b->name,
			b->sec, (unsigned long long)t->base, (unsigned long long)t->end);
		return -ENOTSUP;
	}
	for (i = 0; i < n; i++) {
		err = b->fdes[i].crt_prologue ? crt_rows(b, &b->fdes[i]) : fde_rows(b, &b->fdes[i]);
		if (err)
			return err;
		if (i + 1 == n || b->fdes[i + 1].start != b->fdes[i].end) {
			err = push_row(b, b->fdes[i].end - t->base, BPFPROF_UNWIND_NONE);
			if (err)
				return err;
		}
	}
	return 0;
}

/*
 * The CFI section named want, picked as libdw picks it (dwarf_getcfi_elf,
 * dwarf_begin_elf's check_section), so that the FDEs walked here are the ones
 * dwarf_cfi_addrframe answers for: the first of that name, of any type (the
 * x86-64 psABI lets .eh_frame be SHT_X86_64_UNWIND, as LLVM's assembler and
 * GNU gold make it), except SHT_NOBITS (a separate debug file's .eh_frame)
 * and, for .debug_frame, a section in a group. NULL when it is empty.
 */
static Elf_Scn *find_section(Elf *elf, const char *want, GElf_Shdr *sh)
{
	bool eh = !strcmp(want, ".eh_frame");
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	const char *name;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, sh) || sh->sh_type == SHT_NOBITS ||
		    (!eh && (sh->sh_flags & SHF_GROUP)))
			continue;
		name = elf_strptr(elf, shstrndx, sh->sh_name);
		if (name && !strcmp(name, want))
			return sh->sh_size ? scn : NULL;
	}
	return NULL;
}

/* DW_EH_PE_datarel: relative to .eh_frame_hdr's start (LSB 5.0, ".eh_frame_hdr") */
#define EH_PE_datarel 0x30

/*
 * .eh_frame of a file without section headers, found as the run-time
 * unwinder finds it (dl_iterate_phdr): PT_GNU_EH_FRAME is .eh_frame_hdr,
 * whose eh_frame_ptr is .eh_frame's address; libdw's dwarf_getcfi_elf falls
 * back to the same. .eh_frame's size is in no header: the data runs to the
 * end of the last FDE the header's search table lists (else to the end of
 * the PT_LOAD), and the walk stops at the zero terminator before that.
 * Sets b->data and b->sh_addr; -ENOENT when there is no usable header.
 */
static int eh_frame_from_hdr(struct builder *b, Elf *elf)
{
	const uint8_t *h, *end, *hp;
	uint64_t ptr, count, last = 0, start, loc, fde;
	unsigned int ptr_enc, count_enc, table_enc;
	Elf_Data *hdr = NULL;
	GElf_Phdr ph, hph;
	size_t n, i;

	if (elf_getphdrnum(elf, &n))
		return -ENOENT;
	for (i = 0; i < n && !hdr; i++)
		if (gelf_getphdr(elf, i, &hph) && hph.p_type == PT_GNU_EH_FRAME)
			hdr = elf_getdata_rawchunk(elf, hph.p_offset, hph.p_filesz, ELF_T_BYTE);
	if (!hdr || !hdr->d_buf || hdr->d_size < 4 || ((uint8_t *)hdr->d_buf)[0] != 1)
		return -ENOENT;
	h = hdr->d_buf;
	end = h + hdr->d_size;
	ptr_enc = h[1];
	count_enc = h[2];
	table_enc = h[3];
	h += 4;
	/* read_encoded's pcrel is relative to b->data at b->sh_addr: the header, for now */
	b->data = hdr;
	b->sh_addr = hph.p_vaddr;
	if (read_encoded(b, &h, end, ptr_enc, &ptr))
		return -ENOENT;
	/* the search table: (initial location, FDE address) pairs, datarel sdata4 from ld and gold */
	if (count_enc != EH_PE_omit && table_enc == (EH_PE_datarel | EH_PE_sdata4) &&
	    !read_encoded(b, &h, end, count_enc, &count) && count <= (uint64_t)(end - h) / 8) {
		for (hp = h + 4; count--; hp += 8) {
			fde = hph.p_vaddr + (int64_t)(int32_t)read_unaligned(hp, 4, false);
			if (fde > last)
				last = fde;
		}
	}
	b->data = NULL;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD || ptr < ph.p_vaddr ||
		    ptr - ph.p_vaddr >= ph.p_filesz)
			continue;
		start = ph.p_offset + (ptr - ph.p_vaddr);
		loc = ph.p_filesz - (ptr - ph.p_vaddr);
		/* up to the last FDE's end: its length word, and the length (no 64-bit FDEs here) */
		if (last > ptr && loc >= 4 && last - ptr <= loc - 4) {
			Elf_Data *l =
				elf_getdata_rawchunk(elf, start + (last - ptr), 4, ELF_T_BYTE);
			uint64_t len = l && l->d_buf ? read_unaligned(l->d_buf, 4, false) : 0;

			if (len && len != 0xffffffff && len <= loc - 4 - (last - ptr))
				loc = last - ptr + 4 + len;
		}
		b->data = elf_getdata_rawchunk(elf, start, loc, ELF_T_BYTE);
		b->sh_addr = ptr;
		break;
	}
	return b->data && b->data->d_buf && b->data->d_size ? 0 : -ENOENT;
}

/*
 * Go's roots, whose return address is no caller's (runtime/asm_amd64.s
 * TOPFRAME): goexit tops every goroutine, mstart and rt0_go the system
 * stacks. A frame-pointer step there ends the walk (the goroutine's first
 * frame saved rbp 0), as it does in a Go binary with CFI (.debug_frame),
 * whose goexit has an ordinary row: not END rows, so that the summary counts
 * both kinds of Go stacks alike (unwinder__root_walks, by name)
 */
static bool go_topframe(const char *name)
{
	static const char *const top[] = { "runtime.goexit", "runtime.mstart", "runtime.rt0_go" };

	for (size_t i = 0; name && i < sizeof(top) / sizeof(top[0]); i++)
		if (!strcmp(name, top[i]))
			return true;
	return false;
}

struct go_rows {
	struct builder *b;
	bool top; /* the function is a root: frame-pointer steps */
};

/*
 * A run of a Go function's SP delta: Go's amd64 frames keep the return
 * address at SP + delta (CFA = SP + delta + 8) and, once the frame is set
 * up (delta > 0), the caller's rbp just below it (SUBQ $n, SP; MOVQ BP,
 * n-8(SP)): [CFA - 16]. A frame too large for the rule is a frame-pointer step.
 */
static int go_run(void *ctx, uint64_t start, uint64_t end, int32_t delta)
{
	struct go_rows *g = ctx;
	uint32_t rule;

	if (g->top)
		rule = BPFPROF_UNWIND_NONE;
	else if ((int64_t)delta + 8 > BPFPROF_UNWIND_CFA_OFF_MAX)
		rule = BPFPROF_UNWIND_NONE;
	else
		rule = cfa_rule(false, (int64_t)delta + 8, delta > 0 ? -2 : 0);
	if (end - g->b->t->base > UINT32_MAX)
		return -ENOTSUP;
	return push_row(g->b, start - g->b->t->base, rule);
}

/*
 * Rows of a Go binary without CFI (-ldflags="-s -w" drops .debug_frame, and
 * Go writes no .eh_frame) from its own function table's SP deltas
 * (sym_gopclntab.h): the frames frame pointers miss, a frameless leaf's
 * caller first. -ENOENT when there is no usable table.
 */
static int build_go(Elf *elf, const char *name, struct unwind_table **out)
{
	struct builder b = { .name = name };
	struct go_pclntab *g = NULL;
	struct go_func_span f, last;
	GElf_Shdr sh, text_sh;
	Elf_Scn *scn, *text;
	Elf_Data *d;
	size_t i, n;
	int err;

	scn = find_section(elf, ".gopclntab", &sh);
	if (!scn)
		scn = find_section(elf, ".data.rel.ro.gopclntab", &sh);
	d = scn ? elf_getdata(scn, NULL) : NULL;
	text = find_section(elf, ".text", &text_sh);
	errno = 0;
	if (d && d->d_buf)
		g = go_pclntab__parse(d->d_buf, d->d_size, text ? text_sh.sh_addr : 0);
	if (!g) /* the symbolizer says why, once */
		return errno == ENOMEM ? -ENOMEM : -ENOENT;
	n = go_pclntab__count(g);
	err = -ENOENT;
	if (go_pclntab__func(g, 0, &f) || go_pclntab__func(g, n - 1, &last) || last.end <= f.entry)
		goto out;
	b.t = calloc(1, sizeof(*b.t));
	if (!b.t) {
		err = -ENOMEM;
		goto out;
	}
	b.t->base = f.entry;
	b.t->end = last.end;
	b.t->cfi_bytes = d->d_size;
	for (i = 0; i < n; i++) {
		struct go_rows gr = { .b = &b };

		if (go_pclntab__func(g, i, &f))
			continue;
		gr.top = go_topframe(f.name);
		/* a function without a usable table: frame pointers from its start */
		err = push_row(&b, f.entry - b.t->base, BPFPROF_UNWIND_NONE);
		if (!err) {
			err = go_pclntab__sp_runs(g, i, go_run, &gr);
			if (err == -ENOENT)
				err = push_row(&b, f.entry - b.t->base, BPFPROF_UNWIND_NONE);
		}
		if (err)
			goto out;
		b.t->nr_fdes++;
	}
	pr_debug("unwind: '%s': no CFI; %u rows from the Go function table (%u functions)\n", name,
		 b.t->nr_rows, b.t->nr_fdes);
	*out = b.t;
	b.t = NULL;
	err = 0;
out:
	if (err == -E2BIG || err == -ENOTSUP) {
		pr_warn("unwind: '%s': Go function table: more than %u rows or beyond 4 GiB, table dropped\n",
			name, UNWIND_TABLE_MAX_ROWS);
		err = -EINVAL;
	}
	unwind_table__free(b.t);
	go_pclntab__free(g);
	return err;
}

int unwind_table__build(Elf *elf, const char *name, struct unwind_table **out)
{
	struct builder b = { .name = name };
	Dwarf *dw = NULL;
	GElf_Ehdr eh;
	GElf_Shdr sh;
	Elf_Scn *scn;
	size_t shnum;
	char *ident;
	int err;

	*out = NULL;
	ident = elf_getident(elf, NULL);
	if (!ident || !gelf_getehdr(elf, &eh)) {
		pr_warn("unwind: '%s': bad ELF header: %s\n", name, elf_errmsg(-1));
		return -EINVAL;
	}
	if (ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64)
		return -ENOTSUP;
	memcpy(b.ident, ident, EI_NIDENT);

	scn = find_section(elf, ".eh_frame", &sh);
	if (scn) {
		b.eh = true;
		b.sec = ".eh_frame";
		b.cfi = dwarf_getcfi_elf(elf);
		/* the bytes libdw reads (elf_rawdata): no conversion whatever the type */
		b.data = elf_rawdata(scn, NULL);
		b.sh_addr = sh.sh_addr;
	} else if ((scn = find_section(elf, ".debug_frame", &sh))) {
		b.sec = ".debug_frame";
		dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
		b.cfi = dw ? dwarf_getcfi(dw) : NULL;
		/* libdw decompressed it in place; a section it did not see stays compressed */
		if (b.cfi && gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED) &&
		    elf_compress(scn, 0, 0) < 0)
			b.cfi = NULL;
		b.data = elf_getdata(scn, NULL);
		b.sh_addr = sh.sh_addr;
	} else if (!elf_getshdrnum(elf, &shnum) && !shnum && !eh_frame_from_hdr(&b, elf)) {
		b.eh = true;
		b.sec = ".eh_frame (from PT_GNU_EH_FRAME)";
		b.cfi = dwarf_getcfi_elf(elf);
	} else {
		return build_go(elf, name, out);
	}
	if (!b.cfi) {
		pr_warn("unwind: '%s': %s unreadable: %s\n", name, b.sec, dwarf_errmsg(-1));
		err = -EINVAL;
		goto out;
	}
	if (!b.data || !b.data->d_buf || !b.data->d_size) {
		pr_warn("unwind: '%s': %s unreadable: %s\n", name, b.sec, elf_errmsg(-1));
		err = -EINVAL;
		goto out;
	}

	b.t = calloc(1, sizeof(*b.t));
	if (!b.t) {
		err = -ENOMEM;
		goto out;
	}
	b.t->cfi_bytes = b.data->d_size;
	b.max_work = b.data->d_size * UNWIND_WORK_PER_BYTE;
	if (b.max_work < UNWIND_FILE_MIN_WORK)
		b.max_work = UNWIND_FILE_MIN_WORK;
	err = collect_entries(&b);
	if (!err && b.eh)
		err = add_crt_entries(&b, elf);
	if (!err)
		err = build_rows(&b);
	if (err == -E2BIG || err == -EOVERFLOW) {
		pr_warn("unwind: '%s': %s: more than %u rows or too much CFI work, table dropped\n",
			name, b.sec, UNWIND_TABLE_MAX_ROWS);
		err = -EINVAL;
	}
	if (err)
		goto out;
	if (b.skipped_enc)
		pr_warn("unwind: '%s': %s at 0x%llx: %zu FDEs with pointer encodings not handled, skipped\n",
			name, b.sec, (unsigned long long)b.first_enc, b.skipped_enc);
	if (b.skipped_overlap)
		pr_warn("unwind: '%s': %s at 0x%llx: %zu FDEs overlap an earlier one, skipped\n",
			name, b.sec, (unsigned long long)b.first_overlap, b.skipped_overlap);
	if (b.skipped_bad)
		pr_warn("unwind: '%s': %s at 0x%llx: %s; %zu FDEs without rows\n", name, b.sec,
			(unsigned long long)b.first_bad, b.first_bad_msg, b.skipped_bad);
	if (!b.t->nr_fdes) {
		err = -ENOENT;
		goto out;
	}
	/* give back the slack of the doubling */
	if (b.t->nr_rows < b.cap_rows) {
		struct bpfprof_unwind_row *r = realloc(b.t->rows, b.t->nr_rows * sizeof(*r));

		if (r)
			b.t->rows = r;
	}
	pr_debug("unwind: '%s': %s: %u FDEs (%zu by libdw), %u rows, %llu bytes of CFI run by libdw\n",
		 name, b.sec, b.t->nr_fdes, unwind_table_libdw_only ? (size_t)b.t->nr_fdes : b.nr_fast_gave_up,
		 b.t->nr_rows, (unsigned long long)b.work);
	*out = b.t;
	b.t = NULL;
out:
	unwind_table__free(b.t);
	free(b.cies);
	free(b.fdes);
	if (b.cfi && b.eh)
		dwarf_cfi_end(b.cfi);
	if (dw)
		dwarf_end(dw);
	return err;
}

int unwind_table__build_fd(int fd, const char *name, struct unwind_table **out)
{
	Elf *elf;
	int err;

	*out = NULL;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		pr_warn("unwind: '%s': not an ELF file: %s\n", name, elf_errmsg(-1));
		elf_end(elf);
		return -EINVAL;
	}
	err = unwind_table__build(elf, name, out);
	elf_end(elf);
	return err;
}

void unwind_table__free(struct unwind_table *t)
{
	if (!t)
		return;
	free(t->rows);
	free(t);
}

uint32_t unwind_table__lookup(const struct unwind_table *t, uint64_t vaddr)
{
	uint32_t lo = 0, hi, pc;

	if (!t || !t->nr_rows || vaddr < t->base || vaddr >= t->end)
		return BPFPROF_UNWIND_NONE;
	pc = vaddr - t->base;
	hi = t->nr_rows;
	/* the last row with row.pc <= pc */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (t->rows[mid].pc <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? t->rows[lo - 1].rule : BPFPROF_UNWIND_NONE;
}

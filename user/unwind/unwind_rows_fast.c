// SPDX-License-Identifier: MIT
/*
 * The fast row generator (user/unwind/unwind_rows_fast.h). Instructions have
 * been checked by unwind_table.c's check_insns (known opcodes, lengths in
 * bounds, register numbers and nesting bounded) before they get here; every
 * read is still bounds-checked.
 */
#include <dwarf.h>
#include <errno.h>
#include <string.h>
#include "leb128.h"
#include "unwind_rows_fast.h"

#define DWREG_RBP 6
#define DWREG_RSP 7
#define DWREG_RA 16
#define MAX_NESTING 64

#define GIVE_UP 1

static struct fast_reg *tracked(struct fast_state *s, uint64_t reg)
{
	switch (reg) {
	case DWREG_RBP:
		return &s->rbp;
	case DWREG_RSP:
		return &s->rsp;
	case DWREG_RA:
		return &s->ra;
	}
	return NULL;
}

static void set_reg(struct fast_state *s, uint64_t reg, uint8_t kind, int64_t off)
{
	struct fast_reg *r = tracked(s, reg);

	if (r) {
		r->kind = kind;
		r->off = off;
	}
}

/*
 * The PLT entries' CFA expression (binutils elf_x86_64_eh_frame_plt):
 * DW_OP_breg7 N; DW_OP_breg16 0; DW_OP_lit15; DW_OP_and; DW_OP_lit11 (or
 * 10); DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus. Returns the threshold
 * and *off = N, or 0.
 */
static unsigned int plt_expr(const uint8_t *p, const uint8_t *end, int64_t *off)
{
	static const uint8_t tail[] = { DW_OP_ge, DW_OP_lit3, DW_OP_shl, DW_OP_plus };
	uint64_t n, z;
	unsigned int thr;

	if (p >= end || *p++ != DW_OP_breg7 || !leb128_read(&p, end, true, &n))
		return 0;
	if (p >= end || *p++ != DW_OP_breg16 || !leb128_read(&p, end, true, &z) || z)
		return 0;
	if (end - p != 3 + (long)sizeof(tail) || p[0] != DW_OP_lit15 || p[1] != DW_OP_and ||
	    (p[2] != DW_OP_lit10 && p[2] != DW_OP_lit11) || memcmp(p + 3, tail, sizeof(tail)))
		return 0;
	thr = p[2] - DW_OP_lit0;
	*off = (int64_t)n;
	return thr;
}

/*
 * Run instructions [p, end) on *s. fde: rows are reported (advances allowed)
 * from *loc, up to fde_end; init: the state DW_CFA_restore goes back to.
 */
static int run(const uint8_t *p, const uint8_t *end, uint64_t caf, int64_t daf,
	       struct fast_state *s, const struct fast_state *init, bool fde, uint64_t *loc,
	       uint64_t fde_end, fast_row_fn row, void *ctx)
{
	struct fast_state stack[MAX_NESTING];
	unsigned int depth = 0;
	uint64_t reg, v, delta;
	int err;

	while (p < end) {
		uint8_t op = *p++;

		delta = UINT64_MAX;
		switch (op & 0xc0) {
		case DW_CFA_advance_loc:
			delta = op & 0x3f;
			break;
		case DW_CFA_offset:
			if (!leb128_read(&p, end, false, &v))
				return GIVE_UP;
			set_reg(s, op & 0x3f, FAST_OFFSET, (int64_t)v * daf);
			continue;
		case DW_CFA_restore:
			if (!fde)
				return GIVE_UP;
			if (tracked(s, op & 0x3f))
				*tracked(s, op & 0x3f) = *tracked((struct fast_state *)init, op & 0x3f);
			continue;
		}
		if (delta == UINT64_MAX) {
			switch (op) {
			case DW_CFA_nop:
				continue;
			case DW_CFA_advance_loc1:
			case DW_CFA_advance_loc2:
			case DW_CFA_advance_loc4: {
				size_t n = op == DW_CFA_advance_loc1 ? 1 : op == DW_CFA_advance_loc2 ? 2 : 4;

				if ((size_t)(end - p) < n)
					return GIVE_UP;
				delta = 0;
				for (size_t i = 0; i < n; i++)
					delta |= (uint64_t)p[i] << (8 * i);
				p += n;
				break;
			}
			case DW_CFA_offset_extended:
			case DW_CFA_offset_extended_sf:
			case DW_CFA_val_offset:
			case DW_CFA_val_offset_sf:
			case DW_CFA_GNU_negative_offset_extended: {
				bool sf = op == DW_CFA_offset_extended_sf || op == DW_CFA_val_offset_sf;
				int64_t off;

				if (!leb128_read(&p, end, false, &reg) || !leb128_read(&p, end, sf, &v))
					return GIVE_UP;
				off = (int64_t)v * daf;
				if (op == DW_CFA_GNU_negative_offset_extended)
					off = -off;
				set_reg(s, reg,
					op == DW_CFA_val_offset || op == DW_CFA_val_offset_sf ?
						FAST_VAL_OFFSET :
						FAST_OFFSET,
					off);
				continue;
			}
			case DW_CFA_restore_extended:
				if (!fde || !leb128_read(&p, end, false, &reg))
					return GIVE_UP;
				if (tracked(s, reg))
					*tracked(s, reg) = *tracked((struct fast_state *)init, reg);
				continue;
			case DW_CFA_undefined:
			case DW_CFA_same_value:
				if (!leb128_read(&p, end, false, &reg))
					return GIVE_UP;
				set_reg(s, reg, op == DW_CFA_undefined ? FAST_UNDEF : FAST_SAME, 0);
				continue;
			case DW_CFA_register:
				if (!leb128_read(&p, end, false, &reg) || !leb128_read(&p, end, false, &v))
					return GIVE_UP;
				set_reg(s, reg, FAST_OTHER, 0);
				continue;
			case DW_CFA_remember_state:
				if (depth >= MAX_NESTING)
					return GIVE_UP;
				stack[depth++] = *s;
				continue;
			case DW_CFA_restore_state:
				if (!depth)
					return GIVE_UP;
				/* the CFA too: libdw restores the whole row, as DWARF 5 says */
				*s = stack[--depth];
				continue;
			case DW_CFA_def_cfa:
			case DW_CFA_def_cfa_sf:
				if (!leb128_read(&p, end, false, &reg) ||
				    !leb128_read(&p, end, op == DW_CFA_def_cfa_sf, &v))
					return GIVE_UP;
				s->cfa_kind = 0;
				s->cfa_reg = reg;
				s->cfa_off = op == DW_CFA_def_cfa_sf ? (int64_t)v * daf : (int64_t)v;
				continue;
			case DW_CFA_def_cfa_register:
				if (!leb128_read(&p, end, false, &reg) || s->cfa_kind)
					return GIVE_UP;
				s->cfa_reg = reg;
				continue;
			case DW_CFA_def_cfa_offset:
			case DW_CFA_def_cfa_offset_sf:
				if (!leb128_read(&p, end, op == DW_CFA_def_cfa_offset_sf, &v) || s->cfa_kind)
					return GIVE_UP;
				s->cfa_off = op == DW_CFA_def_cfa_offset_sf ? (int64_t)v * daf :
									      (int64_t)v;
				continue;
			case DW_CFA_def_cfa_expression: {
				int64_t off;
				unsigned int thr;

				if (!leb128_read(&p, end, false, &v) || v > (uint64_t)(end - p))
					return GIVE_UP;
				thr = plt_expr(p, p + v, &off);
				if (!thr)
					return GIVE_UP; /* libdw says what other expressions mean */
				s->cfa_kind = 1;
				s->plt_threshold = thr;
				s->cfa_off = off;
				p += v;
				continue;
			}
			case DW_CFA_GNU_args_size:
				if (!leb128_read(&p, end, false, &v))
					return GIVE_UP;
				continue;
			default:
				/* expressions, DW_CFA_set_loc, window_save, MIPS: libdw's */
				return GIVE_UP;
			}
		}
		/* an advance: the row so far ends here */
		if (!fde)
			return GIVE_UP;
		delta *= caf;
		if (*loc + delta < *loc || *loc + delta > fde_end)
			return GIVE_UP;
		if (delta) {
			err = row(ctx, *loc, s);
			if (err)
				return err;
			*loc += delta;
		}
	}
	if (fde && *loc < fde_end)
		return row(ctx, *loc, s);
	return 0;
}

int fast_rows_cie(const uint8_t *p, const uint8_t *end, int64_t daf, struct fast_state *init)
{
	uint64_t loc = 0;

	/* libdw's x86-64 ABI initial state; the CFA is undefined until the CIE says */
	memset(init, 0, sizeof(*init));
	init->cfa_kind = 2;
	init->rbp.kind = FAST_SAME;
	init->rsp.kind = FAST_VAL_OFFSET;
	init->ra.kind = FAST_UNDEF;
	return run(p, end, 1, daf, init, init, false, &loc, 0, NULL, NULL);
}

int fast_rows_fde(const uint8_t *p, const uint8_t *end, uint64_t caf, int64_t daf,
		  const struct fast_state *init, uint64_t start, uint64_t fde_end, fast_row_fn row,
		  void *ctx)
{
	struct fast_state s = *init;
	uint64_t loc = start;

	return run(p, end, caf, daf, &s, init, true, &loc, fde_end, row, ctx);
}

// SPDX-License-Identifier: MIT
/*
 * bpf/v8.bpf.h's v8_frame over a stack copy (include/v8_copy_walk.h): the
 * same checks in the same order, so that a copied sample's JavaScript
 * frames are those the BPF walk would have recorded.
 */
#include <string.h>
#include "v8_copy_walk.h"

/* The 8 bytes at user address addr of the copy; -1 outside it or in a hole */
static int copy_word(const struct unwind_step_stack *st, uint64_t addr, uint64_t *val)
{
	uint64_t off = addr - st->addr, page;

	if (addr < st->addr || off + 8 > st->size || off + 8 < off)
		return -1;
	page = (addr >> 12) - (st->addr >> 12);
	if (page < 32 && (st->holes >> page & 1))
		return -1;
	if (((addr + 7) >> 12) != (addr >> 12)) {
		page++;
		if (page < 32 && (st->holes >> page & 1))
			return -1;
	}
	memcpy(val, st->data + off, 8);
	return 0;
}

static uint64_t u64_at(const uint8_t *b, uint32_t off)
{
	uint64_t v;

	if (off > BPFPROF_V8_READ - 8)
		return 0;
	memcpy(&v, b + off, 8);
	return v;
}

static uint32_t u32_at(const uint8_t *b, uint32_t off)
{
	uint32_t v;

	if (off > BPFPROF_V8_READ - 4)
		return 0;
	memcpy(&v, b + off, 4);
	return v;
}

static uint64_t tagged(const struct bpfprof_v8_proc *cfg, const uint8_t *b, uint32_t off,
		       uint64_t obj)
{
	if (cfg->flags & BPFPROF_V8_COMPRESSED)
		return (obj & ~0xffffffffull) | u32_at(b, off);
	return u64_at(b, off);
}

static bool heap_ptr(uint64_t p)
{
	return (p & 3) == 1 && p > 4096 && p < (1ull << 47);
}

/* JSFunction fn into ent (v8.bpf.h's v8_fn_read): 0, or -1 when it is none */
static int fn_read(const struct bpfprof_v8_proc *cfg, v8_copy_read_fn read, void *ctx,
		   struct v8_copy_fn *ent, uint64_t fn)
{
	uint8_t b[BPFPROF_V8_READ], code_b[BPFPROF_V8_READ];
	uint64_t map, shared, code;
	uint16_t type;

	ent->fn = 0;
	if (read(ctx, fn - 1, b, sizeof(b)))
		return -1;
	map = tagged(cfg, b, 0, fn);
	if (!heap_ptr(map) ||
	    read(ctx, map - 1 + (cfg->map_instance_type & 0xfff), &type, sizeof(type)) ||
	    type < cfg->type_function_first || type > cfg->type_function_last)
		return -1;
	shared = tagged(cfg, b, cfg->fn_shared, fn);
	code = tagged(cfg, b, cfg->fn_code, fn);
	if (!heap_ptr(shared))
		return -1;
	memset(ent, 0, sizeof(*ent));
	ent->shared = shared;
	if (heap_ptr(code) && !read(ctx, code - 1, code_b, sizeof(code_b))) {
		ent->code = code;
		ent->ckind = (u32_at(code_b, cfg->code_flags) >> (cfg->code_kind_shift & 31)) &
			     cfg->code_kind_mask;
		ent->size = u32_at(code_b, cfg->code_size);
		/* as bpf/v8.bpf.h: a pointer field (V8 11.1+), or after the Code's header (node 18) */
		ent->start = (cfg->flags & BPFPROF_V8_CODE_START_PTR) ?
				     u64_at(code_b, cfg->code_start) :
			     (cfg->flags & BPFPROF_V8_CODE_START_INLINE) ?
				     code - 1 + cfg->code_start :
				     0;
	}
	ent->fn = fn;
	return 0;
}

static bool in_code(const struct bpfprof_v8_proc *cfg, const struct v8_copy_fn *ent, uint64_t look)
{
	return ent->code && ent->start && ent->ckind >= cfg->kind_baseline && look >= ent->start &&
	       look < ent->start + ent->size;
}

uint32_t v8_copy_walk(const struct bpfprof_v8_proc *cfg, v8_copy_read_fn read, void *ctx,
		      struct v8_copy_cache *cache, const struct unwind_step_frame *frames,
		      uint32_t nr, const struct unwind_step_stack *stack, uint64_t *words,
		      uint32_t max_frames, uint32_t *stop)
{
	uint64_t last_fp = 0;
	uint32_t n = 0;

	*stop = 0;
	for (uint32_t i = 0; i < nr && !*stop; i++) {
		const struct unwind_step_frame *f = &frames[i];
		uint64_t fp = f->bp, marker, fn, slot, bytecode = 0, look, bc_off = 0, obj, off = 0,
			 after = 0, ra;
		uint32_t kind = BPFPROF_V8_FUNCTION, check = 0;
		struct v8_copy_fn *ent;
		bool interp;

		/* only where the step found no row, as the BPF walk's hook (unwind_walk_no_row) */
		if (!f->no_row)
			continue;
		if (!fp || (fp & 7) || fp >= (1ull << 47) ||
		    fp + (int64_t)cfg->fp_low < f->sp)
			continue;
		if (fp == last_fp) {
			/* the same frame again (the leaf's prologue stepped over): as v8_frame */
			if (i != 1 || n != 1)
				continue;
			if (words[1] & BPFPROF_V8_AFTER)
				n = 0;
		}
		if (copy_word(stack, fp + (int64_t)cfg->fp_marker, &marker) || !(marker & 1))
			continue;
		if (copy_word(stack, fp + (int64_t)cfg->fp_function, &fn) || !heap_ptr(fn))
			continue;
		interp = !copy_word(stack, fp + (int64_t)cfg->fp_bytecode_offset, &slot) &&
			 !(slot & 1) &&
			 !copy_word(stack, fp + (int64_t)cfg->fp_bytecode_array, &bytecode) &&
			 heap_ptr(bytecode) &&
			 (bc_off = (uint32_t)((int64_t)slot >> (cfg->smi_shift & 63))) != 0;
		look = i ? f->pc - 1 : f->pc;
		ent = &cache->fns[((fn >> 3) ^ (fn >> 11)) & (V8_COPY_FNS - 1)];
		if (ent->fn != fn || (!interp && !in_code(cfg, ent, look))) {
			if (fn_read(cfg, read, ctx, ent, fn))
				continue;
		}
		if (n >= max_frames) {
			*stop = BPFPROF_STAT_V8_LIMIT;
			break;
		}
		obj = ent->shared;
		if (in_code(cfg, ent, look)) {
			kind = ent->ckind == cfg->kind_baseline ? BPFPROF_V8_BASELINE :
								  BPFPROF_V8_OPTIMIZED;
			obj = kind == BPFPROF_V8_OPTIMIZED ? ent->code : ent->shared;
			off = f->pc - ent->start;
			check = BPFPROF_V8_CODE_CHECK(ent->size, ent->ckind);
		}
		/* a leaf in a builtin called without a frame: its return address at sp */
		if (i == 0 && kind == BPFPROF_V8_FUNCTION && ent->code && ent->start &&
		    ent->ckind >= cfg->kind_baseline) {
			for (int k = 0; k < 3; k++) {
				if (copy_word(stack, f->sp + 8 * k, &ra))
					break;
				if (ra - 1 >= ent->start && ra - 1 < ent->start + ent->size) {
					kind = ent->ckind == cfg->kind_baseline ?
						       BPFPROF_V8_BASELINE :
						       BPFPROF_V8_OPTIMIZED;
					obj = kind == BPFPROF_V8_OPTIMIZED ? ent->code : ent->shared;
					off = ra - ent->start;
					check = BPFPROF_V8_CODE_CHECK(ent->size, ent->ckind);
					after = BPFPROF_V8_AFTER;
					break;
				}
			}
		}
		if (kind == BPFPROF_V8_FUNCTION && interp) {
			off = bc_off;
			kind = BPFPROF_V8_INTERPRETED;
			check = BPFPROF_V8_PTR_CHECK(bytecode);
		}
		if (i == 0 && (kind == BPFPROF_V8_INTERPRETED || kind == BPFPROF_V8_FUNCTION))
			after = BPFPROF_V8_AFTER;
		words[2 * n] = obj;
		words[2 * n + 1] = BPFPROF_V8_WORD1(off, check, i, kind) | after;
		n++;
		last_fp = fp;
	}
	if (!*stop)
		*stop = n ? BPFPROF_STAT_V8_END : BPFPROF_STAT_V8_NONE;
	return n;
}

/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * HotSpot's frames, stepped inside the native walk (unwind.bpf.h's
 * walk_step calls hotspot_walk_step first): HotSpot's compiled code keeps no
 * frame pointer and no CFI describes it, so where the walk's pc falls in a
 * JVM's code cache (a process in `hs_procs`, struct bpfprof_hotspot_proc)
 * the frame is stepped the way HotSpot steps it (frame_x86.inline.hpp's
 * sender; the OpenTelemetry eBPF profiler's hotspot_tracer.ebpf.c does the
 * same, with the same safeguards):
 *
 *   pc -> CodeBlob   the code heap's segment map (heap.cpp find_start: a
 *                    byte a segment, the distance back to the block's start
 *                    in hops of at most 254 segments; 0 the start, 0xff free)
 *   kind             the first 4 bytes of the blob's name
 *   "Interpreter"    by rbp: Method* at rbp - 24, bcp at rbp - 64 (the
 *                    leaf's in r13: the slot is stale), the caller's pc at
 *                    rbp + 8, rbp at rbp, sp at rbp - 8 (sender sp)
 *   "nmethod", "native nmethod", stubs with a frame size
 *                    sp + _frame_size words: the return address below it,
 *                    the caller's rbp below that; the deoptimised pc
 *                    (_orig_pc_offset), the leaf in its prologue or
 *                    epilogue, rbp kept as a frame pointer (native wrappers),
 *                    and up to HS_RA_SLOTS words pushed past the frame size
 *   stubs of frame size 0 (the call stub, StubRoutines)
 *                    by rbp; past the call stub the walk is in libjvm again
 *                    (JavaCalls::call_helper), native CFI
 *
 * Each code-cache frame is recorded (include/bpfprof_abi.h, "For HotSpot")
 * with the index of its pc among the user addresses, in this CPU's walk
 * state, and copied after the sample's user addresses at the walk's end
 * (hotspot_end, from walk.bpf.h's dispatcher). Every value read is the
 * process's to forge: pointers are checked for alignment and range, a frame
 * must go up the stack, the segment map's hops are bounded; a bad frame
 * ends the walk with a counter (BPFPROF_STAT_HS_*).
 */
#ifndef BPFPROF_HOTSPOT_BPF_H
#define BPFPROF_HOTSPOT_BPF_H

#include "state.bpf.h"
#include "unwind.bpf.h"
#include "interp.bpf.h"

/*
 * HotSpot's step in the walk: not in the legacy variant, whose walk
 * programs (16 native steps each, tail-called, every step verified inline)
 * go past the verifier's 1M instructions with it; user space reads
 * hotspot_in_walk to say so (-v) instead of attaching JVMs.
 */
#define COMPAT_HOTSPOT (!BPFPROF_LEGACY)
const volatile bool hotspot_in_walk = COMPAT_HOTSPOT;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, COMPAT_PERF_HASH_FLAGS); /* allocated as entries come: start-up */
	__uint(max_entries, BPFPROF_MAX_HS_PROCS);
	__type(key, __u32); /* tgid */
	__type(value, struct bpfprof_hotspot_proc);
} hs_procs SEC(".maps");

/* heap.cpp: a segment map's hops; OTel saw 9 at most (JDK 8), takes 12 */
#define HS_SEGMAP_HOPS 12
/* words a compiled frame may have pushed past its _frame_size (OTel, async-profiler: 6-7) */
#define HS_RA_SLOTS 6
/* An interpreter frame's slots read: rbp - 80 .. rbp + 8 (frame_x86.hpp) */
#define HS_INTERP_SLOTS 12
#define HS_SLOT(k) (10 + (k)) /* the slot at rbp + 8k in slots[] */

/* The first 4 bytes of a CodeBlob's name (OTel's FRAMETYPE_*) */
#define HS_NAME_NMETHOD 0x74656d6e /* "nmethod" */
#define HS_NAME_NATIVE 0x6974616e /* "native nmethod" */
#define HS_NAME_INTERPRETER 0x65746e49 /* "Interpreter" */
#define HS_NAME_VTABLE 0x62617476 /* "vtable chunks" */

/* The Java part of the walk in one slot (a map value: see struct walk) */
struct hs_walk {
	struct bpfprof_hotspot_proc cfg; /* the process's, copied at the walk's step 0 */
	__u64 time_ns; /* the record's time and tid: whose walk this is */
	__u32 tid;
	__u32 n; /* frames recorded */
	__u32 stop; /* BPFPROF_STAT_HS_*: how the Java part ended; 0 none yet */
	__u8 on; /* the process is a JVM: cfg holds its layout */
	__u8 java; /* a code-cache frame was stepped */
	__u8 pad[2];
	/*
	 * The last blob read this walk, [blob_lo, blob_hi), still in blob[]
	 * with its name's first bytes: a recursion, or interpreted frames
	 * (all in the "Interpreter" blob), reads the code cache once a walk
	 */
	__u64 blob_lo, blob_hi;
	__u32 blob_name;
	__u32 pad2;
	__u8 blob[BPFPROF_HS_BLOB_READ];
	__u64 slots[HS_INTERP_SLOTS + 2];
	__u64 frames[2 * BPFPROF_MAX_PY_FRAMES];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, WALK_SLOTS);
	__type(key, __u32);
	__type(value, struct hs_walk);
} hs_walk_state SEC(".maps");

static __always_inline __u64 hs_u64(const struct hs_walk *h, __u32 off)
{
	if (off > BPFPROF_HS_BLOB_READ - 8)
		return 0;
	return *(const __u64 *)(h->blob + off);
}

static __always_inline __s32 hs_s32(const struct hs_walk *h, __u32 off)
{
	if (off > BPFPROF_HS_BLOB_READ - 4)
		return 0;
	return *(const __s32 *)(h->blob + off);
}

static __always_inline __s16 hs_s16(const struct hs_walk *h, __u32 off)
{
	if (off > BPFPROF_HS_BLOB_READ - 2)
		return 0;
	return *(const __s16 *)(h->blob + off);
}

static __always_inline bool hs_in_code(const struct hs_walk *h, __u64 pc)
{
	return pc >= h->cfg.code_low && pc < h->cfg.code_high;
}

/* The Java part ends here: the walk stops, stop_walk saying so to the native walk */
static __always_inline long hs_fail(struct hs_walk *h, struct unwind_walk_frame *f, __u32 why,
				    __u32 stop_walk)
{
	h->stop = why;
	stat_inc(why);
	return unwind_walk_stop(f, stop_walk);
}

/* The CodeBlob that holds pc (in the code cache): its address, 0 none */
static __always_inline __u64 hs_find_blob(struct hs_walk *h, __u64 pc)
{
	__u64 low = 0, segmap = 0, seg;
	__u32 shift = 0, k;
	__u8 tag = 0xff;

	for (k = 0; k < BPFPROF_HS_HEAPS; k++) {
		if (k < h->cfg.nr_heaps && pc >= h->cfg.heap[k].low && pc < h->cfg.heap[k].high) {
			low = h->cfg.heap[k].low;
			segmap = h->cfg.heap[k].segmap;
			shift = h->cfg.heap[k].log2_segment & 31;
		}
	}
	if (!segmap)
		return 0;
	seg = (pc - low) >> shift;
	for (k = 0; k < HS_SEGMAP_HOPS; k++) {
		if (bpf_probe_read_user(&tag, 1, (const void *)(segmap + seg)))
			return 0;
		if (tag == 0 || tag == 0xff || tag > seg)
			break;
		seg -= tag;
	}
	if (tag != 0)
		return 0;
	return low + (seg << shift) + h->cfg.heapblock_size;
}

/*
 * A compiled leaf at pc in its epilogue (OTel's hotspot_handle_epilogue):
 * 1 when only the return address is left on the stack, 2 when rbp is
 * too, 0 not in an epilogue.
 */
static __always_inline int hs_epilogue(__u64 pc)
{
	__u8 code[14];
	int k, ret = 0;

	if (bpf_probe_read_user(code, sizeof(code), (const void *)(pc - 1)))
		return 0;
	if (code[1] == 0xc3) /* ret */
		return 1;
	for (k = 2; k < 14; k++)
		if (code[k] == 0xc3)
			ret = 1;
	if (!ret)
		return 0;
	if (code[1] == 0x5d) /* pop rbp */
		return 2;
	if (code[1] == 0x41 && code[2] == 0x85 && code[3] == 0x02 && code[4] == 0xc3)
		return 1; /* the safepoint poll's test, then ret */
	if (code[1] == 0x0f && code[2] == 0x85 && code[7] == 0xc3)
		return 1; /* a native wrapper's exception check, then ret */
	if (code[0] == 0x5d || code[0] == 0xc9)
		return 1; /* after pop rbp or leave */
	return 0;
}

/*
 * Step the code-cache frame at f (the walk's step i): its caller's pc, sp,
 * rbp into f, the caller's return address stored, the frame recorded.
 * Returns 1 to stop the walk, 0 to go on.
 */
static __always_inline long hs_frame(struct walk_env *env, struct hs_walk *h, __u32 i)
{
	struct unwind_walk_frame *f = &env->w->f;
	__u64 pc = f->pc, sp = f->sp, bp = f->bp, blob, name_at, code_begin, deopt;
	__u64 ra = 0, nsp = 0, nbp = bp, word0, word1, idx, frame_size, n;
	__u32 name = 0, kind, cookie, off, size;
	__s32 complete;
	int epi, k;

	if (pc >= h->blob_lo && pc < h->blob_hi) {
		blob = h->blob_lo;
		name = h->blob_name;
	} else {
		h->blob_hi = 0;
		blob = hs_find_blob(h, pc);
		if (!blob)
			return hs_fail(h, f, BPFPROF_STAT_HS_NO_BLOB, BPFPROF_STAT_WALK_BAD);
		if (bpf_probe_read_user(h->blob, sizeof(h->blob), (const void *)blob))
			return hs_fail(h, f, BPFPROF_STAT_HS_READ_FAULT,
				       BPFPROF_STAT_WALK_READ_FAULT);
		name_at = hs_u64(h, h->cfg.blob_name);
		if (bpf_probe_read_user(&name, sizeof(name), (const void *)name_at))
			return hs_fail(h, f, BPFPROF_STAT_HS_READ_FAULT,
				       BPFPROF_STAT_WALK_READ_FAULT);
		size = (__u32)hs_s32(h, h->cfg.blob_size);
		if (size > (64u << 20) || pc >= blob + size)
			return hs_fail(h, f, BPFPROF_STAT_HS_NO_BLOB, BPFPROF_STAT_WALK_BAD);
		h->blob_lo = blob;
		h->blob_hi = blob + size;
		h->blob_name = name;
	}
	if (h->cfg.code_offsets)
		code_begin = blob + (__u64)(__s64)hs_s32(h, h->cfg.blob_code_begin);
	else
		code_begin = hs_u64(h, h->cfg.blob_code_begin);
	frame_size = (__u64)(__u32)hs_s32(h, h->cfg.blob_frame_size) * 8;
	if (frame_size > 65536)
		return hs_fail(h, f, BPFPROF_STAT_HS_BAD, BPFPROF_STAT_WALK_BAD);
	complete = hs_s16(h, h->cfg.blob_frame_complete);

	if (name == HS_NAME_INTERPRETER) {
		__u64 method, bcp;

		if (bp < sp || bp >= sp + 4096 || (bp & 7))
			return hs_fail(h, f, BPFPROF_STAT_HS_BAD, BPFPROF_STAT_WALK_BAD);
		if (bpf_probe_read_user(h->slots, HS_INTERP_SLOTS * 8, (const void *)(bp - 80)))
			return hs_fail(h, f, BPFPROF_STAT_HS_READ_FAULT,
				       BPFPROF_STAT_WALK_READ_FAULT);
		method = h->slots[HS_SLOT(-3)];
		bcp = h->slots[HS_SLOT(-8)];
		nsp = h->slots[HS_SLOT(-1)];
		nbp = h->slots[HS_SLOT(0)];
		ra = h->slots[HS_SLOT(1)];
		if (f->leaf) {
			/* the interrupted bytecode's pointer is in r13; the slot is saved at calls */
			struct pt_regs *regs = task_user_regs(current_task());

			if (regs)
				bcp = BPF_CORE_READ(regs, r13);
		}
		if (!method || (method & 7) || arch_kernel_addr(method))
			return hs_fail(h, f, BPFPROF_STAT_HS_BAD, BPFPROF_STAT_WALK_BAD);
		/* the bci and the check against reuse are user space's, from the bcp */
		word0 = BPFPROF_HS_WORD0(method, BPFPROF_HS_INTERPRETED, i);
		word1 = arch_kernel_addr(bcp) ? 0 : bcp;
	} else {
		kind = BPFPROF_HS_STUB;
		cookie = name;
		if (name == HS_NAME_NMETHOD || name == HS_NAME_NATIVE) {
			kind = name == HS_NAME_NMETHOD ? BPFPROF_HS_COMPILED : BPFPROF_HS_NATIVE;
			cookie = (__u32)hs_s32(h, h->cfg.nm_compile_id);
			if (h->cfg.deopt_offsets)
				deopt = blob + (__u64)(__s64)hs_s32(h, h->cfg.nm_deopt);
			else
				deopt = hs_u64(h, h->cfg.nm_deopt);
			if (pc == deopt) {
				/* deoptimised: the return address was rewritten, the original kept */
				__u64 orig = 0;

				if (!bpf_probe_read_user(
					    &orig, sizeof(orig),
					    (const void *)(sp +
							   (__s64)hs_s32(h, h->cfg.nm_orig_pc))) &&
				    orig >= code_begin && hs_in_code(h, orig))
					pc = orig;
			}
		}
		off = (__u32)(pc - code_begin);
		word0 = BPFPROF_HS_WORD0(blob, kind, i);
		word1 = off | (__u64)cookie << 32;
		epi = 0;
		if (name == HS_NAME_VTABLE) {
			epi = 1;
		} else if (kind != BPFPROF_HS_STUB && f->leaf && complete > 0 &&
			   pc < code_begin + complete) {
			/* in the prologue: the return address, and rbp near its end */
			epi = pc >= code_begin + complete - 4 ? 2 : 1;
		} else if (kind != BPFPROF_HS_STUB && f->leaf) {
			epi = hs_epilogue(pc);
		}
		if (epi) {
			nsp = sp + 8 * epi;
		} else if (!frame_size ||
			   (kind != BPFPROF_HS_STUB && bp >= sp && bp < sp + frame_size + 48)) {
			/* rbp is the frame pointer: frame size 0 stubs, native wrappers */
			if (bp < sp || (bp & 7))
				return hs_fail(h, f, BPFPROF_STAT_HS_BAD, BPFPROF_STAT_WALK_BAD);
			nsp = bp + 16;
			epi = 2;
		} else {
			nsp = sp + frame_size;
		}
		if (bpf_probe_read_user(h->slots, (HS_RA_SLOTS + 1) * 8, (const void *)(nsp - 16)))
			return hs_fail(h, f, BPFPROF_STAT_HS_READ_FAULT,
				       BPFPROF_STAT_WALK_READ_FAULT);
		ra = h->slots[1];
		if (epi == 2 || (epi == 0 && frame_size >= 16))
			nbp = h->slots[0];
		if (!epi && kind != BPFPROF_HS_STUB && !hs_in_code(h, ra)) {
			/* a compiled method's caller is code-cache code: words pushed past the frame */
			ra = 0;
			for (k = 1; k < HS_RA_SLOTS; k++) {
				if (!ra && hs_in_code(h, h->slots[k + 1])) {
					ra = h->slots[k + 1];
					nbp = h->slots[k];
					nsp += 8 * k;
				}
			}
			if (!ra)
				return hs_fail(h, f, BPFPROF_STAT_HS_NO_RA, BPFPROF_STAT_WALK_BAD);
		}
	}
	if (!ra || arch_kernel_addr(ra) || nsp <= sp)
		return hs_fail(h, f, BPFPROF_STAT_HS_BAD, BPFPROF_STAT_WALK_BAD);
	stat_inc(BPFPROF_STAT_HS_FRAMES);
	h->java = 1;
	n = h->n;
	if (n < BPFPROF_MAX_PY_FRAMES) {
		h->frames[(2 * n) & (2 * BPFPROF_MAX_PY_FRAMES - 1)] = word0;
		h->frames[(2 * n + 1) & (2 * BPFPROF_MAX_PY_FRAMES - 1)] = word1;
		h->n = n + 1;
	} else {
		h->stop = BPFPROF_STAT_HS_LIMIT;
	}
	if (!hs_in_code(h, ra) && h->stop != BPFPROF_STAT_HS_LIMIT)
		h->stop = BPFPROF_STAT_HS_NATIVE; /* back to native code: the call stub's caller */
	idx = f->nk + 1 + i;
	if (!unwind_walk_store(f, env, idx, ra))
		return unwind_walk_stop(f, BPFPROF_STAT_WALK_LIMIT);
	f->end = idx + 1;
	f->pc = ra;
	f->sp = nsp;
	f->bp = nbp;
	f->leaf = 0;
	f->fp_prev = 0;
	return 0;
}

/*
 * The walk's hook (unwind.bpf.h walk_step): step i of the walk in env is
 * HotSpot's when its pc is in the process's code cache. Returns true with
 * *ret the step's result then, false for a native step. Step 0 looks the
 * process up (one hash lookup a walk) and starts the Java part.
 */
static __always_inline bool hotspot_step(struct walk_env *env, __u32 i, long *ret)
{
	struct bpfprof_hotspot_proc *cfg;
	struct hs_walk *h;
	__u32 slot = env->slot;

	if (!COMPAT_HOTSPOT)
		return false;
	h = bpf_map_lookup_elem(&hs_walk_state, &slot);
	if (!h)
		return false;
	if (i == 0) {
		h->on = 0;
		h->java = 0;
		h->blob_hi = 0;
		h->n = 0;
		h->stop = 0;
		h->time_ns = env->e->time_ns;
		h->tid = env->e->tid;
		cfg = bpf_map_lookup_elem(&hs_procs, &env->w->tgid);
		if (!cfg)
			return false;
		__builtin_memcpy(&h->cfg, cfg, sizeof(h->cfg));
		h->on = 1;
	}
	if (!h->on || !hs_in_code(h, env->w->f.pc))
		return false;
	*ret = hs_frame(env, h, i);
	return true;
}

#if COMPAT_HOTSPOT
/*
 * hotspot_step as a global function (unwind.bpf.h walk_step's hook): step
 * i of the walk in slot; the step's result, -1 for a native step.
 */
__noinline int hotspot_walk_step(__u32 slot, __u32 i)
{
	long ret;
	struct walk_env env = {
		.w = bpf_map_lookup_elem(&walk_state, &slot),
		.e = bpf_map_lookup_elem(&scratch, &slot),
		.c = bpf_map_lookup_elem(&ustack, &slot),
		.slot = slot,
	};

	if (!interp_walk_on(BPFPROF_WALK_HOTSPOT))
		return -1;
	if (!env.w || !env.e || !env.c || !hotspot_step(&env, i, &ret))
		return -1;
	return ret;
}
#endif

/*
 * After the native walk of record e (nk kernel, nu user addresses): its
 * Java frames after the user addresses (nr_py), and how the Java part
 * ended (py_stop), counted. Nothing for a walk that met no Java frame.
 */
static __always_inline void hotspot_end(struct bpfprof_sample *e, __u64 nk, __u64 nu)
{
	struct hs_walk *h;
	__u32 slot = cur_slot(), stop;
	__u64 idx = nk + nu, n, size;

	if (!COMPAT_HOTSPOT || !interp_walk_on(BPFPROF_WALK_HOTSPOT))
		return;
	h = bpf_map_lookup_elem(&hs_walk_state, &slot);
	if (!h || !h->on || h->time_ns != e->time_ns || h->tid != e->tid)
		return;
	h->on = 0;
	if (!h->java)
		return;
	n = h->n;
	if (n > BPFPROF_MAX_PY_FRAMES)
		n = BPFPROF_MAX_PY_FRAMES;
	size = n * 16;
	if (idx > MAX_IPS || size > 16 * BPFPROF_MAX_PY_FRAMES)
		return;
	if (size && bpf_probe_read_kernel(&e->ips[idx], size, h->frames))
		return;
	stop = h->stop ? h->stop : BPFPROF_STAT_HS_NATIVE;
	e->nr_py = n;
	e->py_stop = stop;
	stat_inc(BPFPROF_STAT_HS_WALKS);
	if (stop == BPFPROF_STAT_HS_NATIVE || stop == BPFPROF_STAT_HS_LIMIT)
		stat_inc(stop); /* the others were counted where they happened */
}

#if COMPAT_HOTSPOT
/*
 * hotspot_end as a global function (walk.bpf.h's dispatcher), verified once
 * on its own: the record is this CPU's slot's (scratch), nu its user addresses
 */
__noinline int hotspot_walk_end(__u64 nk, __u64 nu)
{
	__u32 slot = cur_slot();
	struct bpfprof_sample *e = bpf_map_lookup_elem(&scratch, &slot);

	if (e)
		hotspot_end(e, nk, nu);
	return 0;
}
#endif

#endif /* BPFPROF_HOTSPOT_BPF_H */

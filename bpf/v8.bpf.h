/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The V8 unwinder: JavaScript frames of a node process (one in `v8_procs`)
 * found on the frame-pointer chain the native walk follows. V8 keeps a
 * frame pointer in every tier (Ignition's trampoline, Sparkplug, Maglev,
 * TurboFan, builtins), so the native walk already gets through JavaScript;
 * it calls v8_walk_frame at each frame it steps without a row (JIT code and
 * node's embedded builtins have no CFI; a native frame with a row is not
 * JavaScript's), which reads the frame's slots
 * below its frame pointer (V8's src/execution/frame-constants.h, offsets
 * from the process's v8dbg_ metadata, struct bpfprof_v8_proc) from the walk's
 * own stack copy:
 *
 *   fp - 8   a typed frame's marker (StackFrame::Type << 1: entry, exit,
 *            stub, internal ...; low bit 0), or a standard frame's context
 *            (a tagged heap pointer, low bit 1)
 *   fp - 16  a standard frame's JSFunction
 *   fp - 32  an interpreted frame's BytecodeArray
 *   fp - 40  its bytecode offset (a Smi)
 *
 * A standard frame's function is checked to be a JSFunction (its map's
 * instance type a closure type), then classified as the OpenTelemetry
 * profiler's v8_tracer.ebpf.c does: its Code (JSFunction.code) is baseline
 * or optimized and holds the frame's pc: a compiled frame, its pc's offset
 * in the code recorded; else a Smi in the bytecode offset slot: an
 * interpreted frame; else the function alone. The frames wait in the
 * per-CPU state and go after the record's user addresses at the walk's end
 * (v8_end, from the interpreter dispatcher), each tied to the native
 * frame it stands for (include/bpfprof_abi.h, struct bpfprof_v8_proc).
 *
 * Every value read is the process's to forge: a frame whose slots are not
 * a readable JSFunction is skipped (native code's garbage, counted), a
 * Code that cannot be read gives the function without an offset, user
 * space validates what the words point to. The slots are in the walk's
 * stack copy; a function met in the last frames or samples is classified
 * from a per-CPU cache (struct v8_fn, checked against the frame: no user
 * read), another costs two user reads (the JSFunction, its Code) and a
 * third (its map's instance type) for a map not among the last V8_MAPS
 * closure maps of the process.
 *
 * Not in the legacy variant (bpf_loop-less kernels): its walk is unrolled
 * sixteen frames a program, near the verifier's budget; there node is
 * profiled natively (docs/INTERPRETERS.md).
 */
#ifndef BPFPROF_V8_BPF_H
#define BPFPROF_V8_BPF_H

#include "state.bpf.h"
#include "unwind.bpf.h"
#include "interp.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BPFPROF_MAX_V8_PROCS);
	__type(key, __u32); /* tgid */
	__type(value, struct bpfprof_v8_proc);
} v8_procs SEC(".maps");

#define V8_MAX_FRAMES BPFPROF_MAX_PY_FRAMES
#define V8_MAPS 4 /* closure maps remembered: a context has a few (sloppy, strict, arrow, method) */
_Static_assert((V8_MAX_FRAMES & (V8_MAX_FRAMES - 1)) == 0, "a power of two: the copy's mask");

/*
 * A JSFunction as the walk last read it (v8_fn_read): what classifies its
 * frames, so that a function seen again (a recursion, a hot caller, the
 * next sample's same stack) costs no user read. An entry is only a guess
 * (the function may have been moved, its address reused, its Code
 * replaced): what a frame takes from it is checked against the frame
 * itself: its pc inside the entry's Code, or the interpreted frame's own
 * slots (user space checks the BytecodeArray from the stack against the
 * SharedFunctionInfo's); a frame the entry cannot classify reads the
 * function again.
 */
struct v8_fn {
	__u64 fn; /* the tagged JSFunction; 0: empty */
	__u64 shared; /* its SharedFunctionInfo */
	__u64 code; /* its Code; 0: none readable */
	__u64 start; /* the Code's instruction start, size and kind */
	__u32 size;
	__u16 ckind;
	__u16 pad;
	__u32 tgid;
	__u32 outside_now; /* the walk's second (struct walk's now) of: */
	__u64 outside; /* a pc (or return address - 1) found outside this Code when it was read */
};

#define V8_FNS 64 /* a power of two: the cache's mask */
_Static_assert((V8_FNS & (V8_FNS - 1)) == 0, "a power of two: the cache's mask");

/* A frame's classification (v8_classify): the record's words */
struct v8_class {
	__u64 obj, off;
	__u32 kind, check;
	__u64 after;
	/* the frame's own slots: an interpreted frame's bytecode offset (a Smi, not 0) and array */
	__u64 bc_off, bytecode;
	bool interp;
};

/* A sample's V8 frames between the native walk's steps, in a map value (see struct walk) */
struct v8_walk {
	struct bpfprof_v8_proc cfg; /* the process's, copied at the walk's first step */
	__u32 tgid;
	__u64 time_ns; /* the sample whose frames these are */
	__u64 last_fp; /* the last frame recorded: a frame is not recorded twice */
	__u32 n; /* frames recorded */
	__u32 cached; /* of them classified from fns (BPFPROF_STAT_V8_CACHED at v8_end) */
	__u32 stop; /* enum bpfprof_stat: BPFPROF_STAT_V8_LIMIT once full */
	__u8 on; /* the sampled process runs V8 */
	__u8 pad[3];
	/*
	 * Maps found to be closures' of process maps_tgid: a frame whose
	 * JSFunction has one is not read again for its type (user space
	 * checks every object it names)
	 */
	__u32 maps_tgid;
	__u32 map_next;
	__u32 pad2;
	__u64 maps[V8_MAPS];
	__u8 fn[BPFPROF_V8_READ]; /* the JSFunction's bytes */
	__u8 code[BPFPROF_V8_READ]; /* its Code's */
	struct v8_class cl; /* the frame being classified (in the map: the BPF stack is 512 bytes for every call level) */
	__u64 frames[2 * V8_MAX_FRAMES];
	struct v8_fn fns[V8_FNS]; /* recent functions, by address (v8_fn_slot) */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, WALK_SLOTS);
	__type(key, __u32);
	__type(value, struct v8_walk);
} v8_walk_state SEC(".maps");

#define v8_state()                                                              \
	({                                                                      \
		__u32 __slot = cur_slot();                                      \
		(struct v8_walk *)bpf_map_lookup_elem(&v8_walk_state, &__slot); \
	})

/* The little-endian fields at byte off of an object's bytes; 0 past its end */
static __always_inline __u64 v8_u64(const __u8 *buf, __u32 off)
{
	if (off > BPFPROF_V8_READ - 8)
		return 0;
	return *(const __u64 *)(buf + off);
}

static __always_inline __u32 v8_u32(const __u8 *buf, __u32 off)
{
	if (off > BPFPROF_V8_READ - 4)
		return 0;
	return *(const __u32 *)(buf + off);
}

/* The tagged field at off of an object whose own address is obj: a full pointer */
static __always_inline __u64 v8_tagged(const struct v8_walk *v, const __u8 *buf, __u32 off,
				       __u64 obj)
{
	if (v->cfg.flags & BPFPROF_V8_COMPRESSED)
		return (obj & ~0xffffffffull) | v8_u32(buf, off);
	return v8_u64(buf, off);
}

/* A tagged heap pointer into user memory */
static __always_inline bool v8_heap_ptr(__u64 p)
{
	return (p & 3) == 1 && p > 4096 && !arch_kernel_addr(p);
}

/* The cache entry of JSFunction fn (its address's bits above the object alignment) */
static __always_inline __u32 v8_fn_slot(__u64 fn)
{
	return (__u32)((fn >> 3) ^ (fn >> 11)) & (V8_FNS - 1);
}

/*
 * Read JSFunction fn and its Code into entry ent: 0, or -1 when fn is no
 * JSFunction (its map's instance type not a closure's, its
 * SharedFunctionInfo not a heap object). A Code not readable leaves
 * ent->code 0 (counted).
 */
static __always_inline int v8_fn_read(struct v8_walk *v, struct v8_fn *ent, __u64 fn, __u32 tgid)
{
	__u64 map, shared, code;
	__u16 type;

	ent->fn = 0;
	if (bpf_probe_read_user(v->fn, sizeof(v->fn), (const void *)(fn - 1)))
		return -1;
	map = v8_tagged(v, v->fn, 0, fn);
	if (!v8_heap_ptr(map))
		return -1;
	if (map != v->maps[0] && map != v->maps[1] && map != v->maps[2] && map != v->maps[3]) {
		if (bpf_probe_read_user(
			    &type, sizeof(type),
			    (const void *)(map - 1 + (v->cfg.map_instance_type & 0xfff))) ||
		    type < v->cfg.type_function_first || type > v->cfg.type_function_last)
			return -1;
		v->maps[v->map_next & (V8_MAPS - 1)] = map;
		v->map_next++;
	}
	shared = v8_tagged(v, v->fn, v->cfg.fn_shared, fn);
	code = v8_tagged(v, v->fn, v->cfg.fn_code, fn);
	if (!v8_heap_ptr(shared))
		return -1;
	ent->shared = shared;
	ent->code = 0;
	ent->start = 0;
	ent->size = 0;
	ent->ckind = 0;
	if (!v8_heap_ptr(code) ||
	    bpf_probe_read_user(v->code, sizeof(v->code), (const void *)(code - 1))) {
		stat_add_here(BPFPROF_STAT_V8_NO_CODE, 1); /* inline: a fifth call level passes 512 bytes of stack */
	} else {
		ent->code = code;
		ent->ckind = (v8_u32(v->code, v->cfg.code_flags) >> (v->cfg.code_kind_shift & 31)) &
			     v->cfg.code_kind_mask;
		ent->size = v8_u32(v->code, v->cfg.code_size);
		/* a pointer field (V8 11.1+), or right after the Code's header (node 18) */
		ent->start = (v->cfg.flags & BPFPROF_V8_CODE_START_PTR) ?
				     v8_u64(v->code, v->cfg.code_start) :
			     (v->cfg.flags & BPFPROF_V8_CODE_START_INLINE) ?
				     code - 1 + v->cfg.code_start :
				     0;
	}
	ent->outside = 0;
	ent->tgid = tgid;
	ent->fn = fn;
	return 0;
}


/* Whether look (a pc, or a return address - 1) lies in ent's baseline or optimized Code */
static __always_inline bool v8_in_code(const struct v8_walk *v, const struct v8_fn *ent, __u64 look)
{
	return ent->code && ent->start && ent->ckind >= v->cfg.kind_baseline &&
	       look >= ent->start && look < ent->start + ent->size;
}

/*
 * v8_fn_read into the cache's entry k for the frame of the walk w whose pc
 * (or return address - 1) is look, remembered where it lies outside the
 * Code read. Returns 0, or -1 when fn is no JSFunction. Inline in
 * v8_walk_frame (itself a global function, verified once): as a global
 * function of its own it made a fourth call level under the sample's
 * program, whose stacks (128 + 192 + 160 + 96 bytes) Linux 6.1 refused
 * (the 512-byte limit on a chain of calls), and the modern variant fell
 * back to the legacy one there.
 */
static __always_inline int v8_walk_fn_read(struct v8_walk *v, struct walk *w, __u32 k, __u64 fn,
					   __u64 look)
{
	struct v8_fn *ent;

	if (!v || !w)
		return -1;
	ent = &v->fns[k & (V8_FNS - 1)];
	if (v8_fn_read(v, ent, fn, w->tgid))
		return -1;
	if (!v8_in_code(v, ent, look)) {
		ent->outside = look;
		ent->outside_now = w->now;
	}
	return 0;
}

/*
 * Classify the frame at fp (step i of the walk) of the function that ent
 * describes, as the OpenTelemetry profiler's v8_tracer.ebpf.c does: its
 * Code baseline or optimized and holding the frame's pc: a compiled frame,
 * its pc's offset in the code; else a Smi in the bytecode offset slot: an
 * interpreted frame (cl->interp, from its slots); else the function alone
 * (BPFPROF_V8_FUNCTION).
 */
static __always_inline void v8_classify(struct walk *w, struct ustack_chunk *c, struct v8_walk *v,
					const struct v8_fn *ent, __u64 look, __u32 i,
					struct v8_class *cl)
{
	__u64 start = ent->start, ra;
	__u32 size = ent->size, ckind = ent->ckind, k;

	cl->kind = BPFPROF_V8_FUNCTION;
	cl->check = 0;
	cl->off = 0;
	cl->after = 0;
	cl->obj = ent->shared;
	if (v8_in_code(v, ent, look)) {
		/* a baseline Code is the SharedFunctionInfo's; an optimized one names its own */
		if (ckind == v->cfg.kind_baseline) {
			cl->kind = BPFPROF_V8_BASELINE;
		} else {
			cl->kind = BPFPROF_V8_OPTIMIZED;
			cl->obj = ent->code;
		}
		cl->off = w->f.pc - start;
		cl->check = BPFPROF_V8_CODE_CHECK(size, ckind);
	}
	/*
	 * The leaf in a builtin that the function's compiled code called
	 * without a frame (Builtins_ModulusSmi_Baseline): its return address
	 * into that code is one of the words at sp, as OpenTelemetry's walk
	 * looks for it; the builtin stays the leaf, the function after it
	 */
	if (i == 0 && cl->kind == BPFPROF_V8_FUNCTION && ent->code && start &&
	    ckind >= v->cfg.kind_baseline) {
		for (k = 0; k < 3; k++) {
			if (stack_read(w, c, w->f.sp + 8 * k, &ra))
				break;
			if (ra - 1 >= start && ra - 1 < start + size) {
				cl->kind = ckind == v->cfg.kind_baseline ? BPFPROF_V8_BASELINE :
									   BPFPROF_V8_OPTIMIZED;
				cl->obj = cl->kind == BPFPROF_V8_OPTIMIZED ? ent->code :
									     ent->shared;
				cl->off = ra - start;
				cl->check = BPFPROF_V8_CODE_CHECK(size, ckind);
				cl->after = BPFPROF_V8_AFTER;
				break;
			}
		}
	}
	/* a Smi: an interpreted frame (checked after the Code: an optimized frame's spill may be one) */
	if (cl->kind == BPFPROF_V8_FUNCTION && cl->interp) {
		cl->off = cl->bc_off;
		cl->kind = BPFPROF_V8_INTERPRETED;
		cl->check = BPFPROF_V8_PTR_CHECK(cl->bytecode);
	}
}

/*
 * A walk of process tgid's stack, for the sample at time_ns, begins in
 * this CPU's slot (walk.bpf.h's walk_interps): where the process runs V8
 * (its v8_procs entry, copied) its JavaScript frames are looked for.
 * Returns whether they are.
 */
static __always_inline int v8_begin(__u32 tgid, __u64 time_ns)
{
	struct bpfprof_v8_proc *cfg;
	struct v8_walk *v;

	cfg = bpf_map_lookup_elem(&v8_procs, &tgid);
	v = cfg ? v8_state() : NULL;
	if (!v)
		return 0;
	__builtin_memcpy(&v->cfg, cfg, sizeof(v->cfg));
	v->n = 0;
	v->cached = 0;
	v->stop = 0;
	v->last_fp = 0;
	if (v->maps_tgid != tgid) {
		__builtin_memset(v->maps, 0, sizeof(v->maps));
		v->maps_tgid = tgid;
	}
	v->tgid = tgid;
	v->time_ns = time_ns;
	v->on = 1;
	stat_inc(BPFPROF_STAT_V8_WALKS);
	return 1;
}

#if !COMPAT_WALK_BY_TAIL_CALLS
/*
 * v8_begin as a global function: the walk's program goes on from one state
 * whatever it found (an inlined one left two, and the native walk's
 * bpf_loop callback was verified for each: twice its instructions)
 */
__noinline int v8_walk_begin(__u32 tgid, __u64 time_ns)
{
	if (!interp_walk_on(BPFPROF_WALK_V8))
		return 0;
	return v8_begin(tgid, time_ns);
}
#endif

/*
 * The frame the native walk is at (step i: its pc is the record's user
 * address i, bp its frame pointer): a JavaScript frame is recorded. Its
 * function is classified from the per-CPU cache of recent functions when
 * the entry classifies it (v8_fn), else read (two or three user reads: the
 * JSFunction, its map's type unless one of the last V8_MAPS closure maps,
 * its Code).
 */
static __always_inline void v8_frame(struct walk *w, struct ustack_chunk *c, struct v8_walk *v,
				     __u32 i)
{
	struct v8_fn *ent;
	struct v8_class *cl = &v->cl;
	__u64 fp, marker, fn, idx, slot, look;
	bool fresh = false, hit;

	if (COMPAT_WALK_BY_TAIL_CALLS)
		return;
	if (!v->on || v->stop)
		return;
	fp = w->f.bp;
	/* the slots lie between the frame's sp and fp: the walk's copy of the stack holds them */
	if (!fp || (fp & 7) || arch_kernel_addr(fp) || fp + v->cfg.fp_low < w->f.sp)
		return;
	if (fp == v->last_fp) {
		/*
		 * The same frame again: the leaf had none of its own yet (a
		 * prologue or epilogue, which the walk's leaf repair stepped
		 * over). Its record stands where the leaf ran that frame's
		 * own code (a recursion), else it was not that frame's: dropped
		 */
		if (i != 1 || v->n != 1)
			return;
		if (v->frames[1] & BPFPROF_V8_AFTER)
			v->n = 0;
	}
	if (stack_read(w, c, fp + v->cfg.fp_marker, &marker))
		return;
	if (!(marker & 1)) {
		/* a typed frame (its marker) or native code */
		if (marker < 64)
			stat_add_here(BPFPROF_STAT_V8_TYPED, 1);
		return;
	}
	if (stack_read(w, c, fp + v->cfg.fp_function, &fn) || !v8_heap_ptr(fn))
		return;
	look = i ? w->f.pc - 1 : w->f.pc; /* a return address may be just past the code */
	ent = &v->fns[v8_fn_slot(fn)];
	hit = ent->fn == fn && ent->tgid == w->tgid;
	cl->interp = false;
	/* a frame in the entry's Code is compiled: its interpreter slots are not read */
	if (!hit || !v8_in_code(v, ent, look)) {
		/* an interpreted frame's slots: a Smi bytecode offset (not 0), a BytecodeArray */
		cl->interp = !stack_read(w, c, fp + v->cfg.fp_bytecode_offset, &slot) &&
			    !(slot & 1) &&
			    !stack_read(w, c, fp + v->cfg.fp_bytecode_array, &cl->bytecode) &&
			    v8_heap_ptr(cl->bytecode) &&
			    (cl->bc_off = (__u32)((__s64)slot >> (v->cfg.smi_shift & 63))) != 0;
		/*
		 * a frame neither interpreted nor in the entry's Code: its
		 * Code may have been replaced since (tiered up): read again,
		 * unless this pc was found outside the Code read for it
		 * within the walk's second (OSR code, a leaf in a builtin:
		 * a read a sample, 2 user reads of 0.35 us and more)
		 */
		if (!cl->interp && (ent->outside != look || ent->outside_now != w->now))
			hit = false;
	}
	if (!hit) {
		if (v8_walk_fn_read(v, w, v8_fn_slot(fn), fn, look))
			goto not_function;
		fresh = true;
	}
	if (v->n >= V8_MAX_FRAMES) {
		v->stop = BPFPROF_STAT_V8_LIMIT;
		return;
	}
	v8_classify(w, c, v, ent, look, i, cl);
	v->cached += !fresh; /* counted at v8_end: a stat_inc is a map lookup */
	idx = 2 * (__u64)v->n;
	barrier_var(idx);
	if (idx > 2 * V8_MAX_FRAMES - 2)
		return;
	v->frames[idx] = cl->obj;
	/* a leaf in an Ignition handler (or in what else is not the function's code) stays */
	if (i == 0 && (cl->kind == BPFPROF_V8_INTERPRETED || cl->kind == BPFPROF_V8_FUNCTION))
		cl->after = BPFPROF_V8_AFTER;
	v->frames[idx + 1] = BPFPROF_V8_WORD1(cl->off, cl->check, i, cl->kind) | cl->after;
	v->n++;
	v->last_fp = fp;
	return;
not_function:
	stat_add_here(BPFPROF_STAT_V8_NOT_FUNCTION, 1); /* inline, as v8_fn_read's */
}

/*
 * The common frame, inline in the walk's step (unwind.bpf.h's
 * unwind_walk_no_row): a caller's frame (step i > 0) whose function the
 * per-CPU cache holds with a Code that holds its return address: a
 * compiled frame, recorded as v8_frame would record it, without the call
 * to v8_walk_frame (a BPF-to-BPF call costs about 28 ns where every return
 * goes through AMD's SRSO thunk; a node sample has about 30 such frames).
 * Returns 1 when the frame is done with (recorded, or no JavaScript frame
 * where v8_frame would find none either), 0 when it is v8_frame's.
 */
static __always_inline int v8_frame_fast(struct walk *w, struct ustack_chunk *c, __u32 slot,
					 __u32 i)
{
	__u64 fp = w->f.bp, marker, fn, look, idx, kind;
	struct v8_walk *v;
	struct v8_fn *ent;

	if (COMPAT_WALK_BY_TAIL_CALLS || !interp_walk_on(BPFPROF_WALK_V8))
		return 1;
	v = bpf_map_lookup_elem(&v8_walk_state, &slot);
	if (!v || !v->on || v->stop)
		return 1;
	if (!fp || (fp & 7) || arch_kernel_addr(fp) || fp + v->cfg.fp_low < w->f.sp)
		return 1;
	/* the leaf, a frame met again, a full record: v8_frame's cases */
	if (i == 0 || fp == v->last_fp || v->n >= V8_MAX_FRAMES)
		return 0;
	if (stack_read(w, c, fp + v->cfg.fp_marker, &marker) || !(marker & 1))
		return 0; /* a typed frame is counted there */
	if (stack_read(w, c, fp + v->cfg.fp_function, &fn) || !v8_heap_ptr(fn))
		return 1;
	look = w->f.pc - 1;
	ent = &v->fns[v8_fn_slot(fn)];
	if (ent->fn != fn || ent->tgid != w->tgid || !v8_in_code(v, ent, look))
		return 0;
	kind = ent->ckind == v->cfg.kind_baseline ? BPFPROF_V8_BASELINE : BPFPROF_V8_OPTIMIZED;
	idx = 2 * (__u64)v->n;
	barrier_var(idx);
	if (idx > 2 * V8_MAX_FRAMES - 2)
		return 0;
	v->frames[idx] = kind == BPFPROF_V8_BASELINE ? ent->shared : ent->code;
	v->frames[idx + 1] = BPFPROF_V8_WORD1(w->f.pc - ent->start,
					      BPFPROF_V8_CODE_CHECK(ent->size, ent->ckind), i, kind);
	v->n++;
	v->cached++;
	v->last_fp = fp;
	return 1;
}

#if !COMPAT_WALK_BY_TAIL_CALLS
/*
 * v8_frame as a global function (unwind.bpf.h's unwind_walk_no_row): step
 * i of the walk in slot, whose state and stack copy the step passes (it
 * has them: no look-ups; the verifier takes each pointer as memory of its
 * type's size that may be NULL)
 */
__noinline int v8_walk_frame(struct walk *w, struct ustack_chunk *c, __u32 slot, __u32 i)
{
	struct v8_walk *v = bpf_map_lookup_elem(&v8_walk_state, &slot);

	if (!v || !v->on || v->stop || !w || !c)
		return 0;
	if (i && bench_v8_frame_skip())
		return 0;
	v8_frame(w, c, v, i);
	return 0;
}
#endif

/*
 * The native walk of record e (nk kernel, nu user addresses) is over: the
 * JavaScript frames it met go after the user addresses, with why they
 * ended in e->py_stop; counted. Nothing for another process's record.
 */
static __always_inline void v8_end(struct bpfprof_sample *e, __u64 nk, __u64 nu, __u32 tgid)
{
	struct v8_walk *v;
	__u64 base, n;
	__u32 stop;

	if (COMPAT_WALK_BY_TAIL_CALLS || !interp_walk_on(BPFPROF_WALK_V8))
		return;
	v = v8_state();
	if (!v || !v->on || v->tgid != tgid || v->time_ns != e->time_ns)
		return;
	v->on = 0;
	if (e->nr_py)
		return; /* a process has one interpreter */
	if (!v->n) {
		e->py_stop = BPFPROF_STAT_V8_NONE;
		stat_inc(BPFPROF_STAT_V8_NONE);
		return;
	}
	/*
	 * One copy of all the frames' words, not a bpf_loop step a frame (two
	 * map lookups each): e->ips has room for 2 * V8_MAX_FRAMES words past
	 * MAX_IPS
	 */
	base = nk + nu;
	n = v->n;
	if (n > V8_MAX_FRAMES)
		n = V8_MAX_FRAMES;
	barrier_var(base);
	barrier_var(n);
	if (base > MAX_IPS || n > V8_MAX_FRAMES ||
	    bpf_probe_read_kernel(&e->ips[base], 16 * n, v->frames))
		return;
	stop = v->stop ? v->stop : BPFPROF_STAT_V8_END;
	e->nr_py = n;
	e->py_stop = stop;
	stat_inc(stop);
	stat_add(BPFPROF_STAT_V8_FRAMES, e->nr_py);
	stat_add(BPFPROF_STAT_V8_CACHED, v->cached);
}

#if !COMPAT_WALK_BY_TAIL_CALLS
/*
 * v8_end as a global function (walk.bpf.h's dispatcher), verified once on
 * its own: the record is this CPU's slot's (scratch)
 */
__noinline int v8_walk_end(__u64 nk, __u64 nu, __u32 tgid)
{
	__u32 slot = cur_slot();
	struct bpfprof_sample *e = bpf_map_lookup_elem(&scratch, &slot);

	if (e)
		v8_end(e, nk, nu, tgid);
	return 0;
}
#endif

#endif /* BPFPROF_V8_BPF_H */

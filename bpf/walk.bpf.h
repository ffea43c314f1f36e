/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * A record's user walk, the same for every hook (a sample, an off-CPU
 * block's return to user mode): the native walk (unwind.bpf.h), then the
 * interpreter dispatcher, which hands the record to the unwinder of its
 * process's interpreter (python.bpf.h), or puts in it the frames that the
 * native walk met: HotSpot's, stepped by it (hotspot.bpf.h), and V8's,
 * looked at on each native frame (v8.bpf.h). Where the kernel has bpf_loop
 * the walks run in the hook's own program; the legacy variant's go on by
 * tail calls (COMPAT_WALK_BY_TAIL_CALLS), a bounded number of frames a
 * program, into the hook's walk programs (profile.bpf.c: tail calls stay
 * among programs of one type and hook).
 */
#ifndef BPFPROF_WALK_BPF_H
#define BPFPROF_WALK_BPF_H

#include "state.bpf.h"
#include "unwind.bpf.h"
#include "python.bpf.h"
#include "hotspot.bpf.h"
#include "v8.bpf.h"

/* The hooks whose records are walked; each has its own tail-call programs */
enum walk_hook {
	HOOK_SAMPLE, /* on_sample: perf_event */
	HOOK_SYS_EXIT, /* an off-CPU block at sys_exit: tp_btf/sys_exit */
};

/* The interpreters' unwinders: their slots in a hook's interpreter program array */
enum interp {
	INTERP_PYTHON = 0,
	INTERP_NR,
};

/*
 * Tail calls (COMPAT_WALK_BY_TAIL_CALLS) of each hook: the native walk's
 * next frames (walk_jmp_*, slot 0: walk_sample, walk_sys_exit), and the
 * interpreters' unwinders (py_jmp_*, by enum interp: py_walk_sample,
 * py_walk_sys_exit). User space fills them after load.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} walk_jmp_sample SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, INTERP_NR);
	__type(key, __u32);
	__type(value, __u32);
} py_jmp_sample SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, INTERP_NR);
	__type(key, __u32);
	__type(value, __u32);
} py_jmp_sys_exit SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} walk_jmp_sys_exit SEC(".maps");

#define walk_jmp(hook) \
	((hook) == HOOK_SAMPLE ? (void *)&walk_jmp_sample : (void *)&walk_jmp_sys_exit)
#define interp_jmp(hook) ((hook) == HOOK_SAMPLE ? (void *)&py_jmp_sample : (void *)&py_jmp_sys_exit)

/*
 * Whether the walk's process (tgid; the sample at time_ns) is a JVM's,
 * node's: the native walk calls their per-frame hooks only then (struct
 * walk's hotspot, v8), and V8's walk state is set up here, once a walk
 */
static __always_inline void walk_interps(__u32 tgid, __u64 time_ns)
{
#if !BPFPROF_LEGACY
	__u32 slot = cur_slot(), kinds = 0;
	struct walk *w = bpf_map_lookup_elem(&walk_state, &slot);
	__u64 gen = *(volatile __u64 *)&proc_maps_gen;
	struct proc_reg *pc = bpf_map_lookup_elem(&proc_reg_cache, &slot);

	if (!w || !interp_walks)
		return;
	/* the process's kinds from the CPU's entry walk_begin made, else by look-ups */
	if (pc && pc->tgid == tgid && pc->gen == gen &&
	    pc->walks == (interp_walks | PROC_KINDS_KNOWN)) {
		kinds = pc->kinds;
	} else {
		/* a load without an interpreter's unwinder skips its hash look-up */
		if (interp_walk_on(BPFPROF_WALK_PYTHON) && bpf_map_lookup_elem(&py_procs, &tgid))
			kinds |= BPFPROF_WALK_PYTHON;
		if (interp_walk_on(BPFPROF_WALK_HOTSPOT) && bpf_map_lookup_elem(&hs_procs, &tgid))
			kinds |= BPFPROF_WALK_HOTSPOT;
		if (interp_walk_on(BPFPROF_WALK_V8) && bpf_map_lookup_elem(&v8_procs, &tgid))
			kinds |= BPFPROF_WALK_V8;
		/* gen read before the look-ups: a write since makes the entry stale */
		if (pc && pc->tgid == tgid && pc->gen == gen) {
			pc->kinds = kinds;
			pc->walks = interp_walks | PROC_KINDS_KNOWN;
		}
	}
	w->py = !!(kinds & BPFPROF_WALK_PYTHON);
	w->hotspot = !!(kinds & BPFPROF_WALK_HOTSPOT);
	/* the global function's call (about 28 ns on SRSO hosts) only for node */
	w->v8 = (kinds & BPFPROF_WALK_V8) && v8_walk_begin(tgid, time_ns) > 0;
#endif
}

/* walk_interps' finding for V8 (v8), else for HotSpot */
static __always_inline bool walk_interp(bool v8)
{
	__u32 slot = cur_slot();
	struct walk *w = bpf_map_lookup_elem(&walk_state, &slot);

	return w && (v8 ? w->v8 : w->hotspot);
}

/*
 * The interpreter dispatcher: after the native walk of record e (nk kernel
 * addresses, process tgid), the unwinder of the process's interpreter, if
 * it has one and the sample is not going out as a stack copy. By tail call
 * (it returns only where there is no unwinder to run, or the call failed),
 * else in this program. Another interpreter adds its map lookup and slot
 * here and a file of its own beside python.bpf.h.
 */
static __always_inline void interp_walk(void *ctx, enum walk_hook hook, struct bpfprof_sample *e,
					__u64 nk, __u32 tgid)
{
	if (COMPAT_WALK_BY_TAIL_CALLS) {
		if (!walk_copy())
			hotspot_end(e, nk, walk_nu());
		if (!walk_copy() && bpf_map_lookup_elem(&py_procs, &tgid))
			bpf_tail_call(ctx, interp_jmp(hook), INTERP_PYTHON);
		return;
	}
	if (!walk_copy() && py_begin(e, nk, walk_nu(), tgid))
		for_each_step(PY_STEPS, py_step, NULL);
	py_end();
#if !BPFPROF_LEGACY
	/*
	 * HotSpot's frames were stepped in the native walk, V8's found during it
	 * (v8_frame): they join the record. Global functions, which the verifier
	 * checks once rather than in each of this program's states here
	 */
	if (!walk_copy() && walk_interp(false))
		hotspot_walk_end(nk, walk_nu());
	if (!walk_copy() && walk_interp(true)) {
		bench_hook_time(15, false);
		v8_walk_end(nk, walk_nu(), tgid);
		bench_hook_time(15, true);
	}
#endif
}

/*
 * The user walk of record e (nk kernel addresses, process tgid) in this
 * CPU's slot, begun by walk_begin: the native walk, then the interpreter's.
 * By tail calls it returns only if the first one fails (not set up): the
 * record then has its leaf only. The record's end is the caller's.
 */
static __always_inline void stack_walk(void *ctx, enum walk_hook hook, struct bpfprof_sample *e,
				       __u64 nk, __u32 tgid)
{
	struct walk_env env = {};

	if (COMPAT_WALK_BY_TAIL_CALLS) {
		bpf_tail_call(ctx, walk_jmp(hook), 0);
		return;
	}
	env.slot = cur_slot();
	walk_interps(tgid, e->time_ns);
	bench_walk_time_begin();
	/* the steps' maps looked up once, given to each callback on this stack */
	if (walk_env_get(&env))
		for_each_step(max_user_stack - 1, walk_steps, &env);
	bench_walk_time_end(walk_nu());
	bench_part(5);
	interp_walk(ctx, hook, e, nk, tgid);
}

#endif /* BPFPROF_WALK_BPF_H */

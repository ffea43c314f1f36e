/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The Python unwinder, reached from the interpreter dispatcher (walk.bpf.h)
 * after a record's native walk: for a sample of a process in `py_procs`
 * whose native walk went through CPython's eval loop, the sampled thread's
 * PyThreadState is found through the interpreter's TSS key
 * (_PyRuntime.autoTSSkey, then the thread's glibc pthread-specific slot at
 * the TLS base + tls_specific + key * 16 + 8), which also holds while the
 * thread runs C code with the GIL released, and checked (its thread_id is
 * pthread_self(), the TLS base). Its frame chain is then followed from the
 * current frame through `previous`, and each frame's code object address
 * and instruction go after the sample's user addresses
 * (include/bpfprof_abi.h, struct bpfprof_sample), newest first, at most
 * BPFPROF_MAX_PY_FRAMES, with the oldest frame of each eval-loop activation
 * marked so that user space joins each activation to its native
 * _PyEval_EvalFrameDefault frame. Offsets are per process, from user space
 * (struct bpfprof_py_proc, user/capture/py_code.c); the layouts are
 * CPython's Include/cpython/pystate.h (PyThreadState), Include/internal/
 * pycore_frame.h (_PyInterpreterFrame, 3.11+), Include/cpython/frameobject.h
 * (PyFrameObject, up to 3.10), Include/cpython/code.h (PyCodeObject),
 * Include/internal/pycore_runtime.h (_PyRuntime.autoTSSkey) and
 * Include/cpython/pythread.h (Py_tss_t), and glibc's nptl/descr.h (struct
 * pthread's specific_1stblock).
 *
 * Every value read is the process's to forge: pointers are checked for
 * alignment and user range, a code object must have PyCode_Type as its type,
 * the chain is bounded by the step count and stops at a frame that is its own
 * predecessor; user space validates what the words point to.
 *
 * A frame costs two user reads (the frame, the code object's head), each one
 * copy of BPFPROF_PY_READ bytes into the per-CPU state, read at the
 * version's offsets (bounded there).
 */
#ifndef BPFPROF_PYTHON_BPF_H
#define BPFPROF_PYTHON_BPF_H

#include "state.bpf.h"
#include "interp.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, COMPAT_PERF_HASH_FLAGS); /* allocated as entries come: start-up */
	__uint(max_entries, BPFPROF_MAX_PY_PROCS);
	__type(key, __u32); /* tgid */
	__type(value, struct bpfprof_py_proc);
} py_procs SEC(".maps");

/* The thread state's bytes read: every PyThreadState offset used is below */
#define PY_TS_READ 192
/* Steps of a walk: frames, and the 3.12+ shims between activations */
#define PY_STEPS (BPFPROF_MAX_PY_FRAMES + 64)
#define PY_IPS_END (MAX_IPS + 2 * BPFPROF_MAX_PY_FRAMES)

/* A Python walk's state between steps, in a map value (see struct walk) */
struct py_walk {
	struct bpfprof_py_proc cfg; /* the process's, copied at the walk's start */
	__u64 frame; /* the next frame to read; 0: the chain's end */
	__u64 base; /* e->ips index of the first Python word */
	__u64 nk, nu; /* the sample's kernel and user addresses */
	__u32 n; /* frames recorded */
	__u32 stop; /* enum bpfprof_stat of the end; 0 while it goes on */
	__u32 steps; /* the legacy variant's walk goes on across tail calls */
	__u8 walking; /* frames are being followed */
	__u8 begun; /* py_begin ran for this sample (legacy: its first tail call) */
	__u8 found; /* an eval-loop address is among the user addresses */
	__u8 pad;
	__u8 frame_buf[BPFPROF_PY_READ];
	__u8 code_buf[BPFPROF_PY_READ];
	__u8 ts_buf[PY_TS_READ];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, WALK_SLOTS);
	__type(key, __u32);
	__type(value, struct py_walk);
} py_walk_state SEC(".maps");

/* The walk state and record of the walk that runs on this CPU (state.bpf.h, walk_slot) */
#define py_state()                                                              \
	({                                                                      \
		__u32 __slot = cur_slot();                                      \
		(struct py_walk *)bpf_map_lookup_elem(&py_walk_state, &__slot); \
	})
#define py_record()                                                              \
	({                                                                       \
		__u32 __slot = cur_slot();                                       \
		(struct bpfprof_sample *)bpf_map_lookup_elem(&scratch, &__slot); \
	})

/* The little-endian fields at byte off of a buffer read from the process; 0 past its end */
static __always_inline __u64 py_u64(const __u8 *buf, __u32 off, __u32 size)
{
	if (off > size - 8)
		return 0;
	return *(const __u64 *)(buf + off);
}

static __always_inline __u32 py_u32(const __u8 *buf, __u32 off, __u32 size)
{
	if (off > size - 4)
		return 0;
	return *(const __u32 *)(buf + off);
}

static __always_inline __u8 py_u8(const __u8 *buf, __u32 off, __u32 size)
{
	if (off > size - 1)
		return 0;
	return buf[off];
}

static __always_inline bool py_user_ptr(__u64 p)
{
	return p && !(p & 7) && !arch_kernel_addr(p);
}

/*
 * Whether the walk's process is a Python one, as walk_interps found it
 * (struct walk's py, a line the native walk has just used); the legacy
 * variant, which has no such finding, looks py_procs up in py_begin.
 * Only then are the Python walk's state and counters touched: at 999 Hz
 * the state's line and its map's were cold at every sample of every
 * process (docs/BENCHMARKS.md, issue 34 part 6)
 */
static __always_inline bool py_process(void)
{
#if BPFPROF_LEGACY
	return true;
#else
	__u32 slot = cur_slot();
	struct walk *ws = bpf_map_lookup_elem(&walk_state, &slot);

	return ws && ws->py;
#endif
}

/*
 * The sampled thread's walk starts over: nothing read, nothing recorded
 * (the legacy variant's walk programs, before the tail call to the
 * Python walk; elsewhere py_begin and py_end run in one program)
 */
static __always_inline void py_reset(void)
{
	struct py_walk *w = py_state();

	if (w) {
		w->walking = 0;
		w->begun = 0;
		w->n = 0;
		w->stop = 0;
	}
}

/* One user address: in the eval loop? (bpf_loop callback or loop body) */
step_fn py_eval_step(__u32 i, void *data)
{
	struct bpfprof_sample *e;
	struct py_walk *w;
	__u64 idx, ip;

	w = py_state();
	e = py_record();
	if (!w || !e || i >= w->nu)
		return 1;
	idx = w->nk + i;
	if (idx >= MAX_IPS)
		return 1;
	ip = e->ips[idx] - (i > 0); /* a return address may be just past the function */
	if ((ip >= w->cfg.eval_start && ip < w->cfg.eval_end) ||
	    (ip >= w->cfg.cold_start && ip < w->cfg.cold_end)) {
		w->found = 1;
		return 1;
	}
	return 0;
}

static __always_inline void py_stop_early(struct bpfprof_sample *e, __u32 reason)
{
	e->py_stop = reason;
	stat_inc(reason);
}

/*
 * Begin the Python walk of sample e (nk kernel, nu user addresses, its
 * native walk done): returns true when there are frames to follow
 * (py_step), else false, with e->py_stop saying why when the process is a
 * Python one (0 otherwise: a non-Python process pays one hash lookup).
 */
static __always_inline bool py_begin(struct bpfprof_sample *e, __u64 nk, __u64 nu, __u32 tgid)
{
	struct bpfprof_py_proc *cfg;
	struct task_struct *task;
	struct py_walk *w;
	__u32 key;
	__u64 tls_base, tstate, frame, cframe;
	struct {
		__s32 initialized;
		__u32 key;
	} tss;

#if !BPFPROF_LEGACY
	/* another process's sample touches no Python state (py_process) */
	if (!interp_walk_on(BPFPROF_WALK_PYTHON) || !py_process())
		return false;
#endif
	w = py_state();
	if (!w)
		return false;
	w->begun = 1;
	w->walking = 0;
	w->found = 0;
	w->n = 0;
	w->stop = 0;
	w->steps = 0;
	e->nr_py = 0;
	e->py_stop = 0;
	if (!interp_walk_on(BPFPROF_WALK_PYTHON))
		return false;
	cfg = bpf_map_lookup_elem(&py_procs, &tgid);
	if (!cfg)
		return false;
	__builtin_memcpy(&w->cfg, cfg, sizeof(w->cfg));
	w->nk = nk;
	w->nu = nu;
	w->found = 0;
	for_each_step(BPFPROF_MAX_USER_STACK, py_eval_step, NULL);
	w = py_state();
	if (!w)
		return false;
	if (!w->found) {
		py_stop_early(e, BPFPROF_STAT_PY_NO_EVAL);
		return false;
	}
	stat_inc(BPFPROF_STAT_PY_WALKS);
	task = current_task();
	tls_base = arch_tls_base(task);
	if (bpf_probe_read_user(&tss, sizeof(tss), (const void *)w->cfg.tss) ||
	    tss.initialized != 1 || tss.key >= 32) {
		py_stop_early(e, BPFPROF_STAT_PY_NO_TSTATE);
		return false;
	}
	key = tss.key;
	if (bpf_probe_read_user(&tstate, sizeof(tstate),
				(const void *)(tls_base + w->cfg.tls_specific + key * 16 + 8)) ||
	    !py_user_ptr(tstate)) {
		py_stop_early(e, BPFPROF_STAT_PY_NO_TSTATE);
		return false;
	}
	if (bpf_probe_read_user(w->ts_buf, sizeof(w->ts_buf), (const void *)tstate)) {
		py_stop_early(e, BPFPROF_STAT_PY_READ_FAULT);
		return false;
	}
	/* another thread's state (a wrong glibc layout): no names rather than another thread's */
	if (py_u64(w->ts_buf, w->cfg.ts_thread_id, PY_TS_READ) != tls_base) {
		py_stop_early(e, BPFPROF_STAT_PY_NO_TSTATE);
		return false;
	}
	if (w->cfg.ts_cframe != BPFPROF_PY_NONE) {
		cframe = py_u64(w->ts_buf, w->cfg.ts_cframe, PY_TS_READ);
		if (!py_user_ptr(cframe) ||
		    bpf_probe_read_user(&frame, sizeof(frame),
					(const void *)(cframe + (w->cfg.ts_frame & 0xff)))) {
			py_stop_early(e, BPFPROF_STAT_PY_READ_FAULT);
			return false;
		}
	} else {
		frame = py_u64(w->ts_buf, w->cfg.ts_frame, PY_TS_READ);
	}
	w->frame = frame;
	w->base = nk + nu;
	w->walking = 1;
	return true;
}

static __always_inline long py_stop(struct py_walk *w, __u32 reason)
{
	w->stop = reason;
	w->walking = 0;
	return 1;
}

/* One frame of the chain; returns 1 to stop (w->stop says why). */
step_fn py_step(__u32 i, void *data)
{
	struct bpfprof_sample *e;
	struct py_walk *w;
	__u32 entry, csum;
	__u64 frame, code, prev, instr, off, idx, flag = 0;

	w = py_state();
	e = py_record();
	if (!w || !e || !w->walking)
		return 1;
	frame = w->frame;
	if (!frame)
		return py_stop(w, BPFPROF_STAT_PY_END);
	if (!py_user_ptr(frame))
		return py_stop(w, BPFPROF_STAT_PY_BAD);
	if (bpf_probe_read_user(w->frame_buf, sizeof(w->frame_buf), (const void *)frame))
		return py_stop(w, BPFPROF_STAT_PY_READ_FAULT);
	code = py_u64(w->frame_buf, w->cfg.f_code, BPFPROF_PY_READ);
	prev = py_u64(w->frame_buf, w->cfg.f_previous, BPFPROF_PY_READ);
	entry = py_u8(w->frame_buf, w->cfg.f_entry, BPFPROF_PY_READ);
	if (prev == frame)
		return py_stop(w, BPFPROF_STAT_PY_BAD);
	w->frame = prev;
	if (w->cfg.entry == BPFPROF_PY_ENTRY_SHIM && entry == 3) {
		/* the C stack's shim below an activation: the frame before it was the activation's first */
		idx = w->base + 2 * (__u64)w->n - 2;
		if (w->n && idx < PY_IPS_END)
			e->ips[idx] |= BPFPROF_PY_ACT_END;
		return 0;
	}
	if (!py_user_ptr(code))
		return py_stop(w, BPFPROF_STAT_PY_BAD);
	if (bpf_probe_read_user(w->code_buf, sizeof(w->code_buf), (const void *)code))
		return py_stop(w, BPFPROF_STAT_PY_READ_FAULT);
	if (py_u64(w->code_buf, 8, BPFPROF_PY_READ) != w->cfg.code_type) {
		/* 3.13's f_executable may be another object: no Python code to name */
		if (w->cfg.version >= 0x030d)
			return 0;
		return py_stop(w, BPFPROF_STAT_PY_BAD);
	}
	if (w->n >= BPFPROF_MAX_PY_FRAMES)
		return py_stop(w, BPFPROF_STAT_PY_LIMIT);
	if (w->cfg.lasti) {
		__s32 lasti = (__s32)py_u32(w->frame_buf, w->cfg.f_instr, BPFPROF_PY_READ);

		off = (__u32)((w->cfg.version >= 0x030a ? lasti * 2 : lasti) +
			      (__s32)BPFPROF_PY_LASTI_BIAS);
	} else {
		instr = py_u64(w->frame_buf, w->cfg.f_instr, BPFPROF_PY_READ);
		off = (__u32)(instr - code);
	}
	csum = BPFPROF_PY_CSUM(py_u32(w->code_buf, w->cfg.co_firstlineno, BPFPROF_PY_READ),
			       py_u32(w->code_buf, w->cfg.co_flags, BPFPROF_PY_READ),
			       py_u32(w->code_buf, w->cfg.co_argcount, BPFPROF_PY_READ));
	if (w->cfg.entry == BPFPROF_PY_ENTRY_EACH ||
	    (w->cfg.entry == BPFPROF_PY_ENTRY_FLAG && entry))
		flag = BPFPROF_PY_ACT_END;
	idx = w->base + 2 * (__u64)w->n;
	barrier_var(idx);
	if (idx > PY_IPS_END - 2)
		return py_stop(w, BPFPROF_STAT_PY_LIMIT);
	e->ips[idx] = code | flag;
	e->ips[idx + 1] = off | ((__u64)csum << 32);
	w->n++;
	return 0;
}

/* The walk's end: its frames and reason into the record, counted. */
static __always_inline void py_end(void)
{
	struct bpfprof_sample *e;
	struct py_walk *w;
	__u32 stop;

	if (!py_process())
		return; /* py_begin touched nothing */
	w = py_state();
	e = py_record();
	if (!w || !e || !w->begun)
		return;
	w->begun = 0;
	if (e->py_stop)
		return; /* ended in py_begin, counted there */
	if (!w->found)
		return; /* not a Python process */
	stop = w->stop ? w->stop : BPFPROF_STAT_PY_LIMIT;
	w->walking = 0;
	e->nr_py = w->n > BPFPROF_MAX_PY_FRAMES ? BPFPROF_MAX_PY_FRAMES : w->n;
	e->py_stop = stop;
	stat_inc(stop);
	stat_add(BPFPROF_STAT_PY_FRAMES, e->nr_py);
}

/* The walk by tail calls (COMPAT_WALK_BY_TAIL_CALLS): PY_FRAMES_PER_PROG steps a program, tail-calling itself */
#define PY_FRAMES_PER_PROG 16
static __always_inline bool py_some(void)
{
	struct py_walk *w;
	__u32 k;

	for (k = 0; k < PY_FRAMES_PER_PROG; k++) {
		w = py_state();
		if (!w || !w->walking || w->steps >= PY_STEPS)
			return true;
		if (py_step(w->steps, NULL))
			return true;
		w = py_state();
		if (!w)
			return true;
		w->steps++;
	}
	return false;
}

#endif /* BPFPROF_PYTHON_BPF_H */

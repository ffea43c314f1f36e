/* SPDX-License-Identifier: MIT */
/*
 * Interpreters in user space: each runtime whose frames the BPF side walks
 * beside the native ones (CPython; HotSpot, whose frames BPF steps inside
 * the native walk; V8 to come) is one
 * implementation of struct interp_ops, as the OpenTelemetry eBPF profiler's
 * interpreter Loader (find an interpreter in a process's mappings) and
 * Instance (attach, symbolize, detach) do. A new interpreter plugs in as a
 * file of its own with its ops table (user/capture/interp_python.c is the
 * model), one enum interp_kind, and one line in user/capture/interp.c's
 * table; the BPF side's attach (session.c) gets one case.
 *
 * The registry (struct interps) runs every enabled implementation over each
 * process whose maps were (re)read (find: the aggregator's frames hook,
 * agg.h) and each sample of a process (merge), and keeps their counters for
 * the summary.
 */
#ifndef BPFPROF_INTERP_H
#define BPFPROF_INTERP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "bpfprof_abi.h"
#include "profile.h"
#include "unwind_step.h"

enum interp_kind {
	INTERP_PYTHON, /* CPython 3.8-3.13 (python_procs.h) */
	INTERP_HOTSPOT, /* HotSpot JVMs: Java frames walked and named (interp_hotspot.h) */
	INTERP_V8, /* V8: node and other embedders with v8dbg_ metadata (interp_v8.h) */
	INTERP_NR,
};

/*
 * Hand the BPF walk an interpreter's layout for process tgid (layout: that
 * kind's struct, e.g. struct bpfprof_py_proc), or take it away (NULL).
 * Returns 0 or -errno (-E2BIG: its BPF map is full). session__interp_attach
 * is the real one.
 */
typedef int (*interp_attach_fn)(void *ctx, enum interp_kind kind, uint32_t tgid,
				const void *layout);

/* What an implementation is given at its start */
struct interp_env {
	const char *proc_dir; /* "/proc" except in tests (borrowed) */
	interp_attach_fn attach; /* may be NULL: nothing handed to BPF (tests) */
	void *attach_ctx;
};

/*
 * One interpreter. Every op runs on the ring buffer reader's thread.
 */
struct interp_ops {
	const char *name; /* "Python", for messages */
	/* Start: the implementation's state into *state. 0 or -errno. */
	int (*new)(const struct interp_env *env, void **state);
	void (*free)(void *state);
	/*
	 * find + attach: process proc of p has had its maps (re)read: find the
	 * interpreter among its mappings (once per interpreter file and load
	 * address), hand BPF its layout, and give the process what its frames
	 * will need in p (Python: its region, profile_process.py_start).
	 * Returns the mappings added to p (0 or more), or -ENOMEM; anything
	 * else is warned about once, and the process is profiled natively.
	 */
	int (*find)(void *state, struct profile *p, uint32_t proc);
	/*
	 * merge: sample s of process proc: its recorded interpreter frames
	 * turned into frames of p, merged into the native user stack, into
	 * ips (room for BPFPROF_MAX_STACK + BPFPROF_MAX_PY_FRAMES + 1
	 * addresses) and *nr_user. Returns 1 when set, 0 when the record's own
	 * user stack stands (none of this interpreter's frames), or -ENOMEM.
	 */
	int (*merge)(void *state, struct profile *p, uint32_t proc, const struct bpfprof_sample *s,
		     uint64_t *ips, uint16_t *nr_user);
	/*
	 * copy_frames (optional): the interpreter frames the BPF walk's step
	 * hook would have recorded for a sample sent as a stack copy (the
	 * copy's walk: include/unwind_copies.h, unwind_copies_interp_fn).
	 * Returns the frames written into words (2 words each), 0: none.
	 */
	uint32_t (*copy_frames)(void *state, uint32_t pid, const struct unwind_step_frame *frames,
				uint32_t nr, const struct unwind_step_stack *stack, uint64_t *words,
				uint32_t max_frames, uint32_t *stop);
	/* forget: process pid has exited: its interpreter leaves BPF and the caches. */
	void (*forget)(void *state, uint32_t pid);
	/*
	 * Its counters (its own struct, stats_size bytes: struct python_stats,
	 * struct hotspot_stats) into out.
	 */
	void (*stats)(const void *state, void *out);
	size_t stats_size;
};

/* CPython's implementation (user/capture/interp_python.c) */
extern const struct interp_ops interp_python;
/* HotSpot's (user/capture/interp_hotspot.c; its counters: struct hotspot_stats) */
extern const struct interp_ops interp_hotspot;
/* V8's (user/capture/interp_v8.c) */
extern const struct interp_ops interp_v8;

struct interps;

/*
 * The registry, with the implementations enabled (bit (1 << kind) of
 * enabled: --no-python clears INTERP_PYTHON's, --no-java INTERP_HOTSPOT's) started with env (copied).
 * Returns NULL with errno (ENOMEM, or an implementation's start error).
 */
struct interps *interps__new(const struct interp_env *env, uint32_t enabled);
void interps__free(struct interps *r);

/* Whether kind is enabled and started. */
bool interps__has(const struct interps *r, enum interp_kind kind);

/*
 * find for every implementation (struct interp_ops). Returns the mappings
 * they added to p, summed, or -ENOMEM.
 */
int interps__find(struct interps *r, struct profile *p, uint32_t proc);
/*
 * find for the implementations of kinds only (bit 1 << kind), as above:
 * the process table's early find at a process's notice, on a profile of
 * that process alone (an interpreter found then is known to the later
 * find on the run's profile, which only adds its region).
 */
int interps__find_kinds(struct interps *r, uint32_t kinds, struct profile *p, uint32_t proc);

/* merge: the first implementation that merges frames into the sample (1), else 0; -ENOMEM. */
int interps__merge(struct interps *r, struct profile *p, uint32_t proc,
		   const struct bpfprof_sample *s, uint64_t *ips, uint16_t *nr_user);

/*
 * copy_frames of the first implementation that has frames for the copy
 * (an unwind_copies_interp_fn; ctx: the registry), else 0.
 */
uint32_t interps__copy_frames(void *ctx, uint32_t pid, const struct unwind_step_frame *frames,
			      uint32_t nr, const struct unwind_step_stack *stack, uint64_t *words,
			      uint32_t max_frames, uint32_t *stop);
/* forget pid in every implementation. */
void interps__forget(struct interps *r, uint32_t pid);

/*
 * kind's counters into out (size bytes: its ops' stats_size). Returns 0, or
 * -ENOENT when kind is not enabled (out untouched), -EINVAL for a wrong size.
 */
int interps__stats(const struct interps *r, enum interp_kind kind, void *out, size_t size);

/*
 * Hand every sample of agg's processes to the registry: its frames hook
 * (agg__set_frames: maps → interps__find, merge → interps__merge). r NULL,
 * or none enabled: no hook.
 */
struct agg;
void interps__hook(struct interps *r, struct agg *agg);

#endif /* BPFPROF_INTERP_H */

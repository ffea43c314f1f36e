/* SPDX-License-Identifier: MIT */
/*
 * Python processes (CPython 3.8 to 3.13, x86-64, glibc): found from their
 * mappings (python3.N, libpython3.N*.so), described to the BPF walk
 * (struct bpfprof_py_proc), and their sampled Python frames turned into
 * frames of the profile (include/profile.h, struct profile_pyfunc): each
 * eval-loop activation's Python frames go leafward of its native
 * _PyEval_EvalFrameDefault frame, so a stack reads main -> Py_RunMain ->
 * _PyEval_EvalFrameDefault -> <module> -> handle -> json.loads -> native leaf.
 *
 * Discovery reads the interpreter's ELF symbols (_PyRuntime, Py_Version,
 * _PyEval_EvalFrameDefault and its .cold part where .symtab has it,
 * PyCode_Type, PyUnicode_Type, PyBytes_Type) and checks the version's
 * layout (py_code.h) at run time against PyCode_Type's size and member
 * table, and on 3.13 against _Py_DebugOffsets' cookie; an unknown version or
 * layout is named in one warning and the process is profiled natively.
 * Code objects are read from /proc/PID/mem as their first sample arrives
 * (a short-lived process is still named), cached per process with the BPF
 * walk's check sum against a reused address.
 */
#ifndef BPFPROF_PYTHON_PROCS_H
#define BPFPROF_PYTHON_PROCS_H

#include <stdbool.h>
#include <stdint.h>
#include "bpfprof_abi.h"
#include "profile.h"

struct python_procs;

/* Install (cfg) or remove (NULL) the BPF walk's entry for tgid. Returns 0 or -errno. */
typedef int (*python_set_fn)(void *ctx, uint32_t tgid, const struct bpfprof_py_proc *cfg);

/* proc_dir: normally "/proc". Returns NULL with errno ENOMEM. */
struct python_procs *python_procs__new(const char *proc_dir, python_set_fn set, void *ctx);
void python_procs__free(struct python_procs *py);

/*
 * Process proc of p has had its maps (re)read: find its interpreter (once
 * per interpreter file and load address), tell the BPF walk, and give the
 * process its Python region in p (profile_process.py_start, a mapping) if
 * it has none in this profile. Returns 1 when that region was added, 0,
 * or -ENOMEM; anything else is
 * warned about once and leaves the process native.
 */
int python_procs__scan(struct python_procs *py, struct profile *p, uint32_t proc);

/*
 * The user stack of sample s of process proc with its Python frames merged
 * in, into out (room for BPFPROF_MAX_STACK + BPFPROF_MAX_PY_FRAMES + 1
 * addresses): Python frames become addresses of p's Python region,
 * reading code objects not seen yet. Returns 1 when out and *nr_user are
 * set, 0 when the record's own user stack stands (no Python frames), or
 * -ENOMEM.
 */
int python_procs__merge(struct python_procs *py, struct profile *p, uint32_t proc,
			const struct bpfprof_sample *s, uint64_t *out, uint16_t *nr_user);

/*
 * Process pid has exited: its interpreter leaves the BPF walk, its caches
 * and memory descriptor go (the sweep of exited processes does the same
 * once enough are walked). Unknown pids are ignored.
 */
void python_procs__forget(struct python_procs *py, uint32_t pid);

struct python_stats {
	uint64_t nr_procs; /* interpreters found, of supported versions */
	uint64_t nr_unsupported; /* processes left native: unknown version or layout */
	uint16_t versions[8]; /* distinct versions found (0x030b), the first 8 */
	uint64_t samples; /* samples of those processes */
	uint64_t with_frames; /* ... with Python frames */
	uint64_t no_eval; /* ... not in the eval loop (C code of a thread with no Python frame) */
	uint64_t no_tstate; /* ... whose thread had no Python thread state */
	uint64_t walk_failed; /* ... whose chain could not be read from BPF */
	uint64_t not_walked; /* ... before the BPF walk knew the process */
	uint64_t unsupported_samples; /* samples of processes left native */
	uint64_t frames; /* Python frames merged */
	uint64_t truncated; /* samples with more than BPFPROF_MAX_PY_FRAMES frames */
	uint64_t code_reads; /* code objects read */
	uint64_t code_read_failed; /* ... that could not be read or were malformed */
	uint64_t code_read_ns; /* time spent reading them */
	uint64_t frame_hits, frame_misses; /* (code, instruction) lookups */
};

void python_procs__stats(const struct python_procs *py, struct python_stats *st);

#endif /* BPFPROF_PYTHON_PROCS_H */

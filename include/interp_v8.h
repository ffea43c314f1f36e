/* SPDX-License-Identifier: MIT */
/*
 * V8 (node and other embedders) behind the interpreter interface
 * (include/interp.h): finds V8 in a process by the postmortem metadata its
 * binary or a mapped library exports (v8_metadata.h), once per file, and
 * says per process what it found; hands the BPF walk (bpf/v8.bpf.h) the
 * process's layout (struct bpfprof_v8_proc), and merges the JavaScript
 * frames it recorded into the native stack: each stands in for the native
 * frame it was found at, named (v8_names.h) as addresses of the process's
 * interpreter region (profile.h, "[js]"), one block a (function, file,
 * line), so that every writer names it (docs/INTERPRETERS.md, "V8").
 */
#ifndef BPFPROF_INTERP_V8_H
#define BPFPROF_INTERP_V8_H

#include <stdint.h>

/* One process's samples and what became of their JavaScript frames */
struct v8_proc_stats {
	uint32_t pid;
	char comm[16];
	uint64_t samples; /* samples of the process (with V8 found) */
	uint64_t with_js; /* ... with JavaScript frames named */
	uint64_t frames; /* JavaScript frames merged (inlined ones included) */
	uint64_t inlined; /* ... of them inlined functions of an optimized frame */
	uint64_t native; /* ... walked, no JavaScript frame on the stack (native code, idle) */
	uint64_t not_walked; /* ... not walked for JavaScript (a stack copy; the legacy variant;
				before the process was handed to BPF) */
	uint64_t unnamed; /* ... whose frames were all refused (objects that did not check) */
	uint64_t truncated; /* ... with more than BPFPROF_MAX_PY_FRAMES JavaScript frames */
	uint64_t unnamed_frames; /* frames refused (native frame kept) */
	uint64_t by_pc; /* native frames named by their pc in compiled code seen before */
	uint64_t osr; /* leaves in JIT code not JSFunction.code's: the frame's (OSR) code */
	uint64_t no_line; /* frames named without a line */
};

#define V8_STATS_PROCS 16

/* Its counters (interps__stats(INTERP_V8)), processes and files since the start */
struct v8_stats {
	uint64_t nr_procs; /* processes with a usable V8 found */
	uint64_t nr_bad; /* processes whose V8 metadata is unusable (warned) */
	uint64_t nr_unreadable; /* node-named files that could not be opened or read (warned) */
	uint64_t nr_no_metadata; /* node-named files without v8dbg_ symbols (warned) */
	uint64_t nr_files; /* executable files read for metadata (each once) */
	uint64_t nr_v8_files; /* of which with usable V8 metadata */
	uint64_t nr_attached; /* processes handed to the BPF walk */
	uint64_t nr_attach_failed; /* ... that could not be (warned) */
	/* naming, all processes: frames asked, cache hits, functions and scripts read, time */
	uint64_t frames, frame_hits, funcs, scripts, read_ns;
	/* the first V8_STATS_PROCS processes with samples */
	struct v8_proc_stats procs[V8_STATS_PROCS];
	uint32_t nr_proc_stats;
};

#endif /* BPFPROF_INTERP_V8_H */

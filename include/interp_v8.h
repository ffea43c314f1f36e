/* SPDX-License-Identifier: MIT */
/*
 * V8 (node and other embedders) behind the interpreter interface
 * (include/interp.h): finds V8 in a process by the postmortem metadata its
 * binary or a mapped library exports (v8_metadata.h), once per file, and
 * says per process what it found. The BPF walk of JavaScript frames and
 * their names come next (docs/INTERPRETERS.md, "V8"): attach and merge do
 * nothing yet, so a node process is profiled as before.
 */
#ifndef BPFPROF_INTERP_V8_H
#define BPFPROF_INTERP_V8_H

#include <stdint.h>

/* Its counters (interps__stats(INTERP_V8)), processes and files since the start */
struct v8_stats {
	uint64_t nr_procs; /* processes with a usable V8 found */
	uint64_t nr_bad; /* processes whose V8 metadata is unusable (warned) */
	uint64_t nr_unreadable; /* node-named files that could not be opened or read (warned) */
	uint64_t nr_no_metadata; /* node-named files without v8dbg_ symbols (warned) */
	uint64_t nr_files; /* executable files read for metadata (each once) */
	uint64_t nr_v8_files; /* of which with usable V8 metadata */
};

#endif /* BPFPROF_INTERP_V8_H */

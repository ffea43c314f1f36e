/* SPDX-License-Identifier: MIT */
/*
 * Names of V8 JavaScript frames, read from a node process's heap: the BPF
 * walk's two words of a frame (include/bpfprof_abi.h, struct
 * bpfprof_v8_proc) become the function's name (SharedFunctionInfo's name,
 * else the inferred name, as V8's SharedFunctionInfo::DebugName and its
 * stack traces and --perf-basic-prof print them), its script's name or URL,
 * and the line and column of the frame's position from the source-position
 * tables (v8_srcpos.h): the bytecode offset of an interpreted frame, the
 * code offset of a baseline frame (through its bytecode offset table) or
 * of an optimized one, whose inlined functions become frames of their own
 * (DeoptimizationData's inlining positions and literals).
 *
 * Layouts come from the build's metadata (v8_metadata.h); objects are read
 * through a reader the caller gives (/proc/PID/mem; byte fixtures in tests).
 * Everything read is hostile: every object's tag and instance type is
 * checked before its fields are used, strings (sequential one- and
 * two-byte, cons, sliced, thin) are bounded in length and depth and turned
 * into valid UTF-8, tables are bounds-checked. A frame that does not check
 * gives no name (the caller keeps the native frame).
 *
 * Results are cached per (function, offset, check) and functions per
 * SharedFunctionInfo address, the cached entry checked against the
 * object's fields at each new frame (an address the garbage collector has
 * given to another object); what was named stays named.
 */
#ifndef BPFPROF_V8_NAMES_H
#define BPFPROF_V8_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "v8_metadata.h"

/* Read len bytes of the process at addr into buf: 0, or -errno (not mapped, gone). */
typedef int (*v8_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

/* One frame's name; strings owned by the struct v8_names, valid until it is freed */
struct v8_name {
	const char *func; /* "(anonymous)" for a function with neither name nor inferred name */
	const char *file; /* script name or URL; "" when none (builtins' JavaScript, eval) */
	uint32_t line, col; /* from 1; 0: unknown */
};

struct v8_names_stats {
	uint64_t frames; /* frames asked for */
	uint64_t frame_hits; /* ... found in the cache */
	uint64_t funcs; /* functions (SharedFunctionInfo) read */
	uint64_t scripts; /* scripts whose line ends were read */
	uint64_t bad; /* frames refused: an object of the wrong type, unreadable, malformed */
	uint64_t no_line; /* frames named without a line */
	uint64_t inlined; /* frames of inlined functions added */
	uint64_t by_pc; /* frames named by their pc alone (v8_names__pc) */
	uint64_t script_retries; /* reads of a script's source tried again after one failed */
	uint64_t read_ns; /* time spent reading the process */
};

struct v8_names;

/*
 * A namer for one process with V8 build md (copied), reading through
 * read(ctx, ...). bytecode_sizes: V8's Bytecodes::kBytecodeSizes (3 rows
 * of nr_bytecodes bytes; copied), for baseline frames' lines; NULL: those
 * get their function without a line. NULL with errno ENOMEM.
 */
struct v8_names *v8_names__new(const struct v8_metadata *md, const uint8_t *bytecode_sizes,
			       size_t nr_bytecodes, v8_read_fn read, void *ctx);
void v8_names__free(struct v8_names *n);

/*
 * The names of the frame the BPF walk recorded as (w0, w1), innermost
 * first (an optimized frame's inlined functions, then the function),
 * into out (max entries, max ≥ 1); leaf: the frame's pc is not a return
 * address. Returns how many (≥ 1), 0 when the frame is not one of a
 * JavaScript function that checks, or -ENOMEM.
 */
int v8_names__frame(struct v8_names *n, uint64_t w0, uint64_t w1, bool leaf, struct v8_name *out,
		    size_t max);

/*
 * The names of native frame pc (a return address unless leaf) when it lies
 * in compiled code (baseline, optimized) that a frame named before was in,
 * and that code is still there: a frame the BPF walk could not record (the
 * leaf in a callee's prologue or epilogue, whose frame is not built yet;
 * a stack walked from a copy in user space). Returns as
 * v8_names__frame; 0: not known code.
 */
int v8_names__pc(struct v8_names *n, uint64_t pc, bool leaf, struct v8_name *out, size_t max);

void v8_names__stats(const struct v8_names *n, struct v8_names_stats *st);

#endif /* BPFPROF_V8_NAMES_H */

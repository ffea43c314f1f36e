/* SPDX-License-Identifier: MIT */
/*
 * Names of Python frames: the addresses of a process's Python region
 * (profile_process.py_start, python_procs.h) as functions, files and lines
 * for the text outputs and pprof, and as a JIT table (sym_jitdump.h) for the
 * images that name them in .prof and perf.data (jit_elf.h).
 */
#ifndef BPFPROF_SYM_PYTHON_H
#define BPFPROF_SYM_PYTHON_H

#include "profile.h"
#include "sym_jitdump.h"

/* The DSO name Python frames get */
#define SYM_PYTHON_DSO "[python]"
/* ... and V8's JavaScript frames, which share the region (profile_process.py_dso) */
#define SYM_JS_DSO "[js]"

/*
 * Name location l when it lies in its process's Python region: func
 * "qualname (file.py)" (the file's base name), src_func, src_file,
 * start_line and line, dso SYM_PYTHON_DSO, is_jit (folded `_[j]`). Returns
 * 1 when named, 0 when l is not a Python frame, or -ENOMEM.
 */
int sym_python__name(struct profile *p, struct profile_location *l);

/*
 * A new table of process proc's JIT code (jit, may be NULL) and its Python
 * functions, each "qualname (file.py)" over its block, for jit_elf__write.
 * NULL with errno ENOMEM, or ENOENT when there is nothing to name. Free
 * with jitdump__free.
 */
struct jit_table *sym_python__jit_table(const struct profile *p, uint32_t proc,
					const struct jit_table *jit);

#endif /* BPFPROF_SYM_PYTHON_H */

/* SPDX-License-Identifier: MIT */
/*
 * ELF images of JIT code, for the readers that name frames from files
 * (go tool pprof on .prof, perf report on perf.data), as perf inject --jit
 * does with its jitted-PID-N.so files (tools/perf/util/genelf.c). Each
 * anonymous executable mapping of a process that may hold JIT code (a
 * region) gets its own image, jitted-<pid>-<k>.so: the region's bytes sit
 * at file offset JIT_ELF_FIRST_OFFSET with virtual address == file offset,
 * so that a reader's "address - mapping start + mapping offset" lands on the
 * function's .symtab value (perf, pprof) and "address - mapping start + the
 * first PT_LOAD's address" on its DWARF range (go tool pprof, which ignores
 * the mapping offset: hence one image per region). Regions are planned
 * while sampling (perf.data names the images in MMAP2 records as mappings
 * appear); the images are written at the end, when the JIT files are read.
 */
#ifndef BPFPROF_JIT_ELF_H
#define BPFPROF_JIT_ELF_H

#include <stdbool.h>
#include <stdint.h>
#include "profile.h"
#include "sym_jitdump.h"

#define JIT_ELF_FIRST_OFFSET 0x1000ull /* after the ELF and program headers */
#define JIT_ELF_MAX_MAPS 1000 /* images per process */
#define JIT_ELF_MAX_REGIONS (256ull << 20) /* bytes of all images of a process */

/* Memory that may hold JIT code: executable, and no file behind it (anonymous, memfd). */
bool jit_elf__anon_code(const struct profile_mapping *m);

/*
 * Give every anonymous executable mapping of process `proc` that has none
 * yet an image "<dir>/jitted-<pid>-<k>.so" (dir absolute; path interned in
 * p), as an entry of p->procs[proc].jit_maps. Past JIT_ELF_MAX_REGIONS
 * bytes or JIT_ELF_MAX_MAPS images, mappings are left out with a warning.
 * Returns the number of images added, or -ENOMEM.
 */
int jit_elf__plan(struct profile *p, uint32_t proc, const char *dir);

/*
 * Write the images of process `proc`, each a 64-bit ET_DYN ELF for the host
 * machine: a PT_LOAD and .text for the region (zero-filled), a .symtab and
 * DWARF (jit_dwarf.h) of t's functions that start inside it (where entries
 * overlap, the one jitdump__lookup picks), and a GNU build-id note, a hash
 * of the region and its symbols, also set in the jit_map. Each file is
 * written beside its final path and renamed into place, with `mode`.
 * Returns 0, -ENOENT when the process has no regions, or the first -errno
 * (message printed naming the file); images that failed keep build_id_len 0.
 */
int jit_elf__write(struct profile *p, uint32_t proc, const struct jit_table *t, unsigned mode);

#endif /* BPFPROF_JIT_ELF_H */

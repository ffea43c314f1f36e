/* SPDX-License-Identifier: MIT */
/*
 * XRay instrumentation map: the `xray_instr_map` ELF section of an
 * instrumented binary, read with libelf, turned into function id → address
 * → name. Function ids are what the runtime writes in traces: 1 for the first
 * function of the section, one more each time the sleds' function address
 * changes (LLVM's InstrumentationMap does the same). Sled entries are 32
 * bytes: address u64, function u64, kind u8, always_instrument u8, version
 * u8, 13 bytes padding; version ≥ 2 stores both addresses relative to the
 * field itself, version 0/1 stores them absolute, which in a PIE comes from
 * an R_*_RELATIVE relocation's addend.
 *
 * Addresses: a fixed-address executable keeps its link-time addresses; a PIE
 * (ET_DYN) is placed at XRAY_PIE_BASE, where Linux puts it without ASLR, so
 * the synthesized mappings and function addresses look like a real process's.
 */
#ifndef BPFPROF_XRAY_INSTR_MAP_H
#define BPFPROF_XRAY_INSTR_MAP_H

#include <stddef.h>
#include <stdint.h>
#include "profile.h"

#define XRAY_PIE_BASE 0x555555554000ULL

struct xray_instr_map;

/*
 * Load the map and the function names of the ELF file at path. Returns 0 and
 * a new map in *out (free with xray_instr_map__free), or -errno: -ENOENT,
 * -EACCES from open, -EINVAL for a file that is not ELF or whose section is
 * malformed, -ENOTSUP for a 32-bit ELF, -ENODATA when it has no
 * xray_instr_map section (not built with -fxray-instrument), -ENOMEM.
 * The reason is printed.
 */
int xray_instr_map__load(const char *path, struct xray_instr_map **out);
void xray_instr_map__free(struct xray_instr_map *m);

/* Highest function id (ids run 1..n). */
uint32_t xray_instr_map__nr_funcs(const struct xray_instr_map *m);
/* Run-time address of function `id` (load base applied), or 0 when unknown. */
uint64_t xray_instr_map__addr(const struct xray_instr_map *m, uint32_t id);
/* Symbol name of function `id`, borrowed until free; NULL when unknown. */
const char *xray_instr_map__name(const struct xray_instr_map *m, uint32_t id);
/* The binary's path as given. */
const char *xray_instr_map__path(const struct xray_instr_map *m);

/*
 * Add one mapping per PT_LOAD segment of the binary (page-rounded, load base
 * applied, with path, inode and build-id) to process `proc` of p, so writers
 * that symbolize through maps (gperftools .prof) find the binary.
 * Returns 0 or -ENOMEM.
 */
int xray_instr_map__add_mappings(const struct xray_instr_map *m, struct profile *p, uint32_t proc);

#endif /* BPFPROF_XRAY_INSTR_MAP_H */

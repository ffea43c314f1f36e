/* SPDX-License-Identifier: MIT */
/*
 * Mangled symbol → the name people read, through libiberty's demangler
 * (binutils' c++filt, gdb and perf use the same code): C++ (Itanium ABI,
 * "_Z..."), Rust legacy ("_ZN...17h<hash>E", shown without the hash) and
 * Rust v0 ("_R..."). Rust is tried first, as perf's demangle_sym does, since
 * a legacy Rust name is also a valid Itanium one. Reentrant (the callback
 * variants: no global style, no malloc, no xmalloc exit).
 */
#ifndef BPFPROF_DEMANGLE_H
#define BPFPROF_DEMANGLE_H

#include <stddef.h>

/*
 * Longest mangled name handed to the demangler, bytes: libiberty sizes
 * arrays on its stack from the name's length (cp-demangle.c's
 * d_demangle_callback, about 64 bytes a character), so longer names from
 * hostile files are shown as they are.
 */
#define DEMANGLE_MAX_INPUT 8192
/* Longest demangled name kept, bytes with the NUL; longer ones end in DEMANGLE_CUT_MARK */
#define DEMANGLE_MAX 1024
#define DEMANGLE_CUT_MARK "..."

/*
 * Demangle `sym` into out (cap bytes, cap >= sizeof(DEMANGLE_CUT_MARK) + 1;
 * DEMANGLE_MAX is what callers use): a result that does not fit is cut at
 * a UTF-8 character boundary and ends in DEMANGLE_CUT_MARK. Returns the
 * length written (> 0), or 0 when sym is no name the demangler knows
 * (plain C, Go, a mangled name it rejects, one longer than
 * DEMANGLE_MAX_INPUT): the caller shows sym as it is.
 */
size_t demangle(const char *sym, char *out, size_t cap);

#endif /* BPFPROF_DEMANGLE_H */

/* SPDX-License-Identifier: MIT */
/*
 * CPython's objects as bpfprof reads them from another process's memory:
 * the struct layouts of 3.8 to 3.13 on x86-64 (from CPython's
 * Include/internal/pycore_frame.h, Include/cpython/code.h and
 * Include/cpython/pystate.h of each version, checked against Debian's 3.11
 * and pyenv's builds; details in docs/INTERPRETERS.md), a code
 * object's names, first line and line table, and the line of an instruction
 * (CPython's Objects/locations.md for 3.11+, Objects/lnotab_notes.txt for
 * 3.10's co_linetable and the co_lnotab before it).
 *
 * Every byte comes from a process that may forge it: objects must have the
 * expected type, lengths are bounded (PY_CODE_NAME_MAX, PY_LINETABLE_MAX),
 * strings must be valid (compact kinds only, code points below 0x110000, no
 * surrogates) and come out as NUL-terminated UTF-8, and line tables are
 * decoded with every read checked against their length. Memory is read
 * through a callback, so tests and the fuzz harness read from a buffer.
 */
#ifndef BPFPROF_PY_CODE_H
#define BPFPROF_PY_CODE_H

#include <stddef.h>
#include <stdint.h>

#define PY_CODE_NAME_MAX 256 /* bytes of UTF-8 kept of a name (longer ones are cut, "..." added) */
#define PY_CODE_FILE_MAX 512 /* bytes of UTF-8 kept of a file name */
#define PY_STR_MAX_CHARS 4096 /* longer strings are refused */
#define PY_LINETABLE_MAX (256u << 10) /* bytes */
#define PY_NONE 0xffff

/* The layout of one CPython minor version (offsets in bytes). */
struct py_layout {
	uint16_t version; /* 0x0308 .. 0x030d */
	/* _PyRuntime and thread state, for the BPF walk (struct bpfprof_py_proc) */
	uint16_t rt_tss; /* _PyRuntime's autoTSSkey */
	uint16_t ts_thread_id, ts_cframe, ts_frame;
	uint16_t f_code, f_previous, f_instr, f_entry;
	uint8_t entry; /* enum bpfprof_py_entry */
	uint8_t lasti; /* f_instr is f_lasti: code units from 3.10, bytes before */
	/* code objects */
	uint16_t co_argcount, co_flags, co_firstlineno, co_filename, co_name;
	uint16_t co_qualname; /* PY_NONE before 3.11: co_name names the function */
	uint16_t co_linetable; /* co_lnotab before 3.10 */
	uint16_t code_size; /* PyCode_Type.tp_basicsize: where the bytecode starts (3.11+) */
	/* str: PyASCIIObject and PyCompactUnicodeObject sizes (the data follows) */
	uint16_t ascii_size, compact_size;
};

/* The layout of version 0x03MM, or NULL when unknown. */
const struct py_layout *py_layout__get(uint16_t version);

/* Read len bytes at addr of the process into buf. Returns 0 or -errno (all or nothing). */
typedef int (*py_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

/* Types objects are checked against (absolute addresses in the process; 0: not checked) */
struct py_types {
	uint64_t code, str, bytes;
};

/* A code object as read. */
struct py_code {
	uint32_t csum; /* BPFPROF_PY_CSUM of its fields, as the BPF walk computes it */
	int32_t firstlineno;
	char name[PY_CODE_NAME_MAX]; /* co_qualname (3.11+), else co_name; UTF-8 */
	char file[PY_CODE_FILE_MAX]; /* co_filename, UTF-8 */
	uint8_t *linetable; /* malloc'd copy, linetable_len bytes; NULL when empty */
	size_t linetable_len;
};

/*
 * Read the code object at addr. Returns 0 and fills *out (free its
 * linetable with py_code__release), -EINVAL when something is not what it
 * must be (a type, a length, a string), -ENOMEM, or the read's -errno.
 */
int py_code__read(const struct py_layout *L, const struct py_types *types, py_read_fn rd, void *ctx,
		  uint64_t addr, struct py_code *out);
void py_code__release(struct py_code *c);

/*
 * Decode a str object read at addr into NUL-terminated UTF-8 of at most
 * size bytes (cut at a character with "..." when longer). Returns 0,
 * -EINVAL (not a str, not compact, bad code point, too long), or the read's
 * -errno.
 */
int py_str__read(const struct py_layout *L, const struct py_types *types, py_read_fn rd, void *ctx,
		 uint64_t addr, char *out, size_t size);

/*
 * The line of the instruction at byte offset `off` of the bytecode (-1:
 * the frame has not started; 3.11+: from the first instruction, code units
 * of 2 bytes), from a line table of `version` (0x030b+: location table;
 * 0x030a: co_linetable; before: co_lnotab). Returns the line, or firstlineno
 * where the table says nothing (no location, past its end, malformed).
 * *max_line (may be NULL) gets the largest line the whole table names (at
 * least firstlineno).
 */
int py_line__find(uint16_t version, const uint8_t *tab, size_t len, int32_t firstlineno,
		  int64_t off, int32_t *max_line);

#endif /* BPFPROF_PY_CODE_H */

/* SPDX-License-Identifier: MIT */
/*
 * ELF function symbols through libelf: .symtab, else the separate debug file
 * found by GNU build-id (/usr/lib/debug/.build-id/xx/rest.debug) or
 * .gnu_debuglink (DIR/NAME, DIR/.debug/NAME, /usr/lib/debug/DIR/NAME), as gdb
 * searches them, else MiniDebugInfo (.gnu_debugdata), plus .dynsym. Addresses are looked up by file offset, which is what
 * /proc/PID/maps gives (addr - start + offset), and converted to the ELF
 * virtual address through the PT_LOAD program headers, so PIE executables,
 * shared objects and fixed-address executables all resolve the same way.
 * Refs: ELF gABI (program headers, symbol table), binutils "Separate Debug Files".
 */
#ifndef BPFPROF_SYM_ELF_H
#define BPFPROF_SYM_ELF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ELF_BUILD_ID_MAX 20

struct elf_symtab;

/*
 * Load the function symbols (STT_FUNC and STT_GNU_IFUNC, non-zero value,
 * in an allocated section) of the ELF file at `path`, sorted by address.
 * `debug_root` is prefixed to the debug-file search paths ("" on the host,
 * "/proc/PID/root" for a process in another mount namespace).
 * Returns a new table owned by the caller (free with elf_symtab__free), or
 * NULL with errno: ENOENT/EACCES from open, EINVAL when not a valid ELF file,
 * ENOMEM. A valid ELF with no symbols gives an empty table, not NULL.
 */
struct elf_symtab *elf_symtab__load(const char *path, const char *debug_root);

struct elf_load_opts {
	/* prefixed to the debug-file search paths: "" (NULL) on the host, "/proc/PID/root" */
	const char *debug_root;
	/* search the host's debug directories too, after debug_root's */
	bool host_debug;
	/* the file's path as its process sees it, for .gnu_debuglink's directories; NULL: path */
	const char *file_path;
	/*
	 * Use this debug file (e.g. debuginfod's) instead of searching: it must
	 * carry the file's build-id, else it is refused with a warning.
	 */
	const char *debug_file;
};

/*
 * elf_symtab__load with options. Where names come from, in order: the file's
 * .symtab; else a separate debug file (o->debug_file, or found by build-id
 * then .gnu_debuglink); else the MiniDebugInfo in .gnu_debugdata
 * (sym_minidebug.h); and the file's .dynsym in every case. A debug file or
 * MiniDebugInfo that is malformed, truncated, too big or of another build-id
 * is refused with a warning naming it, and the table is built without it.
 * Same returns as elf_symtab__load.
 */
struct elf_symtab *elf_symtab__load_opts(const char *path, const struct elf_load_opts *o);

enum elf_names_src {
	ELF_NAMES_DYNSYM, /* .dynsym only: the file is stripped and nothing else was found */
	ELF_NAMES_SYMTAB, /* the file's own .symtab */
	ELF_NAMES_DEBUG_FILE, /* a separate debug file (elf_symtab__debug_path) */
	ELF_NAMES_MINIDEBUG, /* .gnu_debugdata */
};

/* Where the table's names beyond .dynsym came from. */
enum elf_names_src elf_symtab__names_src(const struct elf_symtab *st);

/* Path of the separate debug file read, borrowed until elf_symtab__free; NULL when none. */
const char *elf_symtab__debug_path(const struct elf_symtab *st);
void elf_symtab__free(struct elf_symtab *st);

/*
 * Symbol containing the byte at file offset `off` (mapping offset + distance
 * into the mapping). Returns the name, borrowed until elf_symtab__free, and
 * sets *sym_off to off's distance from the symbol start; NULL when no symbol
 * covers it. A symbol of size 0 covers up to the next symbol. The entry
 * function (ELF header's e_entry), when no symbol covers it, is "_start" up
 * to the next symbol, 64 bytes at most: stripped executables, Debian's ld.so.
 */
const char *elf_symtab__lookup_offset(const struct elf_symtab *st, uint64_t off, uint64_t *sym_off);

/*
 * The source file and line of the instruction at file offset off, where the
 * file says them without DWARF: a Go binary's .gopclntab (sym_gopclntab.h),
 * whose names elf_symtab__lookup_offset also prefers to .symtab's. Returns
 * 0 with *file borrowed until elf_symtab__free, or -ENOENT.
 */
int elf_symtab__lookup_line(const struct elf_symtab *st, uint64_t off, const char **file,
			    uint32_t *line);

/* Translate a file offset to an ELF virtual address via PT_LOAD. Returns 0 or -ENOENT. */
int elf_symtab__offset_to_vaddr(const struct elf_symtab *st, uint64_t off, uint64_t *vaddr);

/* GNU build-id of the file (NT_GNU_BUILD_ID note); returns its length (bytes, ≤ 20) or 0 when absent. */
size_t elf_symtab__build_id(const struct elf_symtab *st, uint8_t id[ELF_BUILD_ID_MAX]);

/* Number of function symbols loaded (one an address): the lazy index finished first (settle). */
size_t elf_symtab__count(const struct elf_symtab *st);

/*
 * The table is indexed lazily (sym_elf.c: buckets of addresses, each sorted
 * when a lookup first needs it), and the symbols as collected (32 bytes
 * each) are kept until every bucket is: finish the index and free them,
 * for a table kept across profiles (--interval). Lookups' results do not
 * change.
 */
void elf_symtab__settle(struct elf_symtab *st);

/*
 * Read only the GNU build-id note of the file at `path`. Returns its length
 * (1..20) into id, 0 when the file has none, or -errno (open failure, -EINVAL
 * for non-ELF input).
 */
int elf__read_build_id(const char *path, uint8_t id[ELF_BUILD_ID_MAX]);

/*
 * The same of the open file fd (not closed; read by pread, its offset
 * left alone): the GNU build-id of a PT_NOTE segment read directly from a
 * plain 64-bit little-endian ELF file (its header, program headers and
 * the note: a few system calls), else elf__read_build_id of
 * /proc/self/fd/FD, which gives the same answer for those files. What for:
 * the unwinder identifies every file a new process maps that it does not
 * know by device and inode, 35-45 us each by libelf on this VM.
 */
int elf__read_build_id_fd(int fd, uint8_t id[ELF_BUILD_ID_MAX]);

/* true: elf__read_build_id_fd by libelf alone (the tests' oracle) */
extern bool elf_build_id_libelf_only;

/*
 * The separate debug file of the ELF file at `path` that holds `section`
 * (with bits: ".debug_frame" for the unwinder), searched as
 * elf_symtab__load_opts searches (o's debug_root, host_debug and file_path;
 * o->debug_file: that file only, strictly) and accepted only with the file's
 * build-id, if it has one. o may be NULL. Returns an open descriptor (the
 * caller closes it) and its path in *found (malloc'd), or -ENOENT when none
 * is usable, -errno (path unreadable), -EINVAL (path is no ELF file), -ENOMEM.
 */
int elf__open_debug_file(const char *path, const char *section, const struct elf_load_opts *o,
			 char **found);

/*
 * The values (ELF virtual addresses) of the defined .dynsym symbols named
 * names[0..n) of the ELF file open at fd (borrowed; path for messages) into
 * values[] (0: not there), any type (data symbols too: HotSpot's
 * gHotSpotVM* tables), and p_vaddr - p_offset of the PT_LOAD that holds
 * file offset off into *load_delta (a mapping of offset off at start has
 * its symbols at start - off + value - *load_delta). Returns 0, -ENOENT (no
 * .dynsym, or no PT_LOAD holds off), -EINVAL (no ELF file), -errno.
 */
int elf__dynsym_values(int fd, const char *path, const char *const *names, size_t n,
		       uint64_t *values, uint64_t off, int64_t *load_delta);

#endif /* BPFPROF_SYM_ELF_H */

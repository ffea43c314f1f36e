/* SPDX-License-Identifier: MIT */
/*
 * MiniDebugInfo: the `.gnu_debugdata` section of a stripped ELF file holds an
 * xz-compressed ELF file whose `.symtab` names the functions (the static ones
 * in particular) that `.dynsym` lacks. Fedora, RHEL and CentOS binaries carry
 * it (find-debuginfo's add_minidebug), and gdb ("MiniDebugInfo", gdb manual)
 * and perf (util/symbol-elf.c with lzma) read it. This module only
 * decompresses, through liblzma, into a memory file that sym_elf.c then
 * reads like any separate debug file.
 * Refs: gdb manual "MiniDebugInfo"; The .xz File Format 1.1.0 (tukaani.org).
 */
#ifndef BPFPROF_SYM_MINIDEBUG_H
#define BPFPROF_SYM_MINIDEBUG_H

#include <stddef.h>
#include <stdint.h>

/*
 * Largest decompressed `.gnu_debugdata` accepted, bytes. Real ones are a
 * small fraction of their binary (libxul's: ~4 MB); a bigger one is refused
 * rather than let a crafted file make bpfprof allocate without bound.
 */
#define MINIDEBUG_MAX_SIZE (64ull << 20)
/* liblzma's decoder memory limit, bytes: xz -9 needs 65 MiB to decode */
#define MINIDEBUG_MEMLIMIT (128ull << 20)

/*
 * Decompress the xz stream xz[0..len) (the contents of `.gnu_debugdata` of
 * the file `what`, named in warnings) into a new anonymous memory file of at
 * most max bytes. Returns its descriptor (owned by the caller, O_CLOEXEC,
 * positioned at 0), or -EINVAL when the data is not a complete valid xz
 * stream (warned, with the input offset), -EFBIG when it decompresses to more
 * than max bytes (warned), -ENOMEM, or -errno of memfd_create/write.
 */
int minidebug__decompress(const void *xz, size_t len, uint64_t max, const char *what);

#endif /* BPFPROF_SYM_MINIDEBUG_H */

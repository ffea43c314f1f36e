/* SPDX-License-Identifier: MIT */
/*
 * The end of a jitdump that a running process has written but not yet
 * flushed. V8 (node --perf-prof) writes its jitdump through a stdio FILE;
 * glibc flushes it in blocks of the file's st_blksize (4 KiB here), so while
 * node runs the newest LOAD records, often those of the hottest code
 * compiled last, sit in the process's buffer and the file on disk ends in
 * the middle of a record. perf has the same blind spot, hidden because
 * `perf inject --jit` runs after the process exits.
 *
 * The buffer is found the way a debugger finds it, through glibc's public
 * ABI (struct _IO_FILE in <bits/types/struct_FILE.h>, the same on every
 * LP64 glibc): the exported `_IO_list_all` of the process's libc (its
 * .dynsym) heads the list of open FILEs (`_chain`); the FILE whose `_fileno`
 * is the process's descriptor of the jitdump (found by inode in
 * /proc/PID/fd) and whose `_flags` carry glibc's magic 0xFBAD0000 holds the
 * unflushed bytes in [_IO_write_base, _IO_write_ptr). They continue the file
 * at the descriptor's position (/proc/PID/fdinfo/N "pos:"), read before and
 * after the buffer: when it moved (a flush meanwhile), the read is retried.
 * Memory is read through /proc/PID/mem (needs CAP_SYS_PTRACE over the
 * process, which root has; without it nothing is read). What is read is
 * only ever appended to the file's bytes and parsed like them, so a wrong
 * guess costs nothing but a parse that stops early.
 */
#ifndef BPFPROF_JIT_TAIL_H
#define BPFPROF_JIT_TAIL_H

#include <stddef.h>
#include <stdint.h>
#include "profile.h"

/* Largest unflushed tail read, bytes (V8 asks for a 2 MiB buffer; glibc gives 4 KiB). */
#define JIT_TAIL_MAX (16u << 20)
/* FILEs walked on _IO_list_all at most */
#define JIT_TAIL_MAX_FILES 4096

/*
 * Read the unflushed bytes of process `proc` of p (alive) for the file
 * open as file_fd here (our descriptor of its jitdump, matched by device
 * and inode). On 0, *data (malloc'd, caller frees; NULL when *len is 0)
 * continues the file at byte *pos. Returns 0, -ENOENT (no FILE of that
 * file, or no libc: nothing buffered to find), -ENOTSUP (not a 64-bit
 * glibc process), -EPERM/-EACCES (no access to its memory), -EAGAIN (the
 * position kept moving), -ENOMEM, or another -errno.
 */
int jit_tail__read(const char *proc_dir, const struct profile *p, uint32_t proc, int file_fd,
		   char **data, size_t *len, uint64_t *pos);

#endif /* BPFPROF_JIT_TAIL_H */

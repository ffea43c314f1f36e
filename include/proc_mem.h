/* SPDX-License-Identifier: MIT */
/*
 * A process's memory read through /proc/PID/mem (proc(5): its bytes at
 * their virtual addresses, as pread offsets) by a reader that asks for small
 * fields, several from the same few objects: V8's namer and the copies' V8
 * walk. A pread costs about the same for 8 bytes as for 256 (the page's
 * lookup in the kernel: access_remote_vm), so a read that falls within an
 * aligned line of PROC_MEM_LINE bytes is served from the line, read once
 * until proc_mem__forget; an aligned line is inside one page, so it reads
 * where a read inside it would. A read across lines, or one whose line
 * cannot be read whole (a file shorter than it, in tests), is made as asked.
 * The caller forgets the lines at each sample: the process runs on.
 */
#ifndef BPFPROF_PROC_MEM_H
#define BPFPROF_PROC_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROC_MEM_LINE 256
#define PROC_MEM_LINES 32

struct proc_mem;

/* A reader with nothing open (its reads fail): the caller frees it, proc_mem__free. NULL: ENOMEM. */
struct proc_mem *proc_mem__new(void);

/* Open path (a /proc/PID/mem) where m has nothing open yet: 0, or -errno of open(2). */
int proc_mem__open(struct proc_mem *m, const char *path);

bool proc_mem__is_open(const struct proc_mem *m);

/* Drop the lines read: the next reads see the memory as it is then. */
void proc_mem__forget(struct proc_mem *m);

/*
 * len bytes at address addr into buf; m is a struct proc_mem (the readers'
 * callback form). 0, -EIO where nothing is open or fewer bytes came, -errno
 * of pread(2).
 */
int proc_mem__read(void *m, uint64_t addr, void *buf, size_t len);

/* Close and free m (NULL: nothing). */
void proc_mem__free(struct proc_mem *m);

#endif /* BPFPROF_PROC_MEM_H */

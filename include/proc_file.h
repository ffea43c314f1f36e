/* SPDX-License-Identifier: MIT */
/*
 * Opening files that belong to observed processes (JIT dumps, perf maps),
 * which bpfprof reads as root while their owners are unprivileged and may
 * swap them at any time. A path is resolved inside the process's root
 * (/proc/PID/root, openat2(2) RESOLVE_IN_ROOT, so ".." and absolute links
 * cannot leave it), no symlink is followed anywhere in it
 * (RESOLVE_NO_SYMLINKS), and the file is first opened O_PATH: nothing is
 * opened for reading until it is known to be a regular file (a FIFO would
 * block, a device open may have side effects), owned by one of the process's
 * uids or a world-readable root file, and within the size cap.
 */
#ifndef BPFPROF_PROC_FILE_H
#define BPFPROF_PROC_FILE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* The identity a process's files are checked against (/proc/PID/status). */
struct proc_ident {
	uint32_t nspid; /* innermost pid namespace's pid ("NSpid:" last field) */
	uid_t uids[4]; /* real, effective, saved, filesystem ("Uid:") */
};

/*
 * Read NSpid and Uid of process pid from <proc_dir>/<pid>/status.
 * Returns 0, or -errno (-ENOENT: the process is gone).
 */
int proc_ident__read(const char *proc_dir, uint32_t pid, struct proc_ident *id);

/* What /proc/PID/stat tells of a process, proc(5) */
struct proc_stat {
	char state; /* field 3: R, S, D, Z (zombie), X (dead), ... */
	uint64_t nr_threads; /* field 20 */
	uint64_t start_time; /* field 22: clock ticks after boot */
};

/*
 * Read <proc_dir>/<pid>/stat, the one parser of it. The comm in parentheses
 * may hold anything, ')' too: the fields start after the last ')'. Returns 0
 * or -errno (-ENOENT once the process is reaped, -EINVAL for a line that does
 * not parse, -ENAMETOOLONG for a path over PATH_MAX).
 */
int proc_stat__read(const char *proc_dir, uint32_t pid, struct proc_stat *ps);

/*
 * The start time of process pid, USER_HZ ticks after boot (field 22 of
 * <proc_dir>/<pid>/stat; struct profile_process.start). Returns 0, or -errno
 * (-ENOENT: no such process, -EINVAL: unreadable line). A zombie has one too.
 */
int proc_ident__start(const char *proc_dir, uint32_t pid, uint32_t *start);

/*
 * Whether pid is still the process of start time `start` (any when 0), or
 * nobody's (reaped): read after a file of the process was opened, it says
 * the file was its own (a pid is not given to another process while its
 * holder lives). False only when another process holds the pid now.
 */
bool proc_ident__same(const char *proc_dir, uint32_t pid, uint32_t start);

/*
 * Open `path` (absolute, as the process sees it) of process pid for reading,
 * as described above. max_size in bytes. Returns a read-only fd (caller
 * closes it), or -errno: -ENOENT, -ELOOP (a symlink on the path), -EXDEV (the
 * path leaves the root), -EINVAL (not a regular file), -EPERM (owned by
 * someone else), -EFBIG (over max_size), or another open/stat error.
 */
int proc_file__open(const char *proc_dir, uint32_t pid, const char *path,
		    const struct proc_ident *id, uint64_t max_size);

/*
 * As proc_file__open, inside the directory `root` (a path), with no
 * ownership check when id is NULL (binaries: root owns most of them).
 */
int proc_file__open_in(const char *root, const char *path, const struct proc_ident *id,
		       uint64_t max_size);

/*
 * Our own vDSO: its image (getauxval(AT_SYSINFO_EHDR)) and the size of its
 * mapping (the [vdso] line of our maps): the image's own extent, its
 * section headers or last PT_LOAD bytes, rounded up to a page, as the
 * kernel maps the whole image padded to a page. The kernel maps one image
 * into every 64-bit process, so ours names and unwinds theirs, as perf does
 * by dumping it. Returns the image, borrowed for the process's life, or
 * NULL (size 0) when there is none or its ELF header is not one.
 */
const void *proc_file__own_vdso(size_t *size);

/* Why proc_file__open refused, for messages: "a symbolic link", ... */
const char *proc_file__strerror(int err);

#endif /* BPFPROF_PROC_FILE_H */

/* SPDX-License-Identifier: MIT */
/*
 * The BTF libbpf relocates a BPF object against (CO-RE): the kernel's cut
 * to the object's roots (btf_min.h), kept in a file per kernel and object
 * in a cache directory (default /var/cache/bpfprof/btf,
 * $BPFPROF_BTF_CACHE; empty: none), so that a start reads a few KB rather
 * than parsing /sys/kernel/btf/vmlinux. The file is named by a hash of the
 * kernel's identity (/sys/kernel/notes: its GNU build-id; /proc/version;
 * the size of its BTF) and of the object's bytes: another kernel or
 * another build of bpfprof makes another file. A directory that is not
 * the user's own, mode 0700 (made so where missing), is not used: its files
 * decide what the programs read.
 */
#ifndef BPFPROF_CORE_BTF_H
#define BPFPROF_CORE_BTF_H

#include <stddef.h>

struct btf;

#define CORE_BTF_DEFAULT_DIR "/var/cache/bpfprof/btf"

/*
 * The cache's file for object obj (size bytes: the object file's bytes)
 * on this kernel, into path (size path_size). Returns 0 when it exists,
 * -ENOENT when it does not yet (path: where core_btf__write puts it),
 * another -errno when there is no cache (none named, -EPERM: a directory
 * another user could write, the kernel's identity unreadable).
 */
int core_btf__path(const void *obj, size_t size, char *path, size_t path_size);
/*
 * Cut the running kernel's BTF (btf__load_vmlinux_btf) to local's roots and
 * write it to path, atomically (a temporary file renamed), its directory
 * made if need be. Returns 0 or -errno.
 */
int core_btf__write(const char *path, const struct btf *local);

#endif /* BPFPROF_CORE_BTF_H */

/* SPDX-License-Identifier: MIT */
/*
 * cgroup v2 helpers: a process's cgroup path (/proc/PID/cgroup, the "0::"
 * line; Documentation/admin-guide/cgroup-v2.rst), the cgroup id that
 * bpf_get_current_cgroup_id() reports for a cgroup directory (its kernfs
 * inode number), and the container id that runtimes put in cgroup paths.
 */
#ifndef BPFPROF_CGROUP_H
#define BPFPROF_CGROUP_H

#include <stddef.h>
#include <stdint.h>

#define CGROUP_CONTAINER_ID_LEN 64 /* hex digits of a docker/containerd/cri-o/podman id */

/*
 * Read the cgroup v2 path of pid from <proc_dir>/<pid>/cgroup into buf
 * (len bytes, NUL-terminated), e.g. "/system.slice/docker-<id>.scope".
 * Returns 0, -ENOENT when the process has no v2 entry or is gone, or -errno.
 */
int cgroup__proc_path(const char *proc_dir, uint32_t pid, char *buf, size_t len);

/*
 * Container id in a cgroup path: the 64-hex-digit component in the forms
 * docker (docker-ID.scope, /docker/ID), containerd/CRI (cri-containerd-ID.scope,
 * /kubepods/.../ID), cri-o (crio-ID.scope), podman (libpod-ID.scope). Writes
 * the id (65 bytes with NUL) to out and returns 0, or -ENOENT when none.
 */
int cgroup__container_id(const char *path, char out[CGROUP_CONTAINER_ID_LEN + 1]);

/*
 * Cgroup id of a cgroup v2 directory: an absolute path, or a path relative
 * to the cgroup2 mount (/sys/fs/cgroup, or /sys/fs/cgroup/unified on hybrid
 * hosts), as /proc/PID/cgroup prints it. Returns 0 and sets *id, or -errno (-ENOTDIR, -ENOENT,
 * -EINVAL when the directory is not on a cgroup2 file system).
 */
int cgroup__id(const char *path, uint64_t *id);

#endif /* BPFPROF_CGROUP_H */

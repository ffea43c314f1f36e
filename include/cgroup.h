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

/*
 * Cgroup id -> path and container id, as the samples carry the id
 * (bpf_get_current_cgroup_id). The samples of a process are often read
 * after it exited, and its cgroup may be gone by then too (a container that
 * ran one job): a path is learnt while its cgroup exists and kept after it
 * is removed, never read from /proc/PID/cgroup too late.
 *
 * Paths are learnt by walking the hierarchy (each directory's inode number
 * is its cgroup id) when the cache is made and at each expire, and for an id
 * not known yet through open_by_handle_at on the cgroup2 mount (kernfs's
 * file handle is the 8-byte id; needs CAP_DAC_READ_SEARCH), else one more
 * walk. An id found by none belongs to a cgroup made and removed between
 * two walks: remembered as unknown, so its samples cost no further walks.
 */
struct cgroup_cache;

struct cgroup_cache_stats {
	uint64_t entries; /* ids held, named or not */
	uint64_t by_handle; /* paths found through open_by_handle_at */
	uint64_t walks; /* walks of the hierarchy, the first included */
	uint64_t unknown; /* ids found by neither: removed before first seen */
};

/*
 * A cache over the cgroup2 hierarchy mounted at root (NULL: the cgroup2
 * mount of /proc/self/mounts; a host without one gets a cache that names
 * nothing), walked once. Returns NULL with errno ENOMEM.
 */
struct cgroup_cache *cgroup_cache__new(const char *root);
void cgroup_cache__free(struct cgroup_cache *c);

/*
 * Path of cgroup id relative to the mount, as /proc/PID/cgroup prints it
 * ("/system.slice/x", "/" for the root), in *path, and its container id
 * (cgroup__container_id) in *container_id, "" for none. Both borrowed until
 * cgroup_cache__free or an expire that drops the id. Returns 0, -ENOENT
 * (id 0, or a cgroup removed before it was first looked up) or -ENOMEM.
 */
int cgroup_cache__lookup(struct cgroup_cache *c, uint64_t id, const char **path,
			 const char **container_id);

/*
 * Drop the ids not looked up since the last call (each --interval), then
 * walk the hierarchy again: the cache holds the cgroups there are and the
 * removed ones still sampled lately, not every one a host agent ever saw.
 * Pointers to dropped entries become invalid.
 */
void cgroup_cache__expire(struct cgroup_cache *c);

void cgroup_cache__stats(const struct cgroup_cache *c, struct cgroup_cache_stats *st);

#endif /* BPFPROF_CGROUP_H */

// SPDX-License-Identifier: MIT
/* cgroup v2 paths, ids and container ids (include/cgroup.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mntent.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include "cgroup.h"

int cgroup__proc_path(const char *proc_dir, uint32_t pid, char *buf, size_t len)
{
	char path[PATH_MAX], line[PATH_MAX + 8];
	int err = -ENOENT;
	FILE *f;

	if (snprintf(path, sizeof(path), "%s/%u/cgroup", proc_dir, pid) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		/* "hierarchy-ID:controller-list:cgroup-path"; v2 is "0::path" */
		if (strncmp(line, "0::", 3))
			continue;
		line[strcspn(line, "\n")] = '\0';
		if (snprintf(buf, len, "%s", line + 3) >= (int)len)
			err = -ENAMETOOLONG;
		else
			err = 0;
		break;
	}
	fclose(f);
	return err;
}

static size_t hex_run(const char *s)
{
	size_t n = 0;

	while ((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f'))
		n++;
	return n;
}

int cgroup__container_id(const char *path, char out[CGROUP_CONTAINER_ID_LEN + 1])
{
	const char *comp = path;

	/*
	 * Every runtime names the container's cgroup after its 64-hex id, alone
	 * or between a runtime prefix ("docker-", "cri-containerd-", "crio-",
	 * "libpod-") and ".scope". Take the last component holding such an id.
	 */
	out[0] = '\0';
	while (comp && *comp) {
		const char *end = strchr(comp, '/'), *p = comp, *dash;
		size_t clen = end ? (size_t)(end - comp) : strlen(comp);

		dash = memrchr(comp, '-', clen);
		if (dash && (size_t)(dash - comp) < clen)
			p = dash + 1;
		if (hex_run(p) == CGROUP_CONTAINER_ID_LEN &&
		    (p + CGROUP_CONTAINER_ID_LEN == comp + clen ||
		     !strncmp(p + CGROUP_CONTAINER_ID_LEN, ".scope", 6))) {
			memcpy(out, p, CGROUP_CONTAINER_ID_LEN);
			out[CGROUP_CONTAINER_ID_LEN] = '\0';
		}
		comp = end ? end + 1 : NULL;
	}
	return out[0] ? 0 : -ENOENT;
}

/* Mount point of the cgroup2 file system: /sys/fs/cgroup, or .../unified on hybrid hosts. */
static int cgroup2_root(char *buf, size_t len)
{
	struct mntent *m;
	int err = -ENOENT;
	FILE *f = setmntent("/proc/self/mounts", "re");

	if (!f)
		return -errno;
	while ((m = getmntent(f)))
		if (!strcmp(m->mnt_type, "cgroup2")) {
			err = snprintf(buf, len, "%s", m->mnt_dir) >= (int)len ? -ENAMETOOLONG : 0;
			break;
		}
	endmntent(f);
	return err;
}

int cgroup__id(const char *path, uint64_t *id)
{
	char full[PATH_MAX], root[PATH_MAX];
	struct statfs sfs;
	struct stat st;
	int err;

	if (path[0] == '/' && !stat(path, &st)) {
		snprintf(full, sizeof(full), "%s", path);
	} else {
		/* relative to the cgroup2 root, as /proc/PID/cgroup prints paths */
		err = cgroup2_root(root, sizeof(root));
		if (err)
			return err == -ENOENT ? -EINVAL : err;
		if (snprintf(full, sizeof(full), "%s/%s", root, path[0] == '/' ? path + 1 : path) >=
		    (int)sizeof(full))
			return -ENAMETOOLONG;
	}
	if (stat(full, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (statfs(full, &sfs))
		return -errno;
	if (sfs.f_type != CGROUP2_SUPER_MAGIC)
		return -EINVAL;
	/* bpf_get_current_cgroup_id() is the kernfs node id, which is the inode number */
	*id = st.st_ino;
	return 0;
}

// SPDX-License-Identifier: MIT
/* cgroup v2 paths, ids and container ids, and the id -> path cache (include/cgroup.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mntent.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include "cgroup.h"
#include "lib_hashmap.h"

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

/* kernfs's file handle type (FILEID_KERNFS, linux/exportfs.h): the 8-byte node id */
#define CGROUP_FILEID_KERNFS 0xfe
/* cgroup hierarchies are a few levels deep; a walk goes no deeper than this */
#define CGROUP_MAX_DEPTH 32

struct cgroup_entry {
	char *path; /* NULL: the cgroup was gone before it was first looked up */
	char container_id[CGROUP_CONTAINER_ID_LEN + 1];
	bool used; /* looked up since the last expire */
};

struct cgroup_cache {
	char root[PATH_MAX]; /* the cgroup2 mount; "" for none */
	int root_fd; /* open on it, -1 for none */
	bool kernfs; /* root is a cgroup2 mount: its file handles are cgroup ids */
	struct u64map ids; /* id -> struct cgroup_entry * */
	struct cgroup_cache_stats st;
};

static int walk_all(struct cgroup_cache *c);

struct cgroup_cache *cgroup_cache__new(const char *root)
{
	struct cgroup_cache *c = calloc(1, sizeof(*c));
	struct statfs sfs;

	if (!c)
		return NULL;
	c->root_fd = -1;
	if (root)
		snprintf(c->root, sizeof(c->root), "%s", root);
	else if (cgroup2_root(c->root, sizeof(c->root)))
		c->root[0] = '\0';
	if (c->root[0]) {
		/* a mount_fd for open_by_handle_at: O_PATH is refused there (EBADF) */
		c->root_fd = open(c->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		c->kernfs = c->root_fd >= 0 && !fstatfs(c->root_fd, &sfs) &&
			    sfs.f_type == CGROUP2_SUPER_MAGIC;
	}
	/* the cgroups there are now: a process's cgroup may be gone by its first record */
	if (c->root[0] && walk_all(c)) {
		cgroup_cache__free(c);
		errno = ENOMEM;
		return NULL;
	}
	return c;
}

static void free_entry(uint64_t val)
{
	struct cgroup_entry *e = (struct cgroup_entry *)(uintptr_t)val;

	if (e)
		free(e->path);
	free(e);
}

void cgroup_cache__free(struct cgroup_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->ids.cap; i++)
		if (c->ids.keys[i])
			free_entry(c->ids.vals[i]);
	u64map__free(&c->ids);
	if (c->root_fd >= 0)
		close(c->root_fd);
	free(c);
}

/* "/a/b" for root + "/a/b", "/" for root itself; NULL when abs is not under root */
static char *relative_path(const char *root, const char *abs)
{
	size_t n = strlen(root);

	while (n > 1 && root[n - 1] == '/')
		n--;
	if (strncmp(abs, root, n) || (abs[n] && abs[n] != '/'))
		return NULL;
	return strdup(abs[n] ? abs + n : "/");
}

/*
 * The path of cgroup id through its file handle. Returns 0, -ESTALE when the
 * cgroup is gone, other -errno when the handle cannot be used here (no
 * CAP_DAC_READ_SEARCH, a kernel without kernfs handles).
 */
static int path_by_handle(struct cgroup_cache *c, uint64_t id, char **out)
{
	union {
		struct file_handle fh;
		char buf[sizeof(struct file_handle) + sizeof(uint64_t)];
	} h;
	char link[64], abs[PATH_MAX];
	ssize_t n;
	int fd, err;

	h.fh.handle_bytes = sizeof(id);
	h.fh.handle_type = CGROUP_FILEID_KERNFS;
	memcpy(h.fh.f_handle, &id, sizeof(id));
	fd = open_by_handle_at(c->root_fd, &h.fh, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, abs, sizeof(abs) - 1);
	err = n < 0 ? -errno : 0;
	close(fd);
	if (n < 0)
		return err;
	abs[n] = '\0';
	/* a removed directory reads "... (deleted)": gone */
	if (n > 10 && !strcmp(abs + n - 10, " (deleted)"))
		return -ESTALE;
	*out = relative_path(c->root, abs);
	return *out ? 0 : -ENOENT;
}

static int add_entry(struct cgroup_cache *c, uint64_t id, char *path)
{
	struct cgroup_entry *e = calloc(1, sizeof(*e));

	if (!e || u64map__put(&c->ids, id, (uint64_t)(uintptr_t)e)) {
		free(e);
		free(path);
		return -ENOMEM;
	}
	e->path = path;
	if (path)
		cgroup__container_id(path, e->container_id);
	return 0;
}

/*
 * Add every directory under dirfd (whose path below the root is rel, len
 * bytes of room) that the table lacks. Unreadable parts are skipped.
 */
static int walk(struct cgroup_cache *c, int dirfd, char *rel, size_t len, int depth)
{
	DIR *d = fdopendir(dirfd);
	size_t n = strlen(rel);
	struct dirent *de;
	int err = 0;

	if (!d) {
		close(dirfd);
		return 0;
	}
	while (!err && (de = readdir(d))) {
		size_t m = strlen(de->d_name);
		struct stat st;
		char *path;
		int fd;

		if (de->d_type != DT_DIR || !strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    n + 1 + m >= len)
			continue;
		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISDIR(st.st_mode))
			continue;
		snprintf(rel + n, len - n, "/%s", de->d_name);
		if (!u64map__get(&c->ids, st.st_ino, NULL)) {
			path = strdup(rel);
			err = path ? add_entry(c, st.st_ino, path) : -ENOMEM;
		}
		if (!err && depth < CGROUP_MAX_DEPTH &&
		    (fd = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0)
			err = walk(c, fd, rel, len, depth + 1);
		rel[n] = '\0';
	}
	closedir(d);
	return err;
}

/* Add every cgroup of the hierarchy that the table lacks, the root included. */
static int walk_all(struct cgroup_cache *c)
{
	char rel[PATH_MAX] = "", *path;
	struct stat st;
	int fd;

	c->st.walks++;
	if (!stat(c->root, &st) && !u64map__get(&c->ids, st.st_ino, NULL)) {
		path = strdup("/");
		if (!path || add_entry(c, st.st_ino, path))
			return -ENOMEM;
	}
	fd = open(c->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? 0 : walk(c, fd, rel, sizeof(rel), 0);
}

int cgroup_cache__lookup(struct cgroup_cache *c, uint64_t id, const char **path,
			 const char **container_id)
{
	struct cgroup_entry *e;
	char *found = NULL;
	uint64_t val;
	int err = -ENOENT;

	if (!id || !c->root[0])
		return -ENOENT;
	if (!u64map__get(&c->ids, id, &val)) {
		if (c->kernfs)
			err = path_by_handle(c, id, &found);
		if (!err) {
			c->st.by_handle++;
			err = add_entry(c, id, found);
		} else if (err == -ENOMEM || (err = walk_all(c))) {
			return err;
		}
		/* found by neither: gone before it was first seen; remembered as such */
		if (!u64map__get(&c->ids, id, &val)) {
			c->st.unknown++;
			err = add_entry(c, id, NULL);
			if (err)
				return err;
		}
		u64map__get(&c->ids, id, &val);
	}
	e = (struct cgroup_entry *)(uintptr_t)val;
	e->used = true;
	if (!e->path)
		return -ENOENT;
	*path = e->path;
	*container_id = e->container_id;
	return 0;
}

void cgroup_cache__expire(struct cgroup_cache *c)
{
	struct u64map kept = { 0 };

	for (size_t i = 0; i < c->ids.cap; i++) {
		struct cgroup_entry *e = (struct cgroup_entry *)(uintptr_t)c->ids.vals[i];

		if (!c->ids.keys[i])
			continue;
		/* out of memory: everything stays */
		if (e->used && u64map__put(&kept, c->ids.keys[i], c->ids.vals[i])) {
			u64map__free(&kept);
			return;
		}
	}
	for (size_t i = 0; i < c->ids.cap; i++) {
		struct cgroup_entry *e = (struct cgroup_entry *)(uintptr_t)c->ids.vals[i];

		if (!c->ids.keys[i])
			continue;
		if (e->used)
			e->used = false;
		else
			free_entry(c->ids.vals[i]);
	}
	u64map__free(&c->ids);
	c->ids = kept;
	/* the cgroups there are now, named before any of them can be removed unseen */
	walk_all(c);
}

void cgroup_cache__stats(const struct cgroup_cache *c, struct cgroup_cache_stats *st)
{
	*st = c->st;
	st->entries = c->ids.nr;
}

// SPDX-License-Identifier: MIT
/*
 * The CO-RE target's cache (include/core_btf.h): a hash names the file, the
 * cut (btf_min.h) fills it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/btf.h>
#include "btf_min.h"
#include "core_btf.h"

/* FNV-1a, 64 bits, over len bytes of p, from h */
static uint64_t fnv64(uint64_t h, const void *p, size_t len)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < len; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

/* h with file's bytes (at most 4 KiB: small sysfs and procfs files). Returns -errno when unreadable. */
static int hash_file(uint64_t *h, const char *file)
{
	char buf[4096];
	ssize_t n;
	int fd = open(file, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n <= 0)
		return n ? -errno : -ENODATA;
	*h = fnv64(*h, buf, (size_t)n);
	return 0;
}

static const char *cache_dir(void)
{
	const char *dir = getenv("BPFPROF_BTF_CACHE");

	return dir ? dir : CORE_BTF_DEFAULT_DIR;
}

int core_btf__path(const void *obj, size_t size, char *path, size_t path_size)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	const char *dir = cache_dir();
	struct stat st;
	int err;

	if (!dir[0])
		return -ENOTDIR;
	/* what relocates the programs: a directory of this user's alone, as the unwind cache's */
	if (!stat(dir, &st) &&
	    (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077)))
		return -EPERM;
	/* the kernel: its build-id, its version line, its BTF's size */
	err = hash_file(&h, "/sys/kernel/notes");
	if (!err)
		err = hash_file(&h, "/proc/version");
	if (!err && stat("/sys/kernel/btf/vmlinux", &st))
		err = -errno;
	if (err)
		return err;
	h = fnv64(h, &st.st_size, sizeof(st.st_size));
	h = fnv64(h, obj, size);
	if ((size_t)snprintf(path, path_size, "%s/%016llx.btf", dir, (unsigned long long)h) >=
	    path_size)
		return -ENAMETOOLONG;
	return access(path, R_OK) ? -ENOENT : 0;
}

/* path's directory and those above it (mode 0700: root's cache), as mkdir -p. Returns 0 or -errno. */
static int make_dir(const char *path)
{
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s", path);
	for (char *p = dir + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		if (mkdir(dir, 0700) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return 0;
}

int core_btf__write(const char *path, const struct btf *local)
{
	char tmp[PATH_MAX];
	const void *data;
	struct btf *kernel, *cut;
	uint32_t size;
	int fd, err;

	kernel = btf__load_vmlinux_btf();
	if (!kernel)
		return -errno;
	cut = btf_min__cut(kernel, local);
	err = cut ? 0 : -errno;
	btf__free(kernel);
	if (err)
		return err;
	data = btf__raw_data(cut, &size);
	err = data ? make_dir(path) : -ENOMEM;
	if (!err && (size_t)snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid()) >= sizeof(tmp))
		err = -ENAMETOOLONG;
	fd = err ? -1 : open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (!err && fd < 0)
		err = -errno;
	if (!err && write(fd, data, size) != (ssize_t)size)
		err = errno ? -errno : -EIO;
	if (fd >= 0 && close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err && fd >= 0)
		unlink(tmp);
	btf__free(cut);
	return err;
}

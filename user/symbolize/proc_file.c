// SPDX-License-Identifier: MIT
/*
 * Safe opening of files written by observed processes (include/proc_file.h).
 * The kernel does the path walk: openat2(2) with RESOLVE_IN_ROOT |
 * RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS (Linux 5.6; bpfprof needs 5.8
 * for ring buffers anyway), see Documentation/userspace-api and openat2(2).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "proc_file.h"
#include "lib_io.h"

/* A vDSO image larger than this is taken for a damaged one (x86-64's is 8 KiB) */
#define VDSO_MAX_BYTES (1u << 20)

int proc_ident__read(const char *proc_dir, uint32_t pid, struct proc_ident *id)
{
	/* read(2) into a buffer of the stack, no stdio: no malloc (the notices' thread calls it) */
	char path[PATH_MAX], buf[16384], *line, *nl;
	bool have_uid = false;
	size_t n = 0;
	int fd, err;

	if (snprintf(path, sizeof(path), "%s/%u/status", proc_dir, pid) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = io__read_upto(fd, buf, sizeof(buf) - 1, &n);
	close(fd);
	if (err)
		return err;
	buf[n] = '\0';
	memset(id, 0, sizeof(*id));
	id->nspid = pid; /* kernels before 4.1 have no NSpid: no namespaces in use */
	for (line = buf; line && *line; line = nl) {
		nl = strchr(line, '\n');
		if (nl)
			*nl++ = '\0';
		if (!strncmp(line, "Uid:", 4)) {
			unsigned u[4];

			if (sscanf(line + 4, "%u %u %u %u", &u[0], &u[1], &u[2], &u[3]) == 4) {
				for (int i = 0; i < 4; i++)
					id->uids[i] = u[i];
				have_uid = true;
			}
		} else if (!strncmp(line, "NSpid:", 6)) {
			char *tok, *save = NULL;

			/* one pid per nested namespace, outermost first */
			for (tok = strtok_r(line + 6, " \t", &save); tok;
			     tok = strtok_r(NULL, " \t", &save))
				id->nspid = (uint32_t)strtoul(tok, NULL, 10);
		}
	}
	return have_uid ? 0 : -EINVAL;
}

int proc_stat__read(const char *proc_dir, uint32_t pid, struct proc_stat *ps)
{
	char path[PATH_MAX], buf[1024], *p, *end;
	ssize_t n;
	int fd, field;

	if (snprintf(path, sizeof(path), "%s/%u/stat", proc_dir, pid) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -ENOENT;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || !p[2])
		return -EINVAL;
	ps->state = p[2];
	/* p + 2 is field 3 */
	for (p += 2, field = 3; field < 22; field++) {
		unsigned long long v;

		p = strchr(p, ' ');
		if (!p)
			return -EINVAL;
		p++;
		if (field + 1 != 20 && field + 1 != 22)
			continue;
		errno = 0;
		v = strtoull(p, &end, 10);
		if (errno || end == p)
			return -EINVAL;
		if (field + 1 == 20)
			ps->nr_threads = v;
		else
			ps->start_time = v;
	}
	return 0;
}

int proc_ident__start(const char *proc_dir, uint32_t pid, uint32_t *start)
{
	struct proc_stat ps;
	int err = proc_stat__read(proc_dir, pid, &ps);

	if (!err)
		*start = (uint32_t)ps.start_time;
	return err;
}

bool proc_ident__same(const char *proc_dir, uint32_t pid, uint32_t start)
{
	uint32_t now;

	/* reaped since the open: the file was its own (its pid was not free before) */
	if (proc_ident__start(proc_dir, pid, &now))
		return true;
	return !start || now == start;
}

static bool owned_by(const struct stat *sb, const struct proc_ident *id)
{
	for (int i = 0; i < 4; i++)
		if (sb->st_uid == id->uids[i])
			return true;
	/* a root file anybody may read discloses nothing */
	return sb->st_uid == 0 && (sb->st_mode & S_IROTH);
}

int proc_file__open(const char *proc_dir, uint32_t pid, const char *path,
		    const struct proc_ident *id, uint64_t max_size)
{
	char root[PATH_MAX];

	if (snprintf(root, sizeof(root), "%s/%u/root", proc_dir, pid) >= (int)sizeof(root))
		return -ENAMETOOLONG;
	return proc_file__open_in(root, path, id, max_size);
}

int proc_file__open_in(const char *root, const char *path, const struct proc_ident *id,
		       uint64_t max_size)
{
	struct open_how how = {
		.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	struct stat sb, sb2;
	char self[64];
	int root_fd, path_fd, fd, err;

	root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0)
		return -errno;
	path_fd = (int)syscall(SYS_openat2, root_fd, path, &how, sizeof(how));
	err = path_fd < 0 ? -errno : 0;
	close(root_fd);
	if (err)
		return err;
	if (fstat(path_fd, &sb)) {
		err = -errno;
		goto out;
	}
	/* O_NOFOLLOW|O_PATH opens a final symlink itself rather than failing */
	if (S_ISLNK(sb.st_mode)) {
		err = -ELOOP;
		goto out;
	}
	if (!S_ISREG(sb.st_mode)) {
		err = -EINVAL;
		goto out;
	}
	if (id && !owned_by(&sb, id)) {
		err = -EPERM;
		goto out;
	}
	if ((uint64_t)sb.st_size > max_size) {
		err = -EFBIG;
		goto out;
	}
	/* reopen the very inode checked, now for reading */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", path_fd);
	fd = open(self, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	if (fstat(fd, &sb2) || sb2.st_dev != sb.st_dev || sb2.st_ino != sb.st_ino) {
		close(fd);
		err = -ESTALE;
		goto out;
	}
	close(path_fd);
	return fd;
out:
	close(path_fd);
	return err;
}

const char *proc_file__strerror(int err)
{
	switch (err) {
	case -ELOOP:
		return "a symbolic link is on its path";
	case -EXDEV:
		return "its path leaves the process's root";
	case -EINVAL:
		return "not a regular file";
	case -EPERM:
		return "owned by neither the process nor root";
	case -EFBIG:
		return "larger than the size cap (--jit-max-size)";
	default:
		return strerror(-err);
	}
}

const void *proc_file__own_vdso(size_t *size)
{
	const Elf64_Ehdr *e = (const Elf64_Ehdr *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Phdr *ph;
	long page = sysconf(_SC_PAGESIZE);
	uint64_t end;

	*size = 0;
	if (!e || memcmp(e->e_ident, ELFMAG, SELFMAG) || e->e_ident[EI_CLASS] != ELFCLASS64 ||
	    e->e_phentsize != sizeof(*ph) || page <= 0)
		return NULL;
	/* the image ends with its section headers, or its last loaded bytes */
	end = e->e_shoff + (uint64_t)e->e_shnum * e->e_shentsize;
	ph = (const Elf64_Phdr *)((const char *)e + e->e_phoff);
	for (int i = 0; i < e->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_offset + ph[i].p_filesz > end)
			end = ph[i].p_offset + ph[i].p_filesz;
	/* the kernel maps the whole image, padded to a page (arch/x86/entry/vdso/vdso2c.h) */
	end = (end + (uint64_t)page - 1) & ~((uint64_t)page - 1);
	if (!end || end > VDSO_MAX_BYTES)
		return NULL;
	*size = (size_t)end;
	return e;
}

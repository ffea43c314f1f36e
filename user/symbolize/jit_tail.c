// SPDX-License-Identifier: MIT
/*
 * A running process's unflushed stdio buffer of its jitdump
 * (include/jit_tail.h). Offsets of struct _IO_FILE on LP64 glibc
 * (bits/types/struct_FILE.h): _flags 0, _IO_write_base 32, _IO_write_ptr
 * 40, _chain 104, _fileno 112.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "jit_tail.h"
#include "log.h"

#define FILE_FLAGS 0
#define FILE_WRITE_BASE 32
#define FILE_WRITE_PTR 40
#define FILE_CHAIN 104
#define FILE_FILENO 112
#define FILE_READ_SIZE 120
#define IO_MAGIC_MASK 0xFFFF0000u
#define IO_MAGIC 0xFBAD0000u

static uint64_t get_u64(const unsigned char *b, size_t off)
{
	uint64_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

static uint32_t get_u32(const unsigned char *b, size_t off)
{
	uint32_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

#define MAX_FDS 16

/* The process's descriptors of the file open here as file_fd, at most MAX_FDS: their number, or -errno. */
static int find_fds(const char *proc_dir, uint32_t pid, int file_fd, int *fds)
{
	char dir[64], path[384];
	struct stat want, sb;
	struct dirent *de;
	int n = 0;
	DIR *d;

	if (fstat(file_fd, &want))
		return -errno;
	snprintf(dir, sizeof(dir), "%s/%u/fd", proc_dir, pid);
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d)) && n < MAX_FDS) {
		char *end;
		long v = strtol(de->d_name, &end, 10);

		if (*end || end == de->d_name || v < 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		/* stat follows the magic link to the very inode */
		if (!stat(path, &sb) && sb.st_dev == want.st_dev && sb.st_ino == want.st_ino)
			fds[n++] = (int)v;
	}
	closedir(d);
	return n;
}

/* "pos:" of /proc/PID/fdinfo/N: the kernel's file position, bytes flushed so far. */
static int fd_pos(const char *proc_dir, uint32_t pid, int fd, uint64_t *pos)
{
	char path[96], line[128];
	unsigned long long v;
	int err = -EINVAL;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%u/fdinfo/%d", proc_dir, pid, fd);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "pos: %llu", &v) == 1) {
			*pos = v;
			err = 0;
			break;
		}
	fclose(f);
	return err;
}

static bool is_libc(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "libc.so.6", 9) ||
	       (!strncmp(base, "libc-2.", 7) && strstr(base, ".so"));
}

/*
 * The run-time address of _IO_list_all in process `proc`: its libc's
 * .dynsym value plus the load bias (the mapping at file offset 0 minus the
 * first PT_LOAD's page). -ENOENT when there is no libc or no such symbol.
 */
static int io_list_all(const char *proc_dir, const struct profile_process *pr, uint64_t *addr)
{
	const struct profile_mapping *m = NULL;
	uint64_t first_vaddr = UINT64_MAX;
	Elf_Scn *scn = NULL;
	char path[128];
	size_t i, nph;
	int fd, err = -ENOENT;
	Elf *e;

	for (i = 0; i < pr->nr_mappings && !m; i++)
		if (pr->mappings[i].offset == 0 && is_libc(pr->mappings[i].path))
			m = &pr->mappings[i];
	if (!m)
		return -ENOENT;
	/* the very file mapped, whatever the mount namespace */
	snprintf(path, sizeof(path), "%s/%u/map_files/%llx-%llx", proc_dir, pr->pid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF || gelf_getclass(e) != ELFCLASS64 ||
	    elf_getphdrnum(e, &nph)) {
		err = -ENOTSUP;
		goto out;
	}
	for (i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_offset == 0 &&
		    ph.p_vaddr < first_vaddr)
			first_vaddr = ph.p_vaddr & ~(uint64_t)0xfff;
	}
	if (first_vaddr == UINT64_MAX)
		goto out;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(d, (int)i, &sym) ||
			    GELF_ST_TYPE(sym.st_info) != STT_OBJECT || !sym.st_value)
				continue;
			name = elf_strptr(e, sh.sh_link, sym.st_name);
			if (name && !strcmp(name, "_IO_list_all")) {
				*addr = m->start - first_vaddr + sym.st_value;
				err = 0;
				goto out;
			}
		}
	}
out:
	elf_end(e);
	close(fd);
	return err;
}

static int read_mem(int mem, uint64_t addr, void *buf, size_t len)
{
	ssize_t n = pread(mem, buf, len, (off_t)addr);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

/*
 * The buffered bytes of the first FILE on _IO_list_all whose descriptor is
 * one of fds[0..nr); *which: its index in fds.
 */
static int buffered(int mem, uint64_t list_all, const int *fds, int nr, int *which, char **data,
		    size_t *len)
{
	unsigned char f[FILE_READ_SIZE];
	uint64_t fp, base, ptr;
	int err, i, k = -1;

	err = read_mem(mem, list_all, &fp, sizeof(fp));
	if (err)
		return err;
	for (i = 0; fp && i < JIT_TAIL_MAX_FILES && k < 0; i++) {
		err = read_mem(mem, fp, f, sizeof(f));
		if (err)
			return err;
		if ((get_u32(f, FILE_FLAGS) & IO_MAGIC_MASK) != IO_MAGIC)
			return -ENOENT; /* not a FILE: not glibc's list as expected */
		for (int j = 0; j < nr; j++)
			if ((int)get_u32(f, FILE_FILENO) == fds[j])
				k = j;
		if (k < 0)
			fp = get_u64(f, FILE_CHAIN);
	}
	if (k < 0)
		return -ENOENT;
	*which = k;
	base = get_u64(f, FILE_WRITE_BASE);
	ptr = get_u64(f, FILE_WRITE_PTR);
	*data = NULL;
	*len = 0;
	if (!base || ptr <= base)
		return 0;
	if (ptr - base > JIT_TAIL_MAX)
		return -EFBIG;
	*data = malloc(ptr - base);
	if (!*data)
		return -ENOMEM;
	err = read_mem(mem, base, *data, ptr - base);
	if (err) {
		free(*data);
		*data = NULL;
		return err;
	}
	*len = ptr - base;
	return 0;
}

int jit_tail__read(const char *proc_dir, const struct profile *p, uint32_t proc, int file_fd,
		   char **data, size_t *len, uint64_t *pos)
{
	const struct profile_process *pr = &p->procs[proc];
	uint64_t list_all = 0, before[MAX_FDS], after = 0;
	int fds[MAX_FDS], nr, which = 0, mem, err, tries;
	char path[64];

	*data = NULL;
	*len = 0;
	if (sizeof(void *) != 8)
		return -ENOTSUP;
	nr = find_fds(proc_dir, pr->pid, file_fd, fds);
	if (nr <= 0)
		return nr ? nr : -ENOENT;
	err = io_list_all(proc_dir, pr, &list_all);
	if (err)
		return err;
	snprintf(path, sizeof(path), "%s/%u/mem", proc_dir, pr->pid);
	mem = open(path, O_RDONLY | O_CLOEXEC);
	if (mem < 0)
		return -errno;
	for (tries = 0, err = -EAGAIN; tries < 3 && err == -EAGAIN; tries++) {
		free(*data);
		*data = NULL;
		*len = 0;
		err = 0;
		for (int j = 0; j < nr && !err; j++)
			err = fd_pos(proc_dir, pr->pid, fds[j], &before[j]);
		if (!err)
			err = buffered(mem, list_all, fds, nr, &which, data, len);
		if (!err)
			err = fd_pos(proc_dir, pr->pid, fds[which], &after);
		if (!err && before[which] != after)
			err = -EAGAIN; /* flushed meanwhile: the buffer may hold other bytes now */
	}
	close(mem);
	if (err) {
		free(*data);
		*data = NULL;
		*len = 0;
		return err;
	}
	*pos = before[which];
	return 0;
}

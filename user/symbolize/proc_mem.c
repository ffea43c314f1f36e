// SPDX-License-Identifier: MIT
/* A process's memory read by lines (include/proc_mem.h) */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "proc_mem.h"

struct proc_mem {
	int fd; /* -1: not open */
	uint64_t tag[PROC_MEM_LINES]; /* the line's address + 1; 0: none */
	uint8_t line[PROC_MEM_LINES][PROC_MEM_LINE];
};

struct proc_mem *proc_mem__new(void)
{
	struct proc_mem *m = malloc(sizeof(*m));

	if (!m)
		return NULL;
	m->fd = -1;
	proc_mem__forget(m);
	return m;
}

int proc_mem__open(struct proc_mem *m, const char *path)
{
	if (m->fd >= 0)
		return 0;
	m->fd = open(path, O_RDONLY | O_CLOEXEC);
	return m->fd < 0 ? -errno : 0;
}

bool proc_mem__is_open(const struct proc_mem *m)
{
	return m->fd >= 0;
}

void proc_mem__forget(struct proc_mem *m)
{
	memset(m->tag, 0, sizeof(m->tag));
}

int proc_mem__read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct proc_mem *m = ctx;
	uint64_t at = addr & ~(uint64_t)(PROC_MEM_LINE - 1);
	size_t k = (size_t)(at / PROC_MEM_LINE) % PROC_MEM_LINES;
	ssize_t n;

	if (m->fd < 0)
		return -EIO;
	if (len && addr - at + len <= PROC_MEM_LINE) {
		if (m->tag[k] != at + 1) {
			m->tag[k] = 0;
			if (pread(m->fd, m->line[k], PROC_MEM_LINE, (off_t)at) == PROC_MEM_LINE)
				m->tag[k] = at + 1;
		}
		if (m->tag[k] == at + 1) {
			memcpy(buf, &m->line[k][addr - at], len);
			return 0;
		}
	}
	n = pread(m->fd, buf, len, (off_t)addr);
	return n == (ssize_t)len ? 0 : n < 0 ? -errno : -EIO;
}

void proc_mem__free(struct proc_mem *m)
{
	if (!m)
		return;
	if (m->fd >= 0)
		close(m->fd);
	free(m);
}

// SPDX-License-Identifier: MIT
/* write_all and pwrite_all (include/lib_io.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>
#include "lib_io.h"

/* The loop of both: write(2), or pwrite(2) at off when positional. */
static int write_loop(int fd, const void *p, size_t n, bool positional, off_t off)
{
	const uint8_t *c = p;

	while (n) {
		ssize_t r = positional ? pwrite(fd, c, n, off) : write(fd, c, n);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -EIO;
		c += r;
		n -= (size_t)r;
		off += r;
	}
	return 0;
}

int io__write_all(int fd, const void *p, size_t n)
{
	return write_loop(fd, p, n, false, 0);
}

int io__pwrite_all(int fd, const void *p, size_t n, off_t off)
{
	return write_loop(fd, p, n, true, off);
}

int io__read_upto(int fd, void *buf, size_t size, size_t *n)
{
	*n = 0;
	while (*n < size) {
		ssize_t r = read(fd, (char *)buf + *n, size - *n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (!r)
			break;
		*n += (size_t)r;
	}
	return 0;
}

// SPDX-License-Identifier: MIT
/* write_all, pwrite_all and write_direct (include/lib_io.h). */
#include <errno.h>
#include <fcntl.h>
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

/* O_DIRECT on or off fd's file description; 0 or -errno (EINVAL: no direct I/O there) */
static int set_direct(int fd, bool on)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -errno;
	return fcntl(fd, F_SETFL, on ? fl | O_DIRECT : fl & ~O_DIRECT) ? -errno : 0;
}

int io__write_direct(int fd, const void *p, size_t n)
{
	const uint8_t *c = p;
	bool direct = !set_direct(fd, true);
	int err = 0;

	while (n) {
		ssize_t r = write(fd, c, n);

		if (r < 0 && errno == EINVAL && direct) {
			/* the file system's or the offset's refusal: the rest written buffered */
			direct = false;
			if ((err = set_direct(fd, false)))
				break;
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			err = r ? -errno : -EIO;
			break;
		}
		c += r;
		n -= (size_t)r;
	}
	if (direct && set_direct(fd, false) && !err)
		err = -EIO;
	return err;
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

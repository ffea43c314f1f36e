// SPDX-License-Identifier: MIT
/* An output's streamed bytes past the page cache (include/direct_out.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include "direct_out.h"
#include "lib_io.h"

void direct_out__init(struct direct_out *d, int fd)
{
	memset(d, 0, sizeof(*d));
	d->fd = fd;
}

/* O_DIRECT on or off fd; 0 or -errno (EINVAL: the file system has no direct I/O) */
static int set_direct(int fd, bool on)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -errno;
	fl = on ? fl | O_DIRECT : fl & ~O_DIRECT;
	return fcntl(fd, F_SETFL, fl) ? -errno : 0;
}

/* The first bytes: the staging buffer and O_DIRECT, either of which may be refused */
static void begin(struct direct_out *d)
{
	void *p = NULL;

	d->begun = true;
	if (posix_memalign(&p, DIRECT_OUT_ALIGN, DIRECT_OUT_CHUNK))
		return;
	d->stage = p;
	d->direct = !set_direct(d->fd, true);
}

/*
 * n bytes of the stage (a multiple of DIRECT_OUT_ALIGN when direct) to the
 * file. EINVAL on the first direct write (a file system whose fcntl took
 * the flag but whose writes refuse it): buffered from then on.
 */
static int flush(struct direct_out *d, size_t n)
{
	int err = io__write_all(d->fd, d->stage, n);

	if (err == -EINVAL && d->direct) {
		d->direct = false;
		err = set_direct(d->fd, false);
		if (!err)
			err = io__write_all(d->fd, d->stage, n);
	}
	return err;
}

int direct_out__write(struct direct_out *d, const void *p, size_t n)
{
	const uint8_t *s = p;
	int err;

	if (!d->begun)
		begin(d);
	if (!d->stage) /* no staging buffer: plain writes, as without this object */
		return io__write_all(d->fd, p, n);
	while (n) {
		size_t k = DIRECT_OUT_CHUNK - d->len < n ? DIRECT_OUT_CHUNK - d->len : n;

		memcpy(d->stage + d->len, s, k);
		d->len += k, s += k, n -= k;
		if (d->len == DIRECT_OUT_CHUNK) {
			d->len = 0;
			if ((err = flush(d, DIRECT_OUT_CHUNK)))
				return err;
		}
	}
	return 0;
}

int direct_out__end(struct direct_out *d)
{
	size_t whole = d->direct ? d->len / DIRECT_OUT_ALIGN * DIRECT_OUT_ALIGN : d->len;
	int err = 0, e;

	if (whole)
		err = flush(d, whole);
	if (d->direct && (e = set_direct(d->fd, false)) && !err)
		err = e;
	d->direct = false;
	if (!err && d->len > whole)
		err = io__write_all(d->fd, d->stage + whole, d->len - whole);
	free(d->stage);
	d->stage = NULL;
	d->len = 0;
	d->begun = false;
	return err;
}

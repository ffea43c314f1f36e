/* SPDX-License-Identifier: MIT */
/* The one write-everything loop of the writers (short writes, EINTR), and its read twin. */
#ifndef BPFPROF_LIB_IO_H
#define BPFPROF_LIB_IO_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Write all n bytes of p to fd, retrying short writes and EINTR. Returns 0,
 * -errno of the failed write, or -EIO when write(2) wrote nothing.
 */
int io__write_all(int fd, const void *p, size_t n);
/* The same with pwrite(2) from file offset off; fd's offset is not moved. */
int io__pwrite_all(int fd, const void *p, size_t n, off_t off);
/*
 * Read from fd into buf until end of file or size bytes, retrying short
 * reads and EINTR; no allocation (the notices' thread calls it). Returns 0
 * with *n the bytes read (*n == size: more may follow), or -errno of the
 * failed read (*n the bytes read before it).
 */
int io__read_upto(int fd, void *buf, size_t size, size_t *n);

#endif /* BPFPROF_LIB_IO_H */

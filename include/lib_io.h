/* SPDX-License-Identifier: MIT */
/* The one write-everything loop of the writers (short writes, EINTR). */
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

#endif /* BPFPROF_LIB_IO_H */

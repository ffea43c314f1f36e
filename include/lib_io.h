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
 * Alignment io__write_direct wants of its memory, length and file offset: a
 * page, enough for any logical block size up to it (open(2), "O_DIRECT";
 * statx(2) STATX_DIOALIGN tells the real needs, which a page meets).
 */
#define IO_DIRECT_ALIGN 4096u
/*
 * io__write_all past the page cache (O_DIRECT, set on fd for the call and
 * taken off after), for outputs of tens of MB: a buffered write copies each
 * byte into a page-cache page the kernel first allocates, and on a VM whose
 * host takes back free guest memory (virtio-balloon free page reporting)
 * the first touch of each such page costs a host fault: 27 MB took 110-120
 * ms of kernel CPU buffered, 3 ms direct (docs/BENCHMARKS.md, finalize's
 * sixth pass). p, n and fd's offset are multiples of IO_DIRECT_ALIGN; where
 * the file system refuses direct I/O (EINVAL: fcntl or a write) the rest is
 * written buffered, the same bytes. The call returns once the device has the
 * bytes (its cache: an fsync still makes them durable, with the file's size).
 * Returns as io__write_all.
 */
int io__write_direct(int fd, const void *p, size_t n);
/*
 * Read from fd into buf until end of file or size bytes, retrying short
 * reads and EINTR; no allocation (the notices' thread calls it). Returns 0
 * with *n the bytes read (*n == size: more may follow), or -errno of the
 * failed read (*n the bytes read before it).
 */
int io__read_upto(int fd, void *buf, size_t size, size_t *n);

#endif /* BPFPROF_LIB_IO_H */

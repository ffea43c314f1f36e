/* SPDX-License-Identifier: MIT */
/*
 * An output file's streamed bytes written past the page cache (O_DIRECT,
 * open(2) "O_DIRECT"): for the writers that drain tens of MB as they go
 * (.folded, .svg). A buffered write(2) copies each byte into a page-cache
 * page that the kernel first allocates; on a VM whose host takes back free
 * guest memory (virtio-balloon free page reporting) that first touch of each
 * page costs a host fault: 110-120 ms of kernel CPU for 27 MB here against
 * 3 ms direct (docs/BENCHMARKS.md, sixth pass). The device reads the bytes
 * from a staging buffer of this object's instead.
 *
 * O_DIRECT wants the file offset, the length and the memory aligned
 * (open(2), "O_DIRECT"; statx(2) STATX_DIOALIGN gives the needs): the bytes
 * are gathered in a page-aligned buffer and written in whole multiples of
 * DIRECT_OUT_ALIGN; the tail under it is written buffered at the end. A file
 * system that refuses O_DIRECT (fcntl or the first write: EINVAL) gets
 * buffered writes, the same bytes. The file's content is what buffered
 * writes would give; durability is still the caller's fsync (the device's
 * cache, the file's size and extents).
 */
#ifndef BPFPROF_DIRECT_OUT_H
#define BPFPROF_DIRECT_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Alignment of offsets, lengths and memory: a page, enough for any block size up to it */
#define DIRECT_OUT_ALIGN 4096u
/* Bytes gathered before a write: 2 MiB, struct buf's drains (about 1-2 MiB each) in one */
#define DIRECT_OUT_CHUNK (2u << 20)

struct direct_out {
	int fd; /* borrowed: the output's temporary file, at offset 0 when begun */
	bool direct; /* O_DIRECT set on fd and working */
	bool begun;
	uint8_t *stage; /* owned, DIRECT_OUT_ALIGN-aligned, DIRECT_OUT_CHUNK bytes */
	size_t len; /* bytes in stage */
};

/* Attach to fd (not yet written to); nothing is allocated or changed until the first write. */
void direct_out__init(struct direct_out *d, int fd);
/*
 * Append n bytes: gathered, written to the file in whole chunks (direct, or
 * buffered where the file system refuses). Returns 0 or -errno of a failed
 * write. Without a staging buffer (no memory) the bytes are written
 * buffered, at once.
 */
int direct_out__write(struct direct_out *d, const void *p, size_t n);
/*
 * Write what is gathered (the aligned part direct, the rest buffered) and
 * take O_DIRECT off fd again, so that later writes of the caller's
 * (output__sync's) are plain ones at the file's end. Returns 0 or -errno.
 * Frees the staging buffer; the object can be dropped or begun again.
 */
int direct_out__end(struct direct_out *d);

#endif /* BPFPROF_DIRECT_OUT_H */

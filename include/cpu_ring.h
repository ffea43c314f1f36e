/* SPDX-License-Identifier: MIT */
/*
 * The reader's side of the CPUs' rings (include/bpfprof_abi.h, struct
 * bpfprof_cpu_ring; bpf/cpu_ring.bpf.h writes them): the records of every
 * CPU's ring handed to a callback in the order of their time, read in
 * place from the rings' memory (the BPF map's mapping), then each ring's
 * tail stored once a drain.
 */
#ifndef BPFPROF_CPU_RING_H
#define BPFPROF_CPU_RING_H

#include <stddef.h>
#include <stdint.h>

struct cpu_rings;

/*
 * What --ringbuf-size's ringbuf_bytes (a power of two, at least a page)
 * sizes, in bytes, on nr_cpus possible CPUs: the CPUs' rings, which
 * samples go to, ringbuf_bytes split over them, each the largest power of
 * two in its share, BPFPROF_CPU_RING_MIN at least, BPFPROF_CPU_RING_MAX at
 * most (5.10's array values are 4 MiB at most, kmalloc's limit); and the
 * shared ring buffer `samples` (off-CPU blocks, stack copies), half of
 * ringbuf_bytes, a page at least. The reader maps a CPU's ring once and
 * the shared ring's data twice (libbpf), so its resident memory for them
 * is what the one ring buffer of ringbuf_bytes took before them; the
 * kernel's is half as much again.
 */
void cpu_ring_sizes(uint64_t ringbuf_bytes, int nr_cpus, uint64_t *shared, uint64_t *cpu);

/*
 * Called for each record (data: size bytes in the ring, valid until the
 * drain ends); a negative return ends the drain with it, the record taken.
 */
typedef int (*cpu_ring_record_fn)(void *ctx, void *data, size_t size);

/*
 * The reader of nr rings laid out from base, stride bytes apart (the array
 * map's value size rounded up to 8: the kernel's elem_size), each with
 * size data bytes (a power of two; 0 or not: NULL, errno EINVAL). base's
 * memory is the caller's and must outlive the reader. NULL on error
 * (errno set). Free with cpu_rings__free.
 */
struct cpu_rings *cpu_rings__new(void *base, size_t stride, uint32_t nr, uint64_t size);
void cpu_rings__free(struct cpu_rings *r);

/*
 * Hand every record waiting in the rings to fn, oldest first by the
 * records' time (struct bpfprof_sample.time_ns: each ring is in time
 * order, and a CPU's record can be older than another's read before it;
 * a thread that moved between CPUs keeps its order), until the rings are
 * empty; records published meanwhile are taken too. A ring's tail is
 * stored (release) at the drain's end and each quarter of its size
 * consumed. A record that would end past the head (a head not yet
 * covering it) waits for the next drain; a ring whose bytes do not parse
 * (a head more than size past the tail, a record longer than the data)
 * has them skipped to its head and counted (cpu_rings__nr_bad).
 * Returns the records handed over, or fn's negative return.
 */
int cpu_rings__consume(struct cpu_rings *r, cpu_ring_record_fn fn, void *ctx);

/* Rings found not to parse since cpu_rings__new (each time skipped to its head) */
uint64_t cpu_rings__nr_bad(const struct cpu_rings *r);

#endif /* BPFPROF_CPU_RING_H */

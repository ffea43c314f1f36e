/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The CPUs' own rings (include/bpfprof_abi.h, struct bpfprof_cpu_ring): a
 * sample's record goes into its CPU's ring with plain stores. Through the
 * shared `samples` ring buffer (bpf_ringbuf_output) a record cost a helper
 * call, the ring's spinlock, the consumer position the reader writes after
 * every record and the producer position every CPU writes: 0.37-0.47 us of
 * a sample on this project's hosts (docs/BENCHMARKS.md, issue 34 part 5),
 * and on a host of many CPUs lines all of them share. Samples do not nest
 * on a CPU (the perf event's handler skips a program while one runs there:
 * bpf_prog_active), so a ring has one writer; off-CPU blocks, which a
 * sample can interrupt, and stack copies keep `samples`.
 */
#ifndef BPFPROF_CPU_RING_BPF_H
#define BPFPROF_CPU_RING_BPF_H

#include "state.bpf.h"

/*
 * The reader's tail of ring r, this CPU's (a line the reader writes at
 * each drain: a miss at each read), kept in its cpu_state
 */
static __always_inline __u64 cpu_ring_tail(struct bpfprof_cpu_ring *r)
{
	struct cpu_state *cs = (struct cpu_state *)r->bpf_own;
	__u64 tail = *(volatile __u64 *)&r->tail;

	cs->ring_tail_seen = tail;
	return tail;
}

/* The tail of ring r, this CPU's, as it was last read: at most the reader's, which only grows */
static __always_inline __u64 cpu_ring_tail_seen(struct bpfprof_cpu_ring *r)
{
	return ((struct cpu_state *)r->bpf_own)->ring_tail_seen;
}

/*
 * The bytes that wait for the reader in ring r, exact where they are at
 * least exact_from; below it, a bound from above (against the tail last
 * seen) that is below exact_from too, without the tail's
 * line: a reader that keeps up leaves most samples there
 * (docs/BENCHMARKS.md, issue 34 part 6)
 */
static __always_inline __u64 cpu_ring_fill(struct bpfprof_cpu_ring *r, __u64 exact_from)
{
	__u64 head = r->head, tail = cpu_ring_tail_seen(r);

	if (head - tail >= exact_from)
		tail = cpu_ring_tail(r);
	return head - tail;
}

/* The ring bytes a record of len bytes takes: its header, then the record, aligned */
static __always_inline __u64 cpu_ring_need(__u64 len)
{
	return (sizeof(struct bpfprof_cpu_ring_rec) + len + BPFPROF_CPU_RING_ALIGN - 1) &
	       ~(__u64)(BPFPROF_CPU_RING_ALIGN - 1);
}

/*
 * Put record rec of len bytes (at most sizeof(struct bpfprof_sample)) in
 * ring r and publish it. publish false: everything but the new head's
 * store (the primitives' bench build: the reader sees nothing). Returns 0,
 * or -1 when the ring has no room (the record is lost; nothing changed).
 */
static __always_inline int cpu_ring_put(struct bpfprof_cpu_ring *r, const void *rec, __u64 len,
					bool publish)
{
	__u64 head0 = r->head, head = head0, tail = cpu_ring_tail_seen(r), need, off, pad = 0;
	__u8 *data = (__u8 *)r + BPFPROF_CPU_RING_HDR_SIZE;
	struct bpfprof_cpu_ring_rec *h;

	if (len > sizeof(struct bpfprof_sample))
		return -1;
	need = cpu_ring_need(len);
	off = head & (cpu_ring_size - 1);
	/* a record never wraps: the lap's rest is skipped (a pad record) */
	if (off + need > cpu_ring_size)
		pad = cpu_ring_size - off;
	/* the tail last seen first (cpu_ring_fill), the reader's own only where that leaves no room */
	if (head + pad + need - tail > cpu_ring_size &&
	    head + pad + need - cpu_ring_tail(r) > cpu_ring_size)
		return -1;
	if (pad) {
		((struct bpfprof_cpu_ring_rec *)(data + off))->len = BPFPROF_CPU_RING_PAD;
		head += pad;
		off = 0;
	}
	h = (struct bpfprof_cpu_ring_rec *)(data + off);
	h->len = (__u32)len;
	h->pad = 0;
	/* one call (the verifier: no loop to follow); len bounded again after the stores */
	barrier_var(len);
	if (len > sizeof(struct bpfprof_sample))
		len = sizeof(struct bpfprof_sample);
	bpf_probe_read_kernel(h + 1, len, rec);
	/*
	 * The head after the record's bytes: x86-64 keeps stores in program
	 * order (TSO), so the compiler's order is enough, which the volatile
	 * store and the barrier before it keep (the helper's writes are
	 * ordered before its return too). arm64 would need a store-release
	 * here (BPF_STORE_REL, a load-acquire/store-release BPF instruction
	 * of 6.15+; the reader already loads head with acquire)
	 */
	barrier();
	*(volatile __u64 *)&r->head = publish ? head + need : head0;
	return 0;
}

#endif /* BPFPROF_CPU_RING_BPF_H */

// SPDX-License-Identifier: MIT
/*
 * The CPUs' rings, read (include/cpu_ring.h): a cursor a ring, the rings'
 * records merged by time. The layout and its protocol are
 * include/bpfprof_abi.h's (struct bpfprof_cpu_ring); what writes them is
 * bpf/cpu_ring.bpf.h.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include "bpfprof_abi.h"
#include "cpu_ring.h"

struct ring_cursor {
	struct bpfprof_cpu_ring *ring;
	uint8_t *data;
	uint64_t pos; /* the next record's position */
	uint64_t head; /* the head as last loaded */
	uint64_t stored; /* the tail as last stored */
	uint64_t time; /* the record at pos's time, once peeked */
};

struct cpu_rings {
	uint64_t size;
	uint64_t nr_bad;
	uint32_t nr;
	uint32_t *ready; /* cursors with a record peeked: a binary min-heap by their time */
	struct ring_cursor c[];
};

void cpu_ring_sizes(uint64_t ringbuf_bytes, int nr_cpus, uint64_t *shared, uint64_t *cpu)
{
	uint64_t each = ringbuf_bytes / (uint64_t)(nr_cpus > 0 ? nr_cpus : 1), size;

	*shared = ringbuf_bytes / 2 >= 4096 ? ringbuf_bytes / 2 : 4096;
	for (size = BPFPROF_CPU_RING_MIN; size < BPFPROF_CPU_RING_MAX && size * 2 <= each;)
		size *= 2;
	*cpu = size;
}

struct cpu_rings *cpu_rings__new(void *base, size_t stride, uint32_t nr, uint64_t size)
{
	struct cpu_rings *r;
	uint32_t i;

	if (!base || !nr || !size || (size & (size - 1)) ||
	    stride < BPFPROF_CPU_RING_HDR_SIZE + size) {
		errno = EINVAL;
		return NULL;
	}
	r = calloc(1, sizeof(*r) + nr * sizeof(r->c[0]));
	if (!r)
		return NULL;
	r->ready = calloc(nr, sizeof(*r->ready));
	if (!r->ready) {
		free(r);
		return NULL;
	}
	r->size = size;
	r->nr = nr;
	for (i = 0; i < nr; i++) {
		struct ring_cursor *c = &r->c[i];

		c->ring = (struct bpfprof_cpu_ring *)((uint8_t *)base + (size_t)i * stride);
		c->data = (uint8_t *)c->ring + BPFPROF_CPU_RING_HDR_SIZE;
		c->pos = c->stored = c->head = __atomic_load_n(&c->ring->tail, __ATOMIC_RELAXED);
	}
	return r;
}

void cpu_rings__free(struct cpu_rings *r)
{
	if (!r)
		return;
	free(r->ready);
	free(r);
}

/* c's bytes do not parse: skipped to its head */
static void skip_bad(struct cpu_rings *r, struct ring_cursor *c)
{
	c->pos = c->head;
	r->nr_bad++;
}

/*
 * Whether a whole record waits at c->pos (its time in c->time), pad
 * records passed. A record that ends past the head waits.
 */
static bool peek(struct cpu_rings *r, struct ring_cursor *c)
{
	while (c->pos != c->head) {
		uint64_t off = c->pos & (r->size - 1), avail = c->head - c->pos, need;
		struct bpfprof_cpu_ring_rec rec;

		if (avail < sizeof(rec))
			return false;
		memcpy(&rec, c->data + off, sizeof(rec));
		if (rec.len == BPFPROF_CPU_RING_PAD) {
			if (r->size - off > avail) {
				skip_bad(r, c);
				return false;
			}
			c->pos += r->size - off;
			continue;
		}
		need = (sizeof(rec) + (uint64_t)rec.len + BPFPROF_CPU_RING_ALIGN - 1) &
		       ~(uint64_t)(BPFPROF_CPU_RING_ALIGN - 1);
		if (off + need > r->size) {
			skip_bad(r, c);
			return false;
		}
		if (need > avail)
			return false;
		c->time = 0;
		if (rec.len >= offsetof(struct bpfprof_sample, time_ns) + sizeof(c->time))
			memcpy(&c->time,
			       c->data + off + sizeof(rec) +
				       offsetof(struct bpfprof_sample, time_ns),
			       sizeof(c->time));
		return true;
	}
	return false;
}

/* The heads loaded again; the cursors with a record waiting listed in r->ready. Returns how many. */
static uint32_t load_heads(struct cpu_rings *r)
{
	uint32_t i, n = 0;

	for (i = 0; i < r->nr; i++) {
		struct ring_cursor *c = &r->c[i];

		c->head = __atomic_load_n(&c->ring->head, __ATOMIC_ACQUIRE);
		if (c->head - c->stored > r->size || c->head - c->pos > r->size)
			skip_bad(r, c);
		if (peek(r, c))
			r->ready[n++] = i;
	}
	return n;
}

/* The heap of r->ready's n cursors put right below slot i (i's time may have grown) */
static void sift_down(struct cpu_rings *r, uint32_t n, uint32_t i)
{
	uint32_t top = r->ready[i];
	uint64_t t = r->c[top].time;

	for (;;) {
		uint32_t k = 2 * i + 1;

		if (k >= n)
			break;
		if (k + 1 < n && r->c[r->ready[k + 1]].time < r->c[r->ready[k]].time)
			k++;
		if (r->c[r->ready[k]].time >= t)
			break;
		r->ready[i] = r->ready[k];
		i = k;
	}
	r->ready[i] = top;
}

static void store_tail(struct ring_cursor *c)
{
	if (c->stored == c->pos)
		return;
	__atomic_store_n(&c->ring->tail, c->pos, __ATOMIC_RELEASE);
	c->stored = c->pos;
}

int cpu_rings__consume(struct cpu_rings *r, cpu_ring_record_fn fn, void *ctx)
{
	uint32_t nr_ready, i;
	int n = 0, err = 0;

	while (!err && (nr_ready = load_heads(r))) {
		/* the oldest record first: a heap, as many CPUs' rings may wait (64: 6 steps a record) */
		for (i = nr_ready / 2; i-- > 0;)
			sift_down(r, nr_ready, i);
		while (nr_ready) {
			struct ring_cursor *c = &r->c[r->ready[0]];
			struct bpfprof_cpu_ring_rec rec;
			uint8_t *at = c->data + (c->pos & (r->size - 1));

			memcpy(&rec, at, sizeof(rec));
			err = fn(ctx, at + sizeof(rec), rec.len);
			c->pos += (sizeof(rec) + (uint64_t)rec.len + BPFPROF_CPU_RING_ALIGN - 1) &
				  ~(uint64_t)(BPFPROF_CPU_RING_ALIGN - 1);
			if (n < INT32_MAX)
				n++;
			/* room for BPF while a long drain goes on */
			if (c->pos - c->stored >= r->size / 4)
				store_tail(c);
			if (err < 0)
				break;
			err = 0;
			if (!peek(r, c))
				r->ready[0] = r->ready[--nr_ready];
			sift_down(r, nr_ready, 0);
		}
	}
	for (i = 0; i < r->nr; i++)
		store_tail(&r->c[i]);
	return err < 0 ? err : n;
}

uint64_t cpu_rings__nr_bad(const struct cpu_rings *r)
{
	return r->nr_bad;
}

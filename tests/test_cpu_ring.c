// SPDX-License-Identifier: MIT
/*
 * cmocka tests for include/cpu_ring.h on byte-level rings laid out as
 * include/bpfprof_abi.h says (struct bpfprof_cpu_ring): empty rings, two
 * rings' records merged by time, a pad record at a lap's end, a head that
 * covers part of a record (waits), rings that do not parse (skipped,
 * counted), a callback's error (the record taken, the rest left), records
 * published during a drain, and what --ringbuf-size sizes.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <linux/types.h>
#include "bpfprof_abi.h"
#include "cpu_ring.h"

#define SIZE 256u
#define STRIDE (BPFPROF_CPU_RING_HDR_SIZE + SIZE + 64)
#define NR 2

static union {
	uint64_t align;
	uint8_t b[NR * STRIDE];
} mem;

static struct bpfprof_cpu_ring *ring(int i)
{
	return (struct bpfprof_cpu_ring *)(mem.b + i * STRIDE);
}

static uint8_t *data(int i)
{
	return mem.b + i * STRIDE + BPFPROF_CPU_RING_HDR_SIZE;
}

/* Rings i's positions both at pos: empty, its next record at pos */
static void start_at(int i, uint64_t pos)
{
	ring(i)->head = ring(i)->tail = pos;
}

/* A record of len bytes (a sample's header when len allows) with time t at ring i's head, as BPF writes it */
static void put(int i, uint64_t t, uint32_t len, bool publish)
{
	uint64_t head = ring(i)->head, off = head & (SIZE - 1);
	uint64_t need = (sizeof(struct bpfprof_cpu_ring_rec) + len + 7) & ~7ull;
	struct bpfprof_cpu_ring_rec rec = { .len = len };
	struct bpfprof_sample s;

	if (off + need > SIZE) {
		struct bpfprof_cpu_ring_rec pad = { .len = BPFPROF_CPU_RING_PAD };

		memcpy(data(i) + off, &pad, sizeof(pad));
		head += SIZE - off;
		off = 0;
	}
	memset(&s, 0x5a, sizeof(s));
	s.type = BPFPROF_REC_SAMPLE;
	s.cpu = (uint32_t)i;
	s.time_ns = t;
	memcpy(data(i) + off, &rec, sizeof(rec));
	memcpy(data(i) + off + sizeof(rec), &s, len < sizeof(s) ? len : sizeof(s));
	if (publish)
		ring(i)->head = head + need;
}

struct seen {
	int n;
	uint64_t time[16];
	uint32_t cpu[16];
	size_t size[16];
	int fail_at; /* the call that returns -ECANCELED (1: the first); 0 none */
	bool publish_more; /* the first call puts one more record in ring 1 */
};

static int on_record(void *ctx, void *d, size_t size)
{
	struct seen *s = ctx;
	struct bpfprof_sample r;

	memset(&r, 0, sizeof(r));
	memcpy(&r, d, size < sizeof(r) ? size : sizeof(r));
	if (s->n < 16) {
		s->time[s->n] = size >= 24 ? r.time_ns : 0;
		s->cpu[s->n] = r.cpu;
		s->size[s->n] = size;
	}
	s->n++;
	if (s->publish_more && s->n == 1)
		put(1, 15, 64, true);
	return s->n == s->fail_at ? -ECANCELED : 0;
}

static struct cpu_rings *new_rings(void)
{
	struct cpu_rings *r = cpu_rings__new(mem.b, STRIDE, NR, SIZE);

	assert_non_null(r);
	return r;
}

static int setup(void **state)
{
	memset(&mem, 0, sizeof(mem));
	return 0;
}

static void test_empty(void **state)
{
	struct seen s = { 0 };
	struct cpu_rings *r;

	start_at(0, 1000);
	r = new_rings();
	assert_int_equal(cpu_rings__consume(r, on_record, &s), 0);
	assert_int_equal(s.n, 0);
	assert_true(ring(0)->tail == 1000 && ring(1)->tail == 0);
	assert_true(cpu_rings__nr_bad(r) == 0);
	cpu_rings__free(r);
}

static void test_merge_by_time(void **state)
{
	struct seen s = { 0 };
	struct cpu_rings *r = new_rings();

	put(0, 10, 64, true);
	put(0, 30, 40, true);
	put(1, 20, 64, true);
	put(1, 40, 64, true);
	assert_int_equal(cpu_rings__consume(r, on_record, &s), 4);
	assert_int_equal(s.n, 4);
	assert_true(s.time[0] == 10 && s.time[1] == 20 && s.time[2] == 30 && s.time[3] == 40);
	assert_true(s.cpu[0] == 0 && s.cpu[1] == 1 && s.cpu[2] == 0 && s.cpu[3] == 1);
	assert_int_equal(s.size[2], 40);
	/* every byte read: the tails at the heads, 8-aligned records */
	assert_true(ring(0)->tail == 72 + 48 && ring(0)->tail == ring(0)->head);
	assert_true(ring(1)->tail == 144 && ring(1)->tail == ring(1)->head);
	/* nothing more */
	assert_int_equal(cpu_rings__consume(r, on_record, &s), 0);
	cpu_rings__free(r);
}

static void test_pad_at_lap_end(void **state)
{
	struct seen s = { 0 };
	struct cpu_rings *r;

	/* 200 + 72 > 256: a pad record at 200, the record at the next lap's start */
	start_at(0, 3 * SIZE + 200);
	put(0, 7, 64, true);
	assert_true(ring(0)->head == 4 * SIZE + 72);
	assert_true(((struct bpfprof_cpu_ring_rec *)(data(0) + 200))->len == BPFPROF_CPU_RING_PAD);
	r = new_rings();
	assert_int_equal(cpu_rings__consume(r, on_record, &s), 1);
	assert_true(s.time[0] == 7 && s.size[0] == 64);
	assert_true(ring(0)->tail == 4 * SIZE + 72);
	assert_true(cpu_rings__nr_bad(r) == 0);
	cpu_rings__free(r);
}

static void test_torn_head(void **state)
{
	struct seen s = { 0 };
	struct cpu_rings *r = new_rings();

	put(0, 5, 64, false);
	ring(0)->head = 40; /* part of the record's 72 bytes */
	assert_int_equal(cpu_rings__consume(r, on_record, &s), 0);
	assert_true(ring(0)->tail == 0);
	ring(0)->head = 72;
	assert_int_equal(cpu_rings__consume(r, on_record, &s), 1);
	assert_true(s.time[0] == 5 && ring(0)->tail == 72);
	assert_true(cpu_rings__nr_bad(r) == 0);
	cpu_rings__free(r);
}

static void test_bad_rings(void **state)
{
	struct seen s = { 0 };
	struct bpfprof_cpu_ring_rec long_rec = { .len = SIZE };
	struct cpu_rings *r = new_rings();

	/* a head more than a ring past the tail */
	ring(0)->head = SIZE + 8;
	/* a record longer than the data */
	memcpy(data(1), &long_rec, sizeof(long_rec));
	ring(1)->head = 64;
	assert_int_equal(cpu_rings__consume(r, on_record, &s), 0);
	assert_int_equal(s.n, 0);
	assert_true(cpu_rings__nr_bad(r) == 2);
	assert_true(ring(0)->tail == SIZE + 8 && ring(1)->tail == 64);
	/* the rings go on from there */
	put(1, 9, 32, true);
	assert_int_equal(cpu_rings__consume(r, on_record, &s), 1);
	assert_true(s.time[0] == 9);
	cpu_rings__free(r);
}

static void test_error_stops(void **state)
{
	struct seen s = { .fail_at = 2 };
	struct cpu_rings *r = new_rings();

	put(0, 1, 64, true);
	put(0, 3, 64, true);
	put(1, 2, 64, true);
	assert_int_equal(cpu_rings__consume(r, on_record, &s), -ECANCELED);
	/* the record that failed is taken; the one after it is left */
	assert_int_equal(s.n, 2);
	assert_true(ring(0)->tail == 72 && ring(1)->tail == 72);
	s.fail_at = 0;
	assert_int_equal(cpu_rings__consume(r, on_record, &s), 1);
	assert_true(s.time[2] == 3 && ring(0)->tail == 144);
	cpu_rings__free(r);
}

static void test_published_during_drain(void **state)
{
	struct seen s = { .publish_more = true };
	struct cpu_rings *r = new_rings();

	put(0, 10, 64, true);
	assert_int_equal(cpu_rings__consume(r, on_record, &s), 2);
	assert_true(s.time[0] == 10 && s.time[1] == 15 && s.cpu[1] == 1);
	assert_true(ring(1)->tail == 72);
	cpu_rings__free(r);
}

static void test_new_refuses(void **state)
{
	assert_null(cpu_rings__new(mem.b, STRIDE, NR, 96)); /* not a power of two */
	assert_int_equal(errno, EINVAL);
	assert_null(cpu_rings__new(mem.b, SIZE, NR, SIZE)); /* no room for the header */
	assert_null(cpu_rings__new(mem.b, STRIDE, 0, SIZE));
}

static void test_sizes(void **state)
{
	uint64_t shared, cpu;

	cpu_ring_sizes(2u << 20, 2, &shared, &cpu);
	assert_true(shared == 1u << 20 && cpu == 1u << 20);
	cpu_ring_sizes(8u << 20, 2, &shared, &cpu);
	assert_true(shared == 4u << 20 && cpu == BPFPROF_CPU_RING_MAX);
	cpu_ring_sizes(32u << 20, 64, &shared, &cpu);
	assert_true(shared == 16u << 20 && cpu == 512u << 10);
	cpu_ring_sizes(24u << 20, 64, &shared, &cpu); /* a share of 384 KiB: 256 */
	assert_true(cpu == 256u << 10);
	cpu_ring_sizes(4096, 2, &shared, &cpu);
	assert_true(shared == 4096 && cpu == BPFPROF_CPU_RING_MIN);
	cpu_ring_sizes(1ull << 30, 1, &shared, &cpu);
	assert_true(shared == 1u << 29 && cpu == BPFPROF_CPU_RING_MAX);
	cpu_ring_sizes(1u << 20, 0, &shared, &cpu); /* no CPU count: one */
	assert_true(cpu == 1u << 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_empty, setup),
		cmocka_unit_test_setup(test_merge_by_time, setup),
		cmocka_unit_test_setup(test_pad_at_lap_end, setup),
		cmocka_unit_test_setup(test_torn_head, setup),
		cmocka_unit_test_setup(test_bad_rings, setup),
		cmocka_unit_test_setup(test_error_stops, setup),
		cmocka_unit_test_setup(test_published_during_drain, setup),
		cmocka_unit_test(test_new_refuses),
		cmocka_unit_test(test_sizes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

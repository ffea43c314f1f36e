// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/xray/read_xray.c (include/read_xray.h). Traces are built
 * here byte by byte from "XRay Flight Data Recorder Trace Format"
 * (llvm/docs/XRayFDRFormat.rst in llvm-project; version 1, through
 * tests/xray/fdr_v1_writer.h) and from the layouts LLVM writes
 * (version 5 blocks, basic mode), never with the reader's own code. Covers
 * the known totals of the reference v1 trace and its call paths, v5 blocks of
 * two threads with damage in one, basic mode, every truncation of a trace,
 * every single-byte corruption, and headers that are not traces.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "log.h"
#include "profile.h"
#include "read_xray.h"
#include "xray/fdr_v1_writer.h"

struct fixture {
	struct profile *p;
	struct xray_reader *r;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	f->p = profile__new();
	f->r = f->p ? xray_reader__new(f->p, NULL) : NULL;
	if (!f->r)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	xray_reader__free(f->r);
	profile__free(f->p);
	free(f);
	return 0;
}

/* Stats of function id (zeros when it was never entered). */
static struct xray_func_stats by_id(const struct xray_reader *r, uint32_t id)
{
	const struct xray_func_stats *fs;
	struct xray_func_stats none = { .id = id };
	size_t nr, i;

	fs = xray_reader__func_stats(r, &nr);
	for (i = 0; i < nr; i++)
		if (fs[i].id == id)
			return fs[i];
	return none;
}

/* The stack with these function ids (leaf first), or NULL. Callers are stored as id + 1. */
static const struct profile_stack *find_stack(const struct profile *p, const uint32_t *ids, int n)
{
	size_t i;
	int k;

	for (i = 0; i < p->nr_stacks; i++) {
		const struct profile_stack *s = &p->stacks[i];

		if (s->nr_user != n)
			continue;
		for (k = 0; k < n; k++)
			if (s->ips[k] != ids[k] + (k ? 1 : 0))
				break;
		if (k == n)
			return s;
	}
	return NULL;
}

static void test_v1_reference(void **state)
{
	struct fixture *f = *state;
	struct v1w w = { 0 };
	const struct profile_stack *s;

	v1w_reference(&w);
	assert_int_equal(xray_reader__read_mem(f->r, "v1", w.data, w.len), 0);
	assert_int_equal(by_id(f->r, 1).calls, V1_F1_CALLS);
	assert_true(by_id(f->r, 1).total_ns == (double)V1_F1_TOTAL);
	assert_true(by_id(f->r, 1).self_ns == (double)V1_F1_SELF);
	assert_int_equal(by_id(f->r, 2).calls, 1);
	assert_true(by_id(f->r, 2).total_ns == (double)V1_F2_TOTAL);
	assert_true(by_id(f->r, 2).self_ns == (double)V1_F2_SELF);
	assert_int_equal(by_id(f->r, 3).calls, 1);
	assert_true(by_id(f->r, 3).total_ns == (double)V1_F3_TOTAL);
	assert_int_equal(by_id(f->r, 4).calls, 1);
	assert_true(by_id(f->r, 4).total_ns == (double)V1_F4_TOTAL);
	assert_int_equal(xray_reader__stats(f->r)->call_args, 2);
	assert_int_equal(xray_reader__stats(f->r)->custom_events, 1);
	assert_int_equal(xray_reader__stats(f->r)->buffers, 2);

	/* call paths: value = self ns, count = calls; the two threads share f1's stack */
	s = find_stack(f->p, (uint32_t[]){ 3, 2, 1 }, 3);
	assert_non_null(s);
	assert_int_equal(s->value, V1_F3_TOTAL);
	assert_int_equal(s->count, 1);
	s = find_stack(f->p, (uint32_t[]){ 4, 1 }, 2);
	assert_non_null(s);
	assert_int_equal(s->value, V1_F4_TOTAL);
	s = find_stack(f->p, (uint32_t[]){ 1 }, 1);
	assert_non_null(s);
	assert_int_equal(s->count, 2);
	assert_int_equal(s->value, V1_F1_SELF);
	assert_int_equal(f->p->nr_procs, 1);
	assert_int_equal(f->p->procs[0].pid, 0);
	free(w.data);
}

/* Every prefix of the reference trace that does not end on a buffer boundary is malformed. */
static void test_v1_truncated(void **state)
{
	struct fixture *f = *state;
	struct v1w w = { 0 };
	size_t n;

	v1w_reference(&w);
	log_verbosity = -1;
	for (n = 0; n < w.len; n++) {
		uint8_t *copy = malloc(n ? n : 1);

		bool whole = n >= 32 && (n - 32) % w.buf_size == 0; /* header + whole buffers */

		memcpy(copy, w.data, n);
		assert_int_equal(xray_reader__read_mem(f->r, "cut", copy, n), whole ? 0 : -EINVAL);
		free(copy);
	}
	log_verbosity = 0;
	free(w.data);
}

/* Every byte of the trace overwritten with 0xff: 0 or -EINVAL, never a crash. */
static void test_v1_corrupted(void **state)
{
	struct fixture *f = *state;
	struct v1w w = { 0 };
	size_t i;

	v1w_reference(&w);
	log_verbosity = -1;
	for (i = 0; i < w.len; i++) {
		uint8_t *copy = malloc(w.len);
		int err;

		memcpy(copy, w.data, w.len);
		copy[i] ^= 0xff;
		err = xray_reader__read_mem(f->r, "flip", copy, w.len);
		assert_true(err == 0 || err == -EINVAL || err == -ENOTSUP);
		free(copy);
	}
	log_verbosity = 0;
	free(w.data);
}

/* ---- version 5, as clang 14's runtime writes it ---- */

static void put_le(uint8_t **p, uint64_t v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		*(*p)++ = i < 8 ? (uint8_t)(v >> (8 * i)) : 0;
}

static void md(uint8_t **p, unsigned kind, uint64_t a, int an, uint64_t b, int bn)
{
	*(*p)++ = (uint8_t)(kind << 1 | 1);
	put_le(p, a, an);
	put_le(p, b, bn);
	put_le(p, 0, 15 - an - bn);
}

static void fn(uint8_t **p, unsigned action, uint32_t id, uint32_t delta)
{
	put_le(p, (uint64_t)id << 4 | action << 1, 4);
	put_le(p, delta, 4);
}

/* One v5 block: extents, NewBuffer, WallTime, PID, NewCPUId, id enters then exits after `ticks`. */
static void v5_block(uint8_t **p, uint32_t tid, uint32_t id, uint32_t ticks, bool damage)
{
	uint8_t *ext = *p, *body;

	*p += 16;
	body = *p;
	md(p, 0, tid, 4, 0, 0);
	md(p, 4, 1, 8, 0, 4);
	md(p, 9, 4242, 4, 0, 0);
	md(p, 2, 0, 2, 100, 8);
	fn(p, 0, id, 0);
	md(p, 8, 3, 4, 0, 4); /* typed event, 3 bytes, delta 0 */
	put_le(p, 0, 2); /* the event type at +9: already inside the 15 data bytes */
	*p -= 2;
	memcpy(*p, "abc", 3);
	*p += 3;
	if (damage)
		fn(p, 7, id, ticks); /* action 7 does not exist */
	else
		fn(p, 1, id, ticks);
	md(&ext, 7, (uint64_t)(*p - body), 8, 0, 0);
}

static size_t v5_trace(uint8_t *buf, bool damage)
{
	uint8_t *p = buf;

	put_le(&p, 5, 2);
	put_le(&p, 1, 2);
	put_le(&p, 3, 4);
	put_le(&p, 2000000000, 8); /* 2 GHz: 2 ticks per ns */
	put_le(&p, 4096, 8);
	put_le(&p, 0, 8);
	v5_block(&p, 11, 1, 1000, false);
	v5_block(&p, 12, 2, 4000, damage);
	v5_block(&p, 13, 3, 6000, false);
	return (size_t)(p - buf);
}

static void test_v5_blocks(void **state)
{
	struct fixture *f = *state;
	uint8_t buf[1024];
	size_t n = v5_trace(buf, false);

	assert_int_equal(xray_reader__read_mem(f->r, "v5", buf, n), 0);
	assert_int_equal(by_id(f->r, 1).calls, 1);
	assert_true(by_id(f->r, 1).total_ns == 500.0);
	assert_true(by_id(f->r, 2).total_ns == 2000.0);
	assert_true(by_id(f->r, 3).total_ns == 3000.0);
	assert_int_equal(f->p->nr_procs, 1);
	assert_int_equal(f->p->procs[0].pid, 4242);
	assert_int_equal(xray_reader__stats(f->r)->typed_events, 3);
}

/* Damage in the second thread's block: reported, the other two still read. */
static void test_v5_damage_isolated(void **state)
{
	struct fixture *f = *state;
	uint8_t buf[1024];
	size_t n = v5_trace(buf, true);

	log_verbosity = -1;
	assert_int_equal(xray_reader__read_mem(f->r, "v5bad", buf, n), -EINVAL);
	log_verbosity = 0;
	assert_int_equal(by_id(f->r, 1).calls, 1);
	assert_int_equal(by_id(f->r, 2).calls, 0);
	assert_int_equal(by_id(f->r, 3).calls, 1);
	assert_true(by_id(f->r, 3).total_ns == 3000.0);
	assert_int_equal(xray_reader__stats(f->r)->bad_buffers, 1);
	/* the damaged thread's open entry is closed, not counted */
	assert_int_equal(xray_reader__stats(f->r)->open_at_end, 1);
}

/* A corrupted BufferExtents size: the reader resynchronizes on the next block. */
static void test_v5_bad_extents(void **state)
{
	struct fixture *f = *state;
	uint8_t buf[1024];
	size_t n = v5_trace(buf, false);

	buf[32 + 1 + 7] = 0x40; /* first block's size becomes huge */
	log_verbosity = -1;
	assert_int_equal(xray_reader__read_mem(f->r, "v5ext", buf, n), -EINVAL);
	log_verbosity = 0;
	assert_int_equal(by_id(f->r, 1).calls, 0);
	assert_int_equal(by_id(f->r, 2).calls, 1);
	assert_int_equal(by_id(f->r, 3).calls, 1);
}

/* ---- basic mode, version 3 ---- */

static void basic_rec(uint8_t **p, unsigned action, uint32_t id, uint64_t tsc, uint32_t tid)
{
	put_le(p, 0, 2);
	put_le(p, 0, 1);
	put_le(p, action, 1);
	put_le(p, id, 4);
	put_le(p, tsc, 8);
	put_le(p, tid, 4);
	put_le(p, 77, 4);
	put_le(p, 0, 8);
}

static void test_basic(void **state)
{
	struct fixture *f = *state;
	uint8_t buf[512], *p = buf;

	put_le(&p, 3, 2);
	put_le(&p, 0, 2);
	put_le(&p, 0, 4);
	put_le(&p, 1000000000, 8);
	put_le(&p, 0, 16);
	basic_rec(&p, 0, 5, 100, 1);
	basic_rec(&p, 0, 5, 150, 2); /* another thread, interleaved */
	basic_rec(&p, 0, 6, 200, 1);
	basic_rec(&p, 1, 6, 260, 1);
	basic_rec(&p, 1, 5, 300, 2);
	basic_rec(&p, 1, 5, 400, 1);
	basic_rec(&p, 1, 9, 500, 1); /* exit without entry: ignored */
	assert_int_equal(xray_reader__read_mem(f->r, "basic", buf, (size_t)(p - buf)), 0);
	assert_int_equal(by_id(f->r, 5).calls, 2);
	assert_true(by_id(f->r, 5).total_ns == 300.0 + 150.0);
	assert_true(by_id(f->r, 5).self_ns == 240.0 + 150.0);
	assert_int_equal(by_id(f->r, 6).calls, 1);
	assert_int_equal(xray_reader__stats(f->r)->unmatched_exits, 1);
	assert_int_equal(f->p->procs[0].pid, 77);

	/* a cut record at the end */
	log_verbosity = -1;
	assert_int_equal(xray_reader__read_mem(f->r, "basic-cut", buf, (size_t)(p - buf) - 5),
			 -EINVAL);
	log_verbosity = 0;
}

static void test_not_traces(void **state)
{
	struct fixture *f = *state;
	uint8_t junk[256] = { 0 };
	size_t i;

	log_verbosity = -1;
	assert_int_equal(xray_reader__read_mem(f->r, "empty", junk, 0), -EINVAL);
	for (i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(i * 37 + 11);
	assert_int_equal(xray_reader__read_mem(f->r, "junk", junk, sizeof(junk)), -EINVAL);
	/* a valid FDR header with a zero cycle frequency */
	memset(junk, 0, sizeof(junk));
	junk[0] = 5;
	junk[2] = 1;
	assert_int_equal(xray_reader__read_mem(f->r, "nofreq", junk, 64), -EINVAL);
	/* unknown trace type */
	junk[2] = 9;
	junk[8] = 1;
	assert_int_equal(xray_reader__read_mem(f->r, "type", junk, 64), -EINVAL);
	log_verbosity = 0;
	assert_int_equal(f->p->nr_stacks, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_v1_reference, setup, teardown),
		cmocka_unit_test_setup_teardown(test_v1_truncated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_v1_corrupted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_v5_blocks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_v5_damage_isolated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_v5_bad_extents, setup, teardown),
		cmocka_unit_test_setup_teardown(test_basic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_traces, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/lib/lib_hashmap.c (include/lib_hashmap.h): idxmap
 * lookups through the caller's keys across growth (load factor at or under
 * 1/2, every entry found again after each doubling, colliding hashes probed
 * past), a zeroed map reserving its first slots; keyidx the same, its
 * slots keeping hash and key pointer across growth, equal hashes of
 * different keys told apart by the key; strset indices in insertion
 * order, owned copies and borrowed pointers, find; u64map puts, overwrites
 * and gets across growth, a zeroed map empty; FNV-1a's published test
 * vectors and splitmix64's finalizer.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "lib_hashmap.h"

static uint64_t keys[5000];

/* a weak hash on purpose: 16 keys share each value, so probing is exercised */
static uint32_t weak_hash(uint64_t k)
{
	return (uint32_t)(k / 16);
}

static uint32_t hash_of(void *ctx, uint32_t idx)
{
	return weak_hash(((uint64_t *)ctx)[idx]);
}

static int64_t lookup(const struct idxmap *m, uint64_t k)
{
	uint32_t pos;

	idxmap__for_each(m, weak_hash(k), pos)
		if (keys[m->slots[pos]] == k)
			return m->slots[pos];
	return -ENOENT;
}

static void test_idxmap(void **state)
{
	struct idxmap m = { 0 };
	uint32_t i, j;

	for (i = 0; i < 5000; i++) {
		keys[i] = (uint64_t)i * 7 + 3;
		assert_int_equal(idxmap__reserve(&m, hash_of, keys), 0);
		assert_int_equal(lookup(&m, keys[i]), -ENOENT);
		idxmap__insert(&m, weak_hash(keys[i]), i);
		assert_int_equal(m.used, i + 1);
		/* load factor at or under 1/2, capacity a power of two */
		assert_true((size_t)m.used * 2 <= (size_t)m.mask + 1);
		assert_int_equal(m.mask & (m.mask + 1), 0);
		if ((i & (i + 1)) == 0) /* after each doubling point: everything still there */
			for (j = 0; j <= i; j++)
				assert_int_equal(lookup(&m, keys[j]), j);
	}
	for (j = 0; j < 5000; j++)
		assert_int_equal(lookup(&m, keys[j]), j);
	assert_int_equal(lookup(&m, 1), -ENOENT);
	idxmap__free(&m);
	assert_null(m.slots);

	/* init with room: no growth up to max_entries */
	assert_int_equal(idxmap__init(&m, 100), 0);
	assert_int_equal(m.mask + 1, 256);
	idxmap__free(&m);
	assert_int_equal(idxmap__init(&m, 0), 0);
	assert_int_equal(m.mask + 1, 16);
	idxmap__free(&m);
}

static int64_t keyidx_lookup(const struct keyidx *m, uint64_t k)
{
	uint32_t h = weak_hash(k), pos;

	keyidx__for_each(m, h, pos) {
		if (m->slots[pos].hash != h)
			continue;
		if (*(const uint64_t *)m->slots[pos].key == k)
			return m->slots[pos].idx;
	}
	return -ENOENT;
}

static void test_keyidx(void **state)
{
	struct keyidx m = { 0 };
	uint32_t i, j, pos, same;

	for (i = 0; i < 5000; i++) {
		keys[i] = (uint64_t)i * 7 + 3;
		assert_int_equal(keyidx__reserve(&m), 0);
		assert_int_equal(keyidx_lookup(&m, keys[i]), -ENOENT);
		keyidx__insert(&m, weak_hash(keys[i]), i, &keys[i]);
		assert_int_equal(m.used, i + 1);
		assert_true((size_t)m.used * 2 <= (size_t)m.mask + 1);
		assert_int_equal(m.mask & (m.mask + 1), 0);
		if ((i & (i + 1)) ==
		    0) /* after each doubling: hash, index and key moved together */
			for (j = 0; j <= i; j++)
				assert_int_equal(keyidx_lookup(&m, keys[j]), j);
	}
	for (j = 0; j < 5000; j++)
		assert_int_equal(keyidx_lookup(&m, keys[j]), j);
	/* 1 hashes like keys 0..2 (none there) and 3 (there): the key tells them apart */
	assert_int_equal(keyidx_lookup(&m, 1), -ENOENT);
	assert_int_equal(keyidx_lookup(&m, 3), 0);
	/* every entry of hash 0 (keys 3 and 10) is in its probe sequence */
	same = 0;
	keyidx__for_each(&m, 0, pos)
		same += m.slots[pos].hash == 0;
	assert_int_equal(same, 2);
	keyidx__free(&m);
	assert_null(m.slots);

	assert_int_equal(keyidx__init(&m, 100), 0);
	assert_int_equal(m.mask + 1, 256);
	for (pos = 0; pos <= m.mask; pos++) /* free slots: no key */
		assert_null(m.slots[pos].key);
	keyidx__free(&m);
	assert_int_equal(keyidx__init(&m, 0), 0);
	assert_int_equal(m.mask + 1, 16);
	keyidx__free(&m);
}

static void test_strset(void **state)
{
	struct strset own, borrowed;
	char buf[32];
	const char *lit = "literal";
	int i;

	assert_int_equal(strset__init(&own, true), 0);
	assert_int_equal(strset__init(&borrowed, false), 0);
	assert_int_equal(strset__add(&own, ""), 0);
	for (i = 0; i < 3000; i++) {
		snprintf(buf, sizeof(buf), "s%d", i);
		assert_int_equal(strset__add(&own, buf), i + 1);
	}
	/* the copies are the set's: the caller's buffer is reused above */
	assert_string_equal(own.strs[1], "s0");
	assert_string_equal(own.strs[3000], "s2999");
	assert_true(own.strs[1] != buf);
	for (i = 0; i < 3000; i += 7) {
		snprintf(buf, sizeof(buf), "s%d", i);
		assert_int_equal(strset__add(&own, buf), i + 1);
		assert_int_equal(strset__find(&own, buf), i + 1);
	}
	assert_int_equal(own.nr, 3001);
	assert_int_equal(strset__find(&own, "s3000"), -ENOENT);
	assert_int_equal(strset__find(&own, ""), 0);

	/* borrowed: the very pointer is kept */
	assert_int_equal(strset__add(&borrowed, lit), 0);
	assert_ptr_equal(borrowed.strs[0], lit);
	assert_int_equal(strset__add(&borrowed, "literal"), 0);
	strset__free(&own);
	strset__free(&borrowed);
	assert_null(own.strs);
}

static void test_u64map(void **state)
{
	struct u64map m = { 0 };
	uint64_t v, k;

	assert_false(u64map__get(&m, 1, &v));
	for (k = 1; k <= 10000; k++)
		assert_int_equal(u64map__put(&m, k << 12, k * 3), 0);
	assert_int_equal(m.nr, 10000);
	assert_true(m.nr * 2 <= m.cap);
	assert_int_equal(u64map__put(&m, 5 << 12, 42), 0); /* overwrite: no new entry */
	assert_int_equal(m.nr, 10000);
	for (k = 1; k <= 10000; k++) {
		assert_true(u64map__get(&m, k << 12, &v));
		assert_true(v == (k == 5 ? 42 : k * 3));
	}
	assert_true(u64map__get(&m, 7 << 12, NULL));
	assert_false(u64map__get(&m, 10001ULL << 12, &v));
	assert_false(u64map__get(&m, 3, &v));
	u64map__free(&m);
	assert_false(u64map__get(&m, 1 << 12, &v));
}

static void test_hashes(void **state)
{
	/* FNV-1a 32 test vectors (Fowler, Noll, Vo: fnv test suite) */
	assert_int_equal(hash__str(""), 0x811c9dc5u);
	assert_int_equal(hash__str("a"), 0xe40c292cu);
	assert_int_equal(hash__str("foobar"), 0xbf9cf968u);
	/* splitmix64: the finalizer of the generator seeded with 0 gives its first output */
	assert_true(hash__mix64(0x9e3779b97f4a7c15ULL) == 0xe220a8397b1dcdafULL);
	assert_true(hash__mix64(0) == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_idxmap),
		cmocka_unit_test(test_keyidx),
		cmocka_unit_test(test_strset),
		cmocka_unit_test(test_u64map),
		cmocka_unit_test(test_hashes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

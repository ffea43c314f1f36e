// SPDX-License-Identifier: MIT
/*
 * cmocka tests for the profile's stack index (user/profile.c,
 * profile__add_stack): a stack is one (process, kernel frames, user frames)
 * key; the same addresses in another process or split otherwise between
 * kernel and user are other stacks; repeats add to the first entry; keys of
 * every length, many more than one arena chunk holds, keep their addresses
 * and are found again after the index grows; off-CPU blocks land on the same
 * entry as samples; the split path (hash, prefetch, add) agrees with it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "profile.h"

static struct profile *new_profile(unsigned nr_procs)
{
	struct profile *p = profile__new();
	bool created;

	assert_non_null(p);
	for (unsigned i = 0; i < nr_procs; i++)
		assert_int_equal(profile__process(p, 100 + i, &created), (int)i);
	return p;
}

static void test_key_parts(void **state)
{
	struct profile *p = new_profile(2);
	const uint64_t ips[3] = { 0xffffffff81000010ULL, 0x401000, 0x402000 };
	bool created;

	assert_int_equal(profile__add_stack(p, 0, ips, 1, 2, 1, 10, &created), 0);
	assert_true(created);
	/* another process */
	assert_int_equal(profile__add_stack(p, 1, ips, 1, 2, 1, 10, &created), 1);
	assert_true(created);
	/* the same addresses split otherwise */
	assert_int_equal(profile__add_stack(p, 0, ips, 2, 1, 1, 10, &created), 2);
	assert_true(created);
	assert_int_equal(profile__add_stack(p, 0, ips, 0, 3, 1, 10, &created), 3);
	/* a prefix */
	assert_int_equal(profile__add_stack(p, 0, ips, 1, 1, 1, 10, &created), 4);
	assert_true(created);
	/* no frames at all is a stack too */
	assert_int_equal(profile__add_stack(p, 0, ips, 0, 0, 1, 10, &created), 5);
	assert_true(created);
	assert_int_equal(profile__add_stack(p, 0, ips, 0, 0, 1, 10, &created), 5);
	assert_false(created);
	/* repeats: the first entry's counts */
	assert_int_equal(profile__add_stack(p, 0, ips, 1, 2, 2, 20, &created), 0);
	assert_false(created);
	assert_int_equal(p->stacks[0].count, 3);
	assert_int_equal(p->stacks[0].value, 30);
	assert_int_equal(p->nr_stacks, 6);
	assert_int_equal(p->nr_samples, 9);
	assert_int_equal(p->stacks[1].proc, 1);
	assert_int_equal(p->stacks[2].nr_kernel, 2);
	assert_int_equal(p->stacks[2].nr_user, 1);
	assert_memory_equal(p->stacks[2].ips, ips, sizeof(ips));
	/* an off-CPU block of a sampled stack: the same entry, count unchanged */
	assert_int_equal(profile__add_offcpu(p, 1, ips, 1, 2, 1, 5000, &created), 1);
	assert_false(created);
	assert_int_equal(p->stacks[1].count, 1);
	assert_int_equal(p->stacks[1].off_count, 1);
	assert_int_equal(p->stacks[1].off_ns, 5000);
	profile__free(p);
}

/* The split path files callchains where profile__add_stack does; one pid's entries stay apart */
static void test_hashed_path(void **state)
{
	struct profile *p = new_profile(1);
	const uint64_t ips[2] = { 0x401000, 0x402000 };
	bool created;
	uint32_t h;
	int image;

	assert_int_equal(profile__add_stack(p, 0, ips, 0, 2, 1, 10, &created), 0);
	h = profile__stack_hash(100, ips, 0, 2);
	profile__prefetch_stack(p, h);
	assert_int_equal(profile__add_stack_hashed(p, 0, h, ips, 0, 2, 1, 10, &created), 0);
	assert_false(created);
	assert_int_equal(p->stacks[0].count, 2);
	/* a second entry of pid 100 (an exec's image): same hash, another stack */
	image = profile__add_process(p, 100, 0);
	assert_int_equal(image, 1);
	assert_int_equal(profile__add_stack_hashed(p, 1, h, ips, 0, 2, 1, 10, &created), 1);
	assert_true(created);
	assert_int_equal(profile__add_stack(p, 1, ips, 0, 2, 1, 10, &created), 1);
	assert_false(created);
	assert_int_equal(profile__add_stack(p, 0, ips, 0, 2, 1, 10, &created), 0);
	assert_int_equal(p->stacks[0].count, 3);
	assert_int_equal(p->stacks[1].count, 2);
	/* the hash covers pid, the split and every address */
	assert_true(profile__stack_hash(101, ips, 0, 2) != h);
	assert_true(profile__stack_hash(100, ips, 1, 1) != h);
	assert_true(profile__stack_hash(100, (const uint64_t[]){ 0x402000, 0x401000 }, 0, 2) != h);
	profile__free(p);
}

#define NR_KEYS 20000
#define MAX_DEPTH 300

/* Key i: 0..299 frames (none for every 300th), the leaf unique to i, in process i % 3 */
static unsigned key_of(unsigned i, uint64_t *ips, uint16_t *nk, uint16_t *nu, uint32_t *proc)
{
	unsigned n = (i * 37) % MAX_DEPTH;

	for (unsigned j = 0; j < n; j++)
		ips[j] = 0x400000 + (uint64_t)(j * 16) + (j == 0 ? (uint64_t)i << 20 : 0);
	*nk = (uint16_t)(n / 4);
	*nu = (uint16_t)(n - n / 4);
	*proc = i % 3;
	return n;
}

/*
 * profile__stack_hash_copy: profile__stack_hash's value whatever the length
 * (odd, even, none), the addresses copied, nothing written past them
 */
static void test_hash_copy(void **state)
{
	uint64_t ips[9], dst[10];
	unsigned n, i;

	for (i = 0; i < 9; i++)
		ips[i] = 0xffffffff81000000ULL + i * 0x1234567ULL;
	for (n = 0; n <= 9; n++) {
		uint16_t nk = n / 3, nu = n - n / 3;

		memset(dst, 0xa5, sizeof(dst));
		assert_int_equal(profile__stack_hash_copy(4242, ips, nk, nu, dst),
				 profile__stack_hash(4242, ips, nk, nu));
		assert_memory_equal(dst, ips, n * sizeof(*ips));
		assert_int_equal(dst[n], 0xa5a5a5a5a5a5a5a5ULL);
	}
	/* the pid seeds it */
	assert_int_not_equal(profile__stack_hash_copy(1, ips, 2, 3, dst),
			     profile__stack_hash(2, ips, 2, 3));
}

static void test_many_keys(void **state)
{
	struct profile *p = new_profile(3);
	static uint64_t ips[MAX_DEPTH];
	unsigned i, round, nr_empty = 0;
	int idx, empty_idx = -1;
	uint16_t nk, nu;
	uint32_t proc;
	bool created;

	/* far more keys than one arena chunk holds: each new once, then found again */
	for (round = 0; round < 2; round++) {
		for (i = 0; i < NR_KEYS; i++) {
			unsigned n = key_of(i, ips, &nk, &nu, &proc);

			idx = profile__add_stack(p, proc, ips, nk, nu, 1, 7, &created);
			assert_true(idx >= 0);
			if (!n) {
				/* every 300th key: no frames, process 0, all one stack */
				assert_int_equal(proc, 0);
				assert_int_equal(created, empty_idx < 0);
				if (empty_idx < 0)
					empty_idx = idx;
				assert_int_equal(idx, empty_idx);
				nr_empty++;
				continue;
			}
			assert_int_equal(created, round == 0);
			assert_int_equal(p->stacks[idx].count, round + 1);
			assert_int_equal(p->stacks[idx].value, 7 * (round + 1));
			assert_int_equal(p->stacks[idx].proc, proc);
			assert_int_equal(p->stacks[idx].nr_kernel, nk);
			assert_int_equal(p->stacks[idx].nr_user, nu);
			assert_memory_equal(p->stacks[idx].ips, ips, n * sizeof(*ips));
		}
	}
	assert_int_equal(nr_empty, 2 * 67);
	assert_int_equal(p->nr_stacks, NR_KEYS - 66);
	assert_int_equal(p->stacks[empty_idx].count, 2 * 67);
	assert_int_equal(p->nr_samples, 2 * NR_KEYS);
	/* every entry's addresses unchanged by the ones stored after it */
	for (i = 0; i < p->nr_stacks; i++) {
		const struct profile_stack *s = &p->stacks[i];
		unsigned n = (unsigned)s->nr_kernel + s->nr_user;

		for (unsigned j = 1; j < n; j++)
			assert_true(s->ips[j] == 0x400000 + (uint64_t)(j * 16));
	}
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key_parts),
		cmocka_unit_test(test_hashed_path),
		cmocka_unit_test(test_hash_copy),
		cmocka_unit_test(test_many_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

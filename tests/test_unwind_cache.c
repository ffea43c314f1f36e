// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/unwind/unwind_cache.c: a hand-made entry written
 * byte for byte as include/unwind_cache.h lays it out (crc32 from Python's
 * zlib.crc32) and read back; every corruption refused with its reason (bad
 * magic, version, header size, build-id of another file, a stale file
 * size, every truncation, trailing bytes, a flip of any byte, a well-summed
 * entry whose words are not a compact table); libc's real table through
 * the cache unchanged; and the directory: entries stored and found, a bad
 * one removed, a directory with group/other access, another owner or a
 * symlink refused, least recently used entries removed past the bound,
 * temporary files of writers that are gone removed.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "log.h"
#include "unwind_cache.h"
#include "unwind_compact.h"
#include "unwind_table.h"

/* One page, two rows (pc 0x0 rule 0, pc 0x10 rule 1), two rules */
/* clang-format off */
static const uint8_t fixture[124] = {
	/* magic "BPFPUNWC", version 2, header size 96, page shift 12, build-id length 20 */
	0x42, 0x50, 0x46, 0x50, 0x55, 0x4e, 0x57, 0x43, 0x02, 0x00, 0x00, 0x00,
	0x60, 0x00, 0x00, 0x00, 0x0c, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00,
	/* build-id a0..b3, then 2 rows as built */
	0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xab,
	0xac, 0xad, 0xae, 0xaf, 0xb0, 0xb1, 0xb2, 0xb3, 0x02, 0x00, 0x00, 0x00,
	/* file size 123456, base 0x1000, end 0x1040, 64 CFI bytes */
	0x40, 0xe2, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x40, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	/* 1 page, rules at word 4, 2 rules, 6 words */
	0x01, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,
	0x06, 0x00, 0x00, 0x00,
	/* words: page index 2, 4; rows 0x0|0<<16, 0x10|1<<16; rules 0x11111111 0x22222222 */
	0x02, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x10, 0x00, 0x01, 0x00, 0x11, 0x11, 0x11, 0x11, 0x22, 0x22, 0x22, 0x22,
	/* crc32 */
	0x51, 0xa1, 0xf6, 0x19,
};
/* clang-format on */

static uint32_t fixture_words[6] = { 2, 4, 0x0, 0x10 | 1u << 16, 0x11111111, 0x22222222 };

static void fixture_key(struct unwind_cache_key *k)
{
	memset(k, 0, sizeof(*k));
	for (int i = 0; i < 20; i++)
		k->id[i] = (uint8_t)(0xa0 + i);
	k->id_len = 20;
	k->file_size = 123456;
}

static void fixture_table(struct unwind_cache_table *t)
{
	memset(t, 0, sizeof(*t));
	t->base = 0x1000;
	t->end = 0x1040;
	t->cfi_bytes = 64;
	t->nr_rows = 2;
	t->info.nr_pages = 1;
	t->info.rules = 4;
	t->info.nr_rules = 2;
	t->words = fixture_words;
	t->nr_words = 6;
}

/* decode buf for the fixture's key: -EINVAL and a reason containing `want` */
static void assert_refused(const uint8_t *buf, size_t len, const struct unwind_cache_key *k,
			   const char *want)
{
	struct unwind_cache_table t;
	char why[160] = "";

	assert_int_equal(unwind_cache__decode(buf, len, k, &t, why, sizeof(why)), -EINVAL);
	assert_null(t.words);
	if (!strstr(why, want))
		fail_msg("reason '%s', expected '%s'", why, want);
}

static void test_encode_fixture(void **state)
{
	struct unwind_cache_key k;
	struct unwind_cache_table t;
	uint8_t *buf;
	size_t len;

	fixture_key(&k);
	fixture_table(&t);
	assert_int_equal(unwind_cache__encode(&k, &t, &buf, &len), 0);
	assert_int_equal(len, sizeof(fixture));
	assert_memory_equal(buf, fixture, sizeof(fixture));
	free(buf);
	/* nothing to write: no words, or a build-id out of range */
	t.nr_words = 0;
	assert_int_equal(unwind_cache__encode(&k, &t, &buf, &len), -EINVAL);
	fixture_table(&t);
	k.id_len = 0;
	assert_int_equal(unwind_cache__encode(&k, &t, &buf, &len), -EINVAL);
	k.id_len = 21;
	assert_int_equal(unwind_cache__encode(&k, &t, &buf, &len), -EINVAL);
}

static void test_decode_fixture(void **state)
{
	struct unwind_cache_key k;
	struct unwind_cache_table t;
	char why[160];

	fixture_key(&k);
	assert_int_equal(unwind_cache__decode(fixture, sizeof(fixture), &k, &t, why, sizeof(why)),
			 0);
	assert_int_equal(t.base, 0x1000);
	assert_int_equal(t.end, 0x1040);
	assert_int_equal(t.cfi_bytes, 64);
	assert_int_equal(t.nr_rows, 2);
	assert_int_equal(t.info.nr_pages, 1);
	assert_int_equal(t.info.rules, 4);
	assert_int_equal(t.info.nr_rules, 2);
	assert_int_equal(t.info.used, 0);
	assert_int_equal(t.nr_words, 6);
	assert_memory_equal(t.words, fixture_words, sizeof(fixture_words));
	/* what the walker finds in it */
	assert_int_equal(unwind_compact__lookup(t.words, t.nr_words, &t.info, 0x8), 0x11111111);
	assert_int_equal(unwind_compact__lookup(t.words, t.nr_words, &t.info, 0x10), 0x22222222);
	free(t.words);
}

static void test_header_fields(void **state)
{
	struct unwind_cache_key k;
	uint8_t b[sizeof(fixture)];

	fixture_key(&k);
	memcpy(b, fixture, sizeof(b));
	b[0] = 'X';
	assert_refused(b, sizeof(b), &k, "bad magic");
	/* another endianness's writer would put its own magic first: refused as well */
	memcpy(b, fixture, sizeof(b));
	memcpy(b, "CWNUPFPB", 8);
	assert_refused(b, sizeof(b), &k, "bad magic");
	memcpy(b, fixture, sizeof(b));
	b[8] = 1; /* a cache written before rows dropped rbp slots below rsp */
	assert_refused(b, sizeof(b), &k, "format version 1, expected 2");
	memcpy(b, fixture, sizeof(b));
	b[12] = 100;
	assert_refused(b, sizeof(b), &k, "header size 100");
	memcpy(b, fixture, sizeof(b));
	b[16] = 16; /* a cache written with 64 KiB pages */
	assert_refused(b, sizeof(b), &k, "page shift 16");
}

static void test_foreign_and_stale(void **state)
{
	struct unwind_cache_key k;

	/* a well-formed entry of another file (renamed, or a hash collision of names) */
	fixture_key(&k);
	k.id[19] ^= 1;
	assert_refused(fixture, sizeof(fixture), &k, "build-id mismatch");
	fixture_key(&k);
	k.id_len = 8;
	assert_refused(fixture, sizeof(fixture), &k, "build-id mismatch");
	/* the same build-id, other contents */
	fixture_key(&k);
	k.file_size = 123457;
	assert_refused(fixture, sizeof(fixture), &k, "stale: built from a file of 123456 bytes");
}

static void test_truncated(void **state)
{
	struct unwind_cache_key k;
	uint8_t b[sizeof(fixture) + 4];

	fixture_key(&k);
	for (size_t len = 0; len < sizeof(fixture); len++)
		assert_refused(fixture, len, &k, "truncated");
	memcpy(b, fixture, sizeof(fixture));
	memset(b + sizeof(fixture), 0, 4);
	assert_refused(b, sizeof(b), &k, "4 bytes past the end");
	/* a word count that would run past 4 GiB of words */
	memcpy(b, fixture, sizeof(fixture));
	b[92] = b[93] = b[94] = b[95] = 0xff;
	assert_refused(b, sizeof(fixture), &k, "truncated");
}

static void test_checksum(void **state)
{
	struct unwind_cache_key k;
	uint8_t b[sizeof(fixture)];

	fixture_key(&k);
	/* any bit flipped anywhere is refused */
	for (size_t i = 0; i < sizeof(fixture); i++) {
		for (int bit = 0; bit < 8; bit++) {
			struct unwind_cache_table t;
			char why[160];

			memcpy(b, fixture, sizeof(b));
			b[i] ^= (uint8_t)(1u << bit);
			assert_int_equal(unwind_cache__decode(b, sizeof(b), &k, &t, why,
							      sizeof(why)),
					 -EINVAL);
			/* the fields read before the sum say their own reasons */
			if ((i >= 20 && i < 92) || i >= 96)
				assert_non_null(strstr(why, "checksum mismatch"));
		}
	}
	memcpy(b, fixture, sizeof(b));
	b[100] ^= 0x80;
	assert_refused(b, sizeof(b), &k, "checksum mismatch: stored 0x19f6a151");
}

/* Well-summed entries whose words are no compact table */
static void test_malformed_layout(void **state)
{
	static const struct {
		uint32_t words[6];
		uint32_t nr_pages, rules, nr_rules;
		const char *why;
	} cases[] = {
		{ { 2, 4, 0x0, 0x10 | 2u << 16, 1, 2 }, 1, 4, 2, "rule 2 of 2" },
		{ { 2, 4, 0x10, 0x8 | 1u << 16, 1, 2 }, 1, 4, 2, "out of order" },
		{ { 2, 4, 0x10, 0x10 | 1u << 16, 1, 2 }, 1, 4, 2, "out of order" },
		{ { 3, 4, 0x0, 0x10 | 1u << 16, 1, 2 }, 1, 4, 2, "page index" },
		{ { 2, 5, 0x0, 0x10 | 1u << 16, 1, 2 }, 1, 4, 2, "page index" },
		{ { 2, 4, 0x0, 0x10 | 1u << 16, 1, 2 }, 1, 4, 3, "3 rules in 6 words" },
		{ { 2, 4, 0x0, 0x10 | 1u << 16, 1, 2 }, 1, 4, 0, "0 rules" },
		{ { 2, 4, 0x0, 0x10 | 1u << 16, 1, 2 }, 0, 4, 2, "0 pages" },
		{ { 2, 4, 0x0, 0x10 | 1u << 16, 1, 2 }, 2, 4, 2, "2 pages for a range of 64" },
		{ { 2, 4, 0x0, 0x10 | 1u << 16, 1, 2 }, 1, 7, 2, "rules at word 7" },
	};
	struct unwind_cache_key k;
	struct unwind_cache_table t;
	uint8_t *buf;
	size_t len;

	fixture_key(&k);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fixture_table(&t);
		t.words = (uint32_t *)cases[i].words;
		t.info.nr_pages = cases[i].nr_pages;
		t.info.rules = cases[i].rules;
		t.info.nr_rules = cases[i].nr_rules;
		assert_int_equal(unwind_cache__encode(&k, &t, &buf, &len), 0);
		assert_refused(buf, len, &k, cases[i].why);
		free(buf);
	}
	/* base above end */
	fixture_table(&t);
	t.base = 0x2000;
	assert_int_equal(unwind_cache__encode(&k, &t, &buf, &len), 0);
	assert_refused(buf, len, &k, "range 0x2000-0x1040");
	free(buf);
}

/* libc's real table goes through the cache unchanged */
static void test_real_table(void **state)
{
	struct unwind_table *ut = NULL;
	struct unwind_cache_table t = { 0 }, back;
	struct unwind_cache_key k = { .id_len = 20, .file_size = 4242 };
	uint8_t *buf;
	size_t len;
	char why[160];
	int fd = open("/lib/x86_64-linux-gnu/libc.so.6", O_RDONLY);

	if (fd < 0)
		skip();
	assert_int_equal(unwind_table__build_fd(fd, "libc", &ut), 0);
	close(fd);
	assert_int_equal(unwind_compact__encode(ut, &t.words, &t.nr_words, &t.info), 0);
	t.base = ut->base;
	t.end = ut->end;
	t.nr_rows = ut->nr_rows;
	t.cfi_bytes = ut->cfi_bytes;
	memset(k.id, 0x5a, 20);
	assert_int_equal(unwind_cache__encode(&k, &t, &buf, &len), 0);
	assert_int_equal(len, 96 + 4 * (size_t)t.nr_words + 4);
	assert_int_equal(unwind_cache__decode(buf, len, &k, &back, why, sizeof(why)), 0);
	assert_int_equal(back.nr_words, t.nr_words);
	assert_memory_equal(back.words, t.words, (size_t)t.nr_words * 4);
	assert_memory_equal(&back.info, &t.info, sizeof(t.info));
	assert_int_equal(back.base, t.base);
	assert_int_equal(back.end, t.end);
	assert_int_equal(back.nr_rows, ut->nr_rows);
	for (uint32_t i = 0; i < ut->nr_rows; i += 17)
		assert_int_equal(unwind_compact__lookup(back.words, back.nr_words, &back.info,
							ut->rows[i].pc),
				 ut->rows[i].rule);
	free(back.words);
	free(buf);
	free(t.words);
	unwind_table__free(ut);
}

static char tmpdir[64];

static int setup_dir(void **state)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_unwind_cache.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown_dir(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) ? -1 : 0;
}

static bool exists(const char *dir, const char *name)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return access(p, F_OK) == 0;
}

static void write_file(const char *dir, const char *name, const void *p, size_t n)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, n, f), n);
	fclose(f);
}

#define FIXTURE_NAME "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3.unw"

static void test_dir_roundtrip(void **state)
{
	struct unwind_cache_key k;
	struct unwind_cache_table t, got;
	struct unwind_cache_stats st;
	char dir[128];
	struct unwind_cache *c;
	uint8_t b[sizeof(fixture)];

	/* created with its parents, 0700 */
	snprintf(dir, sizeof(dir), "%s/a/b", tmpdir);
	c = unwind_cache__open(dir, 1 << 20, true);
	assert_non_null(c);
	fixture_key(&k);
	fixture_table(&t);
	assert_int_equal(unwind_cache__get(c, &k, "f", &got), -ENOENT);
	assert_int_equal(unwind_cache__put(c, &k, &t), 0);
	assert_true(exists(dir, FIXTURE_NAME));
	assert_int_equal(unwind_cache__get(c, &k, "f", &got), 0);
	assert_memory_equal(got.words, fixture_words, sizeof(fixture_words));
	unwind_cache_table__release(&got);
	/* the file is the fixture, byte for byte */
	{
		char p[256];
		FILE *f;

		snprintf(p, sizeof(p), "%s/%s", dir, FIXTURE_NAME);
		f = fopen(p, "r");
		assert_non_null(f);
		assert_int_equal(fread(b, 1, sizeof(b), f), sizeof(b));
		assert_int_equal(fgetc(f), EOF);
		fclose(f);
		assert_memory_equal(b, fixture, sizeof(b));
	}
	/* a corrupt entry: refused, removed, counted */
	b[110] ^= 1;
	write_file(dir, FIXTURE_NAME, b, sizeof(b));
	assert_int_equal(unwind_cache__get(c, &k, "f", &got), -EINVAL);
	assert_false(exists(dir, FIXTURE_NAME));
	unwind_cache__stats(c, &st);
	assert_int_equal(st.hits, 1);
	assert_int_equal(st.misses, 1);
	assert_int_equal(st.rejected, 1);
	assert_int_equal(st.written, 1);
	assert_int_equal(st.bytes, sizeof(fixture));
	unwind_cache__free(c);
	/* NULL cache: nothing, quietly */
	assert_int_equal(unwind_cache__get(NULL, &k, "f", &got), -ENOENT);
	assert_int_equal(unwind_cache__put(NULL, &k, &t), 0);
	assert_null(unwind_cache__open("none", 1 << 20, true));
	assert_null(unwind_cache__open(NULL, 1 << 20, true));
}

static void test_dir_refused(void **state)
{
	char dir[128], link[128];

	snprintf(dir, sizeof(dir), "%s/open", tmpdir);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(chmod(dir, 0755), 0); /* whatever the umask */
	assert_null(unwind_cache__open(dir, 1 << 20, true));
	assert_int_equal(chmod(dir, 0710), 0);
	assert_null(unwind_cache__open(dir, 1 << 20, true));
	assert_int_equal(chmod(dir, 0700), 0);
	struct unwind_cache *c = unwind_cache__open(dir, 1 << 20, true);
	assert_non_null(c);
	unwind_cache__free(c);
	/* a symlink to a good directory: refused (O_NOFOLLOW) */
	snprintf(link, sizeof(link), "%s/link", tmpdir);
	assert_int_equal(symlink(dir, link), 0);
	assert_null(unwind_cache__open(link, 1 << 20, true));
	/* a file */
	write_file(tmpdir, "file", "x", 1);
	snprintf(link, sizeof(link), "%s/file", tmpdir);
	assert_null(unwind_cache__open(link, 1 << 20, true));
	/* another owner (root can give it away) */
	if (geteuid() == 0) {
		assert_int_equal(chown(dir, 65534, 65534), 0);
		assert_null(unwind_cache__open(dir, 1 << 20, true));
	}
}

static void test_dir_lru(void **state)
{
	struct unwind_cache_key a, b, k3;
	struct unwind_cache_table t, got;
	struct unwind_cache_stats st;
	struct timespec old[2] = { { 1000, 0 }, { 1000, 0 } },
			older[2] = { { 2000, 0 }, { 2000, 0 } };
	char dir[128], name[256];
	struct unwind_cache *c;

	snprintf(dir, sizeof(dir), "%s/lru", tmpdir);
	/* room for two entries of 124 bytes, not three */
	c = unwind_cache__open(dir, 300, true);
	assert_non_null(c);
	fixture_table(&t);
	fixture_key(&a);
	b = a;
	b.id[0] = 0xb0;
	k3 = a;
	k3.id[0] = 0xc0;
	assert_int_equal(unwind_cache__put(c, &a, &t), 0);
	assert_int_equal(unwind_cache__put(c, &b, &t), 0);
	/* a written first; b used long ago, then a read now */
	snprintf(name, sizeof(name), "%s/" FIXTURE_NAME, dir);
	assert_int_equal(utimensat(AT_FDCWD, name, old, 0), 0);
	snprintf(name, sizeof(name), "%s/b0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3.unw", dir);
	assert_int_equal(utimensat(AT_FDCWD, name, older, 0), 0);
	assert_int_equal(unwind_cache__get(c, &a, "a", &got), 0);
	unwind_cache_table__release(&got);
	assert_int_equal(unwind_cache__put(c, &k3, &t), 0);
	assert_true(exists(dir, FIXTURE_NAME));
	assert_false(exists(dir, "b0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3.unw"));
	assert_true(exists(dir, "c0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3.unw"));
	unwind_cache__stats(c, &st);
	assert_int_equal(st.evicted, 1);
	assert_int_equal(st.bytes, 2 * sizeof(fixture));
	/* larger than the whole bound: not written */
	unwind_cache__free(c);
	c = unwind_cache__open(dir, 100, true);
	assert_non_null(c);
	unwind_cache__stats(c, &st);
	assert_int_equal(st.bytes, 0); /* both removed at open: over the bound */
	assert_int_equal(unwind_cache__put(c, &a, &t), -E2BIG);
	unwind_cache__free(c);
}

static void test_dir_leftovers(void **state)
{
	char dir[128];
	struct unwind_cache *c;

	snprintf(dir, sizeof(dir), "%s/left", tmpdir);
	assert_int_equal(mkdir(dir, 0700), 0);
	/* a writer that died mid-write (no such pid), one alive (ours), unrelated files */
	write_file(dir, ".tmp.999999999.0." FIXTURE_NAME, "x", 1);
	{
		char n[128];

		snprintf(n, sizeof(n), ".tmp.%d.0." FIXTURE_NAME, (int)getpid());
		write_file(dir, n, "x", 1);
		write_file(dir, "README", "x", 1);
		c = unwind_cache__open(dir, 1 << 20, true);
		assert_non_null(c);
		assert_false(exists(dir, ".tmp.999999999.0." FIXTURE_NAME));
		assert_true(exists(dir, n));
		assert_true(exists(dir, "README"));
		unwind_cache__free(c);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encode_fixture),
		cmocka_unit_test(test_decode_fixture),
		cmocka_unit_test(test_header_fields),
		cmocka_unit_test(test_foreign_and_stale),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_checksum),
		cmocka_unit_test(test_malformed_layout),
		cmocka_unit_test(test_real_table),
		cmocka_unit_test_setup_teardown(test_dir_roundtrip, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_dir_refused, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_dir_lru, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_dir_leftovers, setup_dir, teardown_dir),
	};

	log_verbosity = -1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}

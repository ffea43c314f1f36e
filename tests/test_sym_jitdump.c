// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/symbolize/sym_jitdump.c (include/sym_jitdump.h): byte-level
 * jitdump fixtures built here ("JITDUMP specification version 2",
 * tools/perf/Documentation/jitdump-specification.txt in the Linux kernel tree) in
 * both byte orders with every record type, truncation at every byte, corrupt
 * sizes and counts, unknown record types, MOVE and code reuse resolved by
 * timestamp, and reading files safely (symlinks, FIFOs, size cap).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "log.h"
#include "sym_jitdump.h"

/* A jitdump under construction, fields written in the host or the other byte order. */
struct fx {
	uint8_t b[4096];
	size_t len;
	bool swap;
};

static void put(struct fx *f, const void *p, size_t n)
{
	assert_true(f->len + n <= sizeof(f->b));
	memcpy(f->b + f->len, p, n);
	f->len += n;
}

static void put32(struct fx *f, uint32_t v)
{
	if (f->swap)
		v = __builtin_bswap32(v);
	put(f, &v, 4);
}

static void put64(struct fx *f, uint64_t v)
{
	if (f->swap)
		v = __builtin_bswap64(v);
	put(f, &v, 8);
}

static void patch32(struct fx *f, size_t off, uint32_t v)
{
	if (f->swap)
		v = __builtin_bswap32(v);
	memcpy(f->b + off, &v, 4);
}

/* File header of hdr_size bytes (40, or more: padded with zeroes). */
static void fx_header(struct fx *f, bool swap, uint32_t version, uint32_t hdr_size)
{
	memset(f, 0, sizeof(*f));
	f->swap = swap;
	put32(f, JITDUMP_MAGIC);
	put32(f, version);
	put32(f, hdr_size);
	put32(f, 62); /* EM_X86_64 */
	put32(f, 0);
	put32(f, 4242);
	put64(f, 1);
	put64(f, 0);
	while (f->len < hdr_size)
		put(f, "", 1);
}

/* Record header with total_size patched by rec_end; returns its offset. */
static size_t rec_begin(struct fx *f, uint32_t id, uint64_t ts)
{
	size_t off = f->len;

	put32(f, id);
	put32(f, 0);
	put64(f, ts);
	return off;
}

static void rec_end(struct fx *f, size_t off)
{
	patch32(f, off + 4, (uint32_t)(f->len - off));
}

/* a file as bpfprof reads one: jit_file__read (O_NOFOLLOW, regular files, max_size cap), then the parser */
static int load(const char *path, uint64_t max_size, struct jit_table **out,
		struct jitdump_stats *stats)
{
	char *data;
	size_t len;
	int err;

	*out = NULL;
	err = jit_file__read(path, max_size, &data, &len);
	if (err)
		return err;
	err = jitdump__parse(data, len, path, out, stats);
	free(data);
	return err;
}

static void fx_load(struct fx *f, uint64_t ts, uint64_t addr, uint64_t size, uint64_t index,
		    const char *name)
{
	size_t r = rec_begin(f, JIT_CODE_LOAD, ts);
	uint64_t i;

	put32(f, 4242);
	put32(f, 4243);
	put64(f, addr); /* vma */
	put64(f, addr); /* code_addr */
	put64(f, size);
	put64(f, index);
	put(f, name, strlen(name) + 1);
	for (i = 0; i < size && i < 64; i++) /* code bytes (short: only a few) */
		put(f, "\xc3", 1);
	rec_end(f, r);
}

static void fx_move(struct fx *f, uint64_t ts, uint64_t old, uint64_t new, uint64_t size,
		    uint64_t index)
{
	size_t r = rec_begin(f, JIT_CODE_MOVE, ts);

	put32(f, 4242);
	put32(f, 4243);
	put64(f, new);
	put64(f, old);
	put64(f, new);
	put64(f, size);
	put64(f, index);
	rec_end(f, r);
}

static void fx_debug_info(struct fx *f, uint64_t ts, uint64_t addr)
{
	size_t r = rec_begin(f, JIT_CODE_DEBUG_INFO, ts);

	put64(f, addr);
	put64(f, 2);
	put64(f, addr);
	put32(f, 1);
	put32(f, 0);
	put(f, "/app.js", 8);
	put64(f, addr + 8);
	put32(f, 2);
	put32(f, 5);
	put(f, "/app.js", 8);
	rec_end(f, r);
}

static void fx_unwinding_info(struct fx *f, uint64_t ts)
{
	size_t r = rec_begin(f, JIT_CODE_UNWINDING_INFO, ts);

	put64(f, 16); /* unwind_data_size */
	put64(f, 8); /* eh_frame_hdr_size */
	put64(f, 16); /* mapped_size */
	put(f, "0123456789abcdef", 16);
	rec_end(f, r);
}

static void fx_close(struct fx *f, uint64_t ts)
{
	rec_end(f, rec_begin(f, JIT_CODE_CLOSE, ts));
}

static struct jit_table *parse_ok(const struct fx *f, struct jitdump_stats *st)
{
	struct jit_table *t = NULL;

	assert_int_equal(jitdump__parse(f->b, f->len, "fixture", &t, st), 0);
	assert_non_null(t);
	return t;
}

static void check_name(const struct jit_table *t, uint64_t addr, const char *want,
		       uint64_t want_off)
{
	uint64_t off = ~0ull;
	const char *name = jitdump__lookup(t, addr, &off);

	if (!want) {
		assert_null(name);
		return;
	}
	assert_non_null(name);
	assert_string_equal(name, want);
	assert_int_equal(off, want_off);
}

static void test_every_record_both_orders(void **state)
{
	int swap;

	for (swap = 0; swap < 2; swap++) {
		struct jitdump_stats st;
		struct jit_table *t;
		struct fx f;

		fx_header(&f, swap, 1, 40);
		fx_debug_info(&f, 10, 0x1000);
		fx_load(&f, 11, 0x1000, 0x100, 1, "JS:*hotA /app.js:1:14");
		fx_unwinding_info(&f, 12);
		fx_load(&f, 13, 0x2000, 0x10, 2, "JS:~hot B with spaces");
		fx_close(&f, 14);
		t = parse_ok(&f, &st);
		assert_int_equal(st.swapped, swap);
		assert_int_equal(st.version, 1);
		assert_int_equal(st.elf_mach, 62);
		assert_int_equal(st.pid, 4242);
		assert_int_equal(st.nr_load, 2);
		assert_int_equal(st.nr_debug_info, 1);
		assert_int_equal(st.nr_unwinding_info, 1);
		assert_int_equal(st.nr_close, 1);
		assert_int_equal(st.nr_unknown + st.nr_bad + st.nr_move, 0);
		assert_false(st.truncated);
		assert_false(st.corrupt);
		assert_int_equal(st.bytes_used, f.len);
		check_name(t, 0x1000, "JS:*hotA /app.js:1:14", 0);
		check_name(t, 0x10ff, "JS:*hotA /app.js:1:14", 0xff);
		check_name(t, 0x1100, NULL, 0);
		check_name(t, 0xfff, NULL, 0);
		check_name(t, 0x200f, "JS:~hot B with spaces", 0xf);
		check_name(t, 0x2010, NULL, 0);
		assert_int_equal(jitdump__count(t), 2);
		jitdump__free(t);
	}
}

static void test_bad_headers(void **state)
{
	struct jit_table *t = (void *)1;
	struct fx f;

	fx_header(&f, false, 1, 40);
	assert_int_equal(jitdump__parse(f.b, 39, "short", &t, NULL), -EINVAL);
	assert_null(t);
	assert_int_equal(jitdump__parse(f.b, 0, "empty", &t, NULL), -EINVAL);
	f.b[0] ^= 1;
	assert_int_equal(jitdump__parse(f.b, f.len, "magic", &t, NULL), -EINVAL);
	fx_header(&f, true, 3, 40);
	assert_int_equal(jitdump__parse(f.b, f.len, "version", &t, NULL), -ENOTSUP);
	fx_header(&f, false, 0, 40);
	assert_int_equal(jitdump__parse(f.b, f.len, "version 0", &t, NULL), -ENOTSUP);
	fx_header(&f, true, 1, 40);
	patch32(&f, 8, 39);
	assert_int_equal(jitdump__parse(f.b, f.len, "hdr small", &t, NULL), -EINVAL);
	patch32(&f, 8, 41);
	assert_int_equal(jitdump__parse(f.b, f.len, "hdr past end", &t, NULL), -EINVAL);
	assert_null(t);
}

static void test_longer_header_and_empty(void **state)
{
	struct jitdump_stats st;
	struct jit_table *t;
	struct fx f;

	fx_header(&f, false, 2, 40);
	t = parse_ok(&f, &st);
	assert_int_equal(jitdump__count(t), 0);
	assert_false(st.truncated);
	check_name(t, 0, NULL, 0);
	jitdump__free(t);

	fx_header(&f, true, 2, 64); /* a future header with 24 more bytes */
	fx_load(&f, 1, 0x5000, 0x20, 1, "after a long header");
	t = parse_ok(&f, &st);
	check_name(t, 0x5001, "after a long header", 1);
	jitdump__free(t);
}

/* Cut the file at every byte: never an error; records wholly present are kept. */
static void test_truncated_everywhere(void **state)
{
	size_t ends[4], cut;
	int swap;

	for (swap = 0; swap < 2; swap++) {
		struct fx f;

		fx_header(&f, swap, 1, 40);
		fx_load(&f, 1, 0x1000, 0x10, 1, "first");
		ends[0] = f.len;
		fx_debug_info(&f, 2, 0x2000);
		ends[1] = f.len;
		fx_load(&f, 3, 0x2000, 0x10, 2, "second");
		ends[2] = f.len;
		fx_unwinding_info(&f, 4);
		ends[3] = f.len;
		for (cut = 40; cut <= f.len; cut++) {
			struct jitdump_stats st;
			struct jit_table *t = NULL;
			bool at_end = cut == 40 || cut == ends[0] || cut == ends[1] ||
				      cut == ends[2] || cut == ends[3];

			assert_int_equal(jitdump__parse(f.b, cut, "cut", &t, &st), 0);
			assert_int_equal(st.truncated, !at_end);
			assert_false(st.corrupt);
			assert_int_equal(st.nr_bad, 0);
			assert_int_equal(st.nr_load, (cut >= ends[0]) + (cut >= ends[2]));
			check_name(t, 0x1000, cut >= ends[0] ? "first" : NULL, 0);
			check_name(t, 0x2000, cut >= ends[2] ? "second" : NULL, 0);
			assert_true(st.bytes_used <= cut);
			jitdump__free(t);
		}
	}
}

static void test_unknown_record_skipped(void **state)
{
	struct jitdump_stats st;
	struct jit_table *t;
	struct fx f;
	size_t r;

	fx_header(&f, true, 1, 40);
	fx_load(&f, 1, 0x1000, 0x10, 1, "before");
	r = rec_begin(&f, 99, 2);
	put(&f,
	    "\0\0\0\0\xff\xff\xff\xff"
	    "garbage!",
	    16); /* would read as a huge size */
	rec_end(&f, r);
	rec_end(&f, rec_begin(&f, 5, 3)); /* a future id, header only */
	fx_load(&f, 4, 0x2000, 0x10, 2, "after");
	t = parse_ok(&f, &st);
	assert_int_equal(st.nr_unknown, 2);
	assert_int_equal(st.nr_load, 2);
	assert_int_equal(st.nr_bad, 0);
	check_name(t, 0x1000, "before", 0);
	check_name(t, 0x2000, "after", 0);
	jitdump__free(t);
}

static void test_corrupt_record_size_stops(void **state)
{
	struct jitdump_stats st;
	struct jit_table *t;
	struct fx f;
	size_t r;

	fx_header(&f, false, 1, 40);
	fx_load(&f, 1, 0x1000, 0x10, 1, "kept");
	r = rec_begin(&f, JIT_CODE_LOAD, 2);
	patch32(&f, r + 4, 8); /* smaller than the record header itself */
	fx_load(&f, 3, 0x2000, 0x10, 2, "unreachable");
	t = parse_ok(&f, &st);
	assert_true(st.corrupt);
	assert_int_equal(st.bytes_used, r);
	check_name(t, 0x1000, "kept", 0);
	check_name(t, 0x2000, NULL, 0);
	jitdump__free(t);
}

/* Known records whose payload disagrees with their size: skipped by size, counted. */
static void test_inconsistent_payloads(void **state)
{
	struct jitdump_stats st;
	struct jit_table *t;
	struct fx f;
	size_t r;

	fx_header(&f, true, 1, 40);
	/* LOAD whose name runs to the end of the record with no NUL */
	r = rec_begin(&f, JIT_CODE_LOAD, 1);
	put32(&f, 1);
	put32(&f, 1);
	put64(&f, 0x3000);
	put64(&f, 0x3000);
	put64(&f, 0x10);
	put64(&f, 9);
	put(&f, "noterm", 6);
	rec_end(&f, r);
	/* LOAD shorter than its fixed fields */
	r = rec_begin(&f, JIT_CODE_LOAD, 1);
	put64(&f, 0x3000);
	rec_end(&f, r);
	/* MOVE shorter than its fixed fields */
	r = rec_begin(&f, JIT_CODE_MOVE, 1);
	put64(&f, 0x3000);
	rec_end(&f, r);
	/* DEBUG_INFO with a count far beyond its bytes */
	r = rec_begin(&f, JIT_CODE_DEBUG_INFO, 1);
	put64(&f, 0x3000);
	put64(&f, UINT64_MAX / 2);
	put(&f, "xxxxxxxxxxxxxxxxxxxxxxxx", 24);
	rec_end(&f, r);
	/* DEBUG_INFO whose one entry's file name is not terminated */
	r = rec_begin(&f, JIT_CODE_DEBUG_INFO, 1);
	put64(&f, 0x3000);
	put64(&f, 1);
	put64(&f, 0x3000);
	put32(&f, 1);
	put32(&f, 0);
	put(&f, "/no/nul/here", 12);
	rec_end(&f, r);
	/* UNWINDING_INFO claiming more data than it holds, and a header above the data */
	r = rec_begin(&f, JIT_CODE_UNWINDING_INFO, 1);
	put64(&f, 1000);
	put64(&f, 8);
	put64(&f, 0);
	put(&f, "12345678", 8);
	rec_end(&f, r);
	r = rec_begin(&f, JIT_CODE_UNWINDING_INFO, 1);
	put64(&f, 8);
	put64(&f, 9);
	put64(&f, 0);
	put(&f, "12345678", 8);
	rec_end(&f, r);
	r = rec_begin(&f, JIT_CODE_UNWINDING_INFO, 1);
	put64(&f, 8);
	rec_end(&f, r);
	fx_load(&f, 2, 0x4000, 0x10, 3, "survivor");
	t = parse_ok(&f, &st);
	assert_int_equal(st.nr_bad, 8);
	assert_int_equal(st.nr_load, 1);
	assert_int_equal(st.nr_debug_info, 0);
	assert_int_equal(st.nr_unwinding_info, 0);
	assert_false(st.corrupt);
	assert_false(st.truncated);
	assert_int_equal(jitdump__count(t), 1);
	check_name(t, 0x3000, NULL, 0);
	check_name(t, 0x4008, "survivor", 8);
	jitdump__free(t);
}

static void test_move_wins_from_its_time(void **state)
{
	struct jitdump_stats st;
	struct jit_table *t;
	uint64_t off;
	struct fx f;

	fx_header(&f, false, 1, 40);
	fx_load(&f, 10, 0x1000, 0x100, 1, "A");
	fx_load(&f, 20, 0x2000, 0x100, 2, "B");
	fx_move(&f, 30, 0x1000, 0x2000, 0x80, 1); /* A moves over B's start */
	fx_move(&f, 31, 0x9000, 0x9000, 0x80, 77); /* no LOAD with index 77 */
	t = parse_ok(&f, &st);
	assert_int_equal(st.nr_move, 2);
	assert_int_equal(st.nr_orphan_move, 1);
	check_name(t, 0x2010, "A", 0x10);
	check_name(t, 0x2090, "B", 0x90); /* past the moved code */
	check_name(t, 0x1010, "A", 0x10); /* old copy still named */
	check_name(t, 0x9000, NULL, 0);
	assert_string_equal(jitdump__lookup_at(t, 0x2010, 25, &off), "B");
	assert_int_equal(off, 0x10);
	assert_string_equal(jitdump__lookup_at(t, 0x2010, 30, &off), "A");
	assert_null(jitdump__lookup_at(t, 0x2010, 19, &off));
	assert_null(jitdump__lookup_at(t, 0x1010, 9, NULL));
	jitdump__free(t);
}

static void test_reuse_newest_wins(void **state)
{
	struct jit_sym s;
	struct jit_table *t;
	struct fx f;

	fx_header(&f, true, 1, 40);
	fx_load(&f, 100, 0x3000, 0x40, 1, "X");
	fx_load(&f, 200, 0x3000, 0x40, 2, "Y"); /* reuse at a later time */
	fx_load(&f, 300, 0x3100, 0x40, 3, "P");
	fx_load(&f, 300, 0x3100, 0x40, 4, "Q"); /* same time: later in the file wins */
	fx_load(&f, 500, 0x3200, 0x40, 5, "late");
	fx_load(&f, 400, 0x3200, 0x40, 6, "early"); /* written later, stamped earlier */
	fx_load(&f, 600, 0x2f00, 0x1000, 7, "big"); /* a large range over all of them */
	fx_load(&f, 700, 0x3010, 0x8, 8, "small");
	t = parse_ok(&f, NULL);
	check_name(t, 0x3020, "big", 0x120);
	assert_string_equal(jitdump__lookup_at(t, 0x3020, 150, NULL), "X");
	assert_string_equal(jitdump__lookup_at(t, 0x3020, 200, NULL), "Y");
	assert_string_equal(jitdump__lookup_at(t, 0x3120, 300, NULL), "Q");
	assert_string_equal(jitdump__lookup_at(t, 0x3220, 450, NULL), "early");
	assert_string_equal(jitdump__lookup_at(t, 0x3220, 550, NULL), "late");
	check_name(t, 0x3014, "small", 4);
	check_name(t, 0x3018, "big", 0x118);
	check_name(t, 0x3eff, "big", 0xfff);
	check_name(t, 0x3f00, NULL, 0);
	/* entries in address order */
	assert_int_equal(jitdump__count(t), 8);
	assert_int_equal(jitdump__sym(t, 0, &s), 0);
	assert_string_equal(s.name, "big");
	assert_int_equal(s.start, 0x2f00);
	assert_int_equal(s.timestamp, 600);
	assert_int_equal(jitdump__sym(t, 7, &s), 0);
	assert_int_equal(s.start, 0x3200);
	assert_int_equal(jitdump__sym(t, 8, &s), -ENOENT);
	jitdump__free(t);
}

static void test_address_edges(void **state)
{
	struct jit_table *t;
	struct fx f;

	fx_header(&f, false, 1, 40);
	fx_load(&f, 1, UINT64_MAX - 0xf, 0x100, 1, "wraps"); /* start + size overflows */
	fx_load(&f, 1, 0, 0x10, 2, "zero");
	fx_load(&f, 1, 0x500, 0, 3, "empty");
	t = parse_ok(&f, NULL);
	check_name(t, UINT64_MAX, "wraps", 0xf);
	check_name(t, 0, "zero", 0);
	check_name(t, 0x500, NULL, 0);
	jitdump__free(t);
	assert_null(jitdump__lookup(NULL, 0, NULL));
	assert_int_equal(jitdump__count(NULL), 0);
	jitdump__free(NULL);
}

static char tmpdir[64];

static int setup_tmpdir(void **state)
{
	strcpy(tmpdir, "/tmp/test_sym_jitdump.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown_tmpdir(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static void write_file(const char *path, const void *data, size_t len)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	assert_int_equal(fwrite(data, 1, len, fp), len);
	assert_int_equal(fclose(fp), 0);
}

static void test_load_files(void **state)
{
	char path[128], link[128], fifo[128], dir[128];
	struct jitdump_stats st;
	struct jit_table *t;
	struct fx f;

	fx_header(&f, false, 1, 40);
	fx_load(&f, 1, 0x1000, 0x10, 1, "from disk");
	snprintf(path, sizeof(path), "%s/jit-1.dump", tmpdir);
	write_file(path, f.b, f.len);
	assert_int_equal(load(path, JIT_FILE_MAX_SIZE, &t, &st), 0);
	check_name(t, 0x1001, "from disk", 1);
	jitdump__free(t);
	/* exactly at the cap is fine, one byte under is not */
	assert_int_equal(load(path, f.len, &t, &st), 0);
	jitdump__free(t);
	assert_int_equal(load(path, f.len - 1, &t, &st), -EFBIG);
	assert_null(t);

	snprintf(link, sizeof(link), "%s/link.dump", tmpdir);
	assert_int_equal(symlink(path, link), 0);
	assert_int_equal(load(link, JIT_FILE_MAX_SIZE, &t, &st), -ELOOP);

	snprintf(fifo, sizeof(fifo), "%s/fifo.dump", tmpdir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(load(fifo, JIT_FILE_MAX_SIZE, &t, &st), -EINVAL);
	assert_int_equal(load("/dev/null", JIT_FILE_MAX_SIZE, &t, &st), -EINVAL);

	snprintf(dir, sizeof(dir), "%s/missing.dump", tmpdir);
	assert_int_equal(load(dir, JIT_FILE_MAX_SIZE, &t, &st), -ENOENT);
	assert_int_equal(load(tmpdir, JIT_FILE_MAX_SIZE, &t, &st), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_record_both_orders),
		cmocka_unit_test(test_bad_headers),
		cmocka_unit_test(test_longer_header_and_empty),
		cmocka_unit_test(test_truncated_everywhere),
		cmocka_unit_test(test_unknown_record_skipped),
		cmocka_unit_test(test_corrupt_record_size_stops),
		cmocka_unit_test(test_inconsistent_payloads),
		cmocka_unit_test(test_move_wins_from_its_time),
		cmocka_unit_test(test_reuse_newest_wins),
		cmocka_unit_test(test_address_edges),
		cmocka_unit_test(test_load_files),
	};

	log_verbosity = -1;
	return cmocka_run_group_tests(tests, setup_tmpdir, teardown_tmpdir);
}

// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/symbolize/sym_gopclntab.c on tables built here in
 * each layout (Go 1.16, 1.18 and 1.20 magics, runtime/symtab.go's pcHeader,
 * functab and _func): names, entries, file and line at several pcs (a
 * multi-byte varint among them), the text start from the caller when the
 * header has none (Go 1.26), and hostile tables: every truncation, bad
 * magics and header bytes, counts and offsets out of range, an unsorted
 * function table, names and files past the end. The real table of a Go
 * binary is checked by tests/integration/names.sh and replayed by the
 * fuzzer's corpus (tests/fuzz/corpus/gopclntab).
 *
 * `test_gopclntab --write-seeds DIR` writes the built tables as fuzz seeds.
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
#include "sym_gopclntab.h"

#define TEXT 0x401000ULL

struct table {
	uint8_t b[1024];
	size_t len;
	size_t pcln; /* offset of the function table */
	size_t func[2]; /* offsets of the _funcs */
	size_t nameoff_at[2]; /* where each _func's nameoff is */
};

static void put(struct table *t, size_t at, uint64_t v, size_t n)
{
	memcpy(t->b + at, &v, n); /* little-endian host, as the tables */
}

static size_t add(struct table *t, const void *p, size_t n)
{
	size_t at = t->len;

	memcpy(t->b + at, p, n);
	t->len += n;
	return at;
}

/*
 * A table of version (116, 118, 120) with main.a at [TEXT, TEXT+0x40) (line
 * 10, then 12 from +0x10) and main.b at [TEXT+0x40, TEXT+0x100) (line 20),
 * both in /src/a.go. header_text: the textStart word (1.18+).
 */
static void build(struct table *t, unsigned int version, uint64_t header_text)
{
	static const char names[] = "main.a\0main.b";
	static const char files[] = "/src/a.go";
	/* pctab: offset 0 means no table; line a, file a, line b, file b */
	/* ... and main.b's SP deltas: 0 to +4, 0x18 to +0xb0, 0 to its end */
	static const uint8_t pctab[] = { 0, 22,	  16,	4, 48, 0, 2,  64,   0,	  42, 0xc0, 0x01, 0,
					 2, 0xc0, 0x01, 0, 2,  4, 48, 0xac, 0x01, 47, 16,   0 };
	const uint32_t pcln_a = 1, pcfile_a = 6, pcln_b = 9, pcfile_b = 13, pcsp_b = 17;
	uint32_t cutab[1] = { 0 };
	unsigned int nw = version >= 118 ? 8 : 7, k = 0, i;
	size_t hdr = 8 + nw * 8, funcname, cu, filetab, pct, fsize, es;
	uint32_t magic = version == 116 ? 0xfffffffa : version == 118 ? 0xfffffff0 : 0xfffffff1;

	memset(t, 0, sizeof(*t));
	put(t, 0, magic, 4);
	t->b[6] = 1; /* quantum */
	t->b[7] = 8; /* pointer size */
	t->len = hdr;
	funcname = add(t, names, sizeof(names));
	cu = add(t, cutab, sizeof(cutab));
	filetab = add(t, files, sizeof(files));
	pct = add(t, pctab, sizeof(pctab));
	t->pcln = t->len;
	put(t, 8 + 8 * k++, 2, 8); /* nfunc */
	put(t, 8 + 8 * k++, 1, 8); /* nfiles */
	if (version >= 118)
		put(t, 8 + 8 * k++, header_text, 8);
	put(t, 8 + 8 * k++, funcname, 8);
	put(t, 8 + 8 * k++, cu, 8);
	put(t, 8 + 8 * k++, filetab, 8);
	put(t, 8 + 8 * k++, pct, 8);
	put(t, 8 + 8 * k++, t->pcln, 8);
	/* functab: 3 entries, then the _funcs */
	es = version >= 118 ? 8 : 16;
	fsize = version == 116 ? 44 : version == 118 ? 40 : 44;
	t->len = t->pcln + 3 * es;
	for (i = 0; i < 2; i++) {
		uint64_t entry = i ? 0x40 : 0;
		size_t f = t->len, fields = version >= 118 ? f + 4 : f + 8;

		t->func[i] = f;
		t->nameoff_at[i] = fields;
		if (version >= 118) {
			put(t, t->pcln + i * 8, entry, 4);
			put(t, t->pcln + i * 8 + 4, f - t->pcln, 4);
			put(t, f, entry, 4);
		} else {
			put(t, t->pcln + i * 16, TEXT + entry, 8);
			put(t, t->pcln + i * 16 + 8, f - t->pcln, 8);
			put(t, f, TEXT + entry, 8);
		}
		put(t, fields, i ? 7 : 0, 4); /* nameoff */
		put(t, fields + 12, i ? pcsp_b : 0, 4);
		put(t, fields + 16, i ? pcfile_b : pcfile_a, 4);
		put(t, fields + 20, i ? pcln_b : pcln_a, 4);
		put(t, fields + 28, 0, 4); /* cuOffset */
		t->len += fsize;
	}
	/* the end of code */
	if (version >= 118)
		put(t, t->pcln + 16, 0x100, 4);
	else
		put(t, t->pcln + 32, TEXT + 0x100, 8);
}

static void expect(const struct go_pclntab *g, uint64_t pc, const char *name, uint64_t entry,
		   uint32_t line)
{
	struct go_func_info fi;

	assert_int_equal(go_pclntab__lookup(g, pc, &fi), 0);
	assert_string_equal(fi.name, name);
	assert_int_equal(fi.entry, entry);
	assert_non_null(fi.file);
	assert_string_equal(fi.file, "/src/a.go");
	assert_int_equal(fi.line, line);
}

static void check_layout(unsigned int version, uint64_t header_text, uint64_t text_arg)
{
	struct table t;
	struct go_pclntab *g;
	struct go_func_info fi;

	build(&t, version, header_text);
	g = go_pclntab__parse(t.b, t.len, text_arg);
	assert_non_null(g);
	assert_int_equal(go_pclntab__version(g), version);
	assert_int_equal(go_pclntab__count(g), 2);
	expect(g, TEXT, "main.a", TEXT, 10);
	expect(g, TEXT + 0xf, "main.a", TEXT, 10);
	expect(g, TEXT + 0x10, "main.a", TEXT, 12);
	expect(g, TEXT + 0x3f, "main.a", TEXT, 12);
	expect(g, TEXT + 0x40, "main.b", TEXT + 0x40, 20);
	expect(g, TEXT + 0xff, "main.b", TEXT + 0x40, 20);
	assert_int_equal(go_pclntab__lookup(g, TEXT + 0x100, &fi), -ENOENT);
	assert_int_equal(go_pclntab__lookup(g, TEXT - 1, &fi), -ENOENT);
	assert_int_equal(go_pclntab__lookup(g, 0, &fi), -ENOENT);
	go_pclntab__free(g);
}

static void test_layouts(void **state)
{
	check_layout(116, 0, 0);
	check_layout(118, TEXT, 0);
	check_layout(120, TEXT, 0x999000); /* the header's textStart wins */
	/* Go 1.26: textStart 0 in the header, the caller's .text address used */
	check_layout(120, 0, TEXT);
}

struct runs {
	uint64_t start[8], end[8];
	int32_t delta[8];
	int n;
};

static int collect(void *ctx, uint64_t start, uint64_t end, int32_t delta)
{
	struct runs *r = ctx;

	if (r->n == 8)
		return -1;
	r->start[r->n] = start;
	r->end[r->n] = end;
	r->delta[r->n++] = delta;
	return 0;
}

/* Each function's span and name, and the SP delta runs unwind_table.c turns into rows */
static void test_funcs_and_sp(void **state)
{
	for (unsigned int v = 116; v <= 120; v += 2) {
		struct go_func_span f;
		struct runs r = { .n = 0 };
		struct go_pclntab *g;
		struct table t;

		build(&t, v, TEXT);
		g = go_pclntab__parse(t.b, t.len, TEXT);
		assert_non_null(g);
		assert_int_equal(go_pclntab__func(g, 0, &f), 0);
		assert_int_equal(f.entry, TEXT);
		assert_int_equal(f.end, TEXT + 0x40);
		assert_string_equal(f.name, "main.a");
		assert_int_equal(go_pclntab__func(g, 1, &f), 0);
		assert_int_equal(f.entry, TEXT + 0x40);
		assert_int_equal(f.end, TEXT + 0x100);
		assert_string_equal(f.name, "main.b");
		assert_int_equal(go_pclntab__func(g, 2, &f), -ENOENT);
		/* main.a has no table */
		assert_int_equal(go_pclntab__sp_runs(g, 0, collect, &r), -ENOENT);
		assert_int_equal(go_pclntab__sp_runs(g, 1, collect, &r), 0);
		assert_int_equal(r.n, 3);
		assert_int_equal(r.start[0], TEXT + 0x40);
		assert_int_equal(r.end[0], TEXT + 0x44);
		assert_int_equal(r.delta[0], 0);
		assert_int_equal(r.start[1], TEXT + 0x44);
		assert_int_equal(r.end[1], TEXT + 0xf0);
		assert_int_equal(r.delta[1], 0x18);
		assert_int_equal(r.start[2], TEXT + 0xf0);
		assert_int_equal(r.end[2], TEXT + 0x100);
		assert_int_equal(r.delta[2], 0);
		/* the callback's error stops the walk */
		r.n = 8;
		assert_int_equal(go_pclntab__sp_runs(g, 1, collect, &r), -1);
		go_pclntab__free(g);
	}
}

static void expect_refused(const struct table *t, size_t len)
{
	struct go_pclntab *g = go_pclntab__parse(t->b, len, TEXT);

	assert_null(g);
	assert_int_equal(errno, EINVAL);
}

static void test_hostile_header(void **state)
{
	struct table t;
	size_t len;

	/* every truncation of each layout: refused, or (past the function table) looked up safely */
	for (unsigned int v = 116; v <= 120; v += 2) {
		build(&t, v, TEXT);
		for (len = 0; len < t.len; len++) {
			struct go_pclntab *g = go_pclntab__parse(t.b, len, TEXT);
			struct go_func_info fi;

			if (g) {
				for (uint64_t pc = TEXT; pc < TEXT + 0x100; pc += 0x8)
					go_pclntab__lookup(g, pc, &fi);
				go_pclntab__free(g);
			}
		}
	}
	build(&t, 118, TEXT);
	put(&t, 0, 0xfffffffb, 4); /* Go 1.2-1.15: not read */
	expect_refused(&t, t.len);
	put(&t, 0, 0xf0ffffff, 4); /* big-endian */
	expect_refused(&t, t.len);
	build(&t, 118, TEXT);
	t.b[4] = 1;
	expect_refused(&t, t.len);
	build(&t, 118, TEXT);
	t.b[6] = 3; /* quantum */
	expect_refused(&t, t.len);
	build(&t, 118, TEXT);
	t.b[7] = 2; /* pointer size */
	expect_refused(&t, t.len);
	build(&t, 118, TEXT);
	put(&t, 8, 0, 8); /* no functions */
	expect_refused(&t, t.len);
	put(&t, 8, 1ULL << 60, 8); /* more than the bytes hold */
	expect_refused(&t, t.len);
	build(&t, 118, TEXT);
	put(&t, 8 + 7 * 8, t.len + 1, 8); /* pcln past the end */
	expect_refused(&t, t.len);
	build(&t, 118, TEXT);
	put(&t, 8 + 3 * 8, UINT64_MAX, 8); /* funcname offset */
	expect_refused(&t, t.len);
	build(&t, 118, TEXT);
	put(&t, t.pcln + 8, 0x400, 4); /* unsorted: main.b above the end */
	expect_refused(&t, t.len);
	build(&t, 116, TEXT);
	put(&t, t.pcln + 8, t.len, 8); /* main.a's _func past the end */
	expect_refused(&t, t.len);
	assert_null(go_pclntab__parse(t.b, GO_PCLNTAB_MAX_SIZE + 1ULL, TEXT));
	assert_int_equal(errno, EFBIG);
}

static void test_hostile_funcs(void **state)
{
	struct table t;
	struct go_pclntab *g;
	struct go_func_info fi;

	/* a name past the end: that function is unknown, the other still named */
	build(&t, 118, TEXT);
	put(&t, t.nameoff_at[0], 0x7fffffff, 4);
	g = go_pclntab__parse(t.b, t.len, TEXT);
	assert_non_null(g);
	assert_int_equal(go_pclntab__lookup(g, TEXT, &fi), -ENOENT);
	expect(g, TEXT + 0x40, "main.b", TEXT + 0x40, 20);
	go_pclntab__free(g);
	/* pc tables and a file index past the end: named, no file or line */
	build(&t, 120, TEXT);
	put(&t, t.nameoff_at[1] + 16, 0xfffffff0, 4);
	put(&t, t.nameoff_at[1] + 20, 0xfffffff0, 4);
	put(&t, t.nameoff_at[0] + 28, 0x40000000, 4); /* cuOffset */
	g = go_pclntab__parse(t.b, t.len, TEXT);
	assert_non_null(g);
	assert_int_equal(go_pclntab__lookup(g, TEXT + 0x50, &fi), 0);
	assert_string_equal(fi.name, "main.b");
	assert_null(fi.file);
	assert_int_equal(fi.line, 0);
	assert_int_equal(go_pclntab__lookup(g, TEXT + 0x5, &fi), 0);
	assert_string_equal(fi.name, "main.a");
	assert_null(fi.file);
	assert_int_equal(fi.line, 10);
	go_pclntab__free(g);
}

static int write_seeds(const char *dir)
{
	static const unsigned int versions[] = { 116, 118, 120 };
	char path[4096];
	struct table t;

	for (size_t i = 0; i < 3; i++) {
		FILE *f;

		build(&t, versions[i], TEXT);
		snprintf(path, sizeof(path), "%s/built-go%u", dir, versions[i]);
		f = fopen(path, "wb");
		if (!f || fwrite(t.b, 1, t.len, f) != t.len || fclose(f))
			return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layouts),
		cmocka_unit_test(test_hostile_header),
		cmocka_unit_test(test_hostile_funcs),
		cmocka_unit_test(test_funcs_and_sp),
	};

	if (argc == 3 && !strcmp(argv[1], "--write-seeds"))
		return write_seeds(argv[2]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}

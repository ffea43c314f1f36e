// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/symbolize/procmaps.c (include/procmaps.h): byte-level
 * /proc/PID/maps fixtures in the shape of fs/proc/task_mmu.c show_map_vma()
 * (file, anonymous and pseudo mappings, paths with spaces and " (deleted)",
 * malformed and overflowing lines, a last line without newline), merging into
 * a profile (order, dedup, replacement of overlapped mappings) with
 * profile__find_mapping, and reading from a fake proc_dir made with mkdtemp.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* nftw */
#endif
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
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
#include "proc_table.h"
#include "procmaps.h"
#include "profile.h"

#define FAKE_PROC_TEMPLATE "/tmp/test_procmaps.XXXXXX"
#include "fake_proc.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * The kernel pads the path to column 74; anonymous mappings end right after
 * the inode. Line 6 is anonymous with trailing blanks (older kernels).
 */
static const char fixture[] =
	"00400000-00452000 r-xp 00000000 08:01 131090                             /usr/bin/app\n"
	"00651000-00652000 rw-p 00051000 08:01 131090                             /usr/bin/app\n"
	"01a2b000-01a4c000 rw-p 00000000 00:00 0                                  [heap]\n"
	"7f1234560000-7f1234570000 r-xp 00000000 fd:01 2621                       /tmp/my dir/lib x.so\n"
	"7f1234570000-7f1234571000 r--p 00010000 fd:01 2622                       /tmp/gone.so (deleted)\n"
	"7f1234580000-7f1234590000 rw-p 00000000 00:00 0   \n"
	"7f12345a0000-7f12345a1000 rw-s 00000000 00:05 3145730\n"
	"7ffd12340000-7ffd12361000 rw-p 00000000 00:00 0                          [stack]\n"
	"7ffd123fe000-7ffd12400000 r-xp 00000000 00:00 0                          [vdso]\n"
	"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]";

struct want {
	uint64_t start, end, offset, inode;
	uint32_t maj, min;
	const char *perms;
	const char *path;
};

static const struct want fixture_want[] = {
	{ 0x400000, 0x452000, 0, 131090, 8, 1, "r-xp", "/usr/bin/app" },
	{ 0x651000, 0x652000, 0x51000, 131090, 8, 1, "rw-p", "/usr/bin/app" },
	{ 0x1a2b000, 0x1a4c000, 0, 0, 0, 0, "rw-p", "[heap]" },
	{ 0x7f1234560000ULL, 0x7f1234570000ULL, 0, 2621, 0xfd, 1, "r-xp", "/tmp/my dir/lib x.so" },
	{ 0x7f1234570000ULL, 0x7f1234571000ULL, 0x10000, 2622, 0xfd, 1, "r--p",
	  "/tmp/gone.so (deleted)" },
	{ 0x7f1234580000ULL, 0x7f1234590000ULL, 0, 0, 0, 0, "rw-p", "" },
	{ 0x7f12345a0000ULL, 0x7f12345a1000ULL, 0, 3145730, 0, 5, "rw-s", "" },
	{ 0x7ffd12340000ULL, 0x7ffd12361000ULL, 0, 0, 0, 0, "rw-p", "[stack]" },
	{ 0x7ffd123fe000ULL, 0x7ffd12400000ULL, 0, 0, 0, 0, "r-xp", "[vdso]" },
	{ 0xffffffffff600000ULL, 0xffffffffff601000ULL, 0, 0, 0, 0, "--xp", "[vsyscall]" },
};

#define MAX_ENTRIES 32

struct collect {
	const char *text; /* the parsed buffer, to check that paths point into it */
	size_t len;
	size_t n;
	struct procmaps_entry e[MAX_ENTRIES];
	char path[MAX_ENTRIES][128];
	int stop_after; /* return 42 after this many entries, 0: never */
};

static int collect_cb(const struct procmaps_entry *e, void *ctx)
{
	struct collect *c = ctx;

	assert_true(c->n < MAX_ENTRIES);
	assert_true(e->path_len < sizeof(c->path[0]));
	if (e->path_len) {
		assert_true(e->path >= c->text && e->path + e->path_len <= c->text + c->len);
		memcpy(c->path[c->n], e->path, e->path_len);
	}
	c->path[c->n][e->path_len] = '\0';
	c->e[c->n++] = *e;
	if (c->stop_after && (int)c->n == c->stop_after)
		return 42;
	return 0;
}

/* Parse an exact-length heap copy (no NUL): the sanitizers catch overreads. */
static int parse(const char *text, size_t len, struct collect *c, size_t *nr_bad)
{
	char *copy = malloc(len ? len : 1);
	int ret;

	assert_non_null(copy);
	memcpy(copy, text, len);
	c->text = copy;
	c->len = len;
	ret = procmaps__parse(copy, len, "fixture", collect_cb, c, nr_bad);
	free(copy);
	c->text = NULL;
	return ret;
}

static void check_entry(const struct collect *c, size_t i, const struct want *w)
{
	const struct procmaps_entry *e = &c->e[i];

	assert_int_equal(e->start, w->start);
	assert_int_equal(e->end, w->end);
	assert_int_equal(e->offset, w->offset);
	assert_int_equal(e->inode, w->inode);
	assert_int_equal(e->dev_major, w->maj);
	assert_int_equal(e->dev_minor, w->min);
	assert_memory_equal(e->perms, w->perms, 4);
	assert_int_equal(e->perms[4], '\0');
	assert_int_equal(e->path_len, strlen(w->path));
	assert_string_equal(c->path[i], w->path);
}

static void test_parse_fixture(void **state)
{
	struct collect c = { 0 };
	size_t nr_bad = 0, i;

	assert_int_equal(parse(fixture, sizeof(fixture) - 1, &c, &nr_bad), 0);
	assert_int_equal(nr_bad, 0);
	assert_int_equal(c.n, ARRAY_SIZE(fixture_want));
	for (i = 0; i < c.n; i++)
		check_entry(&c, i, &fixture_want[i]);
}

static void test_parse_anonymous(void **state)
{
	static const char text[] = "7f0000000000-7f0000001000 rw-p 00000000 00:00 0\n"
				   "7f0000001000-7f0000002000 rw-p 00000000 00:00 0   \n";
	struct collect c = { 0 };
	size_t nr_bad = 0;

	assert_int_equal(parse(text, sizeof(text) - 1, &c, &nr_bad), 0);
	assert_int_equal(nr_bad, 0);
	assert_int_equal(c.n, 2);
	assert_int_equal(c.e[0].path_len, 0);
	assert_int_equal(c.e[1].path_len, 0);
	assert_int_equal(c.e[1].start, 0x7f0000001000ULL);
}

static void test_parse_upper_case_hex(void **state)
{
	/* the kernel writes lower case; upper case is accepted with the same values */
	static const char text[] = "7F12345A0000-7F12345B0000 R-XP 0000ABCD FD:0A 99 /upper\n"
				   "7F12345B0000-7F12345C0000 r-xp 0000ABCD FD:0A 99 /upper\n";
	struct collect c = { 0 };
	size_t nr_bad = 0;
	static const struct want w = {
		0x7f12345b0000ULL, 0x7f12345c0000ULL, 0xabcd, 99, 0xfd, 0xa, "r-xp", "/upper"
	};

	assert_int_equal(parse(text, sizeof(text) - 1, &c, &nr_bad), 0);
	/* upper-case permission letters are not the kernel's shape */
	assert_int_equal(nr_bad, 1);
	assert_int_equal(c.n, 1);
	check_entry(&c, 0, &w);
}

static void test_parse_malformed_lines(void **state)
{
	static const char text[] =
		"00400000-00452000 r-xp 00000000 08:01 131090    /bin/a\n"
		"garbage\n" /* bad */
		"00500000-00452000 r-xp 00000000 08:01 131090    /bin/end-before-start\n" /* bad */
		"00500000 00600000 r-xp 00000000 08:01 1    /bin/no-dash\n" /* bad */
		"00500000-00600000 r-xp 00000000 08:01\n" /* bad: no inode */
		"00500000-00600000 r-xp 00000000 08-01 1    /bin/dev\n" /* bad: dev */
		"00500000-00600000 rwxpp 00000000 08:01 1    /bin/perms5\n" /* bad: perms */
		"00500000-00600000 r?xp 00000000 08:01 1    /bin/perms?\n" /* bad: perms */
		"00500000-00600000 r-xp 0000g000 08:01 1    /bin/offset\n" /* bad: offset */
		"00500000-00600000 r-xp 00000000 08:01 12x    /bin/inode\n" /* bad: inode */
		"-00600000 r-xp 00000000 08:01 1    /bin/nostart\n" /* bad: empty start */
		"10000000000000000-10000000000001000 r-xp 00000000 08:01 1 /big\n" /* bad: 17 digits */
		"00500000-10000000000000000 r-xp 00000000 08:01 1 /bigend\n" /* bad: 17 digits */
		"00500000-00600000 r-xp 00000000 08:01 18446744073709551616 /ino\n" /* bad: 2^64 */
		"\n" /* empty: ignored */
		"00700000-00710000 r--p 00001000 08:01 131091    /bin/b\n"
		"ffffffffffffffff-ffffffffffffffff ---p ffffffffffffffff ff:ff 1    /max\n"
		"00800000-00810000 r--p 00000000 08:01 1"; /* no newline: parsed */
	struct collect c = { 0 };
	size_t nr_bad = 0;

	assert_int_equal(parse(text, sizeof(text) - 1, &c, &nr_bad), 0);
	assert_int_equal(nr_bad, 13);
	assert_int_equal(c.n, 4);
	assert_int_equal(c.e[0].start, 0x400000);
	assert_string_equal(c.path[0], "/bin/a");
	assert_int_equal(c.e[1].start, 0x700000);
	assert_int_equal(c.e[1].offset, 0x1000);
	assert_string_equal(c.path[1], "/bin/b");
	assert_int_equal(c.e[2].start, UINT64_MAX);
	assert_int_equal(c.e[2].end, UINT64_MAX);
	assert_int_equal(c.e[2].offset, UINT64_MAX);
	assert_int_equal(c.e[2].dev_major, 0xff);
	assert_int_equal(c.e[3].start, 0x800000);
	assert_int_equal(c.e[3].end, 0x810000);
	assert_int_equal(c.e[3].inode, 1);
	assert_int_equal(c.e[3].path_len, 0);

	/* nr_bad accumulates; NULL is allowed */
	memset(&c, 0, sizeof(c));
	assert_int_equal(parse(text, sizeof(text) - 1, &c, &nr_bad), 0);
	assert_int_equal(nr_bad, 26);
	memset(&c, 0, sizeof(c));
	assert_int_equal(parse(text, sizeof(text) - 1, &c, NULL), 0);
	assert_int_equal(c.n, 4);
}

static void test_parse_nul_in_perms(void **state)
{
	/* a NUL byte is no permission letter */
	static const char text[] = "00400000-00452000 r\0xp 00000000 08:01 1    /bin/nul\n";
	struct collect c = { 0 };
	size_t nr_bad = 0;

	assert_int_equal(parse(text, sizeof(text) - 1, &c, &nr_bad), 0);
	/*
	 * Regression: user/symbolize/procmaps.c parse_line() checks perms with
	 * strchr("rwxps-", s[i]), which also matches the terminating NUL, so
	 * "r\0xp" is accepted (perms reads "r") instead of being counted bad.
	 */
	assert_int_equal(c.n, 0);
	assert_int_equal(nr_bad, 1);
}

static void test_parse_empty(void **state)
{
	struct collect c = { 0 };
	size_t nr_bad = 0;

	assert_int_equal(parse("", 0, &c, &nr_bad), 0);
	assert_int_equal(c.n, 0);
	assert_int_equal(nr_bad, 0);
	assert_int_equal(parse("\n\n\n", 3, &c, &nr_bad), 0);
	assert_int_equal(c.n, 0);
	assert_int_equal(nr_bad, 0);
}

static void test_parse_stop(void **state)
{
	struct collect c = { .stop_after = 3 };
	size_t nr_bad = 0;

	assert_int_equal(parse(fixture, sizeof(fixture) - 1, &c, &nr_bad), 42);
	assert_int_equal(c.n, 3);
}

/* ---- merging into a profile ---- */

static struct profile *new_proc(uint32_t pid, uint32_t *proc)
{
	struct profile *p = profile__new();
	bool created;
	int idx;

	assert_non_null(p);
	idx = profile__process(p, pid, &created);
	assert_true(idx >= 0);
	*proc = (uint32_t)idx;
	return p;
}

static void test_merge_sorted_interned(void **state)
{
	/* out of order on purpose: the profile sorts by start */
	static const char text[] =
		"7f1234570000-7f1234571000 r--p 00010000 fd:01 2622    /tmp/gone.so (deleted)\n"
		"00651000-00652000 rw-p 00051000 08:01 131090    /usr/bin/app\n"
		"bad line\n"
		"00400000-00452000 r-xp 00000000 08:01 131090    /usr/bin/app\n"
		"7f1234580000-7f1234590000 rw-p 00000000 00:00 0\n";
	uint32_t proc;
	struct profile *p = new_proc(1234, &proc);
	const struct profile_process *pr;

	assert_int_equal(procmaps__merge(p, proc, text, sizeof(text) - 1, "test"), 4);
	pr = &p->procs[proc];
	assert_int_equal(pr->nr_mappings, 4);
	assert_int_equal(pr->mappings[0].start, 0x400000);
	assert_int_equal(pr->mappings[0].end, 0x452000);
	assert_string_equal(pr->mappings[0].perms, "r-xp");
	assert_int_equal(pr->mappings[0].inode, 131090);
	assert_int_equal(pr->mappings[0].dev_major, 8);
	assert_int_equal(pr->mappings[0].dev_minor, 1);
	assert_int_equal(pr->mappings[1].start, 0x651000);
	assert_int_equal(pr->mappings[1].offset, 0x51000);
	assert_string_equal(pr->mappings[1].perms, "rw-p");
	assert_int_equal(pr->mappings[2].start, 0x7f1234570000ULL);
	assert_string_equal(pr->mappings[2].path, "/tmp/gone.so (deleted)");
	assert_int_equal(pr->mappings[3].start, 0x7f1234580000ULL);
	assert_string_equal(pr->mappings[3].path, "");
	/* paths are interned: one pointer per distinct string */
	assert_ptr_equal(pr->mappings[0].path, pr->mappings[1].path);
	assert_ptr_equal(pr->mappings[0].path, profile__intern(p, "/usr/bin/app"));

	/* the same text again: nothing added, nothing changed */
	assert_int_equal(procmaps__merge(p, proc, text, sizeof(text) - 1, "test"), 0);
	pr = &p->procs[proc];
	assert_int_equal(pr->nr_mappings, 4);
	assert_int_equal(pr->mappings[0].start, 0x400000);
	assert_int_equal(pr->mappings[3].start, 0x7f1234580000ULL);
	profile__free(p);
}

static void test_merge_overlap_replaces(void **state)
{
	static const char old_text[] = "00001000-00002000 r-xp 00000000 08:01 1    /a\n"
				       "00003000-00004000 r-xp 00000000 08:01 2    /b\n"
				       "00005000-00006000 r-xp 00000000 08:01 3    /c\n"
				       "00008000-00009000 r-xp 00000000 08:01 4    /d\n";
	/* /a and /b were unmapped, /new covers parts of both; /c unchanged; /d gone from the text */
	static const char new_text[] = "00001800-00003800 r-xp 00000000 08:01 9    /new\n"
				       "00005000-00006000 r-xp 00000000 08:01 3    /c\n";
	uint32_t proc;
	struct profile *p = new_proc(1, &proc);
	const struct profile_process *pr;

	assert_int_equal(procmaps__merge(p, proc, old_text, sizeof(old_text) - 1, "old"), 4);
	assert_int_equal(procmaps__merge(p, proc, new_text, sizeof(new_text) - 1, "new"), 1);
	pr = &p->procs[proc];
	assert_int_equal(pr->nr_mappings, 3);
	assert_int_equal(pr->mappings[0].start, 0x1800);
	assert_int_equal(pr->mappings[0].end, 0x3800);
	assert_string_equal(pr->mappings[0].path, "/new");
	assert_int_equal(pr->mappings[1].start, 0x5000);
	assert_string_equal(pr->mappings[1].path, "/c");
	/* not in the newer snapshot, overlapped by nothing: kept */
	assert_int_equal(pr->mappings[2].start, 0x8000);
	assert_string_equal(pr->mappings[2].path, "/d");

	/* same range, other file: replaced in place */
	{
		static const char t[] = "00005000-00006000 r-xp 00000000 08:01 33    /c2\n";

		assert_int_equal(procmaps__merge(p, proc, t, sizeof(t) - 1, "t"), 1);
	}
	pr = &p->procs[proc];
	assert_int_equal(pr->nr_mappings, 3);
	assert_string_equal(pr->mappings[1].path, "/c2");
	assert_int_equal(pr->mappings[1].inode, 33);

	/* one new mapping covering everything replaces all three */
	{
		static const char t[] = "00000000-00010000 rw-p 00000000 00:00 0\n";

		assert_int_equal(procmaps__merge(p, proc, t, sizeof(t) - 1, "t"), 1);
	}
	pr = &p->procs[proc];
	assert_int_equal(pr->nr_mappings, 1);
	assert_int_equal(pr->mappings[0].start, 0);
	assert_int_equal(pr->mappings[0].end, 0x10000);
	profile__free(p);
}

static void test_find_mapping(void **state)
{
	static const char text[] =
		"00001000-00002000 r-xp 00000000 08:01 1    /a\n"
		"00002000-00003000 r--p 00001000 08:01 1    /a\n" /* adjacent to /a */
		"00005000-00006000 r-xp 00000000 08:01 3    /c\n"
		"7ffd12340000-7ffd12361000 rw-p 00000000 00:00 0    [stack]\n";
	uint32_t proc;
	struct profile *p = new_proc(1, &proc);

	/* no mappings at all */
	assert_int_equal(profile__find_mapping(p, proc, 0x1000), -1);
	assert_int_equal(procmaps__merge(p, proc, text, sizeof(text) - 1, "t"), 4);
	assert_int_equal(profile__find_mapping(p, proc, 0), -1);
	assert_int_equal(profile__find_mapping(p, proc, 0xfff), -1);
	assert_int_equal(profile__find_mapping(p, proc, 0x1000), 0);
	assert_int_equal(profile__find_mapping(p, proc, 0x1fff), 0);
	assert_int_equal(profile__find_mapping(p, proc, 0x2000), 1);
	assert_int_equal(profile__find_mapping(p, proc, 0x2fff), 1);
	assert_int_equal(profile__find_mapping(p, proc, 0x3000), -1);
	assert_int_equal(profile__find_mapping(p, proc, 0x4fff), -1);
	assert_int_equal(profile__find_mapping(p, proc, 0x5000), 2);
	assert_int_equal(profile__find_mapping(p, proc, 0x5fff), 2);
	assert_int_equal(profile__find_mapping(p, proc, 0x6000), -1);
	assert_int_equal(profile__find_mapping(p, proc, 0x7ffd12340000ULL), 3);
	assert_int_equal(profile__find_mapping(p, proc, 0x7ffd12360fffULL), 3);
	assert_int_equal(profile__find_mapping(p, proc, 0x7ffd12361000ULL), -1);
	assert_int_equal(profile__find_mapping(p, proc, UINT64_MAX), -1);
	profile__free(p);
}

/* ---- reading from a fake proc_dir ---- */

static void test_read(void **state)
{
	char *text = NULL;
	size_t len = 0;

	write_proc_file_in(tmpdir, 1234, "maps", fixture, sizeof(fixture) - 1);
	assert_int_equal(proc_table__read_maps(tmpdir, 1234, &text, &len), 0);
	assert_non_null(text);
	assert_int_equal(len, sizeof(fixture) - 1);
	assert_memory_equal(text, fixture, len);
	assert_int_equal(text[len], '\0');
	free(text);
}

static void test_read_large(void **state)
{
	/* 3000 lines, ~150 KiB: well past the first 16 KiB buffer */
	size_t n = 3000, cap = n * 64, len = 0, i, got_len = 0;
	char *big = malloc(cap), *text = NULL;
	uint32_t proc;
	struct profile *p;

	assert_non_null(big);
	for (i = 0; i < n; i++)
		len += (size_t)snprintf(big + len, cap - len,
					"%08zx-%08zx r-xp %08zx 08:01 %zu    /lib/%zu.so\n",
					0x10000 + i * 0x2000, 0x11000 + i * 0x2000, i * 0x1000, i,
					i);
	write_proc_file_in(tmpdir, 4321, "maps", big, len);
	assert_int_equal(proc_table__read_maps(tmpdir, 4321, &text, &got_len), 0);
	assert_int_equal(got_len, len);
	assert_memory_equal(text, big, len);
	free(text);

	p = new_proc(4321, &proc);
	assert_int_equal(proc_table__snapshot(p, proc, tmpdir), (int)n);
	assert_int_equal(p->procs[proc].nr_mappings, n);
	assert_int_equal(p->procs[proc].mappings[n - 1].start, 0x10000 + (n - 1) * 0x2000);
	assert_string_equal(p->procs[proc].mappings[n - 1].path, "/lib/2999.so");
	assert_int_equal(profile__find_mapping(p, proc, 0x10000 + 1500 * 0x2000 + 0xfff), 1500);
	assert_int_equal(profile__find_mapping(p, proc, 0x10000 + 1500 * 0x2000 + 0x1000), -1);
	profile__free(p);
	free(big);
}

static void test_read_empty_file(void **state)
{
	char *text = NULL;
	size_t len = 99;

	write_proc_file_in(tmpdir, 77, "maps", "", 0);
	assert_int_equal(proc_table__read_maps(tmpdir, 77, &text, &len), 0);
	assert_int_equal(len, 0);
	assert_non_null(text);
	assert_int_equal(text[0], '\0');
	free(text);
}

static void test_read_missing(void **state)
{
	char *text = NULL;
	size_t len = 0;
	uint32_t proc;
	struct profile *p;

	assert_int_equal(proc_table__read_maps(tmpdir, 999999, &text, &len), -ENOENT);
	assert_null(text);

	p = new_proc(999999, &proc);
	assert_int_equal(proc_table__snapshot(p, proc, tmpdir), -ENOENT);
	assert_int_equal(p->procs[proc].nr_mappings, 0);
	profile__free(p);
}

static void test_snapshot(void **state)
{
	uint32_t proc;
	struct profile *p = new_proc(1234, &proc);
	size_t i;

	write_proc_file_in(tmpdir, 1234, "maps", fixture, sizeof(fixture) - 1);
	assert_int_equal(proc_table__snapshot(p, proc, tmpdir), (int)ARRAY_SIZE(fixture_want));
	assert_int_equal(p->procs[proc].nr_mappings, ARRAY_SIZE(fixture_want));
	for (i = 0; i < ARRAY_SIZE(fixture_want); i++) {
		const struct profile_mapping *m = &p->procs[proc].mappings[i];

		assert_int_equal(m->start, fixture_want[i].start);
		assert_int_equal(m->end, fixture_want[i].end);
		assert_string_equal(m->path, fixture_want[i].path);
	}
	/* a second snapshot of the unchanged file adds nothing */
	assert_int_equal(proc_table__snapshot(p, proc, tmpdir), 0);
	profile__free(p);
}

static void test_read_long_proc_dir(void **state)
{
	/* a proc_dir of 80 characters: well within PATH_MAX */
	char dir[256], *text = NULL;
	size_t len = 0;

	snprintf(dir, sizeof(dir), "%s/%s", tmpdir,
		 "a-rather-long-directory-name-for-a-fake-proc-dir-0123456789");
	assert_int_equal(mkdir(dir, 0755), 0);
	write_proc_file_in(dir, 1234, "maps", fixture, sizeof(fixture) - 1);
	/*
	 * Regression: user/symbolize/procmaps.c proc_table__read_maps() formats "<proc_dir>/<pid>/maps"
	 * into char path[64] with an unchecked snprintf, so a longer proc_dir is
	 * silently truncated and the read fails with -ENOENT (or opens another
	 * file); proc_table__snapshot()'s origin[64] and agg.c read_comm()'s
	 * path[64] have the same limit.
	 */
	assert_int_equal(proc_table__read_maps(dir, 1234, &text, &len), 0);
	assert_int_equal(len, sizeof(fixture) - 1);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_fixture),
		cmocka_unit_test(test_parse_anonymous),
		cmocka_unit_test(test_parse_upper_case_hex),
		cmocka_unit_test(test_parse_malformed_lines),
		cmocka_unit_test(test_parse_nul_in_perms),
		cmocka_unit_test(test_parse_empty),
		cmocka_unit_test(test_parse_stop),
		cmocka_unit_test(test_merge_sorted_interned),
		cmocka_unit_test(test_merge_overlap_replaces),
		cmocka_unit_test(test_find_mapping),
		cmocka_unit_test(test_read),
		cmocka_unit_test(test_read_large),
		cmocka_unit_test(test_read_empty_file),
		cmocka_unit_test(test_read_missing),
		cmocka_unit_test(test_snapshot),
		cmocka_unit_test(test_read_long_proc_dir),
	};

	return cmocka_run_group_tests(tests, setup_tmpdir, teardown_tmpdir);
}

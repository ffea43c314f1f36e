// SPDX-License-Identifier: MIT
/* cmocka: interval stamps and --keep pruning of the output directory (user/capture/outdir.c). */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "outdir.h"

static void touch(const char *dir, const char *name)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
}

static bool exists(const char *dir, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

static void test_stamp(void **state)
{
	char s[OUTDIR_STAMP_LEN + 1];

	/* 2026-11-22 12:30:05 UTC = 1795350605 s */
	outdir__stamp(1795350605ULL * 1000000000ULL + 999999999ULL, s);
	assert_string_equal(s, "20261122T123005Z");
	outdir__stamp(0, s);
	assert_string_equal(s, "19700101T000000Z");
}

static void test_prune_keeps_newest_sets(void **state)
{
	static const char *const names[] = { "p.pb.gz", "p.folded" };
	static const char *const stamps[] = { "20261122T120000Z", "20261122T120010Z",
					      "20261122T120020Z", "20261122T120030Z" };
	char dir[] = "/tmp/bpfprof-outdir.XXXXXX", name[128];
	size_t i, j;

	assert_non_null(mkdtemp(dir));
	for (i = 0; i < 4; i++)
		for (j = 0; j < 2; j++) {
			snprintf(name, sizeof(name), "%s-%s", stamps[i], names[j]);
			touch(dir, name);
		}
	/* not ours: another name, no stamp, a malformed stamp, a temporary */
	touch(dir, "20261122T110000Z-other.prof");
	touch(dir, "notes.txt");
	touch(dir, "2026112xT110000Z-p.pb.gz");
	touch(dir, ".20261122T120030Z-p.pb.gz.AbC123");
	/* JIT images beside the oldest and the newest set (jit_elf.h) */
	for (i = 0; i < 4; i += 3) {
		char jit[PATH_MAX];

		snprintf(jit, sizeof(jit), "%s/%s-p.folded.jit", dir, stamps[i]);
		assert_int_equal(mkdir(jit, 0755), 0);
		snprintf(name, sizeof(name), "%s-p.folded.jit/jitted-7-0.so", stamps[i]);
		touch(dir, name);
	}

	/* file copies beside a .prof (dso_export.h), with a link inside that must not be followed */
	for (i = 0; i < 4; i += 3) {
		char bin[PATH_MAX], link[PATH_MAX + 16];

		snprintf(bin, sizeof(bin), "%s/%s-p.folded.bin", dir, stamps[i]);
		assert_int_equal(mkdir(bin, 0755), 0);
		snprintf(name, sizeof(name), "%s-p.folded.bin/burn_er-0123456789ab", stamps[i]);
		touch(dir, name);
		snprintf(link, sizeof(link), "%s/notes-link", bin);
		assert_int_equal(symlink("../notes.txt", link), 0);
	}

	assert_int_equal(outdir__prune(dir, names, 2, 2), 4);
	assert_true(exists(
		dir,
		"20261122T120000Z-p.folded.bin/notes-link")); /* not ours: kept, and so is the directory */
	assert_true(exists(dir, "20261122T120030Z-p.folded.bin/burn_er-0123456789ab"));
	assert_false(exists(dir, "20261122T120000Z-p.folded.bin/burn_er-0123456789ab"));
	assert_false(exists(dir, "20261122T120000Z-p.folded.jit"));
	assert_true(exists(dir, "20261122T120030Z-p.folded.jit/jitted-7-0.so"));
	for (i = 0; i < 4; i++)
		for (j = 0; j < 2; j++) {
			snprintf(name, sizeof(name), "%s-%s", stamps[i], names[j]);
			assert_int_equal(exists(dir, name), i >= 2);
		}
	assert_true(exists(dir, "20261122T110000Z-other.prof"));
	assert_true(exists(dir, "notes.txt"));
	assert_true(exists(dir, "2026112xT110000Z-p.pb.gz"));
	assert_true(exists(dir, ".20261122T120030Z-p.pb.gz.AbC123"));
	/* already within the limit, and keep 0: nothing more goes */
	assert_int_equal(outdir__prune(dir, names, 2, 2), 0);
	assert_int_equal(outdir__prune(dir, names, 2, 0), 0);
	assert_int_equal(outdir__prune("/nonexistent-bpfprof-dir", names, 2, 1), -ENOENT);

	snprintf(name, sizeof(name), "rm -rf '%s'", dir);
	assert_int_equal(system(name), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stamp),
		cmocka_unit_test(test_prune_keeps_newest_sets),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: MIT
/*
 * Continuous mode's output directory (include/outdir.h): files are named
 * STAMP-NAME with STAMP the interval's start in UTC, so that names sort by
 * time and --keep can drop the oldest sets.
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "log.h"
#include "outdir.h"

void outdir__stamp(uint64_t realtime_ns, char out[OUTDIR_STAMP_LEN + 1])
{
	time_t t = (time_t)(realtime_ns / 1000000000ULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, OUTDIR_STAMP_LEN + 1, "%Y%m%dT%H%M%SZ", &tm);
}

static bool is_stamp(const char *s)
{
	int i;

	for (i = 0; i < OUTDIR_STAMP_LEN; i++) {
		char c = s[i];

		if (i == 8 ? c != 'T' : i == 15 ? c != 'Z' : (c < '0' || c > '9'))
			return false;
	}
	return s[OUTDIR_STAMP_LEN] == '-';
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The directory OUTPUT.SUFFIX written beside an output and what bpfprof put
 * in it: the JIT images (jit_elf.h: OUTPUT.jit/jitted-*.so) or the copies of
 * files beside a .prof (dso_export.h: OUTPUT.bin/, regular files only).
 * Nothing below it is followed.
 */
static void remove_beside(const char *output, const char *suffix, bool jit)
{
	char dir[4200], path[4500];
	struct dirent *de;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s.%s", output, suffix);
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d)))
		if (jit ? !strncmp(de->d_name, "jitted-", 7) : de->d_type == DT_REG) {
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			unlink(path);
		}
	closedir(d);
	if (rmdir(dir))
		pr_warn("cannot remove '%s': %s\n", dir, strerror(errno));
}

int outdir__prune(const char *dir, const char *const *names, int nr_names, int keep)
{
	struct dirent *de;
	char **stamps = NULL;
	size_t n = 0, cap = 0, uniq = 0, i;
	int j, removed = 0;
	DIR *d;

	if (keep <= 0)
		return 0;
	d = opendir(dir);
	if (!d)
		return -errno;
	/* pass 1: the distinct stamps of our files */
	while ((de = readdir(d))) {
		bool ours = false;

		if (strlen(de->d_name) <= OUTDIR_STAMP_LEN + 1 || !is_stamp(de->d_name))
			continue;
		for (j = 0; j < nr_names && !ours; j++)
			ours = !strcmp(de->d_name + OUTDIR_STAMP_LEN + 1, names[j]);
		if (!ours)
			continue;
		if (n == cap) {
			char **ns = realloc(stamps, (cap = cap ? cap * 2 : 64) * sizeof(*ns));

			if (!ns)
				break;
			stamps = ns;
		}
		stamps[n] = strndup(de->d_name, OUTDIR_STAMP_LEN);
		if (stamps[n])
			n++;
	}
	qsort(stamps, n, sizeof(*stamps), cmp_str);
	for (i = 0; i < n; i++)
		if (!uniq || strcmp(stamps[uniq - 1], stamps[i]))
			stamps[uniq++] = stamps[i];
		else
			free(stamps[i]);
	/* pass 2: remove every file of the oldest uniq - keep stamps */
	for (i = 0; uniq > (size_t)keep && i < uniq - (size_t)keep; i++) {
		for (j = 0; j < nr_names; j++) {
			char path[4096];

			snprintf(path, sizeof(path), "%s/%s-%s", dir, stamps[i], names[j]);
			if (!unlink(path))
				removed++;
			else if (errno != ENOENT)
				pr_warn("cannot remove '%s': %s\n", path, strerror(errno));
			remove_beside(path, "jit", true);
			remove_beside(path, "bin", false);
		}
	}
	for (i = 0; i < uniq; i++)
		free(stamps[i]);
	free(stamps);
	closedir(d);
	return removed;
}

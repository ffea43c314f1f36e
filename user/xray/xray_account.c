// SPDX-License-Identifier: MIT
/*
 * `bpfprof xray --account` (include/xray_account.h). Columns follow
 * `llvm-xray account`'s funcid, count and sum, plus self time; calls are
 * completed calls only (entries still open at the end are not counted, as
 * llvm-xray does not count them), and a recursive function's total counts
 * nested activations again, as llvm-xray's sum does.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "xray_account.h"

static int cmp_id(const void *a, const void *b)
{
	const struct xray_func_stats *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

int xray_account__print(struct xray_reader *r, FILE *f)
{
	const struct xray_func_stats *all;
	struct xray_func_stats *fs;
	size_t nr, i, n = 0;

	all = xray_reader__func_stats(r, &nr);
	fs = malloc((nr ? nr : 1) * sizeof(*fs));
	if (!fs)
		return -ENOMEM;
	memcpy(fs, all, nr * sizeof(*fs));
	qsort(fs, nr, sizeof(*fs), cmp_id);
	for (i = 0; i < nr; i++)
		n += fs[i].calls != 0;
	fprintf(f, "Functions with latencies: %zu\n", n);
	fprintf(f, "%9s %12s %16s %16s  %s\n", "funcid", "calls", "total(s)", "self(s)",
		"function");
	for (i = 0; i < nr; i++) {
		if (!fs[i].calls)
			continue;
		fprintf(f, "%9u %12llu %16.9f %16.9f  %s\n", fs[i].id,
			(unsigned long long)fs[i].calls, fs[i].total_ns / 1e9, fs[i].self_ns / 1e9,
			xray_reader__name(r, fs[i].id));
	}
	free(fs);
	if (fflush(f) || ferror(f))
		return -EIO;
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * Write the reference XRay FDR version 1 trace of tests/xray/fdr_v1_writer.h
 * (TSCWrap, Entry_Args + CallArgument, Tail_Exit, a mid-buffer NewCPUId, a
 * CustomEventMarker, filler after EndOfBuffer) to FILE, and print its known
 * per-function totals on stdout as "id calls total_ns self_ns".
 * Usage: gen_v1 FILE
 */
#include <stdio.h>
#include "fdr_v1_writer.h"

int main(int argc, char **argv)
{
	struct v1w w = { 0 };
	FILE *f;

	if (argc != 2) {
		fprintf(stderr, "usage: gen_v1 FILE\n");
		return 2;
	}
	v1w_reference(&w);
	f = fopen(argv[1], "wb");
	if (!f || fwrite(w.data, 1, w.len, f) != w.len || fclose(f)) {
		perror(argv[1]);
		return 1;
	}
	printf("1 %d %llu %llu\n", V1_F1_CALLS, V1_F1_TOTAL, V1_F1_SELF);
	printf("2 1 %llu %llu\n", V1_F2_TOTAL, V1_F2_SELF);
	printf("3 1 %llu %llu\n", V1_F3_TOTAL, V1_F3_TOTAL);
	printf("4 1 %llu %llu\n", V1_F4_TOTAL, V1_F4_TOTAL);
	free(w.data);
	return 0;
}

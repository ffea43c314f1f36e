/* SPDX-License-Identifier: MIT */
/*
 * `bpfprof xray --account`: per function, completed calls, total (inclusive)
 * and self time, as `llvm-xray account` reports calls and sum: a table sorted
 * by function id, times in seconds.
 */
#ifndef BPFPROF_XRAY_ACCOUNT_H
#define BPFPROF_XRAY_ACCOUNT_H

#include <stdio.h>
#include "read_xray.h"

/* Print the table of r's functions with at least one call to f. Returns 0 or -errno of the write. */
int xray_account__print(struct xray_reader *r, FILE *f);

#endif /* BPFPROF_XRAY_ACCOUNT_H */

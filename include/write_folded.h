/* SPDX-License-Identifier: MIT */
/*
 * Folded stacks (.folded), the input of flamegraph.pl, inferno and
 * speedscope: one line per distinct stack, `comm;root;...;leaf count`, kernel
 * frames suffixed `_[k]` and JIT frames `_[j]`, as stackcollapse-perf.pl
 * --kernel --jit writes them. Unnamed frames read `[dso]` or `[unknown]`.
 */
#ifndef BPFPROF_WRITE_FOLDED_H
#define BPFPROF_WRITE_FOLDED_H

#include "buf.h"
#include "profile.h"

/* Append the folded text to out (profile symbolized). Returns 0 or -ENOMEM. */
int write_folded(const struct profile *p, struct buf *out);

#endif /* BPFPROF_WRITE_FOLDED_H */

/* SPDX-License-Identifier: MIT */
/* The one overflow-checked growth helper for dynamic arrays (libbpf_reallocarray-style). */
#ifndef BPFPROF_ARRAY_H
#define BPFPROF_ARRAY_H

#include <stddef.h>

/*
 * Make *arr (capacity *cap elements of elem bytes) hold at least need
 * elements, doubling from 16. *arr and *cap are updated only on success.
 * New elements are uninitialized. Returns 0 or -ENOMEM (also on overflow).
 */
int array__grow(void **arr, size_t *cap, size_t need, size_t elem);

#endif /* BPFPROF_ARRAY_H */

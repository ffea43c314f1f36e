/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Which interpreters' unwinders this load of the sampler walks with
 * (BPFPROF_WALK_*): read-only data, so that the verifier leaves the others'
 * code unexplored. A load without them verifies in about 40 % of the
 * instructions (docs/BENCHMARKS.md, issue 34's third start-up pass); user
 * space loads the sampler again with them, and swaps it in, when a process
 * of such an interpreter is first attached (user/capture/session.c).
 */
#ifndef BPFPROF_INTERP_BPF_H
#define BPFPROF_INTERP_BPF_H

const volatile __u32 interp_walks = BPFPROF_WALK_INTERPS;

/* Whether this load walks the interpreter of bit (BPFPROF_WALK_*) */
static __always_inline bool interp_walk_on(__u32 bit)
{
	return interp_walks & bit;
}

#endif /* BPFPROF_INTERP_BPF_H */

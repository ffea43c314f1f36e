/* SPDX-License-Identifier: MIT */
/*
 * `bpfprof xray`: LLVM XRay traces (FDR and basic mode) → the same profile
 * model sampling produces, written by the same writers.
 */
#ifndef BPFPROF_XRAY_H
#define BPFPROF_XRAY_H

/*
 * Entry point of the subcommand; argv[0] is "xray". Returns the process exit
 * status: 0, 1 for runtime errors (malformed trace, unwritable output), 2 for
 * bad options.
 */
int xray__main(int argc, char **argv);

#endif /* BPFPROF_XRAY_H */

/* SPDX-License-Identifier: MIT */
/*
 * The interpreters a run expects from what it is told at start: the
 * command's name, or for a script the interpreter its "#!" line names, the
 * target processes' executables, and with -a those of the processes
 * running then. A guess, and only a matter of when:
 * the unwinders of the interpreters expected are verified with the sampler
 * at start-up, the others' when a process of theirs is first attached
 * (include/session.h, interp_walks), which the BPF walk has no frames of
 * before either way.
 *
 * Each returns bits 1u << enum interp_kind (interp.h): CPython for a name
 * starting "python", V8 for "node" and "nodejs" (with a version suffix:
 * node20), HotSpot for "java".
 */
#ifndef BPFPROF_INTERP_EXPECT_H
#define BPFPROF_INTERP_EXPECT_H

#include <stdint.h>

/* The interpreter a file name (its last component) names, or 0 */
uint32_t interp_expect_name(const char *name);
/*
 * What command cmd (searched in path, a PATH string, when it has no '/';
 * NULL: $PATH) is, by its name or its script's "#!" line (the interpreter,
 * or the program /usr/bin/env runs). 0 when it is none or cannot be read.
 */
uint32_t interp_expect_command(const char *cmd, const char *path);
/* What process pid's executable (proc_dir/PID/exe, proc_dir: "/proc") is, by its name */
uint32_t interp_expect_pid(const char *proc_dir, uint32_t pid);
/*
 * What the processes running now are (-a: the host's), by their
 * executables' names; the look stops once every kind of want is found.
 */
uint32_t interp_expect_running(const char *proc_dir, uint32_t want);

#endif /* BPFPROF_INTERP_EXPECT_H */

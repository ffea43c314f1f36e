/* SPDX-License-Identifier: MIT */
/*
 * Build-ids of the files that sampled frames fall into, completed in the
 * model before writing: the symbolizer records a file's GNU build-id when it
 * reads the file's symbols; a mapping it could not (or did not) read gets
 * one here, from the file through the process's root, then the host path
 * (as perf record collects them for its build-id table, tools/perf/util/build-id.c
 * perf_session__write_buildid_table: each DSO's file read inside its mount
 * namespace, nsinfo, in tools/perf/util/dso.c). The
 * perf.data writer's BUILD_ID feature is written from these alone.
 */
#ifndef BPFPROF_BUILD_IDS_H
#define BPFPROF_BUILD_IDS_H

#include "profile.h"

/*
 * For each file-backed mapping ("/..." path) that a user frame of a stack
 * falls into (return addresses looked up at addr - 1) and that has no
 * build-id: read it from <proc_dir>/PID/root/PATH (PID: the first process in
 * stack order that mapped the path), else from PATH, once per path, and store
 * it in every such mapping of that path. A deleted file (" (deleted)") is not
 * read: its path may name another file now. A file without a build-id
 * leaves its mappings at build_id_len 0. proc_dir: "/proc" except in tests.
 * Returns 0 or -ENOMEM.
 */
int build_ids__fill(struct profile *p, const char *proc_dir);

#endif /* BPFPROF_BUILD_IDS_H */

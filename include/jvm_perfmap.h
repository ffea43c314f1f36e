/* SPDX-License-Identifier: MIT */
/*
 * The sampled JVMs of a profile asked for their perf maps at the end of an
 * interval (jvm_attach.h), so that the symbolizer names their JIT code:
 * every process with samples that maps HotSpot's libjvm.so, within a time
 * budget for all of them. The maps the asking made are removed once read.
 */
#ifndef BPFPROF_JVM_PERFMAP_H
#define BPFPROF_JVM_PERFMAP_H

#include <stdbool.h>
#include <stdint.h>
#include "profile.h"
#include "symbolize.h"

struct jvm_perfmaps;

/* Whether the process maps HotSpot (libjvm.so). */
bool jvm_perfmap__is_jvm(const struct profile_process *pr);

/*
 * Ask every sampled JVM of p for its perf map, at most
 * JVM_ATTACH_TIMEOUT_MS each and total_ms in all, and have the symbolizer
 * look for the maps again (symbolizer__pin). Returns the set asked (free it
 * with jvm_perfmaps__free), or NULL when p has no JVM or on ENOMEM.
 */
struct jvm_perfmaps *jvm_perfmaps__ask(struct profile *p, struct symbolizer *sy, unsigned total_ms);

/* Remove the perf maps that the asking made (once read); warns on failure. Idempotent. */
void jvm_perfmaps__release(struct jvm_perfmaps *jm);

/* jvm_attach__perfmap's result for tgid pid: 0, -errno, or -ENOENT when it was not asked. */
int jvm_perfmaps__err(const struct jvm_perfmaps *jm, uint32_t pid);

/* Release, then free. NULL is fine. */
void jvm_perfmaps__free(struct jvm_perfmaps *jm);

#endif /* BPFPROF_JVM_PERFMAP_H */

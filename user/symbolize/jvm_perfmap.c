// SPDX-License-Identifier: MIT
/* The sampled JVMs asked for their perf maps (include/jvm_perfmap.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "jvm_attach.h"
#include "jvm_perfmap.h"
#include "log.h"

struct jvm_ask {
	uint32_t pid;
	int err; /* jvm_attach__perfmap's */
	struct jvm_perfmap pm;
};

struct jvm_perfmaps {
	struct jvm_ask *asks;
	size_t nr;
};

bool jvm_perfmap__is_jvm(const struct profile_process *pr)
{
	for (size_t i = 0; i < pr->nr_mappings; i++) {
		const char *base = strrchr(pr->mappings[i].path, '/');

		if (base && !strcmp(base, "/libjvm.so"))
			return true;
	}
	return false;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

struct jvm_perfmaps *jvm_perfmaps__ask(struct profile *p, struct symbolizer *sy, unsigned total_ms)
{
	uint64_t deadline = now_ms() + total_ms;
	struct jvm_perfmaps *jm;
	size_t n = 0, i;

	for (i = 0; i < p->nr_procs; i++)
		n += p->procs[i].nr_samples && jvm_perfmap__is_jvm(&p->procs[i]);
	if (!n)
		return NULL;
	jm = calloc(1, sizeof(*jm));
	if (jm)
		jm->asks = calloc(n, sizeof(*jm->asks));
	if (!jm || !jm->asks) {
		free(jm);
		return NULL;
	}
	for (i = 0; i < p->nr_procs && jm->nr < n; i++) {
		struct profile_process *pr = &p->procs[i];
		struct jvm_ask *a = &jm->asks[jm->nr];
		uint64_t now = now_ms(), left = now < deadline ? deadline - now : 0;

		if (!pr->nr_samples || !jvm_perfmap__is_jvm(pr))
			continue;
		jm->nr++;
		a->pid = pr->pid;
		a->pm.tmp_fd = -1;
		if (!left) {
			a->err = -ETIMEDOUT;
			continue;
		}
		a->err = jvm_attach__perfmap(
			"/proc", pr->pid,
			(unsigned)(left < JVM_ATTACH_TIMEOUT_MS ? left : JVM_ATTACH_TIMEOUT_MS),
			&a->pm);
		if (a->err)
			continue;
		pr_info("JVM pid %u wrote its perf map (Compiler.perfmap)\n", pr->pid);
		/* the map appeared after the process's files were looked for: look again */
		if (symbolizer__pin(sy, p, (uint32_t)i))
			break;
	}
	return jm;
}

void jvm_perfmaps__release(struct jvm_perfmaps *jm)
{
	for (size_t i = 0; jm && i < jm->nr; i++) {
		uint32_t nspid = jm->asks[i].pm.nspid;
		int err = jvm_attach__release(&jm->asks[i].pm);

		if (err)
			pr_warn("cannot remove /tmp/perf-%u.map that bpfprof made a JVM write: %s\n",
				nspid, strerror(-err));
	}
}

int jvm_perfmaps__err(const struct jvm_perfmaps *jm, uint32_t pid)
{
	for (size_t i = 0; jm && i < jm->nr; i++)
		if (jm->asks[i].pid == pid)
			return jm->asks[i].err;
	return -ENOENT;
}

void jvm_perfmaps__free(struct jvm_perfmaps *jm)
{
	if (!jm)
		return;
	jvm_perfmaps__release(jm);
	free(jm->asks);
	free(jm);
}

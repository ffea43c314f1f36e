// SPDX-License-Identifier: MIT
/*
 * Ring-buffer records → profile (include/agg.h). The hot path is one hash
 * lookup per record (profile__add_stack); process bookkeeping and maps
 * re-reads happen only for new processes and new distinct callchains.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "agg.h"
#include "array.h"
#include "bpfprof_abi.h"
#include "cgroup.h"
#include "log.h"
#include "procmaps.h"

/* At most one maps re-read per process per this many ns of sample time. */
#define REREAD_INTERVAL_NS (100ULL * 1000 * 1000)

struct proc_state {
	uint64_t last_read_ns;
	bool stale;	/* an unknown address was seen too soon after the last read */
};

struct agg {
	struct profile *p;
	const char *proc_dir;
	uint64_t period_ns;
	uint64_t nr_bad;
	struct proc_state *state;	/* parallel to p->procs */
	size_t cap_state;
	struct agg_observer obs;
};

void agg__set_observer(struct agg *a, const struct agg_observer *obs)
{
	if (obs)
		a->obs = *obs;
	else
		memset(&a->obs, 0, sizeof(a->obs));
}

static int notify_maps(struct agg *a, uint32_t proc, uint64_t time_ns)
{
	return a->obs.maps_changed ? a->obs.maps_changed(a->obs.ctx, a->p, proc, time_ns) : 0;
}

struct agg *agg__new(struct profile *p, const char *proc_dir, uint64_t period_ns)
{
	struct agg *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->p = p;
	a->proc_dir = proc_dir;
	a->period_ns = period_ns;
	return a;
}

void agg__free(struct agg *a)
{
	if (!a)
		return;
	free(a->state);
	free(a);
}

uint64_t agg__nr_bad(const struct agg *a)
{
	return a->nr_bad;
}

/* comm of the process (its main thread), falling back to the sampled thread's */
static void read_comm(struct agg *a, struct profile_process *pr, const char *sample_comm)
{
	char path[PATH_MAX], buf[PROFILE_COMM_LEN + 1] = { 0 };
	ssize_t n = -1;
	int fd = -1;

	if (snprintf(path, sizeof(path), "%s/%u/comm", a->proc_dir, pr->pid) < (int)sizeof(path))
		fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n > 0) {
		buf[n] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		memcpy(pr->comm, buf, sizeof(pr->comm) - 1);
		pr->comm[sizeof(pr->comm) - 1] = '\0';
	} else {
		memcpy(pr->comm, sample_comm, PROFILE_COMM_LEN);
		pr->comm[PROFILE_COMM_LEN - 1] = '\0';
	}
}

/* Read the maps; tell the observer when this is the first read or it added mappings. */
static int snapshot(struct agg *a, uint32_t proc, uint64_t now_ns, bool first)
{
	int ret = procmaps__snapshot(a->p, proc, a->proc_dir);

	a->state[proc].last_read_ns = now_ns;
	if (ret == -ENOMEM)
		return ret;
	if (ret < 0) {
		if (!a->p->procs[proc].nr_mappings)
			a->p->procs[proc].maps_missing = true;
		pr_debug("maps of pid %u: %s\n", a->p->procs[proc].pid, strerror(-ret));
		return first ? notify_maps(a, proc, now_ns) : 0;
	}
	a->p->procs[proc].maps_missing = false;
	return first || ret > 0 ? notify_maps(a, proc, now_ns) : 0;
}

/* Per-process state for every process of the profile, also ones added before us. */
static int ensure_state(struct agg *a)
{
	size_t old = a->cap_state;

	if (a->p->nr_procs <= old)
		return 0;
	if (array__grow((void **)&a->state, &a->cap_state, a->p->nr_procs, sizeof(*a->state)))
		return -ENOMEM;
	memset(a->state + old, 0, (a->cap_state - old) * sizeof(*a->state));
	return 0;
}

/* cgroup path and container id; a process already gone just has none */
static int read_cgroup(struct agg *a, uint32_t proc)
{
	char path[PATH_MAX], id[CGROUP_CONTAINER_ID_LEN + 1];
	struct profile_process *pr = &a->p->procs[proc];

	if (cgroup__proc_path(a->proc_dir, pr->pid, path, sizeof(path)))
		return 0;
	pr->cgroup_path = profile__intern(a->p, path);
	if (!pr->cgroup_path)
		return -ENOMEM;
	if (!cgroup__container_id(path, id)) {
		pr->container_id = profile__intern(a->p, id);
		if (!pr->container_id)
			return -ENOMEM;
	}
	return 0;
}

static int new_process(struct agg *a, uint32_t proc, const struct bpfprof_sample *s)
{
	struct profile_process *pr = &a->p->procs[proc];
	int err;

	pr->cgroup_id = s->cgroup_id;
	read_comm(a, pr, s->comm);
	err = read_cgroup(a, proc);
	if (err)
		return err;
	return snapshot(a, proc, s->time_ns, true);
}

/* A new callchain: re-read the maps if one of its user addresses is unknown. */
static int check_mappings(struct agg *a, uint32_t proc, const struct bpfprof_sample *s)
{
	int i;

	bool soon = (int64_t)(s->time_ns - a->state[proc].last_read_ns) < (int64_t)REREAD_INTERVAL_NS;

	for (i = 0; i < s->nr_user; i++) {
		/* a return address may sit just past its mapping's end: look up ip - 1 */
		uint64_t ip = s->ips[s->nr_kernel + i] - (i > 0);

		if (profile__find_mapping(a->p, proc, ip) >= 0)
			continue;
		/*
		 * Too soon: re-read on a later sample, or code mapped now (JIT
		 * code early in a runtime's life) would stay unknown whenever
		 * its callchains repeat from here on
		 */
		a->state[proc].stale = soon;
		return soon ? 0 : snapshot(a, proc, s->time_ns, false);
	}
	return 0;
}

int agg__record(struct agg *a, const void *data, size_t size)
{
	const struct bpfprof_sample *s = data;
	bool created;
	int proc, st, err;

	if (size < BPFPROF_SAMPLE_HDR_SIZE || s->type != BPFPROF_REC_SAMPLE ||
	    s->nr_kernel > BPFPROF_MAX_STACK || s->nr_user > BPFPROF_MAX_STACK ||
	    size < BPFPROF_SAMPLE_HDR_SIZE + ((size_t)s->nr_kernel + s->nr_user) * 8) {
		a->nr_bad++;
		pr_debug("ring buffer: malformed record of %zu bytes skipped\n", size);
		return -EINVAL;
	}
	proc = profile__process(a->p, s->tgid, &created);
	if (proc < 0)
		return proc;
	if (ensure_state(a))
		return -ENOMEM;
	if (created) {
		err = new_process(a, (uint32_t)proc, s);
		if (err)
			return err;
	}
	a->p->procs[proc].nr_samples++;
	st = profile__add_stack(a->p, (uint32_t)proc, (const uint64_t *)s->ips, s->nr_kernel, s->nr_user, 1,
				a->period_ns, &created);
	if (st < 0)
		return st;
	if (created) {
		err = check_mappings(a, (uint32_t)proc, s);
		if (err)
			return err;
	} else if (a->state[proc].stale &&
		   (int64_t)(s->time_ns - a->state[proc].last_read_ns) >= (int64_t)REREAD_INTERVAL_NS) {
		a->state[proc].stale = false;
		err = snapshot(a, (uint32_t)proc, s->time_ns, false);
		if (err)
			return err;
	}
	return a->obs.sample ? a->obs.sample(a->obs.ctx, a->p, (uint32_t)proc, s) : 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * Helpers the writer tests share to build a profile by hand: processes,
 * mappings and stacks through the real profile API, and names set on locations as the symbolizer would.
 * Include after <cmocka.h>.
 */
#ifndef BPFPROF_TEST_PROFILE_FIXTURE_H
#define BPFPROF_TEST_PROFILE_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "profile.h"

/* A process pid with its comm and, when not NULL, cgroup path and container id; its index. */
static inline uint32_t add_labeled_proc(struct profile *p, uint32_t pid, const char *comm,
					const char *cgroup, const char *container)
{
	bool created;
	int idx = profile__process(p, pid, &created);
	struct profile_process *pr;

	assert_true(idx >= 0);
	pr = &p->procs[idx];
	strncpy(pr->comm, comm, sizeof(pr->comm) - 1);
	pr->cgroup_path = cgroup ? profile__intern(p, cgroup) : NULL;
	pr->container_id = container ? profile__intern(p, container) : NULL;
	return (uint32_t)idx;
}

/* An r-xp file mapping [start, end) at file offset `offset` of path, build-id when build_id_len. */
static inline void add_file_mapping(struct profile *p, uint32_t proc, uint64_t start, uint64_t end,
				    uint64_t offset, const char *path, const uint8_t *build_id,
				    uint8_t build_id_len)
{
	struct profile_mapping m = { .start = start, .end = end, .offset = offset };

	memcpy(m.perms, "r-xp", 5);
	m.path = profile__intern(p, path);
	assert_non_null(m.path);
	if (build_id_len)
		memcpy(m.build_id, build_id, build_id_len);
	m.build_id_len = build_id_len;
	assert_int_equal(profile__add_mapping(p, proc, &m), 1);
}

/* count samples of one callchain (nk kernel then nu user ips, leaf first), value count * period */
static inline void add_stack(struct profile *p, uint32_t proc, const uint64_t *ips, uint16_t nk,
			     uint16_t nu, uint64_t count)
{
	bool created;

	assert_true(profile__add_stack(p, proc, ips, nk, nu, count, count * p->period_ns,
				       &created) >= 0);
}

/* Name every location of (proc, addr); at least one must exist (profile__resolve_locs first). */
static inline void name_loc(struct profile *p, uint32_t proc, uint64_t addr, const char *func,
			    const char *dso, bool jit)
{
	size_t i, n = 0;

	for (i = 0; i < p->nr_locs; i++) {
		struct profile_location *l = &p->locs[i];

		if (l->proc != proc || l->addr != addr)
			continue;
		l->func = func ? profile__intern(p, func) : NULL;
		l->dso = dso ? profile__intern(p, dso) : NULL;
		l->is_jit = jit;
		n++;
	}
	assert_true(n > 0);
}

/* Leave (proc, addr) unnamed in DSO dso, as "dso+0xrel" as the symbolizer sets it for a file. */
static inline void addr_name_loc(struct profile *p, uint32_t proc, uint64_t addr, const char *dso,
				 uint64_t rel)
{
	char buf[256];
	size_t i, n = 0;

	snprintf(buf, sizeof(buf), "%s+0x%llx", dso, (unsigned long long)rel);
	for (i = 0; i < p->nr_locs; i++) {
		struct profile_location *l = &p->locs[i];

		if (l->proc != proc || l->addr != addr)
			continue;
		l->func = NULL;
		l->dso = profile__intern(p, dso);
		l->addr_name = profile__intern(p, buf);
		n++;
	}
	assert_true(n > 0);
}

#endif /* BPFPROF_TEST_PROFILE_FIXTURE_H */

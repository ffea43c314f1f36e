// SPDX-License-Identifier: MIT
/* Missing build-ids of sampled file mappings, from the files (include/build_ids.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "array.h"
#include "build_ids.h"
#include "lib_hashmap.h"
#include "log.h"
#include "sym_elf.h"

_Static_assert(ELF_BUILD_ID_MAX == PROFILE_BUILD_ID_MAX, "one build-id size");

/* Read path's build-id, through the process's root first. Returns its length or -errno. */
static int read_build_id(const char *proc_dir, uint32_t pid, const char *path,
			 uint8_t id[PROFILE_BUILD_ID_MAX])
{
	char full[PATH_MAX + 64];
	int n;

	snprintf(full, sizeof(full), "%s/%u/root%s", proc_dir, pid, path);
	n = elf__read_build_id(full, id);
	if (n <= 0)
		n = elf__read_build_id(path, id);
	return n;
}

/* One path's result: its build-id, or len 0 when none could be read. */
struct found {
	uint8_t id[PROFILE_BUILD_ID_MAX];
	uint8_t len;
};

int build_ids__fill(struct profile *p, const char *proc_dir)
{
	struct u64map done = { 0 }; /* interned path -> index into found + 1 */
	struct found *found = NULL;
	size_t nr = 0, cap = 0, s, i;
	int err = 0;

	for (s = 0; s < p->nr_stacks && !err; s++) {
		const struct profile_stack *st = &p->stacks[s];
		struct profile_process *pr = &p->procs[st->proc];
		int last = -1;

		for (i = 0; i < st->nr_user && !err; i++) {
			int m = profile__user_frame_mapping(p, st, i), n;
			struct profile_mapping *pm;
			uint64_t idx;

			/* the frames of one mapping come in runs */
			if (m < 0 || m == last)
				continue;
			last = m;
			pm = &pr->mappings[m];
			if (pm->build_id_len || !pm->path || pm->path[0] != '/' ||
			    strstr(pm->path, " (deleted)"))
				continue;
			if (!u64map__get(&done, (uintptr_t)pm->path, &idx)) {
				if (array__grow((void **)&found, &cap, nr + 1, sizeof(*found))) {
					err = -ENOMEM;
					break;
				}
				n = read_build_id(proc_dir, pr->pid, pm->path, found[nr].id);
				found[nr].len = n > 0 ? (uint8_t)n : 0;
				if (n <= 0)
					pr_debug("build-id: none for '%s'\n", pm->path);
				idx = ++nr;
				err = u64map__put(&done, (uintptr_t)pm->path, idx);
			}
			memcpy(pm->build_id, found[idx - 1].id, found[idx - 1].len);
			pm->build_id_len = found[idx - 1].len;
		}
	}
	free(found);
	u64map__free(&done);
	return err;
}

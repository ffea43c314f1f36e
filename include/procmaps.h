/* SPDX-License-Identifier: MIT */
/*
 * The maps text's parser (opened and read by the process table alone,
 * proc_table.h). Line format (fs/proc/task_mmu.c show_map_vma()):
 *   START-END PERMS OFFSET MAJOR:MINOR INODE [PATH]
 * in hex but INODE (decimal); PATH runs to the end of the line and may hold
 * spaces, a " (deleted)" suffix, or a pseudo name such as [vdso] or [heap].
 */
#ifndef BPFPROF_PROCMAPS_H
#define BPFPROF_PROCMAPS_H

#include <stddef.h>
#include <stdint.h>
#include "profile.h"

struct procmaps_entry {
	uint64_t start, end, offset, inode;
	uint32_t dev_major, dev_minor;
	char perms[5];
	const char *path; /* not NUL-terminated: path_len bytes, borrowed from the text */
	size_t path_len; /* 0 for anonymous memory */
};

/* Return non-zero to stop the walk; that value is returned by procmaps__parse. */
typedef int (*procmaps_cb)(const struct procmaps_entry *e, void *ctx);

/*
 * Walk every line of a maps text of len bytes. Malformed lines are skipped
 * with a warning naming `origin` (the file name, for messages), the line and
 * its byte offset, and counted in *nr_bad when nr_bad is not NULL.
 * Returns 0, or the callback's non-zero value.
 */
int procmaps__parse(const char *text, size_t len, const char *origin, procmaps_cb cb, void *ctx,
		    size_t *nr_bad);

/*
 * Merge a maps text into process `proc` of the profile: new mappings are
 * added and replace the ones they overlap (profile__add_mapping). Returns the
 * number of mappings added, or -ENOMEM.
 */
int procmaps__merge(struct profile *p, uint32_t proc, const char *text, size_t len,
		    const char *origin);

#endif /* BPFPROF_PROCMAPS_H */

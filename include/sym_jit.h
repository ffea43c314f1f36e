/* SPDX-License-Identifier: MIT */
/*
 * JIT symbols of observed processes: for each process, the jitdump perf
 * would find (a mapping of a file named jit-<pid>.dump, which runtimes map
 * as a marker: "JITDUMP specification version 2", "Marker", in the Linux
 * kernel tree's tools/perf/Documentation/jitdump-specification.txt) and
 * /tmp/perf-<pid>.map (perf's Documentation/jit-interface.txt), <pid> being
 * the pid in the process's own namespace and paths resolving under its root.
 * Files are opened through proc_file.h when the process is first seen (and
 * retried while not found), held open, and read at symbolization, so code
 * compiled until the end of the run is named even after the process exits.
 */
#ifndef BPFPROF_SYM_JIT_H
#define BPFPROF_SYM_JIT_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include "proc_file.h"
#include "profile.h"
#include "sym_jitdump.h"

struct jit_procs;

/* proc_dir: normally "/proc". max_size: cap per file, bytes. NULL on ENOMEM. */
struct jit_procs *jit_procs__new(const char *proc_dir, uint64_t max_size);
void jit_procs__free(struct jit_procs *jp);

/*
 * Look for the JIT files of process `proc` of p (its mappings as read so
 * far) and hold those found open. Cheap when they are already held; a
 * refused file is warned about once. Returns 0 or -ENOMEM.
 */
int jit_procs__pin(struct jit_procs *jp, const struct profile *p, uint32_t proc);

/*
 * jit_procs__pin in two halves, for a process's files captured on another
 * thread than the one that owns the jit_procs (main.c's notices' thread):
 * jit_capture__read does the I/O and touches no jit_procs (thread-safe:
 * its own memory only); jit_procs__adopt, on the owner's thread, takes
 * what it found into jp as the pin would have, with no I/O but close(2).
 */
#define JIT_CAPTURE_KINDS 2
struct jit_capture {
	bool gone; /* the process had exited, or its pid was another's */
	bool reused; /* gone, for its pid was another process's (read so: not reaped) */
	bool ident_read; /* id read, and still the process's */
	struct proc_ident id;
	/* per kind (jitdump, perf map): the path looked at ("": none) */
	char path[JIT_CAPTURE_KINDS][PATH_MAX];
	/* its descriptor, owned until adopted; or -errno as proc_file__open gives */
	int fd[JIT_CAPTURE_KINDS];
	bool src_gone[JIT_CAPTURE_KINDS]; /* opened, but the pid was another process's */
};

/*
 * Open the jitdump (its mapping found in maps, len bytes of
 * /proc/PID/maps text) and /tmp/perf-NSPID.map of process (pid, start)
 * under proc_dir (borrowed), each at most max_size bytes
 * (proc_file__open): what was found, or not, into *jc (release it with
 * jit_capture__release). Allocates nothing: safe on a thread that must
 * not wait for the malloc lock (notice_thread.h).
 */
void jit_capture__read(const char *proc_dir, uint64_t max_size, uint32_t pid, uint32_t start,
		       const char *maps, size_t len, struct jit_capture *jc);

/* Close what *jc still holds. */
void jit_capture__release(struct jit_capture *jc);

/*
 * Take *jc into process (pid, start) of jp as jit_procs__pin would: its
 * descriptors are held by jp (or closed: already held, refused, past the
 * cap), a refused file warned about once. Returns 0 or -ENOMEM.
 */
int jit_procs__adopt(struct jit_procs *jp, uint32_t pid, uint32_t start, struct jit_capture *jc);

/*
 * Which JIT files were found (and not refused) for process (pid, start): its
 * jitdump, its perf map. Processes are told apart by start time
 * (profile_process.start; 0 matches the pid's newest), so that a reused
 * pid never gets another process's files.
 */
void jit_procs__sources(const struct jit_procs *jp, uint32_t pid, uint32_t start, bool *dump,
			bool *map);

/* Whether usable JIT files (found, and not refused) were found for process (pid, start). */
bool jit_procs__has(const struct jit_procs *jp, uint32_t pid, uint32_t start);

/*
 * Once per profile, before it is symbolized: forget the processes no
 * profile pinned or read in this generation or the one before (their files
 * closed, their tables freed), so that a run of weeks holds only the
 * processes it still meets. Tables of the kept ones stay valid.
 */
void jit_procs__expire(struct jit_procs *jp);

/* Processes known now; *nr_held: descriptors held. */
size_t jit_procs__count(const struct jit_procs *jp, size_t *nr_held);

/*
 * The process's JIT symbols, jitdump and perf map merged (a jitdump entry
 * wins over a perf map line at the same address), read from the held files
 * on the first call after jit_procs__reload. NULL when the process has none.
 * Borrowed: valid until the next jit_procs__reload or jit_procs__free.
 */
const struct jit_table *jit_procs__table(struct jit_procs *jp, const struct profile *p,
					 uint32_t proc);

/* Forget the tables read so far (the next profile re-reads the files). */
void jit_procs__reload(struct jit_procs *jp);

#endif /* BPFPROF_SYM_JIT_H */

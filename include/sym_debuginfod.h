/* SPDX-License-Identifier: MIT */
/*
 * Debug files by build-id from debuginfod servers, through elfutils'
 * libdebuginfod (the client gdb, perf, valgrind and systemd-coredump use):
 * servers from DEBUGINFOD_URLS, the client's own cache (DEBUGINFOD_CACHE_PATH,
 * default $XDG_CACHE_HOME/debuginfod_client), its per-server timeout
 * (DEBUGINFOD_TIMEOUT) and size cap (DEBUGINFOD_MAXSIZE). On top of those,
 * an overall deadline: a slow or dead server delays bpfprof's outputs by at
 * most deadline + DEBUGINFOD_GRACE_MS. Several files are fetched at once, on
 * threads of their own, each with its own debuginfod_client (a client is not
 * thread-safe). Fetches run after sampling only; while sampling, the unwinder
 * only looks in the client's cache (debuginfod__cached).
 * Refs: debuginfod-client(3), debuginfod(8) (elfutils 0.188).
 */
#ifndef BPFPROF_SYM_DEBUGINFOD_H
#define BPFPROF_SYM_DEBUGINFOD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* default overall deadline for all fetches of a run, ms */
#define DEBUGINFOD_DEADLINE_MS 5000
/* how long past the deadline a fetch may take to notice it (the client checks about once a second) */
#define DEBUGINFOD_GRACE_MS 1500
/* fetches at once */
#define DEBUGINFOD_THREADS 8
/* largest debug file fetched when DEBUGINFOD_MAXSIZE is unset, bytes */
#define DEBUGINFOD_MAX_SIZE (1ull << 30)

struct debuginfod_req {
	uint8_t build_id[20];
	size_t build_id_len; /* 1..20 */
	const char *what; /* the file it is for, in messages; borrowed */
	char *path; /* out: the debug file in the client's cache (malloc'd), NULL when none */
	int err; /* out: 0, or -errno: -ENOENT none on the servers, -ETIME past the deadline,
				 * -EFBIG over the size cap, others from the client */
};

struct debuginfod_opts {
	uint32_t deadline_ms; /* 0: DEBUGINFOD_DEADLINE_MS */
	bool progress; /* a progress line on stderr (a terminal) while fetching */
};

/*
 * Call before any thread runs (it sets environment variables): makes urls
 * (--debuginfod) the client's DEBUGINFOD_URLS when not NULL, and caps the
 * files' size (DEBUGINFOD_MAXSIZE) at DEBUGINFOD_MAX_SIZE unless the user
 * set it. Returns 0 or -errno of setenv.
 */
int debuginfod__setup(const char *urls);

/*
 * Whether fetching can happen: DEBUGINFOD_URLS set and not empty (--debuginfod
 * URLS sets it before this is asked).
 */
bool debuginfod__enabled(void);

/*
 * Whether fetching would be enabled after debuginfod__setup(urls): urls,
 * else $DEBUGINFOD_URLS, not blank. Asks without setting anything (any
 * time, before the setup: the symbolizer's passes while sampling).
 */
bool debuginfod__would_enable(const char *urls);

/*
 * Fetch the debug files of reqs[0..n) by build-id, in parallel, and fill each
 * one's path or err. Fetches still running at the deadline are cancelled
 * (err -ETIME); a thread that does not stop within DEBUGINFOD_GRACE_MS is
 * left to finish on its own, its result dropped. Returns the number of files
 * fetched (≥ 0), or -ENOMEM.
 */
int debuginfod__fetch(struct debuginfod_req *reqs, size_t n, const struct debuginfod_opts *o);

/*
 * The debug file of build-id id[0..len) in the client's cache, fetched
 * earlier (by a run's symbolizer or debuginfod-find): no server is asked.
 * Writes its path into buf; 0, or -ENOENT (not cached, or cached as a miss),
 * -ENAMETOOLONG, -errno of stat.
 */
int debuginfod__cached(const uint8_t *id, size_t len, char *buf, size_t size);

#endif /* BPFPROF_SYM_DEBUGINFOD_H */

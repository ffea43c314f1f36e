/* SPDX-License-Identifier: MIT */
/*
 * jitdump reader ("JITDUMP specification version 2",
 * tools/perf/Documentation/jitdump-specification.txt in the Linux kernel
 * tree: the format perf inject --jit reads; Node's --perf-prof writes it as
 * jit-PID.dump). A 40-byte file header (magic "JiTD" 0x4A695444, or
 * 0x4454694A when written in the other byte order) is followed by records,
 * each a 16-byte header (id, total_size including the header, timestamp)
 * and a payload: LOAD (0), MOVE (1), DEBUG_INFO (2, comes before its
 * LOAD), CLOSE (3), UNWINDING_INFO (4).
 * The result is a table of JIT code ranges, also used by the perf-PID.map
 * reader (sym_perfmap.h), looked up by address: where ranges overlap (code
 * reuse, MOVE), the newest entry wins from its timestamp on.
 */
#ifndef BPFPROF_SYM_JITDUMP_H
#define BPFPROF_SYM_JITDUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JITDUMP_MAGIC 0x4A695444u /* "JiTD" in the writer's byte order */
#define JITDUMP_MAGIC_SWAPPED 0x4454694Au
#define JITDUMP_FLAGS_ARCH_TIMESTAMP 1ull /* timestamps are TSC, not CLOCK_MONOTONIC */

/* Default cap on the size of a jitdump or perf map file read from disk. */
#define JIT_FILE_MAX_SIZE (256ull << 20)

enum jitdump_record_id {
	JIT_CODE_LOAD = 0,
	JIT_CODE_MOVE = 1,
	JIT_CODE_DEBUG_INFO = 2,
	JIT_CODE_CLOSE = 3,
	JIT_CODE_UNWINDING_INFO = 4,
};

/* One JIT code range; name borrowed from its table. */
struct jit_sym {
	uint64_t start;
	uint64_t size; /* bytes; 0 covers nothing */
	uint64_t timestamp; /* record time (jitdump), 0 for perf map lines */
	const char *name;
};

/* Opaque table of jit_sym, shared by the jitdump and perf map readers. */
struct jit_table;

/* What a parse saw; every field is filled on success. */
struct jitdump_stats {
	uint32_t version, elf_mach, pid;
	bool swapped; /* file written in the other byte order */
	uint64_t flags; /* JITDUMP_FLAGS_* */
	size_t nr_load, nr_move, nr_debug_info, nr_close, nr_unwinding_info;
	size_t nr_unknown; /* records of unknown id, skipped by their size */
	size_t nr_bad; /* known records with an inconsistent payload, skipped */
	size_t nr_orphan_move; /* MOVE whose code_index matches no LOAD */
	bool truncated; /* the last record (or record header) was cut short */
	bool corrupt; /* stopped at a record header with total_size < 16 */
	size_t bytes_used; /* offset where parsing stopped */
};

/*
 * Parse a jitdump of len bytes at data (not modified, not kept). `origin`
 * names the file in messages, which give its byte offset and the problem
 * (pr_warn). A truncated last record ends the file without an error (the
 * runtime may still be writing); a record header with total_size below 16
 * stops parsing with a warning, keeping what was read. stats may be NULL.
 * Returns 0 and a new table in *out (free with jitdump__free), -EINVAL for a
 * malformed or short file header, -ENOTSUP for an unknown version, -ENOMEM.
 */
int jitdump__parse(const void *data, size_t len, const char *origin, struct jit_table **out,
		   struct jitdump_stats *stats);

/*
 * Read an open file (regular files only) of at most max_size bytes into a
 * new buffer owned by the caller (free()), NUL-terminated after *len bytes.
 * Returns 0, -EINVAL when fd is not a regular file, -EFBIG over max_size,
 * -ENOMEM, or -errno from fstat/read. `origin` names the file in warnings.
 */
int jit_file__read_fd(int fd, const char *origin, uint64_t max_size, char **data, size_t *len);

/*
 * Open `path` without following a final symlink and without blocking on a
 * FIFO or device (O_NOFOLLOW|O_NONBLOCK), then jit_file__read_fd. Ownership
 * checks are the caller's (open the fd itself and use jit_file__read_fd).
 */
int jit_file__read(const char *path, uint64_t max_size, char **data, size_t *len);


void jitdump__free(struct jit_table *t);

/*
 * Newest entry (by timestamp, then file order) covering addr. Returns its
 * name, borrowed until jitdump__free, and sets *off (may be NULL) to addr's
 * distance from the entry start; NULL when no entry covers addr.
 */
const char *jitdump__lookup(const struct jit_table *t, uint64_t addr, uint64_t *off);

/* As jitdump__lookup, among entries with timestamp <= time only. */
const char *jitdump__lookup_at(const struct jit_table *t, uint64_t addr, uint64_t time,
			       uint64_t *off);

/* Number of entries; entry i (0 <= i < count) in address order into *out. Returns 0 or -ENOENT. */
size_t jitdump__count(const struct jit_table *t);
int jitdump__sym(const struct jit_table *t, size_t i, struct jit_sym *out);

/*
 * Table building, for the perf map reader: an empty table, entries appended
 * in time order (a later entry wins over an earlier one at equal timestamp),
 * then jit_table__finish before any lookup. Return 0 or -ENOMEM.
 */
struct jit_table *jit_table__new(void);
int jit_table__add(struct jit_table *t, uint64_t start, uint64_t size, uint64_t timestamp,
		   const char *name, size_t name_len);
void jit_table__finish(struct jit_table *t);

#endif /* BPFPROF_SYM_JITDUMP_H */

/* SPDX-License-Identifier: MIT */
/*
 * Output files: format chosen from the name (or --format), written completely
 * or not at all (docs/RELIABILITY.md).
 *
 * output__open runs before sampling starts, so that a bad path fails at once.
 * It refuses a path that already is a symbolic link, a directory or anything
 * but a regular file (a profile never goes through a link, nor replaces a
 * device such as /dev/null), then creates the temporary in the target's
 * directory: an unnamed O_TMPFILE inode where the file system has them (a
 * crash or kill -9 leaves nothing behind), else a mkostemp ".NAME.XXXXXX"
 * file (O_EXCL: a name planted there is never followed). output__commit
 * writes, fsyncs, sets the mode, gives the temporary a name (O_TMPFILE) and
 * renames it over the target: rename replaces the directory entry and never
 * follows a link planted in the meantime. output__abort removes it.
 */
#ifndef BPFPROF_OUTPUT_H
#define BPFPROF_OUTPUT_H

#include <signal.h>
#include <stddef.h>
#include <stdbool.h>
#include "buf.h"

/* Permission bits of an output unless --output-mode says otherwise. */
#define OUTPUT_DEFAULT_MODE 0600

enum output_format {
	OUTPUT_NONE = 0,
	OUTPUT_GPERF, /* gperftools CPU profile, .prof */
	OUTPUT_PERFDATA, /* perf.data (PERFILE2), .data; streamed, needs a seekable file */
	OUTPUT_SVG, /* flame graph, .svg */
	OUTPUT_PPROF, /* pprof profile.proto, gzip, .pb.gz / .pprof */
	OUTPUT_FOLDED, /* folded stacks, .folded */
	OUTPUT_OTLP, /* OpenTelemetry ExportProfilesServiceRequest, binary protobuf, .otlp */
};

struct output {
	const char *path; /* as given; "-" is stdout */
	enum output_format format;
	/* permission bits of the written file, set exactly (no umask); 0: OUTPUT_DEFAULT_MODE */
	unsigned int mode;
	char *tmp_path; /* owned: the temporary's name (template until named); NULL for stdout */
	/* tmp_path exists in the directory: read by output__abort_signal_safe */
	volatile sig_atomic_t named;
	int fd; /* -1 when closed */
	bool synced; /* output__sync has written and fsynced its content */
};

/* Format for a file name ("x.prof"), or OUTPUT_NONE when the extension is unknown. */
enum output_format output__format_from_path(const char *path);
/* Format by name ("prof", "gperf"), or OUTPUT_NONE. */
enum output_format output__format_from_name(const char *name);
const char *output__format_name(enum output_format f);

/*
 * Check the path and create the temporary file (o->fd). Returns 0 or -errno
 * with the message printed: -ELOOP for a symbolic link, -EISDIR for a
 * directory, -EINVAL for another non-regular file or an empty name.
 */
int output__open(struct output *o);
/*
 * Give back the page cache of the file this output will replace, if the
 * path is a regular file (a link or anything else is left alone; stdout
 * too): its pages, freed at once, are the ones the new file's pages are
 * taken from next. On a VM that reports its free memory to the host
 * (virtio-balloon free page reporting, this host), a page the guest has
 * not touched for a few seconds costs a host fault at its first write: 40
 * MB written into such pages took 114-133 ms of CPU here, into pages
 * freed just before 13-39 (docs/BENCHMARKS.md, eleventh pass). The old
 * file's bytes stay on disk until the rename replaces it, and a failed
 * commit keeps it: only its readers' cache is lost. Best effort, no
 * return: posix_fadvise(2) POSIX_FADV_DONTNEED (clean pages dropped; dirty
 * ones' writeback started, mm/fadvise.c).
 */
void output__drop_replaced_cache(const struct output *o);
/*
 * Write all of b to the temporary file and fsync it, ahead of
 * output__commit: in the output's own writer thread, so that the outputs'
 * fsyncs (tens of ms each for a file of tens of MB, fsync(2)) overlap
 * instead of following one another in the committing thread. b's bytes go
 * to b->drained (b->len 0). On failure the file is cut back to what b's
 * drain wrote and b kept, so output__commit writes it again in the
 * outputs' order (after a failed output before it freed its space); b->err
 * is set only when that cut fails. Nothing is done for stdout or a buffer
 * already failed. b NULL: the content is in the file already (perf.data's
 * streams), only fsynced; when that fails, output__commit fsyncs again
 * and reports it.
 */
void output__sync(struct output *o, struct buf *b);
/*
 * Write all of b (NULL: the content was already written to o->fd), fsync,
 * (both skipped after output__sync), set the mode, rename into place. Returns 0 or -errno (message naming the
 * file printed, temporary removed, an existing target left as it was).
 */
int output__commit(struct output *o, const struct buf *b);
/*
 * output__commit but for the directory's fsync: for a caller that commits
 * several outputs and then syncs their directory once (output__sync_dir),
 * rather than once an output (a journal commit each on ext4). Same returns.
 * replaced (may be NULL): set to a descriptor (O_PATH) of the file the
 * rename replaced, -1 when none (or on error); the caller closes it. That
 * last close is what frees the old file's blocks and page cache (the
 * inode's eviction: 7-13 ms for a 26 MB file on ext4 here, which the
 * rename itself would otherwise spend; docs/BENCHMARKS.md), so a caller can
 * do it off its path.
 */
int output__rename(struct output *o, const struct buf *b, int *replaced);
/*
 * fsync the directory of path ("dir/name"; the current one without a
 * slash): makes the renames into it durable. Best effort: some file
 * systems refuse, and nothing is reported.
 */
void output__sync_dir(const char *path);
/* Remove the temporary file, if any. Safe to call twice. */
void output__abort(struct output *o);
/*
 * Async-signal-safe: remove the temporary's name, if it has one (a second
 * Ctrl-C during writing; an unnamed O_TMPFILE inode goes with the process).
 */
void output__abort_signal_safe(struct output *o);

#endif /* BPFPROF_OUTPUT_H */

/* SPDX-License-Identifier: MIT */
/*
 * Keeping the files behind a profile, so that readers that symbolize from
 * files (perf report on perf.data, go tool pprof on .prof) still name every
 * frame once the processes, their mount namespaces and deleted files are
 * gone, and on another machine.
 *
 * perf.data: as perf record does at the end of recording
 * (tools/perf/util/build-id.c, build_id_cache__add), every file-backed DSO
 * with samples and a build-id is copied into perf's build-id cache:
 *
 *   DIR/<path>/<build-id>/elf       the file (DIR/<path>/<build-id>/debug: its debug file)
 *   DIR/.build-id/<xx>/<rest>  ->   ../../<path>/<build-id>     (relative symlink)
 *
 * DIR being perf's buildid.dir setting (/etc/perfconfig, then
 * ~/.perfconfig), default $HOME/.debug; <path> the file's path as the
 * process saw it, without " (deleted)". perf report finds the file through
 * the build-id of the perf.data BUILD_ID table.
 *
 * .prof: the maps text is all pprof has, and it opens the files it names. A
 * mapping whose path does not name the same file here (another mount
 * namespace, a deleted file, a memfd, a path with a space, which pprof's
 * maps parser cuts) gets a copy in a flat directory beside the output,
 * under a name without spaces, and the maps text names the copy; a mapping
 * with a separate debug file gets a copy of that instead (it has the
 * symbols, DWARF and the program headers pprof needs), so that
 * `PPROF_BINARY_PATH=DIR go tool pprof` names its functions elsewhere too.
 * Mappings with nothing to copy are written without a file name.
 *
 * Files come from the descriptors the symbolizer holds (symbolizer__open_file),
 * checked against the mapping's build-id. Every path component created under
 * a target directory is opened without following symlinks; files are
 * written to a temporary name and renamed into place.
 */
#ifndef BPFPROF_DSO_EXPORT_H
#define BPFPROF_DSO_EXPORT_H

#include <stddef.h>
#include <stdint.h>
#include "profile.h"
#include "symbolize.h"

/* Largest file copied, bytes: a mapping of a larger file is left as it is. */
#define DSO_EXPORT_MAX_FILE (1ULL << 30)
/* Bytes one export writes at most (counted in its stats): the rest is left out, said at -v. */
#define DSO_EXPORT_MAX_TOTAL (4ULL << 30)

struct dso_export_stats {
	uint32_t files; /* files written now */
	uint32_t present; /* already there (a previous run's copy) */
	uint32_t failed; /* could not be read or written (each reported at info level) */
	uint64_t bytes; /* bytes written */
};

/*
 * perf's build-id cache directory: the last "dir" of a [buildid] section in
 * etc_config (normally "/etc/perfconfig"; NULL to skip) then
 * home/.perfconfig, else home/.debug ("~/" in the value is home). Returns a
 * string the caller frees, or NULL with errno: ENOENT when home is NULL and
 * no config names a directory, ECANCELED when the config turns the cache
 * off (record.build-id = no-cache or skip, as perf record obeys), ENOMEM.
 */
char *dso_export__buildid_dir(const char *etc_config, const char *home);

/*
 * Add one file to the build-id cache at dir (absolute): fd (read with pread)
 * as `elf` and, when debug_fd >= 0, that as `debug`, under name (the DSO's
 * path, absolute; " (deleted)" is dropped) and id (len bytes, hex in the
 * paths). Existing entries are kept. Returns 0, -EINVAL for a name with an
 * empty, "." or ".." component, -EFBIG past DSO_EXPORT_MAX_FILE (or st->bytes
 * past DSO_EXPORT_MAX_TOTAL), or the
 * first -errno; st counts what was done (may be NULL).
 */
int dso_export__cache_add(const char *dir, const char *name, const uint8_t *id, size_t len, int fd,
			  int debug_fd, struct dso_export_stats *st);

/*
 * Add every file-backed DSO that a sampled user frame of p falls into, and
 * that has a build-id, to the build-id cache at dir (after
 * symbolizer__symbolize, which records the build-ids). Failures are
 * reported once each at info level and counted. Returns 0 or -ENOMEM.
 */
int dso_export__buildid_cache(const struct profile *p, struct symbolizer *sy, const char *dir,
			      struct dso_export_stats *st);

/*
 * For .prof: set copy_path of the mappings of p's sampled processes that
 * pprof could not open by their path (see above), writing the copies into
 * dir (absolute; created on first need, mode 0755) with permission bits
 * `mode`. Returns 0 or -ENOMEM; a copy that fails leaves "" (no file named).
 */
int dso_export__prof_files(struct profile *p, struct symbolizer *sy, const char *dir, unsigned mode,
			   struct dso_export_stats *st);

#endif /* BPFPROF_DSO_EXPORT_H */

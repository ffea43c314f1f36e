// SPDX-License-Identifier: MIT
/*
 * Copies of the files behind a profile (include/dso_export.h): perf's
 * build-id cache for perf.data, as tools/perf/util/build-id.c
 * build_id_cache__add lays it out, and a flat directory beside a .prof
 * output whose maps text names the copies (pprof's maps parser,
 * github.com/google/pprof profile/legacy_profile.go, procMapsRE, takes the
 * file name up to the first space; its driver's locateBinaries finds
 * PPROF_BINARY_PATH/<basename>).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "array.h"
#include "dso_export.h"
#include "lib_io.h"
#include "log.h"
#include "sym_elf.h"

/* ---- perf's config (git-style ini: [section], key = value, # and ; comments) ---- */

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/*
 * The last value of section.key in file, as a new string in *out (kept when
 * the file does not set it). Values may be double-quoted. Section and key
 * compare without case, as perf's (git's) config parser does.
 */
static int config_get(const char *file, const char *section, const char *key, char **out)
{
	char line[4096], cur[64] = "";
	FILE *f = fopen(file, "re");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *s = trim(line), *eq, *v, *k;

		if (!*s || *s == '#' || *s == ';')
			continue;
		if (*s == '[') {
			size_t n = strcspn(s + 1, "] \t\"");

			snprintf(cur, sizeof(cur), "%.*s", (int)n, s + 1);
			continue;
		}
		eq = strchr(s, '=');
		if (!eq || strcasecmp(cur, section))
			continue;
		*eq = '\0';
		k = trim(s);
		v = trim(eq + 1);
		if (strcasecmp(k, key))
			continue;
		if (*v == '"') {
			char *q = strrchr(v + 1, '"');

			v++;
			if (q)
				*q = '\0';
		} else {
			v[strcspn(v, "#;")] = '\0';
			v = trim(v);
		}
		free(*out);
		*out = strdup(v);
		if (!*out) {
			fclose(f);
			return -ENOMEM;
		}
	}
	fclose(f);
	return 0;
}

char *dso_export__buildid_dir(const char *etc_config, const char *home)
{
	char *dir = NULL, *mode = NULL, user[4096];
	const char *files[2] = { etc_config, NULL };
	int i;

	if (home && snprintf(user, sizeof(user), "%s/.perfconfig", home) < (int)sizeof(user))
		files[1] = user;
	/* the system file first, then the user's: the later value wins, as in perf_config() */
	for (i = 0; i < 2; i++) {
		if (!files[i])
			continue;
		if (config_get(files[i], "buildid", "dir", &dir) == -ENOMEM ||
		    config_get(files[i], "record", "build-id", &mode) == -ENOMEM)
			goto out_nomem;
	}
	if (mode && (!strcmp(mode, "no-cache") || !strcmp(mode, "skip"))) {
		free(dir);
		free(mode);
		errno = ECANCELED;
		return NULL;
	}
	free(mode);
	if (dir && *dir)
		return dir;
	free(dir);
	if (!home) {
		errno = ENOENT;
		return NULL;
	}
	if (asprintf(&dir, "%s/.debug", home) < 0) {
		errno = ENOMEM;
		return NULL;
	}
	return dir;
out_nomem:
	free(dir);
	free(mode);
	errno = ENOMEM;
	return NULL;
}

/* ---- files and directories ---- */

/* mkdir -p of a directory the user chose (the cache, the output's directory): links followed */
static int mkdir_p(const char *dir)
{
	char buf[4096], *s;

	if (snprintf(buf, sizeof(buf), "%s", dir) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	for (s = buf + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	if (mkdir(buf, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

/* A path component bpfprof may create: names come from the observed processes */
static bool good_component(const char *s, size_t n)
{
	return n && n < 256 && !(n == 1 && s[0] == '.') && !(n == 2 && s[0] == '.' && s[1] == '.');
}

/*
 * Open (creating them) the directories of rel, '/'-separated, below the
 * directory fd base, never following a symlink: the names come from the
 * processes. Returns an O_PATH directory fd, or -errno (-EINVAL for a bad
 * component).
 */
static int open_subdirs(int base, const char *rel)
{
	int fd = fcntl(base, F_DUPFD_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	while (*rel) {
		size_t n = strcspn(rel, "/");
		char comp[256];
		int next;

		if (!good_component(rel, n)) {
			close(fd);
			return -EINVAL;
		}
		memcpy(comp, rel, n);
		comp[n] = '\0';
		if (mkdirat(fd, comp, 0755) && errno != EEXIST) {
			next = -errno;
			close(fd);
			return next;
		}
		next = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		if (next < 0)
			return -errno;
		fd = next;
		rel += n;
		while (*rel == '/')
			rel++;
	}
	return fd;
}

/* Copy size bytes of src (pread: the descriptor's offset may be shared) to dst. */
static int copy_bytes(int src, int dst, uint64_t size)
{
	char buf[65536];
	uint64_t off = 0;

	while (off < size) {
		size_t want = size - off < sizeof(buf) ? (size_t)(size - off) : sizeof(buf);
		ssize_t n = pread(src, buf, want, (off_t)off);
		int err;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO; /* shrank while copied */
		err = io__write_all(dst, buf, (size_t)n);
		if (err)
			return err;
		off += (uint64_t)n;
	}
	return 0;
}

/*
 * Write a copy of src as dir/name (dir: a directory fd), through a
 * temporary name and a rename, unless name exists. Returns 1 when it
 * existed, 0 when written, or -errno.
 */
static int copy_into(int dir, const char *name, int src, unsigned mode, struct dso_export_stats *st)
{
	char tmp[300];
	struct stat sb;
	int fd, err;

	if (!fstatat(dir, name, &sb, AT_SYMLINK_NOFOLLOW)) {
		if (st)
			st->present++;
		return 1;
	}
	if (fstat(src, &sb))
		return -errno;
	if (!S_ISREG(sb.st_mode))
		return -EINVAL;
	if ((uint64_t)sb.st_size > DSO_EXPORT_MAX_FILE ||
	    (st && st->bytes + (uint64_t)sb.st_size > DSO_EXPORT_MAX_TOTAL))
		return -EFBIG;
	snprintf(tmp, sizeof(tmp), ".%s.%d.tmp", name, (int)getpid());
	fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	err = copy_bytes(src, fd, (uint64_t)sb.st_size);
	if (!err && fchmod(fd, mode))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && renameat(dir, tmp, dir, name))
		err = -errno;
	if (err) {
		unlinkat(dir, tmp, 0);
		return err;
	}
	if (st) {
		st->files++;
		st->bytes += (uint64_t)sb.st_size;
	}
	return 0;
}

/*
 * Hard-link the file open as src as dir/name: 1 when name exists, 0 when
 * linked, -errno when it cannot be (another file system, a deleted file).
 */
static int link_into(int dir, const char *name, int src, struct dso_export_stats *st)
{
	char self[64];
	struct stat sb;

	if (!fstatat(dir, name, &sb, AT_SYMLINK_NOFOLLOW)) {
		if (st)
			st->present++;
		return 1;
	}
	if (fstat(src, &sb) || !S_ISREG(sb.st_mode))
		return -EINVAL;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", src);
	if (linkat(AT_FDCWD, self, dir, name, AT_SYMLINK_FOLLOW))
		return -errno;
	if (st)
		st->files++;
	return 0;
}

static void hex(const uint8_t *id, size_t len, char *out)
{
	for (size_t i = 0; i < len; i++)
		snprintf(out + 2 * i, 3, "%02x", id[i]);
	out[2 * len] = '\0';
}

/* "/usr/lib/x.so (deleted)" -> "usr/lib/x.so" in out; -EINVAL when not absolute */
static int cache_rel_path(const char *name, char *out, size_t size)
{
	static const char sfx[] = " (deleted)";
	size_t n = strlen(name), s = sizeof(sfx) - 1;

	if (name[0] != '/')
		return -EINVAL;
	if (n > s && !strcmp(name + n - s, sfx))
		n -= s;
	while (*name == '/' && n)
		name++, n--;
	if (n + 1 > size)
		return -ENAMETOOLONG;
	memcpy(out, name, n);
	out[n] = '\0';
	return 0;
}

int dso_export__cache_add(const char *dir, const char *name, const uint8_t *id, size_t len, int fd,
			  int debug_fd, struct dso_export_stats *st)
{
	char rel[4096], sid[2 * PROFILE_BUILD_ID_MAX + 1], target[4200], link[16];
	int base = -1, entry = -1, idx = -1, err;

	if (!len || len > PROFILE_BUILD_ID_MAX)
		return -EINVAL;
	err = cache_rel_path(name, rel, sizeof(rel));
	if (err)
		return err;
	hex(id, len, sid);
	err = mkdir_p(dir);
	if (err)
		return err;
	base = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (base < 0)
		return -errno;
	/* DIR/<path>/<build-id>/{elf,debug} */
	snprintf(target, sizeof(target), "%s/%s", rel, sid);
	entry = open_subdirs(base, target);
	if (entry < 0) {
		err = entry;
		goto out;
	}
	/* a hard link where it can be (same file system, file not deleted), as perf does; else a copy */
	err = link_into(entry, "elf", fd, st);
	if (err < 0)
		err = copy_into(entry, "elf", fd, 0644, st);
	if (err >= 0 && debug_fd >= 0)
		err = copy_into(entry, "debug", debug_fd, 0644, st);
	if (err < 0)
		goto out;
	/* DIR/.build-id/<xx>/<rest> -> ../../<path>/<build-id>; one that exists is left alone, as perf does */
	snprintf(link, sizeof(link), ".build-id/%.2s", sid);
	idx = open_subdirs(base, link);
	if (idx < 0) {
		err = idx;
		goto out;
	}
	snprintf(target, sizeof(target), "../../%s/%s", rel, sid);
	err = symlinkat(target, idx, sid + 2) && errno != EEXIST ? -errno : 0;
out:
	if (idx >= 0)
		close(idx);
	if (entry >= 0)
		close(entry);
	close(base);
	return err < 0 ? err : 0;
}

/* ---- which files ---- */

/* The mappings that sampled user frames fall into: hit[proc] is a bitmap over its mappings. */
static uint8_t **hit_mappings(const struct profile *p)
{
	uint8_t **hit = calloc(p->nr_procs ? p->nr_procs : 1, sizeof(*hit));
	size_t i;

	if (!hit)
		return NULL;
	for (i = 0; i < p->nr_locs; i++) {
		const struct profile_location *l = &p->locs[i];

		if (l->proc == PROFILE_KERNEL_PROC || l->mapping < 0)
			continue;
		if (!hit[l->proc]) {
			hit[l->proc] = calloc(p->procs[l->proc].nr_mappings / 8 + 1, 1);
			if (!hit[l->proc])
				goto out_nomem;
		}
		hit[l->proc][l->mapping / 8] |= (uint8_t)(1u << (l->mapping % 8));
	}
	return hit;
out_nomem:
	for (i = 0; i < p->nr_procs; i++)
		free(hit[i]);
	free(hit);
	return NULL;
}

static void free_hit(const struct profile *p, uint8_t **hit)
{
	for (size_t i = 0; hit && i < p->nr_procs; i++)
		free(hit[i]);
	free(hit);
}

static bool is_hit(uint8_t *const *hit, size_t proc, size_t m)
{
	return hit[proc] && (hit[proc][m / 8] & (1u << (m % 8)));
}

/* A DSO already added to the cache: same path and build-id. */
struct done_dso {
	const char *path; /* interned: compared by pointer */
	uint8_t id[PROFILE_BUILD_ID_MAX];
	uint8_t len;
};

static struct done_dso *find_done(struct done_dso *d, size_t n, const struct profile_mapping *m)
{
	for (size_t i = 0; i < n; i++)
		if (d[i].path == m->path && d[i].len == m->build_id_len &&
		    !memcmp(d[i].id, m->build_id, m->build_id_len))
			return &d[i];
	return NULL;
}

static int add_done(struct done_dso **d, size_t *n, size_t *cap, const struct profile_mapping *m)
{
	if (array__grow((void **)d, cap, *n + 1, sizeof(**d)))
		return -ENOMEM;
	(*d)[*n] = (struct done_dso){ .path = m->path, .len = m->build_id_len };
	memcpy((*d)[*n].id, m->build_id, m->build_id_len);
	(*n)++;
	return 0;
}

/*
 * m's debug file, opened again by the path the symbolizer found it at: only
 * if it still carries m's build-id (the path may lie in a process's root,
 * and a file swapped in since, say a link to a secret, is not copied).
 */
static int open_debug(const struct profile_mapping *m)
{
	uint8_t id[ELF_BUILD_ID_MAX];
	char self[64];
	int fd, n;

	if (!m->debug_path || !m->build_id_len)
		return -1;
	fd = open(m->debug_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -1;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	n = elf__read_build_id(self, id);
	if (n != m->build_id_len || memcmp(id, m->build_id, (size_t)n)) {
		pr_info("debug file '%s' no longer has the build-id of '%s': not copied\n",
			m->debug_path, m->path);
		close(fd);
		return -1;
	}
	return fd;
}

int dso_export__buildid_cache(const struct profile *p, struct symbolizer *sy, const char *dir,
			      struct dso_export_stats *st)
{
	uint8_t **hit = hit_mappings(p);
	struct done_dso *done = NULL;
	size_t nr_done = 0, cap_done = 0, i, j;
	int err = 0;

	if (!hit)
		return -ENOMEM;
	for (i = 0; i < p->nr_procs && !err; i++) {
		const struct profile_process *pr = &p->procs[i];

		for (j = 0; j < pr->nr_mappings && !err; j++) {
			const struct profile_mapping *m = &pr->mappings[j];
			int fd, dfd, ret;

			if (!is_hit(hit, i, j) || m->path[0] != '/' || !m->build_id_len ||
			    find_done(done, nr_done, m))
				continue;
			err = add_done(&done, &nr_done, &cap_done, m);
			fd = symbolizer__open_file(sy, p, (uint32_t)i, m);
			if (fd < 0) {
				pr_info("build-id cache: cannot read '%s' (pid %u): %s\n", m->path,
					pr->pid, strerror(-fd));
				if (st)
					st->failed++;
				continue;
			}
			dfd = open_debug(m);
			ret = dso_export__cache_add(dir, m->path, m->build_id, m->build_id_len, fd,
						    dfd, st);
			if (ret) {
				pr_info("build-id cache: cannot add '%s' to '%s': %s\n", m->path,
					dir, strerror(-ret));
				if (st)
					st->failed++;
			}
			if (dfd >= 0)
				close(dfd);
			close(fd);
		}
	}
	free(done);
	free_hit(p, hit);
	return err;
}

/*
 * A debug file that named m's functions and that its reader will not find
 * on this host: fetched (debuginfod's cache) or inside a container's root.
 * One installed under the host's /usr/lib/debug (a -dbg package: libc6-dbg's
 * is 4 MB) is not copied beside every .prof.
 */
static bool fetched_debug(const struct profile_mapping *m)
{
	const char *p = m->debug_path, *in_root;
	struct stat sb;

	if (!p)
		return false;
	if (!strncmp(p, "/usr/lib/debug/", 15))
		return false;
	/* found through a process's root (/proc/PID/root/usr/lib/debug/...): is it the host's too? */
	in_root = strstr(p, "/root/usr/lib/debug/");
	if (!strncmp(p, "/proc/", 6) && in_root && !stat(in_root + 5, &sb) && S_ISREG(sb.st_mode))
		return false;
	return true;
}

/* pprof would open the very file of m by its path: absolute, no space, and here the same inode. */
static bool named_here(const struct profile_mapping *m)
{
	struct stat sb;
	const char *s;

	if (m->path[0] != '/')
		return false;
	for (s = m->path; *s; s++)
		if (isspace((unsigned char)*s))
			return false;
	return !stat(m->path, &sb) && S_ISREG(sb.st_mode) && sb.st_ino == m->inode &&
	       major(sb.st_dev) == m->dev_major && minor(sb.st_dev) == m->dev_minor;
}

/*
 * A file name for the copy of m: its base name, " (deleted)" dropped,
 * spaces and controls '_', then the build-id's first 12 hex digits (else the
 * inode), so that two files of one name do not meet.
 */
static void copy_name(const struct profile_mapping *m, char *out, size_t size)
{
	const char *base = strrchr(m->path, '/');
	char sid[2 * PROFILE_BUILD_ID_MAX + 1];
	size_t n, i;

	base = base ? base + 1 : m->path;
	n = strlen(base);
	if (n > 10 && !strcmp(base + n - 10, " (deleted)"))
		n -= 10;
	if (n > 200)
		n = 200;
	for (i = 0; i < n; i++)
		out[i] = isgraph((unsigned char)base[i]) ? base[i] : '_';
	out[n] = '\0';
	if (!n || !strcmp(out, ".") || !strcmp(out, ".."))
		snprintf(out, size, "dso");
	n = strlen(out);
	if (m->build_id_len) {
		hex(m->build_id, m->build_id_len < 6 ? m->build_id_len : 6, sid);
		snprintf(out + n, size - n, "-%s", sid);
	} else {
		snprintf(out + n, size - n, "-%x_%x_%llu", m->dev_major, m->dev_minor,
			 (unsigned long long)m->inode);
	}
}

/* A file handled for .prof: path (interned, by pointer), device and inode, and its copy_path. */
struct prof_file {
	const char *path;
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	const char *copy; /* NULL: named by its path */
};

static struct prof_file *find_file(struct prof_file *f, size_t n, const struct profile_mapping *m)
{
	for (size_t i = 0; i < n; i++)
		if (f[i].path == m->path && f[i].inode == m->inode &&
		    f[i].dev_major == m->dev_major && f[i].dev_minor == m->dev_minor)
			return &f[i];
	return NULL;
}

/* Make the copy of m's file (its debug file when it has one) in dir; its path, "" when none. */
static const char *prof_copy(struct profile *p, struct symbolizer *sy, uint32_t proc,
			     const struct profile_mapping *m, const char *dir, int *dfd,
			     unsigned mode, struct dso_export_stats *st)
{
	const char *none = profile__intern(p, "");
	char name[256], full[4096];
	int src, ret;

	/* the debug file has the symbols, DWARF and program headers pprof reads */
	src = open_debug(m);
	if (src < 0)
		src = symbolizer__open_file(sy, p, proc, m);
	if (src < 0) {
		if (src != -ENOEXEC) /* a memfd of JIT code, no file to copy */
			pr_info("'%s' (pid %u) cannot be copied for .prof readers: %s\n", m->path,
				p->procs[proc].pid, strerror(-src));
		if (st && src != -ENOEXEC)
			st->failed++;
		return none;
	}
	if (*dfd < 0) {
		ret = mkdir_p(dir);
		*dfd = ret ? ret : open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (*dfd < 0) {
			pr_warn("cannot create '%s': %s; .prof readers may not name the code of deleted or "
				"container files\n",
				dir, strerror(ret ? -ret : errno));
			*dfd = -2;
		}
	}
	if (*dfd == -2) {
		close(src);
		return none;
	}
	copy_name(m, name, sizeof(name));
	ret = copy_into(*dfd, name, src, mode, st);
	close(src);
	snprintf(full, sizeof(full), "%s/%s", dir, name);
	if (ret < 0) {
		pr_info("cannot write '%s': %s\n", full, strerror(-ret));
		if (st)
			st->failed++;
		return none;
	}
	return profile__intern(p, full);
}

int dso_export__prof_files(struct profile *p, struct symbolizer *sy, const char *dir, unsigned mode,
			   struct dso_export_stats *st)
{
	uint8_t **hit = hit_mappings(p);
	struct prof_file *files = NULL, *f;
	size_t nr = 0, cap = 0, i, j;
	const char *none = profile__intern(p, "");
	int dfd = -1, err = 0;

	if (!hit || !none) {
		free_hit(p, hit);
		return -ENOMEM;
	}
	/* the executable mappings with samples decide for their file */
	for (i = 0; i < p->nr_procs && !err; i++) {
		struct profile_process *pr = &p->procs[i];

		for (j = 0; j < pr->nr_mappings && !err; j++) {
			struct profile_mapping *m = &pr->mappings[j];
			const char *copy = NULL;

			if (m->path[0] != '/' || m->perms[2] != 'x' || !is_hit(hit, i, j) ||
			    find_file(files, nr, m))
				continue;
			if (fetched_debug(m) || !named_here(m)) {
				copy = prof_copy(p, sy, (uint32_t)i, m, dir, &dfd, mode, st);
				if (!copy) {
					err = -ENOMEM;
					break;
				}
			}
			if (array__grow((void **)&files, &cap, nr + 1, sizeof(*files))) {
				err = -ENOMEM;
				break;
			}
			files[nr++] = (struct prof_file){ m->path, m->inode, m->dev_major,
							  m->dev_minor, copy };
		}
	}
	/* every line of those files names the copy; files without samples that pprof cannot open, nothing */
	for (i = 0; i < p->nr_procs && !err; i++) {
		struct profile_process *pr = &p->procs[i];

		for (j = 0; j < pr->nr_mappings; j++) {
			struct profile_mapping *m = &pr->mappings[j];

			f = find_file(files, nr, m);
			if (f)
				m->copy_path = f->copy;
			else if (!strncmp(m->path, "/memfd:", 7) ||
				 (m->path[0] == '/' && m->perms[2] == 'x' && !named_here(m)))
				m->copy_path =
					none; /* a memfd is no file to name, executable or not */
		}
	}
	if (dfd >= 0)
		close(dfd);
	free(files);
	free_hit(p, hit);
	return err;
}

// SPDX-License-Identifier: MIT
/*
 * Atomic output files: checked path, temporary (O_TMPFILE or mkostemp) in the
 * same directory, write + fsync + chmod, rename (include/output.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib_io.h"
#include "log.h"
#include "output.h"
#include "write.h"

enum output_format output__format_from_path(const char *path)
{
	size_t n = strlen(path), i;

	for (i = 0; i < nr_writers; i++) {
		size_t e = writers[i].ext ? strlen(writers[i].ext) : 0;

		if (e && n > e && !strcmp(path + n - e, writers[i].ext))
			return writers[i].format;
	}
	return OUTPUT_NONE;
}

enum output_format output__format_from_name(const char *name)
{
	size_t i;

	for (i = 0; i < nr_writers; i++)
		if (!strcmp(name, writers[i].name))
			return writers[i].format;
	return OUTPUT_NONE;
}

const char *output__format_name(enum output_format f)
{
	size_t i;

	for (i = 0; i < nr_writers; i++)
		if (writers[i].format == f)
			return writers[i].name;
	return "none";
}

/*
 * o->named changes with the name itself, signals blocked in between: a signal
 * handler (output__abort_signal_safe) sees named set exactly while the name
 * exists, whenever it runs, even on return from the system call.
 */
static void block_signals(sigset_t *old)
{
	sigset_t all;

	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, old);
}

static void restore_signals(const sigset_t *old)
{
	sigprocmask(SIG_SETMASK, old, NULL);
}

/* The directory part of o->path ("" for the current directory) is dlen bytes long. */
static int check_target(const struct output *o, int *dlen)
{
	const char *slash = strrchr(o->path, '/');
	char link[256];
	struct stat st;
	ssize_t n;

	*dlen = slash ? (int)(slash - o->path) + 1 : 0;
	if (!o->path[*dlen]) {
		pr_warn("cannot write '%s': %s\n", o->path,
			*o->path ? "names a directory, not a file" : "empty file name");
		return *o->path ? -EISDIR : -EINVAL;
	}
	if (lstat(o->path, &st)) {
		int err = -errno;

		if (err == -ENOENT)
			return 0; /* a missing directory fails when the temporary is created */
		pr_warn("cannot write '%s': %s\n", o->path, strerror(-err));
		return err;
	}
	if (S_ISLNK(st.st_mode)) {
		n = readlink(o->path, link, sizeof(link) - 1);
		link[n > 0 ? n : 0] = '\0';
		pr_warn("cannot write '%s': it is a symbolic link (to '%s'); outputs never follow or "
			"replace one: give the real path\n",
			o->path, link);
		return -ELOOP;
	}
	if (S_ISDIR(st.st_mode)) {
		pr_warn("cannot write '%s': it is a directory\n", o->path);
		return -EISDIR;
	}
	if (!S_ISREG(st.st_mode)) {
		pr_warn("cannot write '%s': not a regular file (outputs are replaced by rename; "
			"'-' is stdout)\n",
			o->path);
		return -EINVAL;
	}
	return 0;
}

int output__open(struct output *o)
{
	sigset_t old;
	char *dir;
	int dlen, err;

	o->fd = -1;
	o->tmp_path = NULL;
	o->named = 0;
	o->synced = false; /* each --interval's file: not the last one's */
	if (!strcmp(o->path, "-"))
		return 0;
	err = check_target(o, &dlen);
	if (err)
		return err;
	/* the temporary lives in the target's directory so that rename() is atomic */
	if (asprintf(&o->tmp_path, "%.*s.%s.XXXXXX", dlen, o->path, o->path + dlen) < 0) {
		o->tmp_path = NULL;
		return -ENOMEM;
	}
	dir = dlen ? strndup(o->path, (size_t)dlen) : strdup(".");
	if (!dir) {
		free(o->tmp_path);
		o->tmp_path = NULL;
		return -ENOMEM;
	}
	/* unnamed until commit: nothing is left behind whatever ends the process */
	o->fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (o->fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
		block_signals(&old);
		o->fd = mkostemp(o->tmp_path, O_CLOEXEC); /* O_EXCL, mode 0600 */
		err = errno;
		o->named = o->fd >= 0;
		restore_signals(&old);
		errno = err;
	}
	err = o->fd < 0 ? -errno : 0;
	free(dir);
	if (err) {
		pr_warn("cannot write '%s': %s\n", o->path, strerror(-err));
		free(o->tmp_path);
		o->tmp_path = NULL;
		return err;
	}
	return 0;
}

/* Give the O_TMPFILE inode a fresh name from the ".NAME.XXXXXX" template. */
static int name_tmpfile(struct output *o)
{
	static const char chars[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	char *x = o->tmp_path + strlen(o->tmp_path) - 6, proc[64];
	unsigned char rnd[6];
	sigset_t old;
	int try, i, err;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", o->fd);
	for (try = 0; try < 100; try++) {
		if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
			for (i = 0; i < 6; i++)
				rnd[i] = (unsigned char)(rand() ^ getpid() ^ try);
		for (i = 0; i < 6; i++)
			x[i] = chars[rnd[i] % (sizeof(chars) - 1)];
		block_signals(&old);
		err = linkat(AT_FDCWD, proc, AT_FDCWD, o->tmp_path, AT_SYMLINK_FOLLOW) ? -errno : 0;
		o->named = !err;
		restore_signals(&old);
		if (err != -EEXIST)
			return err;
	}
	return -EEXIST;
}

void output__sync_dir(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? strndup(path, (size_t)(slash - path) + 1) : strdup(".");
	int fd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;

	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	free(dir);
}

void output__drop_replaced_cache(const struct output *o)
{
	char proc[64];
	struct stat st;
	int path_fd, fd;

	if (!o->tmp_path)
		return;
	/* O_PATH opens nothing (no FIFO, no device) and follows no link */
	path_fd = open(o->path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (path_fd < 0)
		return;
	if (fstat(path_fd, &st) || !S_ISREG(st.st_mode)) {
		close(path_fd);
		return;
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", path_fd);
	fd = open(proc, O_RDONLY | O_NOATIME | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno == EPERM) /* O_NOATIME: not the file's owner nor privileged */
		fd = open(proc, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0) {
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		close(fd);
	}
	close(path_fd);
}

void output__sync(struct output *o, struct buf *b)
{
	int err;

	if (!o->tmp_path || (b && b->err))
		return;
	if (!b) {
		/* the content is the file's already: a failed fsync is the commit's to retry and report */
		o->synced = !fsync(o->fd);
		return;
	}
	err = io__write_all(o->fd, b->data, b->len);
	if (!err && fsync(o->fd))
		err = -errno;
	if (err) {
		/*
		 * Back to what the drain wrote, for the commit to write again
		 * in the outputs' order: an output before it that fails frees
		 * its space then (a disk full keeps the outputs that fit)
		 */
		if (ftruncate(o->fd, (off_t)b->drained) || lseek(o->fd, (off_t)b->drained, SEEK_SET) < 0)
			b->err = err;
		return;
	}
	b->drained += b->len;
	b->len = 0;
	o->synced = true;
}

int output__rename(struct output *o, const struct buf *b, int *replaced)
{
	sigset_t old;
	int err;

	if (replaced)
		*replaced = -1;

	if (b && b->err) {
		err = b->err;
		pr_warn("cannot write '%s': %s\n", o->path, strerror(-err));
		output__abort(o);
		return err;
	}
	if (!o->tmp_path) {
		err = b ? io__write_all(STDOUT_FILENO, b->data, b->len) : 0;
		if (err)
			pr_warn("cannot write profile to stdout: %s\n", strerror(-err));
		return err;
	}
	err = b && !o->synced ? io__write_all(o->fd, b->data, b->len) : 0;
	if (!err && !o->synced && fsync(o->fd))
		err = -errno;
	if (!err && fchmod(o->fd, o->mode ? o->mode : OUTPUT_DEFAULT_MODE))
		err = -errno;
	if (!err && !o->named)
		err = name_tmpfile(o);
	if (close(o->fd) && !err)
		err = -errno;
	o->fd = -1;
	if (!err) {
		/* a reference to the file replaced (O_PATH: opens nothing, follows no link) */
		if (replaced)
			*replaced = open(o->path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		block_signals(&old);
		err = rename(o->tmp_path, o->path) ? -errno : 0;
		o->named = !!err;
		restore_signals(&old);
	}
	if (err) {
		pr_warn("cannot write '%s': %s; no file written\n", o->path, strerror(-err));
		output__abort(o);
		if (replaced && *replaced >= 0)
			close(*replaced);
		if (replaced)
			*replaced = -1;
		return err;
	}
	/* named is 0 before the free: the signal handler reads tmp_path while named */
	free(o->tmp_path);
	o->tmp_path = NULL;
	return 0;
}

int output__commit(struct output *o, const struct buf *b)
{
	bool file = o->tmp_path != NULL; /* not stdout */
	int err = output__rename(o, b, NULL);

	if (!err && file)
		output__sync_dir(o->path);
	return err;
}

void output__abort(struct output *o)
{
	sigset_t old;

	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	block_signals(&old);
	if (o->named && o->tmp_path)
		unlink(o->tmp_path);
	o->named = 0;
	restore_signals(&old);
	free(o->tmp_path);
	o->tmp_path = NULL;
}

void output__abort_signal_safe(struct output *o)
{
	if (o->named && o->tmp_path)
		unlink(o->tmp_path);
}

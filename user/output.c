// SPDX-License-Identifier: MIT
/* Atomic output files: temporary + fsync + rename (include/output.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "log.h"
#include "output.h"

static const struct {
	const char *name;
	const char *ext;
	enum output_format format;
} formats[] = {
	{ "prof", ".prof", OUTPUT_GPERF },
	{ "gperf", NULL, OUTPUT_GPERF },
	{ "perf", ".data", OUTPUT_PERFDATA },	/* perf.data, out.data */
	{ "perfdata", NULL, OUTPUT_PERFDATA },
	{ "svg", ".svg", OUTPUT_SVG },
	{ "pprof", ".pb.gz", OUTPUT_PPROF },
	{ "pprof", ".pprof", OUTPUT_PPROF },
	{ "folded", ".folded", OUTPUT_FOLDED },
};

enum output_format output__format_from_path(const char *path)
{
	size_t n = strlen(path), i;

	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		size_t e = formats[i].ext ? strlen(formats[i].ext) : 0;

		if (e && n > e && !strcmp(path + n - e, formats[i].ext))
			return formats[i].format;
	}
	return OUTPUT_NONE;
}

enum output_format output__format_from_name(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (!strcmp(name, formats[i].name))
			return formats[i].format;
	return OUTPUT_NONE;
}

const char *output__format_name(enum output_format f)
{
	size_t i;

	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (formats[i].format == f)
			return formats[i].name;
	return "none";
}

int output__open(struct output *o)
{
	const char *slash = strrchr(o->path, '/');
	int dlen, err;

	o->fd = -1;
	o->tmp_path = NULL;
	if (!strcmp(o->path, "-"))
		return 0;
	/* the temporary lives in the target's directory so that rename() is atomic */
	dlen = slash ? (int)(slash - o->path) + 1 : 0;
	if (asprintf(&o->tmp_path, "%.*s.%s.XXXXXX", dlen, o->path, slash ? slash + 1 : o->path) < 0) {
		o->tmp_path = NULL;
		return -ENOMEM;
	}
	o->fd = mkostemp(o->tmp_path, O_CLOEXEC); /* O_EXCL, mode 0600 */
	if (o->fd < 0) {
		err = -errno;
		pr_warn("cannot write '%s': %s\n", o->path, strerror(-err));
		free(o->tmp_path);
		o->tmp_path = NULL;
		return err;
	}
	return 0;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int output__commit(struct output *o, const struct buf *b)
{
	int err;

	if (b && b->err) {
		err = b->err;
		pr_warn("cannot write '%s': %s\n", o->path, strerror(-err));
		output__abort(o);
		return err;
	}
	if (!o->tmp_path) {
		err = b ? write_all(STDOUT_FILENO, b->data, b->len) : 0;
		if (err)
			pr_warn("cannot write profile to stdout: %s\n", strerror(-err));
		return err;
	}
	err = b ? write_all(o->fd, b->data, b->len) : 0;
	if (!err && fsync(o->fd))
		err = -errno;
	if (!err && close(o->fd))
		err = -errno;
	o->fd = -1;
	if (!err && rename(o->tmp_path, o->path))
		err = -errno;
	if (err) {
		pr_warn("cannot write '%s': %s; no file written\n", o->path, strerror(-err));
		output__abort(o);
		return err;
	}
	free(o->tmp_path);
	o->tmp_path = NULL;
	return 0;
}

void output__abort(struct output *o)
{
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	if (o->tmp_path)
		unlink(o->tmp_path);
	free(o->tmp_path);
	o->tmp_path = NULL;
}

void output__abort_signal_safe(struct output *o)
{
	if (o->tmp_path)
		unlink(o->tmp_path);
}

/* SPDX-License-Identifier: MIT */
/*
 * For the cmocka drivers that build the files they read (with the compiler,
 * objcopy, strip, xz): paths in the driver's temporary directory, shell
 * commands, whole files. Define TEST_TMP_DIR as the driver's char array that
 * its setup passes to mkdtemp() before including this. Every function is
 * static and may go unused by one driver.
 */
#ifndef BPFPROF_TEST_FILES_H
#define BPFPROF_TEST_FILES_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef TEST_TMP_DIR
#error "define TEST_TMP_DIR (the driver's mkdtemp() array) before including test_files.h"
#endif

#define TEST_UNUSED __attribute__((unused))

/* NAME in the temporary directory; the last eight results stay valid. */
static TEST_UNUSED const char *tpath(const char *name)
{
	static char bufs[8][512];
	static int next;
	char *b = bufs[next++ % 8];

	snprintf(b, sizeof(bufs[0]), "%s/%s", TEST_TMP_DIR, name);
	return b;
}

/* Run a printf-formatted shell command; its system() status, printed when not 0. */
static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static TEST_UNUSED int sh(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	if (rc)
		fprintf(stderr, "command failed (%d): %s\n", rc, cmd);
	return rc;
}

/* Write len bytes to path, created or truncated. 0, or -1. */
static TEST_UNUSED int write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (!f)
		return -1;
	if (fwrite(data, 1, len, f) != len) {
		fclose(f);
		return -1;
	}
	return fclose(f);
}

/* write_file of a NUL-terminated text. */
static TEST_UNUSED int write_text(const char *path, const char *text)
{
	return write_file(path, text, strlen(text));
}

#endif /* BPFPROF_TEST_FILES_H */

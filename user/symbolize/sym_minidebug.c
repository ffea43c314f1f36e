// SPDX-License-Identifier: MIT
/*
 * `.gnu_debugdata` (MiniDebugInfo) decompression through liblzma's stream
 * decoder (include/sym_minidebug.h): one xz stream, checked end to end
 * (LZMA_CONCATENATED off, integrity check verified by liblzma), written in
 * chunks to a memfd so that the whole output is never held twice, and cut off
 * at the stated size limit.
 */
#include <errno.h>
#include <lzma.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "lib_io.h"
#include "log.h"
#include "sym_minidebug.h"

#define MINIDEBUG_CHUNK 65536

static const char *lzma_reason(lzma_ret r)
{
	switch (r) {
	case LZMA_FORMAT_ERROR:
		return "not xz data";
	case LZMA_OPTIONS_ERROR:
		return "unsupported xz options";
	case LZMA_DATA_ERROR:
		return "corrupt xz data";
	case LZMA_BUF_ERROR:
		return "truncated xz data";
	case LZMA_MEMLIMIT_ERROR:
		return "needs more decoder memory than allowed";
	case LZMA_MEM_ERROR:
		return "out of memory";
	default:
		return "xz decoder error";
	}
}

int minidebug__decompress(const void *xz, size_t len, uint64_t max, const char *what)
{
	lzma_stream strm = LZMA_STREAM_INIT;
	uint8_t *out = malloc(MINIDEBUG_CHUNK);
	uint64_t total = 0;
	lzma_ret r;
	int fd = -1, err;

	if (!out)
		return -ENOMEM;
	r = lzma_stream_decoder(&strm, MINIDEBUG_MEMLIMIT, 0);
	if (r != LZMA_OK) {
		free(out);
		return r == LZMA_MEM_ERROR ? -ENOMEM : -EINVAL;
	}
	fd = memfd_create("bpfprof-minidebuginfo", MFD_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	strm.next_in = xz;
	strm.avail_in = len;
	for (;;) {
		strm.next_out = out;
		strm.avail_out = MINIDEBUG_CHUNK;
		/* all input is there: LZMA_FINISH makes a truncated stream LZMA_BUF_ERROR */
		r = lzma_code(&strm, LZMA_FINISH);
		if (r != LZMA_OK && r != LZMA_STREAM_END) {
			pr_warn("minidebuginfo: '%s': .gnu_debugdata at byte %llu of %zu: %s; ignored\n",
				what, (unsigned long long)strm.total_in, len, lzma_reason(r));
			err = r == LZMA_MEM_ERROR ? -ENOMEM : -EINVAL;
			goto out;
		}
		total += MINIDEBUG_CHUNK - strm.avail_out;
		if (total > max) {
			pr_warn("minidebuginfo: '%s': .gnu_debugdata decompresses to more than %llu bytes; ignored\n",
				what, (unsigned long long)max);
			err = -EFBIG;
			goto out;
		}
		err = io__write_all(fd, out, MINIDEBUG_CHUNK - strm.avail_out);
		if (err)
			goto out;
		if (r == LZMA_STREAM_END)
			break;
	}
	if (strm.avail_in) {
		pr_warn("minidebuginfo: '%s': .gnu_debugdata has %zu bytes after the xz stream; ignored\n",
			what, strm.avail_in);
		err = -EINVAL;
		goto out;
	}
	if (lseek(fd, 0, SEEK_SET) < 0) {
		err = -errno;
		goto out;
	}
	lzma_end(&strm);
	free(out);
	return fd;

out:
	lzma_end(&strm);
	free(out);
	if (fd >= 0)
		close(fd);
	return err;
}

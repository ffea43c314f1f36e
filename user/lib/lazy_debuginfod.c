// SPDX-License-Identifier: MIT
/*
 * elfutils' debuginfod client functions that user/symbolize/sym_debuginfod.c
 * calls, resolved from libdebuginfod.so.1 on first call (include/lazy_lib.h):
 * only a run that fetches debug files pays for it and the libcurl it pulls
 * in. Without the library debuginfod_begin returns NULL after a warning and
 * every request fails, as when the client cannot be created.
 */
#include <elfutils/debuginfod.h>
#include <stddef.h>
#include "lazy_lib.h"

enum {
	F_BEGIN,
	F_END,
	F_FIND_DEBUGINFO,
	F_SET_PROGRESSFN,
	F_SET_VERBOSE_FD,
	F_SET_USER_DATA,
	F_GET_USER_DATA,
	F_NR
};

static const char *const dbgd_names[F_NR] = {
	[F_BEGIN] = "debuginfod_begin",
	[F_END] = "debuginfod_end",
	[F_FIND_DEBUGINFO] = "debuginfod_find_debuginfo",
	[F_SET_PROGRESSFN] = "debuginfod_set_progressfn",
	[F_SET_VERBOSE_FD] = "debuginfod_set_verbose_fd",
	[F_SET_USER_DATA] = "debuginfod_set_user_data",
	[F_GET_USER_DATA] = "debuginfod_get_user_data",
};
static void *dbgd_fns[F_NR];
static struct lazy_lib dbgd_lib = { .soname = "libdebuginfod.so.1",
				    .why = "fetching debug files from debuginfod servers",
				    .names = dbgd_names,
				    .fns = dbgd_fns,
				    .n = F_NR };

#define FN(idx, type) ((type)dbgd_fns[idx])

debuginfod_client *debuginfod_begin(void)
{
	if (!lazy_lib__open(&dbgd_lib))
		return NULL;
	return FN(F_BEGIN, debuginfod_client * (*)(void))();
}

/* The functions below take a client, which only a loaded library made. */
void debuginfod_end(debuginfod_client *c)
{
	FN(F_END, void (*)(debuginfod_client *))(c);
}

int debuginfod_find_debuginfo(debuginfod_client *c, const unsigned char *build_id, int build_id_len,
			      char **path)
{
	return FN(F_FIND_DEBUGINFO, int (*)(debuginfod_client *, const unsigned char *, int,
					    char **))(c, build_id, build_id_len, path);
}

void debuginfod_set_progressfn(debuginfod_client *c, debuginfod_progressfn_t fn)
{
	FN(F_SET_PROGRESSFN, void (*)(debuginfod_client *, debuginfod_progressfn_t))(c, fn);
}

void debuginfod_set_verbose_fd(debuginfod_client *c, int fd)
{
	FN(F_SET_VERBOSE_FD, void (*)(debuginfod_client *, int))(c, fd);
}

void debuginfod_set_user_data(debuginfod_client *c, void *value)
{
	FN(F_SET_USER_DATA, void (*)(debuginfod_client *, void *))(c, value);
}

void *debuginfod_get_user_data(debuginfod_client *c)
{
	return FN(F_GET_USER_DATA, void *(*)(debuginfod_client *))(c);
}

/* SPDX-License-Identifier: MIT */
/*
 * Libraries loaded only when a run uses them (dlopen(3)), not by the dynamic
 * loader at start: libcurl (--push) and libdebuginfod (debug files fetched by
 * build-id) pull in about 30 shared libraries (TLS, Kerberos, LDAP...) whose
 * relocations cost every run ~10 ms of CPU before main (issue 34).
 *
 * user/lib/lazy_curl.c and lazy_debuginfod.c define the libraries' own
 * functions (curl_easy_init, debuginfod_begin...), each resolving its symbol
 * on first call, so their callers use the libraries' documented API unchanged.
 */
#ifndef BPFPROF_LAZY_LIB_H
#define BPFPROF_LAZY_LIB_H

#include <stdbool.h>

/* One library opened on first use; a static in the file that wraps its API. */
struct lazy_lib {
	const char *soname; /* e.g. "libcurl.so.4" */
	const char *why; /* e.g. "--push" */
	const char *const *names;
	void **fns;
	unsigned int n;
	int state; /* 0 not tried, 1 loaded, -1 failed (atomic) */
};

/*
 * lazy_lib__open - dlopen @soname once (thread-safe) and resolve @names into
 * @fns (same order, @n of them). The first failure is reported once by a
 * warning naming @soname, dlerror(3)'s reason and @why (what needs it).
 * @handle: the caller's slot (NULL until opened). Returns true when every
 * symbol was found; on false @fns are left NULL and the caller returns its
 * API's own error (CURLE_FAILED_INIT, NULL client...).
 */
bool lazy_lib__open(struct lazy_lib *l);

#endif

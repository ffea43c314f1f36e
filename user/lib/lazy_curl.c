// SPDX-License-Identifier: MIT
/*
 * libcurl's functions that user/write/push.c calls, resolved from
 * libcurl.so.4 on first call (include/lazy_lib.h): only --push pays for
 * libcurl and the TLS, Kerberos and LDAP libraries it pulls in. Without the
 * library, curl_global_init fails (CURLE_FAILED_INIT) after a warning and
 * push reports it as before.
 */
#define CURL_DISABLE_TYPECHECK /* the real prototypes, not typecheck-gcc.h's macros */
#include <curl/curl.h>
#include <stdarg.h>
#include "lazy_lib.h"

enum {
	F_GLOBAL_INIT,
	F_EASY_INIT,
	F_EASY_SETOPT,
	F_EASY_PERFORM,
	F_EASY_GETINFO,
	F_EASY_STRERROR,
	F_EASY_CLEANUP,
	F_SLIST_APPEND,
	F_SLIST_FREE_ALL,
	F_NR
};

static const char *const curl_names[F_NR] = {
	[F_GLOBAL_INIT] = "curl_global_init",	    [F_EASY_INIT] = "curl_easy_init",
	[F_EASY_SETOPT] = "curl_easy_setopt",	    [F_EASY_PERFORM] = "curl_easy_perform",
	[F_EASY_GETINFO] = "curl_easy_getinfo",	    [F_EASY_STRERROR] = "curl_easy_strerror",
	[F_EASY_CLEANUP] = "curl_easy_cleanup",	    [F_SLIST_APPEND] = "curl_slist_append",
	[F_SLIST_FREE_ALL] = "curl_slist_free_all",
};
static void *curl_fns[F_NR];
static struct lazy_lib curl_lib = {
	.soname = "libcurl.so.4", .why = "--push", .names = curl_names, .fns = curl_fns, .n = F_NR
};

#define FN(idx, type) ((type)curl_fns[idx])

CURLcode curl_global_init(long flags)
{
	if (!lazy_lib__open(&curl_lib))
		return CURLE_FAILED_INIT;
	return FN(F_GLOBAL_INIT, CURLcode(*)(long))(flags);
}

/* The functions below run only after curl_global_init succeeded (push.c's order). */
CURL *curl_easy_init(void)
{
	if (!lazy_lib__open(&curl_lib))
		return NULL;
	return FN(F_EASY_INIT, CURL * (*)(void))();
}

/*
 * The option's number says its argument's type (curl.h's CURLOPTTYPE_*
 * ranges), as libcurl's own va_arg reads it: long below OBJECTPOINT, a pointer
 * (data or function) below OFF_T, curl_off_t below BLOB, a pointer after.
 */
CURLcode curl_easy_setopt(CURL *curl, CURLoption option, ...)
{
	CURLcode (*setopt)(CURL *, CURLoption, ...) =
		FN(F_EASY_SETOPT, CURLcode(*)(CURL *, CURLoption, ...));
	CURLcode rc;
	va_list ap;

	if (!setopt)
		return CURLE_FAILED_INIT;
	va_start(ap, option);
	if (option < CURLOPTTYPE_OBJECTPOINT)
		rc = setopt(curl, option, va_arg(ap, long));
	else if (option < CURLOPTTYPE_OFF_T)
		rc = setopt(curl, option, va_arg(ap, void *));
	else if (option < CURLOPTTYPE_BLOB)
		rc = setopt(curl, option, va_arg(ap, curl_off_t));
	else
		rc = setopt(curl, option, va_arg(ap, void *));
	va_end(ap);
	return rc;
}

CURLcode curl_easy_perform(CURL *curl)
{
	return FN(F_EASY_PERFORM, CURLcode(*)(CURL *))(curl);
}

/* Every CURLINFO_* takes a pointer to its result. */
CURLcode curl_easy_getinfo(CURL *curl, CURLINFO info, ...)
{
	CURLcode (*getinfo)(CURL *, CURLINFO, ...) =
		FN(F_EASY_GETINFO, CURLcode(*)(CURL *, CURLINFO, ...));
	void *out;
	va_list ap;

	va_start(ap, info);
	out = va_arg(ap, void *);
	va_end(ap);
	return getinfo ? getinfo(curl, info, out) : CURLE_FAILED_INIT;
}

const char *curl_easy_strerror(CURLcode code)
{
	const char *(*fn)(CURLcode) = FN(F_EASY_STRERROR, const char *(*)(CURLcode));

	return fn ? fn(code) : "libcurl not loaded";
}

void curl_easy_cleanup(CURL *curl)
{
	if (curl_fns[F_EASY_CLEANUP])
		FN(F_EASY_CLEANUP, void (*)(CURL *))(curl);
}

struct curl_slist *curl_slist_append(struct curl_slist *list, const char *s)
{
	if (!lazy_lib__open(&curl_lib))
		return NULL;
	return FN(F_SLIST_APPEND, struct curl_slist * (*)(struct curl_slist *, const char *))(list,
											      s);
}

void curl_slist_free_all(struct curl_slist *list)
{
	if (list && curl_fns[F_SLIST_FREE_ALL])
		FN(F_SLIST_FREE_ALL, void (*)(struct curl_slist *))(list);
}

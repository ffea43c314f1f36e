// SPDX-License-Identifier: MIT
/* lazy_lib__open: a library opened on first use, its symbols resolved or none. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "lazy_lib.h"
#include "log.h"

static void opens_and_resolves(void **state)
{
	static const char *const names[] = { "zlibVersion", "crc32" };
	void *fns[2] = { 0 };
	struct lazy_lib l = {
		.soname = "libz.so.1", .why = "the test", .names = names, .fns = fns, .n = 2
	};

	assert_true(lazy_lib__open(&l));
	assert_non_null(fns[0]);
	assert_non_null(fns[1]);
	/* the resolved function is the library's */
	assert_true(((const char *(*)(void))fns[0])()[0] == '1');
	/* a second call answers from its state */
	assert_true(lazy_lib__open(&l));
}

static void missing_library(void **state)
{
	static const char *const names[] = { "f" };
	void *fns[1] = { 0 };
	struct lazy_lib l = { .soname = "libbpfprof-absent.so.9",
			      .why = "the test",
			      .names = names,
			      .fns = fns,
			      .n = 1 };

	assert_false(lazy_lib__open(&l));
	assert_null(fns[0]);
	assert_false(lazy_lib__open(&l)); /* not retried */
}

/* one symbol missing: none is kept, so callers see the library as absent */
static void missing_symbol(void **state)
{
	static const char *const names[] = { "zlibVersion", "bpfprof_no_such_symbol" };
	void *fns[2] = { 0 };
	struct lazy_lib l = {
		.soname = "libz.so.1", .why = "the test", .names = names, .fns = fns, .n = 2
	};

	assert_false(lazy_lib__open(&l));
	assert_null(fns[0]);
	assert_null(fns[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(opens_and_resolves),
		cmocka_unit_test(missing_library),
		cmocka_unit_test(missing_symbol),
	};

	log_verbosity = -1; /* the missing library's warnings are expected */
	return cmocka_run_group_tests(tests, NULL, NULL);
}

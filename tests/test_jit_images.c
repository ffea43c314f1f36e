// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/write/jit_images.c (include/jit_images.h): the
 * reason and remedy given for JIT code left unnamed, and no image planned
 * without a directory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "jit_images.h"
#include "profile.h"
#include "symbolize.h"

#define T_REAL 1700000000000000000ULL

static struct profile *profile_at(uint64_t realtime_ns)
{
	struct profile *p = profile__new();

	assert_non_null(p);
	p->start_realtime_ns = realtime_ns;
	return p;
}

/* Why JIT code stayed unnamed: no JIT file, or a JVM not asked for its perf map and why. */
static void test_why_unnamed(void **state)
{
	struct profile *p = profile_at(T_REAL);
	struct symbolizer *sy = symbolizer__new(NULL, "/nonexistent");
	struct jit_images_why why = { .sy = sy };
	struct profile_mapping jvm = {
		.start = 0x7f0000000000ULL, .end = 0x7f0000100000ULL, .perms = "r-xp", .inode = 5
	};
	char buf[512];
	bool created;
	int node, java;

	(void)state;
	assert_non_null(sy);
	node = profile__process(p, 7, &created);
	java = profile__process(p, 8, &created);
	assert_true(node >= 0 && java >= 0);
	jvm.path = profile__intern(p, "/usr/lib/jvm/java-17/lib/server/libjvm.so");
	assert_int_equal(profile__add_mapping(p, (uint32_t)java, &jvm), 1);

	assert_true(jit_images__why_unnamed(&why, p, (uint32_t)node, buf, sizeof(buf)));
	assert_non_null(strstr(buf, "no jitdump or /tmp/perf-PID.map was found; run node with "));
	assert_true(jit_images__why_unnamed(&why, p, (uint32_t)java, buf, sizeof(buf)));
	/* not asked (jvm NULL): taken for a JVM gone before the end */
	assert_non_null(strstr(buf, "the JVM wrote no perf map (it had exited); run 'jcmd 8 "
				    "Compiler.perfmap' before the profile ends"));
	why.no_jvm_perfmap = true;
	assert_true(jit_images__why_unnamed(&why, p, (uint32_t)java, buf, sizeof(buf)));
	assert_non_null(strstr(buf, "the JVM wrote no perf map (--no-jvm-perfmap); "));
	/* no directory: nothing planned */
	assert_int_equal(jit_images__plan(p, (uint32_t)java, sy, NULL, true), 0);
	assert_int_equal(p->procs[java].nr_jit_maps, 0);
	symbolizer__free(sy);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_why_unnamed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

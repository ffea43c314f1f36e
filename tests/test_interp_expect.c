// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/capture/interp_expect.c (include/interp_expect.h):
 * the interpreters named by a file name, a command found in a PATH of
 * temporary directories, a script's "#!" line (the interpreter's path, and
 * /usr/bin/env's program after its options), and a process's executable
 * through a proc tree of symlinks built here.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "interp.h"
#include "interp_expect.h"

#define PY (1u << INTERP_PYTHON)
#define JVM (1u << INTERP_HOTSPOT)
#define V8 (1u << INTERP_V8)

static char dir[] = "/tmp/test_interp_expect.XXXXXX";

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) ? -1 : 0;
}

/* dir/name with text, mode */
static void put(const char *name, const char *text, mode_t mode)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(chmod(path, mode), 0);
}

static void test_names(void **state)
{
	(void)state;
	assert_int_equal(interp_expect_name("python3"), PY);
	assert_int_equal(interp_expect_name("/usr/bin/python3.11"), PY);
	assert_int_equal(interp_expect_name("python"), PY);
	assert_int_equal(interp_expect_name("python3-dbg"), PY);
	assert_int_equal(interp_expect_name("/usr/bin/node"), V8);
	assert_int_equal(interp_expect_name("node20"), V8);
	assert_int_equal(interp_expect_name("nodejs"), V8);
	assert_int_equal(interp_expect_name("/usr/lib/jvm/java-17-openjdk-amd64/bin/java"), JVM);
	assert_int_equal(interp_expect_name("true"), 0);
	assert_int_equal(interp_expect_name("nodemon"), 0);
	assert_int_equal(interp_expect_name("python-config"), 0);
	assert_int_equal(interp_expect_name("javac"), 0);
	assert_int_equal(interp_expect_name("/opt/python3/bin/gcc"), 0);
}

static void test_command_in_path(void **state)
{
	char path[512], sub[256];

	(void)state;
	snprintf(sub, sizeof(sub), "%s/bin", dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	put("bin/tool", "#!/usr/bin/python3 -u\nprint(1)\n", 0755);
	put("bin/js", "#!/usr/bin/env -S node --max-old-space-size=64\n", 0755);
	put("bin/sh", "#!/bin/sh\necho\n", 0755);
	put("bin/notexec", "#!/usr/bin/python3\n", 0644);
	put("bin/elf", "\177ELF\2\1\1", 0755);
	/* an empty entry is the current directory; the first executable match wins */
	snprintf(path, sizeof(path), "/nonexistent::%s", sub);
	assert_int_equal(interp_expect_command("tool", path), PY);
	assert_int_equal(interp_expect_command("js", path), V8);
	assert_int_equal(interp_expect_command("sh", path), 0);
	assert_int_equal(interp_expect_command("notexec", path), 0);
	assert_int_equal(interp_expect_command("elf", path), 0);
	assert_int_equal(interp_expect_command("missing", path), 0);
	/* the name alone, whatever the file */
	assert_int_equal(interp_expect_command("java", "/nonexistent"), JVM);
	/* a path is read as it is */
	snprintf(path, sizeof(path), "%s/tool", sub);
	assert_int_equal(interp_expect_command(path, "/nonexistent"), PY);
}

static void test_pid(void **state)
{
	char proc[256], link[256];

	(void)state;
	snprintf(proc, sizeof(proc), "%s/proc", dir);
	assert_int_equal(mkdir(proc, 0755), 0);
	snprintf(link, sizeof(link), "%s/proc/42", dir);
	assert_int_equal(mkdir(link, 0755), 0);
	snprintf(link, sizeof(link), "%s/proc/42/exe", dir);
	assert_int_equal(symlink("/usr/bin/node (deleted)", link), 0);
	snprintf(link, sizeof(link), "%s/proc/43", dir);
	assert_int_equal(mkdir(link, 0755), 0);
	snprintf(link, sizeof(link), "%s/proc/43/exe", dir);
	assert_int_equal(symlink("/usr/local/bin/python3.12", link), 0);
	/* an executable replaced since its exec: still node */
	assert_int_equal(interp_expect_pid(proc, 42), V8);
	assert_int_equal(interp_expect_pid(proc, 43), PY);
	assert_int_equal(interp_expect_pid(proc, 44), 0);
	/* the running processes (a non-numeric entry, a process without exe among them) */
	snprintf(link, sizeof(link), "%s/proc/self", dir);
	assert_int_equal(mkdir(link, 0755), 0);
	snprintf(link, sizeof(link), "%s/proc/45", dir);
	assert_int_equal(mkdir(link, 0755), 0);
	assert_int_equal(interp_expect_running(proc, PY | V8 | JVM), PY | V8);
	assert_int_equal(interp_expect_running(proc, JVM), 0);
	assert_int_equal(interp_expect_running(proc, V8), V8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_command_in_path),
		cmocka_unit_test(test_pid),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

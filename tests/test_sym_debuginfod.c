// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/symbolize/sym_debuginfod.c through the real libdebuginfod,
 * with no server: file:// URLs (the client reads DIR/buildid/HEX/debuginfo,
 * debuginfod-client(3)) serve one debug file, and a listening socket that
 * never accepts stands for a server that never answers. Checked: a fetch by
 * build-id lands in the client's cache (DEBUGINFOD_CACHE_PATH) and is served
 * from it the second time (the served copy is gone by then), a missing one is
 * -ENOENT, DEBUGINFOD_MAXSIZE refuses a bigger file (-EFBIG), and a dead
 * server costs the deadline plus at most DEBUGINFOD_GRACE_MS, leaving no
 * cached miss behind.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "log.h"
#include "sym_debuginfod.h"

static char tmp_dir[] = "/tmp/test_sym_debuginfod.XXXXXX";

#define TEST_TMP_DIR tmp_dir
#include "test_files.h"

static const uint8_t id_a[20] = { 0x0d, 0xe5, 0x32, 0x51, 0x46, 0x3d, 0x3f, 0x4f, 0x4b, 0xb5,
				  0xa4, 0x96, 0x7e, 0x11, 0xb4, 0x94, 0x6f, 0x68, 0x8f, 0xcb };
static const uint8_t id_b[20] = { 0xaa, 0xbb };

static void hex(char *out, const uint8_t *id, size_t len)
{
	for (size_t i = 0; i < len; i++)
		snprintf(out + 2 * i, 3, "%02x", id[i]);
}

static int group_setup(void **state)
{
	char h[41];

	(void)state;
	log_verbosity = -1;
	if (!mkdtemp(tmp_dir))
		return -1;
	hex(h, id_a, 20);
	/* any bytes do: this module fetches, sym_elf.c checks what was fetched */
	if (sh("mkdir -p %s/srv/buildid/%s && head -c 5000 /dev/urandom > %s/srv/buildid/%s/debuginfo",
	       tmp_dir, h, tmp_dir, h))
		return -1;
	unsetenv("DEBUGINFOD_MAXSIZE");
	unsetenv("DEBUGINFOD_PROGRESS");
	unsetenv("DEBUGINFOD_VERBOSE");
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	if (tmp_dir[strlen(tmp_dir) - 1] == 'X')
		return 0;
	return sh("rm -rf '%s'", tmp_dir) ? -1 : 0;
}

static void use_cache(const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", tmp_dir, name);
	setenv("DEBUGINFOD_CACHE_PATH", path, 1);
}

static void test_file_url(void **state)
{
	struct debuginfod_req r[2] = { 0 };
	char urls[512], h[41];
	struct stat sb;

	(void)state;
	snprintf(urls, sizeof(urls), "file://%s/srv", tmp_dir);
	assert_int_equal(debuginfod__setup(urls), 0);
	assert_true(debuginfod__enabled());
	assert_string_equal(getenv("DEBUGINFOD_MAXSIZE"), "1073741824");
	use_cache("cache1");
	memcpy(r[0].build_id, id_a, 20);
	r[0].build_id_len = 20;
	r[0].what = "a";
	memcpy(r[1].build_id, id_b, 20);
	r[1].build_id_len = 20;
	r[1].what = "b";
	assert_int_equal(debuginfod__fetch(r, 2, NULL), 1);
	assert_int_equal(r[0].err, 0);
	assert_non_null(r[0].path);
	assert_true(!strncmp(r[0].path, tmp_dir, strlen(tmp_dir)) && strstr(r[0].path, "/cache1/"));
	assert_int_equal(stat(r[0].path, &sb), 0);
	assert_int_equal(sb.st_size, 5000);
	assert_null(r[1].path);
	assert_int_equal(r[1].err, -ENOENT);
	free(r[0].path);

	/* the second time from the cache: the served file is gone */
	hex(h, id_a, 20);
	assert_int_equal(sh("mv %s/srv/buildid/%s %s/gone", tmp_dir, h, tmp_dir), 0);
	assert_int_equal(debuginfod__fetch(r, 1, NULL), 1);
	assert_non_null(r[0].path);
	free(r[0].path);
	assert_int_equal(sh("mv %s/gone %s/srv/buildid/%s", tmp_dir, tmp_dir, h), 0);
}

static void test_max_size(void **state)
{
	struct debuginfod_req r = { .build_id_len = 20, .what = "a" };

	(void)state;
	memcpy(r.build_id, id_a, 20);
	use_cache("cache2");
	setenv("DEBUGINFOD_MAXSIZE", "4999", 1);
	assert_int_equal(debuginfod__fetch(&r, 1, NULL), 0);
	assert_null(r.path);
	assert_int_equal(r.err, -EFBIG);
	/* a cached file over the cap is not used either */
	setenv("DEBUGINFOD_MAXSIZE", "5000", 1);
	assert_int_equal(debuginfod__fetch(&r, 1, NULL), 1);
	free(r.path);
	setenv("DEBUGINFOD_MAXSIZE", "4999", 1);
	assert_int_equal(debuginfod__fetch(&r, 1, NULL), 0);
	assert_int_equal(r.err, -EFBIG);
	unsetenv("DEBUGINFOD_MAXSIZE");
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_dead_server_deadline(void **state)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct debuginfod_opts o = { .deadline_ms = 1000 };
	struct debuginfod_req r[3] = { 0 };
	socklen_t alen = sizeof(a);
	char urls[128], neg[600], h[41];
	struct stat sb;
	double t0, took;
	int s, i;

	(void)state;
	/* connections complete in the backlog and are never answered */
	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(s >= 0);
	assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(s, 16), 0);
	assert_int_equal(getsockname(s, (struct sockaddr *)&a, &alen), 0);
	snprintf(urls, sizeof(urls), "http://127.0.0.1:%u", ntohs(a.sin_port));
	assert_int_equal(debuginfod__setup(urls), 0);
	use_cache("cache3");
	for (i = 0; i < 3; i++) {
		memcpy(r[i].build_id, id_a, 20);
		r[i].build_id[19] = (uint8_t)i;
		r[i].build_id_len = 20;
		r[i].what = "dead";
	}
	t0 = now_s();
	assert_int_equal(debuginfod__fetch(r, 3, &o), 0);
	took = now_s() - t0;
	for (i = 0; i < 3; i++) {
		assert_null(r[i].path);
		assert_int_equal(r[i].err, -ETIME);
	}
	/* the bound stated in sym_debuginfod.h, with 0.5 s for a loaded machine */
	assert_true(took >= 0.9);
	assert_true(took <= 1.0 + DEBUGINFOD_GRACE_MS / 1000.0 + 0.5);
	/* no cached miss left to stop the next run from asking */
	hex(h, r[0].build_id, 20);
	snprintf(neg, sizeof(neg), "%s/cache3/%s/debuginfo", tmp_dir, h);
	assert_int_not_equal(stat(neg, &sb), 0);
	close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_url),
		cmocka_unit_test(test_max_size),
		cmocka_unit_test(test_dead_server_deadline),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

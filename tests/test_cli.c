// SPDX-License-Identifier: MIT
/* cmocka: the ring buffer size that cli__parse defaults to, and --ringbuf-size (user/cli.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>
#include <cmocka.h>
#include "cli.h"

#define MiB (1ULL << 20)

static void test_default_ringbuf_bytes(void **state)
{
	/* 512 KiB per CPU, at least 2 MiB */
	assert_int_equal(cli__default_ringbuf_bytes(1), 2 * MiB);
	assert_int_equal(cli__default_ringbuf_bytes(2), 2 * MiB);
	assert_int_equal(cli__default_ringbuf_bytes(4), 2 * MiB);
	assert_int_equal(cli__default_ringbuf_bytes(5), 4 * MiB);
	assert_int_equal(cli__default_ringbuf_bytes(8), 4 * MiB);
	assert_int_equal(cli__default_ringbuf_bytes(16), 8 * MiB);
	/* up to a power of two */
	assert_int_equal(cli__default_ringbuf_bytes(17), 16 * MiB);
	assert_int_equal(cli__default_ringbuf_bytes(192), 128 * MiB);
	/* sysconf's -1 (unknown) and absurd counts stay sane */
	assert_int_equal(cli__default_ringbuf_bytes(-1), 2 * MiB);
	assert_int_equal(cli__default_ringbuf_bytes(1L << 30), 1ULL << 30);
}

static void test_parse_ringbuf(void **state)
{
	static struct bpfprof_config cfg;
	char *dflt[] = { "bpfprof", "-a", "-d", "1", NULL };
	char *set[] = { "bpfprof", "-a", "-d", "1", "--ringbuf-size", "16M", NULL };

	assert_int_equal(cli__parse(4, dflt, &cfg), 0);
	assert_int_equal(cfg.ringbuf_bytes, cli__default_ringbuf_bytes(sysconf(_SC_NPROCESSORS_CONF)));
	assert_int_equal(cli__parse(6, set, &cfg), 0);
	assert_int_equal(cfg.ringbuf_bytes, 16 * MiB);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_ringbuf_bytes),
		cmocka_unit_test(test_parse_ringbuf),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

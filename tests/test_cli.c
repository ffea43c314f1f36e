// SPDX-License-Identifier: MIT
/* cmocka: the ring buffer size that cli__parse defaults to, --ringbuf-size and --off-cpu (user/cli.c). */
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

/*
 * --off-cpu: the threshold's default (500 µs) and value, and which outputs
 * are of the off-CPU kind (.prof, folded and SVG named offcpu*; pprof and
 * perf.data hold both). The refusals (exit 2) are in tests/integration/offcpu.sh:
 * argp_error exits the process.
 */
static void test_parse_offcpu(void **state)
{
	static struct bpfprof_config cfg;
	char *dflt[] = { "bpfprof", "-a", "--off-cpu", "-o", "cpu.svg", "-o", "dir/offcpu.svg", "-o", "offcpu.pb.gz",
			 "-o", "offcpu-web.folded", NULL };
	char *set[] = { "bpfprof", "-a", "--off-cpu", "--off-cpu-thresh", "0", NULL };
	char *off[] = { "bpfprof", "-a", "-o", "x.svg", NULL };

	assert_int_equal(cli__parse(11, dflt, &cfg), 0);
	assert_true(cfg.offcpu);
	assert_int_equal(cfg.offcpu_thresh_us, 500);
	assert_false(cfg.offcpu_output[0]);
	assert_true(cfg.offcpu_output[1]);
	assert_false(cfg.offcpu_output[2]);
	assert_true(cfg.offcpu_output[3]);
	assert_int_equal(cli__parse(5, set, &cfg), 0);
	assert_int_equal(cfg.offcpu_thresh_us, 0);
	assert_int_equal(cli__parse(4, off, &cfg), 0);
	assert_false(cfg.offcpu);
	assert_false(cfg.offcpu_output[0]);
}

static void test_parse_debuginfod(void **state)
{
	static struct bpfprof_config cfg;
	char *dflt[] = { "bpfprof", "-a", NULL };
	char *set[] = { "bpfprof", "-a", "--debuginfod", " http://127.0.0.1:8002  file:///srv/d ",
			"--debuginfod-deadline", "2.5", NULL };
	char *off[] = { "bpfprof", "-a", "--no-debuginfod", NULL };

	assert_int_equal(cli__parse(2, dflt, &cfg), 0);
	assert_null(cfg.debuginfod_urls);
	assert_false(cfg.no_debuginfod);
	assert_int_equal(cfg.debuginfod_deadline_ms, 0);
	assert_int_equal(cli__parse(6, set, &cfg), 0);
	assert_string_equal(cfg.debuginfod_urls, " http://127.0.0.1:8002  file:///srv/d ");
	assert_int_equal(cfg.debuginfod_deadline_ms, 2500);
	assert_int_equal(cli__parse(3, off, &cfg), 0);
	assert_true(cfg.no_debuginfod);
	/* bad values exit 2 from argp: tests/integration/debuginfo.sh runs them */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_ringbuf_bytes),
		cmocka_unit_test(test_parse_ringbuf),
		cmocka_unit_test(test_parse_offcpu),
		cmocka_unit_test(test_parse_debuginfod),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

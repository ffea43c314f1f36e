// SPDX-License-Identifier: MIT
/*
 * cmocka: option parsing (user/cli.c) as plain unit tests, no root and no BPF:
 * the ring buffer size that cli__parse defaults to, --ringbuf-size, --off-cpu,
 * targets, outputs and call graph modes, and every refusal (exit 2 with the
 * reason and a "bpfprof --help" hint on stderr). argp_error exits the process,
 * so each refusal is parsed in a forked child whose exit status and stderr
 * are checked.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include <linux/magic.h>
#include "cli.h"

#define MiB (1ULL << 20)

static void test_default_ringbuf_bytes(void **state)
{
	/* 512 KiB per CPU, at least 2 MiB, at the usual frequencies */
	assert_int_equal(cli__default_ringbuf_bytes(1, 99), 2 * MiB);
	assert_int_equal(cli__default_ringbuf_bytes(2, 999), 2 * MiB);
	assert_int_equal(cli__default_ringbuf_bytes(4, 999), 2 * MiB);
	assert_int_equal(cli__default_ringbuf_bytes(5, 99), 4 * MiB);
	assert_int_equal(cli__default_ringbuf_bytes(8, 999), 4 * MiB);
	assert_int_equal(cli__default_ringbuf_bytes(16, 999), 8 * MiB);
	/* up to a power of two */
	assert_int_equal(cli__default_ringbuf_bytes(17, 99), 16 * MiB);
	assert_int_equal(cli__default_ringbuf_bytes(192, 99), 128 * MiB);
	/* a second of 256-byte records where that is more: 2 x 10 kHz is 5 MB */
	assert_int_equal(cli__default_ringbuf_bytes(2, 10000), 8 * MiB);
	assert_int_equal(cli__default_ringbuf_bytes(1, 4000), 2 * MiB);
	assert_int_equal(cli__default_ringbuf_bytes(64, 100000), 1ULL << 30);
	/* sysconf's -1 (unknown) and absurd counts stay sane */
	assert_int_equal(cli__default_ringbuf_bytes(-1, 999), 2 * MiB);
	assert_int_equal(cli__default_ringbuf_bytes(1L << 30, 99), 1ULL << 30);
}

static void test_parse_ringbuf(void **state)
{
	static struct bpfprof_config cfg;
	char *dflt[] = { "bpfprof", "-a", "-d", "1", NULL };
	char *fast[] = { "bpfprof", "-a", "-F", "10000", "-d", "1", NULL };
	char *set[] = { "bpfprof", "-a", "-d", "1", "--ringbuf-size", "16M", NULL };
	char *set_fast[] = { "bpfprof", "--ringbuf-size", "1M", "-a", "-F", "10000", NULL };

	assert_int_equal(cli__parse(4, dflt, &cfg), 0);
	assert_int_equal(cfg.ringbuf_bytes,
			 cli__default_ringbuf_bytes(sysconf(_SC_NPROCESSORS_CONF), 99));
	/* sized from -F once parsed, wherever -F is */
	assert_int_equal(cli__parse(6, fast, &cfg), 0);
	assert_int_equal(cfg.ringbuf_bytes,
			 cli__default_ringbuf_bytes(sysconf(_SC_NPROCESSORS_CONF), 10000));
	assert_int_equal(cli__parse(6, set, &cfg), 0);
	assert_int_equal(cfg.ringbuf_bytes, 16 * MiB);
	assert_int_equal(cli__parse(6, set_fast, &cfg), 0);
	assert_int_equal(cfg.ringbuf_bytes, 1 * MiB);
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
	char *dflt[] = { "bpfprof",	   "-a", "--off-cpu",	 "-o", "cpu.svg",	    "-o",
			 "dir/offcpu.svg", "-o", "offcpu.pb.gz", "-o", "offcpu-web.folded", NULL };
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
	char *set[] = { "bpfprof",
			"-a",
			"--debuginfod",
			" http://127.0.0.1:8002  file:///srv/d ",
			"--debuginfod-deadline",
			"2.5",
			NULL };
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
	/* bad values exit 2 from argp: test_bad_values below */
}

static int argv_len(char **argv)
{
	int n = 0;

	while (argv[n])
		n++;
	return n;
}

/*
 * Parse argv (NULL-terminated) in a child; returns its exit status (what
 * cli__parse returned, or argp_error's exit) and its stderr in err.
 */
static int parse_in_child(char **argv, char *err, size_t err_size)
{
	int pfd[2], status;
	size_t len = 0;
	ssize_t n;
	pid_t pid;

	assert_int_equal(pipe(pfd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		static struct bpfprof_config cfg;

		close(pfd[0]);
		dup2(pfd[1], STDERR_FILENO);
		/* stdout too: argp prints --help there */
		dup2(pfd[1], STDOUT_FILENO);
		exit(cli__parse(argv_len(argv), argv, &cfg));
	}
	close(pfd[1]);
	while (len + 1 < err_size && (n = read(pfd[0], err + len, err_size - 1 - len)) > 0)
		len += (size_t)n;
	err[len] = '\0';
	close(pfd[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

/* argv must be refused: exit 2, stderr holding why and the usage hint */
static void refused(char **argv, const char *why)
{
	char err[4096];
	int rc = parse_in_child(argv, err, sizeof(err));

	if (rc != 2 || !strstr(err, why) || !strstr(err, "bpfprof --help"))
		fail_msg("argv[1] '%s': exit %d, want 2 with '%s'; stderr: %s",
			 argv[1] ? argv[1] : "", rc, why, err);
}

/* Each conflict rule of cli.c's ARGP_KEY_END and cli__parse's output checks. */
static void test_conflicts(void **state)
{
	refused((char *[]){ "bpfprof", NULL }, "no target");
	refused((char *[]){ "bpfprof", "-d", "1", "-o", "x.prof", NULL }, "no target");
	refused((char *[]){ "bpfprof", "-p", "1", "-a", NULL },
		"-p cannot be combined with -a or a command");
	refused((char *[]){ "bpfprof", "-p", "1", "--", "true", NULL }, "-p cannot be combined");
	refused((char *[]){ "bpfprof", "-a", "--off-cpu-thresh", "100", NULL },
		"--off-cpu-thresh needs --off-cpu");
	refused((char *[]){ "bpfprof", "-a", "--interval", "1", NULL },
		"--interval and --keep need --output-dir");
	refused((char *[]){ "bpfprof", "-a", "--keep", "2", NULL },
		"--interval and --keep need --output-dir");
	refused((char *[]){ "bpfprof", "-a", "--tenant", "t", NULL }, "go with --push URL");
	refused((char *[]){ "bpfprof", "-a", "--push-api", "ingest", NULL }, "go with --push URL");
	refused((char *[]){ "bpfprof", "-a", "--label", "a=b", NULL }, "go with --push URL");
	refused((char *[]){ "bpfprof", "-a", "--push-timeout", "2", NULL }, "go with --push URL");
	refused((char *[]){ "bpfprof", "-a", "--debuginfod", "http://x", "--no-debuginfod", NULL },
		"--debuginfod and --no-debuginfod exclude each other");
	refused((char *[]){ "bpfprof", "-a", "--check-user-stacks", "--call-graph", "dwarf", NULL },
		"--check-user-stacks compares frame-pointer walks");
	refused((char *[]){ "bpfprof", "-a", "--check-unwind", "--call-graph", "fp", NULL },
		"--check-unwind checks the dwarf walk");
	refused((char *[]){ "bpfprof", "-a", "--check-unwind", "--check-user-stacks", NULL },
		"--check-unwind checks the dwarf walk");
	refused((char *[]){ "bpfprof", "-a", "stray", NULL }, "unexpected argument 'stray'");
	refused((char *[]){ "bpfprof", "-a", "--", NULL }, "no command after '--'");
	/* outputs */
	refused((char *[]){ "bpfprof", "-a", "-o", "x.unknown", NULL },
		"cannot tell the format of 'x.unknown'");
	refused((char *[]){ "bpfprof", "-a", "-o", "-", NULL }, "cannot tell the format of '-'");
	refused((char *[]){ "bpfprof", "-a", "-o", "-", "--format", "perf", NULL },
		"perf.data cannot go to stdout");
	refused((char *[]){ "bpfprof", "-a", "--output-dir", "d", "-o", "sub/x.prof", NULL },
		"with --output-dir, -o takes a file name, not 'sub/x.prof'");
	refused((char *[]){ "bpfprof", "-a", "--output-dir", "d", "-o", "-", "--format", "folded",
			    NULL },
		"with --output-dir, -o takes a file name, not '-'");
	refused((char *[]){ "bpfprof", "-a", "-o", "offcpu.svg", NULL },
		"named as an off-CPU output: add --off-cpu");
	refused((char *[]){ "bpfprof", "-a", "-o", "d/offcpu.folded", NULL }, "add --off-cpu");
	refused((char *[]){ "bpfprof", "-a",	 "-o", "x.prof", "-o", "x.prof", "-o", "x.prof",
			    "-o",      "x.prof", "-o", "x.prof", "-o", "x.prof", "-o", "x.prof",
			    "-o",      "x.prof", "-o", "x.prof", "-o", "x.prof", "-o", "x.prof",
			    "-o",      "x.prof", "-o", "x.prof", "-o", "x.prof", "-o", "x.prof",
			    "-o",      "x.prof", "-o", "x.prof", NULL },
		"too many outputs");
}

/* Bad values: each option's range and syntax. */
/* --unwind-cache: the default, $BPFPROF_UNWIND_CACHE, the option over both, none; the size */
static void test_parse_unwind_cache(void **state)
{
	static struct bpfprof_config cfg;
	char *dflt[] = { "bpfprof", "-a", NULL };
	char *set[] = { "bpfprof", "-a", "--unwind-cache", "/srv/c", "--unwind-cache-size",
			"1G",	   NULL };
	char *off[] = { "bpfprof", "-a", "--unwind-cache", "none", NULL };

	unsetenv("BPFPROF_UNWIND_CACHE");
	assert_int_equal(cli__parse(2, dflt, &cfg), 0);
	assert_string_equal(cfg.unwind_cache, "/var/cache/bpfprof/unwind");
	assert_false(cfg.unwind_cache_set);
	assert_int_equal(cfg.unwind_cache_bytes, 256ULL << 20);
	setenv("BPFPROF_UNWIND_CACHE", "/env/c", 1);
	assert_int_equal(cli__parse(2, dflt, &cfg), 0);
	assert_string_equal(cfg.unwind_cache, "/env/c");
	assert_true(cfg.unwind_cache_set);
	assert_int_equal(cli__parse(6, set, &cfg), 0);
	assert_string_equal(cfg.unwind_cache, "/srv/c");
	assert_int_equal(cfg.unwind_cache_bytes, 1ULL << 30);
	assert_int_equal(cli__parse(4, off, &cfg), 0);
	assert_string_equal(cfg.unwind_cache, "none");
	unsetenv("BPFPROF_UNWIND_CACHE");
}

static void test_bad_values(void **state)
{
	refused((char *[]){ "bpfprof", "-a", "--unwind-cache", "", NULL },
		"invalid --unwind-cache");
	refused((char *[]){ "bpfprof", "-a", "--unwind-cache-size", "1K", NULL },
		"invalid unwind cache size");
	refused((char *[]){ "bpfprof", "-a", "-F", "0", NULL }, "invalid FREQUENCY");
	refused((char *[]){ "bpfprof", "-a", "-F", "100001", NULL }, "invalid FREQUENCY");
	refused((char *[]){ "bpfprof", "-a", "-F", "99x", NULL }, "invalid FREQUENCY");
	refused((char *[]){ "bpfprof", "-p", "abc", NULL }, "invalid PID: 'abc'");
	refused((char *[]){ "bpfprof", "-p", ",", NULL }, "invalid PID list: ','");
	refused((char *[]){ "bpfprof", "-a", "-e", "instructions", NULL }, "invalid EVENT");
	refused((char *[]){ "bpfprof", "-a", "-d", "abc", NULL }, "invalid SECONDS");
	refused((char *[]){ "bpfprof", "-a", "-d", "-1", NULL }, "invalid SECONDS");
	refused((char *[]){ "bpfprof", "-a", "--ringbuf-size", "3M", NULL }, "invalid");
	refused((char *[]){ "bpfprof", "-a", "--format", "json", NULL }, "invalid FORMAT: 'json'");
	refused((char *[]){ "bpfprof", "-a", "--output-mode", "0200", NULL }, "invalid MODE");
	refused((char *[]){ "bpfprof", "-a", "--output-mode", "999", NULL }, "invalid MODE");
	refused((char *[]){ "bpfprof", "-a", "--call-graph", "lbr", NULL },
		"invalid call graph mode: 'lbr'");
	refused((char *[]){ "bpfprof", "-a", "--max-stack", "513", NULL }, "invalid max stack");
	refused((char *[]){ "bpfprof", "-a", "--max-stack", "0", NULL }, "invalid max stack");
	refused((char *[]){ "bpfprof", "-a", "--interval", "0.5", "--output-dir", "d", NULL },
		"invalid interval SECONDS");
	refused((char *[]){ "bpfprof", "-a", "--off-cpu", "--off-cpu-thresh", "-5", NULL },
		"invalid");
	refused((char *[]){ "bpfprof", "-a", "--off-cpu", "--off-cpu-thresh", "1ms", NULL },
		"invalid");
	refused((char *[]){ "bpfprof", "-a", "--debuginfod", "ftp://x", NULL },
		"invalid debuginfod URL 'ftp://x'");
	refused((char *[]){ "bpfprof", "-a", "--debuginfod-deadline", "0", NULL },
		"invalid debuginfod deadline");
	refused((char *[]){ "bpfprof", "-a", "--push", "ftp://x", NULL }, "invalid --push URL");
	refused((char *[]){ "bpfprof", "-a", "--push", "http://x", "--push-api", "grpc", NULL },
		"invalid --push-api: 'grpc'");
	refused((char *[]){ "bpfprof", "-a", "--push", "http://x", "--tenant", "a b", NULL },
		"invalid --tenant");
	refused((char *[]){ "bpfprof", "-a", "--push", "http://x", "--label", "novalue", NULL },
		"invalid --label");
	refused((char *[]){ "bpfprof", "-a", "--cgroup", "/nonexistent-cgroup-of-test-cli", NULL },
		"invalid cgroup '/nonexistent-cgroup-of-test-cli'");
}

/* --cgroup with -p: needs a real cgroup v2 directory to get past its lookup */
static void test_cgroup_with_pid(void **state)
{
	/* the unified hierarchy: alone, or beside v1 controllers (systemd's hybrid) */
	static char *dirs[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };
	struct statfs sfs;
	size_t i;

	for (i = 0; i < 2; i++)
		if (!statfs(dirs[i], &sfs) && sfs.f_type == CGROUP2_SUPER_MAGIC)
			break;
	if (i == 2)
		skip();
	refused((char *[]){ "bpfprof", "-p", "1", "--cgroup", dirs[i], NULL },
		"--cgroup goes with -a or a command, not -p");
}

/* What the accepted forms fill in. */
static void test_accepted(void **state)
{
	static struct bpfprof_config cfg;
	char *cmd[] = { "bpfprof", "-F",     "499", "-d", "0.5",      "-o",	"a.prof",
			"-o",	   "b.data", "-o",  "-",  "--format", "folded", "--",
			"prog",	   "-a",     "-p",  "1",  NULL };
	char *pids[] = { "bpfprof", "-p", "3,1,2", "-e", "cycles", NULL };
	char *dir[] = {
		"bpfprof", "-a", "--output-dir", "d", "--interval", "2", "--keep", "3", NULL
	};
	char *fmt[] = { "bpfprof", "-a",      "-o", "a.prof",	"-o", "b.data", "-o", "c.pb.gz",
			"-o",	   "d.pprof", "-o", "e.folded", "-o", "f.svg",	NULL };
	char *check[] = { "bpfprof", "-a", "--check-user-stacks", NULL };
	char *fp[] = { "bpfprof", "-a", "--call-graph", "fp", NULL };

	assert_int_equal(cli__parse(argv_len(cmd), cmd, &cfg), 0);
	/* the command's own options stay its own */
	assert_non_null(cfg.command);
	assert_string_equal(cfg.command[0], "prog");
	assert_string_equal(cfg.command[1], "-a");
	assert_string_equal(cfg.command[3], "1");
	assert_null(cfg.command[4]);
	assert_false(cfg.all_cpus);
	assert_int_equal(cfg.nr_pids, 0);
	assert_int_equal(cfg.freq_hz, 499);
	assert_true(cfg.duration_s == 0.5);
	/* --format overrides every extension */
	assert_int_equal(cfg.nr_outputs, 3);
	for (int i = 0; i < 3; i++)
		assert_int_equal(cfg.outputs[i].format, OUTPUT_FOLDED);
	assert_string_equal(cfg.outputs[2].path, "-");
	assert_int_equal(cfg.call_graph, CALL_GRAPH_DWARF);
	assert_false(cfg.call_graph_set);

	assert_int_equal(cli__parse(argv_len(pids), pids, &cfg), 0);
	assert_int_equal(cfg.nr_pids, 3);
	assert_int_equal(cfg.pids[0], 3);
	assert_int_equal(cfg.pids[2], 2);
	assert_string_equal(cfg.event, "cycles");
	assert_int_equal(cfg.freq_hz, 99);
	assert_int_equal(cfg.nr_outputs, 0);

	/* --output-dir alone: one profile.pb.gz a set */
	assert_int_equal(cli__parse(argv_len(dir), dir, &cfg), 0);
	assert_int_equal(cfg.nr_outputs, 1);
	assert_string_equal(cfg.outputs[0].path, "profile.pb.gz");
	assert_int_equal(cfg.outputs[0].format, OUTPUT_PPROF);
	assert_true(cfg.interval_s == 2);
	assert_int_equal(cfg.keep, 3);

	assert_int_equal(cli__parse(argv_len(fmt), fmt, &cfg), 0);
	assert_int_equal(cfg.outputs[0].format, OUTPUT_GPERF);
	assert_int_equal(cfg.outputs[1].format, OUTPUT_PERFDATA);
	assert_int_equal(cfg.outputs[2].format, OUTPUT_PPROF);
	assert_int_equal(cfg.outputs[3].format, OUTPUT_PPROF);
	assert_int_equal(cfg.outputs[4].format, OUTPUT_FOLDED);
	assert_int_equal(cfg.outputs[5].format, OUTPUT_SVG);

	/* --check-user-stacks compares frame-pointer walks: it implies fp */
	assert_int_equal(cli__parse(argv_len(check), check, &cfg), 0);
	assert_true(cfg.check_user_stacks);
	assert_int_equal(cfg.call_graph, CALL_GRAPH_FP);
	assert_int_equal(cfg.max_stack, 127); /* the default, as kernel.perf_event_max_stack */
	assert_int_equal(cli__parse(argv_len(fp), fp, &cfg), 0);
	assert_int_equal(cfg.call_graph, CALL_GRAPH_FP);
	assert_true(cfg.call_graph_set);
	/* --max-stack: up to 512 user frames */
	char *deep[] = { "bpfprof", "-a", "--max-stack", "512", NULL };
	assert_int_equal(cli__parse(argv_len(deep), deep, &cfg), 0);
	assert_int_equal(cfg.max_stack, 512);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_ringbuf_bytes),
		cmocka_unit_test(test_parse_ringbuf),
		cmocka_unit_test(test_parse_offcpu),
		cmocka_unit_test(test_parse_debuginfod),
		cmocka_unit_test(test_parse_unwind_cache),
		cmocka_unit_test(test_conflicts),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_cgroup_with_pid),
		cmocka_unit_test(test_accepted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

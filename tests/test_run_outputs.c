// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/write/run_outputs.c and perfdata_streams.c
 * (include/run_outputs.h, include/perfdata_streams.h): each profile's files
 * named by its start under --output-dir, one a second later when two
 * profiles start within the same second, --keep's pruning, a bad path
 * failing before sampling, and a perf.data output that fails mid-stream
 * (a full disk) dropped while the other outputs are written; the writers
 * run_outputs__prepare starts early give the same bytes, and are joined
 * when no write follows.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "cli.h"
#include "outdir.h"
#include "profile.h"
#include "run_outputs.h"
#include "symbolize.h"

static char tmp_dir[] = "/tmp/test_run_outputs.XXXXXX";
#define TEST_TMP_DIR tmp_dir
#include "test_files.h"

#define SEC 1000000000ULL
#define T_REAL (1700000000ULL * SEC) /* 20231114T221320Z */

static int setup(void **state)
{
	(void)state;
	return mkdtemp(TEST_TMP_DIR) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return sh("rm -rf '%s'", TEST_TMP_DIR);
}

/* Append output path; the first one sets what cli__parse would have */
static void add_output(struct bpfprof_config *cfg, const char *path)
{
	cfg->event = "cpu-clock";
	cfg->freq_hz = 99;
	struct output *o = &cfg->outputs[cfg->nr_outputs++];

	o->path = path;
	o->format = output__format_from_path(path);
	o->fd = -1;
	assert_int_not_equal(o->format, OUTPUT_NONE);
}

static struct profile *profile_at(uint64_t realtime_ns)
{
	struct profile *p = profile__new();

	assert_non_null(p);
	p->event = profile__intern(p, "cpu-clock");
	p->freq_hz = 99;
	p->period_ns = SEC / 99;
	p->start_ns = 1000;
	p->end_ns = 2000;
	p->start_realtime_ns = realtime_ns;
	return p;
}

static bool exists(const char *path)
{
	struct stat st;

	return !stat(path, &st);
}

/* "<dir>/<stamp of realtime_ns>-<name>" */
static const char *stamped(const char *dir, uint64_t realtime_ns, const char *name)
{
	static char path[2][512];
	static int next;
	char stamp[OUTDIR_STAMP_LEN + 1];
	char *b = path[next++ % 2];

	outdir__stamp(realtime_ns, stamp);
	snprintf(b, sizeof(path[0]), "%s/%s-%s", dir, stamp, name);
	return b;
}

/* One profile's outputs through begin, write, end; returns write's result. */
static int one_profile(struct run_outputs *o, struct profile *p, uint64_t boundary)
{
	int err;

	assert_int_equal(run_outputs__begin(o, p, NULL, boundary), 0);
	err = run_outputs__write(o, p);
	run_outputs__prune(o);
	run_outputs__end(o);
	return err;
}

static void test_output_dir_names(void **state)
{
	struct bpfprof_config cfg = { 0 };
	struct run_outputs o;
	struct profile *p[3];
	const char *dir = tpath("od");
	struct stat st;

	(void)state;
	assert_int_equal(mkdir(dir, 0755), 0);
	cfg.output_dir = dir;
	cfg.keep = 2;
	add_output(&cfg, "cpu.folded");
	add_output(&cfg, "offcpu.folded");
	cfg.offcpu_output[1] = true;
	assert_int_equal(run_outputs__init(&o, &cfg), 0);
	assert_null(o.pusher);

	p[0] = profile_at(T_REAL + SEC / 2);
	assert_int_equal(run_outputs__begin(&o, p[0], NULL, 0), 0);
	/* the temporaries exist before sampling; the names come from the start */
	assert_string_equal(cfg.outputs[0].path, stamped(dir, T_REAL, "cpu.folded"));
	assert_string_equal(cfg.outputs[1].path, stamped(dir, T_REAL, "offcpu.folded"));
	assert_true(cfg.outputs[0].fd >= 0);
	assert_null(o.jit_dir); /* no .prof or perf.data output */
	assert_int_equal(run_outputs__write(&o, p[0]), 0);
	run_outputs__end(&o);
	assert_true(exists(stamped(dir, T_REAL, "cpu.folded")));
	assert_int_equal(stat(stamped(dir, T_REAL, "offcpu.folded"), &st), 0);
	assert_int_equal(st.st_mode & 07777, OUTPUT_DEFAULT_MODE);

	/* the next starts within the same second: named a second later, not over the first */
	p[1] = profile_at(T_REAL + SEC / 2 + SEC / 4);
	assert_int_equal(one_profile(&o, p[1], 1000), 0);
	assert_int_equal(p[1]->start_realtime_ns, T_REAL + SEC);
	assert_true(exists(stamped(dir, T_REAL + SEC, "cpu.folded")));
	assert_true(exists(stamped(dir, T_REAL, "cpu.folded")));

	/* --keep 2: the third set's writing removes the first */
	p[2] = profile_at(T_REAL + 5 * SEC);
	assert_int_equal(one_profile(&o, p[2], 2000), 0);
	assert_int_equal(p[2]->start_realtime_ns, T_REAL + 5 * SEC);
	assert_false(exists(stamped(dir, T_REAL, "cpu.folded")));
	assert_false(exists(stamped(dir, T_REAL, "offcpu.folded")));
	assert_true(exists(stamped(dir, T_REAL + SEC, "offcpu.folded")));
	assert_true(exists(stamped(dir, T_REAL + 5 * SEC, "cpu.folded")));
	/* the -o names stay as given, for the next profile's */
	assert_string_equal(o.names[0], "cpu.folded");
	assert_string_equal(o.names[2], "push.pb");
	run_outputs__free(&o);
	for (int i = 0; i < 3; i++)
		profile__free(p[i]);
}

/* A path that cannot be written fails at begin, before sampling; end leaves nothing. */
static void test_bad_path(void **state)
{
	struct bpfprof_config cfg = { 0 };
	struct run_outputs o;
	struct profile *p = profile_at(T_REAL);
	char ok[512], bad[512];

	(void)state;
	snprintf(ok, sizeof(ok), "%s", tpath("ok.folded"));
	snprintf(bad, sizeof(bad), "%s", tpath("missing/x.folded"));
	add_output(&cfg, ok);
	add_output(&cfg, bad);
	assert_int_equal(run_outputs__init(&o, &cfg), 0);
	assert_int_equal(run_outputs__begin(&o, p, NULL, 0), -ENOENT);
	run_outputs__end(&o);
	assert_int_equal(cfg.outputs[0].fd, -1);
	assert_false(exists(ok));
	assert_int_equal(sh("[ -z \"$(ls -A '%s' | grep -v '^od$')\" ]", TEST_TMP_DIR), 0);
	run_outputs__free(&o);
	profile__free(p);
}

/*
 * A full disk under the perf.data stream: that output is dropped (its
 * temporary removed, no file), the .folded beside it is still written, and
 * the write returns the stream's error.
 */
static void test_stream_dropped(void **state)
{
	static const uint64_t ips[] = { 0x401100 };
	struct bpfprof_config cfg = { 0 };
	struct run_outputs o;
	struct profile *p = profile_at(T_REAL);
	struct symbolizer *sy = symbolizer__new(NULL, TEST_TMP_DIR);
	struct profile_sample s = { .pid = 42, .tid = 42, .comm = "work", .ips = ips, .nr_user = 1 };
	char data[512], folded[512];
	bool created;
	int full = open("/dev/full", O_WRONLY), proc, i;

	(void)state;
	if (full < 0)
		skip();
	assert_non_null(sy);
	snprintf(data, sizeof(data), "%s", tpath("s.data"));
	snprintf(folded, sizeof(folded), "%s", tpath("s.folded"));
	add_output(&cfg, data);
	add_output(&cfg, folded);
	proc = profile__process(p, 42, &created);
	assert_true(proc >= 0);
	assert_int_equal(run_outputs__init(&o, &cfg), 0);
	assert_int_equal(run_outputs__begin(&o, p, sy, 0), 0);
	assert_true(perfdata_streams__active(&o.streams));
	assert_non_null(o.streams.w[0]);
	assert_null(o.streams.w[1]);
	/* beside the first perf.data output, absolute */
	assert_non_null(o.jit_dir);
	assert_string_equal(o.jit_dir, tpath("s.data.jit"));
	assert_int_equal(run_outputs__maps(&o, p, (uint32_t)proc, 1000), 0);
	for (i = 0; i < 10; i++) {
		s.time_ns = 1000 + (uint64_t)i;
		run_outputs__sample(&o, &s, false);
	}
	run_outputs__round(&o);
	assert_int_equal(perfdata__nr_samples(o.streams.w[0]), 10);

	assert_true(dup2(full, cfg.outputs[0].fd) == cfg.outputs[0].fd);
	for (i = 0; i < 100000 && perfdata_streams__active(&o.streams); i++) {
		s.time_ns = 2000 + (uint64_t)i;
		run_outputs__sample(&o, &s, false);
	}
	assert_false(perfdata_streams__active(&o.streams));
	assert_int_equal(o.streams.err[0], -ENOSPC);
	assert_int_equal(cfg.outputs[0].fd, -1); /* its temporary gone (output__abort) */
	run_outputs__round(&o); /* nothing left to write to */

	assert_int_equal(run_outputs__write(&o, p), -ENOSPC);
	run_outputs__end(&o);
	assert_false(exists(data));
	assert_true(exists(folded));
	run_outputs__free(&o);
	symbolizer__free(sy);
	profile__free(p);
	close(full);
}

/* A profile of a few named stacks, CPU and off-CPU, of two processes. */
static struct profile *named_profile(void)
{
	struct profile *p = profile_at(T_REAL);
	bool created;
	char name[32];
	int i;

	for (i = 0; i < 12; i++) {
		/* kernel leaf, then user frames leaf first: deep, sharing their roots */
		uint64_t ips[] = { 0xffffffff81000000ULL + (uint64_t)i % 3, 0x401000 + (uint64_t)i,
				   0x402000 + (uint64_t)i % 4, 0x403000, 0x404000 };
		int proc = profile__process(p, 100 + (uint32_t)i % 2, &created);
		int st;

		assert_true(proc >= 0);
		snprintf(p->procs[proc].comm, sizeof(p->procs[proc].comm), "work%d", i % 2);
		st = profile__add_stack(p, (uint32_t)proc, ips, 1, 4, (uint64_t)i + 1, 0, &created);
		assert_true(st >= 0);
		p->stacks[st].off_count = (uint64_t)i % 3;
		p->stacks[st].off_ns = 1000000ULL * (uint64_t)(i % 3);
		p->nr_samples += (uint64_t)i + 1;
	}
	p->offcpu = true;
	assert_int_equal(profile__resolve_locs(p), 0);
	for (i = 0; i < (int)p->nr_locs; i++) {
		/* some names twice: frames merge by name; ';' and '<' as C++ names have */
		snprintf(name, sizeof(name), i % 5 ? "ns::fn<%d>" : "a;b%d", i % 7);
		p->locs[i].func = profile__intern(p, name);
	}
	return p;
}

/* The bytes of path, malloc'd, its length in *len. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *b = NULL;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	*len = (size_t)ftell(f);
	rewind(f);
	b = malloc(*len + 1);
	assert_non_null(b);
	assert_int_equal(fread(b, 1, *len, f), *len);
	fclose(f);
	return b;
}

/*
 * run_outputs__prepare starts the .svg and .folded writers before its own
 * work: every output, the off-CPU views too, is the same byte for byte as
 * when run_outputs__write starts them all; a prepare that no write follows
 * (finalize failed) leaves no file and no writer running.
 */
static void test_prepare_starts_early(void **state)
{
	static const char *const names[] = { "a.svg", "a.folded", "off.svg", "off.folded", "a.pb.gz" };
	const char *dirs[] = { tpath("early"), tpath("late"), tpath("dropped") };
	struct profile *p = named_profile();
	char path[3][5][512];
	int d, i;

	(void)state;
	for (d = 0; d < 3; d++) {
		struct bpfprof_config cfg = { 0 };
		struct run_outputs o;

		assert_int_equal(mkdir(dirs[d], 0755), 0);
		for (i = 0; i < 5; i++) {
			snprintf(path[d][i], sizeof(path[d][i]), "%s/%s", dirs[d], names[i]);
			add_output(&cfg, path[d][i]);
			cfg.offcpu_output[i] = !strncmp(names[i], "off", 3);
		}
		assert_int_equal(run_outputs__init(&o, &cfg), 0);
		assert_int_equal(run_outputs__begin(&o, p, NULL, 0), 0);
		if (d != 1) {
			assert_int_equal(run_outputs__prepare(&o, p, NULL), 0);
			assert_non_null(o.jobs);
		}
		if (d != 2) {
			assert_int_equal(run_outputs__write(&o, p), 0);
			assert_null(o.jobs);
		}
		run_outputs__end(&o);
		assert_null(o.jobs);
		run_outputs__free(&o);
	}
	for (i = 0; i < 5; i++) {
		size_t len[2];
		char *early = slurp(path[0][i], &len[0]), *late = slurp(path[1][i], &len[1]);

		assert_true(len[0] > 0);
		assert_int_equal(len[0], len[1]);
		assert_memory_equal(early, late, len[0]);
		free(early);
		free(late);
		assert_false(exists(path[2][i]));
	}
	/* nothing left in the dropped set's directory: no temporary either */
	assert_int_equal(sh("test -z \"$(ls -A '%s')\"", dirs[2]), 0);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_output_dir_names),
		cmocka_unit_test(test_bad_path),
		cmocka_unit_test(test_stream_dropped),
		cmocka_unit_test(test_prepare_starts_early),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

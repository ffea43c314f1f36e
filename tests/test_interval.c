// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/interval.c (include/interval.h), linked with
 * interval.o and stubs of the session's calls below (no BPF), over a fake
 * /proc: the periods' clock (poll timeout, the -d deadline, boundaries), and
 * the record path's cut: records stamped before it counted, those at or
 * past it carried in their order (-ECANCELED stops the ring buffer's
 * consumer) and counted in the next period, those past the last period's
 * cut dropped; a period ended at its boundary written to its output.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "bpfprof_abi.h"
#include "cli.h"
#include "interval.h"
#include "log.h"
#include "output.h"
#include "proc_table.h"
#include "profile.h"
#include "run_outputs.h"
#include "sample_record.h"
#include "session.h"
#include "symbolize.h"

#define FAKE_PROC_TEMPLATE "/tmp/test_interval.XXXXXX"
#include "fake_proc.h"
#define TEST_TMP_DIR tmpdir
#include "test_files.h"

/* The session's calls interval.c makes: a session with nothing queued and nothing dropped */
void session__stats(struct session *s, uint64_t *samples, uint64_t *dropped, uint64_t *per_cpu)
{
	*samples = *dropped = 0;
	if (per_cpu)
		per_cpu[0] = 0;
}

void session__offcpu_stats(struct session *s, struct session_offcpu_stats *st)
{
	memset(st, 0, sizeof(*st));
}

int session__nr_cpus(const struct session *s)
{
	return 1;
}

int session__drain(struct session *s)
{
	return 0;
}

void session__walk_stats(struct session *s, uint64_t stats[BPFPROF_STAT_NR])
{
	memset(stats, 0, sizeof(uint64_t) * BPFPROF_STAT_NR);
}

void session__map_entries(struct session *s, struct session_map_entries *e)
{
	memset(e, 0, sizeof(*e));
}

int session__bpf_run_time(struct session *s, uint64_t *run_ns, uint64_t *runs)
{
	return -EOPNOTSUPP;
}

void session__check_stats(struct session *s, uint64_t *same, uint64_t *shorter, uint64_t *differ)
{
	*same = *shorter = *differ = 0;
}

static const char maps_app[] =
	"00400000-00452000 r-xp 00000000 08:01 131090                             /usr/bin/app\n";

static int setup(void **state)
{
	if (setup_tmpdir(state))
		return -1;
	make_process(100, 5000, "app", maps_app); /* process 100 of the fake /proc */
	return 0;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* A sample record of process 100 stamped time_ns, with one user address: on_record's return */
static int record(struct interval *iv, uint64_t time_ns)
{
	struct one_ip_sample rec;

	one_ip_sample(&rec, 100, 5000, time_ns, "app", 0x400100);
	return interval__on_record(iv, &rec, ONE_IP_SAMPLE_SIZE);
}

struct fixture {
	struct bpfprof_config cfg;
	struct run_outputs out;
	struct symbolizer *sy;
	struct proc_table *procs;
	struct interval *iv;
};

/* An interval over the fake /proc writing folded stacks to tmpdir/NAME, begun and started */
static void fixture_start_since(struct fixture *f, const char *name, double interval_s,
				double duration_s, uint64_t since_ns)
{
	struct output *o = &f->cfg.outputs[f->cfg.nr_outputs++];

	f->cfg.event = "cpu-clock";
	f->cfg.freq_hz = 99;
	f->cfg.call_graph = CALL_GRAPH_FP;
	f->cfg.no_jvm_perfmap = true;
	f->cfg.interval_s = interval_s;
	f->cfg.duration_s = duration_s;
	o->path = tpath(name);
	o->format = output__format_from_path(o->path);
	o->fd = -1;
	assert_int_equal(run_outputs__init(&f->out, &f->cfg), 0);
	f->sy = symbolizer__new(NULL, tmpdir);
	f->procs = proc_table__new(tmpdir, true);
	assert_non_null(f->sy);
	assert_non_null(f->procs);
	f->iv = interval__new(&f->cfg, &f->out, f->sy, f->procs);
	assert_non_null(f->iv);
	assert_int_equal(interval__begin(f->iv, 0), 0);
	interval__attach(f->iv, &(struct interval_capture){ 0 });
	interval__start(f->iv, since_ns);
}

static void fixture_start(struct fixture *f, const char *name, double interval_s, double duration_s)
{
	fixture_start_since(f, name, interval_s, duration_s, 0);
}

static void fixture_free(struct fixture *f)
{
	interval__free(f->iv);
	proc_table__free(f->procs);
	symbolizer__free(f->sy);
	run_outputs__free(&f->out);
}

/* The samples of the folded file at path (the numbers that end its lines) */
static long folded_samples(const char *path)
{
	char line[1024];
	long n = 0;
	FILE *fp = fopen(path, "r");

	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp)) {
		char *sp = strrchr(line, ' ');

		n += sp ? strtol(sp + 1, NULL, 10) : 0;
	}
	fclose(fp);
	return n;
}

/*
 * The poll's wait: up to the boundary (no timer of its own below a
 * second), or the caller's own work when sooner, 0 once passed; the
 * deadline ends the run
 */
static void test_clock(void **state)
{
	struct fixture f = { 0 };
	const struct profile *p;
	uint64_t start;

	fixture_start(&f, "clock.folded", 1.0, 2.5);
	p = interval__profile(f.iv);
	start = p->start_ns;
	assert_true(start > 0 && start <= mono_ns());
	assert_int_equal(interval__cut_ns(f.iv), start + 1000000000ULL);
	assert_int_equal(interval__poll_timeout_ms(f.iv, start, 0), 1000);
	assert_int_equal(interval__poll_timeout_ms(f.iv, start + 400000000ULL, 0), 600);
	assert_int_equal(interval__poll_timeout_ms(f.iv, start + 950000000ULL, 0), 50);
	/* the caller's work due first; a due time past the boundary does not delay it */
	assert_int_equal(interval__poll_timeout_ms(f.iv, start, start + 250000000ULL), 250);
	assert_int_equal(
		interval__poll_timeout_ms(f.iv, start + 950000000ULL, start + 5000000000ULL), 50);
	assert_int_equal(
		interval__poll_timeout_ms(f.iv, start + 300000000ULL, start + 200000000ULL), 0);
	/* rounded up: a poll that ends before the boundary would only poll again */
	assert_int_equal(interval__poll_timeout_ms(f.iv, start + 999999000ULL, 0), 1);
	assert_int_equal(interval__poll_timeout_ms(f.iv, start + 1000000000ULL, 0), 0);
	assert_false(interval__boundary_passed(f.iv, start + 999999999ULL));
	assert_true(interval__boundary_passed(f.iv, start + 1000000000ULL));
	assert_false(interval__deadline_passed(f.iv, start + 2400000000ULL));
	assert_true(interval__deadline_passed(f.iv, start + 3200000000ULL));
	/* a boundary past the deadline is the run's end, not a period's */
	assert_true(interval__boundary_passed(f.iv, start + 3200000000ULL));
	fixture_free(&f);

	/* neither a boundary nor a deadline: a second at most, no 100 ms timer */
	memset(&f, 0, sizeof(f));
	fixture_start(&f, "nocut.folded", 0, 0);
	start = interval__profile(f.iv)->start_ns;
	assert_int_equal(interval__poll_timeout_ms(f.iv, start, 0), 1000);
	assert_int_equal(interval__poll_timeout_ms(f.iv, start + 5000000000ULL, 0), 1000);
	assert_int_equal(interval__poll_timeout_ms(f.iv, start, start + 30000000ULL), 30);
	fixture_free(&f);
}

/*
 * The first period counts from when sampling began (the first event's
 * attach, before the run loop's set-up), so that no sample of it is older
 * than its start: its boundary, cut, -d deadline and pprof time from
 * there; a time not yet come is taken as now.
 */
static void test_start_since_sampling(void **state)
{
	struct fixture f = { 0 };
	const struct profile *p;
	uint64_t since = mono_ns() - 40000000ULL, since_real = real_ns() - 40000000ULL, start;

	fixture_start_since(&f, "since.folded", 1.0, 2.5, since);
	p = interval__profile(f.iv);
	assert_int_equal(p->start_ns, since);
	assert_int_equal(interval__cut_ns(f.iv), since + 1000000000ULL);
	assert_true(interval__deadline_passed(f.iv, since + 2500000000ULL));
	assert_false(interval__deadline_passed(f.iv, since + 2499999999ULL));
	/* pprof's wall-clock start, moved back as much (1 ms for the clocks' reads apart) */
	assert_true(p->start_realtime_ns <= since_real + 1000000ULL);
	assert_true(p->start_realtime_ns + 1000000ULL >= since_real);
	assert_int_equal(record(f.iv, since + 10), 0);
	assert_int_equal(interval__release(f.iv, false), 0);
	assert_int_equal(p->nr_samples, 1);
	fixture_free(&f);

	memset(&f, 0, sizeof(f));
	fixture_start_since(&f, "future.folded", 1.0, 0, mono_ns() + 5000000000ULL);
	start = interval__profile(f.iv)->start_ns;
	assert_true(start > 0 && start <= mono_ns());
	fixture_free(&f);
}

/*
 * Records at or past the cut are carried, in order, to the next period;
 * the period ended at its boundary holds those before it alone, its output
 * written; the last period drops what is past its cut.
 */
static void test_cut_and_carry(void **state)
{
	struct fixture f = { 0 };
	const struct profile *p;
	uint64_t start, cut;

	fixture_start(&f, "carry.folded", 0.05, 0);
	p = interval__profile(f.iv);
	start = p->start_ns;
	cut = interval__cut_ns(f.iv);
	assert_int_equal(cut, start + 50000000ULL);
	assert_int_equal(record(f.iv, start + 10), 0);
	assert_int_equal(record(f.iv, cut - 1), 0);
	assert_int_equal(record(f.iv, cut), -ECANCELED);
	assert_int_equal(record(f.iv, cut + 25000000ULL), -ECANCELED);
	/* past the next cut too: carried on again */
	assert_int_equal(record(f.iv, cut + 75000000ULL), -ECANCELED);
	/* the poll's end, as the run loop has it: the records queued are in */
	assert_int_equal(interval__release(f.iv, false), 0);
	assert_int_equal(p->nr_samples, 2);

	/* the boundary passed, as the run loop sees it */
	while (mono_ns() <= cut)
		usleep(10000);
	assert_int_equal(interval__end_at_boundary(f.iv), 0);
	assert_null(interval__profile(f.iv));
	assert_int_equal(folded_samples(tpath("carry.folded")), 2);

	assert_int_equal(interval__begin_next(f.iv), 0);
	p = interval__profile(f.iv);
	assert_int_equal(p->start_ns, cut); /* from the boundary, not from now */
	assert_int_equal(interval__cut_ns(f.iv), cut + 50000000ULL);
	assert_int_equal(p->nr_samples, 2);

	/*
	 * The last period, its end decided after cut + 75 ms: cut then, the
	 * record carried on counted, one stamped later dropped, not carried
	 */
	while (mono_ns() <= cut + 75000000ULL)
		usleep(10000);
	interval__last(f.iv);
	assert_true(interval__cut_ns(f.iv) <= mono_ns());
	assert_int_equal(record(f.iv, mono_ns() + 10000000000ULL), 0);
	assert_int_equal(p->nr_samples, 2);
	assert_int_equal(interval__take_rest(f.iv), 0);
	assert_int_equal(p->nr_samples, 3);
	assert_int_equal(p->end_ns, interval__cut_ns(f.iv));
	fixture_free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clock),
		cmocka_unit_test(test_start_since_sampling),
		cmocka_unit_test(test_cut_and_carry),
	};

	return cmocka_run_group_tests(tests, setup, teardown_tmpdir);
}

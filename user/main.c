// SPDX-License-Identifier: MIT
/*
 * bpfprof: orchestration only. cli → checks → outputs opened → session
 * (BPF) → agg (ring buffer → profile) → symbolize → writers → summary.
 * Everything collected is written on a duration end, Ctrl-C, SIGTERM or the
 * target's exit; once the run has ended (symbolizing, writing), a second
 * signal removes the temporaries and exits, leaving no partial file.
 * In continuous mode (--interval) each interval gets a fresh profile and its
 * own set of outputs, so memory stays flat however long it runs.
 */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "agg.h"
#include "buf.h"
#include "cli.h"
#include "jit_images.h"
#include "jvm_attach.h"
#include "jvm_perfmap.h"
#include "interp.h"
#include "log.h"
#include "preflight.h"
#include "proc_table.h"
#include "profile.h"
#include "report.h"
#include "run_outputs.h"
#include "session.h"
#include "sym_debuginfod.h"
#include "symbolize.h"
#include "targets.h"
#include "unwind_cache.h"
#include "unwind_check.h"
#include "unwind_copies.h"
#include "xray.h"

/*
 * Everything one run holds, in one place, passed to what needs it: bpfprof
 * keeps no mutable state in globals but what its signal handler reads.
 */
struct run {
	struct bpfprof_config cfg;
	/* each profile's files, perf.data streams, JIT images, --push (run_outputs.h) */
	struct run_outputs out;
	/* --call-graph: the BPF walker's view of the processes (NULL when it could not be set up) */
	struct unwinder *unwinder;
	/* --unwind-cache: built tables kept across runs (NULL: none, or refused) */
	struct unwind_cache *unwind_cache;
	/* --check-unwind: libdwfl's unwind of copied stacks against the BPF walk */
	struct unwind_check *checker;
	/* samples sent with a stack copy for want of tables, walked here (unwind_copies.h) */
	struct unwind_copies *copies;
	struct bpfprof_sample *copy_sample; /* the sample a copy makes */
	struct bpfprof_ustack_copy
		*copy_check; /* --check-unwind: the copy and its walk, for libdwfl */
	/* the JVMs asked for their perf map at the end of the interval (jvm_perfmap.h) */
	struct jvm_perfmaps *jvm_maps;
	/* the symbolizer, for the observer's callbacks */
	struct symbolizer *sy;
	/* the interpreters, Python's frames (interp.h; NULL before the session) */
	struct interps *interps;
	uint64_t root_walks; /* unwinder__root_walks of every profile so far, as the BPF counters */
	/* samples' cgroup ids -> paths, kept across intervals and after a cgroup is removed */
	struct cgroup_cache *cgroups;
	/*
	 * The processes: their maps (remembered across intervals and after
	 * they exit), notices, exec and mmap events (proc_table.h)
	 */
	struct proc_table *procs;
	/*
	 * Records read past an interval's cut, in ring-buffer order, for the
	 * next interval: each a u64 size, then its bytes padded to 8.
	 */
	struct buf carry;
};

/* Data pages of each CPU's ring of the mmap events (mmap_events.h): 64 KiB a CPU */
#define MMAP_EVENTS_PAGES 16

/* The outputs a second signal abandons (the run's cfg.outputs), for the handler */
static struct output *volatile sig_outputs;
static volatile sig_atomic_t sig_nr_outputs;
static volatile sig_atomic_t exiting;
/* an interval (or the run) is being symbolized and written */
static volatile sig_atomic_t finishing;

static void on_signal(int sig)
{
	int i;

	if (finishing && exiting) {
		/* second signal while finishing: leave no partial file behind */
		for (i = 0; i < sig_nr_outputs; i++)
			output__abort_signal_safe(&sig_outputs[i]);
		_exit(128 + sig);
	}
	exiting = sig;
}

/* A closed stdout pipe is an error to report, not a death that leaves temporaries. */
static void on_sigpipe(int sig)
{
}

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int watch_fd(void *ctx, int fd)
{
	return session__watch_fd(ctx, fd);
}

static void unwatch_fd(void *ctx, int fd)
{
	session__unwatch_fd(ctx, fd);
}

/* The end of the current profile's sampled time: the -d deadline or the next interval, 0 for none. */
static uint64_t cut_of(const struct run *r, uint64_t start, uint64_t next_interval)
{
	uint64_t end = r->cfg.duration_s > 0 ? start + (uint64_t)(r->cfg.duration_s * 1e9) : 0;

	return next_interval && (!end || next_interval < end) ? next_interval : end;
}

/* How long the next poll may wait (ms): at most 100, and not past the run's end or the next interval. */
static int poll_timeout_ms(struct run *r, uint64_t now, uint64_t start, uint64_t next_interval)
{
	uint64_t wait = 100000000ULL,
		 end = r->cfg.duration_s > 0 ? start + (uint64_t)(r->cfg.duration_s * 1e9) : 0;

	if (next_interval && (!end || next_interval < end))
		end = next_interval;
	if (end && end <= now)
		return 0;
	if (end && end - now < wait)
		wait = end - now;
	return (int)((wait + 999999) / 1000000);
}

/*
 * A process's maps, new or grown (agg_observer; ctx: the run), after the
 * process table has had its files pinned and its tables queued
 * (proc_table__maps_changed): its outputs' records (run_outputs.h).
 */
static int maps_changed(void *ctx, const struct profile *p, uint32_t proc, uint64_t time_ns)
{
	return run_outputs__maps(&((struct run *)ctx)->out, p, proc, time_ns);
}

static int sampled(void *ctx, const struct profile *p, uint32_t proc,
		   const struct profile_sample *s)
{
	run_outputs__sample(&((struct run *)ctx)->out, s, false);
	return 0;
}

static int blocked(void *ctx, const struct profile *p, uint32_t proc,
		   const struct profile_sample *s)
{
	run_outputs__sample(&((struct run *)ctx)->out, s, true);
	return 0;
}

/*
 * A ring-buffer batch was read: perf.data's round marker, not while stack
 * copies wait for their process's tables: their samples come later than
 * newer ones, and perf report rejects a record older than what a marker let
 * it deliver ("out of order events")
 */
static void batch_read(struct run *r)
{
	if (!unwind_copies__nr_held(r->copies))
		run_outputs__round(&r->out);
}

/* The counters a profile's summary gives the difference of (report.h); per_cpu: each CPU's drops, or NULL */
static void counters_now(struct run *r, struct session *s, struct report_counters *c,
			 uint64_t *per_cpu)
{
	uint64_t samples;

	memset(c, 0, sizeof(*c));
	if (s)
		session__stats(s, &samples, &c->dropped, per_cpu);
	if (s && r->cfg.offcpu)
		session__offcpu_stats(s, &c->off);
	interps__stats(r->interps, INTERP_PYTHON, &c->py, sizeof(c->py));
}

/* One profile and its outputs: the whole run, or one --interval. */
struct interval {
	struct run *run;
	struct profile *p;
	struct agg *agg;
	/*
	 * Where its sampled time ends (CLOCK_MONOTONIC ns): the -d deadline or
	 * the interval's boundary, known ahead, or when the run's end was
	 * decided (a signal, the targets' exit). Records stamped from then on
	 * are not its own, however late they are read (both CPUs busy, a
	 * backlog in the ring buffer). 0 while there is none.
	 */
	uint64_t cut_ns;
	bool last; /* the run's last profile: records past the cut are dropped, not carried */
	struct report_counters before; /* the run's counters when it began (report.h) */
};

/*
 * A record past the interval's cut goes to the next interval, and stops the
 * ring buffer's consumer (-ECANCELED, after libbpf has counted the record
 * consumed) so that this interval can end.
 */
static int carry_record(struct run *r, const void *data, size_t size)
{
	buf__put_u64(&r->carry, size);
	buf__put_bytes(&r->carry, data, size);
	buf__put_zeros(&r->carry, (8 - size % 8) % 8);
	return r->carry.err ?: -ECANCELED;
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct interval *iv = ctx;
	struct run *r = iv->run;
	uint64_t t;
	int err;

	/* what the notices' thread captured, the exec mappings: before the record */
	if ((err = proc_table__take_captured(r->procs)))
		return err;
	proc_table__exec_mappings(r->procs);
	if (size >= 4 && *(const uint32_t *)data == BPFPROF_REC_USTACK_COPY) {
		report__check_stack(r->checker, data, size);
		return 0;
	}
	if (size >= 4 && *(const uint32_t *)data == BPFPROF_REC_SAMPLE_COPY) {
		/* walked here with the tables the BPF walk lacked, then taken as the sample it makes */
		if (!r->copies)
			return 0;
		err = unwind_copies__sample(r->copies, data, size, r->copy_sample, &size);
		if (err)
			return err == -ENOMEM ? err :
						0; /* 1: kept until its process is registered */
		if (r->checker) {
			size_t n;

			unwind_copies__check_record(r->copies, data, r->copy_check, &n);
			report__check_stack(r->checker, r->copy_check, n);
		}
		data = r->copy_sample;
	}
	if (iv->cut_ns && !agg__record_time(data, size, &t) && t >= iv->cut_ns)
		return iv->last ? 0 : carry_record(r, data, size);
	err = agg__record(iv->agg, data, size);

	return err == -ENOMEM ? err : 0;
}

/* A stack copy's sample, walked once its process was registered */
static int on_released(void *ctx, const struct bpfprof_sample *s, size_t size)
{
	int err = on_record(ctx, (void *)s, size);

	return err == -ECANCELED ? 0 : err; /* carried to the next interval */
}

/* The copies whose processes are registered now (all: every one, the run's end) */
static int release_copies(struct interval *iv, bool all)
{
	struct run *r = iv->run;

	return r->copies ? unwind_copies__release(r->copies, all, on_released, iv) : 0;
}

/* The notice of a process's first samples, read before the samples queued ahead of them (proc_table.h) */
static int on_notice(void *ctx, void *data, size_t size)
{
	return proc_table__notice(((struct interval *)ctx)->run->procs, data, size);
}

/*
 * Hand the records carried past the last interval's cut to the current one,
 * in their order; those past its cut too are carried on. Returns 0 or -ENOMEM.
 */
static int feed_carried(struct interval *iv)
{
	struct buf b = iv->run->carry;
	size_t off = 0;
	int err = 0;

	memset(&iv->run->carry, 0, sizeof(iv->run->carry));
	while (!err && off + 8 <= b.len) {
		uint64_t size;

		memcpy(&size, b.data + off, 8);
		err = on_record(iv, b.data + off + 8, size);
		off += 8 + size + (8 - size % 8) % 8;
		if (err == -ECANCELED)
			err = 0;
	}
	buf__free(&b);
	return err;
}

/* The unwinder, and the tables of the -p targets before their samples count. */
static int unwinder_start(struct run *r, struct session *s)
{
	struct unwind_copies_procs procs;
	struct unwind_sink sink;
	int i, err;

	session__unwind_sink(s, &sink);
	r->unwinder = unwinder__new(&sink, r->cfg.call_graph == CALL_GRAPH_DWARF, "/proc");
	if (!r->unwinder)
		return -errno;
	proc_table__set_unwinder(r->procs, r->unwinder);
	if (r->cfg.call_graph == CALL_GRAPH_DWARF && sink.budget) {
		r->unwind_cache = unwind_cache__open(r->cfg.unwind_cache, r->cfg.unwind_cache_bytes,
						     r->cfg.unwind_cache_set);
		unwinder__set_cache(r->unwinder, r->unwind_cache);
	}
	if (r->cfg.call_graph == CALL_GRAPH_DWARF) {
		proc_table__copies_procs(r->procs, &procs);
		r->copies = unwind_copies__new(r->unwinder, r->cfg.max_stack, &procs);
		r->copy_sample = malloc(sizeof(*r->copy_sample));
		r->copy_check = malloc(sizeof(*r->copy_check));
		if (!r->copies || !r->copy_sample || !r->copy_check)
			return -ENOMEM;
	}
	for (i = 0; i < r->cfg.nr_pids; i++) {
		err = proc_table__register(r->procs, r->cfg.pids[i], true);
		if (err == -ENOMEM)
			return err;
		if (err)
			pr_debug("unwind: pid %u: %s\n", r->cfg.pids[i], strerror(-err));
	}
	return 0;
}

/*
 * Fresh profile, aggregator and outputs (temporary files) for one interval.
 * boundary: when the last interval ended (CLOCK_MONOTONIC: its ring buffer
 * drained at its boundary), 0 for now. It starts there, not once the last
 * interval is written: the samples queued meanwhile are its own, and stamps
 * one interval apart do not share a second (a 1 s interval written in 0.6 s
 * used to overwrite the previous one's files).
 */
static int interval_begin(struct run *r, struct interval *iv, struct session *s,
			  struct symbolizer *sy, uint64_t boundary)
{
	struct agg_observer obs = {
		.maps_changed = maps_changed, .sample = sampled, .offcpu = blocked, .ctx = r
	};
	int err;

	memset(iv, 0, sizeof(*iv));
	iv->run = r; /* on_record reaches the run through the interval */
	counters_now(r, s, &iv->before, NULL);
	iv->p = profile__new();
	iv->agg = iv->p ? agg__new(iv->p, r->procs, 1000000000ULL / r->cfg.freq_hz) : NULL;
	if (!iv->agg)
		return -ENOMEM;
	interps__hook(r->interps, iv->agg);
	iv->p->event = profile__intern(iv->p, r->cfg.event);
	iv->p->freq_hz = r->cfg.freq_hz;
	iv->p->offcpu = r->cfg.offcpu;
	iv->p->offcpu_thresh_ns = r->cfg.offcpu_thresh_us * 1000;
	iv->p->period_ns = 1000000000ULL / r->cfg.freq_hz;
	iv->p->start_ns = now_ns(CLOCK_MONOTONIC);
	iv->p->start_realtime_ns = now_ns(CLOCK_REALTIME);
	if (boundary && boundary < iv->p->start_ns) {
		iv->p->start_realtime_ns -= iv->p->start_ns - boundary;
		iv->p->start_ns = boundary;
	}
	/* the maps of processes gone before this profile's start go */
	proc_table__new_profile(r->procs, iv->p->start_ns, now_ns(CLOCK_MONOTONIC));
	err = run_outputs__begin(&r->out, iv->p, sy, boundary);
	if (err)
		return err;
	agg__set_observer(iv->agg, &obs);
	return 0;
}

/* Drop what interval_begin made: streams, temporaries (if not committed), profile. */
static void interval_free(struct run *r, struct interval *iv)
{
	run_outputs__end(&r->out);
	agg__free(iv->agg);
	profile__free(iv->p);
	memset(iv, 0, sizeof(*iv));
	iv->run = r;
}

/* The summary's lines after p's lost samples (report.h); d: p's counters */
static void report_counters(struct run *r, struct session *s, const struct profile *p,
			    const struct report_counters *d)
{
	uint64_t same, shorter, differ, run_ns, runs, st[BPFPROF_STAT_NR];

	if (r->cfg.offcpu) {
		report__offcpu_summary(stderr, p, r->cfg.output_dir ? 0 : r->cfg.top_n);
		report__offcpu_counts(stderr, &d->off, r->cfg.offcpu_thresh_us);
	}
	session__walk_stats(s, st);
	r->root_walks += unwinder__root_walks(p, r->cfg.call_graph == CALL_GRAPH_FP);
	report__walks(stderr, st, r->root_walks, r->unwinder, r->copies, r->unwind_cache,
		      proc_table__mmap_events(r->procs),
		      r->cfg.call_graph == CALL_GRAPH_DWARF ? "dwarf" : "fp");
	if (log_verbosity) {
		struct session_map_entries me;

		session__map_entries(s, &me);
		report__held(stderr, r->sy, r->unwinder, proc_table__maps_cache(r->procs), &me,
			     proc_table__notice_thread(r->procs));
	}
	if (interps__has(r->interps, INTERP_PYTHON))
		report__python(stderr, &d->py);
	if (log_verbosity) {
		struct v8_stats v8;

		if (!interps__stats(r->interps, INTERP_V8, &v8, sizeof(v8)))
			report__v8(stderr, &v8);
	}
	if (!session__bpf_run_time(s, &run_ns, &runs))
		report__bpf_cost(run_ns, runs);
	if (r->checker)
		report__unwind_check(stderr, unwind_check__stats(r->checker));
	if (r->cfg.check_user_stacks) {
		session__check_stats(s, &same, &shorter, &differ);
		report__user_stacks(stderr, same, shorter, differ);
	}
}

/* Everything queued belongs to the ending interval; then symbolize and write. */
static int interval_end(struct run *r, struct interval *iv, struct session *s,
			struct symbolizer *sy)
{
	struct profile *p = iv->p;
	struct report_counters now, d;
	int err, nr_cpus = session__nr_cpus(s);
	uint64_t per_cpu[nr_cpus];

	/* the cut, where the caller knows it: not when symbolizing begins */
	if (!p->end_ns)
		p->end_ns = iv->cut_ns ?: now_ns(CLOCK_MONOTONIC);
	err = session__drain(s);
	if (err < 0 && err != -ECANCELED) {
		pr_warn("ring buffer: %s\n", strerror(-err));
		return err;
	}
	if (err)
		batch_read(r);
	/* what the notices' thread captured since the last record */
	err = proc_table__take_captured(r->procs);
	if (err)
		return err;
	counters_now(r, s, &now, NULL);
	report__counters_diff(&now, &iv->before, &d);
	p->nr_lost = d.dropped;
	if (r->cfg.offcpu)
		p->nr_offcpu_lost = d.off.dropped;
	if (agg__nr_bad(iv->agg))
		pr_warn("%llu malformed ring buffer records skipped\n",
			(unsigned long long)agg__nr_bad(iv->agg));
	/* running JVMs write their perf maps for the symbolizer */
	if (!r->cfg.no_jvm_perfmap)
		r->jvm_maps = jvm_perfmaps__ask(p, sy, 2 * JVM_ATTACH_TIMEOUT_MS);
	err = symbolizer__symbolize(sy, p);
	if (err) {
		jvm_perfmaps__free(r->jvm_maps);
		r->jvm_maps = NULL;
		pr_warn("symbolization failed: %s\n", strerror(-err));
		return err;
	}
	err = run_outputs__prepare(&r->out, p, r->jvm_maps);
	if (err)
		return err;
	err = run_outputs__write(&r->out, p);
	report__summary(stderr, p, (double)(p->end_ns - p->start_ns) / 1e9,
			r->cfg.output_dir ? 0 : r->cfg.top_n);
	report__unnamed_jit(stderr, p, jit_images__why_unnamed,
			    &(struct jit_images_why){ r->sy, r->jvm_maps, r->cfg.no_jvm_perfmap });
	jvm_perfmaps__free(r->jvm_maps);
	r->jvm_maps = NULL;
	/* the drops go on while it is written: counted up to now (each CPU's: since the start) */
	counters_now(r, s, &now, per_cpu);
	report__counters_diff(&now, &iv->before, &now);
	report__lost(stderr, now.dropped, per_cpu, nr_cpus, r->cfg.ringbuf_bytes);
	report_counters(r, s, p, &d);
	if (!p->nr_samples)
		pr_warn("no samples collected\n");
	run_outputs__prune(&r->out);
	return err;
}

int main(int argc, char **argv)
{
	struct run run = { 0 }, *r = &run;
	struct session_opts sopts = { 0 };
	struct symbolizer *sy = NULL;
	struct interval iv = { .run = r };
	struct session *s = NULL;
	uint64_t start, next_interval = 0, last_progress = 0, last_reap = 0, ended, stop_at = 0;
	bool tty, stop = false;
	struct targets tg;
	int err, i, exec_status = 0;
	struct sigaction sa = { .sa_handler = on_signal }, pipe_sa = { .sa_handler = on_sigpipe },
			 old;

	/*
	 * One malloc arena for every thread: the unwinder's and the symbolizer's
	 * threads would each get an arena of their own, which glibc returns to
	 * the system far less readily (churn.sh under -a: 8.3 kB of RssAnon per
	 * process started, 3.5 kB with one arena).
	 */
	mallopt(M_ARENA_MAX, 1);
	if (argc > 1 && !strcmp(argv[1], "xray"))
		return xray__main(argc - 1, argv + 1);
	targets__init(&tg, NULL, 0);
	session__libbpf_log();
	err = cli__parse(argc, argv, &r->cfg);
	if (err)
		return err;
	targets__init(&tg, r->cfg.pids, r->cfg.nr_pids);
	sig_outputs = r->cfg.outputs;
	sig_nr_outputs = r->cfg.nr_outputs;

	err = preflight__check_system();
	if (err)
		return 1;
	for (i = 0; i < r->cfg.nr_pids; i++) {
		uint32_t tgid = preflight__tgid_of(r->cfg.pids[i]);

		if (!preflight__process_alive(r->cfg.pids[i]) || !tgid) {
			pr_warn("no such process: %u\n", r->cfg.pids[i]);
			return 1;
		}
		if (tgid != r->cfg.pids[i])
			pr_info("%u is a thread of process %u: profiling the process\n",
				r->cfg.pids[i], tgid);
		r->cfg.pids[i] = tgid;
	}
	/* --push: its checks (auth file) before sampling, and its thread */
	if (run_outputs__init(&r->out, &r->cfg))
		return 1;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/* a handler, unlike SIG_IGN, is reset by the command's exec; an inherited SIG_IGN stays */
	sigemptyset(&pipe_sa.sa_mask);
	if (!sigaction(SIGPIPE, NULL, &old) && old.sa_handler != SIG_IGN)
		sigaction(SIGPIPE, &pipe_sa, NULL);

	r->sy = sy = symbolizer__new("/proc/kallsyms", "/proc");
	if (!sy || symbolizer__set_jit_max_size(sy, r->cfg.jit_max_bytes))
		return 1;
	symbolizer__set_demangle(sy, !r->cfg.no_demangle);
	/* the kernel symbols are read while sampling, not after it */
	if (symbolizer__load_kernel_async(sy))
		pr_debug("kernel symbols: no thread; read when first needed\n");
	r->cgroups = cgroup_cache__new(NULL);
	r->procs = proc_table__new("/proc", true);
	if (!r->cgroups || !r->procs)
		return 1;
	proc_table__set_cgroups(r->procs, r->cgroups);
	proc_table__set_symbolizer(r->procs, sy);
	/* outputs exist (as temporaries) before sampling starts: a bad path fails now */
	err = interval_begin(r, &iv, NULL, sy, 0);
	if (err)
		goto out;

	if (r->cfg.command) {
		err = targets__start_command(&tg, r->cfg.command);
		if (err) {
			pr_warn("cannot start '%s': %s\n", r->cfg.command[0], strerror(-err));
			goto out;
		}
	}

	sopts.event = r->cfg.event;
	sopts.freq_hz = r->cfg.freq_hz;
	sopts.ringbuf_bytes = r->cfg.ringbuf_bytes;
	sopts.filter_tgid = !r->cfg.all_cpus;
	sopts.follow_forks = r->cfg.command && !r->cfg.all_cpus;
	sopts.check_user_stacks = r->cfg.check_user_stacks;
	sopts.offcpu = r->cfg.offcpu;
	sopts.offcpu_thresh_ns = r->cfg.offcpu_thresh_us * 1000;
	sopts.unwind = true;
	sopts.unwind_budget = r->cfg.call_graph == CALL_GRAPH_DWARF ? r->cfg.unwind_memory : 0;
	sopts.copy_stacks = true;
	sopts.check_unwind_every = r->cfg.check_unwind ? 4 : 0;
	sopts.max_user_stack = r->cfg.max_stack;
	sopts.cgroup_ids = r->cfg.cgroup_ids;
	sopts.nr_cgroups = (size_t)r->cfg.nr_cgroups;
	sopts.on_record = on_record;
	sopts.on_notice = on_notice;
	sopts.ctx = &iv;
	err = session__open(&sopts, &s);
	if (err)
		goto out;
	/*
	 * The notices on a thread of their own (notice_thread.h): a reader
	 * behind a backlog read them too late. BPFPROF_NOTICES_INLINE=1 (for
	 * tests: life.sh shows the difference) leaves them to this thread, as
	 * does a thread that cannot start.
	 */
	if (!getenv("BPFPROF_NOTICES_INLINE") || strcmp(getenv("BPFPROF_NOTICES_INLINE"), "1")) {
		/* started while this thread polls nothing: the ring has one reader at a time */
		err = proc_table__start_notices(r->procs, session__notices_fd(s),
						r->cfg.jit_max_bytes);
		if (err)
			pr_info("notices read between the samples: no thread (%s)\n",
				strerror(-err));
		else
			session__notices_elsewhere(s);
		err = 0;
	}
	/*
	 * after the sampling events: a script (or a user) that waits for
	 * bpfprof's perf events before starting its workload must not take
	 * these for them (debuginfo.sh and run.sh sampled nothing so)
	 */
	if (r->cfg.call_graph == CALL_GRAPH_DWARF)
		proc_table__watch_mmaps(r->procs, MMAP_EVENTS_PAGES);
	if (r->cfg.check_unwind && !(r->checker = unwind_check__new())) {
		err = -ENOMEM;
		goto out;
	}
	{
		struct interp_env env = { .proc_dir = "/proc",
					  .attach = session__interp_attach,
					  .attach_ctx = s };

		r->interps = interps__new(&env, (r->cfg.no_python ? 0 : 1u << INTERP_PYTHON) |
							(r->cfg.no_node ? 0 : 1u << INTERP_V8));
		if (!r->interps) {
			err = -errno;
			goto out;
		}
		interps__hook(r->interps, iv.agg);
	}
	err = unwinder_start(r, s);
	if (err) {
		pr_warn("cannot set up the unwinder: %s\n", strerror(-err));
		goto out;
	}
	for (i = 0; i < r->cfg.nr_pids && !err; i++)
		err = session__add_target(s, r->cfg.pids[i]);
	if (!err && tg.child > 0 && !r->cfg.all_cpus)
		err = session__add_target_on_exec(s, (uint32_t)tg.child);
	if (err) {
		pr_warn("cannot add target: %s\n", strerror(-err));
		goto out;
	}
	targets__open_pidfds(&tg, watch_fd, s);

	iv.p->start_ns = start = now_ns(CLOCK_MONOTONIC);
	iv.p->start_realtime_ns = now_ns(CLOCK_REALTIME); /* pprof's time: when sampling started */
	if (r->cfg.interval_s > 0)
		next_interval = start + (uint64_t)(r->cfg.interval_s * 1e9);
	iv.cut_ns = cut_of(r, start, next_interval);
	targets__release(&tg);
	tty = r->cfg.progress && isatty(STDERR_FILENO);
	while (!stop) {
		uint64_t now;
		int err2;

		err = session__poll(s, poll_timeout_ms(r, now_ns(CLOCK_MONOTONIC), start,
						       next_interval));
		/* -ECANCELED: a record past the cut was read, the cut has passed */
		if (err < 0 && err != -EINTR && err != -ECANCELED) {
			pr_warn("ring buffer: %s\n", strerror(-err));
			break;
		}
		err2 = release_copies(&iv, false);
		if (err2) {
			err = err2;
			goto out;
		}
		if (err > 0 || err == -ECANCELED)
			batch_read(r);
		err = 0;
		now = now_ns(CLOCK_MONOTONIC);
		if (exiting)
			stop = true;
		if (r->cfg.duration_s > 0 && (double)(now - start) >= r->cfg.duration_s * 1e9) {
			stop = true;
			/* the deadline, however late this loop got there */
			stop_at = start + (uint64_t)(r->cfg.duration_s * 1e9);
		}
		if (targets__child_exited(&tg))
			stop = true;
		if (r->cfg.nr_pids && !targets__alive(&tg, now, unwatch_fd, s)) {
			pr_info("every target process has exited\n");
			stop = true;
		}
		/*
		 * Each boundary passed ends its interval there, also one passed
		 * before the run's end (both read late, after a backlog)
		 */
		while (next_interval && now >= next_interval &&
		       (!stop_at || next_interval < stop_at)) {
			if (tty)
				fprintf(stderr, "\r\033[K");
			finishing = 1;
			/*
			 * The interval ends at its boundary: its records are those
			 * stamped before it, however late they are read; the next
			 * one starts there, with the records carried past it.
			 */
			iv.p->end_ns = next_interval;
			/* the copies kept for a registration are this interval's: walked now */
			err = release_copies(&iv, true);
			if (!err)
				err = interval_end(r, &iv, s, sy);
			ended = iv.p->end_ns;
			interval_free(r, &iv);
			/* paths of cgroups no sample named for a whole interval go */
			cgroup_cache__expire(r->cgroups);
			finishing = 0;
			if (!err)
				err = interval_begin(r, &iv, s, sy, ended);
			if (err)
				goto out;
			next_interval += (uint64_t)(r->cfg.interval_s * 1e9);
			iv.cut_ns = cut_of(r, start, next_interval);
			err = feed_carried(&iv);
			if (err)
				goto out;
		}
		if (now - last_reap >= 1000000000ULL) {
			last_reap = now;
			/* exited processes: their registrations, the maps this profile has taken */
			proc_table__reap(r->procs, now, iv.cut_ns);
			session__forget_gone(s); /* BPF's first-sample state of exited processes */
		}
		if (tty && now - last_progress >= 1000000000ULL) {
			struct report_counters c;

			last_progress = now;
			counters_now(r, s, &c, NULL);
			report__counters_diff(&c, &iv.before, &c);
			report__progress(stderr, (double)(now - start) / 1e9, iv.p->nr_samples,
					 c.dropped);
		}
	}
	finishing = 1; /* from here a second signal abandons the outputs */
	/*
	 * The sampled time ends at the deadline, or where the run's end was
	 * decided; the records of this interval carried past an earlier cut
	 * come first, then the ring buffer's, up to the cut.
	 */
	iv.cut_ns = stop_at ?: now_ns(CLOCK_MONOTONIC);
	iv.last = true;
	session__stop(s);
	/* no notice comes after the stop: those left are captured, then merged at the drain */
	proc_table__stop_notices(r->procs);
	if (release_copies(&iv, true) || feed_carried(&iv)) {
		err = -ENOMEM;
		goto out;
	}
	iv.p->end_ns = iv.cut_ns;
	if (tty)
		fprintf(stderr, "\r\033[K");

	/* the run ended first (duration, signal): stop the command as perf does */
	targets__stop_child(&tg);
	/* a command that could not be started is bpfprof's exit status, as a shell's (127, 126) */
	exec_status = targets__exec_status(&tg);
	if (!exec_status && tg.child_done && WIFEXITED(tg.child_status) &&
	    WEXITSTATUS(tg.child_status))
		pr_warn("command exited with status %d\n", WEXITSTATUS(tg.child_status));
	/* debug files from debuginfod: only now that sampling has stopped */
	if (!r->cfg.no_debuginfod && !debuginfod__setup(r->cfg.debuginfod_urls)) {
		struct debuginfod_opts dopts = { .deadline_ms = r->cfg.debuginfod_deadline_ms,
						 .progress = tty };

		symbolizer__use_debuginfod(sy, &dopts);
	}
	err = interval_end(r, &iv, s, sy);
	i = run_outputs__finish(&r->out);
	err = err ?: i;

out:
	targets__close(&tg);
	interval_free(r, &iv);
	interps__free(r->interps);
	unwind_copies__free(r->copies);
	free(r->copy_sample);
	free(r->copy_check);
	unwinder__free(r->unwinder);
	unwind_cache__free(r->unwind_cache);
	unwind_check__free(r->checker);
	/* before the session: it reads the session's ring; after the interval: merged or freed here */
	if (r->procs)
		proc_table__close_notices(r->procs);
	session__close(s);
	symbolizer__free(sy);
	cgroup_cache__free(r->cgroups);
	proc_table__free(r->procs);
	buf__free(&r->carry);
	run_outputs__free(&r->out);
	/* run is main's: the handler must not read its outputs once main returns */
	sig_nr_outputs = 0;
	return err != 0 ? 1 : exec_status;
}

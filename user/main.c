// SPDX-License-Identifier: MIT
/*
 * bpfprof: orchestration only. Options and checks → the stages set up
 * (symbolizer, process table, the first interval's outputs) → session (BPF)
 * → the run loop (poll; the interval's records: interval.h) → the last
 * interval symbolized, written and summed up → outputs finished.
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
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cgroup.h"
#include "cli.h"
#include "interp.h"
#include "interp_expect.h"
#include "interval.h"
#include "log.h"
#include "mmap_events.h"
#include "preflight.h"
#include "proc_table.h"
#include "run_outputs.h"
#include "session.h"
#include "sym_debuginfod.h"
#include "symbolize.h"
#include "targets.h"
#include "unwind_cache.h"
#include "unwind_check.h"
#include "unwind_copies.h"
#include "unwinder.h"
#include "xray.h"

/*
 * What one run sets up, each part owned here and lent to what needs it
 * (the interval borrows most: interval.h); bpfprof keeps no mutable state
 * in globals but what its signal handler reads.
 */
struct run {
	struct bpfprof_config cfg;
	/* each profile's files, perf.data streams, JIT images, --push (run_outputs.h) */
	struct run_outputs out;
	/* the command and the -p targets: their start, pidfds and exits */
	struct targets tg;
	/* CLOCK_MONOTONIC ns once -p's targets were in the BPF filter: their samples from then on */
	uint64_t targets_ns;
	struct symbolizer *sy;
	/* samples' cgroup ids -> paths, kept across intervals and after a cgroup is removed */
	struct cgroup_cache *cgroups;
	/*
	 * The processes: their maps (remembered across intervals and after
	 * they exit), notices, exec and mmap events (proc_table.h)
	 */
	struct proc_table *procs;
	/* the profile in hand, its records and outputs (interval.h) */
	struct interval *iv;
	/* the session and the unwinder's parts, set up with it, lent to the interval (interval.h) */
	struct interval_capture cap;
	bool tty; /* --progress to a terminal */
	/* a command that could not be started: bpfprof's exit status, as a shell's (127, 126) */
	int exec_status;
	/* start-up's cost (-v, report_cpu), ns of CPU */
	struct {
		uint64_t options, stages, session, rest; /* this thread's, each step */
		uint64_t all; /* every thread's, when the run loop began */
	} startup;
	/* the run's end to its outputs finished (report_cpu): wall and every thread's CPU, ns */
	uint64_t finish_ns, finish_cpu_ns;
};

/* Data pages of each CPU's ring of the mmap events (mmap_events.h): 64 KiB a CPU */
#define MMAP_EVENTS_PAGES 16

/*
 * Files whose symbol tables are read while sampling (symbolizer__preload):
 * a compiler's run maps 8-10, a build's processes a few dozen; each table
 * is held until the end, sampled or not
 */
#define PRELOAD_MAX_FILES 64
/*
 * ... from a second into the run: a shorter one (`-- node` 0.5 s: 8 tables,
 * 20-24 ms of CPU) saved less at its end than the reading cost it
 */
#define PRELOAD_AFTER_NS (1000ULL * 1000 * 1000)

/*
 * With a command or -p (not -a: benchmark 2's own CPU, 5's memory), the
 * locations sampled so far are named while sampling, a pass every AHEAD_NS
 * from PRELOAD_AFTER_NS on (the preloaded tables), so that finalize names
 * only those new since the last pass (symbolizer__symbolize_ahead;
 * benchmark 4). BPFPROF_SYMBOLIZE_AHEAD=0 turns the passes off (A/B runs
 * of one build).
 */
#define AHEAD_NS (200ULL * 1000 * 1000)

/* The run loop's cadences: exited processes reaped, the progress line, targets without a pidfd */
#define REAP_NS (1000ULL * 1000 * 1000)
#define PROGRESS_NS (1000ULL * 1000 * 1000)
#define TARGETS_LOOK_NS (100ULL * 1000 * 1000)
/*
 * Records of processes with an interpreter's frames, read at most this
 * late: their frames are named from the process's memory then (V8's code
 * objects move and go: node 18's optimized run had a quarter of its
 * samples [unknown] with records read at BPF's batch wake-ups alone)
 */
#define INTERP_RECORDS_NS (100ULL * 1000 * 1000)

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

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t cpu_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static double tv_s(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

/*
 * -v: bpfprof's own CPU time (getrusage RUSAGE_SELF: every thread, not the
 * command's) and what start-up took of it before the run loop began, step by
 * step (this thread's), the kernel's share named (bench/ready.sh,
 * docs/BENCHMARKS.md).
 */
static void report_cpu(const struct run *r)
{
	struct session_startup st = { 0 };
	struct rusage ru;

	if (log_verbosity < LOG_INFO || getrusage(RUSAGE_SELF, &ru))
		return;
	if (r->cap.s)
		session__startup(r->cap.s, &st);
	pr_info("CPU: %.3f s (user %.3f, system %.3f); %.1f ms before sampling began: options and "
		"checks %.1f, stages %.1f, kernel probes %.1f, maps and programs %.1f (%u variant%s "
		"verified, %llu instructions; maps %.1f MiB), events %.1f, notices, interpreters, unwinder and kernel names %.1f, "
		"other threads %.1f\n",
		tv_s(ru.ru_utime) + tv_s(ru.ru_stime), tv_s(ru.ru_utime), tv_s(ru.ru_stime),
		(double)r->startup.all / 1e6, (double)r->startup.options / 1e6,
		(double)r->startup.stages / 1e6, (double)st.probe_ns / 1e6,
		(double)st.load_ns / 1e6, st.nr_loads, st.nr_loads == 1 ? "" : "s",
		(unsigned long long)st.verified_insns, (double)st.map_bytes / 1048576.0,
		(double)st.attach_ns / 1e6, (double)r->startup.rest / 1e6,
		(double)(r->startup.all - r->startup.options - r->startup.stages -
			 r->startup.session - r->startup.rest) /
			1e6);
	pr_info("finalize: %.1f ms from the run's end to the outputs finished, %.1f ms of CPU\n",
		(double)r->finish_ns / 1e6, (double)r->finish_cpu_ns / 1e6);
}

static int watch_fd(void *ctx, int fd)
{
	return session__watch_fd(ctx, fd);
}

static void unwatch_fd(void *ctx, int fd)
{
	session__unwatch_fd(ctx, fd);
}

/* Options, the system's and the targets' checks, --push, signals. Returns main's exit status. */
static int from_options(struct run *r, int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal }, pipe_sa = { .sa_handler = on_sigpipe },
			 old;
	int err, i;

	targets__init(&r->tg, NULL, 0);
	session__libbpf_log();
	err = cli__parse(argc, argv, &r->cfg);
	if (err)
		return err;
	targets__init(&r->tg, r->cfg.pids, r->cfg.nr_pids);
	sig_outputs = r->cfg.outputs;
	sig_nr_outputs = r->cfg.nr_outputs;

	if (preflight__check_system())
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
	return 0;
}

/* The stages that come before the session: symbolizer, cgroups, process table, the intervals. 0 or -1. */
static int stages_new(struct run *r)
{
	r->sy = symbolizer__new("/proc/kallsyms", "/proc");
	if (!r->sy || symbolizer__set_jit_max_size(r->sy, r->cfg.jit_max_bytes))
		return -1;
	symbolizer__set_demangle(r->sy, !r->cfg.no_demangle);
	/* finish()'s debuginfod__setup and symbolizer__use_debuginfod, told ahead */
	symbolizer__expect_debuginfod(
		r->sy, !r->cfg.no_debuginfod && debuginfod__would_enable(r->cfg.debuginfod_urls));
	/* the profile's kernel frames named by the kernel, not /proc/kallsyms read whole */
	symbolizer__kernel_names_by_bpf(r->sy);
	r->cgroups = cgroup_cache__new(NULL);
	r->procs = proc_table__new("/proc", true);
	r->iv = r->procs ? interval__new(&r->cfg, &r->out, r->sy, r->procs) : NULL;
	if (!r->cgroups || !r->iv)
		return -1;
	proc_table__set_cgroups(r->procs, r->cgroups);
	proc_table__set_symbolizer(r->procs, r->sy);
	return 0;
}

/* The unwinder, and the tables of the -p targets before their samples count. */
static int unwinder_start(struct run *r)
{
	struct unwind_copies_procs procs;
	struct unwind_sink sink;
	int i, err;

	session__unwind_sink(r->cap.s, &sink);
	r->cap.unwinder = unwinder__new(&sink, r->cfg.call_graph == CALL_GRAPH_DWARF, "/proc");
	if (!r->cap.unwinder)
		return -errno;
	/* bpfprof's own samples walked with the tables others use: none built for it */
	unwinder__set_own_pid(r->cap.unwinder, (uint32_t)getpid());
	proc_table__set_unwinder(r->procs, r->cap.unwinder);
	if (r->cfg.call_graph == CALL_GRAPH_DWARF && sink.budget) {
		r->cap.unwind_cache = unwind_cache__open(
			r->cfg.unwind_cache, r->cfg.unwind_cache_bytes, r->cfg.unwind_cache_set);
		unwinder__set_cache(r->cap.unwinder, r->cap.unwind_cache);
		/* the pool of words maps installed while the command starts */
		unwinder__start(r->cap.unwinder);
	}
	if (r->cfg.call_graph == CALL_GRAPH_DWARF) {
		proc_table__copies_procs(r->procs, &procs);
		r->cap.copies = unwind_copies__new(r->cap.unwinder, r->cfg.max_stack, &procs);
		if (!r->cap.copies)
			return -ENOMEM;
		/* a copy's JavaScript frames, as the BPF walk's V8 step records them */
		if (interps__has(r->cap.interps, INTERP_V8))
			unwind_copies__set_interp(r->cap.copies, interps__copy_frames,
						  r->cap.interps);
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

/* The interpreters this run looks for: 1u << enum interp_kind (BPFPROF_WALK_*'s bits) */
static uint32_t interps_enabled(const struct bpfprof_config *cfg)
{
	_Static_assert(BPFPROF_WALK_PYTHON == 1u << INTERP_PYTHON &&
			       BPFPROF_WALK_HOTSPOT == 1u << INTERP_HOTSPOT &&
			       BPFPROF_WALK_V8 == 1u << INTERP_V8,
		       "BPFPROF_WALK_* by enum interp_kind");
	return (cfg->no_python ? 0 : 1u << INTERP_PYTHON) |
	       (cfg->no_java ? 0 : 1u << INTERP_HOTSPOT) | (cfg->no_node ? 0 : 1u << INTERP_V8);
}

/*
 * Those of them the command or the target processes name, and with -a those
 * the host runs now (interp_expect.h): their unwinders are verified before
 * sampling, the others' at their first process (session_opts.interp_walks)
 */
static uint32_t interps_expected(const struct bpfprof_config *cfg)
{
	uint32_t kinds = cfg->command ? interp_expect_command(cfg->command[0], NULL) : 0;

	for (int i = 0; i < cfg->nr_pids; i++)
		kinds |= interp_expect_pid("/proc", cfg->pids[i]);
	if (cfg->all_cpus)
		kinds |= interp_expect_running("/proc", interps_enabled(cfg) & ~kinds);
	return kinds & interps_enabled(cfg);
}

/*
 * The command started (held before its exec), the session opened with its
 * records going to the interval, the notices' thread, the mmap events, the
 * interpreters and the unwinder, the targets added. Returns 0 or -errno.
 */
static int session_open(struct run *r)
{
	const struct bpfprof_config *cfg = &r->cfg;
	struct session_opts sopts = {
		.event = cfg->event,
		.freq_hz = cfg->freq_hz,
		.ringbuf_bytes = cfg->ringbuf_bytes,
		.filter_tgid = !cfg->all_cpus,
		.follow_forks = cfg->command && !cfg->all_cpus,
		.check_user_stacks = cfg->check_user_stacks,
		.offcpu = cfg->offcpu,
		.offcpu_thresh_ns = cfg->offcpu_thresh_us * 1000,
		.unwind = true,
		.unwind_budget = cfg->call_graph == CALL_GRAPH_DWARF ? cfg->unwind_memory : 0,
		.copy_stacks = true,
		.check_unwind_every = cfg->check_unwind ? 4 : 0,
		.max_user_stack = cfg->max_stack,
		.interp_walks = interps_expected(cfg),
		.interp_more = interps_enabled(cfg),
		.cgroup_ids = cfg->cgroup_ids,
		.nr_cgroups = (size_t)cfg->nr_cgroups,
		.on_record = interval__on_record,
		.on_notice = interval__on_notice,
		.ctx = r->iv,
	};
	struct interp_env env = { .proc_dir = "/proc", .attach = session__interp_attach };
	uint64_t t0, t1;
	int err, i;

	if (cfg->command) {
		err = targets__start_command(&r->tg, cfg->command);
		if (err) {
			pr_warn("cannot start '%s': %s\n", cfg->command[0], strerror(-err));
			return err;
		}
	}
	t0 = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
	err = session__open(&sopts, &r->cap.s);
	t1 = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
	r->startup.session = t1 - t0;
	if (err)
		return err;
	/*
	 * The notices on a thread of their own (notice_thread.h): a reader
	 * behind a backlog read them too late. BPFPROF_NOTICES_INLINE=1 (for
	 * tests: life.sh shows the difference) leaves them to this thread, as
	 * does a thread that cannot start.
	 */
	if (!getenv("BPFPROF_NOTICES_INLINE") || strcmp(getenv("BPFPROF_NOTICES_INLINE"), "1")) {
		/* started while this thread polls nothing: the ring has one reader at a time */
		err = proc_table__start_notices(r->procs, session__notices_fd(r->cap.s),
						cfg->jit_max_bytes);
		if (err)
			pr_info("notices read between the samples: no thread (%s)\n",
				strerror(-err));
		else
			session__notices_elsewhere(r->cap.s);
		/* a capture merged at once (run_loop), not at the next batch of records */
		if (!err && proc_table__notices_wake_fd(r->procs) >= 0 &&
		    session__watch_fd(r->cap.s, proc_table__notices_wake_fd(r->procs)))
			pr_debug("notices: captures not watched by the run loop\n");
	}
	/*
	 * after the sampling events: a script (or a user) that waits for
	 * bpfprof's perf events before starting its workload must not take
	 * these for them (debuginfo.sh and run.sh sampled nothing so)
	 */
	if (cfg->call_graph == CALL_GRAPH_DWARF)
		proc_table__watch_mmaps(r->procs, MMAP_EVENTS_PAGES);
	/* an executable mapping made: registered at once (run_loop), not at the next batch */
	if (proc_table__mmap_events(r->procs) &&
	    mmap_events__wake_fd(proc_table__mmap_events(r->procs)) >= 0 &&
	    session__watch_fd(r->cap.s, mmap_events__wake_fd(proc_table__mmap_events(r->procs))))
		pr_debug("mmap events: not watched by the run loop\n");
	if (cfg->check_unwind && !(r->cap.checker = unwind_check__new()))
		return -ENOMEM;
	env.attach_ctx = r->cap.s;
	r->cap.interps = interps__new(&env, interps_enabled(cfg));
	if (!r->cap.interps)
		return -errno;
	proc_table__set_interps(r->procs, r->cap.interps);
	err = unwinder_start(r);
	if (err) {
		pr_warn("cannot set up the unwinder: %s\n", strerror(-err));
		return err;
	}
	interval__attach(r->iv, &r->cap);
	/* V8 found before the targets' samples start: their first ones walked for JavaScript */
	for (i = 0; i < cfg->nr_pids && !err; i++)
		err = proc_table__find_interps(r->procs, cfg->pids[i], 1u << INTERP_V8) == -ENOMEM ?
			      -ENOMEM :
			      0;
	for (i = 0; i < cfg->nr_pids && !err; i++)
		err = session__add_target(r->cap.s, cfg->pids[i]);
	if (cfg->nr_pids)
		r->targets_ns = now_ns();
	if (!err && r->tg.child > 0 && !cfg->all_cpus)
		err = session__add_target_on_exec(r->cap.s, (uint32_t)r->tg.child);
	if (err) {
		pr_warn("cannot add target: %s\n", strerror(-err));
		return err;
	}
	targets__open_pidfds(&r->tg, watch_fd, r->cap.s);
	/*
	 * The kernel's names: its lookup by BPF (kernel_names.h: a program
	 * loaded and verified, 2-3 ms of CPU here) before the command is
	 * released, as start-up; else /proc/kallsyms read by a thread of its
	 * own (SCHED_IDLE) while sampling, not after it, nor in start-up: its
	 * 40-60 ms of CPU, most of it the kernel's formatting, ran beside the
	 * verifier before
	 */
	if (symbolizer__load_kernel_async(r->sy))
		pr_debug("kernel symbols: no thread; read when first needed\n");
	/*
	 * The targets' symbol tables read while sampling, not after it
	 * (benchmark 4: libLLVM's alone is 10 ms of finalize's CPU); not under
	 * -a, whose every file would be read and held (benchmark 5's memory)
	 */
	if (!cfg->all_cpus && symbolizer__preload(r->sy, PRELOAD_MAX_FILES, PRELOAD_AFTER_NS))
		pr_debug("symbol tables: no thread; read at the end\n");
	r->startup.rest = cpu_ns(CLOCK_THREAD_CPUTIME_ID) - t1;
	/*
	 * the command released once the unwinder's pool is in the kernel (its
	 * grace period ran beside the steps above): its first tables are then
	 * written into it, not put in after one of their own (tables3)
	 */
	if (r->tg.child > 0 && r->cap.unwinder)
		unwinder__wait_pool(r->cap.unwinder, 50);
	return 0;
}

/*
 * The run loop's own next work (ns, CLOCK_MONOTONIC): the reap a second
 * after the last, the progress line's second, and, as often as the poll's
 * 100 ms timer used to make them, a look at targets that have no pidfd
 * (targets__alive, targets__child_exited) and the records of processes
 * with an interpreter's frames; the symbolizer's next pass (AHEAD_NS)
 */
static uint64_t due_ns(const struct run *r, uint64_t last_reap, uint64_t last_progress,
		       uint64_t next_ahead)
{
	uint64_t due = last_reap + REAP_NS, now = now_ns();

	if (next_ahead && next_ahead < due)
		due = next_ahead;
	if (r->tty && last_progress + PROGRESS_NS < due)
		due = last_progress + PROGRESS_NS;
	if (targets__need_looks(&r->tg) && now + TARGETS_LOOK_NS < due)
		due = now + TARGETS_LOOK_NS;
	if (session__nr_interp_procs(r->cap.s) && now + INTERP_RECORDS_NS < due)
		due = now + INTERP_RECORDS_NS;
	return due;
}

/* BPF's per-process entries of the processes exited since the last reap (session__forget_exited) */
static void forget_exited(struct run *r)
{
	struct mmap_events *mm = proc_table__mmap_events(r->procs);
	uint32_t tgids[MMAP_EVENTS_MAX_EXITS];
	int n = mm ? mmap_events__take_exits(mm, tgids) : -E2BIG;

	session__forget_exited(r->cap.s, tgids, n, proc_table__exits_moved(r->procs));
}

/*
 * When the profiled samples began, for the first period's start and -d
 * (interval__start): -a's at the events' attach, before the set-up that
 * precedes the run loop; -p's once its targets were in the filter, near
 * its end (the set-up, seconds in an emulated guest, is no part of -d
 * there); a command's at its release, the run loop's start (0: now).
 */
static uint64_t sampling_since(const struct run *r)
{
	if (r->cfg.all_cpus)
		return session__sampling_ns(r->cap.s);
	return r->targets_ns;
}

/*
 * Sampling, from the command's release to the run's end (-d, a signal, the
 * targets' exit), each --interval boundary passed ending its interval.
 * Returns 0 (a ring buffer that fails ends the run, with what it has) or
 * -errno, the run abandoned.
 */
static int run_loop(struct run *r)
{
	const char *ahead = getenv("BPFPROF_SYMBOLIZE_AHEAD");
	uint64_t last_progress = 0, last_reap = 0, next_ahead = 0;
	bool stop = false;
	int err, err2;

	r->startup.all = cpu_ns(CLOCK_PROCESS_CPUTIME_ID);
	interval__start(r->iv, sampling_since(r));
	targets__release(&r->tg);
	if (!r->cfg.all_cpus && (!ahead || strcmp(ahead, "0")))
		next_ahead = now_ns() + PRELOAD_AFTER_NS;
	r->tty = r->cfg.progress && isatty(STDERR_FILENO);
	while (!stop) {
		uint64_t now;

		err = session__poll(
			r->cap.s,
			interval__poll_timeout_ms(r->iv, now_ns(),
						  due_ns(r, last_reap, last_progress, next_ahead)));
		/* -ECANCELED: a record past the cut was read, the cut has passed */
		if (err < 0 && err != -EINTR && err != -ECANCELED) {
			pr_warn("ring buffer: %s\n", strerror(-err));
			break;
		}
		/* the executable mappings made (also drains the mmap events' wake-up) */
		proc_table__exec_mappings(r->procs);
		/* what the notices' thread captured (drains its wake-up): Python found while it lives */
		err2 = proc_table__take_noticed(r->procs);
		if (err2)
			return err2;
		err2 = interval__release(r->iv, false);
		if (err2)
			return err2;
		if (err > 0 || err == -ECANCELED)
			interval__batch_read(r->iv);
		now = now_ns();
		/* each asked, none skipped: a deadline passed is the run's cut, an exited child is reaped */
		stop |= exiting != 0;
		stop |= interval__deadline_passed(r->iv, now);
		stop |= targets__child_exited(&r->tg);
		if (r->cfg.nr_pids && !targets__alive(&r->tg, now, unwatch_fd, r->cap.s)) {
			pr_info("every target process has exited\n");
			stop = true;
		}
		while (interval__boundary_passed(r->iv, now)) {
			if (r->tty)
				fprintf(stderr, "\r\033[K");
			finishing = 1;
			err = interval__end_at_boundary(r->iv);
			/* paths of cgroups no sample named for a whole interval go */
			cgroup_cache__expire(r->cgroups);
			finishing = 0;
			if (!err)
				err = interval__begin_next(r->iv);
			if (err)
				return err;
		}
		if (now - last_reap >= REAP_NS) {
			last_reap = now;
			/* exited processes: their registrations, the maps this profile has taken */
			proc_table__reap(r->procs, now, interval__cut_ns(r->iv));
			/* BPF's first-sample state of exited processes: by their tgids while few exit */
			forget_exited(r);
		}
		if (r->tty && now - last_progress >= PROGRESS_NS) {
			last_progress = now;
			interval__progress(r->iv, now);
		}
		/* not once the run has ended: finalize names the rest */
		if (!stop && next_ahead && now >= next_ahead) {
			err = interval__symbolize_ahead(r->iv);
			if (err)
				return err;
			next_ahead = now_ns() + AHEAD_NS;
		}
	}
	return 0;
}

/* The last interval: the rest of its records, then symbolized, written, summed up; the outputs finished. */
static int finish(struct run *r)
{
	uint64_t t0 = now_ns(), c0 = cpu_ns(CLOCK_PROCESS_CPUTIME_ID);
	int err, err2;

	finishing = 1; /* from here a second signal abandons the outputs */
	interval__last(r->iv);
	session__stop(r->cap.s);
	/* no notice comes after the stop: those left are captured, then merged at the drain */
	proc_table__stop_notices(r->procs);
	err = interval__take_rest(r->iv);
	if (err)
		return err;
	if (r->tty)
		fprintf(stderr, "\r\033[K");

	/* the run ended first (duration, signal): stop the command as perf does */
	targets__stop_child(&r->tg);
	r->exec_status = targets__exec_status(&r->tg);
	if (!r->exec_status && r->tg.child_done && WIFEXITED(r->tg.child_status) &&
	    WEXITSTATUS(r->tg.child_status))
		pr_warn("command exited with status %d\n", WEXITSTATUS(r->tg.child_status));
	/* debug files from debuginfod: only now that sampling has stopped */
	if (!r->cfg.no_debuginfod && !debuginfod__setup(r->cfg.debuginfod_urls)) {
		struct debuginfod_opts dopts = { .deadline_ms = r->cfg.debuginfod_deadline_ms,
						 .progress = r->tty };

		symbolizer__use_debuginfod(r->sy, &dopts);
	}
	err = interval__end(r->iv);
	err2 = run_outputs__finish(&r->out);
	r->finish_ns = now_ns() - t0;
	r->finish_cpu_ns = cpu_ns(CLOCK_PROCESS_CPUTIME_ID) - c0;
	return err ?: err2;
}

static void run_free(struct run *r)
{
	targets__close(&r->tg);
	interval__free(r->iv);
	if (r->procs)
		proc_table__set_interps(r->procs, NULL);
	interps__free(r->cap.interps);
	unwind_copies__free(r->cap.copies);
	/*
	 * the threads that ask the unwinder stopped before it goes: the mmap
	 * events' (its exec filter), the notices' (before the session too: it
	 * reads the session's ring; after the interval: merged or freed there)
	 */
	if (r->procs) {
		proc_table__stop_mmaps(r->procs);
		proc_table__close_notices(r->procs);
	}
	unwinder__free(r->cap.unwinder);
	unwind_cache__free(r->cap.unwind_cache);
	unwind_check__free(r->cap.checker);
	session__close(r->cap.s);
	symbolizer__free(r->sy);
	cgroup_cache__free(r->cgroups);
	proc_table__free(r->procs);
	run_outputs__free(&r->out);
	/* run is main's: the handler must not read its outputs once main returns */
	sig_nr_outputs = 0;
}

int main(int argc, char **argv)
{
	struct run run = { 0 }, *r = &run;
	uint64_t t0;
	int err;

	/*
	 * One malloc arena for every thread: the unwinder's and the symbolizer's
	 * threads would each get an arena of their own, which glibc returns to
	 * the system far less readily (churn.sh under -a: 8.3 kB of RssAnon per
	 * process started, 3.5 kB with one arena).
	 */
	mallopt(M_ARENA_MAX, 1);
	if (argc > 1 && !strcmp(argv[1], "xray"))
		return xray__main(argc - 1, argv + 1);
	err = from_options(r, argc, argv);
	if (err)
		return err;
	r->startup.options = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
	if (stages_new(r))
		return 1;
	/* outputs exist (as temporaries) before sampling starts: a bad path fails now */
	err = interval__begin(r->iv, 0);
	r->startup.stages = cpu_ns(CLOCK_THREAD_CPUTIME_ID) - r->startup.options;
	if (!err)
		err = session_open(r);
	if (!err)
		err = run_loop(r);
	if (!err)
		err = finish(r);
	if (!err)
		report_cpu(r);
	t0 = now_ns();
	run_free(r);
	/* the last of finalize before the exit: threads joined, memory given back */
	pr_debug("exit: %.1f ms of wall freeing\n", (double)(now_ns() - t0) / 1e6);
	return err != 0 ? 1 : r->exec_status;
}

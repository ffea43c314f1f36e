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
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <malloc.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "agg.h"
#include "buf.h"
#include "build_ids.h"
#include "cli.h"
#include "dso_export.h"
#include "jit_elf.h"
#include "python_procs.h"
#include "sym_python.h"
#include "jvm_attach.h"
#include "jvm_perfmap.h"
#include "kernel_image.h"
#include "log.h"
#include "maps_cache.h"
#include "notice_thread.h"
#include "mmap_events.h"
#include "outdir.h"
#include "output.h"
#include "preflight.h"
#include "procmaps.h"
#include "profile.h"
#include "push.h"
#include "report.h"
#include "session.h"
#include "sym_debuginfod.h"
#include "symbolize.h"
#include "targets.h"
#include "unwind_cache.h"
#include "unwind_check.h"
#include "unwind_copies.h"
#include "write.h"
#include "write_perfdata.h"
#include "xray.h"

/*
 * Everything one run holds, in one place, passed to what needs it: bpfprof
 * keeps no mutable state in globals but what its signal handler reads.
 */
struct run {
	struct bpfprof_config cfg;
	/* perf.data writers, parallel to cfg.outputs; NULL for other formats or after a failure */
	struct perfdata_writer *streams[CLI_MAX_OUTPUTS];
	int stream_err[CLI_MAX_OUTPUTS];
	/* -o names as given; in --output-dir mode each interval's paths derive from them; then push's spool name */
	const char *out_names[CLI_MAX_OUTPUTS + 1];
	/* --push: each interval's profile also goes to a Pyroscope server (user/write/push.c) */
	struct pusher *pusher;
	char *interval_paths[CLI_MAX_OUTPUTS];
	/*
	 * The interval's profile, for the observer (which sees it const), and where
	 * its JIT images go (jit_elf.h): "<first .prof or perf.data output>.jit",
	 * absolute, as .prof maps text and perf.data MMAP2 records name them. NULL
	 * when no such output is written to a file.
	 */
	struct profile *stream_profile;
	char *jit_dir;
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
	/* Python processes and their frames (NULL with --no-python or before the session) */
	struct python_procs *py;
	uint64_t last_stamp_s; /* --output-dir: the last interval's name stamp, s */
	uint64_t root_walks; /* unwinder__root_walks of every profile so far, as the BPF counters */
	/* samples' cgroup ids -> paths, kept across intervals and after a cgroup is removed */
	struct cgroup_cache *cgroups;
	/* each process's last maps, kept across intervals and after it exits (maps_cache.h) */
	struct maps_cache *maps;
	/* the notices read on a thread of their own (notice_thread.h); NULL: read by on_notice */
	struct notice_thread *notices;
	/* --call-graph dwarf: executable mappings as they happen, for processes gone unread (mmap_events.h) */
	struct mmap_events *mmaps;
	/*
	 * Executable mappings of processes whose registration was under way
	 * when they came (register_new_exec), looked at again once it is done;
	 * exec_wait_ns: when last looked at (CLOCK_MONOTONIC)
	 */
	struct mmap_events_exec exec_wait[MMAP_EVENTS_MAX_EXEC];
	size_t nr_exec_wait;
	uint64_t exec_wait_ns;
	/*
	 * Records read past an interval's cut, in ring-buffer order, for the
	 * next interval: each a u64 size, then its bytes padded to 8.
	 */
	struct buf carry;
};

static void check_stack(struct run *r, const void *data, size_t size);

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

/* A perf.data output that fails while streaming (disk full) is dropped; the others go on. */
static void stream_failed(struct run *r, int i, int err)
{
	pr_warn("cannot write '%s': %s; no file written\n", r->cfg.outputs[i].path, strerror(-err));
	r->stream_err[i] = err;
	perfdata__free(r->streams[i]);
	r->streams[i] = NULL;
	output__abort(&r->cfg.outputs[i]);
}

static int plan_jit_image(struct run *r, struct profile *p, uint32_t proc)
{
	return jit_elf__plan(p, proc, r->jit_dir);
}

/*
 * "<first output of these formats, absolute>.<suffix>", beside it: where its
 * JIT images (.jit) or .prof's file copies (.bin) go. NULL when none is
 * written to a file.
 */
static char *dir_beside_outputs(struct run *r, bool gperf, bool perfdata, const char *suffix)
{
	for (int i = 0; i < r->cfg.nr_outputs; i++) {
		const struct output *o = &r->cfg.outputs[i];
		char *dir, *base, *abs, *path;

		if (!((gperf && o->format == OUTPUT_GPERF) ||
		      (perfdata && o->format == OUTPUT_PERFDATA)) ||
		    !strcmp(o->path, "-"))
			continue;
		dir = strdup(o->path);
		base = strdup(o->path);
		abs = dir && base ? realpath(dirname(dir), NULL) : NULL;
		path = NULL;
		if (abs && asprintf(&path, "%s/%s.%s", abs, basename(base), suffix) < 0)
			path = NULL;
		free(dir);
		free(base);
		free(abs);
		return path;
	}
	return NULL;
}

/* The JIT image directory for this interval's outputs, or NULL. */
static char *jit_dir_for_outputs(struct run *r)
{
	return dir_beside_outputs(r, true, true, "jit");
}

/*
 * Keep the files behind the profile for the readers that open them: perf's
 * build-id cache for perf.data (as perf record fills it), copies beside the
 * first .prof for the files its maps text could not name otherwise
 * (dso_export.h). A failure costs names in those readers only.
 */
static void export_files(struct run *r, struct profile *p, struct symbolizer *sy)
{
	struct dso_export_stats st = { 0 };
	bool perfdata = false;
	char *dir;
	int i;

	for (i = 0; i < r->cfg.nr_outputs; i++)
		perfdata |= r->cfg.outputs[i].format == OUTPUT_PERFDATA && !r->stream_err[i];
	if (perfdata && !r->cfg.no_buildid_cache) {
		dir = dso_export__buildid_dir("/etc/perfconfig", getenv("HOME"));
		if (!dir && errno == ECANCELED)
			pr_info("perf's config says record.build-id no-cache or skip: build-id cache not filled\n");
		else if (!dir)
			pr_warn("no build-id cache directory (HOME unset, no buildid.dir in perfconfig): "
				"perf report may not name code of files gone after the run\n");
		if (dir && !dso_export__buildid_cache(p, sy, dir, &st))
			pr_info("build-id cache '%s': %u files added (%llu bytes), %u there already, %u failed\n",
				dir, st.files, (unsigned long long)st.bytes, st.present, st.failed);
		free(dir);
	}
	dir = dir_beside_outputs(r, true, false, "bin");
	if (dir) {
		memset(&st, 0, sizeof(st));
		unsigned int mode = r->cfg.outputs[0].mode ? r->cfg.outputs[0].mode :
							     OUTPUT_DEFAULT_MODE;

		if (!dso_export__prof_files(p, sy, dir, mode, &st) && st.files + st.present)
			pr_info("'%s': %u files copied for .prof readers (%llu bytes), %u failed\n",
				dir, st.files + st.present, (unsigned long long)st.bytes,
				st.failed);
		free(dir);
	}
}

/*
 * Write the JIT image of every sampled process with JIT files, so that .prof
 * and perf.data readers name its JIT frames. A failure costs those names only.
 */
static void write_jit_images(struct run *r, struct profile *p, struct symbolizer *sy)
{
	bool made_dir = false;

	for (uint32_t i = 0; r->jit_dir && i < p->nr_procs; i++) {
		struct profile_process *pr = &p->procs[i];
		const struct jit_table *t;
		struct jit_table *merged = NULL;
		int werr;

		if (!pr->nr_samples || (!symbolizer__has_jit(sy, pr) && !pr->nr_pyfuncs))
			continue;
		if (plan_jit_image(r, p, i) < 0)
			return;
		t = symbolizer__has_jit(sy, pr) ? symbolizer__jit_table(sy, p, i) : NULL;
		if (pr->nr_pyfuncs) {
			/* Python functions name the process's Python region (sym_python.h) */
			merged = sym_python__jit_table(p, i, t);
			if (!merged && errno == ENOMEM)
				return;
			t = merged;
		}
		if (!pr->nr_jit_maps || !t) {
			jitdump__free(merged);
			continue;
		}
		if (!made_dir && mkdir(r->jit_dir, 0755) && errno != EEXIST) {
			pr_warn("cannot create '%s': %s; JIT frames stay unnamed in .prof and perf.data\n",
				r->jit_dir, strerror(errno));
			return;
		}
		made_dir = true;
		/* as private as the profile that names them (--output-mode) */
		werr = jit_elf__write(p, i, t,
				      r->cfg.outputs[0].mode ? r->cfg.outputs[0].mode :
							       OUTPUT_DEFAULT_MODE);
		jitdump__free(merged);
		if (!werr)
			pr_info("wrote %zu JIT images of pid %u to '%s'\n", pr->nr_jit_maps,
				pr->pid, r->jit_dir);
	}
}

/* report__unnamed_jit's reason and remedy for process proc (ctx: the run). */
static bool unnamed_jit_why(void *ctx, const struct profile *p, uint32_t proc, char *buf,
			    size_t size)
{
	const struct profile_process *pr = &p->procs[proc];
	struct run *r = ctx;
	bool dump, map;

	symbolizer__jit_sources(r->sy, pr, &dump, &map);
	if (jvm_perfmap__is_jvm(pr) && !map) {
		int err = jvm_perfmaps__err(r->jvm_maps, pr->pid);

		snprintf(
			buf, size,
			"the JVM wrote no perf map (%s); run 'jcmd %u Compiler.perfmap' before the "
			"profile ends, or start it with -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit",
			r->cfg.no_jvm_perfmap ? "--no-jvm-perfmap" :
			err == -EPERM	      ? "it does not catch SIGQUIT (-Xrs): not asked" :
			err == -EACCES ?
					"no right to signal it: bpfprof needs CAP_KILL or its uid" :
			err == -ESRCH || err == -ENOENT ? "it had exited" :
							  strerror(-err),
			pr->pid);
	} else if (dump) {
		snprintf(
			buf, size,
			"not in its jitdump yet (V8 writes it through a stdio buffer, flushed in 4 KiB "
			"blocks, and the rest of the code compiled last was not there); run node with "
			"--perf-basic-prof too (its perf map is written line by line), or let it exit before the "
			"profile ends");
	} else if (map) {
		snprintf(
			buf, size,
			"not in its perf map /tmp/perf-PID.map (code made after the map was written, "
			"or never listed)");
	} else {
		snprintf(
			buf, size,
			"no jitdump or /tmp/perf-PID.map was found; run node with --perf-prof or "
			"--perf-basic-prof, Python 3.12+ with -X perf, a JVM with a perf-map agent (HotSpot 17+: "
			"asked at the end unless --no-jvm-perfmap)");
	}
	return true;
}

/* ctx: the run; its symbolizer holds the process's files open while it lives */
static int stream_maps(void *ctx, const struct profile *p, uint32_t proc, uint64_t time_ns)
{
	struct run *r = ctx;
	int i, err;

	if (symbolizer__pin(r->sy, p, proc))
		return -ENOMEM;
	/* tables for the mappings, built in the background: a new process, an exec, a dlopen */
	if (r->unwinder && unwinder__queue(r->unwinder, p->procs[proc].pid, p->procs[proc].mappings,
					   p->procs[proc].nr_mappings))
		return -ENOMEM;
	/*
	 * perf.data names JIT code's image as its mappings appear; a JVM's
	 * too, whose perf map it will be asked for at the end (jvm_perfmap.h)
	 */
	if (r->jit_dir &&
	    (symbolizer__has_jit(r->sy, &p->procs[proc]) || p->procs[proc].py_start ||
	     (!r->cfg.no_jvm_perfmap && jvm_perfmap__is_jvm(&p->procs[proc]))) &&
	    plan_jit_image(r, r->stream_profile, proc) < 0)
		return -ENOMEM;
	for (i = 0; i < r->cfg.nr_outputs; i++)
		if (r->streams[i] && (err = perfdata__maps(r->streams[i], p, proc, time_ns)))
			stream_failed(r, i, err);
	return 0;
}

/* A CPU sample or an off-CPU block to every perf.data stream. */
static int stream_event(struct run *r, const struct profile_sample *s, bool offcpu)
{
	int i, err;

	for (i = 0; i < r->cfg.nr_outputs; i++)
		if (r->streams[i] && (err = offcpu ? perfdata__offcpu(r->streams[i], s) :
						     perfdata__sample(r->streams[i], s)))
			stream_failed(r, i, err);
	return 0;
}

static int stream_sample(void *ctx, const struct profile *p, uint32_t proc,
			 const struct profile_sample *s)
{
	return stream_event(ctx, s, false);
}

static int stream_offcpu(void *ctx, const struct profile *p, uint32_t proc,
			 const struct profile_sample *s)
{
	return stream_event(ctx, s, true);
}

static void stream_round(struct run *r)
{
	int i, err;

	/*
	 * Not while stack copies wait for their process's tables: their
	 * samples come later than newer ones, and perf report rejects a record
	 * older than what a marker let it deliver ("out of order events")
	 */
	if (unwind_copies__nr_held(r->copies))
		return;
	for (i = 0; i < r->cfg.nr_outputs; i++)
		if (r->streams[i] && (err = perfdata__round(r->streams[i])))
			stream_failed(r, i, err);
}

/* Whether a perf.data output is still being written. */
static bool has_stream(const struct run *r)
{
	int i;

	for (i = 0; i < r->cfg.nr_outputs; i++)
		if (r->streams[i])
			return true;
	return false;
}

/*
 * A perf.data writer per perf.data output, streamed to as samples come; the
 * kernel they describe (text, modules, build-id) goes into p first
 * (kernel_image.h), the text from the symbolizer's kallsyms: one read of it
 * per run, not two per interval.
 */
static int open_streams(struct run *r, struct profile *p, struct agg *agg, struct symbolizer *sy)
{
	struct perfdata_opts po = {
		.event = r->cfg.event,
		.offcpu = r->cfg.offcpu,
		.freq_hz = r->cfg.freq_hz,
		.period_ns = 1000000000ULL / r->cfg.freq_hz,
		.argc = r->cfg.argc,
		.argv = r->cfg.argv,
	};
	struct agg_observer obs = { .maps_changed = stream_maps,
				    .sample = stream_sample,
				    .offcpu = stream_offcpu,
				    .ctx = r };
	bool have_kernel = false;
	int i, err;

	for (i = 0; i < r->cfg.nr_outputs; i++) {
		if (r->cfg.outputs[i].format != OUTPUT_PERFDATA)
			continue;
		if (!have_kernel) {
			uint64_t text, etext;

			if (symbolizer__kernel_text(sy, &text, &etext))
				text = etext = 0;
			err = kernel_image__read(p, text, etext, NULL);
			if (err)
				return err;
			have_kernel = true;
		}
		r->streams[i] = perfdata__new(r->cfg.outputs[i].fd, &po, p);
		if (!r->streams[i]) {
			err = -errno;
			pr_warn("cannot write '%s': %s\n", r->cfg.outputs[i].path, strerror(-err));
			return err;
		}
	}
	agg__set_observer(agg, &obs);
	return 0;
}

static int python_set(void *ctx, uint32_t tgid, const struct bpfprof_py_proc *cfg)
{
	return session__python_set(ctx, tgid, cfg);
}

static int python_maps(void *ctx, struct profile *p, uint32_t proc)
{
	return python_procs__scan(ctx, p, proc);
}

static int python_merge(void *ctx, struct profile *p, uint32_t proc, const struct bpfprof_sample *s,
			uint64_t *ips, uint16_t *nr_user)
{
	return python_procs__merge(ctx, p, proc, s, ips, nr_user);
}

/* The aggregator hands Python's frames to r->py (python_procs.h), once there is one. */
static void python_hook(struct run *r, struct agg *agg)
{
	struct agg_frames f = { .maps = python_maps, .merge = python_merge, .ctx = r->py };

	if (r->py)
		agg__set_frames(agg, &f);
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
	uint64_t lost_before; /* session drops counted before this interval */
	struct session_offcpu_stats off_before; /* --off-cpu counters before it */
	struct python_stats py_before; /* Python counters before it */
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

/*
 * Executable mappings made since a process was registered for the unwinder
 * (mmap_events__take_exec): where one is not in its registration, register
 * it again from its maps now, rather than when a sample's walk or the
 * aggregator next meets an address there: a frame-pointer step into code
 * no registration holds is taken for garbage (the walk ends there), and the
 * legacy variant sends no copy for a leaf there.
 */
static void register_new_exec(struct run *r)
{
	struct mmap_events_exec x[2 * MMAP_EVENTS_MAX_EXEC];
	size_t n = 0, i, kept = 0;
	uint32_t rule, queued = 0;
	uint64_t now;

	/* those waiting: every 5 ms at most (a record can come every few us) */
	if (r->nr_exec_wait) {
		now = now_ns(CLOCK_MONOTONIC);
		if (now - r->exec_wait_ns >= 5000000) {
			r->exec_wait_ns = now;
			n = r->nr_exec_wait;
			memcpy(x, r->exec_wait, n * sizeof(*x));
			r->nr_exec_wait = 0;
		}
	}
	n += mmap_events__take_exec(r->mmaps, x + n, MMAP_EVENTS_MAX_EXEC, NULL);
	for (i = 0; i < n; i++) {
		uint32_t pid = x[i].pid;

		if (!unwinder__has_proc(r->unwinder, pid))
			continue;
		/*
		 * Under way: from maps read before this mapping maybe (a process
		 * registered at a sample just before its exec: collect2's child
		 * before it is ld, whose stacks all ended at their leaf), so
		 * looked at again once it is done
		 */
		if (unwinder__pending(r->unwinder, pid)) {
			if (r->nr_exec_wait + kept < MMAP_EVENTS_MAX_EXEC)
				x[kept++] = x[i];
			continue;
		}
		if (pid != queued && unwinder__rule(r->unwinder, pid, x[i].start, &rule) == -ENOENT &&
		    !unwinder__queue_pid(r->unwinder, pid))
			queued = pid;
	}
	memcpy(r->exec_wait + r->nr_exec_wait, x, kept * sizeof(*x));
	r->nr_exec_wait += kept;
}

/*
 * What the notices' thread captured (notice_thread.h), into the maps cache
 * and the symbolizer, which stay this (the reader's) thread's: no I/O here
 * but close(2). Called before each record and before a profile is
 * symbolized, so that a process's first records find what its notices
 * captured. Costs one atomic load when nothing waits. Returns 0 or -ENOMEM.
 */
static int merge_notices(struct run *r)
{
	struct notice_item *it = notice_thread__take(r->notices), *next;
	int err = 0;

	for (; it; it = next) {
		next = it->next;
		if (!err)
			err = maps_cache__put(r->maps, it->pid, it->start, it->maps, it->maps_len);
		if (!err) {
			/* the symbolizer pins what a profile's process maps: a profile of this one alone */
			struct profile *scratch = profile__new();
			bool created;
			int proc = scratch ? profile__process_start(scratch, it->pid, it->start,
								    &created) :
					     -ENOMEM;

			err = proc < 0 ? proc :
					 procmaps__merge(scratch, (uint32_t)proc, it->maps,
							 it->maps_len, "notice");
			if (err >= 0)
				err = symbolizer__adopt(r->sy, scratch, (uint32_t)proc, &it->files);
			profile__free(scratch);
		}
		notice_item__free(it);
	}
	return err == -ENOMEM ? err : 0;
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct interval *iv = ctx;
	struct run *r = iv->run;
	uint64_t t;
	int err;

	if (r->notices && (err = merge_notices(r)))
		return err;
	if (r->mmaps && r->unwinder)
		register_new_exec(r);
	if (size >= 4 && *(const uint32_t *)data == BPFPROF_REC_USTACK_COPY) {
		check_stack(r, data, size);
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
			check_stack(r, r->copy_check, n);
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

/*
 * The notice of a process's first samples, read before the samples queued
 * ahead of them: its maps are read and remembered for the run, and its
 * files (executables through map_files, jitdump, perf map) held open by the
 * symbolizer now, while it lives, so that it is named however late its
 * records are read, also after it has exited and deleted its JIT files.
 */
static int on_notice(void *ctx, void *data, size_t size)
{
	const struct bpfprof_notice *n = data;
	struct run *r = ((struct interval *)ctx)->run;
	struct profile *scratch;
	const char *text;
	bool created;
	size_t len;
	int err, proc;

	if (size < sizeof(*n) || n->type != BPFPROF_REC_NOTICE)
		return 0;
	err = maps_cache__capture(r->maps, n->tgid, n->start, &text, &len);
	pr_debug("notice %u of pid %u: %s %.1f ms after it was sent\n", n->nr_seen, n->tgid,
		 err ? strerror(-err) : "maps read",
		 (double)(now_ns(CLOCK_MONOTONIC) - n->time_ns) / 1e6);
	if (err)
		return err == -ENOMEM ? err : 0;
	/* the symbolizer pins what a profile's process maps: a profile of this one alone */
	scratch = profile__new();
	proc = scratch ? profile__process_start(scratch, n->tgid, n->start, &created) : -ENOMEM;
	err = proc < 0 ? proc : procmaps__merge(scratch, (uint32_t)proc, text, len, "notice");
	if (err >= 0)
		err = symbolizer__pin(r->sy, scratch, (uint32_t)proc);
	profile__free(scratch);
	return err == -ENOMEM ? err : 0;
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

static void print_progress(double elapsed, uint64_t samples, uint64_t lost)
{
	fprintf(stderr, "\r\033[Kbpfprof: %.1f s, %llu samples, %llu lost", elapsed,
		(unsigned long long)samples, (unsigned long long)lost);
}

static int write_outputs(struct run *r, const struct profile *all)
{
	struct profile offcpu_view = *all;
	int i, err = 0;

	offcpu_view.view = PROFILE_VIEW_OFFCPU;
	for (i = 0; i < r->cfg.nr_outputs; i++) {
		/* an off-CPU output (cli.h): the same profile, weighed by time blocked */
		const struct profile *p = r->cfg.offcpu_output[i] ? &offcpu_view : all;
		struct output *o = &r->cfg.outputs[i];
		const struct writer *wr = writer__of(o->format);
		struct write_opts wo = { .title = r->cfg.offcpu_output[i] ?
							  "bpfprof off-CPU flame graph" :
							  "bpfprof CPU flame graph" };
		struct write_result wres = { 0 };
		struct buf b = { 0 };
		uint64_t samples = 0, offcpu_samples = 0;
		int ret = -EINVAL;

		if (o->format == OUTPUT_PERFDATA) {
			/* streamed while sampling: only its end is written here */
			ret = r->stream_err[i];
			if (!ret && r->streams[i]) {
				samples = perfdata__nr_samples(r->streams[i]);
				offcpu_samples = perfdata__nr_offcpu(r->streams[i]);
				ret = perfdata__finish(r->streams[i], p);
			}
		} else if (wr && wr->write) {
			ret = wr->write(p, &b, &wo, &wres);
			if (ret == -E2BIG && o->format == OUTPUT_GPERF)
				pr_warn("'%s': too many processes for one address space\n",
					o->path);
		}
		if (ret) {
			if (!r->stream_err[i])
				pr_warn("cannot write '%s': %s\n", o->path, strerror(-ret));
			output__abort(o);
		} else {
			ret = output__commit(o, o->format == OUTPUT_PERFDATA ? NULL : &b);
		}
		if (!ret && o->format == OUTPUT_PERFDATA && r->cfg.offcpu)
			fprintf(stderr,
				"bpfprof: wrote '%s': %llu samples, %llu offcpu-time samples\n",
				o->path, (unsigned long long)samples,
				(unsigned long long)offcpu_samples);
		else if (!ret && o->format == OUTPUT_PERFDATA)
			fprintf(stderr, "bpfprof: wrote '%s': %llu samples\n", o->path,
				(unsigned long long)samples);
		else if (!ret && o->format != OUTPUT_GPERF)
			fprintf(stderr, "bpfprof: wrote '%s': %zu bytes\n", o->path, b.len);
		if (!ret && o->format == OUTPUT_GPERF) {
			/* as perf record's "Captured and wrote" line; readers' totals match it */
			fprintf(stderr,
				r->cfg.offcpu_output[i] ?
					"bpfprof: wrote '%s': %llu us off-CPU, %zu bytes" :
					"bpfprof: wrote '%s': %llu samples, %zu bytes",
				o->path, (unsigned long long)wres.samples, b.len);
			if (wres.skipped)
				fprintf(stderr, " (%llu samples without user frames left out)",
					(unsigned long long)wres.skipped);
			fputc('\n', stderr);
		}
		buf__free(&b);
		if (ret && !err)
			err = ret;
	}
	return err;
}

static void report_lost(struct run *r, struct session *s, uint64_t before)
{
	int n = session__nr_cpus(s), cpu;
	uint64_t samples, dropped, per_cpu[n];

	session__stats(s, &samples, &dropped, per_cpu);
	if (dropped <= before)
		return;
	fprintf(stderr, "bpfprof: lost %llu samples: ring buffer full (",
		(unsigned long long)(dropped - before));
	for (cpu = 0; cpu < n; cpu++)
		if (per_cpu[cpu])
			fprintf(stderr, " cpu%d: %llu", cpu, (unsigned long long)per_cpu[cpu]);
	fprintf(stderr, " ); consider --ringbuf-size %lluM\n",
		(unsigned long long)(r->cfg.ringbuf_bytes >> 20 ? (r->cfg.ringbuf_bytes >> 20) * 4 :
								  4));
}

/* --check-unwind: one copied stack unwound by libdwfl; -vv shows the walks that differ */
static void check_stack(struct run *r, const void *data, size_t size)
{
	const struct bpfprof_ustack_copy *rec = data;
	struct unwind_check_result res;

	if (!r->checker || unwind_check__sample(r->checker, rec, size, &res))
		return;
	if ((res.verdict != UNWIND_CHECK_DIFFERENT && res.verdict != UNWIND_CHECK_BPF_SHORTER) ||
	    log_verbosity < 2)
		return;
	if (res.verdict == UNWIND_CHECK_DIFFERENT)
		pr_debug(
			"check-unwind: pid %u tid %u: frame %u differs (BPF %u frames, libdwfl %u)\n",
			rec->tgid, rec->tid, res.first_diff, rec->nr_user, res.nr_dwfl);
	else
		pr_debug(
			"check-unwind: pid %u tid %u: BPF stopped first (BPF %u frames, libdwfl %u)\n",
			rec->tgid, rec->tid, rec->nr_user, res.nr_dwfl);
	for (uint32_t i = 0; i < rec->nr_user || i < res.nr_dwfl; i++) {
		uint64_t b = i < rec->nr_user ? rec->ips[i] : 0,
			 d = i < res.nr_dwfl ? res.dwfl_ips[i] : 0;
		const char *name = unwind_check__symbol(r->checker, rec->tgid, b ? b : d);

		pr_debug("  #%-3u BPF %#18llx  libdwfl %#18llx  %s\n", i, (unsigned long long)b,
			 (unsigned long long)d, name ? name : "?");
	}
}

static void report_check(struct run *r)
{
	const struct unwind_check_stats *st;
	uint64_t n = 0;

	if (!r->checker)
		return;
	st = unwind_check__stats(r->checker);
	for (int i = 0; i < UNWIND_CHECK_NR_VERDICTS; i++)
		n += st->verdicts[i];
	fprintf(stderr,
		"bpfprof: BPF unwinds against libdwfl's (%llu stacks checked): %llu identical, %llu shorter "
		"(BPF stopped first), %llu libdwfl stopped first (8 KB copy), %llu different, %llu not checked\n",
		(unsigned long long)n, (unsigned long long)st->verdicts[UNWIND_CHECK_IDENTICAL],
		(unsigned long long)st->verdicts[UNWIND_CHECK_BPF_SHORTER],
		(unsigned long long)st->verdicts[UNWIND_CHECK_DWFL_SHORTER],
		(unsigned long long)st->verdicts[UNWIND_CHECK_DIFFERENT],
		(unsigned long long)st->verdicts[UNWIND_CHECK_FAILED]);
}

/*
 * How the user-stack walks ended, since the start (BPF counters, and the
 * stacks of profiles so far that end at a root they do not count) and, with
 * -v, the tables.
 */
static void report_walks(struct run *r, struct session *s, const struct profile *p)
{
	uint64_t st[BPFPROF_STAT_NR];
	struct unwinder_stats us = { 0 };
	struct unwind_copies_stats cs = { 0 };

	session__walk_stats(s, st);
	if (r->copies) {
		uint64_t cst[BPFPROF_STAT_NR];

		unwind_copies__stats(r->copies, cst, &cs);
		for (int i = 0; i < BPFPROF_STAT_NR; i++)
			st[i] += cst[i];
	}
	if (r->unwinder)
		unwinder__stats(r->unwinder, &us);
	r->root_walks += unwinder__root_walks(p, r->cfg.call_graph == CALL_GRAPH_FP);
	unwinder__print_walks(stderr, st, r->unwinder ? &us : NULL,
			      r->cfg.call_graph == CALL_GRAPH_DWARF ? "dwarf" : "fp",
			      r->root_walks);
	if (log_verbosity >= 1)
		unwind_cache__print(stderr, r->unwind_cache);
	if (cs.walks)
		pr_info("stack copies: %llu walked in user space, %.1f us a stack; %llu kept until "
			"their process was registered, %llu registrations asked for, %llu processes "
			"gone registered from their remembered maps (%.1f ms)\n",
			(unsigned long long)cs.walks, (double)cs.walk_ns / 1e3 / cs.walks,
			(unsigned long long)cs.held, (unsigned long long)cs.loads,
			(unsigned long long)cs.gone_loads, (double)cs.load_ns / 1e6);
	if (r->mmaps) {
		struct mmap_events_stats ms;

		mmap_events__stats(r->mmaps, &ms);
		pr_info("mmap events: %llu records (%llu bytes, %llu lost, %llu malformed); maps "
			"of %llu processes gone before they were read rendered from them; %zu "
			"processes held (%zu bytes, %llu evicted)\n",
			(unsigned long long)ms.records, (unsigned long long)ms.bytes,
			(unsigned long long)ms.lost, (unsigned long long)ms.bad,
			(unsigned long long)ms.rendered, ms.nr_procs, ms.held_bytes,
			(unsigned long long)ms.evicted);
	}
}

/* Python frames: how many samples of Python processes had them, and why the others had none. */
static void report_python(struct run *r, const struct python_stats *before)
{
	struct python_stats st;
	char vers[64] = "";
	size_t n = 0;

	if (!r->py)
		return;
	python_procs__stats(r->py, &st);
	/* this interval's (the interpreters and versions: all found so far) */
	st.samples -= before->samples;
	st.with_frames -= before->with_frames;
	st.no_eval -= before->no_eval;
	st.no_tstate -= before->no_tstate;
	st.walk_failed -= before->walk_failed;
	st.not_walked -= before->not_walked;
	st.unsupported_samples -= before->unsupported_samples;
	st.frames -= before->frames;
	st.truncated -= before->truncated;
	st.code_reads -= before->code_reads;
	st.code_read_failed -= before->code_read_failed;
	st.code_read_ns -= before->code_read_ns;
	st.frame_hits -= before->frame_hits;
	st.frame_misses -= before->frame_misses;
	if (!st.nr_procs && !st.nr_unsupported)
		return;
	for (int i = 0; i < 8 && st.versions[i]; i++)
		n += (size_t)snprintf(vers + n, sizeof(vers) - n, "%s%u.%u", i ? ", " : "",
				      st.versions[i] >> 8, st.versions[i] & 0xff);
	fprintf(stderr,
		"bpfprof: Python: %llu samples of %llu interpreters (CPython %s): %llu with Python frames "
		"(%llu frames, %llu cut at %d); without: %llu with no eval loop in the native stack (C code, or a walk cut short), %llu with no "
		"Python thread state, %llu chain not readable, %llu before the interpreter was found\n",
		(unsigned long long)st.samples, (unsigned long long)st.nr_procs,
		vers[0] ? vers : "-", (unsigned long long)st.with_frames,
		(unsigned long long)st.frames, (unsigned long long)st.truncated,
		BPFPROF_MAX_PY_FRAMES, (unsigned long long)st.no_eval,
		(unsigned long long)st.no_tstate, (unsigned long long)st.walk_failed,
		(unsigned long long)st.not_walked);
	if (st.nr_unsupported)
		fprintf(stderr,
			"bpfprof: Python: %llu processes of unsupported versions or layouts profiled natively "
			"(%llu samples)\n",
			(unsigned long long)st.nr_unsupported,
			(unsigned long long)st.unsupported_samples);
	pr_info("Python code objects: %llu read (%llu not readable), %.1f us each; frame lookups %llu, "
		"%.1f %% cached\n",
		(unsigned long long)st.code_reads, (unsigned long long)st.code_read_failed,
		st.code_reads ? (double)st.code_read_ns / st.code_reads / 1000 : 0.0,
		(unsigned long long)(st.frame_hits + st.frame_misses),
		st.frame_hits + st.frame_misses ?
			100.0 * st.frame_hits / (st.frame_hits + st.frame_misses) :
			0.0);
}

/* -v: the BPF cost per sample, where the kernel counts it (kernel.bpf_stats_enabled) */
/*
 * -v: what the run holds after each profile (issue 24, bounded by design):
 * RSS, open descriptors, the symbolizer's held files, symbol tables and JIT
 * processes, the unwinder's processes and BPF map entries. Over weeks of
 * --interval these follow the processes alive, not those ever seen.
 */
static void report_held(struct run *r, struct session *s)
{
	struct session_map_entries me;
	struct symbolizer_counts sc;
	struct unwinder_stats us = { 0 };
	long rss_kb = -1;
	char line[128];
	size_t fds = 0, nr_maps, maps_bytes;
	struct dirent *de;
	FILE *f;
	DIR *d;

	if (!log_verbosity)
		return;
	f = fopen("/proc/self/status", "re");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld", &rss_kb) == 1)
			break;
	if (f)
		fclose(f);
	d = opendir("/proc/self/fd");
	while (d && (de = readdir(d)))
		fds += de->d_name[0] != '.';
	if (d)
		closedir(d);
	symbolizer__counts(r->sy, &sc);
	if (r->unwinder)
		unwinder__stats(r->unwinder, &us);
	maps_cache__counts(r->maps, &nr_maps, &maps_bytes);
	fprintf(stderr,
		"bpfprof: held: RSS %ld kB, %zu descriptors; %zu files pinned, %zu symbol tables, "
		"%zu JIT processes (%zu files); unwind: %llu processes, %llu map entries; "
		"remembered maps: %zu processes (%zu bytes)\n",
		rss_kb, fds, sc.nr_pins, sc.nr_files, sc.nr_jit_procs, sc.nr_jit_fds,
		(unsigned long long)us.nr_procs, (unsigned long long)us.nr_entries, nr_maps,
		maps_bytes);
	session__map_entries(s, &me);
	fprintf(stderr,
		"bpfprof: held: BPF map entries: unwind_procs %lld, unwind_mappings %lld, "
		"py_procs %lld, targets %lld, seen %lld, noticed %lld, offcpu_start %lld, "
		"offcpu_pending %lld (-1: not counted)\n",
		(long long)me.unwind_procs, (long long)me.unwind_mappings, (long long)me.py_procs,
		(long long)me.targets, (long long)me.seen, (long long)me.noticed,
		(long long)me.offcpu_start, (long long)me.offcpu_pending);
	if (r->notices) {
		struct notice_thread_stats ns;

		notice_thread__stats(r->notices, &ns);
		fprintf(stderr,
			"bpfprof: notices' thread (%s): %llu notices, %llu captured, %llu of processes "
			"gone, %llu of changed maps found by a recheck, %llu dropped (queue full), %llu times over its real-time budget; read "
			"at most %.1f ms after sent\n",
			ns.realtime ? "SCHED_FIFO 1" : "normal priority",
			(unsigned long long)ns.notices, (unsigned long long)ns.captured,
			(unsigned long long)ns.gone, (unsigned long long)ns.rechanged,
			(unsigned long long)ns.dropped, (unsigned long long)ns.demoted,
			(double)ns.max_delay_ns / 1e6);
	}
}

static void report_bpf_cost(struct session *s)
{
	uint64_t ns, runs;

	if (!session__bpf_run_time(s, &ns, &runs) && runs)
		pr_info("BPF run time: %.0f ns a sample (on_sample, %llu runs; kernel.bpf_stats_enabled)\n",
			(double)ns / runs, (unsigned long long)runs);
}

/* The maps remembered for a process (maps_cache.h), for the copies of one gone unregistered */
static const char *remembered_maps(void *ctx, uint32_t pid, uint32_t start, size_t *len)
{
	struct run *r = ctx;

	return maps_cache__get(r->maps, pid, start, len);
}

/* maps_cache's fallback: a gone process's maps rendered from its MMAP2 records */
static int maps_from_events(void *ctx, uint32_t pid, uint32_t start, char **text, size_t *len)
{
	return mmap_events__maps(ctx, pid, start, text, len);
}

/*
 * --call-graph dwarf: learn of executable mappings as they happen (perf's
 * dummy event with MMAP2 records), so that a process gone before its maps
 * were read still has them. Opened once sampling has begun; where it cannot
 * be, one -v line and the run goes on with /proc alone.
 */
static void mmap_events_start(struct run *r)
{
	long hz = sysconf(_SC_CLK_TCK);
	int err;

	if (r->cfg.call_graph != CALL_GRAPH_DWARF)
		return;
	/* 16 MiB of mappings at most; an exited process's kept 10 s (its copies are walked by then) */
	r->mmaps = mmap_events__new(16 << 20, 10000000000ULL,
				    1000000000ULL / (uint64_t)(hz > 0 ? hz : 100));
	err = r->mmaps ? mmap_events__start(r->mmaps, MMAP_EVENTS_PAGES) : -ENOMEM;
	if (err) {
		pr_info("mmap events: not opened (%s): gone processes' maps only from /proc\n",
			strerror(-err));
		mmap_events__free(r->mmaps);
		r->mmaps = NULL;
		return;
	}
	maps_cache__set_fallback(r->maps, maps_from_events, r->mmaps);
}

/* The unwinder, and the tables of the -p targets before their samples count. */
static int unwinder_start(struct run *r, struct session *s)
{
	struct unwind_sink sink;
	int i, err;

	session__unwind_sink(s, &sink);
	r->unwinder = unwinder__new(&sink, r->cfg.call_graph == CALL_GRAPH_DWARF, "/proc");
	if (!r->unwinder)
		return -errno;
	if (r->cfg.call_graph == CALL_GRAPH_DWARF && sink.budget) {
		r->unwind_cache = unwind_cache__open(r->cfg.unwind_cache, r->cfg.unwind_cache_bytes,
						     r->cfg.unwind_cache_set);
		unwinder__set_cache(r->unwinder, r->unwind_cache);
	}
	if (r->cfg.call_graph == CALL_GRAPH_DWARF) {
		r->copies = unwind_copies__new(r->unwinder, r->cfg.max_stack, remembered_maps, r);
		r->copy_sample = malloc(sizeof(*r->copy_sample));
		r->copy_check = malloc(sizeof(*r->copy_check));
		if (!r->copies || !r->copy_sample || !r->copy_check)
			return -ENOMEM;
	}
	for (i = 0; i < r->cfg.nr_pids; i++) {
		err = unwinder__load_pid(r->unwinder, r->cfg.pids[i]);
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
	uint64_t samples, dropped = 0;
	int i, err;

	memset(iv, 0, sizeof(*iv));
	iv->run = r; /* on_record reaches the run through the interval */
	if (s)
		session__stats(s, &samples, &dropped, NULL);
	iv->lost_before = dropped;
	if (s && r->cfg.offcpu)
		session__offcpu_stats(s, &iv->off_before);
	if (r->py)
		python_procs__stats(r->py, &iv->py_before);
	iv->p = profile__new();
	iv->agg = iv->p ? agg__new(iv->p, "/proc", 1000000000ULL / r->cfg.freq_hz) : NULL;
	if (!iv->agg)
		return -ENOMEM;
	agg__set_cgroups(iv->agg, r->cgroups);
	agg__set_maps_cache(iv->agg, r->maps);
	python_hook(r, iv->agg);
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
	/*
	 * Files are named by the second: after an interval cut short (the one
	 * before it took longer than an interval to write) the name moves to
	 * the next second rather than replace the last interval's files.
	 */
	if (boundary && iv->p->start_realtime_ns / 1000000000ULL <= r->last_stamp_s) {
		pr_info("interval starts within the second of the last one: named a second later\n");
		iv->p->start_realtime_ns = (r->last_stamp_s + 1) * 1000000000ULL;
	}
	r->last_stamp_s = iv->p->start_realtime_ns / 1000000000ULL;
	/* the maps of processes gone before this profile's start go */
	maps_cache__new_profile(r->maps, iv->p->start_ns);
	maps_cache__expire(r->maps, now_ns(CLOCK_MONOTONIC), 0, true);
	for (i = 0; i < r->cfg.nr_outputs; i++) {
		r->stream_err[i] = 0;
		if (r->cfg.output_dir) {
			char stamp[OUTDIR_STAMP_LEN + 1];

			outdir__stamp(iv->p->start_realtime_ns, stamp);
			if (asprintf(&r->interval_paths[i], "%s/%s-%s", r->cfg.output_dir, stamp,
				     r->out_names[i]) < 0) {
				r->interval_paths[i] = NULL;
				return -ENOMEM;
			}
			r->cfg.outputs[i].path = r->interval_paths[i];
		}
		err = output__open(&r->cfg.outputs[i]);
		if (err)
			return err;
	}
	r->stream_profile = iv->p;
	r->jit_dir = jit_dir_for_outputs(r);
	return open_streams(r, iv->p, iv->agg, sy);
}

/* Drop what interval_begin made: streams, temporaries (if not committed), profile. */
static void interval_free(struct run *r, struct interval *iv)
{
	int i;

	for (i = 0; i < r->cfg.nr_outputs; i++) {
		perfdata__free(r->streams[i]);
		r->streams[i] = NULL;
		output__abort(&r->cfg.outputs[i]);
		free(r->interval_paths[i]);
		r->interval_paths[i] = NULL;
	}
	agg__free(iv->agg);
	profile__free(iv->p);
	memset(iv, 0, sizeof(*iv));
	iv->run = r;
	r->stream_profile = NULL;
	free(r->jit_dir);
	r->jit_dir = NULL;
}

/* Everything queued belongs to the ending interval; then symbolize and write. */
static int interval_end(struct run *r, struct interval *iv, struct session *s,
			struct symbolizer *sy)
{
	struct profile *p = iv->p;
	struct session_offcpu_stats off = { 0 };
	uint64_t samples, dropped;
	int err;

	/* the cut, where the caller knows it: not when symbolizing begins */
	if (!p->end_ns)
		p->end_ns = iv->cut_ns ?: now_ns(CLOCK_MONOTONIC);
	err = session__drain(s);
	if (err < 0 && err != -ECANCELED) {
		pr_warn("ring buffer: %s\n", strerror(-err));
		return err;
	}
	if (err)
		stream_round(r);
	/* what the notices' thread captured since the last record */
	err = merge_notices(r);
	if (err)
		return err;
	session__stats(s, &samples, &dropped, NULL);
	p->nr_lost = dropped - iv->lost_before;
	if (r->cfg.offcpu) {
		session__offcpu_stats(s, &off);
		p->nr_offcpu_lost = off.dropped - iv->off_before.dropped;
	}
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
	write_jit_images(r, p, sy);
	export_files(r, p, sy);
	jvm_perfmaps__release(r->jvm_maps); /* read: the maps bpfprof made go */
	/* perf.data's BUILD_ID: the build-ids the symbolizer could not record, from the files */
	if (has_stream(r) && (err = build_ids__fill(p, "/proc"))) {
		pr_warn("build-ids: %s\n", strerror(-err));
		return err;
	}
	err = write_outputs(r, p);
	if (r->pusher) {
		push__submit(r->pusher, p); /* queued: the network is the push thread's */
		if (log_verbosity)
			push__report(r->pusher, stderr);
	}
	report__summary(stderr, p, (double)(p->end_ns - p->start_ns) / 1e9,
			r->cfg.output_dir ? 0 : r->cfg.top_n);
	report__unnamed_jit(stderr, p, unnamed_jit_why, r);
	jvm_perfmaps__free(r->jvm_maps);
	r->jvm_maps = NULL;
	report_lost(r, s, iv->lost_before);
	if (r->cfg.offcpu) {
		report__offcpu_summary(stderr, p, r->cfg.output_dir ? 0 : r->cfg.top_n);
		fprintf(stderr,
			"bpfprof: off-CPU: %llu blocks under %llu us left out (%.3f s in all)\n",
			(unsigned long long)(off.short_blocks - iv->off_before.short_blocks),
			(unsigned long long)r->cfg.offcpu_thresh_us,
			(double)(off.short_ns - iv->off_before.short_ns) / 1e9);
		if (off.kernel_only > iv->off_before.kernel_only)
			fprintf(stderr,
				"bpfprof: off-CPU: %llu blocks with kernel frames only (not blocked in a system "
				"call, or a sample's walk overlapped theirs)\n",
				(unsigned long long)(off.kernel_only - iv->off_before.kernel_only));
		if (off.full > iv->off_before.full)
			pr_warn("off-CPU: %llu blocks not followed: no memory for a task's slot, or more than %d long "
				"blocks waiting for their system call exit at once\n",
				(unsigned long long)(off.full - iv->off_before.full),
				BPFPROF_MAX_OFFCPU_PENDING);
		if (p->nr_offcpu_lost)
			pr_warn("off-CPU: lost %llu blocks: ring buffer full; consider --ringbuf-size\n",
				(unsigned long long)p->nr_offcpu_lost);
	}
	report_walks(r, s, p);
	report_held(r, s);
	report_python(r, &iv->py_before);
	report_bpf_cost(s);
	report_check(r);
	if (r->cfg.check_user_stacks) {
		uint64_t same, shorter, differ;

		session__check_stats(s, &same, &shorter, &differ);
		fprintf(stderr,
			"bpfprof: user stacks against the kernel's walk: %llu the same, %llu its first part, "
			"%llu different\n",
			(unsigned long long)same, (unsigned long long)shorter,
			(unsigned long long)differ);
	}
	if (!p->nr_samples)
		pr_warn("no samples collected\n");
	if (r->cfg.output_dir && r->cfg.keep)
		outdir__prune(r->cfg.output_dir, r->out_names,
			      r->cfg.nr_outputs + (r->pusher != NULL), r->cfg.keep);
	return err;
}

/* --push: the checks (auth file) before sampling, and the push thread. Returns 0 or -errno. */
static int start_push(struct run *r)
{
	struct push_env env = {
		.spool_dir = r->cfg.output_dir,
		.spool_mode = r->cfg.outputs[0].mode ? r->cfg.outputs[0].mode : OUTPUT_DEFAULT_MODE,
		.split_services = r->cfg.all_cpus,
		.command = r->cfg.command ? r->cfg.command[0] : NULL,
		.pid = r->cfg.nr_pids == 1 ? r->cfg.pids[0] : 0,
		.first_pid = r->cfg.nr_pids ? r->cfg.pids[0] : 0,
		.proc_root = "/proc",
		.freq_hz = r->cfg.freq_hz,
	};

	r->out_names[r->cfg.nr_outputs] = PUSH_SPOOL_NAME;
	return r->cfg.push.url ? push__new(&r->cfg.push, &env, &r->pusher) : 0;
}

/* Push what is queued (at most --push-timeout), print the counters; -EIO when an interval was lost. */
static int finish_push(struct run *r)
{
	struct push_counters c;

	if (!r->pusher)
		return 0;
	push__finish(r->pusher);
	push__report(r->pusher, stderr);
	push__counters(r->pusher, &c);
	return c.dropped ? -EIO : 0;
}

int main(int argc, char **argv)
{
	struct run run = { 0 }, *r = &run;
	struct session_opts sopts = { 0 };
	struct symbolizer *sy = NULL;
	struct interval iv = { .run = r };
	struct session *s = NULL;
	uint64_t start, next_interval = 0, last_progress = 0, last_reap = 0, dropped = 0,
			bpf_samples, ended, stop_at = 0;
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
	for (i = 0; i < r->cfg.nr_outputs; i++)
		r->out_names[i] = r->cfg.outputs[i].path;

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
	if (start_push(r))
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
	r->maps = maps_cache__new("/proc");
	if (!r->cgroups || !r->maps)
		return 1;
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
		struct notice_thread_opts nopts = { .map_fd = session__notices_fd(s),
						    .proc_dir = "/proc",
						    .jit_max_size = r->cfg.jit_max_bytes,
						    .realtime = true };

		/* started while this thread polls nothing: the ring has one reader at a time */
		err = notice_thread__start(&nopts, &r->notices);
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
	mmap_events_start(r);
	if (r->cfg.check_unwind && !(r->checker = unwind_check__new())) {
		err = -ENOMEM;
		goto out;
	}
	if (!r->cfg.no_python) {
		r->py = python_procs__new("/proc", python_set, s);
		if (!r->py) {
			err = -ENOMEM;
			goto out;
		}
		python_hook(r, iv.agg);
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
			stream_round(r); /* none while copies are kept back (see there) */
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
			unwinder__reap(
				r->unwinder); /* tables of files no process maps any more go */
			session__forget_gone(s); /* BPF's first-sample state of exited processes */
			/* maps of exited processes this profile has taken (amortized) */
			maps_cache__expire(r->maps, now, iv.cut_ns, false);
		}
		if (tty && now - last_progress >= 1000000000ULL) {
			last_progress = now;
			session__stats(s, &bpf_samples, &dropped, NULL);
			print_progress((double)(now - start) / 1e9, iv.p->nr_samples,
				       dropped - iv.lost_before);
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
	notice_thread__stop(r->notices);
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
	i = finish_push(r);
	err = err ?: i;

out:
	targets__close(&tg);
	interval_free(r, &iv);
	python_procs__free(r->py);
	unwind_copies__free(r->copies);
	free(r->copy_sample);
	free(r->copy_check);
	unwinder__free(r->unwinder);
	unwind_cache__free(r->unwind_cache);
	unwind_check__free(r->checker);
	/* before the session: it reads the session's ring; after the interval: merged or freed here */
	notice_thread__free(r->notices);
	r->notices = NULL;
	session__close(s);
	symbolizer__free(sy);
	cgroup_cache__free(r->cgroups);
	mmap_events__free(r->mmaps);
	maps_cache__free(r->maps);
	buf__free(&r->carry);
	push__free(r->pusher);
	/* run is main's: the handler must not read its outputs once main returns */
	sig_nr_outputs = 0;
	return err != 0 ? 1 : exec_status;
}

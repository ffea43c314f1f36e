// SPDX-License-Identifier: MIT
/* The run's outputs, one set a profile (include/run_outputs.h). */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <sys/resource.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "build_ids.h"
#include "dso_export.h"
#include "jit_images.h"
#include "jvm_perfmap.h"
#include "lib_io.h"
#include "log.h"
#include "outdir.h"
#include "push.h"
#include "run_outputs.h"
#include "write.h"

/* Permission bits of the files made beside the outputs: as private as the profile (--output-mode) */
static unsigned file_mode(const struct run_outputs *o)
{
	return o->cfg->outputs[0].mode ? o->cfg->outputs[0].mode : OUTPUT_DEFAULT_MODE;
}

int run_outputs__init(struct run_outputs *o, struct bpfprof_config *cfg)
{
	struct push_env env = {
		.spool_dir = cfg->output_dir,
		.split_services = cfg->all_cpus,
		.command = cfg->command ? cfg->command[0] : NULL,
		.pid = cfg->nr_pids == 1 ? cfg->pids[0] : 0,
		.first_pid = cfg->nr_pids ? cfg->pids[0] : 0,
		.proc_root = "/proc",
		.freq_hz = cfg->freq_hz,
	};

	memset(o, 0, sizeof(*o));
	o->cfg = cfg;
	for (int i = 0; i < cfg->nr_outputs; i++)
		o->names[i] = cfg->outputs[i].path;
	o->names[cfg->nr_outputs] = PUSH_SPOOL_NAME;
	env.spool_mode = file_mode(o);
	return cfg->push.url ? push__new(&cfg->push, &env, &o->pusher) : 0;
}

/*
 * "<first output of these formats, absolute>.<suffix>", beside it: where its
 * JIT images (.jit) or .prof's file copies (.bin) go. NULL when none is
 * written to a file.
 */
static char *dir_beside_outputs(const struct run_outputs *o, bool gperf, bool perfdata,
				const char *suffix)
{
	for (int i = 0; i < o->cfg->nr_outputs; i++) {
		const struct output *out = &o->cfg->outputs[i];
		char *dir, *base, *abs, *path;

		if (!((gperf && out->format == OUTPUT_GPERF) ||
		      (perfdata && out->format == OUTPUT_PERFDATA)) ||
		    !strcmp(out->path, "-"))
			continue;
		dir = strdup(out->path);
		base = strdup(out->path);
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

int run_outputs__begin(struct run_outputs *o, struct profile *p, struct symbolizer *sy,
		       uint64_t boundary)
{
	struct bpfprof_config *cfg = o->cfg;
	struct perfdata_opts po = {
		.event = cfg->event,
		.offcpu = cfg->offcpu,
		.freq_hz = cfg->freq_hz,
		.period_ns = 1000000000ULL / cfg->freq_hz,
		.argc = cfg->argc,
		.argv = cfg->argv,
	};
	int i, err;

	/*
	 * Files are named by the second: after an interval cut short (the one
	 * before it took longer than an interval to write) the name moves to
	 * the next second rather than replace the last interval's files.
	 */
	if (boundary && p->start_realtime_ns / 1000000000ULL <= o->last_stamp_s) {
		pr_info("interval starts within the second of the last one: named a second later\n");
		p->start_realtime_ns = (o->last_stamp_s + 1) * 1000000000ULL;
	}
	o->last_stamp_s = p->start_realtime_ns / 1000000000ULL;
	for (i = 0; i < cfg->nr_outputs; i++) {
		if (cfg->output_dir) {
			char stamp[OUTDIR_STAMP_LEN + 1];

			outdir__stamp(p->start_realtime_ns, stamp);
			if (asprintf(&o->paths[i], "%s/%s-%s", cfg->output_dir, stamp,
				     o->names[i]) < 0) {
				o->paths[i] = NULL;
				return -ENOMEM;
			}
			cfg->outputs[i].path = o->paths[i];
		}
		err = output__open(&cfg->outputs[i]);
		if (err)
			return err;
	}
	o->p = p;
	o->sy = sy;
	o->jit_dir = dir_beside_outputs(o, true, true, "jit");
	return perfdata_streams__open(&o->streams, cfg->outputs, cfg->nr_outputs, &po, p, sy);
}

int run_outputs__maps(struct run_outputs *o, const struct profile *p, uint32_t proc,
		      uint64_t time_ns)
{
	/*
	 * perf.data names JIT code's image as its mappings appear; a JVM's
	 * too, whose perf map it will be asked for at the end (jvm_perfmap.h)
	 */
	if (jit_images__plan(o->p, proc, o->sy, o->jit_dir, !o->cfg->no_jvm_perfmap))
		return -ENOMEM;
	perfdata_streams__maps(&o->streams, p, proc, time_ns);
	return 0;
}

void run_outputs__sample(struct run_outputs *o, const struct profile_sample *s, bool offcpu)
{
	perfdata_streams__sample(&o->streams, s, offcpu);
}

void run_outputs__round(struct run_outputs *o)
{
	perfdata_streams__round(&o->streams);
}

/*
 * Keep the files behind the profile for the readers that open them: perf's
 * build-id cache for perf.data (as perf record fills it), copies beside the
 * first .prof for the files its maps text could not name otherwise
 * (dso_export.h). A failure costs names in those readers only.
 */
static void export_files(struct run_outputs *o, struct profile *p)
{
	struct dso_export_stats st = { 0 };
	bool perfdata = false;
	char *dir;
	int i;

	for (i = 0; i < o->cfg->nr_outputs; i++)
		perfdata |= o->cfg->outputs[i].format == OUTPUT_PERFDATA && !o->streams.err[i];
	if (perfdata && !o->cfg->no_buildid_cache) {
		dir = dso_export__buildid_dir("/etc/perfconfig", getenv("HOME"));
		if (!dir && errno == ECANCELED)
			pr_info("perf's config says record.build-id no-cache or skip: build-id cache not filled\n");
		else if (!dir)
			pr_warn("no build-id cache directory (HOME unset, no buildid.dir in perfconfig): "
				"perf report may not name code of files gone after the run\n");
		if (dir && !dso_export__buildid_cache(p, o->sy, dir, &st))
			pr_info("build-id cache '%s': %u files added (%llu bytes), %u there already, %u failed\n",
				dir, st.files, (unsigned long long)st.bytes, st.present, st.failed);
		free(dir);
	}
	dir = dir_beside_outputs(o, true, false, "bin");
	if (dir) {
		memset(&st, 0, sizeof(st));
		if (!dso_export__prof_files(p, o->sy, dir, file_mode(o), &st) &&
		    st.files + st.present)
			pr_info("'%s': %u files copied for .prof readers (%llu bytes), %u failed\n",
				dir, st.files + st.present, (unsigned long long)st.bytes,
				st.failed);
		free(dir);
	}
}

/* The "wrote" line of output i, as perf record's "Captured and wrote": readers' totals match it. */
static void print_written(const struct run_outputs *o, int i, const struct write_result *wres,
			  size_t bytes, uint64_t samples, uint64_t offcpu_samples)
{
	const struct output *out = &o->cfg->outputs[i];

	if (out->format == OUTPUT_PERFDATA && o->cfg->offcpu)
		fprintf(stderr, "bpfprof: wrote '%s': %llu samples, %llu offcpu-time samples\n",
			out->path, (unsigned long long)samples, (unsigned long long)offcpu_samples);
	else if (out->format == OUTPUT_PERFDATA)
		fprintf(stderr, "bpfprof: wrote '%s': %llu samples\n", out->path,
			(unsigned long long)samples);
	else if (out->format != OUTPUT_GPERF)
		fprintf(stderr, "bpfprof: wrote '%s': %zu bytes\n", out->path, bytes);
	if (out->format == OUTPUT_GPERF) {
		fprintf(stderr,
			o->cfg->offcpu_output[i] ?
				"bpfprof: wrote '%s': %llu us off-CPU, %zu bytes" :
				"bpfprof: wrote '%s': %llu samples, %zu bytes",
			out->path, (unsigned long long)wres->samples, bytes);
		if (wres->skipped)
			fprintf(stderr, " (%llu samples without user frames left out)",
				(unsigned long long)wres->skipped);
		fputc('\n', stderr);
	}
}

/* One output's writing: in a thread of its own, reading only the profile. */
struct output_job {
	struct run_outputs *o;
	int i;
	const struct profile *p;
	pthread_t thread;
	bool threaded;
	int ret;
	bool write_failed; /* the writer failed (not the commit) */
	bool renamed; /* committed into its directory, which sync_dirs syncs */
	int replaced; /* the file its rename replaced (output__rename), or -1 */
	struct buf b; /* what the writer left for the commit to write */
	struct write_result wres;
	size_t bytes;
	uint64_t samples, offcpu_samples;
	double cpu_ms; /* this output's CPU time, its thread's */
	double sys_ms; /* of it in the kernel (the page cache's copies, page faults) */
	long faults; /* its thread's minor page faults (fresh memory, first touched) */
	double wall_ms, sync_ms; /* its thread's wall time, of it output__sync's (the fsync) */
	uint64_t drain_ns; /* wall in drain_to_output: the streamed bytes' writes */
	bool done; /* write_one has returned (set by its thread; atomic) */
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * The calling thread's CPU time in the kernel, ms (getrusage RUSAGE_THREAD:
 * tick-precise), and its minor page faults so far
 */
static double thread_sys_ms(long *faults)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru)) {
		*faults = 0;
		return 0;
	}
	*faults = ru.ru_minflt;
	return (double)ru.ru_stime.tv_sec * 1e3 + (double)ru.ru_stime.tv_usec / 1e3;
}

static double thread_cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/*
 * struct buf's drain for an output's file (or stdout), before output__commit
 * writes the rest. A file's pages are sent to the disk as they come
 * (sync_file_range: started, not waited for), so that the fsync at the end
 * waits for the last MiB rather than for the whole file (tens of MB: 15-20
 * ms here, at the end of finalize's longest thread).
 */
static int drain_to_output(void *ctx, const void *p, size_t n)
{
	struct output_job *j = ctx;
	const struct output *out = &j->o->cfg->outputs[j->i];
	uint64_t t0 = mono_ns();
	int err;

	if (!out->tmp_path)
		return io__write_all(STDOUT_FILENO, p, n);
	err = io__write_all(out->fd, p, n);
	/* a hint: its errors come at the fsync */
	if (!err)
		sync_file_range(out->fd, 0, 0, SYNC_FILE_RANGE_WRITE);
	j->drain_ns += mono_ns() - t0;
	return err;
}

/*
 * Write output j->i into its temporary file and j->b (in a thread of its
 * own); the commit is the caller's, in the outputs' order.
 */
static void *write_one(void *arg)
{
	struct output_job *j = arg;
	struct run_outputs *o = j->o;
	struct output *out = &o->cfg->outputs[j->i];
	const struct writer *wr = writer__of(out->format);
	struct write_opts wo = { .title = o->cfg->offcpu_output[j->i] ?
						  "bpfprof off-CPU flame graph" :
						  "bpfprof CPU flame graph" };
	long f0, f1;
	double c0 = thread_cpu_ms(), s0 = thread_sys_ms(&f0);
	uint64_t w0 = mono_ns(), w1;
	int ret = -EINVAL;

	/* the file this one replaces gives its pages back first: this one's come from them (output.h) */
	output__drop_replaced_cache(out);
	if (out->format == OUTPUT_FOLDED || out->format == OUTPUT_SVG) {
		/* writers that only append: their tens of MB go to the file as they come */
		j->b.drain = drain_to_output;
		j->b.drain_ctx = j;
	}
	if (out->format == OUTPUT_PERFDATA) {
		/* streamed while sampling: only its end is written here */
		ret = perfdata_streams__finish(&o->streams, j->i, j->p, &j->samples,
					       &j->offcpu_samples);
	} else if (wr && wr->write) {
		ret = wr->write(j->p, &j->b, &wo, &j->wres);
	}
	j->write_failed = ret != 0;
	j->ret = ret;
	j->cpu_ms = thread_cpu_ms() - c0;
	j->sys_ms = thread_sys_ms(&f1) - s0;
	j->faults = f1 - f0;
	/*
	 * its bytes to the disk here, beside the other outputs' (the rename is
	 * the commit's); perf.data's file is the streams', written already
	 */
	w1 = mono_ns();
	if (!ret)
		output__sync(out, out->format == OUTPUT_PERFDATA ? NULL : &j->b);
	j->sync_ms = (double)(mono_ns() - w1) / 1e6;
	j->wall_ms = (double)(mono_ns() - w0) / 1e6;
	__atomic_store_n(&j->done, true, __ATOMIC_RELEASE);
	return NULL;
}

/* Whether an output after i is still being written, in its thread. */
static bool writing_after(const struct output_job *jobs, int nr, int i)
{
	for (int k = i + 1; k < nr; k++)
		if (jobs[k].threaded && !__atomic_load_n(&jobs[k].done, __ATOMIC_ACQUIRE))
			return true;
	return false;
}

/*
 * Commit output j->i (the rest of its bytes, fsync, rename; its directory's
 * fsync is sync_dirs'), or discard it when its writer failed: in the calling
 * thread, one output after the other, so that signals meet the commits as
 * they did before the writers ran in threads (output.c: a second SIGINT
 * leaves no temporary, and the outputs committed before it stand).
 */
static void commit_one(struct output_job *j)
{
	struct output *out = &j->o->cfg->outputs[j->i];

	j->renamed = false;
	j->replaced = -1;
	if (j->write_failed) {
		output__abort(out);
	} else {
		j->renamed = out->tmp_path != NULL; /* a file, not stdout */
		j->ret = output__rename(out, out->format == OUTPUT_PERFDATA ? NULL : &j->b,
					&j->replaced);
		j->renamed &= !j->ret;
	}
	j->bytes = j->b.drained + j->b.len;
	buf__free(&j->b);
}

/* "dir/" of path, its length ("" and 0 for the current directory) */
static size_t dir_len(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? (size_t)(slash - path) + 1 : 0;
}

/*
 * The renames made durable: each directory that received one synced once,
 * after them all (one journal commit rather than one an output; the same
 * directory spelled two ways is synced twice, which is harmless).
 */
static void sync_dirs(const struct run_outputs *o, const struct output_job *jobs)
{
	for (int i = 0; i < o->cfg->nr_outputs; i++) {
		const char *path = o->cfg->outputs[i].path;
		size_t len = dir_len(path);
		bool done = false;

		for (int k = 0; k < i && !done; k++)
			done = jobs[k].renamed && dir_len(o->cfg->outputs[k].path) == len &&
			       !strncmp(o->cfg->outputs[k].path, path, len);
		if (jobs[i].renamed && !done)
			output__sync_dir(path);
	}
}

static void *close_replaced(void *arg)
{
	struct run_outputs *o = arg;

	for (int i = 0; i < o->nr_replaced; i++)
		close(o->replaced[i]);
	return NULL;
}

/* The last commits' replaced files let go of (their thread joined, or closed here). */
static void join_let_go(struct run_outputs *o)
{
	if (o->letting_go)
		pthread_join(o->let_go, NULL);
	else
		close_replaced(o);
	o->letting_go = false;
	o->nr_replaced = 0;
}

/*
 * The files the commits replaced, closed in a thread of their own: their
 * last close frees their blocks and page cache (tens of ms for the tens
 * of MB of a previous run's outputs), meanwhile this thread goes on.
 */
static void let_go_replaced(struct run_outputs *o, const struct output_job *jobs)
{
	for (int i = 0; i < o->cfg->nr_outputs; i++)
		if (jobs[i].replaced >= 0)
			o->replaced[o->nr_replaced++] = jobs[i].replaced;
	if (o->nr_replaced)
		o->letting_go = !pthread_create(&o->let_go, NULL, close_replaced, o);
	if (!o->letting_go)
		join_let_go(o);
}

/*
 * Whether output i's writer may start before run_outputs__prepare's work:
 * it reads the locations' names, the stacks and the comms only (no
 * mapping's build-id, no JIT image's path). These are also the longest
 * (tens of MB of text): they start first, the flame graph's before the
 * folded stacks'.
 */
static bool starts_early(const struct run_outputs *o, int i)
{
	enum output_format f = o->cfg->outputs[i].format;

	return f == OUTPUT_SVG || f == OUTPUT_FOLDED;
}

/* o->jobs for profile all, none started; 0 or -ENOMEM. */
static int jobs_new(struct run_outputs *o, const struct profile *all)
{
	int nr = o->cfg->nr_outputs;

	o->jobs = calloc(nr ? nr : 1, sizeof(*o->jobs));
	if (!o->jobs)
		return -ENOMEM;
	join_let_go(o); /* the last profile's (--interval) */
	o->offcpu_early = *all;
	o->offcpu_early.view = PROFILE_VIEW_OFFCPU;
	for (int i = 0; i < nr; i++)
		/* an off-CPU output (cli.h): the same profile, weighed by time blocked */
		o->jobs[i] = (struct output_job){
			.o = o, .i = i, .p = o->cfg->offcpu_output[i] ? &o->offcpu_early : all
		};
	return 0;
}

/*
 * The writers' threads: early, those starts_early() names, the flame
 * graph's first; else the others not started yet. perf.data's end and a
 * single output are written by the calling thread (run_outputs__write).
 */
static void start_jobs(struct run_outputs *o, bool early)
{
	int nr = o->cfg->nr_outputs;

	if (nr < 2)
		return;
	/* early: the .svg (pass 0), then the .folded (pass 1); else one pass */
	for (int pass = 0; pass < (early ? 2 : 1); pass++)
		for (int i = 0; i < nr; i++) {
			struct output_job *j = &o->jobs[i];
			enum output_format f = o->cfg->outputs[i].format;

			if (j->threaded || f == OUTPUT_PERFDATA || starts_early(o, i) != early ||
			    (early && (f == OUTPUT_SVG) == (pass == 1)))
				continue;
			j->threaded = !pthread_create(&j->thread, NULL, write_one, j);
		}
}

/* Writers started but never committed (run_outputs__write did not come): joined, discarded. */
static void jobs_drop(struct run_outputs *o)
{
	if (!o->jobs)
		return;
	for (int i = 0; i < o->cfg->nr_outputs; i++) {
		if (o->jobs[i].threaded)
			pthread_join(o->jobs[i].thread, NULL);
		buf__free(&o->jobs[i].b);
	}
	free(o->jobs);
	o->jobs = NULL;
}

int run_outputs__prepare(struct run_outputs *o, struct profile *p, struct jvm_perfmaps *jvm)
{
	int err;

	/* the longest writers need none of what follows: the critical path starts here */
	if (!jobs_new(o, p))
		start_jobs(o, true);
	jit_images__write(p, o->sy, o->jit_dir, file_mode(o));
	export_files(o, p);
	jvm_perfmaps__release(jvm); /* read: the maps bpfprof made go */
	/* perf.data's BUILD_ID: the build-ids the symbolizer could not record, from the files */
	if (perfdata_streams__active(&o->streams) && (err = build_ids__fill(p, "/proc"))) {
		pr_warn("build-ids: %s\n", strerror(-err));
		return err;
	}
	return 0;
}

/*
 * The outputs are written in parallel, each in a thread of its own: they
 * share only the profile, which none of them changes, and each has its own
 * file (finalize's latency, docs/BENCHMARKS.md). perf.data, whose streams
 * are the session's, is finished in the calling thread meanwhile. Their
 * commits and what they print come after, in the outputs' order, as when
 * they were written one by one.
 */
int run_outputs__write(struct run_outputs *o, const struct profile *all)
{
	struct output_job *jobs;
	uint64_t t0 = mono_ns(), t1;
	int i, err = 0;

	if (!o->jobs && jobs_new(o, all))
		return -ENOMEM;
	jobs = o->jobs;
	/* the outputs not started yet see the profile as run_outputs__prepare left it */
	o->offcpu_view = *all;
	o->offcpu_view.view = PROFILE_VIEW_OFFCPU;
	for (i = 0; i < o->cfg->nr_outputs; i++)
		if (!jobs[i].threaded)
			jobs[i].p = o->cfg->offcpu_output[i] ? &o->offcpu_view : all;
	start_jobs(o, false);
	for (i = 0; i < o->cfg->nr_outputs; i++)
		if (!jobs[i].threaded)
			write_one(&jobs[i]);
	/* this thread would only wait for the writers from here */
	if (o->meanwhile)
		o->meanwhile(o->meanwhile_ctx);
	t1 = t0;
	for (i = 0; i < o->cfg->nr_outputs; i++) {
		struct output_job *j = &jobs[i];
		struct output *out = &o->cfg->outputs[i];

		if (j->threaded)
			pthread_join(j->thread, NULL);
		t1 = mono_ns(); /* the last output written: what follows is committing */
		commit_one(j);
		/*
		 * while a later output is still being written this thread would
		 * only wait for it: the file this one replaced is let go of now
		 */
		if (j->replaced >= 0 && writing_after(jobs, o->cfg->nr_outputs, i)) {
			close(j->replaced);
			j->replaced = -1;
		}
		if (j->ret == -E2BIG && out->format == OUTPUT_GPERF)
			pr_warn("'%s': too many processes for one address space\n", out->path);
		if (j->write_failed && !o->streams.err[i])
			pr_warn("cannot write '%s': %s\n", out->path, strerror(-j->ret));
		if (!j->ret)
			print_written(o, i, &j->wres, j->bytes, j->samples, j->offcpu_samples);
		pr_debug(
			"'%s': written in %.1f ms of CPU (%.0f in the kernel, %ld page faults), %.1f ms "
			"of wall (%.1f writing its streamed bytes, %.1f its last bytes and fsync)\n",
			out->path, j->cpu_ms, j->sys_ms, j->faults, j->wall_ms,
			(double)j->drain_ns / 1e6, j->sync_ms);
		if (j->ret && !err)
			err = j->ret;
	}
	sync_dirs(o, jobs);
	let_go_replaced(o, jobs);
	free(o->jobs);
	o->jobs = NULL;
	/* finalize's wall time after the names (docs/BENCHMARKS.md) */
	pr_info("outputs: wall ms: %.1f until the last was written (their threads), %.1f "
		"committing it and what it waited for (renames, their directories' fsync)\n",
		(double)(t1 - t0) / 1e6, (double)(mono_ns() - t1) / 1e6);
	if (o->pusher) {
		push__submit(o->pusher, all); /* queued: the network is the push thread's */
		if (log_verbosity)
			push__report(o->pusher, stderr);
	}
	return err;
}

void run_outputs__prune(struct run_outputs *o)
{
	if (o->cfg->output_dir && o->cfg->keep)
		outdir__prune(o->cfg->output_dir, o->names,
			      o->cfg->nr_outputs + (o->pusher != NULL), o->cfg->keep);
}

void run_outputs__end(struct run_outputs *o)
{
	if (!o->cfg)
		return;
	jobs_drop(o);
	perfdata_streams__close(&o->streams);
	for (int i = 0; i < o->cfg->nr_outputs; i++) {
		output__abort(&o->cfg->outputs[i]);
		free(o->paths[i]);
		o->paths[i] = NULL;
	}
	o->p = NULL;
	free(o->jit_dir);
	o->jit_dir = NULL;
}

int run_outputs__finish(struct run_outputs *o)
{
	struct push_counters c;

	if (!o->pusher)
		return 0;
	push__finish(o->pusher);
	push__report(o->pusher, stderr);
	push__counters(o->pusher, &c);
	return c.dropped ? -EIO : 0;
}

void run_outputs__free(struct run_outputs *o)
{
	if (o->cfg) {
		uint64_t t0 = mono_ns();
		int n = o->nr_replaced;

		join_let_go(o);
		/* the replaced files' evictions the exit waits for (docs/BENCHMARKS.md, eighth pass) */
		if (n)
			pr_debug("exit: %.1f ms of wall waiting for %d replaced files' evictions\n",
				 (double)(mono_ns() - t0) / 1e6, n);
	}
	push__free(o->pusher);
	o->pusher = NULL;
}

/* SPDX-License-Identifier: MIT */
/*
 * The run's outputs, one set a profile (the run, or each --interval): the
 * -o files (named by the interval's start under --output-dir, temporaries
 * until written: output.h), the perf.data streams (perfdata_streams.h),
 * the JIT images and the files kept for the readers (build-id cache, copies
 * beside a .prof: dso_export.h), the writers' loop (write.h) and --push
 * (push.h). Order for each profile: run_outputs__begin before its
 * sampling, run_outputs__maps/__sample/__round while it is aggregated,
 * run_outputs__prepare and run_outputs__write once it is symbolized,
 * run_outputs__prune after its summary, run_outputs__end.
 */
#ifndef BPFPROF_RUN_OUTPUTS_H
#define BPFPROF_RUN_OUTPUTS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include "cli.h"
#include "perfdata_streams.h"
#include "profile.h"

struct jvm_perfmaps;
struct output_job;
struct pusher;
struct symbolizer;

struct run_outputs {
	/* borrowed: its outputs[] are opened, renamed a profile and committed here */
	struct bpfprof_config *cfg;
	/* -o names as given; in --output-dir mode each profile's paths derive from them; then push's spool name */
	const char *names[CLI_MAX_OUTPUTS + 1];
	char *paths[CLI_MAX_OUTPUTS]; /* --output-dir: this profile's paths (owned) */
	struct pusher *pusher; /* --push: each profile also goes to a Pyroscope server; NULL: none */
	uint64_t last_stamp_s; /* the last profile's name stamp (CLOCK_REALTIME), s */
	/* the profile being written: streamed to, its JIT images planned (borrowed) */
	struct profile *p;
	struct symbolizer *sy; /* borrowed: JIT files and ELF files behind p's mappings */
	struct perfdata_streams streams;
	/*
	 * Where its JIT images go (jit_elf.h): "<first .prof or perf.data
	 * output>.jit", absolute, as .prof maps text and perf.data MMAP2
	 * records name them. NULL when no such output is written to a file.
	 */
	char *jit_dir;
	/*
	 * The files the last commits replaced (output__rename), closed by a
	 * thread of their own: their eviction is not the commits' wait.
	 * Joined at the next write and at run_outputs__free.
	 */
	int replaced[CLI_MAX_OUTPUTS];
	int nr_replaced;
	pthread_t let_go;
	bool letting_go;
	/*
	 * The profile's writers, one job an output (owned): made by
	 * run_outputs__prepare, which starts those that read nothing it
	 * fills (.folded, .svg: the longest) before its own work; joined and
	 * freed by run_outputs__write, or by run_outputs__end when it never
	 * came. NULL between profiles.
	 */
	struct output_job *jobs;
	/*
	 * The profile the jobs write, weighed by time blocked: as
	 * run_outputs__prepare began (the jobs it started), as
	 * run_outputs__write began (the others)
	 */
	struct profile offcpu_early, offcpu_view;
	/*
	 * Work of the caller's that reads the profile only (the summary's
	 * text), called once by run_outputs__write on its thread while the
	 * writers run, rather than after them on finalize's critical path.
	 * NULL: none. Set by the caller.
	 */
	void (*meanwhile)(void *ctx);
	void *meanwhile_ctx;
};

/*
 * Take cfg's outputs (names kept for every profile's) and start --push
 * (push__new: its checks, the auth file, its thread). Returns 0 or -errno
 * (message printed). Free with run_outputs__free.
 */
int run_outputs__init(struct run_outputs *o, struct bpfprof_config *cfg);

/*
 * Open profile p's outputs as temporaries (a bad path fails now, before
 * sampling), named by p->start_realtime_ns under --output-dir, and their
 * perf.data streams (the kernel into p first). boundary: when the last
 * profile ended (CLOCK_MONOTONIC), 0 for the first: a start within the
 * second of the last one's moves to the next second, so that no file
 * replaces the last profile's. p and sy are borrowed until
 * run_outputs__end. Returns 0 or -errno (message printed); call
 * run_outputs__end either way.
 */
int run_outputs__begin(struct run_outputs *o, struct profile *p, struct symbolizer *sy,
		       uint64_t boundary);

/*
 * Process proc's mappings, new or grown (agg_observer.maps_changed) at
 * time_ns: its JIT images planned, perf.data's COMM and MMAP2 records
 * written. Returns 0 or -ENOMEM; a stream that fails is dropped.
 */
int run_outputs__maps(struct run_outputs *o, const struct profile *p, uint32_t proc,
		      uint64_t time_ns);

/* A CPU sample, or an off-CPU block (offcpu), to the perf.data streams. */
void run_outputs__sample(struct run_outputs *o, const struct profile_sample *s, bool offcpu);

/* A ring-buffer batch ended (perfdata_streams__round): not while older records are kept back. */
void run_outputs__round(struct run_outputs *o);

/*
 * Before writing the symbolized p: the writers that need none of what
 * follows started in threads of their own (.svg, .folded: they read the
 * locations' names, the stacks and the comms only, which nothing below
 * changes; p is not to be changed but by this call until
 * run_outputs__write), then its JIT images, the files its readers
 * open (perf's build-id cache for perf.data, as perf record fills it;
 * copies beside the first .prof for files its maps text could not name
 * otherwise), then the perf maps jvm asked for go (jvm_perfmaps__release;
 * may be NULL), then the build-ids perf.data records that the symbolizer
 * could not (build_ids.h). A failure but the last costs names in those
 * readers only. Returns 0 or -ENOMEM (build-ids, message printed).
 */
int run_outputs__prepare(struct run_outputs *o, struct profile *p, struct jvm_perfmaps *jvm);

/*
 * Write every output of p, the p given to run_outputs__prepare if it came
 * (o->meanwhile called meanwhile)
 * (an off-CPU output weighs p by time blocked;
 * perf.data's end only: it was streamed) and commit it, one "wrote" line
 * each on stderr, then queue p for --push. Returns 0 or the first -errno
 * (message printed; that output's temporary removed, the others written).
 */
int run_outputs__write(struct run_outputs *o, const struct profile *p);

/* --output-dir with --keep: the newest --keep sets of files stay (outdir__prune). */
void run_outputs__prune(struct run_outputs *o);

/*
 * Drop what run_outputs__begin made: writers still running joined (when
 * run_outputs__write did not come), streams, temporaries (unless
 * committed), paths.
 */
void run_outputs__end(struct run_outputs *o);

/*
 * --push: push what is queued (at most --push-timeout), print its
 * counters. Returns 0, or -EIO when a profile was not pushed.
 */
int run_outputs__finish(struct run_outputs *o);

/* Stop --push (its thread) and free it; o's outputs are cfg's, not touched. */
void run_outputs__free(struct run_outputs *o);

#endif /* BPFPROF_RUN_OUTPUTS_H */

// SPDX-License-Identifier: MIT
/*
 * An interval (interval.h): the ring-buffer records of one profile period
 * → the aggregator → its outputs and summary. The record path (stack
 * copies, the cut, records carried to the next period) and each period's
 * lifecycle; main.c polls the session and decides when the run ends.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "agg.h"
#include "buf.h"
#include "interp.h"
#include "interp_hotspot.h"
#include "interp_v8.h"
#include "interval.h"
#include "jit_images.h"
#include "jvm_attach.h"
#include "jvm_perfmap.h"
#include "log.h"
#include "proc_table.h"
#include "profile.h"
#include "report.h"
#include "run_outputs.h"
#include "session.h"
#include "symbolize.h"
#include "unwind_check.h"
#include "unwind_copies.h"
#include "unwinder.h"

struct interval {
	/* borrowed for the run (interval__new) */
	const struct bpfprof_config *cfg;
	struct run_outputs *out;
	struct symbolizer *sy;
	struct proc_table *procs;
	struct interval_capture cap; /* borrowed, from interval__attach; zero before */
	/* the period in hand: its profile and aggregator (NULL between periods) */
	struct profile *p;
	struct agg *agg;
	/*
	 * Where its sampled time ends: the -d deadline or the period's
	 * boundary, known ahead, or when the run's end was decided (a signal,
	 * the targets' exit). Records stamped from then on are not its own,
	 * however late they are read (both CPUs busy, a backlog in the ring
	 * buffer). 0 while there is none.
	 */
	uint64_t cut_ns;
	bool last; /* the run's last period: records past the cut are dropped, not carried */
	struct report_counters before; /* the run's counters when it began (report.h) */
	/* the run's clock: sampling's start, the next boundary (0: no --interval), the deadline once passed */
	uint64_t start_ns, next_boundary_ns, stop_at_ns;
	uint64_t ended_ns; /* where the last period ended, for the next one's start */
	uint64_t root_walks; /* unwinder__root_walks of every period so far, as the BPF counters */
	uint64_t round_ns; /* CLOCK_MONOTONIC of the last FINISHED_ROUND (interval__batch_read) */
	/*
	 * Records read past a period's cut, in ring-buffer order, for the
	 * next period: each a u64 size, then its bytes padded to 8.
	 */
	struct buf carry;
	/* --call-graph dwarf: the sample a copy makes; --check-unwind: the copy and its walk, for libdwfl */
	struct bpfprof_sample *copy_sample;
	struct bpfprof_ustack_copy *copy_check;
};

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The -d deadline, 0 for none */
static uint64_t deadline_of(const struct interval *iv)
{
	return iv->cfg->duration_s > 0 ? iv->start_ns + (uint64_t)(iv->cfg->duration_s * 1e9) : 0;
}

/* The end of the current profile's sampled time: the -d deadline or the next boundary, 0 for none. */
static uint64_t cut_of(const struct interval *iv)
{
	uint64_t end = deadline_of(iv), next = iv->next_boundary_ns;

	return next && (!end || next < end) ? next : end;
}

/*
 * A wake-up costs the reader 20-30 us on this project's VMs: a 100 ms timer
 * was 20-70 of a 3 s run's 30-80 (docs/BENCHMARKS.md, benchmark 2's own
 * CPU, third pass), where each deadline it served is known ahead.
 */
int interval__poll_timeout_ms(const struct interval *iv, uint64_t now, uint64_t due_ns)
{
	uint64_t wait = INTERVAL_POLL_MAX_NS, end = cut_of(iv);

	if (iv->cap.copies && unwind_copies__nr_held(iv->cap.copies))
		wait = INTERVAL_HELD_RETRY_NS;
	if (due_ns && (!end || due_ns < end))
		end = due_ns;
	if (end && end <= now)
		return 0;
	if (end && end - now < wait)
		wait = end - now;
	return (int)((wait + 999999) / 1000000);
}

/*
 * A process's maps, new or grown (agg_observer; ctx: the interval), after
 * the process table has had its files pinned and its tables queued
 * (proc_table__maps_changed): its outputs' records (run_outputs.h).
 */
static int maps_changed(void *ctx, const struct profile *p, uint32_t proc, uint64_t time_ns)
{
	return run_outputs__maps(((struct interval *)ctx)->out, p, proc, time_ns);
}

static int sampled(void *ctx, const struct profile *p, uint32_t proc,
		   const struct profile_sample *s)
{
	run_outputs__sample(((struct interval *)ctx)->out, s, false);
	return 0;
}

static int blocked(void *ctx, const struct profile *p, uint32_t proc,
		   const struct profile_sample *s)
{
	run_outputs__sample(((struct interval *)ctx)->out, s, true);
	return 0;
}

/*
 * perf report delivers, at each FINISHED_ROUND, the records up to the
 * newest one read before the round before it, and rejects an older one
 * that comes later ("out of order events"). Batches come as often as a
 * new process's first records wake the reader (one record each, a
 * millisecond apart), and a record is reserved after its walk, so one
 * CPU's can come two such batches after a newer one of another's (once in
 * unwind.sh's gold run, 2026-11-29). Rounds ROUND_GAP_NS apart at least
 * leave that much room; perf record's come a pass over every CPU's buffer.
 */
#define ROUND_GAP_NS (100ULL * 1000 * 1000)

void interval__batch_read(struct interval *iv)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);

	if (unwind_copies__nr_held(iv->cap.copies) || now - iv->round_ns < ROUND_GAP_NS)
		return;
	iv->round_ns = now;
	run_outputs__round(iv->out);
}

/* The counters a profile's summary gives the difference of (report.h); per_cpu: each CPU's drops, or NULL */
static void counters_now(struct interval *iv, struct report_counters *c, uint64_t *per_cpu)
{
	struct session *s = iv->cap.s;
	uint64_t samples;

	memset(c, 0, sizeof(*c));
	if (s)
		session__stats(s, &samples, &c->dropped, per_cpu);
	if (s && iv->cfg->offcpu)
		session__offcpu_stats(s, &c->off);
	interps__stats(iv->cap.interps, INTERP_PYTHON, &c->py, sizeof(c->py));
}

struct interval *interval__new(const struct bpfprof_config *cfg, struct run_outputs *out,
			       struct symbolizer *sy, struct proc_table *procs)
{
	struct interval *iv = calloc(1, sizeof(*iv));

	if (!iv)
		return NULL;
	iv->cfg = cfg;
	iv->out = out;
	iv->sy = sy;
	iv->procs = procs;
	if (cfg->call_graph == CALL_GRAPH_DWARF) {
		iv->copy_sample = malloc(sizeof(*iv->copy_sample));
		iv->copy_check = malloc(sizeof(*iv->copy_check));
		if (!iv->copy_sample || !iv->copy_check) {
			interval__free(iv);
			return NULL;
		}
	}
	return iv;
}

void interval__free(struct interval *iv)
{
	if (!iv)
		return;
	interval__drop(iv);
	buf__free(&iv->carry);
	free(iv->copy_sample);
	free(iv->copy_check);
	free(iv);
}

void interval__attach(struct interval *iv, const struct interval_capture *c)
{
	iv->cap = *c;
	interps__hook(iv->cap.interps, iv->agg);
}

/*
 * A record past the period's cut goes to the next period, and stops the
 * ring buffer's consumer (-ECANCELED, after libbpf has counted the record
 * consumed) so that this period can end.
 */
static int carry_record(struct interval *iv, const void *data, size_t size)
{
	buf__put_u64(&iv->carry, size);
	buf__put_bytes(&iv->carry, data, size);
	buf__put_zeros(&iv->carry, (8 - size % 8) % 8);
	return iv->carry.err ?: -ECANCELED;
}

int interval__on_record(void *ctx, void *data, size_t size)
{
	struct interval *iv = ctx;
	struct unwind_copies *copies = iv->cap.copies;
	uint64_t t;
	int err;

	/* what the notices' thread captured, the exec mappings: before the record */
	if ((err = proc_table__take_captured(iv->procs)))
		return err;
	proc_table__exec_mappings(iv->procs);
	if (size >= 4 && *(const uint32_t *)data == BPFPROF_REC_USTACK_COPY) {
		report__check_stack(iv->cap.checker, data, size);
		return 0;
	}
	if (size >= 4 && *(const uint32_t *)data == BPFPROF_REC_SAMPLE_COPY) {
		/* walked here with the tables the BPF walk lacked, then taken as the sample it makes */
		if (!copies)
			return 0;
		err = unwind_copies__sample(copies, data, size, iv->copy_sample, &size);
		if (err)
			return err == -ENOMEM ? err :
						0; /* 1: kept until its process is registered */
		if (iv->cap.checker) {
			size_t n;

			unwind_copies__check_record(copies, data, iv->copy_check, &n);
			report__check_stack(iv->cap.checker, iv->copy_check, n);
		}
		data = iv->copy_sample;
	}
	if (iv->cut_ns && !agg__record_time(data, size, &t) && t >= iv->cut_ns)
		return iv->last ? 0 : carry_record(iv, data, size);
	/* aggregated a few records later, its stack's memory fetched meanwhile (agg.h) */
	err = agg__queue(iv->agg, data, size);

	return err == -ENOMEM ? err : 0;
}

/* The records queued by interval__on_record, into the profile: before anything reads it. */
static int flush_records(struct interval *iv)
{
	int err = agg__flush(iv->agg);

	return err == -ENOMEM ? err : 0;
}

/* A stack copy's sample, walked once its process was registered */
static int on_released(void *ctx, const struct bpfprof_sample *s, size_t size)
{
	int err = interval__on_record(ctx, (void *)s, size);

	return err == -ECANCELED ? 0 : err; /* carried to the next period */
}

int interval__release(struct interval *iv, bool all)
{
	int err = iv->cap.copies ? unwind_copies__release(iv->cap.copies, all, on_released, iv) : 0;

	return err ?: flush_records(iv);
}

int interval__on_notice(void *ctx, void *data, size_t size)
{
	return proc_table__notice(((struct interval *)ctx)->procs, data, size);
}

/*
 * Hand the records carried past the last period's cut to the current one,
 * in their order; those past its cut too are carried on. Returns 0 or -ENOMEM.
 */
static int feed_carried(struct interval *iv)
{
	struct buf b = iv->carry;
	size_t off = 0;
	int err = 0;

	memset(&iv->carry, 0, sizeof(iv->carry));
	while (!err && off + 8 <= b.len) {
		uint64_t size;

		memcpy(&size, b.data + off, 8);
		err = interval__on_record(iv, b.data + off + 8, size);
		off += 8 + size + (8 - size % 8) % 8;
		if (err == -ECANCELED)
			err = 0;
	}
	buf__free(&b);
	return err ?: flush_records(iv);
}

int interval__begin(struct interval *iv, uint64_t boundary)
{
	const struct bpfprof_config *cfg = iv->cfg;
	struct agg_observer obs = {
		.maps_changed = maps_changed, .sample = sampled, .offcpu = blocked, .ctx = iv
	};
	struct profile *p;
	int err;

	iv->cut_ns = 0;
	iv->last = false;
	counters_now(iv, &iv->before, NULL);
	iv->p = p = profile__new();
	iv->agg = p ? agg__new(p, iv->procs, 1000000000ULL / cfg->freq_hz) : NULL;
	if (!iv->agg)
		return -ENOMEM;
	interps__hook(iv->cap.interps, iv->agg);
	p->event = profile__intern(p, cfg->event);
	p->freq_hz = cfg->freq_hz;
	p->offcpu = cfg->offcpu;
	p->offcpu_thresh_ns = cfg->offcpu_thresh_us * 1000;
	p->period_ns = 1000000000ULL / cfg->freq_hz;
	p->start_ns = now_ns(CLOCK_MONOTONIC);
	p->start_realtime_ns = now_ns(CLOCK_REALTIME);
	if (boundary && boundary < p->start_ns) {
		p->start_realtime_ns -= p->start_ns - boundary;
		p->start_ns = boundary;
	}
	/* the maps of processes gone before this profile's start go */
	proc_table__new_profile(iv->procs, p->start_ns, now_ns(CLOCK_MONOTONIC));
	err = run_outputs__begin(iv->out, p, iv->sy, boundary);
	if (err)
		return err;
	agg__set_observer(iv->agg, &obs);
	return 0;
}

int interval__symbolize_ahead(struct interval *iv)
{
	return iv->p ? symbolizer__symbolize_ahead(iv->sy, iv->p) : 0;
}

void interval__drop(struct interval *iv)
{
	run_outputs__end(iv->out);
	symbolizer__forget_profile(iv->sy, iv->p);
	agg__free(iv->agg);
	profile__free(iv->p);
	iv->agg = NULL;
	iv->p = NULL;
	iv->cut_ns = 0;
	iv->last = false;
	memset(&iv->before, 0, sizeof(iv->before));
}

void interval__start(struct interval *iv, uint64_t since_ns)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);

	iv->p->start_ns = iv->start_ns = since_ns && since_ns < now ? since_ns : now;
	/* pprof's time: when sampling started */
	iv->p->start_realtime_ns = now_ns(CLOCK_REALTIME) - (now - iv->start_ns);
	if (iv->cfg->interval_s > 0)
		iv->next_boundary_ns = iv->start_ns + (uint64_t)(iv->cfg->interval_s * 1e9);
	iv->cut_ns = cut_of(iv);
}

bool interval__deadline_passed(struct interval *iv, uint64_t now)
{
	if (iv->cfg->duration_s > 0 && (double)(now - iv->start_ns) >= iv->cfg->duration_s * 1e9) {
		/* the deadline, however late this loop got there */
		iv->stop_at_ns = deadline_of(iv);
		return true;
	}
	return false;
}

bool interval__boundary_passed(const struct interval *iv, uint64_t now)
{
	/*
	 * Each boundary passed ends its period there, also one passed before
	 * the run's end (both read late, after a backlog)
	 */
	return iv->next_boundary_ns && now >= iv->next_boundary_ns &&
	       (!iv->stop_at_ns || iv->next_boundary_ns < iv->stop_at_ns);
}

int interval__end_at_boundary(struct interval *iv)
{
	int err;

	iv->p->end_ns = iv->next_boundary_ns;
	err = interval__release(iv, true);
	if (!err)
		err = interval__end(iv);
	/* the symbol tables kept for the next intervals: their built form only */
	symbolizer__settle(iv->sy);
	iv->ended_ns = iv->p->end_ns;
	interval__drop(iv);
	return err;
}

int interval__begin_next(struct interval *iv)
{
	int err = interval__begin(iv, iv->ended_ns);

	if (err)
		return err;
	iv->next_boundary_ns += (uint64_t)(iv->cfg->interval_s * 1e9);
	iv->cut_ns = cut_of(iv);
	return feed_carried(iv);
}

const struct profile *interval__profile(const struct interval *iv)
{
	return iv->p;
}

uint64_t interval__cut_ns(const struct interval *iv)
{
	return iv->cut_ns;
}

void interval__progress(struct interval *iv, uint64_t now)
{
	struct report_counters c;

	counters_now(iv, &c, NULL);
	report__counters_diff(&c, &iv->before, &c);
	report__progress(stderr, (double)(now - iv->start_ns) / 1e9, iv->p->nr_samples, c.dropped);
}

void interval__last(struct interval *iv)
{
	/*
	 * The sampled time ends at the deadline, or where the run's end was
	 * decided; the records of this period carried past an earlier cut
	 * come first, then the ring buffer's, up to the cut.
	 */
	iv->cut_ns = iv->stop_at_ns ?: now_ns(CLOCK_MONOTONIC);
	iv->last = true;
}

int interval__take_rest(struct interval *iv)
{
	if (interval__release(iv, true) || feed_carried(iv))
		return -ENOMEM;
	iv->p->end_ns = iv->cut_ns;
	return 0;
}

/* The summary's lines after p's lost samples (report.h); d: p's counters */
static void report_counters(struct interval *iv, const struct profile *p,
			    const struct report_counters *d)
{
	const struct bpfprof_config *cfg = iv->cfg;
	struct session *s = iv->cap.s;
	uint64_t same, shorter, differ, run_ns, runs, st[BPFPROF_STAT_NR];

	if (cfg->offcpu) {
		report__offcpu_summary(stderr, p, cfg->output_dir ? 0 : cfg->top_n);
		report__offcpu_counts(stderr, &d->off, cfg->offcpu_thresh_us);
	}
	session__walk_stats(s, st);
	iv->root_walks += unwinder__root_walks(p, cfg->call_graph == CALL_GRAPH_FP);
	report__walks(stderr, st, iv->root_walks, iv->cap.unwinder, iv->cap.copies,
		      iv->cap.unwind_cache, proc_table__mmap_events(iv->procs),
		      cfg->call_graph == CALL_GRAPH_DWARF ? "dwarf" : "fp");
	if (log_verbosity) {
		struct session_map_entries me;

		session__map_entries(s, &me);
		report__held(stderr, iv->sy, iv->cap.unwinder, proc_table__maps_cache(iv->procs),
			     &me, proc_table__notice_thread(iv->procs));
	}
	if (interps__has(iv->cap.interps, INTERP_PYTHON))
		report__python(stderr, &d->py);
	if (interps__has(iv->cap.interps, INTERP_HOTSPOT)) {
		struct hotspot_stats hs;

		if (!interps__stats(iv->cap.interps, INTERP_HOTSPOT, &hs, sizeof(hs)))
			report__hotspot(stderr, &hs);
	}
	if (log_verbosity) {
		struct v8_stats v8;

		if (!interps__stats(iv->cap.interps, INTERP_V8, &v8, sizeof(v8)))
			report__v8(stderr, &v8, st);
	}
	if (!session__bpf_run_time(s, &run_ns, &runs))
		report__bpf_cost(run_ns, runs);
	if (iv->cap.checker)
		report__unwind_check(stderr, unwind_check__stats(iv->cap.checker));
	if (cfg->check_user_stacks) {
		session__check_stats(s, &same, &shorter, &differ);
		report__user_stacks(stderr, same, shorter, differ);
	}
}

/* The summary's text for interval__end, made while the outputs are written. */
struct summary_text {
	const struct profile *p;
	double duration_s;
	int top_n;
	char *text; /* report__summary's lines (open_memstream); NULL: not made */
	size_t len;
};

static void summary_text_make(void *ctx)
{
	struct summary_text *st = ctx;
	FILE *f = open_memstream(&st->text, &st->len);

	if (!f)
		return;
	report__summary(f, st->p, st->duration_s, st->top_n);
	if (fclose(f)) {
		free(st->text);
		st->text = NULL;
	}
}

int interval__end(struct interval *iv)
{
	const struct bpfprof_config *cfg = iv->cfg;
	struct profile *p = iv->p;
	struct session *s = iv->cap.s;
	struct jvm_perfmaps *jvm_maps = NULL;
	struct report_counters now, d;
	struct summary_text summary = { 0 };
	int err, nr_cpus = session__nr_cpus(s);
	uint64_t per_cpu[nr_cpus], c0, c1, c2, t1, t2;
	/* the wall clock at each step: finalize's critical path (-vv; docs/BENCHMARKS.md) */
	uint64_t w0 = now_ns(CLOCK_MONOTONIC), w1, w2, w3, w4;

	/* the cut, where the caller knows it: not when symbolizing begins */
	if (!p->end_ns)
		p->end_ns = iv->cut_ns ?: now_ns(CLOCK_MONOTONIC);
	err = session__drain(s);
	if (err < 0 && err != -ECANCELED) {
		pr_warn("ring buffer: %s\n", strerror(-err));
		return err;
	}
	/* the drained records in the profile, then the streams' round */
	if (flush_records(iv))
		return -ENOMEM;
	if (err)
		interval__batch_read(iv);
	/* what the notices' thread captured since the last record */
	err = proc_table__take_captured(iv->procs);
	if (err)
		return err;
	counters_now(iv, &now, NULL);
	report__counters_diff(&now, &iv->before, &d);
	p->nr_lost = d.dropped;
	if (cfg->offcpu)
		p->nr_offcpu_lost = d.off.dropped;
	if (agg__nr_bad(iv->agg))
		pr_warn("%llu malformed ring buffer records skipped\n",
			(unsigned long long)agg__nr_bad(iv->agg));
	/* running JVMs write their perf maps for the symbolizer */
	if (!cfg->no_jvm_perfmap)
		jvm_maps = jvm_perfmaps__ask(p, iv->sy, 2 * JVM_ATTACH_TIMEOUT_MS);
	w1 = now_ns(CLOCK_MONOTONIC);
	c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	err = symbolizer__symbolize(iv->sy, p);
	if (err) {
		jvm_perfmaps__free(jvm_maps);
		pr_warn("symbolization failed: %s\n", strerror(-err));
		return err;
	}
	c1 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	w2 = now_ns(CLOCK_MONOTONIC);
	/* this thread's: the longest writers run beside it (run_outputs__prepare) */
	t1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	err = run_outputs__prepare(iv->out, p, jvm_maps);
	if (err)
		return err;
	t2 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	w3 = now_ns(CLOCK_MONOTONIC);
	summary.p = p;
	summary.duration_s = (double)(p->end_ns - p->start_ns) / 1e9;
	summary.top_n = cfg->output_dir ? 0 : cfg->top_n;
	iv->out->meanwhile = summary_text_make;
	iv->out->meanwhile_ctx = &summary;
	err = run_outputs__write(iv->out, p);
	iv->out->meanwhile = NULL;
	w4 = now_ns(CLOCK_MONOTONIC);
	c2 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	/* finalize's cost, where it goes (bench/finalize.sh, docs/BENCHMARKS.md) */
	pr_info("finalize: CPU ms: %.1f symbolizing, %.1f preparing the outputs, %.1f writing them\n",
		(double)(c1 - c0) / 1e6, (double)(t2 - t1) / 1e6,
		(double)(c2 - c1 - (t2 - t1)) / 1e6);
	/* made while the outputs were written; here when it could not be */
	if (summary.text)
		fwrite(summary.text, 1, summary.len, stderr);
	else
		report__summary(stderr, p, summary.duration_s, summary.top_n);
	free(summary.text);
	report__unnamed_jit(stderr, p, jit_images__why_unnamed,
			    &(struct jit_images_why){ iv->sy, jvm_maps, cfg->no_jvm_perfmap });
	jvm_perfmaps__free(jvm_maps);
	/* the drops go on while it is written: counted up to now (each CPU's: since the start) */
	counters_now(iv, &now, per_cpu);
	report__counters_diff(&now, &iv->before, &now);
	report__lost(stderr, now.dropped, per_cpu, nr_cpus, cfg->ringbuf_bytes);
	report_counters(iv, p, &d);
	if (!p->nr_samples)
		pr_warn("no samples collected\n");
	run_outputs__prune(iv->out);
	pr_debug("finalize: wall ms: %.1f draining the records and the notices, %.1f symbolizing, "
		 "%.1f preparing the outputs, %.1f writing and committing them, %.1f summing up\n",
		 (double)(w1 - w0) / 1e6, (double)(w2 - w1) / 1e6, (double)(w3 - w2) / 1e6,
		 (double)(w4 - w3) / 1e6, (double)(now_ns(CLOCK_MONOTONIC) - w4) / 1e6);
	return err;
}

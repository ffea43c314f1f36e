// SPDX-License-Identifier: MIT
/*
 * Summary of a profile: totals and top functions by self samples, then the
 * counters of each stage, one line each (include/report.h).
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "interp_hotspot.h"
#include "log.h"
#include "maps_cache.h"
#include "mmap_events.h"
#include "notice_thread.h"
#include "report.h"
#include "symbolize.h"
#include "unwind_cache.h"
#include "unwind_check.h"
#include "unwind_copies.h"
#include "unwinder.h"

struct leaf {
	const char *func;
	const char *dso;
	uint64_t self;
};

static int cmp_key(const void *a, const void *b)
{
	const struct leaf *x = a, *y = b;

	if (x->func != y->func)
		return (uintptr_t)x->func < (uintptr_t)y->func ? -1 : 1;
	if (x->dso != y->dso)
		return (uintptr_t)x->dso < (uintptr_t)y->dso ? -1 : 1;
	return 0;
}

static int cmp_self(const void *a, const void *b)
{
	const struct leaf *x = a, *y = b;

	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	return strcmp(x->func ? x->func : "", y->func ? y->func : "");
}

int report__top(const struct profile *p, struct report_top *top, int n)
{
	struct leaf *leaves;
	size_t nr = 0, i, out;
	int filled = 0;

	leaves = calloc(p->nr_stacks ? p->nr_stacks : 1, sizeof(*leaves));
	if (!leaves)
		return -ENOMEM;
	for (i = 0; i < p->nr_stacks; i++) {
		const struct profile_stack *s = &p->stacks[i];
		const struct profile_location *l;
		uint64_t w = profile__weight(p, s);
		/* a block's kernel leaf is always the scheduler's: name where the program waits */
		size_t leaf = p->view == PROFILE_VIEW_OFFCPU && s->nr_user ? s->nr_kernel : 0;

		if (!s->locs || !(s->nr_kernel + s->nr_user) || !w)
			continue;
		l = &p->locs[s->locs[leaf]];
		/* an unnamed address is its own row ("DSO+0xADDR"), never one per DSO */
		leaves[nr++] = (struct leaf){ l->func ? l->func : l->addr_name, l->dso, w };
	}
	/* fold leaves of the same (function, DSO): both are interned pointers */
	qsort(leaves, nr, sizeof(*leaves), cmp_key);
	for (i = 0, out = 0; i < nr; i++) {
		if (out && !cmp_key(&leaves[out - 1], &leaves[i]))
			leaves[out - 1].self += leaves[i].self;
		else
			leaves[out++] = leaves[i];
	}
	qsort(leaves, out, sizeof(*leaves), cmp_self);
	for (i = 0; i < out && filled < n; i++, filled++)
		top[filled] = (struct report_top){ leaves[i].func, leaves[i].dso, leaves[i].self };
	free(leaves);
	return filled;
}

void report__summary(FILE *f, const struct profile *p, double duration_s, int top_n)
{
	struct report_top top[64];
	int n, i;

	fprintf(f, "bpfprof: %.2f s, %llu samples, %llu lost, %zu processes, %s at %u Hz\n",
		duration_s, (unsigned long long)p->nr_samples, (unsigned long long)p->nr_lost,
		p->nr_procs, p->event ? p->event : "?", p->freq_hz);
	if (top_n > 64)
		top_n = 64;
	n = report__top(p, top, top_n);
	if (n <= 0 || !p->nr_samples)
		return;
	fprintf(f, "%8s %8s  %s\n", "self%", "samples", "function [dso]");
	for (i = 0; i < n; i++) {
		const char *dso = top[i].dso ? top[i].dso : "?";
		bool bracketed = dso[0] == '['; /* [kernel.kallsyms], [vdso] */

		fprintf(f, "%7.2f%% %8llu  %s %s%s%s\n",
			100.0 * (double)top[i].self / (double)p->nr_samples,
			(unsigned long long)top[i].self, top[i].func ? top[i].func : "[unknown]",
			bracketed ? "" : "[", dso, bracketed ? "" : "]");
	}
}

void report__offcpu_summary(FILE *f, const struct profile *p, int top_n)
{
	struct report_top top[64];
	struct profile v = *p;
	uint64_t total;
	int n, i;

	if (!p->offcpu)
		return;
	v.view = PROFILE_VIEW_OFFCPU;
	fprintf(f, "bpfprof: off-CPU: %llu blocks of %llu us or more, %.3f s blocked, %llu lost\n",
		(unsigned long long)p->nr_offcpu_blocks,
		(unsigned long long)(p->offcpu_thresh_ns / 1000), (double)p->offcpu_ns / 1e9,
		(unsigned long long)p->nr_offcpu_lost);
	if (top_n > 64)
		top_n = 64;
	total = profile__total_weight(&v);
	n = report__top(&v, top, top_n);
	if (n <= 0 || !total)
		return;
	fprintf(f, "%8s %10s  %s\n", "off%", "off-CPU ms",
		"user leaf (kernel leaf without one) [dso]");
	for (i = 0; i < n; i++) {
		const char *dso = top[i].dso ? top[i].dso : "?";
		bool bracketed = dso[0] == '[';

		fprintf(f, "%7.2f%% %10.1f  %s %s%s%s\n",
			100.0 * (double)top[i].self / (double)total, (double)top[i].self / 1000.0,
			top[i].func ? top[i].func : "[unknown]", bracketed ? "" : "[", dso,
			bracketed ? "" : "]");
	}
}

/* processes named by report__unnamed_jit, the first seen */
#define REPORT_JIT_LINES 10

/*
 * A leaf in memory that may hold JIT code: anonymous or memfd, executable.
 * Not an address outside every mapping: that is a process whose maps were
 * read too late (short-lived, exec'd), not JIT code.
 */
static bool jit_leaf(const struct profile *p, const struct profile_location *l)
{
	const struct profile_mapping *m;

	if (l->proc == PROFILE_KERNEL_PROC || l->func || l->is_jit || l->mapping < 0)
		return false;
	m = &p->procs[l->proc].mappings[l->mapping];
	return m->perms[2] == 'x' && (!m->path[0] || !strncmp(m->path, "/memfd:", 7));
}

uint64_t report__unnamed_jit(FILE *f, const struct profile *p, report_jit_why_fn why, void *ctx)
{
	uint64_t *per_proc, total = 0;
	char reason[512];
	size_t i, shown = 0;

	per_proc = calloc(p->nr_procs ? p->nr_procs : 1, sizeof(*per_proc));
	if (!per_proc)
		return 0;
	for (i = 0; i < p->nr_stacks; i++) {
		const struct profile_stack *s = &p->stacks[i];

		if (!s->locs || s->nr_kernel || !s->nr_user || !s->count)
			continue;
		if (jit_leaf(p, &p->locs[s->locs[0]]))
			per_proc[s->proc] += s->count;
	}
	for (i = 0; i < p->nr_procs; i++) {
		if (!per_proc[i])
			continue;
		total += per_proc[i];
		if (++shown > REPORT_JIT_LINES)
			continue;
		reason[0] = '\0';
		if (!why || !why(ctx, p, (uint32_t)i, reason, sizeof(reason)))
			snprintf(reason, sizeof(reason), "no JIT symbols cover them");
		fprintf(f,
			"bpfprof: %llu samples (%.1f %%) in JIT code of pid %u (%s) not named: %s\n",
			(unsigned long long)per_proc[i],
			p->nr_samples ? 100.0 * (double)per_proc[i] / (double)p->nr_samples : 0,
			p->procs[i].pid, p->procs[i].comm, reason);
	}
	if (shown > REPORT_JIT_LINES)
		fprintf(f, "bpfprof: and %zu more processes with unnamed samples in JIT code\n",
			shown - REPORT_JIT_LINES);
	free(per_proc);
	return total;
}

/* a - b for a counter that only grows; 0 should it ever be below b */
static uint64_t since(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

void report__counters_diff(const struct report_counters *now, const struct report_counters *before,
			   struct report_counters *d)
{
	const struct python_stats *py = &now->py, *py0 = &before->py;
	const struct session_offcpu_stats *off = &now->off, *off0 = &before->off;
	struct report_counters out = {
		.dropped = since(now->dropped, before->dropped),
		.off = {
			.sent = since(off->sent, off0->sent),
			.dropped = since(off->dropped, off0->dropped),
			.full = since(off->full, off0->full),
			.short_blocks = since(off->short_blocks, off0->short_blocks),
			.short_ns = since(off->short_ns, off0->short_ns),
			.kernel_only = since(off->kernel_only, off0->kernel_only),
		},
		/* the interpreters and versions: all found so far */
		.py = *py,
	};

	out.py.samples = since(py->samples, py0->samples);
	out.py.with_frames = since(py->with_frames, py0->with_frames);
	out.py.no_eval = since(py->no_eval, py0->no_eval);
	out.py.no_tstate = since(py->no_tstate, py0->no_tstate);
	out.py.walk_failed = since(py->walk_failed, py0->walk_failed);
	out.py.not_walked = since(py->not_walked, py0->not_walked);
	out.py.unsupported_samples = since(py->unsupported_samples, py0->unsupported_samples);
	out.py.frames = since(py->frames, py0->frames);
	out.py.truncated = since(py->truncated, py0->truncated);
	out.py.code_reads = since(py->code_reads, py0->code_reads);
	out.py.code_read_failed = since(py->code_read_failed, py0->code_read_failed);
	out.py.code_read_ns = since(py->code_read_ns, py0->code_read_ns);
	out.py.frame_hits = since(py->frame_hits, py0->frame_hits);
	out.py.frame_misses = since(py->frame_misses, py0->frame_misses);
	*d = out;
}

void report__progress(FILE *f, double elapsed_s, uint64_t samples, uint64_t lost)
{
	fprintf(f, "\r\033[Kbpfprof: %.1f s, %llu samples, %llu lost", elapsed_s,
		(unsigned long long)samples, (unsigned long long)lost);
}

void report__lost(FILE *f, uint64_t lost, const uint64_t *per_cpu, int nr_cpus,
		  uint64_t ringbuf_bytes)
{
	if (!lost)
		return;
	fprintf(f, "bpfprof: lost %llu samples: ring buffer full (", (unsigned long long)lost);
	for (int cpu = 0; cpu < nr_cpus; cpu++)
		if (per_cpu[cpu])
			fprintf(f, " cpu%d: %llu", cpu, (unsigned long long)per_cpu[cpu]);
	fprintf(f, " ); consider --ringbuf-size %lluM\n",
		(unsigned long long)(ringbuf_bytes >> 20 ? (ringbuf_bytes >> 20) * 4 : 4));
}

void report__offcpu_counts(FILE *f, const struct session_offcpu_stats *off, uint64_t thresh_us)
{
	fprintf(f, "bpfprof: off-CPU: %llu blocks under %llu us left out (%.3f s in all)\n",
		(unsigned long long)off->short_blocks, (unsigned long long)thresh_us,
		(double)off->short_ns / 1e9);
	if (off->kernel_only)
		fprintf(f,
			"bpfprof: off-CPU: %llu blocks with kernel frames only (not blocked in a system "
			"call, or a sample's walk overlapped theirs)\n",
			(unsigned long long)off->kernel_only);
	if (off->full)
		pr_warn("off-CPU: %llu blocks not followed: no memory for a task's slot, or more than %d long "
			"blocks waiting for their system call exit at once\n",
			(unsigned long long)off->full, BPFPROF_MAX_OFFCPU_PENDING);
	if (off->dropped)
		pr_warn("off-CPU: lost %llu blocks: ring buffer full; consider --ringbuf-size\n",
			(unsigned long long)off->dropped);
}

void report__walks(FILE *f, const uint64_t bpf[BPFPROF_STAT_NR], uint64_t roots, struct unwinder *u,
		   const struct unwind_copies *c, struct unwind_cache *uc, struct mmap_events *m,
		   const char *mode)
{
	uint64_t st[BPFPROF_STAT_NR];
	struct unwinder_stats us = { 0 };
	struct unwind_copies_stats cs = { 0 };

	memcpy(st, bpf, sizeof(st));
	if (c) {
		uint64_t cst[BPFPROF_STAT_NR];

		unwind_copies__stats(c, cst, &cs);
		for (int i = 0; i < BPFPROF_STAT_NR; i++)
			st[i] += cst[i];
	}
	if (u)
		unwinder__stats(u, &us);
	unwinder__print_walks(f, st, u ? &us : NULL, mode, roots);
	if (log_verbosity >= 1)
		unwind_cache__print(f, uc);
	if (cs.walks)
		pr_info("stack copies: %llu walked in user space, %.1f us a stack; %llu kept until "
			"their process was registered, %llu registrations asked for, %llu processes "
			"gone registered from their remembered maps (%.1f ms)\n",
			(unsigned long long)cs.walks, (double)cs.walk_ns / 1e3 / cs.walks,
			(unsigned long long)cs.held, (unsigned long long)cs.loads,
			(unsigned long long)cs.gone_loads, (double)cs.load_ns / 1e6);
	if (m) {
		struct mmap_events_stats ms;

		mmap_events__stats(m, &ms);
		pr_info("mmap events: %llu records (%llu bytes, %llu lost, %llu malformed); maps "
			"of %llu processes gone before they were read rendered from them; %zu "
			"processes held (%zu bytes, %llu evicted)\n",
			(unsigned long long)ms.records, (unsigned long long)ms.bytes,
			(unsigned long long)ms.lost, (unsigned long long)ms.bad,
			(unsigned long long)ms.rendered, ms.nr_procs, ms.held_bytes,
			(unsigned long long)ms.evicted);
	}
}

/* issue 24: over weeks of --interval these follow the processes alive, not those ever seen */
void report__held(FILE *f, const struct symbolizer *sy, struct unwinder *u,
		  const struct maps_cache *mc, const struct session_map_entries *me,
		  struct notice_thread *nt)
{
	struct symbolizer_counts sc;
	struct unwinder_stats us = { 0 };
	long rss_kb = -1;
	char line[128];
	size_t fds = 0, nr_maps, maps_bytes;
	struct dirent *de;
	FILE *st;
	DIR *d;

	if (!log_verbosity)
		return;
	st = fopen("/proc/self/status", "re");
	while (st && fgets(line, sizeof(line), st))
		if (sscanf(line, "VmRSS: %ld", &rss_kb) == 1)
			break;
	if (st)
		fclose(st);
	d = opendir("/proc/self/fd");
	while (d && (de = readdir(d)))
		fds += de->d_name[0] != '.';
	if (d)
		closedir(d);
	symbolizer__counts(sy, &sc);
	if (u)
		unwinder__stats(u, &us);
	maps_cache__counts(mc, &nr_maps, &maps_bytes);
	fprintf(f,
		"bpfprof: held: RSS %ld kB, %zu descriptors; %zu files pinned, %zu symbol tables, "
		"%zu JIT processes (%zu files); unwind: %llu processes, %llu map entries; "
		"remembered maps: %zu processes (%zu bytes)\n",
		rss_kb, fds, sc.nr_pins, sc.nr_files, sc.nr_jit_procs, sc.nr_jit_fds,
		(unsigned long long)us.nr_procs, (unsigned long long)us.nr_entries, nr_maps,
		maps_bytes);
	fprintf(f,
		"bpfprof: held: BPF map entries: unwind_procs %lld, unwind_mappings %lld, "
		"py_procs %lld, targets %lld, seen %lld, noticed %lld, offcpu_start %lld, "
		"offcpu_pending %lld (-1: not counted)\n",
		(long long)me->unwind_procs, (long long)me->unwind_mappings,
		(long long)me->py_procs, (long long)me->targets, (long long)me->seen,
		(long long)me->noticed, (long long)me->offcpu_start, (long long)me->offcpu_pending);
	if (nt) {
		struct notice_thread_stats ns;

		notice_thread__stats(nt, &ns);
		fprintf(f,
			"bpfprof: notices' thread (%s): %llu notices, %llu captured, %llu of processes "
			"gone, %llu of changed maps found by a recheck (%llu rechecks spared: no mapping event; %llu sleeps without their timer), %llu later notices of unchanged maps, %llu dropped (queue full), %llu times over its real-time budget; read "
			"at most %.1f ms after sent\n",
			ns.realtime ? "SCHED_FIFO 1" : "normal priority",
			(unsigned long long)ns.notices, (unsigned long long)ns.captured,
			(unsigned long long)ns.gone, (unsigned long long)ns.rechanged,
			(unsigned long long)ns.spared, (unsigned long long)ns.timer_spared,
			(unsigned long long)ns.notices_spared,
			(unsigned long long)ns.dropped, (unsigned long long)ns.demoted,
			(double)ns.max_delay_ns / 1e6);
	}
}

void report__python(FILE *f, const struct python_stats *st)
{
	char vers[64] = "";
	size_t n = 0;

	if (!st->nr_procs && !st->nr_unsupported)
		return;
	for (int i = 0; i < 8 && st->versions[i]; i++)
		n += (size_t)snprintf(vers + n, sizeof(vers) - n, "%s%u.%u", i ? ", " : "",
				      st->versions[i] >> 8, st->versions[i] & 0xff);
	fprintf(f,
		"bpfprof: Python: %llu samples of %llu interpreters (CPython %s): %llu with Python frames "
		"(%llu frames, %llu cut at %d); without: %llu with no eval loop in the native stack (C code, or a walk cut short), %llu with no "
		"Python thread state, %llu chain not readable, %llu before the interpreter was found\n",
		(unsigned long long)st->samples, (unsigned long long)st->nr_procs,
		vers[0] ? vers : "-", (unsigned long long)st->with_frames,
		(unsigned long long)st->frames, (unsigned long long)st->truncated,
		BPFPROF_MAX_PY_FRAMES, (unsigned long long)st->no_eval,
		(unsigned long long)st->no_tstate, (unsigned long long)st->walk_failed,
		(unsigned long long)st->not_walked);
	if (st->nr_unsupported)
		fprintf(f,
			"bpfprof: Python: %llu processes of unsupported versions or layouts profiled natively "
			"(%llu samples)\n",
			(unsigned long long)st->nr_unsupported,
			(unsigned long long)st->unsupported_samples);
	pr_info("Python code objects: %llu read (%llu not readable), %.1f us each; frame lookups %llu, "
		"%.1f %% cached\n",
		(unsigned long long)st->code_reads, (unsigned long long)st->code_read_failed,
		st->code_reads ? (double)st->code_read_ns / st->code_reads / 1000 : 0.0,
		(unsigned long long)(st->frame_hits + st->frame_misses),
		st->frame_hits + st->frame_misses ?
			100.0 * st->frame_hits / (st->frame_hits + st->frame_misses) :
			0.0);
}

/* One JVM found: its version, the offsets read and its code heaps */
static void hotspot_jvm(const struct hotspot_jvm_stat *j)
{
	char heaps[HOTSPOT_STATS_HEAPS * 40] = "";
	size_t n = 0;

	for (uint32_t h = 0; h < j->nr_heaps && h < HOTSPOT_STATS_HEAPS; h++)
		n += (size_t)snprintf(heaps + n, sizeof(heaps) - n, "%s%llx-%llx", h ? ", " : ": ",
				      (unsigned long long)j->heap_low[h],
				      (unsigned long long)j->heap_high[h]);
	pr_info("HotSpot: pid %u (%s): found HotSpot %s, offsets read (%u structs fields, %u used; "
		"%u types, %u sizes used; %u int and %u long constants, %u used), code cache "
		"%llx-%llx, %u code heaps%s\n",
		j->pid, j->comm, j->release, j->nr_structs, j->nr_fields, j->nr_types, j->nr_sizes,
		j->nr_ints, j->nr_longs, j->nr_consts, (unsigned long long)j->code_low,
		(unsigned long long)j->code_high, j->nr_heaps, heaps);
	if (!j->samples)
		return;
	pr_info("HotSpot: pid %u (%s): %llu samples, %llu with Java frames (%.1f%%, %llu frames "
		"named); without: %llu walked to no Java frame (native threads: GC, compiler, or "
		"a walk that stopped in native code), %llu not walked (before the walk had the "
		"JVM's layout, or sent as stack copies); Java part cut short: %llu no code blob, "
		"%llu read faults, %llu bad frames, %llu frame limit, %llu no return address\n",
		j->pid, j->comm, (unsigned long long)j->samples, (unsigned long long)j->with_java,
		100.0 * (double)j->with_java / (double)j->samples, (unsigned long long)j->frames,
		(unsigned long long)j->no_java, (unsigned long long)j->not_walked,
		(unsigned long long)j->java_stop[0], (unsigned long long)j->java_stop[1],
		(unsigned long long)j->java_stop[2], (unsigned long long)j->java_stop[3],
		(unsigned long long)j->java_stop[4]);
}

void report__hotspot(FILE *f, const struct hotspot_stats *st)
{
	(void)f;
	if (!st->nr_jvms && !st->nr_unsupported)
		return;
	pr_info("HotSpot: %llu JVMs read, %llu left native; %llu table reads, %.1f ms each\n",
		(unsigned long long)st->nr_jvms, (unsigned long long)st->nr_unsupported,
		(unsigned long long)st->table_reads,
		st->table_reads ? (double)st->read_ns / st->table_reads / 1e6 : 0.0);
	if (st->frame_hits + st->frame_misses)
		pr_info("HotSpot: names: %llu methods read (%llu not usable), %llu compiled pcs' "
			"scopes read (%llu failed), %llu frames reused or changed since their "
			"sample; frame cache %.1f%% hits; %.1f us a method\n",
			(unsigned long long)st->methods_read, (unsigned long long)st->methods_failed,
			(unsigned long long)st->scopes_read, (unsigned long long)st->scopes_failed,
			(unsigned long long)st->stale,
			100.0 * (double)st->frame_hits / (double)(st->frame_hits + st->frame_misses),
			st->methods_read ? (double)st->name_ns / (double)st->methods_read / 1e3 : 0.0);
	for (uint32_t i = 0; i < st->nr_listed; i++) {
		const struct hotspot_jvm_stat *j = &st->jvm[i];

		if (j->err)
			pr_info("HotSpot: pid %u (%s): tables not usable: %s\n", j->pid, j->comm,
				j->why ? j->why : strerror(-j->err));
		else
			hotspot_jvm(j);
	}
}

void report__bpf_cost(uint64_t run_ns, uint64_t runs)
{
	if (runs)
		pr_info("BPF run time: %.0f ns a sample (on_sample, %llu runs; kernel.bpf_stats_enabled)\n",
			(double)run_ns / runs, (unsigned long long)runs);
}

void report__check_stack(struct unwind_check *c, const struct bpfprof_ustack_copy *rec, size_t size)
{
	struct unwind_check_result res;

	if (!c || unwind_check__sample(c, rec, size, &res))
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
		const char *name = unwind_check__symbol(c, rec->tgid, b ? b : d);

		pr_debug("  #%-3u BPF %#18llx  libdwfl %#18llx  %s\n", i, (unsigned long long)b,
			 (unsigned long long)d, name ? name : "?");
	}
}

void report__unwind_check(FILE *f, const struct unwind_check_stats *st)
{
	uint64_t n = 0;

	for (int i = 0; i < UNWIND_CHECK_NR_VERDICTS; i++)
		n += st->verdicts[i];
	fprintf(f,
		"bpfprof: BPF unwinds against libdwfl's (%llu stacks checked): %llu identical, %llu shorter "
		"(BPF stopped first), %llu libdwfl stopped first (8 KB copy), %llu different, %llu not checked\n",
		(unsigned long long)n, (unsigned long long)st->verdicts[UNWIND_CHECK_IDENTICAL],
		(unsigned long long)st->verdicts[UNWIND_CHECK_BPF_SHORTER],
		(unsigned long long)st->verdicts[UNWIND_CHECK_DWFL_SHORTER],
		(unsigned long long)st->verdicts[UNWIND_CHECK_DIFFERENT],
		(unsigned long long)st->verdicts[UNWIND_CHECK_FAILED]);
}

void report__user_stacks(FILE *f, uint64_t same, uint64_t shorter, uint64_t differ)
{
	fprintf(f,
		"bpfprof: user stacks against the kernel's walk: %llu the same, %llu its first part, "
		"%llu different\n",
		(unsigned long long)same, (unsigned long long)shorter, (unsigned long long)differ);
}

void report__v8(FILE *f, const struct v8_stats *st, const uint64_t bpf[BPFPROF_STAT_NR])
{
	if (!st->nr_files)
		return;
	fprintf(f,
		"bpfprof: V8: %llu processes with V8 found, %llu with unusable metadata, %llu node files "
		"unreadable, %llu without metadata (%llu of %llu files read had V8 metadata)\n",
		(unsigned long long)st->nr_procs, (unsigned long long)st->nr_bad,
		(unsigned long long)st->nr_unreadable, (unsigned long long)st->nr_no_metadata,
		(unsigned long long)st->nr_v8_files, (unsigned long long)st->nr_files);
	for (uint32_t i = 0; i < st->nr_proc_stats && i < V8_STATS_PROCS; i++) {
		const struct v8_proc_stats *ps = &st->procs[i];

		fprintf(f,
			"bpfprof: V8: pid %u (%s): %llu samples, %llu with JavaScript frames (%llu "
			"frames, %llu inlined, %llu named by pc, %llu leaves in their function's "
			"other code (OSR), %llu without a line, %llu cut at %d); "
			"without: %llu in "
			"native code only, %llu not walked (stack copies, legacy variant, before V8 was "
			"found), %llu whose frames did not check (%llu frames kept native)\n",
			ps->pid, ps->comm, (unsigned long long)ps->samples,
			(unsigned long long)ps->with_js, (unsigned long long)ps->frames,
			(unsigned long long)ps->inlined, (unsigned long long)ps->by_pc,
			(unsigned long long)ps->osr, (unsigned long long)ps->no_line,
			(unsigned long long)ps->truncated, BPFPROF_MAX_PY_FRAMES,
			(unsigned long long)ps->native, (unsigned long long)ps->not_walked,
			(unsigned long long)ps->unnamed, (unsigned long long)ps->unnamed_frames);
	}
	if (st->frames)
		fprintf(f,
			"bpfprof: V8: naming: %llu frames, %.1f %% cached; %llu functions and %llu "
			"scripts read, %.1f us a function\n",
			(unsigned long long)st->frames,
			100.0 * (double)st->frame_hits / (double)st->frames,
			(unsigned long long)st->funcs, (unsigned long long)st->scripts,
			st->funcs ? (double)st->read_ns / (double)st->funcs / 1000 : 0.0);
	if (bpf[BPFPROF_STAT_V8_WALKS])
		fprintf(f,
			"bpfprof: V8: BPF walk: %llu samples looked at, %llu JavaScript frames (%llu "
			"from the per-CPU cache); %llu "
			"walks with JavaScript frames, %llu without, %llu cut at %d; frames passed: %llu "
			"typed (entry, exit, stub), %llu not a JSFunction (native code), %llu with no "
			"readable Code\n",
			(unsigned long long)bpf[BPFPROF_STAT_V8_WALKS],
			(unsigned long long)bpf[BPFPROF_STAT_V8_FRAMES],
			(unsigned long long)bpf[BPFPROF_STAT_V8_CACHED],
			(unsigned long long)bpf[BPFPROF_STAT_V8_END],
			(unsigned long long)bpf[BPFPROF_STAT_V8_NONE],
			(unsigned long long)bpf[BPFPROF_STAT_V8_LIMIT], BPFPROF_MAX_PY_FRAMES,
			(unsigned long long)bpf[BPFPROF_STAT_V8_TYPED],
			(unsigned long long)bpf[BPFPROF_STAT_V8_NOT_FUNCTION],
			(unsigned long long)bpf[BPFPROF_STAT_V8_NO_CODE]);
}

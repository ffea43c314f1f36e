// SPDX-License-Identifier: MIT
/*
 * How user-stack walks ended, from the BPF program's counters (enum
 * bpfprof_stat, include/bpfprof_abi.h) and the unwinder's table statistics:
 * the summary line after a run and, with -v, every reason (include/unwinder.h).
 */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include "log.h"
#include "unwinder.h"

/* name, or name with Go's ABI wrapper suffix (.symtab's "runtime.goexit.abi0") */
static bool is_named(const char *func, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(func, name, n) && (!func[n] || !strcmp(func + n, ".abi0"));
}

static bool is_root(const char *func, bool fp)
{
	/* runtime.clone: a new thread's first frame, whose child calls mstart */
	static const char *const go_roots[] = { "runtime.goexit", "runtime.mstart",
						"runtime.rt0_go", "runtime.clone" };
	/*
	 * glibc keeps no frame pointers: a chain of ours ends in the frame its
	 * code called, __libc_start_call_main (main) or start_thread (threads)
	 */
	static const char *const fp_roots[] = { "_start",
						"__libc_start_main",
						"__libc_start_call_main",
						"start_thread",
						"clone3",
						"clone",
						"__clone",
						"__clone3" };
	size_t i;

	for (i = 0; i < sizeof(go_roots) / sizeof(go_roots[0]); i++)
		if (is_named(func, go_roots[i]))
			return true;
	for (i = 0; fp && i < sizeof(fp_roots) / sizeof(fp_roots[0]); i++)
		if (!strcmp(func, fp_roots[i]))
			return true;
	return false;
}

uint64_t unwinder__root_walks(const struct profile *p, bool fp)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < p->nr_stacks; i++) {
		const struct profile_stack *s = &p->stacks[i];
		uint32_t outer;

		if (!s->nr_user || !s->locs)
			continue;
		outer = s->locs[s->nr_kernel + s->nr_user - 1];
		if (outer < p->nr_locs && p->locs[outer].func && is_root(p->locs[outer].func, fp))
			n += s->count + s->off_count;
	}
	return n;
}

void unwinder__print_walks(FILE *f, const uint64_t st[BPFPROF_STAT_NR],
			   const struct unwinder_stats *us, const char *mode, uint64_t roots)
{
	uint64_t walks = 0, frames = st[BPFPROF_STAT_FRAMES_CFI] + st[BPFPROF_STAT_FRAMES_FP],
		 ended;
	uint64_t copies = st[BPFPROF_STAT_COPY_NOT_READY] + st[BPFPROF_STAT_COPY_NO_MAPPING] +
			  st[BPFPROF_STAT_COPY_FP_UNMAPPED];
	int i;

	for (i = BPFPROF_STAT_WALK_END; i <= BPFPROF_STAT_WALK_BAD; i++)
		walks += st[i];
	if (!walks)
		return;
	/* the root walks ended otherwise in BPF's counters: they are among the walks */
	ended = st[BPFPROF_STAT_WALK_END] + roots < walks ? st[BPFPROF_STAT_WALK_END] + roots :
							    walks;
	fprintf(f,
		"bpfprof: user stacks (--call-graph %s): %.1f%% reached the end of the stack, "
		"%.1f frames a stack; %.1f%% of frames stepped by CFI\n",
		mode, 100.0 * ended / walks, 1.0 + (double)frames / walks,
		frames ? 100.0 * st[BPFPROF_STAT_FRAMES_CFI] / frames : 0.0);
	if (st[BPFPROF_STAT_WALK_SHED])
		fprintf(f,
			"bpfprof: %llu user stacks not walked (the leaf only): the ring buffer was over "
			"half full; consider --ringbuf-size\n",
			(unsigned long long)st[BPFPROF_STAT_WALK_SHED]);
	if (log_verbosity < 1)
		return;
	fprintf(f,
		"bpfprof: user stack ends: %llu end of stack, %llu more at a Go or frame-pointer walk's root "
		"(among the next reasons), %llu frame-pointer chain end, %llu no mapping, "
		"%llu read fault, %llu frame limit, %llu bad frame; %llu walked by frame pointers for want of "
		"tables; %llu stacks copied for a user-space walk (%llu before their tables were ready, "
		"%llu past the registered mappings, %llu at a frame-pointer step out of them; %.1f KiB a "
		"copy); %llu walks shed (ring buffer over half full)\n",
		(unsigned long long)st[BPFPROF_STAT_WALK_END],
		(unsigned long long)(ended - st[BPFPROF_STAT_WALK_END]),
		(unsigned long long)st[BPFPROF_STAT_WALK_FP_END],
		(unsigned long long)st[BPFPROF_STAT_WALK_NO_MAPPING],
		(unsigned long long)st[BPFPROF_STAT_WALK_READ_FAULT],
		(unsigned long long)st[BPFPROF_STAT_WALK_LIMIT],
		(unsigned long long)st[BPFPROF_STAT_WALK_BAD],
		(unsigned long long)st[BPFPROF_STAT_WALK_NOT_READY], (unsigned long long)copies,
		(unsigned long long)st[BPFPROF_STAT_COPY_NOT_READY],
		(unsigned long long)st[BPFPROF_STAT_COPY_NO_MAPPING],
		(unsigned long long)st[BPFPROF_STAT_COPY_FP_UNMAPPED],
		copies ? st[BPFPROF_STAT_COPY_BYTES] / 1024.0 / copies : 0.0,
		(unsigned long long)st[BPFPROF_STAT_WALK_SHED]);
	if (us) {
		struct rusage ru;

		if (getrusage(RUSAGE_SELF, &ru))
			ru.ru_maxrss = 0;
		fprintf(f,
			"bpfprof: unwind tables: %llu processes, %llu tables (%llu built, %llu from the cache, %llu shared, %llu files "
			"without CFI, %llu did not fit, %llu dropped for room; %llu of exited processes' files used again, "
			"%llu kept now), %llu rows in %.1f MiB of "
			"kernel memory (%.2f bytes a row; at most %.1f MiB of the %.0f MiB --unwind-memory), "
			"%llu LPM entries, %.1f ms building from %.1f MiB of CFI; peak RSS %.1f MiB\n",
			(unsigned long long)us->nr_procs, (unsigned long long)us->nr_tables,
			(unsigned long long)us->nr_built, (unsigned long long)us->nr_from_cache,
			(unsigned long long)us->nr_shared, (unsigned long long)us->nr_no_cfi,
			(unsigned long long)us->nr_full, (unsigned long long)us->nr_evicted,
			(unsigned long long)us->nr_kept_used, (unsigned long long)us->nr_kept,
			(unsigned long long)us->nr_rows, us->bytes / (double)(1 << 20),
			us->loaded_rows ? (double)us->loaded_bytes / us->loaded_rows : 0.0,
			us->peak_bytes / (double)(1 << 20), us->budget / (double)(1 << 20),
			(unsigned long long)us->nr_entries, us->build_ns / 1e6,
			us->cfi_bytes / (double)(1 << 20), ru.ru_maxrss / 1024.0);
		if (us->nr_queued)
			fprintf(f,
				"bpfprof: unwind readiness: %llu processes registered at their first sample, "
				"%.1f ms on average from it to their tables, %.1f ms at most; %.1f ms of CPU "
				"registering them\n",
				(unsigned long long)us->nr_queued,
				us->ready_sum_ns / 1e6 / us->nr_queued, us->ready_max_ns / 1e6,
				us->ready_cpu_ns / 1e6);
		if (us->nr_loads)
			fprintf(f,
				"bpfprof: unwind registrations: %llu (%llu requests with the mappings "
				"registered or pending left out); ms in all: %.1f waiting for the thread, "
				"%.1f identifying files, %.1f reading the cache, %.1f building, %.1f "
				"loading tables, %.1f writing map entries\n",
				(unsigned long long)us->nr_loads,
				(unsigned long long)us->nr_skipped, us->wait_ns / 1e6,
				us->id_ns / 1e6, us->cache_ns / 1e6, us->build_ns / 1e6,
				us->load_ns / 1e6, us->entries_ns / 1e6);
		if (us->own_untabled || us->nr_own_again)
			fprintf(f,
				"bpfprof: unwind: bpfprof's own process: %llu of its executable mappings "
				"walked by frame pointers (no table built for bpfprof itself), registered "
				"again %llu times as other processes' tables came for its other files\n",
				(unsigned long long)us->own_untabled,
				(unsigned long long)us->nr_own_again);
		if (us->nr_pool_installs)
			fprintf(f,
				"bpfprof: unwind words maps installed ahead of need: %llu tables written "
				"into one (no grace period), %llu installs (%.1f ms of wall, %.1f of "
				"CPU in all, off the registrations' path), %llu waiting now (%.1f MiB "
				"of kernel memory)\n",
				(unsigned long long)us->nr_pooled,
				(unsigned long long)us->nr_pool_installs, us->pool_install_ns / 1e6,
				us->pool_install_cpu_ns / 1e6, (unsigned long long)us->pool_maps,
				us->pool_bytes / (double)(1 << 20));
	}
}

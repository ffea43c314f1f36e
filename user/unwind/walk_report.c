// SPDX-License-Identifier: MIT
/*
 * How user-stack walks ended, from the BPF program's counters (enum
 * bpfprof_stat, include/bpfprof_abi.h) and the unwinder's table statistics:
 * the summary line after a run and, with -v, every reason (include/unwinder.h).
 */
#include <stdio.h>
#include <sys/resource.h>
#include "log.h"
#include "unwinder.h"

void unwinder__print_walks(FILE *f, const uint64_t st[BPFPROF_STAT_NR],
			   const struct unwinder_stats *us, const char *mode)
{
	uint64_t walks = 0, frames = st[BPFPROF_STAT_FRAMES_CFI] + st[BPFPROF_STAT_FRAMES_FP];
	uint64_t copies = st[BPFPROF_STAT_COPY_NOT_READY] + st[BPFPROF_STAT_COPY_NO_MAPPING] +
			  st[BPFPROF_STAT_COPY_FP_UNMAPPED];
	int i;

	for (i = BPFPROF_STAT_WALK_END; i <= BPFPROF_STAT_WALK_BAD; i++)
		walks += st[i];
	if (!walks)
		return;
	fprintf(f,
		"bpfprof: user stacks (--call-graph %s): %.1f%% reached the end of the stack, "
		"%.1f frames a stack; %.1f%% of frames stepped by CFI\n",
		mode, 100.0 * st[BPFPROF_STAT_WALK_END] / walks, 1.0 + (double)frames / walks,
		frames ? 100.0 * st[BPFPROF_STAT_FRAMES_CFI] / frames : 0.0);
	if (log_verbosity < 1)
		return;
	fprintf(f,
		"bpfprof: user stack ends: %llu end of stack, %llu frame-pointer chain end, %llu no mapping, "
		"%llu read fault, %llu frame limit, %llu bad frame; %llu walked by frame pointers for want of "
		"tables; %llu stacks copied for a user-space walk (%llu before their tables were ready, "
		"%llu past the registered mappings, %llu at a frame-pointer step out of them; %.1f KiB a "
		"copy)\n",
		(unsigned long long)st[BPFPROF_STAT_WALK_END],
		(unsigned long long)st[BPFPROF_STAT_WALK_FP_END],
		(unsigned long long)st[BPFPROF_STAT_WALK_NO_MAPPING],
		(unsigned long long)st[BPFPROF_STAT_WALK_READ_FAULT],
		(unsigned long long)st[BPFPROF_STAT_WALK_LIMIT],
		(unsigned long long)st[BPFPROF_STAT_WALK_BAD],
		(unsigned long long)st[BPFPROF_STAT_WALK_NOT_READY],
		(unsigned long long)copies, (unsigned long long)st[BPFPROF_STAT_COPY_NOT_READY],
		(unsigned long long)st[BPFPROF_STAT_COPY_NO_MAPPING],
		(unsigned long long)st[BPFPROF_STAT_COPY_FP_UNMAPPED],
		copies ? st[BPFPROF_STAT_COPY_BYTES] / 1024.0 / copies : 0.0);
	if (us) {
		struct rusage ru;

		if (getrusage(RUSAGE_SELF, &ru))
			ru.ru_maxrss = 0;
		fprintf(f,
			"bpfprof: unwind tables: %llu processes, %llu tables (%llu built, %llu from the cache, %llu shared, %llu files "
			"without CFI, %llu did not fit, %llu dropped for room), %llu rows in %.1f MiB of "
			"kernel memory (%.2f bytes a row; at most %.1f MiB of the %.0f MiB --unwind-memory), "
			"%llu LPM entries, %.1f ms building from %.1f MiB of CFI; peak RSS %.1f MiB\n",
			(unsigned long long)us->nr_procs, (unsigned long long)us->nr_tables,
			(unsigned long long)us->nr_built, (unsigned long long)us->nr_from_cache,
			(unsigned long long)us->nr_shared, (unsigned long long)us->nr_no_cfi,
			(unsigned long long)us->nr_full, (unsigned long long)us->nr_evicted,
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
	}
}

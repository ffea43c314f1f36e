/* SPDX-License-Identifier: MIT */
/*
 * perf.data writer (PERFILE2), per "perf.data format" (Linux kernel tree,
 * tools/perf/Documentation/perf.data-file-format.txt),
 * include/uapi/linux/perf_event.h and tools/perf/util/header.[ch]. Records are
 * streamed to the file as samples arrive, so memory does not grow with the
 * number of samples:
 *
 *   perfdata__new      header placeholder, one attr (event, frequency,
 *                      sample_type IP|TID|TIME|CPU|PERIOD|CALLCHAIN,
 *                      sample_id_all, use_clockid + CLOCK_MONOTONIC), kernel
 *                      MMAP ([kernel.kallsyms]_text) and module MMAPs from
 *                      the profile's kernel (kernel_image.h)
 *   perfdata__maps     COMM + MMAP2 for a process's mappings not yet written
 *   perfdata__sample   SAMPLE (and COMM for a thread seen for the first time)
 *   perfdata__offcpu   SAMPLE of the second event, offcpu-time (--off-cpu)
 *   perfdata__round    FINISHED_ROUND after each ring-buffer batch
 *   perfdata__finish   LOST_SAMPLES, feature sections (BUILD_ID, HOSTNAME,
 *                      OSRELEASE, VERSION, ARCH, NRCPUS, CPUDESC, CPUID,
 *                      TOTAL_MEM, CMDLINE, EVENT_DESC, CLOCKID, SAMPLE_TIME),
 *                      then the header is rewritten with the final offsets
 *
 * A pure encoder of the model: it reads nothing of the host (kernel text,
 * modules and every build-id come from the profile, filled by kernel_image.h
 * and build_ids.h) and opens no file; only the feature sections HOSTNAME,
 * OSRELEASE, ARCH, NRCPUS, CPUDESC, CPUID, TOTAL_MEM and CMDLINE describe
 * the machine that writes (perf_header.h).
 *
 * Timestamps are bpf_ktime_get_ns(), i.e. CLOCK_MONOTONIC, which is what
 * use_clockid announces and what perf inject --jit matches jitdump times to.
 */
#ifndef BPFPROF_WRITE_PERFDATA_H
#define BPFPROF_WRITE_PERFDATA_H

#include <stdint.h>
#include "profile.h"

struct perfdata_writer;

struct perfdata_opts {
	const char *event; /* "cpu-clock" or "cycles" */
	/*
	 * A second event, "offcpu-time" (perf record --off-cpu's), for
	 * perfdata__offcpu; both events then carry PERF_SAMPLE_IDENTIFIER.
	 */
	bool offcpu;
	uint32_t freq_hz; /* sampling frequency, Hz */
	uint64_t period_ns; /* period written in each sample (1e9 / freq_hz for cpu-clock) */
	int argc; /* bpfprof's own command line, for the CMDLINE feature */
	char **argv;
};

/*
 * Start a perf.data file on fd (a new, empty, seekable file; the caller
 * keeps ownership of fd and renames it into place after perfdata__finish),
 * with the kernel maps of p->kernel (filled by kernel_image__read first; a
 * zeroed one writes none). p is read during the call only.
 * Returns a writer owned by the caller (perfdata__free), or NULL with errno.
 */
struct perfdata_writer *perfdata__new(int fd, const struct perfdata_opts *o,
				      const struct profile *p);

/*
 * Write COMM (the process's comm, pid = tid = its tgid) the first time a
 * process is seen, and MMAP2 for each of its executable mappings not yet
 * written (what perf record synthesizes without -d). time_ns is the time of
 * the sample that revealed them; the records are stamped no later than it
 * and no later than any sample perf may still reorder (see
 * user/write/write_perfdata.c). Call before the process's samples. Returns 0 or
 * -errno (write failure, -ENOMEM).
 */
int perfdata__maps(struct perfdata_writer *w, const struct profile *p, uint32_t proc,
		   uint64_t time_ns);

/*
 * Write one SAMPLE record of s (opts.period_ns as its period), and COMM
 * records for a process or thread not seen before or renamed by an exec.
 * Returns 0 or -errno.
 */
int perfdata__sample(struct perfdata_writer *w, const struct profile_sample *s);

/* As perfdata__sample with its own period (a weight in the event's unit, ns for cpu-clock). */
int perfdata__sample_period(struct perfdata_writer *w, const struct profile_sample *s,
			    uint64_t period);

/*
 * Write one SAMPLE of the offcpu-time event (opts.offcpu) of an off-CPU
 * block: its stacks, the time the task ran again, s->off_ns as the period.
 * Returns 0 or -errno (-EINVAL without opts.offcpu).
 */
int perfdata__offcpu(struct perfdata_writer *w, const struct profile_sample *s);

/* Off-CPU samples written so far. */
uint64_t perfdata__nr_offcpu(const struct perfdata_writer *w);

/* Write a FINISHED_ROUND record (after each batch of samples). Returns 0 or -errno. */
int perfdata__round(struct perfdata_writer *w);

/*
 * Finish the file: LOST_SAMPLES when p->nr_lost > 0, the data section size,
 * the feature sections (BUILD_ID: p->kernel's, then those of p's mappings
 * with samples, after symbolization and build_ids__fill have filled them;
 * a mapping without one is left out), then the final header. Returns 0 or
 * -errno; the file is complete only on 0.
 */
int perfdata__finish(struct perfdata_writer *w, const struct profile *p);

/* Samples written so far. */
uint64_t perfdata__nr_samples(const struct perfdata_writer *w);

void perfdata__free(struct perfdata_writer *w);

#endif /* BPFPROF_WRITE_PERFDATA_H */

// SPDX-License-Identifier: MIT
/*
 * Aggregation throughput without BPF: replay ring-buffer sample records
 * (include/bpfprof_abi.h), exactly the bytes the BPF program sends, through
 * the aggregator on one core, as the reader does (agg__queue, agg__flush at
 * each poll's end, here every WAKEUP_BYTES of records), and report samples
 * per second. The records are
 * NR_STACKS distinct callchains of DEPTH frames (a quarter kernel, the rest
 * user, as a deep user stack entering the kernel looks) spread over NR_PROCS
 * processes, replayed in a fixed pseudo-random order, each sample a fresh
 * copy of its record at the next place of a ring-sized buffer, as the ring
 * buffer hands them. Each process gets a fake /proc/PID/{maps,comm} in a
 * temporary directory, so the first sample of a process reads its maps as it
 * would for real, and every user address lies in a known mapping (no maps
 * re-reads).
 *
 * With -w FILE it also writes the replayed samples (the first -W of them) as
 * perf.data through bpfprof's own streaming writer, for perf report to
 * aggregate the same records (bench/agg-throughput.sh uses that as the
 * reference).
 *
 * By default each record's copy into the ring (the producer's work: in a
 * real run, the BPF program's on the sampling CPU) is timed with the
 * aggregation, as bench/agg-throughput.sh has always measured it. With -b
 * the copies of one wake-up's records (WAKEUP_BYTES) are made first,
 * untimed, and then the reader's part alone is timed: the records queued
 * and flushed, read from where the producer left them (here this CPU's
 * caches; another CPU's in a real run). With -b -C the batch's cache lines
 * are flushed to memory after they are written (clflush, untimed), so the
 * reader reads them from memory, as records another CPU wrote come from
 * that CPU's caches or memory, not from the reader's own (bench/agg-throughput.sh's
 * figure since 2026-11-29). Not with -w.
 *
 * usage: agg_replay [-n SAMPLES] [-s STACKS] [-d DEPTH] [-p PROCS] [-c CPU] [-b [-C]]
 *                   [-w PERF_DATA [-W SAMPLES]]
 * prints: samples, stacks, depth, wall_s, cpu_s, samples_per_s and ns_per_sample
 * (per CPU second of the replaying thread), wall_samples_per_s
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_setaffinity, nftw */
#endif
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <emmintrin.h> /* _mm_clflush, _mm_mfence (SSE2) */
#endif
#include <unistd.h>
#include "agg.h"
#include "bpfprof_abi.h"
#include "kernel_image.h"
#include "log.h"
#include "proc_table.h"
#include "profile.h"
#include "write_perfdata.h"

#define USER_BASE 0x555555554000ULL	/* each process's text mapping */
#define USER_SPAN 0x01000000ULL		/* 16 MiB of text */
#define KERNEL_BASE 0xffffffff81000000ULL
#define RING_BYTES (8u << 20)		/* bpfprof's default --ringbuf-size */
#define PERIOD_NS 1001001ULL		/* 999 Hz */
#define WAKEUP_BYTES (64u << 10)	/* the BPF side wakes the reader once this much waits */

static char tmpdir[64];

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rng(void)
{
	/* xorshift64*: reproducible, no libc state */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

static double now_s(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(path);
}

static void write_file(uint32_t pid, const char *name, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%u", tmpdir, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%u/%s", tmpdir, pid, name);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f)) {
		perror(path);
		exit(1);
	}
}

struct sink {
	struct perfdata_writer *w;
	uint64_t left;		/* samples still to write */
};

static int sink_maps(void *ctx, const struct profile *p, uint32_t proc, uint64_t time_ns)
{
	struct sink *k = ctx;

	return k->w ? perfdata__maps(k->w, p, proc, time_ns) : 0;
}

static int sink_sample(void *ctx, const struct profile *p, uint32_t proc, const struct profile_sample *s)
{
	struct sink *k = ctx;

	if (!k->w || !k->left)
		return 0;
	k->left--;
	return perfdata__sample(k->w, s);
}

struct replay {
	const uint8_t *recs; /* the distinct records, rec_size bytes apart */
	const uint32_t *order; /* which record each sample is, 1 << 20 of them, cycled */
	size_t rec_size;
	uint8_t *ring; /* RING_BYTES */
	size_t ring_off; /* where the next record goes */
};

/* Sample n's record at the ring's next place, as the ring buffer hands it out. Returns it. */
static struct bpfprof_sample *produce(struct replay *r, unsigned long long n)
{
	const uint8_t *src = r->recs + (size_t)r->order[n & ((1u << 20) - 1)] * r->rec_size;
	struct bpfprof_sample *s;

	if (r->ring_off + r->rec_size > RING_BYTES)
		r->ring_off = 0;
	s = (void *)(r->ring + r->ring_off);
	memcpy(s, src, r->rec_size);
	r->ring_off += (r->rec_size + 8 + 7) & ~7ULL; /* 8-byte record header, 8-byte aligned */
	s->cpu = (uint32_t)(n & 1);
	s->time_ns = 1000000000ULL + n * 500000ULL;
	return s;
}

/* The cache lines of len bytes at p written back and dropped from every cache (-C) */
static void flush_lines(const void *p, size_t len)
{
#if defined(__x86_64__) || defined(__i386__)
	for (uintptr_t l = (uintptr_t)p & ~(uintptr_t)63; l < (uintptr_t)p + len; l += 64)
		_mm_clflush((const void *)l);
	_mm_mfence();
#else
	(void)p;
	(void)len; /* elsewhere the records stay where the producer left them */
#endif
}

/*
 * -b: each wake-up's records produced first, then queued and flushed as
 * the reader does after a poll; only that part on the CPU clock (cold: the
 * records' lines flushed to memory before). Returns its CPU seconds, or -1
 * on an error (printed).
 */
static double replay_batches(struct replay *r, struct agg *a, unsigned long long nr_samples,
			     bool cold)
{
	struct bpfprof_sample *batch[WAKEUP_BYTES / BPFPROF_SAMPLE_HDR_SIZE + 1];
	unsigned long long n = 0;
	double cpu = 0;

	while (n < nr_samples) {
		size_t nr = 0, bytes = 0;
		double c0;
		int err = 0;

		while (n + nr < nr_samples && bytes < WAKEUP_BYTES) {
			batch[nr] = produce(r, n + nr);
			nr++;
			bytes += r->rec_size + 8;
		}
		for (size_t i = 0; cold && i < nr; i++)
			flush_lines(batch[i], r->rec_size);
		c0 = now_s(CLOCK_THREAD_CPUTIME_ID);
		for (size_t i = 0; i < nr && !err; i++)
			err = agg__queue(a, batch[i], r->rec_size);
		err = err ?: agg__flush(a);
		cpu += now_s(CLOCK_THREAD_CPUTIME_ID) - c0;
		if (err) {
			fprintf(stderr, "agg__queue: %s\n", strerror(-err));
			return -1;
		}
		n += nr;
	}
	return cpu;
}

static void usage(void)
{
	fprintf(stderr, "usage: agg_replay [-n SAMPLES] [-s STACKS] [-d DEPTH] [-p PROCS] [-c CPU] "
			"[-b [-C]] [-w PERF_DATA [-W SAMPLES]]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long long nr_samples = 10000000, perf_samples = 200000;
	unsigned nr_stacks = 10000, depth = 32, nr_procs = 8, nk, i, j;
	const char *perf_path = NULL;
	int cpu = -1, opt, fd = -1, err;
	bool batches = false, cold = false;
	struct sink sink = { 0 };
	struct replay r = { 0 };
	uint8_t *recs, *ring;
	size_t rec_size, ring_off = 0, batch = 0;
	uint32_t *order;
	struct profile *p;
	struct agg *a;
	struct proc_table *t;
	double t0, t1, c0, c1;

	while ((opt = getopt(argc, argv, "n:s:d:p:c:bCw:W:")) != -1) {
		switch (opt) {
		case 'n': nr_samples = strtoull(optarg, NULL, 0); break;
		case 's': nr_stacks = strtoul(optarg, NULL, 0); break;
		case 'd': depth = strtoul(optarg, NULL, 0); break;
		case 'p': nr_procs = strtoul(optarg, NULL, 0); break;
		case 'c': cpu = atoi(optarg); break;
		case 'b': batches = true; break;
		case 'C': cold = true; break;
		case 'w': perf_path = optarg; break;
		case 'W': perf_samples = strtoull(optarg, NULL, 0); break;
		default: usage();
		}
	}
	if (!nr_stacks || !nr_procs || !depth || depth > 2 * BPFPROF_MAX_STACK || nr_procs > nr_stacks ||
	    (batches && perf_path) || (cold && !batches))
		usage();
	if (cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			perror("sched_setaffinity");
	}
	log_verbosity = -1;
	strcpy(tmpdir, "/tmp/agg_replay.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	for (i = 0; i < nr_procs; i++) {
		char maps[256];

		snprintf(maps, sizeof(maps),
			 "%llx-%llx r-xp 00000000 08:01 4242    /usr/bin/replayed\n",
			 USER_BASE, USER_BASE + USER_SPAN);
		write_file(1000 + i, "maps", maps);
		write_file(1000 + i, "comm", "replayed\n");
	}

	/* the distinct records, back to back */
	nk = depth / 4;
	rec_size = BPFPROF_SAMPLE_HDR_SIZE + (size_t)depth * 8;
	recs = calloc(nr_stacks, rec_size);
	order = malloc(sizeof(*order) * (1u << 20));
	ring = malloc(RING_BYTES);
	if (!recs || !order || !ring)
		return 1;
	for (i = 0; i < nr_stacks; i++) {
		struct bpfprof_sample *s = (void *)(recs + (size_t)i * rec_size);
		uint64_t *ips = (uint64_t *)((uint8_t *)s + BPFPROF_SAMPLE_HDR_SIZE);

		s->type = BPFPROF_REC_SAMPLE;
		s->tgid = 1000 + i % nr_procs;
		s->tid = s->tgid;
		s->cgroup_id = 1;
		memcpy(s->comm, "replayed", 9);
		s->nr_kernel = nk;
		s->nr_user = depth - nk;
		/* shared callers (the outer frames), distinct leaves: like real profiles */
		for (j = 0; j < depth; j++) {
			uint64_t r = rng();
			unsigned shared = j >= depth / 2 ? 16 : nr_stacks;

			if (j < nk)
				ips[j] = KERNEL_BASE + (r % shared) * 0x40 + j * 0x10000;
			else
				ips[j] = USER_BASE + ((r % shared) * 0x40 + j * 0x1000) % USER_SPAN;
		}
		/* make the record unique whatever the draws: the leaf encodes i */
		ips[0] = (nk ? KERNEL_BASE : USER_BASE) + 0x100000 + (uint64_t)i * 4;
	}
	for (i = 0; i < (1u << 20); i++)
		order[i] = (uint32_t)(rng() % nr_stacks);

	r = (struct replay){ .recs = recs, .order = order, .rec_size = rec_size, .ring = ring };
	p = profile__new();
	t = proc_table__new(tmpdir, false);
	a = p && t ? agg__new(p, t, PERIOD_NS) : NULL;
	if (!a)
		return 1;
	if (perf_path) {
		struct perfdata_opts po = {
			.event = "cpu-clock",
			.freq_hz = 999,
			.period_ns = PERIOD_NS,
			.argc = argc,
			.argv = argv,
		};
		struct agg_observer obs = { .maps_changed = sink_maps, .sample = sink_sample, .ctx = &sink };

		fd = open(perf_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		/* the host's kernel in the model, as bpfprof's streaming path puts it */
		if (kernel_image__read(p, 0, 0, NULL))
			return 1;
		sink.w = fd >= 0 ? perfdata__new(fd, &po, p) : NULL;
		if (!sink.w) {
			perror(perf_path);
			return 1;
		}
		sink.left = perf_samples;
		agg__set_observer(a, &obs);
	}

	if (batches) {
		t0 = now_s(CLOCK_MONOTONIC);
		c0 = 0;
		c1 = replay_batches(&r, a, nr_samples, cold);
		t1 = now_s(CLOCK_MONOTONIC);
		if (c1 < 0)
			return 1;
		goto done;
	}
	t0 = now_s(CLOCK_MONOTONIC);
	c0 = now_s(CLOCK_THREAD_CPUTIME_ID);
	/*
	 * produce()'s work written out here, as the benchmark has always
	 * timed it: gcc copies the record with rep movsq (rec_size a known
	 * multiple of 8), where produce() calls memcpy
	 */
	for (unsigned long long n = 0; n < nr_samples; n++) {
		const uint8_t *src = recs + (size_t)order[n & ((1u << 20) - 1)] * rec_size;
		struct bpfprof_sample *s;

		/* the ring buffer hands out each record at the next place in its data area */
		if (ring_off + rec_size > RING_BYTES)
			ring_off = 0;
		s = (void *)(ring + ring_off);
		memcpy(s, src, rec_size);
		ring_off += (rec_size + 8 + 7) & ~7ULL;	/* 8-byte record header, 8-byte aligned */
		s->cpu = (uint32_t)(n & 1);
		s->time_ns = 1000000000ULL + n * 500000ULL;
		/*
		 * As the reader takes them (interval.c): queued, and flushed at
		 * the end of each poll's batch, here the WAKEUP_BYTES that wake
		 * the reader (an eighth of the ring: bpf/process.bpf.h)
		 */
		err = agg__queue(a, s, rec_size);
		batch += rec_size + 8;
		if (!err && batch >= WAKEUP_BYTES) {
			batch = 0;
			err = agg__flush(a);
		}
		if (err) {
			fprintf(stderr, "agg__queue: %s\n", strerror(-err));
			return 1;
		}
		/* the reader's round after a poll: the batch's records in first */
		if (sink.w && sink.left && (n & 1023) == 1023 &&
		    (agg__flush(a) || perfdata__round(sink.w)))
			return 1;
	}
	err = agg__flush(a);
	t1 = now_s(CLOCK_MONOTONIC);
	c1 = now_s(CLOCK_THREAD_CPUTIME_ID);
	if (err) {
		fprintf(stderr, "agg__flush: %s\n", strerror(-err));
		return 1;
	}
done:

	/* every stack is drawn within the first million samples */
	if (p->nr_samples != nr_samples || p->nr_stacks > nr_stacks ||
	    (nr_samples >= (1u << 20) && p->nr_stacks != nr_stacks)) {
		fprintf(stderr, "replay: %llu samples in %zu stacks, expected %llu in %u\n",
			(unsigned long long)p->nr_samples, p->nr_stacks, nr_samples, nr_stacks);
		return 1;
	}
	if (sink.w) {
		err = perfdata__finish(sink.w, p);
		perfdata__free(sink.w);
		close(fd);
		if (err) {
			fprintf(stderr, "%s: %s\n", perf_path, strerror(-err));
			return 1;
		}
	}
	/* CPU time is the figure: on a shared machine the wall time also counts preemption */
	printf("samples %llu\nstacks %zu\ndepth %u\nwall_s %.6f\ncpu_s %.6f\nsamples_per_s %.0f\n"
	       "ns_per_sample %.1f\nwall_samples_per_s %.0f\n",
	       nr_samples, p->nr_stacks, depth, t1 - t0, c1 - c0, nr_samples / (c1 - c0),
	       (c1 - c0) * 1e9 / nr_samples, nr_samples / (t1 - t0));
	agg__free(a);
	proc_table__free(t);
	profile__free(p);
	free(recs);
	free(order);
	free(ring);
	nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}

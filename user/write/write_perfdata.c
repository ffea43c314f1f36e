// SPDX-License-Identifier: MIT
/*
 * perf.data writer (include/write_perfdata.h): a PERFILE2 file as perf record
 * writes it, per "perf.data format" (Linux kernel tree,
 * tools/perf/Documentation/perf.data-file-format.txt), <linux/perf_event.h>
 * and tools/perf/util/header.c (include/perf_header.h has the header layout).
 * Records are appended to a buffer that is written out every ~256 KiB, so
 * memory grows with processes, threads and mappings, never with samples.
 *
 *   file header (rewritten by perfdata__finish)   104 bytes
 *   attr + empty ids section                      attr_size bytes
 *   data: MMAP [kernel.kallsyms]_text, module MMAPs,
 *         per process COMM, MMAP2..., SAMPLE..., FINISHED_ROUND..., LOST_SAMPLES
 *   feature table, feature sections               (perfdata__finish)
 *
 * Ordering. perf sorts records by time between FINISHED_ROUND markers: at
 * each marker it delivers everything up to the largest time seen before the
 * previous marker, and rejects later records older than that ("out of order
 * events"). COMM and MMAP2 records are stamped with that bound (time 0 before
 * any delivery, which perf handles at once, as for perf record's synthesized
 * records) rather than with the revealing sample's time, so that they sort
 * before every sample of the process that perf may still reorder, including
 * samples from other CPUs a few microseconds older than the one that revealed
 * them. Markers are written at most every ROUND_MIN_NS of sample time, which
 * keeps the bound far behind the ring buffer's small cross-CPU skew.
 */
#include <argp.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include "array.h"
#include "buf.h"
#include "lib_hashmap.h"
#include "lib_io.h"
#include "log.h"
#include "perf_header.h"
#include "write_perfdata.h"

#define FLUSH_BYTES (256 * 1024)
#define ROUND_MIN_NS (100 * 1000000ULL)
#define ALIGN8(x) (((x) + 7) & ~(size_t)7)
#define ALIGN_UP(x, a) (((x) + (a)-1) / (a) * (a))
/*
 * sample_id_all trailer for IP|TID|TIME|CPU|PERIOD|CALLCHAIN: {pid, tid},
 * time, {cpu, res}; with a second event (--off-cpu), IDENTIFIER is in both
 * events' sample_type and the trailer ends with the event's id, as perf
 * reads it from the end (__perf_evsel__parse_id_sample in util/evsel.c).
 */
#define SAMPLE_ID_SIZE(w) (24 + ((w)->offcpu ? 8 : 0))
/* ids of the two events (any distinct values: perf maps them through the attrs' id sections) */
#define ID_CPU 1
#define ID_OFFCPU 2
/* perf record --off-cpu's event (tools/perf/util/off_cpu.h, OFFCPU_EVENT) */
#define OFFCPU_EVENT "offcpu-time"
#define SAMPLE_TYPE                                                              \
	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN)

/* Mapping already written as MMAP2 (identity as perf would compare it). */
struct map_key {
	uint64_t start, end, offset, inode;
	const char *path; /* interned in the profile: compared by pointer */
};

struct proc_state {
	uint32_t pid;
	char comm[PROFILE_COMM_LEN]; /* the leader's, as last written */
	uint64_t comm_ns; /* the sample time at which it was written */
	struct map_key *maps;
	size_t nr_maps, cap_maps;
};

/*
 * A file named in MMAP2 records and the BUILD_ID section. perf (6.1)
 * matches the BUILD_ID section's entries to DSOs by name alone, so two
 * files at one path (a binary rebuilt and renamed over its path while its
 * old process runs; the same path in two containers) would share one
 * build-id and be named from one file. The first file seen at a path keeps
 * it; each other one is written as "PATH (inode N)".
 */
struct file_name {
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	char *alias; /* NULL: the path itself */
	size_t next; /* the next file at the same path, index + 1; 0 ends */
};

struct perfdata_writer {
	int fd;
	int err; /* sticky first error (-errno) */
	bool finished;
	struct buf b; /* records not yet written */
	uint64_t file_off; /* file offset of b.data[0] */
	uint64_t data_offset;
	struct perf_event_attr attr;
	bool offcpu; /* a second event, OFFCPU_EVENT, with off_attr */
	struct perf_event_attr off_attr;
	uint64_t nr_offcpu; /* its samples written */
	char *event;
	uint64_t period_ns;
	int argc;
	char **argv; /* borrowed; the caller's argv outlives the writer */

	uint64_t nr_samples;
	uint64_t first_time, last_time; /* sample times, valid when nr_samples > 0 */
	uint64_t max_time; /* largest time written */
	uint64_t max_at_round; /* max_time at the last FINISHED_ROUND */
	uint64_t flush_bound; /* perf has delivered every record up to this time */

	struct proc_state *procs;
	size_t nr_procs, cap_procs;
	struct u64map proc_index; /* pid + 1 -> index into procs */
	struct u64map threads; /* (pid << 32 | tid) + 1 for threads given a COMM */

	struct strset paths; /* every path of a file written, own copies */
	struct u64map path_files; /* path index + 1 -> its first file, index + 1 */
	struct file_name *files;
	size_t nr_files, cap_files;
};

/* Write out the buffered records; the first failure sticks. */
static int flush(struct perfdata_writer *w)
{
	int err;

	if (w->err)
		return w->err;
	if (w->b.err)
		return w->err = w->b.err;
	err = io__write_all(w->fd, w->b.data, w->b.len);
	if (err)
		return w->err = err;
	w->file_off += w->b.len;
	w->b.len = 0;
	return 0;
}

static int maybe_flush(struct perfdata_writer *w)
{
	if (w->b.err)
		return w->err = w->b.err;
	return w->b.len >= FLUSH_BYTES ? flush(w) : w->err;
}

static void put_header(struct buf *b, uint32_t type, uint16_t misc, size_t size)
{
	struct perf_event_header h = { .type = type, .misc = misc, .size = (uint16_t)size };

	buf__put_bytes(b, &h, sizeof(h));
}

static void put_u32_pair(struct buf *b, uint32_t a, uint32_t c)
{
	buf__put_u32(b, a);
	buf__put_u32(b, c);
}

static void put_sample_id(struct perfdata_writer *w, uint32_t pid, uint32_t tid, uint64_t time,
			  uint32_t cpu)
{
	put_u32_pair(&w->b, pid, tid);
	buf__put_u64(&w->b, time);
	put_u32_pair(&w->b, cpu, 0);
	if (w->offcpu)
		buf__put_u64(&w->b, ID_CPU);
}

/* NUL-terminated string padded with NULs to a multiple of 8 bytes. */
static void put_name(struct buf *b, const char *s, size_t padded)
{
	size_t n = strlen(s) + 1;

	buf__put_bytes(b, s, n);
	buf__put_zeros(b, padded - n);
}

/* Time for COMM and MMAP records: not later than any sample perf may still reorder. */
static uint64_t meta_time(const struct perfdata_writer *w, uint64_t t)
{
	return w->flush_bound < t ? w->flush_bound : t;
}

static void note_time(struct perfdata_writer *w, uint64_t t)
{
	if (t > w->max_time)
		w->max_time = t;
}

/* misc: 0, or PERF_RECORD_MISC_COMM_EXEC for the comm an exec set (include/uapi/linux/perf_event.h) */
static int put_comm(struct perfdata_writer *w, uint32_t pid, uint32_t tid, const char *comm,
		    uint64_t time, uint16_t misc)
{
	char name[PROFILE_COMM_LEN];
	size_t len;

	snprintf(name, sizeof(name), "%s", comm);
	len = ALIGN8(strlen(name) + 1);
	put_header(&w->b, PERF_RECORD_COMM, PERF_RECORD_MISC_USER | misc,
		   16 + len + SAMPLE_ID_SIZE(w));
	put_u32_pair(&w->b, pid, tid);
	put_name(&w->b, name, len);
	put_sample_id(w, pid, tid, time, 0);
	return maybe_flush(w);
}

static uint32_t prot_of(const char *perms)
{
	return (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
	       (perms[2] == 'x' ? PROT_EXEC : 0);
}

/*
 * The name m's file is written under (see struct file_name): borrowed from m
 * or the writer; NULL when out of memory (w->err set).
 */
static const char *file_name(struct perfdata_writer *w, const struct profile_mapping *m)
{
	uint64_t first = 0;
	size_t i, last = 0;
	int64_t path;
	struct file_name *f;

	if (!m->path || m->path[0] != '/')
		return m->path;
	path = strset__add(&w->paths, m->path);
	if (path < 0) {
		w->err = (int)path;
		return NULL;
	}
	if (u64map__get(&w->path_files, (uint64_t)path + 1, &first)) {
		for (i = first; i; i = w->files[i - 1].next) {
			f = &w->files[i - 1];
			/* an inode of 0 (not known) is taken for the path's first file */
			if (!m->inode || (f->inode == m->inode && f->dev_major == m->dev_major &&
					  f->dev_minor == m->dev_minor))
				return f->alias ? f->alias : m->path;
			last = i;
		}
	}
	if (array__grow((void **)&w->files, &w->cap_files, w->nr_files + 1, sizeof(*w->files))) {
		w->err = -ENOMEM;
		return NULL;
	}
	f = &w->files[w->nr_files];
	memset(f, 0, sizeof(*f));
	f->inode = m->inode;
	f->dev_major = m->dev_major;
	f->dev_minor = m->dev_minor;
	if (last &&
	    asprintf(&f->alias, "%s (inode %llu)", m->path, (unsigned long long)m->inode) < 0) {
		f->alias = NULL;
		w->err = -ENOMEM;
		return NULL;
	}
	w->nr_files++;
	if (last)
		w->files[last - 1].next = w->nr_files;
	else if (u64map__put(&w->path_files, (uint64_t)path + 1, w->nr_files))
		return w->err = -ENOMEM, NULL;
	return f->alias ? f->alias : m->path;
}

static int put_mmap2(struct perfdata_writer *w, uint32_t pid, const struct profile_mapping *m,
		     uint64_t time)
{
	/* perf's synthesized maps name anonymous executable memory "//anon" */
	const char *name = m->path && m->path[0] ? file_name(w, m) : "//anon";
	size_t plen, len;

	if (!name)
		return w->err;
	plen = strlen(name);
	if (plen >= PATH_MAX)
		return 0;
	len = ALIGN8(plen + 1);
	put_header(&w->b, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, 72 + len + SAMPLE_ID_SIZE(w));
	put_u32_pair(&w->b, pid, pid);
	buf__put_u64(&w->b, m->start);
	buf__put_u64(&w->b, m->end - m->start);
	buf__put_u64(&w->b, m->offset);
	put_u32_pair(&w->b, m->dev_major, m->dev_minor);
	buf__put_u64(&w->b, m->inode);
	buf__put_u64(&w->b, 0); /* ino_generation */
	put_u32_pair(&w->b, prot_of(m->perms), m->perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE);
	put_name(&w->b, name, len);
	put_sample_id(w, pid, pid, time, 0);
	return maybe_flush(w);
}

/* Kernel or module map: MMAP with pid -1 (perf's host machine), misc KERNEL. */
static int put_kernel_mmap(struct perfdata_writer *w, const char *name, uint64_t start,
			   uint64_t len, uint64_t pgoff)
{
	size_t nlen = ALIGN8(strlen(name) + 1);

	put_header(&w->b, PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL, 40 + nlen + SAMPLE_ID_SIZE(w));
	put_u32_pair(&w->b, UINT32_MAX, 0);
	buf__put_u64(&w->b, start);
	buf__put_u64(&w->b, len);
	buf__put_u64(&w->b, pgoff);
	put_name(&w->b, name, nlen);
	put_sample_id(w, UINT32_MAX, 0, 0, 0);
	return maybe_flush(w);
}

/*
 * The kernel as perf record synthesizes it (p->kernel, kernel_image.h):
 * "[kernel.kallsyms]_text" from _text to _etext with pgoff = _text (perf's
 * reference relocation symbol), then one MMAP per loaded module. Without
 * readable addresses (kptr_restrict) there is no kernel map.
 */
static int kernel_maps(struct perfdata_writer *w, const struct profile_kernel *k)
{
	size_t i;
	int err = 0;

	if (k->text && k->etext > k->text)
		err = put_kernel_mmap(w, "[kernel.kallsyms]_text", k->text, k->etext - k->text,
				      k->text);
	for (i = 0; i < k->nr_modules && !err; i++)
		err = put_kernel_mmap(w, k->modules[i].path, k->modules[i].start,
				      k->modules[i].size, 0);
	return err;
}

static void make_attr(struct perf_event_attr *a, const struct perfdata_opts *o)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	if (!strcmp(o->event, "cycles")) {
		a->type = PERF_TYPE_HARDWARE;
		a->config = PERF_COUNT_HW_CPU_CYCLES;
	} else {
		a->type = PERF_TYPE_SOFTWARE;
		a->config = PERF_COUNT_SW_CPU_CLOCK;
	}
	a->sample_freq = o->freq_hz;
	a->freq = 1;
	a->sample_type = SAMPLE_TYPE | (o->offcpu ? PERF_SAMPLE_IDENTIFIER : 0);
	/* as perf record -a -g: an inherited, system-wide event that tracks mmap and comm */
	a->disabled = 1;
	a->inherit = 1;
	a->mmap = 1;
	a->comm = 1;
	a->mmap2 = 1;
	a->sample_id_all = 1;
	/* bpf_ktime_get_ns(): what perf inject --jit requires (perf record -k mono) */
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
}

/*
 * The off-CPU event as perf record --off-cpu declares it (off_cpu_config in
 * tools/perf/util/bpf_off_cpu.c): a software bpf-output event with period
 * 1, whose samples carry the block's length in ns as their period. It
 * shares the CPU event's sample_type (perf needs one layout for the id),
 * and, not tracking, leaves mmap and comm to the CPU event.
 */
static void make_offcpu_attr(struct perf_event_attr *a, const struct perf_event_attr *cpu)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_BPF_OUTPUT;
	a->sample_period = 1;
	a->sample_type = cpu->sample_type;
	a->disabled = 1;
	a->inherit = 1;
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
}

struct perfdata_writer *perfdata__new(int fd, const struct perfdata_opts *o,
				      const struct profile *p)
{
	struct perfdata_writer *w;
	struct perf_file_header hdr = { .size = sizeof(hdr) };
	int err;

	if (fd < 0 || !o || !o->event || !o->freq_hz || !p) {
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w || !(w->event = strdup(o->event))) {
		free(w);
		errno = ENOMEM;
		return NULL;
	}
	if (strset__init(&w->paths, true)) {
		free(w->event);
		free(w);
		errno = ENOMEM;
		return NULL;
	}
	w->fd = fd;
	w->period_ns = o->period_ns ? o->period_ns : 1000000000ULL / o->freq_hz;
	w->argc = o->argc;
	w->argv = o->argv;
	make_attr(&w->attr, o);
	w->offcpu = o->offcpu;

	/* placeholder header (rewritten at the end), the attr, then the data section */
	buf__put_bytes(&w->b, &hdr, sizeof(hdr));
	if (w->offcpu) {
		/* the events' ids, then each attr with the file section of its id */
		struct perf_file_section ids = { .offset = sizeof(hdr), .size = 8 };

		make_offcpu_attr(&w->off_attr, &w->attr);
		buf__put_u64(&w->b, ID_CPU);
		buf__put_u64(&w->b, ID_OFFCPU);
		buf__put_bytes(&w->b, &w->attr, sizeof(w->attr));
		buf__put_bytes(&w->b, &ids, sizeof(ids));
		ids.offset += 8;
		buf__put_bytes(&w->b, &w->off_attr, sizeof(w->off_attr));
		buf__put_bytes(&w->b, &ids, sizeof(ids));
	} else {
		buf__put_bytes(&w->b, &w->attr, sizeof(w->attr));
		buf__put_zeros(&w->b, sizeof(struct perf_file_section)); /* no ids: one event */
	}
	w->data_offset = w->b.len;
	err = kernel_maps(w, &p->kernel);
	if (!err)
		err = flush(w);
	if (err) {
		perfdata__free(w);
		errno = -err;
		return NULL;
	}
	return w;
}

/* The writer's state for process pid, created (with its COMM written) on first use. */
static struct proc_state *proc_state(struct perfdata_writer *w, uint32_t pid, const char *comm,
				     uint64_t time)
{
	struct proc_state *ps;
	uint64_t idx;
	int err;

	if (u64map__get(&w->proc_index, (uint64_t)pid + 1, &idx))
		return &w->procs[idx];
	if (w->nr_procs == w->cap_procs) {
		size_t cap = w->cap_procs ? w->cap_procs * 2 : 16;

		ps = realloc(w->procs, cap * sizeof(*ps));
		if (!ps) {
			w->err = -ENOMEM;
			return NULL;
		}
		w->procs = ps;
		w->cap_procs = cap;
	}
	err = u64map__put(&w->proc_index, (uint64_t)pid + 1, (uint32_t)w->nr_procs);
	if (!err)
		err = u64map__put(&w->threads, ((uint64_t)pid << 32 | pid) + 1, 0);
	if (err) {
		w->err = err;
		return NULL;
	}
	ps = &w->procs[w->nr_procs++];
	memset(ps, 0, sizeof(*ps));
	ps->pid = pid;
	snprintf(ps->comm, sizeof(ps->comm), "%s", comm);
	if (put_comm(w, pid, pid, comm, meta_time(w, time), 0))
		return NULL;
	return ps;
}

static bool map_written(const struct proc_state *ps, const struct profile_mapping *m)
{
	size_t i;

	for (i = 0; i < ps->nr_maps; i++) {
		const struct map_key *k = &ps->maps[i];

		if (k->start == m->start && k->end == m->end && k->offset == m->offset &&
		    k->inode == m->inode && k->path == m->path)
			return true;
	}
	return false;
}

/* MMAP2 for m unless this process already has it. */
static int put_map_once(struct perfdata_writer *w, struct proc_state *ps, uint32_t pid,
			const struct profile_mapping *m, uint64_t t)
{
	if (map_written(ps, m))
		return 0;
	if (ps->nr_maps == ps->cap_maps) {
		size_t cap = ps->cap_maps ? ps->cap_maps * 2 : 16;
		struct map_key *k = realloc(ps->maps, cap * sizeof(*k));

		if (!k)
			return w->err = -ENOMEM;
		ps->maps = k;
		ps->cap_maps = cap;
	}
	ps->maps[ps->nr_maps++] =
		(struct map_key){ m->start, m->end, m->offset, m->inode, m->path };
	return put_mmap2(w, pid, m, t);
}

int perfdata__maps(struct perfdata_writer *w, const struct profile *p, uint32_t proc,
		   uint64_t time_ns)
{
	const struct profile_process *pr;
	struct proc_state *ps;
	uint64_t t = meta_time(w, time_ns);
	size_t i;

	if (w->err || w->finished)
		return w->err ? w->err : -EINVAL;
	if (proc >= p->nr_procs)
		return -EINVAL;
	pr = &p->procs[proc];
	ps = proc_state(w, pr->pid, pr->comm, time_ns);
	if (!ps)
		return w->err;
	/* perf record (without -d) synthesizes executable mappings only */
	for (i = 0; i < pr->nr_mappings; i++) {
		const struct profile_mapping *m = &pr->mappings[i];

		if (m->perms[2] == 'x' && m->end > m->start && put_map_once(w, ps, pr->pid, m, t))
			return w->err;
	}
	/* JIT code onto its image (jit_elf.h), after the anonymous memory it covers: perf splits that */
	for (i = 0; i < pr->nr_jit_maps; i++)
		if (put_map_once(w, ps, pr->pid, &pr->jit_maps[i], t))
			return w->err;
	return 0;
}

/* A SAMPLE of event id (ID_CPU, or ID_OFFCPU with the block's ns as period). */
static int put_sample(struct perfdata_writer *w, const struct profile_sample *s, uint64_t id,
		      uint64_t period)
{
	uint32_t nk = s->nr_kernel, nu = s->nr_user, nr, i;
	uint64_t tkey = ((uint64_t)s->pid << 32 | s->tid) + 1;
	char comm[PROFILE_COMM_LEN];
	struct proc_state *ps;

	if (w->err || w->finished)
		return w->err ? w->err : -EINVAL;
	snprintf(comm, sizeof(comm), "%s", s->comm ? s->comm : "");
	/* a process perfdata__maps never saw still gets its COMM */
	ps = proc_state(w, s->pid, comm, s->time_ns);
	if (!ps)
		return w->err;
	/*
	 * first seen before its exec (a command forked by bpfprof): its new
	 * name, as perf record writes it. Not for a sample older than the
	 * name written last (a stack copy walked after later samples, taken
	 * before the exec): its COMM, stamped no later than flush_bound, would
	 * name every later sample perf sorts after it (clang-14's 1,270
	 * samples named driver.sh, its shell's name before the exec)
	 */
	if (s->tid == s->pid && strcmp(ps->comm, comm) && s->time_ns >= ps->comm_ns) {
		snprintf(ps->comm, sizeof(ps->comm), "%s", comm);
		ps->comm_ns = s->time_ns;
		if (put_comm(w, s->pid, s->tid, comm, meta_time(w, s->time_ns),
			     PERF_RECORD_MISC_COMM_EXEC))
			return w->err;
	}
	if (!u64map__get(&w->threads, tkey, NULL)) {
		int err = u64map__put(&w->threads, tkey, 0);

		if (err)
			return w->err = err;
		if (put_comm(w, s->pid, s->tid, comm, meta_time(w, s->time_ns), 0))
			return w->err;
	}

	nr = (nk ? nk + 1 : 0) + (nu ? nu + 1 : 0);
	put_header(&w->b, PERF_RECORD_SAMPLE, nk ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER,
		   56 + (w->offcpu ? 8 : 0) + (size_t)nr * 8);
	if (w->offcpu)
		buf__put_u64(&w->b, id); /* PERF_SAMPLE_IDENTIFIER comes first */
	buf__put_u64(&w->b, nk + nu ? s->ips[0] : 0); /* the leaf, kernel or user */
	put_u32_pair(&w->b, s->pid, s->tid);
	buf__put_u64(&w->b, s->time_ns);
	put_u32_pair(&w->b, s->cpu, 0);
	buf__put_u64(&w->b, period);
	buf__put_u64(&w->b, nr);
	if (nk) {
		buf__put_u64(&w->b, PERF_CONTEXT_KERNEL);
		for (i = 0; i < nk; i++)
			buf__put_u64(&w->b, s->ips[i]);
	}
	if (nu) {
		buf__put_u64(&w->b, PERF_CONTEXT_USER);
		for (i = 0; i < nu; i++)
			buf__put_u64(&w->b, s->ips[nk + i]);
	}
	if (!(w->nr_samples + w->nr_offcpu) || s->time_ns < w->first_time)
		w->first_time = s->time_ns;
	if (!(w->nr_samples + w->nr_offcpu) || s->time_ns > w->last_time)
		w->last_time = s->time_ns;
	if (id == ID_OFFCPU)
		w->nr_offcpu++;
	else
		w->nr_samples++;
	note_time(w, s->time_ns);
	return maybe_flush(w);
}

int perfdata__sample(struct perfdata_writer *w, const struct profile_sample *s)
{
	return put_sample(w, s, ID_CPU, w->period_ns);
}

int perfdata__sample_period(struct perfdata_writer *w, const struct profile_sample *s,
			    uint64_t period)
{
	return put_sample(w, s, ID_CPU, period);
}

int perfdata__offcpu(struct perfdata_writer *w, const struct profile_sample *s)
{
	if (!w->offcpu)
		return -EINVAL;
	return put_sample(w, s, ID_OFFCPU, s->off_ns);
}

uint64_t perfdata__nr_offcpu(const struct perfdata_writer *w)
{
	return w ? w->nr_offcpu : 0;
}

int perfdata__round(struct perfdata_writer *w)
{
	if (w->err || w->finished)
		return w->err ? w->err : -EINVAL;
	if (w->max_time < w->max_at_round + ROUND_MIN_NS)
		return 0;
	put_header(&w->b, PERF_USER_RECORD_FINISHED_ROUND, 0, sizeof(struct perf_event_header));
	w->flush_bound = w->max_at_round;
	w->max_at_round = w->max_time;
	return maybe_flush(w);
}

uint64_t perfdata__nr_samples(const struct perfdata_writer *w)
{
	return w ? w->nr_samples : 0;
}

/* A DSO for the BUILD_ID feature. */
struct dso_id {
	const char *path; /* interned; the name written (file_name) */
	uint8_t id[PROFILE_BUILD_ID_MAX];
	uint8_t len;
};

static void put_build_id(struct buf *b, uint16_t misc, const uint8_t *id, size_t len,
			 const char *name)
{
	struct perf_build_id_entry e;
	size_t n = strlen(name) + 1, padded = ALIGN_UP(n, PERF_NAME_ALIGN);

	memset(&e, 0, sizeof(e));
	e.header.misc = misc | PERF_MISC_BUILD_ID_SIZE;
	e.header.size = (uint16_t)(sizeof(e) + padded);
	e.pid = -1;
	memcpy(e.build_id, id, len);
	e.build_id[20] = (uint8_t)len;
	buf__put_bytes(b, &e, sizeof(e));
	buf__put_bytes(b, name, n);
	buf__put_zeros(b, padded - n);
}

/*
 * BUILD_ID: the kernel first (perf's reader expects "[kernel.kallsyms]"
 * there), then every file-backed DSO that a sampled frame, leaf or caller,
 * falls into, with the build-id the model holds for it (build_ids.h fills
 * those the symbolizer did not record); a DSO without one is left out.
 */
static int build_id_section(struct perfdata_writer *w, const struct profile *p, struct buf *b)
{
	struct u64map seen = { 0 };
	struct dso_id *dsos = NULL;
	size_t nr = 0, cap = 0, s, i;
	int err = 0;

	if (p->kernel.build_id_len)
		put_build_id(b, PERF_RECORD_MISC_KERNEL, p->kernel.build_id, p->kernel.build_id_len,
			     "[kernel.kallsyms]");
	else
		pr_debug("perf.data: no kernel build-id\n");

	for (s = 0; s < p->nr_stacks && !err; s++) {
		const struct profile_stack *st = &p->stacks[s];
		int last = -1;

		for (i = 0; i < st->nr_user; i++) {
			int m = profile__user_frame_mapping(p, st, i);
			const struct profile_mapping *pm;
			const char *name;
			uint64_t idx;

			if (m < 0 || m == last)
				continue;
			last = m;
			pm = &p->procs[st->proc].mappings[m];
			/* a deleted file's path may name another file now: only with the symbolizer's build-id */
			if (!pm->path || pm->path[0] != '/' ||
			    (strstr(pm->path, " (deleted)") && !pm->build_id_len))
				continue;
			name = file_name(w, pm);
			if (!name) {
				err = w->err;
				break;
			}
			if (u64map__get(&seen, (uintptr_t)name, &idx)) {
				/* the same file, or one without a build-id of its own */
				if (!pm->build_id_len ||
				    (pm->build_id_len == dsos[idx].len &&
				     !memcmp(pm->build_id, dsos[idx].id, pm->build_id_len)))
					continue;
			}
			if (nr == cap) {
				struct dso_id *d = realloc(dsos, (cap ? cap * 2 : 16) * sizeof(*d));

				if (!d) {
					err = -ENOMEM;
					break;
				}
				dsos = d;
				cap = cap ? cap * 2 : 16;
			}
			dsos[nr] = (struct dso_id){ .path = name };
			memcpy(dsos[nr].id, pm->build_id, pm->build_id_len);
			dsos[nr].len = pm->build_id_len;
			err = u64map__put(&seen, (uintptr_t)name, (uint32_t)nr);
			nr++;
		}
	}
	/* every JIT image (jit_elf.h) that was written */
	for (s = 0; s < p->nr_procs && !err; s++) {
		const struct profile_process *pr = &p->procs[s];

		for (i = 0; pr->nr_samples && i < pr->nr_jit_maps; i++) {
			const char *name;

			if (!pr->jit_maps[i].build_id_len)
				continue;
			name = file_name(w, &pr->jit_maps[i]);
			if (!name) {
				err = w->err;
				break;
			}
			put_build_id(b, PERF_RECORD_MISC_USER, pr->jit_maps[i].build_id,
				     pr->jit_maps[i].build_id_len, name);
		}
	}
	for (i = 0; i < nr && !err; i++) {
		struct dso_id *d = &dsos[i];

		if (!d->len) {
			pr_debug("perf.data: no build-id for '%s'\n", d->path);
			continue;
		}
		put_build_id(b, PERF_RECORD_MISC_USER, d->id, d->len, d->path);
	}
	free(dsos);
	u64map__free(&seen);
	return err;
}

static const char *program_version(void)
{
	/* argp's version string when the program set one ("bpfprof 0.1.0") */
	return argp_program_version ? argp_program_version : "bpfprof";
}

/* Fill feature section `bit` into b. Returns 0, -ENOENT/-ENOTSUP to leave it out, or -ENOMEM. */
static int feature(struct perfdata_writer *w, const struct profile *p, int bit, struct buf *b)
{
	struct timespec ts;

	switch (bit) {
	case PERF_HEADER_BUILD_ID:
		return build_id_section(w, p, b);
	case PERF_HEADER_HOSTNAME:
		return perf_header__hostname(b);
	case PERF_HEADER_OSRELEASE:
		return perf_header__osrelease(b);
	case PERF_HEADER_VERSION:
		perf_header__put_string(b, program_version());
		return 0;
	case PERF_HEADER_ARCH:
		return perf_header__arch(b);
	case PERF_HEADER_NRCPUS:
		return perf_header__nrcpus(b);
	case PERF_HEADER_CPUDESC:
		return perf_header__cpudesc(b);
	case PERF_HEADER_CPUID:
		return perf_header__cpuid(b);
	case PERF_HEADER_TOTAL_MEM:
		return perf_header__total_mem(b);
	case PERF_HEADER_CMDLINE:
		return perf_header__cmdline(b, w->argc, w->argv);
	case PERF_HEADER_EVENT_DESC:
		/* u32 nr, u32 attr size, then per event: attr, u32 nr_ids, name, ids */
		buf__put_u32(b, w->offcpu ? 2 : 1);
		buf__put_u32(b, sizeof(w->attr));
		buf__put_bytes(b, &w->attr, sizeof(w->attr));
		buf__put_u32(b, w->offcpu ? 1 : 0);
		perf_header__put_string(b, w->event);
		if (w->offcpu) {
			buf__put_u64(b, ID_CPU);
			buf__put_bytes(b, &w->off_attr, sizeof(w->off_attr));
			buf__put_u32(b, 1);
			perf_header__put_string(b, OFFCPU_EVENT);
			buf__put_u64(b, ID_OFFCPU);
		}
		return 0;
	case PERF_HEADER_SAMPLE_TIME:
		if (!(w->nr_samples + w->nr_offcpu))
			return -ENOENT;
		buf__put_u64(b, w->first_time);
		buf__put_u64(b, w->last_time);
		return 0;
	case PERF_HEADER_CLOCKID:
		if (clock_getres(CLOCK_MONOTONIC, &ts))
			return -errno;
		buf__put_u64(b, (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec);
		return 0;
	case PERF_HEADER_CLOCK_DATA:
		/* a reference point pairing wall-clock time with the sample clock */
		if (!p->start_ns || !p->start_realtime_ns)
			return -ENOENT;
		buf__put_u32(b, 1);
		buf__put_u32(b, CLOCK_MONOTONIC);
		buf__put_u64(b, p->start_realtime_ns);
		buf__put_u64(b, p->start_ns);
		return 0;
	}
	return -ENOENT;
}

static const int features[] = {
	PERF_HEADER_BUILD_ID, PERF_HEADER_HOSTNAME,   PERF_HEADER_OSRELEASE,
	PERF_HEADER_VERSION,  PERF_HEADER_ARCH,	      PERF_HEADER_NRCPUS,
	PERF_HEADER_CPUDESC,  PERF_HEADER_CPUID,      PERF_HEADER_TOTAL_MEM,
	PERF_HEADER_CMDLINE,  PERF_HEADER_EVENT_DESC, PERF_HEADER_SAMPLE_TIME,
	PERF_HEADER_CLOCKID,  PERF_HEADER_CLOCK_DATA,
};
#define NR_FEATURES (sizeof(features) / sizeof(features[0]))

int perfdata__finish(struct perfdata_writer *w, const struct profile *p)
{
	struct buf sect[NR_FEATURES];
	struct perf_file_header hdr;
	struct perf_file_section table[NR_FEATURES];
	uint64_t data_size, off;
	size_t i, nr = 0;
	int err;

	if (w->err || w->finished)
		return w->err ? w->err : -EINVAL;
	w->finished = true;
	if (p->nr_lost) {
		uint64_t t = w->max_time;

		put_header(&w->b, PERF_RECORD_LOST_SAMPLES, 0, 16 + SAMPLE_ID_SIZE(w));
		buf__put_u64(&w->b, p->nr_lost);
		put_sample_id(w, 0, 0, t, 0);
	}
	err = flush(w);
	if (err)
		return err;
	data_size = w->file_off - w->data_offset;

	memset(&hdr, 0, sizeof(hdr));
	memcpy(hdr.magic, PERF_MAGIC2, 8);
	hdr.size = sizeof(hdr);
	hdr.attr_size = sizeof(w->attr) + sizeof(struct perf_file_section);
	hdr.attrs.offset = sizeof(hdr) + (w->offcpu ? 16 : 0); /* after the two ids */
	hdr.attrs.size = hdr.attr_size * (w->offcpu ? 2 : 1);
	hdr.data.offset = w->data_offset;
	hdr.data.size = data_size;

	memset(sect, 0, sizeof(sect));
	for (i = 0; i < NR_FEATURES; i++) {
		int bit = features[i], ret = feature(w, p, bit, &sect[nr]);

		if (!ret && sect[nr].err)
			ret = sect[nr].err;
		if (ret == -ENOMEM) {
			err = ret;
			break;
		}
		if (ret) {
			pr_debug("perf.data: feature %d left out: %s\n", bit, strerror(-ret));
			sect[nr].len = 0;
			continue;
		}
		hdr.adds_features[bit / 64] |= 1ULL << (bit % 64);
		nr++;
	}
	if (!err) {
		/* the table sits at data.offset + data.size, the sections after it */
		off = w->file_off + nr * sizeof(table[0]);
		for (i = 0; i < nr; i++) {
			table[i].offset = off;
			table[i].size = sect[i].len;
			off += sect[i].len;
		}
		buf__put_bytes(&w->b, table, nr * sizeof(table[0]));
		for (i = 0; i < nr; i++)
			buf__put_bytes(&w->b, sect[i].data, sect[i].len);
		err = flush(w);
	}
	for (i = 0; i < NR_FEATURES; i++)
		buf__free(&sect[i]);
	if (!err)
		err = io__pwrite_all(w->fd, &hdr, sizeof(hdr), 0);
	if (err)
		w->err = err;
	return err;
}

void perfdata__free(struct perfdata_writer *w)
{
	size_t i;

	if (!w)
		return;
	for (i = 0; i < w->nr_procs; i++)
		free(w->procs[i].maps);
	free(w->procs);
	u64map__free(&w->proc_index);
	u64map__free(&w->threads);
	for (i = 0; i < w->nr_files; i++)
		free(w->files[i].alias);
	free(w->files);
	u64map__free(&w->path_files);
	strset__free(&w->paths);
	buf__free(&w->b);
	free(w->event);
	free(w);
}

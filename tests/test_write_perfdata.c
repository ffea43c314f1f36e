// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/write/write_perfdata.c (include/write_perfdata.h). A profile
 * is built by hand, streamed to a temporary file through the writer, and the
 * file is decoded by a small reader written here from
 * "perf.data format" (tools/perf/Documentation/perf.data-file-format.txt in the
 * Linux kernel tree), <linux/perf_event.h> and perf's
 * tools/perf/util/header.c, not from the writer's helpers: header, attr, data
 * records (tiling, order, every field of COMM, MMAP, MMAP2, SAMPLE with its
 * callchain contexts, LOST_SAMPLES, sample_id trailers), the feature table and
 * the HOSTNAME, NRCPUS, CMDLINE, EVENT_DESC, SAMPLE_TIME and BUILD_ID sections.
 * The kernel (text, a module, build-id) is filled into the model by hand, as
 * kernel_image.h would: the writer reads no file.
 * Write failures (a full disk) must come back as -errno, never crash.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <cmocka.h>
#include "profile.h"
#include "write_perfdata.h"

#define PID 4242
#define TID2 4243
#define FREQ 999
#define PERIOD 1001001ULL
#define T0 5000000000ULL /* sample times, ns */
#define TEXT 0xffffffff81000000ULL
#define ETEXT 0xffffffff8220bb08ULL
#define MOD_ADDR 0xffffffffc0200000ULL
#define MOD_SIZE 16384
#define EXE_START 0x555555554000ULL
#define LIBC_START 0x7ffff7dc0000ULL

/* perf's own numbers, spelled out here independently of the writer */
enum {
	F_BUILD_ID = 2,
	F_HOSTNAME = 3,
	F_OSRELEASE = 4,
	F_VERSION = 5,
	F_ARCH = 6,
	F_NRCPUS = 7,
	F_CPUDESC = 8,
	F_CPUID = 9,
	F_TOTAL_MEM = 10,
	F_CMDLINE = 11,
	F_EVENT_DESC = 12,
	F_SAMPLE_TIME = 21,
	F_CLOCKID = 23,
	F_CLOCK_DATA = 29
};
#define REC_FINISHED_ROUND 68
#define MISC_BUILD_ID_SIZE (1 << 15)

static const uint8_t kernel_id[20] = { 0x4a, 0x5a, 0x9b, 0x0a, 0xff, 0xb6, 0x6c, 0x43, 0x7a, 0xbc,
				       0xd4, 0x55, 0xd2, 0x73, 0x8a, 0xf8, 0x79, 0x98, 0x5f, 0xa9 };
static const uint8_t exe_id[20] = { 1,	2,  3,	4,  5,	6,  7,	8,  9,	10,
				    11, 12, 13, 14, 15, 16, 17, 18, 19, 20 };
static const uint8_t libc_id[20] = { 0xee, 1, 0xee, 2, 0xee, 3, 0xee, 4, 0xee, 5,
				     0xee, 6, 0xee, 7, 0xee, 8, 0xee, 9, 0xee, 10 };

struct fixture {
	char dir[64];
	char out[96];
	struct profile *p;
	uint32_t proc;
	uint8_t *file; /* the written file, after read_back() */
	size_t size;
};

static void add_map(struct profile *p, uint32_t proc, uint64_t start, uint64_t end,
		    const char *perms, uint64_t offset, uint64_t inode, const char *path,
		    const uint8_t *id)
{
	struct profile_mapping m = {
		.start = start,
		.end = end,
		.offset = offset,
		.inode = inode,
		.dev_major = 8,
		.dev_minor = 1,
	};

	memcpy(m.perms, perms, 5);
	m.path = profile__intern(p, path);
	assert_non_null(m.path);
	if (id) {
		memcpy(m.build_id, id, 20);
		m.build_id_len = 20;
	}
	assert_int_equal(profile__add_mapping(p, proc, &m), 1);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	bool created;
	int idx;

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_write_perfdata.XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->out, sizeof(f->out), "%s/out.data", f->dir);

	f->p = profile__new();
	if (!f->p)
		return -1;
	f->p->event = profile__intern(f->p, "cpu-clock");
	f->p->freq_hz = FREQ;
	f->p->period_ns = PERIOD;
	f->p->start_ns = T0 - 1000;
	f->p->start_realtime_ns = 1700000000000000000ULL;
	/* the kernel as kernel_image__read would have found it */
	f->p->kernel.text = TEXT;
	f->p->kernel.etext = ETEXT;
	if (profile__add_module(f->p, "[bpfprof_fake_mod]", MOD_ADDR, MOD_SIZE))
		return -1;
	memcpy(f->p->kernel.build_id, kernel_id, 20);
	f->p->kernel.build_id_len = 20;
	idx = profile__process(f->p, PID, &created);
	if (idx < 0)
		return -1;
	f->proc = (uint32_t)idx;
	snprintf(f->p->procs[idx].comm, PROFILE_COMM_LEN, "work");
	add_map(f->p, f->proc, EXE_START, EXE_START + 0x1000, "r--p", 0, 77, "/opt/work", NULL);
	add_map(f->p, f->proc, EXE_START + 0x1000, EXE_START + 0x2000, "r-xp", 0x1000, 77,
		"/opt/work", exe_id);
	add_map(f->p, f->proc, LIBC_START, LIBC_START + 0x100000, "r-xp", 0x26000, 99,
		"/lib/libc.so.6", libc_id);
	add_map(f->p, f->proc, 0x7ffff7fc0000ULL, 0x7ffff7fc2000ULL, "r-xp", 0, 0, "[vdso]", NULL);
	add_map(f->p, f->proc, 0x7ffff7fd0000ULL, 0x7ffff7fd8000ULL, "r-xp", 0, 55,
		"/lib/unsampled.so", exe_id);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	unlink(f->out);
	rmdir(f->dir);
	profile__free(f->p);
	free(f->file);
	free(f);
	return 0;
}

static char *test_argv[] = { "./bpfprof", "-F", "999", "-o", "out.data", "--", "work", NULL };

static struct perfdata_opts opts(void)
{
	return (struct perfdata_opts){
		.event = "cpu-clock",
		.freq_hz = FREQ,
		.period_ns = PERIOD,
		.argc = 7,
		.argv = test_argv,
	};
}

/* ips and comm are borrowed: static arrays and literals of the callers */
static struct profile_sample sample(uint32_t tid, uint64_t t, const char *comm, const uint64_t *ips,
				    uint16_t nk, uint16_t nu)
{
	return (struct profile_sample){ .pid = PID,
					.tid = tid,
					.cpu = tid == PID ? 1 : 0,
					.time_ns = t,
					.comm = comm,
					.ips = ips,
					.nr_kernel = nk,
					.nr_user = nu };
}

static void read_back(struct fixture *f)
{
	struct stat st;
	int fd = open(f->out, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	f->size = (size_t)st.st_size;
	f->file = malloc(f->size);
	assert_non_null(f->file);
	assert_int_equal(pread(fd, f->file, f->size, 0), (ssize_t)f->size);
	close(fd);
}

/* Bounded little readers over the file image. */
static uint64_t u64_at(const struct fixture *f, uint64_t off)
{
	uint64_t v;

	assert_true(off + 8 <= f->size);
	memcpy(&v, f->file + off, 8);
	return v;
}

static uint16_t u16_at(const struct fixture *f, uint64_t off)
{
	uint16_t v;

	assert_true(off + 2 <= f->size);
	memcpy(&v, f->file + off, 2);
	return v;
}

static uint32_t u32_at(const struct fixture *f, uint64_t off)
{
	uint32_t v;

	assert_true(off + 4 <= f->size);
	memcpy(&v, f->file + off, 4);
	return v;
}

/* perf_header_string at *off: returns the string, advances *off; checks the 64-byte padding. */
static const char *str_at(const struct fixture *f, uint64_t *off)
{
	uint32_t len = u32_at(f, *off);
	const char *s = (const char *)f->file + *off + 4;

	assert_true(len > 0 && len % 64 == 0);
	assert_true(*off + 4 + len <= f->size);
	assert_true(strnlen(s, len) < len);
	*off += 4 + len;
	return s;
}

/* The standard run: maps, three samples (user; kernel + user from a new thread; kernel only), rounds, finish. */
static void write_standard(struct fixture *f)
{
	static const uint64_t u1[] = { EXE_START + 0x1100, EXE_START + 0x1200, LIBC_START + 0x40 };
	static const uint64_t ku[] = { 0xffffffff81001010ULL, 0xffffffff81001020ULL,
				       EXE_START + 0x1300 };
	static const uint64_t k1[] = { 0xffffffff81001030ULL };
	struct perfdata_opts o = opts();
	struct profile_sample s;
	struct perfdata_writer *w;
	bool created;
	int fd = open(f->out, O_RDWR | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	w = perfdata__new(fd, &o, f->p);
	assert_non_null(w);
	assert_int_equal(perfdata__maps(w, f->p, f->proc, T0), 0);
	s = sample(PID, T0, "work", u1, 0, 3);
	assert_int_equal(perfdata__sample(w, &s), 0);
	assert_int_equal(perfdata__round(w), 0);
	s = sample(TID2, T0 + 200000000, "worker", ku, 2, 1);
	assert_int_equal(perfdata__sample(w, &s), 0);
	s = sample(TID2, T0 + 300000000, "worker", k1, 1, 0);
	assert_int_equal(perfdata__sample(w, &s), 0);
	assert_int_equal(perfdata__round(w), 0);
	/* a second maps call writes nothing new */
	assert_int_equal(perfdata__maps(w, f->p, f->proc, T0 + 300000000), 0);
	assert_int_equal(perfdata__nr_samples(w), 3);

	/* what the aggregator would have counted; BUILD_ID walks these */
	assert_true(profile__add_stack(f->p, f->proc, u1, 0, 3, 1, PERIOD, &created) >= 0);
	assert_true(profile__add_stack(f->p, f->proc, ku, 2, 1, 1, PERIOD, &created) >= 0);
	assert_true(profile__add_stack(f->p, f->proc, k1, 1, 0, 1, PERIOD, &created) >= 0);
	f->p->nr_lost = 3;
	assert_int_equal(perfdata__finish(w, f->p), 0);
	perfdata__free(w);
	close(fd);
	read_back(f);
}

struct hdr {
	uint64_t attr_off, attr_sz, data_off, data_sz, feat[4];
};

static struct hdr check_file_header(const struct fixture *f)
{
	struct hdr h;
	struct perf_event_attr a;

	assert_true(f->size >= 104);
	assert_memory_equal(f->file, "PERFILE2", 8);
	assert_int_equal(u64_at(f, 8), 104);
	assert_int_equal(u64_at(f, 16), sizeof(struct perf_event_attr) + 16);
	h.attr_off = u64_at(f, 24);
	h.attr_sz = u64_at(f, 32);
	h.data_off = u64_at(f, 40);
	h.data_sz = u64_at(f, 48);
	assert_int_equal(u64_at(f, 56), 0); /* event_types */
	assert_int_equal(u64_at(f, 64), 0);
	for (int i = 0; i < 4; i++)
		h.feat[i] = u64_at(f, 72 + 8 * i);
	assert_int_equal(h.attr_sz, sizeof(struct perf_event_attr) + 16);
	assert_true(h.attr_off >= 104 && h.attr_off + h.attr_sz <= h.data_off);
	assert_true(h.data_off + h.data_sz <= f->size);

	memcpy(&a, f->file + h.attr_off, sizeof(a));
	assert_int_equal(a.type, PERF_TYPE_SOFTWARE);
	assert_int_equal(a.config, PERF_COUNT_SW_CPU_CLOCK);
	assert_int_equal(a.size, sizeof(a));
	assert_int_equal(a.sample_freq, FREQ);
	assert_int_equal(a.freq, 1);
	assert_int_equal(a.sample_type, PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
						PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
						PERF_SAMPLE_CALLCHAIN);
	assert_int_equal(a.sample_id_all, 1);
	assert_int_equal(a.use_clockid, 1);
	assert_int_equal(a.clockid, 1 /* CLOCK_MONOTONIC */);
	assert_int_equal(a.read_format, 0);
	assert_int_equal(u64_at(f, h.attr_off + sizeof(a) + 8), 0); /* no ids */
	return h;
}

/* sample_id_all trailer for TID|TIME|CPU: pid, tid, time, cpu, res */
static void check_trailer(const struct fixture *f, uint64_t end, uint32_t pid, uint32_t tid)
{
	assert_int_equal(u32_at(f, end - 24), pid);
	assert_int_equal(u32_at(f, end - 20), tid);
	assert_int_equal(u32_at(f, end - 4), 0);
}

static void test_records(void **state)
{
	struct fixture *f = *state;
	struct hdr h;
	uint64_t off, end, last_time = 0;
	int seen_comm = 0, seen_mmap2 = 0, seen_sample = 0, seen_lost = 0, seen_round = 0,
	    nr_mmap = 0;
	int thread_comm_at = -1, thread_sample_at = -1, idx = 0, last_type = 0;

	write_standard(f);
	h = check_file_header(f);
	end = h.data_off + h.data_sz;
	for (off = h.data_off; off < end; idx++) {
		struct perf_event_header eh;
		uint64_t r;

		assert_true(off + sizeof(eh) <= end);
		memcpy(&eh, f->file + off, sizeof(eh));
		assert_true(eh.size >= sizeof(eh) && eh.size % 8 == 0);
		assert_true(off + eh.size <= end);
		r = off + sizeof(eh);
		switch (eh.type) {
		case PERF_RECORD_MMAP: {
			const char *name = (const char *)f->file + r + 32;

			assert_int_equal(eh.misc, PERF_RECORD_MISC_KERNEL);
			assert_int_equal(u32_at(f, r), UINT32_MAX); /* pid -1 */
			assert_int_equal(seen_comm + seen_sample, 0);
			if (nr_mmap++ == 0) {
				assert_string_equal(name, "[kernel.kallsyms]_text");
				assert_int_equal(u64_at(f, r + 8), TEXT);
				assert_int_equal(u64_at(f, r + 16), ETEXT - TEXT);
				assert_int_equal(u64_at(f, r + 24), TEXT);
			} else {
				assert_string_equal(name, "[bpfprof_fake_mod]");
				assert_int_equal(u64_at(f, r + 8), MOD_ADDR);
				assert_int_equal(u64_at(f, r + 16), MOD_SIZE);
			}
			assert_int_equal(eh.size, 8 + 32 + (strlen(name) + 8) / 8 * 8 + 24);
			break;
		}
		case PERF_RECORD_COMM: {
			const char *comm = (const char *)f->file + r + 8;

			assert_int_equal(u32_at(f, r), PID);
			if (u32_at(f, r + 4) == PID) {
				assert_string_equal(comm, "work");
				assert_int_equal(seen_mmap2 + seen_sample, 0);
			} else {
				assert_int_equal(u32_at(f, r + 4), TID2);
				assert_string_equal(comm, "worker");
				assert_int_equal(thread_comm_at, -1); /* once per thread */
				thread_comm_at = idx;
			}
			check_trailer(f, off + eh.size, PID, u32_at(f, r + 4));
			assert_int_equal(eh.size, 8 + 8 + (strlen(comm) + 8) / 8 * 8 + 24);
			seen_comm++;
			break;
		}
		case PERF_RECORD_MMAP2: {
			const char *name = (const char *)f->file + r + 64;

			assert_true(seen_comm > 0);
			assert_int_equal(seen_sample, 0);
			assert_int_equal(eh.misc, PERF_RECORD_MISC_USER);
			assert_int_equal(u32_at(f, r), PID);
			assert_int_equal(u32_at(f, r + 4), PID);
			assert_int_equal(u32_at(f, r + 32), 8); /* maj */
			assert_int_equal(u32_at(f, r + 36), 1); /* min */
			assert_int_equal(u32_at(f, r + 56), PROT_READ | PROT_EXEC);
			assert_int_equal(u32_at(f, r + 60), MAP_PRIVATE);
			if (seen_mmap2 == 0) {
				assert_string_equal(name, "/opt/work");
				assert_int_equal(u64_at(f, r + 8), EXE_START + 0x1000);
				assert_int_equal(u64_at(f, r + 16), 0x1000);
				assert_int_equal(u64_at(f, r + 24), 0x1000);
				assert_int_equal(u64_at(f, r + 40), 77);
			} else if (seen_mmap2 == 1) {
				assert_string_equal(name, "/lib/libc.so.6");
				assert_int_equal(u64_at(f, r + 8), LIBC_START);
				assert_int_equal(u64_at(f, r + 24), 0x26000);
			} else if (seen_mmap2 == 2) {
				assert_string_equal(name, "[vdso]");
			} else {
				assert_string_equal(name, "/lib/unsampled.so");
				assert_int_equal(seen_mmap2, 3);
			}
			check_trailer(f, off + eh.size, PID, PID);
			seen_mmap2++;
			break;
		}
		case PERF_RECORD_SAMPLE: {
			uint64_t ip = u64_at(f, r), t = u64_at(f, r + 16), nr = u64_at(f, r + 40);
			uint32_t tid = u32_at(f, r + 12);

			assert_true(seen_mmap2 == 4);
			assert_int_equal(u32_at(f, r + 8), PID);
			assert_int_equal(u32_at(f, r + 28), 0); /* res */
			assert_int_equal(u64_at(f, r + 32), PERIOD);
			assert_int_equal(eh.size, 8 + 40 + 8 + nr * 8);
			assert_true(t >= last_time);
			last_time = t;
			if (seen_sample == 0) {
				/* user mode: PERF_CONTEXT_USER, then the user stack */
				assert_int_equal(eh.misc, PERF_RECORD_MISC_USER);
				assert_int_equal(tid, PID);
				assert_int_equal(t, T0);
				assert_int_equal(u32_at(f, r + 24), 1); /* cpu */
				assert_int_equal(ip, EXE_START + 0x1100);
				assert_int_equal(nr, 4);
				assert_int_equal(u64_at(f, r + 48), PERF_CONTEXT_USER);
				assert_int_equal(u64_at(f, r + 56), EXE_START + 0x1100);
				assert_int_equal(u64_at(f, r + 64), EXE_START + 0x1200);
				assert_int_equal(u64_at(f, r + 72), LIBC_START + 0x40);
			} else if (seen_sample == 1) {
				/* kernel mode: both contexts, kernel first */
				assert_int_equal(eh.misc, PERF_RECORD_MISC_KERNEL);
				assert_int_equal(tid, TID2);
				assert_int_equal(u32_at(f, r + 24), 0);
				assert_int_equal(ip, 0xffffffff81001010ULL);
				assert_int_equal(nr, 5);
				assert_int_equal(u64_at(f, r + 48), PERF_CONTEXT_KERNEL);
				assert_int_equal(u64_at(f, r + 56), 0xffffffff81001010ULL);
				assert_int_equal(u64_at(f, r + 64), 0xffffffff81001020ULL);
				assert_int_equal(u64_at(f, r + 72), PERF_CONTEXT_USER);
				assert_int_equal(u64_at(f, r + 80), EXE_START + 0x1300);
				thread_sample_at = idx;
			} else {
				/* kernel only: no empty user context */
				assert_int_equal(eh.misc, PERF_RECORD_MISC_KERNEL);
				assert_int_equal(nr, 2);
				assert_int_equal(u64_at(f, r + 48), PERF_CONTEXT_KERNEL);
				assert_int_equal(u64_at(f, r + 56), 0xffffffff81001030ULL);
			}
			seen_sample++;
			break;
		}
		case REC_FINISHED_ROUND:
			assert_int_equal(eh.size, 8);
			seen_round++;
			break;
		case PERF_RECORD_LOST_SAMPLES:
			assert_int_equal(eh.size, 8 + 8 + 24);
			assert_int_equal(u64_at(f, r), 3);
			seen_lost++;
			break;
		default:
			fail_msg("unexpected record type %u at %llu", eh.type,
				 (unsigned long long)off);
		}
		last_type = eh.type;
		off += eh.size;
	}
	assert_int_equal(off, end); /* records tile the data section exactly */
	assert_int_equal(nr_mmap, 2);
	assert_int_equal(seen_comm, 2);
	assert_int_equal(seen_mmap2, 4); /* executable mappings only, each once */
	assert_int_equal(seen_sample, 3);
	assert_true(seen_round >= 1);
	assert_int_equal(seen_lost, 1);
	assert_int_equal(last_type, PERF_RECORD_LOST_SAMPLES);
	assert_true(thread_comm_at >= 0 && thread_comm_at < thread_sample_at);
}

/* Feature section bit: returns its {offset, size} from the table, asserting the bit is set. */
static void feature(const struct fixture *f, const struct hdr *h, int bit, uint64_t *off,
		    uint64_t *size)
{
	uint64_t table = h->data_off + h->data_sz;
	int i, n = 0;

	assert_true(h->feat[bit / 64] >> (bit % 64) & 1);
	for (i = 0; i < bit; i++)
		n += (int)(h->feat[i / 64] >> (i % 64) & 1);
	*off = u64_at(f, table + 16 * n);
	*size = u64_at(f, table + 16 * n + 8);
	assert_true(*off + *size <= f->size);
}

static void test_features(void **state)
{
	struct fixture *f = *state;
	struct hdr h;
	uint64_t off, size, pos, end, table;
	char host[256];
	const char *s;
	int bit, nbits = 0, i;

	write_standard(f);
	h = check_file_header(f);
	for (bit = 0; bit < 256; bit++)
		nbits += (int)(h.feat[bit / 64] >> (bit % 64) & 1);
	{
		static const int want[] = { F_BUILD_ID,	 F_HOSTNAME,   F_OSRELEASE,   F_VERSION,
					    F_ARCH,	 F_NRCPUS,     F_CPUDESC,     F_TOTAL_MEM,
					    F_CMDLINE,	 F_EVENT_DESC, F_SAMPLE_TIME, F_CLOCKID,
					    F_CLOCK_DATA };

		for (i = 0; i < (int)(sizeof(want) / sizeof(want[0])); i++)
			assert_true(h.feat[want[i] / 64] >> (want[i] % 64) & 1);
		assert_false(h.feat[0] & 1); /* HEADER_RESERVED */
	}
	/* the sections follow the table and tile the rest of the file */
	table = h.data_off + h.data_sz;
	pos = table + 16 * (uint64_t)nbits;
	for (i = 0; i < nbits; i++) {
		assert_int_equal(u64_at(f, table + 16 * i), pos);
		pos += u64_at(f, table + 16 * i + 8);
	}
	assert_int_equal(pos, f->size);

	feature(f, &h, F_HOSTNAME, &off, &size);
	assert_int_equal(gethostname(host, sizeof(host)), 0);
	pos = off;
	assert_string_equal(str_at(f, &pos), host);
	assert_int_equal(pos, off + size);

	/* NRCPUS: nr_cpus_avail first, then nr_cpus_online */
	feature(f, &h, F_NRCPUS, &off, &size);
	assert_int_equal(size, 8);
	assert_int_equal(u32_at(f, off + 4), sysconf(_SC_NPROCESSORS_ONLN));
	assert_true(u32_at(f, off) >= u32_at(f, off + 4));

	feature(f, &h, F_TOTAL_MEM, &off, &size);
	assert_int_equal(size, 8);
	assert_true(u64_at(f, off) > 0);

	/* CMDLINE: argc strings, the first the executable's path */
	feature(f, &h, F_CMDLINE, &off, &size);
	assert_int_equal(u32_at(f, off), 7);
	pos = off + 4;
	s = str_at(f, &pos);
	assert_true(s[0] == '/');
	for (i = 1; i < 7; i++)
		assert_string_equal(str_at(f, &pos), test_argv[i]);
	assert_int_equal(pos, off + size);

	/* EVENT_DESC: one event, the attr again, no ids, the name */
	feature(f, &h, F_EVENT_DESC, &off, &size);
	assert_int_equal(u32_at(f, off), 1);
	assert_int_equal(u32_at(f, off + 4), sizeof(struct perf_event_attr));
	assert_memory_equal(f->file + off + 8, f->file + h.attr_off,
			    sizeof(struct perf_event_attr));
	pos = off + 8 + sizeof(struct perf_event_attr);
	assert_int_equal(u32_at(f, pos), 0);
	pos += 4;
	assert_string_equal(str_at(f, &pos), "cpu-clock");
	assert_int_equal(pos, off + size);

	feature(f, &h, F_SAMPLE_TIME, &off, &size);
	assert_int_equal(size, 16);
	assert_int_equal(u64_at(f, off), T0);
	assert_int_equal(u64_at(f, off + 8), T0 + 300000000);

	feature(f, &h, F_CLOCKID, &off, &size);
	assert_int_equal(size, 8);
	assert_true(u64_at(f, off) >= 1);

	feature(f, &h, F_CLOCK_DATA, &off, &size);
	assert_int_equal(size, 24);
	assert_int_equal(u32_at(f, off), 1);
	assert_int_equal(u32_at(f, off + 4), 1);
	assert_int_equal(u64_at(f, off + 8), 1700000000000000000ULL);
	assert_int_equal(u64_at(f, off + 16), T0 - 1000);

	/* BUILD_ID: the kernel first, then the sampled DSOs only (not [vdso], not unsampled.so) */
	feature(f, &h, F_BUILD_ID, &off, &size);
	end = off + size;
	{
		static const struct {
			uint16_t misc;
			const uint8_t *id;
			const char *name;
		} want[] = {
			{ PERF_RECORD_MISC_KERNEL, kernel_id, "[kernel.kallsyms]" },
			{ PERF_RECORD_MISC_USER, exe_id, "/opt/work" },
			{ PERF_RECORD_MISC_USER, libc_id, "/lib/libc.so.6" },
		};

		for (pos = off, i = 0; pos < end; i++) {
			struct perf_event_header eh;
			size_t nlen;

			assert_true(i < 3);
			memcpy(&eh, f->file + pos, sizeof(eh));
			nlen = strlen(want[i].name) + 1;
			assert_int_equal(eh.type, 0);
			assert_int_equal(eh.misc, want[i].misc | MISC_BUILD_ID_SIZE);
			assert_int_equal(eh.size, 36 + (nlen + 63) / 64 * 64);
			assert_int_equal(u32_at(f, pos + 8), UINT32_MAX); /* pid -1 */
			assert_memory_equal(f->file + pos + 12, want[i].id, 20);
			assert_int_equal(f->file[pos + 32], 20);
			assert_int_equal(f->file[pos + 33] | f->file[pos + 34] | f->file[pos + 35],
					 0);
			assert_string_equal((const char *)f->file + pos + 36, want[i].name);
			for (size_t z = 36 + nlen; z < eh.size; z++)
				assert_int_equal(f->file[pos + z], 0);
			pos += eh.size;
		}
		assert_int_equal(i, 3);
		assert_int_equal(pos, end);
	}
}

/*
 * The writer reads nothing of the host: with the model's kernel unknown
 * (zeroed) there is no kernel MMAP and no kernel BUILD_ID entry, and a
 * sampled DSO the model has no build-id for is left out of BUILD_ID rather
 * than read from its file (which exists here, an ELF file with a build-id:
 * this test binary).
 */
static void test_model_only(void **state)
{
	struct fixture *f = *state;
	struct perfdata_opts o = opts();
	struct perfdata_writer *w;
	struct profile_sample s;
	char self[256];
	uint64_t u[2];
	uint64_t off, size, end;
	struct hdr h;
	bool created;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int fd = open(f->out, O_RDWR | O_CREAT | O_TRUNC, 0600);

	assert_true(n > 0 && fd >= 0);
	self[n] = '\0';
	free(f->p->kernel.modules);
	memset(&f->p->kernel, 0, sizeof(f->p->kernel));
	add_map(f->p, f->proc, 0x7ffff0000000ULL, 0x7ffff0001000ULL, "r-xp", 0, 66, self, NULL);
	u[0] = 0x7ffff0000100ULL;
	u[1] = EXE_START + 0x1100;
	w = perfdata__new(fd, &o, f->p);
	assert_non_null(w);
	assert_int_equal(perfdata__maps(w, f->p, f->proc, T0), 0);
	s = sample(PID, T0, "work", u, 0, 2);
	assert_int_equal(perfdata__sample(w, &s), 0);
	assert_true(profile__add_stack(f->p, f->proc, u, 0, 2, 1, PERIOD, &created) >= 0);
	assert_int_equal(perfdata__finish(w, f->p), 0);
	perfdata__free(w);
	close(fd);
	read_back(f);
	h = check_file_header(f);

	/* the first record is the process's COMM: no MMAP of a kernel or module */
	for (off = h.data_off; off < h.data_off + h.data_sz;) {
		struct perf_event_header eh;

		memcpy(&eh, f->file + off, sizeof(eh));
		assert_int_not_equal(eh.type, PERF_RECORD_MMAP);
		assert_true(eh.size >= sizeof(eh));
		off += eh.size;
	}
	/* BUILD_ID: /opt/work alone */
	feature(f, &h, F_BUILD_ID, &off, &size);
	end = off + size;
	assert_int_equal(u16_at(f, off + 6), 36 + 64);
	assert_string_equal((const char *)f->file + off + 36, "/opt/work");
	assert_int_equal(off + 36 + 64, end);
}

/*
 * A binary rebuilt and renamed over its path while its old process runs
 * (a deploy): two files at one path. perf matches the BUILD_ID section to
 * its DSOs by name alone, so the file seen second is named
 * "PATH (inode N)" in its MMAP2 and its BUILD_ID entry; a third process
 * mapping the first file again gets the plain path.
 */
static void test_same_path_two_files(void **state)
{
	static const uint8_t new_id[20] = { 0xdd, 1,  2,  3,  4,  5,  6,  7,  8,  9,
					    10,	  11, 12, 13, 14, 15, 16, 17, 18, 19 };
	static const uint64_t u[] = { EXE_START + 0x1100 };
	static const struct {
		uint32_t pid;
		const char *name;
	} want_maps[] = { { PID, "/opt/work" },
			  { PID, "/lib/libc.so.6" },
			  { PID, "[vdso]" },
			  { PID, "/lib/unsampled.so" },
			  { PID + 10, "/opt/work (inode 78)" },
			  { PID + 20, "/opt/work" } };
	struct fixture *f = *state;
	struct perfdata_opts o = opts();
	struct perfdata_writer *w;
	struct profile_sample s;
	uint64_t off, size, end;
	uint32_t procs[3] = { f->proc };
	struct hdr h;
	bool created;
	size_t nmaps = 0, i;
	int fd = open(f->out, O_RDWR | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	for (i = 1; i < 3; i++) {
		int idx = profile__process(f->p, PID + 10 * (uint32_t)i, &created);

		assert_true(idx >= 0);
		procs[i] = (uint32_t)idx;
		snprintf(f->p->procs[idx].comm, PROFILE_COMM_LEN, "work");
		/* the new build (inode 78), then a process of the old file again (inode 77) */
		add_map(f->p, procs[i], EXE_START + 0x1000, EXE_START + 0x2000, "r-xp", 0x1000,
			i == 1 ? 78 : 77, "/opt/work", i == 1 ? new_id : exe_id);
	}
	w = perfdata__new(fd, &o, f->p);
	assert_non_null(w);
	for (i = 0; i < 3; i++) {
		assert_int_equal(perfdata__maps(w, f->p, procs[i], T0), 0);
		s = sample(PID, T0 + i, "work", u, 0, 1);
		s.pid = s.tid = f->p->procs[procs[i]].pid;
		assert_int_equal(perfdata__sample(w, &s), 0);
		assert_true(profile__add_stack(f->p, procs[i], u, 0, 1, 1, PERIOD, &created) >= 0);
	}
	assert_int_equal(perfdata__finish(w, f->p), 0);
	perfdata__free(w);
	close(fd);
	read_back(f);
	h = check_file_header(f);

	/* MMAP2 records (name at offset 72): pid and name */
	for (off = h.data_off; off < h.data_off + h.data_sz;) {
		struct perf_event_header eh;

		memcpy(&eh, f->file + off, sizeof(eh));
		assert_true(eh.size >= sizeof(eh));
		if (eh.type == PERF_RECORD_MMAP2) {
			assert_true(nmaps < 6);
			assert_int_equal(u32_at(f, off + 8), want_maps[nmaps].pid);
			assert_string_equal((const char *)f->file + off + 72,
					    want_maps[nmaps].name);
			nmaps++;
		}
		off += eh.size;
	}
	assert_int_equal(nmaps, 6);

	/* BUILD_ID: the kernel, then each file once under its own name */
	feature(f, &h, F_BUILD_ID, &off, &size);
	end = off + size;
	{
		static const struct {
			const uint8_t *id;
			const char *name;
		} want[] = { { kernel_id, "[kernel.kallsyms]" },
			     { exe_id, "/opt/work" },
			     { new_id, "/opt/work (inode 78)" } };

		for (i = 0; off < end; i++) {
			assert_true(i < 3);
			assert_memory_equal(f->file + off + 12, want[i].id, 20);
			assert_string_equal((const char *)f->file + off + 36, want[i].name);
			off += u16_at(f, off + 6);
		}
		assert_int_equal(i, 3);
		assert_int_equal(off, end);
	}
}

/* Memory does not grow with samples: records reach the file while sampling goes on. */
static void test_streams(void **state)
{
	static const uint64_t u[] = { EXE_START + 0x1100, EXE_START + 0x1200 };
	struct fixture *f = *state;
	struct perfdata_opts o = opts();
	struct perfdata_writer *w;
	struct profile_sample s;
	struct stat st;
	int fd = open(f->out, O_RDWR | O_CREAT | O_TRUNC, 0600), i;

	assert_true(fd >= 0);
	w = perfdata__new(fd, &o, f->p);
	assert_non_null(w);
	assert_int_equal(perfdata__maps(w, f->p, f->proc, T0), 0);
	for (i = 0; i < 20000; i++) {
		s = sample(PID, T0 + (uint64_t)i * 1000000, "work", u, 0, 2);
		assert_int_equal(perfdata__sample(w, &s), 0);
		if (i % 100 == 99)
			assert_int_equal(perfdata__round(w), 0);
	}
	assert_int_equal(fstat(fd, &st), 0);
	/* 20000 samples of 72 bytes: all but the last buffer's worth (< 256 KiB + a record) are on disk */
	assert_true(st.st_size >= 20000 * 72 - 256 * 1024 - 4096);
	assert_int_equal(perfdata__nr_samples(w), 20000);
	assert_int_equal(perfdata__finish(w, f->p), 0);
	perfdata__free(w);
	close(fd);
}

/* A full disk mid-stream: every call returns -ENOSPC from then on, nothing crashes. */
static void test_disk_full(void **state)
{
	static const uint64_t u[] = { EXE_START + 0x1100 };
	struct fixture *f = *state;
	struct perfdata_opts o = opts();
	struct perfdata_writer *w;
	struct profile_sample s;
	int fd = open(f->out, O_RDWR | O_CREAT | O_TRUNC, 0600), full = open("/dev/full", O_WRONLY),
	    i, err = 0;

	if (full < 0) {
		close(fd);
		skip();
	}
	assert_true(fd >= 0);
	w = perfdata__new(fd, &o, f->p);
	assert_non_null(w);
	assert_true(dup2(full, fd) == fd); /* the same descriptor now writes to a full device */
	assert_int_equal(perfdata__maps(w, f->p, f->proc, T0), 0); /* still buffered */
	for (i = 0; i < 10000 && !err; i++) {
		s = sample(PID, T0 + (uint64_t)i * 1000, "work", u, 0, 1);
		err = perfdata__sample(w, &s);
	}
	assert_int_equal(err, -ENOSPC);
	assert_int_equal(perfdata__sample(w, &s), -ENOSPC);
	assert_int_equal(perfdata__round(w), -ENOSPC);
	assert_int_equal(perfdata__maps(w, f->p, f->proc, T0), -ENOSPC);
	assert_int_equal(perfdata__finish(w, f->p), -ENOSPC);
	perfdata__free(w);
	close(fd);
	close(full);

	/* a full disk from the start: no writer, errno says why */
	full = open("/dev/full", O_WRONLY);
	assert_null(perfdata__new(full, &o, f->p));
	assert_int_equal(errno, ENOSPC);
	close(full);
}

static void test_bad_args(void **state)
{
	struct fixture *f = *state;
	struct perfdata_opts o = opts();

	errno = 0;
	assert_null(perfdata__new(-1, &o, f->p));
	assert_int_equal(errno, EINVAL);
	o.freq_hz = 0;
	assert_null(perfdata__new(0, &o, f->p));
	assert_int_equal(errno, EINVAL);
	o.freq_hz = FREQ;
	errno = 0;
	assert_null(perfdata__new(0, &o, NULL)); /* the kernel comes from the model */
	assert_int_equal(errno, EINVAL);
	perfdata__free(NULL);
	assert_int_equal(perfdata__nr_samples(NULL), 0);
}

/*
 * --off-cpu: two events, as perf record --off-cpu writes them: each attr
 * with its id in an ids section, PERF_SAMPLE_IDENTIFIER first in every
 * sample and last in every sample_id_all trailer, the off-CPU sample's
 * period the block's ns, and both events named in EVENT_DESC.
 */
static void test_offcpu_event(void **state)
{
	static const uint64_t u[] = { EXE_START + 0x1100, EXE_START + 0x1200 };
	static const uint64_t ku[] = { 0xffffffff81001010ULL, 0xffffffff81001020ULL,
				       EXE_START + 0x1300 };
	struct fixture *f = *state;
	struct perfdata_opts o = opts();
	struct perfdata_writer *w;
	struct profile_sample s, r;
	struct perf_event_attr a[2];
	uint64_t attr_off, attr_sz, data_off, data_sz, off, end, id[2], desc_off, desc_sz;
	int fd = open(f->out, O_RDWR | O_CREAT | O_TRUNC, 0600), i, nr_cpu = 0, nr_off = 0,
	    nr_comm = 0;
	const char *name;

	assert_true(fd >= 0);
	o.offcpu = true;
	w = perfdata__new(fd, &o, f->p);
	assert_non_null(w);
	assert_int_equal(perfdata__maps(w, f->p, f->proc, T0), 0);
	s = sample(PID, T0, "work", u, 0, 2);
	assert_int_equal(perfdata__sample(w, &s), 0);
	r = sample(PID, T0 + 1000, "work", ku, 2, 1);
	r.off_ns = 4000123;
	assert_int_equal(perfdata__offcpu(w, &r), 0);
	assert_int_equal(perfdata__nr_samples(w), 1);
	assert_int_equal(perfdata__nr_offcpu(w), 1);
	assert_int_equal(perfdata__finish(w, f->p), 0);
	perfdata__free(w);
	close(fd);
	read_back(f);

	attr_off = u64_at(f, 24);
	attr_sz = u64_at(f, 32);
	data_off = u64_at(f, 40);
	data_sz = u64_at(f, 48);
	assert_int_equal(u64_at(f, 16), sizeof(struct perf_event_attr) + 16);
	assert_int_equal(attr_sz, 2 * (sizeof(struct perf_event_attr) + 16));
	for (i = 0; i < 2; i++) {
		uint64_t at = attr_off + (uint64_t)i * (sizeof(struct perf_event_attr) + 16);

		memcpy(&a[i], f->file + at, sizeof(a[i]));
		assert_int_equal(u64_at(f, at + sizeof(a[i]) + 8), 8); /* one id */
		id[i] = u64_at(f, u64_at(f, at + sizeof(a[i])));
		assert_int_equal(a[i].sample_type, PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |
							   PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
							   PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
							   PERF_SAMPLE_CALLCHAIN);
		assert_int_equal(a[i].sample_id_all, 1);
		assert_int_equal(a[i].use_clockid, 1);
	}
	assert_true(id[0] != id[1]);
	assert_int_equal(a[0].config, PERF_COUNT_SW_CPU_CLOCK);
	assert_int_equal(a[0].mmap, 1);
	assert_int_equal(a[1].type, PERF_TYPE_SOFTWARE);
	assert_int_equal(a[1].config, PERF_COUNT_SW_BPF_OUTPUT);
	assert_int_equal(a[1].sample_period, 1);
	assert_int_equal(a[1].freq, 0);
	assert_int_equal(a[1].mmap + a[1].comm + a[1].mmap2, 0);

	end = data_off + data_sz;
	for (off = data_off; off < end;) {
		struct perf_event_header eh;
		uint64_t rec = off + sizeof(eh);

		memcpy(&eh, f->file + off, sizeof(eh));
		assert_true(eh.size >= sizeof(eh) && off + eh.size <= end);
		if (eh.type == PERF_RECORD_SAMPLE) {
			uint64_t sid = u64_at(f, rec), nr;

			assert_true(sid == id[0] || sid == id[1]);
			nr = u64_at(f, rec + 48);
			assert_int_equal(eh.size, 8 + 56 + nr * 8);
			if (sid == id[1]) {
				nr_off++;
				assert_int_equal(u64_at(f, rec + 8),
						 ku[0]); /* ip: the kernel leaf */
				assert_int_equal(u64_at(f, rec + 24), T0 + 1000);
				assert_int_equal(u64_at(f, rec + 40),
						 4000123); /* period: the block's ns */
				assert_int_equal(
					nr, 2 + 1 + 1 + 1); /* context, 2 kernel, context, 1 user */
				assert_int_equal(u64_at(f, rec + 56), PERF_CONTEXT_KERNEL);
			} else {
				nr_cpu++;
				assert_int_equal(u64_at(f, rec + 40), PERIOD);
			}
		} else if (eh.type == PERF_RECORD_COMM || eh.type == PERF_RECORD_MMAP2 ||
			   eh.type == PERF_RECORD_MMAP) {
			/* the trailer's last word is the (first) event's id */
			assert_int_equal(u64_at(f, off + eh.size - 8), id[0]);
			nr_comm += eh.type == PERF_RECORD_COMM;
		}
		off += eh.size;
	}
	assert_int_equal(nr_cpu, 1);
	assert_int_equal(nr_off, 1);
	assert_true(nr_comm >= 1);

	/* EVENT_DESC: two events, cpu-clock and offcpu-time, each with its id */
	feature(f,
		&(struct hdr){
			.data_off = data_off,
			.data_sz = data_sz,
			.feat = { u64_at(f, 72), u64_at(f, 80), u64_at(f, 88), u64_at(f, 96) } },
		F_EVENT_DESC, &desc_off, &desc_sz);
	off = desc_off;
	assert_int_equal(u32_at(f, off), 2);
	assert_int_equal(u32_at(f, off + 4), sizeof(struct perf_event_attr));
	off += 8 + sizeof(struct perf_event_attr);
	assert_int_equal(u32_at(f, off), 1);
	off += 4;
	name = str_at(f, &off);
	assert_string_equal(name, "cpu-clock");
	assert_int_equal(u64_at(f, off), id[0]);
	off += 8 + sizeof(struct perf_event_attr);
	assert_int_equal(u32_at(f, off), 1);
	off += 4;
	name = str_at(f, &off);
	assert_string_equal(name, "offcpu-time");
	assert_int_equal(u64_at(f, off), id[1]);
	assert_true(off + 8 <= desc_off + desc_sz);
}

/*
 * The leader's new name after an exec is a COMM record with
 * PERF_RECORD_MISC_COMM_EXEC, as perf record writes it; a sample older
 * than the name last written (a stack copy walked after later samples),
 * under the old name, writes none: its COMM, stamped no later than the
 * flush bound, would rename every later sample in perf's time order.
 */
static void test_comm_exec_order(void **state)
{
	static const uint64_t u[] = { EXE_START + 0x1100 };
	struct fixture *f = *state;
	struct perfdata_opts o = opts();
	struct perfdata_writer *w;
	struct profile_sample s;
	uint64_t data_off, end, off;
	int fd = open(f->out, O_RDWR | O_CREAT | O_TRUNC, 0600), nr_exec = 0, nr_samples = 0;
	const char *names[4];

	assert_true(fd >= 0);
	w = perfdata__new(fd, &o, f->p);
	assert_non_null(w);
	assert_int_equal(perfdata__maps(w, f->p, f->proc, T0), 0); /* "work" */
	s = sample(PID, T0 + 2000, "app", u, 0, 1);
	assert_int_equal(perfdata__sample(w, &s), 0);
	s = sample(PID, T0 + 1000, "work", u, 0, 1); /* older than "app": no COMM */
	assert_int_equal(perfdata__sample(w, &s), 0);
	s = sample(PID, T0 + 3000, "app", u, 0, 1);
	assert_int_equal(perfdata__sample(w, &s), 0);
	s = sample(PID, T0 + 4000, "next", u, 0, 1); /* a later exec */
	assert_int_equal(perfdata__sample(w, &s), 0);
	assert_int_equal(perfdata__finish(w, f->p), 0);
	perfdata__free(w);
	close(fd);
	read_back(f);

	data_off = u64_at(f, 40);
	end = data_off + u64_at(f, 48);
	for (off = data_off; off < end;) {
		struct perf_event_header eh;

		memcpy(&eh, f->file + off, sizeof(eh));
		assert_true(eh.size >= sizeof(eh) && off + eh.size <= end);
		if (eh.type == PERF_RECORD_COMM && (eh.misc & PERF_RECORD_MISC_COMM_EXEC)) {
			assert_true(nr_exec < 4);
			names[nr_exec++] = (const char *)f->file + off + sizeof(eh) + 8;
		}
		nr_samples += eh.type == PERF_RECORD_SAMPLE;
		off += eh.size;
	}
	assert_int_equal(nr_samples, 4);
	assert_int_equal(nr_exec, 2);
	assert_string_equal(names[0], "app");
	assert_string_equal(names[1], "next");
}

/* An off-CPU sample without opts.offcpu has no event to go to. */
static void test_offcpu_needs_option(void **state)
{
	static const uint64_t u[] = { EXE_START + 0x1100 };
	struct fixture *f = *state;
	struct perfdata_opts o = opts();
	struct perfdata_writer *w;
	struct profile_sample r;
	int fd = open(f->out, O_RDWR | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	w = perfdata__new(fd, &o, f->p);
	assert_non_null(w);
	r = sample(PID, T0, "work", u, 0, 1);
	assert_int_equal(perfdata__offcpu(w, &r), -EINVAL);
	assert_int_equal(perfdata__nr_offcpu(w), 0);
	perfdata__free(w);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_records, setup, teardown),
		cmocka_unit_test_setup_teardown(test_features, setup, teardown),
		cmocka_unit_test_setup_teardown(test_model_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_same_path_two_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_streams, setup, teardown),
		cmocka_unit_test_setup_teardown(test_disk_full, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_args, setup, teardown),
		cmocka_unit_test_setup_teardown(test_comm_exec_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_offcpu_event, setup, teardown),
		cmocka_unit_test_setup_teardown(test_offcpu_needs_option, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

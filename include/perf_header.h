/* SPDX-License-Identifier: MIT */
/*
 * perf.data (PERFILE2) file header and feature sections, as perf's
 * tools/perf/util/header.[ch] write and read them (checked against perf 6.1
 * and "perf.data format", tools/perf/Documentation/perf.data-file-format.txt
 * in the Linux kernel tree, which is older and wrong about NRCPUS). The
 * data records themselves come from <linux/perf_event.h>.
 *
 *   0      struct perf_file_header (104 bytes)
 *   104    attrs: { struct perf_event_attr; struct perf_file_section ids; }[]
 *          data: the records
 *   data.offset + data.size
 *          feature table: { offset, size } per set bit of adds_features, ascending
 *          feature sections
 *
 * Strings in feature sections are { u32 len; char s[len]; } with len counting
 * the NUL and padded with NULs to a multiple of 64 (perf's NAME_ALIGN).
 * Everything is native-endian.
 */
#ifndef BPFPROF_PERF_HEADER_H
#define BPFPROF_PERF_HEADER_H

#include <stdint.h>
#include <linux/perf_event.h>
#include "buf.h"

/* Feature bits (tools/perf/util/header.h, enum starting at HEADER_RESERVED = 0). */
enum perf_header_feature {
	PERF_HEADER_TRACING_DATA = 1,
	PERF_HEADER_BUILD_ID = 2,
	PERF_HEADER_HOSTNAME = 3,
	PERF_HEADER_OSRELEASE = 4,
	PERF_HEADER_VERSION = 5,
	PERF_HEADER_ARCH = 6,
	PERF_HEADER_NRCPUS = 7,
	PERF_HEADER_CPUDESC = 8,
	PERF_HEADER_CPUID = 9,
	PERF_HEADER_TOTAL_MEM = 10,
	PERF_HEADER_CMDLINE = 11,
	PERF_HEADER_EVENT_DESC = 12,
	PERF_HEADER_CPU_TOPOLOGY = 13,
	PERF_HEADER_NUMA_TOPOLOGY = 14,
	PERF_HEADER_BRANCH_STACK = 15,
	PERF_HEADER_PMU_MAPPINGS = 16,
	PERF_HEADER_GROUP_DESC = 17,
	PERF_HEADER_AUXTRACE = 18,
	PERF_HEADER_STAT = 19,
	PERF_HEADER_CACHE = 20,
	PERF_HEADER_SAMPLE_TIME = 21, /* u64 first, u64 last sample time */
	PERF_HEADER_MEM_TOPOLOGY = 22,
	PERF_HEADER_CLOCKID = 23, /* u64 resolution of the clock, ns */
	PERF_HEADER_DIR_FORMAT = 24,
	PERF_HEADER_BPF_PROG_INFO = 25,
	PERF_HEADER_BPF_BTF = 26,
	PERF_HEADER_COMPRESSED = 27,
	PERF_HEADER_CPU_PMU_CAPS = 28,
	PERF_HEADER_CLOCK_DATA = 29, /* u32 version 1, u32 clockid, u64 TOD ns, u64 clockid ns */
	PERF_HEADER_FEAT_BITS = 256,
};

#define PERF_MAGIC2 "PERFILE2"
#define PERF_NAME_ALIGN 64
/* header.misc of a build-id entry: byte 20 of build_id holds the id's length */
#define PERF_MISC_BUILD_ID_SIZE (1 << 15)
/* user record types (tools/lib/perf/include/perf/event.h) */
#define PERF_USER_RECORD_FINISHED_ROUND 68 /* no payload, no sample_id */

struct perf_file_section {
	uint64_t offset; /* from the start of the file */
	uint64_t size; /* bytes */
};

struct perf_file_header {
	char magic[8]; /* "PERFILE2" */
	uint64_t size; /* sizeof(struct perf_file_header) */
	uint64_t attr_size; /* one attrs entry: sizeof(perf_event_attr) + sizeof(perf_file_section) */
	struct perf_file_section attrs;
	struct perf_file_section data;
	struct perf_file_section event_types; /* unused, zero */
	uint64_t adds_features[PERF_HEADER_FEAT_BITS / 64];
};

_Static_assert(sizeof(struct perf_file_header) == 104, "perf_file_header layout");

/* One BUILD_ID feature entry; the NUL-padded file name follows, header.size covers all. */
struct perf_build_id_entry {
	struct perf_event_header header; /* type 0, misc KERNEL or USER | PERF_MISC_BUILD_ID_SIZE */
	int32_t pid; /* -1: the host machine */
	uint8_t build_id[24]; /* id, zero-padded; [20] = its length */
};

_Static_assert(sizeof(struct perf_build_id_entry) == 36, "build_id_event layout");

/* perf_header_string: u32 length (with NUL, padded to 64), then the NUL-padded string. */
void perf_header__put_string(struct buf *b, const char *s);

/*
 * Host description sections, each appended to b exactly as perf record
 * writes it on this machine. Return 0, or a negative errno when the
 * information is not available here (the caller then leaves the feature
 * out, as perf does).
 */
int perf_header__hostname(struct buf *b); /* uname -n */
int perf_header__osrelease(struct buf *b); /* uname -r */
int perf_header__arch(struct buf *b); /* uname -m */
/* u32 nr_cpus_avail (highest present CPU + 1), u32 nr_cpus_online */
int perf_header__nrcpus(struct buf *b);
/* /proc/cpuinfo "model name" (other key on some arches), white space squashed */
int perf_header__cpudesc(struct buf *b);
/* x86: "vendor,family,model,stepping" from CPUID as perf computes it; -ENOTSUP elsewhere */
int perf_header__cpuid(struct buf *b);
/* u64 MemTotal from /proc/meminfo, kB */
int perf_header__total_mem(struct buf *b);
/* u32 argc, then the executable's path (/proc/self/exe) and argv[1..argc) as strings */
int perf_header__cmdline(struct buf *b, int argc, char **argv);

#endif /* BPFPROF_PERF_HEADER_H */

/* SPDX-License-Identifier: MIT */
/*
 * HotSpot JVMs behind the interpreter interface (interp.h, INTERP_HOTSPOT;
 * user/capture/interp_hotspot.c): any process that maps libjvm.so has its
 * exported gHotSpotVM* symbols looked up in the file (.dynsym, inside the
 * process's root), its vmStructs tables read from /proc/PID/mem
 * (hotspot_vmstructs.h), and what they say kept for the unwinder and the
 * namer to come. A JVM whose tables cannot be read or lack what is needed
 * is named in one warning and profiled natively, as before. Today no Java
 * frame is merged (the BPF walk through JIT and interpreter frames is the
 * next step, docs/INTERPRETERS.md): find runs for real, merge and attach do
 * nothing.
 */
#ifndef BPFPROF_INTERP_HOTSPOT_H
#define BPFPROF_INTERP_HOTSPOT_H

#include <stdint.h>
#include "hotspot_vmstructs.h"

#define HOTSPOT_STATS_JVMS 8 /* JVMs described one by one in the summary */
#define HOTSPOT_STATS_HEAPS 4 /* code heaps of each */

/* One JVM found, for the summary */
struct hotspot_jvm_stat {
	uint32_t pid;
	char comm[16];
	int err; /* 0: its tables read; else -errno and why */
	const char *why; /* static */
	char release[HS_RELEASE_MAX]; /* Abstract_VM_Version::_s_vm_release */
	uint32_t nr_structs, nr_fields, nr_types, nr_sizes, nr_ints, nr_longs, nr_consts;
	uint64_t code_low, code_high; /* the code cache's reservation, 0 before it was set up */
	uint32_t nr_heaps; /* its CodeHeaps read (0: not set up yet) */
	uint64_t heap_low[HOTSPOT_STATS_HEAPS], heap_high[HOTSPOT_STATS_HEAPS];
};

/* Counters through interps__stats(INTERP_HOTSPOT) */
struct hotspot_stats {
	uint64_t nr_jvms; /* JVMs whose tables were read */
	uint64_t nr_unsupported; /* processes mapping libjvm.so left native: the reason in jvm[] */
	uint64_t table_reads; /* attempts at reading a JVM's tables (a starting JVM is retried) */
	uint64_t read_ns; /* time spent in them */
	uint64_t attached; /* JVMs whose layout the BPF walk was given */
	uint32_t nr_listed; /* jvm[] filled, the first HOTSPOT_STATS_JVMS processes */
	struct hotspot_jvm_stat jvm[HOTSPOT_STATS_JVMS];
};

#endif /* BPFPROF_INTERP_HOTSPOT_H */

/* SPDX-License-Identifier: MIT */
/*
 * HotSpot JVMs behind the interpreter interface (interp.h, INTERP_HOTSPOT;
 * user/capture/interp_hotspot.c): any process that maps libjvm.so has its
 * exported gHotSpotVM* symbols looked up in the file (.dynsym, inside the
 * process's root), its vmStructs tables read from /proc/PID/mem
 * (hotspot_vmstructs.h), and what they say kept for the unwinder and the
 * namer. A JVM whose tables cannot be read or lack what is needed is
 * named in one warning and profiled natively, as before. attach hands the
 * BPF walk (bpf/hotspot.bpf.h) its layout; merge names the Java frames it
 * recorded (hotspot_names.h: methods, lines, inlined scopes) as functions
 * of the process's interpreter-frame region (profile__add_pyfunc), in the
 * native stack where their pcs were.
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
	/* its samples: with Java frames, and why the others had none */
	uint64_t samples, with_java;
	uint64_t no_java; /* the walk met no code-cache frame: a native thread (GC, compiler), or
			     a Java thread in native code whose walk stopped before its Java part */
	uint64_t not_walked; /* before the BPF walk had its layout (or sent as a stack copy) */
	/* with Java frames, whose Java part ended before native code: BPFPROF_STAT_HS_* - 43 */
	uint64_t java_stop[5]; /* no blob, read fault, bad frame, frame limit, no return address */
	uint64_t frames; /* Java frames merged (inlined ones included) */
};

/* Counters through interps__stats(INTERP_HOTSPOT) */
struct hotspot_stats {
	uint64_t nr_jvms; /* JVMs whose tables were read */
	uint64_t nr_unsupported; /* processes mapping libjvm.so left native: the reason in jvm[] */
	uint64_t table_reads; /* attempts at reading a JVM's tables (a starting JVM is retried) */
	uint64_t read_ns; /* time spent in them */
	uint64_t attached; /* JVMs whose layout the BPF walk was given */
	uint64_t methods_read, methods_failed; /* Method*s read from a JVM's memory, of them not usable */
	uint64_t scopes_read, scopes_failed; /* compiled pcs whose inlined scopes were read */
	uint64_t frame_hits, frame_misses; /* recorded frames found named already, or named now */
	uint64_t stale; /* recorded frames whose method or nmethod changed since (reuse) */
	uint64_t name_ns; /* time spent reading names */
	uint32_t nr_listed; /* jvm[] filled, the first HOTSPOT_STATS_JVMS processes */
	struct hotspot_jvm_stat jvm[HOTSPOT_STATS_JVMS];
};

#endif /* BPFPROF_INTERP_HOTSPOT_H */

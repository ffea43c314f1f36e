/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The bench builds' replacements of the BPF program's bench hooks
 * (bpf/state.bpf.h), included there with -DBPFPROF_BENCH -Ibench by the
 * Makefile's bench-floor-bin and bench-offcpu-agg-bin, never by the
 * production build:
 *
 *  BPFPROF_BENCH_EMPTY_PROGRAM  bench/floor.sh: on_sample returns at once,
 *                               what the perf events and the program's call
 *                               cost alone
 *  BPFPROF_BENCH_OFFCPU_AGG     bench/offcpu.sh: off-CPU blocks are
 *                               aggregated in BPF instead of sent
 *  BPFPROF_BENCH_PRIMITIVES     on_sample does only what any sample's
 *                               record needs, then returns: the header's
 *                               helpers (cpu, time, comm; the cgroup
 *                               only for a process's first records
 *                               since 2026-11-29 part 6: none here), one
 *                               read of the user stack from sp to its
 *                               page's end, and a 400-byte record sent as
 *                               the product sends a sample's: into the
 *                               CPU's ring (bpf/cpu_ring.bpf.h), every
 *                               store but the new head's (the reader sees
 *                               none; until 2026-11-29 part 5, a record
 *                               reserved and discarded in the shared ring
 *                               buffer). A floor under issue 34's
 *                               per-sample goals on the host it runs on
 *                               (bench/bpf-cost.sh)
 *
 * The walk's cost by parts (docs/BENCHMARKS.md, issue 34): each takes one
 * part of a sample's work away, and bench/bpf-cost.sh compares the builds.
 *
 *  BPFPROF_BENCH_NO_USER_WALK   no user-stack walk: the leaf only
 *  BPFPROF_BENCH_NO_ROW_SEARCH  the mapping lookup, but no row search: every
 *                               frame a frame-pointer step
 *  BPFPROF_BENCH_WALK_TIME      the native walk's time (bpf_ktime_get_ns
 *                               around it, modern variants) and its frames,
 *                               summed per CPU in bench_walk: apart from
 *                               the kernel stack's and the record's costs,
 *                               which vary with what else the host runs
 *  BPFPROF_BENCH_V8_FRAME_SKIP  the V8 hook returns after its state's
 *                               look-up at every step but the first: the
 *                               hook's call alone (bench/node.sh's figure)
 *  BPFPROF_BENCH_PARTS          on_sample's time by parts: bench_part(k)
 *                               stamps the end of part k (bpf_ktime_get_ns),
 *                               summed per CPU in bench_parts (ns[k] the
 *                               time from the stamp before, n[k] how many;
 *                               the parts' numbers are in profile.bpf.c,
 *                               record.bpf.h, walk.bpf.h); with
 *                               BPFPROF_BENCH_HOOK_TIME, 14 and 15 the time
 *                               inside the V8 hooks (bench_hook_time)
 *
 * These are built by hand in an OUTPUT of their own, e.g.
 *   make OUTPUT=.output-parts BIN=.output-parts/bpfprof \
 *        BPF_CFLAGS="-DBPFPROF_BENCH -Ibench -DBPFPROF_BENCH_PARTS" .output-parts/bpfprof
 * and their maps read with bpftool while they run (map ids from the
 * process's /proc/PID/fdinfo).
 */
#ifndef BPFPROF_BENCH_BPF_H
#define BPFPROF_BENCH_BPF_H

#ifdef BPFPROF_BENCH_EMPTY_PROGRAM
#define bench_sample_skip(ctx) true
#endif

#ifdef BPFPROF_BENCH_PRIMITIVES
#include "../bpf/cpu_ring.bpf.h"
#define BENCH_RECORD_BYTES 400
struct bench_page {
	__u8 b[4096];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bench_page);
} bench_page SEC(".maps");

/* The primitives' floor (above); true: the sample ends here */
static __always_inline bool bench_primitives(struct bpf_perf_event_data *ctx)
{
	__u32 zero = 0;
	struct bpfprof_sample *e = bpf_map_lookup_elem(&scratch, &zero);
	struct bench_page *page = bpf_map_lookup_elem(&bench_page, &zero);
	__u64 sp = PT_REGS_SP(&ctx->regs);
	struct bpfprof_cpu_ring *ring;

	if (!e || !page)
		return true;
	e->cpu = bpf_get_smp_processor_id();
	e->time_ns = bpf_ktime_get_ns();
#if BPFPROF_LEGACY
	bpf_get_current_comm(e->comm, sizeof(e->comm));
#else
	{
		/* as the sample's header reads them (record.bpf.h): the name by loads */
		struct task_struct *t = bpf_get_current_task_btf();

		__builtin_memcpy(e->comm, t->comm, sizeof(e->comm));
	}
#endif
	/* a sample in user mode: its sp is the user stack's (kernel ones are skipped) */
	if (sp && !(sp >> 47))
		bpf_probe_read_user(page->b, 4096 - (sp & 4095), (void *)sp);
	/* the record as a sample's goes (record.bpf.h sample_record_send), not published */
	ring = cpu_ring_of(e->cpu);
	if (ring)
		cpu_ring_put(ring, e, BENCH_RECORD_BYTES, false);
	return true;
}
#define bench_sample_skip(ctx) bench_primitives(ctx)
#endif

#ifdef BPFPROF_BENCH_NO_USER_WALK
#define bench_walk_skip() true
#endif

#ifdef BPFPROF_BENCH_V8_FRAME_SKIP
#define bench_v8_frame_skip() true
#endif

#ifdef BPFPROF_BENCH_NO_ROW_SEARCH
#define bench_row_search_skip() true
#endif

#ifdef BPFPROF_BENCH_WALK_TIME
struct bench_walk_val {
	__u64 t0; /* the running walk's start */
	__u64 ns, walks, frames; /* walks with at least one frame stepped */
	__u64 r0, read_ns, reads; /* the user-stack reads among them (stack_read) */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bench_walk_val);
} bench_walk SEC(".maps");

static __always_inline void bench_walk_time_begin(void)
{
	__u32 zero = 0;
	struct bench_walk_val *v = bpf_map_lookup_elem(&bench_walk, &zero);

	if (v)
		v->t0 = bpf_ktime_get_ns();
}

static __always_inline void bench_walk_time_end(__u64 frames)
{
	__u32 zero = 0;
	struct bench_walk_val *v = bpf_map_lookup_elem(&bench_walk, &zero);

	if (v && frames > 1) {
		v->ns += bpf_ktime_get_ns() - v->t0;
		v->walks++;
		v->frames += frames;
	}
}
static __always_inline void bench_read_time(bool end)
{
	__u32 zero = 0;
	struct bench_walk_val *v = bpf_map_lookup_elem(&bench_walk, &zero);

	if (!v)
		return;
	if (!end) {
		v->r0 = bpf_ktime_get_ns();
		return;
	}
	v->read_ns += bpf_ktime_get_ns() - v->r0;
	v->reads++;
}
#define bench_read_time(end) bench_read_time(end)
#define bench_walk_time_begin() bench_walk_time_begin()
#define bench_walk_time_end(frames) bench_walk_time_end(frames)
#endif

#ifdef BPFPROF_BENCH_PARTS
#define BENCH_PARTS 16
struct bench_parts_val {
	__u64 t; /* the last stamp */
	__u64 ns[BENCH_PARTS];
	__u64 n[BENCH_PARTS];
	__u64 h; /* the running hook's start (bench_hook_time) */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bench_parts_val);
} bench_parts SEC(".maps");

/* Part k ends (k 0: the program's start, only stamped) */
static __always_inline void bench_part(__u32 k)
{
	__u32 zero = 0;
	struct bench_parts_val *v = bpf_map_lookup_elem(&bench_parts, &zero);
	__u64 now = bpf_ktime_get_ns();

	if (!v)
		return;
	if (k && k < BENCH_PARTS) {
		v->ns[k] += now - v->t;
		v->n[k]++;
	}
	v->t = now;
}
#define bench_part(k) bench_part(k)

#ifdef BPFPROF_BENCH_HOOK_TIME
/*
 * The time inside an interpreter's hook (the V8 frame hook: 14; its end:
 * 15), in bench_parts beside the parts; the stamp before it is kept, so
 * the part around it is not cut (two stamps a call: the part that holds
 * the hook grows by them)
 */
static __always_inline void bench_hook_time(__u32 k, bool end)
{
	__u32 zero = 0;
	struct bench_parts_val *v = bpf_map_lookup_elem(&bench_parts, &zero);
	__u64 now = bpf_ktime_get_ns();

	if (!v || k >= BENCH_PARTS)
		return;
	if (!end) {
		v->h = now;
		return;
	}
	v->ns[k] += now - v->h;
	v->n[k]++;
}
#define bench_hook_time(k, end) bench_hook_time(k, end)
#endif
#endif

#ifdef BPFPROF_BENCH_OFFCPU_AGG
/*
 * bench/offcpu.sh's measure of the other transport, aggregation in BPF: a
 * hash of the callchain (bpf_loop over its frames) and a per-stack
 * {ns, blocks} update in a hash map, in place of the ring buffer. Only its
 * cost is of interest: user space reads nothing from it.
 */
struct offcpu_agg_val {
	__u64 ns, blocks;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64); /* tgid, callchain hash */
	__type(value, struct offcpu_agg_val);
} offcpu_agg SEC(".maps");

struct offcpu_hash {
	struct bpfprof_offcpu *r;
	__u64 h;
	__u64 n;
};

step_fn offcpu_hash_step(__u32 i, void *data)
{
	struct offcpu_hash *c = data;

	if (i >= c->n || i >= MAX_IPS)
		return 1;
	c->h = (c->h ^ c->r->s.ips[i]) * 0x100000001b3ULL;
	return 0;
}

/* In place of sending r: its stack's {ns, blocks} in offcpu_agg. Returns true (r was dealt with). */
static __always_inline bool bench_offcpu_agg(struct bpfprof_offcpu *r)
{
	struct offcpu_hash c = { .r = r,
				 .h = 0xcbf29ce484222325ULL ^ r->s.tgid,
				 .n = (__u64)r->s.nr_kernel + r->s.nr_user };
	struct offcpu_agg_val *v, one = { .ns = r->off_ns, .blocks = 1 };

	for_each_step(MAX_IPS, offcpu_hash_step, &c);
	v = bpf_map_lookup_elem(&offcpu_agg, &c.h);
	if (v) {
		__sync_fetch_and_add(&v->ns, r->off_ns);
		__sync_fetch_and_add(&v->blocks, 1);
	} else if (bpf_map_update_elem(&offcpu_agg, &c.h, &one, BPF_NOEXIST)) {
		stat_inc(BPFPROF_STAT_OFFCPU_DROPPED);
		return true;
	}
	stat_inc(BPFPROF_STAT_OFFCPU);
	return true;
}
#define bench_offcpu_send(r) bench_offcpu_agg(r)
#endif

#endif /* BPFPROF_BENCH_BPF_H */

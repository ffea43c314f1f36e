// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Stack sampler: runs on every cpu-clock (or hardware) perf event overflow,
 * keeps the samples of the targeted tasks, and sends pid, tid, cpu, time,
 * comm, cgroup and both stacks to userspace through a ring buffer. Records are
 * built in a per-CPU scratch slot and copied with bpf_ringbuf_output() so that
 * only the used part of the 2 KiB stack area travels. Lost records are counted
 * per CPU in `stats`. Layouts come from include/bpfprof_abi.h.
 *
 * The user stack is walked here, by frame pointers, rather than with
 * bpf_get_stack(BPF_F_USER_STACK): the kernel's walker (perf_callchain_user
 * in arch/x86/events/core.c) reads each frame with two __get_user calls, and
 * every user access has a fixed cost (SMAP's stac/clac, which a virtual
 * machine may trap) that made it 6 us of the 7.4 us a run took. This walk
 * copies the stack a page at a time (one bpf_probe_read_user per page the
 * frame chain touches, usually one or two) and follows the chain in the copy.
 * It stores what the kernel's walker stores (the interrupted user IP, then
 * each frame's return address) and stops where it stops (a frame that cannot
 * be read), and also at the second time the chain goes down or sideways
 * instead of towards the stack's base. One such jump is a stack switch that
 * perf follows too (a signal handler on its sigaltstack, Go's systemstack
 * from g0 to the goroutine's stack); past a function built without frame
 * pointers the saved "frame pointer" is garbage, which the kernel follows for
 * up to 127 frames of made-up callers, and random values go down about half
 * of the time.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "bpfprof_abi.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

const volatile __u32 filter_mode = BPFPROF_FILTER_ALL;
const volatile bool filter_cgroup = false;
const volatile bool follow_forks = false;
/*
 * Command mode: the forked command becomes a target when it execs, as perf's
 * enable_on_exec does, so the profiler's own child before exec is not sampled.
 */
volatile __u32 exec_target = 0;
/* --check-user-stacks: compare each user stack walked here with the kernel's walk */
const volatile bool check_user_stack = false;
/* Wake the consumer only once this many bytes are queued; it also polls on a timer. */
const volatile __u64 wakeup_bytes = 64 * 1024;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 * 1024 * 1024); /* resized from --ringbuf-size before load */
} samples SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BPFPROF_MAX_TARGETS);
	__type(key, __u32);	/* tgid */
	__type(value, __u8);
} targets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BPFPROF_MAX_CGROUPS);
	__type(key, __u64);	/* cgroup v2 id */
	__type(value, __u8);
} cgroups SEC(".maps");

/*
 * Processes that have had a sample, and how many (up to WAKE_FIRST_SAMPLES)
 * since their exec: those first samples each wake the reader at once, so
 * that its maps are read while it still lives (a 60 ms process would be gone
 * by the next batch), and read again once the dynamic loader has mapped its
 * libraries. LRU: old entries just go.
 */
#define WAKE_FIRST_SAMPLES 4
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);	/* tgid */
	__type(value, __u8);	/* samples seen, counted up to WAKE_FIRST_SAMPLES */
} seen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, BPFPROF_STAT_NR);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bpfprof_sample);
} scratch SEC(".maps");

/* --check-user-stacks: the kernel's walk of the same user stack */
struct ustack_check {
	__u64 ips[BPFPROF_MAX_STACK];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ustack_check);
} ucheck SEC(".maps");

/* A copy of part of the user stack (at most a page), which the walk reads frames from. */
#define USTACK_CHUNK 4096
struct ustack_chunk {
	__u64 data[USTACK_CHUNK / 8 + 1];	/* + 1: the verifier's bound on data[off + 1] */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ustack_chunk);
} ustack SEC(".maps");

static __always_inline void stat_inc(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &idx);

	if (v)
		*v += 1;
}

/* The task's cgroup or one of its ancestors is in `cgroups` (--cgroup covers its subtree). */
static __always_inline bool in_cgroups(void)
{
	__u64 cg = bpf_get_current_cgroup_id();
	int level;

	if (bpf_map_lookup_elem(&cgroups, &cg))
		return true;
	for (level = 0; level < BPFPROF_MAX_CGROUP_DEPTH; level++) {
		cg = bpf_get_current_ancestor_cgroup_id(level);
		if (!cg)
			break; /* above the task's own level */
		if (bpf_map_lookup_elem(&cgroups, &cg))
			return true;
	}
	return false;
}

/* x86-64 and arm64: kernel addresses have the top bit set, user addresses never */
static __always_inline bool kernel_addr(__u64 ip)
{
	return ip >> 63;
}

/*
 * The walk's state between bpf_loop steps: scalars only (the maps are looked
 * up in each step), and no counter carried from step to step, since the
 * verifier follows each different value of one through every step; step i
 * stores the (i + 2)th user address, at e->ips[nk + 1 + i].
 */
struct walk {
	__u64 fp;	/* frame to read next */
	__u64 base;	/* user address of the chunk's first byte */
	__u64 len;	/* bytes of the chunk that hold a copy; 0: none yet */
	__u64 nk;	/* kernel addresses before the user ones */
	__u64 end;	/* e->ips[nk..end) hold the user addresses */
	__u64 jumped;	/* the chain went down or sideways once */
};

/*
 * One frame: { saved fp, return address } at fp; the caller's frame is at
 * the saved fp, higher up the stack. Returns 1 to stop the walk.
 */
static long walk_step(__u32 i, void *data)
{
	struct walk *w = data;
	struct bpfprof_sample *e;
	struct ustack_chunk *c;
	__u64 fp = w->fp, off, next, ret, idx;
	__u32 zero = 0;

	e = bpf_map_lookup_elem(&scratch, &zero);
	c = bpf_map_lookup_elem(&ustack, &zero);
	if (!e || !c || !fp || (fp & 7) || kernel_addr(fp))
		return 1;
	off = fp - w->base;
	if (!w->len || fp < w->base || off + 16 > w->len) {
		/* copy from this frame to the end of its page: never a page the chain has not reached */
		__u64 len = USTACK_CHUNK - (fp & (USTACK_CHUNK - 1));

		if (len < 16)
			len = 16; /* a frame straddling two pages: both must be readable */
		if (bpf_probe_read_user(c->data, len & (2 * USTACK_CHUNK - 1), (const void *)fp))
			return 1;
		w->base = fp;
		w->len = len;
		off = 0;
	}
	/* off + 16 <= len <= USTACK_CHUNK from here; the mask says so to the verifier */
	off = (off / 8) & (USTACK_CHUNK / 8 - 1);
	next = c->data[off];
	ret = c->data[off + 1];
	if (!ret || kernel_addr(ret))
		return 1;
	idx = w->nk + 1 + i;
	if (idx >= 2 * BPFPROF_MAX_STACK)
		return 1;
	e->ips[idx] = ret;
	w->end = idx + 1;
	if (next == fp || (next < fp && w->jumped))
		return 1; /* a loop, or a second jump away from the base: garbage */
	if (next < fp)
		w->jumped = 1;
	w->fp = next;
	return 0;
}

/* Walk the user stack from (ip, fp) into e->ips[nk...]. Returns the number of addresses stored. */
static __always_inline __u64 walk_user(struct bpfprof_sample *e, __u64 nk, __u64 ip, __u64 fp)
{
	struct walk w = { .fp = fp, .nk = nk, .end = nk + 1 };

	if (!ip || kernel_addr(ip) || nk >= 2 * BPFPROF_MAX_STACK)
		return 0;
	e->ips[nk] = ip;
	bpf_loop(BPFPROF_MAX_STACK - 1, walk_step, &w, 0);
	return w.end - nk;
}

/*
 * The user registers at the sample: the interrupted ones for a sample taken
 * in user mode, else those saved at kernel entry (none for kernel threads,
 * whose tasks have no mm).
 */
static __always_inline __u64 user_stack(struct bpf_perf_event_data *ctx, struct bpfprof_sample *e, __u64 nk)
{
	__u64 ip = PT_REGS_IP(&ctx->regs), fp = PT_REGS_FP(&ctx->regs);

	if (nk || kernel_addr(ip)) {
		struct task_struct *task = bpf_get_current_task_btf();
		struct pt_regs *regs;

		if (!task->mm)
			return 0;
		regs = (struct pt_regs *)bpf_task_pt_regs(task);
		if (!regs)
			return 0;
		ip = PT_REGS_IP_CORE(regs);
		fp = PT_REGS_FP_CORE(regs);
	}
	return walk_user(e, nk, ip, fp);
}

/* Whether the current task's samples are kept: a target tgid, in a --cgroup subtree. */
static __always_inline bool wanted(__u32 tgid)
{
	if (filter_mode == BPFPROF_FILTER_TGID && !bpf_map_lookup_elem(&targets, &tgid))
		return false;
	return !filter_cgroup || in_cgroups();
}

/* One frame of the comparison: ours (e->ips[nk + i]) against the kernel's (c->ips[i]). */
struct cmp {
	__u64 nk, nu;
	bool differ;
};

static long cmp_step(__u32 i, void *data)
{
	struct cmp *m = data;
	struct bpfprof_sample *e;
	struct ustack_check *c;
	__u32 zero = 0;
	__u64 idx = m->nk + i;

	e = bpf_map_lookup_elem(&scratch, &zero);
	c = bpf_map_lookup_elem(&ucheck, &zero);
	if (!e || !c || i >= m->nu || i >= BPFPROF_MAX_STACK || idx >= 2 * BPFPROF_MAX_STACK)
		return 1;
	if (e->ips[idx] != c->ips[i]) {
		m->differ = true;
		return 1;
	}
	return 0;
}

/*
 * --check-user-stacks: the walk above is right where its addresses are the
 * kernel's (perf_callchain_user), or their first part: the kernel goes on
 * through garbage frames where this walk stops (see the header comment).
 */
static __always_inline void check_user_walk(struct bpf_perf_event_data *ctx, __u64 nk, __u64 nu)
{
	struct ustack_check *c;
	struct cmp m = { .nk = nk, .nu = nu };
	__u32 zero = 0;
	long ret;

	c = bpf_map_lookup_elem(&ucheck, &zero);
	if (!c)
		return;
	ret = bpf_get_stack(ctx, c->ips, sizeof(c->ips), BPF_F_USER_STACK);
	if (ret < 0 || (__u64)ret / 8 < nu) {
		stat_inc(BPFPROF_STAT_USTACK_DIFF);
		return;
	}
	bpf_loop(BPFPROF_MAX_STACK, cmp_step, &m, 0);
	if (m.differ)
		stat_inc(BPFPROF_STAT_USTACK_DIFF);
	else
		stat_inc((__u64)ret / 8 == nu ? BPFPROF_STAT_USTACK_SAME : BPFPROF_STAT_USTACK_SHORTER);
}

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct bpfprof_sample *e;
	__u32 zero = 0;
	long kret;
	__u64 nk, nu, size, flags;
	__u8 *nr_seen;

	if (tid == 0)	/* the idle task: nothing to attribute */
		return 0;
#ifdef BPFPROF_BENCH_EMPTY_PROGRAM
	return 0;	/* bench/floor.sh: what the perf events and the program's call cost alone */
#endif
	if (!wanted(tgid)) {
		stat_inc(BPFPROF_STAT_FILTERED);
		return 0;
	}

	e = bpf_map_lookup_elem(&scratch, &zero);
	if (!e)
		return 0;
	e->type = BPFPROF_REC_SAMPLE;
	e->cpu = bpf_get_smp_processor_id();
	e->tgid = tgid;
	e->tid = tid;
	e->time_ns = bpf_ktime_get_ns();
	e->cgroup_id = bpf_get_current_cgroup_id();
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	e->pad = 0;

	kret = bpf_get_stack(ctx, e->ips, BPFPROF_MAX_STACK * 8, 0);
	nk = kret > 0 ? (__u64)kret / 8 : 0;
	if (nk > BPFPROF_MAX_STACK)
		nk = BPFPROF_MAX_STACK;
	nu = user_stack(ctx, e, nk);
	if (nu > BPFPROF_MAX_STACK)
		nu = BPFPROF_MAX_STACK;
	if (check_user_stack)
		check_user_walk(ctx, nk, nu);
	e->nr_kernel = nk;
	e->nr_user = nu;

	size = BPFPROF_SAMPLE_HDR_SIZE + (nk + nu) * 8;
	if (size > sizeof(*e))
		size = sizeof(*e);
	flags = bpf_ringbuf_query(&samples, BPF_RB_AVAIL_DATA) >= wakeup_bytes ?
			BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
	nr_seen = bpf_map_lookup_elem(&seen, &tgid);
	if (!nr_seen) {
		__u8 one = 1;

		bpf_map_update_elem(&seen, &tgid, &one, BPF_ANY);
		flags = BPF_RB_FORCE_WAKEUP;
	} else if (*nr_seen < WAKE_FIRST_SAMPLES) {
		*nr_seen += 1;
		flags = BPF_RB_FORCE_WAKEUP;
	}
	if (bpf_ringbuf_output(&samples, e, size, flags)) {
		stat_inc(BPFPROF_STAT_DROPPED);
		return 0;
	}
	stat_inc(BPFPROF_STAT_SAMPLES);
	return 0;
}

/*
 * An exec: the process's next sample wakes the reader again (it is "new"
 * once more), so that the new program's maps and name are read while it
 * still runs; a 60 ms command forked by a shell and first sampled before its
 * exec would otherwise be gone by the next batch. Command mode: the command
 * becomes a target at its exec.
 */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	__u8 one = 1;

	bpf_map_delete_elem(&seen, &tgid);
	if (!exec_target || tgid != exec_target)
		return 0;
	bpf_map_update_elem(&targets, &tgid, &one, BPF_ANY);
	exec_target = 0;
	return 0;
}

/* Command mode: a child of a target becomes a target before it can run. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid, ctgid;
	__u8 one = 1;

	if (!follow_forks)
		return 0;
	ptgid = BPF_CORE_READ(parent, tgid);
	if (!bpf_map_lookup_elem(&targets, &ptgid))
		return 0;
	ctgid = BPF_CORE_READ(child, tgid);
	bpf_map_update_elem(&targets, &ctgid, &one, BPF_ANY);
	return 0;
}


/*
 * --off-cpu: where tasks in scope wait. Only tracepoints are used (kprobes
 * and fentry are not available on every kernel, this project's CI VMs
 * included):
 *
 *  - sched_switch, prev side: a task in scope that blocks (it is not
 *    runnable and was not preempted) gets its switch-out time stamped in
 *    `offcpu_start`;
 *  - sched_switch, next side: when a stamped task is picked to run again,
 *    the block's length is known; a block shorter than offcpu_thresh_ns is
 *    only counted. For a longer one the task's kernel stack is taken there
 *    (bpf_get_task_stack: the task has not run yet, so its saved stack is
 *    that of the block, from __schedule down to the kernel entry) and the
 *    record waits in `offcpu_pending` for the user stack;
 *  - sys_exit: the user stack can only be read in the task's own address
 *    space, that is once it runs. When the task leaves the system call it
 *    blocked in, its user registers are still those saved at that entry
 *    (compared: ip, sp and bp), and the user stack is walked from them with
 *    the sampler's walker. A block outside a system call (a page fault)
 *    keeps its kernel stack only: its record goes out, without user frames,
 *    at the task's next system call exit or next long block, never with
 *    another entry's user stack.
 *
 * So no stack is walked for short blocks, which are most context switches
 * of a busy machine. The idle task and bpfprof itself are never stamped.
 */
const volatile __u64 offcpu_thresh_ns = 500 * 1000;
const volatile __u32 self_tgid = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BPFPROF_MAX_OFFCPU_THREADS);
	__type(key, __u32);	/* tid */
	__type(value, __u64);	/* switch-out time, bpf_ktime_get_ns() */
} offcpu_start SEC(".maps");

/* A long block with its kernel stack, waiting for its task's system call exit. */
struct offcpu_pending {
	__u64 ip, sp, bp;	/* the task's user registers while it was blocked */
	struct bpfprof_offcpu r;	/* r.s.nr_user is 0 until then */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BPFPROF_MAX_OFFCPU_PENDING);
	__uint(map_flags, BPF_F_NO_PREALLOC);	/* entries live microseconds: no 2 KiB per slot up front */
	__type(key, __u32);	/* tid */
	__type(value, struct offcpu_pending);
} offcpu_pending SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct offcpu_pending);
} offcpu_scratch SEC(".maps");

static __always_inline void stat_add(__u32 idx, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &idx);

	if (v)
		*v += n;
}

/* The ring buffer's wake-up policy for a record of process tgid, as on_sample's. */
static __always_inline __u64 offcpu_wakeup(__u32 tgid)
{
	__u64 flags = bpf_ringbuf_query(&samples, BPF_RB_AVAIL_DATA) >= wakeup_bytes ?
			      BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
	__u8 *nr_seen = bpf_map_lookup_elem(&seen, &tgid);

	if (!nr_seen) {
		__u8 one = 1;

		bpf_map_update_elem(&seen, &tgid, &one, BPF_ANY);
		flags = BPF_RB_FORCE_WAKEUP;
	} else if (*nr_seen < WAKE_FIRST_SAMPLES) {
		*nr_seen += 1;
		flags = BPF_RB_FORCE_WAKEUP;
	}
	return flags;
}

/* Send a block record whose s.nr_kernel and s.nr_user are set. */
static __always_inline void offcpu_send(struct bpfprof_offcpu *r)
{
	__u64 size = BPFPROF_OFFCPU_HDR_SIZE + BPFPROF_SAMPLE_HDR_SIZE +
		     ((__u64)r->s.nr_kernel + r->s.nr_user) * 8;

	if (size > sizeof(*r))
		size = sizeof(*r);
	if (bpf_ringbuf_output(&samples, r, size, offcpu_wakeup(r->s.tgid)))
		stat_inc(BPFPROF_STAT_OFFCPU_DROPPED);
	else
		stat_inc(BPFPROF_STAT_OFFCPU);
}

/* next runs again after a stamped block: count it, or keep it with its kernel stack. */
static __always_inline void offcpu_switch_in(struct task_struct *next, __u64 now)
{
	__u32 tid = next->pid, zero = 0;
	struct offcpu_pending *pd, *old;
	struct pt_regs *regs;
	__u64 *start, off;
	long kret;
	__u64 nk;

	start = bpf_map_lookup_elem(&offcpu_start, &tid);
	if (!start)
		return;
	off = now - *start;
	bpf_map_delete_elem(&offcpu_start, &tid);
	if (off < offcpu_thresh_ns) {
		stat_inc(BPFPROF_STAT_OFFCPU_SHORT);
		stat_add(BPFPROF_STAT_OFFCPU_SHORT_NS, off);
		return;
	}
	pd = bpf_map_lookup_elem(&offcpu_scratch, &zero);
	if (!pd)
		return;
	pd->r.type = BPFPROF_REC_OFFCPU;
	pd->r.pad = 0;
	pd->r.off_ns = off;
	pd->r.s.type = BPFPROF_REC_SAMPLE;
	pd->r.s.cpu = bpf_get_smp_processor_id();
	pd->r.s.tgid = next->tgid;
	pd->r.s.tid = tid;
	pd->r.s.time_ns = now;
	pd->r.s.cgroup_id = BPF_CORE_READ(next, cgroups, dfl_cgrp, kn, id);
	bpf_probe_read_kernel(pd->r.s.comm, sizeof(pd->r.s.comm), next->comm);
	pd->r.s.pad = 0;
	pd->r.s.nr_user = 0;
	kret = bpf_get_task_stack(next, pd->r.s.ips, BPFPROF_MAX_STACK * 8, 0);
	nk = kret > 0 ? (__u64)kret / 8 : 0;
	pd->r.s.nr_kernel = nk > BPFPROF_MAX_STACK ? BPFPROF_MAX_STACK : nk;
	if (!next->mm) { /* a kernel thread: no user stack to wait for */
		offcpu_send(&pd->r);
		return;
	}
	regs = (struct pt_regs *)bpf_task_pt_regs(next);
	if (!regs)
		return;
	pd->ip = PT_REGS_IP_CORE(regs);
	pd->sp = PT_REGS_SP_CORE(regs);
	pd->bp = PT_REGS_FP_CORE(regs);
	/* an earlier block that never reached a system call exit (a page fault): kernel stack only */
	old = bpf_map_lookup_elem(&offcpu_pending, &tid);
	if (old) {
		stat_inc(BPFPROF_STAT_OFFCPU_KERNEL_ONLY);
		offcpu_send(&old->r);
	}
	if (bpf_map_update_elem(&offcpu_pending, &tid, pd, BPF_ANY))
		stat_inc(BPFPROF_STAT_OFFCPU_FULL);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u32 tid = prev->pid, tgid = prev->tgid;
	__u64 now = bpf_ktime_get_ns();

	if (next->pid)
		offcpu_switch_in(next, now);
	/* preempted or yielding (still runnable): waiting for a CPU, not blocked */
	if (!tid || tgid == self_tgid || preempt || prev->__state == 0)
		return 0;
	if (!wanted(tgid)) /* current is prev here: the cgroup helpers see its cgroup */
		return 0;
	if (bpf_map_update_elem(&offcpu_start, &tid, &now, BPF_ANY))
		stat_inc(BPFPROF_STAT_OFFCPU_FULL);
	return 0;
}

/*
 * The user stack of a pending block: walked into `scratch` after the kernel
 * part, the same walk as for samples. Keep the calls to the walker here.
 */
static __always_inline __u64 offcpu_user_stack(struct bpfprof_sample *e, __u64 nk, __u64 ip, __u64 bp)
{
	return walk_user(e, nk, ip, bp);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(on_sys_exit, struct pt_regs *regs, long ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), zero = 0;
	struct offcpu_pending *pd;
	struct bpfprof_sample *e;
	__u64 nk, nu = 0, size;

	pd = bpf_map_lookup_elem(&offcpu_pending, &tid);
	if (!pd)
		return 0;
	e = bpf_map_lookup_elem(&scratch, &zero);
	nk = pd->r.s.nr_kernel;
	if (!e || nk > BPFPROF_MAX_STACK)
		goto out;
	if (PT_REGS_IP_CORE(regs) != pd->ip || PT_REGS_SP_CORE(regs) != pd->sp ||
	    PT_REGS_FP_CORE(regs) != pd->bp) {
		/* not the entry the task blocked in: no user stack rather than another one */
		stat_inc(BPFPROF_STAT_OFFCPU_KERNEL_ONLY);
		goto out;
	}
	size = BPFPROF_SAMPLE_HDR_SIZE + nk * 8;
	if (bpf_probe_read_kernel(e, size & 4095, &pd->r.s))
		goto out;
	nu = offcpu_user_stack(e, nk, pd->ip, pd->bp);
	if (nu > BPFPROF_MAX_STACK)
		nu = BPFPROF_MAX_STACK;
	size = BPFPROF_SAMPLE_HDR_SIZE + (nk + nu) * 8;
	if (size > sizeof(*e))
		size = sizeof(*e);
	if (bpf_probe_read_kernel(&pd->r.s, size, e))
		nu = 0;
	pd->r.s.nr_user = nu;
out:
	offcpu_send(&pd->r);
	bpf_map_delete_elem(&offcpu_pending, &tid);
	return 0;
}

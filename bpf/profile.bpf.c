// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Stack sampler: runs on every cpu-clock (or hardware) perf event overflow,
 * keeps the samples of the targeted tasks, and sends pid, tid, cpu, time,
 * comm, cgroup and both stacks to user space through its CPU's ring (off-CPU
 * blocks and stack copies through a shared ring buffer). Records
 * are built in a per-CPU slot and only their used part is sent. Lost records
 * are counted per CPU in `stats`. Layouts come from include/bpfprof_abi.h.
 *
 * This file holds the sampler's entry and the variants' entry points; the
 * rest is one header per concern, all in this one compilation unit (one
 * object, one skeleton):
 *
 *   compat.bpf.h      what differs between kernels: the variants, CO-RE shims
 *   arch_x86.bpf.h    x86-64's registers and TLS base (include/arch_x86.h:
 *                     what the user-space walk shares)
 *   state.bpf.h       the shared state: ring buffer, counters, record slots
 *   cpu_ring.bpf.h    the CPUs' own rings, which a sample's record goes to
 *   filter.bpf.h      targets and --cgroup
 *   process.bpf.h     process identity, first-record wake-ups and notices,
 *                     exec and fork (on_exec, on_fork)
 *   record.bpf.h      a stack record's header and its sending, for samples
 *                     and off-CPU blocks alike
 *   unwind.bpf.h      the native walk (include/unwind_walk_step.h's step)
 *   python.bpf.h      the Python unwinder
 *   hotspot.bpf.h     HotSpot's frames, stepped inside the native walk
 *   v8.bpf.h          V8's JavaScript frames, met on the native walk
 *   walk.bpf.h        a record's walk: native, then the interpreter
 *                     dispatcher, in the program or by tail calls
 *   stack_copy.bpf.h  samples sent as stack copies for user space to walk
 *   check.bpf.h       --check-user-stacks and --check-unwind
 *   offcpu.bpf.h      --off-cpu (on_switch, on_sys_exit, task work)
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "bpfprof_abi.h"
#include "compat.bpf.h"
#include "state.bpf.h"
#include "filter.bpf.h"
#include "process.bpf.h"
#include "record.bpf.h"
#include "unwind.bpf.h"
#include "python.bpf.h"
#include "v8.bpf.h"
#include "walk.bpf.h"
#include "stack_copy.bpf.h"
#include "check.bpf.h"
#include "offcpu.bpf.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/*
 * A sample's end, once its user walk is over: the checks, then the record
 * goes out. Everything comes from the per-CPU record and walk state, so
 * that the legacy variant's last tail call can run it.
 *
 * may_copy: the sample may go as a stack copy (sample_copy_send). A
 * constant: the legacy variant's walk_sample and py_walk_sample, whose
 * verification was near the 1 M instruction limit with --check-user-stacks'
 * 127-step comparison (walk_sample 294 k since issue 34's row search),
 * leave the copy's code out; there a sample whose
 * tables were not ready is copied in on_sample, and a walk that meets a pc
 * in no registered mapping stops there, as before.
 */
static __always_inline void sample_send(struct bpf_perf_event_data *ctx, bool may_copy)
{
	struct bpfprof_sample *e;
	__u32 zero = 0, stop;
	__u64 nk, nu;

	e = bpf_map_lookup_elem(&scratch, &zero);
	if (!e)
		return;
	nk = e->nr_kernel;
	if (nk > BPFPROF_MAX_STACK)
		nk = BPFPROF_MAX_STACK;
	if (may_copy && walk_copy()) {
		sample_copy_send(ctx, nk);
		return;
	}
	nu = walk_end(&stop);
	if (nu > BPFPROF_MAX_USER_STACK)
		nu = BPFPROF_MAX_USER_STACK;
	if (check_user_stack)
		check_user_walk(ctx, nk, nu);
	if (check_unwind_every && !nk && nu)
		send_ustack_copy(ctx, e->tgid, e->tid, nk, nu, stop);
	e->nr_user = nu;
	sample_record_send(e);
}

static __always_inline void sample_end(struct bpf_perf_event_data *ctx, bool may_copy)
{
	sample_send(ctx, may_copy);
	slot_sample_end(); /* the walk this sample interrupted, if any, goes on in its slot */
}

/*
 * A sample's record: filter, kernel stack, user walk, send. The attached
 * program's body in the legacy variant; in the others sample_main's, which
 * on_sample tail-calls.
 */
static __always_inline int sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct bpfprof_sample *e;
	__u32 zero = 0;
	__u64 nk;

	if (tid == 0) /* the idle task: nothing to attribute */
		return 0;
	if (bench_sample_skip(ctx))
		return 0;
	bench_part(0);
	/* sample_main: on_sample kept the targets' samples alone (-p, a command) */
	if (BPFPROF_LEGACY ? !wanted(tgid) : !wanted_cgroup()) {
		stat_inc(BPFPROF_STAT_FILTERED);
		return 0;
	}

	e = bpf_map_lookup_elem(&scratch, &zero);
	if (!e)
		return 0;
	bench_part(1);
	stack_record_begin(e, NULL, tgid, tid, bpf_ktime_get_ns(), true); /* current: no task needed */
	bench_part(2);
	/*
	 * A sample in user mode has no kernel stack: bpf_get_stack would find
	 * none (get_perf_callchain walks the kernel's only where
	 * !user_mode(regs)), after its set-up and a clear of the buffer
	 */
	nk = stack_record_kernel(e, arch_sample_user_mode(ctx) ?
					    0 :
					    bpf_get_stack(ctx, e->ips, BPFPROF_MAX_STACK * 8, 0));
	bench_part(3);
	slot_sample_begin();
	if (user_stack_begin(ctx, e, nk, tgid)) {
		bench_part(4);
		stack_walk(ctx, HOOK_SAMPLE, e, nk, tgid);
		bench_part(6);
	}
	sample_end(ctx, true);
	bench_part(11);
	return 0;
}

/*
 * Where the kernel has bpf_loop (every variant but legacy) the sample's
 * program is sample_main in slot 0 of sample_jmp, tail-called by the
 * attached on_sample: user space loads it first without the interpreters'
 * unwinders no process needs yet (interp.bpf.h), and swaps in a load with
 * them when such a process appears (user/capture/session.c), without
 * detaching anything. A direct tail call: the JIT patches a jump.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} sample_jmp SEC(".maps");

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	if (BPFPROF_LEGACY)
		return sample(ctx);
	if (bench_sample_skip(ctx))
		return 0; /* bench/floor.sh's empty program, the primitives build: no tail call either */
	/* another process's sample (-p, a command) ends here, without the tail call */
	if (filter_mode == BPFPROF_FILTER_TGID && !is_target(bpf_get_current_pid_tgid() >> 32))
		return 0;
	bpf_tail_call(ctx, &sample_jmp, 0);
	return 0;
}

SEC("perf_event")
int sample_main(struct bpf_perf_event_data *ctx)
{
	if (BPFPROF_LEGACY)
		return 0; /* not loaded there: on_sample is the sample */
	return sample(ctx);
}

/*
 * The walks by tail calls (COMPAT_WALK_BY_TAIL_CALLS), one pair of programs
 * a hook, loaded for the hook's program type and never attached: empty in
 * the other variants.
 */

/* The record's end, after its walks, in the hook's last program */
static __always_inline void hook_end(void *ctx, enum walk_hook hook)
{
	if (hook == HOOK_SAMPLE)
		sample_end(ctx, false); /* no copy here (sample_send) */
	else
		offcpu_finish_end((__u32)bpf_get_current_pid_tgid());
}

/* The next WALK_FRAMES_PER_PROG frames of the native walk, then on or out. */
static __always_inline int walk_prog(void *ctx, enum walk_hook hook)
{
	struct bpfprof_sample *e;

	if (!COMPAT_WALK_BY_TAIL_CALLS)
		return 0;
	if (!walk_some())
		bpf_tail_call(ctx, walk_jmp(hook), 0);
	py_reset();
	e = py_record();
	if (!e)
		return 0;
	interp_walk(ctx, hook, e, e->nr_kernel & 0xff, e->tgid);
	hook_end(ctx, hook);
	return 0;
}

/*
 * The Python walk after the native one: py_begin at the first call, then
 * PY_FRAMES_PER_PROG steps a call, then out.
 */
static __always_inline int py_walk_prog(void *ctx, enum walk_hook hook)
{
	struct bpfprof_sample *e;
	struct py_walk *w;

	if (!COMPAT_WALK_BY_TAIL_CALLS)
		return 0;
	e = py_record();
	w = py_state();
	if (!e || !w)
		return 0;
	if (!w->begun && !py_begin(e, e->nr_kernel & 0xff, walk_nu(), e->tgid)) {
		py_end();
		hook_end(ctx, hook);
		return 0;
	}
	if (!py_some())
		bpf_tail_call(ctx, interp_jmp(hook), INTERP_PYTHON);
	py_end();
	hook_end(ctx, hook);
	return 0;
}

#define WALK_PROGS(sec, ctx_type, walk_name, py_name, hook) \
	SEC(sec) int walk_name(ctx_type *ctx)               \
	{                                                   \
		return walk_prog(ctx, hook);                \
	}                                                   \
	SEC(sec) int py_name(ctx_type *ctx)                 \
	{                                                   \
		return py_walk_prog(ctx, hook);             \
	}

WALK_PROGS("perf_event", struct bpf_perf_event_data, walk_sample, py_walk_sample, HOOK_SAMPLE)
WALK_PROGS("tp_btf/sys_exit", unsigned long long, walk_sys_exit, py_walk_sys_exit, HOOK_SYS_EXIT)

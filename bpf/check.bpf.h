/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The debug checks of the user walk: --check-user-stacks compares each
 * walk with the kernel's own (bpf_get_stack(BPF_F_USER_STACK)), counting
 * the same, shorter and different ones; --check-unwind sends some samples'
 * registers and stack tops next to the walk's result, for user space to
 * unwind again with libdwfl (user/unwind/unwind_check.c).
 */
#ifndef BPFPROF_CHECK_BPF_H
#define BPFPROF_CHECK_BPF_H

#include "state.bpf.h"
#include "unwind.bpf.h"

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

/* --check-unwind's copy of a sample's registers, stack and walk (below) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bpfprof_ustack_copy);
} ucopy SEC(".maps");

/*
 * One user frame of the walk's result (e->ips[nk + i]) for the two checks:
 * compared with the kernel's (ucheck, --check-user-stacks) or copied for user
 * space (ucopy, --check-unwind). The maps are looked up in each step: the
 * verifier does not carry map values into a bpf_loop callback.
 */
struct user_ips {
	__u64 nk, nu;
	bool copy; /* copy into ucopy, else compare with ucheck */
	bool differ;
};

step_fn user_ip_step(__u32 i, void *data)
{
	struct user_ips *m = data;
	struct bpfprof_ustack_copy *u;
	struct bpfprof_sample *e;
	struct ustack_check *c;
	__u32 zero = 0;
	__u64 idx = m->nk + i;

	e = bpf_map_lookup_elem(&scratch, &zero);
	if (!e || i >= m->nu || i >= BPFPROF_MAX_STACK || idx >= MAX_IPS)
		return 1;
	if (m->copy) {
		u = bpf_map_lookup_elem(&ucopy, &zero);
		if (!u)
			return 1;
		u->ips[i] = e->ips[idx];
		return 0;
	}
	c = bpf_map_lookup_elem(&ucheck, &zero);
	if (!c)
		return 1;
	if (e->ips[idx] != c->ips[i]) {
		m->differ = true;
		return 1;
	}
	return 0;
}

/*
 * --check-user-stacks: the walk is right where its addresses are the
 * kernel's (perf_callchain_user), or their first part: the kernel goes on
 * through garbage frames where this walk stops (unwind.bpf.h).
 */
static __always_inline void check_user_walk(struct bpf_perf_event_data *ctx, __u64 nk, __u64 nu)
{
	struct ustack_check *c;
	struct user_ips m = { .nk = nk, .nu = nu };
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
	for_each_step(BPFPROF_MAX_STACK, user_ip_step, &m);
	if (m.differ)
		stat_inc(BPFPROF_STAT_USTACK_DIFF);
	else
		stat_inc((__u64)ret / 8 == nu ? BPFPROF_STAT_USTACK_SAME :
						BPFPROF_STAT_USTACK_SHORTER);
}

/*
 * --check-unwind: every check_unwind_every-th sample taken in user mode also
 * sends its registers and the top BPFPROF_CHECK_STACK_SIZE bytes of its
 * stack, next to the walk's result, for user space to unwind with libdwfl.
 */
const volatile __u32 check_unwind_every = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} ucopy_tick SEC(".maps");

static __always_inline void send_ustack_copy(struct bpf_perf_event_data *ctx, __u32 tgid, __u32 tid,
					     __u64 nk, __u64 nu, __u32 stop)
{
	struct pt_regs *r = arch_sample_regs(ctx);
	struct bpfprof_ustack_copy *u;
	struct user_ips ci = { .nk = nk, .nu = nu, .copy = true };
	__u32 zero = 0, *tick;
	__u64 sp, first, second, size;

	tick = bpf_map_lookup_elem(&ucopy_tick, &zero);
	u = bpf_map_lookup_elem(&ucopy, &zero);
	if (!tick || !u || ++*tick < check_unwind_every)
		return;
	*tick = 0;
	u->type = BPFPROF_REC_USTACK_COPY;
	u->tgid = tgid;
	u->tid = tid;
	u->nr_user = nu > BPFPROF_MAX_STACK ? BPFPROF_MAX_STACK : nu; /* the copy's first frames */
	u->end_reached = stop == BPFPROF_STAT_WALK_END && nu <= BPFPROF_MAX_STACK;
	arch_dwarf_regs(u->regs, r);
	for_each_step(BPFPROF_MAX_STACK, user_ip_step, &ci);
	/* to the end of sp's page, then the next page: each read all or nothing */
	sp = PT_REGS_SP(r);
	first = USTACK_CHUNK - (sp & (USTACK_CHUNK - 1));
	size = 0;
	if (!bpf_probe_read_user(u->stack, first & (2 * USTACK_CHUNK - 1), (const void *)sp)) {
		size = first;
		second = BPFPROF_CHECK_STACK_SIZE - first;
		if (second > USTACK_CHUNK)
			second = USTACK_CHUNK;
		if (first <= USTACK_CHUNK && second && second <= USTACK_CHUNK &&
		    !bpf_probe_read_user(u->stack + first, second, (const void *)(sp + first)))
			size += second;
	}
	u->stack_size = size;
	size += BPFPROF_USTACK_COPY_HDR_SIZE;
	if (size > sizeof(*u))
		size = sizeof(*u);
	if (bpf_ringbuf_output(&samples, u, size, 0))
		stat_inc(BPFPROF_STAT_DROPPED);
	else
		stat_inc(BPFPROF_STAT_CHECK_COPIES);
}

#endif /* BPFPROF_CHECK_BPF_H */

// SPDX-License-Identifier: MIT
/*
 * Copied stacks -> samples (include/unwind_copies.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "log.h"
#include "unwind_copies.h"
#include "unwind_step.h"

/* A process's registration is read again for an unmapped pc at most this often */
#define RELOAD_NS (5 * 1000 * 1000ULL)
#define RELOADS 64

struct unwind_copies {
	struct unwinder *u;
	uint32_t max_stack;
	uint64_t st[BPFPROF_STAT_NR];
	uint64_t loads;
	uint64_t walks, walk_ns, load_ns; /* copies walked; time walking them, registering for them */
	bool warned;
	struct {
		uint32_t pid;
		uint64_t ns;
	} reloads[RELOADS]; /* the last registration made here, by pid % RELOADS */
	/* the last sample's walk, for unwind_copies__check_record */
	uint64_t ips[BPFPROF_MAX_USER_STACK];
	uint32_t nr;
	uint32_t stop;
};

struct rule_ctx {
	struct unwinder *u;
	uint32_t pid;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

struct unwind_copies *unwind_copies__new(struct unwinder *u, uint32_t max_stack)
{
	struct unwind_copies *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->u = u;
	c->max_stack = max_stack && max_stack <= BPFPROF_MAX_USER_STACK ? max_stack :
									  BPFPROF_MAX_STACK;
	return c;
}

void unwind_copies__free(struct unwind_copies *c)
{
	free(c);
}

static int rule_of(void *ctx, uint64_t pc, uint32_t *rule)
{
	struct rule_ctx *rc = ctx;
	int err = unwinder__rule(rc->u, rc->pid, pc, rule);

	return err == -ENOENT ? -ENOENT : 0; /* -ESRCH (forgotten meanwhile): no row */
}

/* Register pid now, unless that was done less than RELOAD_NS ago. */
static void load(struct unwind_copies *c, uint32_t pid)
{
	uint64_t now = mono_ns();
	int err, k = pid % RELOADS;

	if (c->reloads[k].pid == pid && now - c->reloads[k].ns < RELOAD_NS)
		return;
	c->reloads[k].pid = pid;
	c->reloads[k].ns = now;
	err = unwinder__load_pid(c->u, pid);
	c->loads++;
	c->load_ns += mono_ns() - now;
	if (err)
		pr_debug("unwind: pid %u: registration for its copied stacks: %s\n", pid,
			 strerror(-err));
}

int unwind_copies__sample(struct unwind_copies *c, const void *data, size_t size,
			  struct bpfprof_sample *out, size_t *out_size)
{
	const struct bpfprof_sample_copy *rec = data;
	struct bpfprof_sample hdr;
	struct unwind_step_regs regs;
	struct unwind_step_stack stack;
	struct unwind_step_result res;
	struct rule_ctx rc = { .u = c->u };
	uint64_t t0, load_before = c->load_ns;
	size_t nk;
	bool ready;

	if (size < BPFPROF_SAMPLE_COPY_HDR_SIZE)
		goto bad;
	memcpy(&hdr, rec->hdr, BPFPROF_SAMPLE_HDR_SIZE);
	nk = hdr.nr_kernel;
	if (rec->type != BPFPROF_REC_SAMPLE_COPY || nk > BPFPROF_MAX_STACK ||
	    rec->stack_size > BPFPROF_COPY_STACK_SIZE ||
	    size < BPFPROF_SAMPLE_COPY_HDR_SIZE + nk * 8 + rec->stack_size)
		goto bad;
	rc.pid = hdr.tgid;
	t0 = mono_ns();
	ready = unwinder__has_proc(c->u, rc.pid);
	if (!ready) {
		load(c, rc.pid);
		ready = unwinder__has_proc(c->u, rc.pid);
	}
	regs.ip = rec->regs[16];
	regs.sp = rec->regs[7];
	regs.bp = rec->regs[6];
	regs.code = rec->code_ok ? rec->code : NULL;
	stack.data = rec->data + nk * 8;
	stack.addr = regs.sp;
	stack.size = rec->stack_size;
	unwind_step__walk(&regs, &stack, ready ? rule_of : NULL, &rc, c->max_stack, c->ips, &res);
	if (ready && res.unmapped_pc) {
		/* a pc in none of the registered mappings: mapped since the registration */
		load(c, rc.pid);
		unwind_step__walk(&regs, &stack, rule_of, &rc, c->max_stack, c->ips, &res);
	}
	if (res.stop == BPFPROF_STAT_WALK_READ_FAULT)
		pr_debug("unwind: pid %u: the walk of a copied stack (%u bytes from rsp %#llx) read past it after %u frames\n",
			 rc.pid, rec->stack_size, (unsigned long long)regs.sp, res.nr);
	if (res.stop) {
		c->st[res.stop]++;
		if (!ready)
			c->st[BPFPROF_STAT_WALK_NOT_READY]++;
	}
	c->st[BPFPROF_STAT_FRAMES_CFI] += res.frames_cfi;
	c->st[BPFPROF_STAT_FRAMES_FP] += res.frames_fp;
	c->nr = res.nr;
	c->stop = res.stop;
	c->walks++;
	c->walk_ns += mono_ns() - t0 - (c->load_ns - load_before);

	memcpy(out, &hdr, BPFPROF_SAMPLE_HDR_SIZE);
	out->type = BPFPROF_REC_SAMPLE;
	out->nr_user = (uint16_t)res.nr;
	out->nr_py = 0;
	out->py_stop = 0;
	memcpy(out->ips, rec->data, nk * 8);
	memcpy(out->ips + nk, c->ips, (size_t)res.nr * 8);
	*out_size = BPFPROF_SAMPLE_HDR_SIZE + (nk + res.nr) * 8;
	return 0;
bad:
	if (!c->warned)
		pr_warn("unwind: malformed stack-copy record: %zu bytes, nr_kernel %u, stack %u\n",
			size, size >= BPFPROF_SAMPLE_COPY_HDR_SIZE ? hdr.nr_kernel : 0,
			size >= BPFPROF_SAMPLE_COPY_HDR_SIZE ? rec->stack_size : 0);
	c->warned = true;
	return -EINVAL;
}

void unwind_copies__check_record(const struct unwind_copies *c, const void *data,
				 struct bpfprof_ustack_copy *out, size_t *size)
{
	const struct bpfprof_sample_copy *rec = data;
	struct bpfprof_sample hdr;
	uint32_t n = c->nr > BPFPROF_MAX_STACK ? BPFPROF_MAX_STACK : c->nr;
	uint64_t stack = rec->stack_size > BPFPROF_CHECK_STACK_SIZE ? BPFPROF_CHECK_STACK_SIZE :
								      rec->stack_size;

	memcpy(&hdr, rec->hdr, BPFPROF_SAMPLE_HDR_SIZE);
	memset(out, 0, BPFPROF_USTACK_COPY_HDR_SIZE);
	out->type = BPFPROF_REC_USTACK_COPY;
	out->tgid = hdr.tgid;
	out->tid = hdr.tid;
	out->nr_user = (uint16_t)n;
	out->end_reached = c->stop == BPFPROF_STAT_WALK_END && c->nr <= BPFPROF_MAX_STACK;
	memcpy(out->regs, rec->regs, sizeof(out->regs));
	out->stack_size = stack;
	memcpy(out->ips, c->ips, n * 8);
	memcpy(out->stack, rec->data + (size_t)hdr.nr_kernel * 8, stack);
	*size = BPFPROF_USTACK_COPY_HDR_SIZE + stack;
}

void unwind_copies__stats(const struct unwind_copies *c, uint64_t st[BPFPROF_STAT_NR],
			  struct unwind_copies_stats *cs)
{
	memcpy(st, c->st, sizeof(c->st));
	if (cs) {
		cs->walks = c->walks;
		cs->walk_ns = c->walk_ns;
		cs->loads = c->loads;
		cs->load_ns = c->load_ns;
	}
}

// SPDX-License-Identifier: MIT
/*
 * Copied stacks -> samples (include/unwind_copies.h).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "arch.h"
#include "array.h"
#include "log.h"
#include "unwind_copies.h"
#include "unwind_step.h"

/* A process's registration is read again for an unmapped pc at most this often */
#define RELOAD_NS (5 * 1000 * 1000ULL)
#define RELOADS 64
/*
 * Records kept at once, bytes at most (a few thousand copies: a burst of new
 * processes under -a while the unwinder's thread builds); past it a record
 * is walked at once, with what is registered. 64 MiB was reached in one
 * hosts.sh run beside another script (3,783 copies of 17 KiB kept while
 * registrations took 0.8 s on average, 3.7 s at most): 172 stacks walked by
 * frame pointers. The bound, not an allocation: the records held.
 */
#define MAX_HELD_BYTES (128ULL << 20)
/* The run's end waits this long at most for the registrations its held records need */
#define RELEASE_WAIT_MS 3000

struct unwind_copies {
	struct unwinder *u;
	uint32_t max_stack;
	uint64_t st[BPFPROF_STAT_NR];
	uint64_t loads;
	uint64_t walks, walk_ns,
		load_ns; /* copies walked; time walking them, registering for them */
	bool warned;
	struct {
		uint32_t pid;
		uint64_t ns;
	} reloads[RELOADS]; /* the last registration made here, by pid % RELOADS */
	/* the last gone process registered again from its remembered maps, by pid % RELOADS */
	struct {
		uint32_t pid, start;
	} gone_reloads[RELOADS];
	/* records waiting for their process's registration, in their order */
	struct held *held;
	size_t nr_held, cap_held;
	uint64_t held_total;
	uint64_t held_bytes; /* of the records kept now */
	struct unwind_copies_procs procs; /* registrations, remembered maps */
	uint64_t gone_loads;
	struct bpfprof_sample *out; /* a released record's sample */
	/* the interpreters' frames of a copy (unwind_copies__set_interp) */
	unwind_copies_interp_fn interp;
	void *interp_ctx;
	struct unwind_step_frame frames[BPFPROF_MAX_USER_STACK];
	/* the last sample's walk, for unwind_copies__check_record */
	uint64_t ips[BPFPROF_MAX_USER_STACK];
	uint32_t nr;
	uint32_t stop;
};

struct held {
	uint32_t pid;
	size_t size;
	uint8_t *rec;
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

struct unwind_copies *unwind_copies__new(struct unwinder *u, uint32_t max_stack,
					 const struct unwind_copies_procs *procs)
{
	struct unwind_copies *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->out = malloc(sizeof(*c->out));
	if (!c->out) {
		free(c);
		return NULL;
	}
	c->u = u;
	if (procs)
		c->procs = *procs;
	c->max_stack = max_stack && max_stack <= BPFPROF_MAX_USER_STACK ? max_stack :
									  BPFPROF_MAX_STACK;
	return c;
}

void unwind_copies__set_interp(struct unwind_copies *c, unwind_copies_interp_fn fn, void *ctx)
{
	c->interp = fn;
	c->interp_ctx = ctx;
}

void unwind_copies__free(struct unwind_copies *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nr_held; i++)
		free(c->held[i].rec);
	free(c->held);
	free(c->out);
	free(c);
}

static int rule_of(void *ctx, uint64_t pc, uint32_t *rule)
{
	struct rule_ctx *rc = ctx;
	int err = unwinder__rule(rc->u, rc->pid, pc, rule);

	return err == -ENOENT ? -ENOENT : 0; /* -ESRCH (forgotten meanwhile): no row */
}

/*
 * Queue pid's registration on the unwinder's thread, unless one was asked
 * for less than RELOAD_NS ago. Returns 1 when queued now, 0 when asked for
 * already, or -errno (-ENOENT: the process is gone).
 */
static int request(struct unwind_copies *c, uint32_t pid)
{
	uint64_t now = mono_ns();
	int err, k = pid % RELOADS;

	if (c->reloads[k].pid == pid && now - c->reloads[k].ns < RELOAD_NS)
		return 0;
	c->reloads[k].pid = pid;
	c->reloads[k].ns = now;
	err = c->procs.request ? c->procs.request(c->procs.ctx, pid) : -ENOENT;
	c->loads++;
	c->load_ns += mono_ns() - now;
	if (err)
		pr_debug("unwind: pid %u: registration for its copied stacks: %s\n", pid,
			 strerror(-err));
	return err ? err : 1;
}

/* Keep record rec for unwind_copies__release. 0 or -ENOMEM. */
static int hold(struct unwind_copies *c, uint32_t pid, const void *rec, size_t size)
{
	struct held *h;

	if (array__grow((void **)&c->held, &c->cap_held, c->nr_held + 1, sizeof(*c->held)))
		return -ENOMEM;
	h = &c->held[c->nr_held];
	h->rec = malloc(size);
	if (!h->rec)
		return -ENOMEM;
	memcpy(h->rec, rec, size);
	h->size = size;
	h->pid = pid;
	c->nr_held++;
	c->held_bytes += size;
	c->held_total++;
	return 0;
}

/*
 * Walk rec into *out; 1 instead when the walk is to wait for a
 * registration (released: never), 0, or -errno.
 */
static int walk_record(struct unwind_copies *c, const void *data, size_t size, bool released,
		       struct bpfprof_sample *out, size_t *out_size)
{
	const struct bpfprof_sample_copy *rec = data;
	struct bpfprof_sample hdr;
	struct unwind_step_regs regs;
	struct unwind_step_stack stack;
	struct unwind_step_result res;
	struct rule_ctx rc = { .u = c->u };
	uint64_t t0;
	size_t nk;
	uint32_t nr_frames = 0, nr_py = 0, py_stop = 0;
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
	ready = unwinder__has_proc(c->u, rc.pid);
	if (c->held_bytes + size > MAX_HELD_BYTES)
		released = true; /* no room to keep it: walked now */
	/* not registered: wait for the registration under way, or ask for one */
	if (!ready && !released && (unwinder__pending(c->u, rc.pid) || request(c, rc.pid) == 1))
		return hold(c, rc.pid, data, size) ?: 1;
	if (!ready && c->procs.remembered && kill((pid_t)rc.pid, 0) && errno == ESRCH) {
		/* gone unregistered: from the maps remembered at its first sample, now */
		size_t len;
		const char *text = c->procs.remembered(c->procs.ctx, rc.pid, hdr.start, &len);
		uint64_t t = mono_ns();

		if (text && !unwinder__load_text(c->u, rc.pid, text, len)) {
			c->gone_loads++;
			ready = unwinder__has_proc(c->u, rc.pid);
		}
		c->load_ns += mono_ns() - t;
	}
walk:
	t0 = mono_ns();
	regs.ip = rec->regs[ARCH_DWREG_RA];
	regs.sp = rec->regs[ARCH_DWREG_SP];
	regs.bp = rec->regs[ARCH_DWREG_FP];
	regs.code = rec->code_ok ? rec->code : NULL;
	regs.after_syscall = rec->after_syscall;
	stack.data = rec->data + nk * 8;
	stack.addr = regs.sp;
	stack.size = rec->stack_size;
	stack.holes = rec->holes;
	unwind_step__walk_frames(&regs, &stack, ready ? rule_of : NULL, &rc, c->max_stack, c->ips,
				 c->frames, &nr_frames, &res);
	/*
	 * a pc in none of the registered mappings: mapped since; registered
	 * again, then walked. So is a frame-pointer step's out of them where
	 * BPF sent the copy for it (JIT code mapped since, or garbage).
	 */
	if (ready && (res.unmapped_pc ||
		      (rec->why == BPFPROF_STAT_COPY_FP_UNMAPPED && res.unmapped_fp_pc))) {
		int k = rc.pid % RELOADS;

		if (!released &&
		    (unwinder__pending(c->u, rc.pid) || request(c, rc.pid) == 1))
			return hold(c, rc.pid, data, size) ?: 1;
		/*
		 * gone before its maps could be read again: from those remembered,
		 * once (its registration may be of its image before an exec, read
		 * at a sample in the execve itself: collect2's child that becomes
		 * ld, whose stacks then ended at their leaf)
		 */
		if (c->procs.remembered &&
		    (c->gone_reloads[k].pid != rc.pid || c->gone_reloads[k].start != hdr.start) &&
		    kill((pid_t)rc.pid, 0) && errno == ESRCH) {
			size_t len;
			const char *text =
				c->procs.remembered(c->procs.ctx, rc.pid, hdr.start, &len);
			uint64_t t = mono_ns();
			int err = text ? unwinder__load_text(c->u, rc.pid, text, len) : -ENOENT;

			c->gone_reloads[k].pid = rc.pid;
			c->gone_reloads[k].start = hdr.start;
			c->load_ns += mono_ns() - t;
			if (!err) {
				c->gone_loads++;
				goto walk;
			}
		}
	}
	if (res.stop == BPFPROF_STAT_WALK_READ_FAULT)
		pr_debug(
			"unwind: pid %u: the walk of a copied stack (%u bytes from rsp %#llx) read past it after %u frames\n",
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
	c->walk_ns += mono_ns() - t0;

	memcpy(out, &hdr, BPFPROF_SAMPLE_HDR_SIZE);
	out->type = BPFPROF_REC_SAMPLE;
	out->nr_user = (uint16_t)res.nr;
	out->nr_py = 0;
	out->py_stop = 0;
	memcpy(out->ips, rec->data, nk * 8);
	memcpy(out->ips + nk, c->ips, (size_t)res.nr * 8);
	/* an interpreter's frames, after the user addresses, as the BPF walk puts them */
	if (c->interp && nr_frames)
		nr_py = c->interp(c->interp_ctx, rc.pid, c->frames, nr_frames, &stack,
				  (uint64_t *)(out->ips + nk + res.nr), BPFPROF_MAX_PY_FRAMES,
				  &py_stop);
	out->nr_py = (uint16_t)nr_py;
	out->py_stop = py_stop;
	*out_size = BPFPROF_SAMPLE_HDR_SIZE + (nk + res.nr + 2 * nr_py) * 8;
	return 0;
bad:
	if (!c->warned)
		pr_warn("unwind: malformed stack-copy record: %zu bytes, nr_kernel %u, stack %u\n",
			size, size >= BPFPROF_SAMPLE_COPY_HDR_SIZE ? hdr.nr_kernel : 0,
			size >= BPFPROF_SAMPLE_COPY_HDR_SIZE ? rec->stack_size : 0);
	c->warned = true;
	return -EINVAL;
}

int unwind_copies__sample(struct unwind_copies *c, const void *data, size_t size,
			  struct bpfprof_sample *out, size_t *out_size)
{
	return walk_record(c, data, size, false, out, out_size);
}

size_t unwind_copies__nr_held(const struct unwind_copies *c)
{
	return c ? c->nr_held : 0;
}

int unwind_copies__release(struct unwind_copies *c, bool all, unwind_copies_emit_fn emit, void *ctx)
{
	size_t i, kept = 0, out_size;
	int err = 0, waited;

	/* the end: the registrations under way first (a few seconds at most) */
	for (waited = 0; all && waited < RELEASE_WAIT_MS; waited += 5) {
		bool pending = false;

		for (i = 0; i < c->nr_held && !pending; i++)
			pending = unwinder__pending(c->u, c->held[i].pid);
		if (!pending)
			break;
		usleep(5000);
	}
	for (i = 0; i < c->nr_held; i++) {
		struct held *h = &c->held[i];
		int r;

		if (err || (!all && unwinder__pending(c->u, h->pid))) {
			c->held[kept++] = *h;
			continue;
		}
		r = walk_record(c, h->rec, h->size, true, c->out, &out_size);
		if (!r)
			r = emit(ctx, c->out, out_size);
		c->held_bytes -= h->size;
		free(h->rec);
		if (r == -ENOMEM)
			err = r;
	}
	c->nr_held = kept;
	return err;
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
		cs->held = c->held_total;
		cs->gone_loads = c->gone_loads;
	}
}


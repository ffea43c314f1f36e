// SPDX-License-Identifier: MIT
/*
 * The interpreters' registry (include/interp.h). A new interpreter plugs in
 * here: its ops table in impls[], at its enum interp_kind.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "agg.h"
#include "interp.h"

static const struct interp_ops *const impls[INTERP_NR] = {
	[INTERP_PYTHON] = &interp_python,
	[INTERP_HOTSPOT] = &interp_hotspot,
	[INTERP_V8] = &interp_v8,
};

struct interps {
	void *state[INTERP_NR]; /* NULL: not enabled */
};

struct interps *interps__new(const struct interp_env *env, uint32_t enabled)
{
	struct interps *r = calloc(1, sizeof(*r));
	int err;

	if (!r)
		return NULL;
	for (int k = 0; k < INTERP_NR; k++) {
		if (!(enabled & (1u << k)) || !impls[k])
			continue;
		err = impls[k]->new (env, &r->state[k]);
		if (err) {
			interps__free(r);
			errno = -err;
			return NULL;
		}
	}
	return r;
}

void interps__free(struct interps *r)
{
	if (!r)
		return;
	for (int k = 0; k < INTERP_NR; k++)
		if (r->state[k])
			impls[k]->free(r->state[k]);
	free(r);
}

bool interps__has(const struct interps *r, enum interp_kind kind)
{
	return r && (unsigned)kind < INTERP_NR && r->state[kind];
}

int interps__find(struct interps *r, struct profile *p, uint32_t proc)
{
	return interps__find_kinds(r, ~0u, p, proc);
}

int interps__find_kinds(struct interps *r, uint32_t kinds, struct profile *p, uint32_t proc)
{
	int added = 0;

	for (int k = 0; k < INTERP_NR; k++) {
		int n;

		if (!r->state[k] || !(kinds & (1u << k)))
			continue;
		n = impls[k]->find(r->state[k], p, proc);
		if (n < 0)
			return n;
		added += n;
	}
	return added;
}

int interps__merge(struct interps *r, struct profile *p, uint32_t proc,
		   const struct bpfprof_sample *s, uint64_t *ips, uint16_t *nr_user)
{
	for (int k = 0; k < INTERP_NR; k++) {
		int ret;

		if (!r->state[k])
			continue;
		ret = impls[k]->merge(r->state[k], p, proc, s, ips, nr_user);
		if (ret)
			return ret;
	}
	return 0;
}

uint32_t interps__copy_frames(void *ctx, uint32_t pid, const struct unwind_step_frame *frames,
			      uint32_t nr, const struct unwind_step_stack *stack, uint64_t *words,
			      uint32_t max_frames, uint32_t *stop)
{
	struct interps *r = ctx;

	*stop = 0;
	for (int k = 0; r && k < INTERP_NR; k++) {
		uint32_t n;

		if (!r->state[k] || !impls[k]->copy_frames)
			continue;
		n = impls[k]->copy_frames(r->state[k], pid, frames, nr, stack, words, max_frames,
					  stop);
		if (n || *stop)
			return n;
	}
	return 0;
}

void interps__forget(struct interps *r, uint32_t pid)
{
	for (int k = 0; k < INTERP_NR; k++)
		if (r->state[k] && impls[k]->forget)
			impls[k]->forget(r->state[k], pid);
}

int interps__stats(const struct interps *r, enum interp_kind kind, void *out, size_t size)
{
	if (!interps__has(r, kind))
		return -ENOENT;
	if (size != impls[kind]->stats_size)
		return -EINVAL;
	impls[kind]->stats(r->state[kind], out);
	return 0;
}

static int hook_maps(void *ctx, struct profile *p, uint32_t proc)
{
	return interps__find(ctx, p, proc);
}

static int hook_merge(void *ctx, struct profile *p, uint32_t proc, const struct bpfprof_sample *s,
		      uint64_t *ips, uint16_t *nr_user)
{
	return interps__merge(ctx, p, proc, s, ips, nr_user);
}

void interps__hook(struct interps *r, struct agg *agg)
{
	struct agg_frames f = { .maps = hook_maps, .merge = hook_merge, .ctx = r };
	bool any = false;

	for (int k = 0; r && k < INTERP_NR; k++)
		any |= r->state[k] != NULL;
	/* none enabled (--no-python --no-java): no hook, the records' own stacks stand */
	if (any)
		agg__set_frames(agg, &f);
}

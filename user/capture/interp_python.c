// SPDX-License-Identifier: MIT
/*
 * CPython behind the interpreter interface (include/interp.h): the ops
 * table over python_procs.h, which finds the interpreter, describes it to
 * the BPF walk (bpf/python.bpf.h) and merges the frames it recorded.
 */
#include <errno.h>
#include <stdlib.h>
#include "interp.h"
#include "python_procs.h"

struct interp_py {
	struct python_procs *py;
	struct interp_env env;
};

/* python_procs' set: the BPF walk's entry of tgid, through the registry's attach */
static int attach(void *ctx, uint32_t tgid, const struct bpfprof_py_proc *cfg)
{
	struct interp_py *ip = ctx;

	return ip->env.attach ? ip->env.attach(ip->env.attach_ctx, INTERP_PYTHON, tgid, cfg) : 0;
}

static int py_new(const struct interp_env *env, void **state)
{
	struct interp_py *ip = calloc(1, sizeof(*ip));

	if (!ip)
		return -ENOMEM;
	ip->env = *env;
	ip->py = python_procs__new(env->proc_dir, attach, ip);
	if (!ip->py) {
		free(ip);
		return -ENOMEM;
	}
	*state = ip;
	return 0;
}

static void py_free(void *state)
{
	struct interp_py *ip = state;

	if (!ip)
		return;
	python_procs__free(ip->py);
	free(ip);
}

static int py_find(void *state, struct profile *p, uint32_t proc)
{
	return python_procs__scan(((struct interp_py *)state)->py, p, proc);
}

static int py_merge(void *state, struct profile *p, uint32_t proc, const struct bpfprof_sample *s,
		    uint64_t *ips, uint16_t *nr_user)
{
	return python_procs__merge(((struct interp_py *)state)->py, p, proc, s, ips, nr_user);
}

static void py_forget(void *state, uint32_t pid)
{
	python_procs__forget(((struct interp_py *)state)->py, pid);
}

static void py_stats(const void *state, void *out)
{
	python_procs__stats(((const struct interp_py *)state)->py, out);
}

const struct interp_ops interp_python = {
	.name = "Python",
	.new = py_new,
	.free = py_free,
	.find = py_find,
	.merge = py_merge,
	.forget = py_forget,
	.stats = py_stats,
	.stats_size = sizeof(struct python_stats),
};

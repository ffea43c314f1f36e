// SPDX-License-Identifier: MIT
/*
 * Python frames named from the profile's Python functions (include/sym_python.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "sym_python.h"

/* "qualname (base.py)", or the name alone for markers */
static void display_name(const struct profile_pyfunc *f, char *buf, size_t size)
{
	const char *base = strrchr(f->file, '/');

	base = base ? base + 1 : f->file;
	if (base[0])
		snprintf(buf, size, "%s (%s)", f->name, base);
	else
		snprintf(buf, size, "%s", f->name);
}

int sym_python__name(struct profile *p, struct profile_location *l)
{
	const struct profile_process *pr;
	const struct profile_pyfunc *f;
	uint64_t look;
	char buf[1024];

	if (l->proc == PROFILE_KERNEL_PROC || l->proc >= p->nr_procs)
		return 0;
	pr = &p->procs[l->proc];
	look = l->addr - l->is_return;
	if (!pr->py_start || look < pr->py_start || look >= pr->py_start + PROFILE_PY_REGION_SIZE)
		return 0;
	f = profile__find_pyfunc(p, l->proc, look);
	if (!f)
		return 0;
	display_name(f, buf, sizeof(buf));
	l->func = profile__intern(p, buf);
	l->dso = pr->py_dso ? pr->py_dso : profile__intern(p, SYM_PYTHON_DSO);
	l->src_func = f->name;
	l->src_file = f->file;
	l->start_line = f->first_line;
	l->line = f->first_line ? f->first_line + (uint32_t)(look - f->start) : 0;
	l->func_offset = look - f->start + l->is_return;
	l->is_jit = true;
	return l->func && l->dso ? 1 : -ENOMEM;
}

struct jit_table *sym_python__jit_table(const struct profile *p, uint32_t proc,
					const struct jit_table *jit)
{
	const struct profile_process *pr = &p->procs[proc];
	size_t n = jit ? jitdump__count(jit) : 0;
	struct jit_table *t;
	char buf[1024];

	if (!n && !pr->nr_pyfuncs) {
		errno = ENOENT;
		return NULL;
	}
	t = jit_table__new();
	if (!t)
		goto out_nomem;
	for (size_t i = 0; i < n; i++) {
		struct jit_sym s;

		if (!jitdump__sym(jit, i, &s) &&
		    jit_table__add(t, s.start, s.size, s.timestamp, s.name, strlen(s.name)))
			goto out_nomem;
	}
	for (size_t i = 0; i < pr->nr_pyfuncs; i++) {
		const struct profile_pyfunc *f = &pr->pyfuncs[i];

		display_name(f, buf, sizeof(buf));
		if (jit_table__add(t, f->start, f->size, 0, buf, strlen(buf)))
			goto out_nomem;
	}
	jit_table__finish(t);
	return t;
out_nomem:
	jitdump__free(t);
	errno = ENOMEM;
	return NULL;
}

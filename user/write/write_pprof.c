// SPDX-License-Identifier: MIT
/*
 * pprof writer (include/write_pprof.h): fills the protobuf-c messages
 * generated from proto/profile.proto (github.com/google/pprof
 * proto/profile.proto), packs them with perftools__profiles__profile__pack and
 * gzips the bytes (libdeflate), as pprof producers do.
 *
 *   struct profile                     Profile
 *     stacks[]  ─────────────────────► sample[]    one per stack: [count, ns], labels
 *                                                  (--off-cpu: [count, ns, off_ns, blocks])
 *     locs[]    ─────────────────────► location[]  id = loc index + 1, one Line when named
 *     (func, dso) of named locs ─────► function[]  deduplicated by (name, filename)
 *     (proc, mapping) used by locs ──► mapping[]   busiest process first; kernel last
 *
 * Messages are built in arrays owned by this file and point into each other
 * (processes share their Label messages), then packed once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <libdeflate.h>
#include "lib_hashmap.h"
#include "log.h"
#include "mapping_slots.h"
#include "write_pprof.h"
#include "proto/profile.pb-c.h"

#define KERNEL_MAPPING_NAME "[kernel.kallsyms]"
#define MAX_LABELS 4 /* pid, comm, cgroup, container_id */

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__ValueType pb_value_type;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Label pb_label;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Function pb_function;

/* Everything write_pprof allocates, freed in one place. */
struct pprof_state {
	const struct profile *p;
	const bool *procs; /* write_pprof_procs: the processes kept; NULL: all */
	bool *loc_used; /* with procs: locations a kept stack uses */
	struct strset st; /* the string table: borrowed strings (interned in the profile,
				 * comm arrays, literals, or the hex build-ids this writer owns) */
	struct u64map str_ids; /* st's indices by a string's address: see str_id */

	struct mapping_slots slots; /* mark[]: per (process, mapping), pprof mapping id, 0 unused */
	char (*build_ids)[2 * PROFILE_BUILD_ID_MAX + 1];
	uint64_t kernel_mapping_id; /* 0 when no kernel frame was sampled */

	pb_mapping *mappings;
	pb_mapping **mapping_ptrs;
	size_t nr_mappings;

	pb_function *funcs;
	pb_function **func_ptrs;
	size_t nr_funcs;
	struct idxmap func_set; /* into funcs[], by (name, filename) */

	pb_location *locs;
	pb_location **loc_ptrs;
	pb_line *lines;
	pb_line **line_ptrs;

	pb_label *labels; /* MAX_LABELS per process */
	pb_label **label_ptrs;
	size_t *nr_labels; /* per process */

	pb_sample *samples;
	pb_sample **sample_ptrs;
	uint64_t *loc_ids; /* every sample's location ids, back to back */
	int64_t *values; /* two per sample */

	uint8_t *packed;
};

static void state__free(struct pprof_state *s)
{
	strset__free(&s->st);
	u64map__free(&s->str_ids);
	mapping_slots__free(&s->slots);
	free(s->build_ids);
	free(s->mappings);
	free(s->mapping_ptrs);
	free(s->funcs);
	free(s->func_ptrs);
	idxmap__free(&s->func_set);
	free(s->locs);
	free(s->loc_ptrs);
	free(s->lines);
	free(s->line_ptrs);
	free(s->labels);
	free(s->label_ptrs);
	free(s->nr_labels);
	free(s->samples);
	free(s->sample_ptrs);
	free(s->loc_ids);
	free(s->values);
	free(s->packed);
	free(s->loc_used);
}

/* Whether stack i belongs to a kept process (every stack without a filter). */
static bool stack_kept(const struct pprof_state *s, size_t i)
{
	uint32_t proc = s->p->stacks[i].proc;

	return !s->procs || (proc < s->p->nr_procs && s->procs[proc]);
}

/* Whether location i is written: used by a kept stack (every location without a filter). */
static bool loc_kept(const struct pprof_state *s, size_t i)
{
	return !s->loc_used || s->loc_used[i];
}

/* With a process filter: mark the locations the kept stacks use. */
static int mark_locations(struct pprof_state *s)
{
	const struct profile *p = s->p;
	size_t i, j;

	if (!s->procs)
		return 0;
	s->loc_used = calloc(p->nr_locs ? p->nr_locs : 1, sizeof(*s->loc_used));
	if (!s->loc_used)
		return -ENOMEM;
	for (i = 0; i < p->nr_stacks; i++) {
		const struct profile_stack *st = &p->stacks[i];

		if (!stack_kept(s, i) || !st->locs)
			continue;
		for (j = 0; j < (size_t)st->nr_kernel + st->nr_user; j++)
			if (st->locs[j] < p->nr_locs)
				s->loc_used[st->locs[j]] = true;
	}
	return 0;
}

/*
 * Function id for (name, system name, filename) string indices, adding the
 * Function: name as people read it, system_name the symbol (mangled), as
 * profile.proto's Function describes them.
 */
static uint64_t add_function(struct pprof_state *s, int64_t name, int64_t sys, int64_t file,
			     uint32_t start_line)
{
	uint32_t h = (uint32_t)hash__mix64(((uint64_t)name << 32) ^ (uint64_t)file ^
					   ((uint64_t)sys << 16)),
		 pos;
	pb_function *f;

	/* func_set holds room for every location's function: no growing */
	idxmap__for_each(&s->func_set, h, pos) {
		f = &s->funcs[s->func_set.slots[pos]];
		if (f->name == name && f->system_name == sys && f->filename == file)
			return f->id;
	}
	f = &s->funcs[s->nr_funcs];
	perftools__profiles__function__init(f);
	f->id = s->nr_funcs + 1;
	f->name = name;
	f->system_name = sys;
	f->filename = file;
	f->start_line = start_line;
	s->func_ptrs[s->nr_funcs] = f;
	idxmap__insert(&s->func_set, h, (uint32_t)s->nr_funcs++);
	return f->id;
}

struct busy_ctx {
	const struct profile *p;
	const uint64_t *samples;
};

static int cmp_busiest(const void *a, const void *b, void *ctx)
{
	const struct busy_ctx *c = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (c->samples[x] != c->samples[y])
		return c->samples[x] > c->samples[y] ? -1 : 1;
	return c->p->procs[x].pid < c->p->procs[y].pid ? -1 :
							 c->p->procs[x].pid > c->p->procs[y].pid;
}

static void hex_build_id(char *dst, const struct profile_mapping *m)
{
	static const char digits[] = "0123456789abcdef";
	size_t i,
		n = m->build_id_len > PROFILE_BUILD_ID_MAX ? PROFILE_BUILD_ID_MAX : m->build_id_len;

	for (i = 0; i < n; i++) {
		dst[2 * i] = digits[m->build_id[i] >> 4];
		dst[2 * i + 1] = digits[m->build_id[i] & 15];
	}
	dst[2 * n] = '\0';
}

/*
 * Mappings: one per (process, mapping) that a location uses, processes by
 * samples (busiest first: pprof takes the first mapping for the main binary),
 * each in address order; then one shared kernel mapping covering the kernel
 * addresses seen. slots.mark[] holds MAPPING_SLOT_* marks until replaced by ids.
 */
static int build_mappings(struct pprof_state *s)
{
	const struct profile *p = s->p;
	uint64_t *proc_samples;
	uint32_t *order;
	size_t i, j, nprocs = p->nr_procs ? p->nr_procs : 1;
	int64_t idx;
	uint32_t *map_id;

	if (mapping_slots__build(&s->slots, p, s->loc_used))
		return -ENOMEM;
	map_id = s->slots.mark;
	s->build_ids = calloc(s->slots.nr + 1, sizeof(*s->build_ids));
	s->mappings = calloc(s->slots.nr + 1, sizeof(*s->mappings));
	s->mapping_ptrs = calloc(s->slots.nr + 1, sizeof(*s->mapping_ptrs));
	proc_samples = calloc(nprocs, sizeof(*proc_samples));
	order = calloc(nprocs, sizeof(*order));
	if (!s->build_ids || !s->mappings || !s->mapping_ptrs || !proc_samples || !order) {
		free(proc_samples);
		free(order);
		return -ENOMEM;
	}

	for (i = 0; i < p->nr_stacks; i++)
		if (p->stacks[i].proc < p->nr_procs && stack_kept(s, i))
			proc_samples[p->stacks[i].proc] += p->stacks[i].count;
	for (i = 0; i < p->nr_procs; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, p->nr_procs, sizeof(*order), cmp_busiest,
		&(struct busy_ctx){ .p = p, .samples = proc_samples });
	free(proc_samples);

	for (i = 0; i < p->nr_procs; i++) {
		const struct profile_process *pr = &p->procs[order[i]];
		size_t base = s->slots.base[order[i]];

		for (j = 0; j < pr->nr_mappings; j++) {
			const struct profile_mapping *m = &pr->mappings[j];
			uint32_t mark = map_id[base + j];
			pb_mapping *pm = &s->mappings[s->nr_mappings];

			/*
			 * Anonymous memory with no named location: pprof could
			 * only warn that its binary is missing, so its locations
			 * go without a mapping. Named ones (JIT code) keep it.
			 */
			if (!(mark & MAPPING_SLOT_NAMED) && (!m->path || !m->path[0]))
				mark = map_id[base + j] = 0;
			if (!mark)
				continue;
			perftools__profiles__mapping__init(pm);
			pm->id = s->nr_mappings + 1;
			pm->memory_start = m->start;
			pm->memory_limit = m->end;
			pm->file_offset = m->offset;
			idx = strset__add(&s->st, m->path ? m->path : "");
			if (idx < 0)
				goto out_nomem;
			pm->filename = idx;
			if (m->build_id_len) {
				hex_build_id(s->build_ids[s->nr_mappings], m);
				idx = strset__add(&s->st, s->build_ids[s->nr_mappings]);
				if (idx < 0)
					goto out_nomem;
				pm->build_id = idx;
			}
			pm->has_functions = (mark & MAPPING_SLOT_NAMED) != 0;
			s->mapping_ptrs[s->nr_mappings++] = pm;
			map_id[base + j] = (uint32_t)pm->id;
		}
	}
	if (s->slots.kernel) {
		pb_mapping *pm = &s->mappings[s->nr_mappings];

		perftools__profiles__mapping__init(pm);
		pm->id = s->nr_mappings + 1;
		pm->memory_start = s->slots.kernel_start;
		pm->memory_limit = s->slots.kernel_limit;
		idx = strset__add(&s->st, KERNEL_MAPPING_NAME);
		if (idx < 0)
			goto out_nomem;
		pm->filename = idx;
		pm->has_functions = s->slots.kernel_named;
		s->kernel_mapping_id = pm->id;
		s->mapping_ptrs[s->nr_mappings++] = pm;
	}
	free(order);
	return 0;

out_nomem:
	free(order);
	return -ENOMEM;
}

/*
 * strset__add for the locations' strings, by address first: every location
 * adds its name, file and symbol, and the profile's strings are interned,
 * so most come again at the same address; a string seen there is not
 * hashed and compared again (long C++ symbols: strset__add was 11 % of
 * this writer's samples on a clang++ profile, 5 % with this, perf at
 * 2999 Hz). The same indices, added in the same order.
 */
static int64_t str_id(struct pprof_state *s, const char *str)
{
	uint64_t idx;
	int64_t id;

	if (u64map__get(&s->str_ids, (uintptr_t)str, &idx))
		return (int64_t)idx;
	id = strset__add(&s->st, str);
	if (id >= 0 && u64map__put(&s->str_ids, (uintptr_t)str, (uint64_t)id))
		return -ENOMEM;
	return id;
}

/* Locations, one per profile location kept (id = index + 1), and their Functions. */
static int build_locations(struct pprof_state *s, size_t *nr_out)
{
	const struct profile *p = s->p;
	size_t i, n = p->nr_locs ? p->nr_locs : 1, nr = 0;

	s->locs = calloc(n, sizeof(*s->locs));
	s->loc_ptrs = calloc(n, sizeof(*s->loc_ptrs));
	s->lines = calloc(n, sizeof(*s->lines));
	s->line_ptrs = calloc(n, sizeof(*s->line_ptrs));
	s->funcs = calloc(n, sizeof(*s->funcs));
	s->func_ptrs = calloc(n, sizeof(*s->func_ptrs));
	if (!s->locs || !s->loc_ptrs || !s->lines || !s->line_ptrs || !s->funcs || !s->func_ptrs ||
	    idxmap__init(&s->func_set, n))
		return -ENOMEM;

	for (i = 0; i < p->nr_locs; i++) {
		const struct profile_location *l = &p->locs[i];
		pb_location *pl = &s->locs[i];
		ptrdiff_t slot;

		if (!loc_kept(s, i))
			continue;
		perftools__profiles__location__init(pl);
		pl->id = i + 1;
		pl->address = loc_call_address(l);
		if (l->proc == PROFILE_KERNEL_PROC)
			pl->mapping_id = s->kernel_mapping_id;
		else if ((slot = mapping_slots__of(&s->slots, p, l)) >= 0)
			pl->mapping_id = s->slots.mark[slot];
		if (l->func) {
			/* Python frames: the function's own name and file, its first line, the frame's line */
			int64_t name = str_id(s, l->src_func ? l->src_func : l->func);
			int64_t file = str_id(s, l->src_file && l->src_file[0] ? l->src_file :
						 l->dso			       ? l->dso :
										 "");
			/* the symbol as the file spells it, when func is its demangled form */
			int64_t sys = l->sys_func && !l->src_func ? str_id(s, l->sys_func) : name;
			pb_line *line = &s->lines[i];

			if (name < 0 || file < 0 || sys < 0)
				return -ENOMEM;
			perftools__profiles__line__init(line);
			line->function_id = add_function(s, name, sys, file, l->start_line);
			line->line = l->line;
			s->line_ptrs[i] = line;
			pl->line = &s->line_ptrs[i];
			pl->n_line = 1;
		}
		s->loc_ptrs[nr++] = pl;
	}
	*nr_out = nr;
	return 0;
}

/* The labels of each process: pid, comm, then cgroup and container_id when known. */
static int build_labels(struct pprof_state *s)
{
	const struct profile *p = s->p;
	size_t i, n = p->nr_procs ? p->nr_procs : 1;
	int64_t k_pid, k_comm, k_cgroup, k_container, v;

	s->labels = calloc(n * MAX_LABELS, sizeof(*s->labels));
	s->label_ptrs = calloc(n * MAX_LABELS, sizeof(*s->label_ptrs));
	s->nr_labels = calloc(n, sizeof(*s->nr_labels));
	if (!s->labels || !s->label_ptrs || !s->nr_labels)
		return -ENOMEM;
	k_pid = strset__add(&s->st, "pid");
	k_comm = strset__add(&s->st, "comm");
	k_cgroup = strset__add(&s->st, "cgroup");
	k_container = strset__add(&s->st, "container_id");
	if (k_pid < 0 || k_comm < 0 || k_cgroup < 0 || k_container < 0)
		return -ENOMEM;

	for (i = 0; i < p->nr_procs; i++) {
		const struct profile_process *pr = &p->procs[i];
		pb_label *lb = &s->labels[i * MAX_LABELS];
		pb_label **ptr = &s->label_ptrs[i * MAX_LABELS];
		size_t k = 0;

		perftools__profiles__label__init(&lb[k]);
		lb[k].key = k_pid;
		lb[k].num = pr->pid;
		ptr[k] = &lb[k];
		k++;
		/* comm is a NUL-padded array, NUL-terminated when shorter than its size */
		if (memchr(pr->comm, '\0', sizeof(pr->comm))) {
			v = strset__add(&s->st, pr->comm);
			if (v < 0)
				return -ENOMEM;
			perftools__profiles__label__init(&lb[k]);
			lb[k].key = k_comm;
			lb[k].str = v;
			ptr[k] = &lb[k];
			k++;
		}
		if (pr->cgroup_path && pr->cgroup_path[0]) {
			v = strset__add(&s->st, pr->cgroup_path);
			if (v < 0)
				return -ENOMEM;
			perftools__profiles__label__init(&lb[k]);
			lb[k].key = k_cgroup;
			lb[k].str = v;
			ptr[k] = &lb[k];
			k++;
		}
		if (pr->container_id && pr->container_id[0]) {
			v = strset__add(&s->st, pr->container_id);
			if (v < 0)
				return -ENOMEM;
			perftools__profiles__label__init(&lb[k]);
			lb[k].key = k_container;
			lb[k].str = v;
			ptr[k] = &lb[k];
			k++;
		}
		s->nr_labels[i] = k;
	}
	return 0;
}

/*
 * One Sample per stack: location ids leaf first, values [count, ns] (with
 * off-CPU data: [count, ns, off_ns, blocks]), its process's labels.
 */
static int build_samples(struct pprof_state *s, size_t *nr_out)
{
	const struct profile *p = s->p;
	size_t i, j, nframes = 0, n = p->nr_stacks ? p->nr_stacks : 1, nr = 0,
		     nv = p->offcpu ? 4 : 2;
	uint64_t *ids;

	for (i = 0; i < p->nr_stacks; i++)
		nframes += (size_t)p->stacks[i].nr_kernel + p->stacks[i].nr_user;
	s->samples = calloc(n, sizeof(*s->samples));
	s->sample_ptrs = calloc(n, sizeof(*s->sample_ptrs));
	s->values = calloc(n * nv, sizeof(*s->values));
	s->loc_ids = calloc(nframes ? nframes : 1, sizeof(*s->loc_ids));
	if (!s->samples || !s->sample_ptrs || !s->values || !s->loc_ids)
		return -ENOMEM;

	ids = s->loc_ids;
	for (i = 0; i < p->nr_stacks; i++) {
		const struct profile_stack *st = &p->stacks[i];
		size_t depth = (size_t)st->nr_kernel + st->nr_user;
		pb_sample *ps = &s->samples[i];

		if (!stack_kept(s, i))
			continue;
		perftools__profiles__sample__init(ps);
		for (j = 0; j < depth; j++)
			ids[j] = (uint64_t)st->locs[j] + 1;
		ps->location_id = ids;
		ps->n_location_id = depth;
		ids += depth;
		ps->value = &s->values[nv * i];
		ps->value[0] = (int64_t)st->count;
		ps->value[1] = (int64_t)st->value;
		if (p->offcpu) {
			ps->value[2] = (int64_t)st->off_ns;
			ps->value[3] = (int64_t)st->off_count;
		}
		ps->n_value = nv;
		if (st->proc < p->nr_procs) {
			ps->label = &s->label_ptrs[(size_t)st->proc * MAX_LABELS];
			ps->n_label = s->nr_labels[st->proc];
		}
		s->sample_ptrs[nr++] = ps;
	}
	*nr_out = nr;
	return 0;
}

/*
 * Append src as one gzip member (RFC 1952) to out, at libdeflate's fastest
 * level, 1, as Go's runtime/pprof writes its profiles at gzip.BestSpeed:
 * half of zlib's level 1 CPU on a clang++ profile's 1.6 MB message (6 ms
 * against 12 here) for a file 5 % smaller; any gzip reader reads it (go
 * tool pprof, python's gzip; finalize's latency, docs/BENCHMARKS.md). One
 * call over the whole message: libdeflate has no streaming interface, and
 * the message is whole here anyway.
 */
static int gzip_append(struct buf *out, const uint8_t *src, size_t len)
{
	struct libdeflate_compressor *c = libdeflate_alloc_compressor(1);
	size_t bound, n;

	if (!c)
		return -ENOMEM;
	bound = libdeflate_gzip_compress_bound(c, len);
	if (buf__reserve(out, bound)) {
		libdeflate_free_compressor(c);
		return -ENOMEM;
	}
	n = libdeflate_gzip_compress(c, src, len, out->data + out->len, bound);
	libdeflate_free_compressor(c);
	if (!n) { /* cannot happen with the bound's room */
		pr_warn("pprof: deflate failed\n");
		return -EINVAL;
	}
	out->len += n;
	return 0;
}

int write_pprof(const struct profile *p, struct buf *out)
{
	return write_pprof_procs(p, NULL, out);
}

int write_pprof_procs(const struct profile *p, const bool *procs, struct buf *out)
{
	pb_profile msg = PERFTOOLS__PROFILES__PROFILE__INIT;
	pb_value_type types[4] = { PERFTOOLS__PROFILES__VALUE_TYPE__INIT,
				   PERFTOOLS__PROFILES__VALUE_TYPE__INIT,
				   PERFTOOLS__PROFILES__VALUE_TYPE__INIT,
				   PERFTOOLS__PROFILES__VALUE_TYPE__INIT };
	pb_value_type period_type = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	pb_value_type *type_ptrs[4] = { &types[0], &types[1], &types[2], &types[3] };
	struct pprof_state s = { .p = p, .procs = procs };
	int64_t i_samples, i_count, i_cpu, i_ns, i_off = 0, i_blocks = 0;
	size_t i, len, nr_locs = 0, nr_samples = 0;
	int err;

	for (i = 0; i < p->nr_stacks; i++)
		if (!p->stacks[i].locs && p->stacks[i].nr_kernel + p->stacks[i].nr_user) {
			pr_warn("pprof: stack %zu has no resolved locations\n", i);
			return -EINVAL;
		}
	for (i = 0; i < p->nr_locs; i++)
		if (p->locs[i].proc != PROFILE_KERNEL_PROC && p->locs[i].proc >= p->nr_procs)
			return -EINVAL;

	err = -ENOMEM;
	if (strset__init(&s.st, false) || strset__add(&s.st, "") != 0)
		goto out_free;
	i_samples = strset__add(&s.st, "samples");
	i_count = strset__add(&s.st, "count");
	i_cpu = strset__add(&s.st, "cpu");
	i_ns = strset__add(&s.st, "nanoseconds");
	if (i_samples < 0 || i_count < 0 || i_cpu < 0 || i_ns < 0)
		goto out_free;
	types[0].type = i_samples;
	types[0].unit = i_count;
	types[1].type = i_cpu;
	types[1].unit = i_ns;
	period_type.type = i_cpu;
	period_type.unit = i_ns;
	if (p->offcpu) {
		/* go tool pprof -sample_index=off_cpu; the default stays cpu */
		i_off = strset__add(&s.st, "off_cpu");
		i_blocks = strset__add(&s.st, "off_cpu_blocks");
		if (i_off < 0 || i_blocks < 0)
			goto out_free;
		types[2].type = i_off;
		types[2].unit = i_ns;
		types[3].type = i_blocks;
		types[3].unit = i_count;
		msg.default_sample_type = i_cpu;
	}

	err = mark_locations(&s);
	if (!err)
		err = build_mappings(&s);
	if (!err)
		err = build_locations(&s, &nr_locs);
	if (!err)
		err = build_labels(&s);
	if (!err)
		err = build_samples(&s, &nr_samples);
	if (err)
		goto out_free;

	msg.n_sample_type = p->offcpu ? 4 : 2;
	msg.sample_type = type_ptrs;
	msg.n_sample = nr_samples;
	msg.sample = s.sample_ptrs;
	msg.n_mapping = s.nr_mappings;
	msg.mapping = s.mapping_ptrs;
	msg.n_location = nr_locs;
	msg.location = s.loc_ptrs;
	msg.n_function = s.nr_funcs;
	msg.function = s.func_ptrs;
	msg.n_string_table = s.st.nr;
	msg.string_table = (char **)s.st.strs;
	msg.time_nanos = (int64_t)p->start_realtime_ns;
	msg.duration_nanos = p->end_ns > p->start_ns ? (int64_t)(p->end_ns - p->start_ns) : 0;
	msg.period_type = &period_type;
	msg.period = (int64_t)p->period_ns;

	len = perftools__profiles__profile__get_packed_size(&msg);
	s.packed = malloc(len ? len : 1);
	if (!s.packed) {
		err = -ENOMEM;
		goto out_free;
	}
	if (perftools__profiles__profile__pack(&msg, s.packed) != len) {
		pr_warn("pprof: packed size differs from the computed %zu\n", len);
		err = -EINVAL;
		goto out_free;
	}
	err = gzip_append(out, s.packed, len);

out_free:
	state__free(&s);
	if (err == -ENOMEM)
		out->err = -ENOMEM;
	return err;
}

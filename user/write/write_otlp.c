// SPDX-License-Identifier: MIT
/*
 * OTLP profiles writer (include/write_otlp.h): fills the protobuf-c messages
 * generated from proto/opentelemetry (opentelemetry-proto v1.11.0) and
 * packs one ExportProfilesServiceRequest.
 *
 *   struct profile                     ProfilesDictionary (index 0: zero value in every table)
 *     locs[i]   ─────────────────────► location_table[i + 1]  one Line when named
 *     (name, system name, file) ─────► function_table          deduplicated
 *     (proc, mapping) used by locs ──► mapping_table           kernel last
 *     stacks[i] ─────────────────────► stack_table[i + 1]      leaf first
 *     procs[], mappings, locations ──► attribute_table         deduplicated (key, value)
 *   stacks with samples ─────────────► Profile samples/count   values [count]
 *   stacks with off-CPU blocks ──────► Profile off_cpu/ns      values [off_ns]
 *
 * Messages are built in arrays owned by this file and point into each
 * other, then packed once.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include "lib_hashmap.h"
#include "log.h"
#include "mapping_slots.h"
#include "write_otlp.h"
#include "opentelemetry/proto/collector/profiles/v1development/profiles_service.pb-c.h"

#define KERNEL_MAPPING_NAME "[kernel.kallsyms]"
#define PROC_ATTRS 4 /* process.pid, process.executable.name, process.linux.cgroup, container.id */
#define SCOPE_NAME "bpfprof"
#define SCOPE_VERSION "0.1.0"

typedef Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceRequest
	pb_request;
typedef Opentelemetry__Proto__Profiles__V1development__ProfilesDictionary pb_dictionary;
typedef Opentelemetry__Proto__Profiles__V1development__ResourceProfiles pb_resource_profiles;
typedef Opentelemetry__Proto__Profiles__V1development__ScopeProfiles pb_scope_profiles;
typedef Opentelemetry__Proto__Profiles__V1development__Profile pb_profile;
typedef Opentelemetry__Proto__Profiles__V1development__ValueType pb_value_type;
typedef Opentelemetry__Proto__Profiles__V1development__Sample pb_sample;
typedef Opentelemetry__Proto__Profiles__V1development__Link pb_link;
typedef Opentelemetry__Proto__Profiles__V1development__Mapping pb_mapping;
typedef Opentelemetry__Proto__Profiles__V1development__Stack pb_stack;
typedef Opentelemetry__Proto__Profiles__V1development__Location pb_location;
typedef Opentelemetry__Proto__Profiles__V1development__Line pb_line;
typedef Opentelemetry__Proto__Profiles__V1development__Function pb_function;
typedef Opentelemetry__Proto__Profiles__V1development__KeyValueAndUnit pb_attr;
typedef Opentelemetry__Proto__Common__V1__AnyValue pb_any;
typedef Opentelemetry__Proto__Common__V1__KeyValue pb_kv;
typedef Opentelemetry__Proto__Common__V1__InstrumentationScope pb_scope;
typedef Opentelemetry__Proto__Resource__V1__Resource pb_resource;

/* One attribute of the table before it becomes a message: string or integer value. */
struct attr {
	int32_t key;
	const char *str; /* borrowed; NULL: num */
	int64_t num;
};

/* Everything write_otlp allocates, freed in one place. */
struct otlp_state {
	const struct profile *p;
	struct strset st; /* string_table: borrowed strings (interned, comm arrays, literals, hex) */
	/*
	 * Dedup keys ("K\x1fs:VALUE" attributes, "NAME\x1fSYS\x1fFILE" functions),
	 * owned copies; index 0 is "" so that a key's index is its table index.
	 */
	struct strset attr_keys, func_keys;

	struct attr *attrs; /* parallel to attr_keys */
	size_t cap_attrs;
	int32_t (*func_fields)[4]; /* name, system_name, filename, start_line; parallel to func_keys */
	size_t cap_funcs;

	int32_t *proc_attrs; /* PROC_ATTRS per process */
	size_t *nr_proc_attrs;
	int32_t *frame_attr; /* per location: its profile.frame.type attribute, 0 none */

	struct mapping_slots slots; /* mark[]: per (process, mapping), mapping_table index */
	char (*build_ids)[2 * PROFILE_BUILD_ID_MAX + 1]; /* per mapping_table entry */
	int32_t *map_attr; /* per mapping_table entry: its build-id attribute, 0 none */
	int32_t kernel_map; /* 0 when no kernel frame */
	pb_mapping *mappings;
	pb_mapping **mapping_ptrs;
	size_t nr_mappings;

	pb_location *locs;
	pb_location **loc_ptrs;
	pb_line *lines;
	pb_line **line_ptrs;
	pb_function *funcs;
	pb_function **func_ptrs;

	pb_stack *stacks;
	pb_stack **stack_ptrs;
	int32_t *loc_indices; /* every stack's location indices, back to back */

	pb_any *anys;
	pb_attr *attr_msgs;
	pb_attr **attr_ptrs;

	pb_sample *samples; /* per profile kind, nr_stacks each */
	pb_sample **sample_ptrs;
	int64_t *values;

	char (*hex)[2 * PROFILE_BUILD_ID_MAX + 1];
	uint8_t *packed;
};

static void state__free(struct otlp_state *s)
{
	strset__free(&s->st);
	strset__free(&s->attr_keys);
	strset__free(&s->func_keys);
	free(s->attrs);
	free(s->func_fields);
	free(s->proc_attrs);
	free(s->nr_proc_attrs);
	free(s->frame_attr);
	mapping_slots__free(&s->slots);
	free(s->build_ids);
	free(s->map_attr);
	free(s->mappings);
	free(s->mapping_ptrs);
	free(s->locs);
	free(s->loc_ptrs);
	free(s->lines);
	free(s->line_ptrs);
	free(s->funcs);
	free(s->func_ptrs);
	free(s->stacks);
	free(s->stack_ptrs);
	free(s->loc_indices);
	free(s->anys);
	free(s->attr_msgs);
	free(s->attr_ptrs);
	free(s->samples);
	free(s->sample_ptrs);
	free(s->values);
	free(s->hex);
	free(s->packed);
}

/* string_table index of s, or -1 on ENOMEM */
static int32_t str_idx(struct otlp_state *s, const char *str)
{
	int64_t i = strset__add(&s->st, str ? str : "");

	return i < 0 || i > INT32_MAX ? -1 : (int32_t)i;
}

/*
 * attribute_table index of (key, value): value str, or num when str is
 * NULL. Returns > 0, or -1 on ENOMEM.
 */
static int32_t attr_idx(struct otlp_state *s, const char *key, const char *str, int64_t num)
{
	char *k = NULL;
	int64_t i;
	int32_t key_i = str_idx(s, key);

	if (key_i < 0)
		return -1;
	if ((str ? asprintf(&k, "%s\x1fs:%s", key, str) :
		   asprintf(&k, "%s\x1fi:%lld", key, (long long)num)) < 0)
		return -1;
	i = strset__find(&s->attr_keys, k);
	if (i < 0) {
		if ((size_t)s->attr_keys.nr >= s->cap_attrs) {
			size_t cap = s->cap_attrs ? 2 * s->cap_attrs : 64;
			struct attr *a = realloc(s->attrs, cap * sizeof(*a));

			if (!a) {
				free(k);
				return -1;
			}
			s->attrs = a;
			s->cap_attrs = cap;
		}
		i = strset__add(&s->attr_keys, k);
		if (i >= 0)
			s->attrs[i] = (struct attr){ .key = key_i, .str = str, .num = num };
	}
	free(k);
	return i < 0 || i > INT32_MAX ? -1 : (int32_t)i;
}

/* function_table index of (name, system_name, filename), adding it; -1 on ENOMEM */
static int32_t func_idx(struct otlp_state *s, const char *name, const char *sys, const char *file,
			uint32_t start_line)
{
	int32_t n = str_idx(s, name), y = str_idx(s, sys), f = str_idx(s, file);
	char *k = NULL;
	int64_t i;

	if (n < 0 || y < 0 || f < 0 || asprintf(&k, "%d\x1f%d\x1f%d", n, y, f) < 0)
		return -1;
	i = strset__find(&s->func_keys, k);
	if (i < 0) {
		if ((size_t)s->func_keys.nr >= s->cap_funcs) {
			size_t cap = s->cap_funcs ? 2 * s->cap_funcs : 64;
			int32_t(*ff)[4] = realloc(s->func_fields, cap * sizeof(*ff));

			if (!ff) {
				free(k);
				return -1;
			}
			s->func_fields = ff;
			s->cap_funcs = cap;
		}
		i = strset__add(&s->func_keys, k);
		if (i >= 0) {
			s->func_fields[i][0] = n;
			s->func_fields[i][1] = y;
			s->func_fields[i][2] = f;
			s->func_fields[i][3] = (int32_t)start_line;
		}
	}
	free(k);
	return i < 0 || i > INT32_MAX ? -1 : (int32_t)i;
}

static void hex_of(char *dst, const uint8_t *id, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	n = n > PROFILE_BUILD_ID_MAX ? PROFILE_BUILD_ID_MAX : n;
	for (i = 0; i < n; i++) {
		dst[2 * i] = digits[id[i] >> 4];
		dst[2 * i + 1] = digits[id[i] & 15];
	}
	dst[2 * n] = '\0';
}

/* Each process's attributes: process.pid, then name, cgroup and container id when known. */
static int build_proc_attrs(struct otlp_state *s)
{
	const struct profile *p = s->p;
	size_t i, n = p->nr_procs ? p->nr_procs : 1;

	s->proc_attrs = calloc(n * PROC_ATTRS, sizeof(*s->proc_attrs));
	s->nr_proc_attrs = calloc(n, sizeof(*s->nr_proc_attrs));
	if (!s->proc_attrs || !s->nr_proc_attrs)
		return -ENOMEM;
	for (i = 0; i < p->nr_procs; i++) {
		const struct profile_process *pr = &p->procs[i];
		int32_t *a = &s->proc_attrs[i * PROC_ATTRS];
		size_t k = 0;

		a[k++] = attr_idx(s, "process.pid", NULL, pr->pid);
		/* comm is a NUL-padded array, NUL-terminated when shorter than its size */
		if (memchr(pr->comm, '\0', sizeof(pr->comm)) && pr->comm[0])
			a[k++] = attr_idx(s, "process.executable.name", pr->comm, 0);
		if (pr->cgroup_path && pr->cgroup_path[0])
			a[k++] = attr_idx(s, "process.linux.cgroup", pr->cgroup_path, 0);
		if (pr->container_id && pr->container_id[0])
			a[k++] = attr_idx(s, "container.id", pr->container_id, 0);
		s->nr_proc_attrs[i] = k;
		while (k--)
			if (a[k] < 0)
				return -ENOMEM;
	}
	return 0;
}

/*
 * Mappings: one per (process, mapping) a location uses, processes in
 * profile order, each in address order; then one kernel mapping covering
 * the kernel addresses seen. Index 0 stays the zero Mapping.
 */
static int build_mappings(struct otlp_state *s)
{
	const struct profile *p = s->p;
	uint32_t *map_idx;
	size_t i, j;

	if (mapping_slots__build(&s->slots, p, NULL))
		return -ENOMEM;
	map_idx = s->slots.mark;
	s->build_ids = calloc(s->slots.nr + 2, sizeof(*s->build_ids));
	s->map_attr = calloc(s->slots.nr + 2, sizeof(*s->map_attr));
	s->mappings = calloc(s->slots.nr + 2, sizeof(*s->mappings));
	s->mapping_ptrs = calloc(s->slots.nr + 2, sizeof(*s->mapping_ptrs));
	if (!s->build_ids || !s->map_attr || !s->mappings || !s->mapping_ptrs)
		return -ENOMEM;

	opentelemetry__proto__profiles__v1development__mapping__init(&s->mappings[0]);
	s->mapping_ptrs[0] = &s->mappings[0];
	s->nr_mappings = 1;
	for (i = 0; i < p->nr_procs; i++) {
		const struct profile_process *pr = &p->procs[i];

		for (j = 0; j < pr->nr_mappings; j++) {
			const struct profile_mapping *m = &pr->mappings[j];
			size_t n = s->nr_mappings;
			pb_mapping *pm = &s->mappings[n];

			if (!map_idx[s->slots.base[i] + j])
				continue;
			opentelemetry__proto__profiles__v1development__mapping__init(pm);
			pm->memory_start = m->start;
			pm->memory_limit = m->end;
			pm->file_offset = m->offset;
			pm->filename_strindex = str_idx(s, m->path);
			if (pm->filename_strindex < 0)
				return -ENOMEM;
			if (m->build_id_len) {
				hex_of(s->build_ids[n], m->build_id, m->build_id_len);
				s->map_attr[n] = attr_idx(s, "process.executable.build_id.gnu",
							  s->build_ids[n], 0);
				if (s->map_attr[n] < 0)
					return -ENOMEM;
				pm->attribute_indices = &s->map_attr[n];
				pm->n_attribute_indices = 1;
			}
			s->mapping_ptrs[n] = pm;
			map_idx[s->slots.base[i] + j] = (uint32_t)n;
			s->nr_mappings++;
		}
	}
	if (s->slots.kernel) {
		size_t n = s->nr_mappings;
		pb_mapping *pm = &s->mappings[n];

		opentelemetry__proto__profiles__v1development__mapping__init(pm);
		pm->memory_start = s->slots.kernel_start;
		pm->memory_limit = s->slots.kernel_limit;
		pm->filename_strindex = str_idx(s, KERNEL_MAPPING_NAME);
		if (pm->filename_strindex < 0)
			return -ENOMEM;
		if (p->kernel.build_id_len) {
			hex_of(s->build_ids[n], p->kernel.build_id, p->kernel.build_id_len);
			s->map_attr[n] =
				attr_idx(s, "process.executable.build_id.gnu", s->build_ids[n], 0);
			if (s->map_attr[n] < 0)
				return -ENOMEM;
			pm->attribute_indices = &s->map_attr[n];
			pm->n_attribute_indices = 1;
		}
		s->mapping_ptrs[n] = pm;
		s->kernel_map = (int32_t)n;
		s->nr_mappings++;
	}
	return 0;
}

/*
 * profile.frame.type as the OpenTelemetry profiler names it: "kernel",
 * "cpython" for Python frames, "native" for the rest but JIT code, whose
 * language bpfprof does not know (no attribute).
 */
static const char *frame_type(const struct profile_location *l)
{
	if (l->proc == PROFILE_KERNEL_PROC)
		return "kernel";
	if (l->src_func)
		return "cpython";
	return l->is_jit ? NULL : "native";
}

/* Locations: profile location i at index i + 1; a Line and its Function when named. */
static int build_locations(struct otlp_state *s)
{
	const struct profile *p = s->p;
	size_t i, n = p->nr_locs + 1;

	s->locs = calloc(n, sizeof(*s->locs));
	s->loc_ptrs = calloc(n, sizeof(*s->loc_ptrs));
	s->lines = calloc(n, sizeof(*s->lines));
	s->line_ptrs = calloc(n, sizeof(*s->line_ptrs));
	s->frame_attr = calloc(n, sizeof(*s->frame_attr));
	if (!s->locs || !s->loc_ptrs || !s->lines || !s->line_ptrs || !s->frame_attr)
		return -ENOMEM;
	opentelemetry__proto__profiles__v1development__location__init(&s->locs[0]);
	s->loc_ptrs[0] = &s->locs[0];

	for (i = 0; i < p->nr_locs; i++) {
		const struct profile_location *l = &p->locs[i];
		pb_location *pl = &s->locs[i + 1];
		ptrdiff_t slot;
		const char *type = frame_type(l);

		opentelemetry__proto__profiles__v1development__location__init(pl);
		pl->address = loc_call_address(l);
		if (l->proc == PROFILE_KERNEL_PROC)
			pl->mapping_index = s->kernel_map;
		else if ((slot = mapping_slots__of(&s->slots, p, l)) >= 0)
			pl->mapping_index = (int32_t)s->slots.mark[slot];
		if (l->func) {
			/* Python frames: the function's own name and file, its first line, the frame's line */
			const char *file = l->src_file && l->src_file[0] ? l->src_file :
					   l->dso			 ? l->dso :
									   "";
			pb_line *line = &s->lines[i + 1];
			/* system_name: the symbol as the file spells it when func is its demangled form */
			int32_t f = func_idx(s, l->src_func ? l->src_func : l->func,
					     l->sys_func && !l->src_func ? l->sys_func : l->func,
					     file, l->start_line);

			if (f < 0)
				return -ENOMEM;
			opentelemetry__proto__profiles__v1development__line__init(line);
			line->function_index = f;
			line->line = l->line;
			s->line_ptrs[i + 1] = line;
			pl->lines = &s->line_ptrs[i + 1];
			pl->n_lines = 1;
		}
		if (type) {
			s->frame_attr[i + 1] = attr_idx(s, "profile.frame.type", type, 0);
			if (s->frame_attr[i + 1] < 0)
				return -ENOMEM;
			pl->attribute_indices = &s->frame_attr[i + 1];
			pl->n_attribute_indices = 1;
		}
		s->loc_ptrs[i + 1] = pl;
	}
	return 0;
}

/* The function table from the deduplicated keys (index 0: the zero Function). */
static int build_functions(struct otlp_state *s)
{
	size_t i, n = s->func_keys.nr;

	s->funcs = calloc(n, sizeof(*s->funcs));
	s->func_ptrs = calloc(n, sizeof(*s->func_ptrs));
	if (!s->funcs || !s->func_ptrs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		pb_function *f = &s->funcs[i];

		opentelemetry__proto__profiles__v1development__function__init(f);
		if (i) {
			f->name_strindex = s->func_fields[i][0];
			f->system_name_strindex = s->func_fields[i][1];
			f->filename_strindex = s->func_fields[i][2];
			f->start_line = s->func_fields[i][3];
		}
		s->func_ptrs[i] = f;
	}
	return 0;
}

/* Stacks: profile stack i at index i + 1, location indices leaf first. */
static int build_stacks(struct otlp_state *s)
{
	const struct profile *p = s->p;
	size_t i, j, nframes = 0;
	int32_t *idx;

	for (i = 0; i < p->nr_stacks; i++)
		nframes += (size_t)p->stacks[i].nr_kernel + p->stacks[i].nr_user;
	s->stacks = calloc(p->nr_stacks + 1, sizeof(*s->stacks));
	s->stack_ptrs = calloc(p->nr_stacks + 1, sizeof(*s->stack_ptrs));
	s->loc_indices = calloc(nframes ? nframes : 1, sizeof(*s->loc_indices));
	if (!s->stacks || !s->stack_ptrs || !s->loc_indices)
		return -ENOMEM;
	opentelemetry__proto__profiles__v1development__stack__init(&s->stacks[0]);
	s->stack_ptrs[0] = &s->stacks[0];
	idx = s->loc_indices;
	for (i = 0; i < p->nr_stacks; i++) {
		const struct profile_stack *st = &p->stacks[i];
		size_t depth = (size_t)st->nr_kernel + st->nr_user;
		pb_stack *ps = &s->stacks[i + 1];

		opentelemetry__proto__profiles__v1development__stack__init(ps);
		for (j = 0; j < depth; j++)
			idx[j] = (int32_t)st->locs[j] + 1;
		ps->location_indices = idx;
		ps->n_location_indices = depth;
		idx += depth;
		s->stack_ptrs[i + 1] = ps;
	}
	return 0;
}

/* The attribute table's messages from the deduplicated (key, value) pairs (index 0: zero). */
static int build_attr_table(struct otlp_state *s)
{
	size_t i, n = s->attr_keys.nr;

	s->anys = calloc(n, sizeof(*s->anys));
	s->attr_msgs = calloc(n, sizeof(*s->attr_msgs));
	s->attr_ptrs = calloc(n, sizeof(*s->attr_ptrs));
	if (!s->anys || !s->attr_msgs || !s->attr_ptrs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		pb_attr *a = &s->attr_msgs[i];

		opentelemetry__proto__profiles__v1development__key_value_and_unit__init(a);
		if (i) {
			pb_any *v = &s->anys[i];

			opentelemetry__proto__common__v1__any_value__init(v);
			a->key_strindex = s->attrs[i].key;
			if (s->attrs[i].str) {
				v->value_case =
					OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
				v->string_value = (char *)s->attrs[i].str;
			} else {
				v->value_case =
					OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE;
				v->int_value = s->attrs[i].num;
			}
			a->value = v;
		}
		s->attr_ptrs[i] = a;
	}
	return 0;
}

/*
 * The samples of one profile kind: kind 0 CPU (stacks with samples, value
 * count; a traced profile's view PROFILE_VIEW_VALUE_US: stacks with self
 * time, value ns), kind 1 off-CPU (stacks with blocks, value off_ns). Each
 * sample carries its stack and its process's attributes.
 */
static size_t build_samples(struct otlp_state *s, int kind)
{
	const struct profile *p = s->p;
	pb_sample *base = &s->samples[(size_t)kind * p->nr_stacks];
	pb_sample **ptrs = &s->sample_ptrs[(size_t)kind * p->nr_stacks];
	int64_t *values = &s->values[(size_t)kind * p->nr_stacks];
	bool traced = p->view == PROFILE_VIEW_VALUE_US;
	size_t i, nr = 0;

	for (i = 0; i < p->nr_stacks; i++) {
		const struct profile_stack *st = &p->stacks[i];
		pb_sample *ps = &base[i];
		uint64_t v = kind ? st->off_ns : traced ? st->value : st->count;

		if (kind ? !st->off_count && !st->off_ns : !v)
			continue;
		opentelemetry__proto__profiles__v1development__sample__init(ps);
		ps->stack_index = (int32_t)i + 1;
		values[i] = (int64_t)v;
		ps->values = &values[i];
		ps->n_values = 1;
		if (st->proc < p->nr_procs) {
			ps->attribute_indices = &s->proc_attrs[(size_t)st->proc * PROC_ATTRS];
			ps->n_attribute_indices = s->nr_proc_attrs[st->proc];
		}
		ptrs[nr++] = ps;
	}
	return nr;
}

/* Resource attributes: host.name, os.type, service.name, then the caller's "key=value" pairs. */
static int resource_attrs(const struct otlp_opts *o, const char *host, pb_kv *kvs, pb_any *vals,
			  pb_kv **ptrs, char **owned, size_t *nr)
{
	const char *keys[3] = { "host.name", "os.type", "service.name" };
	const char *v[3] = { host, "linux", o && o->service_name ? o->service_name : NULL };
	size_t i, n = 0;

	for (i = 0; i < 3 + (o ? o->nr_attrs : 0); i++) {
		const char *key, *val;

		if (i < 3) {
			key = keys[i];
			val = v[i];
		} else {
			const char *kv = o->attrs[i - 3], *eq = strchr(kv, '=');

			if (!eq)
				continue;
			owned[i] = strndup(kv, (size_t)(eq - kv));
			if (!owned[i])
				return -ENOMEM;
			key = owned[i];
			val = eq + 1;
		}
		if (!val)
			continue;
		opentelemetry__proto__common__v1__key_value__init(&kvs[n]);
		opentelemetry__proto__common__v1__any_value__init(&vals[n]);
		kvs[n].key = (char *)key;
		vals[n].value_case =
			OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
		vals[n].string_value = (char *)val;
		kvs[n].value = &vals[n];
		ptrs[n] = &kvs[n];
		n++;
	}
	*nr = n;
	return 0;
}

int write_otlp(const struct profile *p, const struct otlp_opts *o, struct buf *out)
{
	pb_request req =
		OPENTELEMETRY__PROTO__COLLECTOR__PROFILES__V1DEVELOPMENT__EXPORT_PROFILES_SERVICE_REQUEST__INIT;
	pb_dictionary dict =
		OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__PROFILES_DICTIONARY__INIT;
	pb_resource_profiles rp =
		OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__RESOURCE_PROFILES__INIT;
	pb_scope_profiles sp = OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__SCOPE_PROFILES__INIT;
	pb_resource res = OPENTELEMETRY__PROTO__RESOURCE__V1__RESOURCE__INIT;
	pb_scope scope = OPENTELEMETRY__PROTO__COMMON__V1__INSTRUMENTATION_SCOPE__INIT;
	pb_profile profiles[2];
	pb_profile *profile_ptrs[2] = { &profiles[0], &profiles[1] };
	pb_value_type types[3];
	pb_link link = OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__LINK__INIT, *link_ptr = &link;
	pb_resource_profiles *rp_ptr = &rp;
	pb_scope_profiles *sp_ptr = &sp;
	struct otlp_state s = { .p = p };
	size_t i, nr_attrs = 3 + (o ? o->nr_attrs : 0), nr_kv = 0, len, nkinds = p->offcpu ? 2 : 1;
	pb_kv *kvs = calloc(nr_attrs, sizeof(*kvs));
	pb_any *vals = calloc(nr_attrs, sizeof(*vals));
	pb_kv **kv_ptrs = calloc(nr_attrs, sizeof(*kv_ptrs));
	char **owned = calloc(nr_attrs, sizeof(*owned));
	struct utsname u;
	int32_t i_samples, i_count, i_cpu, i_ns, i_off;
	int err = -ENOMEM;

	for (i = 0; i < p->nr_stacks; i++)
		if (!p->stacks[i].locs && p->stacks[i].nr_kernel + p->stacks[i].nr_user) {
			pr_warn("otlp: stack %zu has no resolved locations\n", i);
			err = -EINVAL;
			goto out_free;
		}
	for (i = 0; i < p->nr_locs; i++)
		if (p->locs[i].proc != PROFILE_KERNEL_PROC && p->locs[i].proc >= p->nr_procs) {
			err = -EINVAL;
			goto out_free;
		}
	if (!kvs || !vals || !kv_ptrs || !owned)
		goto out_free;
	/* index 0 of every table: the empty string, the zero attribute and function */
	if (strset__init(&s.st, false) || strset__init(&s.attr_keys, true) ||
	    strset__init(&s.func_keys, true) || strset__add(&s.st, "") != 0 ||
	    strset__add(&s.attr_keys, "") != 0 || strset__add(&s.func_keys, "") != 0)
		goto out_free;
	s.attrs = calloc(s.cap_attrs = 64, sizeof(*s.attrs));
	s.func_fields = calloc(s.cap_funcs = 64, sizeof(*s.func_fields));
	if (!s.attrs || !s.func_fields)
		goto out_free;

	i_samples = str_idx(&s, "samples");
	i_count = str_idx(&s, "count");
	i_cpu = str_idx(&s, "cpu");
	i_ns = str_idx(&s, "nanoseconds");
	i_off = p->offcpu ? str_idx(&s, "off_cpu") : 0; /* no orphan string without it */
	if (i_samples < 0 || i_count < 0 || i_cpu < 0 || i_ns < 0 || i_off < 0)
		goto out_free;
	for (i = 0; i < 3; i++)
		opentelemetry__proto__profiles__v1development__value_type__init(&types[i]);
	types[0].type_strindex = i_samples;
	types[0].unit_strindex = i_count;
	types[1].type_strindex = i_cpu;
	types[1].unit_strindex = i_ns;
	types[2].type_strindex = i_off;
	types[2].unit_strindex = i_ns;

	err = build_proc_attrs(&s);
	err = err ?: build_mappings(&s);
	err = err ?: build_locations(&s);
	err = err ?: build_functions(&s);
	err = err ?: build_stacks(&s);
	err = err ?: build_attr_table(&s);
	if (err)
		goto out_free;
	err = -ENOMEM;
	s.samples = calloc(nkinds * p->nr_stacks + 1, sizeof(*s.samples));
	s.sample_ptrs = calloc(nkinds * p->nr_stacks + 1, sizeof(*s.sample_ptrs));
	s.values = calloc(nkinds * p->nr_stacks + 1, sizeof(*s.values));
	if (!s.samples || !s.sample_ptrs || !s.values)
		goto out_free;

	for (i = 0; i < nkinds; i++) {
		pb_profile *pp = &profiles[i];

		opentelemetry__proto__profiles__v1development__profile__init(pp);
		pp->n_samples = build_samples(&s, (int)i);
		pp->samples = &s.sample_ptrs[i * p->nr_stacks];
		pp->time_unix_nano = p->start_realtime_ns;
		pp->duration_nano = p->end_ns > p->start_ns ? p->end_ns - p->start_ns : 0;
		if (i == 0 && p->view == PROFILE_VIEW_VALUE_US) {
			/* bpfprof xray: self time measured, not sampled: no period */
			pp->sample_type = &types[1];
		} else if (i == 0) {
			/* as the OpenTelemetry profiler: samples/count, a cpu/nanoseconds period */
			pp->sample_type = &types[0];
			pp->period_type = &types[1];
			pp->period = p->freq_hz ? (int64_t)(1000000000ull / p->freq_hz) :
						  (int64_t)p->period_ns;
		} else {
			pp->sample_type =
				&types[2]; /* off-CPU blocks are not periodic: no period */
		}
	}

	if (!o || !o->hostname) {
		if (uname(&u))
			u.nodename[0] = '\0';
	}
	err = resource_attrs(o, o && o->hostname ? o->hostname : u.nodename, kvs, vals, kv_ptrs,
			     owned, &nr_kv);
	if (err)
		goto out_free;
	res.attributes = kv_ptrs;
	res.n_attributes = nr_kv;
	scope.name = SCOPE_NAME;
	scope.version = SCOPE_VERSION;
	sp.scope = &scope;
	sp.profiles = profile_ptrs;
	sp.n_profiles = nkinds;
	rp.resource = &res;
	rp.scope_profiles = &sp_ptr;
	rp.n_scope_profiles = 1;

	dict.mapping_table = s.mapping_ptrs;
	dict.n_mapping_table = s.nr_mappings;
	dict.location_table = s.loc_ptrs;
	dict.n_location_table = p->nr_locs + 1;
	dict.function_table = s.func_ptrs;
	dict.n_function_table = s.func_keys.nr;
	dict.string_table = (char **)s.st.strs;
	dict.n_string_table = s.st.nr;
	dict.attribute_table = s.attr_ptrs;
	dict.n_attribute_table = s.attr_keys.nr;
	dict.stack_table = s.stack_ptrs;
	dict.n_stack_table = p->nr_stacks + 1;
	/* link_table: index 0 is the zero Link even when no sample has one */
	dict.link_table = &link_ptr;
	dict.n_link_table = 1;

	req.resource_profiles = &rp_ptr;
	req.n_resource_profiles = 1;
	req.dictionary = &dict;

	len = opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__get_packed_size(
		&req);
	err = -ENOMEM;
	if (buf__reserve(out, len))
		goto out_free;
	if (opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__pack(
		    &req, out->data + out->len) != len) {
		pr_warn("otlp: packed size differs from the computed %zu\n", len);
		err = -EINVAL;
		goto out_free;
	}
	out->len += len;
	err = 0;

out_free:
	state__free(&s);
	for (i = 0; owned && i < nr_attrs; i++)
		free(owned[i]);
	free(owned);
	free(kvs);
	free(vals);
	free(kv_ptrs);
	if (err == -ENOMEM)
		out->err = -ENOMEM;
	return err;
}

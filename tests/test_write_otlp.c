// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/write/write_otlp.c (include/write_otlp.h), against
 * opentelemetry-proto v1.11.0's profiles.proto: each case builds a struct
 * profile by hand, decodes the bytes with protobuf-c's generated unpack of
 * ExportProfilesServiceRequest, and checks the dictionary's rules (index 0
 * of every table the zero value, every index inside its table), each
 * sample's stack, names, lines and values against the model and against
 * literal expectations, and the same capture's pprof output sample for
 * sample.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "gunzip_fixture.h"
#include "profile_fixture.h"
#include "two_process_profile.h"
#include "buf.h"
#include "profile.h"
#include "write_otlp.h"
#include "write_pprof.h"
#include "proto/profile.pb-c.h"
#include "opentelemetry/proto/collector/profiles/v1development/profiles_service.pb-c.h"

#define FREQ_HZ 997
#define PERIOD_NS (1000000000ULL / FREQ_HZ)
#define START_NS 5000000000ULL
#define END_NS 8250000000ULL
#define REALTIME_NS 1700000000123456789ULL

typedef Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceRequest
	pb_request;
typedef Opentelemetry__Proto__Profiles__V1development__ProfilesDictionary pb_dict;
typedef Opentelemetry__Proto__Profiles__V1development__Profile pb_profile;
typedef Opentelemetry__Proto__Profiles__V1development__Sample pb_sample;
typedef Opentelemetry__Proto__Profiles__V1development__Location pb_location;
typedef Opentelemetry__Proto__Profiles__V1development__Function pb_function;
typedef Opentelemetry__Proto__Profiles__V1development__Mapping pb_mapping;
typedef Opentelemetry__Proto__Profiles__V1development__KeyValueAndUnit pb_attr;

struct fixture {
	struct profile *p;
	struct buf out;
	pb_request *req;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f || !(f->p = profile__new())) {
		free(f);
		return -1;
	}
	f->p->freq_hz = FREQ_HZ;
	f->p->period_ns = PERIOD_NS;
	f->p->start_ns = START_NS;
	f->p->end_ns = END_NS;
	f->p->start_realtime_ns = REALTIME_NS;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	if (f->req)
		opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__free_unpacked(
			f->req, NULL);
	buf__free(&f->out);
	profile__free(f->p);
	free(f);
	return 0;
}

/* ---- building the input (the pprof test's two processes) ---- */

/*
 * tests/two_process_profile.h's (libc without a build-id), and
 *   S4 app: Python work (line 12, first line 10) <- main  4
 */
static void build_profile(struct profile *p)
{
	struct two_procs t = two_process_stacks(p, NULL, 0);
	const uint64_t s4[] = { 0x7f2000000040ULL, 0x402040 };
	size_t i;

	add_stack(p, t.app, s4, 0, 2, 4);
	assert_int_equal(profile__resolve_locs(p), 0);

	two_process_names(p, t);
	name_loc(p, t.app, 0x402040, "main", "/usr/bin/app", false);
	name_loc(p, t.app, 0x7f2000000040ULL, "py:work", "[python]", false);
	for (i = 0; i < p->nr_locs; i++)
		if (p->locs[i].addr == 0x7f2000000040ULL) {
			p->locs[i].src_func = profile__intern(p, "work");
			p->locs[i].src_file = profile__intern(p, "/srv/job.py");
			p->locs[i].start_line = 10;
			p->locs[i].line = 12;
		}
}

/* ---- decoding and the dictionary's rules ---- */

static pb_request *decode(struct fixture *f)
{
	assert_int_equal(f->out.err, 0);
	f->req =
		opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__unpack(
			NULL, f->out.len, f->out.data);
	assert_non_null(f->req);
	assert_non_null(f->req->dictionary);
	assert_int_equal(f->req->n_resource_profiles, 1);
	assert_int_equal(f->req->resource_profiles[0]->n_scope_profiles, 1);
	return f->req;
}

static const pb_profile *profile_of(const pb_request *r, size_t i)
{
	const Opentelemetry__Proto__Profiles__V1development__ScopeProfiles *sp =
		r->resource_profiles[0]->scope_profiles[0];

	assert_true(i < sp->n_profiles);
	return sp->profiles[i];
}

static const char *str(const pb_dict *d, int32_t i)
{
	assert_true(i >= 0 && (size_t)i < d->n_string_table);
	return d->string_table[i];
}

#define IN_TABLE(i, n) assert_true((i) >= 0 && (size_t)(i) < (n))

static void check_indices(const pb_dict *d, const int32_t *idx, size_t n)
{
	for (size_t i = 0; i < n; i++)
		IN_TABLE(idx[i], d->n_attribute_table);
}

/* Index 0 of every table is the zero value; every index points inside its table. */
static void check_dictionary(const pb_request *r)
{
	const pb_dict *d = r->dictionary;
	size_t i, j;

	assert_true(d->n_string_table > 0 && d->string_table[0][0] == '\0');
	assert_true(d->n_mapping_table > 0);
	assert_int_equal(d->mapping_table[0]->memory_start, 0);
	assert_int_equal(d->mapping_table[0]->memory_limit, 0);
	assert_int_equal(d->mapping_table[0]->file_offset, 0);
	assert_int_equal(d->mapping_table[0]->filename_strindex, 0);
	assert_int_equal(d->mapping_table[0]->n_attribute_indices, 0);
	assert_true(d->n_location_table > 0);
	assert_int_equal(d->location_table[0]->mapping_index, 0);
	assert_int_equal(d->location_table[0]->address, 0);
	assert_int_equal(d->location_table[0]->n_lines, 0);
	assert_int_equal(d->location_table[0]->n_attribute_indices, 0);
	assert_true(d->n_function_table > 0);
	assert_int_equal(d->function_table[0]->name_strindex, 0);
	assert_int_equal(d->function_table[0]->system_name_strindex, 0);
	assert_int_equal(d->function_table[0]->filename_strindex, 0);
	assert_int_equal(d->function_table[0]->start_line, 0);
	assert_true(d->n_link_table > 0);
	assert_int_equal(d->link_table[0]->trace_id.len, 0);
	assert_int_equal(d->link_table[0]->span_id.len, 0);
	assert_true(d->n_attribute_table > 0);
	assert_int_equal(d->attribute_table[0]->key_strindex, 0);
	assert_null(d->attribute_table[0]->value);
	assert_int_equal(d->attribute_table[0]->unit_strindex, 0);
	assert_true(d->n_stack_table > 0);
	assert_int_equal(d->stack_table[0]->n_location_indices, 0);

	for (i = 0; i < d->n_mapping_table; i++) {
		IN_TABLE(d->mapping_table[i]->filename_strindex, d->n_string_table);
		check_indices(d, d->mapping_table[i]->attribute_indices,
			      d->mapping_table[i]->n_attribute_indices);
	}
	for (i = 0; i < d->n_location_table; i++) {
		const pb_location *l = d->location_table[i];

		IN_TABLE(l->mapping_index, d->n_mapping_table);
		check_indices(d, l->attribute_indices, l->n_attribute_indices);
		for (j = 0; j < l->n_lines; j++)
			IN_TABLE(l->lines[j]->function_index, d->n_function_table);
	}
	for (i = 0; i < d->n_function_table; i++) {
		IN_TABLE(d->function_table[i]->name_strindex, d->n_string_table);
		IN_TABLE(d->function_table[i]->system_name_strindex, d->n_string_table);
		IN_TABLE(d->function_table[i]->filename_strindex, d->n_string_table);
	}
	for (i = 1; i < d->n_attribute_table; i++) {
		IN_TABLE(d->attribute_table[i]->key_strindex, d->n_string_table);
		assert_true(d->attribute_table[i]->key_strindex > 0);
		assert_non_null(d->attribute_table[i]->value);
	}
	for (i = 0; i < d->n_stack_table; i++)
		for (j = 0; j < d->stack_table[i]->n_location_indices; j++)
			IN_TABLE(d->stack_table[i]->location_indices[j], d->n_location_table);
	for (size_t k = 0; k < r->resource_profiles[0]->scope_profiles[0]->n_profiles; k++) {
		const pb_profile *pp = profile_of(r, k);

		assert_non_null(pp->sample_type);
		IN_TABLE(pp->sample_type->type_strindex, d->n_string_table);
		IN_TABLE(pp->sample_type->unit_strindex, d->n_string_table);
		for (i = 0; i < pp->n_samples; i++) {
			IN_TABLE(pp->samples[i]->stack_index, d->n_stack_table);
			IN_TABLE(pp->samples[i]->link_index, d->n_link_table);
			check_indices(d, pp->samples[i]->attribute_indices,
				      pp->samples[i]->n_attribute_indices);
			assert_int_equal(pp->samples[i]->n_values, 1);
			assert_int_equal(pp->samples[i]->n_timestamps_unix_nano, 0);
		}
	}
}

/* The value of attribute key among a sample's (or mapping's) indices: string, or NULL. */
static const Opentelemetry__Proto__Common__V1__AnyValue *attr(const pb_dict *d, const int32_t *idx,
							      size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(str(d, d->attribute_table[idx[i]]->key_strindex), key))
			return d->attribute_table[idx[i]]->value;
	return NULL;
}

static const char *attr_str(const pb_dict *d, const int32_t *idx, size_t n, const char *key)
{
	const Opentelemetry__Proto__Common__V1__AnyValue *v = attr(d, idx, n, key);

	if (!v)
		return NULL;
	assert_int_equal(v->value_case,
			 OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE);
	return v->string_value;
}

/*
 * Every sample of profile k against the model: its stack is the model
 * stack's, frame by frame (address, mapping's file, name, system name,
 * file, lines), its value the model's (count, or off_ns).
 */
static void check_against_model(const struct profile *p, const pb_request *r, size_t k, bool offcpu)
{
	const pb_dict *d = r->dictionary;
	const pb_profile *pp = profile_of(r, k);
	size_t i, j, want = 0;

	for (i = 0; i < p->nr_stacks; i++)
		want += offcpu ? p->stacks[i].off_count > 0 : p->stacks[i].count > 0;
	assert_int_equal(pp->n_samples, want);
	for (i = 0; i < pp->n_samples; i++) {
		const pb_sample *s = pp->samples[i];
		const struct profile_stack *st = &p->stacks[s->stack_index - 1];
		const Opentelemetry__Proto__Profiles__V1development__Stack *stk =
			d->stack_table[s->stack_index];
		const struct profile_process *pr = &p->procs[st->proc];
		const Opentelemetry__Proto__Common__V1__AnyValue *pid;

		assert_true(s->stack_index > 0);
		assert_int_equal(s->values[0], offcpu ? (int64_t)st->off_ns : (int64_t)st->count);
		assert_int_equal(stk->n_location_indices, st->nr_kernel + st->nr_user);
		pid = attr(d, s->attribute_indices, s->n_attribute_indices, "process.pid");
		assert_non_null(pid);
		assert_int_equal(pid->value_case,
				 OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE);
		assert_int_equal(pid->int_value, pr->pid);
		assert_string_equal(attr_str(d, s->attribute_indices, s->n_attribute_indices,
					     "process.executable.name"),
				    pr->comm);
		for (j = 0; j < stk->n_location_indices; j++) {
			const struct profile_location *ml = &p->locs[st->locs[j]];
			const pb_location *l = d->location_table[stk->location_indices[j]];

			assert_int_equal(l->address, ml->is_return ? ml->addr - 1 : ml->addr);
			if (ml->proc == PROFILE_KERNEL_PROC)
				assert_string_equal(
					str(d,
					    d->mapping_table[l->mapping_index]->filename_strindex),
					"[kernel.kallsyms]");
			else if (ml->mapping >= 0)
				assert_string_equal(
					str(d,
					    d->mapping_table[l->mapping_index]->filename_strindex),
					pr->mappings[ml->mapping].path);
			else
				assert_int_equal(l->mapping_index, 0);
			if (!ml->func) {
				assert_int_equal(l->n_lines, 0);
				continue;
			}
			assert_int_equal(l->n_lines, 1);
			const pb_function *fn = d->function_table[l->lines[0]->function_index];

			assert_string_equal(str(d, fn->name_strindex),
					    ml->src_func ? ml->src_func : ml->func);
			assert_string_equal(str(d, fn->system_name_strindex), ml->func);
			assert_string_equal(str(d, fn->filename_strindex),
					    ml->src_file ? ml->src_file : ml->dso);
			assert_int_equal(fn->start_line, ml->start_line);
			assert_int_equal(l->lines[0]->line, ml->line);
		}
	}
}

/* ---- tests ---- */

static void test_two_processes(void **state)
{
	struct fixture *f = *state;
	const struct otlp_opts o = { .hostname = "host-1" };
	const pb_request *r;
	const pb_dict *d;
	const pb_profile *pp;
	const Opentelemetry__Proto__Resource__V1__Resource *res;
	size_t i, n_build_id = 0, n_container = 0;

	build_profile(f->p);
	assert_int_equal(write_otlp(f->p, &o, &f->out), 0);
	r = decode(f);
	d = r->dictionary;
	check_dictionary(r);
	check_against_model(f->p, r, 0, false);
	assert_int_equal(r->resource_profiles[0]->scope_profiles[0]->n_profiles, 1);

	pp = profile_of(r, 0);
	assert_string_equal(str(d, pp->sample_type->type_strindex), "samples");
	assert_string_equal(str(d, pp->sample_type->unit_strindex), "count");
	assert_non_null(pp->period_type);
	assert_string_equal(str(d, pp->period_type->type_strindex), "cpu");
	assert_string_equal(str(d, pp->period_type->unit_strindex), "nanoseconds");
	assert_int_equal(pp->period, 1003009); /* 1e9 / 997 */
	assert_int_equal(pp->time_unix_nano, REALTIME_NS);
	assert_int_equal(pp->duration_nano, END_NS - START_NS);
	assert_int_equal(pp->n_samples, 5);

	res = r->resource_profiles[0]->resource;
	assert_non_null(res);
	assert_int_equal(res->n_attributes, 2);
	assert_string_equal(res->attributes[0]->key, "host.name");
	assert_string_equal(res->attributes[0]->value->string_value, "host-1");
	assert_string_equal(res->attributes[1]->key, "os.type");
	assert_string_equal(res->attributes[1]->value->string_value, "linux");
	assert_string_equal(r->resource_profiles[0]->scope_profiles[0]->scope->name, "bpfprof");

	/* literal expectations: the samples in stack order */
	for (i = 0; i < pp->n_samples; i++) {
		const pb_sample *s = pp->samples[i];
		const int32_t *a = s->attribute_indices;
		size_t na = s->n_attribute_indices;

		assert_int_equal(s->stack_index, i + 1);
		if (i == 2) {
			assert_int_equal(attr(d, a, na, "process.pid")->int_value, 99);
			assert_string_equal(attr_str(d, a, na, "container.id"), "0123abcd");
			assert_string_equal(attr_str(d, a, na, "process.linux.cgroup"),
					    "/kubepods/pod1/cri-containerd-0123abcd");
			n_container++;
		} else {
			assert_int_equal(attr(d, a, na, "process.pid")->int_value, 1234);
			assert_string_equal(attr_str(d, a, na, "process.executable.name"), "app");
			assert_null(attr(d, a, na, "container.id"));
		}
	}
	assert_int_equal(n_container, 1);
	/* S4's Python frame: name work, system name py:work, /srv/job.py, first line 10, line 12 */
	{
		const pb_location *l = d->location_table[d->stack_table[5]->location_indices[0]];
		const pb_function *fn = d->function_table[l->lines[0]->function_index];

		assert_string_equal(str(d, fn->name_strindex), "work");
		assert_string_equal(str(d, fn->system_name_strindex), "py:work");
		assert_string_equal(str(d, fn->filename_strindex), "/srv/job.py");
		assert_int_equal(fn->start_line, 10);
		assert_int_equal(l->lines[0]->line, 12);
		assert_string_equal(attr_str(d, l->attribute_indices, l->n_attribute_indices,
					     "profile.frame.type"),
				    "cpython");
	}
	/* S1's kernel leaf and its frame type */
	{
		const pb_location *l = d->location_table[d->stack_table[2]->location_indices[0]];

		assert_int_equal(l->address, K_LEAF);
		assert_string_equal(attr_str(d, l->attribute_indices, l->n_attribute_indices,
					     "profile.frame.type"),
				    "kernel");
	}
	/* the build-id on /usr/bin/app of pid 1234 only; functions deduplicated ("hot" once) */
	for (i = 1; i < d->n_mapping_table; i++) {
		const pb_mapping *m = d->mapping_table[i];
		const char *id = attr_str(d, m->attribute_indices, m->n_attribute_indices,
					  "process.executable.build_id.gnu");

		if (id) {
			assert_string_equal(id, APP_ID_HEX);
			assert_string_equal(str(d, m->filename_strindex), "/usr/bin/app");
			assert_int_equal(m->memory_start, 0x400000);
			assert_int_equal(m->memory_limit, 0x452000);
			n_build_id++;
		}
	}
	assert_int_equal(n_build_id, 1);
	for (i = 1, n_build_id = 0; i < d->n_function_table; i++)
		n_build_id += !strcmp(str(d, d->function_table[i]->name_strindex), "hot");
	assert_int_equal(n_build_id, 1);
}

/* ---- the same capture through the pprof writer ---- */

/* One line per sample: "value|addr:name:file:line;..." leaf first, sorted by the caller. */
static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_same_as_pprof(void **state)
{
	struct fixture *f = *state;
	struct buf pz = { 0 };
	Perftools__Profiles__Profile *pb;
	const pb_profile *pp;
	const pb_dict *d;
	uint8_t *raw;
	size_t len, i, j;
	char *a[16], *b[16];

	build_profile(f->p);
	assert_int_equal(write_otlp(f->p, NULL, &f->out), 0);
	assert_int_equal(write_pprof(f->p, &pz), 0);
	decode(f);
	d = f->req->dictionary;
	pp = profile_of(f->req, 0);
	raw = gunzip(pz.data, pz.len, &len);
	pb = perftools__profiles__profile__unpack(NULL, len, raw);
	assert_non_null(pb);
	assert_int_equal(pb->n_sample, pp->n_samples);
	assert_true(pp->n_samples <= 16);

	for (i = 0; i < pp->n_samples; i++) {
		const Opentelemetry__Proto__Profiles__V1development__Stack *st =
			d->stack_table[pp->samples[i]->stack_index];
		struct buf t = { 0 };

		buf__printf(&t, "%lld|", (long long)pp->samples[i]->values[0]);
		for (j = 0; j < st->n_location_indices; j++) {
			const pb_location *l = d->location_table[st->location_indices[j]];
			const pb_function *fn =
				l->n_lines ? d->function_table[l->lines[0]->function_index] : NULL;

			buf__printf(&t, "%llx:%s:%s:%lld;", (unsigned long long)l->address,
				    fn ? str(d, fn->name_strindex) : "",
				    fn ? str(d, fn->filename_strindex) : "",
				    l->n_lines ? (long long)l->lines[0]->line : 0LL);
		}
		buf__put_bytes(&t, "", 1);
		a[i] = (char *)t.data;
	}
	for (i = 0; i < pb->n_sample; i++) {
		const Perftools__Profiles__Sample *s = pb->sample[i];
		struct buf t = { 0 };

		buf__printf(&t, "%lld|", (long long)s->value[0]);
		for (j = 0; j < s->n_location_id; j++) {
			const Perftools__Profiles__Location *l =
				pb->location[s->location_id[j] - 1];
			const Perftools__Profiles__Function *fn = NULL;

			assert_int_equal(l->id, s->location_id[j]);
			if (l->n_line)
				for (size_t k = 0; k < pb->n_function; k++)
					if (pb->function[k]->id == l->line[0]->function_id)
						fn = pb->function[k];
			buf__printf(&t, "%llx:%s:%s:%lld;", (unsigned long long)l->address,
				    fn ? pb->string_table[fn->name] : "",
				    fn ? pb->string_table[fn->filename] : "",
				    l->n_line ? (long long)l->line[0]->line : 0LL);
		}
		buf__put_bytes(&t, "", 1);
		b[i] = (char *)t.data;
	}
	qsort(a, pp->n_samples, sizeof(*a), cmp_str);
	qsort(b, pb->n_sample, sizeof(*b), cmp_str);
	for (i = 0; i < pp->n_samples; i++) {
		assert_string_equal(a[i], b[i]);
		free(a[i]);
		free(b[i]);
	}
	/* one of them written out: the Python frame's line and file */
	perftools__profiles__profile__free_unpacked(pb, NULL);
	free(raw);
	buf__free(&pz);
}

static void test_offcpu_profile(void **state)
{
	struct fixture *f = *state;
	struct profile *p = f->p;
	uint32_t a = add_labeled_proc(p, 7, "a", NULL, NULL);
	const uint64_t both[] = { 0x10010, 0x10020 };
	const uint64_t blocked[] = { 0xffffffff81000010ULL, 0x10030 };
	const pb_profile *cpu, *off;
	const pb_dict *d;
	bool created;
	size_t i;

	p->offcpu = true;
	add_stack(p, a, both, 0, 2, 3);
	assert_true(profile__add_offcpu(p, a, both, 0, 2, 2, 5000000, &created) >= 0);
	assert_true(profile__add_offcpu(p, a, blocked, 1, 1, 1, 7000000, &created) >= 0);
	assert_int_equal(profile__resolve_locs(p), 0);
	assert_int_equal(write_otlp(p, NULL, &f->out), 0);
	decode(f);
	d = f->req->dictionary;
	check_dictionary(f->req);
	assert_int_equal(f->req->resource_profiles[0]->scope_profiles[0]->n_profiles, 2);
	check_against_model(p, f->req, 0, false);
	check_against_model(p, f->req, 1, true);
	cpu = profile_of(f->req, 0);
	off = profile_of(f->req, 1);
	assert_int_equal(cpu->n_samples, 1);
	assert_int_equal(cpu->samples[0]->values[0], 3);
	assert_string_equal(str(d, off->sample_type->type_strindex), "off_cpu");
	assert_string_equal(str(d, off->sample_type->unit_strindex), "nanoseconds");
	assert_int_equal(off->n_samples, 2);
	for (i = 0; i < off->n_samples; i++)
		assert_int_equal(off->samples[i]->values[0], i ? 7000000 : 5000000);
	/* the two profiles share the dictionary: the same stack index for the same callchain */
	assert_int_equal(cpu->samples[0]->stack_index, off->samples[0]->stack_index);
}

/* bpfprof xray's view: self time in ns (exact, not rounded to µs), no period */
static void test_traced_view(void **state)
{
	struct fixture *f = *state;
	struct profile *p = f->p;
	uint32_t a = add_labeled_proc(p, 7, "a", NULL, NULL);
	const uint64_t s0[] = { 0x10010 }, s1[] = { 0x10020 };
	const pb_profile *pp;
	bool created;

	assert_true(profile__add_stack(p, a, s0, 0, 1, 3, 1234567, &created) >= 0);
	assert_true(profile__add_stack(p, a, s1, 0, 1, 9, 0, &created) >= 0);
	assert_int_equal(profile__resolve_locs(p), 0);
	p->view = PROFILE_VIEW_VALUE_US;
	assert_int_equal(write_otlp(p, NULL, &f->out), 0);
	decode(f);
	check_dictionary(f->req);
	pp = profile_of(f->req, 0);
	assert_string_equal(str(f->req->dictionary, pp->sample_type->type_strindex), "cpu");
	assert_string_equal(str(f->req->dictionary, pp->sample_type->unit_strindex), "nanoseconds");
	assert_null(pp->period_type);
	assert_int_equal(pp->n_samples, 1);
	assert_int_equal(pp->samples[0]->values[0], 1234567);
	assert_int_equal(pp->samples[0]->stack_index, 1);
}

static void test_empty_profile(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(write_otlp(f->p, NULL, &f->out), 0);
	decode(f);
	check_dictionary(f->req);
	assert_int_equal(profile_of(f->req, 0)->n_samples, 0);
	assert_int_equal(f->req->dictionary->n_stack_table, 1);
	assert_int_equal(f->req->dictionary->n_location_table, 1);
}

/* A demangled name (func) and its symbol (sys_func): name and system_name, as pprof's */
static void test_demangled_system_name(void **state)
{
	struct fixture *f = *state;
	uint32_t a = add_labeled_proc(f->p, 7, "a", NULL, NULL);
	const uint64_t ips[] = { 0x10010, 0x10500 };
	const pb_location *l;
	const pb_function *fn;
	const pb_dict *d;
	size_t i;

	add_file_mapping(f->p, a, 0x10000, 0x11000, 0, "/bin/a", NULL, 0);
	add_stack(f->p, a, ips, 0, 2, 1);
	assert_int_equal(profile__resolve_locs(f->p), 0);
	name_loc(f->p, a, 0x10010, "ns::Shape::area()", "/bin/a", false);
	name_loc(f->p, a, 0x10500, "main", "/bin/a", false);
	for (i = 0; i < f->p->nr_locs; i++)
		if (f->p->locs[i].addr == 0x10010)
			f->p->locs[i].sys_func = profile__intern(f->p, "_ZN2ns5Shape4areaEv");
	assert_int_equal(write_otlp(f->p, NULL, &f->out), 0);
	d = decode(f)->dictionary;
	for (i = 1; i < d->n_location_table; i++) {
		l = d->location_table[i];
		assert_int_equal(l->n_lines, 1);
		fn = d->function_table[l->lines[0]->function_index];
		if (l->address == 0x10010) {
			assert_string_equal(str(d, fn->name_strindex), "ns::Shape::area()");
			assert_string_equal(str(d, fn->system_name_strindex), "_ZN2ns5Shape4areaEv");
		} else {
			assert_string_equal(str(d, fn->name_strindex), "main");
			assert_string_equal(str(d, fn->system_name_strindex), "main");
		}
	}
}

static void test_unresolved_is_einval(void **state)
{
	struct fixture *f = *state;
	uint32_t a = add_labeled_proc(f->p, 7, "a", NULL, NULL);
	const uint64_t ips[] = { 0x10010 };

	add_stack(f->p, a, ips, 0, 1, 1);
	assert_int_equal(write_otlp(f->p, NULL, &f->out), -EINVAL);
	assert_int_equal(f->out.len, 0);
}

/* service.name and --label pairs become resource attributes; a pair without '=' is skipped */
static void test_resource_attributes(void **state)
{
	struct fixture *f = *state;
	const char *const labels[] = { "env=prod", "bad", "team=a=b" };
	const struct otlp_opts o = {
		.hostname = "h", .service_name = "web", .attrs = labels, .nr_attrs = 3
	};
	const Opentelemetry__Proto__Resource__V1__Resource *res;

	assert_int_equal(write_otlp(f->p, &o, &f->out), 0);
	decode(f);
	res = f->req->resource_profiles[0]->resource;
	assert_int_equal(res->n_attributes, 5);
	assert_string_equal(res->attributes[2]->key, "service.name");
	assert_string_equal(res->attributes[2]->value->string_value, "web");
	assert_string_equal(res->attributes[3]->key, "env");
	assert_string_equal(res->attributes[3]->value->string_value, "prod");
	assert_string_equal(res->attributes[4]->key, "team");
	assert_string_equal(res->attributes[4]->value->string_value, "a=b");
}

/* Appends after what the buffer holds, and the same profile gives the same bytes. */
static void test_appends_same_bytes(void **state)
{
	struct fixture *f = *state;
	const struct otlp_opts o = { .hostname = "h" };
	struct buf b = { 0 };

	build_profile(f->p);
	buf__put_bytes(&f->out, "xy", 2);
	assert_int_equal(write_otlp(f->p, &o, &f->out), 0);
	assert_int_equal(write_otlp(f->p, &o, &b), 0);
	assert_int_equal(f->out.len, b.len + 2);
	assert_memory_equal(f->out.data + 2, b.data, b.len);
	buf__free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_two_processes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_same_as_pprof, setup, teardown),
		cmocka_unit_test_setup_teardown(test_offcpu_profile, setup, teardown),
		cmocka_unit_test_setup_teardown(test_traced_view, setup, teardown),
		cmocka_unit_test_setup_teardown(test_empty_profile, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unresolved_is_einval, setup, teardown),
		cmocka_unit_test_setup_teardown(test_demangled_system_name, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resource_attributes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_appends_same_bytes, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/write/write_pprof.c (include/write_pprof.h), against
 * github.com/google/pprof proto/profile.proto: each case builds a struct
 * profile by hand (names set on p->locs here, no symbolizer), gunzips the
 * output with zlib, decodes it with protobuf-c's generated unpack, and checks
 * every field through ids and the string table against literal expectations
 * written out below, never against the writer's own helpers.
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
#include "write_pprof.h"
#include "proto/profile.pb-c.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define PERIOD_NS 1001001ULL
#define START_NS 5000000000ULL
#define END_NS 8250000000ULL
#define REALTIME_NS 1700000000123456789ULL

typedef Perftools__Profiles__Profile pb_profile;

struct fixture {
	struct profile *p;
	struct buf out;
	pb_profile *pb;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	f->p = profile__new();
	if (!f->p) {
		free(f);
		return -1;
	}
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

	if (f->pb)
		perftools__profiles__profile__free_unpacked(f->pb, NULL);
	buf__free(&f->out);
	profile__free(f->p);
	free(f);
	return 0;
}

/* ---- building the input ---- */

static const uint8_t LIBC_ID[8] = { 0xAB, 0xCD, 0xEF, 0x12, 0x34, 0x56, 0x78, 0x9A };
#define LIBC_ID_HEX "abcdef123456789a"

/* tests/two_process_profile.h's, libc with build-id LIBC_ID */
static void build_two_process_profile(struct profile *p)
{
	struct two_procs t = two_process_stacks(p, LIBC_ID, sizeof(LIBC_ID));

	assert_int_equal(profile__resolve_locs(p), 0);
	two_process_names(p, t);
}

/* ---- decoding the output ---- */

static pb_profile *decode(struct fixture *f)
{
	size_t len;
	uint8_t *raw;

	assert_int_equal(f->out.err, 0);
	assert_true(f->out.len > 18);
	/* gzip member: magic 1f 8b, method deflate */
	assert_int_equal(f->out.data[0], 0x1f);
	assert_int_equal(f->out.data[1], 0x8b);
	assert_int_equal(f->out.data[2], 8);
	raw = gunzip(f->out.data, f->out.len, &len);
	f->pb = perftools__profiles__profile__unpack(NULL, len, raw);
	free(raw);
	assert_non_null(f->pb);
	return f->pb;
}

static const char *str(const pb_profile *pb, int64_t i)
{
	assert_true(i >= 0 && (size_t)i < pb->n_string_table);
	return pb->string_table[i];
}

static const Perftools__Profiles__Location *location(const pb_profile *pb, uint64_t id)
{
	size_t i;

	for (i = 0; i < pb->n_location; i++)
		if (pb->location[i]->id == id)
			return pb->location[i];
	fail_msg("no location %llu", (unsigned long long)id);
	return NULL;
}

static const Perftools__Profiles__Mapping *mapping(const pb_profile *pb, uint64_t id)
{
	size_t i;

	for (i = 0; i < pb->n_mapping; i++)
		if (pb->mapping[i]->id == id)
			return pb->mapping[i];
	fail_msg("no mapping %llu", (unsigned long long)id);
	return NULL;
}

static const Perftools__Profiles__Function *function(const pb_profile *pb, uint64_t id)
{
	size_t i;

	for (i = 0; i < pb->n_function; i++)
		if (pb->function[i]->id == id)
			return pb->function[i];
	fail_msg("no function %llu", (unsigned long long)id);
	return NULL;
}

/* Ids are nonzero and unique within each table, as pprof's CheckValid demands. */
static void check_ids(const pb_profile *pb)
{
	size_t i, j;

	for (i = 0; i < pb->n_location; i++) {
		assert_true(pb->location[i]->id != 0);
		for (j = 0; j < i; j++)
			assert_true(pb->location[i]->id != pb->location[j]->id);
	}
	for (i = 0; i < pb->n_mapping; i++) {
		assert_true(pb->mapping[i]->id != 0);
		for (j = 0; j < i; j++)
			assert_true(pb->mapping[i]->id != pb->mapping[j]->id);
	}
	for (i = 0; i < pb->n_function; i++) {
		assert_true(pb->function[i]->id != 0);
		for (j = 0; j < i; j++)
			assert_true(pb->function[i]->id != pb->function[j]->id);
	}
}

/* One expected frame: address as written, name (NULL: no Line), function file, mapping. */
struct want_frame {
	uint64_t address;
	const char *func;
	const char *file;
	const char *map_file; /* NULL: no mapping (id 0) */
	uint64_t map_start, map_limit, map_offset;
	const char *build_id;
	bool has_functions;
};

struct want_sample {
	int64_t count;
	size_t nr_frames;
	struct want_frame frames[4];
	int64_t pid;
	const char *comm, *cgroup, *container;
};

#define APP_MAP(has) "/usr/bin/app", 0x400000, 0x452000, 0, APP_ID_HEX, has
#define WRK_MAP "/usr/bin/app", 0x400000, 0x452000, 0, "", true
#define LIBC_MAP                                                                              \
	"/usr/lib/x86_64-linux-gnu/libc.so.6", 0x7f0000000000ULL, 0x7f0000200000ULL, 0x28000, \
		LIBC_ID_HEX, false
/* kernel: from the leaf address to one past the return address minus 1 */
#define KERN_MAP "[kernel.kallsyms]", K_LEAF, K_RET, 0, "", true
#define JIT_MAP "", 0x7f1000000000ULL, 0x7f1000100000ULL, 0, "", true

static const struct want_sample two_process_want[] = {
	{ 5,
	  2,
	  { { 0x401010, "hot", "/usr/bin/app", APP_MAP(true) },
	    { 0x40201f, "main", "/usr/bin/app", APP_MAP(true) } },
	  1234,
	  "app",
	  "/system.slice/app.service",
	  NULL },
	{ 3,
	  4,
	  { { K_LEAF, "do_syscall_64", "[kernel.kallsyms]", KERN_MAP },
	    { K_RET - 1, "entry_SYSCALL_64", "[kernel.kallsyms]", KERN_MAP },
	    { 0x7f0000001000ULL, NULL, NULL, LIBC_MAP }, /* user leaf: as is */
	    { 0x40202f, "main", "/usr/bin/app", APP_MAP(true) } },
	  1234,
	  "app",
	  "/system.slice/app.service",
	  NULL },
	{ 2,
	  2,
	  { { 0x401010, "hot", "/usr/bin/app", WRK_MAP },
	    { 0x4fffff, NULL, NULL, NULL, 0, 0, 0, NULL, false } },
	  99,
	  "worker",
	  "/kubepods/pod1/cri-containerd-0123abcd",
	  "0123abcd" },
	{ 1,
	  1,
	  { { 0x7f1000000100ULL, "JS:foo /app.js:1:1", "[jit]", JIT_MAP } },
	  1234,
	  "app",
	  "/system.slice/app.service",
	  NULL },
};

static void check_frame(const pb_profile *pb, uint64_t loc_id, const struct want_frame *w)
{
	const Perftools__Profiles__Location *l = location(pb, loc_id);

	assert_int_equal(l->address, w->address);
	if (w->func) {
		const Perftools__Profiles__Function *fn;

		assert_int_equal(l->n_line, 1);
		fn = function(pb, l->line[0]->function_id);
		assert_string_equal(str(pb, fn->name), w->func);
		assert_string_equal(str(pb, fn->system_name), w->func);
		assert_string_equal(str(pb, fn->filename), w->file);
	} else {
		assert_int_equal(l->n_line, 0); /* pprof then shows the address */
	}
	if (w->map_file) {
		const Perftools__Profiles__Mapping *m;

		assert_true(l->mapping_id != 0);
		m = mapping(pb, l->mapping_id);
		assert_string_equal(str(pb, m->filename), w->map_file);
		assert_int_equal(m->memory_start, w->map_start);
		assert_int_equal(m->memory_limit, w->map_limit);
		assert_int_equal(m->file_offset, w->map_offset);
		assert_string_equal(str(pb, m->build_id), w->build_id);
		assert_int_equal(!!m->has_functions, w->has_functions);
		assert_true(l->address >= m->memory_start && l->address < m->memory_limit);
	} else {
		assert_int_equal(l->mapping_id, 0);
	}
}

static const Perftools__Profiles__Label *label(const Perftools__Profiles__Sample *s,
					       const pb_profile *pb, const char *key)
{
	size_t i;
	const Perftools__Profiles__Label *found = NULL;

	for (i = 0; i < s->n_label; i++)
		if (!strcmp(str(pb, s->label[i]->key), key)) {
			assert_null(found); /* one value per key */
			found = s->label[i];
		}
	return found;
}

static void check_samples(const pb_profile *pb, const struct want_sample *want, size_t n)
{
	size_t i, j;

	assert_int_equal(pb->n_sample, n);
	for (i = 0; i < n; i++) {
		const Perftools__Profiles__Sample *s = pb->sample[i];
		const struct want_sample *w = &want[i];
		const Perftools__Profiles__Label *lb;

		assert_int_equal(s->n_value, 2);
		assert_int_equal(s->value[0], w->count);
		assert_int_equal(s->value[1], w->count * (int64_t)PERIOD_NS);
		assert_int_equal(s->n_location_id, w->nr_frames);
		for (j = 0; j < w->nr_frames; j++)
			check_frame(pb, s->location_id[j], &w->frames[j]);

		lb = label(s, pb, "pid");
		assert_non_null(lb);
		assert_int_equal(lb->num, w->pid);
		assert_int_equal(lb->str, 0);
		lb = label(s, pb, "comm");
		assert_non_null(lb);
		assert_string_equal(str(pb, lb->str), w->comm);
		assert_int_equal(lb->num, 0);
		lb = label(s, pb, "cgroup");
		if (w->cgroup) {
			assert_non_null(lb);
			assert_string_equal(str(pb, lb->str), w->cgroup);
		} else {
			assert_null(lb);
		}
		lb = label(s, pb, "container_id");
		if (w->container) {
			assert_non_null(lb);
			assert_string_equal(str(pb, lb->str), w->container);
		} else {
			assert_null(lb);
		}
		assert_int_equal(s->n_label, 2 + !!w->cgroup + !!w->container);
	}
}

static void check_header(const pb_profile *pb)
{
	assert_true(pb->n_string_table > 0);
	assert_string_equal(pb->string_table[0], "");
	assert_int_equal(pb->n_sample_type, 2);
	assert_string_equal(str(pb, pb->sample_type[0]->type), "samples");
	assert_string_equal(str(pb, pb->sample_type[0]->unit), "count");
	assert_string_equal(str(pb, pb->sample_type[1]->type), "cpu");
	assert_string_equal(str(pb, pb->sample_type[1]->unit), "nanoseconds");
	assert_non_null(pb->period_type);
	assert_string_equal(str(pb, pb->period_type->type), "cpu");
	assert_string_equal(str(pb, pb->period_type->unit), "nanoseconds");
	assert_int_equal(pb->period, PERIOD_NS);
	assert_int_equal(pb->duration_nanos, END_NS - START_NS);
	assert_int_equal(pb->time_nanos, REALTIME_NS);
	assert_int_equal(pb->drop_frames, 0);
	assert_int_equal(pb->keep_frames, 0);
}

/* ---- tests ---- */

static void test_two_processes(void **state)
{
	struct fixture *f = *state;
	const pb_profile *pb;
	size_t i, j;

	build_two_process_profile(f->p);
	assert_int_equal(write_pprof(f->p, &f->out), 0);
	pb = decode(f);
	check_header(pb);
	check_ids(pb);
	check_samples(pb, two_process_want, ARRAY_SIZE(two_process_want));

	/* one Location per profile location */
	assert_int_equal(pb->n_location, f->p->nr_locs);
	assert_int_equal(f->p->nr_locs, 9);
	/*
	 * Functions by (name, file): hot (shared by both processes), main (two
	 * addresses), do_syscall_64, entry_SYSCALL_64, JS:foo.
	 */
	assert_int_equal(pb->n_function, 5);
	for (i = 0; i < pb->n_function; i++)
		for (j = 0; j < i; j++)
			assert_false(pb->function[i]->name == pb->function[j]->name &&
				     pb->function[i]->filename == pb->function[j]->filename);
	/* mappings: app, libc, jit of pid 1234; app of pid 99; the kernel */
	assert_int_equal(pb->n_mapping, 5);
	/* busiest process first, in address order: its main binary is mapping[0]; kernel last */
	assert_string_equal(str(pb, pb->mapping[0]->filename), "/usr/bin/app");
	assert_string_equal(str(pb, pb->mapping[0]->build_id), APP_ID_HEX);
	assert_string_equal(str(pb, pb->mapping[1]->filename),
			    "/usr/lib/x86_64-linux-gnu/libc.so.6");
	assert_string_equal(str(pb, pb->mapping[2]->filename), "");
	assert_string_equal(str(pb, pb->mapping[3]->filename), "/usr/bin/app");
	assert_string_equal(str(pb, pb->mapping[3]->build_id), "");
	assert_string_equal(str(pb, pb->mapping[4]->filename), "[kernel.kallsyms]");
	/* strings are not repeated */
	for (i = 0; i < pb->n_string_table; i++)
		for (j = 0; j < i; j++)
			assert_string_not_equal(pb->string_table[i], pb->string_table[j]);
}

/* Unused mappings are left out; a process with no stack yields no mapping. */
static void test_unused_mappings_left_out(void **state)
{
	struct fixture *f = *state;
	struct profile *p = f->p;
	uint32_t a = add_labeled_proc(p, 7, "a", NULL, NULL);
	const uint64_t s[] = { 0x10010 };
	const pb_profile *pb;

	add_labeled_proc(p, 8, "idle", NULL, NULL);
	add_file_mapping(p, a, 0x10000, 0x11000, 0, "/bin/a", NULL, 0);
	add_file_mapping(p, a, 0x20000, 0x21000, 0, "/lib/unused.so", NULL, 0);
	add_stack(p, a, s, 0, 1, 4);
	assert_int_equal(profile__resolve_locs(p), 0);
	assert_int_equal(write_pprof(p, &f->out), 0);
	pb = decode(f);
	check_header(pb);
	assert_int_equal(pb->n_mapping, 1);
	assert_string_equal(str(pb, pb->mapping[0]->filename), "/bin/a");
	assert_false(pb->mapping[0]->has_functions); /* its only location is unnamed */
	assert_int_equal(pb->n_function, 0);
	assert_int_equal(pb->n_sample, 1);
	assert_int_equal(pb->sample[0]->n_label, 2);
	assert_int_equal(location(pb, pb->sample[0]->location_id[0])->address, 0x10010);
}

/*
 * Anonymous memory: with a named location (JIT code) it is a mapping; with
 * unnamed ones only, its locations have no mapping, for pprof would just warn
 * about a missing binary.
 */
static void test_anonymous_mappings(void **state)
{
	struct fixture *f = *state;
	struct profile *p = f->p;
	uint32_t a = add_labeled_proc(p, 7, "a", NULL, NULL);
	const uint64_t s[] = { 0x10010, 0x20010, 0x30010 };
	const pb_profile *pb;
	const Perftools__Profiles__Location *l;

	add_file_mapping(p, a, 0x10000, 0x11000, 0, "", NULL, 0); /* unnamed only */
	add_file_mapping(p, a, 0x20000, 0x21000, 0, "", NULL, 0); /* JIT */
	add_file_mapping(p, a, 0x30000, 0x31000, 0, "/bin/a", NULL, 0);
	add_stack(p, a, s, 0, 3, 1);
	assert_int_equal(profile__resolve_locs(p), 0);
	name_loc(p, a, 0x20010, "JS:f", "[jit]", true);
	assert_int_equal(write_pprof(p, &f->out), 0);
	pb = decode(f);
	assert_int_equal(pb->n_mapping, 2);
	l = location(pb, pb->sample[0]->location_id[0]);
	assert_int_equal(l->address, 0x10010);
	assert_int_equal(l->mapping_id, 0);
	l = location(pb, pb->sample[0]->location_id[1]);
	assert_int_equal(l->address, 0x2000f);
	assert_int_equal(mapping(pb, l->mapping_id)->memory_start, 0x20000);
	assert_true(mapping(pb, l->mapping_id)->has_functions);
	assert_string_equal(str(pb, mapping(pb, l->mapping_id)->filename), "");
	l = location(pb, pb->sample[0]->location_id[2]);
	assert_string_equal(str(pb, mapping(pb, l->mapping_id)->filename), "/bin/a");
	assert_false(mapping(pb, l->mapping_id)->has_functions);
}

/* The same address is a distinct location as a leaf and as a return address. */
static void test_leaf_and_return_same_address(void **state)
{
	struct fixture *f = *state;
	struct profile *p = f->p;
	uint32_t a = add_labeled_proc(p, 7, "a", NULL, NULL);
	const uint64_t s1[] = { 0x10010 }, s2[] = { 0x10500, 0x10010 };
	const pb_profile *pb;
	const Perftools__Profiles__Location *l1, *l2;

	add_file_mapping(p, a, 0x10000, 0x11000, 0, "/bin/a", NULL, 0);
	add_stack(p, a, s1, 0, 1, 1);
	add_stack(p, a, s2, 0, 2, 1);
	assert_int_equal(profile__resolve_locs(p), 0);
	name_loc(p, a, 0x10010, "f", "/bin/a", false);
	name_loc(p, a, 0x10500, "g", "/bin/a", false);
	assert_int_equal(write_pprof(p, &f->out), 0);
	pb = decode(f);
	l1 = location(pb, pb->sample[0]->location_id[0]);
	l2 = location(pb, pb->sample[1]->location_id[1]);
	assert_int_equal(l1->address, 0x10010);
	assert_int_equal(l2->address, 0x1000f);
	assert_true(l1->id != l2->id);
	/* both lines name the one function f */
	assert_int_equal(l1->line[0]->function_id, l2->line[0]->function_id);
	assert_int_equal(pb->n_function, 2);
}

/* A demangled name (func) and its symbol (sys_func): Function.name and system_name */
static void test_demangled_system_name(void **state)
{
	struct fixture *f = *state;
	struct profile *p = f->p;
	uint32_t a = add_labeled_proc(p, 7, "a", NULL, NULL);
	const uint64_t s1[] = { 0x10010, 0x10500, 0x10600 };
	const Perftools__Profiles__Function *fn;
	const pb_profile *pb;
	size_t i;

	add_file_mapping(p, a, 0x10000, 0x11000, 0, "/bin/a", NULL, 0);
	add_stack(p, a, s1, 0, 3, 1);
	assert_int_equal(profile__resolve_locs(p), 0);
	name_loc(p, a, 0x10010, "core::fmt::write", "/bin/a", false);
	name_loc(p, a, 0x10500, "core::fmt::write", "/bin/a", false);
	name_loc(p, a, 0x10600, "main", "/bin/a", false);
	/* two symbols, one name (Rust legacy hashes): two Functions */
	for (i = 0; i < p->nr_locs; i++)
		if (p->locs[i].addr != 0x10600)
			p->locs[i].sys_func = profile__intern(
				p, p->locs[i].addr == 0x10010 ? "_ZN4core3fmt5write17h0123456789abcdefE" :
								"_ZN4core3fmt5write17hfedcba9876543210E");
	assert_int_equal(write_pprof(p, &f->out), 0);
	pb = decode(f);
	assert_int_equal(pb->n_function, 3);
	fn = function(pb, location(pb, pb->sample[0]->location_id[0])->line[0]->function_id);
	assert_string_equal(str(pb, fn->name), "core::fmt::write");
	assert_string_equal(str(pb, fn->system_name), "_ZN4core3fmt5write17h0123456789abcdefE");
	fn = function(pb, location(pb, pb->sample[0]->location_id[1])->line[0]->function_id);
	assert_string_equal(str(pb, fn->system_name), "_ZN4core3fmt5write17hfedcba9876543210E");
	fn = function(pb, location(pb, pb->sample[0]->location_id[2])->line[0]->function_id);
	assert_string_equal(str(pb, fn->name), "main");
	assert_string_equal(str(pb, fn->system_name), "main");
}

/*
 * The string table by content, whatever the strings' addresses (the writer
 * looks a string up by its address first): a name at one address for two
 * locations, the same name at another address (not interned) for a third,
 * give one string and one Function; each string once.
 */
static void test_strings_by_content(void **state)
{
	static char other_copy[] = "hot"; /* not the profile's interned "hot" */
	struct fixture *f = *state;
	struct profile *p = f->p;
	uint32_t a = add_labeled_proc(p, 7, "a", NULL, NULL);
	const uint64_t s1[] = { 0x10010, 0x10500, 0x10600 };
	const pb_profile *pb;
	size_t i, j, hot = 0;

	add_file_mapping(p, a, 0x10000, 0x11000, 0, "/bin/a", NULL, 0);
	add_stack(p, a, s1, 0, 3, 1);
	assert_int_equal(profile__resolve_locs(p), 0);
	name_loc(p, a, 0x10010, "hot", "/bin/a", false);
	name_loc(p, a, 0x10500, "hot", "/bin/a", false);
	name_loc(p, a, 0x10600, "hot", "/bin/a", false);
	for (i = 0; i < p->nr_locs; i++)
		if (p->locs[i].addr == 0x10600)
			p->locs[i].func = other_copy;
	assert_int_equal(write_pprof(p, &f->out), 0);
	pb = decode(f);
	assert_int_equal(pb->n_function, 1);
	for (i = 0; i < pb->n_string_table; i++) {
		hot += !strcmp(pb->string_table[i], "hot");
		for (j = 0; j < i; j++)
			assert_string_not_equal(pb->string_table[i], pb->string_table[j]);
	}
	assert_int_equal(hot, 1);
	for (i = 0; i < 3; i++)
		assert_int_equal(location(pb, pb->sample[0]->location_id[i])->line[0]->function_id,
				 pb->function[0]->id);
}

static void test_empty_profile(void **state)
{
	struct fixture *f = *state;
	const pb_profile *pb;

	assert_int_equal(profile__resolve_locs(f->p), 0);
	assert_int_equal(write_pprof(f->p, &f->out), 0);
	pb = decode(f);
	check_header(pb);
	assert_int_equal(pb->n_sample, 0);
	assert_int_equal(pb->n_location, 0);
	assert_int_equal(pb->n_mapping, 0);
	assert_int_equal(pb->n_function, 0);
}

static void test_unresolved_is_einval(void **state)
{
	struct fixture *f = *state;
	struct profile *p = f->p;
	uint32_t a = add_labeled_proc(p, 7, "a", NULL, NULL);
	const uint64_t s[] = { 0x10010 };

	add_stack(p, a, s, 0, 1, 1);
	assert_int_equal(write_pprof(p, &f->out), -EINVAL);
	assert_int_equal(f->out.len, 0);
}

/* Output is appended after what the buffer already holds. */
static void test_appends(void **state)
{
	struct fixture *f = *state;
	size_t len;
	uint8_t *raw;
	pb_profile *pb;

	build_two_process_profile(f->p);
	buf__put_bytes(&f->out, "XY", 2);
	assert_int_equal(write_pprof(f->p, &f->out), 0);
	assert_memory_equal(f->out.data, "XY", 2);
	raw = gunzip(f->out.data + 2, f->out.len - 2, &len);
	pb = perftools__profiles__profile__unpack(NULL, len, raw);
	free(raw);
	assert_non_null(pb);
	assert_int_equal(pb->n_sample, 4);
	perftools__profiles__profile__free_unpacked(pb, NULL);
}

/*
 * --off-cpu: four sample types, samples/count cpu/nanoseconds
 * off_cpu/nanoseconds off_cpu_blocks/count, cpu the default; a callchain
 * with both kinds carries both in one Sample, one only blocked in has zero
 * CPU values.
 */
static void test_offcpu_sample_types(void **state)
{
	struct fixture *f = *state;
	struct profile *p = f->p;
	uint32_t a = add_labeled_proc(p, 7, "a", NULL, NULL);
	const uint64_t both[] = { 0x10010, 0x10020 };
	const uint64_t blocked[] = { 0xffffffff81000010ULL, 0x10030 };
	const pb_profile *pb;
	bool created;
	size_t i;

	p->offcpu = true;
	add_stack(p, a, both, 0, 2, 3);
	assert_true(profile__add_offcpu(p, a, both, 0, 2, 2, 5000000, &created) >= 0);
	assert_false(created);
	assert_true(profile__add_offcpu(p, a, blocked, 1, 1, 1, 7000000, &created) >= 0);
	assert_true(created);
	assert_int_equal(p->nr_offcpu_blocks, 3);
	assert_int_equal(p->offcpu_ns, 12000000);
	assert_int_equal(p->nr_samples, 3);
	assert_int_equal(profile__resolve_locs(p), 0);
	assert_int_equal(write_pprof(p, &f->out), 0);
	pb = decode(f);
	assert_int_equal(pb->n_sample_type, 4);
	assert_string_equal(str(pb, pb->sample_type[0]->type), "samples");
	assert_string_equal(str(pb, pb->sample_type[1]->type), "cpu");
	assert_string_equal(str(pb, pb->sample_type[2]->type), "off_cpu");
	assert_string_equal(str(pb, pb->sample_type[2]->unit), "nanoseconds");
	assert_string_equal(str(pb, pb->sample_type[3]->type), "off_cpu_blocks");
	assert_string_equal(str(pb, pb->sample_type[3]->unit), "count");
	assert_string_equal(str(pb, pb->default_sample_type), "cpu");
	assert_int_equal(pb->n_sample, 2);
	for (i = 0; i < pb->n_sample; i++) {
		const Perftools__Profiles__Sample *ps = pb->sample[i];

		assert_int_equal(ps->n_value, 4);
		if (ps->n_location_id == 2 &&
		    location(pb, ps->location_id[0])->address == 0x10010) {
			assert_int_equal(ps->value[0], 3);
			assert_int_equal(ps->value[1], 3 * PERIOD_NS);
			assert_int_equal(ps->value[2], 5000000);
			assert_int_equal(ps->value[3], 2);
		} else {
			assert_int_equal(ps->value[0], 0);
			assert_int_equal(ps->value[1], 0);
			assert_int_equal(ps->value[2], 7000000);
			assert_int_equal(ps->value[3], 1);
		}
	}
}

/*
 * write_pprof_procs (--push: one profile per service): only pid 99's stack
 * S2, its two locations, its mapping, its function; the kernel mapping and
 * pid 1234's mappings, locations and functions left out.
 */
static void test_procs_filter(void **state)
{
	struct fixture *f = *state;
	const pb_profile *pb;
	bool keep[2] = { false, true };
	uint64_t total = 0;
	size_t i;

	build_two_process_profile(f->p);
	assert_int_equal(f->p->procs[1].pid, 99);
	assert_int_equal(write_pprof_procs(f->p, keep, &f->out), 0);
	pb = decode(f);
	check_header(pb);
	assert_int_equal(pb->n_sample, 1);
	for (i = 0; i < pb->n_sample; i++)
		total += (uint64_t)pb->sample[i]->value[0];
	assert_int_equal(total, 2);
	assert_int_equal(pb->n_sample_type, 2);
	assert_int_equal(pb->sample[0]->n_location_id, 2);
	for (i = 0; i < pb->sample[0]->n_location_id; i++)
		assert_non_null(location(pb, pb->sample[0]->location_id[i]));
	assert_int_equal(pb->n_location, 2);
	assert_int_equal(pb->n_mapping, 1);
	assert_string_equal(str(pb, pb->mapping[0]->filename), "/usr/bin/app");
	assert_string_equal(str(pb, pb->mapping[0]->build_id), "");
	assert_int_equal(pb->n_function, 1);
	assert_string_equal(str(pb, pb->function[0]->name), "hot");
	/* its labels: pid 99 and its container */
	assert_int_equal(pb->sample[0]->label[0]->num, 99);
	for (i = 0; i < pb->n_string_table; i++)
		assert_string_not_equal(pb->string_table[i], "do_syscall_64");

	/* the other process alone: its 3 stacks, 9 - 2 + 1 (the shared 0x401010 is per process) */
	perftools__profiles__profile__free_unpacked(f->pb, NULL);
	f->pb = NULL;
	f->out.len = 0;
	keep[0] = true;
	keep[1] = false;
	assert_int_equal(write_pprof_procs(f->p, keep, &f->out), 0);
	pb = decode(f);
	assert_int_equal(pb->n_sample, 3);
	assert_int_equal(pb->n_location, 7);
	assert_int_equal(pb->n_mapping, 4); /* app, libc, jit, kernel */
	assert_string_equal(str(pb, pb->mapping[3]->filename), "[kernel.kallsyms]");
	/* NULL keeps all: as write_pprof */
	perftools__profiles__profile__free_unpacked(f->pb, NULL);
	f->pb = NULL;
	f->out.len = 0;
	assert_int_equal(write_pprof_procs(f->p, NULL, &f->out), 0);
	pb = decode(f);
	assert_int_equal(pb->n_sample, 4);
	assert_int_equal(pb->n_location, 9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_two_processes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unused_mappings_left_out, setup, teardown),
		cmocka_unit_test_setup_teardown(test_anonymous_mappings, setup, teardown),
		cmocka_unit_test_setup_teardown(test_leaf_and_return_same_address, setup, teardown),
		cmocka_unit_test_setup_teardown(test_demangled_system_name, setup, teardown),
		cmocka_unit_test_setup_teardown(test_strings_by_content, setup, teardown),
		cmocka_unit_test_setup_teardown(test_empty_profile, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unresolved_is_einval, setup, teardown),
		cmocka_unit_test_setup_teardown(test_appends, setup, teardown),
		cmocka_unit_test_setup_teardown(test_offcpu_sample_types, setup, teardown),
		cmocka_unit_test_setup_teardown(test_procs_filter, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

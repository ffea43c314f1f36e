// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/capture/btf_min.c (include/btf_min.h): a "kernel"
 * BTF and an object's BTF built here with libbpf's writer; the cut keeps
 * the kernel's types named as the object's (a "___flavor" suffix
 * stripped) whole, at the kernel's offsets and sizes, with what they embed,
 * their pointers as pointers to void, and leaves out the rest.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <bpf/btf.h>
#include "btf_min.h"

/*
 * The kernel: struct task (int pid at 0; struct mm *mm at 8; struct sched
 * se at 16, embedding an array long[3]; a 3-bit field at bit 448),
 * struct mm (unsigned long start), struct unrelated, enum state {RUN = 0,
 * STOP = -1}, typedef u32 u32_t.
 */
static struct btf *kernel_btf(void)
{
	struct btf *k = btf__new_empty();
	int i32 = btf__add_int(k, "int", 4, BTF_INT_SIGNED);
	int ul = btf__add_int(k, "unsigned long", 8, 0);
	int u32 = btf__add_int(k, "unsigned int", 4, 0);
	int arr = btf__add_array(k, i32, ul, 3);
	int mm_fwd = btf__add_fwd(k, "mm", BTF_FWD_STRUCT);
	int mm_ptr = btf__add_ptr(k, mm_fwd);
	int sched = btf__add_struct(k, "sched", 24);

	assert_true(i32 > 0 && ul > 0 && u32 > 0 && arr > 0 && mm_ptr > 0 && sched > 0);
	assert_int_equal(btf__add_field(k, "sum", arr, 0, 0), 0);
	assert_true(btf__add_struct(k, "task", 64) > 0);
	assert_int_equal(btf__add_field(k, "pid", i32, 0, 0), 0);
	assert_int_equal(btf__add_field(k, "mm", mm_ptr, 64, 0), 0);
	assert_int_equal(btf__add_field(k, "se", sched, 128, 0), 0);
	assert_int_equal(btf__add_field(k, "flags", u32, 448, 3), 0);
	assert_true(btf__add_struct(k, "mm", 8) > 0);
	assert_int_equal(btf__add_field(k, "start", ul, 0, 0), 0);
	assert_true(btf__add_struct(k, "unrelated", 4) > 0);
	assert_int_equal(btf__add_field(k, "x", i32, 0, 0), 0);
	assert_true(btf__add_enum(k, "state", 4) > 0);
	assert_int_equal(btf__add_enum_value(k, "RUN", 0), 0);
	assert_int_equal(btf__add_enum_value(k, "STOP", -1), 0);
	assert_true(btf__add_typedef(k, "u32_t", u32) > 0);
	return k;
}

/* The object: task___old (a flavor), mm, enum state, typedef u32_t; not unrelated */
static struct btf *local_btf(void)
{
	struct btf *l = btf__new_empty();
	int i32 = btf__add_int(l, "int", 4, BTF_INT_SIGNED);

	assert_true(btf__add_struct(l, "task___old", 4) > 0);
	assert_int_equal(btf__add_field(l, "pid", i32, 0, 0), 0);
	assert_true(btf__add_struct(l, "mm", 0) > 0);
	assert_true(btf__add_enum(l, "state", 4) > 0);
	assert_true(btf__add_typedef(l, "u32_t", i32) > 0);
	assert_true(btf__add_struct(l, "a___b___c", 0) > 0); /* essential name "a___b": none */
	return l;
}

static const struct btf_member *member(const struct btf *b, const struct btf_type *t,
				       const char *name, uint32_t *i)
{
	for (*i = 0; *i < btf_vlen(t); (*i)++)
		if (!strcmp(btf__name_by_offset(b, btf_members(t)[*i].name_off), name))
			return &btf_members(t)[*i];
	fail_msg("no member %s", name);
	return NULL;
}

static void test_cut(void **state)
{
	struct btf *k = kernel_btf(), *l = local_btf(), *cut;
	const struct btf_type *task, *t;
	const struct btf_member *m;
	uint32_t i;
	int id;

	(void)state;
	cut = btf_min__cut(k, l);
	assert_non_null(cut);
	id = btf__find_by_name_kind(cut, "task", BTF_KIND_STRUCT);
	assert_true(id > 0);
	task = btf__type_by_id(cut, id);
	assert_int_equal(task->size, 64);
	assert_int_equal(btf_vlen(task), 4);
	m = member(cut, task, "mm", &i);
	assert_int_equal(btf_member_bit_offset(task, i), 64);
	t = btf__type_by_id(cut, m->type);
	assert_true(btf_is_ptr(t));
	assert_int_equal(t->type, 0); /* a pointer to void */
	m = member(cut, task, "se", &i);
	assert_int_equal(btf_member_bit_offset(task, i), 128);
	t = btf__type_by_id(cut, m->type);
	assert_true(btf_is_struct(t)); /* embedded: whole */
	assert_int_equal(t->size, 24);
	assert_int_equal(btf__resolve_size(cut, btf_members(t)[0].type), 24);
	member(cut, task, "flags", &i);
	assert_int_equal(btf_member_bit_offset(task, i), 448);
	assert_int_equal(btf_member_bitfield_size(task, i), 3);
	assert_true(btf__find_by_name_kind(cut, "mm", BTF_KIND_STRUCT) > 0);
	id = btf__find_by_name_kind(cut, "state", BTF_KIND_ENUM);
	assert_true(id > 0);
	t = btf__type_by_id(cut, id);
	assert_int_equal(btf_vlen(t), 2);
	assert_int_equal((int32_t)btf_enum(t)[1].val, -1);
	assert_true(btf__find_by_name_kind(cut, "u32_t", BTF_KIND_TYPEDEF) > 0);
	assert_true(btf__find_by_name_kind(cut, "unrelated", BTF_KIND_STRUCT) < 0);
	/* the pointee's forward declaration is not kept: the pointer ends there */
	assert_true(btf__find_by_name_kind(cut, "mm", BTF_KIND_FWD) < 0);
	assert_int_equal(btf__pointer_size(cut), 8);
	btf__free(cut);
	btf__free(l);
	btf__free(k);
}

/* A cut round-trips through its raw bytes (what core_btf.c writes, libbpf reads) */
static void test_raw_roundtrip(void **state)
{
	struct btf *k = kernel_btf(), *l = local_btf(), *cut, *back;
	const void *raw;
	uint32_t size;

	(void)state;
	cut = btf_min__cut(k, l);
	assert_non_null(cut);
	raw = btf__raw_data(cut, &size);
	assert_non_null(raw);
	back = btf__new(raw, size);
	assert_non_null(back);
	assert_int_equal(btf__type_cnt(back), btf__type_cnt(cut));
	assert_true(btf__find_by_name_kind(back, "task", BTF_KIND_STRUCT) > 0);
	btf__free(back);
	btf__free(cut);
	btf__free(l);
	btf__free(k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cut),
		cmocka_unit_test(test_raw_roundtrip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

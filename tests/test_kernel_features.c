// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/capture/kernel_features.c (include/kernel_features.h):
 * the BPF variant chosen for each set of kernel features (Debian 11's 5.10,
 * Ubuntu 22.04's 5.15, Debian 12's 6.1, 6.18, 7.x, and a kernel below the
 * floor), the task work kfunc told from BTF built here byte by byte with
 * libbpf's BTF writer in the shapes 6.18 and 7.x declare it, the upstream
 * version read from Debian's and Ubuntu's version strings, and the kernels
 * with the copy_from_user_nofault NMI bug.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <bpf/btf.h>
#include "kernel_features.h"

#define KV(a, b, c) ((a) << 16 | (b) << 8 | (c))

/* Debian 11's 5.10: BTF, ring buffer, bpf_get_task_stack; none of the 5.11+ helpers */
static struct kernel_features k510(void)
{
	struct kernel_features f = { .release = "5.10.0-46-amd64", .version = KV(5, 10, 255),
				     .btf = true, .ringbuf = true, .get_task_stack = true };
	return f;
}

/* Ubuntu 22.04's 5.15: everything but bpf_loop */
static struct kernel_features k515(void)
{
	struct kernel_features f = k510();

	f.version = KV(5, 15, 131);
	f.task_storage = f.current_task_btf = f.task_pt_regs = true;
	return f;
}

static struct kernel_features k61(void)
{
	struct kernel_features f = k515();

	f.version = KV(6, 1, 192);
	f.bpf_loop = true;
	return f;
}

static size_t choose(const struct kernel_features *f, bool offcpu, enum bpf_variant *out,
		     char *why)
{
	return kernel_features__choose(f, offcpu, out, why, 256);
}

static void test_choose_510_legacy(void **state)
{
	struct kernel_features f = k510();
	enum bpf_variant v[BPF_VARIANT_NR];
	char why[256], msg[256];

	assert_null(kernel_features__missing(&f, msg, sizeof(msg)));
	assert_int_equal(choose(&f, false, v, why), 1);
	assert_int_equal(v[0], BPF_VARIANT_LEGACY);
	assert_non_null(strstr(why, "no bpf_loop (5.17)"));
	/* --off-cpu changes nothing: no task storage, no task work */
	assert_int_equal(choose(&f, true, v, why), 1);
	assert_int_equal(v[0], BPF_VARIANT_LEGACY);
}

static void test_choose_515_legacy(void **state)
{
	struct kernel_features f = k515();
	enum bpf_variant v[BPF_VARIANT_NR];
	char why[256];

	assert_int_equal(choose(&f, true, v, why), 1);
	assert_int_equal(v[0], BPF_VARIANT_LEGACY);
	assert_non_null(strstr(why, "bpf_loop"));
}

/* a RHEL-style backport: bpf_loop without bpf_task_pt_regs is still legacy, and says why */
static void test_choose_partial_backport(void **state)
{
	struct kernel_features f = k61();
	enum bpf_variant v[BPF_VARIANT_NR];
	char why[256];

	f.task_pt_regs = false;
	assert_int_equal(choose(&f, false, v, why), 1);
	assert_int_equal(v[0], BPF_VARIANT_LEGACY);
	assert_non_null(strstr(why, "bpf_task_pt_regs (5.15)"));
}

static void test_choose_61_modern(void **state)
{
	struct kernel_features f = k61();
	enum bpf_variant v[BPF_VARIANT_NR];
	char why[256];

	assert_int_equal(choose(&f, true, v, why), 2);
	assert_int_equal(v[0], BPF_VARIANT_MODERN);
	assert_int_equal(v[1], BPF_VARIANT_LEGACY);
	assert_non_null(strstr(why, "sys_exit"));
}

static void test_choose_task_work(void **state)
{
	struct kernel_features f = k61();
	enum bpf_variant v[BPF_VARIANT_NR];
	char why[256];

	f.task_work = FEATURES_TASK_WORK_IMPL; /* 6.18 */
	assert_int_equal(choose(&f, true, v, why), 3);
	assert_int_equal(v[0], BPF_VARIANT_TASK_WORK);
	assert_int_equal(v[1], BPF_VARIANT_MODERN);
	assert_int_equal(v[2], BPF_VARIANT_LEGACY);
	/* without --off-cpu the kfunc is not worth a risk */
	assert_int_equal(choose(&f, false, v, why), 2);
	assert_int_equal(v[0], BPF_VARIANT_MODERN);

	f.task_work = FEATURES_TASK_WORK_PLAIN; /* 7.x */
	assert_int_equal(choose(&f, true, v, why), 3);
	assert_int_equal(v[0], BPF_VARIANT_TASK_WORK7);
	assert_non_null(strstr(why, "7.x"));
}

static void test_missing(void **state)
{
	struct kernel_features f = k510();
	char msg[256];

	f.get_task_stack = false; /* 5.8 */
	assert_non_null(kernel_features__missing(&f, msg, sizeof(msg)));
	assert_non_null(strstr(msg, "kernel 5.10.0-46-amd64 lacks bpf_get_task_stack (Linux 5.9)"));
	assert_non_null(strstr(msg, "5.10 or later"));
	f = k510();
	f.btf = false;
	assert_non_null(kernel_features__missing(&f, msg, sizeof(msg)));
	assert_non_null(strstr(msg, "CONFIG_DEBUG_INFO_BTF"));
	f = k510();
	f.ringbuf = false;
	assert_non_null(kernel_features__missing(&f, msg, sizeof(msg)));
	assert_non_null(strstr(msg, "BPF_MAP_TYPE_RINGBUF"));
}

static void test_variant_names(void **state)
{
	enum bpf_variant v;
	int i;

	for (i = 0; i < BPF_VARIANT_NR; i++) {
		assert_int_equal(kernel_features__variant_from_name(kernel_features__variant_name(i), &v),
				 0);
		assert_int_equal(v, i);
	}
	assert_int_equal(kernel_features__variant_from_name("fast", &v), -EINVAL);
	assert_null(kernel_features__variant_name(BPF_VARIANT_NR));
}

/*
 * A kernel BTF with struct task_struct, struct bpf_task_work, struct
 * bpf_prog_aux and the task work kfuncs in the given shapes: impl_last_void
 * (6.18's `void *aux__prog`) or a `struct bpf_prog_aux *` (7.x), and the
 * plain 4-argument name or not.
 */
static struct btf *kernel_btf(bool impl, bool impl_last_void, bool plain)
{
	struct btf *btf = btf__new_empty();
	int i32, task, tw, aux, p_task, p_tw, p_void, p_aux, cb_proto, p_cb, proto;

	assert_non_null(btf);
	i32 = btf__add_int(btf, "int", 4, BTF_INT_SIGNED);
	task = btf__add_struct(btf, "task_struct", 8);
	tw = btf__add_struct(btf, "bpf_task_work", 8);
	aux = btf__add_struct(btf, "bpf_prog_aux", 8);
	p_task = btf__add_ptr(btf, task);
	p_tw = btf__add_ptr(btf, tw);
	p_void = btf__add_ptr(btf, 0);
	p_aux = btf__add_ptr(btf, aux);
	cb_proto = btf__add_func_proto(btf, i32);
	btf__add_func_param(btf, "map", p_void);
	btf__add_func_param(btf, "key", p_void);
	btf__add_func_param(btf, "value", p_void);
	p_cb = btf__add_ptr(btf, cb_proto);
	if (impl) {
		proto = btf__add_func_proto(btf, i32);
		btf__add_func_param(btf, "task", p_task);
		btf__add_func_param(btf, "tw", p_tw);
		btf__add_func_param(btf, "map__map", p_void);
		btf__add_func_param(btf, "callback", p_cb);
		btf__add_func_param(btf, impl_last_void ? "aux__prog" : "aux",
				    impl_last_void ? p_void : p_aux);
		assert_true(btf__add_func(btf, "bpf_task_work_schedule_resume_impl",
					  BTF_FUNC_GLOBAL, proto) > 0);
	}
	if (plain) {
		proto = btf__add_func_proto(btf, i32);
		btf__add_func_param(btf, "task", p_task);
		btf__add_func_param(btf, "tw", p_tw);
		btf__add_func_param(btf, "map__map", p_void);
		btf__add_func_param(btf, "callback", p_cb);
		assert_true(btf__add_func(btf, "bpf_task_work_schedule_resume", BTF_FUNC_GLOBAL,
					  proto) > 0);
	}
	return btf;
}

static void test_task_work_from_btf(void **state)
{
	struct btf *btf;

	assert_int_equal(kernel_features__task_work_from_btf(NULL), FEATURES_TASK_WORK_NONE);
	btf = kernel_btf(false, false, false); /* before 6.18 */
	assert_int_equal(kernel_features__task_work_from_btf(btf), FEATURES_TASK_WORK_NONE);
	btf__free(btf);
	btf = kernel_btf(true, true, false); /* 6.18 */
	assert_int_equal(kernel_features__task_work_from_btf(btf), FEATURES_TASK_WORK_IMPL);
	btf__free(btf);
	btf = kernel_btf(true, false, true); /* 7.x: _impl kept in BTF, address on the plain name */
	assert_int_equal(kernel_features__task_work_from_btf(btf), FEATURES_TASK_WORK_PLAIN);
	btf__free(btf);
	/* 7.x's _impl alone (no plain name) is not 6.18's: it has no address */
	btf = kernel_btf(true, false, false);
	assert_int_equal(kernel_features__task_work_from_btf(btf), FEATURES_TASK_WORK_NONE);
	btf__free(btf);
}

static void test_kernel_version(void **state)
{
	/* Debian: uname -r is the ABI, uname -v has the release */
	assert_int_equal(kernel_features__kernel_version(
				 "6.1.0-56-amd64",
				 "#1 SMP PREEMPT_DYNAMIC Debian 6.1.192-2 (2025-10-01)", NULL),
			 KV(6, 1, 192));
	assert_int_equal(kernel_features__kernel_version("6.1.0-9-amd64",
							 "#1 SMP PREEMPT_DYNAMIC Debian 6.1.27-1", NULL),
			 KV(6, 1, 27));
	/* Ubuntu: /proc/version_signature's last word */
	assert_int_equal(kernel_features__kernel_version("5.15.0-91-generic", "#101-Ubuntu SMP",
							 "Ubuntu 5.15.0-91.101-generic 5.15.131"),
			 KV(5, 15, 131));
	/* others: uname -r; sublevels above 255 are capped, as KERNEL_VERSION does */
	assert_int_equal(kernel_features__kernel_version("6.18.44-fc-v782", "#1 SMP", NULL),
			 KV(6, 18, 44));
	assert_int_equal(kernel_features__kernel_version("5.4.300", NULL, NULL), KV(5, 4, 255));
	assert_int_equal(kernel_features__kernel_version("7.3", NULL, NULL), KV(7, 3, 0));
	assert_int_equal(kernel_features__kernel_version("garbage", "Debian x", "y"), 0);
	assert_int_equal(kernel_features__kernel_version(NULL, NULL, NULL), 0);
}

static void test_nmi_uaccess(void **state)
{
	assert_false(kernel_features__nmi_uaccess_unsafe(KV(5, 10, 255)));
	assert_false(kernel_features__nmi_uaccess_unsafe(KV(5, 18, 19)));
	assert_true(kernel_features__nmi_uaccess_unsafe(KV(5, 19, 0)));
	assert_true(kernel_features__nmi_uaccess_unsafe(KV(6, 1, 27)));
	assert_true(kernel_features__nmi_uaccess_unsafe(KV(6, 1, 35)));
	assert_false(kernel_features__nmi_uaccess_unsafe(KV(6, 1, 36)));
	assert_false(kernel_features__nmi_uaccess_unsafe(KV(6, 1, 192)));
	assert_true(kernel_features__nmi_uaccess_unsafe(KV(6, 3, 13)));
	assert_false(kernel_features__nmi_uaccess_unsafe(KV(6, 4, 0)));
	assert_false(kernel_features__nmi_uaccess_unsafe(KV(6, 12, 118)));
	assert_false(kernel_features__nmi_uaccess_unsafe(0)); /* unknown */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_choose_510_legacy),
		cmocka_unit_test(test_choose_515_legacy),
		cmocka_unit_test(test_choose_partial_backport),
		cmocka_unit_test(test_choose_61_modern),
		cmocka_unit_test(test_choose_task_work),
		cmocka_unit_test(test_missing),
		cmocka_unit_test(test_variant_names),
		cmocka_unit_test(test_task_work_from_btf),
		cmocka_unit_test(test_kernel_version),
		cmocka_unit_test(test_nmi_uaccess),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

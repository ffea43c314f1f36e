// SPDX-License-Identifier: MIT
/*
 * Kernel feature probes and the BPF variant chosen for them
 * (include/kernel_features.h). As bcc's libbpf-tools do, features are probed with
 * libbpf (a program or map the kernel either takes or refuses) rather than
 * read off the version; kfuncs and their prototypes come from the kernel's
 * BTF, as libbpf resolves them at load.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "kernel_features.h"

static const char *const variant_names[BPF_VARIANT_NR] = {
	[BPF_VARIANT_MODERN] = "modern",
	[BPF_VARIANT_TASK_WORK] = "task-work",
	[BPF_VARIANT_TASK_WORK7] = "task-work-7",
	[BPF_VARIANT_LEGACY] = "legacy",
};

const char *kernel_features__variant_name(enum bpf_variant v)
{
	return (unsigned int)v < BPF_VARIANT_NR ? variant_names[v] : NULL;
}

int kernel_features__variant_from_name(const char *name, enum bpf_variant *v)
{
	int i;

	for (i = 0; i < BPF_VARIANT_NR; i++) {
		if (!strcmp(name, variant_names[i])) {
			*v = i;
			return 0;
		}
	}
	return -EINVAL;
}

/* A helper callable from perf_event programs (where every helper bpfprof needs is also callable). */
static bool has_helper(enum bpf_func_id id)
{
	return libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, id, NULL) > 0;
}

/* The FUNC_PROTO of kernel function name in btf, or NULL. */
static const struct btf_type *func_proto(const struct btf *btf, const char *name)
{
	int id = btf__find_by_name_kind(btf, name, BTF_KIND_FUNC);
	const struct btf_type *t;

	if (id <= 0)
		return NULL;
	t = btf__type_by_id(btf, btf__type_by_id(btf, id)->type);
	return t && btf_is_func_proto(t) ? t : NULL;
}

enum features_task_work kernel_features__task_work_from_btf(const struct btf *btf)
{
	const struct btf_type *proto, *arg;

	if (!btf)
		return FEATURES_TASK_WORK_NONE;
	proto = func_proto(btf, "bpf_task_work_schedule_resume");
	if (proto && btf_vlen(proto) == 4)
		return FEATURES_TASK_WORK_PLAIN;
	proto = func_proto(btf, "bpf_task_work_schedule_resume_impl");
	if (!proto || btf_vlen(proto) != 5)
		return FEATURES_TASK_WORK_NONE;
	/* 6.18's `void *aux__prog`; 7.x's `struct bpf_prog_aux *aux` has no address */
	arg = btf__type_by_id(btf, btf_params(proto)[4].type);
	if (arg && btf_is_ptr(arg) && arg->type == 0)
		return FEATURES_TASK_WORK_IMPL;
	return FEATURES_TASK_WORK_NONE;
}

/* "a.b.c" at the start of s into KERNEL_VERSION, or 0 */
static uint32_t parse_version(const char *s)
{
	unsigned int a, b, c = 0;

	if (!s || sscanf(s, "%u.%u.%u", &a, &b, &c) < 2 || a > 255 || b > 255)
		return 0;
	return a << 16 | b << 8 | (c > 255 ? 255 : c);
}

uint32_t kernel_features__kernel_version(const char *release, const char *uname_version,
				  const char *version_signature)
{
	const char *p;
	uint32_t v;

	if (version_signature) {
		/* "Ubuntu 5.15.0-91.101-generic 5.15.131" */
		p = strrchr(version_signature, ' ');
		v = parse_version(p ? p + 1 : version_signature);
		if (v)
			return v;
	}
	if (uname_version && (p = strstr(uname_version, "Debian "))) {
		v = parse_version(p + strlen("Debian "));
		if (v)
			return v;
	}
	return parse_version(release);
}

static void read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");

	buf[0] = '\0';
	if (!f)
		return;
	if (!fgets(buf, (int)size, f))
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

int kernel_features__probe(struct kernel_features *f)
{
	struct utsname u;
	char sig[256];

	memset(f, 0, sizeof(*f));
	read_line("/proc/version_signature", sig, sizeof(sig));
	if (!uname(&u)) {
		snprintf(f->release, sizeof(f->release), "%s", u.release);
		f->version = kernel_features__kernel_version(u.release, u.version, sig[0] ? sig : NULL);
	}
	f->btf = !access("/sys/kernel/btf/vmlinux", R_OK);
	f->ringbuf = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) > 0;
	f->task_storage = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, NULL) > 0;
	f->get_task_stack = has_helper(BPF_FUNC_get_task_stack);
	f->bpf_loop = has_helper(BPF_FUNC_loop);
	f->current_task_btf = has_helper(BPF_FUNC_get_current_task_btf);
	f->task_pt_regs = has_helper(BPF_FUNC_task_pt_regs);
	f->task_work = FEATURES_TASK_WORK_NONE;
	return 0;
}

void kernel_features__probe_task_work(struct kernel_features *f)
{
	struct btf *btf = f->btf ? btf__load_vmlinux_btf() : NULL;

	f->task_work = kernel_features__task_work_from_btf(btf);
	btf__free(btf);
}

const char *kernel_features__missing(const struct kernel_features *f, char *msg, size_t size)
{
	const char *what = NULL;

	if (!f->btf)
		what = "BTF (/sys/kernel/btf/vmlinux, CONFIG_DEBUG_INFO_BTF=y), which CO-RE needs";
	else if (!f->ringbuf)
		what = "the BPF ring buffer (BPF_MAP_TYPE_RINGBUF, Linux 5.8)";
	else if (!f->get_task_stack)
		what = "bpf_get_task_stack (Linux 5.9)";
	if (!what)
		return NULL;
	snprintf(msg, size,
		 "kernel %s lacks %s: bpfprof needs Linux 5.10 or later, or a kernel with these "
		 "backported",
		 f->release[0] ? f->release : "(unknown)", what);
	return msg;
}

size_t kernel_features__choose(const struct kernel_features *f, bool offcpu, enum bpf_variant *out,
			char *why, size_t size)
{
	const char *lack = !f->bpf_loop ? "bpf_loop (5.17)" :
			   !f->task_storage ? "task storage (5.13)" :
			   !f->current_task_btf ? "bpf_get_current_task_btf (5.11)" :
			   !f->task_pt_regs ? "bpf_task_pt_regs (5.15)" :
					      NULL;
	size_t n = 0;

	if (lack) {
		snprintf(why, size,
			 "no %s: bounded loops, a hash map of blocked threads and CO-RE reads of the "
			 "task instead",
			 lack);
		out[n++] = BPF_VARIANT_LEGACY;
		return n;
	}
	if (offcpu && f->task_work == FEATURES_TASK_WORK_PLAIN) {
		snprintf(why, size,
			 "bpf_loop and task storage; off-CPU user stacks as task work "
			 "(bpf_task_work_schedule_resume, 7.x)");
		out[n++] = BPF_VARIANT_TASK_WORK7;
	} else if (offcpu && f->task_work == FEATURES_TASK_WORK_IMPL) {
		snprintf(why, size,
			 "bpf_loop and task storage; off-CPU user stacks as task work "
			 "(bpf_task_work_schedule_resume_impl, 6.18)");
		out[n++] = BPF_VARIANT_TASK_WORK;
	} else {
		snprintf(why, size, "bpf_loop and task storage%s", offcpu ?
			 "; no task work kfunc: off-CPU user stacks at sys_exit" : "");
	}
	out[n++] = BPF_VARIANT_MODERN;
	out[n++] = BPF_VARIANT_LEGACY;
	return n;
}

bool kernel_features__nmi_uaccess_unsafe(uint32_t version)
{
	if (version >= (6u << 16 | 1 << 8) && version < (6u << 16 | 2 << 8))
		return (version & 0xff) < 36; /* 6.1.36 has the fix */
	return version >= (5u << 16 | 19 << 8) && version < (6u << 16 | 4 << 8);
}

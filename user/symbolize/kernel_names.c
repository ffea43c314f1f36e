// SPDX-License-Identifier: MIT
/* Kernel frames' names by the kernel's lookup (include/kernel_names.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "kernel_names.h"
#include "kernel_names_abi.h"
#include "kernel_names.skel.h"

struct kernel_names {
	struct kernel_names_bpf *skel;
	uint64_t text, etext, einittext; /* the kernel image's _text, _etext, _einittext */
};

static int run(const struct bpf_program *prog)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	int err = bpf_prog_test_run_opts(bpf_program__fd(prog), &opts);

	if (err)
		return err;
	return opts.retval ? -ENOENT : 0;
}

/* libbpf's warnings while probing: a refusal here only means "read /proc/kallsyms" */
static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

struct kernel_names *kernel_names__open(void)
{
	struct kernel_names *kn = calloc(1, sizeof(*kn));
	libbpf_print_fn_t old;
	int err = -ENOMEM;

	if (!kn)
		goto fail;
	old = libbpf_set_print(quiet);
	kn->skel = kernel_names_bpf__open_and_load();
	libbpf_set_print(old);
	if (!kn->skel) {
		err = -errno;
		goto fail;
	}
	err = run(kn->skel->progs.text_bounds);
	if (err)
		goto fail;
	kn->text = kn->skel->bss->text;
	kn->etext = kn->skel->bss->etext;
	kn->einittext = kn->skel->bss->einittext;
	if (kn->einittext < kn->etext) /* init text before the rest: the image ends at _etext */
		kn->einittext = kn->etext;
	if (!kn->text || kn->etext <= kn->text) {
		err = -ENOENT;
		goto fail;
	}
	return kn;
fail:
	kernel_names__close(kn);
	errno = -err;
	return NULL;
}

void kernel_names__close(struct kernel_names *kn)
{
	if (!kn)
		return;
	kernel_names_bpf__destroy(kn->skel);
	free(kn);
}

void kernel_names__text_bounds(const struct kernel_names *kn, uint64_t *text, uint64_t *etext)
{
	*text = kn->text;
	*etext = kn->etext;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

bool kernel_names__parse(char *s, uint64_t addr, uint64_t text, uint64_t image_end,
			 struct kernel_sym *sym)
{
	char *plus, *bracket, *end;
	uint64_t off;

	sym->module = NULL;
	bracket = strstr(s, " [");
	if (bracket) {
		end = strchr(bracket, ']');
		if (!end)
			return false;
		*end = '\0';
		*bracket = '\0';
		sym->module = bracket + 2;
	}
	plus = strrchr(s, '+');
	if (!plus || plus == s || strncmp(plus, "+0x", 3))
		return false;
	errno = 0;
	off = strtoull(plus + 3, &end, 16);
	if (errno || *end != '/' || off > addr)
		return false;
	*plus = '\0';
	sym->name = s;
	sym->start = addr - off;
	/* JITed programs, trampolines, dispatchers: [bpf] in /proc/kallsyms */
	if (!sym->module && (sym->start < text || sym->start >= image_end) &&
	    !strncmp(s, "bpf_", 4))
		sym->module = "bpf";
	return true;
}

int kernel_names__kallsyms_text(struct kernel_names *kn, const uint64_t *addrs, size_t n,
				char **text, size_t *len)
{
	struct kernel_names_bpf__bss *bss = kn->skel->bss;
	uint64_t *sorted = NULL, last_start = 0;
	char *buf = NULL;
	size_t size = 0, i, u = 0;
	FILE *f;
	int err = 0;

	*text = NULL;
	*len = 0;
	if (n) {
		sorted = malloc(n * sizeof(*sorted));
		if (!sorted)
			return -ENOMEM;
		memcpy(sorted, addrs, n * sizeof(*sorted));
		qsort(sorted, n, sizeof(*sorted), cmp_u64);
		for (i = 0; i < n; i++)
			if (!u || sorted[i] != sorted[u - 1])
				sorted[u++] = sorted[i];
	}
	f = open_memstream(&buf, &size);
	if (!f) {
		free(sorted);
		return -ENOMEM;
	}
	for (i = 0; i < u && !err; i += KNAMES_BATCH) {
		size_t b = u - i < KNAMES_BATCH ? u - i : KNAMES_BATCH;

		memcpy(bss->addrs, sorted + i, b * sizeof(*sorted));
		bss->nr = b;
		err = run(kn->skel->progs.name_addrs);
		for (size_t j = 0; j < b && !err; j++) {
			struct kernel_sym sym;

			if (bss->lens[j] < 0 || bss->lens[j] > KNAMES_LEN) {
				err = bss->lens[j] < 0 ? bss->lens[j] : -ENAMETOOLONG;
				break;
			}
			if (!kernel_names__parse(bss->names[j], sorted[i + j], kn->text,
						 kn->einittext, &sym) ||
			    sym.start == last_start)
				continue;
			last_start = sym.start;
			if (sym.module)
				fprintf(f, "%016" PRIx64 " T %s\t[%s]\n", sym.start, sym.name,
					sym.module);
			else
				fprintf(f, "%016" PRIx64 " T %s\n", sym.start, sym.name);
		}
	}
	free(sorted);
	if (fclose(f))
		err = err ?: -ENOMEM;
	if (err) {
		free(buf);
		return err;
	}
	*text = buf;
	*len = size;
	return 0;
}

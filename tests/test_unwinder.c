// SPDX-License-Identifier: MIT
/*
 * Unit tests of user/unwind/unwinder.c through a fake sink standing in for the BPF
 * maps: the LPM keys cover each executable mapping exactly, a lookup done as
 * the BPF walker does (longest prefix, then row pc = address - bias) finds
 * the same rule as the file's own table at the ELF address, tables are
 * shared and freed with their last user, and a full row array degrades to
 * frame pointers. The process under test is this test itself (a PIE, libc).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <endian.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <libelf.h>
#include <link.h>
#include <sys/auxv.h>
#include "unwind_table.h"
#include "unwinder.h"

#define MAX_ENTRIES 4096
#define MAX_TABLES 64

struct fake {
	struct {
		struct bpfprof_unwind_key k;
		struct bpfprof_unwind_mapping v;
	} e[MAX_ENTRIES];
	int nr;
	struct bpfprof_unwind_table tables[MAX_TABLES];
	int procs_ready; /* set_proc(ready) calls */
	int procs_gone;
	struct bpfprof_unwind_row *rows;
};

static int fake_set_mapping(void *ctx, const struct bpfprof_unwind_key *k,
			    const struct bpfprof_unwind_mapping *v)
{
	struct fake *f = ctx;

	for (int i = 0; i < f->nr; i++)
		if (!memcmp(&f->e[i].k, k, sizeof(*k))) {
			f->e[i].v = *v;
			return 0;
		}
	if (f->nr >= MAX_ENTRIES)
		return -E2BIG;
	f->e[f->nr].k = *k;
	f->e[f->nr].v = *v;
	f->nr++;
	return 0;
}

static int fake_del_mapping(void *ctx, const struct bpfprof_unwind_key *k)
{
	struct fake *f = ctx;

	for (int i = 0; i < f->nr; i++)
		if (!memcmp(&f->e[i].k, k, sizeof(*k))) {
			f->e[i] = f->e[--f->nr];
			return 0;
		}
	return -ENOENT;
}

static int fake_set_table(void *ctx, uint32_t id, const struct bpfprof_unwind_table *t)
{
	struct fake *f = ctx;

	assert_true(id < MAX_TABLES);
	f->tables[id] = *t;
	return 0;
}

static int fake_write_rows(void *ctx, uint32_t first, const struct bpfprof_unwind_row *rows,
			   uint32_t n)
{
	struct fake *f = ctx;

	memcpy(&f->rows[first], rows, (size_t)n * sizeof(*rows));
	return 0;
}

static int fake_set_proc(void *ctx, uint32_t tgid, bool ready)
{
	struct fake *f = ctx;

	if (ready)
		__atomic_add_fetch(&f->procs_ready, 1, __ATOMIC_SEQ_CST);
	else
		f->procs_gone++;
	return 0;
}

static struct unwinder *new_unwinder(struct fake *f, uint32_t max_rows)
{
	struct unwind_sink sink = {
		.set_mapping = fake_set_mapping,
		.del_mapping = fake_del_mapping,
		.set_table = fake_set_table,
		.set_proc = fake_set_proc,
		.write_rows = fake_write_rows,
		.max_rows = max_rows,
		.max_tables = MAX_TABLES,
		.ctx = f,
	};

	memset(f, 0, sizeof(*f));
	f->rows = calloc(max_rows, sizeof(*f->rows));
	assert_non_null(f->rows);
	return unwinder__new(&sink, true, "/proc");
}

/* The BPF walker's lookup: longest matching prefix for (tgid, addr). */
static const struct bpfprof_unwind_mapping *lpm_lookup(const struct fake *f, uint32_t tgid,
						       uint64_t addr)
{
	const struct bpfprof_unwind_mapping *best = NULL;
	uint32_t best_len = 0;

	for (int i = 0; i < f->nr; i++) {
		const struct bpfprof_unwind_key *k = &f->e[i].k;
		uint32_t bits = k->prefixlen - 32;
		uint64_t start = be64toh(k->addr), mask = bits ? ~0ULL << (64 - bits) : 0;

		if (ntohl(k->tgid) != tgid || (addr & mask) != start || k->prefixlen <= best_len)
			continue;
		best = &f->e[i].v;
		best_len = k->prefixlen;
	}
	return best;
}

/* The rule as the BPF walker finds it: binary search of the table's rows */
static uint32_t bpf_rule(const struct fake *f, const struct bpfprof_unwind_mapping *m,
			 uint64_t addr)
{
	const struct bpfprof_unwind_table *t;
	uint64_t rel = addr - m->bias;
	uint32_t l = 0, r;

	if (m->table == BPFPROF_UNWIND_NO_TABLE)
		return BPFPROF_UNWIND_NONE;
	t = &f->tables[m->table];
	if (!t->nr_rows || rel > 0xffffffffULL || f->rows[t->first_row].pc > rel)
		return BPFPROF_UNWIND_NONE;
	r = t->nr_rows;
	while (r - l > 1) {
		uint32_t mid = l + (r - l) / 2;

		if (f->rows[t->first_row + mid].pc <= rel)
			l = mid;
		else
			r = mid;
	}
	return f->rows[t->first_row + l].rule;
}

static void test_lpm_keys(void **state)
{
	struct bpfprof_unwind_key k[128];
	uint64_t starts[] = { 0x1000, 0x7f0000001000ULL, 0x555555554000ULL };
	uint64_t lens[] = { 0x4000, 0x1c5000, 0x1000 };

	for (size_t t = 0; t < 3; t++) {
		uint64_t at = starts[t];
		int n = unwinder__lpm_keys(42, starts[t], starts[t] + lens[t], k, 128);

		assert_true(n > 0);
		for (int i = 0; i < n; i++) {
			uint32_t bits = k[i].prefixlen - 32;
			uint64_t size = 1ULL << (64 - bits);

			/* contiguous, aligned, inside the range */
			assert_int_equal(ntohl(k[i].tgid), 42);
			assert_int_equal(be64toh(k[i].addr), at);
			assert_int_equal(at & (size - 1), 0);
			at += size;
		}
		assert_int_equal(at, starts[t] + lens[t]);
	}
	/* 0x1000-0x5000: 0x1000/4K, 0x2000/8K, 0x4000/4K */
	assert_int_equal(unwinder__lpm_keys(1, 0x1000, 0x5000, k, 128), 3);
	assert_int_equal(unwinder__lpm_keys(1, 0x1000, 0x5000, k, 2), -E2BIG);
}

static int this_function_is_hot(int x)
{
	return x * 3 + 1;
}

/* Every executable mapping of this process is covered; the rules match the files' own tables. */
static void test_load_self(void **state)
{
	struct fake *f = calloc(1, sizeof(*f));
	struct unwinder *u = new_unwinder(f, 1 << 20);
	struct unwinder_stats st;
	uint64_t addrs[] = { (uint64_t)(uintptr_t)this_function_is_hot,
			     (uint64_t)(uintptr_t)test_load_self, (uint64_t)(uintptr_t)fopen,
			     (uint64_t)(uintptr_t)qsort };
	int checked = 0;

	assert_non_null(u);
	assert_int_equal(unwinder__load_pid(u, getpid()), 0);
	assert_int_equal(f->procs_ready, 1);
	unwinder__stats(u, &st);
	assert_true(st.nr_built >= 2); /* this test and libc at least */
	assert_true(st.nr_rows > 1000);

	for (size_t i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
		const struct bpfprof_unwind_mapping *m = lpm_lookup(f, getpid(), addrs[i]);
		Dl_info info;
		struct link_map *lm;
		struct unwind_table *t;
		int fd;
		Elf *elf;

		assert_non_null(m);
		assert_int_not_equal(m->table, BPFPROF_UNWIND_NO_TABLE);
		/* the file's own table at the ELF virtual address (load bias from the dynamic linker) */
		assert_true(
			dladdr1((void *)(uintptr_t)addrs[i], &info, (void **)&lm, RTLD_DL_LINKMAP));
		fd = open(info.dli_fname[0] ? info.dli_fname : "/proc/self/exe", O_RDONLY);
		assert_true(fd >= 0);
		elf_version(EV_CURRENT);
		elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
		assert_int_equal(unwind_table__build(elf, info.dli_fname, &t), 0);
		for (uint64_t a = addrs[i]; a < addrs[i] + 64; a++) {
			assert_int_equal(bpf_rule(f, m, a),
					 unwind_table__lookup(t, a - lm->l_addr));
			checked++;
		}
		unwind_table__free(t);
		elf_end(elf);
		close(fd);
	}
	assert_int_equal(checked, 4 * 64);
	/* the vDSO has a table too, from bpfprof's own copy of the image */
	{
		const struct bpfprof_unwind_mapping *m =
			lpm_lookup(f, getpid(), (uint64_t)getauxval(AT_SYSINFO_EHDR) + 0x800);

		assert_non_null(m);
		assert_int_not_equal(m->table, BPFPROF_UNWIND_NO_TABLE);
	}

	/* the same process again: nothing built anew, same entries */
	{
		uint64_t built = st.nr_built;
		int nr = f->nr;

		assert_int_equal(unwinder__load_pid(u, getpid()), 0);
		unwinder__stats(u, &st);
		assert_int_equal(st.nr_built, built);
		assert_int_equal(f->nr, nr);
	}
	/* forgotten: entries gone, tables freed */
	unwinder__forget(u, getpid());
	assert_int_equal(f->nr, 0);
	assert_int_equal(f->procs_gone, 1);
	unwinder__stats(u, &st);
	assert_int_equal(st.nr_tables, 0);
	assert_int_equal(st.nr_rows, 0);
	for (int i = 0; i < MAX_TABLES; i++)
		assert_int_equal(f->tables[i].nr_rows, 0);
	unwinder__free(u);
	free(f->rows);
	free(f);
}

/* A row array too small for any table: every mapping walks by frame pointers, with a warning. */
static void test_full(void **state)
{
	struct fake *f = calloc(1, sizeof(*f));
	struct unwinder *u = new_unwinder(f, 100);
	struct unwinder_stats st;

	assert_int_equal(unwinder__load_pid(u, getpid()), 0);
	unwinder__stats(u, &st);
	assert_true(st.nr_full >= 1);
	assert_true(st.nr_rows <= 100); /* only what fits: the vDSO's few rows */
	assert_true(f->nr > 0);
	assert_int_equal(lpm_lookup(f, getpid(), (uint64_t)(uintptr_t)this_function_is_hot)->table,
			 BPFPROF_UNWIND_NO_TABLE);
	assert_int_equal(lpm_lookup(f, getpid(), (uint64_t)(uintptr_t)qsort)->table,
			 BPFPROF_UNWIND_NO_TABLE);
	unwinder__free(u);
	free(f->rows);
	free(f);
}

/* The background thread registers a queued process. */
static void test_queue(void **state)
{
	struct fake *f = calloc(1, sizeof(*f));
	struct unwinder *u = new_unwinder(f, 1 << 20);
	struct profile_mapping m[8];
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[512], path[256], perms[5];
	unsigned long long start, end, off;
	size_t n = 0;

	assert_non_null(maps);
	while (n < 8 && fgets(line, sizeof(line), maps)) {
		path[0] = 0;
		if (sscanf(line, "%llx-%llx %4s %llx %*s %*s %255s", &start, &end, perms, &off,
			   path) < 4 ||
		    perms[2] != 'x' || path[0] != '/')
			continue;
		memset(&m[n], 0, sizeof(m[n]));
		m[n].start = start;
		m[n].end = end;
		m[n].offset = off;
		memcpy(m[n].perms, perms, 5);
		m[n].path = strdup(path);
		n++;
	}
	fclose(maps);
	assert_true(n >= 2);
	assert_int_equal(unwinder__queue(u, getpid(), m, n), 0);
	for (int i = 0; i < 500 && !__atomic_load_n(&f->procs_ready, __ATOMIC_SEQ_CST); i++)
		usleep(10000);
	assert_int_equal(__atomic_load_n(&f->procs_ready, __ATOMIC_SEQ_CST), 1);
	assert_non_null(lpm_lookup(f, getpid(), (uint64_t)(uintptr_t)this_function_is_hot));
	/* jobs still queued when the unwinder goes are freed with it (the sanitizer build checks) */
	for (uint32_t pid = 1; pid <= 50; pid++)
		assert_int_equal(unwinder__queue(u, getpid(), m, n), 0);
	unwinder__free(u);
	for (size_t i = 0; i < n; i++)
		free((char *)m[i].path);
	free(f->rows);
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lpm_keys),
		cmocka_unit_test(test_load_self),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_queue),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: MIT
/*
 * Unit tests of user/unwind/unwinder.c through a fake sink standing in for the BPF
 * maps: the LPM keys cover each executable mapping exactly, a lookup done as
 * the BPF walker does (longest prefix, then row pc = address - bias) finds
 * the same rule as the file's own table at the ELF address (the compact
 * words read as find_rule reads them), tables are shared and freed with
 * their last user, a budget too small for a table degrades to frame
 * pointers, and at the budget the least recently used tables are dropped. The process under test is this test itself (a PIE, libc),
 * and a child stripped of its CFI whose .debug_frame is in its separate debug
 * file (by .gnu_debuglink, then in debuginfod's client cache).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <endian.h>
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <libelf.h>
#include <link.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/auxv.h>
#include <sys/wait.h>
#include "sym_elf.h"
#include "unwind_compact.h"
#include "unwind_table.h"
#include "unwind_cache.h"
#include "unwinder.h"
#include "proc_table.h"

static char tmp_dir[] = "/tmp/test_unwinder.XXXXXX";

#define TEST_TMP_DIR tmp_dir
#include "test_files.h"
#include "unwind_copies.h"

/* Register pid from its maps read now (proc_table.h reads them) */
static int load_pid(struct unwinder *u, uint32_t pid)
{
	char *text;
	size_t len;
	int err = proc_table__read_maps("/proc", pid, &text, &len);

	if (err)
		return err;
	err = unwinder__load_text(u, pid, text, len);
	free(text);
	return err;
}

#define MAX_ENTRIES 4096
#define MAX_TABLES 64

struct fake {
	struct {
		struct bpfprof_unwind_key k;
		struct bpfprof_unwind_mapping v;
	} e[MAX_ENTRIES];
	int nr;
	struct bpfprof_unwind_table tables[MAX_TABLES];
	uint32_t *words[MAX_TABLES];
	uint32_t nr_words[MAX_TABLES];
	uint32_t used[MAX_TABLES]; /* what table_used answers */
	int nr_loaded, nr_dropped;
	int procs_ready; /* set_proc(ready) calls */
	int procs_gone;
	int nr_set_calls, nr_del_calls; /* set_mappings, del_mappings calls (the batch sink) */
	int nr_set; /* entries written (set_mapping, or each of set_mappings') */
	int ready_at_set; /* procs_ready when set_mappings was last called */
	/* the pool's sink calls (install_rows, fill_table) */
	uint32_t pool_room[MAX_TABLES]; /* an installed, unwritten words map's room; 0: none */
	uint32_t filled_room[MAX_TABLES]; /* a table written into a pool's map: that map's room */
	int nr_installed, nr_install_calls, nr_filled, nr_pool_dropped;
	bool fail_fill;
};

static int fake_set_mapping(void *ctx, const struct bpfprof_unwind_key *k,
			    const struct bpfprof_unwind_mapping *v)
{
	struct fake *f = ctx;

	f->nr_set++;
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

static int fake_load_table(void *ctx, uint32_t id, const struct bpfprof_unwind_table *info,
			   const uint32_t *words, uint32_t nr_words, uint64_t *bytes)
{
	struct fake *f = ctx;

	assert_true(id < MAX_TABLES);
	assert_null(f->words[id]);
	assert_true(info->nr_pages > 0);
	f->words[id] = malloc((size_t)nr_words * sizeof(*words));
	assert_non_null(f->words[id]);
	memcpy(f->words[id], words, (size_t)nr_words * sizeof(*words));
	f->nr_words[id] = nr_words;
	f->tables[id] = *info;
	*bytes = unwind_compact__kernel_bytes(nr_words);
	f->nr_loaded++;
	return 0;
}

static void fake_drop_table(void *ctx, uint32_t id)
{
	struct fake *f = ctx;

	assert_true(id < MAX_TABLES);
	if (f->pool_room[id]) { /* a pool's map never written (fill_table failed) */
		assert_null(f->words[id]);
		f->pool_room[id] = 0;
		f->nr_pool_dropped++;
		return;
	}
	assert_non_null(f->words[id]);
	f->filled_room[id] = 0;
	free(f->words[id]);
	f->words[id] = NULL;
	f->nr_words[id] = 0;
	memset(&f->tables[id], 0, sizeof(f->tables[id]));
	f->nr_dropped++;
}

static uint32_t fake_table_used(void *ctx, uint32_t id)
{
	struct fake *f = ctx;

	return f->used[id];
}

static void fake_free(struct fake *f)
{
	for (int i = 0; i < MAX_TABLES; i++)
		free(f->words[i]);
	free(f);
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

static int fake_table_words(void *ctx, uint32_t id, const struct bpfprof_unwind_table **info,
			    const uint32_t **words, uint32_t *nr_words)
{
	struct fake *f = ctx;

	if (id >= MAX_TABLES || !f->words[id])
		return -ENOENT;
	*info = &f->tables[id];
	*words = f->words[id];
	*nr_words = f->nr_words[id];
	return 0;
}

/* The pool's maps: each at a slot with no table and no other map; not under the unwinder's lock */
static int fake_install_rows(void *ctx, const uint32_t *ids, const uint32_t *room, uint32_t n,
			     uint64_t *bytes)
{
	struct fake *f = ctx;

	__atomic_add_fetch(&f->nr_install_calls, 1, __ATOMIC_SEQ_CST);
	for (uint32_t i = 0; i < n; i++) {
		assert_true(ids[i] < MAX_TABLES);
		assert_null(f->words[ids[i]]);
		assert_int_equal(f->pool_room[ids[i]], 0);
		assert_int_equal(room[i] % 1024, 0);
		f->pool_room[ids[i]] = room[i];
		bytes[i] = (uint64_t)room[i] * 4;
	}
	__atomic_add_fetch(&f->nr_installed, (int)n, __ATOMIC_SEQ_CST);
	return (int)n;
}

/* A table into a pool's map: room enough, written once */
static int fake_fill_table(void *ctx, uint32_t id, const struct bpfprof_unwind_table *info,
			   const uint32_t *words, uint32_t nr_words)
{
	struct fake *f = ctx;

	assert_true(id < MAX_TABLES);
	assert_true(f->pool_room[id] >= nr_words);
	assert_null(f->words[id]);
	if (f->fail_fill)
		return -EIO;
	f->words[id] = malloc((size_t)nr_words * sizeof(*words));
	assert_non_null(f->words[id]);
	memcpy(f->words[id], words, (size_t)nr_words * sizeof(*words));
	f->nr_words[id] = nr_words;
	f->tables[id] = *info;
	f->filled_room[id] = f->pool_room[id];
	f->pool_room[id] = 0;
	f->nr_filled++;
	return 0;
}

/* An unwinder over fake f; pooled: the sink has the pool's calls, as session.c's */
static struct unwinder *new_sink(struct fake *f, uint64_t budget, bool pooled)
{
	struct unwind_sink sink = {
		.set_mapping = fake_set_mapping,
		.del_mapping = fake_del_mapping,
		.set_proc = fake_set_proc,
		.load_table = fake_load_table,
		.drop_table = fake_drop_table,
		.table_used = fake_table_used,
		.table_words = fake_table_words,
		.install_rows = pooled ? fake_install_rows : NULL,
		.fill_table = pooled ? fake_fill_table : NULL,
		.budget = budget,
		.max_tables = MAX_TABLES,
		.ctx = f,
	};

	memset(f, 0, sizeof(*f));
	return unwinder__new(&sink, true, "/proc");
}

static struct unwinder *new_unwinder(struct fake *f, uint64_t budget)
{
	return new_sink(f, budget, false);
}

static int fake_set_mappings(void *ctx, const struct bpfprof_unwind_key *k,
			     const struct bpfprof_unwind_mapping *v, uint32_t n)
{
	struct fake *f = ctx;
	int err = 0;

	f->nr_set_calls++;
	f->ready_at_set = f->procs_ready;
	for (uint32_t i = 0; i < n && !err; i++)
		err = fake_set_mapping(ctx, &k[i], &v[i]);
	return err;
}

static void fake_del_mappings(void *ctx, const struct bpfprof_unwind_key *k, uint32_t n)
{
	struct fake *f = ctx;

	f->nr_del_calls++;
	for (uint32_t i = 0; i < n; i++)
		fake_del_mapping(ctx, &k[i]);
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

/* The rule as the BPF walker finds it (find_rule): page index, then a binary search */
static uint32_t bpf_rule(const struct fake *f, const struct bpfprof_unwind_mapping *m,
			 uint64_t addr)
{
	if (m->table == BPFPROF_UNWIND_NO_TABLE || !f->words[m->table])
		return BPFPROF_UNWIND_NONE;
	return unwind_compact__lookup(f->words[m->table], f->nr_words[m->table],
				      &f->tables[m->table], addr - m->bias);
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
	struct unwinder *u = new_unwinder(f, 256 << 20);
	struct unwinder_stats st;
	uint64_t addrs[] = { (uint64_t)(uintptr_t)this_function_is_hot,
			     (uint64_t)(uintptr_t)test_load_self, (uint64_t)(uintptr_t)fopen,
			     (uint64_t)(uintptr_t)qsort };
	int checked = 0;

	assert_non_null(u);
	assert_false(unwinder__may_have_proc(u, getpid()));
	assert_int_equal(load_pid(u, getpid()), 0);
	assert_int_equal(f->procs_ready, 1);
	/* registered: said without the lock; another slot's pid not, one sharing its slot too */
	assert_true(unwinder__may_have_proc(u, getpid()));
	assert_false(unwinder__may_have_proc(u, getpid() + 1));
	assert_true(unwinder__may_have_proc(u, getpid() + 65536));
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
		/* the whole mapping, which the BPF walk keeps for the next frames */
		assert_true(m->start <= addrs[i] && addrs[i] < m->end);
		assert_int_equal(m->start & 4095, 0);
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
	/* every entry is a piece of the mapping its value names (no frame skips the trie wrongly) */
	for (int i = 0; i < f->nr; i++) {
		uint64_t at = be64toh(f->e[i].k.addr);
		uint32_t bits = f->e[i].k.prefixlen - 32;

		assert_true(f->e[i].v.start <= at);
		assert_true(at + (1ULL << (64 - bits)) <= f->e[i].v.end);
	}
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

		assert_int_equal(load_pid(u, getpid()), 0);
		unwinder__stats(u, &st);
		assert_int_equal(st.nr_built, built);
		assert_int_equal(f->nr, nr);
		assert_true(unwinder__may_have_proc(u, getpid()));
	}
	/*
	 * forgotten: entries gone, no longer said registered (counted once);
	 * the tables kept, of files with a build-id, for the next process
	 */
	unwinder__forget(u, getpid());
	assert_false(unwinder__may_have_proc(u, getpid()));
	assert_false(unwinder__may_have_proc(u, getpid() + 65536));
	assert_int_equal(f->nr, 0);
	assert_int_equal(f->procs_gone, 1);
	unwinder__stats(u, &st);
	assert_true(st.nr_kept >= 2); /* this test and libc at least */
	assert_int_equal(st.nr_kept, st.nr_tables);
	assert_int_equal(f->nr_loaded - f->nr_dropped, (int)st.nr_tables);
	/* the next process mapping them: none built or loaded anew, and they walk */
	{
		uint64_t built = st.nr_built, kept = st.nr_kept;
		int loaded = f->nr_loaded;
		const struct bpfprof_unwind_mapping *m;

		assert_int_equal(load_pid(u, getpid()), 0);
		unwinder__stats(u, &st);
		assert_int_equal(st.nr_built, built);
		assert_int_equal(f->nr_loaded, loaded);
		assert_int_equal(st.nr_kept, 0);
		assert_int_equal(st.nr_kept_used, kept);
		m = lpm_lookup(f, getpid(), (uint64_t)(uintptr_t)qsort);
		assert_non_null(m);
		assert_non_null(f->words[m->table]);
		assert_int_not_equal(bpf_rule(f, m, (uint64_t)(uintptr_t)qsort),
				     BPFPROF_UNWIND_NONE);
	}
	unwinder__forget(u, getpid());
	assert_int_equal(f->nr, 0);
	unwinder__free(u);
	fake_free(f);
}

static struct unwinder *new_pooled(struct fake *f, uint64_t budget)
{
	return new_sink(f, budget, true);
}

/*
 * The pool of words maps installed ahead of need: filled once by the
 * thread unwinder__start starts (one install, the classes' count of maps,
 * within half the budget); a registration's tables written into the
 * smallest map that holds each (at most twice its pages), the others
 * loaded as before; the walk's rules the same; a refill once idle; a write
 * that fails costs that map and falls back to a load
 */
static void test_pool(void **state)
{
	struct fake *f = calloc(1, sizeof(*f));
	struct unwinder *u = new_pooled(f, 256 << 20);
	struct unwinder_stats st;
	const struct bpfprof_unwind_mapping *m;
	uint64_t hot = (uint64_t)(uintptr_t)this_function_is_hot, sum = 0;
	Dl_info info;
	struct link_map *lm;
	struct unwind_table *t;
	Elf *elf;
	int fd, pooled = 0;

	assert_non_null(u);
	assert_int_equal(unwinder__start(u), 0);
	unwinder__wait_pool(u, 5000);
	unwinder__stats(u, &st);
	/* 4 KiB to 2 MiB an octave, two of each up to 64 KiB: 15 maps, one install */
	assert_int_equal(st.pool_maps, 15);
	assert_int_equal(st.nr_pool_installs, 1);
	assert_int_equal(__atomic_load_n(&f->nr_installed, __ATOMIC_SEQ_CST), 15);
	assert_int_equal(st.pool_bytes, 2 * (4 + 8 + 16 + 32 + 64) * 1024 +
						(128 + 256 + 512 + 1024 + 2048) * 1024);
	assert_int_equal(st.bytes, 0); /* the pool is not tables */

	assert_int_equal(load_pid(u, getpid()), 0);
	unwinder__stats(u, &st);
	assert_true(st.nr_pooled >= 1);
	assert_int_equal(st.nr_pooled, f->nr_filled);
	assert_int_equal(st.nr_tables, (uint64_t)(f->nr_filled + f->nr_loaded));
	for (int i = 0; i < MAX_TABLES; i++) {
		if (!f->filled_room[i])
			continue;
		pooled++;
		/* the smallest class that holds it: at most twice its pages */
		assert_true(f->filled_room[i] >= f->nr_words[i]);
		assert_true(f->filled_room[i] <= 2 * ((f->nr_words[i] + 1023) / 1024 * 1024));
		sum += (uint64_t)f->filled_room[i] * 4;
	}
	assert_int_equal(pooled, f->nr_filled);
	/* taken from the pool (unless a refill came meanwhile: 1 s after the last) */
	if (st.nr_pool_installs == 1)
		assert_int_equal(st.pool_maps, 15 - (uint64_t)pooled);
	/* the tables' memory is their maps' */
	assert_true(st.bytes >= sum);

	/* this test's own code: a rule from a pool's map, as the table says */
	m = lpm_lookup(f, getpid(), hot);
	assert_non_null(m);
	assert_int_not_equal(m->table, BPFPROF_UNWIND_NO_TABLE);
	assert_true(dladdr1((void *)(uintptr_t)hot, &info, (void **)&lm, RTLD_DL_LINKMAP));
	fd = open("/proc/self/exe", O_RDONLY);
	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	assert_int_equal(unwind_table__build(elf, "self", &t), 0);
	for (uint64_t a = hot; a < hot + 64; a++)
		assert_int_equal(bpf_rule(f, m, a), unwind_table__lookup(t, a - lm->l_addr));
	unwind_table__free(t);
	elf_end(elf);
	close(fd);

	/* refilled by the thread once idle (POOL_IDLE_NS: 1 s) */
	for (int i = 0; i < 300 && __atomic_load_n(&f->nr_install_calls, __ATOMIC_SEQ_CST) < 2;
	     i++)
		usleep(10000);
	unwinder__stats(u, &st);
	assert_int_equal(st.nr_pool_installs, 2);
	assert_int_equal(st.pool_maps, 15);

	/*
	 * forgotten: the tables written into pool maps dropped as any, or kept
	 * for the next process as any (files with a build-id, KEEP_FILES)
	 */
	unwinder__forget(u, getpid());
	unwinder__stats(u, &st);
	assert_int_equal(st.nr_tables, st.nr_kept);
	assert_int_equal(f->nr_dropped + st.nr_kept, (uint64_t)(f->nr_loaded + f->nr_filled));
	unwinder__free(u);
	fake_free(f);

	/* a write that fails: that map dropped, the table loaded as before */
	f = calloc(1, sizeof(*f));
	u = new_pooled(f, 256 << 20);
	assert_int_equal(unwinder__start(u), 0);
	unwinder__wait_pool(u, 5000);
	f->fail_fill = true;
	assert_int_equal(load_pid(u, getpid()), 0);
	unwinder__stats(u, &st);
	assert_int_equal(st.nr_pooled, 0);
	assert_true(f->nr_pool_dropped >= 1);
	assert_int_equal(st.nr_tables, (uint64_t)f->nr_loaded);
	m = lpm_lookup(f, getpid(), hot);
	assert_non_null(m);
	assert_non_null(f->words[m->table]);
	unwinder__free(u);
	fake_free(f);

	/* a small budget: the pool takes at most half of it */
	f = calloc(1, sizeof(*f));
	u = new_pooled(f, 1 << 20);
	assert_int_equal(unwinder__start(u), 0);
	unwinder__wait_pool(u, 5000);
	unwinder__stats(u, &st);
	assert_true(st.pool_maps >= 1);
	assert_true(st.pool_bytes <= (1 << 20) / 2);
	unwinder__free(u);
	fake_free(f);

	/* no pool calls in the sink: no thread started, no wait */
	f = calloc(1, sizeof(*f));
	u = new_unwinder(f, 256 << 20);
	assert_int_equal(unwinder__start(u), 0);
	unwinder__wait_pool(u, 5000);
	unwinder__stats(u, &st);
	assert_int_equal(st.nr_pool_installs, 0);
	unwinder__free(u);
	fake_free(f);
}

/*
 * A sink that takes a process's entries together (session.c's batches)
 * gets them in one call, before the process is said ready, the same
 * entries as one at a time; its forgetting in one call too
 */
static void test_batch_sink(void **state)
{
	struct fake *one = calloc(1, sizeof(*one)), *batch = calloc(1, sizeof(*batch));
	struct unwinder *u1 = new_unwinder(one, 256 << 20);
	struct unwind_sink sink = {
		.set_mapping = fake_set_mapping,
		.del_mapping = fake_del_mapping,
		.set_mappings = fake_set_mappings,
		.del_mappings = fake_del_mappings,
		.set_proc = fake_set_proc,
		.load_table = fake_load_table,
		.drop_table = fake_drop_table,
		.table_used = fake_table_used,
		.table_words = fake_table_words,
		.budget = 256 << 20,
		.max_tables = MAX_TABLES,
		.ctx = batch,
	};
	struct unwinder *u2;

	(void)state;
	memset(batch, 0, sizeof(*batch));
	u2 = unwinder__new(&sink, true, "/proc");
	assert_non_null(u1);
	assert_non_null(u2);
	assert_int_equal(load_pid(u1, getpid()), 0);
	assert_int_equal(load_pid(u2, getpid()), 0);
	assert_true(one->nr > 4);
	assert_int_equal(batch->nr, one->nr);
	for (int i = 0; i < one->nr; i++) {
		int j;

		for (j = 0; j < batch->nr; j++)
			if (!memcmp(&batch->e[j].k, &one->e[i].k, sizeof(one->e[i].k)))
				break;
		assert_true(j < batch->nr);
		assert_int_equal(batch->e[j].v.start, one->e[i].v.start);
		assert_int_equal(batch->e[j].v.end, one->e[i].v.end);
		assert_int_equal(batch->e[j].v.bias, one->e[i].v.bias);
	}
	assert_int_equal(batch->nr_set_calls, 1);
	assert_int_equal(batch->ready_at_set, 0); /* the entries before the process is ready */
	assert_int_equal(batch->procs_ready, 1);
	assert_int_equal(batch->nr_set, batch->nr);
	/* again, the same maps: no entry written again (the same values), nothing stale to delete */
	assert_int_equal(load_pid(u2, getpid()), 0);
	assert_int_equal(batch->nr_set_calls, 1);
	assert_int_equal(batch->nr_set, batch->nr);
	assert_int_equal(batch->nr_del_calls, 0);
	assert_int_equal(batch->nr, one->nr);
	assert_int_equal(batch->procs_ready, 2);
	unwinder__forget(u2, getpid());
	assert_int_equal(batch->nr_del_calls, 1);
	assert_int_equal(batch->nr, 0);
	unwinder__forget(u1, getpid());
	assert_int_equal(one->nr, 0);
	unwinder__free(u1);
	unwinder__free(u2);
	fake_free(one);
	fake_free(batch);
}

/* A budget smaller than any table: frame pointers everywhere, with a warning, and no failure. */
static void test_full(void **state)
{
	struct fake *f = calloc(1, sizeof(*f));
	struct unwinder *u = new_unwinder(f, 4 << 10);
	struct unwinder_stats st;

	assert_int_equal(load_pid(u, getpid()), 0);
	unwinder__stats(u, &st);
	assert_true(st.nr_full >= 1);
	assert_int_equal(st.bytes, 0);
	assert_int_equal(f->nr_loaded, 0);
	assert_true(f->nr > 0);
	assert_int_equal(lpm_lookup(f, getpid(), (uint64_t)(uintptr_t)this_function_is_hot)->table,
			 BPFPROF_UNWIND_NO_TABLE);
	assert_int_equal(lpm_lookup(f, getpid(), (uint64_t)(uintptr_t)qsort)->table,
			 BPFPROF_UNWIND_NO_TABLE);
	unwinder__free(u);
	fake_free(f);
}

/*
 * At the budget, the least recently used tables go to make room: libc's
 * table alone fits, and when the walk has used libc's table later than the
 * others, they are the ones dropped (and then find no rule); nothing fails.
 */
static void test_evict(void **state)
{
	struct fake *f = calloc(1, sizeof(*f));
	struct unwinder *u = new_unwinder(f, 256 << 20);
	struct unwinder_stats st;
	const struct bpfprof_unwind_mapping *libc, *self;
	uint64_t all;
	uint32_t libc_table;

	/* every table, to learn what they take */
	assert_int_equal(load_pid(u, getpid()), 0);
	unwinder__stats(u, &st);
	all = st.bytes;
	assert_true(st.nr_tables >= 3);
	assert_int_equal(st.nr_evicted, 0);
	libc = lpm_lookup(f, getpid(), (uint64_t)(uintptr_t)qsort);
	assert_non_null(libc);
	libc_table = libc->table;
	assert_int_not_equal(libc_table, BPFPROF_UNWIND_NO_TABLE);
	unwinder__free(u);
	fake_free(f);

	/* a budget one page short of them all: someone goes, and it is not libc */
	f = calloc(1, sizeof(*f));
	u = new_unwinder(f, all - 4096);
	for (int i = 0; i < MAX_TABLES; i++)
		f->used[i] = 100; /* recently used ... */
	f->used[libc_table] = 200; /* ... libc more recently (it comes after the executable) */
	assert_int_equal(load_pid(u, getpid()), 0);
	unwinder__stats(u, &st);
	assert_true(st.nr_evicted >= 1);
	assert_true(st.bytes <= all - 4096);
	assert_int_equal(f->nr_loaded - f->nr_dropped, (int)st.nr_tables);
	libc = lpm_lookup(f, getpid(), (uint64_t)(uintptr_t)qsort);
	assert_non_null(f->words[libc->table]);
	assert_int_not_equal(bpf_rule(f, libc, (uint64_t)(uintptr_t)qsort), BPFPROF_UNWIND_NONE);
	/* a dropped table's mappings keep their slot and find no rule: frame pointers */
	self = lpm_lookup(f, getpid(), (uint64_t)(uintptr_t)this_function_is_hot);
	assert_non_null(self);
	if (!f->words[self->table])
		assert_int_equal(bpf_rule(f, self, (uint64_t)(uintptr_t)this_function_is_hot),
				 BPFPROF_UNWIND_NONE);
	unwinder__forget(u, getpid());
	unwinder__stats(u, &st);
	/* what is still loaded is kept for the next process, counted in the budget */
	assert_int_equal(st.nr_kept, st.nr_tables);
	assert_int_equal(f->nr_loaded - f->nr_dropped, (int)st.nr_tables);
	assert_true(st.bytes <= all - 4096);
	unwinder__free(u);
	fake_free(f);
}

/* The background thread registers a queued process. */
static void test_queue(void **state)
{
	struct fake *f = calloc(1, sizeof(*f));
	struct unwinder *u = new_unwinder(f, 256 << 20);
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
	fake_free(f);
}

/* Whether pid has an executable mapping of path (its exe link comes before its mappings) */
static bool maps_exec(pid_t pid, const char *path)
{
	char line[1024], file[512], perms[5];
	bool found = false;
	FILE *maps;

	snprintf(line, sizeof(line), "/proc/%d/maps", pid);
	maps = fopen(line, "r");
	if (!maps)
		return false;
	while (!found && fgets(line, sizeof(line), maps)) {
		file[0] = 0;
		found = sscanf(line, "%*x-%*x %4s %*s %*s %*s %511s", perms, file) == 2 &&
			perms[2] == 'x' && !strcmp(file, path);
	}
	fclose(maps);
	return found;
}

/* Start path (no arguments) and wait until it runs its own code; its pid */
static pid_t spawn(const char *path)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (!pid) {
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 500; i++) {
		if (maps_exec(pid, path))
			return pid;
		usleep(10000);
	}
	fail_msg("'%s' did not start", path);
	return -1;
}

static pid_t child = -1;

/* What test_debug_file leaves when an assertion ends it early */
static int teardown_debug_file(void **state)
{
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	child = -1;
	unsetenv("DEBUGINFOD_URLS");
	unsetenv("DEBUGINFOD_CACHE_PATH");
	if (strcmp(tmp_dir + strlen(tmp_dir) - 6, "XXXXXX"))
		sh("rm -rf %s", tmp_dir);
	return 0;
}

/* The table of pid's mapping of its executable: its slot's row count, 0 when it has none */
static uint32_t exe_rows(const struct fake *f, pid_t pid, const char *path)
{
	char line[1024], file[512], perms[5];
	unsigned long long start;
	FILE *maps;
	uint32_t rows = UINT32_MAX;

	snprintf(line, sizeof(line), "/proc/%d/maps", pid);
	maps = fopen(line, "r");
	assert_non_null(maps);
	while (fgets(line, sizeof(line), maps)) {
		file[0] = 0;
		if (sscanf(line, "%llx-%*x %4s %*s %*s %*s %511s", &start, perms, file) == 3 &&
		    perms[2] == 'x' && !strcmp(file, path)) {
			const struct bpfprof_unwind_mapping *m = lpm_lookup(f, pid, start);

			assert_non_null(m);
			rows = 0;
			if (m->table != BPFPROF_UNWIND_NO_TABLE)
				rows = f->nr_words[m->table];
		}
	}
	fclose(maps);
	assert_int_not_equal(rows, UINT32_MAX);
	return rows;
}

/*
 * Kept tables go first when room is wanted: a budget that holds this
 * process's tables alone; forgotten, they are kept; a sleep(1)'s
 * registration uses the kept libc and ld.so again, and its own table is
 * loaded by dropping kept ones, no table in use evicted.
 */
static void test_kept_room(void **state)
{
	struct fake *f = calloc(1, sizeof(*f));
	struct unwinder *u = new_unwinder(f, 256 << 20);
	struct unwinder_stats st;
	char path[PATH_MAX];
	uint64_t all;
	pid_t pid;

	assert_int_equal(load_pid(u, getpid()), 0);
	unwinder__stats(u, &st);
	all = st.bytes;
	unwinder__free(u);
	fake_free(f);

	f = calloc(1, sizeof(*f));
	u = new_unwinder(f, all);
	assert_int_equal(load_pid(u, getpid()), 0);
	unwinder__forget(u, getpid());
	unwinder__stats(u, &st);
	assert_int_equal(st.bytes, all);
	assert_true(st.nr_kept >= 2);

	assert_non_null(realpath("/bin/sleep", path));
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		execl(path, "sleep", "30", (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 500 && !maps_exec(pid, path); i++)
		usleep(10000);
	assert_int_equal(load_pid(u, (uint32_t)pid), 0);
	unwinder__stats(u, &st);
	assert_true(st.nr_kept_used >= 1); /* libc's at least */
	assert_true(st.nr_kept_dropped >= 1);
	assert_int_equal(st.nr_evicted, 0);
	assert_true(st.bytes <= all);
	assert_true(exe_rows(f, pid, path) > 0);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	unwinder__forget(u, (uint32_t)pid);
	unwinder__free(u);
	fake_free(f);
}

/*
 * bpfprof's own process (unwinder__set_own_pid: this test's, here) gets no
 * table built: registered with none where no other process's registration
 * placed its files' (walked by frame pointers), then registered again, with
 * nothing built, when a sleep's registration places libc's, which it uses
 * from then on; its own executable keeps none.
 */
static void test_own_process(void **state)
{
	struct fake *f = calloc(1, sizeof(*f));
	struct unwinder *u = new_unwinder(f, 256 << 20);
	const struct bpfprof_unwind_mapping *m;
	struct unwinder_stats st;
	char path[PATH_MAX], libc_path[PATH_MAX];
	uint64_t untabled;
	Dl_info info;
	pid_t pid;
	/* libc's own qsort, which the sleep maps too (ASan's build calls its interceptor qsort) */
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	uint64_t qsort_at = (uint64_t)(uintptr_t)(libc ? dlsym(libc, "qsort") : NULL);

	assert_true(qsort_at != 0);

	unwinder__set_own_pid(u, (uint32_t)getpid());
	assert_int_equal(load_pid(u, getpid()), 0);
	assert_int_equal(f->procs_ready, 1);
	unwinder__stats(u, &st);
	assert_int_equal(st.nr_built, 0);
	assert_int_equal(f->nr_loaded, 0);
	assert_true(st.own_untabled >= 3); /* this test, libc, the vDSO at least */
	assert_int_equal(st.nr_own_again, 0);
	untabled = st.own_untabled;
	/* its samples still walk: each mapping has its entry, without a table */
	m = lpm_lookup(f, getpid(), qsort_at);
	assert_non_null(m);
	assert_int_equal(m->table, BPFPROF_UNWIND_NO_TABLE);
	m = lpm_lookup(f, getpid(), (uint64_t)(uintptr_t)this_function_is_hot);
	assert_non_null(m);
	assert_int_equal(m->table, BPFPROF_UNWIND_NO_TABLE);

	assert_non_null(realpath("/bin/sleep", path));
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		execl(path, "sleep", "30", (char *)NULL);
		_exit(127);
	}
	/* its libc mapped too (the dynamic loader maps it after the exec) */
	assert_true(dladdr((void *)(uintptr_t)qsort_at, &info));
	assert_non_null(realpath(info.dli_fname, libc_path));
	for (int i = 0; i < 500 && !(maps_exec(pid, path) && maps_exec(pid, libc_path)); i++)
		usleep(10000);
	assert_int_equal(load_pid(u, (uint32_t)pid), 0);
	unwinder__stats(u, &st);
	assert_true(st.nr_built >= 2); /* sleep, libc */
	assert_int_equal(st.nr_own_again, 1);
	assert_true(st.own_untabled < untabled);
	/* the re-registration built nothing: libc's table is the sleep's */
	assert_int_equal(f->nr_loaded, (int)st.nr_built);
	m = lpm_lookup(f, getpid(), qsort_at);
	assert_non_null(m);
	assert_int_not_equal(m->table, BPFPROF_UNWIND_NO_TABLE);
	assert_int_not_equal(bpf_rule(f, m, qsort_at), BPFPROF_UNWIND_NONE);
	m = lpm_lookup(f, getpid(), (uint64_t)(uintptr_t)this_function_is_hot);
	assert_non_null(m);
	assert_int_equal(m->table, BPFPROF_UNWIND_NO_TABLE);
	/* the sleep again: nothing new placed, no registration of ours again */
	assert_int_equal(load_pid(u, (uint32_t)pid), 0);
	unwinder__stats(u, &st);
	assert_int_equal(st.nr_own_again, 1);
	/* the sleep gone: libc's table stays ours (referenced), not kept */
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	unwinder__forget(u, (uint32_t)pid);
	m = lpm_lookup(f, getpid(), qsort_at);
	assert_non_null(m);
	assert_non_null(f->words[m->table]);
	unwinder__forget(u, getpid());
	assert_int_equal(f->nr, 0);
	unwinder__free(u);
	fake_free(f);
	dlclose(libc);
}

static uint32_t load_exe_rows(pid_t pid, const char *path)
{
	struct fake *f = calloc(1, sizeof(*f));
	struct unwinder *u = new_unwinder(f, 256 << 20);
	uint32_t rows;

	assert_non_null(u);
	assert_int_equal(load_pid(u, pid), 0);
	rows = exe_rows(f, pid, path);
	unwinder__free(u);
	fake_free(f);
	return rows;
}

/*
 * A program stripped of .eh_frame and .debug_frame gets the table of the
 * .debug_frame in its debug file: next to it by .gnu_debuglink, or in
 * debuginfod's client cache by build-id when debuginfod is on (the server
 * named is never asked: nothing is fetched while sampling); none without.
 */
static void test_debug_file(void **state)
{
	static const char src[] = "#include <unistd.h>\n"
				  "int main(void) { for (;;) pause(); }\n";
	char prog[512], cache[1024], hex[41];
	uint8_t id[ELF_BUILD_ID_MAX];
	struct unwind_table *t;
	int fd, len;
	uint32_t want;
	pid_t pid;

	assert_non_null(mkdtemp(tmp_dir));
	assert_int_equal(write_text(tpath("prog.c"), src), 0);
	/* .debug_frame only (no asynchronous unwind tables), then moved to prog.debug */
	assert_int_equal(
		sh("cd %s && cc -O2 -g -fno-asynchronous-unwind-tables -fno-unwind-tables prog.c "
		   "-o prog.full && objcopy --only-keep-debug prog.full prog.debug && "
		   "objcopy --strip-debug --remove-section=.eh_frame --remove-section=.eh_frame_hdr "
		   "--add-gnu-debuglink=prog.debug prog.full prog",
		   tmp_dir),
		0);
	fd = open(tpath("prog.debug"), O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(unwind_table__build_fd(fd, "prog.debug", &t), 0);
	close(fd);
	{
		struct bpfprof_unwind_table info;
		uint32_t *words;

		assert_int_equal(unwind_compact__encode(t, &words, &want, &info), 0);
		free(words);
	}
	unwind_table__free(t);
	snprintf(prog, sizeof(prog), "%s", tpath("prog"));
	fd = open(prog, O_RDONLY);
	assert_int_equal(unwind_table__build_fd(fd, "prog", &t), -ENOENT);
	close(fd);

	pid = child = spawn(prog);
	assert_int_equal(load_exe_rows(pid, prog), want);
	/* not next to it: none, unless debuginfod's cache has it */
	assert_int_equal(sh("mv %s/prog.debug %s/moved.debug", tmp_dir, tmp_dir), 0);
	assert_int_equal(load_exe_rows(pid, prog), 0);
	len = elf__read_build_id(prog, id);
	assert_true(len > 0);
	for (int i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	snprintf(cache, sizeof(cache), "%s/cache", tmp_dir);
	assert_int_equal(sh("mkdir -p %s/%s && cp %s/moved.debug %s/%s/debuginfo", cache, hex,
			    tmp_dir, cache, hex),
			 0);
	setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
	assert_int_equal(load_exe_rows(pid, prog), 0); /* debuginfod off */
	setenv("DEBUGINFOD_URLS", "http://127.0.0.1:9", 1);
	assert_int_equal(load_exe_rows(pid, prog), want);
}

/*
 * The persistent cache (include/unwind_cache.h) at the hook: a second
 * unwinder reads every table the first one built and wrote (the vDSO, with
 * no build-id, is built again), and the walk finds the same rules in them.
 */
static void test_cache(void **state)
{
	struct fake *f1 = calloc(1, sizeof(*f1)), *f2 = calloc(1, sizeof(*f2));
	struct unwinder *u1 = new_unwinder(f1, 256 << 20), *u2;
	struct unwind_cache_stats cs;
	struct unwinder_stats st;
	struct unwind_cache *c;
	char dir[] = "/tmp/test_unwinder_cache.XXXXXX", cmd[80];
	uint64_t addrs[] = { (uint64_t)(uintptr_t)this_function_is_hot, (uint64_t)(uintptr_t)fopen,
			     (uint64_t)(uintptr_t)qsort };

	assert_non_null(mkdtemp(dir));
	c = unwind_cache__open(dir, 64 << 20, true);
	assert_non_null(c);
	unwinder__set_cache(u1, c);
	assert_int_equal(load_pid(u1, getpid()), 0);
	unwinder__stats(u1, &st);
	unwind_cache__stats(c, &cs);
	assert_true(st.nr_built >= 3); /* this test, libc, the vDSO at least */
	assert_int_equal(st.nr_from_cache, 0);
	assert_int_equal(cs.written, st.nr_built - 1); /* all but the vDSO */

	u2 = new_unwinder(f2, 256 << 20);
	unwinder__set_cache(u2, c);
	assert_int_equal(load_pid(u2, getpid()), 0);
	unwinder__stats(u2, &st);
	assert_int_equal(st.nr_from_cache, cs.written);
	assert_int_equal(st.nr_built, 1);
	for (size_t i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
		const struct bpfprof_unwind_mapping *m1 = lpm_lookup(f1, getpid(), addrs[i]);
		const struct bpfprof_unwind_mapping *m2 = lpm_lookup(f2, getpid(), addrs[i]);

		assert_non_null(m1);
		assert_non_null(m2);
		assert_int_not_equal(m2->table, BPFPROF_UNWIND_NO_TABLE);
		for (uint64_t a = addrs[i]; a < addrs[i] + 256; a++)
			assert_int_equal(bpf_rule(f2, m2, a), bpf_rule(f1, m1, a));
	}
	unwinder__forget(u1, getpid());
	unwinder__forget(u2, getpid());
	unwinder__free(u1);
	unwinder__free(u2);
	unwind_cache__free(c);
	free(f1);
	free(f2);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* A process table (over /proc) whose registrations u takes; remember: it keeps maps */
static struct proc_table *table_of(struct unwinder *u, bool remember)
{
	struct proc_table *t = proc_table__new("/proc", remember);

	assert_non_null(t);
	proc_table__set_unwinder(t, u);
	return t;
}

/* New copies' walker over u asking t for registrations and remembered maps */
static struct unwind_copies *copies_of(struct unwinder *u, struct proc_table *t)
{
	struct unwind_copies_procs procs;

	proc_table__copies_procs(t, &procs);
	return unwind_copies__new(u, 127, &procs);
}

/* This process's maps text, for any pid */
static const char *self_maps(void *ctx, uint32_t pid, uint32_t start, size_t *len)
{
	static char text[65536];
	FILE *fp = fopen("/proc/self/maps", "r");

	assert_non_null(fp);
	*len = fread(text, 1, sizeof(text), fp);
	fclose(fp);
	return text;
}

/* The top of this thread's stack ([stack] in /proc/self/maps) */
static uint64_t stack_end(void)
{
	char line[512];
	unsigned long long lo, hi, end = 0;
	FILE *fp = fopen("/proc/self/maps", "r");

	assert_non_null(fp);
	while (fgets(line, sizeof(line), fp))
		if (strstr(line, "[stack]") && sscanf(line, "%llx-%llx", &lo, &hi) == 2)
			end = hi;
	fclose(fp);
	assert_true(end != 0);
	return end;
}

/*
 * Copy n bytes of this thread's stack, as the BPF program reads them: the
 * sanitizer build's redzones and all (so neither checked nor intercepted:
 * byte by byte through a volatile pointer, never a memcpy call)
 */
static __attribute__((no_sanitize_address)) void copy_raw(void *dst, const void *src, size_t n)
{
	const volatile uint8_t *from = src;
	uint8_t *to = dst;

	for (size_t i = 0; i < n; i++)
		to[i] = from[i];
}

/*
 * A stack copy of this very call, as the BPF program makes one
 * (struct bpfprof_sample_copy): rsp, rbp and an ip of this function, and
 * the stack from rsp up (not changed until this function returns)
 */
static __attribute__((noinline)) size_t capture(struct bpfprof_sample_copy *rec, uint64_t end)
{
	struct bpfprof_sample hdr = { .type = BPFPROF_REC_SAMPLE, .tgid = (uint32_t)getpid() };
	uint64_t rsp, rbp, rip, size;

	__asm__ volatile("mov %%rsp, %0\n\tmov %%rbp, %1\n\tlea (%%rip), %2"
			 : "=r"(rsp), "=r"(rbp), "=r"(rip));
	size = end - rsp < BPFPROF_COPY_STACK_SIZE ? end - rsp : BPFPROF_COPY_STACK_SIZE;
	hdr.tid = hdr.tgid;
	memset(rec, 0, BPFPROF_SAMPLE_COPY_HDR_SIZE);
	rec->type = BPFPROF_REC_SAMPLE_COPY;
	rec->why = BPFPROF_STAT_COPY_NOT_READY;
	rec->regs[6] = rbp;
	rec->regs[7] = rsp;
	rec->regs[16] = rip;
	rec->stack_size = (uint32_t)size;
	memcpy(rec->hdr, &hdr, BPFPROF_SAMPLE_HDR_SIZE);
	copy_raw(rec->data, (const void *)(uintptr_t)rsp, size);
	return BPFPROF_SAMPLE_COPY_HDR_SIZE + size;
}

/* rec (size bytes) walked by a new unwind_copies whose remembered maps are this process's; its stats into st */
static void walk_remembered(struct unwinder *u, const struct bpfprof_sample_copy *rec, size_t size,
			    struct bpfprof_sample *out, uint64_t *st)
{
	struct proc_table *t = table_of(u, true);
	struct bpfprof_sample hdr;
	struct unwind_copies *c;
	const char *text;
	size_t out_size, len;

	memcpy(&hdr, rec->hdr, BPFPROF_SAMPLE_HDR_SIZE);
	text = self_maps(NULL, 0, 0, &len);
	assert_int_equal(proc_table__remember(t, hdr.tgid, hdr.start, text, len), 0);
	c = copies_of(u, t);
	assert_non_null(c);
	assert_int_equal(unwind_copies__sample(c, rec, size, out, &out_size), 0);
	unwind_copies__stats(c, st, NULL);
	unwind_copies__free(c);
	proc_table__free(t);
}

/*
 * The user-space walk of copied stacks (unwind_copies.h) over this test's
 * own registration: unwinder__rule finds what the BPF lookup finds; a copy
 * of this test's stack walks to _start (END) with this function among its
 * frames; a malformed record is refused; a process that cannot be
 * registered (gone) is walked by frame pointers and counted so.
 */
static void test_copies(void **state)
{
	struct fake *f = calloc(1, sizeof(*f));
	struct unwinder *u = new_unwinder(f, 256 << 20);
	struct bpfprof_sample_copy *rec = calloc(1, sizeof(*rec));
	struct bpfprof_sample *out = calloc(1, sizeof(*out));
	struct bpfprof_ustack_copy *check = calloc(1, sizeof(*check));
	struct unwind_copies *c;
	struct proc_table *t;
	uint64_t st[BPFPROF_STAT_NR],
		addrs[] = { (uint64_t)(uintptr_t)this_function_is_hot, (uint64_t)(uintptr_t)fopen };
	size_t size, out_size, check_size;
	uint32_t rule, gone = 0x7ffffff0;
	bool self = false;

	assert_non_null(u);
	assert_non_null(rec);
	assert_int_equal(load_pid(u, getpid()), 0);
	assert_true(unwinder__has_proc(u, getpid()));
	for (size_t i = 0; i < 2; i++)
		for (uint64_t a = addrs[i]; a < addrs[i] + 64; a++) {
			assert_int_equal(unwinder__rule(u, getpid(), a, &rule), 0);
			assert_int_equal(rule, bpf_rule(f, lpm_lookup(f, getpid(), a), a));
		}
	assert_int_equal(unwinder__rule(u, getpid(), 16, &rule), -ENOENT);
	assert_int_equal(unwinder__rule(u, gone, addrs[0], &rule), -ESRCH);

	t = table_of(u, false);
	c = copies_of(u, t);
	assert_non_null(c);
	size = capture(rec, stack_end());
	assert_int_equal(unwind_copies__sample(c, rec, size, out, &out_size), 0);
	unwind_copies__stats(c, st, NULL);
	assert_int_equal(st[BPFPROF_STAT_WALK_END], 1);
	assert_int_equal(st[BPFPROF_STAT_WALK_NOT_READY], 0);
	assert_true(out->nr_user >= 4); /* capture, test_copies, cmocka's runner..., main, _start */
	assert_int_equal(out->type, BPFPROF_REC_SAMPLE);
	assert_int_equal(out_size, BPFPROF_SAMPLE_HDR_SIZE + out->nr_user * 8);
	assert_int_equal(out->ips[0], rec->regs[16]);
	for (uint32_t i = 1; i < out->nr_user; i++)
		self |= out->ips[i] > (uint64_t)(uintptr_t)test_copies &&
			out->ips[i] < (uint64_t)(uintptr_t)test_copies + 4096;
	assert_true(self);
	unwind_copies__check_record(c, rec, check, &check_size);
	assert_int_equal(check->nr_user, out->nr_user);
	assert_int_equal(check->end_reached, 1);
	assert_int_equal(check_size, BPFPROF_USTACK_COPY_HDR_SIZE + check->stack_size);

	/* malformed: a stack size past the record's bytes */
	assert_int_equal(unwind_copies__sample(c, rec, size - 1, out, &out_size), -EINVAL);
	/* a process gone: no registration, frame pointers, counted */
	memcpy(rec->hdr + offsetof(struct bpfprof_sample, tgid), &gone, sizeof(gone));
	assert_int_equal(unwind_copies__sample(c, rec, size, out, &out_size), 0);
	unwind_copies__stats(c, st, NULL);
	assert_int_equal(st[BPFPROF_STAT_WALK_NOT_READY], 1);
	unwind_copies__free(c);
	proc_table__free(t);

	/*
	 * gone, with its maps remembered (this process's, as another pid's):
	 * registered from them, its files opened by path (same inode), walked
	 */
	walk_remembered(u, rec, size, out, st);
	assert_int_equal(st[BPFPROF_STAT_WALK_NOT_READY], 0);
	assert_int_equal(st[BPFPROF_STAT_WALK_END], 1);
	assert_true(unwinder__has_proc(u, gone));

	/*
	 * gone, registered from maps that lack its code (its image before an
	 * exec): the leaf in none of them, no /proc to read again; registered
	 * once more from the maps remembered (this process's), and walked
	 */
	{
		static const char before_exec[] = "7f0000000000-7f0000001000 r-xp 00000000 00:00 0\n";

		assert_int_equal(unwinder__load_text(u, gone, before_exec, strlen(before_exec)), 0);
		assert_int_equal(unwinder__rule(u, gone, rec->regs[16], &rule), -ENOENT);
		walk_remembered(u, rec, size, out, st);
		assert_int_equal(st[BPFPROF_STAT_WALK_END], 1);
		assert_int_equal(st[BPFPROF_STAT_WALK_NO_MAPPING], 0);
		assert_true(out->nr_user >= 4);
	}
	unwinder__forget(u, gone);
	unwinder__free(u);
	fake_free(f);
	free(rec);
	free(out);
	free(check);
}

/* unwind_copies__release's emit: the walked record, kept for the test */
struct emitted {
	int n;
	uint32_t nr_user;
	uint64_t ips[4];
};

static int keep_emitted(void *ctx, const struct bpfprof_sample *s, size_t size)
{
	struct emitted *e = ctx;

	(void)size;
	e->n++;
	e->nr_user = s->nr_user;
	memcpy(e->ips, s->ips + s->nr_kernel, sizeof(e->ips));
	return 0;
}

/*
 * A copy whose walk leaves the registered mappings at a frame-pointer step
 * (an anonymous executable page, as JIT code, no table; its frame's return
 * address 0x10 in no mapping): sent for that (BPFPROF_STAT_COPY_FP_UNMAPPED,
 * a process registered moments before), the copy waits for a registration
 * and is walked after it; sent for any other reason, the address is garbage
 * and the copy is walked at once. Either way the garbage frame is dropped.
 */
static void test_copies_fp_unmapped(void **state)
{
	struct fake *f = calloc(1, sizeof(*f));
	struct unwinder *u = new_unwinder(f, 256 << 20);
	struct bpfprof_sample_copy *rec = calloc(1, sizeof(*rec));
	struct bpfprof_sample *out = calloc(1, sizeof(*out));
	struct bpfprof_sample hdr = { .type = BPFPROF_REC_SAMPLE, .tgid = (uint32_t)getpid() };
	struct unwind_copies *c;
	struct proc_table *t;
	struct emitted em = { 0 };
	uint64_t st[BPFPROF_STAT_NR], sp = 0x7ff000001000ULL, frame[2] = { 0, 0x10 };
	size_t size = BPFPROF_SAMPLE_COPY_HDR_SIZE + sizeof(frame), out_size;
	uint8_t *jit = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	(void)state;
	assert_non_null(u);
	assert_non_null(rec);
	assert_true(jit != MAP_FAILED);
	assert_int_equal(load_pid(u, getpid()), 0);
	hdr.tid = hdr.tgid;
	rec->type = BPFPROF_REC_SAMPLE_COPY;
	rec->why = BPFPROF_STAT_COPY_NOT_READY;
	rec->regs[6] = sp; /* rbp: the frame below */
	rec->regs[7] = sp;
	rec->regs[16] = (uint64_t)(uintptr_t)jit + 0x10;
	rec->stack_size = sizeof(frame);
	memcpy(rec->hdr, &hdr, BPFPROF_SAMPLE_HDR_SIZE);
	memcpy(rec->data, frame, sizeof(frame));

	t = table_of(u, false);
	c = copies_of(u, t);
	assert_non_null(c);
	assert_int_equal(unwind_copies__sample(c, rec, size, out, &out_size), 0);
	assert_int_equal(out->nr_user, 1);
	assert_int_equal(out->ips[0], rec->regs[16]);
	assert_int_equal(unwind_copies__nr_held(c), 0);

	rec->why = BPFPROF_STAT_COPY_FP_UNMAPPED;
	assert_int_equal(unwind_copies__sample(c, rec, size, out, &out_size), 1);
	assert_int_equal(unwind_copies__nr_held(c), 1);
	assert_int_equal(unwind_copies__release(c, true, keep_emitted, &em), 0);
	assert_int_equal(unwind_copies__nr_held(c), 0);
	assert_int_equal(em.n, 1);
	assert_int_equal(em.nr_user, 1); /* still in no mapping after it: garbage, dropped */
	assert_int_equal(em.ips[0], rec->regs[16]);
	unwind_copies__stats(c, st, NULL);
	assert_int_equal(st[BPFPROF_STAT_WALK_NO_MAPPING], 2);
	unwind_copies__free(c);
	proc_table__free(t);
	unwinder__free(u);
	fake_free(f);
	munmap(jit, 4096);
	free(rec);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lpm_keys),
		cmocka_unit_test(test_load_self),
		cmocka_unit_test(test_batch_sink),
		cmocka_unit_test(test_pool),
		cmocka_unit_test(test_cache),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_evict),
		cmocka_unit_test(test_kept_room),
		cmocka_unit_test(test_own_process),
		cmocka_unit_test(test_queue),
		cmocka_unit_test(test_copies),
		cmocka_unit_test(test_copies_fp_unmapped),
		cmocka_unit_test_teardown(test_debug_file, teardown_debug_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

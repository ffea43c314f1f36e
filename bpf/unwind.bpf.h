/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The native user-stack walk: by the process's unwind tables (--call-graph
 * dwarf: CFI rows user space built from .eh_frame), else by frame pointers.
 *
 * The user stack is walked here rather than with
 * bpf_get_stack(BPF_F_USER_STACK): the kernel's walker (perf_callchain_user
 * in arch/x86/events/core.c) reads each frame with two __get_user calls, and
 * every user access has a fixed cost (SMAP's stac/clac, which a virtual
 * machine may trap) that made it 6 us of the 7.4 us a run took. This walk
 * copies the stack a page at a time (one bpf_probe_read_user per page the
 * frame chain touches, usually one or two) and follows the chain in the copy.
 * By frame pointers it stores what the kernel's walker stores (the
 * interrupted user IP, then each frame's return address) and stops where it
 * stops (a frame that cannot be read), and also at the second time the
 * chain goes down or sideways instead of towards the stack's base. One such
 * jump is a stack switch that perf follows too (a signal handler on its
 * sigaltstack, Go's systemstack from g0 to the goroutine's stack); past a
 * function built without frame pointers the saved "frame pointer" is
 * garbage, which the kernel follows for up to 127 frames of made-up
 * callers, and random values go down about half of the time.
 *
 * Each frame is include/unwind_walk_step.h's step, which user space runs
 * too (user/unwind/unwind_step.c) over the stack copies of samples this
 * walk could not do; the accessors below give it the live stack and the
 * maps.
 */
#ifndef BPFPROF_UNWIND_BPF_H
#define BPFPROF_UNWIND_BPF_H

#include "state.bpf.h"
#include "process.bpf.h"
#include <bpf/bpf_endian.h>

/* What a step of the walk works on (struct walk_env, below) */
struct walk_env;
#define UNWIND_WALK_ENV struct walk_env
#include "unwind_walk_step.h"

/*
 * --call-graph dwarf: each executable mapping of a process whose tables are
 * loaded (unwind_procs) has entries here (include/bpfprof_abi.h, "Unwind
 * tables"); map sizes are set by user space before load.
 */
const volatile bool unwind_tables_on = false;
/*
 * A sample the tables cannot walk yet (the process's are being built, or a
 * pc in no registered mapping) is sent with its registers and the top of
 * its stack (struct bpfprof_sample_copy, stack_copy.bpf.h) for user space
 * to walk with the same rows once they are built, instead of being walked
 * by frame pointers.
 */
/* off with --check-user-stacks, which compares every walk */
const volatile bool copy_stacks = false;

/* A copy of part of the user stack (at most a page), which the walk reads frames from. */
#define USTACK_CHUNK 4096
struct ustack_chunk {
	__u64 data[USTACK_CHUNK / 8 + 1]; /* + 1: the verifier's bound on data[off + 1] */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, WALK_SLOTS);
	__type(key, __u32);
	__type(value, struct ustack_chunk);
} ustack SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 262144);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct bpfprof_unwind_key);
	__type(value, struct bpfprof_unwind_mapping);
} unwind_mappings SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, BPFPROF_MAX_UNWIND_TABLES);
	__type(key, __u32);
	__type(value, struct bpfprof_unwind_table);
} unwind_tables SEC(".maps");

/*
 * Each table's words in an array of its own size: BPF_F_INNER_MAP (5.10)
 * lets inner arrays differ in max_entries; BPF_F_MMAPABLE lets user space
 * fill one with a memcpy.
 */
struct unwind_words_map {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_INNER_MAP | BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64); /* struct bpfprof_unwind_words: words 2i (low half), 2i + 1 */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, BPFPROF_MAX_UNWIND_TABLES);
	__type(key, __u32);
	__array(values, struct unwind_words_map);
} unwind_rows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	/* memory as processes come, not 1.3 MiB up front, where the kernel lets it */
	__uint(map_flags, COMPAT_PERF_HASH_FLAGS);
	__type(key, __u32); /* tgid whose mappings are all in unwind_mappings */
	/* when they were (last) registered: bpf_ktime_get_ns(), CLOCK_MONOTONIC */
	__type(value, __u64);
} unwind_procs SEC(".maps");

/*
 * What the maps that describe a process (unwind_procs, py_procs, hs_procs,
 * v8_procs) said of the last process walked on this CPU, one cache a CPU
 * and walk slot:
 * a hash look-up (a helper call, the key's hash, two cache lines) costs
 * 150-300 ns a sample on this project's VMs (docs/BENCHMARKS.md, issue
 * 34), up to four a sample, where a CPU-bound process's samples follow one
 * another on a CPU. User space adds 1 to proc_maps_gen after each write to
 * those maps (session.c); an entry holds while it is the same, read before
 * the look-ups that filled it.
 */
__u64 proc_maps_gen = 0;

/* interp_walks' bit in struct proc_reg's walks: the kinds were looked up */
#define PROC_KINDS_KNOWN (1u << 31)

struct proc_reg {
	__u64 gen; /* proc_maps_gen when looked up */
	__u64 reg_ns; /* unwind_procs' value; 0: no entry, or no tables (fp) */
	__u32 tgid;
	/* BPFPROF_WALK_* bits: the process is in py_procs, hs_procs, v8_procs */
	__u32 kinds;
	/* interp_walks | PROC_KINDS_KNOWN of the load that looked kinds up; 0: not yet (walk_interps) */
	__u32 walks;
	__u32 pad;
};

/* one entry a walk slot: a sample may interrupt an off-CPU block's walk between its check and its write */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, WALK_SLOTS);
	__type(key, __u32);
	__type(value, struct proc_reg);
} proc_reg_cache SEC(".maps");

/*
 * A frame-pointer step whose return address is in no registered mapping is
 * taken for garbage (a register that was not a frame pointer), except this
 * long after a process's registration: there it is as likely code mapped
 * since (V8's code space appears 0.2 s into node, after its first
 * registration), so the sample goes to user space as a copy, walked once
 * the process is registered again. Bounded in time, so that a program
 * whose rbp is not a frame pointer (a JVM's compiled code) costs copies
 * for its first seconds only.
 */
#define YOUNG_NS (2ULL * 1000 * 1000 * 1000)

/*
 * The walk's state between bpf_loop steps: scalars only (the maps are looked
 * up once a walk and reach each callback through bpf_loop's ctx:
 * walk_steps), and no counter carried in a register from step to step (the
 * step's index is `steps`, here), since the verifier follows each different
 * value of one through every step; step i stores the (i + 2)th user
 * address, at e->ips[nk + 1 + i].
 */
/* A table's rows find_rule searches in one copy (words) */
#define UNWIND_ROWS_CHUNK_SHIFT 6
#define UNWIND_ROWS_CHUNK (1u << UNWIND_ROWS_CHUNK_SHIFT)

struct walk {
	struct unwind_walk_frame f; /* the frame being unwound (include/unwind_walk_step.h) */
	/*
	 * The mapping of the last frame's pc (unwind_walk_rule): the next
	 * frames are most often in it, and skip the trie. Empty: end <= start.
	 */
	__u64 map_start, map_end, map_bias;
	__u32 map_table;
	/*
	 * find_rule's copy of rows [rows_at, rows_at + rows_n) of table
	 * rows_table, which the next frames search again while their rows are
	 * the same (a function's callers are often near it, a recursion's are
	 * one); rows_n 0: none. (Keeping the page's bounds and the rule word
	 * too measured no faster, and doubled the legacy variant's verified
	 * instructions.)
	 */
	__u32 rows_table, rows_at, rows_n;
	__u64 base; /* user address of the chunk's first byte */
	__u64 len; /* bytes of the chunk that hold a copy; 0: none yet */
	__u32 tgid;
	__u8 walking; /* a walk was begun (walk_begin) */
	/*
	 * The sample goes to user space as a stack copy (BPFPROF_STAT_COPY_*:
	 * why), not as this walk's result: sample_send
	 */
	__u8 copy;
	__u8 kregs; /* ip0, sp0, bp0 are the task's saved user registers, not the sample's */
	__u8 after_syscall; /* ip0 follows a syscall instruction: its row is ip0 - 1's (walk_begin) */
	__u8 young; /* the process was registered less than YOUNG_NS before the sample */
	/*
	 * The process is a JVM (hs_procs), node (v8_procs): only then does
	 * each frame call their hooks (walk_step), which cost two global
	 * function calls and their state's look-ups a frame (walk_interps);
	 * Python (py_procs): only then does py_begin look its layout up
	 */
	__u8 hotspot, v8, py;
	__u64 ip0, sp0, bp0; /* the registers the walk began from */
	__u64 reg_ns; /* the process's registration time (unwind_procs); 0: none */
	__u32 rule_idx, rule_gen; /* find_rule's rule cache entry, while it searches */
	__u32 now; /* the sample's time >> 30 (about seconds): tables' `used` */
	__u32 steps; /* steps done: the next one's index (several a bpf_loop callback, or a tail call) */
	__u16 frames[2]; /* frames stepped by a row [0], by frame pointers [1] (unwind_walk_counted) */
	/* last, not cleared at walk_begin (rows_n says what it holds) */
	__u32 rows[UNWIND_ROWS_CHUNK];
};

/*
 * The walk's state lives in a map value, not on the BPF stack: the verifier
 * tracks no values in maps, so every bpf_loop step starts from the same
 * state and is verified once, where exact values on the stack (a flag, a
 * copy length) made it follow every combination through every step.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, WALK_SLOTS);
	__type(key, __u32);
	__type(value, struct walk);
} walk_state SEC(".maps");

/*
 * Read the 8 bytes at user address addr of the stack. Reads go through a copy
 * of the stack a page at a time (from the frame's sp, or the page's start,
 * to the page's end): every user access has a fixed cost (SMAP's stac/clac,
 * which a VM may trap), and a walk reads upwards, each page once. A copy
 * never starts below sp, where nothing of the walk lies, and never crosses
 * into a page the walk has not reached, which may not be mapped
 * (bpf_probe_read_user is all or nothing).
 */
static __always_inline int stack_read(struct walk *w, struct ustack_chunk *c, __u64 addr,
				      __u64 *val)
{
	__u64 off, start, len;

	if (addr & 7)
		return bpf_probe_read_user(val, 8, (const void *)addr) ? -1 : 0;
	if (!w->len || addr < w->base || addr + 8 > w->base + w->len) {
		start = addr & ~(__u64)(USTACK_CHUNK - 1);
		if (w->f.sp > start && w->f.sp <= addr)
			start = w->f.sp & ~7ULL;
		len = USTACK_CHUNK - (start & (USTACK_CHUNK - 1));
		bench_read_time(false);
		if (bpf_probe_read_user(c->data, len & (2 * USTACK_CHUNK - 1), (const void *)start))
			return -1;
		bench_read_time(true);
		w->base = start;
		w->len = len;
	}
	off = ((addr - w->base) / 8) & (USTACK_CHUNK / 8 - 1);
	*val = c->data[off];
	return 0;
}

/* Word i of table `table` (its words map `rows`); false when out of range */
static __always_inline bool table_word(void *rows, __u32 i, __u32 *val)
{
	__u32 key = i >> 1;
	__u64 *v;

	v = bpf_map_lookup_elem(rows, &key);
	if (!v)
		return false;
	/* little-endian: w[0] is the low half; no branch (fewer paths to verify) */
	*val = *v >> ((i & 1) * 32);
	return true;
}

/*
 * Words i..i+n-1 (n <= UNWIND_ROWS_CHUNK) of a table into dst: one lookup
 * and one copy, as an array's elements lie end to end (kernel/bpf/arraymap.c:
 * value + elem_size * index), where a lookup a word made the search cost
 * one helper call a step. The caller keeps the words inside the table.
 */
static __always_inline bool table_words(void *rows, __u32 i, __u32 n, __u32 *dst)
{
	__u32 key = i >> 1;
	__u64 *v, size = n;

	v = bpf_map_lookup_elem(rows, &key);
	if (!v)
		return false;
	if (size > UNWIND_ROWS_CHUNK)
		size = UNWIND_ROWS_CHUNK;
	barrier_var(size); /* the bound on the register the call takes */
	return !bpf_probe_read_kernel(dst, size * 4, (void *)v + (i & 1) * 4);
}

/*
 * 0xffffffff where row word `word`'s pc is at or below off, else 0: the
 * binary search's choice without a branch, so the verifier follows one path
 * through its steps (barrier_var: clang would make it a branch again)
 */
static __always_inline __u32 row_le_mask(__u32 word, __u32 off)
{
	__u32 mask = ((__u64)off - BPFPROF_UNWIND_ROW_PC(word)) >> 63;

	barrier_var(mask);
	return mask - 1;
}

/*
 * Halving steps that bring a page's rows (at most one a byte of its pc
 * range, and the page-start row) down to UNWIND_ROWS_CHUNK
 */
#define UNWIND_NARROW_STEPS (BPFPROF_UNWIND_PAGE_SHIFT + 1 - UNWIND_ROWS_CHUNK_SHIFT)

/*
 * The rules found in the last walks on this CPU, one cache a slot, by
 * table load (struct bpfprof_unwind_table's gen) and pc: a table's words
 * are in an inner map, whose look-ups the verifier cannot inline, so a
 * row search costs three to five helper calls (each an indirect call and
 * a return through a thunk on this project's hosts: docs/BENCHMARKS.md,
 * issue 34), where a profile's frames come back to the same few thousand
 * pcs. Direct-mapped; an entry another pc took is found again by search.
 */
#define RULE_CACHE 1024
struct rule_entry {
	__u64 rel; /* the pc, relative to its table */
	__u32 table, gen; /* the table's slot and load; gen 0: no entry */
	__u32 rule;
	__u32 pad;
};

struct rule_cache {
	struct rule_entry e[RULE_CACHE];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, WALK_SLOTS);
	__type(key, __u32);
	__type(value, struct rule_cache);
} rule_cache SEC(".maps");

/*
 * The rule of the row that covers rel in table t (slot `table`): its page's
 * rows from the page index; halved with a word read a step while more than
 * UNWIND_ROWS_CHUNK, then copied into w->rows with one read and searched
 * there without a helper call; the copy is kept in *w for the next frames.
 */
static __always_inline __u32 search_rule(struct walk *w, struct bpfprof_unwind_table *t,
					 __u32 table, __u64 rel)
{
	__u32 page, lo, hi, l, r, m, mask, word, off = rel & 0xffff, k;
	void *rows;

	rows = bpf_map_lookup_elem(&unwind_rows, &table);
	page = rel >> BPFPROF_UNWIND_PAGE_SHIFT;
	if (!rows || !table_word(rows, page, &lo) || !table_word(rows, page + 1, &hi) || lo >= hi)
		return BPFPROF_UNWIND_NONE;
	l = lo;
	r = hi;
	for (k = 0; k < UNWIND_NARROW_STEPS && r - l > UNWIND_ROWS_CHUNK; k++) {
		m = l + (r - l) / 2;
		if (!table_word(rows, m, &word))
			return BPFPROF_UNWIND_NONE;
		mask = row_le_mask(word, off);
		l += (m - l) & mask;
		r = m + ((r - m) & mask);
	}
	if (w->rows_table != table || w->rows_at != l || w->rows_n != r - l) {
		w->rows_n = 0;
		if (!table_words(rows, l, r - l, w->rows))
			return BPFPROF_UNWIND_NONE;
		w->rows_table = table;
		w->rows_at = l;
		w->rows_n = r - l;
	}
	/* rows l..r-1 are w->rows[0..r-l): the last whose pc is at most off */
	r -= l;
	l = 0;
	for (k = 0; k < UNWIND_ROWS_CHUNK_SHIFT; k++) {
		m = (l + r) / 2;
		mask = row_le_mask(w->rows[m & (UNWIND_ROWS_CHUNK - 1)], off);
		l += (m - l) & mask;
		r = m + ((r - m) & mask);
	}
	word = w->rows[l & (UNWIND_ROWS_CHUNK - 1)];
	/* an address before its page's first row has no CFI */
	if (BPFPROF_UNWIND_ROW_PC(word) > off || BPFPROF_UNWIND_ROW_RULE(word) >= t->nr_rules ||
	    !table_word(rows, t->rules + BPFPROF_UNWIND_ROW_RULE(word), &word))
		return BPFPROF_UNWIND_NONE;
	return word;
}

/*
 * The rule of the row that covers rel in table `table`, from this slot's
 * rule cache, else by search_rule (and then cached; not in the legacy
 * variant, whose 16 steps a program each would verify it). `now`: the
 * walk's time stamp, kept in the table's `used`.
 */
static __always_inline __u32 find_rule(struct walk *w, __u32 slot, __u32 table, __u64 rel,
				       __u32 now)
{
	struct bpfprof_unwind_table *t = bpf_map_lookup_elem(&unwind_tables, &table);
	struct rule_cache *rc;
	struct rule_entry *ce;
	__u32 gen, rule, idx;

	if (bench_row_search_skip())
		return BPFPROF_UNWIND_NONE;
	if (!t || !t->nr_pages || (rel >> BPFPROF_UNWIND_PAGE_SHIFT) >= t->nr_pages)
		return BPFPROF_UNWIND_NONE;
	if (t->used != now)
		t->used = now; /* for user space's choice of what goes when memory runs out */
	if (BPFPROF_LEGACY)
		return search_rule(w, t, table, rel);
	/*
	 * read before the search: the slot may be loaded again meanwhile (the
	 * rule is then cached under the old gen, which no description holds
	 * any more)
	 */
	gen = *(volatile __u32 *)&t->gen;
	rc = bpf_map_lookup_elem(&rule_cache, &slot);
	if (!rc) /* one search path only, for the verifier: a slot's entry is always there */
		return BPFPROF_UNWIND_NONE;
	idx = (rel ^ (rel >> 10) ^ (table * 0x9e3779b1u)) & (RULE_CACHE - 1);
	ce = &rc->e[idx];
	if (gen && ce->gen == gen && ce->rel == rel && ce->table == table)
		return ce->rule;
	/*
	 * the entry's key now, its rule after the search, from the walk's
	 * state: kept on the BPF stack across the search they made the
	 * task-work variant's four call levels pass its 512 bytes
	 */
	ce->gen = 0;
	ce->rel = rel;
	ce->table = table;
	w->rule_idx = idx;
	w->rule_gen = gen;
	rule = search_rule(w, t, table, rel);
	rc = bpf_map_lookup_elem(&rule_cache, &slot);
	if (rc) {
		ce = &rc->e[w->rule_idx & (RULE_CACHE - 1)];
		ce->rule = rule;
		ce->gen = w->rule_gen;
	}
	return rule;
}

/* --- the step's accessors (include/unwind_walk_step.h): the live stack and the maps --- */

/* What a step of the walk in slot `slot` works on */
struct walk_env {
	struct walk *w;
	struct bpfprof_sample *e; /* the record: ips[] */
	struct ustack_chunk *c; /* the stack's copy */
	__u32 slot;
};

/*
 * The mappings the last walks on this CPU found in the trie, one cache a
 * slot, by process and 64 KiB of address: a walk goes through a few
 * mappings (the program, libc, ...), each first met by a trie lookup,
 * which walks the trie's nodes comparing keys bit by bit, and a helper
 * call. An entry holds for its process's registration (unwind_procs'
 * time, which user space writes after a registration's stale mappings
 * are gone: user/unwind/unwinder.c); only mappings found are cached.
 */
#define MAP_CACHE 256
struct map_entry {
	__u64 reg_ns; /* the registration it was found under; 0: none */
	__u64 start, end, bias;
	__u32 tgid, table;
};

struct map_cache {
	struct map_entry e[MAP_CACHE];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, WALK_SLOTS);
	__type(key, __u32);
	__type(value, struct map_cache);
} map_cache SEC(".maps");

/*
 * The rule of the mapping that holds look: its table's row, if it has a
 * table. The mapping comes from the map cache, else from the trie, where
 * look is outside the last frame's.
 */
static __always_inline int unwind_walk_rule(struct unwind_walk_frame *f, struct walk_env *env,
					    __u64 look, __u32 *rule)
{
	struct walk *w = env->w;
	struct bpfprof_unwind_mapping *m;
	struct bpfprof_unwind_key key;
	struct map_cache *mc;
	struct map_entry *me;
	__u32 idx = ((look >> 16) ^ (w->tgid * 0x9e3779b1u)) & (MAP_CACHE - 1);

	if (look - w->map_start >= w->map_end - w->map_start) {
		/* not in the legacy variant, whose 16 steps a program each would verify it */
		mc = BPFPROF_LEGACY ? NULL : bpf_map_lookup_elem(&map_cache, &env->slot);
		me = mc ? &mc->e[idx] : NULL;
		if (me && w->reg_ns && me->reg_ns == w->reg_ns && me->tgid == w->tgid &&
		    look - me->start < me->end - me->start) {
			w->map_start = me->start;
			w->map_end = me->end;
			w->map_bias = me->bias;
			w->map_table = me->table;
		} else {
			key.prefixlen = 96;
			key.tgid = bpf_htonl(w->tgid);
			key.addr = bpf_cpu_to_be64(look);
			m = bpf_map_lookup_elem(&unwind_mappings, &key);
			if (!m)
				return -1;
			w->map_start = m->start;
			w->map_end = m->end;
			w->map_bias = m->bias;
			w->map_table = m->table;
			/* looked up again: kept across the trie's, it took stack (find_rule) */
			mc = BPFPROF_LEGACY ? NULL : bpf_map_lookup_elem(&map_cache, &env->slot);
			if (mc) {
				me = &mc->e[((look >> 16) ^ (w->tgid * 0x9e3779b1u)) & (MAP_CACHE - 1)];
				me->reg_ns = w->reg_ns;
				me->tgid = w->tgid;
				me->start = w->map_start;
				me->end = w->map_end;
				me->bias = w->map_bias;
				me->table = w->map_table;
			}
		}
	}
	if (w->map_table != BPFPROF_UNWIND_NO_TABLE)
		*rule = find_rule(w, env->slot, w->map_table, look - w->map_bias, w->now);
	return 0;
}

/*
 * A pc in no registered mapping: a sample's stack goes to user space as a
 * copy where it may be code mapped since the registration (a library the
 * dynamic loader mapped, dlopen; after a frame-pointer step only while the
 * process is young: YOUNG_NS). Not in the legacy variant (compat.bpf.h),
 * nor for an off-CPU block's walk.
 */
static __always_inline void unwind_walk_unmapped(struct unwind_walk_frame *f, struct walk_env *env,
						 __u64 look, bool fp_dropped)
{
	if (!COMPAT_COPY_IN_WALK || !copy_stacks || env->slot != SLOT_SAMPLE)
		return;
	if (!fp_dropped)
		env->w->copy = BPFPROF_STAT_COPY_NO_MAPPING;
	else if (env->w->young)
		env->w->copy = BPFPROF_STAT_COPY_FP_UNMAPPED;
}

/*
 * The leaf's code bytes (unwind_walk_code) at the last pcs met on this CPU,
 * one cache a slot: a user read costs 0.35 us and more on this project's
 * VMs (docs/BENCHMARKS.md, issue 34), and every walk by frame pointers
 * makes one for its leaf, whose pcs recur (a hot loop). An entry holds
 * for its process, while its tgid's slot saw no exec (exec_gen) and within the
 * walk's second (struct walk's now): code changes at an address only where
 * a JIT rewrites it, and then is read again a second later at the latest.
 */
#define CODE_CACHE 256
struct code_entry {
	__u64 pc;
	__u32 tgid, now, execs;
	__u8 code[4];
};

struct code_cache {
	struct code_entry e[CODE_CACHE];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, WALK_SLOTS);
	__type(key, __u32);
	__type(value, struct code_cache);
} code_cache SEC(".maps");

/* The leaf's code, but with --check-user-stacks, whose kernel walker has no prologue repair */
static __always_inline bool unwind_walk_code(struct unwind_walk_frame *f, struct walk_env *env,
					     __u64 pc, __u8 *code)
{
	struct code_cache *cc;
	struct code_entry *ce;
	__u32 gen = exec_gen(env->w->tgid);

	if (check_user_stack)
		return false;
	/* not in the legacy variant, whose 16 steps a program each verify it (+50 % there) */
	cc = BPFPROF_LEGACY ? NULL : bpf_map_lookup_elem(&code_cache, &env->slot);
	if (!cc)
		return !bpf_probe_read_user(code, 4, (const void *)(pc - 1));
	ce = &cc->e[(pc ^ (pc >> 8)) & (CODE_CACHE - 1)];
	if (ce->pc == pc && ce->tgid == env->w->tgid && ce->now == env->w->now &&
	    ce->execs == gen) {
		__builtin_memcpy(code, ce->code, 4);
		return true;
	}
	if (bpf_probe_read_user(code, 4, (const void *)(pc - 1)))
		return false;
	ce->pc = pc;
	ce->tgid = env->w->tgid;
	ce->now = env->w->now;
	ce->execs = gen;
	__builtin_memcpy(ce->code, code, 4);
	return true;
}

static __always_inline int unwind_walk_read(struct unwind_walk_frame *f, struct walk_env *env,
					    __u64 addr, __u64 *val)
{
	return stack_read(env->w, env->c, addr, val);
}

/* The interrupted stack may be another one (sigaltstack): the chunk is read again */
static __always_inline void unwind_walk_new_stack(struct unwind_walk_frame *f, struct walk_env *env)
{
	env->w->len = 0;
}

static __always_inline void unwind_walk_counted(struct unwind_walk_frame *f, struct walk_env *env,
						bool fp_step)
{
	/* in the walk's state, whose line the step has: the counters get them at walk_end */
	env->w->frames[fp_step]++;
}

static __always_inline bool unwind_walk_store(struct unwind_walk_frame *f, struct walk_env *env,
					      __u64 idx, __u64 ra)
{
	if (idx >= f->nk + max_user_stack || idx >= MAX_IPS)
		return false;
	env->e->ips[idx] = ra;
	return true;
}

/*
 * The interpreters' hooks, BPF global functions (5.6; not in the legacy
 * variant, which has neither): the verifier checks each once, on its own,
 * rather than inside every path of walk_step that reaches it, which tripled
 * the modern variants' load time (docs/BENCHMARKS.md, issue 34). HotSpot's
 * takes scalars and looks its state up in slot; V8's, called at each frame
 * without a row, is given the step's (pointers to a type's memory as a
 * global function's arguments: 5.12).
 *
 * A frame in a JVM's code cache: HotSpot's step (bpf/hotspot.bpf.h), its
 * result; -1 for a native step.
 */
int hotspot_walk_step(__u32 slot, __u32 i);

/*
 * An interpreter's look at each frame stepped by frame pointers (bpf/v8.bpf.h),
 * given the step's state: its common frame inline, the others by a call
 */
static __always_inline int v8_frame_fast(struct walk *w, struct ustack_chunk *c, __u32 slot,
					 __u32 i);
int v8_walk_frame(struct walk *w, struct ustack_chunk *c, __u32 slot, __u32 i);

/*
 * A frame without a row: V8's hook where the process is node. JavaScript's
 * frames have none (JIT code, and the builtins embedded in node's text,
 * which no FDE covers), and a BPF-to-BPF call costs about 28 ns on a host
 * whose returns go through a thunk (AMD's SRSO "safe RET"): calling the
 * hook only here, rather than at each of a node walk's ~50 steps, saves
 * the native frames' calls.
 */
static __always_inline void unwind_walk_no_row(struct unwind_walk_frame *f, struct walk_env *env,
					       __u32 i)
{
	if (BPFPROF_LEGACY || !env->w->v8)
		return;
	bench_hook_time(14, false);
	if (!v8_frame_fast(env->w, env->c, env->slot, i))
		v8_walk_frame(env->w, env->c, env->slot, i);
	bench_hook_time(14, true);
}


/* The maps a walk's steps work on, of slot env->slot: false where one is missing */
static __always_inline bool walk_env_get(struct walk_env *env)
{
	env->w = bpf_map_lookup_elem(&walk_state, &env->slot);
	env->e = bpf_map_lookup_elem(&scratch, &env->slot);
	env->c = bpf_map_lookup_elem(&ustack, &env->slot);
	return env->w && env->e && env->c;
}

/*
 * Frame i of the walk in env (walk_env_get's): HotSpot's step for a JVM's,
 * else the native step (unwind_walk_step). Returns 1 to stop the walk
 * (w->f.stop says why), 0 to go on.
 */
static __always_inline long walk_step(struct walk_env *env, __u32 i)
{
	long ret;

	if (bench_walk_skip())
		return 1;
	if (!BPFPROF_LEGACY && env->w->hotspot) {
		ret = hotspot_walk_step(env->slot, i);
		/* a callback returns 0 or 1: the verifier knows no global function's range */
		if (ret >= 0)
			return ret ? 1 : 0;
	}
	return unwind_walk_step(&env->w->f, env, i) ? 1 : 0;
}

/*
 * Frames by frame pointers that nothing else looks at (walk_fp_only) a
 * bpf_loop callback steps at most after its own, in a loop the verifier
 * follows frame by frame: a callback's call and return cost about 28 ns
 * where returns go through AMD's SRSO thunk (docs/BENCHMARKS.md, "a BPF
 * call's price"), a third of such a frame. (The whole step several times a
 * callback, unrolled, measured slower at 999 Hz: each copy's code is cold
 * at each sample; and it made 2.5 times the verified instructions.)
 * Only with --call-graph fp (unwind_tables_on false, a constant the
 * verifier prunes by): with tables every process's frames have rows or
 * are about to, and the run's loop cost the modern variant's load 4 ms
 * more of verification (9,034 against 10,602 instructions).
 */
#ifndef WALK_FP_RUN /* -D: bench builds of other lengths */
#define WALK_FP_RUN 4
#endif

/* The walk's next frame is a plain frame-pointer step (unwind_walk_step_of's fp_only) */
static __always_inline bool walk_fp_only(struct walk *w)
{
	return !w->f.tables && !w->f.leaf && !w->v8 && !w->hotspot;
}

/*
 * bpf_loop's callback: the walk's next frame (w->steps), and the plain
 * frame-pointer ones after it, WALK_FP_RUN at most, of the walk whose maps
 * env holds (the caller's stack: looked up once a walk, not a frame), up
 * to max_user_stack - 1 steps. Returns 1 to stop the walk.
 */
step_fn walk_steps(__u32 k, void *data)
{
	struct walk_env *env = data;
	struct walk *w = env->w;
	__u32 j;

	if (!w || !env->e || !env->c)
		return 1;
	if (w->steps + 1 >= max_user_stack || walk_step(env, w->steps))
		return 1;
	w->steps++;
#pragma clang loop unroll(disable)
	for (j = 0; !unwind_tables_on && j < WALK_FP_RUN && walk_fp_only(w); j++) {
		if (w->steps + 1 >= max_user_stack ||
		    unwind_walk_step_of(&w->f, env, w->steps, true))
			return 1;
		w->steps++;
	}
	return 0;
}

/*
 * Begin a walk of the user stack from registers (ip, sp, bp) into
 * e->ips[nk...]: the leaf is stored, the rest is walk_step's, from step 0.
 * at_entry: the registers were saved at kernel entry (a sample taken in
 * kernel mode, an off-CPU block). Returns false when there is nothing to walk.
 */
static __always_inline bool walk_begin(struct bpfprof_sample *e, __u64 nk, __u32 tgid, __u64 ip,
				       __u64 sp, __u64 bp, bool at_entry)
{
	struct walk *w;
	__u32 slot = cur_slot();
	struct proc_reg *pc;
	__u64 *reg, gen;

	w = bpf_map_lookup_elem(&walk_state, &slot);
	if (!w)
		return false;
	__builtin_memset(w, 0, offsetof(struct walk, rows));
	if (!ip || arch_kernel_addr(ip) || nk >= MAX_IPS)
		return false;
	w->walking = 1;
	w->f.pc = ip;
	w->f.sp = sp;
	w->f.bp = bp;
	w->f.nk = nk;
	w->f.end = nk + 1;
	w->tgid = tgid;
	w->f.leaf = 1;
	/*
	 * In a system call ip is the instruction after the `syscall`, which may
	 * be its function's last: glibc's __restore_rt (mov $15,%eax; syscall)
	 * ends its FDE there, and a sample in rt_sigreturn found no row (the
	 * matrix's nofp checks lost 0.5-1 % of their stacks so under load).
	 * Its row is looked up inside the instruction, at ip - 1, as for a
	 * return address; the CFA there is the same, `syscall` moves no stack.
	 */
	if (at_entry && arch_after_syscall(ip)) {
		w->f.leaf = 0;
		w->after_syscall = 1;
	}
	w->now = e->time_ns >> 30;
	e->ips[nk] = ip;
	w->ip0 = ip;
	w->sp0 = sp;
	w->bp0 = bp;
	w->kregs = at_entry;
	if (ring_crowded(slot == SLOT_SAMPLE ? CROWD_CPU_RING | CROWD_SHARED : CROWD_SHARED)) {
		w->f.stop = BPFPROF_STAT_WALK_SHED;
		return false;
	}
	gen = *(volatile __u64 *)&proc_maps_gen;
	pc = bpf_map_lookup_elem(&proc_reg_cache, &slot);
	if (pc && pc->tgid == tgid && pc->gen == gen) {
		w->reg_ns = pc->reg_ns;
	} else {
		reg = unwind_tables_on ? bpf_map_lookup_elem(&unwind_procs, &tgid) : NULL;
		w->reg_ns = reg ? *reg : 0;
		if (pc) {
			pc->gen = gen;
			pc->tgid = tgid;
			pc->reg_ns = w->reg_ns;
			pc->walks = 0; /* the kinds: walk_interps' */
		}
	}
	/* a registration's time is never 0 (CLOCK_MONOTONIC ns) */
	w->f.tables = w->reg_ns != 0;
	w->young = w->f.tables && e->time_ns - w->reg_ns < YOUNG_NS;
	if (unwind_tables_on && !w->f.tables) {
		/* a sample's stack is copied for user space; an off-CPU block's is walked by frame pointers */
		if (copy_stacks && slot == SLOT_SAMPLE) {
			w->copy = BPFPROF_STAT_COPY_NOT_READY;
			return false;
		}
		stat_inc(BPFPROF_STAT_WALK_NOT_READY);
	}
	return true;
}

/* The sample's stack is to be copied for user space (walk_begin, walk_step) */
static __always_inline __u32 walk_copy(void)
{
	struct walk *w;
	__u32 slot;

	if (!copy_stacks)
		return 0; /* the verifier drops the copy's paths (read-only data) */
	slot = cur_slot();
	w = bpf_map_lookup_elem(&walk_state, &slot);
	return w && slot == SLOT_SAMPLE ? w->copy : 0;
}

/*
 * The walk's end: the number of user addresses stored, and in *stop the
 * reason it ended (0 when there was no walk).
 */
static __always_inline __u64 walk_end(__u32 *stop)
{
	struct walk *w;
	__u32 slot = cur_slot();

	*stop = 0;
	w = bpf_map_lookup_elem(&walk_state, &slot);
	if (!w || !w->walking)
		return 0;
	*stop = w->f.stop ? w->f.stop : BPFPROF_STAT_WALK_LIMIT;
	stat_inc(*stop);
	/* the frames' counts, a walk's at once (unwind_walk_counted) */
	if (w->frames[1])
		stat_add_here(BPFPROF_STAT_FRAMES_FP, w->frames[1]);
	if (w->frames[0])
		stat_add_here(BPFPROF_STAT_FRAMES_CFI, w->frames[0]);
	return w->f.end > w->f.nk ? w->f.end - w->f.nk : 0;
}

/* The number of user addresses the walk stored so far (as walk_end gives it, uncounted). */
static __always_inline __u64 walk_nu(void)
{
	struct walk *w;
	__u32 slot = cur_slot();
	__u64 n;

	w = bpf_map_lookup_elem(&walk_state, &slot);
	if (!w || !w->walking)
		return 0;
	n = w->f.end > w->f.nk ? w->f.end - w->f.nk : 0;
	return n > BPFPROF_MAX_USER_STACK ? BPFPROF_MAX_USER_STACK : n;
}

/*
 * Without bpf_loop (COMPAT_WALK_BY_TAIL_CALLS) the verifier follows every
 * step of a bounded loop, and each frame's binary search with it: a whole
 * walk in one program goes past its 8192 pending branches. So a program
 * walks WALK_FRAMES_PER_PROG frames and tail-calls itself for the next ones,
 * as the OpenTelemetry profiler and Parca walk (16 frames a call:
 * --max-stack's 512 frames in the 32 tail calls a sample may make, the leaf
 * being the first program's). Returns true when the walk is over.
 */
#define WALK_FRAMES_PER_PROG 16
static __always_inline bool walk_some(void)
{
	struct walk_env env = { .slot = cur_slot() };
	__u32 k;

	for (k = 0; k < WALK_FRAMES_PER_PROG; k++) {
		if (!walk_env_get(&env) || !env.w->walking || env.w->steps + 1 >= max_user_stack)
			return true;
		if (walk_step(&env, env.w->steps))
			return true;
		env.w->steps++;
	}
	return false;
}

/*
 * Begin the user walk from the registers at the sample: the interrupted ones
 * for a sample taken in user mode, else those saved at kernel entry (none
 * for kernel threads, whose tasks have no mm). Returns false when there is
 * no user stack.
 */
static __always_inline bool user_stack_begin(struct bpf_perf_event_data *ctx,
					     struct bpfprof_sample *e, __u64 nk, __u32 tgid)
{
	__u64 ip = PT_REGS_IP(&ctx->regs), sp = PT_REGS_SP(&ctx->regs), bp = PT_REGS_FP(&ctx->regs);
	bool at_entry = nk || arch_kernel_addr(ip);

	if (at_entry) {
		struct task_struct *task = current_task();
		struct pt_regs *regs;

		if (!BPF_CORE_READ(task, mm))
			ip = 0; /* a kernel thread: no user stack */
		regs = ip ? task_user_regs(task) : NULL;
		ip = regs ? PT_REGS_IP_CORE(regs) : 0;
		sp = regs ? PT_REGS_SP_CORE(regs) : 0;
		bp = regs ? PT_REGS_FP_CORE(regs) : 0;
		return walk_begin(e, nk, tgid, ip, sp, bp, true);
	}
	return walk_begin(e, nk, tgid, ip, sp, bp, false);
}

#endif /* BPFPROF_UNWIND_BPF_H */

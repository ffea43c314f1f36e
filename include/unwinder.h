/* SPDX-License-Identifier: MIT */
/*
 * The unwinder's user side (--call-graph): keeps the BPF walker's view of
 * each process up to date (include/bpfprof_abi.h, "Unwind tables"): every
 * executable mapping of a process in the LPM trie, with the unwind table of
 * its file (include/unwind_table.h) in the shared row array. Tables are
 * built once per file, keyed by build-id (dev + inode where there is none),
 * shared by every process and container that maps the file (a file stripped
 * of its CFI gets its debug file's .debug_frame), loaded into a BPF array of
 * its own size (include/unwind_compact.h: about 4 bytes a row), and freed
 * when no process maps it any more. Their kernel memory is bounded by a byte
 * budget (--unwind-memory): when a new table would go past it, the tables
 * the walk used least recently are dropped first (their files are then
 * walked by frame pointers), with one warning; a table larger than the
 * whole budget is not loaded.
 *
 * BPF maps are reached through struct unwind_sink, so that the bookkeeping is
 * tested without BPF; user/capture/session.c provides the real one.
 */
#ifndef BPFPROF_UNWINDER_H
#define BPFPROF_UNWINDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "bpfprof_abi.h"
#include "profile.h"

struct unwind_sink {
	/* LPM trie entries; each returns 0 or -errno */
	int (*set_mapping)(void *ctx, const struct bpfprof_unwind_key *k,
			   const struct bpfprof_unwind_mapping *v);
	int (*del_mapping)(void *ctx, const struct bpfprof_unwind_key *k);
	/*
	 * Optional, the same for n entries at once (a process's: one syscall,
	 * BPF_MAP_UPDATE_BATCH / DELETE_BATCH on the trie, where there were
	 * one each; NULL: one call each). set_mappings: keys k[i] to v[i], in
	 * order, 0 or -errno (those before the failing one set);
	 * del_mappings: every key present goes, the others are left out.
	 */
	int (*set_mappings)(void *ctx, const struct bpfprof_unwind_key *k,
			    const struct bpfprof_unwind_mapping *v, uint32_t n);
	void (*del_mappings)(void *ctx, const struct bpfprof_unwind_key *k, uint32_t n);
	/* the process's entries are complete (ready) or gone (!ready) */
	int (*set_proc)(void *ctx, uint32_t tgid, bool ready);
	/*
	 * Load table id (< max_tables): its words[0..nr_words), laid out as
	 * info says; *bytes: the kernel memory it took. 0 or -errno. The walk
	 * may see it only at the next flush_tables.
	 */
	int (*load_table)(void *ctx, uint32_t id, const struct bpfprof_unwind_table *info,
			  const uint32_t *words, uint32_t nr_words, uint64_t *bytes);
	/*
	 * Make the tables loaded since the last call visible to the walk, all
	 * at once (a map-in-map update waits for an RCU grace period, 8-30 ms:
	 * one for them all, not one each). Called before a process's entries
	 * name them. May be NULL: load_table makes each visible itself.
	 */
	void (*flush_tables)(void *ctx);
	/* Drop table id's words (the walk then finds no rule there) */
	void (*drop_table)(void *ctx, uint32_t id);
	/* The walk's last use of table id (struct bpfprof_unwind_table.used); 0: never */
	uint32_t (*table_used)(void *ctx, uint32_t id);
	/*
	 * The words of loaded table id as the BPF walk reads them, and its
	 * description: 0, or -errno (not loaded, dropped). Borrowed until the
	 * table is loaded again or dropped (both under the unwinder's lock,
	 * as this call is). May be NULL: user-space walks then find no rows.
	 */
	int (*table_words)(void *ctx, uint32_t id, const struct bpfprof_unwind_table **info,
			   const uint32_t **words, uint32_t *nr_words);
	/*
	 * Optional, both or neither: words maps put in the walk's array of
	 * maps ahead of need (the unwinder's pool, while its thread is idle),
	 * so that loading a table is writing words, not an update of the
	 * array of maps: each such update from user space waits for an RCU
	 * grace period (kernel/bpf/syscall.c maybe_wait_bpf_programs(), 8-30
	 * ms here), which a new process's first samples would wait for.
	 * install_rows: an empty words map of room[i] words (a multiple of
	 * 1,024) at slot ids[i], for i < n, all in one update; their
	 * descriptions stay empty (the walk finds no rule there). bytes[i]:
	 * the kernel memory of each. Returns how many went in (the first
	 * ones), or -errno. Called without the unwinder's lock.
	 * fill_table: table id's words into the map install_rows put at slot id
	 * (at least nr_words of room, never written before), then its
	 * description, after the words as the walk reads them: visible at
	 * once, no flush_tables needed. 0 or -errno (nothing visible).
	 */
	int (*install_rows)(void *ctx, const uint32_t *ids, const uint32_t *room, uint32_t n,
			    uint64_t *bytes);
	int (*fill_table)(void *ctx, uint32_t id, const struct bpfprof_unwind_table *info,
			  const uint32_t *words, uint32_t nr_words);
	uint64_t budget; /* kernel memory tables may take, bytes; 0: no tables */
	uint32_t max_tables;
	void *ctx;
};

struct unwinder;

/*
 * New unwinder writing through `sink` (copied). build_tables false
 * (--call-graph fp) registers mappings only, all without tables, so the
 * frame-pointer walk still stops at addresses outside the code.
 * proc_dir is "/proc" except in tests. Returns NULL with errno set.
 */
struct unwinder *unwinder__new(const struct unwind_sink *sink, bool build_tables,
			       const char *proc_dir);
/*
 * Read tables from, and write those built to, the persistent cache c
 * (include/unwind_cache.h; borrowed, outliving u; NULL: none). Call before
 * the first load.
 */
struct unwind_cache;
void unwinder__set_cache(struct unwinder *u, struct unwind_cache *c);

/*
 * The process that is bpfprof itself (getpid(); 0, the default: none). It
 * is registered as any other, its samples walked and named, but no table
 * is built for it: its mappings use the tables other processes'
 * registrations built (libc, the dynamic loader, the vDSO: every process
 * maps them), and are registered again when one of its files gets a table
 * that way; its own executable and the libraries only it maps are walked
 * by frame pointers. Why: under -a a cold run spent 5-13 ms of CPU on its
 * ten own tables (35,000 rows), most of the registrations' thread in a 3 s
 * run, for the few dozen samples bpfprof takes of itself; a bpfprof
 * profiled by another (-p PID) is a process like any other there. Call
 * before the first registration.
 */
void unwinder__set_own_pid(struct unwinder *u, uint32_t pid);

/* Stops the background thread (waiting for the table it is building) and frees everything. */
void unwinder__free(struct unwinder *u);

/*
 * Register process `pid` with its mappings (only executable ones are used),
 * building the tables it lacks, now, on the caller's thread. Replaces what
 * the process had. Returns 0 or -errno (-ENOMEM; a file whose table cannot
 * be built is not an error: it gets no table).
 */
int unwinder__load(struct unwinder *u, uint32_t pid, const struct profile_mapping *maps,
		   size_t nr_maps);

/*
 * The same from maps text (/proc/PID/maps' format, read by the process
 * table: proc_table.h), read now or earlier: a process gone since has its
 * files opened by path where they are the very files mapped (device and
 * inode). Returns 0 or -errno.
 */
int unwinder__load_text(struct unwinder *u, uint32_t pid, const char *text, size_t len);

/*
 * The same on the background thread: the mappings are copied, the call
 * returns at once; a later request for the same pid replaces a pending one.
 * Returns 0 or -ENOMEM.
 */
int unwinder__queue(struct unwinder *u, uint32_t pid, const struct profile_mapping *maps,
		    size_t nr_maps);

/*
 * Start the background thread now rather than at the first unwinder__queue:
 * it fills the pool of words maps (sink->install_rows) while no
 * registration is queued, so that a command's first tables find it ready.
 * Nothing without install_rows or tables. 0 or -errno.
 */
int unwinder__start(struct unwinder *u);

/*
 * Wait, max_ms at most, for unwinder__start's thread to have filled the
 * pool once (one install: an RCU grace period of wall time, little CPU), so
 * that a command released after it finds the maps for its first tables in
 * place. Returns at once when no thread was started.
 */
void unwinder__wait_pool(struct unwinder *u, unsigned int max_ms);

/* Remove the process: its entries, and its references to tables. */
void unwinder__forget(struct unwinder *u, uint32_t pid);

/* Forget the registered processes that have exited (kill(pid, 0) == ESRCH). */
void unwinder__reap(struct unwinder *u);

struct unwinder_stats {
	uint64_t nr_procs; /* registered now */
	uint64_t nr_tables; /* tables loaded now */
	uint64_t nr_rows; /* their rows (as built), now */
	uint64_t bytes; /* their kernel memory now, bytes */
	uint64_t peak_bytes; /* the most they took at once */
	uint64_t budget; /* --unwind-memory */
	uint64_t nr_built; /* tables built (cache misses) */
	uint64_t nr_from_cache; /* tables read from the persistent cache (include/unwind_cache.h) */
	uint64_t nr_shared; /* cache hits: a table another mapping already had */
	/*
	 * of them, tables of files no registered process mapped any more, kept
	 * for the next one (KEEP_FILES); kept tables dropped (the oldest past
	 * KEEP_FILES, or for a slot or room); kept now (in nr_tables too)
	 */
	uint64_t nr_kept_used, nr_kept_dropped, nr_kept;
	uint64_t nr_no_cfi; /* files without usable CFI */
	uint64_t nr_full; /* tables larger than the whole budget: not loaded */
	uint64_t nr_evicted; /* tables dropped to make room (least recently used) */
	uint64_t loaded_rows, loaded_bytes; /* rows and bytes of every table loaded, summed */
	uint64_t build_ns; /* time spent building tables, ns */
	uint64_t cfi_bytes; /* CFI section bytes read, bytes */
	uint64_t nr_entries; /* LPM trie entries now */
	/* processes registered by the background thread (unwinder__queue) */
	uint64_t nr_queued;
	uint64_t ready_sum_ns,
		ready_max_ns; /* from queued to registered, ns: summed, the longest */
	uint64_t ready_cpu_ns; /* CPU time the background thread spent registering them, ns */
	/*
	 * Where registrations' time went (wall ns, every registration summed):
	 * waiting for the background thread, identifying the files (open,
	 * fstat, build-id), reading tables from the persistent cache, building
	 * them (build_ns), loading them into the BPF maps, writing the
	 * process's map entries; nr_skipped: requests whose executable
	 * mappings were those registered or pending already (not redone)
	 */
	uint64_t wait_ns, id_ns, cache_ns, load_ns, entries_ns;
	uint64_t nr_loads, nr_skipped;
	/*
	 * The pool of words maps installed ahead of need (sink->install_rows):
	 * tables written into one of them, the installs (one RCU grace period
	 * each, on the background thread while idle), their wall and CPU ns, the
	 * pool's maps waiting now and their kernel memory, bytes (not in
	 * `bytes`, which counts tables)
	 */
	uint64_t nr_pooled, nr_pool_installs, pool_install_ns, pool_install_cpu_ns;
	uint64_t pool_maps, pool_bytes;
	/*
	 * bpfprof's own process (unwinder__set_own_pid): its executable
	 * mappings without a table at its last registration (walked by frame
	 * pointers), and its registrations again as others' tables came
	 */
	uint64_t own_untabled, nr_own_again;
};

void unwinder__stats(struct unwinder *u, struct unwinder_stats *st);

/* Whether a registration of pid is queued or being made on the background thread */
bool unwinder__pending(struct unwinder *u, uint32_t pid);

/* Queue the registration of pid from maps text (as unwinder__load_text, then unwinder__queue). 0 or -errno. */
int unwinder__queue_text(struct unwinder *u, uint32_t pid, const char *text, size_t len);

/* Whether process pid is registered (its entries are complete: the BPF walk would take it). */
bool unwinder__has_proc(struct unwinder *u, uint32_t pid);

/*
 * Whether process pid may be registered, without the lock (any thread,
 * also while the background thread holds it through a table load's RCU
 * grace period): false when it is not; true when it is, or when another
 * registered pid shares its slot (pid modulo 65,536). What for: the mmap
 * events' thread leaves out the executable mappings of processes that are
 * not registered (mmap_events__set_exec_filter) without waiting on the lock.
 */
bool unwinder__may_have_proc(const struct unwinder *u, uint32_t pid);

/*
 * The rule the BPF walk finds for user address addr of process pid: the
 * executable mapping of the registration that holds addr, then its table's
 * row (unwind_compact__lookup over the words sink->table_words gives).
 * Returns 0 with *rule (BPFPROF_UNWIND_NONE: no table, no row), -ENOENT
 * when no executable mapping holds addr, -ESRCH when pid is not registered.
 * For the user-space walk of copied stacks (include/unwind_step.h).
 */
int unwinder__rule(struct unwinder *u, uint32_t pid, uint64_t addr, uint32_t *rule);

/*
 * Split [start, end) into aligned power-of-two blocks as LPM keys for
 * `tgid` (at most out_cap). Returns the number of keys, or -E2BIG.
 */
int unwinder__lpm_keys(uint32_t tgid, uint64_t start, uint64_t end, struct bpfprof_unwind_key *out,
		       size_t out_cap);

/*
 * One line on how user-stack walks ended (stats: the BPF counters, enum
 * bpfprof_stat, since the start): the share that reached the end of the stack
 * (_start, clone3; and the roots walks, unwinder__root_walks' count since the
 * start, which the BPF counters do not see as ends) and, with -v, every
 * reason and the tables (us, may be NULL). mode: "dwarf" or "fp", as
 * --call-graph says.
 */
void unwinder__print_walks(FILE *f, const uint64_t stats[BPFPROF_STAT_NR],
			   const struct unwinder_stats *us, const char *mode, uint64_t roots);

/*
 * Walks (samples and off-CPU blocks) of symbolized profile p whose outermost
 * user frame is a root the BPF walk does not end at, where a stack is
 * complete all the same: Go's (runtime.goexit tops every goroutine,
 * runtime.mstart and rt0_go the system stacks: runtime/asm_amd64.s TOPFRAME;
 * runtime.clone, where a walk with CFI goes on from mstart to)
 * and, for a frame-pointer walk (fp), the outermost frames such a walk
 * reaches: _start, and glibc's start_thread under clone3 (which keeps no
 * frame pointer).
 */
uint64_t unwinder__root_walks(const struct profile *p, bool fp);

#endif /* BPFPROF_UNWINDER_H */

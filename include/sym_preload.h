/* SPDX-License-Identifier: MIT */
/*
 * Symbol tables read while sampling: a queue of the target processes'
 * executable files and one background thread that reads their tables
 * (SCHED_IDLE where it can be raised back: only CPU time the workload
 * leaves), so that finalize finds them loaded and only looks up
 * (docs/BENCHMARKS.md, "Finalize (benchmark 4), seventh pass").
 *
 * Ownership: a file queued is the thread's until sym_preload__stop has
 * joined it; from then the caller reads the list and takes the tables it
 * wants on its own thread, one owner a table again (a table's lazy index is
 * not thread-safe: sym_elf.h). The queue is a lock-free stack the adder
 * pushes on and the thread empties whole: the adder (the ring buffer's
 * reader) never waits for a thread of idle priority that a busy CPU may
 * not run for a while. Each file read is handed back the same way, on a
 * second stack the caller empties whole when it wants the tables read so
 * far (sym_preload__take_read: the symbolizer's passes while sampling).
 * The reading itself is the caller's (a load
 * callback): the names are those of a table read at finalize, byte for
 * byte.
 */
#ifndef BPFPROF_SYM_PRELOAD_H
#define BPFPROF_SYM_PRELOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct elf_symtab;
struct sym_preload;

/*
 * Read the table of the file open at fd (a descriptor of the very file
 * mapped: the symbolizer's pin), mapped at path by process pid. Runs on the
 * preload's thread: it may use only its arguments and ctx's immutable
 * state. Returns a new table, or NULL (left to be read at finalize).
 */
typedef struct elf_symtab *(*sym_preload_load_fn)(void *ctx, int fd, uint32_t pid,
						  const char *path);

/* A file queued, and after sym_preload__stop what its reading gave */
struct sym_preload_file {
	struct sym_preload_file *next; /* the stack's, then the thread's list: in the order queued */
	char *path; /* as mapped ("... (deleted)" kept): the symbolizer's key with the below */
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	uint32_t pid; /* the process that mapped it */
	int fd; /* our duplicate of the caller's descriptor, closed once read */
	struct elf_symtab *st; /* the table read; NULL when not read (yet), failed, or taken */
	bool tried; /* read, or its reading failed */
	struct sym_preload_file *next_read; /* sym_preload__take_read's list */
};

/*
 * Start the thread (its queue empty). At most max_files files are queued
 * for the run (memory: each table stays until finalize, sampled or not).
 * after_ns: nothing is read before this long (ns) after the start, so that
 * a run that ends sooner spends no CPU on it (the files queued are read
 * at finalize as without the thread); 0: from the first file. idle: run
 * the thread under SCHED_IDLE (pass true only when the caller can raise it
 * back: CAP_SYS_NICE, sched(7)). Returns NULL with errno set (ENOMEM, or
 * pthread_create's error).
 */
struct sym_preload *sym_preload__start(size_t max_files, uint64_t after_ns, bool idle,
				       sym_preload_load_fn load, void *ctx);

/*
 * Queue a file for reading: fd is duplicated (the caller keeps its own).
 * The caller queues a file once (its own key: path, inode, device). Past
 * max_files, or after sym_preload__stop, nothing is queued. One thread (the
 * adder; never blocks). Returns 0 (queued or not), or -ENOMEM / -errno of
 * the duplicate.
 */
int sym_preload__add(struct sym_preload *pl, const char *path, uint64_t inode, uint32_t dev_major,
		     uint32_t dev_minor, uint32_t pid, int fd);

/*
 * Stop the thread: the table it is reading is finished (at normal priority
 * from here), the files not begun stay unread; the thread is joined. Safe
 * to call again. On the adder's thread. After it, the files below may be
 * read and their tables taken.
 */
void sym_preload__stop(struct sym_preload *pl);

/*
 * While the thread runs (or after): the files it has read, or failed to
 * read, since the last call, each once, through ->next_read (newest
 * first). The thread is done with each: its table (st) is the caller's to
 * take (set st to NULL: the file stays listed, and sym_preload__free frees
 * only the tables left). Every file counted tried by a sym_preload__progress
 * before the call is in its list or an earlier one's. On the adder's
 * thread; never waits.
 */
struct sym_preload_file *sym_preload__take_read(struct sym_preload *pl);

/*
 * Files queued so far, and of them read or failed; returns whether the stop
 * was asked for (any thread, any time: for -v and tests).
 */
bool sym_preload__progress(const struct sym_preload *pl, size_t *queued, size_t *tried);

/* The files queued, in that order, through ->next (after sym_preload__stop; NULL when none) */
struct sym_preload_file *sym_preload__files(struct sym_preload *pl);

/* CPU the thread spent reading tables, in ns (after sym_preload__stop) */
uint64_t sym_preload__cpu_ns(const struct sym_preload *pl);

/* Stop, then free the queue, its descriptors and the tables nobody took (st left non-NULL). */
void sym_preload__free(struct sym_preload *pl);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * --check-unwind: the self-check of the BPF unwinder. A sampled user stack,
 * copied by the BPF program with its registers next to the BPF walk's
 * result (struct bpfprof_ustack_copy, include/bpfprof_abi.h), is unwound
 * again in user space with libdwfl, the way perf report unwinds
 * `perf record --call-graph dwarf` samples (tools/perf/util/unwind-libdw.c):
 * the process's modules from /proc/PID/maps, the registers of the record,
 * memory reads served from the copied stack only. The two walks are then
 * compared frame by frame (raw pcs: the sampled rip, then return addresses).
 *
 * One Dwfl per process is kept between samples (reporting a process's
 * modules costs far more than an unwind) and reported again when the BPF
 * walk has an address outside every module libdwfl knows (dlopen).
 */
#ifndef BPFPROF_UNWIND_CHECK_H
#define BPFPROF_UNWIND_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "bpfprof_abi.h"

enum unwind_check_verdict {
	UNWIND_CHECK_IDENTICAL = 0, /* the same frames, as many */
	/* the BPF walk is a strict prefix of libdwfl's, not ended at an END row */
	UNWIND_CHECK_BPF_SHORTER,
	/*
	 * libdwfl stopped first, on a read outside the copied stack or an
	 * error, and the BPF walk agrees up to there: counted as identical
	 * for the "0 different" goal (perf report's stacks stop there too)
	 */
	UNWIND_CHECK_DWFL_SHORTER,
	/*
	 * a frame differs, or one walk ended at the end of the stack (libdwfl:
	 * return address undefined; BPF: end_reached) while the other went on
	 */
	UNWIND_CHECK_DIFFERENT,
	UNWIND_CHECK_FAILED, /* libdwfl could not start: process gone, no modules */
	UNWIND_CHECK_NR_VERDICTS,
};

struct unwind_check_result {
	enum unwind_check_verdict verdict;
	uint32_t nr_dwfl; /* frames libdwfl found, leaf first */
	uint64_t dwfl_ips[BPFPROF_MAX_STACK];
	uint32_t first_diff; /* UNWIND_CHECK_DIFFERENT: index of the first differing frame */
	int dwfl_end; /* 0: libdwfl reached the end of the stack; else its
					   libdwfl error number (dwfl_errno()), or -1 when
					   it stopped at a read the copy could not serve */
	int stack_exhausted; /* libdwfl asked for memory past the copied stack */
};

struct unwind_check_stats {
	uint64_t verdicts[UNWIND_CHECK_NR_VERDICTS];
	uint64_t dwfl_frames; /* sum of nr_dwfl over the samples checked */
	uint64_t bpf_frames; /* sum of the BPF walks' frames */
};

struct unwind_check;

/* Returns a checker with no process cached, or NULL (out of memory). */
struct unwind_check *unwind_check__new(void);
void unwind_check__free(struct unwind_check *uc);

/*
 * Unwind the stack of rec (size: the bytes received, at least
 * BPFPROF_USTACK_COPY_HDR_SIZE + rec->stack_size) with libdwfl, against the
 * current /proc/PID/maps of rec->tgid, compare it with rec->ips[0..nr_user)
 * and count the verdict. Fills *res when res is not NULL. Returns 0, or
 * -EINVAL for a malformed record (not counted).
 */
int unwind_check__sample(struct unwind_check *uc, const struct bpfprof_ustack_copy *rec,
			 size_t size, struct unwind_check_result *res);

/* Drop what is cached for process pid (exit, exec). */
void unwind_check__forget(struct unwind_check *uc, pid_t pid);

/*
 * The function name libdwfl knows for pc in process pid (from the cached
 * Dwfl; NULL when none). Borrowed until the next call on uc.
 */
const char *unwind_check__symbol(struct unwind_check *uc, pid_t pid, uint64_t pc);

/* Counts so far; borrowed, valid until unwind_check__free. */
const struct unwind_check_stats *unwind_check__stats(const struct unwind_check *uc);

/* "identical", "bpf-shorter", "dwfl-shorter", "different", "failed" */
const char *unwind_check__verdict_name(enum unwind_check_verdict v);

#endif /* BPFPROF_UNWIND_CHECK_H */

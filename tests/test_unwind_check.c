// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/unwind/unwind_check.c on this very process: a chain of
 * functions (built without frame pointers in the normal build, as gcc -O2
 * does on x86-64) captures its registers with inline assembly and copies 8 KB
 * of its own stack into a struct bpfprof_ustack_copy, as the BPF program
 * does; libdwfl, through the module, must find the chain in order (names
 * from dwfl_module_addrname), and again from a child process whose record
 * comes through a pipe. Then the verdicts: the same frames
 * (identical), fewer (bpf-shorter), a wrong one (different), a stack copy
 * cut to 64 bytes (dwfl-shorter), a BPF walk that claims the end of the
 * stack too early (different), a malformed record (-EINVAL), a process that
 * does not exist (failed).
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "unwind_check.h"

static struct bpfprof_ustack_copy *captured;

/* End of the mapping holding addr, from /proc/self/maps */
static uint64_t mapping_end(uint64_t addr)
{
	unsigned long long lo, hi;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx", &lo, &hi) == 2 && addr >= lo && addr < hi) {
			fclose(f);
			return hi;
		}
	fclose(f);
	fail_msg("no mapping holds 0x%" PRIx64, addr);
	return 0;
}

/*
 * The registers at the label 1 in DWARF order (rax rdx rcx rbx rsi rdi rbp
 * rsp r8-r15 rip), then the stack from rsp up, at most 8 KB and not past
 * the stack's mapping.
 */
static __attribute__((noinline, noipa, no_sanitize_address)) void
capture(struct bpfprof_ustack_copy *rec)
{
	__u64 *r = rec->regs, end, i;

	__asm__ volatile("mov %%rax, 0(%0)\n\t"
			 "mov %%rdx, 8(%0)\n\t"
			 "mov %%rcx, 16(%0)\n\t"
			 "mov %%rbx, 24(%0)\n\t"
			 "mov %%rsi, 32(%0)\n\t"
			 "mov %%rdi, 40(%0)\n\t"
			 "mov %%rbp, 48(%0)\n\t"
			 "mov %%rsp, 56(%0)\n\t"
			 "mov %%r8, 64(%0)\n\t"
			 "mov %%r9, 72(%0)\n\t"
			 "mov %%r10, 80(%0)\n\t"
			 "mov %%r11, 88(%0)\n\t"
			 "mov %%r12, 96(%0)\n\t"
			 "mov %%r13, 104(%0)\n\t"
			 "mov %%r14, 112(%0)\n\t"
			 "mov %%r15, 120(%0)\n\t"
			 "1: lea 1b(%%rip), %%rax\n\t"
			 "mov %%rax, 128(%0)\n\t"
			 :
			 : "r"(r)
			 : "rax", "memory");
	end = mapping_end(r[7]);
	rec->stack_size = end - r[7] < BPFPROF_CHECK_STACK_SIZE ? end - r[7] :
								  BPFPROF_CHECK_STACK_SIZE;
	/* word by word: ASan's memcpy would stop at the redzones of the frames */
	for (i = 0; i + 8 <= rec->stack_size; i += 8)
		*(__u64 *)(rec->stack + i) = *(const volatile __u64 *)(uintptr_t)(r[7] + i);
	rec->type = BPFPROF_REC_USTACK_COPY;
	rec->tgid = getpid();
	rec->tid = gettid();
}

static volatile int sink;

static __attribute__((noinline, noipa)) int chain_c(int x)
{
	volatile char pad[40];

	pad[x & 31] = x;
	capture(captured);
	return pad[x & 31] + 1;
}

static __attribute__((noinline, noipa)) int chain_b(int x)
{
	int r = chain_c(x + 1);

	sink += r;
	return r * 3;
}

static __attribute__((noinline, noipa)) int chain_a(int x)
{
	volatile long big[100];

	big[x % 100] = x;
	return chain_b(x * 2) + (int)big[x % 100];
}

static size_t record_size(const struct bpfprof_ustack_copy *rec)
{
	return BPFPROF_USTACK_COPY_HDR_SIZE + rec->stack_size;
}

/* The function libdwfl names for frame i (return addresses looked up at pc - 1) */
static const char *frame_name(struct unwind_check *uc, const struct unwind_check_result *res,
			      uint32_t i)
{
	const char *s = unwind_check__symbol(uc, getpid(), res->dwfl_ips[i] - (i ? 1 : 0));

	return s ? s : "?";
}

static void test_own_stack(void **state)
{
	struct unwind_check_result res;
	struct unwind_check *uc;
	uint32_t i;

	captured = calloc(1, sizeof(*captured));
	assert_non_null(captured);
	chain_a(5);
	assert_true(captured->stack_size >= 1024);
	uc = unwind_check__new();
	assert_non_null(uc);

	/* no BPF frames: libdwfl's are all longer */
	captured->nr_user = 0;
	assert_int_equal(unwind_check__sample(uc, captured, record_size(captured), &res), 0);
	for (i = 0; i < res.nr_dwfl; i++)
		print_message("  #%u 0x%" PRIx64 " %s\n", i, res.dwfl_ips[i],
			      frame_name(uc, &res, i));
	print_message("  libdwfl: %u frames, end %d (%s), copy exhausted %d\n", res.nr_dwfl,
		      res.dwfl_end, res.dwfl_end ? "error" : "end of stack", res.stack_exhausted);
	assert_true(res.nr_dwfl >= 5);
	assert_int_equal(res.dwfl_ips[0], captured->regs[16]);
	assert_string_equal(frame_name(uc, &res, 0), "capture");
	assert_string_equal(frame_name(uc, &res, 1), "chain_c");
	assert_string_equal(frame_name(uc, &res, 2), "chain_b");
	assert_string_equal(frame_name(uc, &res, 3), "chain_a");
	assert_string_equal(frame_name(uc, &res, 4), "test_own_stack");
	assert_int_equal(res.verdict, UNWIND_CHECK_BPF_SHORTER);

	/* the BPF walk found the same frames: identical */
	captured->nr_user = res.nr_dwfl;
	memcpy(captured->ips, res.dwfl_ips, res.nr_dwfl * sizeof(captured->ips[0]));
	assert_int_equal(unwind_check__sample(uc, captured, record_size(captured), &res), 0);
	assert_int_equal(res.verdict, UNWIND_CHECK_IDENTICAL);

	/* the first three: a prefix */
	captured->nr_user = 3;
	assert_int_equal(unwind_check__sample(uc, captured, record_size(captured), &res), 0);
	assert_int_equal(res.verdict, UNWIND_CHECK_BPF_SHORTER);
	/* ... but not one that claims to have reached the end of the stack */
	captured->end_reached = 1;
	assert_int_equal(unwind_check__sample(uc, captured, record_size(captured), &res), 0);
	assert_int_equal(res.verdict, UNWIND_CHECK_DIFFERENT);
	assert_int_equal(res.first_diff, 3);
	captured->end_reached = 0;

	/* a wrong caller at 2 */
	captured->nr_user = res.nr_dwfl;
	captured->ips[2] += 4;
	assert_int_equal(unwind_check__sample(uc, captured, record_size(captured), &res), 0);
	assert_int_equal(res.verdict, UNWIND_CHECK_DIFFERENT);
	assert_int_equal(res.first_diff, 2);
	captured->ips[2] -= 4;

	/* libdwfl ended the stack while the BPF walk went on: different */
	if (!res.dwfl_end && res.nr_dwfl < BPFPROF_MAX_STACK) {
		captured->ips[res.nr_dwfl] = 0x1234;
		captured->nr_user = res.nr_dwfl + 1;
		assert_int_equal(unwind_check__sample(uc, captured, record_size(captured), &res),
				 0);
		assert_int_equal(res.verdict, UNWIND_CHECK_DIFFERENT);
		captured->nr_user = res.nr_dwfl;
	}

	/* the cost of a check with the process's Dwfl cached */
	{
		struct timespec a, b;
		int k;

		clock_gettime(CLOCK_MONOTONIC, &a);
		for (k = 0; k < 1000; k++)
			unwind_check__sample(uc, captured, record_size(captured), &res);
		clock_gettime(CLOCK_MONOTONIC, &b);
		assert_int_equal(res.verdict, UNWIND_CHECK_IDENTICAL);
		print_message("  %.2f us a check of %u frames\n",
			      ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / 1000 / 1e3,
			      res.nr_dwfl);
	}

	/* 64 bytes of stack: libdwfl runs out of copy after a frame or two */
	captured->stack_size = 64;
	assert_int_equal(unwind_check__sample(uc, captured, record_size(captured), &res), 0);
	assert_int_equal(res.verdict, UNWIND_CHECK_DWFL_SHORTER);
	assert_true(res.stack_exhausted);
	assert_true(res.nr_dwfl < 5);

	/* malformed: more stack than the record holds, too many frames */
	captured->stack_size = BPFPROF_CHECK_STACK_SIZE + 8;
	assert_int_equal(unwind_check__sample(uc, captured, sizeof(*captured), &res), -EINVAL);
	captured->stack_size = 1024;
	assert_int_equal(unwind_check__sample(uc, captured, BPFPROF_USTACK_COPY_HDR_SIZE + 100,
					      &res),
			 -EINVAL);
	captured->nr_user = BPFPROF_MAX_STACK + 1;
	assert_int_equal(unwind_check__sample(uc, captured, sizeof(*captured), &res), -EINVAL);

	{
		const struct unwind_check_stats *st = unwind_check__stats(uc);

		assert_int_equal(st->verdicts[UNWIND_CHECK_IDENTICAL], 1001);
		assert_int_equal(st->verdicts[UNWIND_CHECK_BPF_SHORTER], 2);
		assert_true(st->verdicts[UNWIND_CHECK_DIFFERENT] >= 2);
		assert_int_equal(st->verdicts[UNWIND_CHECK_DWFL_SHORTER], 1);
		assert_int_equal(st->verdicts[UNWIND_CHECK_FAILED], 0);
	}
	assert_string_equal(unwind_check__verdict_name(UNWIND_CHECK_DWFL_SHORTER), "dwfl-shorter");
	unwind_check__forget(uc, getpid());
	assert_null(unwind_check__symbol(uc, getpid(), captured->regs[16]));
	unwind_check__free(uc);
	free(captured);
}

/* The same from another process: a child captures, the parent unwinds with the child's pid */
static void test_other_process(void **state)
{
	struct unwind_check_result res;
	struct unwind_check *uc;
	struct bpfprof_ustack_copy *rec;
	int fds[2], status;
	size_t got = 0;
	ssize_t n;
	pid_t child;

	rec = calloc(1, sizeof(*rec));
	assert_non_null(rec);
	assert_int_equal(pipe(fds), 0);
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		close(fds[0]);
		captured = calloc(1, sizeof(*captured));
		if (!captured)
			_exit(1);
		chain_a(7);
		if (write(fds[1], captured, sizeof(*captured)) != sizeof(*captured))
			_exit(1);
		pause();
		_exit(0);
	}
	close(fds[1]);
	while (got < sizeof(*rec) && (n = read(fds[0], (char *)rec + got, sizeof(*rec) - got)) > 0)
		got += n;
	close(fds[0]);
	assert_int_equal(got, sizeof(*rec));
	assert_int_equal(rec->tgid, child);

	uc = unwind_check__new();
	assert_non_null(uc);
	assert_int_equal(unwind_check__sample(uc, rec, record_size(rec), &res), 0);
	assert_true(res.nr_dwfl >= 5);
	assert_non_null(unwind_check__symbol(uc, child, res.dwfl_ips[1] - 1));
	assert_true(!strncmp(unwind_check__symbol(uc, child, res.dwfl_ips[0]), "capture", 7));
	assert_true(!strncmp(unwind_check__symbol(uc, child, res.dwfl_ips[1] - 1), "chain_c", 7));
	assert_true(!strncmp(unwind_check__symbol(uc, child, res.dwfl_ips[2] - 1), "chain_b", 7));
	assert_true(!strncmp(unwind_check__symbol(uc, child, res.dwfl_ips[3] - 1), "chain_a", 7));
	assert_true(!strncmp(unwind_check__symbol(uc, child, res.dwfl_ips[4] - 1),
			     "test_other_process", 18));
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	unwind_check__free(uc);
	free(rec);
}

static void test_gone_process(void **state)
{
	struct bpfprof_ustack_copy *rec = calloc(1, sizeof(*rec));
	struct unwind_check_result res;
	struct unwind_check *uc = unwind_check__new();

	assert_non_null(rec);
	rec->type = BPFPROF_REC_USTACK_COPY;
	rec->tgid = rec->tid = 0x3ffffff0; /* above pid_max: no such process */
	rec->stack_size = 64;
	assert_int_equal(unwind_check__sample(uc, rec, record_size(rec), &res), 0);
	assert_int_equal(res.verdict, UNWIND_CHECK_FAILED);
	unwind_check__free(uc);
	free(rec);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_own_stack),
		cmocka_unit_test(test_other_process),
		cmocka_unit_test(test_gone_process),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

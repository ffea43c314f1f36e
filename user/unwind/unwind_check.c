// SPDX-License-Identifier: MIT
/*
 * --check-unwind (see include/unwind_check.h): a BPF walk checked against
 * libdwfl's unwind of the same copied stack. Set up as perf's
 * tools/perf/util/unwind-libdw.c does for `perf report` of `--call-graph
 * dwarf` samples: a Dwfl with the process's modules (here straight from
 * /proc/PID/maps with dwfl_linux_proc_report, files found by
 * dwfl_linux_proc_find_elf), dwfl_attach_state with thread callbacks whose
 * set_initial_registers hands over the record's DWARF-ordered registers and
 * whose memory_read answers from the copied stack only, then
 * dwfl_getthread_frames. Separate debug files are not looked for: libdwfl
 * uses the CFI of the mapped files themselves (.eh_frame, .debug_frame), as
 * the BPF tables do, and no debuginfod request is made.
 */
#include <errno.h>
#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "arch.h"
#include "log.h"
#include "unwind_check.h"

/* Processes whose Dwfl is kept; the least recently used goes first */
#define UC_MAX_PROCS 64
/* A process's modules are reported again at most this often (dlopen) */
#define UC_REREPORT_NS 1000000000ull

struct uc_proc {
	pid_t pid;
	Dwfl *dwfl;
	uint64_t reported_ns;
	uint64_t used; /* LRU stamp */
	/* the record being unwound, for the callbacks */
	const struct bpfprof_ustack_copy *rec;
	bool exhausted; /* a read past the end of the copy was refused */
	bool refused; /* any read was refused */
};

struct unwind_check {
	struct uc_proc *procs[UC_MAX_PROCS];
	size_t nr_procs;
	uint64_t clock;
	struct unwind_check_stats stats;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* No separate debug files: the mapped file's own CFI, as the BPF tables use */
static int uc_no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			   const char *file_name, const char *debuglink_file,
			   GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	return -1;
}

static const Dwfl_Callbacks uc_proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = uc_no_debuginfo,
};

static pid_t uc_next_thread(Dwfl *dwfl, void *dwfl_arg, void **thread_argp)
{
	struct uc_proc *p = dwfl_arg;

	if (*thread_argp)
		return 0;
	*thread_argp = p;
	return p->rec ? (pid_t)p->rec->tid : 0;
}

static bool uc_get_thread(Dwfl *dwfl, pid_t tid, void *dwfl_arg, void **thread_argp)
{
	*thread_argp = dwfl_arg;
	return true;
}

/* Reads from the copied stack [rsp, rsp + stack_size) only */
static bool uc_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *dwfl_arg)
{
	struct uc_proc *p = dwfl_arg;
	const struct bpfprof_ustack_copy *rec = p->rec;
	uint64_t sp = rec->regs[ARCH_DWREG_SP];

	if (addr < sp) {
		p->refused = true;
		return false;
	}
	if (rec->stack_size < sizeof(*result) || addr - sp > rec->stack_size - sizeof(*result)) {
		p->exhausted = p->refused = true;
		return false;
	}
	memcpy(result, rec->stack + (addr - sp), sizeof(*result));
	return true;
}

static bool uc_set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	struct uc_proc *p = thread_arg;
	Dwarf_Word regs[BPFPROF_CHECK_NR_REGS];
	int i;

	/* in DWARF order (include/arch.h), as libdwfl takes them */
	for (i = 0; i < BPFPROF_CHECK_NR_REGS; i++)
		regs[i] = p->rec->regs[i];
	return dwfl_thread_state_registers(thread, 0, BPFPROF_CHECK_NR_REGS, regs);
}

static const Dwfl_Thread_Callbacks uc_thread_callbacks = {
	.next_thread = uc_next_thread,
	.get_thread = uc_get_thread,
	.memory_read = uc_memory_read,
	.set_initial_registers = uc_set_initial_registers,
};

static void uc_proc_free(struct uc_proc *p)
{
	if (!p)
		return;
	if (p->dwfl)
		dwfl_end(p->dwfl);
	free(p);
}

/* (Re)build p's Dwfl from /proc/PID/maps; 0 or -errno */
static int uc_proc_report(struct uc_proc *p)
{
	int err;

	if (p->dwfl)
		dwfl_end(p->dwfl);
	p->reported_ns = now_ns();
	p->dwfl = dwfl_begin(&uc_proc_callbacks);
	if (!p->dwfl)
		return -ENOMEM;
	dwfl_report_begin(p->dwfl);
	err = dwfl_linux_proc_report(p->dwfl, p->pid);
	if (dwfl_report_end(p->dwfl, NULL, NULL) || err) {
		pr_debug("check-unwind: pid %d: modules not reported: %s\n", p->pid,
			 err > 0 ? strerror(err) : dwfl_errmsg(-1));
		goto out_end;
	}
	if (!dwfl_attach_state(p->dwfl, NULL, p->pid, &uc_thread_callbacks, p)) {
		pr_debug("check-unwind: pid %d: %s\n", p->pid, dwfl_errmsg(-1));
		goto out_end;
	}
	return 0;
out_end:
	dwfl_end(p->dwfl);
	p->dwfl = NULL;
	return -ESRCH;
}

static struct uc_proc *uc_proc_get(struct unwind_check *uc, pid_t pid)
{
	struct uc_proc *p;
	size_t i, lru = 0;

	for (i = 0; i < uc->nr_procs; i++) {
		if (uc->procs[i]->pid == pid) {
			uc->procs[i]->used = ++uc->clock;
			return uc->procs[i];
		}
		if (uc->procs[i]->used < uc->procs[lru]->used)
			lru = i;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->used = ++uc->clock;
	if (uc->nr_procs == UC_MAX_PROCS) {
		uc_proc_free(uc->procs[lru]);
		uc->procs[lru] = p;
	} else {
		uc->procs[uc->nr_procs++] = p;
	}
	uc_proc_report(p);
	return p;
}

struct unwind_check *unwind_check__new(void)
{
	return calloc(1, sizeof(struct unwind_check));
}

void unwind_check__free(struct unwind_check *uc)
{
	size_t i;

	if (!uc)
		return;
	for (i = 0; i < uc->nr_procs; i++)
		uc_proc_free(uc->procs[i]);
	free(uc);
}

void unwind_check__forget(struct unwind_check *uc, pid_t pid)
{
	size_t i;

	for (i = 0; i < uc->nr_procs; i++) {
		if (uc->procs[i]->pid != pid)
			continue;
		uc_proc_free(uc->procs[i]);
		uc->procs[i] = uc->procs[--uc->nr_procs];
		return;
	}
}

static int uc_frame(Dwfl_Frame *state, void *arg)
{
	struct unwind_check_result *res = arg;
	Dwarf_Addr pc;

	if (!dwfl_frame_pc(state, &pc, NULL))
		return DWARF_CB_ABORT;
	res->dwfl_ips[res->nr_dwfl++] = pc;
	return res->nr_dwfl < BPFPROF_MAX_STACK ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/* Whether every BPF frame lies in a module libdwfl knows */
static bool uc_covers(Dwfl *dwfl, const struct bpfprof_ustack_copy *rec)
{
	unsigned int i;

	for (i = 0; i < rec->nr_user; i++)
		if (!dwfl_addrmodule(dwfl, rec->ips[i]))
			return false;
	return true;
}

static void uc_unwind(struct uc_proc *p, const struct bpfprof_ustack_copy *rec,
		      struct unwind_check_result *res)
{
	int r;

	res->nr_dwfl = 0;
	p->rec = rec;
	p->exhausted = p->refused = false;
	r = dwfl_getthread_frames(p->dwfl, rec->tid, uc_frame, res);
	res->dwfl_end = r == 0 ? 0 : dwfl_errno() ? dwfl_errno() : -1;
	res->stack_exhausted = p->exhausted;
	/*
	 * libdwfl takes a return address it cannot read for the end of the
	 * stack (libdwfl/frame_unwind.c: DWFL_FRAME_STATE_PC_UNDEFINED) and
	 * returns 0: a refused read tells that end from a real one
	 */
	if (!res->dwfl_end && p->refused)
		res->dwfl_end = -1;
	p->rec = NULL;
}

int unwind_check__sample(struct unwind_check *uc, const struct bpfprof_ustack_copy *rec,
			 size_t size, struct unwind_check_result *res)
{
	struct unwind_check_result local;
	struct uc_proc *p;
	uint32_t i, n;

	if (!res)
		res = &local;
	memset(res, 0, sizeof(*res));
	if (size < BPFPROF_USTACK_COPY_HDR_SIZE || rec->stack_size > BPFPROF_CHECK_STACK_SIZE ||
	    size < BPFPROF_USTACK_COPY_HDR_SIZE + rec->stack_size ||
	    rec->nr_user > BPFPROF_MAX_STACK) {
		pr_warn("check-unwind: record of %zu bytes: stack_size %llu, %u frames: malformed\n",
			size,
			(unsigned long long)(size >= BPFPROF_USTACK_COPY_HDR_SIZE ?
						     rec->stack_size :
						     0),
			size >= BPFPROF_USTACK_COPY_HDR_SIZE ? rec->nr_user : 0);
		return -EINVAL;
	}
	p = uc_proc_get(uc, rec->tgid);
	if (!p)
		return -ENOMEM;
	/* a module libdwfl does not know yet (dlopen): report the maps again */
	if (p->dwfl && !uc_covers(p->dwfl, rec) && now_ns() - p->reported_ns > UC_REREPORT_NS)
		uc_proc_report(p);
	if (!p->dwfl && now_ns() - p->reported_ns > UC_REREPORT_NS)
		uc_proc_report(p);
	if (!p->dwfl) {
		res->verdict = UNWIND_CHECK_FAILED;
		goto out;
	}
	uc_unwind(p, rec, res);

	n = res->nr_dwfl < rec->nr_user ? res->nr_dwfl : rec->nr_user;
	for (i = 0; i < n && res->dwfl_ips[i] == rec->ips[i]; i++)
		;
	if (i < n) {
		res->verdict = UNWIND_CHECK_DIFFERENT;
		res->first_diff = i;
	} else if (res->nr_dwfl == rec->nr_user) {
		res->verdict = UNWIND_CHECK_IDENTICAL;
	} else if (rec->nr_user < res->nr_dwfl) {
		/* stopped earlier is fine, claiming the end of the stack there is not */
		res->verdict = rec->end_reached ? UNWIND_CHECK_DIFFERENT : UNWIND_CHECK_BPF_SHORTER;
		res->first_diff = rec->end_reached ? n : 0;
	} else if (res->dwfl_end) {
		/* libdwfl stopped on an error (the copy ran out, most often) */
		res->verdict = UNWIND_CHECK_DWFL_SHORTER;
	} else {
		/* libdwfl reached the end of the stack; the BPF walk went on */
		res->verdict = UNWIND_CHECK_DIFFERENT;
		res->first_diff = n;
	}
out:
	uc->stats.verdicts[res->verdict]++;
	uc->stats.dwfl_frames += res->nr_dwfl;
	uc->stats.bpf_frames += rec->nr_user;
	return 0;
}

const char *unwind_check__symbol(struct unwind_check *uc, pid_t pid, uint64_t pc)
{
	Dwfl_Module *mod;
	size_t i;

	for (i = 0; i < uc->nr_procs; i++) {
		if (uc->procs[i]->pid != pid || !uc->procs[i]->dwfl)
			continue;
		mod = dwfl_addrmodule(uc->procs[i]->dwfl, pc);
		return mod ? dwfl_module_addrname(mod, pc) : NULL;
	}
	return NULL;
}

const struct unwind_check_stats *unwind_check__stats(const struct unwind_check *uc)
{
	return &uc->stats;
}

const char *unwind_check__verdict_name(enum unwind_check_verdict v)
{
	static const char *const names[] = {
		[UNWIND_CHECK_IDENTICAL] = "identical",
		[UNWIND_CHECK_BPF_SHORTER] = "bpf-shorter",
		[UNWIND_CHECK_DWFL_SHORTER] = "dwfl-shorter",
		[UNWIND_CHECK_DIFFERENT] = "different",
		[UNWIND_CHECK_FAILED] = "failed",
	};

	return v < UNWIND_CHECK_NR_VERDICTS ? names[v] : "?";
}

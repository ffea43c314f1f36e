// SPDX-License-Identifier: MIT
/*
 * BPF skeleton lifecycle and perf events (include/session.h). One event per
 * online CPU, as bcc's profile and perf record -a do: the program filters by
 * tgid and cgroup in the kernel, so per-process targets need no per-thread
 * events and threads created later are covered. perf_event_open(2) and
 * include/uapi/linux/perf_event.h define the attr fields used here.
 */
#include <errno.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "array.h"
#include "bpfprof_abi.h"
#include "core_btf.h"
#include "log.h"
#include "session.h"
#include "unwind_compact.h"
#include "kernel_features.h"
#include "cpu_ring.h"
#include "profile.skel.h"
#include "profile_legacy.skel.h"
#include "profile_tw.skel.h"
#include "profile_tw7.skel.h"

/*
 * session__forget_exited: an exited tgid still there (a zombie) looked at
 * again at this many calls, a second apart, at most; and the walk of the
 * maps every FORGET_WALK_EVERY calls that dropped by key
 */
#define FORGET_PENDING 64
#define FORGET_LOOKS 4
#define FORGET_WALK_EVERY 30

struct session {
	struct profile_bpf *skel;
	enum bpf_variant variant; /* the variant skel was loaded from */
	/*
	 * The interpreters' unwinders the sample's program in sample_jmp walks
	 * with (BPFPROF_WALK_*), and those a later load adds (session_opts);
	 * under widen_lock, as the interpreters attach from more than one thread
	 */
	uint32_t interp_walks, interp_more;
	pthread_mutex_t widen_lock;
	/*
	 * The load that adds interp_more's unwinders runs on a thread of its
	 * own (widen_thread), started by the first attach that needs it: on
	 * the reader's thread its 30-50 ms of verifier time (more under load)
	 * left the ring buffer unread, and a loaded host's walks were shed
	 */
	pthread_t widen_thread;
	bool widen_started;
	char core_btf[PATH_MAX]; /* the BTF skel's CO-RE was relocated against (core_btf.h); "": the kernel's */
	/*
	 * The shared ring buffer `samples`: off-CPU blocks, stack copies, and
	 * the wake-ups of the CPUs' rings (an empty record discarded)
	 */
	struct ring_buffer *rb;
	/*
	 * The CPUs' rings (`cpu_rings`, bpf/cpu_ring.bpf.h), which a sample's
	 * record goes to: the map's mapping (cpu_rings_len bytes) and its reader
	 */
	void *cpu_rings_mem;
	size_t cpu_rings_len;
	struct cpu_rings *cpu_rings;
	bool warned_bad_ring;
	/*
	 * What session__poll waits on: the ring buffer's own epoll descriptor
	 * and the watched ones. libbpf's ring_buffer__poll reads every event of
	 * its epoll set as a ring index, so other descriptors live in this one.
	 */
	int epfd;
	int nr_cpus; /* possible CPUs: per-CPU map value count */
	uint64_t sampling_ns; /* CLOCK_MONOTONIC before the first event's program was attached */
	int *pfds; /* per possible CPU, -1 where offline */
	struct bpf_link **links;
	session_record_fn on_record;
	void *ctx;
	uint64_t unwind_budget; /* bytes of unwind tables at most; 0 when none are built */
	uint32_t table_gen; /* the last struct bpfprof_unwind_table.gen given a load */
	/*
	 * The notices of processes' first samples (struct bpfprof_notice),
	 * read before the samples and between every NOTICE_EVERY of them:
	 * what a process needs to be named is read while it lives, not
	 * after the backlog queued before its first record. NULL without
	 * on_notice.
	 */
	struct ring_buffer *notices;
	session_record_fn on_notice;
	uint32_t nr_since_notices;
	/*
	 * Tables the user-space walk of copied stacks reads (sink_table_words):
	 * each table's words map mapped read-only, by slot, until the slot is
	 * loaded again or dropped; NULL until the first such walk
	 */
	struct table_view *views;
	uint32_t nr_views;
	struct session_startup startup; /* what session__open cost (session__startup) */
	/*
	 * Tables loaded and not yet in unwind_rows (sink_flush_tables puts them
	 * there in one batch); under the unwinder's lock, as every sink call is
	 */
	struct pending_table *pending;
	size_t nr_pending, cap_pending;
	bool warned_flush;
	bool no_lpm_batch; /* the kernel refused a batch on unwind_mappings: one at a time */
	bool no_gone_batch; /* the kernel has no BPF_MAP_LOOKUP_BATCH for `seen`: GET_NEXT_KEY */
	/* session__forget_exited's: exited tgids still there (zombies), and the calls since a walk */
	struct exited_pending {
		uint32_t tgid, looks;
	} exited[FORGET_PENDING];
	uint32_t nr_exited, keyed_since_walk, walks_due;
	/*
	 * Entries put in py_procs, hs_procs and v8_procs by proc_map_set, less
	 * those it and forget_gone deleted (session__nr_interp_procs)
	 */
	uint32_t nr_interp_procs;
};

/* A table's words map, filled, waiting for its slot in unwind_rows */
struct pending_table {
	uint32_t id;
	int fd;
	struct bpfprof_unwind_table info;
};

static uint64_t map_memlock(int fd);

/* The calling thread's CPU time, ns */
static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Samples read between two looks at the notices: a look is two loads when none wait. */
#define NOTICE_EVERY 16

static int notice_cb(void *ctx, void *data, size_t size)
{
	struct session *s = ctx;

	return s->on_notice(s->ctx, data, size);
}

/* The notices queued, before any sample behind them. Returns 0 or -errno. */
static int read_notices(struct session *s)
{
	int n;

	if (!s->notices)
		return 0;
	s->nr_since_notices = 0;
	n = ring_buffer__consume(s->notices);
	return n < 0 ? n : 0;
}

static int rb_cb(void *ctx, void *data, size_t size)
{
	struct session *s = ctx;

	if (s->notices && ++s->nr_since_notices >= NOTICE_EVERY) {
		int err = read_notices(s);

		if (err)
			return err;
	}
	return s->on_record(s->ctx, data, size);
}

/*
 * Every ring's records: the shared ring's first (a process's stack copies,
 * sent before its tables were in and so before its walked samples), then
 * the CPUs' rings, merged by time. Returns the records read, or the first
 * negative return of a callback or of libbpf. -ECANCELED (a record past
 * an interval's cut, carried to the next period) stops the ring it came
 * from, not the others: the CPUs' records before the cut belong to this
 * period however many off-CPU blocks past it the shared ring holds.
 */
static int consume_rings(struct session *s)
{
	int m = ring_buffer__consume(s->rb), c;

	if (m < 0 && m != -ECANCELED)
		return m;
	c = cpu_rings__consume(s->cpu_rings, rb_cb, s);
	if (cpu_rings__nr_bad(s->cpu_rings) && !s->warned_bad_ring) {
		s->warned_bad_ring = true;
		pr_warn("a CPU's ring did not parse: its records skipped\n");
	}
	if (c < 0 || m < 0)
		return c < 0 ? c : m;
	return m > INT32_MAX - c ? INT32_MAX : m + c;
}

/* The CPUs' rings mapped (the array's values are contiguous, elem_size apart) and their reader */
static int map_cpu_rings(struct session *s)
{
	const struct bpf_map *m = s->skel->maps.cpu_rings;
	size_t stride = (bpf_map__value_size(m) + 7) & ~(size_t)7;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	s->cpu_rings_len = (stride * bpf_map__max_entries(m) + page - 1) & ~(page - 1);
	s->cpu_rings_mem =
		mmap(NULL, s->cpu_rings_len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(m), 0);
	if (s->cpu_rings_mem == MAP_FAILED) {
		s->cpu_rings_mem = NULL;
		return -errno;
	}
	s->cpu_rings = cpu_rings__new(s->cpu_rings_mem, stride, bpf_map__max_entries(m),
				      bpf_map__value_size(m) - BPFPROF_CPU_RING_HDR_SIZE -
					      BPFPROF_CPU_RING_SLACK);
	return s->cpu_rings ? 0 : -errno;
}

static int event_attr(const char *event, uint32_t freq, struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->freq = 1;
	attr->sample_freq = freq;
	if (!strcmp(event, "cpu-clock")) {
		attr->type = PERF_TYPE_SOFTWARE;
		attr->config = PERF_COUNT_SW_CPU_CLOCK;
	} else if (!strcmp(event, "cycles")) {
		attr->type = PERF_TYPE_HARDWARE;
		attr->config = PERF_COUNT_HW_CPU_CYCLES;
	} else {
		return -EINVAL;
	}
	return 0;
}

static int open_events(struct session *s, const struct session_opts *o)
{
	struct perf_event_attr attr;
	int cpu, err, nr_open = 0;

	err = event_attr(o->event, o->freq_hz, &attr);
	if (err) {
		pr_warn("unknown event '%s'\n", o->event);
		return err;
	}
	for (cpu = 0; cpu < s->nr_cpus; cpu++) {
		int fd = syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

		if (fd < 0) {
			err = -errno;
			if (err == -ENODEV)
				continue; /* possible but offline CPU (bcc profile does the same) */
			if (err == -ENOENT || err == -EOPNOTSUPP)
				pr_warn("event '%s' is not supported on this machine (%s)%s\n",
					o->event, strerror(-err),
					attr.type == PERF_TYPE_HARDWARE ?
						": no hardware PMU (a virtual machine?); use -e cpu-clock" :
						"");
			else
				pr_warn("perf_event_open '%s' on cpu %d failed: %s%s\n", o->event,
					cpu, strerror(-err),
					err == -EACCES || err == -EPERM ?
						" (check kernel.perf_event_paranoid, CAP_PERFMON)" :
						"");
			return err == -EOPNOTSUPP ? -ENOENT : err;
		}
		s->pfds[cpu] = fd;
		if (!nr_open++) {
			struct timespec ts;

			clock_gettime(CLOCK_MONOTONIC, &ts);
			s->sampling_ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
		}
		s->links[cpu] = bpf_program__attach_perf_event(s->skel->progs.on_sample, fd);
		if (!s->links[cpu]) {
			err = -errno;
			pr_warn("failed to attach to perf event on cpu %d: %s\n", cpu,
				strerror(-err));
			return err;
		}
	}
	if (!nr_open) {
		pr_warn("no online CPU accepted event '%s'\n", o->event);
		return -ENODEV;
	}
	return 0;
}

/* --off-cpu: the sched_switch and sys_exit tracepoints. Returns 0 or -errno, printed. */
static int attach_offcpu(struct session *s)
{
	int err;

	/* sys_exit first: a pending block never waits on a program not yet attached */
	if (bpf_program__autoload(s->skel->progs.on_sys_exit))
		s->skel->links.on_sys_exit = bpf_program__attach(s->skel->progs.on_sys_exit);
	if (bpf_program__autoload(s->skel->progs.on_sys_exit) && !s->skel->links.on_sys_exit) {
		err = -errno;
		pr_warn("--off-cpu: cannot attach to tracepoint raw_syscalls/sys_exit: %s\n",
			strerror(-err));
		return err;
	}
	s->skel->links.on_switch = bpf_program__attach(s->skel->progs.on_switch);
	if (!s->skel->links.on_switch) {
		err = -errno;
		pr_warn("--off-cpu: cannot attach to tracepoint sched/sched_switch: %s\n",
			strerror(-err));
		return err;
	}
	return 0;
}

/* The object bytes of each variant (Makefile BPF_VARIANT_*), all opened through the profile_bpf skeleton. */
static const void *variant_elf(enum bpf_variant v, size_t *sz)
{
	switch (v) {
	case BPF_VARIANT_TASK_WORK:
		return profile_tw_bpf__elf_bytes(sz);
	case BPF_VARIANT_TASK_WORK7:
		return profile_tw7_bpf__elf_bytes(sz);
	case BPF_VARIANT_LEGACY:
		return profile_legacy_bpf__elf_bytes(sz);
	default:
		return profile_bpf__elf_bytes(sz);
	}
}

/*
 * profile_bpf__open() with variant v's object, its CO-RE relocations
 * against the BTF in file btf (core_btf.h), or NULL: the kernel's. Returns
 * NULL with errno set on failure.
 */
static struct profile_bpf *open_variant(enum bpf_variant v, const char *btf)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = btf);
	struct profile_bpf *obj = calloc(1, sizeof(*obj));
	int err;

	if (!obj) {
		errno = ENOMEM;
		return NULL;
	}
	err = profile_bpf__create_skeleton(obj);
	if (!err) {
		obj->skeleton->data = (void *)variant_elf(v, &obj->skeleton->data_sz);
		err = bpf_object__open_skeleton(obj->skeleton, &opts);
	}
	if (err) {
		profile_bpf__destroy(obj);
		errno = -err;
		return NULL;
	}
	return obj;
}

/*
 * x86-64's THREAD_SIZE, which the legacy variant finds the saved user
 * registers with: 16 KiB, doubled with KASAN (arch/x86/include/asm/page_64_types.h).
 */
static uint64_t kernel_thread_size(const char *release)
{
	char path[128], line[128];
	uint64_t size = 16384;
	FILE *f;

	snprintf(path, sizeof(path), "/boot/config-%s", release);
	f = fopen(path, "r");
	if (!f)
		return size;
	while (fgets(line, sizeof(line), f))
		if (!strcmp(line, "CONFIG_KASAN=y\n"))
			size *= 2;
	fclose(f);
	return size;
}

/*
 * The first thing libbpf said was wrong during a load, and the verifier's
 * last word on it, for the one-line error: which program or map failed.
 */
static char load_error[256], verifier_error[160];

/* Slot 0 of prog array map: prog, the walk's next part. Returns 0 or -errno. */
static int set_tail_call(struct bpf_map *map, struct bpf_program *prog)
{
	uint32_t zero = 0;
	int fd = bpf_program__fd(prog);

	if (bpf_map__update_elem(map, &zero, sizeof(zero), &fd, sizeof(fd), BPF_ANY)) {
		int err = -errno;

		snprintf(load_error, sizeof(load_error), "cannot set up the tail call to '%s': %s",
			 bpf_program__name(prog), strerror(-err));
		return err;
	}
	return 0;
}


/*
 * Open, configure and load variant v of the BPF object, its CO-RE
 * relocations against the BTF in file btf (NULL: the kernel's). Returns 0
 * or -errno; the caller says what failed.
 */
static int load_variant_with(struct session *s, const struct session_opts *o,
			     const struct kernel_features *f, enum bpf_variant v, const char *btf)
{
	bool task_work = v == BPF_VARIANT_TASK_WORK || v == BPF_VARIANT_TASK_WORK7;
	uint64_t shared_bytes, cpu_bytes;
	int err;

	load_error[0] = verifier_error[0] = '\0';
	s->skel = open_variant(v, btf);
	if (!s->skel) {
		err = -errno;
		snprintf(load_error, sizeof(load_error), "cannot open the BPF object: %s",
			 strerror(-err));
		return err;
	}
	s->skel->rodata->filter_mode = o->filter_tgid ? BPFPROF_FILTER_TGID : BPFPROF_FILTER_ALL;
	s->skel->rodata->follow_forks = o->follow_forks;
	s->skel->rodata->filter_cgroup = o->nr_cgroups > 0;
	s->skel->rodata->check_user_stack = o->check_user_stacks;
	s->skel->rodata->offcpu_thresh_ns = o->offcpu_thresh_ns;
	s->skel->rodata->offcpu_task_work = task_work;
	s->skel->rodata->self_tgid = (uint32_t)getpid();
	s->skel->rodata->unwind_tables_on = o->unwind;
	/* --check-user-stacks compares every sample's walk with the kernel's: no copies */
	s->skel->rodata->copy_stacks =
		o->unwind && o->unwind_budget && o->copy_stacks && !o->check_user_stacks;
	s->skel->rodata->check_unwind_every = o->check_unwind_every;
	s->skel->rodata->max_user_stack = o->max_user_stack && o->max_user_stack <= BPFPROF_MAX_USER_STACK ?
						  o->max_user_stack :
						  BPFPROF_MAX_STACK;
	s->skel->rodata->thread_size = kernel_thread_size(f->release);
	/* the interpreters' unwinders verified now (bpf/interp.bpf.h) */
	s->variant = v;
	s->interp_more = o->interp_more;
	s->interp_walks = v == BPF_VARIANT_LEGACY || o->offcpu ? BPFPROF_WALK_INTERPS :
								 o->interp_walks;
	s->skel->rodata->interp_walks = s->interp_walks;
	/* half of --ringbuf-size the shared ring, half the CPUs' own (cpu_ring_sizes) */
	cpu_ring_sizes(o->ringbuf_bytes, s->nr_cpus, &shared_bytes, &cpu_bytes);
	s->skel->rodata->samples_bytes = shared_bytes;
	s->skel->rodata->cpu_ring_size = cpu_bytes;
	/* the records' process start times in /proc/PID/stat's unit (issue 24: identity) */
	s->skel->rodata->clock_tick_ns =
		1000000000ULL / (uint64_t)(sysconf(_SC_CLK_TCK) > 0 ? sysconf(_SC_CLK_TCK) : 100);
	err = bpf_map__set_max_entries(s->skel->maps.samples, (uint32_t)shared_bytes);
	if (!err)
		err = bpf_map__set_max_entries(s->skel->maps.cpu_rings, (uint32_t)s->nr_cpus);
	if (!err)
		err = bpf_map__set_value_size(
			s->skel->maps.cpu_rings,
			(uint32_t)(BPFPROF_CPU_RING_HDR_SIZE + cpu_bytes + BPFPROF_CPU_RING_SLACK));
	/* no tables (--call-graph fp): one slot */
	if (!err && (!o->unwind || !o->unwind_budget))
		err = bpf_map__set_max_entries(s->skel->maps.unwind_tables, 1);
	if (!err && (!o->unwind || !o->unwind_budget))
		err = bpf_map__set_max_entries(s->skel->maps.unwind_rows, 1);
	/* preallocated where the variant must (legacy): no room for what is not used */
	if (!err && !o->unwind)
		err = bpf_map__set_max_entries(s->skel->maps.unwind_procs, 1);
	/* stack copies (struct bpfprof_sample_copy): one buffer a CPU */
	if (!err)
		err = bpf_map__set_max_entries(s->skel->maps.scopy,
					       o->unwind && o->unwind_budget && o->copy_stacks &&
							       !o->check_user_stacks ?
						       (uint32_t)(libbpf_num_possible_cpus() > 0 ?
									  libbpf_num_possible_cpus() :
									  1) :
						       1);
	if (!err && !o->follow_forks)
		err = bpf_program__set_autoload(s->skel->progs.on_fork, false);
	if (!err && !o->offcpu)
		err = bpf_program__set_autoload(s->skel->progs.on_switch, false);
	if (!err && (!o->offcpu || task_work))
		err = bpf_program__set_autoload(s->skel->progs.on_sys_exit, false);
	/* the maps only --off-cpu uses: not created without it */
	if (!err && !o->offcpu)
		err = bpf_map__set_autocreate(s->skel->maps.offcpu_start, false);
	/* the legacy variant's on_sample is the sample itself: no tail call to sample_main */
	if (!err && v == BPF_VARIANT_LEGACY) {
		err = bpf_program__set_autoload(s->skel->progs.sample_main, false);
		if (!err)
			err = bpf_map__set_autocreate(s->skel->maps.sample_jmp, false);
	}
	/* the legacy variant's walks go on by tail calls, one program per hook */
	if (!err && v != BPF_VARIANT_LEGACY) {
		err = bpf_program__set_autoload(s->skel->progs.walk_sample, false);
		if (!err)
			err = bpf_map__set_autocreate(s->skel->maps.walk_jmp_sample, false);
	}
	if (!err && v != BPF_VARIANT_LEGACY) {
		err = bpf_program__set_autoload(s->skel->progs.py_walk_sample, false);
		if (!err)
			err = bpf_map__set_autocreate(s->skel->maps.py_jmp_sample, false);
	}
	if (!err && (v != BPF_VARIANT_LEGACY || !o->offcpu)) {
		err = bpf_program__set_autoload(s->skel->progs.walk_sys_exit, false);
		if (!err)
			err = bpf_map__set_autocreate(s->skel->maps.walk_jmp_sys_exit, false);
		if (!err)
			err = bpf_program__set_autoload(s->skel->progs.py_walk_sys_exit, false);
		if (!err)
			err = bpf_map__set_autocreate(s->skel->maps.py_jmp_sys_exit, false);
	}
	if (err) {
		snprintf(load_error, sizeof(load_error), "cannot configure the BPF object: %s",
			 strerror(-err));
		return err;
	}
	err = profile_bpf__load(s->skel);
	if (err && !load_error[0])
		snprintf(load_error, sizeof(load_error), "%s", strerror(-err));
	if (!err && v != BPF_VARIANT_LEGACY)
		err = set_tail_call(s->skel->maps.sample_jmp, s->skel->progs.sample_main);
	if (!err && v == BPF_VARIANT_LEGACY)
		err = set_tail_call(s->skel->maps.walk_jmp_sample, s->skel->progs.walk_sample);
	if (!err && v == BPF_VARIANT_LEGACY)
		err = set_tail_call(s->skel->maps.py_jmp_sample, s->skel->progs.py_walk_sample);
	if (!err && v == BPF_VARIANT_LEGACY && o->offcpu)
		err = set_tail_call(s->skel->maps.walk_jmp_sys_exit, s->skel->progs.walk_sys_exit);
	if (!err && v == BPF_VARIANT_LEGACY && o->offcpu)
		err = set_tail_call(s->skel->maps.py_jmp_sys_exit, s->skel->progs.py_walk_sys_exit);
	return err;
}

/*
 * Variant v loaded (load_variant_with), its CO-RE relocations against the
 * kernel's BTF cut to the object's types, from the cache (core_btf.h);
 * where the cut is not cached yet, against the kernel's whole BTF, and the
 * cut written for the next start. --off-cpu's tracing programs need
 * libbpf's parse of the whole BTF anyway (their attach points' ids): no
 * cut. Returns 0 or -errno; the caller says what failed.
 */
static int load_variant(struct session *s, const struct session_opts *o,
			const struct kernel_features *f, enum bpf_variant v)
{
	char path[PATH_MAX];
	size_t size;
	const void *elf = variant_elf(v, &size);
	int cached = o->offcpu ? -ENOTSUP : core_btf__path(elf, size, path, sizeof(path));
	int err;

	s->core_btf[0] = '\0';
	if (cached == -EPERM)
		pr_info("CO-RE: the BTF cache '%s' is not used: not this user's alone (mode 0700)\n",
			getenv("BPFPROF_BTF_CACHE") ? getenv("BPFPROF_BTF_CACHE") :
						      CORE_BTF_DEFAULT_DIR);
	if (!cached) {
		err = load_variant_with(s, o, f, v, path);
		if (!err) {
			snprintf(s->core_btf, sizeof(s->core_btf), "%s", path);
			pr_debug("CO-RE: against the kernel's BTF cut in '%s'\n", path);
			return 0;
		}
		/* the verifier's refusal is the variant's, not the cut's */
		if (verifier_error[0])
			return err;
		pr_info("CO-RE against the kernel's BTF cut in '%s' failed (%s): against the "
			"kernel's whole BTF, and the cut written again\n",
			path, load_error);
		profile_bpf__destroy(s->skel);
		s->skel = NULL;
		cached = -ENOENT;
	}
	err = load_variant_with(s, o, f, v, NULL);
	if (!err && cached == -ENOENT) {
		int werr = core_btf__write(path, bpf_object__btf(s->skel->obj));

		if (werr)
			pr_info("CO-RE: cannot cache the kernel's BTF cut in '%s': %s\n", path,
				strerror(-werr));
		else
			pr_info("CO-RE: the kernel's BTF cut to the object's types cached in '%s'\n",
				path);
	}
	return err;
}

/*
 * Probe the kernel, then load the best variant it takes (include/kernel_features.h),
 * falling back to the next when the verifier refuses one. Returns 0 or
 * -errno, printed: the kernel, the variant and what failed.
 */
static int load_skel(struct session *s, const struct session_opts *o)
{
	enum bpf_variant order[BPF_VARIANT_NR];
	struct perf_event_attr attr;
	struct kernel_features f;
	const char *forced = getenv("BPFPROF_BPF_VARIANT");
	char why[256], first_why[256], msg[512];
	size_t n, i;
	int err = -EINVAL;
	uint64_t t0 = thread_cpu_ns(), t1;

	kernel_features__probe(&f);
	if (kernel_features__missing(&f, msg, sizeof(msg))) {
		pr_warn("%s\n", msg);
		return -ENOTSUP;
	}
	if (!event_attr(o->event, o->freq_hz, &attr) && attr.type == PERF_TYPE_HARDWARE &&
	    kernel_features__nmi_uaccess_unsafe(f.version)) {
		pr_warn("kernel %s lacks the fix of copy_from_user_nofault (Linux 6.4, 6.1.36): "
			"with a hardware event (-e %s, sampled in NMI context) user-stack reads can "
			"read another process's memory; use -e cpu-clock (a timer, not an NMI) or a "
			"fixed kernel\n",
			f.release, o->event);
		return -ENOTSUP;
	}
	/* BPFPROF_OFFCPU_SYS_EXIT=1: the sys_exit path even where task work exists (tests/integration/offcpu.sh) */
	if (o->offcpu && !getenv("BPFPROF_OFFCPU_SYS_EXIT"))
		kernel_features__probe_task_work(&f);
	t1 = thread_cpu_ns();
	s->startup.probe_ns = t1 - t0;
	n = kernel_features__choose(&f, o->offcpu, order, why, sizeof(why));
	/* BPFPROF_BPF_VARIANT=NAME: that variant only (tests of the others on this kernel) */
	if (forced) {
		if (kernel_features__variant_from_name(forced, &order[0])) {
			pr_warn("BPFPROF_BPF_VARIANT: unknown variant '%s'\n", forced);
			return -EINVAL;
		}
		n = 1;
		snprintf(why, sizeof(why), "BPFPROF_BPF_VARIANT");
	}
	snprintf(first_why, sizeof(first_why), "%s", why);
	for (i = 0; i < n; i++) {
		if (i) {
			pr_info("the %s variant did not load (%s%s%s): trying the %s variant\n",
				kernel_features__variant_name(order[i - 1]), load_error,
				verifier_error[0] ? "; verifier: " : "", verifier_error,
				kernel_features__variant_name(order[i]));
			profile_bpf__destroy(s->skel);
			s->skel = NULL;
			snprintf(why, sizeof(why), "fallback");
		}
		err = load_variant(s, o, &f, order[i]);
		s->startup.nr_loads++;
		s->startup.load_ns = thread_cpu_ns() - t1;
		if (!err) {
			pr_info("kernel %s: BPF variant %s (%s)\n", f.release,
				kernel_features__variant_name(order[i]), why);
			if (order[i] == BPF_VARIANT_LEGACY)
				pr_info("the legacy variant does not look for JavaScript frames "
					"(bpf/v8.bpf.h): node is profiled natively\n");
			if (o->offcpu)
				pr_info("--off-cpu: user stacks walked %s\n",
					order[i] == BPF_VARIANT_TASK_WORK ||
							order[i] == BPF_VARIANT_TASK_WORK7 ?
						"as task work" :
						"at sys_exit");
			return 0;
		}
	}
	pr_warn("cannot load the BPF programs on kernel %s (variant %s; %s): %s%s%s%s\n",
		f.release, kernel_features__variant_name(order[n - 1]), first_why, load_error,
		verifier_error[0] ? "; verifier: " : "", verifier_error,
		err == -EPERM	  ? " (needs root, or CAP_BPF and CAP_PERFMON)" :
		verifier_error[0] ? "; -vv prints the verifier's log" :
				    "");
	return err;
}

/* The last line of a verifier log worth quoting: not its statistics. */
static void keep_verifier_error(const char *log)
{
	const char *end = strstr(log, "-- END PROG LOAD LOG --"), *p, *line;

	if (!end)
		return;
	for (p = end; p > log;) {
		const char *e = p - 1; /* the newline ending the line before p */

		line = e;
		while (line > log && line[-1] != '\n')
			line--;
		p = line;
		if (e <= line || !strncmp(line, "processed ", 10) ||
		    !strncmp(line, "verification time", 17) || !strncmp(line, "stack depth", 11))
			continue;
		snprintf(verifier_error, sizeof(verifier_error), "%.*s", (int)(e - line), line);
		return;
	}
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* libbpf's warnings are demoted to info: bpfprof reports the failure itself. */
	int need = level == LIBBPF_DEBUG ? LOG_DEBUG : LOG_INFO;
	char *msg = NULL;
	int n;

	n = vasprintf(&msg, fmt, ap);
	if (n < 0)
		return 0;
	if (level == LIBBPF_WARN && strstr(msg, "-- BEGIN PROG LOAD LOG --")) {
		/* the verifier's log: its last word for the error line, the whole log at -vv */
		keep_verifier_error(msg);
		need = LOG_DEBUG;
	} else if (level == LIBBPF_WARN && !load_error[0]) {
		const char *m = strncmp(msg, "libbpf: ", 8) ? msg : msg + 8;

		snprintf(load_error, sizeof(load_error), "%.*s", (int)strcspn(m, "\n"), m);
	}
	if (need <= log_verbosity)
		fputs(msg, stderr);
	free(msg);
	return n;
}

/* bcc libbpf-tools' libbpf_print_fn: here, not in the log module, so that the
 * library layer and its tests link without libbpf */
void session__libbpf_log(void)
{
	libbpf_set_print(libbpf_print);
}

int session__open(const struct session_opts *o, struct session **out)
{
	uint64_t t0 = thread_cpu_ns();
	struct session *s;
	int err;
	size_t i;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	pthread_mutex_init(&s->widen_lock, NULL);
	s->on_record = o->on_record;
	s->ctx = o->ctx;
	s->epfd = -1;
	s->nr_cpus = libbpf_num_possible_cpus();
	if (s->nr_cpus <= 0) {
		err = s->nr_cpus ? s->nr_cpus : -EINVAL;
		pr_warn("failed to count CPUs: %s\n", strerror(-err));
		goto out_free;
	}
	s->pfds = malloc(sizeof(*s->pfds) * s->nr_cpus);
	s->links = calloc(s->nr_cpus, sizeof(*s->links));
	if (!s->pfds || !s->links) {
		err = -ENOMEM;
		goto out_free;
	}
	for (i = 0; i < (size_t)s->nr_cpus; i++)
		s->pfds[i] = -1;

	err = load_skel(s, o);
	if (err)
		goto out_free;
	for (i = 0; i < o->nr_cgroups; i++) {
		uint8_t one = 1;

		if (bpf_map__update_elem(s->skel->maps.cgroups, &o->cgroup_ids[i], sizeof(uint64_t),
					 &one, sizeof(one), BPF_ANY)) {
			err = -errno;
			pr_warn("failed to add cgroup filter: %s\n", strerror(-err));
			goto out_free;
		}
	}
	if (o->follow_forks) {
		s->skel->links.on_fork = bpf_program__attach(s->skel->progs.on_fork);
		if (!s->skel->links.on_fork) {
			err = -errno;
			pr_warn("failed to attach fork tracepoint: %s\n", strerror(-err));
			goto out_free;
		}
	}
	/* always: an exec makes the process's next sample wake the reader */
	s->skel->links.on_exec = bpf_program__attach(s->skel->progs.on_exec);
	if (!s->skel->links.on_exec) {
		err = -errno;
		pr_warn("failed to attach exec tracepoint: %s\n", strerror(-err));
		goto out_free;
	}
	if (o->offcpu) {
		err = attach_offcpu(s);
		if (err)
			goto out_free;
	}
	s->rb = ring_buffer__new(bpf_map__fd(s->skel->maps.samples), rb_cb, s, NULL);
	if (!s->rb) {
		err = -errno;
		pr_warn("failed to create ring buffer: %s\n", strerror(-err));
		goto out_free;
	}
	err = map_cpu_rings(s);
	if (err) {
		pr_warn("failed to map the CPUs' rings: %s\n", strerror(-err));
		goto out_free;
	}
	s->on_notice = o->on_notice;
	if (s->on_notice) {
		s->notices =
			ring_buffer__new(bpf_map__fd(s->skel->maps.notices), notice_cb, s, NULL);
		if (!s->notices) {
			err = -errno;
			pr_warn("failed to create the notices' ring buffer: %s\n", strerror(-err));
			goto out_free;
		}
	}
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0 || session__watch_fd(s, ring_buffer__epoll_fd(s->rb)) ||
	    (s->notices && session__watch_fd(s, ring_buffer__epoll_fd(s->notices)))) {
		err = -errno;
		pr_warn("failed to set up epoll: %s\n", strerror(-err));
		goto out_free;
	}
	s->unwind_budget = o->unwind ? o->unwind_budget : 0;
	err = open_events(s, o);
	if (err)
		goto out_free;
	s->startup.attach_ns = thread_cpu_ns() - t0 - s->startup.probe_ns - s->startup.load_ns;
	if (log_verbosity >= LOG_INFO) {
		struct bpf_map *m;

		struct bpf_program *pg;

		bpf_object__for_each_map(m, s->skel->obj)
			if (bpf_map__fd(m) >= 0)
				s->startup.map_bytes += map_memlock(bpf_map__fd(m));
		bpf_object__for_each_program(pg, s->skel->obj) {
			struct bpf_prog_info info;
			uint32_t len = sizeof(info);

			memset(&info, 0, sizeof(info));
			if (bpf_program__fd(pg) >= 0 &&
			    !bpf_obj_get_info_by_fd(bpf_program__fd(pg), &info, &len))
				s->startup.verified_insns += info.verified_insns;
		}
	}
	*out = s;
	return 0;

out_free:
	session__close(s);
	return err;
}

void session__startup(const struct session *s, struct session_startup *st)
{
	*st = s->startup;
}

/*
 * tgid's slot in target_slots (bpf/filter.bpf.h), set as target_add sets it
 * in BPF, with the same atomics on the map's memory: on_fork may set a slot
 * at the same time
 */
static int target_slot_add(struct session *s, uint32_t tgid)
{
	size_t len = BPFPROF_TARGET_SLOTS * sizeof(uint64_t);
	uint64_t *slots, expected = 0;
	int err = 0;

	slots = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
		     bpf_map__fd(s->skel->maps.target_slots), 0);
	if (slots == MAP_FAILED)
		return -errno;
	if (!__atomic_compare_exchange_n(&slots[tgid % BPFPROF_TARGET_SLOTS], &expected, tgid,
					 false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST) &&
	    expected != tgid)
		__atomic_store_n(&slots[tgid % BPFPROF_TARGET_SLOTS], BPFPROF_TARGET_SLOT_SHARED,
				 __ATOMIC_SEQ_CST);
	if (munmap(slots, len))
		err = -errno;
	return err;
}

int session__add_target(struct session *s, uint32_t tgid)
{
	uint8_t one = 1;

	/* the map first: a shared slot sends the program's look-ups there */
	if (bpf_map__update_elem(s->skel->maps.targets, &tgid, sizeof(tgid), &one, sizeof(one),
				 BPF_ANY))
		return -errno;
	return target_slot_add(s, tgid);
}

int session__add_target_on_exec(struct session *s, uint32_t tgid)
{
	if (!s->skel->links.on_exec)
		return -EINVAL;
	s->skel->bss->exec_target = tgid;
	return 0;
}

int session__watch_fd(struct session *s, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

void session__unwatch_fd(struct session *s, int fd)
{
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, fd, NULL);
}

int session__poll(struct session *s, int timeout_ms)
{
	struct epoll_event ev[4];
	int n = epoll_wait(s->epfd, ev, 4, timeout_ms), m;

	if (n < 0 && errno != EINTR)
		return -errno;
	/*
	 * Whatever woke us (records, a watched descriptor, the timeout, a
	 * signal), consume what is queued: the BPF side wakes us only once
	 * an eighth of a ring is queued, and a process's maps must be read soon after
	 * its first sample, not when it is long gone.
	 */
	m = read_notices(s);
	if (!m)
		m = consume_rings(s);
	if (m < 0)
		return m;
	return m ? m : (n < 0 ? -EINTR : 0);
}

uint32_t session__nr_interp_procs(const struct session *s)
{
	return s->nr_interp_procs;
}

int session__notices_fd(const struct session *s)
{
	return bpf_map__fd(s->skel->maps.notices);
}

void session__notices_elsewhere(struct session *s)
{
	if (!s->notices)
		return;
	session__unwatch_fd(s, ring_buffer__epoll_fd(s->notices));
	ring_buffer__free(s->notices);
	s->notices = NULL;
}

void session__stop(struct session *s)
{
	int cpu;

	for (cpu = 0; cpu < s->nr_cpus; cpu++)
		if (s->pfds[cpu] >= 0)
			ioctl(s->pfds[cpu], PERF_EVENT_IOC_DISABLE, 0);
	/* --off-cpu: no block is stamped or sent from here on */
	bpf_link__destroy(s->skel->links.on_switch);
	s->skel->links.on_switch = NULL;
	bpf_link__destroy(s->skel->links.on_sys_exit);
	s->skel->links.on_sys_exit = NULL;
}

int session__drain(struct session *s)
{
	int err = read_notices(s);

	return err ? err : consume_rings(s);
}

uint64_t session__sampling_ns(const struct session *s)
{
	return s->sampling_ns;
}

int session__nr_cpus(const struct session *s)
{
	return s->nr_cpus;
}

/* A per-CPU counter of `stats`, summed over CPUs; 0 if unreadable. */
static uint64_t stat_sum(struct session *s, uint32_t key, uint64_t *per_cpu)
{
	uint64_t vals[s->nr_cpus], sum = 0;
	int cpu;

	/* zeroed before the lookup: memcheck sees only the first CPU's value written */
	memset(vals, 0, sizeof(vals));
	if (bpf_map__lookup_elem(s->skel->maps.stats, &key, sizeof(key), vals, sizeof(vals), 0))
		return 0;
	for (cpu = 0; cpu < s->nr_cpus; cpu++) {
		sum += vals[cpu];
		if (per_cpu)
			per_cpu[cpu] = vals[cpu];
	}
	return sum;
}

/* Entries of map, key by key; -1 when it was not created or cannot be walked. */
static int64_t map_entries(const struct bpf_map *map)
{
	uint8_t key[64], next[64];
	int fd = bpf_map__fd(map);
	uint32_t ksize = bpf_map__key_size(map);
	int64_t n = 0;
	void *prev = NULL;

	if (fd < 0 || ksize > sizeof(key))
		return -1;
	while (!bpf_map_get_next_key(fd, prev, next)) {
		n++;
		memcpy(key, next, ksize);
		prev = key;
	}
	/* ENOENT ends the walk; anything else (a task storage map: ENOTSUPP) is no count */
	return errno == ENOENT ? n : -1;
}

void session__map_entries(struct session *s, struct session_map_entries *e)
{
	e->unwind_procs = map_entries(s->skel->maps.unwind_procs);
	e->unwind_mappings = map_entries(s->skel->maps.unwind_mappings);
	e->py_procs = map_entries(s->skel->maps.py_procs);
	e->targets = map_entries(s->skel->maps.targets);
	e->seen = map_entries(s->skel->maps.seen);
	e->noticed = map_entries(s->skel->maps.noticed);
	e->offcpu_start = map_entries(s->skel->maps.offcpu_start);
	e->offcpu_pending = map_entries(s->skel->maps.offcpu_pending);
}

/*
 * After a write to a map that describes a process (unwind_procs, py_procs,
 * hs_procs, v8_procs): the CPUs' answers cached in BPF (proc_reg_cache,
 * bpf/unwind.bpf.h) are stale
 */
static void proc_maps_changed(struct session *s)
{
	__atomic_add_fetch(&s->skel->bss->proc_maps_gen, 1, __ATOMIC_SEQ_CST);
}

/* Keys a BPF_MAP_LOOKUP_BATCH call asks for (its values: at most this many times 64 bytes) */
#define GONE_BATCH 256
#define GONE_VALUE_MAX 64

/* One pass of session__forget_gone: the tgids looked at (kill(tgid, 0)), each once */
struct gone_pass {
	uint32_t *alive, *gone; /* sorted once a map is done (sort_checked) */
	size_t nr_alive, nr_gone, cap_alive, cap_gone;
	size_t sorted_alive, sorted_gone; /* how many of each are sorted */
};

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static bool in_sorted(const uint32_t *v, size_t n, uint32_t key)
{
	return n && bsearch(&key, v, n, sizeof(*v), cmp_u32);
}

static int push_u32(uint32_t **v, size_t *n, size_t *cap, uint32_t x)
{
	if (array__grow((void **)v, cap, *n + 1, sizeof(**v)))
		return -ENOMEM;
	(*v)[(*n)++] = x;
	return 0;
}

/* Whether tgid key is gone: from an earlier map's look in this pass, else kill(key, 0). */
static bool key_gone(struct gone_pass *g, uint32_t key)
{
	bool gone;

	if (in_sorted(g->gone, g->sorted_gone, key))
		return true;
	if (in_sorted(g->alive, g->sorted_alive, key))
		return false;
	gone = key && kill((pid_t)key, 0) && errno == ESRCH;
	/* out of memory: only not remembered for the next maps */
	(void)(gone ? push_u32(&g->gone, &g->nr_gone, &g->cap_gone, key) :
		      push_u32(&g->alive, &g->nr_alive, &g->cap_alive, key));
	return gone;
}

/* A map looked at: what it added, sorted for the next maps' look-ups */
static void sort_checked(struct gone_pass *g)
{
	/* qsort's array may not be NULL, even empty (C11 7.22.5; glibc's nonnull) */
	if (g->nr_alive)
		qsort(g->alive, g->nr_alive, sizeof(*g->alive), cmp_u32);
	if (g->nr_gone)
		qsort(g->gone, g->nr_gone, sizeof(*g->gone), cmp_u32);
	g->sorted_alive = g->nr_alive;
	g->sorted_gone = g->nr_gone;
}

/*
 * The keys of map fd into *keys (u32 tgids), by BPF_MAP_LOOKUP_BATCH: one
 * system call a GONE_BATCH keys (and the kernel's walk of the buckets),
 * where GET_NEXT_KEY costs one a key and looks each up again. Returns the
 * count, or -errno: -EINVAL, -ENOTSUPP (524) or -EOPNOTSUPP where the kernel has no
 * batch for the map (before 5.6), -ENOSPC past a bucket of more than
 * GONE_BATCH keys; the caller walks by GET_NEXT_KEY then.
 */
static ssize_t batch_keys(int fd, uint32_t value_size, size_t max, uint32_t **keys)
{
	uint8_t values[GONE_BATCH * GONE_VALUE_MAX];
	/* zeroed: valgrind does not know the kernel fills it (the keys read are written) */
	uint32_t in = 0, out = 0, got[GONE_BATCH] = { 0 };
	size_t n = 0, cap = 0;
	bool first = true;

	if (value_size > GONE_VALUE_MAX)
		return -EINVAL;
	*keys = NULL;
	for (;;) {
		__u32 count = GONE_BATCH;
		int err = bpf_map_lookup_batch(fd, first ? NULL : &in, &out, got, values, &count,
					       NULL);

		err = err ? -errno : 0;
		if (err && err != -ENOENT) {
			free(*keys);
			*keys = NULL;
			return err;
		}
		if (count && (n + count > max ||
			      array__grow((void **)keys, &cap, n + count, sizeof(**keys)))) {
			free(*keys);
			*keys = NULL;
			return n + count > max ? -E2BIG : -ENOMEM;
		}
		if (count) /* *keys may still be NULL: memcpy's arguments must not be (UBSan) */
			memcpy(*keys + n, got, count * sizeof(*got));
		n += count;
		if (err == -ENOENT || !count)
			return (ssize_t)n; /* the last buckets */
		in = out;
		first = false;
	}
}

/* The keys of map fd by GET_NEXT_KEY (batch_keys' fallback): the count, or -ENOMEM. */
static ssize_t next_keys(int fd, size_t max, uint32_t **keys)
{
	uint32_t key, next;
	size_t n = 0, cap = 0;
	void *prev = NULL;

	*keys = NULL;
	while (n < max && !bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (array__grow((void **)keys, &cap, n + 1, sizeof(**keys))) {
			free(*keys);
			*keys = NULL;
			return -ENOMEM;
		}
		(*keys)[n++] = key;
	}
	return (ssize_t)n;
}

/* Delete map's (u32 tgid keys) entries of processes gone; how many. */
static size_t forget_gone(const struct bpf_map *map, struct gone_pass *g, bool *no_batch)
{
	int fd = bpf_map__fd(map);
	size_t n = 0, i, max = bpf_map__max_entries(map);
	uint32_t *keys = NULL;
	ssize_t nr = -EINVAL;

	if (fd < 0 || bpf_map__key_size(map) != sizeof(*keys))
		return 0;
	/* the keys first: a deleted key would restart a GET_NEXT_KEY walk */
	if (!*no_batch) {
		nr = batch_keys(fd, bpf_map__value_size(map), max, &keys);
		/* no batch for this map type on this kernel: not asked again */
		if (nr == -EINVAL || nr == -524 /* ENOTSUPP */ || nr == -EOPNOTSUPP)
			*no_batch = true;
	}
	if (nr < 0 && nr != -ENOMEM)
		nr = next_keys(fd, max, &keys);
	for (i = 0; nr > 0 && i < (size_t)nr; i++)
		if (key_gone(g, keys[i]) && !bpf_map_delete_elem(fd, &keys[i]))
			n++;
	free(keys);
	sort_checked(g);
	return n;
}

size_t session__forget_gone(struct session *s)
{
	struct gone_pass g = { 0 };
	size_t n, v8;

	/*
	 * v8_procs too: an exited node's layout (interp_v8.c attaches a reused
	 * pid again); not walked while nothing is attached (its entries come
	 * only from proc_map_set, counted): a walk visits every bucket
	 */
	n = forget_gone(s->skel->maps.seen, &g, &s->no_gone_batch) +
	    forget_gone(s->skel->maps.noticed, &g, &s->no_gone_batch);
	v8 = s->nr_interp_procs ? forget_gone(s->skel->maps.v8_procs, &g, &s->no_gone_batch) : 0;
	s->nr_interp_procs -= v8 < s->nr_interp_procs ? (uint32_t)v8 : s->nr_interp_procs;
	free(g.alive);
	free(g.gone);
	if (v8)
		proc_maps_changed(s);
	return n + v8;
}

/* tgid's `seen` and `noticed` entries dropped if it is gone: how many; -1: still there */
static int forget_tgid(struct session *s, uint32_t tgid)
{
	int n = 0;

	if (!tgid || !kill((pid_t)tgid, 0) || errno != ESRCH)
		return -1;
	n += !bpf_map_delete_elem(bpf_map__fd(s->skel->maps.seen), &tgid);
	n += !bpf_map_delete_elem(bpf_map__fd(s->skel->maps.noticed), &tgid);
	return n;
}

size_t session__forget_exited(struct session *s, const uint32_t *tgids, int n, bool moved)
{
	size_t dropped = 0;
	uint32_t kept = 0;
	int r;

	if (n < 0) /* not known which: a zombie among them is reaped by the next call's walk */
		s->walks_due = 2;
	if (s->walks_due || s->nr_interp_procs ||
	    (moved && s->keyed_since_walk >= FORGET_WALK_EVERY)) {
		s->walks_due -= s->walks_due > 0;
		s->keyed_since_walk = 0;
		s->nr_exited = 0;
		return moved || n < 0 ? session__forget_gone(s) : 0;
	}
	s->keyed_since_walk++;
	/* those still there at the last call, then the new: each gone dropped, the rest kept a while */
	for (uint32_t i = 0; i < s->nr_exited; i++) {
		r = forget_tgid(s, s->exited[i].tgid);
		if (r >= 0)
			dropped += (size_t)r;
		else if (++s->exited[i].looks < FORGET_LOOKS)
			s->exited[kept++] = s->exited[i];
	}
	s->nr_exited = kept;
	for (int i = 0; i < n; i++) {
		r = forget_tgid(s, tgids[i]);
		if (r >= 0)
			dropped += (size_t)r;
		else if (s->nr_exited < FORGET_PENDING)
			s->exited[s->nr_exited++] = (struct exited_pending){ .tgid = tgids[i] };
		else /* more zombies than that: the walk, at the next call */
			s->walks_due = 1;
	}
	return dropped;
}

void session__check_stats(struct session *s, uint64_t *same, uint64_t *shorter, uint64_t *differ)
{
	*same = stat_sum(s, BPFPROF_STAT_USTACK_SAME, NULL);
	*shorter = stat_sum(s, BPFPROF_STAT_USTACK_SHORTER, NULL);
	*differ = stat_sum(s, BPFPROF_STAT_USTACK_DIFF, NULL);
}

void session__stats(struct session *s, uint64_t *samples, uint64_t *dropped,
		    uint64_t *per_cpu_dropped)
{
	*samples = stat_sum(s, BPFPROF_STAT_SAMPLES, NULL);
	*dropped = stat_sum(s, BPFPROF_STAT_DROPPED, per_cpu_dropped);
}

void session__offcpu_stats(struct session *s, struct session_offcpu_stats *st)
{
	st->sent = stat_sum(s, BPFPROF_STAT_OFFCPU, NULL);
	st->dropped = stat_sum(s, BPFPROF_STAT_OFFCPU_DROPPED, NULL);
	st->full = stat_sum(s, BPFPROF_STAT_OFFCPU_FULL, NULL);
	st->short_blocks = stat_sum(s, BPFPROF_STAT_OFFCPU_SHORT, NULL);
	st->short_ns = stat_sum(s, BPFPROF_STAT_OFFCPU_SHORT_NS, NULL);
	st->kernel_only = stat_sum(s, BPFPROF_STAT_OFFCPU_KERNEL_ONLY, NULL);
}

static int sink_set_mapping(void *ctx, const struct bpfprof_unwind_key *k,
			    const struct bpfprof_unwind_mapping *v)
{
	struct session *s = ctx;

	return bpf_map__update_elem(s->skel->maps.unwind_mappings, k, sizeof(*k), v, sizeof(*v),
				    BPF_ANY) ?
		       -errno :
		       0;
}

static int sink_del_mapping(void *ctx, const struct bpfprof_unwind_key *k)
{
	struct session *s = ctx;

	return bpf_map__delete_elem(s->skel->maps.unwind_mappings, k, sizeof(*k), 0) ? -errno : 0;
}

/*
 * How many of a batch of n the kernel did (BPF_MAP_*_BATCH failed with
 * err): its count, but 0 where it has no batch for the LPM trie (EINVAL,
 * ENOTSUPP: the count given back is then the one asked for, not to be
 * trusted), which is remembered: one at a time from then on
 */
static uint32_t batch_done(struct session *s, int err, uint32_t count, uint32_t n)
{
	if (err == EINVAL || err == 524 /* ENOTSUPP */ || err == EOPNOTSUPP) {
		s->no_lpm_batch = true;
		return 0;
	}
	return count < n ? count : 0;
}

/*
 * A process's LPM entries in one BPF_MAP_UPDATE_BATCH (the kernel's generic
 * batch: each element as its own update, in order, one syscall for all of
 * them); where it has none, or past a failure, one at a time
 */
static int sink_set_mappings(void *ctx, const struct bpfprof_unwind_key *k,
			     const struct bpfprof_unwind_mapping *v, uint32_t n)
{
	struct session *s = ctx;
	uint32_t i = 0, count = n;
	int err = 0;

	if (!s->no_lpm_batch) {
		if (!bpf_map_update_batch(bpf_map__fd(s->skel->maps.unwind_mappings), k, v, &count,
					  NULL))
			return 0;
		i = batch_done(s, errno, count, n);
	}
	for (; i < n && !err; i++)
		err = sink_set_mapping(ctx, &k[i], &v[i]);
	return err;
}

/* The same for deletes: a key not there stops a batch (ENOENT), the rest go one at a time */
static void sink_del_mappings(void *ctx, const struct bpfprof_unwind_key *k, uint32_t n)
{
	struct session *s = ctx;
	uint32_t i = 0, count = n;

	if (!s->no_lpm_batch) {
		if (!bpf_map_delete_batch(bpf_map__fd(s->skel->maps.unwind_mappings), k, &count,
					  NULL))
			return;
		i = batch_done(s, errno, count, n);
	}
	for (; i < n; i++)
		sink_del_mapping(ctx, &k[i]);
}

static int sink_set_proc(void *ctx, uint32_t tgid, bool ready)
{
	struct session *s = ctx;
	struct timespec ts;
	uint64_t now; /* the registration's time, on bpf_ktime_get_ns()'s clock (YOUNG_NS) */

	int err = 0;

	if (!ready) {
		if (bpf_map__delete_elem(s->skel->maps.unwind_procs, &tgid, sizeof(tgid), 0))
			err = -errno;
	} else {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		now = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
		if (bpf_map__update_elem(s->skel->maps.unwind_procs, &tgid, sizeof(tgid), &now,
					 sizeof(now), BPF_ANY))
			err = -errno;
	}
	proc_maps_changed(s);
	return err;
}

/* The kernel's count of a map's memory (its fdinfo's memlock line), or 0 */
static uint64_t map_memlock(int fd)
{
	char path[64], line[128];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %llu", &v) == 1)
			break;
	fclose(f);
	return v;
}

/*
 * A table's words in an array map of their own (BPF_F_INNER_MAP: sized to
 * the table), filled through an mmap of it (BPF_F_MMAPABLE: one memcpy, no
 * element-by-element update; the pages leave bpfprof's RSS with the
 * munmap), then put in unwind_rows; the slot's description goes last.
 */
struct table_view {
	void *mem; /* NULL: not mapped */
	size_t len;
	struct bpfprof_unwind_table info;
};

static void view_drop(struct session *s, uint32_t id)
{
	if (id < s->nr_views && s->views[id].mem) {
		munmap(s->views[id].mem, s->views[id].len);
		s->views[id].mem = NULL;
	}
}

static int sink_load_table(void *ctx, uint32_t id, const struct bpfprof_unwind_table *info,
			   const uint32_t *words, uint32_t nr_words, uint64_t *bytes)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_INNER_MAP | BPF_F_MMAPABLE);
	struct session *s = ctx;
	struct bpfprof_unwind_table load_info;
	uint32_t n = (nr_words + 1) / 2;

	view_drop(s, id);
	size_t len = ((size_t)n * 8 + 4095) & ~(size_t)4095;
	void *mem;
	int fd, err = 0;

	*bytes = 0;
	/* a new load's number (never 0, what an empty slot's description holds) */
	if (!++s->table_gen)
		s->table_gen = 1;
	load_info = *info;
	load_info.gen = s->table_gen;
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "unwind_words", sizeof(__u32),
			    sizeof(struct bpfprof_unwind_words), n ? n : 1, &opts);
	if (fd < 0)
		return -errno;
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED) {
		err = -errno;
		close(fd);
		return err;
	}
	memcpy(mem, words, (size_t)nr_words * sizeof(*words));
	munmap(mem, len);
	*bytes = map_memlock(fd);
	if (!*bytes)
		*bytes = unwind_compact__kernel_bytes(nr_words);
	/* into unwind_rows at the next flush, with the others loaded meanwhile */
	if (!array__grow((void **)&s->pending, &s->cap_pending, s->nr_pending + 1,
			 sizeof(*s->pending))) {
		s->pending[s->nr_pending++] =
			(struct pending_table){ .id = id, .fd = fd, .info = load_info };
		return 0;
	}
	if (bpf_map__update_elem(s->skel->maps.unwind_rows, &id, sizeof(id), &fd, sizeof(fd),
				 BPF_ANY) ||
	    bpf_map__update_elem(s->skel->maps.unwind_tables, &id, sizeof(id), &load_info,
				 sizeof(load_info), BPF_ANY))
		err = -errno;
	close(fd); /* unwind_rows holds it */
	if (err)
		bpf_map__delete_elem(s->skel->maps.unwind_rows, &id, sizeof(id), 0);
	return err;
}

/* The description first: a walk that reads it after this finds no table */
/*
 * The pending tables into unwind_rows: one batch update (BPF_MAP_UPDATE_BATCH
 * on an array of maps, 5.6; since 6.8 it waits for one RCU grace period in
 * all where an update each waits for one each), element by element where
 * the kernel has no batch; then their descriptions, after their words as
 * the walk needs. A table that cannot go in is described as none (walked
 * as a file without table) and warned about once.
 */
static void sink_flush_tables(void *ctx)
{
	struct session *s = ctx;
	uint32_t *keys, n = (uint32_t)s->nr_pending;
	int *fds, err = -ENOMEM;
	size_t i;

	if (!n)
		return;
	keys = malloc(n * sizeof(*keys));
	fds = malloc(n * sizeof(*fds));
	if (keys && fds) {
		for (i = 0; i < n; i++) {
			keys[i] = s->pending[i].id;
			fds[i] = s->pending[i].fd;
		}
		err = bpf_map_update_batch(bpf_map__fd(s->skel->maps.unwind_rows), keys, fds, &n,
					   NULL) ?
			      -errno :
			      0;
	}
	for (i = 0; i < s->nr_pending; i++) {
		struct pending_table *pt = &s->pending[i];
		int e = 0;

		/*
		 * no batch here (5.10 has none for an array of maps; the count
		 * it gives back is then not to be trusted): one at a time, the
		 * ones a partial batch put in again (the same descriptor)
		 */
		if (err)
			e = bpf_map__update_elem(s->skel->maps.unwind_rows, &pt->id, sizeof(pt->id),
						 &pt->fd, sizeof(pt->fd), BPF_ANY) ?
				    -errno :
				    0;
		if (!e)
			e = bpf_map__update_elem(s->skel->maps.unwind_tables, &pt->id,
						 sizeof(pt->id), &pt->info, sizeof(pt->info),
						 BPF_ANY) ?
				    -errno :
				    0;
		if (e) {
			if (!s->warned_flush)
				pr_warn("unwind: cannot load a table: %s (its file walked without it)\n",
					strerror(-e));
			s->warned_flush = true;
			bpf_map__delete_elem(s->skel->maps.unwind_rows, &pt->id, sizeof(pt->id), 0);
		}
		close(pt->fd); /* unwind_rows holds it */
	}
	s->nr_pending = 0;
	free(keys);
	free(fds);
}

/*
 * The unwinder's pool (include/unwinder.h install_rows): empty words maps
 * put in unwind_rows ahead of need, in one batch (one grace period; none
 * where the kernel has no batch), without the unwinder's lock: nothing
 * here touches the session's state under it (pending, views).
 */
static int sink_install_rows(void *ctx, const uint32_t *ids, const uint32_t *room, uint32_t n,
			     uint64_t *bytes)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_INNER_MAP | BPF_F_MMAPABLE);
	struct session *s = ctx;
	int fds[64], rows = bpf_map__fd(s->skel->maps.unwind_rows), err = 0;
	uint32_t i, done, count;

	if (n > 64)
		n = 64; /* the first 64: the return says so */
	for (i = 0; i < n; i++) {
		fds[i] = bpf_map_create(BPF_MAP_TYPE_ARRAY, "unwind_words", sizeof(__u32),
					sizeof(struct bpfprof_unwind_words), room[i] / 2, &opts);
		if (fds[i] < 0) {
			err = -errno;
			break;
		}
		/* its pages and header page: the kernel's count, without an fdinfo read a map */
		bytes[i] = unwind_compact__kernel_bytes(room[i]);
	}
	count = i;
	done = count;
	/*
	 * no batch (5.10 has none for an array of maps), or a failed one: no
	 * pool. One map at a time would hold the registrations' thread for a
	 * grace period each (15 of them) just as a command's first
	 * registrations come. Any a failed batch put in stay empty (no
	 * description) until a table's load into their slot replaces them
	 */
	if (count && bpf_map_update_batch(rows, ids, fds, &done, NULL)) {
		if (!err)
			err = -errno;
		done = 0;
	}
	for (i = 0; i < count; i++)
		close(fds[i]); /* unwind_rows holds those that went in */
	return done ? (int)done : err;
}

/*
 * A table into the words map sink_install_rows put at slot id: its words
 * through an mmap of that map (found by its id: unwind_rows gives user space
 * map ids), then its description (an array's update: no grace period).
 */
static int sink_fill_table(void *ctx, uint32_t id, const struct bpfprof_unwind_table *info,
			   const uint32_t *words, uint32_t nr_words)
{
	struct session *s = ctx;
	struct bpfprof_unwind_table load_info = *info;
	size_t len = ((size_t)nr_words * sizeof(*words) + 4095) & ~(size_t)4095;
	uint32_t map_id;
	void *mem;
	int fd, err = 0;

	view_drop(s, id);
	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.unwind_rows), &id, &map_id))
		return -errno;
	fd = bpf_map_get_fd_by_id(map_id);
	if (fd < 0)
		return -errno;
	mem = len ? mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : NULL;
	close(fd);
	if (mem == MAP_FAILED)
		return -errno;
	if (len) {
		memcpy(mem, words, (size_t)nr_words * sizeof(*words));
		munmap(mem, len);
	}
	/* a new load's number (never 0), written with the description, after the words */
	if (!++s->table_gen)
		s->table_gen = 1;
	load_info.gen = s->table_gen;
	if (bpf_map__update_elem(s->skel->maps.unwind_tables, &id, sizeof(id), &load_info,
				 sizeof(load_info), BPF_ANY))
		err = -errno;
	return err;
}

static void sink_drop_table(void *ctx, uint32_t id)
{
	struct session *s = ctx;
	struct bpfprof_unwind_table none = { 0 };

	/* dropped before it went in: its words go with the descriptor */
	for (size_t i = 0; i < s->nr_pending; i++) {
		if (s->pending[i].id != id)
			continue;
		close(s->pending[i].fd);
		s->pending[i] = s->pending[--s->nr_pending];
		return;
	}
	view_drop(s, id);
	bpf_map__update_elem(s->skel->maps.unwind_tables, &id, sizeof(id), &none, sizeof(none),
			     BPF_ANY);
	bpf_map__delete_elem(s->skel->maps.unwind_rows, &id, sizeof(id), 0);
}

static uint32_t sink_table_used(void *ctx, uint32_t id)
{
	struct session *s = ctx;
	struct bpfprof_unwind_table t;

	if (bpf_map__lookup_elem(s->skel->maps.unwind_tables, &id, sizeof(id), &t, sizeof(t), 0))
		return 0;
	return t.used;
}

/*
 * The words of table id as the walk reads them: its inner map (by the id
 * unwind_rows gives user space) mapped read-only, kept until the slot is
 * loaded again or dropped; the description from unwind_tables.
 */
static int sink_table_words(void *ctx, uint32_t id, const struct bpfprof_unwind_table **info,
			    const uint32_t **words, uint32_t *nr_words)
{
	struct session *s = ctx;
	struct table_view *v;
	struct bpf_map_info mi;
	uint32_t map_id, len = sizeof(mi);
	int fd, err = 0;

	if (!s->views) {
		s->nr_views = bpf_map__max_entries(s->skel->maps.unwind_tables);
		s->views = calloc(s->nr_views, sizeof(*s->views));
		if (!s->views) {
			s->nr_views = 0;
			return -ENOMEM;
		}
	}
	if (id >= s->nr_views)
		return -ENOENT;
	v = &s->views[id];
	if (!v->mem) {
		if (bpf_map__lookup_elem(s->skel->maps.unwind_tables, &id, sizeof(id), &v->info,
					 sizeof(v->info), 0) ||
		    !v->info.nr_pages ||
		    bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.unwind_rows), &id, &map_id))
			return -ENOENT;
		fd = bpf_map_get_fd_by_id(map_id);
		if (fd < 0)
			return -errno;
		memset(&mi, 0, sizeof(mi));
		if (bpf_obj_get_info_by_fd(fd, &mi, &len)) {
			err = -errno;
		} else {
			v->len = ((size_t)mi.max_entries * mi.value_size + 4095) & ~(size_t)4095;
			v->mem = mmap(NULL, v->len, PROT_READ, MAP_SHARED, fd, 0);
			if (v->mem == MAP_FAILED) {
				err = -errno;
				v->mem = NULL;
			}
		}
		close(fd);
		if (err)
			return err;
	}
	*info = &v->info;
	*words = v->mem;
	*nr_words = (uint32_t)(v->len / sizeof(uint32_t));
	return 0;
}

void session__unwind_sink(struct session *s, struct unwind_sink *sink)
{
	memset(sink, 0, sizeof(*sink));
	sink->set_mapping = sink_set_mapping;
	sink->del_mapping = sink_del_mapping;
	sink->set_mappings = sink_set_mappings;
	sink->del_mappings = sink_del_mappings;
	sink->set_proc = sink_set_proc;
	sink->load_table = sink_load_table;
	sink->flush_tables = sink_flush_tables;
	sink->drop_table = sink_drop_table;
	sink->table_used = sink_table_used;
	sink->table_words = sink_table_words;
	sink->install_rows = sink_install_rows;
	sink->fill_table = sink_fill_table;
	sink->budget = s->unwind_budget;
	sink->max_tables = bpf_map__max_entries(s->skel->maps.unwind_tables);
	sink->ctx = s;
}

/* tgid's entry in an interpreter's map of processes: cfg (size bytes), or none (NULL) */
static int proc_map_set(struct session *s, struct bpf_map *map, uint32_t tgid, const void *cfg,
			size_t size)
{
	int err = 0;

	if (!cfg) {
		if (!bpf_map__delete_elem(map, &tgid, sizeof(tgid), 0))
			s->nr_interp_procs -= !!s->nr_interp_procs;
		else if (errno != ENOENT)
			err = -errno;
	} else if (!bpf_map__update_elem(map, &tgid, sizeof(tgid), cfg, size, BPF_NOEXIST)) {
		s->nr_interp_procs++;
	} else if (errno != EEXIST ||
		   bpf_map__update_elem(map, &tgid, sizeof(tgid), cfg, size, BPF_EXIST)) {
		err = -errno;
	}
	proc_maps_changed(s);
	return err;
}

static int interp_walk_ready(struct session *s, enum interp_kind kind);

int session__python_set(struct session *s, uint32_t tgid, const struct bpfprof_py_proc *cfg)
{
	int err = cfg ? interp_walk_ready(s, INTERP_PYTHON) : 0;

	return err ? err : proc_map_set(s, s->skel->maps.py_procs, tgid, cfg, sizeof(*cfg));
}

/* tgid's entry in hs_procs (bpf/hotspot.bpf.h): cfg, or none (NULL) */
static int session__hotspot_set(struct session *s, uint32_t tgid,
				const struct bpfprof_hotspot_proc *cfg)
{
	if (!s->skel->rodata->hotspot_in_walk)
		return -EOPNOTSUPP; /* the legacy variant: no HotSpot step (bpf/hotspot.bpf.h) */
	return proc_map_set(s, s->skel->maps.hs_procs, tgid, cfg, sizeof(*cfg));
}

/* V8's entry of tgid in the walk (bpf/v8.bpf.h), or none (cfg NULL) */
static int session__v8_set(struct session *s, uint32_t tgid, const struct bpfprof_v8_proc *cfg)
{
	return proc_map_set(s, s->skel->maps.v8_procs, tgid, cfg, sizeof(*cfg));
}

/* The names of the interpreters in walks (BPFPROF_WALK_*), for -v */
static void walk_names(uint32_t walks, char *buf, size_t size)
{
	static const char *const names[] = { "Python", "Java", "JavaScript" };
	size_t n = 0;

	buf[0] = '\0';
	for (uint32_t i = 0; i < INTERP_NR; i++)
		if (walks & (1u << i) && n < size)
			n += (size_t)snprintf(buf + n, size - n, "%s%s", n ? ", " : "", names[i]);
}

/*
 * sample_main loaded again, with every interpreter's unwinder that can come
 * (s->interp_more), its maps the session's (bpf_map__reuse_fd; its own
 * read-only data, a copy of the first load's but for interp_walks), and
 * put in sample_jmp's slot in place of the first: on_sample tail-calls it
 * from the next sample on. Called with widen_lock held. Returns 0 or
 * -errno, printed.
 */
static int sample_prog_widen(struct session *s, uint32_t have, uint32_t walks)
{
	uint64_t t0 = thread_cpu_ns();
	struct bpf_map *m, *wm;
	struct bpf_program *p;
	struct profile_bpf *w;
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);
	char names[64];
	int err = 0;

	w = open_variant(s->variant, s->core_btf[0] ? s->core_btf : NULL);
	if (!w) {
		err = -errno;
		goto out;
	}
	memcpy(w->rodata, s->skel->rodata, sizeof(*w->rodata));
	w->rodata->interp_walks = walks;
	bpf_object__for_each_program(p, w->obj)
		if (!err)
			err = bpf_program__set_autoload(p, p == w->progs.sample_main);
	/* the same object: its maps in the same order */
	wm = bpf_object__next_map(w->obj, NULL);
	bpf_object__for_each_map(m, s->skel->obj) {
		if (!err && m != s->skel->maps.rodata)
			err = bpf_map__fd(m) >= 0 ? bpf_map__reuse_fd(wm, bpf_map__fd(m)) :
						    bpf_map__set_autocreate(wm, false);
		wm = bpf_object__next_map(w->obj, wm);
	}
	if (!err)
		err = profile_bpf__load(w);
	if (!err)
		err = set_tail_call(s->skel->maps.sample_jmp, w->progs.sample_main);
	memset(&info, 0, sizeof(info));
	if (!err && bpf_obj_get_info_by_fd(bpf_program__fd(w->progs.sample_main), &info, &len))
		info.verified_insns = 0;
out:
	/* the slot holds the program: the object is no longer needed */
	profile_bpf__destroy(w);
	walk_names(walks & ~have, names, sizeof(names));
	if (err) {
		pr_warn("cannot load the %s unwinders: %s\n", names, strerror(-err));
		return err;
	}
	pr_info("the %s unwinders loaded with the first such process: %u instructions "
		"verified, %.1f ms of CPU\n",
		names, info.verified_insns, (double)(thread_cpu_ns() - t0) / 1e6);
	return 0;
}

/*
 * widen_thread: sample_prog_widen outside widen_lock (the attaches meanwhile
 * find it started), then what it loaded, or that it failed: a failed load is
 * not tried again for each process
 */
static void *widen_main(void *arg)
{
	struct session *s = arg;
	uint32_t have, walks;
	int err;

	pthread_mutex_lock(&s->widen_lock);
	have = s->interp_walks;
	walks = have | s->interp_more;
	pthread_mutex_unlock(&s->widen_lock);
	err = sample_prog_widen(s, have, walks);
	pthread_mutex_lock(&s->widen_lock);
	if (err)
		s->interp_more = 0;
	else
		s->interp_walks = walks;
	pthread_mutex_unlock(&s->widen_lock);
	return NULL;
}

/*
 * The sample's program walks kind's frames once kind's process is
 * attached: loaded again with them the first time, on widen_thread. Its
 * entry may go in meanwhile: the program in place has no code that reads
 * it (interp_walks), so the process's first samples, until the load is in,
 * have its native frames only. Returns 0 or -errno (-EOPNOTSUPP: not an
 * interpreter this run walks, or its load failed).
 */
static int interp_walk_ready(struct session *s, enum interp_kind kind)
{
	uint32_t bit = 1u << kind;
	int err = 0;

	pthread_mutex_lock(&s->widen_lock);
	if (!(s->interp_walks & bit)) {
		if (!(s->interp_more & bit))
			err = -EOPNOTSUPP;
		else if (!s->widen_started) {
			err = -pthread_create(&s->widen_thread, NULL, widen_main, s);
			s->widen_started = !err;
			/* no thread: not tried again for each process */
			if (err) {
				pr_warn("cannot load the interpreters' unwinders: %s\n",
					strerror(-err));
				s->interp_more = 0;
			}
		}
	}
	pthread_mutex_unlock(&s->widen_lock);
	return err;
}

int session__interp_attach(void *ctx, enum interp_kind kind, uint32_t tgid, const void *layout)
{
	int err = layout && kind < INTERP_NR ? interp_walk_ready(ctx, kind) : 0;

	if (err)
		return err;
	switch (kind) {
	case INTERP_PYTHON:
		return session__python_set(ctx, tgid, layout);
	case INTERP_HOTSPOT:
		return session__hotspot_set(ctx, tgid, layout);
	case INTERP_V8:
		return session__v8_set(ctx, tgid, layout);
	default:
		return -EOPNOTSUPP;
	}
}

void session__walk_stats(struct session *s, uint64_t stats[BPFPROF_STAT_NR])
{
	for (uint32_t i = 0; i < BPFPROF_STAT_NR; i++)
		stats[i] = stat_sum(s, i, NULL);
}

int session__bpf_run_time(struct session *s, uint64_t *run_ns, uint64_t *runs)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);

	*run_ns = *runs = 0;
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(bpf_program__fd(s->skel->progs.on_sample), &info, &len))
		return -errno;
	*run_ns = info.run_time_ns;
	*runs = info.run_cnt;
	return 0;
}

void session__close(struct session *s)
{
	int cpu;

	if (!s)
		return;

	if (s->widen_started)
		pthread_join(s->widen_thread, NULL);
	if (s->links)
		for (cpu = 0; cpu < s->nr_cpus; cpu++)
			bpf_link__destroy(s->links[cpu]);
	if (s->pfds)
		for (cpu = 0; cpu < s->nr_cpus; cpu++)
			if (s->pfds[cpu] >= 0)
				close(s->pfds[cpu]);
	if (s->epfd >= 0)
		close(s->epfd);
	ring_buffer__free(s->rb);
	cpu_rings__free(s->cpu_rings);
	if (s->cpu_rings_mem)
		munmap(s->cpu_rings_mem, s->cpu_rings_len);
	ring_buffer__free(s->notices);
	for (uint32_t i = 0; i < s->nr_views; i++)
		view_drop(s, i);
	free(s->views);
	for (size_t i = 0; i < s->nr_pending; i++)
		close(s->pending[i].fd);
	free(s->pending);
	profile_bpf__destroy(s->skel);
	free(s->links);
	free(s->pfds);
	pthread_mutex_destroy(&s->widen_lock);
	free(s);
}

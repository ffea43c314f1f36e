// SPDX-License-Identifier: MIT
/*
 * Ring-buffer records → profile (include/agg.h). The hot path is one hash
 * lookup per record (profile__add_stack); process bookkeeping and maps
 * re-reads happen only for new processes and new distinct callchains.
 *
 * Churn: a process's whole maps snapshot (tens of mappings, thousands for a
 * JVM) is what a process costs beyond its samples. Once more than
 * max_tracked processes hold one, an eviction pass (amortized: the next one
 * comes only after max(max_tracked, tracked) / 8 more processes) asks the
 * process table which have exited (gone, a zombie, or another start time: the
 * pid was reused), and reduces those to the mappings their samples fall in.
 * That keeps every sampled address resolving exactly as before, since the
 * symbolizer only looks up sampled addresses in them, so short-lived
 * processes stay named. It waits until none of the process's samples can
 * still be queued: a process seen gone at CLOCK_MONOTONIC T has no sample
 * stamped after T (bpf_ktime_get_ns is that clock), and the ring buffer hands
 * records over in the order they were reserved, microseconds after their
 * stamp, so once a record stamped after T + GONE_MARGIN_NS has arrived, the
 * process's last samples are in. Past max_procs processes in the profile,
 * new ones are not tracked at all: their samples keep their kernel frames in
 * one "[other]" entry, and a warning names --interval.
 *
 * No file is opened here: a process's comm, start time, cgroup and maps come
 * from the process table (proc_table.h), which owns every /proc read.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "agg.h"
#include "array.h"
#include "bpfprof_abi.h"
#include "lib_hashmap.h"
#include "log.h"
#include "proc_table.h"
#include "procmaps.h"

/*
 * At most one maps re-read per process per this many ns of sample time, but
 * for its first REREAD_BURST ones: a young process maps its libraries (the
 * dynamic loader, dlopen, a runtime's first JIT code) within milliseconds of
 * its exec, and a short-lived one would be gone before the interval passed.
 * Each read costs 0.2-0.5 ms of CPU for a small process: with 4, -a over a
 * new process every 10 ms cost 1.6 ms per process, with 2 1.1 ms (0.85 ms
 * before these re-reads and the exec rename), and 96.6 % of the samples of
 * churn.sh's 60 ms processes were named instead of 97.4 %.
 */
#define REREAD_INTERVAL_NS (100ULL * 1000 * 1000)
#define REREAD_BURST 2

/* Records are stamped this long at most before they are reserved (generous: µs in practice). */
#define GONE_MARGIN_NS (10ULL * 1000 * 1000)

enum proc_kind {
	PROC_TRACKED, /* holds its whole maps snapshot */
	PROC_COMPACT, /* exited; holds the mappings its samples use */
	PROC_OTHER, /* the "[other]" entry past max_procs */
};

struct proc_state {
	uint64_t last_read_ns; /* sample time of the last maps read */
	uint32_t nr_rereads; /* maps reads after the first */
	uint64_t start_time; /* starttime of /proc/PID/stat (clock ticks after boot), 0 unknown */
	uint64_t gone_ns; /* CLOCK_MONOTONIC when seen exited, 0 while not */
	bool stale; /* an unknown address was seen too soon after the last read */
	bool jitdump_mapped; /* the last read found a jit-PID.dump mapping */
	uint8_t kind; /* enum proc_kind */
};

/*
 * The process entry of a (tgid, start), remembered direct-mapped by tgid:
 * records come from a few processes at a time, and a hit spares the
 * profile's process index (a hash, then every entry of the pid for the
 * newest). Only a new entry in p->procs can change what (tgid, start) finds
 * (start times only go from unknown to known, which takes candidates away,
 * never the one found), so the hints hold while p->nr_procs is what it was
 * when they were made.
 */
#define PROC_HINTS 64

struct proc_hint {
	uint32_t tgid;
	uint32_t start;
	int32_t proc; /* -1: empty */
};

/*
 * Records taken by agg__queue and not yet aggregated, oldest first: each a
 * copy (the ring buffer takes its memory back once the callback returns),
 * its stack hashed and its index slot fetched when it came in, its key and
 * entry AGG_AHEAD / 2 records later, aggregated AGG_AHEAD records later.
 * On a profile larger than the caches those two reads, one after the other,
 * were most of a record's time; spread over the records in between, they
 * overlap other records' work. A copy has room for AGG_MAX_RECORD bytes;
 * only those the record's fields use are written (record_bytes).
 */
#define AGG_AHEAD 8

#define AGG_MAX_RECORD (BPFPROF_OFFCPU_HDR_SIZE + sizeof(struct bpfprof_sample))

struct agg_pending {
	const struct bpfprof_sample *s; /* in rec */
	const struct bpfprof_offcpu *off; /* in rec: an off-CPU block; NULL for a sample */
	uint32_t hash; /* profile__stack_hash of its callchain; 0 for an off-CPU block */
	union {
		uint64_t align;
		uint8_t bytes[AGG_MAX_RECORD];
	} rec;
};

/* pending[] as a ring: the oldest record at (next - nr) % AGG_AHEAD */
struct agg_ahead {
	uint32_t next; /* where the next record goes */
	uint32_t nr; /* records queued */
	struct agg_pending pending[AGG_AHEAD];
};

_Static_assert((AGG_AHEAD & (AGG_AHEAD - 1)) == 0 && AGG_AHEAD >= 2,
	       "AGG_AHEAD: a power of two, with a halfway point");

struct agg {
	struct profile *p;
	struct proc_table *t; /* borrowed: comm, start time, cgroup, maps */
	uint64_t period_ns;
	uint64_t nr_bad;
	struct proc_state *state; /* parallel to p->procs */
	size_t cap_state;
	size_t nr_known; /* p->procs with a state set up */
	size_t max_tracked, max_procs;
	size_t evict_at; /* next pass once st.nr_tracked exceeds this */
	size_t nr_pending; /* tracked processes seen gone, to reduce */
	uint64_t pending_at; /* record stamp from which the first of them can be */
	int other; /* index of "[other]", -1 before it is needed */
	struct agg_stats st;
	struct agg_observer obs;
	struct agg_frames frames;
	struct agg_ahead *ahead; /* records queued by agg__queue; NULL before the first */
	size_t index_bytes; /* what the profile's stacks take in the index, entries and keys */
	size_t queue_from; /* agg__queue_from's: index_bytes from which records are queued */
	size_t hints_nr_procs; /* p->nr_procs the hints were made with */
	struct proc_hint hints[PROC_HINTS];
	uint64_t merged[BPFPROF_MAX_STACK * 2 + BPFPROF_MAX_PY_FRAMES + 1]; /* kernel + merged user */
};

void agg__set_frames(struct agg *a, const struct agg_frames *f)
{
	if (f)
		a->frames = *f;
	else
		memset(&a->frames, 0, sizeof(a->frames));
}

void agg__set_observer(struct agg *a, const struct agg_observer *obs)
{
	if (obs)
		a->obs = *obs;
	else
		memset(&a->obs, 0, sizeof(a->obs));
}

/* The process's maps changed: to the process table's consumers, then the observer */
static int notify_maps(struct agg *a, uint32_t proc, uint64_t time_ns)
{
	int err = proc_table__maps_changed(a->t, a->p, proc);

	if (err)
		return err;
	return a->obs.maps_changed ? a->obs.maps_changed(a->obs.ctx, a->p, proc, time_ns) : 0;
}

static void forget_hints(struct agg *a)
{
	for (size_t i = 0; i < PROC_HINTS; i++)
		a->hints[i].proc = -1;
	a->hints_nr_procs = a->p->nr_procs;
}

/* The entry of (tgid, start) as profile__process_start finds or makes it; *created likewise. */
static inline __attribute__((always_inline)) int process_of(struct agg *a, uint32_t tgid,
							    uint32_t start, bool *created)
{
	struct proc_hint *h = &a->hints[tgid % PROC_HINTS];
	int proc;

	if (a->hints_nr_procs != a->p->nr_procs)
		forget_hints(a);
	else if (h->proc >= 0 && h->tgid == tgid && h->start == start) {
		*created = false;
		return h->proc;
	}
	proc = profile__process_start(a->p, tgid, start, created);
	if (proc < 0)
		return proc;
	if (a->hints_nr_procs != a->p->nr_procs)
		forget_hints(a);
	*h = (struct proc_hint){ .tgid = tgid, .start = start, .proc = proc };
	return proc;
}

/*
 * Whether a process's comm and a record's differ, as strncmp over
 * PROFILE_COMM_LEN - 1 characters says, on every sample of a main thread:
 * the same bytes (nearly always) answer with two loads and no call.
 */
static bool comm_differs(const char *comm, const char *sample_comm)
{
	uint64_t a0, a1, b0, b1;

	_Static_assert(PROFILE_COMM_LEN == 16 && BPFPROF_TASK_COMM_LEN == 16,
		       "two overlapping words cover 15 characters");
	memcpy(&a0, comm, 8);
	memcpy(&a1, comm + 7, 8);
	memcpy(&b0, sample_comm, 8);
	memcpy(&b1, sample_comm + 7, 8);
	if (a0 == b0 && a1 == b1)
		return false;
	return strncmp(comm, sample_comm, PROFILE_COMM_LEN - 1);
}

struct agg *agg__new(struct profile *p, struct proc_table *t, uint64_t period_ns)
{
	struct agg *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->p = p;
	a->t = t;
	a->period_ns = period_ns;
	a->max_tracked = a->evict_at = AGG_MAX_TRACKED;
	a->max_procs = AGG_MAX_PROCS;
	a->other = -1;
	a->queue_from = AGG_QUEUE_FROM_BYTES;
	forget_hints(a);
	return a;
}

void agg__queue_from(struct agg *a, size_t bytes)
{
	a->queue_from = bytes;
}

void agg__set_limits(struct agg *a, size_t max_tracked, size_t max_procs)
{
	if (max_tracked)
		a->max_tracked = a->evict_at = max_tracked;
	if (max_procs)
		a->max_procs = max_procs;
}

void agg__stats(const struct agg *a, struct agg_stats *st)
{
	*st = a->st;
}

void agg__free(struct agg *a)
{
	if (!a)
		return;
	free(a->state);
	free(a->ahead);
	free(a);
}

uint64_t agg__nr_bad(const struct agg *a)
{
	return a->nr_bad;
}

/*
 * comm of the process (its main thread), falling back to the sampled
 * thread's, also when the pid is another process's now. A record of the
 * main thread has it already, as it was at the sample: no /proc reads
 * (comm, then stat for the identity: 30-45 us a process here)
 */
static void read_comm(struct agg *a, uint32_t proc, const struct bpfprof_sample *s)
{
	struct profile_process *pr = &a->p->procs[proc];
	const char *sample_comm = s->comm;

	if (s->tid != s->tgid && !proc_table__comm(a->t, pr->pid, pr->start, pr->comm))
		return;
	memcpy(pr->comm, sample_comm, PROFILE_COMM_LEN);
	pr->comm[PROFILE_COMM_LEN - 1] = '\0';
}

/*
 * A mapping to keep whatever the samples say: perf's JIT marker, the mapped
 * jit-PID.dump through which the symbolizer finds a runtime's JIT records.
 */
static bool keep_mapping(const struct profile_mapping *m)
{
	const char *base = strrchr(m->path, '/');

	return base && !strncmp(base + 1, "jit-", 4) && strstr(base, ".dump");
}

/* Anonymous executable memory: JIT code, named from the process's JIT files. */
static bool jit_code(const struct profile_mapping *m)
{
	return !m->path[0] && m->perms[2] == 'x';
}

/* The leader's comm from a sample (NUL-padded, at most PROFILE_COMM_LEN - 1 characters). */
static void rename_process(struct profile_process *pr, const char *sample_comm)
{
	memcpy(pr->comm, sample_comm, PROFILE_COMM_LEN - 1);
	pr->comm[PROFILE_COMM_LEN - 1] = '\0';
}

/*
 * The maps of the entry's process, from the process table: read now, or,
 * the process gone (or its pid another's), the last maps remembered for it.
 * *origin says which.
 */
static int read_maps(struct agg *a, uint32_t proc, char **text, size_t *len, const char **origin)
{
	const struct profile_process *pr = &a->p->procs[proc];
	bool remembered;
	int err = proc_table__maps(a->t, pr->pid, pr->start, text, len, &remembered);

	*origin = remembered ? "maps (remembered)" : "maps";
	if (!err && remembered)
		a->st.nr_maps_remembered++;
	return err;
}

/* Read the maps; tell the observer when this is the first read or it added mappings. */
static int snapshot(struct agg *a, uint32_t proc, uint64_t now_ns, bool first)
{
	char origin[PATH_MAX], *text = NULL;
	const char *what;
	size_t len = 0;
	int ret = read_maps(a, proc, &text, &len, &what);

	if (!ret) {
		snprintf(origin, sizeof(origin), "%s/%u/%s", proc_table__proc_dir(a->t),
			 a->p->procs[proc].pid, what);
		ret = procmaps__merge(a->p, proc, text, len, origin);
		free(text);
	}
	a->st.nr_maps_reads++;
	if (!first)
		a->state[proc].nr_rereads++;
	a->state[proc].last_read_ns = now_ns;
	if (ret == -ENOMEM)
		return ret;
	if (ret < 0) {
		if (!a->p->procs[proc].nr_mappings)
			a->p->procs[proc].maps_missing = true;
		pr_debug("maps of pid %u: %s\n", a->p->procs[proc].pid, strerror(-ret));
		return first ? notify_maps(a, proc, now_ns) : 0;
	}
	a->p->procs[proc].maps_missing = false;
	if (a->frames.maps) {
		int added = a->frames.maps(a->frames.ctx, a->p, proc);

		if (added < 0)
			return added;
		ret += added;
	}
	pr_debug("maps of pid %u read at %llu ns (%s): %d new mappings\n", a->p->procs[proc].pid,
		 (unsigned long long)now_ns, first ? "first" : "again", ret);
	a->state[proc].jitdump_mapped = false;
	for (size_t i = 0; i < a->p->procs[proc].nr_mappings; i++)
		a->state[proc].jitdump_mapped |= keep_mapping(&a->p->procs[proc].mappings[i]);
	return first || ret > 0 ? notify_maps(a, proc, now_ns) : 0;
}

/* Per-process state for every process of the profile, also ones added before us: tracked. */
static int ensure_state(struct agg *a)
{
	size_t old = a->cap_state;

	if (a->p->nr_procs > old) {
		if (array__grow((void **)&a->state, &a->cap_state, a->p->nr_procs,
				sizeof(*a->state)))
			return -ENOMEM;
		memset(a->state + old, 0, (a->cap_state - old) * sizeof(*a->state));
	}
	for (; a->nr_known < a->p->nr_procs; a->nr_known++) {
		a->state[a->nr_known].kind = PROC_TRACKED;
		a->st.nr_tracked++;
	}
	return 0;
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The process of this entry has exited: reaped, a zombie, or its pid reused by another. */
static bool process_gone(const struct agg *a, uint32_t proc)
{
	return proc_table__gone(a->t, a->p->procs[proc].pid, a->state[proc].start_time);
}

/* The start time of the process now behind this entry's pid, 0 if unknown. */
static uint64_t start_time_of(const struct agg *a, uint32_t proc)
{
	return proc_table__start_time(a->t, a->p->procs[proc].pid);
}

static int new_process(struct agg *a, uint32_t proc, const struct bpfprof_sample *s)
{
	struct profile_process *pr = &a->p->procs[proc];
	int err;

	pr->cgroup_id = s->cgroup_id;
	read_comm(a, proc, s);
	a->state[proc].start_time = pr->start ?: start_time_of(a, proc);
	err = proc_table__cgroup(a->t, a->p, proc);
	if (err)
		return err;
	return snapshot(a, proc, s->time_ns, true);
}

/* Whether a maps re-read at sample time now_ns would come too soon after the last read. */
static bool too_soon(const struct proc_state *ps, uint64_t now_ns)
{
	return ps->nr_rereads >= REREAD_BURST &&
	       (int64_t)(now_ns - ps->last_read_ns) < (int64_t)REREAD_INTERVAL_NS;
}

/*
 * A new callchain: re-read the maps if one of its user addresses is unknown,
 * in a mapping that was not executable when last read (a runtime reserves
 * its code space, then makes parts of it executable), or is JIT code while
 * no jitdump is mapped: a runtime maps its jit-PID.dump (how the symbolizer
 * finds it) once it starts compiling, perhaps after the first read, and
 * being data it is never sampled itself.
 */
static int check_mappings(struct agg *a, uint32_t proc, const struct bpfprof_sample *s)
{
	const struct profile_process *pr = &a->p->procs[proc];
	bool soon = too_soon(&a->state[proc], s->time_ns);
	int i, m;

	for (i = 0; i < s->nr_user; i++) {
		/* a return address may sit just past its mapping's end: look up ip - 1 */
		uint64_t ip = s->ips[s->nr_kernel + i] - (i > 0);

		/* code runs only from executable mappings: one our copy says is not has changed since */
		m = profile__find_mapping(a->p, proc, ip);
		if (m >= 0 && pr->mappings[m].perms[2] == 'x' &&
		    (a->state[proc].jitdump_mapped || !jit_code(&pr->mappings[m])))
			continue;
		/*
		 * Too soon: re-read on a later sample, or code mapped now (JIT
		 * code early in a runtime's life) would stay unknown whenever
		 * its callchains repeat from here on
		 */
		a->state[proc].stale = soon;
		return soon ? 0 : snapshot(a, proc, s->time_ns, false);
	}
	return 0;
}

/*
 * Reduce the candidates (cand_of[proc] >= 0) to the mappings that their
 * stacks' user addresses fall in, looked up as profile__resolve_locs will
 * (return addresses at ip - 1). One pass over all stacks.
 */
static int compact(struct agg *a, const int32_t *cand_of, const uint32_t *cands, size_t nr_cands)
{
	struct profile *p = a->p;
	size_t *base, total = 0, i, j;
	int32_t *remap = NULL;
	uint8_t *used;

	base = malloc(nr_cands * sizeof(*base));
	if (!base)
		return -ENOMEM;
	for (i = 0; i < nr_cands; i++) {
		base[i] = total;
		total += p->procs[cands[i]].nr_mappings;
	}
	used = calloc(total ? total : 1, 1);
	/* locations resolved already (none while sampling) keep pointing at their mapping */
	if (used && p->nr_locs)
		remap = malloc((total ? total : 1) * sizeof(*remap));
	if (!used || (p->nr_locs && !remap)) {
		free(base);
		free(used);
		return -ENOMEM;
	}
	for (i = 0; i < p->nr_stacks; i++) {
		const struct profile_stack *st = &p->stacks[i];
		int32_t c = cand_of[st->proc];

		if (c < 0)
			continue;
		for (j = 0; j < st->nr_user; j++) {
			int m = profile__find_mapping(p, st->proc,
						      st->ips[st->nr_kernel + j] - (j > 0));

			if (m >= 0)
				used[base[c] + (size_t)m] = 1;
		}
	}
	for (i = 0; i < nr_cands; i++) {
		struct profile_process *pr = &p->procs[cands[i]];
		size_t kept = 0, n = pr->nr_mappings;

		for (j = 0; j < n; j++) {
			if (!used[base[i] + j] && !keep_mapping(&pr->mappings[j])) {
				if (remap)
					remap[base[i] + j] = -1;
				continue;
			}
			if (remap)
				remap[base[i] + j] = (int32_t)kept;
			pr->mappings[kept++] = pr->mappings[j];
		}
		pr->nr_mappings = kept;
		if (!kept) {
			free(pr->mappings);
			pr->mappings = NULL;
			pr->cap_mappings = 0;
		} else if (kept < pr->cap_mappings) {
			/*
			 * A new block, not realloc: shrunk in place, the big one's
			 * head would stay where it is and split the free space that
			 * the next snapshots grow into (the heap then keeps growing)
			 */
			struct profile_mapping *nm = malloc(kept * sizeof(*nm));

			if (nm) {
				memcpy(nm, pr->mappings, kept * sizeof(*nm));
				free(pr->mappings);
				pr->mappings = nm;
				pr->cap_mappings = kept;
			}
		}
		a->st.nr_mappings_freed += n - kept;
		a->state[cands[i]].kind = PROC_COMPACT;
		a->st.nr_tracked--;
		a->st.nr_compacted++;
	}
	for (i = 0; remap && i < p->nr_locs; i++) {
		struct profile_location *l = &p->locs[i];

		if (l->proc != PROFILE_KERNEL_PROC && l->mapping >= 0 && cand_of[l->proc] >= 0)
			l->mapping = remap[base[cand_of[l->proc]] + (size_t)l->mapping];
	}
	free(remap);
	free(used);
	free(base);
	return 0;
}

/* The next pass once an eighth more are tracked: a pass costs one /proc read per tracked process. */
static void plan_next_pass(struct agg *a)
{
	size_t n = a->st.nr_tracked, step = (n > a->max_tracked ? n : a->max_tracked) / 8;

	a->evict_at = n + (step ? step : 1);
	if (a->evict_at < a->max_tracked)
		a->evict_at = a->max_tracked;
}

/*
 * An eviction pass, run when a new process makes more than evict_at
 * tracked: note which tracked processes have exited. They are reduced by
 * compact_gone once their last samples are in.
 */
static void find_gone(struct agg *a)
{
	uint64_t now = monotonic_ns();
	size_t i;

	for (i = 0; i < a->p->nr_procs; i++) {
		struct proc_state *ps = &a->state[i];

		if (ps->kind != PROC_TRACKED || ps->gone_ns || !process_gone(a, (uint32_t)i))
			continue;
		ps->gone_ns = now;
		if (!a->nr_pending || now + GONE_MARGIN_NS < a->pending_at)
			a->pending_at = now + GONE_MARGIN_NS;
		a->nr_pending++;
	}
	if (!a->st.nr_passes++)
		pr_info("over %zu processes tracked: exited ones keep only the mappings their samples use\n",
			a->max_tracked);
	plan_next_pass(a);
}

/* At a record stamped time_ns: reduce the processes seen gone before time_ns - GONE_MARGIN_NS. */
static int compact_gone(struct agg *a, uint64_t time_ns)
{
	size_t i, nr_cands = 0, n = a->p->nr_procs;
	uint32_t *cands;
	int32_t *cand_of;
	int err = 0;

	cand_of = malloc(n * sizeof(*cand_of));
	cands = malloc(n * sizeof(*cands));
	if (!cand_of || !cands) {
		free(cand_of);
		free(cands);
		return -ENOMEM;
	}
	a->pending_at = UINT64_MAX;
	for (i = 0; i < n; i++) {
		const struct proc_state *ps = &a->state[i];

		cand_of[i] = -1;
		if (ps->kind != PROC_TRACKED || !ps->gone_ns)
			continue;
		if (ps->gone_ns + GONE_MARGIN_NS <= time_ns) {
			cand_of[i] = (int32_t)nr_cands;
			cands[nr_cands++] = (uint32_t)i;
		} else if (ps->gone_ns + GONE_MARGIN_NS < a->pending_at) {
			a->pending_at = ps->gone_ns + GONE_MARGIN_NS;
		}
	}
	if (nr_cands)
		err = compact(a, cand_of, cands, nr_cands);
	a->nr_pending -= nr_cands;
	free(cand_of);
	free(cands);
	plan_next_pass(a);
	return err;
}

/*
 * A sample of an entry thought gone. Stamped before it was seen gone (plus
 * the margin): one of its last samples. Stamped after: a record without a
 * start time whose pid belongs to a new process now (the entry merges its
 * maps), or the process was not gone (records with start times go to the
 * entry of their own process: a reused pid gets an entry of its own).
 */
static int revive(struct agg *a, uint32_t proc, const struct bpfprof_sample *s)
{
	struct proc_state *ps = &a->state[proc];

	if (s->time_ns < ps->gone_ns + GONE_MARGIN_NS)
		return 0;
	if (ps->kind == PROC_COMPACT) {
		ps->kind = PROC_TRACKED;
		a->st.nr_tracked++;
	} else {
		a->nr_pending--; /* seen gone, not reduced yet */
	}
	ps->gone_ns = 0;
	if (!a->p->procs[proc].start)
		ps->start_time = start_time_of(a, proc);
	return snapshot(a, proc, s->time_ns, false);
}

/*
 * A new image of process `old` after an exec: a new entry, the newest of its
 * (pid, start), so the records that follow go to it. Returns its index or
 * -ENOMEM.
 */
static int new_image(struct agg *a, uint32_t old, const struct bpfprof_sample *s)
{
	struct profile_process *pr;
	int proc, err;

	proc = profile__add_process(a->p, a->p->procs[old].pid, a->p->procs[old].start);
	if (proc < 0 || ensure_state(a))
		return -ENOMEM;
	pr = &a->p->procs[proc];
	pr->cgroup_id = a->p->procs[old].cgroup_id;
	pr->cgroup_path = a->p->procs[old].cgroup_path;
	pr->container_id = a->p->procs[old].container_id;
	rename_process(pr, s->comm);
	a->state[proc].start_time = a->state[old].start_time;
	err = snapshot(a, (uint32_t)proc, s->time_ns, true);
	return err ? err : proc;
}

/* The "[other]" entry, made when first needed. Returns its index or -ENOMEM. */
static int other_entry(struct agg *a)
{
	struct profile_process *pr;
	bool created;
	int proc;

	if (a->other >= 0)
		return a->other;
	proc = profile__process(a->p, AGG_OTHER_PID, &created);
	if (proc < 0 || ensure_state(a))
		return -ENOMEM;
	pr = &a->p->procs[proc];
	snprintf(pr->comm, sizeof(pr->comm), "[other]");
	if (a->state[proc].kind == PROC_TRACKED)
		a->st.nr_tracked--;
	a->state[proc].kind = PROC_OTHER;
	a->other = proc;
	pr_warn("more than %zu processes in one profile: samples of newer ones go to '[other]' with "
		"kernel frames only; use --interval to start a fresh profile periodically\n",
		a->max_procs);
	return proc;
}

int agg__record_time(const void *data, size_t size, uint64_t *time_ns)
{
	const struct bpfprof_sample *s = data;

	if (size >= BPFPROF_OFFCPU_HDR_SIZE && *(const uint32_t *)data == BPFPROF_REC_OFFCPU) {
		s = &((const struct bpfprof_offcpu *)data)->s;
		size -= BPFPROF_OFFCPU_HDR_SIZE;
	}
	if (size < BPFPROF_SAMPLE_HDR_SIZE || s->type != BPFPROF_REC_SAMPLE)
		return -EINVAL;
	*time_ns = s->time_ns;
	return 0;
}

/*
 * The sample record within a record of `size` bytes (an off-CPU block's
 * after its length: *off set), checked. Returns it, or NULL for a malformed
 * record (counted, logged).
 */
static inline const struct bpfprof_sample *
checked_sample(struct agg *a, const void *data, size_t size, const struct bpfprof_offcpu **off)
{
	const struct bpfprof_sample *s = data;

	*off = NULL;
	/* an off-CPU block: its stacks are a sample record's, after the block's length */
	if (size >= BPFPROF_OFFCPU_HDR_SIZE && *(const uint32_t *)data == BPFPROF_REC_OFFCPU) {
		*off = data;
		s = &(*off)->s;
		size -= BPFPROF_OFFCPU_HDR_SIZE;
	}
	if (size < BPFPROF_SAMPLE_HDR_SIZE || s->type != BPFPROF_REC_SAMPLE ||
	    s->nr_kernel > BPFPROF_MAX_STACK || s->nr_user > BPFPROF_MAX_USER_STACK ||
	    s->nr_py > BPFPROF_MAX_PY_FRAMES ||
	    size < BPFPROF_SAMPLE_HDR_SIZE +
			    ((size_t)s->nr_kernel + s->nr_user + 2 * (size_t)s->nr_py) * 8) {
		a->nr_bad++;
		pr_debug("ring buffer: malformed record of %zu bytes skipped\n", size);
		return NULL;
	}
	return s;
}

/*
 * The record's own callchain hashed as the entry of its tgid will file it,
 * and its place in the stack index fetched (on a big profile, from memory)
 * while other work goes on: samples only (off-CPU blocks, far fewer, go
 * through profile__add_offcpu). Returns the hash, 0 for a block.
 */
static uint32_t hash_ahead(const struct agg *a, const struct bpfprof_sample *s,
			   const struct bpfprof_offcpu *off)
{
	uint32_t hash;

	if (off)
		return 0;
	hash = profile__stack_hash(s->tgid, (const uint64_t *)s->ips, s->nr_kernel, s->nr_user);
	profile__prefetch_stack(a->p, hash);
	return hash;
}

static int aggregate(struct agg *a, const struct bpfprof_sample *s,
		     const struct bpfprof_offcpu *off, uint32_t hash);
static inline __attribute__((always_inline)) int aggregate_now(struct agg *a,
							       const struct bpfprof_sample *s,
							       const struct bpfprof_offcpu *off,
							       uint32_t hash);

/* Bytes of a checked record that its fields use: what a queued copy keeps. */
static size_t record_bytes(const struct bpfprof_sample *s, const struct bpfprof_offcpu *off)
{
	return (off ? BPFPROF_OFFCPU_HDR_SIZE : 0) + BPFPROF_SAMPLE_HDR_SIZE +
	       ((size_t)s->nr_kernel + s->nr_user + 2 * (size_t)s->nr_py) * 8;
}

int agg__flush(struct agg *a)
{
	struct agg_ahead *q = a->ahead;
	int err = 0, e;

	while (q && q->nr) {
		const struct agg_pending *r = &q->pending[(q->next - q->nr--) % AGG_AHEAD];

		e = aggregate(a, r->s, r->off, r->hash);
		if (!err)
			err = e;
	}
	return err;
}

int agg__record(struct agg *a, const void *data, size_t size)
{
	const struct bpfprof_offcpu *off;
	const struct bpfprof_sample *s;
	int err = agg__flush(a); /* records queued before it come first */

	s = checked_sample(a, data, size, &off);
	if (!s)
		return err ?: -EINVAL;
	return aggregate_now(a, s, off, hash_ahead(a, s, off)) ?: err;
}

int agg__queue(struct agg *a, const void *data, size_t size)
{
	const struct bpfprof_offcpu *off;
	const struct bpfprof_sample *s = checked_sample(a, data, size, &off);
	struct agg_ahead *q = a->ahead;
	struct agg_pending *r;
	int err = 0;

	if (!s)
		return -EINVAL;
	if (!q) {
		if (a->index_bytes < a->queue_from)
			return aggregate_now(a, s, off, hash_ahead(a, s, off));
		q = a->ahead = calloc(1, sizeof(*q));
		if (!q)
			return -ENOMEM;
	}
	r = &q->pending[q->next];
	/* full: the oldest, in the place this one takes, goes in first */
	if (q->nr == AGG_AHEAD) {
		err = aggregate(a, r->s, r->off, r->hash);
		q->nr--;
	}
	r->off = off ? (const void *)r->rec.bytes : NULL;
	r->s = off ? &r->off->s : (const void *)r->rec.bytes;
	if (off) {
		memcpy(r->rec.bytes, data, record_bytes(s, off));
		r->hash = 0;
	} else {
		/* the header, then the callchain copied as it is hashed, then any interpreter frames */
		struct bpfprof_sample *c = (struct bpfprof_sample *)r->rec.bytes;
		size_t n = (size_t)s->nr_kernel + s->nr_user;

		memcpy(c, s, BPFPROF_SAMPLE_HDR_SIZE);
		r->hash = profile__stack_hash_copy(s->tgid, (const uint64_t *)s->ips, s->nr_kernel,
						   s->nr_user, (uint64_t *)c->ips);
		profile__prefetch_stack(a->p, r->hash);
		if (s->nr_py)
			memcpy(c->ips + n, s->ips + n, 2 * (size_t)s->nr_py * sizeof(*c->ips));
	}
	q->next = (q->next + 1) % AGG_AHEAD;
	/* the one halfway through: its slot is in by now, fetch the key it points to */
	if (++q->nr > AGG_AHEAD / 2) {
		r = &q->pending[(q->next - 1 - AGG_AHEAD / 2) % AGG_AHEAD];
		if (!r->off)
			profile__prefetch_key(a->p, r->hash,
					      (size_t)r->s->nr_kernel + r->s->nr_user);
	}
	return err;
}

/*
 * One checked record, hashed (hash_ahead), into the profile: the body of
 * agg__record. Inlined where records go in one at a time (agg__record,
 * agg__queue below its size): as one function with the check and the hash,
 * as before the queue, a record costs some 30 instructions less there.
 */
static inline __attribute__((always_inline)) int aggregate_now(struct agg *a,
							       const struct bpfprof_sample *s,
							       const struct bpfprof_offcpu *off,
							       uint32_t hash)
{
	bool created = false, other = false, created_proc;
	char comm[PROFILE_COMM_LEN];
	struct profile_sample ev;
	const uint64_t *ips;
	uint16_t nr_user;
	int proc, st, err = 0;

	/* at the process limit only known processes keep their own entry */
	if (a->p->nr_procs - (a->other >= 0) >= a->max_procs) {
		proc = profile__find_process_start(a->p, s->tgid, s->start);
		if (proc < 0 || proc == a->other) {
			proc = other_entry(a);
			other = true;
		}
	} else {
		proc = process_of(a, s->tgid, s->start, &created);
	}
	if (proc < 0)
		return proc;
	/* every entry has its state but a new one (not on a repeat: no call) */
	if (a->nr_known < a->p->nr_procs && ensure_state(a))
		return -ENOMEM;
	created_proc = created;
	if (created)
		err = new_process(a, (uint32_t)proc, s);
	else if (a->state[proc].gone_ns || a->state[proc].kind == PROC_COMPACT)
		err = revive(a, (uint32_t)proc, s);
	if (!err && a->nr_pending && s->time_ns >= a->pending_at)
		err = compact_gone(a, s->time_ns);
	if (err)
		return err;
	if (created && a->st.nr_tracked > a->evict_at)
		find_gone(a);
	/*
	 * The leader's name changed: an exec, nearly always (a shell's child
	 * first sampled between its fork and its exec). The process starts a
	 * new image, as perf record's COMM_EXEC does: an entry of its own
	 * (same pid and start) with the program's name and its maps read at
	 * once, so that the samples before keep the old name and mappings
	 * (PIE executables load at similar addresses: the new ones would
	 * replace the old ones they overlap) and those after get the new.
	 */
	if (s->tid == s->tgid && !other && !created_proc &&
	    comm_differs(a->p->procs[proc].comm, s->comm)) {
		proc = new_image(a, (uint32_t)proc, s);
		if (proc < 0)
			return proc;
	}
	a->p->procs[proc].nr_samples++;
	if (other)
		a->st.nr_other_samples++;
	ips = (const uint64_t *)s->ips;
	nr_user = s->nr_user;
	if (!other && a->frames.merge) {
		err = a->frames.merge(a->frames.ctx, a->p, (uint32_t)proc, s,
				      a->merged + s->nr_kernel, &nr_user);
		if (err < 0)
			return err;
		if (err) {
			memcpy(a->merged, s->ips, s->nr_kernel * sizeof(*a->merged));
			ips = a->merged;
		}
		err = 0;
	}
	/* "[other]" keeps kernel frames only: its user addresses belong to untracked processes */
	if (off)
		st = profile__add_offcpu(a->p, (uint32_t)proc, ips, s->nr_kernel,
					 other ? 0 : nr_user, 1, off->off_ns, &created);
	else if (!other && ips == (const uint64_t *)s->ips && a->p->procs[proc].pid == s->tgid)
		st = profile__add_stack_hashed(a->p, (uint32_t)proc, hash, ips, s->nr_kernel,
					       nr_user, 1, a->period_ns, &created);
	else
		st = profile__add_stack(a->p, (uint32_t)proc, ips, s->nr_kernel,
					other ? 0 : nr_user, 1, a->period_ns, &created);
	if (st < 0)
		return st;
	if (created) /* the entry, the key, two index slots (load 1/2 at most) */
		a->index_bytes +=
			sizeof(struct profile_stack) + 2 * sizeof(struct keyidx_slot) +
			(1 + (size_t)a->p->stacks[st].nr_kernel + a->p->stacks[st].nr_user) *
				sizeof(uint64_t);
	if (a->state[proc].stale && !other && !too_soon(&a->state[proc], s->time_ns)) {
		/* a read put off earlier */
		a->state[proc].stale = false;
		err = snapshot(a, (uint32_t)proc, s->time_ns, false);
	} else if (created && !other) {
		err = check_mappings(a, (uint32_t)proc, s);
	}
	if (err)
		return err;
	if (off ? !a->obs.offcpu : !a->obs.sample)
		return 0;
	/* the record's comm may fill its 16 bytes with no NUL */
	memcpy(comm, s->comm, sizeof(comm) - 1);
	comm[sizeof(comm) - 1] = '\0';
	ev = (struct profile_sample){ .pid = s->tgid,
				      .tid = s->tid,
				      .cpu = s->cpu,
				      .time_ns = s->time_ns,
				      .comm = comm,
				      .ips = ips,
				      .nr_kernel = s->nr_kernel,
				      .nr_user = nr_user,
				      .off_ns = off ? off->off_ns : 0 };
	if (off)
		return a->obs.offcpu(a->obs.ctx, a->p, (uint32_t)proc, &ev);
	return a->obs.sample(a->obs.ctx, a->p, (uint32_t)proc, &ev);
}

/* The queue's: out of line */
static int aggregate(struct agg *a, const struct bpfprof_sample *s,
		     const struct bpfprof_offcpu *off, uint32_t hash)
{
	return aggregate_now(a, s, off, hash);
}

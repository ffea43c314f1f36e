// SPDX-License-Identifier: MIT
/*
 * Executable mappings as they happen, from perf's side-band records
 * (include/mmap_events.h). Processes are a plain array, newest last,
 * searched from the newest end; each holds its executable mappings, kept
 * disjoint as the kernel's VMAs are (a new mapping replaces what it
 * overlaps, as MAP_FIXED and mprotect do).
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "array.h"
#include "mmap_events.h"

/* struct sample_id with PERF_SAMPLE_TID | PERF_SAMPLE_TIME: u32 pid, tid; u64 time */
#define SAMPLE_ID_SIZE 16
/* an expiry pass at most this often (ns of the records' clock) */
#define PASS_NS 1000000000ULL
/* mmap_events__changes' counters: processes by pid modulo this */
#define CHANGE_SLOTS (1u << 14)
/* the reader's rounds at most this often: a burst's records (a build's forks and execs) go together */
#define ROUND_GAP_NS (10ULL * 1000 * 1000)

struct mapping {
	uint64_t start, end, pgoff, ino;
	uint32_t maj, min, prot, flags;
	char *name; /* owned; "" for anonymous */
};

struct proc {
	uint32_t pid, start; /* start: clock ticks after boot, 0 unknown */
	uint64_t exit_ns; /* its leader's exit (records' clock), 0 while alive */
	struct mapping *m;
	size_t nr, cap;
	size_t bytes;
};

/* A record read from a ring, waiting for its round to be sorted by time */
struct queued {
	uint64_t time, seq;
	size_t off, size; /* in the batch buffer */
};

struct mmap_events {
	pthread_mutex_t lock;
	size_t max_bytes;
	uint64_t keep_ns, tick_ns;
	struct proc *p;
	size_t nr, cap;
	size_t bytes;
	uint64_t last_pass;
	struct mmap_events_stats st;
	/* executable mappings made, for mmap_events__take_exec; nr_exec also read without the lock */
	struct mmap_events_exec exec[MMAP_EVENTS_MAX_EXEC];
	int wake_fd; /* an eventfd: signalled when one is added, drained by take_exec; -1: none */
	bool exec_added; /* since the last signal: one a round (or a record handed in), not one each */
	/*
	 * mmap_events__changes': per pid modulo CHANGE_SLOTS, and for every
	 * process (records lost); written under the lock, read without it
	 */
	uint32_t *changes;
	uint32_t changes_all;
	/*
	 * mmap_events__arm_changes': an eventfd written at the first change
	 * after an arming (changes_armed, set by the armer, cleared by the
	 * write: atomics); -1: none
	 */
	int changes_fd;
	int changes_armed;
	/* per pid modulo CHANGE_SLOTS: processes whose changes write it (mmap_events__watch_changes) */
	uint16_t *watched;
	uint32_t exits; /* processes' exits handled (mmap_events__exits); read without the lock */
	/* mmap_events__take_exits': leaders' exits since the last take; overflow: more, or records lost */
	uint32_t exited[MMAP_EVENTS_MAX_EXITS];
	size_t nr_exited;
	bool exited_overflow;
	/* mmap_events__set_exec_filter's; NULL: all */
	bool (*exec_wanted)(void *ctx, uint32_t pid);
	void *exec_ctx;
	size_t nr_exec;
	uint64_t exec_dropped;

	/* the reader (mmap_events__start) */
	struct perf_buffer *pb;
	int map_fd;
	pthread_t thread;
	bool started;
	int stop; /* set by __free, read by the thread: atomics */
	int stop_fd; /* an eventfd __free signals: the thread waits for records or it, no timeout */
	int epfd; /* the thread's: the rings' epoll descriptor (libbpf's) and stop_fd */
	char *batch;
	size_t batch_len, batch_cap;
	struct queued *q;
	size_t nr_q, cap_q;
};

struct mmap_events *mmap_events__new(size_t max_bytes, uint64_t keep_ns, uint64_t tick_ns)
{
	struct mmap_events *m = calloc(1, sizeof(*m));

	if (!m) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&m->lock, NULL);
	m->max_bytes = max_bytes;
	m->keep_ns = keep_ns;
	m->tick_ns = tick_ns;
	m->map_fd = -1;
	m->stop_fd = m->epfd = -1;
	m->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	m->changes_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	m->changes = calloc(CHANGE_SLOTS, sizeof(*m->changes));
	m->watched = calloc(CHANGE_SLOTS, sizeof(*m->watched));
	if (!m->changes || !m->watched) {
		mmap_events__free(m);
		errno = ENOMEM;
		return NULL;
	}
	return m;
}

static void proc_clear(struct mmap_events *m, struct proc *p)
{
	for (size_t i = 0; i < p->nr; i++)
		free(p->m[i].name);
	p->nr = 0;
	m->bytes -= p->bytes;
	p->bytes = 0;
}

static void proc_drop(struct mmap_events *m, size_t i)
{
	proc_clear(m, &m->p[i]);
	free(m->p[i].m);
	memmove(&m->p[i], &m->p[i + 1], (m->nr - i - 1) * sizeof(*m->p));
	m->nr--;
}

void mmap_events__stop(struct mmap_events *m)
{
	if (!m || !m->started)
		return;
	__atomic_store_n(&m->stop, 1, __ATOMIC_RELEASE);
	(void)eventfd_write(m->stop_fd, 1);
	pthread_join(m->thread, NULL);
	m->started = false;
}

void mmap_events__free(struct mmap_events *m)
{
	if (!m)
		return;
	mmap_events__stop(m);
	perf_buffer__free(m->pb);
	if (m->map_fd >= 0)
		close(m->map_fd);
	if (m->epfd >= 0)
		close(m->epfd);
	if (m->stop_fd >= 0)
		close(m->stop_fd);
	if (m->wake_fd >= 0)
		close(m->wake_fd);
	if (m->changes_fd >= 0)
		close(m->changes_fd);
	while (m->nr)
		proc_drop(m, m->nr - 1);
	free(m->p);
	free(m->batch);
	free(m->q);
	free(m->changes);
	free(m->watched);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

/* The newest process of pid, or NULL */
static struct proc *newest(struct mmap_events *m, uint32_t pid)
{
	for (size_t i = m->nr; i-- > 0;)
		if (m->p[i].pid == pid)
			return &m->p[i];
	return NULL;
}

static struct proc *proc_add(struct mmap_events *m, uint32_t pid, uint32_t start)
{
	struct proc *p;

	if (array__grow((void **)&m->p, &m->cap, m->nr + 1, sizeof(*m->p)))
		return NULL;
	p = &m->p[m->nr++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->start = start;
	return p;
}

/* The memory bound: processes that exited first (oldest exit first), then the oldest. */
static void evict(struct mmap_events *m)
{
	while (m->bytes > m->max_bytes && m->nr > 1) {
		size_t victim = m->nr, i;

		for (i = 0; i < m->nr; i++)
			if (m->p[i].exit_ns &&
			    (victim == m->nr || m->p[i].exit_ns < m->p[victim].exit_ns))
				victim = i;
		if (victim == m->nr)
			victim = 0;
		proc_drop(m, victim);
		m->st.evicted++;
	}
}

static int mapping_add(struct mmap_events *m, struct proc *p, const struct mapping *src)
{
	struct mapping *d;
	char *name = strdup(src->name);

	if (!name || array__grow((void **)&p->m, &p->cap, p->nr + 1, sizeof(*p->m))) {
		free(name);
		return -ENOMEM;
	}
	d = &p->m[p->nr++];
	*d = *src;
	d->name = name;
	p->bytes += sizeof(*d) + strlen(name) + 1;
	m->bytes += sizeof(*d) + strlen(name) + 1;
	return 0;
}

static void mapping_del(struct mmap_events *m, struct proc *p, size_t i)
{
	size_t b = sizeof(p->m[i]) + strlen(p->m[i].name) + 1;

	free(p->m[i].name);
	p->m[i] = p->m[--p->nr];
	p->bytes -= b;
	m->bytes -= b;
}

/* [s, e) is mapped anew: what it overlaps goes, as the kernel splits and unmaps VMAs. */
static int trim(struct mmap_events *m, struct proc *p, uint64_t s, uint64_t e)
{
	for (size_t i = 0; i < p->nr; i++) {
		struct mapping *x = &p->m[i];

		if (x->end <= s || x->start >= e)
			continue;
		if (x->start >= s && x->end <= e) {
			mapping_del(m, p, i--);
		} else if (x->start < s && x->end > e) {
			struct mapping right = *x;

			right.pgoff += e - x->start;
			right.start = e;
			x->end = s;
			if (mapping_add(m, p, &right)) /* x may have moved */
				return -ENOMEM;
		} else if (x->start < s) {
			x->end = s;
		} else {
			x->pgoff += e - x->start;
			x->start = e;
		}
	}
	return 0;
}

static uint64_t record_time(const struct perf_event_header *h)
{
	uint64_t t;

	memcpy(&t, (const char *)h + h->size - 8, 8);
	return t;
}

/* Exited processes past their grace period go (at most once per PASS_NS of record time). */
static void expire(struct mmap_events *m, uint64_t now)
{
	if (now < m->last_pass + PASS_NS)
		return;
	m->last_pass = now;
	for (size_t i = 0; i < m->nr; i++)
		if (m->p[i].exit_ns && now > m->p[i].exit_ns + m->keep_ns)
			proc_drop(m, i--);
}

/*
 * A counter of mmap_events__changes moved: the armed descriptor written, once
 * (seq_cst: the armer's store of changes_armed, then its loads of the
 * counters, against the counter's increment, then this exchange: one of
 * the two sees the other's write)
 */
static void signal_changes(struct mmap_events *m)
{
	if (__atomic_exchange_n(&m->changes_armed, 0, __ATOMIC_SEQ_CST) && m->changes_fd >= 0)
		(void)eventfd_write(m->changes_fd, 1);
}

/* The same for process pid's counter: only where a watched process's is (any other's moves often) */
static void signal_changed(struct mmap_events *m, uint32_t pid)
{
	if (__atomic_load_n(&m->watched[pid % CHANGE_SLOTS], __ATOMIC_SEQ_CST))
		signal_changes(m);
}

/* Process pid's executable mappings may have changed (mmap_events__changes); under the lock */
static void changed(struct mmap_events *m, uint32_t pid)
{
	__atomic_add_fetch(&m->changes[pid % CHANGE_SLOTS], 1, __ATOMIC_SEQ_CST);
	signal_changed(m, pid);
}

static int on_mmap2(struct mmap_events *m, const struct perf_event_header *h)
{
	/* u32 pid, tid; u64 addr, len, pgoff; u32 maj, min; u64 ino, ino_generation; u32 prot, flags; char filename[] */
	const char *b = (const char *)(h + 1);
	size_t fixed = 8 + 24 + 24 + 8, name_max = h->size - sizeof(*h) - SAMPLE_ID_SIZE;
	struct mapping x = { 0 };
	uint32_t pid;
	uint64_t addr, len, gen;
	struct proc *p;
	int err;

	if (h->size < sizeof(*h) + fixed + 1 + SAMPLE_ID_SIZE ||
	    !memchr(b + fixed, '\0', name_max - fixed))
		return -EINVAL;
	memcpy(&pid, b, 4);
	memcpy(&addr, b + 8, 8);
	memcpy(&len, b + 16, 8);
	memcpy(&x.pgoff, b + 24, 8);
	memcpy(&x.maj, b + 32, 4);
	memcpy(&x.min, b + 36, 4);
	memcpy(&x.ino, b + 40, 8);
	memcpy(&gen, b + 48, 8);
	memcpy(&x.prot, b + 56, 4);
	memcpy(&x.flags, b + 60, 4);
	x.name = (char *)b + fixed;
	if (!len || addr + len < addr)
		return -EINVAL;
	/* PERF_RECORD_MISC_MMAP_BUILD_ID: a build-id instead of maj, min, ino (not asked for) */
	if (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID)
		x.maj = x.min = 0, x.ino = 0;
	/* perf's name of an anonymous mapping; the process's maps file (proc(5)) leaves it blank */
	if (!strcmp(x.name, "//anon"))
		x.name = "";
	x.start = addr;
	x.end = addr + len;
	if (x.prot & PROT_EXEC)
		changed(m, pid);
	p = newest(m, pid);
	if (!p && !(x.prot & PROT_EXEC))
		return 0;
	if (!p && !(p = proc_add(m, pid, 0)))
		return -ENOMEM;
	err = trim(m, p, x.start, x.end);
	if (!err && (x.prot & PROT_EXEC))
		err = mapping_add(m, p, &x);
	if (!err && (x.prot & PROT_EXEC) && (!m->exec_wanted || m->exec_wanted(m->exec_ctx, pid))) {
		if (m->nr_exec < MMAP_EVENTS_MAX_EXEC)
			m->exec[m->nr_exec] = (struct mmap_events_exec){ pid, x.start, x.end };
		else
			m->exec_dropped++;
		__atomic_store_n(&m->nr_exec,
				 m->nr_exec + (m->nr_exec < MMAP_EVENTS_MAX_EXEC), __ATOMIC_RELEASE);
		m->exec_added = true;
	}
	return err;
}

static int on_fork_exit(struct mmap_events *m, const struct perf_event_header *h)
{
	/* u32 pid, ppid; u32 tid, ptid; u64 time */
	const char *b = (const char *)(h + 1);
	uint32_t pid, ppid, tid;
	uint64_t time;
	struct proc *p, *parent;
	size_t pi;

	if (h->size < sizeof(*h) + 24 + SAMPLE_ID_SIZE)
		return -EINVAL;
	memcpy(&pid, b, 4);
	memcpy(&ppid, b + 4, 4);
	memcpy(&tid, b + 8, 4);
	memcpy(&time, b + 16, 8);
	if (h->type == PERF_RECORD_EXIT) {
		p = newest(m, pid);
		if (p && pid == tid)
			p->exit_ns = time ? time : 1;
		if (pid == tid) {
			changed(m, pid);
			__atomic_add_fetch(&m->exits, 1, __ATOMIC_RELEASE);
			if (m->nr_exited < MMAP_EVENTS_MAX_EXITS)
				m->exited[m->nr_exited++] = pid;
			else
				m->exited_overflow = true;
		}
		return 0;
	}
	if (pid == ppid) /* a new thread */
		return 0;
	parent = newest(m, ppid);
	pi = parent ? (size_t)(parent - m->p) : 0;
	p = proc_add(m, pid, m->tick_ns ? (uint32_t)(time / m->tick_ns) : 0);
	if (!p)
		return -ENOMEM;
	if (parent) {
		parent = &m->p[pi]; /* the array may have moved */
		for (size_t i = 0; i < parent->nr; i++)
			if (mapping_add(m, p, &parent->m[i]))
				return -ENOMEM;
	}
	return 0;
}

static int on_comm(struct mmap_events *m, const struct perf_event_header *h)
{
	/* u32 pid, tid; char comm[] */
	const char *b = (const char *)(h + 1);
	uint32_t pid;
	struct proc *p;

	if (!(h->misc & PERF_RECORD_MISC_COMM_EXEC))
		return 0;
	if (h->size < sizeof(*h) + 8 + 8 + SAMPLE_ID_SIZE)
		return -EINVAL;
	memcpy(&pid, b, 4);
	changed(m, pid);
	p = newest(m, pid);
	if (!p)
		return proc_add(m, pid, 0) ? 0 : -ENOMEM;
	proc_clear(m, p); /* a new address space */
	return 0;
}

static int handle(struct mmap_events *m, const struct perf_event_header *h, size_t size)
{
	int err = 0;

	if (size < sizeof(*h) || h->size < sizeof(*h) || h->size > size) {
		m->st.bad++;
		return -EINVAL;
	}
	m->st.records++;
	m->st.bytes += h->size;
	switch (h->type) {
	case PERF_RECORD_MMAP2:
		err = on_mmap2(m, h);
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		err = on_fork_exit(m, h);
		break;
	case PERF_RECORD_COMM:
		err = on_comm(m, h);
		break;
	case PERF_RECORD_LOST:
		if (h->size >= sizeof(*h) + 16) {
			uint64_t lost;

			memcpy(&lost, (const char *)(h + 1) + 8, 8);
			m->st.lost += lost;
		}
		/* whose records they were is not known: every process's may have changed */
		__atomic_add_fetch(&m->changes_all, 1, __ATOMIC_SEQ_CST);
		m->exited_overflow = true;
		signal_changes(m);
		break;
	default:
		break;
	}
	if (err == -EINVAL)
		m->st.bad++;
	if (!err && h->size >= sizeof(*h) + SAMPLE_ID_SIZE)
		expire(m, record_time(h));
	if (m->bytes > m->max_bytes)
		evict(m);
	return err;
}

/* The caller's poll told of executable mappings added (one eventfd write for all of them); under the lock */
static void signal_exec(struct mmap_events *m)
{
	if (m->exec_added && m->wake_fd >= 0)
		(void)eventfd_write(m->wake_fd, 1);
	m->exec_added = false;
}

int mmap_events__record(struct mmap_events *m, const void *rec, size_t size)
{
	int err;

	pthread_mutex_lock(&m->lock);
	err = handle(m, rec, size);
	signal_exec(m);
	pthread_mutex_unlock(&m->lock);
	return err;
}

int mmap_events__wake_fd(const struct mmap_events *m)
{
	return m->wake_fd;
}

int mmap_events__changes_fd(const struct mmap_events *m)
{
	return m->changes_fd;
}

void mmap_events__arm_changes(struct mmap_events *m)
{
	__atomic_store_n(&m->changes_armed, 1, __ATOMIC_SEQ_CST);
}

void mmap_events__watch_changes(struct mmap_events *m, uint32_t pid, bool on)
{
	if (on)
		__atomic_add_fetch(&m->watched[pid % CHANGE_SLOTS], 1, __ATOMIC_SEQ_CST);
	else
		__atomic_sub_fetch(&m->watched[pid % CHANGE_SLOTS], 1, __ATOMIC_SEQ_CST);
}

uint64_t mmap_events__exits(const struct mmap_events *m)
{
	return (uint64_t)__atomic_load_n(&m->changes_all, __ATOMIC_ACQUIRE) << 32 |
	       __atomic_load_n(&m->exits, __ATOMIC_ACQUIRE);
}

int mmap_events__take_exits(struct mmap_events *m, uint32_t *out)
{
	int n;

	pthread_mutex_lock(&m->lock);
	n = m->exited_overflow ? -E2BIG : (int)m->nr_exited;
	if (n > 0)
		memcpy(out, m->exited, (size_t)n * sizeof(*out));
	m->nr_exited = 0;
	m->exited_overflow = false;
	pthread_mutex_unlock(&m->lock);
	return n;
}

uint64_t mmap_events__changes(const struct mmap_events *m, uint32_t pid)
{
	return (uint64_t)__atomic_load_n(&m->changes_all, __ATOMIC_SEQ_CST) << 32 |
	       __atomic_load_n(&m->changes[pid % CHANGE_SLOTS], __ATOMIC_SEQ_CST);
}

void mmap_events__set_exec_filter(struct mmap_events *m, bool (*wanted)(void *ctx, uint32_t pid),
				  void *ctx)
{
	pthread_mutex_lock(&m->lock);
	m->exec_wanted = wanted;
	m->exec_ctx = ctx;
	pthread_mutex_unlock(&m->lock);
}

size_t mmap_events__take_exec(struct mmap_events *m, struct mmap_events_exec *out, size_t max,
			      uint64_t *dropped)
{
	eventfd_t drained;
	size_t n;

	if (!__atomic_load_n(&m->nr_exec, __ATOMIC_ACQUIRE))
		return 0;
	pthread_mutex_lock(&m->lock);
	/* under the lock: a mapping added after this is signalled again */
	if (m->wake_fd >= 0)
		eventfd_read(m->wake_fd, &drained);
	n = m->nr_exec < max ? m->nr_exec : max;
	memcpy(out, m->exec, n * sizeof(*out));
	memmove(m->exec, m->exec + n, (m->nr_exec - n) * sizeof(*out));
	__atomic_store_n(&m->nr_exec, m->nr_exec - n, __ATOMIC_RELEASE);
	if (dropped)
		*dropped = m->exec_dropped;
	pthread_mutex_unlock(&m->lock);
	return n;
}

static int by_start(const void *a, const void *b)
{
	const struct mapping *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static bool matches(const struct proc *p, uint32_t pid, uint32_t start)
{
	return p->pid == pid && (!start || !p->start || p->start == start || p->start == start + 1);
}

int mmap_events__maps(struct mmap_events *m, uint32_t pid, uint32_t start, char **text, size_t *len)
{
	struct mapping *sorted = NULL;
	struct proc *p = NULL;
	char *out = NULL;
	size_t n = 0, cap = 0;
	int err = 0;

	pthread_mutex_lock(&m->lock);
	for (size_t i = m->nr; i-- > 0 && !p;)
		if (matches(&m->p[i], pid, start))
			p = &m->p[i];
	if (!p || !p->nr) {
		err = -ENOENT;
		goto out;
	}
	sorted = malloc(p->nr * sizeof(*sorted));
	if (!sorted) {
		err = -ENOMEM;
		goto out;
	}
	memcpy(sorted, p->m, p->nr * sizeof(*sorted));
	qsort(sorted, p->nr, sizeof(*sorted), by_start);
	for (size_t i = 0; i < p->nr; i++) {
		const struct mapping *x = &sorted[i];
		size_t need = strlen(x->name) + 128;
		int w;

		if (n + need > cap) {
			char *bigger;

			cap = (n + need) * 2;
			bigger = realloc(out, cap);
			if (!bigger) {
				err = -ENOMEM;
				goto out;
			}
			out = bigger;
		}
		/* fs/proc/task_mmu.c show_vma_header_prefix(): "%08lx-%08lx %c%c%c%c %08llx %02x:%02x %lu " */
		w = snprintf(out + n, cap - n, "%08llx-%08llx %c%c%c%c %08llx %02x:%02x %llu%s%s\n",
			     (unsigned long long)x->start, (unsigned long long)x->end,
			     x->prot & PROT_READ ? 'r' : '-', x->prot & PROT_WRITE ? 'w' : '-',
			     x->prot & PROT_EXEC ? 'x' : '-', x->flags & MAP_SHARED ? 's' : 'p',
			     (unsigned long long)x->pgoff, x->maj, x->min,
			     (unsigned long long)x->ino, *x->name ? " " : "", x->name);
		n += (size_t)w;
	}
	m->st.rendered++;
	*text = out;
	*len = n;
	out = NULL;
out:
	pthread_mutex_unlock(&m->lock);
	free(sorted);
	free(out);
	return err;
}

void mmap_events__stats(struct mmap_events *m, struct mmap_events_stats *st)
{
	pthread_mutex_lock(&m->lock);
	*st = m->st;
	st->nr_procs = m->nr;
	st->held_bytes = m->bytes;
	pthread_mutex_unlock(&m->lock);
}

/* A record from one CPU's ring (copied by libbpf when it wrapped): queued for its round. */
static enum bpf_perf_event_ret on_event(void *ctx, int cpu, struct perf_event_header *h)
{
	struct mmap_events *m = ctx;
	struct queued *q;

	if (h->size < sizeof(*h))
		return LIBBPF_PERF_EVENT_CONT;
	if (m->batch_len + h->size > m->batch_cap) {
		size_t cap = (m->batch_len + h->size) * 2;
		char *b = realloc(m->batch, cap);

		if (!b)
			return LIBBPF_PERF_EVENT_CONT; /* counted as lost: nothing to do */
		m->batch = b;
		m->batch_cap = cap;
	}
	if (array__grow((void **)&m->q, &m->cap_q, m->nr_q + 1, sizeof(*m->q)))
		return LIBBPF_PERF_EVENT_CONT;
	q = &m->q[m->nr_q];
	q->time = h->size >= sizeof(*h) + SAMPLE_ID_SIZE ? record_time(h) : 0;
	q->seq = m->nr_q++;
	q->off = m->batch_len;
	q->size = h->size;
	memcpy(m->batch + m->batch_len, h, h->size);
	m->batch_len += h->size;
	return LIBBPF_PERF_EVENT_CONT;
}

static int by_time(const void *a, const void *b)
{
	const struct queued *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * The reader: each round drains every CPU's ring, then handles the round's
 * records in time order (a fork is written on the parent's CPU, the
 * child's exec and mappings maybe on another: in ring order a child's exec
 * could come before its fork). An executable mapping of a registered
 * process (V8's code space) is registered once read, its samples sent as
 * stack copies until then (50 ms: 20-70 copies of a 0.5 s node run), so a
 * record wakes the thread (a watermark of 1 byte); rounds are
 * ROUND_GAP_NS apart at least, so a burst of records costs at most one
 * wake-up a round, and an idle machine none. It was a 10 ms poll: 100
 * wake-ups a second whatever came, about 28 us of CPU each on this
 * project's VMs (docs/BENCHMARKS.md, issue 34, owncpu).
 */
static void *reader(void *arg)
{
	struct mmap_events *m = arg;

	for (;;) {
		struct epoll_event ev[2];
		struct pollfd stop = { .fd = m->stop_fd, .events = POLLIN };
		uint64_t start, now;
		bool stopping;

		epoll_wait(m->epfd, ev, 2, -1);
		stopping = __atomic_load_n(&m->stop, __ATOMIC_ACQUIRE);
		start = mono_ns();
		perf_buffer__consume(m->pb);
		if (m->nr_q) {
			qsort(m->q, m->nr_q, sizeof(*m->q), by_time);
			pthread_mutex_lock(&m->lock);
			for (size_t i = 0; i < m->nr_q; i++)
				handle(m, (const void *)(m->batch + m->q[i].off), m->q[i].size);
			signal_exec(m);
			pthread_mutex_unlock(&m->lock);
			m->nr_q = 0;
			m->batch_len = 0;
		}
		if (stopping)
			break;
		now = mono_ns();
		if (now - start < ROUND_GAP_NS)
			poll(&stop, 1, (int)((start + ROUND_GAP_NS - now + 999999) / 1000000));
	}
	return NULL;
}

int mmap_events__start(struct mmap_events *m, size_t pages_per_cpu)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_DUMMY,
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
		.mmap = 1,
		.mmap2 = 1,
		.comm = 1,
		.comm_exec = 1,
		.task = 1,
		.sample_id_all = 1,
		/* any record wakes the reader (its rounds are ROUND_GAP_NS apart at least) */
		.watermark = 1,
		.wakeup_watermark = 1,
		.use_clockid = m->tick_ns != 0,
		.clockid = CLOCK_BOOTTIME,
	};
	struct epoll_event ev = { .events = EPOLLIN };
	int ncpu = libbpf_num_possible_cpus(), err;
	sigset_t all, old;

	if (ncpu < 0)
		return ncpu;
	m->map_fd = bpf_map_create(BPF_MAP_TYPE_PERF_EVENT_ARRAY, "mmap_events", sizeof(int),
				   sizeof(int), (uint32_t)ncpu, NULL);
	if (m->map_fd < 0) {
		err = -errno;
		m->map_fd = -1;
		return err;
	}
	m->pb = perf_buffer__new_raw(m->map_fd, pages_per_cpu, &attr, on_event, m, NULL);
	if (!m->pb) {
		err = -errno;
		close(m->map_fd);
		m->map_fd = -1;
		return err;
	}
	m->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	m->epfd = epoll_create1(EPOLL_CLOEXEC);
	err = m->stop_fd < 0 || m->epfd < 0 ? -errno : 0;
	ev.data.fd = perf_buffer__epoll_fd(m->pb);
	if (!err && epoll_ctl(m->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev))
		err = -errno;
	ev.data.fd = m->stop_fd;
	if (!err && epoll_ctl(m->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev))
		err = -errno;
	if (!err) {
		/* signals are the main thread's: its poll wakes on them (as push.c's thread) */
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		err = -pthread_create(&m->thread, NULL, reader, m);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	if (err) {
		perf_buffer__free(m->pb);
		m->pb = NULL;
		close(m->map_fd);
		m->map_fd = -1;
		if (m->epfd >= 0)
			close(m->epfd);
		if (m->stop_fd >= 0)
			close(m->stop_fd);
		m->epfd = m->stop_fd = -1;
		return err;
	}
	pthread_setname_np(m->thread, "bpfprof-mmap"); /* bench/mmap_events.sh reads its CPU time */
	m->started = true;
	return 0;
}

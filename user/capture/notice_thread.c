// SPDX-License-Identifier: MIT
/*
 * The notices' thread (include/notice_thread.h). Why a thread: the samples'
 * reader reads the notices between its records, and a reader held back by
 * a backlog (both CPUs busy, BPF work in interrupt context taking most of
 * the machine) read them 1.3-1.5 s after they were sent, when a short
 * process had exited and deleted its jitdump. This thread waits on the
 * notices' ring alone (its own epoll: the ring's and a stop eventfd), at
 * SCHED_FIFO 1 where permitted, captures each noticed process with I/O of
 * its own (no state shared with the reader but the queue), and hands the
 * captures over through a mutex-protected list; the reader merges them
 * (maps_cache__put, symbolizer__adopt: no I/O but close) before the
 * records it reads next, so the maps cache and the symbolizer stay
 * single-threaded.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "bpfprof_abi.h"
#include "log.h"
#include "notice_thread.h"
#include "proc_file.h"
#include "procmaps.h"

/* A noticed process, rechecked after its notices (notice_thread.h); pid 0: a free slot */
struct watch {
	uint32_t pid, start;
	size_t len; /* its maps at the last capture: bytes and hash */
	uint64_t hash;
	uint64_t next_ns, step_ns; /* its next recheck (CLOCK_MONOTONIC), and the wait before it */
};

struct notice_thread {
	struct notice_thread_opts o;
	struct ring_buffer *rb;
	int epfd, stopfd;
	pthread_t thread;
	bool started, stopped;

	/* the queue: head/tail/nr under lock; pending written under it, read without */
	pthread_mutex_t lock;
	struct notice_item *head, *tail;
	size_t nr;
	int pending;

	/* the thread's own */
	struct watch watch[NOTICE_WATCH_MAX];
	int rt; /* at SCHED_FIFO (set by the thread; read atomically by stats) */
	bool demoted;
	uint64_t win_start_ns, win_cpu_ns;

	/* counters: written by the thread, read relaxed (notice_thread__stats) */
	uint64_t notices, captured, rechanged, gone, dropped, nr_demoted, max_delay_ns;
};

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* FNV-1a of the maps text */
static uint64_t hash_text(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ULL;
	return h;
}

void notice_item__free(struct notice_item *it)
{
	if (!it)
		return;
	sym_capture__release(&it->files);
	profile__free(it->p);
	free(it->maps);
	free(it);
}

static void set_policy(bool rt)
{
	struct sched_param sp = { .sched_priority = rt ? 1 : 0 };

	pthread_setschedparam(pthread_self(), rt ? SCHED_FIFO : SCHED_OTHER, &sp);
}

/* The real-time budget: past NOTICE_RT_BUDGET_MS of CPU in a window, normal priority until it ends */
static void budget(struct notice_thread *nt)
{
	uint64_t now, cpu;

	if (!nt->rt)
		return;
	now = clock_ns(CLOCK_MONOTONIC);
	cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	if (now - nt->win_start_ns >= NOTICE_RT_WINDOW_MS * 1000000ULL) {
		nt->win_start_ns = now;
		nt->win_cpu_ns = cpu;
		if (nt->demoted) {
			set_policy(true);
			nt->demoted = false;
		}
	} else if (!nt->demoted && cpu - nt->win_cpu_ns > NOTICE_RT_BUDGET_MS * 1000000ULL) {
		set_policy(false);
		nt->demoted = true;
		__atomic_add_fetch(&nt->nr_demoted, 1, __ATOMIC_RELAXED);
	}
}

/* The watch of (pid, start): its slot, a free one, or the one due last (evicted). */
static struct watch *watch_of(struct notice_thread *nt, uint32_t pid, uint32_t start)
{
	struct watch *w = NULL;

	for (size_t i = 0; i < NOTICE_WATCH_MAX; i++) {
		struct watch *x = &nt->watch[i];

		if (x->pid == pid && x->start == start)
			return x;
		if (!w || (w->pid && (!x->pid || x->next_ns > w->next_ns)))
			w = x;
	}
	*w = (struct watch){ .pid = pid, .start = start };
	return w;
}

enum { CAPTURED, UNCHANGED, GONE };

/*
 * Capture process w (its maps; its files unless its maps are those of its
 * last capture, and then only when a notice asks: nr_seen, else a recheck
 * of an unchanged process does nothing more). Returns CAPTURED (queued, or
 * dropped: queue full), UNCHANGED, GONE, or -ENOMEM.
 */
static int capture(struct notice_thread *nt, struct watch *w, uint32_t nr_seen, uint64_t sent_ns)
{
	struct notice_item *it = calloc(1, sizeof(*it));
	bool created, same;
	uint64_t hash;
	int err, proc;

	if (!it)
		return -ENOMEM;
	it->pid = w->pid;
	it->start = w->start;
	err = procmaps__read(nt->o.proc_dir, w->pid, &it->maps, &it->maps_len);
	hash = err ? 0 : hash_text(it->maps, it->maps_len);
	same = !err && w->len == it->maps_len && w->hash == hash;
	/* another process's now; or a zombie's (no maps left) */
	if (!err && !same && (!it->maps_len || !proc_ident__same(nt->o.proc_dir, w->pid, w->start)))
		err = -ESRCH;
	if (err || (same && !nr_seen)) {
		if (err)
			pr_debug("%s %u of pid %u: %s\n", nr_seen ? "notice" : "recheck", nr_seen,
				 w->pid, strerror(-err));
		notice_item__free(it);
		return err == -ENOMEM ? err : err ? GONE : UNCHANGED;
	}
	it->p = profile__new();
	proc = it->p ? profile__process_start(it->p, w->pid, w->start, &created) : -ENOMEM;
	err = proc < 0 ? proc : procmaps__merge(it->p, (uint32_t)proc, it->maps, it->maps_len,
						"notice");
	it->proc = (uint32_t)proc;
	/* the same maps as its last capture: those files are queued or held already */
	if (err >= 0)
		err = symbolizer__capture(nt->o.proc_dir, nt->o.jit_max_size, it->p, it->proc,
					  same ? 0 : NOTICE_MAX_FILES, &it->files);
	if (err < 0) {
		notice_item__free(it);
		return err;
	}
	if (log_verbosity >= LOG_DEBUG) {
		size_t files = 0;

		for (size_t i = 0; i < it->files.nr_fds; i++)
			files += it->files.fds[i] >= 0;
		pr_debug("%s %u of pid %u: read %.1f ms after %s: %zu mappings, %zu files held%s, "
			 "jitdump %s, perf map %s\n",
			 nr_seen ? "notice" : "recheck", nr_seen, w->pid,
			 (double)(clock_ns(CLOCK_MONOTONIC) - sent_ns) / 1e6,
			 nr_seen ? "it was sent" : "it was due", it->p->procs[it->proc].nr_mappings,
			 files, same ? " (maps unchanged)" : "",
			 it->files.jit.fd[0] >= 0 ? "held" : "none",
			 it->files.jit.fd[1] >= 0 ? "held" : "none");
	}
	pthread_mutex_lock(&nt->lock);
	if (nt->nr >= NOTICE_MAX_QUEUED) {
		pthread_mutex_unlock(&nt->lock);
		__atomic_add_fetch(&nt->dropped, 1, __ATOMIC_RELAXED);
		notice_item__free(it);
		return CAPTURED;
	}
	if (nt->tail)
		nt->tail->next = it;
	else
		nt->head = it;
	nt->tail = it;
	nt->nr++;
	__atomic_store_n(&nt->pending, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&nt->lock);
	w->len = it->maps_len;
	w->hash = hash;
	__atomic_add_fetch(&nt->captured, 1, __ATOMIC_RELAXED);
	return CAPTURED;
}

/* After a capture or recheck of w: its next recheck, or none (the slot freed) */
static void schedule(struct watch *w, int ret, bool notice, uint64_t now)
{
	if (ret == GONE || ret < 0) {
		w->pid = 0;
		return;
	}
	if (notice)
		w->step_ns = NOTICE_RECHECK_FIRST_MS * 1000000ULL;
	else if ((w->step_ns *= 2) > NOTICE_RECHECK_LAST_MS * 1000000ULL) {
		w->pid = 0; /* watched long enough: later changes are the reader's to find */
		return;
	}
	w->next_ns = now + w->step_ns;
}

static int on_ring(void *ctx, void *data, size_t size)
{
	struct notice_thread *nt = ctx;
	const struct bpfprof_notice *n = data;
	uint64_t now = clock_ns(CLOCK_MONOTONIC), delay;
	struct watch *w;
	int ret;

	if (size < sizeof(*n) || n->type != BPFPROF_REC_NOTICE || !n->tgid)
		return 0;
	__atomic_add_fetch(&nt->notices, 1, __ATOMIC_RELAXED);
	/* bpf_ktime_get_ns is CLOCK_MONOTONIC */
	delay = now > n->time_ns ? now - n->time_ns : 0;
	if (delay > __atomic_load_n(&nt->max_delay_ns, __ATOMIC_RELAXED))
		__atomic_store_n(&nt->max_delay_ns, delay, __ATOMIC_RELAXED);
	budget(nt); /* a window ended while it waited: back to real time */
	w = watch_of(nt, n->tgid, n->start);
	ret = capture(nt, w, n->nr_seen ?: 1, n->time_ns);
	if (ret == GONE)
		__atomic_add_fetch(&nt->gone, 1, __ATOMIC_RELAXED);
	/* out of memory: this notice is lost, the next ones are read */
	if (ret < 0)
		pr_debug("notice of pid %u: %s\n", n->tgid, strerror(-ret));
	schedule(w, ret, true, clock_ns(CLOCK_MONOTONIC));
	budget(nt);
	return 0;
}

/* The rechecks due; returns the wait until the next one, ms (-1: none) */
static int rechecks(struct notice_thread *nt)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC), next = UINT64_MAX;

	for (size_t i = 0; i < NOTICE_WATCH_MAX; i++) {
		struct watch *w = &nt->watch[i];

		if (!w->pid)
			continue;
		if (w->next_ns <= now) {
			int ret;

			budget(nt);
			ret = capture(nt, w, 0, w->next_ns);
			if (ret != UNCHANGED)
				__atomic_add_fetch(&nt->rechanged, ret == CAPTURED, __ATOMIC_RELAXED);
			now = clock_ns(CLOCK_MONOTONIC);
			schedule(w, ret, false, now);
		}
		if (w->pid && w->next_ns < next)
			next = w->next_ns;
	}
	budget(nt);
	if (next == UINT64_MAX)
		return -1;
	return next <= now ? 0 : (int)((next - now + 999999) / 1000000);
}

static void *run(void *arg)
{
	struct notice_thread *nt = arg;

	/* the thread's own policy, set by itself: nt->rt is its alone (stats read it atomically) */
	if (nt->o.realtime) {
		struct sched_param sp = { .sched_priority = 1 };
		int e = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);

		if (e)
			pr_info("notices' thread at normal priority: SCHED_FIFO refused (%s%s)\n",
				strerror(e), e == EPERM ? ": needs CAP_SYS_NICE" : "");
		__atomic_store_n(&nt->rt, !e, __ATOMIC_RELAXED);
		nt->win_start_ns = clock_ns(CLOCK_MONOTONIC);
		nt->win_cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	}
	for (;;) {
		struct epoll_event ev[2];
		int n = epoll_wait(nt->epfd, ev, 2, rechecks(nt));
		bool stop = false;

		if (n < 0 && errno != EINTR)
			break;
		for (int i = 0; i < n; i++)
			if (ev[i].data.fd == nt->stopfd)
				stop = true;
		/* what is queued, whatever woke us: also the last ones at the stop */
		ring_buffer__consume(nt->rb);
		if (stop)
			break;
	}
	return NULL;
}

int notice_thread__start(const struct notice_thread_opts *o, struct notice_thread **out)
{
	struct notice_thread *nt = calloc(1, sizeof(*nt));
	struct epoll_event ev = { .events = EPOLLIN };
	sigset_t all, old;
	int err;

	if (!nt)
		return -ENOMEM;
	nt->o = *o;
	nt->epfd = nt->stopfd = -1;
	pthread_mutex_init(&nt->lock, NULL);
	nt->rb = ring_buffer__new(o->map_fd, on_ring, nt, NULL);
	if (!nt->rb) {
		err = -errno;
		goto out_free;
	}
	nt->epfd = epoll_create1(EPOLL_CLOEXEC);
	nt->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (nt->epfd < 0 || nt->stopfd < 0) {
		err = -errno;
		goto out_free;
	}
	ev.data.fd = ring_buffer__epoll_fd(nt->rb);
	if (epoll_ctl(nt->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev)) {
		err = -errno;
		goto out_free;
	}
	ev.data.fd = nt->stopfd;
	if (epoll_ctl(nt->epfd, EPOLL_CTL_ADD, nt->stopfd, &ev)) {
		err = -errno;
		goto out_free;
	}
	/* signals stay the main thread's: its poll is what they interrupt */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&nt->thread, NULL, run, nt);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		goto out_free;
	nt->started = true;
	*out = nt;
	return 0;

out_free:
	notice_thread__free(nt);
	return err;
}

struct notice_item *notice_thread__take(struct notice_thread *nt)
{
	struct notice_item *head;

	if (!nt || !__atomic_load_n(&nt->pending, __ATOMIC_ACQUIRE))
		return NULL;
	pthread_mutex_lock(&nt->lock);
	head = nt->head;
	nt->head = nt->tail = NULL;
	nt->nr = 0;
	__atomic_store_n(&nt->pending, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&nt->lock);
	return head;
}

void notice_thread__stop(struct notice_thread *nt)
{
	uint64_t one = 1;

	if (!nt || !nt->started || nt->stopped)
		return;
	if (write(nt->stopfd, &one, sizeof(one)) != sizeof(one))
		pr_warn("notices' thread: cannot stop it: %s\n", strerror(errno));
	pthread_join(nt->thread, NULL);
	nt->stopped = true;
}

void notice_thread__free(struct notice_thread *nt)
{
	struct notice_item *it, *next;

	if (!nt)
		return;
	notice_thread__stop(nt);
	for (it = nt->head; it; it = next) {
		next = it->next;
		notice_item__free(it);
	}
	ring_buffer__free(nt->rb);
	if (nt->epfd >= 0)
		close(nt->epfd);
	if (nt->stopfd >= 0)
		close(nt->stopfd);
	pthread_mutex_destroy(&nt->lock);
	free(nt);
}

void notice_thread__stats(struct notice_thread *nt, struct notice_thread_stats *st)
{
	st->notices = __atomic_load_n(&nt->notices, __ATOMIC_RELAXED);
	st->captured = __atomic_load_n(&nt->captured, __ATOMIC_RELAXED);
	st->rechanged = __atomic_load_n(&nt->rechanged, __ATOMIC_RELAXED);
	st->gone = __atomic_load_n(&nt->gone, __ATOMIC_RELAXED);
	st->dropped = __atomic_load_n(&nt->dropped, __ATOMIC_RELAXED);
	st->demoted = __atomic_load_n(&nt->nr_demoted, __ATOMIC_RELAXED);
	st->max_delay_ns = __atomic_load_n(&nt->max_delay_ns, __ATOMIC_RELAXED);
	st->realtime = __atomic_load_n(&nt->rt, __ATOMIC_RELAXED);
}

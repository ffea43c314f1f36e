// SPDX-License-Identifier: MIT
/*
 * The notices' thread (include/notice_thread.h). Why a thread: the samples'
 * reader reads the notices between its records, and a reader held back by
 * a backlog (both CPUs busy, BPF work in interrupt context taking most of
 * the machine) read them 1.3-1.5 s after they were sent, when a short
 * process had exited and deleted its jitdump. This thread waits on the
 * notices' ring alone (its own epoll: the ring's and a stop eventfd), at
 * SCHED_FIFO 1 where permitted, captures each noticed process with I/O of
 * its own, and hands the captures to the reader through a lock-free list;
 * the reader merges them (proc_table__take_captured: maps_cache__put,
 * symbolizer__adopt: no I/O but close) before the records it reads next, so
 * the maps cache and the symbolizer stay single-threaded.
 *
 * It shares no lock with the reader: bpfprof runs one malloc arena
 * (main.c), whose lock the reader holds often; a reader descheduled (or
 * stopped) inside malloc held this thread back for as long (seen: notices
 * read 0.42 s late with the reader ptrace-stopped). So nothing here calls
 * malloc or stdio once started: the maps are read into a buffer of the
 * thread's own (mmap), each capture is a block of a pool (mmap'd; given
 * back by notice_item__free), the queue is a list pushed with compare-and-swap
 * and taken whole with an exchange, and the /proc readers it calls use
 * read(2) into the stack (proc_file.h, procmaps.h's parser, sym_jit.h's
 * capture). Only its start's -v line, -vv's debug lines and a malformed
 * maps line's warning go through stdio.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "bpfprof_abi.h"
#include "log.h"
#include "lib_io.h"
#include "mmap_events.h"
#include "notice_thread.h"
#include "proc_file.h"
#include "proc_table.h"

/* struct jit_capture's kinds are the jitdump, then the perf map (sym_jit.h) */
#define PERF_MAP 1

/* A noticed process, rechecked after its notices (notice_thread.h); pid 0: a free slot */
struct watch {
	uint32_t pid, start;
	size_t len; /* its maps at the last capture: bytes and hash */
	uint64_t hash;
	uint64_t next_ns, step_ns; /* its next recheck (CLOCK_MONOTONIC), and the wait before it */
	uint64_t changes; /* mmap_events__changes before its last maps read */
	bool changes_known;
	/*
	 * From its last capture: its pid in its own namespace (ident_known),
	 * for its perf map's name; and whether that perf map is settled
	 * (held, or refused): a later notice need not look for it again
	 */
	uint32_t nspid;
	bool ident_known, perf_map_settled;
	bool python; /* a python3.N mapped at its last capture: an unchanged notice still goes to the reader */
	/* its changes write the mmap events' descriptor (watch_changes): it may sleep without a timer */
	bool changes_watched;
};

struct notice_thread {
	struct notice_thread_opts o;
	struct ring_buffer *rb;
	int epfd, stopfd;
	int wakefd; /* an eventfd signalled at each capture queued, for the reader's poll; -1: none */
	struct mmap_events *mmaps; /* notice_thread__use_mmap_events' (atomic); NULL: none */
	int changes_fd; /* its mmap_events__changes_fd, in epfd once set (atomic); -1: none */
	pthread_t thread;
	bool started, stopped;

	/* the queue: newest first, pushed by the thread (CAS), taken whole by the reader (exchange) */
	struct notice_item *head;
	uint64_t nr_queued; /* pushed and not yet taken (atomic) */

	/*
	 * Blocks of NOTICE_BLOCK_BYTES the reader gave back (notice_item__free:
	 * pushed with CAS, nr_free of them), and the thread's own list of them
	 * (spare: taken whole with an exchange, so no ABA)
	 */
	struct notice_item *free, *spare;
	uint64_t nr_free;

	/* the thread's buffer for a maps text: mmap'd, grown by mremap up to NOTICE_MAPS_MAX */
	char *buf;
	size_t buf_size;

	/* the thread's own */
	struct watch watch[NOTICE_WATCH_MAX];
	int rt; /* at SCHED_FIFO (set by the thread; read atomically by stats) */
	bool demoted;
	uint64_t win_start_ns, win_cpu_ns;

	/* counters: written by the thread, read relaxed (notice_thread__stats) */
	uint64_t notices, captured, rechanged, spared, notices_spared, gone, dropped, nr_demoted,
		max_delay_ns, timer_spared;
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
	struct notice_thread *nt;

	if (!it)
		return;
	sym_capture__release(&it->files);
	nt = it->pool;
	/* a pool block back to the thread (lock-free push; it takes the whole list) */
	if (nt && it->bytes == NOTICE_BLOCK_BYTES &&
	    __atomic_add_fetch(&nt->nr_free, 1, __ATOMIC_RELAXED) <= NOTICE_POOL_MAX) {
		it->next = __atomic_load_n(&nt->free, __ATOMIC_RELAXED);
		while (!__atomic_compare_exchange_n(&nt->free, &it->next, it, true,
						    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
			;
		return;
	}
	if (nt && it->bytes == NOTICE_BLOCK_BYTES)
		__atomic_sub_fetch(&nt->nr_free, 1, __ATOMIC_RELAXED);
	munmap(it, it->bytes);
}

/*
 * A block for a capture of len bytes of maps: from the pool (blocks the
 * reader gave back: their pages are there, no fault), or mmap'd. NULL when
 * none can be had.
 */
static struct notice_item *get_block(struct notice_thread *nt, size_t len)
{
	size_t bytes = sizeof(struct notice_item) + len + 1;
	struct notice_item *it;

	if (bytes <= NOTICE_BLOCK_BYTES) {
		if (!nt->spare && __atomic_load_n(&nt->free, __ATOMIC_RELAXED))
			nt->spare = __atomic_exchange_n(&nt->free, NULL, __ATOMIC_ACQUIRE);
		if (nt->spare) {
			it = nt->spare;
			nt->spare = it->next;
			__atomic_sub_fetch(&nt->nr_free, 1, __ATOMIC_RELAXED);
			return it;
		}
		bytes = NOTICE_BLOCK_BYTES;
	}
	it = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (it == MAP_FAILED)
		return NULL;
	it->bytes = bytes;
	it->pool = nt;
	return it;
}

/*
 * The maps of pid into nt->buf (no malloc; opened by the process table,
 * proc_table.h): 0 and *len, or -errno.
 * A text past NOTICE_MAPS_MAX is cut there (whole lines: the parser skips
 * a cut one).
 */
static int read_maps(struct notice_thread *nt, uint32_t pid, size_t *len)
{
	size_t n = 0;
	int fd = proc_table__open_maps(nt->o.proc_dir, pid);

	if (fd < 0)
		return fd;
	for (;;) {
		size_t got;
		int err;

		if (nt->buf_size - n < 4096) {
			void *nb = nt->buf_size >= NOTICE_MAPS_MAX ?
					   MAP_FAILED :
					   mremap(nt->buf, nt->buf_size, nt->buf_size * 2,
						  MREMAP_MAYMOVE);

			if (nb == MAP_FAILED)
				break;
			nt->buf = nb;
			nt->buf_size *= 2;
		}
		err = io__read_upto(fd, nt->buf + n, nt->buf_size - n, &got);
		n += got;
		if (err) {
			close(fd);
			return err;
		}
		if (n < nt->buf_size)
			break; /* the end of the file */
	}
	close(fd);
	*len = n;
	return 0;
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

/* w's process's changes wake the thread (on), or no longer (!on), where the mmap events run */
static void watch_changes(struct notice_thread *nt, struct watch *w, bool on)
{
	struct mmap_events *mm = __atomic_load_n(&nt->mmaps, __ATOMIC_ACQUIRE);

	if (!mm || w->changes_watched == on)
		return;
	mmap_events__watch_changes(mm, w->pid, on);
	w->changes_watched = on;
}

/* w's slot freed */
static void unwatch(struct notice_thread *nt, struct watch *w)
{
	watch_changes(nt, w, false);
	w->pid = 0;
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
	if (w->pid)
		unwatch(nt, w);
	*w = (struct watch){ .pid = pid, .start = start };
	watch_changes(nt, w, true);
	return w;
}

enum { CAPTURED, UNCHANGED, GONE };

/*
 * Whether w's perf map (/tmp/perf-NSPID.map in its root: sym_jit.h) may
 * have appeared since its last capture: not settled then, and there now,
 * or its identity unknown. One openat2 where none is (the usual case).
 */
static bool perf_map_new(const struct notice_thread *nt, const struct watch *w)
{
	char path[48];
	int fd;

	if (w->perf_map_settled)
		return false;
	if (!w->ident_known)
		return true;
	snprintf(path, sizeof(path), "/tmp/perf-%u.map", w->nspid);
	fd = proc_file__open(nt->o.proc_dir, w->pid, path, NULL, UINT64_MAX);
	if (fd >= 0)
		close(fd);
	return fd != -ENOENT;
}

/* Push it on the queue (lock-free); false when NOTICE_MAX_QUEUED wait */
static bool push(struct notice_thread *nt, struct notice_item *it)
{
	if (__atomic_add_fetch(&nt->nr_queued, 1, __ATOMIC_RELAXED) > NOTICE_MAX_QUEUED) {
		__atomic_sub_fetch(&nt->nr_queued, 1, __ATOMIC_RELAXED);
		return false;
	}
	it->next = __atomic_load_n(&nt->head, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(&nt->head, &it->next, it, true, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED))
		;
	/* the reader merges it now, not at its next batch of records (up to 100 ms later) */
	if (nt->wakefd >= 0)
		(void)eventfd_write(nt->wakefd, 1);
	return true;
}

/*
 * A later notice of w whose maps are those of its last capture: an item
 * with no text and nothing held (notice_item.unchanged), for what the
 * reader does at each notice while the process lives (an interpreter's
 * layout retried). CAPTURED, or -ENOMEM.
 */
static int push_unchanged(struct notice_thread *nt, const struct watch *w)
{
	struct notice_item *it = get_block(nt, 0);

	if (!it)
		return -ENOMEM;
	it->next = NULL;
	it->pid = w->pid;
	it->start = w->start;
	it->maps = NULL;
	it->maps_len = 0;
	it->unchanged = true;
	/* field by field, as jit_capture__read: the paths' 8 KiB are not touched */
	it->files.nr_files = 0;
	it->files.jit.gone = it->files.jit.ident_read = it->files.jit.reused = false;
	for (int k = 0; k < JIT_CAPTURE_KINDS; k++) {
		it->files.jit.path[k][0] = '\0';
		it->files.jit.fd[k] = -ENOENT;
		it->files.jit.src_gone[k] = false;
	}
	__atomic_add_fetch(&nt->notices_spared, 1, __ATOMIC_RELAXED);
	if (!push(nt, it)) {
		__atomic_add_fetch(&nt->dropped, 1, __ATOMIC_RELAXED);
		notice_item__free(it);
	}
	return CAPTURED;
}

/*
 * Capture process w (its maps; its files unless its maps are those of its
 * last capture, and then only when a notice asks: nr_seen, else a recheck
 * of an unchanged process does nothing more). A later notice (nr_seen > 1)
 * with no mapping event since the last read reads nothing but looks for a
 * perf map (push_unchanged). Returns CAPTURED (queued, or dropped: queue
 * full), UNCHANGED, GONE, or -ENOMEM. No malloc.
 */
static int capture(struct notice_thread *nt, struct watch *w, uint32_t nr_seen, uint64_t sent_ns)
{
	struct mmap_events *mm = __atomic_load_n(&nt->mmaps, __ATOMIC_ACQUIRE);
	struct notice_item *it;
	size_t len = 0;
	uint64_t hash, changes = mm ? mmap_events__changes(mm, w->pid) : 0;
	bool same;
	int err;

	/* a recheck with no mapping event since the last read: nothing to find */
	if (!nr_seen && mm && w->changes_known && changes == w->changes) {
		__atomic_add_fetch(&nt->spared, 1, __ATOMIC_RELAXED);
		return UNCHANGED;
	}
	/*
	 * BPF's notices at 10, 30 and 70 ms, the same: the maps, the files
	 * and the jitdump (an executable mapping) are the last capture's; a
	 * perf map is no mapping, so it is looked for
	 */
	if (nr_seen > 1 && mm && w->changes_known && changes == w->changes &&
	    !perf_map_new(nt, w)) {
		/* what the reader does with it: Python's layout retried (proc_table.c) */
		if (w->python)
			return push_unchanged(nt, w);
		__atomic_add_fetch(&nt->notices_spared, 1, __ATOMIC_RELAXED);
		return UNCHANGED;
	}
	/* read before the maps: an event handled after the read moves it (read again), none is missed */
	w->changes = changes;
	w->changes_known = mm != NULL;
	err = read_maps(nt, w->pid, &len);
	hash = err ? 0 : hash_text(nt->buf, len);
	same = !err && w->len == len && w->hash == hash;
	/*
	 * a zombie's (no maps left); another process's now is found by the
	 * capture's one read of its identity, after its files' opens (below)
	 */
	if (!err && !same && !len)
		err = -ESRCH;
	if (err) {
		/* strerror only at -vv: it may take the locale's lock and malloc */
		if (log_verbosity >= LOG_DEBUG)
			pr_debug("%s %u of pid %u: %s\n", nr_seen ? "notice" : "recheck", nr_seen,
				 w->pid, strerror(-err));
		return GONE;
	}
	if (same && !nr_seen)
		return UNCHANGED;
	/* the item and a copy of the text in one block */
	it = get_block(nt, len);
	if (!it)
		return -ENOMEM;
	it->next = NULL;
	it->pid = w->pid;
	it->start = w->start;
	it->maps = (char *)(it + 1);
	it->maps_len = len;
	it->unchanged = false;
	it->changes = w->changes;
	it->changes_known = w->changes_known;
	memcpy(it->maps, nt->buf, len);
	/* the same maps as its last capture: those files are queued or held already */
	symbolizer__capture(nt->o.proc_dir, nt->o.jit_max_size, w->pid, w->start, it->maps, len,
			    same ? 0 : NOTICE_MAX_FILES, &it->files);
	/* its pid another process's now: not its maps, nor its files */
	if (!same && it->files.jit.reused) {
		if (log_verbosity >= LOG_DEBUG)
			pr_debug("%s %u of pid %u: another process's now\n",
				 nr_seen ? "notice" : "recheck", nr_seen, w->pid);
		notice_item__free(it);
		return GONE;
	}
	/* before the push: the item is the reader's after it */
	w->python = memmem(it->maps, len, "python3.", 8) != NULL;
	w->ident_known = it->files.jit.ident_read;
	w->nspid = it->files.jit.id.nspid;
	w->perf_map_settled =
		it->files.jit.fd[PERF_MAP] >= 0 ||
		(it->files.jit.fd[PERF_MAP] != -ENOENT && it->files.jit.fd[PERF_MAP] != -ESRCH);
	if (log_verbosity >= LOG_DEBUG)
		pr_debug(
			"%s %u of pid %u: read %.1f ms after %s: %zu bytes of maps, %zu files held%s, "
			"jitdump %s, perf map %s\n",
			nr_seen ? "notice" : "recheck", nr_seen, w->pid,
			(double)(clock_ns(CLOCK_MONOTONIC) - sent_ns) / 1e6,
			nr_seen ? "it was sent" : "it was due", len, it->files.nr_files,
			same ? " (maps unchanged)" : "", it->files.jit.fd[0] >= 0 ? "held" : "none",
			it->files.jit.fd[1] >= 0 ? "held" : "none");
	if (!push(nt, it)) {
		__atomic_add_fetch(&nt->dropped, 1, __ATOMIC_RELAXED);
		notice_item__free(it);
		/* never delivered: the next notice or recheck reads again */
		w->changes_known = false;
		return CAPTURED;
	}
	w->len = len;
	w->hash = hash;
	__atomic_add_fetch(&nt->captured, 1, __ATOMIC_RELAXED);
	return CAPTURED;
}

/* After a capture or recheck of w: its next recheck, or none (the slot freed) */
static void schedule(struct notice_thread *nt, struct watch *w, int ret, bool notice, uint64_t now)
{
	if (ret == GONE || ret < 0) {
		unwatch(nt, w);
		return;
	}
	if (notice)
		w->step_ns = NOTICE_RECHECK_FIRST_MS * 1000000ULL;
	else if ((w->step_ns *= 2) > NOTICE_RECHECK_LAST_MS * 1000000ULL) {
		unwatch(nt, w); /* watched long enough: later changes are the reader's to find */
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
	if (ret < 0 && log_verbosity >= LOG_DEBUG)
		pr_debug("notice of pid %u: %s\n", n->tgid, strerror(-ret));
	schedule(nt, w, ret, true, clock_ns(CLOCK_MONOTONIC));
	budget(nt);
	return 0;
}

/*
 * The rechecks due, and those due within a quarter of their wait (made
 * early: a wake-up serves the watches whose rechecks fall close, not one
 * each); returns the wait until the next one, ms (-1: none)
 */
static int rechecks(struct notice_thread *nt)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC), next = UINT64_MAX;

	for (size_t i = 0; i < NOTICE_WATCH_MAX; i++) {
		struct watch *w = &nt->watch[i];

		if (!w->pid)
			continue;
		if (w->next_ns <= now + w->step_ns / 4) {
			int ret;

			budget(nt);
			/* "due" for -vv's delay: now, when made early */
			ret = capture(nt, w, 0, w->next_ns < now ? w->next_ns : now);
			if (ret != UNCHANGED)
				__atomic_add_fetch(&nt->rechanged, ret == CAPTURED,
						   __ATOMIC_RELAXED);
			now = clock_ns(CLOCK_MONOTONIC);
			schedule(nt, w, ret, false, now);
		}
		if (w->pid && w->next_ns < next)
			next = w->next_ns;
	}
	budget(nt);
	if (next == UINT64_MAX)
		return -1;
	return next <= now ? 0 : (int)((next - now + 999999) / 1000000);
}

/*
 * Whether every watched process's recheck would read nothing: the mmap
 * events' count of its changes stands where its last read left it. Then the
 * thread needs no timer: looked at once, then again after arming mm's
 * descriptor, which the first change after the arming writes (one after
 * the second look). A watch made before the mmap events came is watched
 * from here.
 */
static bool rechecks_idle(struct notice_thread *nt, struct mmap_events *mm)
{
	for (int pass = 0; pass < 2; pass++) {
		if (pass)
			mmap_events__arm_changes(mm);
		for (size_t i = 0; i < NOTICE_WATCH_MAX; i++) {
			struct watch *w = &nt->watch[i];

			if (!w->pid)
				continue;
			watch_changes(nt, w, true);
			if (!w->changes_known || mmap_events__changes(mm, w->pid) != w->changes)
				return false;
		}
	}
	return true;
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
				strerror(e),
				e == EPERM ? ": needs CAP_SYS_NICE or an RLIMIT_RTPRIO of 1" : "");
		__atomic_store_n(&nt->rt, !e, __ATOMIC_RELAXED);
		nt->win_start_ns = clock_ns(CLOCK_MONOTONIC);
		nt->win_cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	}
	for (;;) {
		struct epoll_event ev[3];
		struct mmap_events *mm = __atomic_load_n(&nt->mmaps, __ATOMIC_ACQUIRE);
		int changes_fd = __atomic_load_n(&nt->changes_fd, __ATOMIC_ACQUIRE);
		int wait_ms = rechecks(nt), n;
		bool stop = false;

		/* no recheck would read anything: sleep until a change, a notice or the stop */
		if (wait_ms > 0 && mm && changes_fd >= 0 && rechecks_idle(nt, mm)) {
			wait_ms = -1;
			__atomic_add_fetch(&nt->timer_spared, 1, __ATOMIC_RELAXED);
		}
		n = epoll_wait(nt->epfd, ev, 3, wait_ms);
		if (n < 0 && errno != EINTR)
			break;
		for (int i = 0; i < n; i++) {
			eventfd_t drained;

			if (ev[i].data.fd == nt->stopfd)
				stop = true;
			else if (ev[i].data.fd == changes_fd)
				(void)eventfd_read(changes_fd, &drained);
		}
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
	nt->epfd = nt->stopfd = nt->wakefd = nt->changes_fd = -1;
	nt->buf_size = NOTICE_MAPS_FIRST;
	nt->buf = mmap(NULL, nt->buf_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		       0);
	if (nt->buf == MAP_FAILED) {
		nt->buf = NULL;
		err = -ENOMEM;
		goto out_free;
	}
	nt->rb = ring_buffer__new(o->map_fd, on_ring, nt, NULL);
	if (!nt->rb) {
		err = -errno;
		goto out_free;
	}
	nt->epfd = epoll_create1(EPOLL_CLOEXEC);
	nt->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	nt->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (nt->epfd < 0 || nt->stopfd < 0 || nt->wakefd < 0) {
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
	pthread_setname_np(nt->thread,
			   "bpfprof-notice"); /* its CPU time: /proc/PID/task/TID/stat */
	*out = nt;
	return 0;

out_free:
	notice_thread__free(nt);
	return err;
}

struct notice_item *notice_thread__take(struct notice_thread *nt)
{
	struct notice_item *list, *prev = NULL, *next;
	uint64_t n = 0;

	if (!nt || !__atomic_load_n(&nt->head, __ATOMIC_RELAXED))
		return NULL;
	list = __atomic_exchange_n(&nt->head, NULL, __ATOMIC_ACQUIRE);
	/* newest first as pushed: oldest first for the caller */
	for (; list; list = next, n++) {
		next = list->next;
		list->next = prev;
		prev = list;
	}
	__atomic_sub_fetch(&nt->nr_queued, n, __ATOMIC_RELAXED);
	return prev;
}

int notice_thread__wake_fd(const struct notice_thread *nt)
{
	return nt ? nt->wakefd : -1;
}

void notice_thread__drain_wake(struct notice_thread *nt)
{
	eventfd_t n;

	if (nt && nt->wakefd >= 0)
		(void)eventfd_read(nt->wakefd, &n);
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
	for (it = notice_thread__take(nt); it; it = next) {
		next = it->next;
		notice_item__free(it);
	}
	ring_buffer__free(nt->rb);
	if (nt->epfd >= 0)
		close(nt->epfd);
	if (nt->stopfd >= 0)
		close(nt->stopfd);
	if (nt->wakefd >= 0)
		close(nt->wakefd);
	if (nt->buf)
		munmap(nt->buf, nt->buf_size);
	for (it = nt->spare; it; it = next) {
		next = it->next;
		munmap(it, it->bytes);
	}
	for (it = __atomic_exchange_n(&nt->free, NULL, __ATOMIC_ACQUIRE); it; it = next) {
		next = it->next;
		munmap(it, it->bytes);
	}
	free(nt);
}

void notice_thread__use_mmap_events(struct notice_thread *nt, struct mmap_events *m)
{
	struct epoll_event ev = { .events = EPOLLIN };

	if (!nt)
		return;
	/* its changes' descriptor in the thread's epoll set first, then told (rechecks_idle) */
	ev.data.fd = m ? mmap_events__changes_fd(m) : -1;
	if (ev.data.fd >= 0 && __atomic_load_n(&nt->changes_fd, __ATOMIC_ACQUIRE) < 0 &&
	    !epoll_ctl(nt->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev))
		__atomic_store_n(&nt->changes_fd, ev.data.fd, __ATOMIC_RELEASE);
	__atomic_store_n(&nt->mmaps, m, __ATOMIC_RELEASE);
}

void notice_thread__stats(struct notice_thread *nt, struct notice_thread_stats *st)
{
	st->notices = __atomic_load_n(&nt->notices, __ATOMIC_RELAXED);
	st->captured = __atomic_load_n(&nt->captured, __ATOMIC_RELAXED);
	st->rechanged = __atomic_load_n(&nt->rechanged, __ATOMIC_RELAXED);
	st->spared = __atomic_load_n(&nt->spared, __ATOMIC_RELAXED);
	st->notices_spared = __atomic_load_n(&nt->notices_spared, __ATOMIC_RELAXED);
	st->gone = __atomic_load_n(&nt->gone, __ATOMIC_RELAXED);
	st->dropped = __atomic_load_n(&nt->dropped, __ATOMIC_RELAXED);
	st->demoted = __atomic_load_n(&nt->nr_demoted, __ATOMIC_RELAXED);
	st->max_delay_ns = __atomic_load_n(&nt->max_delay_ns, __ATOMIC_RELAXED);
	st->timer_spared = __atomic_load_n(&nt->timer_spared, __ATOMIC_RELAXED);
	st->realtime = __atomic_load_n(&nt->rt, __ATOMIC_RELAXED);
}

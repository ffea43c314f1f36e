// SPDX-License-Identifier: MIT
/*
 * Symbol tables read while sampling (include/sym_preload.h): the adder
 * pushes each file on a lock-free stack and posts a semaphore (neither
 * waits); the thread, woken, takes the stack whole (one exchange), puts it
 * back in the order queued at the end of its own list and reads those
 * files one by one, checking for the stop before each.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "sym_elf.h"
#include "sym_preload.h"

struct sym_preload {
	struct sym_preload_file *pushed; /* the stack: newest first; atomic */
	struct sym_preload_file *read; /* the files read, newest first, through next_read; atomic */
	sem_t wake; /* a post a push, one for the stop */
	bool stopping; /* atomic */
	size_t nr_queued, nr_tried; /* atomic: the adder's, the thread's */
	/* the thread's until joined, then the caller's: */
	struct sym_preload_file *files, **tail;
	uint64_t cpu_ns;
	/* set at start, or the adder's: */
	size_t max_files;
	uint64_t after_ns; /* nothing read before this long after the start */
	bool idle, joined;
	sym_preload_load_fn load;
	void *ctx;
	pthread_t thread;
};

static uint64_t thread_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The files pushed since the last call, at the end of pl->files in the order queued; the first */
static struct sym_preload_file *take_pushed(struct sym_preload *pl)
{
	struct sym_preload_file *f = __atomic_exchange_n(&pl->pushed, NULL, __ATOMIC_ACQUIRE);
	struct sym_preload_file *in_order = NULL, *next;

	for (; f; f = next) {
		next = f->next;
		f->next = in_order;
		in_order = f;
	}
	*pl->tail = in_order;
	for (f = in_order; f; f = f->next)
		pl->tail = &f->next;
	return in_order;
}

static bool stopping(const struct sym_preload *pl)
{
	return __atomic_load_n(&pl->stopping, __ATOMIC_ACQUIRE);
}

static void *preload_thread(void *arg)
{
	struct sym_preload *pl = arg;
	struct sched_param sp = { 0 };

	struct timespec until;

	/* only the CPU the workload leaves; sym_preload__stop raises it back */
	if (pl->idle)
		pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp);
	/* the first after_ns: the pushes' posts taken, their files read below */
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += (time_t)(pl->after_ns / 1000000000ULL);
	until.tv_nsec += (long)(pl->after_ns % 1000000000ULL);
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	while (pl->after_ns && !stopping(pl) &&
	       (!sem_timedwait(&pl->wake, &until) || errno == EINTR))
		;
	while (!stopping(pl)) {
		for (struct sym_preload_file *f = take_pushed(pl); f && !stopping(pl);
		     f = f->next) {
			uint64_t t0 = thread_ns();

			f->st = pl->load(pl->ctx, f->fd, f->pid, f->path);
			pl->cpu_ns += thread_ns() - t0;
			close(f->fd);
			f->fd = -1;
			f->tried = true;
			/*
			 * handed back (the thread does not touch f->st from
			 * here), then counted: a count seen has its files taken
			 */
			f->next_read = __atomic_load_n(&pl->read, __ATOMIC_RELAXED);
			while (!__atomic_compare_exchange_n(&pl->read, &f->next_read, f, true,
							    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
				;
			__atomic_add_fetch(&pl->nr_tried, 1, __ATOMIC_RELEASE);
		}
		while (!stopping(pl) && sem_wait(&pl->wake))
			; /* EINTR */
	}
	return NULL;
}

struct sym_preload *sym_preload__start(size_t max_files, uint64_t after_ns, bool idle,
				       sym_preload_load_fn load, void *ctx)
{
	struct sym_preload *pl = calloc(1, sizeof(*pl));
	int err;

	if (!pl)
		return NULL;
	if (sem_init(&pl->wake, 0, 0)) {
		free(pl);
		return NULL;
	}
	pl->tail = &pl->files;
	pl->max_files = max_files;
	pl->after_ns = after_ns;
	pl->idle = idle;
	pl->load = load;
	pl->ctx = ctx;
	err = pthread_create(&pl->thread, NULL, preload_thread, pl);
	if (err) {
		sem_destroy(&pl->wake);
		free(pl);
		errno = err;
		return NULL;
	}
	return pl;
}

int sym_preload__add(struct sym_preload *pl, const char *path, uint64_t inode, uint32_t dev_major,
		     uint32_t dev_minor, uint32_t pid, int fd)
{
	struct sym_preload_file *f;

	if (pl->joined || pl->nr_queued >= pl->max_files)
		return 0;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->path = strdup(path);
	f->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (!f->path || f->fd < 0) {
		int err = f->path ? -errno : -ENOMEM;

		if (f->fd >= 0)
			close(f->fd);
		free(f->path);
		free(f);
		return err;
	}
	f->inode = inode;
	f->dev_major = dev_major;
	f->dev_minor = dev_minor;
	f->pid = pid;
	f->next = __atomic_load_n(&pl->pushed, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(&pl->pushed, &f->next, f, true, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED))
		;
	__atomic_add_fetch(&pl->nr_queued, 1, __ATOMIC_RELAXED);
	sem_post(&pl->wake);
	return 0;
}

void sym_preload__stop(struct sym_preload *pl)
{
	struct sched_param sp = { 0 };

	if (pl->joined)
		return;
	__atomic_store_n(&pl->stopping, true, __ATOMIC_RELEASE);
	sem_post(&pl->wake);
	/* the table under way is now on finalize's path: normal priority */
	if (pl->idle)
		pthread_setschedparam(pl->thread, SCHED_OTHER, &sp);
	pthread_join(pl->thread, NULL);
	pl->joined = true;
	take_pushed(pl); /* pushed and never begun: listed, unread */
}

struct sym_preload_file *sym_preload__take_read(struct sym_preload *pl)
{
	return __atomic_exchange_n(&pl->read, NULL, __ATOMIC_ACQUIRE);
}

bool sym_preload__progress(const struct sym_preload *pl, size_t *queued, size_t *tried)
{
	*tried = __atomic_load_n(&pl->nr_tried, __ATOMIC_ACQUIRE);
	*queued = __atomic_load_n(&pl->nr_queued, __ATOMIC_RELAXED);
	return stopping(pl);
}

struct sym_preload_file *sym_preload__files(struct sym_preload *pl)
{
	return pl->files;
}

uint64_t sym_preload__cpu_ns(const struct sym_preload *pl)
{
	return pl->cpu_ns;
}

void sym_preload__free(struct sym_preload *pl)
{
	struct sym_preload_file *f, *next;

	if (!pl)
		return;
	sym_preload__stop(pl);
	for (f = pl->files; f; f = next) {
		next = f->next;
		elf_symtab__free(f->st);
		if (f->fd >= 0)
			close(f->fd);
		free(f->path);
		free(f);
	}
	sem_destroy(&pl->wake);
	free(pl);
}

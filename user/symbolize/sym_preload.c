// SPDX-License-Identifier: MIT
/*
 * Symbol tables read while sampling (include/sym_preload.h): a queue under
 * a mutex, filled by the symbolizer's thread as it pins the targets' files,
 * emptied in order by one thread of low priority, which reads each table
 * with the mutex released and stores it back by index (the queue's array
 * may move meanwhile).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "array.h"
#include "sym_elf.h"
#include "sym_preload.h"

struct sym_preload {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	/* under lock: */
	struct sym_preload_file *files;
	size_t nr_files, cap_files, next; /* next: the first file not begun */
	size_t nr_tried;
	bool stopping;
	/* the thread's own until joined: */
	uint64_t cpu_ns;
	/* set at start: */
	size_t max_files;
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

static void *preload_thread(void *arg)
{
	struct sym_preload *pl = arg;
	struct sched_param sp = { 0 };

	/* only the CPU the workload leaves; sym_preload__stop raises it back */
	if (pl->idle)
		pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp);
	pthread_mutex_lock(&pl->lock);
	for (;;) {
		struct elf_symtab *st;
		size_t i;
		uint64_t t0;
		uint32_t pid;
		int fd;
		char *path;

		while (!pl->stopping && pl->next >= pl->nr_files)
			pthread_cond_wait(&pl->wake, &pl->lock);
		if (pl->stopping)
			break;
		i = pl->next++;
		fd = pl->files[i].fd;
		pid = pl->files[i].pid;
		path = pl->files[i].path; /* its own allocation: stays while the array moves */
		pthread_mutex_unlock(&pl->lock);

		t0 = thread_ns();
		st = pl->load(pl->ctx, fd, pid, path);
		pl->cpu_ns += thread_ns() - t0;

		pthread_mutex_lock(&pl->lock);
		pl->files[i].st = st;
		pl->files[i].tried = true;
		pl->nr_tried++;
		close(pl->files[i].fd);
		pl->files[i].fd = -1;
	}
	pthread_mutex_unlock(&pl->lock);
	return NULL;
}

struct sym_preload *sym_preload__start(size_t max_files, bool idle, sym_preload_load_fn load,
				       void *ctx)
{
	struct sym_preload *pl = calloc(1, sizeof(*pl));
	int err;

	if (!pl)
		return NULL;
	pthread_mutex_init(&pl->lock, NULL);
	pthread_cond_init(&pl->wake, NULL);
	pl->max_files = max_files;
	pl->idle = idle;
	pl->load = load;
	pl->ctx = ctx;
	err = pthread_create(&pl->thread, NULL, preload_thread, pl);
	if (err) {
		pthread_cond_destroy(&pl->wake);
		pthread_mutex_destroy(&pl->lock);
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
	int err = 0, dup_fd;

	pthread_mutex_lock(&pl->lock);
	if (pl->stopping || pl->nr_files >= pl->max_files)
		goto out;
	if (array__grow((void **)&pl->files, &pl->cap_files, pl->nr_files + 1,
			sizeof(*pl->files))) {
		err = -ENOMEM;
		goto out;
	}
	dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (dup_fd < 0) {
		err = -errno;
		goto out;
	}
	f = &pl->files[pl->nr_files];
	memset(f, 0, sizeof(*f));
	f->path = strdup(path);
	if (!f->path) {
		close(dup_fd);
		err = -ENOMEM;
		goto out;
	}
	f->inode = inode;
	f->dev_major = dev_major;
	f->dev_minor = dev_minor;
	f->pid = pid;
	f->fd = dup_fd;
	pl->nr_files++;
	pthread_cond_signal(&pl->wake);
out:
	pthread_mutex_unlock(&pl->lock);
	return err;
}

void sym_preload__stop(struct sym_preload *pl)
{
	struct sched_param sp = { 0 };

	if (pl->joined)
		return;
	pthread_mutex_lock(&pl->lock);
	pl->stopping = true;
	pthread_cond_signal(&pl->wake);
	pthread_mutex_unlock(&pl->lock);
	/* the table under way is now on finalize's path: normal priority */
	if (pl->idle)
		pthread_setschedparam(pl->thread, SCHED_OTHER, &sp);
	pthread_join(pl->thread, NULL);
	pl->joined = true;
}

void sym_preload__progress(struct sym_preload *pl, size_t *queued, size_t *tried)
{
	pthread_mutex_lock(&pl->lock);
	*queued = pl->nr_files;
	*tried = pl->nr_tried;
	pthread_mutex_unlock(&pl->lock);
}

size_t sym_preload__count(const struct sym_preload *pl)
{
	return pl->nr_files;
}

struct sym_preload_file *sym_preload__file(struct sym_preload *pl, size_t i)
{
	return i < pl->nr_files ? &pl->files[i] : NULL;
}

uint64_t sym_preload__cpu_ns(const struct sym_preload *pl)
{
	return pl->cpu_ns;
}

void sym_preload__free(struct sym_preload *pl)
{
	if (!pl)
		return;
	sym_preload__stop(pl);
	for (size_t i = 0; i < pl->nr_files; i++) {
		elf_symtab__free(pl->files[i].st);
		if (pl->files[i].fd >= 0)
			close(pl->files[i].fd);
		free(pl->files[i].path);
	}
	free(pl->files);
	pthread_cond_destroy(&pl->wake);
	pthread_mutex_destroy(&pl->lock);
	free(pl);
}

// SPDX-License-Identifier: MIT
/*
 * Parallel debuginfod fetches with an overall deadline (include/sym_debuginfod.h).
 *
 * Workers take requests from a shared queue, each with its own
 * debuginfod_client. The deadline reaches them through the client's progress
 * callback, which libdebuginfod calls on every turn of its transfer loop
 * (at least once a second, its curl_multi_wait period): a non-zero return
 * cancels the transfer. The caller waits at most deadline + grace; workers
 * still busy then are detached, and the shared state is freed by whoever
 * leaves it last, so a stuck worker writes into nothing the caller still uses.
 */
#include <elfutils/debuginfod.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>
#include "log.h"
#include "sym_debuginfod.h"

struct fetch_state {
	pthread_mutex_t lock;
	pthread_cond_t done_cond;
	struct debuginfod_req *reqs; /* owned copies of the caller's (what is borrowed) */
	size_t n, next, done;
	uint64_t deadline_ns; /* CLOCK_MONOTONIC */
	uint64_t max_size; /* bytes */
	int null_fd; /* /dev/null: the clients' verbose output below -vv */
	bool abandoned; /* the caller left: results are dropped */
	int refs; /* caller + workers */
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The size cap: DEBUGINFOD_MAXSIZE (bytes) when set and valid, else DEBUGINFOD_MAX_SIZE. */
static uint64_t max_size(void)
{
	const char *v = getenv(DEBUGINFOD_MAXSIZE_ENV_VAR);
	unsigned long long n;
	char *end;

	if (!v || !*v)
		return DEBUGINFOD_MAX_SIZE;
	errno = 0;
	n = strtoull(v, &end, 10);
	return errno || *end || !n ? DEBUGINFOD_MAX_SIZE : n;
}

int debuginfod__setup(const char *urls)
{
	char cap[32];

	if (urls && setenv(DEBUGINFOD_URLS_ENV_VAR, urls, 1))
		return -errno;
	if (!getenv(DEBUGINFOD_MAXSIZE_ENV_VAR)) {
		snprintf(cap, sizeof(cap), "%llu", (unsigned long long)DEBUGINFOD_MAX_SIZE);
		if (setenv(DEBUGINFOD_MAXSIZE_ENV_VAR, cap, 1))
			return -errno;
	}
	return 0;
}

bool debuginfod__enabled(void)
{
	const char *urls = getenv(DEBUGINFOD_URLS_ENV_VAR);

	return urls && urls[strspn(urls, " \t")];
}

bool debuginfod__would_enable(const char *urls)
{
	if (!urls)
		urls = getenv(DEBUGINFOD_URLS_ENV_VAR);
	return urls && urls[strspn(urls, " \t")];
}

static void state_put(struct fetch_state *st)
{
	size_t i;
	bool last;

	pthread_mutex_lock(&st->lock);
	last = --st->refs == 0;
	pthread_mutex_unlock(&st->lock);
	if (!last)
		return;
	for (i = 0; i < st->n; i++)
		free(st->reqs[i].path);
	if (st->null_fd >= 0)
		close(st->null_fd);
	free(st->reqs);
	pthread_cond_destroy(&st->done_cond);
	pthread_mutex_destroy(&st->lock);
	free(st);
}

/* A worker's client's user data. */
struct worker_ctx {
	const struct fetch_state *st;
	bool cancelled; /* past_deadline stopped the current fetch */
};

/* libdebuginfod's progress callback: non-zero cancels the transfer. */
static int past_deadline(debuginfod_client *c, long a, long b)
{
	struct worker_ctx *w = debuginfod_get_user_data(c);

	(void)a;
	(void)b;
	if (mono_ns() < w->st->deadline_ns)
		return 0;
	w->cancelled = true;
	return 1;
}

/*
 * The client's cache directory, found as libdebuginfod 0.188 finds it
 * (debuginfod_query_server): $DEBUGINFOD_CACHE_PATH, else
 * $HOME/.debuginfod_client_cache when it exists, else
 * ${XDG_CACHE_HOME:-$HOME/.cache}/debuginfod_client.
 */
static void cache_dir(char *buf, size_t size)
{
	const char *v = getenv(DEBUGINFOD_CACHE_PATH_ENV_VAR), *home = getenv("HOME");
	struct stat sb;

	if (v && *v) {
		snprintf(buf, size, "%s", v);
		return;
	}
	if (!home)
		home = "/";
	snprintf(buf, size, "%s/.debuginfod_client_cache", home);
	if (!stat(buf, &sb))
		return;
	v = getenv("XDG_CACHE_HOME");
	if (v && *v)
		snprintf(buf, size, "%s/debuginfod_client", v);
	else
		snprintf(buf, size, "%s/.cache/debuginfod_client", home);
}

int debuginfod__cached(const uint8_t *id, size_t len, char *buf, size_t size)
{
	char dir[4096], hex[2 * 20 + 1];
	struct stat sb;
	size_t i;
	int n;

	if (!len || len > 20)
		return -ENOENT;
	for (i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	cache_dir(dir, sizeof(dir));
	n = snprintf(buf, size, "%s/%s/debuginfo", dir, hex);
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	/* an empty file is the client's record of a miss */
	if (stat(buf, &sb))
		return -errno;
	return S_ISREG(sb.st_mode) && sb.st_size ? 0 : -ENOENT;
}

/*
 * A fetch that our deadline cancelled is recorded by the client as a miss
 * (an empty file where the debug file would go), which it then believes for
 * cache_miss_s (600 s by default), also for debuginfod-find: remove that
 * entry, which no server gave.
 */
static void forget_miss(const struct debuginfod_req *r)
{
	char dir[4096], path[4200], hex[41];
	struct stat sb;
	size_t i;

	for (i = 0; i < r->build_id_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", r->build_id[i]);
	cache_dir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/%s/debuginfo", dir, hex);
	if (!lstat(path, &sb) && S_ISREG(sb.st_mode) && !sb.st_size)
		unlink(path);
}

static void *worker(void *arg)
{
	struct fetch_state *st = arg;
	debuginfod_client *c = debuginfod_begin();
	struct worker_ctx w = { .st = st };

	if (c) {
		debuginfod_set_user_data(c, &w);
		debuginfod_set_progressfn(c, past_deadline);
		/*
		 * The client dprintf()s its trace to this descriptor even when
		 * nobody wants it, and glibc's dprintf leaks its buffer on a bad
		 * descriptor (-1, the default): give it a good one.
		 */
		if (log_verbosity >= 2)
			debuginfod_set_verbose_fd(c, STDERR_FILENO);
		else if (st->null_fd >= 0)
			debuginfod_set_verbose_fd(c, st->null_fd);
	}
	for (;;) {
		struct debuginfod_req r;
		char *path = NULL;
		size_t i;
		int fd;

		pthread_mutex_lock(&st->lock);
		if (st->abandoned || st->next == st->n) {
			pthread_mutex_unlock(&st->lock);
			break;
		}
		i = st->next++;
		r = st->reqs[i];
		pthread_mutex_unlock(&st->lock);

		w.cancelled = false;
		if (!c)
			fd = -ENOMEM;
		else if (mono_ns() >= st->deadline_ns)
			fd = -ETIME;
		else
			fd = debuginfod_find_debuginfo(c, r.build_id, (int)r.build_id_len, &path);
		/* cancelled by past_deadline: the client reports it as not found */
		if (fd < 0 && w.cancelled) {
			fd = -ETIME;
			forget_miss(&r);
		}
		if (fd >= 0) {
			struct stat sb;

			/* the cache may hold a file fetched under a larger cap */
			if (!fstat(fd, &sb) && (uint64_t)sb.st_size > st->max_size) {
				pr_warn("debuginfod: '%s' (for '%s'): %llu bytes, more than the %llu allowed (DEBUGINFOD_MAXSIZE); not used\n",
					path, r.what, (unsigned long long)sb.st_size,
					(unsigned long long)st->max_size);
				close(fd);
				fd = -EFBIG;
			} else {
				close(fd);
			}
		}
		pthread_mutex_lock(&st->lock);
		st->reqs[i].err = fd < 0 ? fd : 0;
		st->reqs[i].path = fd < 0 ? NULL : path;
		if (fd < 0)
			free(path);
		st->done++;
		pthread_cond_signal(&st->done_cond);
		pthread_mutex_unlock(&st->lock);
	}
	if (c)
		debuginfod_end(c);
	state_put(st);
	return NULL;
}

static void show_progress(size_t done, size_t n, double elapsed)
{
	fprintf(stderr,
		"\rbpfprof: fetching debug info (debuginfod): %zu of %zu files, %.1f s\033[K", done,
		n, elapsed);
}

int debuginfod__fetch(struct debuginfod_req *reqs, size_t n, const struct debuginfod_opts *o)
{
	uint32_t deadline_ms = o && o->deadline_ms ? o->deadline_ms : DEBUGINFOD_DEADLINE_MS;
	bool progress = o && o->progress;
	size_t i, nr_threads, started = 0;
	uint64_t start = mono_ns(), give_up;
	struct fetch_state *st;
	int fetched = 0;

	for (i = 0; i < n; i++) {
		reqs[i].path = NULL;
		reqs[i].err = -ETIME;
	}
	if (!n)
		return 0;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->reqs = calloc(n, sizeof(*st->reqs));
	if (!st->reqs) {
		free(st);
		return -ENOMEM;
	}
	memcpy(st->reqs, reqs, n * sizeof(*reqs));
	st->n = n;
	st->max_size = max_size();
	st->null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	st->deadline_ns = start + (uint64_t)deadline_ms * 1000000ull;
	give_up = st->deadline_ns + (uint64_t)DEBUGINFOD_GRACE_MS * 1000000ull;
	pthread_mutex_init(&st->lock, NULL);
	pthread_cond_init(&st->done_cond, NULL);
	st->refs = 1;

	nr_threads = n < DEBUGINFOD_THREADS ? n : DEBUGINFOD_THREADS;
	for (i = 0; i < nr_threads; i++) {
		pthread_t t;

		pthread_mutex_lock(&st->lock);
		st->refs++;
		pthread_mutex_unlock(&st->lock);
		if (pthread_create(&t, NULL, worker, st)) {
			pthread_mutex_lock(&st->lock);
			st->refs--;
			pthread_mutex_unlock(&st->lock);
			break;
		}
		pthread_detach(t);
		started++;
	}
	if (!started) {
		state_put(st);
		return -ENOMEM;
	}

	if (progress)
		show_progress(0, n, 0);
	pthread_mutex_lock(&st->lock);
	while (st->done < n) {
		uint64_t now = mono_ns(), wake = now + 200000000ull;
		struct timespec ts;

		if (now >= give_up)
			break;
		if (progress)
			show_progress(st->done, n, (double)(now - start) / 1e9);
		if (wake > give_up)
			wake = give_up;
		/* the condition variable waits on CLOCK_REALTIME: convert the relative wait */
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += (time_t)((wake - now) / 1000000000ull);
		ts.tv_nsec += (long)((wake - now) % 1000000000ull);
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&st->done_cond, &st->lock, &ts);
	}
	for (i = 0; i < n; i++) {
		reqs[i].err = st->reqs[i].err;
		reqs[i].path = st->reqs[i].path; /* taken over */
		st->reqs[i].path = NULL;
		fetched += reqs[i].path != NULL;
	}
	st->abandoned = true;
	pthread_mutex_unlock(&st->lock);
	if (progress)
		fprintf(stderr, "\r\033[K");
	state_put(st);
	return fetched;
}

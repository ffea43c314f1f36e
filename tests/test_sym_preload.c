// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/symbolize/sym_preload.c (include/sym_preload.h),
 * with a fake load callback that records its calls and can be held: the
 * files are read in the order queued, each once, with the queue's own
 * descriptor (a duplicate: the caller's stays open) and the file's path and
 * pid; a failed read leaves the file with no table; past max_files nothing
 * is queued; sym_preload__stop finishes the read under way and leaves the
 * rest unread (no descriptor leaked, no table lost: freed by
 * sym_preload__free unless taken); the files read are handed back while
 * it runs, each once (sym_preload__take_read).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "sym_elf.h"
#include "sym_preload.h"

#define MAX_CALLS 8

/* The fake loader's record, and its gate: a call waits while held */
struct fake {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool held;
	int calls;
	int waiting; /* calls blocked at the gate */
	char paths[MAX_CALLS][64];
	uint32_t pids[MAX_CALLS];
	ino_t inodes[MAX_CALLS]; /* fstat of the descriptor given */
	int fds[MAX_CALLS];
};

static struct elf_symtab *fake_load(void *ctx, int fd, uint32_t pid, const char *path)
{
	struct fake *f = ctx;
	struct stat sb;
	int k;

	pthread_mutex_lock(&f->lock);
	f->waiting++;
	pthread_cond_broadcast(&f->cond);
	while (f->held)
		pthread_cond_wait(&f->cond, &f->lock);
	f->waiting--;
	k = f->calls++;
	if (k < MAX_CALLS) {
		snprintf(f->paths[k], sizeof(f->paths[k]), "%s", path);
		f->pids[k] = pid;
		f->fds[k] = fd;
		f->inodes[k] = fstat(fd, &sb) ? 0 : sb.st_ino;
	}
	pthread_mutex_unlock(&f->lock);
	/* a table only for files named ".../ok": any non-NULL pointer elf_symtab__free takes */
	return strstr(path, "ok") ? elf_symtab__load("/proc/self/exe", "") : NULL;
}

static void fake_init(struct fake *f, bool held)
{
	memset(f, 0, sizeof(*f));
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->cond, NULL);
	f->held = held;
}

static void fake_release(struct fake *f)
{
	pthread_mutex_lock(&f->lock);
	f->held = false;
	pthread_cond_broadcast(&f->cond);
	pthread_mutex_unlock(&f->lock);
}

/* Until n calls wait at the gate (5 s at most) */
static void fake_wait_for(struct fake *f, int n)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 5;
	pthread_mutex_lock(&f->lock);
	while (f->waiting < n)
		if (pthread_cond_timedwait(&f->cond, &f->lock, &until) == ETIMEDOUT)
			break;
	assert_int_equal(f->waiting, n);
	pthread_mutex_unlock(&f->lock);
}

/* Until the thread has tried n files (5 s at most) */
static void wait_tried(struct sym_preload *pl, size_t n)
{
	size_t queued, tried = 0;

	for (int i = 0; i < 5000; i++) {
		sym_preload__progress(pl, &queued, &tried);
		if (tried >= n)
			break;
		usleep(1000);
	}
	assert_int_equal(tried, n);
}

static bool fd_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

static void test_reads_in_order_with_own_descriptor(void **state)
{
	struct fake f;
	struct sym_preload *pl;
	struct sym_preload_file *first;
	struct stat sb;
	size_t queued, tried;
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &sb), 0);
	fake_init(&f, false);
	pl = sym_preload__start(2, 0, false, fake_load, &f);
	assert_non_null(pl);
	assert_int_equal(sym_preload__add(pl, "/usr/lib/ok.so", 1, 8, 1, 100, fd), 0);
	assert_int_equal(sym_preload__add(pl, "/usr/lib/bad.so (deleted)", 2, 8, 1, 200, fd), 0);
	/* past max_files: not queued, not an error */
	assert_int_equal(sym_preload__add(pl, "/usr/lib/ok3.so", 3, 8, 1, 300, fd), 0);
	wait_tried(pl, 2);
	sym_preload__progress(pl, &queued, &tried);
	assert_int_equal(queued, 2);
	sym_preload__stop(pl);
	sym_preload__stop(pl); /* again: nothing */

	assert_int_equal(f.calls, 2);
	assert_string_equal(f.paths[0], "/usr/lib/ok.so");
	assert_string_equal(f.paths[1], "/usr/lib/bad.so (deleted)");
	assert_int_equal(f.pids[0], 100);
	assert_int_equal(f.pids[1], 200);
	/* the queue's duplicate of the very file, not the caller's descriptor */
	assert_int_not_equal(f.fds[0], fd);
	assert_true(f.inodes[0] == sb.st_ino && f.inodes[1] == sb.st_ino);
	assert_true(fd_open(fd));
	assert_false(fd_open(f.fds[0])); /* closed once read */

	first = sym_preload__files(pl);
	assert_non_null(first);
	assert_string_equal(first->path, "/usr/lib/ok.so");
	assert_non_null(first->st);
	assert_true(first->tried);
	assert_int_equal(first->inode, 1);
	assert_int_equal(first->dev_major, 8);
	assert_int_equal(first->pid, 100);
	assert_non_null(first->next);
	assert_null(first->next->st); /* failed: left to finalize */
	assert_true(first->next->tried);
	assert_null(first->next->next);
	/* after the stop: nothing queued */
	assert_int_equal(sym_preload__add(pl, "/usr/lib/ok4.so", 4, 8, 1, 400, fd), 0);
	assert_null(first->next->next);
	/* a table taken is the caller's; the other freed with the queue */
	elf_symtab__free(first->st);
	first->st = NULL;
	sym_preload__free(pl);
	close(fd);
}

/*
 * after_ns: nothing read before it (a short run spends nothing), what was
 * queued meanwhile read once it passed; a stop before it reads nothing
 */
static void test_nothing_read_before_after_ns(void **state)
{
	struct fake f;
	struct sym_preload *pl;
	size_t queued, tried;
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	fake_init(&f, false);
	pl = sym_preload__start(4, 300ULL * 1000 * 1000, false, fake_load, &f);
	assert_non_null(pl);
	assert_int_equal(sym_preload__add(pl, "/a/early1", 1, 0, 1, 1, fd), 0);
	assert_int_equal(sym_preload__add(pl, "/a/early2", 2, 0, 1, 1, fd), 0);
	usleep(100 * 1000);
	sym_preload__progress(pl, &queued, &tried);
	assert_int_equal(queued, 2);
	assert_int_equal(tried, 0);
	wait_tried(pl, 2); /* past the 300 ms: both, in order */
	assert_int_equal(f.calls, 2);
	assert_string_equal(f.paths[0], "/a/early1");
	sym_preload__free(pl);

	fake_init(&f, false);
	pl = sym_preload__start(4, 10ULL * 1000 * 1000 * 1000, false, fake_load, &f);
	assert_non_null(pl);
	assert_int_equal(sym_preload__add(pl, "/a/never", 3, 0, 1, 1, fd), 0);
	sym_preload__stop(pl); /* at once, not 10 s later */
	sym_preload__progress(pl, &queued, &tried);
	assert_int_equal(tried, 0);
	assert_int_equal(f.calls, 0);
	sym_preload__free(pl);
	close(fd);
}

static void *stop_thread(void *pl)
{
	sym_preload__stop(pl);
	return NULL;
}

/* The stop while a file is being read: that one finished, the rest left unread and closed */
static void test_stop_finishes_the_one_under_way(void **state)
{
	struct fake f;
	struct sym_preload *pl;
	struct sym_preload_file *first;
	pthread_t stopper;
	size_t queued, tried;
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC), later_fd;

	assert_true(fd >= 0);
	fake_init(&f, true);
	pl = sym_preload__start(8, 0, false, fake_load, &f);
	assert_non_null(pl);
	assert_int_equal(sym_preload__add(pl, "/a/ok1", 1, 0, 1, 1, fd), 0);
	fake_wait_for(&f, 1); /* the first under way, held */
	assert_int_equal(sym_preload__add(pl, "/a/ok2", 2, 0, 1, 1, fd), 0);
	assert_int_equal(sym_preload__add(pl, "/a/ok3", 3, 0, 1, 1, fd), 0);
	/* the stop, on another thread: it waits for the read under way */
	assert_int_equal(pthread_create(&stopper, NULL, stop_thread, pl), 0);
	for (int i = 0; i < 5000 && !sym_preload__progress(pl, &queued, &tried); i++)
		usleep(1000);
	assert_true(sym_preload__progress(pl, &queued, &tried));
	assert_int_equal(queued, 3);
	assert_int_equal(tried, 0);
	fake_release(&f);
	pthread_join(stopper, NULL);
	first = sym_preload__files(pl);
	assert_int_equal(f.calls, 1);
	assert_string_equal(first->path, "/a/ok1");
	assert_non_null(first->st);
	assert_true(first->tried);
	assert_string_equal(first->next->path, "/a/ok2");
	assert_false(first->next->tried);
	assert_null(first->next->st);
	assert_string_equal(first->next->next->path, "/a/ok3");
	assert_false(first->next->next->tried);
	later_fd = first->next->fd; /* its read never begun: still open */
	assert_true(later_fd >= 0 && later_fd != fd);
	assert_true(fd_open(later_fd));
	sym_preload__free(pl); /* frees ok1's table, closes the unread files' descriptors */
	assert_false(fd_open(later_fd));
	assert_true(fd_open(fd));
	close(fd);
}

/* Freed with nothing queued, or straight after the start: the thread joined */
/*
 * The files read, handed back while the thread runs (sym_preload__take_read):
 * each once, every one counted tried by then; the tables taken are the
 * caller's (st NULL in the list after the stop), those left are freed
 */
static void test_take_read_while_running(void **state)
{
	struct fake f;
	struct sym_preload *pl;
	struct sym_preload_file *r;
	struct elf_symtab *taken = NULL;
	size_t queued, tried, n = 0;
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	fake_init(&f, true);
	pl = sym_preload__start(8, 0, false, fake_load, &f);
	assert_non_null(pl);
	assert_null(sym_preload__take_read(pl)); /* nothing read yet */
	assert_int_equal(sym_preload__add(pl, "/a/ok1", 1, 0, 1, 1, fd), 0);
	assert_int_equal(sym_preload__add(pl, "/a/bad2", 2, 0, 1, 1, fd), 0);
	fake_release(&f);
	wait_tried(pl, 2);
	sym_preload__progress(pl, &queued, &tried);
	for (r = sym_preload__take_read(pl); r; r = r->next_read, n++) {
		assert_true(r->tried);
		if (!strcmp(r->path, "/a/ok1")) {
			assert_non_null(r->st);
			taken = r->st;
			r->st = NULL;
		} else {
			assert_string_equal(r->path, "/a/bad2");
			assert_null(r->st);
		}
	}
	assert_int_equal(n, tried);
	assert_null(sym_preload__take_read(pl)); /* each once */
	assert_int_equal(sym_preload__add(pl, "/a/ok3", 3, 0, 1, 1, fd), 0);
	wait_tried(pl, 3);
	r = sym_preload__take_read(pl);
	assert_non_null(r);
	assert_string_equal(r->path, "/a/ok3");
	assert_null(r->next_read);
	sym_preload__stop(pl);
	n = 0;
	for (r = sym_preload__files(pl); r; r = r->next)
		n += r->st != NULL; /* ok3's, not taken: freed with the queue */
	assert_int_equal(n, 1);
	assert_non_null(taken);
	elf_symtab__free(taken);
	sym_preload__free(pl);
	close(fd);
}

static void test_free_at_once(void **state)
{
	struct fake f;
	struct sym_preload *pl;

	fake_init(&f, false);
	pl = sym_preload__start(4, 0, false, fake_load, &f);
	assert_non_null(pl);
	sym_preload__free(pl);
	sym_preload__free(NULL);
	assert_int_equal(f.calls, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reads_in_order_with_own_descriptor),
		cmocka_unit_test(test_nothing_read_before_after_ns),
		cmocka_unit_test(test_stop_finishes_the_one_under_way),
		cmocka_unit_test(test_take_read_while_running),
		cmocka_unit_test(test_free_at_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

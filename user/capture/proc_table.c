// SPDX-License-Identifier: MIT
/*
 * The process table (include/proc_table.h): every event of a process's life
 * comes here, and this is the one file that opens /proc/PID/maps.
 *
 * What happens on exec, in order:
 *  1. The BPF exec handler (bpf/, sched_process_exec) forgets the process's
 *     first-sample state (its seen and noticed entries; in command mode the
 *     held command becomes a target), so its next samples wake the reader
 *     and send a notice again: proc_table__notice (or the notices' thread,
 *     proc_table__take_captured) reads and remembers the new image's maps
 *     and pins its files while it lives; a process the unwinder does not
 *     have yet is queued for registration from those maps there.
 *  2. The new image's executable mappings arrive as MMAP2 records
 *     (proc_table__watch_mmaps): proc_table__exec_mappings registers the
 *     process with the unwinder again from its maps now. Registered at a
 *     sample in its execve (collect2's child before it is ld), its
 *     registration may be under way from the old image's maps: such a
 *     mapping waits (exec_wait) and is looked at again once that is done.
 *     Gone before that, its copies' walks register it from the maps
 *     remembered (proc_table__remembered).
 *  3. The aggregator sees the leader's name change and starts a new image
 *     (agg.c new_image): an entry of its own with the new name, its maps
 *     read at once through proc_table__maps and handed to the symbolizer
 *     and the unwinder (proc_table__maps_changed), so that the samples
 *     before keep the old name and mappings. A late record under the name
 *     before the exec (a stack copy walked late) gets an image of its own
 *     again, its maps read at once (staying in the newest image named fewer
 *     of churn.sh's 60 ms processes); perf.data's COMM records keep their
 *     order (write_perfdata.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "bpfprof_abi.h"
#include "interp.h"
#include "log.h"
#include "maps_cache.h"
#include "mmap_events.h"
#include "notice_thread.h"
#include "proc_table.h"
#include "procmaps.h"
#include "symbolize.h"
#include "unwind_copies.h"
#include "unwinder.h"

/* Those waiting for a registration under way are looked at this often at most (a record can come every few us) */
#define EXEC_WAIT_NS (5ULL * 1000 * 1000)
/* An exited process's MMAP2 history is kept this long (its copies are walked by then) */
#define MMAP_KEEP_NS (10ULL * 1000 * 1000 * 1000)
/* Notices' captures kept for the processes' first maps read, at most, and for how long */
#define FRESH_MAX 16
#define FRESH_NS (1000ULL * 1000 * 1000)
/* A longer text is not kept (16 of them held at most: 4 MiB): its process's first read reads again */
#define FRESH_MAX_BYTES (256u << 10)
/* MMAP2 history, bytes at most */
#define MMAP_MAX_BYTES (16u << 20)

struct proc_table {
	char proc_dir[PATH_MAX - 64]; /* room for "/PID/stat" in a PATH_MAX path */
	struct maps_cache *maps; /* NULL: nothing remembered */
	struct cgroup_cache *cgroups; /* borrowed; NULL: cgroups from /proc */
	struct mmap_events *mmaps; /* NULL: not watched */
	struct notice_thread *notices; /* NULL: notices read by proc_table__notice */
	struct unwinder *unwinder; /* borrowed; NULL: none */
	struct symbolizer *sy; /* borrowed; NULL: none */
	struct interps *interps; /* borrowed; NULL: none */
	/*
	 * The cgroup ids records carried, a slot a pid (pid % CGROUP_SEEN):
	 * BPF sends a process's id in the records that open it on a CPU and 0
	 * in the later ones (bpf/record.bpf.h), while each --interval profile
	 * opens its processes afresh; a later profile's process takes the id
	 * from here rather than /proc/PID/cgroup, which one gone no longer
	 * has. Direct-mapped: a collision forgets, and /proc answers. NULL
	 * until the first id.
	 */
	struct cgroup_seen {
		uint32_t pid, start;
		uint64_t id;
	} *cgroup_seen;
	/*
	 * Executable mappings of processes whose registration was under way
	 * when they came, looked at again once it is done; exec_wait_ns: when
	 * last looked at (CLOCK_MONOTONIC)
	 */
	struct mmap_events_exec exec_wait[MMAP_EVENTS_MAX_EXEC];
	size_t nr_exec_wait;
	uint64_t exec_wait_ns;
	/*
	 * The notices' latest whole maps texts (a ring, next: the slot taken
	 * next), each given once to proc_table__maps: a process's first records
	 * come right after its first notice, whose thread has just read the
	 * maps; they serve while the mmap events' count of the process's
	 * changes has not moved since that read (take_fresh)
	 */
	/* proc_table__exits_moved's: mmap_events__exits at the last two looks, and the looks */
	uint64_t exits_seen[2];
	uint64_t nr_exit_looks;
	struct fresh_maps {
		uint32_t pid, start;
		uint64_t changes, taken_ns; /* the count before the read; when the reader took it */
		char *text; /* malloc'd; NULL: a free slot */
		size_t len;
	} fresh[FRESH_MAX];
	size_t next_fresh;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int proc_table__open_maps(const char *proc_dir, uint32_t pid)
{
	char path[PATH_MAX];
	int n, fd;

	n = pid ? snprintf(path, sizeof(path), "%s/%u/maps", proc_dir, pid) :
		  snprintf(path, sizeof(path), "%s/self/maps", proc_dir);
	if (n >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int proc_table__read_maps(const char *proc_dir, uint32_t pid, char **text, size_t *len)
{
	size_t cap = 16384, n = 0;
	int fd, err = 0;
	char *data;

	fd = proc_table__open_maps(proc_dir, pid);
	if (fd < 0)
		return fd;
	data = malloc(cap);
	if (!data) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		ssize_t r;

		if (cap - n < 4096) {
			char *nd = cap > SIZE_MAX / 2 ? NULL : realloc(data, cap * 2);

			if (!nd) {
				err = -ENOMEM;
				break;
			}
			data = nd;
			cap *= 2;
		}
		r = read(fd, data + n, cap - n - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (err) {
		free(data);
		return err;
	}
	data[n] = '\0';
	*text = data;
	*len = n;
	return 0;
}

int proc_table__snapshot(struct profile *p, uint32_t proc, const char *proc_dir)
{
	char origin[PATH_MAX], *text;
	size_t len;
	int err;

	err = proc_table__read_maps(proc_dir, p->procs[proc].pid, &text, &len);
	if (err)
		return err;
	snprintf(origin, sizeof(origin), "%s/%u/%s", proc_dir, p->procs[proc].pid, "maps");
	err = procmaps__merge(p, proc, text, len, origin);
	free(text);
	return err;
}

struct proc_table *proc_table__new(const char *proc_dir, bool remember)
{
	struct proc_table *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	if (snprintf(t->proc_dir, sizeof(t->proc_dir), "%s", proc_dir) >=
	    (int)sizeof(t->proc_dir)) {
		free(t);
		errno = ENAMETOOLONG;
		return NULL;
	}
	if (remember && !(t->maps = maps_cache__new(t->proc_dir))) {
		free(t);
		errno = ENOMEM;
		return NULL;
	}
	return t;
}

void proc_table__stop_mmaps(struct proc_table *t)
{
	if (t)
		mmap_events__stop(t->mmaps);
}

void proc_table__free(struct proc_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < FRESH_MAX; i++)
		free(t->fresh[i].text);
	notice_thread__free(t->notices);
	mmap_events__free(t->mmaps);
	maps_cache__free(t->maps);
	free(t->cgroup_seen);
	free(t);
}

const char *proc_table__proc_dir(const struct proc_table *t)
{
	return t->proc_dir;
}

void proc_table__set_cgroups(struct proc_table *t, struct cgroup_cache *c)
{
	t->cgroups = c;
}

static bool exec_wanted(void *ctx, uint32_t pid)
{
	return unwinder__may_have_proc(ctx, pid);
}

/*
 * The mmap events keep for proc_table__exec_mappings only the executable
 * mappings of registered processes, the only ones it looks at
 */
static void filter_exec(struct proc_table *t)
{
	if (t->mmaps)
		mmap_events__set_exec_filter(t->mmaps, t->unwinder ? exec_wanted : NULL,
					     t->unwinder);
}

void proc_table__set_unwinder(struct proc_table *t, struct unwinder *u)
{
	t->unwinder = u;
	filter_exec(t);
}

void proc_table__set_symbolizer(struct proc_table *t, struct symbolizer *sy)
{
	t->sy = sy;
}

void proc_table__set_interps(struct proc_table *t, struct interps *r)
{
	t->interps = r;
}

int proc_table__stat(const struct proc_table *t, uint32_t pid, struct proc_stat *ps)
{
	return proc_stat__read(t->proc_dir, pid, ps);
}

uint64_t proc_table__start_time(const struct proc_table *t, uint32_t pid)
{
	struct proc_stat st;

	return proc_table__stat(t, pid, &st) ? 0 : st.start_time;
}

bool proc_table__same(const struct proc_table *t, uint32_t pid, uint64_t start)
{
	struct proc_stat st;

	if (proc_table__stat(t, pid, &st))
		return true;
	return !start || st.start_time == start;
}

bool proc_table__gone(const struct proc_table *t, uint32_t pid, uint64_t start_time)
{
	struct proc_stat st;

	if (proc_table__stat(t, pid, &st))
		return true;
	if ((st.state == 'Z' && st.nr_threads <= 1) || st.state == 'X')
		return true;
	return start_time && st.start_time != start_time;
}

int proc_table__comm(const struct proc_table *t, uint32_t pid, uint64_t start,
		     char comm[PROFILE_COMM_LEN])
{
	char path[PATH_MAX], buf[PROFILE_COMM_LEN + 1] = { 0 };
	ssize_t n = -1;
	int fd = -1;

	if (snprintf(path, sizeof(path), "%s/%u/comm", t->proc_dir, pid) < (int)sizeof(path))
		fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0 || !proc_table__same(t, pid, start))
		return -ESRCH;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	memcpy(comm, buf, PROFILE_COMM_LEN - 1);
	comm[PROFILE_COMM_LEN - 1] = '\0';
	return 0;
}

#define CGROUP_SEEN 4096 /* 64 KiB */

/* pr's cgroup id, the record's, remembered; or, where it carried 0, the one remembered */
static void cgroup_id_seen(struct proc_table *t, struct profile_process *pr)
{
	struct cgroup_seen *cs;

	if (!pr->start) /* a pid alone may be another process's now */
		return;
	if (!t->cgroup_seen) {
		if (!pr->cgroup_id)
			return;
		t->cgroup_seen = calloc(CGROUP_SEEN, sizeof(*t->cgroup_seen));
		if (!t->cgroup_seen)
			return; /* /proc answers */
	}
	cs = &t->cgroup_seen[pr->pid % CGROUP_SEEN];
	if (pr->cgroup_id) {
		cs->pid = pr->pid;
		cs->start = pr->start;
		cs->id = pr->cgroup_id;
	} else if (cs->id && cs->pid == pr->pid && cs->start == pr->start) {
		pr->cgroup_id = cs->id;
	}
}

int proc_table__cgroup(struct proc_table *t, struct profile *p, uint32_t proc)
{
	char path[PATH_MAX], id[CGROUP_CONTAINER_ID_LEN + 1];
	struct profile_process *pr = &p->procs[proc];

	if (t->cgroups)
		cgroup_id_seen(t, pr);
	if (t->cgroups && pr->cgroup_id) {
		const char *cpath, *cid;
		int err = cgroup_cache__lookup(t->cgroups, pr->cgroup_id, &cpath, &cid);

		if (err)
			return err == -ENOMEM ? err : 0;
		pr->cgroup_path = profile__intern(p, cpath);
		if (pr->cgroup_path && cid[0])
			pr->container_id = profile__intern(p, cid);
		return !pr->cgroup_path || (cid[0] && !pr->container_id) ? -ENOMEM : 0;
	}
	if (cgroup__proc_path(t->proc_dir, pr->pid, path, sizeof(path)))
		return 0;
	pr->cgroup_path = profile__intern(p, path);
	if (!pr->cgroup_path)
		return -ENOMEM;
	if (!cgroup__container_id(path, id)) {
		pr->container_id = profile__intern(p, id);
		if (!pr->container_id)
			return -ENOMEM;
	}
	return 0;
}

/* Keep a notice's whole maps text of (pid, start) for take_fresh; 0 or -ENOMEM. */
static int keep_fresh(struct proc_table *t, const struct notice_item *it)
{
	struct fresh_maps *f = &t->fresh[t->next_fresh];

	if (!t->mmaps || !it->changes_known || !it->start || !it->maps_len ||
	    it->maps_len > FRESH_MAX_BYTES)
		return 0;
	free(f->text);
	f->text = malloc(it->maps_len + 1);
	if (!f->text)
		return -ENOMEM;
	memcpy(f->text, it->maps, it->maps_len);
	f->text[it->maps_len] = '\0';
	f->len = it->maps_len;
	f->pid = it->pid;
	f->start = it->start;
	f->changes = it->changes;
	f->taken_ns = mono_ns();
	t->next_fresh = (t->next_fresh + 1) % FRESH_MAX;
	return 0;
}

/*
 * The maps of (pid, start) as its notice's thread read them, if no mapping
 * event of it (an executable mapping, an exec, its exit: mmap_events.h)
 * was handled since, within FRESH_NS: into *text (the caller's) and *len,
 * true. Each is given once. The same text a read now would give but for
 * what the mmap events have not handled yet (they do within about 10 ms);
 * an address of a sample in such a mapping makes the aggregator read again
 * (agg.c check_mappings), as at a mapping made after any read.
 */
static bool take_fresh(struct proc_table *t, uint32_t pid, uint64_t start, char **text, size_t *len)
{
	for (size_t i = 0; i < FRESH_MAX; i++) {
		struct fresh_maps *f = &t->fresh[i];
		bool current;

		if (!f->text || f->pid != pid || f->start != (uint32_t)start)
			continue;
		current = mono_ns() - f->taken_ns < FRESH_NS &&
			  mmap_events__changes(t->mmaps, pid) == f->changes;
		*text = current ? f->text : NULL;
		*len = f->len;
		if (current)
			pr_debug("maps of pid %u: its notice's, taken %.1f ms ago\n", pid,
				 (double)(mono_ns() - f->taken_ns) / 1e6);
		else
			free(f->text);
		f->text = NULL;
		return current;
	}
	return false;
}

int proc_table__maps(struct proc_table *t, uint32_t pid, uint64_t start, char **text, size_t *len,
		     bool *remembered)
{
	const char *kept;
	int err;

	*remembered = false;
	/* a notice's maps, just read (remembered already, by proc_table__take_captured) */
	if (start && t->mmaps && take_fresh(t, pid, start, text, len))
		return 0;
	err = proc_table__read_maps(t->proc_dir, pid, text, len);
	if (!err && (!*len || !proc_table__same(t, pid, start))) {
		free(*text);
		*text = NULL;
		err = -ESRCH;
	}
	if (!err)
		return t->maps && maps_cache__put(t->maps, pid, (uint32_t)start, *text, *len) ?
			       -ENOMEM :
			       0;
	if (err == -ENOMEM || !t->maps)
		return err;
	kept = maps_cache__get(t->maps, pid, (uint32_t)start, len);
	if (!kept || !*len)
		return err;
	*text = strdup(kept);
	if (!*text)
		return -ENOMEM;
	*remembered = true;
	return 0;
}

const char *proc_table__remembered(struct proc_table *t, uint32_t pid, uint32_t start, size_t *len)
{
	return t->maps ? maps_cache__get(t->maps, pid, start, len) : NULL;
}

int proc_table__remember(struct proc_table *t, uint32_t pid, uint32_t start, const char *text,
			 size_t len)
{
	return t->maps ? maps_cache__put(t->maps, pid, start, text, len) : -EINVAL;
}

void proc_table__new_profile(struct proc_table *t, uint64_t start_ns, uint64_t now_ns)
{
	if (!t->maps)
		return;
	maps_cache__new_profile(t->maps, start_ns);
	maps_cache__expire(t->maps, now_ns, 0, true);
}

void proc_table__reap(struct proc_table *t, uint64_t now_ns, uint64_t cut_ns)
{
	/* the notices' texts no first read took (a process that exec'd, or had no record) */
	for (size_t i = 0; i < FRESH_MAX; i++) {
		struct fresh_maps *f = &t->fresh[i];

		if (f->text && mono_ns() - f->taken_ns >= FRESH_NS) {
			free(f->text);
			f->text = NULL;
		}
	}
	if (t->unwinder)
		unwinder__reap(t->unwinder);
	if (t->maps)
		maps_cache__expire(t->maps, now_ns, cut_ns, false);
}

bool proc_table__exits_moved(struct proc_table *t)
{
	uint64_t now;
	bool moved;

	if (!t->mmaps)
		return true;
	now = mmap_events__exits(t->mmaps);
	moved = t->nr_exit_looks < 2 || now != t->exits_seen[0];
	t->exits_seen[0] = t->exits_seen[1];
	t->exits_seen[1] = now;
	t->nr_exit_looks++;
	return moved;
}

const struct maps_cache *proc_table__maps_cache(const struct proc_table *t)
{
	return t->maps;
}

void proc_table__counts(const struct proc_table *t, size_t *nr, size_t *bytes)
{
	*nr = *bytes = 0;
	if (t->maps)
		maps_cache__counts(t->maps, nr, bytes);
}

int proc_table__maps_changed(struct proc_table *t, const struct profile *p, uint32_t proc)
{
	const struct profile_process *pr = &p->procs[proc];

	if (t->sy && symbolizer__pin(t->sy, p, proc))
		return -ENOMEM;
	/* tables for the mappings, built in the background: a new process, an exec, a dlopen */
	if (t->unwinder && unwinder__queue(t->unwinder, pr->pid, pr->mappings, pr->nr_mappings))
		return -ENOMEM;
	return 0;
}

int proc_table__register(struct proc_table *t, uint32_t pid, bool now)
{
	char *text = NULL;
	size_t len = 0;
	int err;

	if (!t->unwinder)
		return 0;
	err = proc_table__read_maps(t->proc_dir, pid, &text, &len);
	if (err)
		return err;
	err = now ? unwinder__load_text(t->unwinder, pid, text, len) :
		    unwinder__queue_text(t->unwinder, pid, text, len);
	free(text);
	return err;
}

int proc_table__find_interps(struct proc_table *t, uint32_t pid, uint32_t kinds)
{
	uint64_t start = proc_table__start_time(t, pid);
	struct profile *scratch;
	char *text = NULL;
	size_t len = 0;
	bool created;
	int proc, err;

	if (!t->interps || !start)
		return 0;
	err = proc_table__read_maps(t->proc_dir, pid, &text, &len);
	if (err)
		return err;
	scratch = profile__new();
	proc = scratch ? profile__process_start(scratch, pid, (uint32_t)start, &created) : -ENOMEM;
	err = proc < 0 ? proc : procmaps__merge(scratch, (uint32_t)proc, text, len, "target");
	/* the comm the interpreters' lines name it by */
	if (err >= 0 && proc_table__comm(t, pid, start, scratch->procs[proc].comm))
		err = -ESRCH;
	if (err >= 0)
		err = interps__find_kinds(t->interps, kinds, scratch, (uint32_t)proc);
	profile__free(scratch);
	free(text);
	return err < 0 ? err : 0;
}

/*
 * The maps text of (pid, start) as remembered, merged into a profile of
 * that process alone (what the symbolizer pins from), then handed to pin or
 * adopt. Returns 0 or -errno.
 */
static int hand_to_symbolizer(struct proc_table *t, uint32_t pid, uint32_t start, const char *text,
			      size_t len, struct sym_capture *files)
{
	struct profile *scratch = profile__new();
	bool created;
	int proc, err;

	proc = scratch ? profile__process_start(scratch, pid, start, &created) : -ENOMEM;
	err = proc < 0 ? proc : procmaps__merge(scratch, (uint32_t)proc, text, len, "notice");
	/* Python found while the process lives (proc_table__set_interps) */
	if (err >= 0 && t->interps)
		err = interps__find_kinds(t->interps, 1u << INTERP_PYTHON, scratch, (uint32_t)proc);
	if (err >= 0 && t->sy)
		err = files ? symbolizer__adopt(t->sy, scratch, (uint32_t)proc, files) :
			      symbolizer__pin(t->sy, scratch, (uint32_t)proc);
	profile__free(scratch);
	return err < 0 ? err : 0;
}

/*
 * A noticed process not registered with the unwinder yet: its registration
 * starts from the maps its notice captured, before the reader meets its
 * records (a copy's request, the aggregator's first read of its maps); the
 * unwinder leaves out those that come later with the same mappings.
 * Returns 0 or -ENOMEM.
 */
static int register_noticed(struct proc_table *t, uint32_t pid, const char *text, size_t len)
{
	if (!t->unwinder || unwinder__has_proc(t->unwinder, pid))
		return 0;
	return unwinder__queue_text(t->unwinder, pid, text, len) == -ENOMEM ? -ENOMEM : 0;
}

/* Read (pid, start)'s maps now and remember them; 0 and the text as remembered, or -errno. */
static int capture(struct proc_table *t, uint32_t pid, uint32_t start, const char **text,
		   size_t *len)
{
	char *all = NULL;
	size_t n = 0;
	int err;

	if (!t->maps)
		return -ENOENT;
	err = proc_table__read_maps(t->proc_dir, pid, &all, &n);
	if (err)
		return err == -ENOENT ? -ESRCH : err;
	/* another process's now; or a zombie's (no maps left) */
	if (!n || !proc_table__same(t, pid, start)) {
		free(all);
		return -ESRCH;
	}
	err = maps_cache__put(t->maps, pid, start, all, n);
	free(all);
	if (err)
		return err;
	*text = maps_cache__get(t->maps, pid, start, len);
	return 0;
}

int proc_table__notice(struct proc_table *t, const void *data, size_t size)
{
	const struct bpfprof_notice *n = data;
	const char *text = NULL;
	size_t len = 0;
	int err;

	if (size < sizeof(*n) || n->type != BPFPROF_REC_NOTICE)
		return 0;
	err = capture(t, n->tgid, n->start, &text, &len);
	pr_debug("notice %u of pid %u: %s %.1f ms after it was sent\n", n->nr_seen, n->tgid,
		 err ? strerror(-err) : "maps read", (double)(mono_ns() - n->time_ns) / 1e6);
	if (err)
		return err == -ENOMEM ? err : 0;
	err = register_noticed(t, n->tgid, text, len);
	if (!err)
		err = hand_to_symbolizer(t, n->tgid, n->start, text, len, NULL);
	return err == -ENOMEM ? err : 0;
}

int proc_table__start_notices(struct proc_table *t, int map_fd, uint64_t jit_max_size)
{
	struct notice_thread_opts nopts = { .map_fd = map_fd,
					    .proc_dir = t->proc_dir,
					    .jit_max_size = jit_max_size,
					    .realtime = true };

	int err = notice_thread__start(&nopts, &t->notices);

	/* rechecks by the mmap events (proc_table__watch_mmaps, if they came first) */
	if (!err && t->mmaps)
		notice_thread__use_mmap_events(t->notices, t->mmaps);
	return err;
}

void proc_table__stop_notices(struct proc_table *t)
{
	notice_thread__stop(t->notices);
}

void proc_table__close_notices(struct proc_table *t)
{
	notice_thread__free(t->notices);
	t->notices = NULL;
}

struct notice_thread *proc_table__notice_thread(const struct proc_table *t)
{
	return t->notices;
}

int proc_table__take_captured(struct proc_table *t)
{
	struct notice_item *it = t->notices ? notice_thread__take(t->notices) : NULL, *next;
	int err = 0;

	for (; it; it = next) {
		const char *text = it->maps;
		size_t len = it->maps_len;

		next = it->next;
		/* a later notice of unchanged maps: those kept from its last capture stand */
		if (it->unchanged)
			text = t->maps ? maps_cache__peek(t->maps, it->pid, it->start, &len) : NULL;
		else if (!err && t->maps)
			err = maps_cache__put(t->maps, it->pid, it->start, it->maps, it->maps_len);
		if (!err && !it->unchanged)
			err = keep_fresh(t, it);
		if (!err && text)
			err = register_noticed(t, it->pid, text, len);
		/*
		 * of an unchanged one, nothing is new but Python's layout retried
		 * (python_procs__scan): only where a python3.N is mapped
		 */
		if (!err && text &&
		    (!it->unchanged || (t->interps && memmem(text, len, "python3.", 8))))
			err = hand_to_symbolizer(t, it->pid, it->start, text, len, &it->files);
		notice_item__free(it);
	}
	return err == -ENOMEM ? err : 0;
}

int proc_table__notices_wake_fd(const struct proc_table *t)
{
	return notice_thread__wake_fd(t->notices);
}

int proc_table__take_noticed(struct proc_table *t)
{
	notice_thread__drain_wake(t->notices);
	return proc_table__take_captured(t);
}

/* maps_cache's fallback: a gone process's maps rendered from its MMAP2 records */
static int maps_from_events(void *ctx, uint32_t pid, uint32_t start, char **text, size_t *len)
{
	return mmap_events__maps(ctx, pid, start, text, len);
}

void proc_table__watch_mmaps(struct proc_table *t, size_t pages)
{
	long hz = sysconf(_SC_CLK_TCK);
	int err;

	t->mmaps = mmap_events__new(MMAP_MAX_BYTES, MMAP_KEEP_NS,
				    1000000000ULL / (uint64_t)(hz > 0 ? hz : 100));
	err = t->mmaps ? mmap_events__start(t->mmaps, pages) : -ENOMEM;
	if (err) {
		pr_info("mmap events: not opened (%s): gone processes' maps only from /proc\n",
			strerror(-err));
		mmap_events__free(t->mmaps);
		t->mmaps = NULL;
		return;
	}
	if (t->maps)
		maps_cache__set_fallback(t->maps, maps_from_events, t->mmaps);
	filter_exec(t);
	/*
	 * the notices' rechecks read a process's maps only after an event of
	 * its mappings (freed before the mmap events: proc_table__free)
	 */
	notice_thread__use_mmap_events(t->notices, t->mmaps);
}

bool proc_table__watching_mmaps(const struct proc_table *t)
{
	return t->mmaps != NULL;
}

struct mmap_events *proc_table__mmap_events(const struct proc_table *t)
{
	return t->mmaps;
}

void proc_table__exec_mappings(struct proc_table *t)
{
	struct mmap_events_exec x[2 * MMAP_EVENTS_MAX_EXEC];
	size_t n = 0, i, kept = 0;
	uint32_t rule, queued = 0;
	uint64_t now;

	if (!t->mmaps || !t->unwinder)
		return;
	/* those waiting: every EXEC_WAIT_NS at most */
	if (t->nr_exec_wait) {
		now = mono_ns();
		if (now - t->exec_wait_ns >= EXEC_WAIT_NS) {
			t->exec_wait_ns = now;
			n = t->nr_exec_wait;
			memcpy(x, t->exec_wait, n * sizeof(*x));
			t->nr_exec_wait = 0;
		}
	}
	n += mmap_events__take_exec(t->mmaps, x + n, MMAP_EVENTS_MAX_EXEC, NULL);
	for (i = 0; i < n; i++) {
		uint32_t pid = x[i].pid;

		if (!unwinder__has_proc(t->unwinder, pid))
			continue;
		/*
		 * Under way: from maps read before this mapping maybe (a process
		 * registered at a sample just before its exec: collect2's child
		 * before it is ld, whose stacks all ended at their leaf), so
		 * looked at again once it is done
		 */
		if (unwinder__pending(t->unwinder, pid)) {
			if (t->nr_exec_wait + kept < MMAP_EVENTS_MAX_EXEC)
				x[kept++] = x[i];
			continue;
		}
		if (pid != queued &&
		    unwinder__rule(t->unwinder, pid, x[i].start, &rule) == -ENOENT &&
		    !proc_table__register(t, pid, false))
			queued = pid;
	}
	memcpy(t->exec_wait + t->nr_exec_wait, x, kept * sizeof(*x));
	t->nr_exec_wait += kept;
}

static const char *copies_remembered(void *ctx, uint32_t pid, uint32_t start, size_t *len)
{
	return proc_table__remembered(ctx, pid, start, len);
}

static int copies_request(void *ctx, uint32_t pid)
{
	return proc_table__register(ctx, pid, false);
}

void proc_table__copies_procs(struct proc_table *t, struct unwind_copies_procs *out)
{
	*out = (struct unwind_copies_procs){ .remembered = copies_remembered,
					     .request = copies_request,
					     .ctx = t };
}

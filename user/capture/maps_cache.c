// SPDX-License-Identifier: MIT
/*
 * The run's memory of each process's last maps (include/maps_cache.h). A
 * plain array searched from its newest end: lookups come once per new
 * process of a profile, and a pass keeps the array about as long as the
 * processes alive.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "array.h"
#include "maps_cache.h"
#include "preflight.h"
#include "proc_file.h"

/* Passes start once this many entries are held (a pass reads one /proc file per entry). */
#define MAPS_CACHE_MIN_PASS 256

struct maps_entry {
	uint32_t pid, start;
	char *text; /* owned, NUL-terminated */
	size_t len;
	uint64_t used; /* the last profile (maps_cache.profile) that put or got it */
	uint64_t gone_ns; /* when a pass first saw it exited, 0 while not */
	bool fallback_seen; /* the fallback was compared with text since it was put */
};

struct maps_cache {
	const char *proc_dir;
	struct maps_entry *e;
	size_t nr, cap, bytes;
	uint64_t profile; /* profiles started so far */
	uint64_t profile_start_ns; /* the current one's start */
	size_t next_pass; /* a pass once nr exceeds this (or forced) */
	maps_cache_fallback_fn fallback;
	void *fallback_ctx;
};

struct maps_cache *maps_cache__new(const char *proc_dir)
{
	struct maps_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->proc_dir = proc_dir;
	c->next_pass = MAPS_CACHE_MIN_PASS;
	return c;
}

void maps_cache__free(struct maps_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nr; i++)
		free(c->e[i].text);
	free(c->e);
	free(c);
}

static struct maps_entry *find(struct maps_cache *c, uint32_t pid, uint32_t start)
{
	for (size_t i = c->nr; i-- > 0;)
		if (c->e[i].pid == pid && (!start || c->e[i].start == start))
			return &c->e[i];
	return NULL;
}

/*
 * A line symbolization needs: an executable mapping (code of a file, JIT
 * code, [vdso]) or a runtime's jit-PID.dump marker (how its JIT records are
 * found, sym_jit.c), mapped readable only by some runtimes.
 */
static bool wanted_line(const char *line, size_t n)
{
	const char *sp = memchr(line, ' ', n), *base = NULL;

	if (!sp || (size_t)(sp - line) + 4 > n)
		return false;
	if (sp[3] == 'x')
		return true;
	for (const char *p = line; p < line + n; p++)
		if (*p == '/')
			base = p + 1;
	return base && line + n - base > 4 && !strncmp(base, "jit-", 4) &&
	       memmem(base, (size_t)(line + n - base), ".dump", 5);
}

int maps_cache__put(struct maps_cache *c, uint32_t pid, uint32_t start, const char *text,
		    size_t len)
{
	struct maps_entry *e = find(c, pid, start);
	size_t n = 0, off = 0;
	char *kept = malloc(len + 1);

	if (!kept)
		return -ENOMEM;
	while (off < len) {
		const char *nl = memchr(text + off, '\n', len - off);
		size_t line = nl ? (size_t)(nl - text - off) + 1 : len - off;

		if (wanted_line(text + off, line - (nl != NULL))) {
			memcpy(kept + n, text + off, line);
			n += line;
		}
		off += line;
	}
	kept[n] = '\0';
	/* the kept lines only, not the whole text's block */
	{
		char *shrunk = realloc(kept, n + 1);

		if (shrunk)
			kept = shrunk;
	}
	if (!e || (start && e->start != start)) {
		if (array__grow((void **)&c->e, &c->cap, c->nr + 1, sizeof(*c->e))) {
			free(kept);
			return -ENOMEM;
		}
		e = &c->e[c->nr++];
		memset(e, 0, sizeof(*e));
		e->pid = pid;
		e->start = start;
	} else {
		c->bytes -= e->len;
		free(e->text);
	}
	e->text = kept;
	e->len = n;
	e->used = c->profile;
	e->gone_ns = 0; /* its maps were just read: alive */
	e->fallback_seen = false;
	c->bytes += n;
	return 0;
}

void maps_cache__set_fallback(struct maps_cache *c, maps_cache_fallback_fn fn, void *ctx)
{
	c->fallback = fn;
	c->fallback_ctx = ctx;
}

/* Executable mapping lines in text (kept lines: the others are jit-*.dump markers) */
static size_t exec_lines(const char *text, size_t len)
{
	size_t n = 0, off = 0;

	while (off < len) {
		const char *nl = memchr(text + off, '\n', len - off);
		size_t line = nl ? (size_t)(nl - text - off) + 1 : len - off;
		const char *sp = memchr(text + off, ' ', line);

		n += sp && (size_t)(sp - text - off) + 4 <= line && sp[3] == 'x';
		off += line;
	}
	return n;
}

/*
 * The fallback's text where it has more executable mappings than e's (or
 * e is NULL), with e's jit-*.dump lines after it: the kept text may be a
 * read at a notice while the process was still in its dynamic loader (the
 * notices' thread reads that early), its libraries mapped after it and the
 * process gone before another read; the fallback (its MMAP2 records) saw
 * them. Returns 1 with *text malloc'd, 0 (keep e), or -errno.
 */
static int better_fallback(struct maps_cache *c, const struct maps_entry *e, uint32_t pid,
			   uint32_t start, char **text, size_t *len)
{
	char *t = NULL, *merged;
	size_t n = 0, off = 0;
	int err = c->fallback(c->fallback_ctx, pid, start, &t, &n);

	if (err || (e && exec_lines(t, n) <= exec_lines(e->text, e->len))) {
		free(t);
		return err == -ENOMEM ? err : 0;
	}
	merged = realloc(t, n + (e ? e->len : 0) + 1);
	if (!merged) {
		free(t);
		return -ENOMEM;
	}
	while (e && off < e->len) {
		const char *nl = memchr(e->text + off, '\n', e->len - off);
		size_t line = nl ? (size_t)(nl - e->text - off) + 1 : e->len - off;

		if (exec_lines(e->text + off, line) == 0) {
			memcpy(merged + n, e->text + off, line);
			n += line;
		}
		off += line;
	}
	merged[n] = '\0';
	*text = merged;
	*len = n;
	return 1;
}

const char *maps_cache__get(struct maps_cache *c, uint32_t pid, uint32_t start, size_t *len)
{
	struct maps_entry *e = find(c, pid, start);

	if (c->fallback && (!e || !e->fallback_seen)) {
		char *text = NULL;
		size_t n = 0;

		if (better_fallback(c, e, pid, start, &text, &n) == 1 &&
		    !maps_cache__put(c, pid, start, text, n))
			e = find(c, pid, start);
		free(text);
		if (e)
			e->fallback_seen = true;
	}
	if (!e)
		return NULL;
	e->used = c->profile;
	*len = e->len;
	return e->text;
}

const char *maps_cache__peek(struct maps_cache *c, uint32_t pid, uint32_t start, size_t *len)
{
	struct maps_entry *e = find(c, pid, start);

	if (!e)
		return NULL;
	e->used = c->profile;
	*len = e->len;
	return e->text;
}

void maps_cache__new_profile(struct maps_cache *c, uint64_t start_ns)
{
	c->profile++;
	c->profile_start_ns = start_ns;
}

/* Whether the process of entry e has exited: reaped, a zombie without threads, or its pid reused. */
static bool exited(const struct maps_cache *c, const struct maps_entry *e)
{
	uint32_t now;

	if (proc_ident__start(c->proc_dir, e->pid, &now))
		return true;
	if (e->start && now != e->start)
		return true;
	return !preflight__process_alive_in(c->proc_dir, e->pid);
}

void maps_cache__expire(struct maps_cache *c, uint64_t now_ns, uint64_t cut_ns, bool force)
{
	size_t i, kept = 0;

	if (!force && c->nr <= c->next_pass)
		return;
	for (i = 0; i < c->nr; i++) {
		struct maps_entry *e = &c->e[i];

		if (!e->gone_ns && exited(c, e))
			e->gone_ns = now_ns;
		/*
		 * Its records are stamped before gone_ns: all in ended profiles,
		 * or all in the current one (before its cut), which has its maps
		 */
		if (e->gone_ns && (e->gone_ns <= c->profile_start_ns ||
				   (e->used == c->profile && (!cut_ns || e->gone_ns < cut_ns)))) {
			c->bytes -= e->len;
			free(e->text);
			continue;
		}
		c->e[kept++] = *e;
	}
	c->nr = kept;
	c->next_pass = 2 * kept > MAPS_CACHE_MIN_PASS ? 2 * kept : MAPS_CACHE_MIN_PASS;
}

void maps_cache__counts(const struct maps_cache *c, size_t *nr, size_t *bytes)
{
	*nr = c->nr;
	*bytes = c->bytes;
}

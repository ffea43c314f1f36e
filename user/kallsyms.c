// SPDX-License-Identifier: MIT
/*
 * /proc/kallsyms reader (see include/kallsyms.h). Each line is
 * "ADDR TYPE NAME" or "ADDR TYPE NAME\t[MODULE]" as printed by s_show() in
 * kernel/kallsyms.c, ADDR in hex without 0x. The text is parsed through a
 * bounded cursor, so it need not be NUL-terminated; malformed lines are
 * counted and skipped. Text symbols (t, T, w, W) are kept, sorted by address
 * with the preferred alias (T, then W, t, w, then file order) first at each
 * address. A symbol covers up to the next address; the last one, and the last
 * one before a change of module, cover at most KSYM_TAIL_MAX bytes, so that
 * the gap between the core kernel and the module area resolves to nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "array.h"
#include "kallsyms.h"
#include "log.h"

#define KSYM_TAIL_MAX (1ULL << 20)
#define KSYM_NO_MODULE SIZE_MAX

struct ksym {
	uint64_t addr;
	size_t name;		/* offset into ksyms.names */
	size_t module;		/* offset into ksyms.names, or KSYM_NO_MODULE */
	unsigned int rank;	/* T 3, W 2, t 1, w 0 */
	size_t seq;		/* file order, the final tie-break */
};

struct ksyms {
	struct ksym *syms;
	size_t nr_syms;
	size_t cap_syms;
	char *names;		/* NUL-terminated names back to back */
	size_t names_len;
	size_t names_cap;
	size_t nr_bad_lines;
	size_t last_module;	/* pool offset of the latest module name, reused by its run */
	bool restricted;
};

static int pool_add(struct ksyms *ks, const char *s, size_t len, size_t *off)
{
	int err;

	if (len >= SIZE_MAX - ks->names_len)
		return -ENOMEM;
	err = array__grow((void **)&ks->names, &ks->names_cap, ks->names_len + len + 1, 1);
	if (err)
		return err;
	memcpy(ks->names + ks->names_len, s, len);
	ks->names[ks->names_len + len] = '\0';
	*off = ks->names_len;
	ks->names_len += len + 1;
	return 0;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static const char *skip_blanks(const char *p, const char *end)
{
	while (p < end && is_blank(*p))
		p++;
	return p;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

struct ksym_line {
	uint64_t addr;
	char type;
	const char *name;
	size_t name_len;
	const char *module;	/* without brackets; NULL for the core kernel */
	size_t module_len;
};

/* Parse one line [p, end) without its newline; false when malformed. */
static bool parse_line(const char *p, const char *end, struct ksym_line *l)
{
	int digits = 0, d;

	memset(l, 0, sizeof(*l));
	for (; p < end && (d = hex_digit(*p)) >= 0; p++) {
		if (++digits > 16)
			return false;
		l->addr = l->addr << 4 | (unsigned int)d;
	}
	if (!digits || p == end || !is_blank(*p))
		return false;
	p = skip_blanks(p, end);
	if (p == end || is_blank(*p) || *p == '\0')
		return false;
	l->type = *p++;
	if (p == end || !is_blank(*p))
		return false;
	p = skip_blanks(p, end);
	l->name = p;
	while (p < end && !is_blank(*p) && *p != '\0')
		p++;
	l->name_len = p - l->name;
	if (!l->name_len)
		return false;
	p = skip_blanks(p, end);
	if (p == end)
		return true;
	if (*p != '[')
		return false;
	l->module = ++p;
	while (p < end && *p != ']' && !is_blank(*p) && *p != '\0')
		p++;
	l->module_len = p - l->module;
	if (p == end || *p != ']' || !l->module_len)
		return false;
	p = skip_blanks(p + 1, end);
	return p == end;
}

static int type_rank(char type)
{
	switch (type) {
	case 'T':
		return 3;
	case 'W':
		return 2;
	case 't':
		return 1;
	case 'w':
		return 0;
	default:
		return -1;	/* not text */
	}
}

/* Address ascending; within an address the preferred alias first. */
static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return 0;
}

static int add_sym(struct ksyms *ks, const struct ksym_line *l, int rank)
{
	struct ksym *s;
	int err;

	err = array__grow((void **)&ks->syms, &ks->cap_syms, ks->nr_syms + 1, sizeof(*ks->syms));
	if (err)
		return err;
	s = &ks->syms[ks->nr_syms];
	s->addr = l->addr;
	s->rank = rank;
	s->seq = ks->nr_syms;
	s->module = KSYM_NO_MODULE;
	err = pool_add(ks, l->name, l->name_len, &s->name);
	if (err || !l->module)
		goto out;
	/* Module symbols come in runs: store each module name once per run. */
	if (ks->last_module != KSYM_NO_MODULE &&
	    !strncmp(ks->names + ks->last_module, l->module, l->module_len) &&
	    ks->names[ks->last_module + l->module_len] == '\0') {
		s->module = ks->last_module;
	} else {
		err = pool_add(ks, l->module, l->module_len, &s->module);
		ks->last_module = s->module;
	}
out:
	if (err)
		return err;
	ks->nr_syms++;
	return 0;
}

struct ksyms *ksyms__parse(const char *text, size_t len)
{
	const char *p = text, *end = text + len, *eol;
	size_t nr_lines = 0;
	bool any_addr = false;
	struct ksym_line l;
	struct ksyms *ks;
	int rank, err = 0;

	ks = calloc(1, sizeof(*ks));
	if (!ks) {
		errno = ENOMEM;
		return NULL;
	}
	ks->last_module = KSYM_NO_MODULE;
	while (p < end) {
		eol = memchr(p, '\n', end - p);
		if (!eol)
			eol = end;
		if (skip_blanks(p, eol) == eol) {
			/* blank line: nothing to parse, nothing wrong */
		} else if (!parse_line(p, eol, &l)) {
			ks->nr_bad_lines++;
		} else {
			nr_lines++;
			any_addr |= l.addr != 0;
			rank = type_rank(l.type);
			if (rank >= 0) {
				err = add_sym(ks, &l, rank);
				if (err)
					goto out_free;
			}
		}
		p = eol + 1;
	}
	if (ks->nr_bad_lines)
		pr_debug("kallsyms: skipped %zu malformed lines\n", ks->nr_bad_lines);
	if (nr_lines && !any_addr) {
		/* kptr_restrict: every address printed as 0, nothing can resolve */
		ks->restricted = true;
		ks->nr_syms = 0;
		return ks;
	}
	if (ks->nr_syms)
		qsort(ks->syms, ks->nr_syms, sizeof(*ks->syms), ksym_cmp);
	return ks;

out_free:
	ksyms__free(ks);
	pr_warn("kallsyms: out of memory after %zu lines\n", nr_lines);
	errno = -err;
	return NULL;
}

struct ksyms *ksyms__load(const char *path)
{
	size_t len = 0, cap = 0;
	struct ksyms *ks;
	char *buf = NULL;
	ssize_t n;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		pr_warn("kallsyms: failed to open '%s': %s\n", path, strerror(-err));
		errno = -err;
		return NULL;
	}
	/* /proc/kallsyms reports st_size 0: read until EOF. */
	for (;;) {
		err = array__grow((void **)&buf, &cap, len + 65536, 1);
		if (err)
			goto out_free;
		n = read(fd, buf + len, cap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			pr_warn("kallsyms: read of '%s' failed: %s\n", path, strerror(-err));
			goto out_free;
		}
		if (n == 0)
			break;
		len += n;
	}
	close(fd);
	ks = ksyms__parse(buf, len);
	err = ks ? 0 : -errno;
	free(buf);
	if (err)
		errno = -err;
	return ks;

out_free:
	free(buf);
	close(fd);
	errno = -err;
	return NULL;
}

void ksyms__free(struct ksyms *ks)
{
	if (!ks)
		return;
	free(ks->syms);
	free(ks->names);
	free(ks);
}

const char *ksyms__lookup(const struct ksyms *ks, uint64_t addr, uint64_t *off, const char **module)
{
	size_t lo = 0, hi = ks->nr_syms, mid, first;
	const struct ksym *s;
	uint64_t end;

	/* hi: first symbol above addr; the candidate address group ends before it */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (ks->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	first = lo - 1;
	while (first && ks->syms[first - 1].addr == ks->syms[lo - 1].addr)
		first--;
	s = &ks->syms[first];
	if (lo == ks->nr_syms || ks->syms[lo].module != s->module) {
		/* Module offsets differ per module; compare the names. */
		if (lo == ks->nr_syms || ks->syms[lo].module == KSYM_NO_MODULE ||
		    s->module == KSYM_NO_MODULE ||
		    strcmp(ks->names + ks->syms[lo].module, ks->names + s->module)) {
			end = s->addr + KSYM_TAIL_MAX;
			if (end < s->addr)
				end = UINT64_MAX;
			if (lo < ks->nr_syms && ks->syms[lo].addr < end)
				end = ks->syms[lo].addr;
			if (addr >= end)
				return NULL;
		}
	}
	if (off)
		*off = addr - s->addr;
	if (module)
		*module = s->module == KSYM_NO_MODULE ? NULL : ks->names + s->module;
	return ks->names + s->name;
}

uint64_t ksyms__addr(const struct ksyms *ks, const char *name)
{
	size_t i;

	for (i = 0; i < ks->nr_syms; i++) {
		if (!strcmp(ks->names + ks->syms[i].name, name))
			return ks->syms[i].addr;
	}
	return 0;
}

bool ksyms__restricted(const struct ksyms *ks)
{
	return ks->restricted;
}

size_t ksyms__count(const struct ksyms *ks)
{
	return ks->nr_syms;
}

size_t ksyms__nr_bad_lines(const struct ksyms *ks)
{
	return ks->nr_bad_lines;
}

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
 *
 * Memory: a kernel has 100 000+ text symbols and the table lives as long as
 * the profiler, so each symbol is 16 bytes (address, name offset, module
 * offset with the alias rank in its top bits) next to one pool of names, a
 * NAME that follows its "__pfx_NAME" shares that string, and the file is
 * parsed in 64 KiB chunks instead of being read whole first.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "array.h"
#include "kallsyms.h"
#include "lib_cursor.h"
#include "log.h"

#define KSYM_TAIL_MAX (1ULL << 20)
#define KSYM_CHUNK 65536
#define KSYM_PFX "__pfx_"
#define KSYM_PFX_LEN 6
/* The names pool, so that module offsets fit beside the rank in 32 bits. */
#define KSYM_POOL_MAX (1u << 30)
#define KSYM_RANK_SHIFT 30
#define KSYM_MODULE_MASK ((1u << KSYM_RANK_SHIFT) - 1)

struct ksym {
	uint64_t addr;
	/*
	 * Offset into ksyms.names. Names are appended in file order, so it
	 * also orders aliases by file order, the final tie-break.
	 */
	uint32_t name;
	/*
	 * Bits 0-29: 1 + the module name's offset into ksyms.names, 0 for the
	 * core kernel. Bits 30-31: the type rank, T 3, W 2, t 1, w 0.
	 */
	uint32_t module_rank;
};

_Static_assert(sizeof(struct ksym) == 16, "struct ksym is 16 bytes");

struct ksyms {
	struct ksym *syms;
	size_t nr_syms;
	size_t cap_syms;
	char *names; /* NUL-terminated names back to back */
	size_t names_len;
	size_t names_cap;
	size_t nr_bad_lines;
	uint32_t last_module; /* module field of the latest module symbol, reused by its run */
	uint32_t last_name; /* pool offset of the latest symbol's name */
	size_t last_name_len;
	size_t nr_lines; /* well-formed lines, text or not */
	bool any_addr; /* some line had a non-zero address */
	bool restricted;
};

static uint32_t ksym_module(const struct ksym *s)
{
	return s->module_rank & KSYM_MODULE_MASK;
}

static unsigned int ksym_rank(const struct ksym *s)
{
	return s->module_rank >> KSYM_RANK_SHIFT;
}

static int pool_add(struct ksyms *ks, const char *s, size_t len, uint32_t *off)
{
	int err;

	if (len >= KSYM_POOL_MAX - ks->names_len)
		return -E2BIG;
	err = array__grow((void **)&ks->names, &ks->names_cap, ks->names_len + len + 1, 1);
	if (err)
		return err;
	memcpy(ks->names + ks->names_len, s, len);
	ks->names[ks->names_len + len] = '\0';
	*off = (uint32_t)ks->names_len;
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

struct ksym_line {
	uint64_t addr;
	char type;
	const char *name;
	size_t name_len;
	const char *module; /* without brackets; NULL for the core kernel */
	size_t module_len;
};

/* Parse one line [p, end) without its newline; false when malformed. */
static bool parse_line(const char *p, const char *end, struct ksym_line *l)
{
	int digits;

	memset(l, 0, sizeof(*l));
	digits = lex__hex(&p, end, &l->addr);
	if (digits <= 0 || digits > 16 || p == end || !is_blank(*p))
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
		return -1; /* not text */
	}
}

/* Address ascending; within an address the preferred alias first, then file order. */
static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (ksym_rank(x) != ksym_rank(y))
		return ksym_rank(x) > ksym_rank(y) ? -1 : 1;
	if (x->name != y->name)
		return x->name < y->name ? -1 : 1;
	return 0;
}

static int add_sym(struct ksyms *ks, const struct ksym_line *l, int rank)
{
	struct ksym *s;
	uint32_t off;
	int err;

	err = array__grow((void **)&ks->syms, &ks->cap_syms, ks->nr_syms + 1, sizeof(*ks->syms));
	if (err)
		return err;
	s = &ks->syms[ks->nr_syms];
	s->addr = l->addr;
	/*
	 * Kernels with function padding list "__pfx_NAME" right before NAME,
	 * for about half of all symbols: NAME is then the tail of the string
	 * stored just before, and shares it (names stay in file order).
	 */
	if (ks->nr_syms && ks->last_name_len == l->name_len + KSYM_PFX_LEN &&
	    !memcmp(ks->names + ks->last_name, KSYM_PFX, KSYM_PFX_LEN) &&
	    !memcmp(ks->names + ks->last_name + KSYM_PFX_LEN, l->name, l->name_len)) {
		s->name = ks->last_name + KSYM_PFX_LEN;
	} else {
		err = pool_add(ks, l->name, l->name_len, &s->name);
		if (err)
			return err;
	}
	ks->last_name = s->name;
	ks->last_name_len = l->name_len;
	s->module_rank = (uint32_t)rank << KSYM_RANK_SHIFT;
	if (l->module) {
		/* Module symbols come in runs: store each module name once per run. */
		if (!ks->last_module ||
		    strncmp(ks->names + ks->last_module - 1, l->module, l->module_len) ||
		    ks->names[ks->last_module - 1 + l->module_len] != '\0') {
			err = pool_add(ks, l->module, l->module_len, &off);
			if (err)
				return err;
			ks->last_module = off + 1;
		}
		s->module_rank |= ks->last_module;
	}
	ks->nr_syms++;
	return 0;
}

/* One line [p, eol) without its newline. Returns 0 or -ENOMEM/-E2BIG. */
static int parse_one(struct ksyms *ks, const char *p, const char *eol)
{
	struct ksym_line l;
	int rank;

	if (skip_blanks(p, eol) == eol)
		return 0; /* blank line: nothing to parse, nothing wrong */
	if (!parse_line(p, eol, &l)) {
		ks->nr_bad_lines++;
		return 0;
	}
	ks->nr_lines++;
	ks->any_addr |= l.addr != 0;
	rank = type_rank(l.type);
	return rank >= 0 ? add_sym(ks, &l, rank) : 0;
}

/*
 * Parse the complete lines of [text, text + len); with `last`, the text ends
 * the file and a final line without a newline counts too. Sets *used to the
 * bytes consumed. Returns 0 or -ENOMEM/-E2BIG.
 */
static int parse_text(struct ksyms *ks, const char *text, size_t len, bool last, size_t *used)
{
	const char *p = text, *end = text + len, *eol;
	int err;

	while (p < end) {
		eol = memchr(p, '\n', end - p);
		if (!eol) {
			if (!last)
				break;
			eol = end;
		}
		err = parse_one(ks, p, eol);
		if (err)
			return err;
		p = eol < end ? eol + 1 : end;
	}
	*used = p - text;
	return 0;
}

static struct ksyms *ksyms_new(void)
{
	struct ksyms *ks = calloc(1, sizeof(*ks));

	if (!ks)
		errno = ENOMEM;
	return ks;
}

/*
 * /proc/kallsyms comes nearly sorted: a few dozen aliases out of rank order
 * and BPF programs listed after the modules. Insert those few in place
 * (binary search, one memmove each) instead of qsort's merge sort, which
 * copies the whole table; past a budget of moved entries, fall back to qsort.
 */
static void sort_nearly_sorted(struct ksym *syms, size_t n)
{
	size_t i, lo, hi, mid, budget = 4 * n + 1024;
	struct ksym x;

	for (i = 1; i < n; i++) {
		if (ksym_cmp(&syms[i - 1], &syms[i]) <= 0)
			continue;
		x = syms[i];
		for (lo = 0, hi = i; lo < hi;) { /* first entry above x */
			mid = lo + (hi - lo) / 2;
			if (ksym_cmp(&syms[mid], &x) <= 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (i - lo > budget) {
			qsort(syms, n, sizeof(*syms), ksym_cmp);
			return;
		}
		budget -= i - lo;
		memmove(&syms[lo + 1], &syms[lo], (i - lo) * sizeof(*syms));
		syms[lo] = x;
	}
}

/* After the last line: detect kptr_restrict, sort. */
static void ksyms_finish(struct ksyms *ks)
{
	if (ks->nr_bad_lines)
		pr_debug("kallsyms: skipped %zu malformed lines\n", ks->nr_bad_lines);
	if (ks->nr_lines && !ks->any_addr) {
		/* kptr_restrict: every address printed as 0, nothing can resolve */
		ks->restricted = true;
		ks->nr_syms = 0;
		free(ks->syms);
		free(ks->names);
		ks->syms = NULL;
		ks->names = NULL;
		ks->cap_syms = ks->names_len = ks->names_cap = 0;
		return;
	}
	sort_nearly_sorted(ks->syms, ks->nr_syms);
}

static struct ksyms *ksyms_fail(struct ksyms *ks, int err)
{
	if (err == -E2BIG)
		pr_warn("kallsyms: more than %u bytes of names\n", KSYM_POOL_MAX);
	else
		pr_warn("kallsyms: out of memory after %zu lines\n", ks->nr_lines);
	ksyms__free(ks);
	errno = err == -E2BIG ? EFBIG : ENOMEM;
	return NULL;
}

struct ksyms *ksyms__parse(const char *text, size_t len)
{
	struct ksyms *ks = ksyms_new();
	size_t used;
	int err;

	if (!ks)
		return NULL;
	err = parse_text(ks, text, len, true, &used);
	if (err)
		return ksyms_fail(ks, err);
	ksyms_finish(ks);
	return ks;
}

struct ksyms *ksyms__load(const char *path)
{
	size_t len = 0, cap = 0, used;
	struct ksyms *ks;
	char *buf = NULL;
	bool eof = false;
	ssize_t n;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		pr_warn("kallsyms: failed to open '%s': %s\n", path, strerror(-err));
		errno = -err;
		return NULL;
	}
	ks = ksyms_new();
	if (!ks) {
		close(fd);
		return NULL;
	}
	/*
	 * /proc/kallsyms reports st_size 0: read until EOF, a chunk at a time,
	 * carrying a line cut by the chunk end over to the next one.
	 */
	while (!eof) {
		/* a line longer than the buffer grows it */
		err = array__grow((void **)&buf, &cap,
				  !cap	     ? KSYM_CHUNK :
				  len == cap ? cap + 1 :
					       cap,
				  1);
		if (err)
			goto out_fail;
		n = read(fd, buf + len, cap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			pr_warn("kallsyms: read of '%s' failed: %s\n", path, strerror(-err));
			goto out_err;
		}
		eof = n == 0;
		len += n;
		err = parse_text(ks, buf, len, eof, &used);
		if (err)
			goto out_fail;
		memmove(buf, buf + used, len - used);
		len -= used;
	}
	free(buf);
	close(fd);
	ksyms_finish(ks);
	return ks;

out_fail:
	free(buf);
	close(fd);
	return ksyms_fail(ks, err);
out_err:
	free(buf);
	close(fd);
	ksyms__free(ks);
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
	uint32_t mod, next_mod;
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
	mod = ksym_module(s);
	next_mod = lo < ks->nr_syms ? ksym_module(&ks->syms[lo]) : 0;
	if (lo == ks->nr_syms || next_mod != mod) {
		/* Module offsets differ per module run; compare the names. */
		if (lo == ks->nr_syms || !next_mod || !mod ||
		    strcmp(ks->names + next_mod - 1, ks->names + mod - 1)) {
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
		*module = mod ? ks->names + mod - 1 : NULL;
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

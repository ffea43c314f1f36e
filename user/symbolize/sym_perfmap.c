// SPDX-License-Identifier: MIT
/*
 * /tmp/perf-PID.map reader (include/sym_perfmap.h; format from perf's
 * jit-interface.txt): "START SIZE name" per line, hex numbers with an optional
 * 0x, name to the end of the line. Lines are cut with a bounded cursor; a line
 * holding a NUL byte, a number over 64 bits or missing a field is malformed.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "lib_cursor.h"
#include "log.h"
#include "sym_perfmap.h"

/* Warn about this many malformed lines per file, then only count them. */
#define PERFMAP_MAX_WARN 5

/* Hex number at *p (< end), optional 0x; at most 64 bits (leading zeros do not count). */
static bool parse_hex(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	uint64_t x;

	if (end - s >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	if (lex__hex(&s, end, &x) <= 0)
		return false;
	*v = x;
	*p = s;
	return true;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* One line without its newline: 0 parsed into start/size/name, -EINVAL malformed. */
static int parse_line(const char *s, const char *end, uint64_t *start, uint64_t *size,
		      const char **name, size_t *name_len)
{
	if (memchr(s, '\0', (size_t)(end - s)))
		return -EINVAL;
	if (end > s && end[-1] == '\r')
		end--;
	while (s < end && is_blank(*s))
		s++;
	if (!parse_hex(&s, end, start) || s == end || !is_blank(*s))
		return -EINVAL;
	while (s < end && is_blank(*s))
		s++;
	if (!parse_hex(&s, end, size) || s == end || !is_blank(*s))
		return -EINVAL;
	/* One separator; the name keeps any further spaces, trailing ones dropped. */
	s++;
	while (end > s && is_blank(end[-1]))
		end--;
	if (s == end)
		return -EINVAL;
	*name = s;
	*name_len = (size_t)(end - s);
	return 0;
}

int perfmap__parse(const char *text, size_t len, const char *origin, struct jit_table **out,
		   struct perfmap_stats *stats)
{
	struct perfmap_stats local, *st = stats ? stats : &local;
	const char *p = text, *end = text + len;
	struct jit_table *t;
	size_t lineno = 0;

	*out = NULL;
	memset(st, 0, sizeof(*st));
	if (!origin)
		origin = "perf map";
	t = jit_table__new();
	if (!t)
		return -ENOMEM;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		const char *name;
		uint64_t start, size;
		size_t name_len;
		const char *q = p;

		lineno++;
		while (q < eol && (is_blank(*q) || *q == '\r'))
			q++;
		if (q < eol) {
			st->nr_lines++;
			if (parse_line(p, eol, &start, &size, &name, &name_len)) {
				if (st->nr_bad < PERFMAP_MAX_WARN)
					pr_warn("perf map: %s: line %zu (offset %zu): malformed, skipped\n",
						origin, lineno, (size_t)(p - text));
				st->nr_bad++;
			} else if (jit_table__add(t, start, size, 0, name, name_len)) {
				jitdump__free(t);
				return -ENOMEM;
			} else {
				st->nr_syms++;
			}
		}
		p = nl ? nl + 1 : end;
	}
	if (st->nr_bad > PERFMAP_MAX_WARN)
		pr_warn("perf map: %s: %zu malformed lines skipped in all\n", origin, st->nr_bad);
	jit_table__finish(t);
	*out = t;
	return 0;
}


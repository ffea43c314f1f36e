// SPDX-License-Identifier: MIT
/*
 * The maps text's parsing and merging into the profile (include/procmaps.h;
 * the file is read by the process table alone, proc_table.h).
 * The kernel writes each line with seq_printf in fs/proc/task_mmu.c
 * show_map_vma(); the parser accepts exactly that shape and skips anything
 * else line by line, so a damaged line costs only its own mapping.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib_cursor.h"
#include "log.h"
#include "procmaps.h"

/* Parse 1-16 hex digits in [*p, end) then `stop`; *p goes past the stop character. */
static int parse_hex(const char **p, const char *end, char stop, uint64_t *out)
{
	const char *s = *p;
	uint64_t v;
	int n = lex__hex(&s, end, &v);

	if (n <= 0 || n > 16 || s >= end || *s != stop)
		return -EINVAL;
	*p = s + 1;
	*out = v;
	return 0;
}

static int parse_line(const char *s, const char *end, struct procmaps_entry *e)
{
	uint64_t maj, min;
	int i;

	memset(e, 0, sizeof(*e));
	if (parse_hex(&s, end, '-', &e->start) || parse_hex(&s, end, ' ', &e->end))
		return -EINVAL;
	if (end - s < 5 || s[4] != ' ')
		return -EINVAL;
	for (i = 0; i < 4; i++) {
		if (!s[i] || !strchr("rwxps-", s[i]))
			return -EINVAL;
		e->perms[i] = s[i];
	}
	s += 5;
	if (parse_hex(&s, end, ' ', &e->offset) || parse_hex(&s, end, ':', &maj) ||
	    parse_hex(&s, end, ' ', &min))
		return -EINVAL;
	if (s >= end || *s < '0' || *s > '9')
		return -EINVAL;
	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		if (e->inode > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		e->inode = e->inode * 10 + (uint64_t)(*s - '0');
	}
	if (s < end && *s != ' ')
		return -EINVAL;
	if (e->end < e->start || maj > UINT32_MAX || min > UINT32_MAX)
		return -EINVAL;
	e->dev_major = (uint32_t)maj;
	e->dev_minor = (uint32_t)min;
	while (s < end && *s == ' ')
		s++;
	e->path = s;
	e->path_len = (size_t)(end - s);
	return 0;
}

int procmaps__parse(const char *text, size_t len, const char *origin, procmaps_cb cb, void *ctx,
		    size_t *nr_bad)
{
	const char *p = text, *end = text + len;
	size_t line = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		struct procmaps_entry e;
		int ret;

		line++;
		if (eol > p && !parse_line(p, eol, &e)) {
			ret = cb(&e, ctx);
			if (ret)
				return ret;
		} else if (eol > p) {
			pr_warn("maps: '%s': line %zu at offset %zu: malformed mapping, skipped\n",
				origin, line, (size_t)(p - text));
			if (nr_bad)
				(*nr_bad)++;
		}
		p = nl ? nl + 1 : end;
	}
	return 0;
}

struct merge_ctx {
	struct profile *p;
	uint32_t proc;
	int added;
};

static int merge_one(const struct procmaps_entry *e, void *ctx)
{
	struct merge_ctx *mc = ctx;
	struct profile_mapping m = {
		.start = e->start,
		.end = e->end,
		.offset = e->offset,
		.inode = e->inode,
		.dev_major = e->dev_major,
		.dev_minor = e->dev_minor,
	};
	char *path;
	int ret;

	memcpy(m.perms, e->perms, sizeof(m.perms));
	path = strndup(e->path, e->path_len);
	if (!path)
		return -ENOMEM;
	m.path = profile__intern(mc->p, path);
	free(path);
	if (!m.path)
		return -ENOMEM;
	ret = profile__add_mapping(mc->p, mc->proc, &m);
	if (ret < 0)
		return ret;
	mc->added += ret;
	return 0;
}

int procmaps__merge(struct profile *p, uint32_t proc, const char *text, size_t len,
		    const char *origin)
{
	struct merge_ctx mc = { .p = p, .proc = proc };
	int err;

	err = procmaps__parse(text, len, origin, merge_one, &mc, NULL);
	return err ? err : mc.added;
}

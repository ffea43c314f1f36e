// SPDX-License-Identifier: MIT
/*
 * Folded stacks writer (include/write_folded.h), in the shape
 * stackcollapse-perf.pl --kernel --jit prints (github.com/brendangregg/FlameGraph):
 *
 *   comm;user root;...;user leaf;kernel root_[k];...;kernel leaf_[k] count
 *
 * One line per distinct folded stack: stacks that differ only in addresses
 * but fold to the same names are summed. Lines are sorted byte-wise, as the
 * perl `sort keys` of stackcollapse does. Addresses of a file that no symbol
 * covers read `DSO+0xADDR` (profile_location.addr_name), other unnamed frames
 * `[dso]` (anonymous memory, pseudo mappings) or `[unknown]`; like stackcollapse's tidy step, `;` in a
 * name becomes `:`, and line breaks become spaces, so every line parses.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "write_folded.h"

struct folded_line {
	char *text; /* "comm;frames", no count */
	uint64_t count;
};

/* Append s, keeping the line parseable: ';' would split a frame, a newline the line. */
static void put_clean(struct buf *b, const char *s, size_t n)
{
	size_t i, start = 0;

	for (i = 0; i < n; i++) {
		char r;

		if (s[i] == ';')
			r = ':';
		else if (s[i] == '\n' || s[i] == '\r')
			r = ' ';
		else
			continue;
		buf__put_bytes(b, s + start, i - start);
		buf__put_bytes(b, &r, 1);
		start = i + 1;
	}
	buf__put_bytes(b, s + start, n - start);
}

static void put_frame(struct buf *b, const struct profile_location *l, bool kernel)
{
	const char *dso = l ? l->dso : NULL;

	buf__put_bytes(b, ";", 1);
	if (l && l->func && l->func[0]) {
		put_clean(b, l->func, strlen(l->func));
	} else if (l && l->addr_name) {
		put_clean(b, l->addr_name, strlen(l->addr_name));
	} else if (dso && dso[0]) {
		const char *base = strrchr(dso, '/');

		base = base ? base + 1 : dso;
		if (base[0] == '[') { /* already "[vdso]", "[kernel.kallsyms]" */
			put_clean(b, base, strlen(base));
		} else {
			buf__put_bytes(b, "[", 1);
			put_clean(b, base, strlen(base));
			buf__put_bytes(b, "]", 1);
		}
	} else {
		buf__put_bytes(b, "[unknown]", 9);
	}
	if (kernel)
		buf__put_bytes(b, "_[k]", 4);
	else if (l && l->is_jit)
		buf__put_bytes(b, "_[j]", 4);
}

static const struct profile_location *frame_loc(const struct profile *p,
						const struct profile_stack *s, size_t j)
{
	if (!s->locs || s->locs[j] >= p->nr_locs)
		return NULL;
	return &p->locs[s->locs[j]];
}

/* The folded text of one stack, without the count, as a NUL-terminated string. */
static char *fold_stack(const struct profile *p, const struct profile_stack *s)
{
	struct buf b = { 0 };
	const char *comm = "";
	size_t j, comm_len = 0;

	if (s->proc < p->nr_procs) {
		comm = p->procs[s->proc].comm;
		comm_len = strnlen(comm, PROFILE_COMM_LEN);
	}
	if (comm_len)
		put_clean(&b, comm, comm_len);
	else
		buf__put_bytes(&b, "[unknown]", 9);
	/* ips are leaf first: user root..leaf is the user part backwards, then the kernel part */
	for (j = (size_t)s->nr_kernel + s->nr_user; j-- > s->nr_kernel;)
		put_frame(&b, frame_loc(p, s, j), false);
	for (j = s->nr_kernel; j-- > 0;)
		put_frame(&b, frame_loc(p, s, j), true);
	buf__put_bytes(&b, "", 1);
	if (b.err) {
		buf__free(&b);
		return NULL;
	}
	return (char *)b.data;
}

static int cmp_line(const void *a, const void *b)
{
	/* strcmp compares as unsigned char: perl's default string order */
	return strcmp(((const struct folded_line *)a)->text, ((const struct folded_line *)b)->text);
}

int write_folded(const struct profile *p, struct buf *out)
{
	struct folded_line *lines;
	size_t i, n = 0;
	int err = 0;

	lines = calloc(p->nr_stacks ? p->nr_stacks : 1, sizeof(*lines));
	if (!lines)
		return out->err = -ENOMEM;
	for (i = 0; i < p->nr_stacks; i++) {
		if (!profile__weight(p, &p->stacks[i]))
			continue;
		lines[n].text = fold_stack(p, &p->stacks[i]);
		if (!lines[n].text) {
			err = -ENOMEM;
			goto out_free;
		}
		lines[n++].count = profile__weight(p, &p->stacks[i]);
	}
	qsort(lines, n, sizeof(*lines), cmp_line);
	for (i = 0; i < n; i++) {
		uint64_t count = lines[i].count;

		while (i + 1 < n && !strcmp(lines[i].text, lines[i + 1].text))
			count += lines[++i].count;
		buf__printf(out, "%s %llu\n", lines[i].text, (unsigned long long)count);
	}
	err = out->err;

out_free:
	for (i = 0; i < n; i++)
		free(lines[i].text);
	free(lines);
	if (err)
		out->err = err;
	return err;
}

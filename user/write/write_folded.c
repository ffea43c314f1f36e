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
#include "array.h"
#include "lib_hashmap.h"
#include "write_folded.h"

/*
 * A line is a sequence of ids of distinct texts (struct folder.texts): the
 * cleaned comm, then ";frame" texts with their suffixes. A frame's text is
 * built once per location, and lines are compared and written from the ids:
 * deep stacks share most of their frames, and their lines most of their
 * bytes.
 */
struct folded_line {
	uint32_t start, nr; /* its ids: folder.ids[start..start + nr) */
	uint64_t count;
};

struct folder {
	struct strset texts; /* owned copies */
	uint32_t *lens; /* strlen of each text */
	size_t cap_lens;
	uint32_t *loc_ids[2]; /* a location's text id as a user [0] or kernel [1] frame; NONE before */
	uint32_t *ids; /* every line's ids, one after the other */
	size_t nr_ids, cap_ids;
};

#define NONE UINT32_MAX

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

/* The id of the text in b (consumed), added when new; NONE on ENOMEM. */
static uint32_t text_id(struct folder *f, struct buf *b)
{
	int64_t id;

	buf__put_bytes(b, "", 1);
	id = b->err ? -ENOMEM : strset__add(&f->texts, (const char *)b->data);
	if (id >= 0 && (size_t)id >= f->cap_lens &&
	    array__grow((void **)&f->lens, &f->cap_lens, (size_t)id + 1, sizeof(*f->lens)))
		id = -ENOMEM;
	if (id >= 0)
		f->lens[id] = (uint32_t)(b->len - 1);
	b->len = 0;
	return id < 0 ? NONE : (uint32_t)id;
}

static uint32_t frame_id(struct folder *f, const struct profile *p, const struct profile_stack *s,
			 size_t j, bool kernel, struct buf *scratch)
{
	const struct profile_location *l = frame_loc(p, s, j);
	uint32_t *cached = l ? &f->loc_ids[kernel][l - p->locs] : NULL;

	if (cached && *cached != NONE)
		return *cached;
	put_frame(scratch, l, kernel);
	if (!cached)
		return text_id(f, scratch);
	return *cached = text_id(f, scratch);
}

/* Append the ids of one stack's line to f->ids: comm, user root..leaf, kernel root..leaf. */
static int fold_stack(struct folder *f, const struct profile *p, const struct profile_stack *s,
		      uint32_t comm_id, struct buf *scratch)
{
	size_t j, n = 1 + (size_t)s->nr_kernel + s->nr_user;
	uint32_t *ids;

	if (array__grow((void **)&f->ids, &f->cap_ids, f->nr_ids + n, sizeof(*f->ids)))
		return -ENOMEM;
	ids = f->ids + f->nr_ids;
	*ids++ = comm_id;
	/* ips are leaf first: user root..leaf is the user part backwards, then the kernel part */
	for (j = (size_t)s->nr_kernel + s->nr_user; j-- > s->nr_kernel;)
		if ((*ids++ = frame_id(f, p, s, j, false, scratch)) == NONE)
			return -ENOMEM;
	for (j = s->nr_kernel; j-- > 0;)
		if ((*ids++ = frame_id(f, p, s, j, true, scratch)) == NONE)
			return -ENOMEM;
	f->nr_ids += n;
	return 0;
}

static uint32_t comm_id(struct folder *f, const struct profile *p, uint32_t proc,
			struct buf *scratch)
{
	const char *comm = proc < p->nr_procs ? p->procs[proc].comm : "";
	size_t comm_len = strnlen(comm, PROFILE_COMM_LEN);

	if (comm_len)
		put_clean(scratch, comm, comm_len);
	else
		buf__put_bytes(scratch, "[unknown]", 9);
	return text_id(f, scratch);
}

/*
 * The lines' byte-wise order (strcmp's, perl's default sort): the ids they
 * share give equal bytes; from the first that differ, the texts are compared
 * as one stream of bytes each.
 */
static int cmp_line(const void *a, const void *b, void *ctx)
{
	const struct folder *f = ctx;
	const struct folded_line *x = a, *y = b;
	const uint32_t *xi = f->ids + x->start, *yi = f->ids + y->start;
	uint32_t i = 0, j = 0, xo = 0, yo = 0;

	while (i < x->nr && j < y->nr && xi[i] == yi[j])
		i++, j++;
	/* compare the rest of both lines, text by text (xo, yo: bytes of the current one done) */
	while (i < x->nr && j < y->nr) {
		const char *xs = f->texts.strs[xi[i]] + xo, *ys = f->texts.strs[yi[j]] + yo;
		uint32_t xl = f->lens[xi[i]] - xo, yl = f->lens[yi[j]] - yo;
		uint32_t n = xl < yl ? xl : yl;
		int c = memcmp(xs, ys, n);

		if (c)
			return c;
		xo += n, yo += n;
		if (xo == f->lens[xi[i]])
			i++, xo = 0;
		if (yo == f->lens[yi[j]])
			j++, yo = 0;
	}
	return (i < x->nr) - (j < y->nr);
}

static bool same_line(const struct folder *f, const struct folded_line *x,
		      const struct folded_line *y)
{
	return x->nr == y->nr &&
	       !memcmp(f->ids + x->start, f->ids + y->start, x->nr * sizeof(*f->ids));
}

static void put_count(struct buf *out, uint64_t v)
{
	char tmp[24];
	size_t i = sizeof(tmp);

	tmp[--i] = '\n';
	do
		tmp[--i] = (char)('0' + v % 10);
	while (v /= 10);
	tmp[--i] = ' ';
	buf__put_bytes(out, tmp + i, sizeof(tmp) - i);
}

int write_folded(const struct profile *p, struct buf *out)
{
	struct folder f = { 0 };
	struct folded_line *lines;
	struct buf scratch = { 0 };
	uint32_t *comms = NULL;
	size_t i, k, n = 0;
	int err = -ENOMEM;

	lines = calloc(p->nr_stacks ? p->nr_stacks : 1, sizeof(*lines));
	comms = calloc(p->nr_procs + 1, sizeof(*comms));
	f.loc_ids[0] = malloc((p->nr_locs ? p->nr_locs : 1) * sizeof(uint32_t));
	f.loc_ids[1] = malloc((p->nr_locs ? p->nr_locs : 1) * sizeof(uint32_t));
	if (!lines || !comms || !f.loc_ids[0] || !f.loc_ids[1] || strset__init(&f.texts, true))
		goto out_free;
	memset(f.loc_ids[0], 0xff, p->nr_locs * sizeof(uint32_t));
	memset(f.loc_ids[1], 0xff, p->nr_locs * sizeof(uint32_t));
	/* comms[nr_procs]: a stack of no known process */
	for (i = 0; i <= p->nr_procs; i++)
		if ((comms[i] = comm_id(&f, p, (uint32_t)i, &scratch)) == NONE)
			goto out_free;
	for (i = 0; i < p->nr_stacks; i++) {
		const struct profile_stack *s = &p->stacks[i];
		uint64_t w = profile__weight(p, s);

		if (!w)
			continue;
		lines[n].start = (uint32_t)f.nr_ids;
		if (fold_stack(&f, p, s, comms[s->proc < p->nr_procs ? s->proc : p->nr_procs],
			       &scratch))
			goto out_free;
		lines[n].nr = (uint32_t)(f.nr_ids - lines[n].start);
		lines[n++].count = w;
	}
	qsort_r(lines, n, sizeof(*lines), cmp_line, &f);
	for (i = 0; i < n; i++) {
		uint64_t count = lines[i].count;

		while (i + 1 < n && same_line(&f, &lines[i], &lines[i + 1]))
			count += lines[++i].count;
		for (k = 0; k < lines[i].nr; k++) {
			uint32_t id = f.ids[lines[i].start + k];

			buf__put_bytes(out, f.texts.strs[id], f.lens[id]);
		}
		put_count(out, count);
	}
	err = out->err;

out_free:
	buf__free(&scratch);
	strset__free(&f.texts);
	free(f.lens);
	free(f.loc_ids[0]);
	free(f.loc_ids[1]);
	free(f.ids);
	free(comms);
	free(lines);
	if (err)
		out->err = err;
	return err;
}

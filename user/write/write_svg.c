// SPDX-License-Identifier: MIT
/*
 * Flame graph writer (include/write_svg.h): a self-contained interactive SVG
 * in the manner of Brendan Gregg's flamegraph.pl. The call tree is rooted at
 * "all", then the process comm, then user frames root to leaf, then kernel
 * frames; siblings are merged by name and kind and sorted by name, as
 * flamegraph.pl's sorted folded input gives them. Widths are sample counts,
 * frames narrower than MIN_WIDTH_PX are left out with their children.
 *
 * Every frame is one line:
 *
 *   <g><title>NAME (N samples, P%)</title><rect x y width height fill fg:x fg:w/><text>LABEL</text></g>
 *
 * fg:x and fg:w (namespace FG_NS) are the frame's offset and width in samples;
 * the embedded script zooms, searches and resets from them. The script sits at
 * the end of the document and calls init() itself, so the SVG also works
 * inline in an (X)HTML page. Names are XML-escaped, with bytes that are not
 * valid UTF-8 and control characters replaced by '?', so any symbol yields a
 * well-formed document.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "array.h"
#include "lib_hashmap.h"
#include "write_svg.h"

#define IMAGE_WIDTH 1200
#define FRAME_HEIGHT 16
#define FONT_SIZE 12
#define FONT_WIDTH 0.59 /* average glyph width in font sizes, as flamegraph.pl */
#define XPAD 10
#define YPAD_TOP (FONT_SIZE * 4) /* title and subtitle */
#define YPAD_BOTTOM (FONT_SIZE * 2 + 10) /* details and matched line */
#define MIN_WIDTH_PX 0.1
#define FG_NS "urn:bpfprof:flamegraph"

#define NONE UINT32_MAX

enum frame_kind {
	FRAME_ROOT,
	FRAME_COMM,
	FRAME_USER,
	FRAME_KERNEL,
	FRAME_JIT,
};

struct node {
	uint32_t name; /* index into tree.names */
	uint32_t parent, first_child, next_sibling;
	uint32_t last_child; /* the child tree_child() gave last: stacks share long prefixes */
	uint32_t depth;
	uint8_t kind;
	uint64_t count;
	uint64_t offset; /* samples left of this frame, set by layout() */
};

/*
 * A distinct frame name, with what drawing it needs, computed once for all
 * the frames that bear it: its XML-escaped form and its colour's hashes.
 */
struct name {
	size_t esc_off; /* XML-escaped, at tree.esc.data + esc_off */
	size_t len, esc_len; /* bytes of the name, of its escaped form */
	size_t chars; /* UTF-8 characters of the name */
	double v1, v2; /* namehash() forwards and backwards */
};

struct tree {
	struct node *nodes;
	size_t nr_nodes, cap_nodes;
	struct idxmap map; /* node indices by (parent, kind, name); the root is not in it */
	struct strset strs; /* the distinct names, borrowed (from the profile or owned[]) */
	struct name *names; /* parallel to strs.strs, filled by draw_names() */
	/*
	 * Every name's escaped form, end to end: one buffer, not one
	 * allocation a name (a buffer of its own each was 4 KiB of fresh
	 * memory a name: page faults were a quarter of the writer's time)
	 */
	struct buf esc;
	char **owned; /* "[dso]" names made here */
	size_t nr_owned, cap_owned;
};

static uint32_t node_hash(uint32_t parent, uint8_t kind, uint32_t name)
{
	return (uint32_t)(hash__mix64(((uint64_t)parent << 32 | name) ^ ((uint64_t)kind << 61)) >>
			  32);
}

static const char *name_of(const struct tree *t, const struct node *n)
{
	return t->strs.strs[n->name];
}

static uint32_t node_hash_of(void *ctx, uint32_t idx)
{
	const struct node *n = &((struct tree *)ctx)->nodes[idx];

	return node_hash(n->parent, n->kind, n->name);
}

/* The child of parent with this kind and name (an id in t->strs), added when missing; NONE on ENOMEM. */
static uint32_t tree_child(struct tree *t, uint32_t parent, uint8_t kind, uint32_t name)
{
	uint32_t h, pos, idx = t->nodes[parent].last_child;
	struct node *n;

	if (idx != NONE && t->nodes[idx].kind == kind && t->nodes[idx].name == name)
		return idx;
	h = node_hash(parent, kind, name);
	idxmap__for_each(&t->map, h, pos) {
		n = &t->nodes[t->map.slots[pos]];
		if (n->parent == parent && n->kind == kind && n->name == name)
			return t->nodes[parent].last_child = t->map.slots[pos];
	}
	if (t->nr_nodes >= UINT32_MAX / 4 ||
	    array__grow((void **)&t->nodes, &t->cap_nodes, t->nr_nodes + 1, sizeof(*t->nodes)))
		return NONE;
	if (idxmap__reserve(&t->map, node_hash_of, t))
		return NONE;
	idx = (uint32_t)t->nr_nodes++;
	n = &t->nodes[idx];
	*n = (struct node){
		.name = name,
		.parent = parent,
		.first_child = NONE,
		.last_child = NONE,
		.next_sibling = t->nodes[parent].first_child,
		.depth = t->nodes[parent].depth + 1,
		.kind = kind,
	};
	t->nodes[parent].first_child = idx;
	t->nodes[parent].last_child = idx;
	idxmap__insert(&t->map, h, idx);
	return idx;
}

static void tree_free(struct tree *t)
{
	size_t i;

	for (i = 0; i < t->nr_owned; i++)
		free(t->owned[i]);
	free(t->owned);
	free(t->names);
	buf__free(&t->esc);
	strset__free(&t->strs);
	free(t->nodes);
	idxmap__free(&t->map);
}

/* "[name]" for a frame with no symbol, after stackcollapse-perf.pl: the DSO's base name. */
static const char *bracketed(struct tree *t, const char *dso)
{
	const char *base = strrchr(dso, '/');
	size_t n;
	char *s;

	base = base ? base + 1 : dso;
	n = strlen(base);
	if (array__grow((void **)&t->owned, &t->cap_owned, t->nr_owned + 1, sizeof(*t->owned)))
		return NULL;
	s = malloc(n + 3);
	if (!s)
		return NULL;
	s[0] = '[';
	memcpy(s + 1, base, n);
	s[n + 1] = ']';
	s[n + 2] = '\0';
	t->owned[t->nr_owned++] = s;
	return s;
}

/* The id of a name in t->strs, added when new; negative on ENOMEM. */
static int64_t name_id(struct tree *t, const char *s)
{
	return s ? strset__add(&t->strs, s) : -ENOMEM;
}

/* Name (an id in t->strs) and kind of every location, computed once: names[i], kinds[i]. */
static int name_locs(const struct profile *p, struct tree *t, uint32_t *names, uint8_t *kinds)
{
	size_t i;

	for (i = 0; i < p->nr_locs; i++) {
		const struct profile_location *l = &p->locs[i];
		int64_t id;

		kinds[i] = l->is_jit			  ? FRAME_JIT :
			   l->proc == PROFILE_KERNEL_PROC ? FRAME_KERNEL :
							    FRAME_USER;
		if (l->func && l->func[0])
			id = name_id(t, l->func);
		else if (l->addr_name)
			id = name_id(t, l->addr_name);
		else if (l->dso && l->dso[0])
			id = name_id(t, bracketed(t, l->dso));
		else
			id = name_id(t, "[unknown]");
		if (id < 0)
			return -ENOMEM;
		names[i] = (uint32_t)id;
	}
	return 0;
}

static int add_frame(struct tree *t, uint32_t *at, const struct profile *p,
		     const struct profile_stack *s, unsigned i, const uint32_t *names,
		     const uint8_t *kinds, uint32_t unknown, uint64_t count)
{
	uint32_t loc = s->locs ? s->locs[i] : NONE;
	bool kernel = i < s->nr_kernel;
	uint32_t name = unknown;
	uint8_t kind = kernel ? FRAME_KERNEL : FRAME_USER;

	if (loc < p->nr_locs) {
		name = names[loc];
		kind = kinds[loc];
	}
	*at = tree_child(t, *at, kind, name);
	if (*at == NONE)
		return -ENOMEM;
	t->nodes[*at].count += count;
	return 0;
}

static int build_tree(const struct profile *p, struct tree *t)
{
	uint32_t *names = calloc(p->nr_locs ? p->nr_locs : 1, sizeof(*names));
	uint32_t *comms = calloc(p->nr_procs ? p->nr_procs : 1, sizeof(*comms));
	uint8_t *kinds = calloc(p->nr_locs ? p->nr_locs : 1, sizeof(*kinds));
	int64_t root, unknown;
	size_t i, frames = 1;
	int err = -ENOMEM;

	/*
	 * Room for about as many nodes as the tree will have, made once: grown
	 * from a few, the map re-placed every node at each doubling, a read of
	 * its node each (cache misses: a sixth of the writer's time). Deep
	 * stacks share most of their frames: clang++'s 335,000 frames made
	 * 73,000 nodes; more are grown into as before.
	 */
	for (i = 0; i < p->nr_stacks; i++)
		frames += 1 + (size_t)p->stacks[i].nr_kernel + p->stacks[i].nr_user;
	if (!names || !comms || !kinds || strset__init(&t->strs, false) ||
	    idxmap__init(&t->map, frames / 4 > 512 ? frames / 4 : 512) ||
	    array__grow((void **)&t->nodes, &t->cap_nodes, frames / 4 > 1 ? frames / 4 : 1,
			sizeof(*t->nodes)))
		goto out_free;
	root = name_id(t, "all");
	unknown = name_id(t, "[unknown]");
	if (root < 0 || unknown < 0)
		goto out_free;
	for (i = 0; i < p->nr_procs; i++) {
		int64_t id = name_id(t, p->procs[i].comm);

		if (id < 0)
			goto out_free;
		comms[i] = (uint32_t)id;
	}
	t->nodes[0] = (struct node){ .name = (uint32_t)root,
				     .parent = NONE,
				     .first_child = NONE,
				     .last_child = NONE,
				     .next_sibling = NONE,
				     .kind = FRAME_ROOT };
	t->nr_nodes = 1;
	err = name_locs(p, t, names, kinds);
	if (err)
		goto out_free;
	for (i = 0; i < p->nr_stacks; i++) {
		const struct profile_stack *s = &p->stacks[i];
		uint32_t at = 0;
		unsigned j;

		uint64_t w = profile__weight(p, s);

		if (!w)
			continue;
		t->nodes[0].count += w;
		err = -ENOMEM;
		at = tree_child(t, 0, FRAME_COMM,
				s->proc < p->nr_procs ? comms[s->proc] : (uint32_t)unknown);
		if (at == NONE)
			goto out_free;
		t->nodes[at].count += w;
		/* user frames root to leaf, then kernel frames root to leaf */
		for (j = (unsigned)s->nr_kernel + s->nr_user; j-- > s->nr_kernel;)
			if ((err = add_frame(t, &at, p, s, j, names, kinds, (uint32_t)unknown, w)))
				goto out_free;
		for (j = s->nr_kernel; j-- > 0;)
			if ((err = add_frame(t, &at, p, s, j, names, kinds, (uint32_t)unknown, w)))
				goto out_free;
	}
	err = 0;
out_free:
	free(names);
	free(comms);
	free(kinds);
	return err;
}

static int cmp_node_name(const void *a, const void *b, void *ctx)
{
	const struct tree *t = ctx;
	const struct node *x = &t->nodes[*(const uint32_t *)a],
			  *y = &t->nodes[*(const uint32_t *)b];
	int c = x->name == y->name ? 0 : strcmp(name_of(t, x), name_of(t, y));

	return c ? c : (x->kind > y->kind) - (x->kind < y->kind);
}

/*
 * Sort every node's children by name and give each frame its offset in
 * samples. Children are created after their parent, so one forward pass over
 * the nodes visits parents first.
 */
static int layout(struct tree *t)
{
	uint32_t *kids = NULL;
	size_t cap = 0, i;

	for (i = 0; i < t->nr_nodes; i++) {
		struct node *n = &t->nodes[i];
		uint64_t off = n->offset;
		size_t nr = 0, k;
		uint32_t c;

		for (c = n->first_child; c != NONE; c = t->nodes[c].next_sibling) {
			if (array__grow((void **)&kids, &cap, nr + 1, sizeof(*kids))) {
				free(kids);
				return -ENOMEM;
			}
			kids[nr++] = c;
		}
		if (nr > 1)
			qsort_r(kids, nr, sizeof(*kids), cmp_node_name, t);
		n->first_child = nr ? kids[0] : NONE;
		for (k = 0; k < nr; k++) {
			struct node *child = &t->nodes[kids[k]];

			child->next_sibling = k + 1 < nr ? kids[k + 1] : NONE;
			child->offset = off;
			off += child->count;
		}
	}
	free(kids);
	return 0;
}

/*
 * Decode one UTF-8 sequence at s (n bytes left). Returns its length, or 0 when
 * it is not valid UTF-8 (overlong, surrogate, above U+10FFFF, truncated).
 */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	uint32_t cp;
	size_t len, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	if (cp == 0xfffe || cp == 0xffff) /* not XML Chars */
		return 0;
	return len;
}

/* Append the first n bytes of s as XML character data or attribute text. */
static void put_escaped(struct buf *out, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, run = 0;

	while (i < n) {
		const char *rep = NULL;
		size_t len = utf8_len(u + i, n - i);

		if (len == 1) {
			switch (u[i]) {
			case '<':
				rep = "&lt;";
				break;
			case '>':
				rep = "&gt;";
				break;
			case '&':
				rep = "&amp;";
				break;
			case '"':
				rep = "&quot;";
				break;
			case '\'':
				rep = "&apos;";
				break;
			default:
				if (u[i] < 0x20 || u[i] == 0x7f)
					rep = "?";
			}
		} else if (len == 0) {
			rep = "?";
			len = 1;
		}
		if (rep) {
			buf__put_bytes(out, s + i - run, run);
			buf__put_bytes(out, rep, strlen(rep));
			run = 0;
		} else {
			run += len;
		}
		i += len;
	}
	buf__put_bytes(out, s + n - run, run);
}

/*
 * flamegraph.pl's namehash: a value in [0, 1] from the first few characters,
 * so that a name keeps its colour from one graph to the next.
 */
static double namehash(const char *name, bool reverse)
{
	double vector = 0, weight = 1, max = 1;
	size_t n = strlen(name), i;
	int mod = 10;

	for (i = 0; i < n && mod <= 12; i++) {
		unsigned char c = (unsigned char)name[reverse ? n - 1 - i : i];

		vector += (double)(c % mod) / (mod - 1) * weight;
		mod++;
		max += weight;
		weight *= 0.70;
	}
	return 1 - vector / max;
}

/*
 * Every distinct name's escaped text, length in characters and colour
 * hashes, once: a name is drawn by thousands of frames in deep stacks.
 */
static int draw_names(struct tree *t)
{
	size_t i, j;

	t->names = calloc(t->strs.nr ? t->strs.nr : 1, sizeof(*t->names));
	if (!t->names)
		return -ENOMEM;
	for (i = 0; i < t->strs.nr; i++) {
		const char *s = t->strs.strs[i];
		struct name *nm = &t->names[i];

		nm->len = strlen(s);
		for (j = 0; j < nm->len; j++)
			nm->chars += ((unsigned char)s[j] & 0xc0) != 0x80;
		nm->esc_off = t->esc.len;
		put_escaped(&t->esc, s, nm->len);
		if (t->esc.err)
			return -ENOMEM;
		nm->esc_len = t->esc.len - nm->esc_off;
		nm->v1 = namehash(s, false);
		nm->v2 = namehash(s, true);
	}
	return 0;
}

#define PUT_LIT(out, lit) buf__put_bytes(out, lit, sizeof(lit) - 1)

/*
 * The label that fits a frame w px wide, as flamegraph.pl: the whole name, or
 * its first characters and "..", or nothing below 3 characters. Counts UTF-8
 * characters, never cutting one.
 */
static void put_label(struct buf *out, const struct tree *t, const char *name, const struct name *nm,
		      double w)
{
	size_t fit = (size_t)(w / (FONT_SIZE * FONT_WIDTH)), chars = 0, i;

	if (fit < 3)
		return;
	if (nm->chars <= fit) {
		buf__put_bytes(out, t->esc.data + nm->esc_off, nm->esc_len);
		return;
	}
	/* the first fit - 2 characters */
	for (i = 0; name[i]; i++) {
		if (((unsigned char)name[i] & 0xc0) == 0x80)
			continue;
		if (chars == fit - 2)
			break;
		chars++;
	}
	put_escaped(out, name, i);
	buf__put_bytes(out, "..", 2);
}

/*
 * A frame's text up to its label is written straight into the buffer, room
 * made once (a call to buf__put_bytes a piece was a quarter of the writer's
 * instructions): at most FRAME_HEAD_MAX bytes besides its escaped name
 */
#define FIXED_MAX 330 /* "%.2f" of any double: 309 digits, the point, 2 decimals */
#define FRAME_HEAD_MAX (256 + 6 * FIXED_MAX + 8 * 20)

#define W_LIT(w, lit) (memcpy(w, lit, sizeof(lit) - 1), (w) + sizeof(lit) - 1)

static char *w_u64(char *w, uint64_t v)
{
	char tmp[20];
	size_t i = sizeof(tmp);

	do
		tmp[--i] = (char)('0' + v % 10);
	while (v /= 10);
	memcpy(w, tmp + i, sizeof(tmp) - i);
	return w + sizeof(tmp) - i;
}

/*
 * v at w as printf's "%.1f" (decimals 1) or "%.2f" (2) prints it, without
 * printf where the rounding is plain: printf rounds the exact binary value,
 * so a value within 1e-6 of a tie at the last digit goes to snprintf. At
 * most FIXED_MAX bytes.
 */
static char *w_fixed(char *w, double v, int decimals)
{
	uint64_t scale = decimals == 2 ? 100 : 10, whole, u;
	double scaled, frac;
	int n;

	if (!(v >= 0 && v < 1e7))
		goto slow;
	scaled = v * (double)scale;
	whole = (uint64_t)scaled;
	frac = scaled - (double)whole;
	if (frac > 0.5 - 1e-6 && frac < 0.5 + 1e-6)
		goto slow;
	u = whole + (frac > 0.5);
	w = w_u64(w, u / scale);
	*w++ = '.';
	if (decimals == 2)
		*w++ = (char)('0' + u % 100 / 10);
	*w++ = (char)('0' + u % 10);
	return w;
slow:
	n = snprintf(w, FIXED_MAX, "%.*f", decimals, v);
	return w + (n > 0 && n < FIXED_MAX ? n : 0);
}

/* Warm ("hot") colours for user code; kernel frames blue-green, JIT frames green. */
static char *w_fill(char *w, const struct node *n, const struct name *nm)
{
	double v1 = nm->v1, v2 = nm->v2;
	int r, g, b;

	switch (n->kind) {
	case FRAME_KERNEL:
		r = 50 + (int)(60 * v1), g = 165 + (int)(55 * v1), b = 180 + (int)(55 * v2);
		break;
	case FRAME_JIT:
		r = 50 + (int)(60 * v1), g = 200 + (int)(55 * v1), b = 50 + (int)(60 * v2);
		break;
	default:
		r = 205 + (int)(50 * v2), g = (int)(230 * v1), b = (int)(55 * v2);
		break;
	}
	w = W_LIT(w, "rgb(");
	w = w_u64(w, (uint64_t)r);
	w = W_LIT(w, ",");
	w = w_u64(w, (uint64_t)g);
	w = W_LIT(w, ",");
	w = w_u64(w, (uint64_t)b);
	return W_LIT(w, ")");
}

static void put_frame(struct buf *out, const struct tree *t, const struct node *n, uint64_t total,
		      double px_per_sample, int image_height, bool us)
{
	double x = XPAD + n->offset * px_per_sample, w = n->count * px_per_sample;
	double y = image_height - YPAD_BOTTOM - (double)(n->depth + 1) * FRAME_HEIGHT;
	const struct name *nm = &t->names[n->name];
	char *at;

	if (buf__reserve(out, nm->esc_len + FRAME_HEAD_MAX))
		return;
	at = (char *)out->data + out->len;
	at = W_LIT(at, "<g><title>");
	memcpy(at, t->esc.data + nm->esc_off, nm->esc_len);
	at += nm->esc_len;
	at = W_LIT(at, " (");
	at = w_u64(at, n->count);
	if (us) /* the off-CPU view: widths are µs blocked */
		at = W_LIT(at, " us off-CPU, ");
	else if (n->count == 1)
		at = W_LIT(at, " sample, ");
	else
		at = W_LIT(at, " samples, ");
	at = w_fixed(at, 100.0 * n->count / total, 2);
	at = W_LIT(at, "%)</title><rect x=\"");
	at = w_fixed(at, x, 2);
	at = W_LIT(at, "\" y=\"");
	at = w_fixed(at, y, 1);
	at = W_LIT(at, "\" width=\"");
	at = w_fixed(at, w, 2);
	at = W_LIT(at, "\" height=\"");
	at = w_u64(at, FRAME_HEIGHT - 1);
	at = W_LIT(at, "\" fill=\"");
	at = w_fill(at, n, nm);
	at = W_LIT(at, "\" rx=\"2\" ry=\"2\" fg:x=\"");
	at = w_u64(at, n->offset);
	at = W_LIT(at, "\" fg:w=\"");
	at = w_u64(at, n->count);
	at = W_LIT(at, "\"/><text x=\"");
	at = w_fixed(at, x + 3, 2);
	at = W_LIT(at, "\" y=\"");
	at = w_fixed(at, y + FRAME_HEIGHT - 5, 1);
	at = W_LIT(at, "\">");
	out->len = (size_t)(at - (char *)out->data);
	put_label(out, t, name_of(t, n), nm, w - 6);
	PUT_LIT(out, "</text></g>\n");
}

/* Frames drawn (wide enough), pre-order; returns the deepest depth drawn. */
static uint32_t max_drawn_depth(const struct tree *t, double px_per_sample)
{
	uint32_t max = 0;
	size_t i;

	for (i = 0; i < t->nr_nodes; i++)
		if (t->nodes[i].count * px_per_sample >= MIN_WIDTH_PX && t->nodes[i].depth > max)
			max = t->nodes[i].depth;
	return max;
}

static void put_frames(struct buf *out, const struct tree *t, double px_per_sample,
		       int image_height, bool us)
{
	uint64_t total = t->nodes[0].count;
	uint32_t i = 0;

	/* depth-first, pre-order, skipping the subtrees of frames too narrow to draw */
	while (i != NONE) {
		const struct node *n = &t->nodes[i];

		if (n->count * px_per_sample >= MIN_WIDTH_PX) {
			put_frame(out, t, n, total, px_per_sample, image_height, us);
			if (n->first_child != NONE) {
				i = n->first_child;
				continue;
			}
		}
		while (i != NONE && t->nodes[i].next_sibling == NONE)
			i = t->nodes[i].parent;
		if (i != NONE)
			i = t->nodes[i].next_sibling;
	}
}

/* The interactive part: zoom, search, details. Kept free of "]]>" (it sits in CDATA). */
static const char script[] =
	"\"use strict\";\n"
	"var FG_NS = \"" FG_NS "\";\n"
	"var frames, details, matchedtxt, unzoombtn, searchbtn, total = 0, zoomed = null, searching = false;\n"
	"function fgattr(e, n) {\n"
	"\tvar v = e.getAttributeNS(FG_NS, n);\n"
	"\tif (v === null || v === \"\") v = e.getAttribute(\"fg:\" + n);\n"
	"\treturn +v;\n"
	"}\n"
	"function frame_of(e) {\n"
	"\twhile (e && e.parentNode !== frames) e = e.parentNode;\n"
	"\treturn e;\n"
	"}\n"
	"function frame_list() { return Array.prototype.slice.call(frames.children); }\n"
	"function frame_title(g) { return g.children[0].textContent; }\n"
	"function frame_name(g) { return frame_title(g).replace(/ \\(\\d+ samples?, [\\d.]+%\\)$/, \"\"); }\n"
	"function frame_rect(g) { return g.children[1]; }\n"
	"function set_label(g, w) {\n"
	"\tvar name = frame_name(g), fit = Math.floor((w - 6) / (FONT_SIZE * FONT_WIDTH)), t = g.children[2];\n"
	"\tif (fit < 3) t.textContent = \"\";\n"
	"\telse if (name.length <= fit) t.textContent = name;\n"
	"\telse t.textContent = name.substring(0, fit - 2) + \"..\";\n"
	"}\n"
	"function place(g, x, w) {\n"
	"\tvar r = frame_rect(g);\n"
	"\tr.setAttribute(\"x\", x.toFixed(2));\n"
	"\tr.setAttribute(\"width\", w.toFixed(2));\n"
	"\tg.children[2].setAttribute(\"x\", (x + 3).toFixed(2));\n"
	"\tset_label(g, w);\n"
	"}\n"
	"function zoom(z) {\n"
	"\tvar zr = frame_rect(z), zx = fgattr(zr, \"x\"), zw = fgattr(zr, \"w\"), zy = +zr.getAttribute(\"y\");\n"
	"\tvar ratio = (WIDTH - 2 * XPAD) / zw;\n"
	"\tzoomed = z;\n"
	"\tunzoombtn.classList.remove(\"hide\");\n"
	"\tframe_list().forEach(function (g) {\n"
	"\t\tvar r = frame_rect(g), x = fgattr(r, \"x\"), w = fgattr(r, \"w\"), y = +r.getAttribute(\"y\");\n"
	"\t\tg.classList.remove(\"hide\", \"parent\");\n"
	"\t\tif (y > zy && x <= zx && x + w >= zx + zw) {\n"
	"\t\t\tg.classList.add(\"parent\");\n"
	"\t\t\tplace(g, XPAD, WIDTH - 2 * XPAD);\n"
	"\t\t} else if (y <= zy && x >= zx && x + w <= zx + zw) {\n"
	"\t\t\tplace(g, XPAD + (x - zx) * ratio, w * ratio);\n"
	"\t\t} else {\n"
	"\t\t\tg.classList.add(\"hide\");\n"
	"\t\t}\n"
	"\t});\n"
	"\tif (searching) search(searching);\n"
	"}\n"
	"function unzoom() {\n"
	"\tvar ratio = (WIDTH - 2 * XPAD) / total;\n"
	"\tzoomed = null;\n"
	"\tunzoombtn.classList.add(\"hide\");\n"
	"\tframe_list().forEach(function (g) {\n"
	"\t\tvar r = frame_rect(g);\n"
	"\t\tg.classList.remove(\"hide\", \"parent\");\n"
	"\t\tplace(g, XPAD + fgattr(r, \"x\") * ratio, fgattr(r, \"w\") * ratio);\n"
	"\t});\n"
	"\tif (searching) search(searching);\n"
	"}\n"
	"function reset_search() {\n"
	"\tframe_list().forEach(function (g) {\n"
	"\t\tvar r = frame_rect(g);\n"
	"\t\tif (r.hasAttribute(\"data-fill\")) {\n"
	"\t\t\tr.setAttribute(\"fill\", r.getAttribute(\"data-fill\"));\n"
	"\t\t\tr.removeAttribute(\"data-fill\");\n"
	"\t\t}\n"
	"\t});\n"
	"\tsearching = false;\n"
	"\tsearchbtn.textContent = \"Search\";\n"
	"\tsearchbtn.classList.remove(\"active\");\n"
	"\tmatchedtxt.textContent = \" \";\n"
	"}\n"
	"/* Highlight the frames whose name matches the regex term; show the share of samples they cover. */\n"
	"function search(term) {\n"
	"\tvar re, hits = [], cover = 0, end = -1, base = total, pct;\n"
	"\tif (term === undefined) {\n"
	"\t\tterm = window.prompt(\"Enter a search term (regexp allowed, eg: ^ext4_)\", \"\");\n"
	"\t\tif (term === null) return null;\n"
	"\t}\n"
	"\treset_search();\n"
	"\tif (!term) return null;\n"
	"\ttry { re = new RegExp(term); } catch (e) { matchedtxt.textContent = \"Invalid regex\"; return null; }\n"
	"\tframe_list().forEach(function (g) {\n"
	"\t\tvar r = frame_rect(g);\n"
	"\t\tif (!re.test(frame_name(g))) return;\n"
	"\t\tr.setAttribute(\"data-fill\", r.getAttribute(\"fill\"));\n"
	"\t\tr.setAttribute(\"fill\", \"rgb(230,0,230)\");\n"
	"\t\tif (!g.classList.contains(\"hide\")) hits.push([fgattr(r, \"x\"), fgattr(r, \"w\")]);\n"
	"\t});\n"
	"\t/* matches nest or are disjoint: count the outermost only */\n"
	"\thits.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });\n"
	"\thits.forEach(function (h) {\n"
	"\t\tif (h[0] >= end) { cover += h[1]; end = h[0] + h[1]; }\n"
	"\t\telse if (h[0] + h[1] > end) { cover += h[0] + h[1] - end; end = h[0] + h[1]; }\n"
	"\t});\n"
	"\tif (zoomed) base = fgattr(frame_rect(zoomed), \"w\");\n"
	"\tpct = base ? 100 * Math.min(cover, base) / base : 0;\n"
	"\tsearching = term;\n"
	"\tsearchbtn.textContent = \"Reset Search\";\n"
	"\tsearchbtn.classList.add(\"active\");\n"
	"\tmatchedtxt.textContent = \"Matched: \" + pct.toFixed(1) + \"%\";\n"
	"\treturn pct;\n"
	"}\n"
	"function init() {\n"
	"\tframes = document.getElementById(\"frames\");\n"
	"\tdetails = document.getElementById(\"details\");\n"
	"\tmatchedtxt = document.getElementById(\"matched\");\n"
	"\tunzoombtn = document.getElementById(\"unzoom\");\n"
	"\tsearchbtn = document.getElementById(\"search\");\n"
	"\ttotal = fgattr(frames, \"total\");\n"
	"\tframes.addEventListener(\"click\", function (ev) {\n"
	"\t\tvar g = frame_of(ev.target);\n"
	"\t\tif (g) zoom(g);\n"
	"\t});\n"
	"\tframes.addEventListener(\"mouseover\", function (ev) {\n"
	"\t\tvar g = frame_of(ev.target);\n"
	"\t\tif (g) details.textContent = \"Function: \" + frame_title(g);\n"
	"\t});\n"
	"\tframes.addEventListener(\"mouseout\", function () { details.textContent = \" \"; });\n"
	"\tunzoombtn.addEventListener(\"click\", unzoom);\n"
	"\tsearchbtn.addEventListener(\"click\", function () {\n"
	"\t\tif (searching) reset_search(); else search();\n"
	"\t});\n"
	"\twindow.addEventListener(\"keydown\", function (ev) {\n"
	"\t\tif (ev.keyCode === 114 || (ev.ctrlKey && ev.keyCode === 70)) { ev.preventDefault(); search(); }\n"
	"\t\telse if (ev.keyCode === 27 && zoomed) unzoom();\n"
	"\t});\n"
	"}\n"
	"init();\n";

static void put_text(struct buf *out, const char *id, const char *cls, const char *anchor, double x,
		     double y, const char *s)
{
	buf__printf(out, "<text id=\"%s\"", id);
	if (cls)
		buf__printf(out, " class=\"%s\"", cls);
	if (anchor)
		buf__printf(out, " text-anchor=\"%s\"", anchor);
	buf__printf(out, " x=\"%.1f\" y=\"%.1f\">", x, y);
	put_escaped(out, s, strlen(s));
	buf__printf(out, "</text>\n");
}

int write_svg(const struct profile *p, struct buf *out, const char *title)
{
	struct tree t = {};
	uint64_t total;
	double px_per_sample;
	int height, err;
	char sub[128];

	err = build_tree(p, &t);
	if (!err)
		err = layout(&t);
	if (!err)
		err = draw_names(&t);
	if (err)
		goto out_free;
	total = t.nodes[0].count;
	px_per_sample = total ? (double)(IMAGE_WIDTH - 2 * XPAD) / total : 0;
	height = YPAD_TOP + YPAD_BOTTOM +
		 FRAME_HEIGHT * (int)(total ? max_drawn_depth(&t, px_per_sample) + 1 : 1);

	buf__printf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n");
	buf__printf(out,
		    "<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		    "xmlns=\"http://www.w3.org/2000/svg\" xmlns:fg=\"" FG_NS "\">\n",
		    IMAGE_WIDTH, height, IMAGE_WIDTH, height);
	buf__printf(
		out,
		"<!-- Flame graph by bpfprof, after flamegraph.pl (Brendan Gregg). Click a frame to zoom, "
		"Search (or Ctrl-F) to highlight by regex. -->\n");
	buf__printf(
		out,
		"<defs><linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">"
		"<stop stop-color=\"#eeeeee\" offset=\"5%%\"/><stop stop-color=\"#eeeeb0\" offset=\"95%%\"/>"
		"</linearGradient></defs>\n");
	buf__printf(
		out,
		"<style type=\"text/css\">\n"
		"text { font-family: Verdana, \"DejaVu Sans\", sans-serif; font-size: %dpx; fill: #000; }\n"
		"#title { font-size: 17px; }\n"
		"#subtitle { fill: #666; }\n"
		"#search, #unzoom { cursor: pointer; }\n"
		"#search.active { fill: rgb(230,0,230); }\n"
		"#frames > g { cursor: pointer; }\n"
		"#frames > g:hover > rect { stroke: black; stroke-width: 0.5; }\n"
		"#frames text { pointer-events: none; }\n"
		".hide { display: none; }\n"
		".parent { opacity: 0.5; }\n"
		"</style>\n",
		FONT_SIZE);
	buf__printf(
		out,
		"<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"url(#background)\"/>\n",
		IMAGE_WIDTH, height);
	put_text(out, "title", NULL, "middle", IMAGE_WIDTH / 2.0, FONT_SIZE * 2,
		 title && *title ? title : "Flame Graph");
	snprintf(sub, sizeof(sub), "%llu samples", (unsigned long long)total);
	if (p->view == PROFILE_VIEW_OFFCPU)
		snprintf(sub, sizeof(sub), "%.3f s off-CPU in blocks of %llu us or more",
			 (double)total / 1e6, (unsigned long long)(p->offcpu_thresh_ns / 1000));
	else if (p->event && p->freq_hz)
		snprintf(sub, sizeof(sub), "%llu samples, %s at %u Hz", (unsigned long long)total,
			 p->event, p->freq_hz);
	else if (p->event)
		snprintf(sub, sizeof(sub), "%llu samples, %s", (unsigned long long)total, p->event);
	put_text(out, "subtitle", NULL, "middle", IMAGE_WIDTH / 2.0, FONT_SIZE * 3, sub);
	put_text(out, "unzoom", "hide", NULL, XPAD, FONT_SIZE * 2, "Reset Zoom");
	put_text(out, "search", NULL, "end", IMAGE_WIDTH - XPAD, FONT_SIZE * 2, "Search");
	put_text(out, "details", NULL, NULL, XPAD, height - YPAD_BOTTOM / 2.0 + 4,
		 total ? " " : "No samples");
	put_text(out, "matched", NULL, "end", IMAGE_WIDTH - XPAD, height - YPAD_BOTTOM / 2.0 + 4,
		 " ");

	buf__printf(out, "<g id=\"frames\" fg:total=\"%llu\">\n", (unsigned long long)total);
	if (total)
		put_frames(out, &t, px_per_sample, height, p->view == PROFILE_VIEW_OFFCPU);
	buf__printf(out, "</g>\n");
	buf__printf(out,
		    "<script type=\"text/ecmascript\"><![CDATA[\n"
		    "var WIDTH = %d, XPAD = %d, FONT_SIZE = %d, FONT_WIDTH = %g;\n",
		    IMAGE_WIDTH, XPAD, FONT_SIZE, FONT_WIDTH);
	buf__put_bytes(out, script, sizeof(script) - 1);
	buf__printf(out, "]]></script>\n</svg>\n");
	err = out->err;
out_free:
	tree_free(&t);
	return err;
}

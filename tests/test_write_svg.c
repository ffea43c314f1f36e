// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/write/write_svg.c (include/write_svg.h). Each case builds a
 * struct profile by hand (processes, mappings, stacks, then names set on the
 * resolved locations), writes the flame graph, checks that the document is
 * well-formed XML with a small checker of its own (tags balanced, attributes
 * quoted, entities known, UTF-8 valid, no control characters), and reads the
 * frames back from their one-line <g><title>…</title><rect …/><text>…</text></g>
 * form: names, sample counts, widths in proportion, stacking order (root at
 * the bottom, comm, user root to leaf, kernel), merging by name, colours by
 * kind, omission of frames under 0.1 px, escaping and the embedded script.
 * The interactive behaviour is checked in Chromium by tests/svg/check.sh.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "buf.h"
#include "profile.h"
#include "write_svg.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_FRAMES 16
#define PLOT_WIDTH 1180.0 /* 1200 px image less 10 px on each side */

struct fixture {
	struct profile *p;
	struct buf out;
	char *svg; /* out as a C string */
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	f->p = profile__new();
	if (!f->p) {
		free(f);
		return -1;
	}
	f->p->period_ns = 10000000;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	buf__free(&f->out);
	free(f->svg);
	profile__free(f->p);
	free(f);
	return 0;
}

/* ---- building profiles -------------------------------------------------- */

static uint32_t add_proc(struct profile *p, uint32_t pid, const char *comm)
{
	struct profile_mapping m = { .start = 0x400000, .end = 0x500000, .perms = "r-xp" };
	bool created;
	int idx = profile__process(p, pid, &created);

	assert_true(idx >= 0);
	snprintf(p->procs[idx].comm, sizeof(p->procs[idx].comm), "%s", comm);
	m.path = profile__intern(p, "/bin/prog");
	assert_true(profile__add_mapping(p, idx, &m) >= 0);
	return (uint32_t)idx;
}

/*
 * Add a stack given root to leaf: user addresses then kernel addresses (0
 * ends each list), as a reader would draw it; stored leaf first.
 */
static void add_stack(struct profile *p, uint32_t proc, const uint64_t *user,
		      const uint64_t *kernel, uint64_t count)
{
	uint64_t ips[2 * MAX_FRAMES];
	uint16_t nu = 0, nk = 0, n = 0, i;
	bool created;

	while (user && user[nu])
		nu++;
	while (kernel && kernel[nk])
		nk++;
	for (i = nk; i-- > 0;)
		ips[n++] = kernel[i];
	for (i = nu; i-- > 0;)
		ips[n++] = user[i];
	assert_true(profile__add_stack(p, proc, ips, nk, nu, count, count * p->period_ns,
				       &created) >= 0);
}

struct sym {
	uint64_t addr;
	const char *func; /* NULL: unsymbolized */
	const char *dso; /* NULL: unknown */
	bool is_jit;
};

/* Resolve locations and name them from syms, by address. */
static void name_locs(struct profile *p, const struct sym *syms, size_t n)
{
	size_t i, j;

	assert_int_equal(profile__resolve_locs(p), 0);
	for (i = 0; i < p->nr_locs; i++) {
		for (j = 0; j < n; j++) {
			if (syms[j].addr != p->locs[i].addr)
				continue;
			p->locs[i].func = syms[j].func ? profile__intern(p, syms[j].func) : NULL;
			p->locs[i].dso = syms[j].dso ? profile__intern(p, syms[j].dso) : NULL;
			p->locs[i].is_jit = syms[j].is_jit;
		}
	}
}

/* ---- a small XML well-formedness checker -------------------------------- */

static bool is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-' || c == ':' || c == '.';
}

/* Character data or an attribute value: valid UTF-8, no control characters, known entities only. */
static bool check_chars(const char *s, const char *end, bool attr)
{
	while (s < end) {
		unsigned char c = (unsigned char)*s;

		if (c == '<' || (attr && c == '"') || (end - s >= 3 && !strncmp(s, "]]>", 3)))
			return false;
		if (c < 0x20 && c != '\n' && c != '\t' && c != '\r')
			return false;
		if (c == '&') {
			static const char *const ents[] = { "&lt;", "&gt;", "&amp;", "&quot;",
							    "&apos;" };
			size_t k;

			for (k = 0; k < ARRAY_SIZE(ents); k++)
				if ((size_t)(end - s) >= strlen(ents[k]) &&
				    !strncmp(s, ents[k], strlen(ents[k])))
					break;
			if (k == ARRAY_SIZE(ents))
				return false;
			s += strlen(ents[k]);
			continue;
		}
		if (c >= 0x80) {
			int len = c >= 0xf0 && c <= 0xf4 ? 4 :
				  c >= 0xe0		 ? 3 :
				  c >= 0xc2 && c <= 0xdf ? 2 :
							   0;
			int i;

			if (!len || c > 0xf4 || end - s < len)
				return false;
			for (i = 1; i < len; i++)
				if (((unsigned char)s[i] & 0xc0) != 0x80)
					return false;
			s += len;
			continue;
		}
		s++;
	}
	return true;
}

/* True when doc is one well-formed element after an optional XML declaration. */
static bool xml_well_formed(const char *doc)
{
	const char *stack[64];
	size_t stack_len[64];
	int depth = 0, roots = 0;
	const char *s = doc, *end = doc + strlen(doc), *q;

	if (!strncmp(s, "<?xml", 5)) {
		q = strstr(s, "?>");
		if (!q)
			return false;
		s = q + 2;
	}
	while (s < end) {
		const char *lt = memchr(s, '<', end - s);

		if (!lt)
			lt = end;
		if (!check_chars(s, lt, false))
			return false;
		if (depth == 0)
			for (q = s; q < lt; q++)
				if (*q != ' ' && *q != '\n' && *q != '\t')
					return false;
		if (lt == end)
			break;
		s = lt;
		if (!strncmp(s, "<!--", 4)) {
			q = strstr(s + 4, "-->");
			if (!q)
				return false;
			s = q + 3;
		} else if (!strncmp(s, "<![CDATA[", 9)) {
			if (depth == 0)
				return false;
			q = strstr(s + 9, "]]>");
			if (!q)
				return false;
			s = q + 3;
		} else if (s[1] == '/') {
			size_t n = 0;

			while (is_name_char(s[2 + n]))
				n++;
			if (depth == 0 || n != stack_len[depth - 1] ||
			    strncmp(s + 2, stack[depth - 1], n) || s[2 + n] != '>')
				return false;
			depth--;
			s += 3 + n;
		} else {
			const char *name = s + 1;
			size_t n = 0;

			while (is_name_char(name[n]))
				n++;
			if (!n)
				return false;
			s = name + n;
			for (;;) {
				while (*s == ' ' || *s == '\n' || *s == '\t')
					s++;
				if (*s == '>' || (s[0] == '/' && s[1] == '>'))
					break;
				q = s;
				while (is_name_char(*s))
					s++;
				if (s == q || s[0] != '=' || s[1] != '"')
					return false;
				q = strchr(s + 2, '"');
				if (!q || !check_chars(s + 2, q, true))
					return false;
				s = q + 1;
				if (*s != ' ' && *s != '\n' && *s != '>' && *s != '/')
					return false;
			}
			if (depth == 0 && roots++)
				return false;
			if (*s == '>') {
				if (depth == (int)ARRAY_SIZE(stack))
					return false;
				stack[depth] = name;
				stack_len[depth++] = n;
				s++;
			} else {
				s += 2;
			}
		}
	}
	return depth == 0 && roots == 1;
}

/* ---- reading frames back ------------------------------------------------ */

struct frame {
	char name[256]; /* as written, XML-escaped */
	unsigned long long samples;
	double pct;
	double x, y, w;
	int r, g, b;
	unsigned long long fg_x, fg_w;
	char label[256];
};

/* Frames in document order; returns how many. */
static size_t read_frames(const char *svg, struct frame *fr, size_t max)
{
	const char *s = svg;
	size_t n = 0;

	while ((s = strstr(s, "<g><title>")) && n < max) {
		struct frame *f = &fr[n];
		const char *t = s + strlen("<g><title>"), *te = strstr(t, "</title>"), *paren;
		const char *lab, *labe;

		assert_non_null(te);
		/* "NAME (N samples, P%)": the last " (" starts the counts */
		for (paren = te; paren > t && strncmp(paren, " (", 2); paren--)
			;
		assert_true(paren > t && (size_t)(paren - t) < sizeof(f->name));
		memset(f, 0, sizeof(*f));
		memcpy(f->name, t, paren - t);
		assert_int_equal(sscanf(paren, " (%llu sample", &f->samples), 1);
		assert_int_equal(sscanf(strstr(paren, ", "), ", %lf%%)", &f->pct), 1);
		assert_int_equal(sscanf(te, "</title><rect x=\"%lf\" y=\"%lf\" width=\"%lf\"",
					&f->x, &f->y, &f->w),
				 3);
		assert_int_equal(sscanf(strstr(te, "fill=\""), "fill=\"rgb(%d,%d,%d)\"", &f->r,
					&f->g, &f->b),
				 3);
		assert_int_equal(sscanf(strstr(te, "fg:x=\""), "fg:x=\"%llu\" fg:w=\"%llu\"",
					&f->fg_x, &f->fg_w),
				 2);
		lab = strstr(te, "<text ");
		lab = strchr(lab, '>') + 1;
		labe = strstr(lab, "</text>");
		assert_true((size_t)(labe - lab) < sizeof(f->label));
		memcpy(f->label, lab, labe - lab);
		s = labe;
		n++;
	}
	return n;
}

static const struct frame *find(const struct frame *fr, size_t n, const char *name, int nth)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(fr[i].name, name) && nth-- == 0)
			return &fr[i];
	return NULL;
}

static int count_named(const struct frame *fr, size_t n, const char *name)
{
	int c = 0;
	size_t i;

	for (i = 0; i < n; i++)
		c += !strcmp(fr[i].name, name);
	return c;
}

static void write_and_check(struct fixture *f, const char *title)
{
	assert_int_equal(write_svg(f->p, &f->out, title), 0);
	assert_int_equal(f->out.err, 0);
	f->svg = strndup((const char *)f->out.data, f->out.len);
	assert_non_null(f->svg);
	assert_int_equal(strlen(f->svg), f->out.len); /* no NUL inside */
	assert_true(xml_well_formed(f->svg));
}

static int count_str(const char *hay, const char *needle)
{
	int c = 0;

	while ((hay = strstr(hay, needle))) {
		c++;
		hay += strlen(needle);
	}
	return c;
}

/* ---- the hotcold shape -------------------------------------------------- */

enum {
	MAIN = 0x401000,
	VIA_X = 0x401100,
	VIA_Y = 0x401200,
	VIA_Z = 0x401300,
	HOT_A = 0x401400,
	HOT_A2 = 0x401480,
	HOT_B = 0x401500,
	K_IRQ = 0xffffffff81000100,
	K_TICK = 0xffffffff81000200,
	JIT = 0x7e0000001000
};

static const struct sym hotcold_syms[] = {
	{ MAIN, "main", "hotcold", false },
	{ VIA_X, "via_x", "hotcold", false },
	{ VIA_Y, "via_y", "hotcold", false },
	{ VIA_Z, "via_z", "hotcold", false },
	{ HOT_A, "hot_a", "hotcold", false },
	{ HOT_A2, "hot_a", "hotcold", false },
	{ HOT_B, "hot_b", "hotcold", false },
	{ K_IRQ, "asm_sysvec_apic_timer_interrupt", "[kernel.kallsyms]", false },
	{ K_TICK, "tick_sched_timer", "[kernel.kallsyms]", false },
	{ JIT, "Lua::loop", "jit", true },
};

/*
 * hot_a 3000 (2000 via_x, of which 500 at a second address and 100 in the
 * kernel; 1000 via_y), hot_b 1000 via_z: 75 % / 25 %.
 */
static void build_hotcold(struct profile *p)
{
	uint32_t pr = add_proc(p, 100, "hotcold");

	add_stack(p, pr, (const uint64_t[]){ MAIN, VIA_X, HOT_A, 0 }, NULL, 1400);
	add_stack(p, pr, (const uint64_t[]){ MAIN, VIA_X, HOT_A2, 0 }, NULL, 500);
	add_stack(p, pr, (const uint64_t[]){ MAIN, VIA_X, HOT_A, 0 },
		  (const uint64_t[]){ K_IRQ, K_TICK, 0 }, 100);
	add_stack(p, pr, (const uint64_t[]){ MAIN, VIA_Y, HOT_A, 0 }, NULL, 1000);
	add_stack(p, pr, (const uint64_t[]){ MAIN, VIA_Z, HOT_B, 0 }, NULL, 1000);
	name_locs(p, hotcold_syms, ARRAY_SIZE(hotcold_syms));
}

static void test_hotcold_widths(void **state)
{
	struct fixture *f = *state;
	struct frame fr[64];
	const struct frame *all, *comm, *hot_a1, *hot_a2, *hot_b, *via_x, *via_y;
	size_t n;

	build_hotcold(f->p);
	write_and_check(f, "hot & cold");
	n = read_frames(f->svg, fr, ARRAY_SIZE(fr));
	/* all, hotcold, main, via_x, hot_a, irq, tick, via_y, hot_a, via_z, hot_b */
	assert_int_equal(n, 11);
	all = find(fr, n, "all", 0);
	comm = find(fr, n, "hotcold", 0);
	assert_non_null(all);
	assert_non_null(comm);
	assert_int_equal(all->samples, 4000);
	assert_int_equal(comm->samples, 4000);
	assert_true(all->w > PLOT_WIDTH - 0.01 && all->w < PLOT_WIDTH + 0.01);
	assert_true(all->x > 9.99 && all->x < 10.01);

	/* hot_a merged by name: one frame under via_x (two addresses), one under via_y */
	assert_int_equal(count_named(fr, n, "hot_a"), 2);
	assert_int_equal(count_named(fr, n, "hot_b"), 1);
	hot_a1 = find(fr, n, "hot_a", 0);
	hot_a2 = find(fr, n, "hot_a", 1);
	hot_b = find(fr, n, "hot_b", 0);
	via_x = find(fr, n, "via_x", 0);
	via_y = find(fr, n, "via_y", 0);
	assert_int_equal(hot_a1->samples + hot_a2->samples, 3000);
	assert_int_equal(hot_b->samples, 1000);
	assert_int_equal(via_x->samples, 2000);
	assert_int_equal(via_y->samples, 1000);
	assert_true((hot_a1->w + hot_a2->w) / all->w > 0.749 &&
		    (hot_a1->w + hot_a2->w) / all->w < 0.751);
	assert_true(hot_b->w / all->w > 0.249 && hot_b->w / all->w < 0.251);
	assert_true(via_x->w / via_y->w > 1.999 && via_x->w / via_y->w < 2.001);
	assert_true(hot_b->pct > 24.999 && hot_b->pct < 25.001);

	/* title text: "name (N samples, P%)" */
	assert_non_null(strstr(f->svg, "<title>hot_b (1000 samples, 25.00%)</title>"));
	assert_non_null(strstr(f->svg, "<title>all (4000 samples, 100.00%)</title>"));
	assert_non_null(strstr(f->svg, "<title>via_x (2000 samples, 50.00%)</title>"));
	/* the document title, escaped */
	assert_non_null(strstr(f->svg, ">hot &amp; cold</text>"));
	assert_non_null(strstr(f->svg, "4000 samples"));
}

static void test_hotcold_stacking(void **state)
{
	struct fixture *f = *state;
	struct frame fr[64];
	const struct frame *all, *comm, *main_, *via_x, *hot_a, *irq, *tick, *via_y, *via_z;
	size_t n;

	build_hotcold(f->p);
	write_and_check(f, NULL);
	n = read_frames(f->svg, fr, ARRAY_SIZE(fr));
	all = find(fr, n, "all", 0);
	comm = find(fr, n, "hotcold", 0);
	main_ = find(fr, n, "main", 0);
	via_x = find(fr, n, "via_x", 0);
	via_y = find(fr, n, "via_y", 0);
	via_z = find(fr, n, "via_z", 0);
	hot_a = find(fr, n, "hot_a", 0);
	irq = find(fr, n, "asm_sysvec_apic_timer_interrupt", 0);
	tick = find(fr, n, "tick_sched_timer", 0);
	assert_non_null(irq);
	assert_non_null(tick);
	/* root at the bottom, one frame height (16) per level: all, comm, user root→leaf, kernel root→leaf */
	assert_true(all->y - comm->y == 16);
	assert_true(comm->y - main_->y == 16);
	assert_true(main_->y - via_x->y == 16);
	assert_true(via_x->y - hot_a->y == 16);
	assert_true(hot_a->y - irq->y == 16);
	assert_true(irq->y - tick->y == 16);
	assert_int_equal(irq->samples, 100);
	/* children sit inside their parent, sorted by name left to right */
	assert_true(hot_a->x >= via_x->x - 0.01 &&
		    hot_a->x + hot_a->w <= via_x->x + via_x->w + 0.01);
	assert_true(irq->x >= hot_a->x - 0.01 && irq->x + irq->w <= hot_a->x + hot_a->w + 0.01);
	assert_true(via_x->x < via_y->x && via_y->x < via_z->x);
	assert_true(via_x->x + via_x->w <= via_y->x + 0.01);
	/* fg:x/fg:w are the same layout in samples */
	assert_int_equal(via_x->fg_w, 2000);
	assert_int_equal(via_y->fg_x, 2000);
	assert_int_equal(via_z->fg_x, 3000);
	assert_true(via_y->x > 10 + 2000 * PLOT_WIDTH / 4000 - 0.01 &&
		    via_y->x < 10 + 2000 * PLOT_WIDTH / 4000 + 0.01);
	assert_non_null(strstr(f->svg, "fg:total=\"4000\""));
	/* labels: whole names on wide frames */
	assert_string_equal(via_x->label, "via_x");
	assert_string_equal(main_->label, "main");
	/* the NULL title gets a default */
	assert_non_null(strstr(f->svg, ">Flame Graph</text>"));
}

static void test_colours_by_kind(void **state)
{
	struct fixture *f = *state;
	struct frame fr[64];
	const struct frame *user, *kernel, *jit;
	uint32_t pr;
	size_t n;

	pr = add_proc(f->p, 100, "hotcold");
	add_stack(f->p, pr, (const uint64_t[]){ MAIN, JIT, 0 }, (const uint64_t[]){ K_IRQ, 0 }, 10);
	name_locs(f->p, hotcold_syms, ARRAY_SIZE(hotcold_syms));
	write_and_check(f, "t");
	n = read_frames(f->svg, fr, ARRAY_SIZE(fr));
	assert_int_equal(n, 5);
	user = find(fr, n, "main", 0);
	jit = find(fr, n, "Lua::loop", 0);
	kernel = find(fr, n, "asm_sysvec_apic_timer_interrupt", 0);
	/* user: warm (red dominant, little blue); kernel: blue above red; JIT: green dominant */
	assert_true(user->r >= 205 && user->b <= 55);
	assert_true(kernel->b > kernel->r && kernel->g > kernel->r);
	assert_true(jit->g > jit->r && jit->g > jit->b);
	/* the same name keeps its colour */
	assert_non_null(strstr(f->svg, "<title>hotcold ("));
}

static void test_escaping(void **state)
{
	struct fixture *f = *state;
	static const struct sym syms[] = {
		{ 0x401000, "a<b&c\"d>'e", "prog", false },
		{ 0x401100,
		  "bad\x01"
		  "ctl\xff"
		  "utf8",
		  "prog", false },
		{ 0x401200, "caf\xc3\xa9::\xe2\x86\x92", "prog", false }, /* café::→, valid UTF-8 */
		{ 0x401300, "x]]>y", "prog", false },
	};
	uint32_t pr = add_proc(f->p, 7, "we<ird&\"");
	struct frame fr[16];
	size_t n;

	add_stack(f->p, pr, (const uint64_t[]){ 0x401000, 0x401100, 0x401200, 0x401300, 0 }, NULL,
		  5);
	name_locs(f->p, syms, ARRAY_SIZE(syms));
	write_and_check(f, "<title> & \"quotes\"");
	n = read_frames(f->svg, fr, ARRAY_SIZE(fr));
	assert_int_equal(n, 6);
	assert_non_null(find(fr, n, "we&lt;ird&amp;&quot;", 0));
	assert_non_null(find(fr, n, "a&lt;b&amp;c&quot;d&gt;&apos;e", 0));
	assert_non_null(find(fr, n, "bad?ctl?utf8", 0));
	assert_non_null(find(fr, n, "caf\xc3\xa9::\xe2\x86\x92", 0));
	assert_non_null(find(fr, n, "x]]&gt;y", 0));
	assert_non_null(strstr(f->svg, "&lt;title&gt; &amp; &quot;quotes&quot;"));
	assert_null(strstr(f->svg, "a<b"));
	assert_null(strstr(f->svg, "\xff"));
	/* labels are escaped too */
	assert_string_equal(find(fr, n, "a&lt;b&amp;c&quot;d&gt;&apos;e", 0)->label,
			    "a&lt;b&amp;c&quot;d&gt;&apos;e");
	/* exactly one CDATA section: the script never closes it early */
	assert_int_equal(count_str(f->svg, "<![CDATA["), 1);
	assert_int_equal(count_str(f->svg, "]]>"), 1);
}

static void test_narrow_frames_omitted(void **state)
{
	struct fixture *f = *state;
	static const struct sym syms[] = {
		{ 0x401000, "main", "prog", false },
		{ 0x401100, "wide", "prog", false },
		{ 0x401200, "narrow", "prog", false },
		{ 0x401300, "narrow_child", "prog", false },
		{ 0x401400, "just_enough", "prog", false },
	};
	uint32_t pr = add_proc(f->p, 7, "prog");
	struct frame fr[16];
	size_t n;

	/* 1 sample of 20000 is 0.059 px: left out with its child; 2 samples (0.118 px) stay */
	add_stack(f->p, pr, (const uint64_t[]){ 0x401000, 0x401100, 0 }, NULL, 19997);
	add_stack(f->p, pr, (const uint64_t[]){ 0x401000, 0x401200, 0x401300, 0 }, NULL, 1);
	add_stack(f->p, pr, (const uint64_t[]){ 0x401000, 0x401400, 0 }, NULL, 2);
	name_locs(f->p, syms, ARRAY_SIZE(syms));
	write_and_check(f, "t");
	n = read_frames(f->svg, fr, ARRAY_SIZE(fr));
	assert_null(find(fr, n, "narrow", 0));
	assert_null(find(fr, n, "narrow_child", 0));
	assert_non_null(find(fr, n, "just_enough", 0));
	assert_int_equal(find(fr, n, "all", 0)->samples, 20000);
	assert_int_equal(find(fr, n, "main", 0)->samples, 20000);
	/* a narrow frame gets no label; "wide" keeps its name */
	assert_string_equal(find(fr, n, "just_enough", 0)->label, "");
	assert_string_equal(find(fr, n, "wide", 0)->label, "wide");
}

static void test_labels_truncated(void **state)
{
	struct fixture *f = *state;
	static const struct sym syms[] = {
		{ 0x401000, "a_rather_long_function_name_that_cannot_fit", "prog", false },
		{ 0x401100, "other", "prog", false },
	};
	uint32_t pr = add_proc(f->p, 7, "prog");
	struct frame fr[16];
	const struct frame *lf;
	size_t n;

	/* 12 of 1000 samples: 14.2 px, room for 1 character: no label; 80 samples: 94 px, 12 chars */
	add_stack(f->p, pr, (const uint64_t[]){ 0x401000, 0 }, NULL, 80);
	add_stack(f->p, pr, (const uint64_t[]){ 0x401100, 0 }, NULL, 920);
	name_locs(f->p, syms, ARRAY_SIZE(syms));
	write_and_check(f, "t");
	n = read_frames(f->svg, fr, ARRAY_SIZE(fr));
	lf = find(fr, n, "a_rather_long_function_name_that_cannot_fit", 0);
	assert_non_null(lf);
	assert_true(strlen(lf->label) > 3 && strlen(lf->label) < 20);
	assert_string_equal(lf->label + strlen(lf->label) - 2, "..");
	assert_int_equal(strncmp(lf->label, "a_rather_long", strlen(lf->label) - 2), 0);
}

static void test_unknown_frames_and_procs(void **state)
{
	struct fixture *f = *state;
	static const struct sym syms[] = {
		{ 0x401000, "main", "prog", false },
		{ 0x401100, NULL, "/usr/lib/x86_64-linux-gnu/libc.so.6", false },
		{ K_IRQ, "asm_sysvec_apic_timer_interrupt", "[kernel.kallsyms]", false },
		/* 0x401200: no name, no dso */
	};
	uint32_t a = add_proc(f->p, 1, "prog"), b = add_proc(f->p, 2, "prog"),
		 c = add_proc(f->p, 3, "other");
	struct frame fr[16];
	size_t n;

	add_stack(f->p, a, (const uint64_t[]){ 0x401000, 0x401100, 0 }, NULL, 30);
	add_stack(f->p, b, (const uint64_t[]){ 0x401000, 0x401200, 0 }, NULL, 10);
	add_stack(f->p, c, (const uint64_t[]){ 0x401000, 0 }, NULL, 20);
	add_stack(f->p, c, NULL, (const uint64_t[]){ K_IRQ, 0 }, 40); /* kernel only */
	name_locs(f->p, syms, ARRAY_SIZE(syms));
	write_and_check(f, "t");
	n = read_frames(f->svg, fr, ARRAY_SIZE(fr));
	/* same comm merged; frames of the two pids merged under it */
	assert_int_equal(count_named(fr, n, "prog"), 1);
	assert_int_equal(find(fr, n, "prog", 0)->samples, 40);
	assert_int_equal(find(fr, n, "other", 0)->samples, 60);
	assert_int_equal(find(fr, n, "[libc.so.6]", 0)->samples, 30);
	assert_int_equal(find(fr, n, "[unknown]", 0)->samples, 10);
	/* main under prog and under other: two frames */
	assert_int_equal(count_named(fr, n, "main"), 2);
	assert_int_equal(find(fr, n, "all", 0)->samples, 100);
	/* the kernel-only stack goes straight from comm to kernel frames, colored as kernel */
	assert_true(find(fr, n, "[unknown]", 0)->y == find(fr, n, "[libc.so.6]", 0)->y);
	assert_true(find(fr, n, "other", 0)->y - find(fr, n, "[unknown]", 0)->y == 32);
	assert_true(find(fr, n, "other", 0)->y -
			    find(fr, n, "asm_sysvec_apic_timer_interrupt", 0)->y ==
		    16);
	assert_true(find(fr, n, "asm_sysvec_apic_timer_interrupt", 0)->b >
		    find(fr, n, "main", 0)->b);
}

/* Unnamed addresses of one file stay apart as "DSO+0xADDR" frames (issue 15). */
static void test_unnamed_addresses_distinct(void **state)
{
	struct fixture *f = *state;
	static const struct sym syms[] = {
		{ 0x401000, "main", "prog", false },
		{ 0x7f0000015bc9, NULL, "liblzma.so.5.4.1", false },
		{ 0x7f000001692b, NULL, "liblzma.so.5.4.1", false },
	};
	uint32_t a = add_proc(f->p, 1, "xz");
	struct frame fr[16];
	size_t i, n;

	add_stack(f->p, a, (const uint64_t[]){ 0x401000, 0x7f0000015bc9, 0 }, NULL, 30);
	add_stack(f->p, a, (const uint64_t[]){ 0x401000, 0x7f000001692b, 0 }, NULL, 10);
	name_locs(f->p, syms, ARRAY_SIZE(syms));
	for (i = 0; i < f->p->nr_locs; i++) {
		struct profile_location *l = &f->p->locs[i];

		if (l->addr == 0x7f0000015bc9)
			l->addr_name = profile__intern(f->p, "liblzma.so.5.4.1+0x15bc9");
		else if (l->addr == 0x7f000001692b)
			l->addr_name = profile__intern(f->p, "liblzma.so.5.4.1+0x1692b");
	}
	write_and_check(f, "t");
	n = read_frames(f->svg, fr, ARRAY_SIZE(fr));
	assert_int_equal(find(fr, n, "liblzma.so.5.4.1+0x15bc9", 0)->samples, 30);
	assert_int_equal(find(fr, n, "liblzma.so.5.4.1+0x1692b", 0)->samples, 10);
	assert_int_equal(count_named(fr, n, "[liblzma.so.5.4.1]"), 0);
}

static void test_empty_profile(void **state)
{
	struct fixture *f = *state;
	struct frame fr[4];

	write_and_check(f, "empty");
	assert_int_equal(read_frames(f->svg, fr, ARRAY_SIZE(fr)), 0);
	assert_non_null(strstr(f->svg, "No samples"));
	assert_non_null(strstr(f->svg, "<g id=\"frames\" fg:total=\"0\">"));
}

static void test_script_and_controls(void **state)
{
	struct fixture *f = *state;

	build_hotcold(f->p);
	write_and_check(f, "t");
	/* self-contained: no external references, the controls and functions the page needs */
	assert_null(strstr(f->svg, "href"));
	assert_null(strstr(f->svg, "<!DOCTYPE"));
	assert_null(strstr(f->svg, "src="));
	assert_non_null(strstr(f->svg, "<script type=\"text/ecmascript\"><![CDATA["));
	assert_non_null(strstr(f->svg, "id=\"search\""));
	assert_non_null(strstr(f->svg, ">Search</text>"));
	assert_non_null(strstr(f->svg, "id=\"unzoom\""));
	assert_non_null(strstr(f->svg, ">Reset Zoom</text>"));
	assert_non_null(strstr(f->svg, "id=\"details\""));
	assert_non_null(strstr(f->svg, "id=\"matched\""));
	assert_non_null(strstr(f->svg, "function search(term)"));
	assert_non_null(strstr(f->svg, "function zoom(z)"));
	assert_non_null(strstr(f->svg, "function unzoom()"));
	assert_non_null(strstr(f->svg, "init();\n]]></script>\n</svg>\n"));
	assert_int_equal(strncmp(f->svg, "<?xml version=\"1.0\"", 19), 0);
}

/* The checker itself must reject what it is there to catch. */
static void test_checker_rejects(void **state)
{
	assert_true(
		xml_well_formed("<?xml version=\"1.0\"?>\n<a x=\"1\"><b/><c>t &amp; u</c></a>\n"));
	assert_false(xml_well_formed("<a><b></a></b>"));
	assert_false(xml_well_formed("<a>x & y</a>"));
	assert_false(xml_well_formed("<a x=\"<\"/>"));
	assert_false(xml_well_formed("<a>\x01</a>"));
	assert_false(xml_well_formed("<a>\xff</a>"));
	assert_false(xml_well_formed("<a/><b/>"));
	assert_false(xml_well_formed("<a><![CDATA[ x ]]> ]]></a>"));
	assert_false(xml_well_formed("<a x=1/>"));
}

/*
 * The off-CPU view (an output named offcpu*.svg): widths are µs blocked,
 * only blocked stacks are drawn, tooltips and subtitle say so.
 */
static void test_offcpu_view(void **state)
{
	struct fixture *f = *state;
	struct profile *p = f->p, v;
	uint32_t pr = add_proc(p, 100, "hotcold");
	const uint64_t wait[] = { K_TICK, HOT_B, VIA_Z, MAIN };
	bool created;

	add_stack(p, pr, (const uint64_t[]){ MAIN, VIA_X, HOT_A, 0 }, NULL, 1400);
	assert_true(profile__add_offcpu(p, pr, wait, 1, 3, 4, 2500000, &created) >= 0);
	name_locs(p, hotcold_syms, ARRAY_SIZE(hotcold_syms));
	p->offcpu = true;
	p->offcpu_thresh_ns = 500000;
	v = *p;
	v.view = PROFILE_VIEW_OFFCPU;
	assert_int_equal(write_svg(&v, &f->out, "off"), 0);
	f->svg = strndup((const char *)f->out.data, f->out.len);
	assert_non_null(f->svg);
	assert_true(xml_well_formed(f->svg));
	assert_non_null(strstr(f->svg, "fg:total=\"2500\""));
	assert_non_null(strstr(f->svg, "hot_b (2500 us off-CPU, 100.00%)"));
	assert_non_null(strstr(f->svg, "0.003 s off-CPU in blocks of 500 us or more"));
	assert_null(strstr(f->svg, "hot_a"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_hotcold_widths, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hotcold_stacking, setup, teardown),
		cmocka_unit_test_setup_teardown(test_colours_by_kind, setup, teardown),
		cmocka_unit_test_setup_teardown(test_escaping, setup, teardown),
		cmocka_unit_test_setup_teardown(test_narrow_frames_omitted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_labels_truncated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_frames_and_procs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unnamed_addresses_distinct, setup, teardown),
		cmocka_unit_test_setup_teardown(test_empty_profile, setup, teardown),
		cmocka_unit_test_setup_teardown(test_offcpu_view, setup, teardown),
		cmocka_unit_test_setup_teardown(test_script_and_controls, setup, teardown),
		cmocka_unit_test(test_checker_rejects),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

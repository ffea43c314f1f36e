// SPDX-License-Identifier: MIT
/*
 * svgdemo: write a flame graph of a hand-built profile shaped like the
 * hotcold workload (hot_a 75 % under via_x and via_y, hot_b 25 % under via_z),
 * with kernel frames, a JIT frame, a second process, a kernel thread, a frame
 * too narrow to draw and a name that needs XML escaping. Used by
 * tests/integration/svg.sh where `bpfprof -o x.svg` cannot run.
 *
 * usage: svgdemo OUT.svg [TITLE]
 *
 * Build: gcc -std=gnu11 -D_GNU_SOURCE -Iinclude tests/tools/svgdemo.c \
 *        .output/libbpfprof.a -lbpf -lelf -lz -o svgdemo
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "buf.h"
#include "profile.h"
#include "write_svg.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_FRAMES 16

struct func {
	const char *name;
	const char *dso;
	uint64_t addr;
	bool kernel, jit;
};

static const struct func funcs[] = {
	{ "_start", "hotcold", 0x401000, false, false },
	{ "__libc_start_main", "libc.so.6", 0x7f0000001000, false, false },
	{ "main", "hotcold", 0x401100, false, false },
	{ "loop", "hotcold", 0x401200, false, false },
	{ "via_x", "hotcold", 0x401300, false, false },
	{ "via_y", "hotcold", 0x401400, false, false },
	{ "via_z", "hotcold", 0x401500, false, false },
	{ "hot_a", "hotcold", 0x401600, false, false },
	{ "hot_b", "hotcold", 0x401700, false, false },
	{ "std::vector<int, A&>::operator\"\"", "hotcold", 0x401800, false, false },
	{ "Interpreter::run", "hotcold", 0x401900, false, false },
	{ "LJIT::hot_loop", "jit", 0x7e0000000100, false, true },
	{ "asm_sysvec_apic_timer_interrupt", "[kernel.kallsyms]", 0xffffffff81001000, true, false },
	{ "sysvec_apic_timer_interrupt", "[kernel.kallsyms]", 0xffffffff81002000, true, false },
	{ "__sysvec_apic_timer_interrupt", "[kernel.kallsyms]", 0xffffffff81003000, true, false },
	{ "ret_from_fork", "[kernel.kallsyms]", 0xffffffff81004000, true, false },
	{ "kthread", "[kernel.kallsyms]", 0xffffffff81005000, true, false },
	{ "worker_thread", "[kernel.kallsyms]", 0xffffffff81006000, true, false },
	{ "process_one_work", "[kernel.kallsyms]", 0xffffffff81007000, true, false },
	{ "bash_main", "bash", 0x501000, false, false },
	{ "readline", "libreadline.so.8", 0x7f0000100000, false, false },
	{ "tiny", "hotcold", 0x401a00, false, false },
	{ "?libc", "libc.so.6", 0x7f0000002000, false, false },	/* "?": no symbol, drawn as [libc.so.6] */
};

/* One callchain: comm, user frames root to leaf, kernel frames root to leaf, count. */
struct chain {
	uint32_t pid;
	const char *user[MAX_FRAMES];
	const char *kernel[MAX_FRAMES];
	uint64_t count;
};

#define HC "_start", "__libc_start_main", "main", "loop"
static const struct chain chains[] = {
	{ 1000, { HC, "via_x", "hot_a" }, {}, 7800 },
	{ 1000, { HC, "via_x", "hot_a" },
	  { "asm_sysvec_apic_timer_interrupt", "sysvec_apic_timer_interrupt", "__sysvec_apic_timer_interrupt" }, 200 },
	{ 1000, { HC, "via_y", "hot_a" }, {}, 4000 },
	{ 1000, { HC, "via_z", "hot_b" }, {}, 3900 },
	{ 1000, { HC, "via_z", "hot_b" }, { "asm_sysvec_apic_timer_interrupt" }, 100 },
	{ 1000, { HC, "?libc" }, {}, 20 },
	{ 1000, { HC, "tiny" }, {}, 1 },	/* 0.07 px: not drawn */
	{ 1000, { HC, "std::vector<int, A&>::operator\"\"" }, {}, 60 },
	{ 1000, { HC, "Interpreter::run", "LJIT::hot_loop" }, {}, 80 },
	{ 2000, { "bash_main", "readline" }, {}, 40 },
	{ 3000, {}, { "ret_from_fork", "kthread", "worker_thread", "process_one_work" }, 30 },
};

static const struct func *find_func(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(funcs); i++)
		if (!strcmp(funcs[i].name, name))
			return &funcs[i];
	return NULL;
}

static size_t nr_names(const char *const *v, size_t max)
{
	size_t n = 0;

	while (n < max && v[n])
		n++;
	return n;
}

static int build(struct profile *p)
{
	static const struct { uint32_t pid; const char *comm; } procs[] = {
		{ 1000, "hotcold" }, { 2000, "bash" }, { 3000, "kworker/0:1" },
	};
	struct profile_mapping m = { .start = 0x400000, .end = 0x402000, .perms = "r-xp" };
	size_t i, j;
	bool created;

	p->event = profile__intern(p, "cpu-clock");
	p->freq_hz = 999;
	p->period_ns = 1001001;
	m.path = profile__intern(p, "/usr/local/bin/hotcold");
	for (i = 0; i < ARRAY_SIZE(procs); i++) {
		int idx = profile__process(p, procs[i].pid, &created);

		if (idx < 0)
			return idx;
		snprintf(p->procs[idx].comm, sizeof(p->procs[idx].comm), "%s", procs[i].comm);
		if (profile__add_mapping(p, idx, &m) < 0)
			return -ENOMEM;
	}
	for (i = 0; i < ARRAY_SIZE(chains); i++) {
		const struct chain *c = &chains[i];
		size_t nu = nr_names(c->user, MAX_FRAMES), nk = nr_names(c->kernel, MAX_FRAMES), n = 0;
		uint64_t ips[2 * MAX_FRAMES];
		int proc = profile__find_process(p, c->pid);

		for (j = nk; j-- > 0;)
			ips[n++] = find_func(c->kernel[j])->addr;
		for (j = nu; j-- > 0;)
			ips[n++] = find_func(c->user[j])->addr;
		if (proc < 0 || profile__add_stack(p, proc, ips, nk, nu, c->count, c->count * p->period_ns,
						   &created) < 0)
			return -ENOMEM;
	}
	if (profile__resolve_locs(p))
		return -ENOMEM;
	for (i = 0; i < p->nr_locs; i++) {
		struct profile_location *l = &p->locs[i];

		for (j = 0; j < ARRAY_SIZE(funcs); j++) {
			if (funcs[j].addr != l->addr)
				continue;
			l->func = funcs[j].name[0] == '?' ? NULL : profile__intern(p, funcs[j].name);
			l->dso = profile__intern(p, funcs[j].dso);
			l->is_jit = funcs[j].jit;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct profile *p = profile__new();
	struct buf out = {};
	FILE *f;
	int err;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: svgdemo OUT.svg [TITLE]\n");
		return 2;
	}
	if (!p)
		return 1;
	err = build(p);
	if (!err)
		err = write_svg(p, &out, argc > 2 ? argv[2] : "svgdemo: hotcold-shaped profile");
	if (err) {
		fprintf(stderr, "svgdemo: %s\n", strerror(-err));
		goto out_free;
	}
	f = fopen(argv[1], "w");
	if (!f || fwrite(out.data, 1, out.len, f) != out.len || fclose(f)) {
		fprintf(stderr, "svgdemo: cannot write '%s'\n", argv[1]);
		err = -EIO;
	}
out_free:
	buf__free(&out);
	profile__free(p);
	return err != 0;
}

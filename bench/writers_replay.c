// SPDX-License-Identifier: MIT
/*
 * The text writers' cost on a recorded profile, without a run: read a
 * .folded file (write_folded.h's format: "comm;root;...;leaf count", kernel
 * frames suffixed "_[k]", JIT ones "_[j]") back into a struct profile, one
 * location per distinct frame, then time write_folded() and write_svg() on it
 * (CPU time of this thread, the best of REPS, their files' writing included:
 * through struct buf's drain as bpfprof writes them) and write their outputs,
 * so that two builds can be compared byte for byte on the same input. The folded
 * output of a folded input is the input itself (one line per stack, sorted).
 *
 * usage: writers_replay FILE.folded OUTDIR [REPS]
 * prints: stacks, locations, frames a stack, and each writer's ms and bytes
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "buf.h"
#include "lib_io.h"
#include "lib_hashmap.h"
#include "profile.h"
#include "write_folded.h"
#include "write_svg.h"

static int drain_to_fd(void *ctx, const void *p, size_t n)
{
	return io__write_all(*(int *)ctx, p, n);
}

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

struct names {
	char **name;
	uint8_t *kind; /* 0 user, 1 kernel, 2 jit */
	size_t nr, cap;
};

static uint32_t intern(struct names *n, const char *s, size_t len, uint8_t kind)
{
	size_t i;

	/* linear probe over a small open hash */
	static uint32_t *slots;
	static size_t nslots;

	if (!slots) {
		nslots = 1 << 20;
		slots = calloc(nslots, sizeof(*slots));
	}
	uint64_t h = 1469598103934665603ULL ^ kind;
	for (i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
	for (i = h & (nslots - 1);; i = (i + 1) & (nslots - 1)) {
		uint32_t v = slots[i];

		if (!v)
			break;
		if (n->kind[v - 1] == kind && !strncmp(n->name[v - 1], s, len) &&
		    !n->name[v - 1][len])
			return v - 1;
	}
	if (n->nr == n->cap) {
		n->cap = n->cap ? n->cap * 2 : 1024;
		n->name = realloc(n->name, n->cap * sizeof(*n->name));
		n->kind = realloc(n->kind, n->cap);
	}
	n->name[n->nr] = strndup(s, len);
	n->kind[n->nr] = kind;
	slots[i] = (uint32_t)++n->nr;
	return (uint32_t)(n->nr - 1);
}

int main(int argc, char **argv)
{
	struct profile p = { .event = "cpu-clock", .freq_hz = 999 };
	struct names names = { 0 };
	size_t cap_stacks = 0, cap_procs = 0, frames = 0, i;
	int reps = argc > 3 ? atoi(argv[3]) : 3;
	char *line = NULL, path[4096];
	size_t lcap = 0;
	ssize_t len;
	FILE *f;

	if (argc < 3) {
		fprintf(stderr, "usage: %s FILE.folded OUTDIR [REPS]\n", argv[0]);
		return 2;
	}
	f = fopen(argv[1], "r");
	if (!f)
		return perror(argv[1]), 1;
	while ((len = getline(&line, &lcap, f)) > 0) {
		uint32_t fr[1024];
		uint8_t fk[1024];
		size_t nf = 0, nk = 0, j;
		char *sp = strrchr(line, ' '), *s, *e;
		struct profile_stack *st;

		if (!sp)
			continue;
		*sp = '\0';
		s = strchr(line, ';');
		if (s)
			*s++ = '\0';
		/* comm: one process per distinct comm */
		for (j = 0; j < p.nr_procs && strcmp(p.procs[j].comm, line); j++)
			;
		if (j == p.nr_procs) {
			if (p.nr_procs == cap_procs) {
				cap_procs = cap_procs ? cap_procs * 2 : 8;
				p.procs = realloc(p.procs, cap_procs * sizeof(*p.procs));
			}
			memset(&p.procs[j], 0, sizeof(p.procs[j]));
			p.procs[j].pid = 1000 + (uint32_t)j;
			snprintf(p.procs[j].comm, sizeof(p.procs[j].comm), "%s", line);
			p.nr_procs++;
		}
		for (; s && *s && nf < 1024; s = e ? e + 1 : NULL) {
			size_t l;
			uint8_t kind = 0;

			e = strchr(s, ';');
			l = e ? (size_t)(e - s) : strlen(s);
			if (l > 4 && !memcmp(s + l - 4, "_[k]", 4))
				kind = 1, l -= 4;
			else if (l > 4 && !memcmp(s + l - 4, "_[j]", 4))
				kind = 2, l -= 4;
			fr[nf] = intern(&names, s, l, kind);
			fk[nf++] = kind;
			nk += kind == 1;
			if (!e)
				break;
		}
		if (p.nr_stacks == cap_stacks) {
			cap_stacks = cap_stacks ? cap_stacks * 2 : 1024;
			p.stacks = realloc(p.stacks, cap_stacks * sizeof(*p.stacks));
		}
		st = &p.stacks[p.nr_stacks++];
		memset(st, 0, sizeof(*st));
		st->proc = (uint32_t)j;
		st->nr_kernel = (uint16_t)nk;
		st->nr_user = (uint16_t)(nf - nk);
		st->count = strtoull(sp + 1, NULL, 10);
		st->value = st->count * 1001001;
		st->locs = malloc((nf ? nf : 1) * sizeof(*st->locs));
		st->ips = calloc(nf ? nf : 1, sizeof(*st->ips));
		/* leaf first: the kernel part (its leaf last in the line), then the user part */
		for (j = 0; j < nf; j++)
			st->locs[j] = fr[nf - 1 - j];
		p.nr_samples += st->count;
		frames += nf;
		(void)fk;
	}
	fclose(f);
	p.locs = calloc(names.nr ? names.nr : 1, sizeof(*p.locs));
	for (i = 0; i < names.nr; i++) {
		p.locs[i].func = names.name[i];
		p.locs[i].mapping = -1;
		p.locs[i].proc = names.kind[i] == 1 ? PROFILE_KERNEL_PROC : 0;
		p.locs[i].is_jit = names.kind[i] == 2;
		p.locs[i].dso = names.kind[i] == 1 ? "[kernel.kallsyms]" : "/x";
	}
	p.nr_locs = names.nr;
	printf("stacks %zu locations %zu frames/stack %.1f\n", p.nr_stacks, p.nr_locs,
	       p.nr_stacks ? (double)frames / p.nr_stacks : 0);

	for (int w = 0; w < 2; w++) {
		double best = 1e30;
		size_t bytes = 0;

		snprintf(path, sizeof(path), "%s/out.%s", argv[2], w ? "svg" : "folded");
		for (int r = 0; r < reps; r++) {
			struct buf b = { .drain = drain_to_fd };
			double t0;
			int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

			if (fd < 0)
				return perror(path), 1;
			b.drain_ctx = &fd;
			t0 = cpu_ms();
			if (w ? write_svg(&p, &b, "bpfprof CPU flame graph") : write_folded(&p, &b))
				return fprintf(stderr, "write failed\n"), 1;
			if (io__write_all(fd, b.data, b.len) || close(fd))
				return perror(path), 1;
			t0 = cpu_ms() - t0;
			if (t0 < best)
				best = t0;
			bytes = b.drained + b.len;
			buf__free(&b);
		}
		printf("%s: %.1f ms of CPU (best of %d, its file written), %zu bytes\n",
		       w ? "svg" : "folded", best, reps, bytes);
	}
	return 0;
}

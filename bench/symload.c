// SPDX-License-Identifier: MIT
/*
 * Symbol tables as the symbolizer uses them, timed and weighed: load
 * /proc/kallsyms, then each ELF file given, then look up LOOKUPS offsets per
 * file (spread over the file) and as many kernel addresses, and print the
 * wall time of each phase and the process's RSS (current and peak, kB)
 * after each: what finalize waits for, and what the tables keep in memory
 * for the rest of the run. Used by bench/symbols.sh.
 *
 * usage: symload [-n LOOKUPS] [-k KALLSYMS] ELF...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "kallsyms.h"
#include "log.h"
#include "sym_elf.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static long rss_kb(void)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld", &v) == 1)
			break;
	if (f)
		fclose(f);
	return v;
}

static long peak_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

int main(int argc, char **argv)
{
	const char *kallsyms = "/proc/kallsyms";
	struct elf_symtab **st;
	long lookups = 2000, i, found = 0;
	size_t nsyms = 0;
	struct ksyms *ks;
	double t0, t1;
	int opt, f, nfiles;

	while ((opt = getopt(argc, argv, "n:k:")) != -1) {
		switch (opt) {
		case 'n': lookups = strtol(optarg, NULL, 0); break;
		case 'k': kallsyms = optarg; break;
		default:
			fprintf(stderr, "usage: symload [-n LOOKUPS] [-k KALLSYMS] ELF...\n");
			return 2;
		}
	}
	log_verbosity = -1;
	nfiles = argc - optind;
	st = calloc(nfiles ? nfiles : 1, sizeof(*st));
	printf("start rss_kb %ld peak_kb %ld\n", rss_kb(), peak_kb());

	t0 = now_ms();
	ks = ksyms__load(kallsyms);
	t1 = now_ms();
	if (!ks) {
		perror(kallsyms);
		return 1;
	}
	printf("kallsyms ms %.1f symbols %zu rss_kb %ld peak_kb %ld\n", t1 - t0, ksyms__count(ks), rss_kb(),
	       peak_kb());

	t0 = now_ms();
	for (f = 0; f < nfiles; f++) {
		st[f] = elf_symtab__load(argv[optind + f], "");
		if (st[f])
			nsyms += elf_symtab__count(st[f]);
	}
	t1 = now_ms();
	printf("elf ms %.1f files %d symbols %zu rss_kb %ld peak_kb %ld\n", t1 - t0, nfiles, nsyms, rss_kb(),
	       peak_kb());

	t0 = now_ms();
	for (f = 0; f < nfiles; f++) {
		struct stat sb;
		uint64_t off;

		if (!st[f] || stat(argv[optind + f], &sb) || sb.st_size <= 0)
			continue;
		for (i = 0; i < lookups; i++)
			found += !!elf_symtab__lookup_offset(st[f], (uint64_t)sb.st_size / lookups * i, &off);
	}
	if (ksyms__count(ks)) {
		uint64_t base = ksyms__addr(ks, "_text"), off;

		for (i = 0; i < lookups; i++)
			found += !!ksyms__lookup(ks, base + (uint64_t)i * 4099, &off, NULL);
	}
	t1 = now_ms();
	printf("lookups ms %.1f lookups %ld named %ld rss_kb %ld peak_kb %ld\n", t1 - t0, lookups * (nfiles + 1),
	       found, rss_kb(), peak_kb());
	for (f = 0; f < nfiles; f++)
		elf_symtab__free(st[f]);
	free(st);
	ksyms__free(ks);
	return 0;
}

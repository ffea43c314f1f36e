// SPDX-License-Identifier: MIT
/*
 * Record what hotspot_vmstructs.c reads of a running JVM's tables, as an
 * image in the input format of tests/fuzz/fuzz_hotspot_vmstructs.c (the
 * symbols' addresses, then {u64 address, u32 length, bytes} segments, the
 * reads merged): the seed of its corpus taken from a real JVM.
 *
 *   make .output/libbpfprof.a
 *   cc -Iinclude -o /tmp/hotspot-dump tools/hotspot-dump.c .output/libbpfprof.a \
 *      -lbpf -ldw -lelf -lz -lprotobuf-c -lcurl -llzma -ldebuginfod -pthread
 *   sudo /tmp/hotspot-dump PID > tests/fuzz/corpus/hotspot_vmstructs/openjdk17
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hotspot_vmstructs.h"
#include "proc_table.h"
#include "sym_elf.h"

struct range {
	uint64_t start, end;
};

static struct range ranges[1 << 16];
static size_t nr_ranges;
static int mem_fd;

static int rec_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	if (pread(mem_fd, buf, len, (off_t)addr) != (ssize_t)len)
		return -EFAULT;
	if (nr_ranges < sizeof(ranges) / sizeof(ranges[0]))
		ranges[nr_ranges++] = (struct range){ addr, addr + len };
	return 0;
}

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

int main(int argc, char **argv)
{
	uint64_t vals[HS_SYM_NR], sym[HS_SYM_NR], base = 0, off;
	char *maps, *line, path[4096] = "", mem[64];
	struct hotspot_vm vm;
	const char *why;
	int64_t delta;
	size_t len;
	int fd, err;

	if (argc != 2)
		return fprintf(stderr, "usage: %s PID\n", argv[0]), 2;
	if (proc_table__read_maps("/proc", (uint32_t)atoi(argv[1]), &maps, &len))
		return perror("maps"), 1;
	for (line = strtok(maps, "\n"); line; line = strtok(NULL, "\n")) {
		unsigned long long s, o;
		char p[4096];

		if (sscanf(line, "%llx-%*llx %*s %llx %*s %*s %4095s", &s, &o, p) == 3 && !o &&
		    strstr(p, "/libjvm.so")) {
			base = s;
			strcpy(path, p);
			break;
		}
	}
	if (!base)
		return fprintf(stderr, "no libjvm.so mapped\n"), 1;
	fd = open(path, O_RDONLY);
	if (fd < 0 || elf__dynsym_values(fd, path, hotspot_sym_names, HS_SYM_NR, vals, 0, &delta))
		return fprintf(stderr, "%s: no symbols\n", path), 1;
	for (int i = 0; i < HS_SYM_NR; i++)
		sym[i] = base + vals[i] - (uint64_t)delta;
	snprintf(mem, sizeof(mem), "/proc/%s/mem", argv[1]);
	mem_fd = open(mem, O_RDONLY);
	err = hotspot_vmstructs__read(sym, rec_read, NULL, &vm, &why);
	fprintf(stderr, "%s: %d %s, %zu reads\n", vm.release, err, why ? why : "", nr_ranges);
	qsort(ranges, nr_ranges, sizeof(ranges[0]), cmp_range);
	fwrite(sym, sizeof(sym), 1, stdout);
	for (size_t i = 0; i < nr_ranges;) {
		struct range r = ranges[i++];
		uint32_t n;
		uint8_t *b;

		while (i < nr_ranges && ranges[i].start <= r.end)
			r.end = ranges[i].end > r.end ? ranges[i].end : r.end, i++;
		n = (uint32_t)(r.end - r.start);
		b = malloc(n);
		off = r.start;
		if (!b || pread(mem_fd, b, n, (off_t)off) != n)
			return fprintf(stderr, "reread failed\n"), 1;
		fwrite(&r.start, 8, 1, stdout);
		fwrite(&n, 4, 1, stdout);
		fwrite(b, n, 1, stdout);
		free(b);
	}
	return err ? 1 : 0;
}

// SPDX-License-Identifier: MIT
/*
 * A short-lived JIT runtime (issue 24, the first samples): it writes a
 * jitdump ("JITDUMP specification version 2", Linux kernel tree,
 * tools/perf/Documentation/jitdump-specification.txt) with one
 * JIT_CODE_LOAD record naming the code it runs, "jit_hot", maps the file
 * executable (the marker perf and bpfprof find it by), runs that code (an
 * anonymous executable page: mov ecx, 100000; 1: dec ecx; jnz 1b; ret) for
 * CPU_MS ms of CPU time, and deletes the jitdump at exit, as runtimes do
 * that clean up: a profiler that reads the process's maps and files only
 * after it exited finds neither.
 *
 * usage: jitshort CPU_MS DIR (x86-64 only)
 */
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	static const unsigned char code[] = { 0xb9, 0xa0, 0x86, 0x01, 0x00,
					      0xff, 0xc9, 0x75, 0xfc, 0xc3 };
	/* magic, version, total_size, elf_mach (x86-64), pad1, pid, timestamp, flags */
	struct {
		uint32_t magic, version, size, mach, pad, pid;
		uint64_t ts, flags;
	} hdr = { 0x4A695444, 1, 40, 62, 0, (uint32_t)getpid(), 0, 0 };
	/* JIT_CODE_LOAD: prefix (id 0, total_size, timestamp), pid, tid, vma, code_addr, code_size, index */
	struct {
		uint32_t id, size;
		uint64_t ts;
		uint32_t pid, tid;
		uint64_t vma, code_addr, code_size, index;
	} load;
	static const char name[] = "jit_hot";
	char dump[PATH_MAX];
	unsigned char *page;
	uint64_t end;
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: jitshort CPU_MS DIR\n");
		return 2;
	}
#if !defined(__x86_64__)
	return 77;
#endif
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED) {
		perror("jit page");
		return 1;
	}
	memcpy(page, code, sizeof(code));
	if (mprotect(page, 4096, PROT_READ | PROT_EXEC)) {
		perror("jit page");
		return 1;
	}
	hdr.ts = clock_ns(CLOCK_MONOTONIC);
	load = (typeof(load)){ 0,
			       sizeof(load) + sizeof(name) + sizeof(code),
			       clock_ns(CLOCK_MONOTONIC),
			       (uint32_t)getpid(),
			       (uint32_t)getpid(),
			       (uintptr_t)page,
			       (uintptr_t)page,
			       sizeof(code),
			       0 };
	snprintf(dump, sizeof(dump), "%s/jit-%d.dump", argv[2], getpid());
	fd = open(dump, O_CREAT | O_RDWR | O_TRUNC, 0644);
	if (fd < 0 || write(fd, &hdr, sizeof(hdr)) != sizeof(hdr) ||
	    write(fd, &load, sizeof(load)) != sizeof(load) ||
	    write(fd, name, sizeof(name)) != sizeof(name) ||
	    write(fd, code, sizeof(code)) != sizeof(code) ||
	    mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) == MAP_FAILED) {
		perror(dump);
		return 1;
	}
	close(fd);
	end = clock_ns(CLOCK_PROCESS_CPUTIME_ID) + (uint64_t)atoi(argv[1]) * 1000000ULL;
	while (clock_ns(CLOCK_PROCESS_CPUTIME_ID) < end)
		((void (*)(void))page)();
	unlink(dump);
	return 0;
}

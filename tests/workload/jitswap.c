// SPDX-License-Identifier: MIT
/*
 * A hostile JIT runtime for the JIT-file tests: it writes a valid jitdump
 * header to DIR/jit-<pid>.dump, swaps that path for a symlink to TARGET,
 * makes /tmp/perf-<pid>.map a symlink to TARGET too, then maps the file it
 * wrote executable (the marker perf and bpfprof look for,
 * "Marker" in "JITDUMP specification version 2", Linux kernel tree,
 * tools/perf/Documentation/jitdump-specification.txt; its path now leads to
 * the symlink), and burns CPU for SECONDS in spin() and, on
 * x86-64, in "JIT code" it writes to an anonymous executable page, as a
 * runtime runs compiled code (which is how bpfprof sees a runtime whose
 * jitdump it has not found yet). TARGET is a FIFO (a reader that follows it
 * blocks) or a file the process may not read.
 *
 * usage: jitswap SECONDS TARGET DIR [STOPFILE]
 * (STOPFILE: end early, as after SECONDS, once that file exists: a test that
 * has seen what it waits for need not wait out a duration long enough for
 * the slowest machine)
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

static volatile unsigned long sink;

__attribute__((noinline)) void spin(void)
{
	unsigned long x = sink;

	for (int i = 0; i < 100000; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
}

/*
 * x86-64: mov ecx, 100000; 1: dec ecx; jnz 1b; ret. NULL elsewhere, or when
 * no executable page can be had.
 */
static void (*make_jit_code(void))(void)
{
#if defined(__x86_64__)
	static const unsigned char code[] = { 0xb9, 0xa0, 0x86, 0x01, 0x00,
					      0xff, 0xc9, 0x75, 0xfc, 0xc3 };
	unsigned char *page =
		mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (page == MAP_FAILED)
		return NULL;
	memcpy(page, code, sizeof(code));
	if (mprotect(page, 4096, PROT_READ | PROT_EXEC))
		return NULL;
	return (void (*)(void))page;
#else
	return NULL;
#endif
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	/* magic, version, total_size, elf_mach (x86-64), pad1, pid, timestamp, flags */
	struct {
		uint32_t magic, version, size, mach, pad, pid;
		uint64_t ts, flags;
	} hdr = {
		0x4A695444, 1, 40, 62, 0, (uint32_t)getpid(), 0, 0,
	};
	char dump[PATH_MAX], swap[PATH_MAX + 8], map[64];
	const char *stop = argc > 4 ? argv[4] : NULL;
	void (*jit)(void);
	double end;
	unsigned int n = 0;
	int fd;

	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: jitswap SECONDS TARGET DIR [STOPFILE]\n");
		return 2;
	}
	end = now() + atof(argv[1]);
	snprintf(dump, sizeof(dump), "%s/jit-%d.dump", argv[3], getpid());
	fd = open(dump, O_CREAT | O_RDWR | O_TRUNC, 0644);
	if (fd < 0 || write(fd, &hdr, sizeof(hdr)) != sizeof(hdr)) {
		perror(dump);
		return 1;
	}
	snprintf(swap, sizeof(swap), "%s.swap", dump);
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", getpid());
	unlink(map);
	if (symlink(argv[2], swap) || rename(swap, dump) || symlink(argv[2], map)) {
		perror("symlink");
		return 1;
	}
	/*
	 * The marker mapping only now, of the file the swap unlinked ("DIR/jit-PID.dump
	 * (deleted)" in /proc/PID/maps): a profiler that sees it finds both links in
	 * place, never the regular file of a moment before (which it could open and
	 * rightly not refuse: a run under load saw that).
	 */
	if (mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) == MAP_FAILED) {
		perror(dump);
		return 1;
	}
	close(fd);
	jit = make_jit_code();
	while (now() < end) {
		spin();
		if (jit)
			jit();
		/* every 64 rounds (a few ms): one system call, not one a round */
		if (stop && !(++n % 64) && !access(stop, F_OK))
			break;
	}
	unlink(dump);
	unlink(map);
	return 0;
}

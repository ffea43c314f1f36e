// SPDX-License-Identifier: MIT
/*
 * Host description sections of a perf.data header (include/perf_header.h),
 * computed the way perf record computes them (tools/perf/util/header.c
 * write_hostname ... write_cmdline, arch/x86/util/header.c get_cpuid), so
 * `perf report --header-only` shows the same values for a bpfprof file as
 * for a perf record made on the same machine.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include "perf_header.h"

#define ALIGN_UP(x, a) (((x) + (a)-1) / (a) * (a))

void perf_header__put_string(struct buf *b, const char *s)
{
	size_t n = strlen(s) + 1, len = ALIGN_UP(n, PERF_NAME_ALIGN);

	buf__put_u32(b, (uint32_t)len);
	buf__put_bytes(b, s, n);
	buf__put_zeros(b, len - n);
}

int perf_header__hostname(struct buf *b)
{
	struct utsname u;

	if (uname(&u))
		return -errno;
	perf_header__put_string(b, u.nodename);
	return 0;
}

int perf_header__osrelease(struct buf *b)
{
	struct utsname u;

	if (uname(&u))
		return -errno;
	perf_header__put_string(b, u.release);
	return 0;
}

int perf_header__arch(struct buf *b)
{
	struct utsname u;

	if (uname(&u))
		return -errno;
	perf_header__put_string(b, u.machine);
	return 0;
}

/* Highest CPU number in a sysfs CPU list such as "0-3,8,10-11", or -1. */
static long max_in_cpu_list(const char *path)
{
	char text[4096], *p, *end;
	long max = -1, v;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	text[n] = '\0';
	for (p = text; *p;) {
		if (!isdigit((unsigned char)*p)) {
			p++;
			continue;
		}
		v = strtol(p, &end, 10);
		if (v > max)
			max = v;
		p = end;
	}
	return max;
}

int perf_header__nrcpus(struct buf *b)
{
	/* perf: cpu__max_present_cpu() first (read back as nr_cpus_avail), then the online count */
	long present = max_in_cpu_list("/sys/devices/system/cpu/present");
	long online = sysconf(_SC_NPROCESSORS_ONLN);

	if (online < 0)
		return -errno;
	buf__put_u32(b, present >= 0 ? (uint32_t)present + 1 : (uint32_t)online);
	buf__put_u32(b, (uint32_t)online);
	return 0;
}

int perf_header__cpudesc(struct buf *b)
{
#if defined(__powerpc__) || defined(__hppa__) || defined(__sparc__)
	static const char *const keys[] = { "cpu" };
#elif defined(__s390__)
	static const char *const keys[] = { "vendor_id" };
#elif defined(__arm__)
	static const char *const keys[] = { "model name", "Processor" };
#elif defined(__loongarch__)
	static const char *const keys[] = { "Model Name" };
#else
	static const char *const keys[] = { "model name" };
#endif
	size_t k;

	for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		char *line = NULL, *s, *p, *r, *q;
		size_t cap = 0;
		FILE *f = fopen("/proc/cpuinfo", "re");
		int found = 0;

		if (!f)
			return -errno;
		while (getline(&line, &cap, f) > 0)
			if (!strncmp(line, keys[k], strlen(keys[k]))) {
				found = 1;
				break;
			}
		fclose(f);
		if (!found) {
			free(line);
			continue;
		}
		s = line;
		p = strchr(line, ':');
		if (p && p[1] == ' ' && p[2])
			s = p + 2;
		p = strchr(s, '\n');
		if (p)
			*p = '\0';
		/* squash each run of white space into one space, as perf does for branding strings */
		for (p = s; *p; p++) {
			if (!isspace((unsigned char)*p))
				continue;
			*p = ' ';
			for (q = p + 1; isspace((unsigned char)*q); q++)
				;
			if (q != p + 1)
				for (r = p + 1; (*r++ = *q++);)
					;
		}
		perf_header__put_string(b, s);
		free(line);
		return 0;
	}
	return -ENOENT;
}

int perf_header__cpuid(struct buf *b)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned int max, a, bx, c, d, family = 0, model = 0, step = 0;
	char vendor[13], text[64];

	if (!__get_cpuid(0, &max, &bx, &c, &d))
		return -ENOTSUP;
	memcpy(vendor, &bx, 4);
	memcpy(vendor + 4, &d, 4);
	memcpy(vendor + 8, &c, 4);
	vendor[12] = '\0';
	if (max >= 1 && __get_cpuid(1, &a, &bx, &c, &d)) {
		family = (a >> 8) & 0xf;
		model = (a >> 4) & 0xf;
		step = a & 0xf;
		if (family == 0xf)
			family += (a >> 20) & 0xff;
		if (family >= 0x6)
			model += ((a >> 16) & 0xf) << 4;
	}
	snprintf(text, sizeof(text), "%s,%u,%u,%u", vendor, family, model, step);
	perf_header__put_string(b, text);
	return 0;
#else
	(void)b;
	return -ENOTSUP;
#endif
}

int perf_header__total_mem(struct buf *b)
{
	char *line = NULL;
	size_t cap = 0;
	unsigned long long kb;
	FILE *f = fopen("/proc/meminfo", "re");
	int err = -ENOENT;

	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0)
		if (!strncmp(line, "MemTotal:", 9)) {
			if (sscanf(line + 9, "%llu", &kb) == 1) {
				buf__put_u64(b, kb);
				err = 0;
			}
			break;
		}
	free(line);
	fclose(f);
	return err;
}

int perf_header__cmdline(struct buf *b, int argc, char **argv)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int i;

	if (argc < 1 || !argv || !argv[0])
		return -EINVAL;
	if (n > 0)
		exe[n] = '\0';
	else
		snprintf(exe, sizeof(exe), "%s", argv[0]);
	/* perf writes its own path in place of argv[0] */
	buf__put_u32(b, (uint32_t)argc);
	perf_header__put_string(b, exe);
	for (i = 1; i < argc; i++)
		perf_header__put_string(b, argv[i] ? argv[i] : "");
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * Checks made before sampling starts (include/preflight.h): privileges,
 * kernel BTF, and the target processes, each failure with one message that
 * says what to do.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "log.h"
#include "preflight.h"

/* capability numbers, include/uapi/linux/capability.h */
#define CAP_PERFMON_BIT 38
#define CAP_BPF_BIT 39
#define CAP_SYS_ADMIN_BIT 21

/* Effective capability set from /proc/self/status (CapEff, hex). */
static uint64_t effective_caps(void)
{
	unsigned long long caps = 0;
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &caps) == 1)
			break;
	fclose(f);
	return caps;
}

int preflight__check_system(void)
{
	uint64_t caps = effective_caps();
	bool bpf = caps & (1ULL << CAP_BPF_BIT), perfmon = caps & (1ULL << CAP_PERFMON_BIT);
	bool admin = caps & (1ULL << CAP_SYS_ADMIN_BIT);
	struct stat st;

	if (geteuid() != 0 && !(bpf && perfmon) && !admin) {
		pr_warn("insufficient privileges: needs root, or CAP_BPF and CAP_PERFMON (missing:%s%s); "
			"run it with sudo\n",
			bpf ? "" : " CAP_BPF", perfmon ? "" : " CAP_PERFMON");
		return -EPERM;
	}
	if (stat("/sys/kernel/btf/vmlinux", &st)) {
		pr_warn("kernel BTF not found at /sys/kernel/btf/vmlinux: needs a kernel built with "
			"CONFIG_DEBUG_INFO_BTF=y (5.4 or later)\n");
		return -ENOTSUP;
	}
	return 0;
}

bool preflight__process_alive(uint32_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	bool alive = false;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) && p[1] == ' ')
		alive = p[2] != 'Z' && p[2] != 'X';
	fclose(f);
	return alive;
}

uint32_t preflight__tgid_of(uint32_t pid)
{
	unsigned int tgid = 0;
	char path[64], line[128];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %u", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

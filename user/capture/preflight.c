// SPDX-License-Identifier: MIT
/*
 * Checks made before sampling starts (include/preflight.h): the kernel's
 * perf events, BTF and BPF ring buffer, and the privileges, each failure with
 * one message that says what to do. What the kernel requires, from its
 * sources (6.x):
 *  - loading a BPF_PROG_TYPE_PERF_EVENT or tracing program needs CAP_BPF and
 *    CAP_PERFMON (kernel/bpf/syscall.c bpf_prog_load, is_perfmon_prog_type),
 *    CAP_SYS_ADMIN standing in for either, in the initial user namespace;
 *  - a CPU-wide perf event (pid -1, one per CPU, as bpfprof opens) needs
 *    CAP_PERFMON once kernel.perf_event_paranoid > 0 (perf_allow_cpu), so the
 *    sysctl matters only to a caller without CAP_PERFMON, and lowering it
 *    does not make the program load;
 *  - the program is CO-RE: libbpf relocates it against /sys/kernel/btf/vmlinux;
 *  - samples travel through BPF_MAP_TYPE_RINGBUF (Linux 5.8).
 * Privileges are judged by the effective capability set, not the uid: root in
 * a container without CAP_BPF cannot load programs, a user with both
 * capabilities (setcap, ambient) can.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "log.h"
#include "preflight.h"

/* capability numbers, include/uapi/linux/capability.h */
#define CAP_SYS_ADMIN_BIT 21
#define CAP_PERFMON_BIT 38
#define CAP_BPF_BIT 39

/* First line of path, newline stripped, in buf. Returns 0 or -errno. */
static int read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");
	int err = 0;

	if (!f)
		return -errno;
	if (!fgets(buf, (int)size, f))
		err = ferror(f) ? -EIO : -ENODATA;
	fclose(f);
	if (!err)
		buf[strcspn(buf, "\n")] = '\0';
	return err;
}

/* Uid: (effective, the second field) and CapEff: of PROC/self/status. */
static int read_status(const char *proc_dir, struct preflight_facts *f)
{
	unsigned long long caps;
	unsigned int ruid, euid;
	char path[PATH_MAX], line[256];
	bool have_uid = false, have_caps = false;
	FILE *st;

	snprintf(path, sizeof(path), "%s/self/status", proc_dir);
	st = fopen(path, "re");
	if (!st)
		return -errno;
	while (fgets(line, sizeof(line), st)) {
		if (sscanf(line, "Uid: %u %u", &ruid, &euid) == 2) {
			f->euid = euid;
			have_uid = true;
		} else if (sscanf(line, "CapEff: %llx", &caps) == 1) {
			f->cap_eff = caps;
			have_caps = true;
		}
	}
	fclose(st);
	/* without them, assume the worst: an unprivileged user */
	if (!have_uid)
		f->euid = UINT32_MAX;
	if (!have_caps)
		f->cap_eff = 0;
	return 0;
}

/* The initial user namespace maps all 2^32 ids onto themselves: "0 0 4294967295". */
static bool in_init_userns(const char *proc_dir)
{
	unsigned long long in, out, count;
	char path[PATH_MAX], line[128];
	bool init = true;
	FILE *f;

	snprintf(path, sizeof(path), "%s/self/uid_map", proc_dir);
	f = fopen(path, "re");
	if (!f)
		return true; /* no user namespaces in this kernel */
	if (!fgets(line, sizeof(line), f) ||
	    sscanf(line, "%llu %llu %llu", &in, &out, &count) != 3 || in != 0 || out != 0 ||
	    count != 4294967295ULL)
		init = false;
	fclose(f);
	return init;
}

int preflight__gather(const char *proc_dir, const char *sys_dir, struct preflight_facts *f)
{
	char path[PATH_MAX], line[64], *end;
	struct stat st;
	long v;
	int err;

	memset(f, 0, sizeof(*f));
	f->ringbuf = -1;
	err = read_status(proc_dir, f);
	if (err)
		return err;
	f->init_userns = in_init_userns(proc_dir);
	f->perf_event_paranoid = PREFLIGHT_NO_PERF_EVENTS;
	snprintf(path, sizeof(path), "%s/sys/kernel/perf_event_paranoid", proc_dir);
	if (!read_line(path, line, sizeof(line))) {
		errno = 0;
		v = strtol(line, &end, 10);
		/* unparsable: present but unknown, taken as the most restrictive */
		f->perf_event_paranoid =
			errno || end == line || v < -1 || v > INT32_MAX ? INT32_MAX : (int32_t)v;
	}
	snprintf(path, sizeof(path), "%s/sys/kernel/osrelease", proc_dir);
	if (read_line(path, f->release, sizeof(f->release)))
		f->release[0] = '\0';
	snprintf(path, sizeof(path), "%s/kernel/btf/vmlinux", sys_dir);
	f->btf = !stat(path, &st);
	return 0;
}

/* " CAP_BPF CAP_PERFMON" for the capabilities missing from f */
static void missing_caps(const struct preflight_facts *f, char *buf, size_t size)
{
	bool admin = f->cap_eff & (1ULL << CAP_SYS_ADMIN_BIT);

	snprintf(buf, size, "%s%s", admin || f->cap_eff & (1ULL << CAP_BPF_BIT) ? "" : " CAP_BPF",
		 admin || f->cap_eff & (1ULL << CAP_PERFMON_BIT) ? "" : " CAP_PERFMON");
}

int preflight__check(const struct preflight_facts *f, char *msg, size_t size)
{
	const char *release = f->release[0] ? f->release : "(unknown)";
	const char *exe = f->exe ? f->exe : "bpfprof";
	char missing[32];

	msg[0] = '\0';
	if (f->perf_event_paranoid == PREFLIGHT_NO_PERF_EVENTS) {
		snprintf(msg, size,
			 "kernel %s has no perf events (no /proc/sys/kernel/perf_event_paranoid): "
			 "boot a kernel built with CONFIG_PERF_EVENTS=y",
			 release);
		return -ENOTSUP;
	}
	if (!f->btf) {
		snprintf(
			msg, size,
			"kernel BTF not found at /sys/kernel/btf/vmlinux: kernel %s was built without "
			"CONFIG_DEBUG_INFO_BTF=y; boot a kernel built with it (5.4 or later)",
			release);
		return -ENOTSUP;
	}
	if (!f->init_userns) {
		snprintf(
			msg, size,
			"running in a user namespace (a rootless container?): BPF and perf events need "
			"CAP_BPF and CAP_PERFMON in the initial user namespace; run it on the host or in "
			"a container given them (docker run --cap-add BPF --cap-add PERFMON)");
		return -EPERM;
	}
	missing_caps(f, missing, sizeof(missing));
	if (missing[0] && f->euid == 0) {
		snprintf(
			msg, size,
			"insufficient privileges: running as root but without%s (a container that drops "
			"capabilities?); BPF sampling needs CAP_BPF and CAP_PERFMON: give them to the "
			"container (docker run --cap-add BPF --cap-add PERFMON) or run it on the host",
			missing);
		return -EPERM;
	}
	if (!strcmp(missing, " CAP_PERFMON") && f->perf_event_paranoid > 0) {
		snprintf(
			msg, size,
			"kernel.perf_event_paranoid is %d and CAP_PERFMON is missing: without it the kernel "
			"refuses CPU-wide perf events at this setting, and BPF sampling programs at any; "
			"run it with sudo, or grant it: sudo setcap cap_bpf,cap_perfmon+ep %s",
			f->perf_event_paranoid, exe);
		return -EPERM;
	}
	if (missing[0]) {
		snprintf(
			msg, size,
			"insufficient privileges: needs root, or CAP_BPF and CAP_PERFMON (missing:%s); "
			"run it with sudo, or grant them: sudo setcap cap_bpf,cap_perfmon+ep %s",
			missing, exe);
		return -EPERM;
	}
	if (f->ringbuf == 0) {
		snprintf(
			msg, size,
			"kernel %s has no BPF ring buffer (BPF_MAP_TYPE_RINGBUF, Linux 5.8 or later): "
			"boot a newer kernel",
			release);
		return -ENOTSUP;
	}
	return 0;
}

int preflight__check_system(void)
{
	struct preflight_facts f;
	char msg[512], exe[PATH_MAX];
	ssize_t n;
	int err;

	err = preflight__gather("/proc", "/sys", &f);
	if (err) {
		pr_warn("cannot read /proc/self/status: %s; is /proc mounted?\n", strerror(-err));
		return -ENOTSUP;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		f.exe = exe;
	}
	err = preflight__check(&f, msg, sizeof(msg));
	if (!err) {
		/*
		 * Creating the probe map needs the privileges just checked. An
		 * error other than "not supported" (a security module?) leaves
		 * the answer to the load, which reports its own failure.
		 */
		int r = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL);

		f.ringbuf = r >= 0 ? r : -1;
		err = preflight__check(&f, msg, sizeof(msg));
	}
	if (err)
		pr_warn("%s\n", msg);
	return err;
}

/* The state letter of <dir>/stat (a process's or a thread's), or 0 when it cannot be read. */
static char stat_state(const char *dir)
{
	char path[PATH_MAX], buf[512], *p;
	char state = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/stat", dir);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) && p[1] == ' ')
		state = p[2];
	fclose(f);
	return state;
}

bool preflight__process_alive_in(const char *proc_dir, uint32_t pid)
{
	char dir[PATH_MAX], task[PATH_MAX + 32];
	struct dirent *de;
	bool alive = false;
	char state;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/%u", proc_dir, pid);
	state = stat_state(dir);
	if (!state || state == 'X')
		return false;
	if (state != 'Z')
		return true;
	/*
	 * A zombie leader: the process lives on while another of its threads
	 * runs (the main thread called pthread_exit; a moment of a non-leader
	 * thread's exec, before it takes the leader's place)
	 */
	snprintf(task, sizeof(task), "%s/task", dir);
	d = opendir(task);
	if (!d)
		return false;
	while (!alive && (de = readdir(d))) {
		char tdir[PATH_MAX * 2];

		if (de->d_name[0] < '0' || de->d_name[0] > '9' ||
		    (uint32_t)strtoul(de->d_name, NULL, 10) == pid)
			continue;
		snprintf(tdir, sizeof(tdir), "%s/%s", task, de->d_name);
		state = stat_state(tdir);
		alive = state && state != 'Z' && state != 'X';
	}
	closedir(d);
	return alive;
}

bool preflight__process_alive(uint32_t pid)
{
	return preflight__process_alive_in("/proc", pid);
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

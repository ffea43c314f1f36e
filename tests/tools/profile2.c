// SPDX-License-Identifier: MIT
/*
 * profile2: write a small, known profile through the pprof and folded writers,
 * for tests/integration/outputs.sh to feed to go tool pprof, pprof-format and
 * the folded-stack checks without root or BPF. Usage: profile2 PREFIX, which
 * writes PREFIX.pb.gz and PREFIX.folded.
 *
 * The profile mimics a 3 s, 999 Hz run of tests/workload/hotcold.c next to
 * another process (names set by hand, as the symbolizer would):
 *   hotcold (pid 4242, cgroup /user.slice/hotcold.scope)      1000 samples
 *     hot_a <- via_x <- main <- libc   450
 *     hot_a <- via_y <- main <- libc   300
 *     hot_b <- via_z <- main <- libc   250
 *   noise (pid 4343, in container 0123456789ab)                100 samples
 *     spin <- main                     90
 *     do_syscall_64 <- entry_SYSCALL_64 (kernel) over libc <- main   10
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "buf.h"
#include "profile.h"
#include "write_folded.h"
#include "write_pprof.h"

#define PERIOD_NS 1001001ULL /* 999 Hz */
#define K_LEAF 0xffffffff81a00010ULL
#define K_ENTRY 0xffffffff81c00080ULL

static const uint8_t exe_id[20] = { 0x5e, 0x1f, 0x0c, 0x01, 0xd0, 0x0d, 0xca, 0xfe, 0x12, 0x34,
				    0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x01, 0x23, 0x45, 0x67 };

static int add_proc(struct profile *p, uint32_t pid, const char *comm, const char *cgroup,
		    const char *container)
{
	bool created;
	int idx = profile__process(p, pid, &created);

	if (idx < 0)
		return idx;
	snprintf(p->procs[idx].comm, sizeof(p->procs[idx].comm), "%s", comm);
	p->procs[idx].cgroup_path = cgroup ? profile__intern(p, cgroup) : NULL;
	p->procs[idx].container_id = container ? profile__intern(p, container) : NULL;
	return idx;
}

static int add_map(struct profile *p, uint32_t proc, uint64_t start, uint64_t end, uint64_t off,
		   const char *path, const uint8_t *id, uint8_t id_len)
{
	struct profile_mapping m = { .start = start, .end = end, .offset = off, .build_id_len = id_len };

	memcpy(m.perms, "r-xp", 5);
	m.path = profile__intern(p, path);
	if (id_len)
		memcpy(m.build_id, id, id_len);
	return m.path && profile__add_mapping(p, proc, &m) >= 0 ? 0 : -ENOMEM;
}

static int add_stack(struct profile *p, uint32_t proc, const uint64_t *ips, uint16_t nk, uint16_t nu,
		     uint64_t count)
{
	bool created;

	p->nr_samples += count;
	return profile__add_stack(p, proc, ips, nk, nu, count, count * PERIOD_NS, &created) < 0 ? -ENOMEM : 0;
}

static void name(struct profile *p, uint32_t proc, uint64_t addr, const char *func, const char *dso)
{
	size_t i;

	for (i = 0; i < p->nr_locs; i++)
		if (p->locs[i].proc == proc && p->locs[i].addr == addr) {
			p->locs[i].func = func ? profile__intern(p, func) : NULL;
			p->locs[i].dso = profile__intern(p, dso);
		}
}

static int write_file(const char *prefix, const char *ext, const struct buf *b)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s%s", prefix, ext);
	f = fopen(path, "wb");
	if (!f || fwrite(b->data, 1, b->len, f) != b->len || fclose(f)) {
		fprintf(stderr, "profile2: cannot write '%s'\n", path);
		return -EIO;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const char exe[] = "/usr/local/bin/hotcold", noise_exe[] = "/usr/local/bin/noise";
	static const char libc[] = "/opt/profile2/libc.so.6";
	/* user frames leaf first: return addresses above the leaf */
	const uint64_t via_x[] = { 0x555555555150, 0x5555555551a5, 0x555555555230, 0x7ffff7df218a };
	const uint64_t via_y[] = { 0x555555555158, 0x5555555551d5, 0x555555555240, 0x7ffff7df218a };
	const uint64_t via_z[] = { 0x555555555170, 0x5555555551f5, 0x555555555250, 0x7ffff7df218a };
	const uint64_t spin[] = { 0x401120, 0x401260 };
	const uint64_t sys[] = { K_LEAF, K_ENTRY, 0x7ffff7e8a1f0, 0x401270 };
	struct timespec now;
	struct buf pb = { 0 }, folded = { 0 };
	struct profile *p;
	int hc, nz, err;

	if (argc != 2) {
		fprintf(stderr, "usage: profile2 PREFIX\n");
		return 2;
	}
	p = profile__new();
	if (!p)
		return 1;
	clock_gettime(CLOCK_REALTIME, &now);
	p->event = profile__intern(p, "cpu-clock");
	p->freq_hz = 999;
	p->period_ns = PERIOD_NS;
	p->start_ns = 1000000000ULL;
	p->end_ns = p->start_ns + 3000000000ULL;
	p->start_realtime_ns = (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec;

	hc = add_proc(p, 4242, "hotcold", "/user.slice/hotcold.scope", NULL);
	nz = add_proc(p, 4343, "noise", "/system.slice/docker-0123456789ab.scope", "0123456789ab");
	err = hc < 0 || nz < 0 ? -ENOMEM : 0;
	err = err ?: add_map(p, hc, 0x555555555000, 0x555555556000, 0x1000, exe, exe_id, 20);
	err = err ?: add_map(p, hc, 0x7ffff7dc8000, 0x7ffff7f1d000, 0x26000, libc, NULL, 0);
	err = err ?: add_map(p, nz, 0x401000, 0x402000, 0x1000, noise_exe, NULL, 0);
	err = err ?: add_map(p, nz, 0x7ffff7dc8000, 0x7ffff7f1d000, 0x26000, libc, NULL, 0);
	err = err ?: add_stack(p, hc, via_x, 0, 4, 450);
	err = err ?: add_stack(p, hc, via_y, 0, 4, 300);
	err = err ?: add_stack(p, hc, via_z, 0, 4, 250);
	err = err ?: add_stack(p, nz, spin, 0, 2, 90);
	err = err ?: add_stack(p, nz, sys, 2, 2, 10);
	err = err ?: profile__resolve_locs(p);
	if (err) {
		fprintf(stderr, "profile2: building the profile: %s\n", strerror(-err));
		return 1;
	}
	name(p, hc, 0x555555555150, "hot_a", exe);
	name(p, hc, 0x555555555158, "hot_a", exe);
	name(p, hc, 0x555555555170, "hot_b", exe);
	name(p, hc, 0x5555555551a5, "via_x", exe);
	name(p, hc, 0x5555555551d5, "via_y", exe);
	name(p, hc, 0x5555555551f5, "via_z", exe);
	name(p, hc, 0x555555555230, "main", exe);
	name(p, hc, 0x555555555240, "main", exe);
	name(p, hc, 0x555555555250, "main", exe);
	name(p, hc, 0x7ffff7df218a, NULL, libc);
	name(p, nz, 0x401120, "spin", noise_exe);
	name(p, nz, 0x401260, "main", noise_exe);
	name(p, nz, 0x401270, "main", noise_exe);
	name(p, nz, 0x7ffff7e8a1f0, NULL, libc);
	name(p, PROFILE_KERNEL_PROC, K_LEAF, "do_syscall_64", "[kernel.kallsyms]");
	name(p, PROFILE_KERNEL_PROC, K_ENTRY, "entry_SYSCALL_64", "[kernel.kallsyms]");

	err = write_pprof(p, &pb);
	err = err ?: write_folded(p, &folded);
	if (err)
		fprintf(stderr, "profile2: writing: %s\n", strerror(-err));
	else
		err = write_file(argv[1], ".pb.gz", &pb) ?: write_file(argv[1], ".folded", &folded);
	buf__free(&pb);
	buf__free(&folded);
	profile__free(p);
	return err != 0;
}

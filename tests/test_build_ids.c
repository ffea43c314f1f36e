// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/symbolize/build_ids.c (include/build_ids.h): which
 * mappings of a profile get a build-id from their files, and from which file
 * (the process's root under a fake proc folder first, then the host path).
 * The files are minimal ELF images written here byte by byte: an ELF64
 * header and one PT_NOTE program header over a GNU build-id note.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "build_ids.h"
#include "profile.h"

#define PID 4242
#define PID2 4343
#define BASE 0x7f0000000000ULL

struct fixture {
	char dir[64]; /* holds proc/ (the fake /proc) and host/ (files at host paths) */
	char proc[96], host[96];
	struct profile *p;
	uint32_t proc_a, proc_b;
};

/* ELF64 little-endian: Ehdr (64 bytes), one Phdr (56) PT_NOTE at 120, the note */
static void write_elf(const char *path, uint8_t id_byte)
{
	uint8_t f[120 + 12 + 4 + 20] = { 0x7f, 'E', 'L', 'F', 2 /* 64 */, 1 /* LE */, 1 };
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;
	int fd;

#define PUT(off, v, var) (var = (v), memcpy(f + (off), &var, sizeof(var)))
	PUT(16, 3, u16); /* e_type ET_DYN */
	PUT(18, 62, u16); /* e_machine EM_X86_64 */
	PUT(20, 1, u32); /* e_version */
	PUT(32, 64, u64); /* e_phoff */
	PUT(52, 64, u16); /* e_ehsize */
	PUT(54, 56, u16); /* e_phentsize */
	PUT(56, 1, u16); /* e_phnum */
	PUT(58, 64, u16); /* e_shentsize */
	PUT(64, 4, u32); /* p_type PT_NOTE */
	PUT(64 + 8, 120, u64); /* p_offset */
	PUT(64 + 32, 36, u64); /* p_filesz */
	PUT(64 + 40, 36, u64); /* p_memsz */
	PUT(64 + 48, 4, u64); /* p_align */
	PUT(120, 4, u32); /* namesz */
	PUT(124, 20, u32); /* descsz */
	PUT(128, 3, u32); /* NT_GNU_BUILD_ID */
#undef PUT
	memcpy(f + 132, "GNU", 4);
	memset(f + 136, id_byte, 20);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, f, sizeof(f)), (ssize_t)sizeof(f));
	close(fd);
}

static void mkdirs(const char *path)
{
	char p[PATH_MAX], *s;

	snprintf(p, sizeof(p), "%s", path);
	for (s = p + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			mkdir(p, 0700);
			*s = '/';
		}
	mkdir(p, 0700);
}

static void add_map(struct profile *p, uint32_t proc, uint64_t start, const char *path,
		    uint8_t id_byte)
{
	struct profile_mapping m = { .start = start, .end = start + 0x1000, .perms = "r-xp" };

	m.path = profile__intern(p, path);
	if (id_byte) {
		memset(m.build_id, id_byte, 20);
		m.build_id_len = 20;
	}
	assert_int_equal(profile__add_mapping(p, proc, &m), 1);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	bool created;
	int a, b;

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_build_ids.XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->proc, sizeof(f->proc), "%s/proc", f->dir);
	snprintf(f->host, sizeof(f->host), "%s/host", f->dir);
	f->p = profile__new();
	a = f->p ? profile__process(f->p, PID, &created) : -1;
	b = a >= 0 ? profile__process(f->p, PID2, &created) : -1;
	if (b < 0)
		return -1;
	f->proc_a = (uint32_t)a;
	f->proc_b = (uint32_t)b;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	profile__free(f->p);
	free(f);
	return 0;
}

/* A path in the process's root: <proc>/PID/root<path>, written as an ELF with id_byte. */
static void root_file(struct fixture *f, uint32_t pid, const char *path, uint8_t id_byte)
{
	char full[PATH_MAX], dir[PATH_MAX];

	snprintf(full, sizeof(full), "%s/%u/root%s", f->proc, pid, path);
	snprintf(dir, sizeof(dir), "%s", full);
	*strrchr(dir, '/') = '\0';
	mkdirs(dir);
	write_elf(full, id_byte);
}

static void add_stack(struct fixture *f, uint32_t proc, const uint64_t *ips, uint16_t nu)
{
	bool created;

	assert_true(profile__add_stack(f->p, proc, ips, 0, nu, 1, 1, &created) >= 0);
}

static const struct profile_mapping *map_of(const struct fixture *f, uint32_t proc, uint64_t addr)
{
	int m = profile__find_mapping(f->p, proc, addr);

	assert_true(m >= 0);
	return &f->p->procs[proc].mappings[m];
}

static void assert_id(const struct profile_mapping *m, uint8_t id_byte)
{
	uint8_t want[20];

	if (!id_byte) {
		assert_int_equal(m->build_id_len, 0);
		return;
	}
	memset(want, id_byte, 20);
	assert_int_equal(m->build_id_len, 20);
	assert_memory_equal(m->build_id, want, 20);
}

/* resolved: the frames' mappings are their locations' (profile__user_frame_mapping) */
static void fill(struct fixture *f, bool resolved)
{
	char host_lib[128], both_lib[128], deleted[160];
	/* leaf in /opt/a; return addresses: one just past /opt/b's end (looked up at -1) */
	const uint64_t s1[] = { BASE + 0x10, BASE + 0x2000, BASE + 0x4010, BASE + 0x6010 };
	const uint64_t s2[] = { BASE + 0x8010, BASE + 0xa010, BASE + 0xc010 };
	const uint64_t s3[] = { BASE + 0x10 };
	const uint64_t s4[] = { BASE + 0x3010 };

	snprintf(host_lib, sizeof(host_lib), "%s/lib.so", f->host);
	snprintf(both_lib, sizeof(both_lib), "%s/both.so", f->host);
	snprintf(deleted, sizeof(deleted), "%s (deleted)", host_lib);
	mkdirs(f->host);
	write_elf(host_lib, 0x33); /* only on the host */
	write_elf(both_lib, 0x45);
	root_file(f, PID, "/opt/a", 0x11);
	root_file(f, PID, "/opt/b", 0x22);
	root_file(f, PID, both_lib, 0x44); /* the process's view wins over the host's */
	root_file(f, PID2, "/opt/a", 0x55); /* read once per path: PID's is taken */

	add_map(f->p, f->proc_a, BASE, "/opt/a", 0);
	add_map(f->p, f->proc_a, BASE + 0x1000, "/opt/b", 0);
	add_map(f->p, f->proc_a, BASE + 0x3000, both_lib, 0);
	add_map(f->p, f->proc_a, BASE + 0x4000, "/opt/c", 0x66); /* the symbolizer's: kept */
	add_map(f->p, f->proc_a, BASE + 0x6000, "/opt/none", 0); /* no such file anywhere */
	add_map(f->p, f->proc_a, BASE + 0xe000, "/opt/unsampled", 0);
	add_map(f->p, f->proc_b, BASE, "/opt/a", 0);
	add_map(f->p, f->proc_b, BASE + 0x8000, host_lib, 0);
	add_map(f->p, f->proc_b, BASE + 0xa000, deleted, 0);
	add_map(f->p, f->proc_b, BASE + 0xc000, "[vdso]", 0);
	root_file(f, PID, "/opt/unsampled", 0x77);
	add_stack(f, f->proc_a, s1, 4);
	add_stack(f, f->proc_b, s2, 3);
	add_stack(f, f->proc_b, s3, 1);
	add_stack(f, f->proc_a, s4, 1);
	if (resolved)
		assert_int_equal(profile__resolve_locs(f->p), 0);

	assert_int_equal(build_ids__fill(f->p, f->proc), 0);
	assert_id(map_of(f, f->proc_a, BASE), 0x11);
	assert_id(map_of(f, f->proc_a, BASE + 0x1000), 0x22);
	assert_id(map_of(f, f->proc_a, BASE + 0x3000), 0x44);
	assert_id(map_of(f, f->proc_a, BASE + 0x4000), 0x66);
	assert_id(map_of(f, f->proc_a, BASE + 0x6000), 0);
	assert_id(map_of(f, f->proc_a, BASE + 0xe000), 0); /* no frame in it: not read */
	assert_id(map_of(f, f->proc_b, BASE), 0x11);
	assert_id(map_of(f, f->proc_b, BASE + 0x8000), 0x33); /* PID2 has no root: the host's */
	assert_id(map_of(f, f->proc_b, BASE + 0xa000),
		  0); /* deleted: its path may be another file */
	assert_id(map_of(f, f->proc_b, BASE + 0xc000), 0);

	/* idempotent; an empty profile is fine */
	assert_int_equal(build_ids__fill(f->p, f->proc), 0);
	assert_id(map_of(f, f->proc_b, BASE + 0x8000), 0x33);
}

static void test_fill(void **state)
{
	fill(*state, false);
}

static void test_fill_resolved(void **state)
{
	fill(*state, true);
}

static void test_empty(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(build_ids__fill(f->p, f->proc), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fill, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fill_resolved, setup, teardown),
		cmocka_unit_test_setup_teardown(test_empty, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

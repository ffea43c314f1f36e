// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/symbolize/sym_jit.c (include/sym_jit.h): finding a process's
 * jitdump (a mapped jit-<nspid>.dump) and perf map (/tmp/perf-<nspid>.map)
 * under its root, in a fake proc directory built here (<tmp>/proc/<pid>/status
 * and <tmp>/proc/<pid>/root). The jitdump files are assembled byte by byte
 * from "JITDUMP specification version 2" (Linux kernel tree,
 * tools/perf/Documentation/jitdump-specification.txt; file header, section III;
 * JIT_CODE_LOAD record, section IV). Covers: names from both files, the
 * jitdump winning over the perf map where both cover an address, held
 * descriptors (a file replaced after pin is not read; what the runtime
 * appends is, after jit_procs__reload), a symlinked perf map refused, files
 * of the wrong pid or named almost right left alone, and files created after
 * the first pin. Needs root for chown (skipped otherwise).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>
#include <cmocka.h>
#include "profile.h"
#include "sym_jit.h"
#include "sym_jitdump.h"

#define OWNER 4321
#define STRANGER 5555

struct fx {
	char tmp[64];
	char proc[96];
	struct profile *p;
	struct jit_procs *jp;
};

/* --- jitdump bytes, host byte order (the spec lets the reader detect the writer's order) --- */

struct dump {
	uint8_t b[2048];
	size_t len;
};

static void put(struct dump *d, const void *p, size_t n)
{
	assert_true(d->len + n <= sizeof(d->b));
	memcpy(d->b + d->len, p, n);
	d->len += n;
}

static void put32(struct dump *d, uint32_t v)
{
	put(d, &v, 4);
}

static void put64(struct dump *d, uint64_t v)
{
	put(d, &v, 8);
}

/* File header (III): magic, version, total_size, elf_mach, pad1, pid, timestamp, flags. */
static void dump_header(struct dump *d, uint32_t pid)
{
	memset(d, 0, sizeof(*d));
	put32(d, 0x4A695444); /* "JiTD" */
	put32(d, 1);
	put32(d, 40);
	put32(d, 62); /* EM_X86_64; the reader does not care */
	put32(d, 0);
	put32(d, pid);
	put64(d, 1);
	put64(d, 0);
	assert_int_equal(d->len, 40);
}

/*
 * JIT_CODE_LOAD (IV): record header (id 0, total_size, timestamp), then pid,
 * tid, vma, code_addr, code_size, code_index, the name with its NUL, and
 * code_size bytes of code.
 */
static void dump_load(struct dump *d, uint32_t pid, uint64_t ts, uint64_t addr, uint64_t size,
		      uint64_t index, const char *name)
{
	size_t start = d->len;
	uint32_t total = (uint32_t)(16 + 40 + strlen(name) + 1 + size);

	put32(d, 0);
	put32(d, total);
	put64(d, ts);
	put32(d, pid);
	put32(d, pid + 1);
	put64(d, addr);
	put64(d, addr);
	put64(d, size);
	put64(d, index);
	put(d, name, strlen(name) + 1);
	for (uint64_t i = 0; i < size; i++)
		put(d, "\xc3", 1);
	assert_int_equal(d->len - start, total);
}

/* --- the fake proc directory --- */

/* openat2(2) (Linux 5.6) is what proc_file__open stands on; valgrind, for one, lacks it. */
static void need_openat2(void)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT };
	int fd = (int)syscall(SYS_openat2, AT_FDCWD, "/", &how, sizeof(how));

	if (fd < 0 && errno == ENOSYS)
		skip();
	if (fd >= 0)
		close(fd);
}

static uid_t owner(void)
{
	return geteuid() == 0 ? OWNER : geteuid();
}

static void write_file(const char *path, const void *data, size_t len, uid_t uid)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	if (geteuid() == 0)
		assert_int_equal(fchown(fd, uid, 0), 0);
	assert_int_equal(close(fd), 0);
}

static void root_path(const struct fx *fx, uint32_t pid, const char *rel, char *out, size_t size)
{
	assert_true((size_t)snprintf(out, size, "%s/%u/root%s", fx->proc, pid, rel) < size);
}

static void root_file(const struct fx *fx, uint32_t pid, const char *rel, const void *data,
		      size_t len)
{
	char path[PATH_MAX];

	root_path(fx, pid, rel, path, sizeof(path));
	write_file(path, data, len, owner());
}

/* A process: status with NSpid "<pid> <nspid>", a root with /tmp and /work, and a profile entry. */
static uint32_t make_proc(struct fx *fx, uint32_t pid, uint32_t nspid, const char *const *maps,
			  size_t nr_maps)
{
	char path[PATH_MAX], text[512];
	bool created;
	int i;

	need_openat2();
	snprintf(path, sizeof(path), "%s/%u", fx->proc, pid);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(text, sizeof(text),
		 "Name:\tnode\nUmask:\t0022\nState:\tR (running)\nTgid:\t%u\nPid:\t%u\nPPid:\t1\n"
		 "Uid:\t%u\t%u\t%u\t%u\nGid:\t100\t100\t100\t100\nNStgid:\t%u\t%u\nNSpid:\t%u\t%u\n"
		 "NSpgid:\t%u\t1\nNSsid:\t%u\t1\n",
		 pid, pid, owner(), owner(), owner(), owner(), pid, nspid, pid, nspid, pid, pid);
	snprintf(path, sizeof(path), "%s/%u/status", fx->proc, pid);
	write_file(path, text, strlen(text), 0);
	root_path(fx, pid, "", path, sizeof(path));
	assert_int_equal(mkdir(path, 0755), 0);
	root_path(fx, pid, "/tmp", path, sizeof(path));
	assert_int_equal(mkdir(path, 01777), 0);
	root_path(fx, pid, "/work", path, sizeof(path));
	assert_int_equal(mkdir(path, 0755), 0);

	i = profile__process(fx->p, pid, &created);
	assert_true(i >= 0);
	for (size_t k = 0; k < nr_maps; k++) {
		struct profile_mapping m = { .start = 0x10000000ull * (k + 1),
					     .end = 0x10000000ull * (k + 1) + 0x1000 };

		memcpy(m.perms, "r-xp", 5);
		m.path = profile__intern(fx->p, maps[k]);
		assert_int_equal(profile__add_mapping(fx->p, (uint32_t)i, &m), 1);
	}
	return (uint32_t)i;
}

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	assert_non_null(fx);
	strcpy(fx->tmp, "/tmp/bpfprof-sj.XXXXXX");
	assert_non_null(mkdtemp(fx->tmp));
	snprintf(fx->proc, sizeof(fx->proc), "%s/proc", fx->tmp);
	assert_int_equal(mkdir(fx->proc, 0755), 0);
	fx->p = profile__new();
	assert_non_null(fx->p);
	fx->jp = jit_procs__new(fx->proc, 1 << 20);
	assert_non_null(fx->jp);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	char cmd[PATH_MAX];

	jit_procs__free(fx->jp);
	profile__free(fx->p);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", fx->tmp);
	free(fx);
	return 0;
}

static void check_name(const struct jit_table *t, uint64_t addr, const char *want)
{
	const char *name = jitdump__lookup(t, addr, NULL);

	if (!want) {
		if (name)
			fail_msg("0x%llx: got %s, want nothing", (unsigned long long)addr, name);
		return;
	}
	if (!name)
		fail_msg("0x%llx: got nothing, want %s", (unsigned long long)addr, want);
	assert_string_equal(name, want);
}

static const char *const maps_17[] = { "/usr/bin/node", "/work/jit-17.dump", "" };

static void test_dump_and_map(void **state)
{
	struct fx *fx = *state;
	static const char map[] = "4f00 200 pm_overlap\n9000 10 pm_only\n7000 10 pm_same\n";
	const struct jit_table *t;
	struct dump d;
	uint32_t proc;

	proc = make_proc(fx, 4242, 17, maps_17, 3);
	dump_header(&d, 17);
	dump_load(&d, 17, 1000, 0x5000, 0x100, 1, "js_hot");
	/* a record time of 0, as a perf map line has: the jitdump still wins */
	dump_load(&d, 17, 0, 0x7000, 0x10, 2, "js_ts0");
	root_file(fx, 4242, "/work/jit-17.dump", d.b, d.len);
	root_file(fx, 4242, "/tmp/perf-17.map", map, strlen(map));

	assert_false(jit_procs__has(fx->jp, 4242, 0));
	assert_int_equal(jit_procs__pin(fx->jp, fx->p, proc), 0);
	assert_true(jit_procs__has(fx->jp, 4242, 0));
	assert_false(jit_procs__has(fx->jp, 17, 0)); /* the tgid, not the in-namespace pid */
	t = jit_procs__table(fx->jp, fx->p, proc);
	assert_non_null(t);
	check_name(t, 0x5000, "js_hot"); /* both cover it: the jitdump wins */
	check_name(t, 0x5010, "js_hot");
	check_name(t, 0x50ff, "js_hot");
	check_name(t, 0x4f00, "pm_overlap"); /* the perf map alone */
	check_name(t, 0x4fff, "pm_overlap");
	check_name(t, 0x5100, NULL); /* past both */
	check_name(t, 0x9000, "pm_only");
	check_name(t, 0x900f, "pm_only");
	check_name(t, 0x9010, NULL);
	check_name(t, 0x1000, NULL);
	check_name(t, 0x7000, "js_ts0");
	check_name(t, 0x700f, "js_ts0");
	/* cached until reload */
	assert_ptr_equal(jit_procs__table(fx->jp, fx->p, proc), t);
}

/* The files are held open: replacing one after pin does not matter; what the writer appends does. */
static void test_held_and_reloaded(void **state)
{
	struct fx *fx = *state;
	static const char map_late[] = "b000 10 pm_late\n";
	char path[PATH_MAX];
	const struct jit_table *t;
	struct dump d, late, imp;
	uint32_t proc;
	int wfd;

	proc = make_proc(fx, 4242, 17, maps_17, 3);
	dump_header(&d, 17);
	dump_load(&d, 17, 1000, 0x5000, 0x100, 1, "js_hot");
	root_file(fx, 4242, "/work/jit-17.dump", d.b, d.len);
	root_file(fx, 4242, "/tmp/perf-17.map", "9000 10 pm_only\n", 16);
	assert_int_equal(jit_procs__pin(fx->jp, fx->p, proc), 0);
	t = jit_procs__table(fx->jp, fx->p, proc);
	check_name(t, 0x5000, "js_hot");
	check_name(t, 0x6000, NULL);

	/* the runtime keeps writing its file; someone puts another file at its path */
	root_path(fx, 4242, "/work/jit-17.dump", path, sizeof(path));
	wfd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	assert_true(wfd >= 0);
	assert_int_equal(unlink(path), 0);
	dump_header(&imp, 17);
	dump_load(&imp, 17, 5000, 0x5000, 0x100, 1, "impostor");
	dump_load(&imp, 17, 5000, 0xa000, 0x10, 2, "imp_only");
	root_file(fx, 4242, "/work/jit-17.dump", imp.b, imp.len);
	late.len = 0;
	dump_load(&late, 17, 2000, 0x6000, 0x20, 2, "js_late");
	assert_int_equal(write(wfd, late.b, late.len), (ssize_t)late.len);
	close(wfd);
	root_path(fx, 4242, "/tmp/perf-17.map", path, sizeof(path));
	wfd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	assert_true(wfd >= 0);
	assert_int_equal(write(wfd, map_late, strlen(map_late)), (ssize_t)strlen(map_late));
	close(wfd);

	/* not re-read before a reload */
	t = jit_procs__table(fx->jp, fx->p, proc);
	check_name(t, 0x6000, NULL);
	check_name(t, 0xb000, NULL);

	jit_procs__reload(fx->jp);
	t = jit_procs__table(fx->jp, fx->p, proc);
	assert_non_null(t);
	check_name(t, 0x5000, "js_hot");
	check_name(t, 0x6000, "js_late");
	check_name(t, 0x601f, "js_late");
	check_name(t, 0xa000, NULL);
	check_name(t, 0x9000, "pm_only");
	check_name(t, 0xb000, "pm_late");
	assert_true(jit_procs__has(fx->jp, 4242, 0));
}

/*
 * Run fn with stderr going to a file; returns how often `needle` was printed.
 * fn must not assert (a failure would leave stderr redirected): it returns
 * false instead, checked once stderr is back.
 */
static int count_warnings(bool (*fn)(struct fx *, uint32_t), struct fx *fx, uint32_t proc,
			  const char *needle)
{
	char log[] = "/tmp/bpfprof-sj-log.XXXXXX", buf[4096];
	int fd = mkstemp(log), saved = dup(2), n = 0;
	ssize_t len;
	bool ok;

	assert_true(fd >= 0 && saved >= 0);
	fflush(stderr);
	assert_true(dup2(fd, 2) == 2);
	ok = fn(fx, proc);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	len = pread(fd, buf, sizeof(buf) - 1, 0);
	close(fd);
	unlink(log);
	assert_true(ok);
	assert_true(len >= 0);
	buf[len] = '\0';
	for (const char *p = buf; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static bool pin_thrice_and_read(struct fx *fx, uint32_t proc)
{
	for (int i = 0; i < 3; i++)
		if (jit_procs__pin(fx->jp, fx->p, proc))
			return false;
	if (!jit_procs__table(fx->jp, fx->p, proc))
		return false;
	jit_procs__reload(fx->jp);
	return jit_procs__table(fx->jp, fx->p, proc) != NULL;
}

/* A perf map that is a symlink when first looked for is refused; the jitdump is still used. */
static void test_symlinked_map_refused(void **state)
{
	static const char *const maps[] = { "/work/jit-18.dump" };
	struct fx *fx = *state;
	char path[PATH_MAX];
	const struct jit_table *t;
	struct dump d;
	uint32_t proc;

	proc = make_proc(fx, 5252, 18, maps, 1);
	dump_header(&d, 18);
	dump_load(&d, 18, 10, 0x5000, 0x10, 1, "js18");
	root_file(fx, 5252, "/work/jit-18.dump", d.b, d.len);
	root_file(fx, 5252, "/tmp/real.map", "9000 10 pm_only\n", 16);
	root_path(fx, 5252, "/tmp/perf-18.map", path, sizeof(path));
	assert_int_equal(symlink("real.map", path), 0);

	/* pinned and read several times: warned about once */
	assert_int_equal(count_warnings(pin_thrice_and_read, fx, proc, "perf-18.map"), 1);
	assert_true(jit_procs__has(fx->jp, 5252, 0));
	t = jit_procs__table(fx->jp, fx->p, proc);
	assert_non_null(t);
	check_name(t, 0x5000, "js18");
	check_name(t, 0x9000, NULL);
	check_name(t, 0x9008, NULL);
	/* refused for good: a regular file put there later is not read either */
	assert_int_equal(unlink(path), 0);
	root_file(fx, 5252, "/tmp/perf-18.map", "9000 10 pm_only\n", 16);
	jit_procs__reload(fx->jp);
	assert_int_equal(jit_procs__pin(fx->jp, fx->p, proc), 0);
	t = jit_procs__table(fx->jp, fx->p, proc);
	check_name(t, 0x5000, "js18");
	check_name(t, 0x9000, NULL);
}

/* Only jit-<nspid>.dump, by its whole base name: not the outer pid's, not near-misses. */
static void test_wrong_names_not_picked(void **state)
{
	static const char *const maps[] = {
		"/work/jit-99.dump",  "/work/jit-6262.dump", "/work/jit-19.dump.old",
		"/work/xjit-19.dump", "/work/jit-190.dump",  "jit-19.dump",
	};
	struct fx *fx = *state;
	struct dump d;
	uint32_t proc;

	proc = make_proc(fx, 6262, 19, maps, sizeof(maps) / sizeof(maps[0]));
	dump_header(&d, 19);
	dump_load(&d, 19, 10, 0x5000, 0x10, 1, "wrong");
	root_file(fx, 6262, "/work/jit-99.dump", d.b, d.len);
	root_file(fx, 6262, "/work/jit-6262.dump", d.b, d.len);
	root_file(fx, 6262, "/work/jit-19.dump.old", d.b, d.len);
	root_file(fx, 6262, "/work/xjit-19.dump", d.b, d.len);
	root_file(fx, 6262, "/work/jit-190.dump", d.b, d.len);
	/* the right name exists too, but is not mapped: perf finds jitdumps by their mapping */
	root_file(fx, 6262, "/work/jit-19.dump", d.b, d.len);
	/* a perf map named for the outer pid is not the process's */
	root_file(fx, 6262, "/tmp/perf-6262.map", "5000 10 pm_outer\n", 17);

	assert_int_equal(jit_procs__pin(fx->jp, fx->p, proc), 0);
	assert_false(jit_procs__has(fx->jp, 6262, 0));
	assert_null(jit_procs__table(fx->jp, fx->p, proc));
}

/* A mapped dump whose file was replaced (" (deleted)") is looked for at its path. */
static void test_deleted_suffix(void **state)
{
	static const char *const maps[] = { "/work/jit-20.dump (deleted)" };
	struct fx *fx = *state;
	const struct jit_table *t;
	struct dump d;
	uint32_t proc;

	proc = make_proc(fx, 7272, 20, maps, 1);
	dump_header(&d, 20);
	dump_load(&d, 20, 10, 0x7000, 0x10, 1, "js20");
	root_file(fx, 7272, "/work/jit-20.dump", d.b, d.len);
	assert_int_equal(jit_procs__pin(fx->jp, fx->p, proc), 0);
	assert_true(jit_procs__has(fx->jp, 7272, 0));
	t = jit_procs__table(fx->jp, fx->p, proc);
	check_name(t, 0x7000, "js20");
}

/* Not found at pin: looked for again when the table is read. */
static void test_file_created_late(void **state)
{
	static const char *const maps[] = { "" };
	struct fx *fx = *state;
	const struct jit_table *t;
	uint32_t proc;

	proc = make_proc(fx, 8282, 21, maps, 1);
	assert_int_equal(jit_procs__pin(fx->jp, fx->p, proc), 0);
	assert_false(jit_procs__has(fx->jp, 8282, 0));
	root_file(fx, 8282, "/tmp/perf-21.map", "c000 40 late_map\n", 17);
	t = jit_procs__table(fx->jp, fx->p, proc);
	assert_non_null(t);
	check_name(t, 0xc03f, "late_map");
	assert_true(jit_procs__has(fx->jp, 8282, 0));
}

/* Someone else's perf map is refused; a gone process has nothing. */
static void test_foreign_and_gone(void **state)
{
	static const char *const maps[] = { "" };
	struct fx *fx = *state;
	char path[PATH_MAX];
	bool created;
	int gone;
	uint32_t proc;

	if (geteuid() != 0)
		skip();
	proc = make_proc(fx, 9292, 22, maps, 1);
	root_file(fx, 9292, "/tmp/perf-22.map", "d000 10 foreign\n", 16);
	root_path(fx, 9292, "/tmp/perf-22.map", path, sizeof(path));
	assert_int_equal(chown(path, STRANGER, 0), 0);
	assert_int_equal(jit_procs__pin(fx->jp, fx->p, proc), 0);
	assert_null(jit_procs__table(fx->jp, fx->p, proc));

	gone = profile__process(fx->p, 31337, &created);
	assert_true(gone >= 0);
	assert_int_equal(jit_procs__pin(fx->jp, fx->p, (uint32_t)gone), 0);
	assert_false(jit_procs__has(fx->jp, 31337, 0));
	assert_null(jit_procs__table(fx->jp, fx->p, (uint32_t)gone));
}

/* Never pinned: the table looks for the files itself. */
static void test_table_without_pin(void **state)
{
	struct fx *fx = *state;
	const struct jit_table *t;
	struct dump d;
	uint32_t proc;

	proc = make_proc(fx, 4242, 17, maps_17, 3);
	dump_header(&d, 17);
	dump_load(&d, 17, 1000, 0x5000, 0x100, 1, "js_hot");
	root_file(fx, 4242, "/work/jit-17.dump", d.b, d.len);
	t = jit_procs__table(fx->jp, fx->p, proc);
	assert_non_null(t);
	check_name(t, 0x5000, "js_hot");
	assert_int_equal(jitdump__count(t), 1);
}

/*
 * The notices' thread's halves (jit_capture__read, then jit_procs__adopt on
 * the owner's side): the files are opened from the maps text, the process
 * then exits and deletes them, and they are still read; a capture of an
 * unchanged process adopted twice holds each file once; an almost-right
 * name ("jit-170.dump" for nspid 17) or a " (deleted)" file is no source.
 */
static void test_capture_adopt(void **state)
{
	struct fx *fx = *state;
	static const char map[] = "9000 10 pm_only\n";
	char text[512], path[PATH_MAX];
	const struct jit_table *t;
	struct jit_capture jc;
	size_t nr_held;
	struct dump d;
	uint32_t proc;

	proc = make_proc(fx, 4242, 17, maps_17, 3);
	dump_header(&d, 17);
	dump_load(&d, 17, 1000, 0x5000, 0x100, 1, "js_hot");
	root_file(fx, 4242, "/work/jit-17.dump", d.b, d.len);
	root_file(fx, 4242, "/tmp/perf-17.map", map, strlen(map));
	snprintf(text, sizeof(text),
		 "10000000-10001000 r-xp 00000000 08:01 11 /usr/bin/node\n"
		 "20000000-20001000 r-xp 00000000 08:01 12 /work/jit-170.dump\n"
		 "30000000-30001000 r-xp 00000000 08:01 13 /work/jit-17.dump\n");
	jit_capture__read(fx->proc, 1 << 20, 4242, 0, text, strlen(text), &jc);
	assert_true(jc.ident_read);
	assert_false(jc.gone);
	assert_int_equal(jc.id.nspid, 17);
	assert_string_equal(jc.path[0], "/work/jit-17.dump");
	assert_string_equal(jc.path[1], "/tmp/perf-17.map");
	assert_true(jc.fd[0] >= 0);
	assert_true(jc.fd[1] >= 0);

	/* the process exits and deletes its files before the owner adopts them */
	root_path(fx, 4242, "/work/jit-17.dump", path, sizeof(path));
	assert_int_equal(unlink(path), 0);
	root_path(fx, 4242, "/tmp/perf-17.map", path, sizeof(path));
	assert_int_equal(unlink(path), 0);
	assert_int_equal(jit_procs__adopt(fx->jp, 4242, 0, &jc), 0);
	assert_int_equal(jc.fd[0], -ENOENT); /* taken */
	jit_capture__release(&jc);
	assert_true(jit_procs__has(fx->jp, 4242, 0));
	assert_int_equal(jit_procs__count(fx->jp, &nr_held), 1);
	assert_int_equal(nr_held, 2);
	t = jit_procs__table(fx->jp, fx->p, proc);
	assert_non_null(t);
	check_name(t, 0x5000, "js_hot");
	check_name(t, 0x9000, "pm_only");

	/* a second capture (the files gone now): nothing more held, nothing lost */
	jit_capture__read(fx->proc, 1 << 20, 4242, 0, text, strlen(text), &jc);
	assert_true(jc.fd[0] < 0);
	assert_int_equal(jit_procs__adopt(fx->jp, 4242, 0, &jc), 0);
	jit_capture__release(&jc);
	jit_procs__count(fx->jp, &nr_held);
	assert_int_equal(nr_held, 2);

	/* a deleted dump's line: its path is looked at, the file is not there */
	snprintf(text, sizeof(text),
		 "30000000-30001000 r-xp 00000000 08:01 13 /work/jit-17.dump (deleted)\n");
	jit_capture__read(fx->proc, 1 << 20, 4242, 0, text, strlen(text), &jc);
	assert_string_equal(jc.path[0], "/work/jit-17.dump");
	assert_int_equal(jc.fd[0], -ENOENT);
	jit_capture__release(&jc);
}

/* A process gone before its capture: marked gone at the adopt, no file looked for after. */
static void test_capture_gone(void **state)
{
	struct fx *fx = *state;
	static const char text[] = "30000000-30001000 r-xp 00000000 08:01 13 /work/jit-99.dump\n";
	struct jit_capture jc;
	size_t nr_held;

	need_openat2();
	jit_capture__read(fx->proc, 1 << 20, 9999, 0, text, strlen(text), &jc);
	assert_true(jc.gone);
	assert_false(jc.reused); /* reaped, not another's */
	assert_false(jc.ident_read);
	assert_true(jc.fd[0] < 0 && jc.fd[1] < 0);
	assert_int_equal(jit_procs__adopt(fx->jp, 9999, 0, &jc), 0);
	jit_capture__release(&jc);
	assert_false(jit_procs__has(fx->jp, 9999, 0));
	jit_procs__count(fx->jp, &nr_held);
	assert_int_equal(nr_held, 0);
}

/*
 * The pid another process's at the capture (its start time not the one
 * asked for): gone and reused, nothing opened; the same start: its own
 */
static void test_capture_reused(void **state)
{
	struct fx *fx = *state;
	static const char text[] = "30000000-30001000 r-xp 00000000 08:01 13 /work/jit-17.dump\n";
	char path[PATH_MAX], stat[512];
	struct jit_capture jc;

	make_proc(fx, 4343, 17, maps_17, 3);
	snprintf(
		stat, sizeof(stat),
		"4343 (node) S 1 4343 4343 0 -1 4194304 100 0 0 0 5 1 0 0 20 0 1 0 500 8192000 300 "
		"18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n");
	snprintf(path, sizeof(path), "%s/4343/stat", fx->proc);
	write_file(path, stat, strlen(stat), 0);
	jit_capture__read(fx->proc, 1 << 20, 4343, 500, text, strlen(text), &jc);
	assert_true(jc.ident_read);
	assert_false(jc.gone);
	assert_false(jc.reused);
	jit_capture__release(&jc);
	jit_capture__read(fx->proc, 1 << 20, 4343, 900, text, strlen(text), &jc);
	assert_true(jc.gone);
	assert_true(jc.reused);
	assert_false(jc.ident_read);
	assert_true(jc.fd[0] < 0 && jc.fd[1] < 0);
	jit_capture__release(&jc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_dump_and_map, setup, teardown),
		cmocka_unit_test_setup_teardown(test_held_and_reloaded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symlinked_map_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_names_not_picked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deleted_suffix, setup, teardown),
		cmocka_unit_test_setup_teardown(test_file_created_late, setup, teardown),
		cmocka_unit_test_setup_teardown(test_foreign_and_gone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_table_without_pin, setup, teardown),
		cmocka_unit_test_setup_teardown(test_capture_adopt, setup, teardown),
		cmocka_unit_test_setup_teardown(test_capture_gone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_capture_reused, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/symbolize/symbolize.c (include/symbolize.h) on a fake /proc in
 * a temporary directory, no root needed: the same path in two container
 * roots names two different files; the DSO cache is keyed by (path, device,
 * inode), so a third process mapping the same file is named from the cache
 * while one with another inode is not; a file held through
 * /proc/PID/map_files by symbolizer__pin names its frames after it is gone
 * from every root (and symbolizer__open_file hands out that very file, or
 * refuses one with another build-id); our own vDSO names [vdso] frames; a
 * file no root has leaves "DSO+0xADDR". The ELF files are tiny shared
 * objects built here with gcc (-nostdlib), each with one known function;
 * a profile of many locations, whose look-ups are made over two threads,
 * is named as the same locations are a few at a time (one thread), on a
 * copy of the host's libc beside one of those; and as by a symbolizer that
 * read the tables while sampling (symbolizer__preload), one of whose reads
 * failed.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <cmocka.h>
#include "profile.h"
#include "procmaps.h"
#include "symbolize.h"
#include "write_folded.h"
#include "write_gperf.h"
#include "write_pprof.h"
#include "write_svg.h"
#include "buf.h"

#define BASE 0x7f0000000000ull
#define LEN 0x10000ull

static char tmp[] = "/tmp/test_symbolize.XXXXXX";

#define TEST_TMP_DIR tmp
#include "test_files.h"

static char proc_dir[64];

/* lib_FN.so in tmp: one exported function FN, no libc */
static int build_lib(const char *fn)
{
	return sh("printf 'int %s(int x) { return x * 3 + 1; }\\n' > %s/%s.c && "
		  "gcc -O1 -shared -fPIC -nostdlib -Wl,--build-id -o %s/lib_%s.so %s/%s.c",
		  fn, tmp, fn, tmp, fn, tmp, fn);
}

static int setup_all(void **state)
{
	if (!mkdtemp(tmp))
		return -1;
	snprintf(proc_dir, sizeof(proc_dir), "%s/proc", tmp);
	if (build_lib("one_fn") || build_lib("two_fn"))
		return -1;
	/* pids 100 and 200: /opt/lib/libx.so in their roots is two different files */
	return sh(
		"mkdir -p %s/100/root/opt/lib %s/200/root/opt/lib %s/300/root %s/400/root "
		"%s/500/root %s/500/map_files %s/600/root && "
		"cp %s/lib_one_fn.so %s/100/root/opt/lib/libx.so && cp %s/lib_two_fn.so %s/200/root/opt/lib/libx.so",
		proc_dir, proc_dir, proc_dir, proc_dir, proc_dir, proc_dir, proc_dir, tmp, proc_dir,
		tmp, proc_dir);
}

static int teardown_all(void **state)
{
	return sh("rm -rf '%s'", tmp);
}

/* The file offset and virtual address of function fn in the ELF image at img (section headers read). */
static uint64_t sym_value(const uint8_t *img, const char *fn, uint64_t *file_off)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(img + eh->e_shoff);
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(img + eh->e_phoff);

	for (int i = 0; i < eh->e_shnum; i++) {
		const Elf64_Sym *sym;
		const char *str;

		if (sh[i].sh_type != SHT_DYNSYM)
			continue;
		sym = (const Elf64_Sym *)(img + sh[i].sh_offset);
		str = (const char *)img + sh[sh[i].sh_link].sh_offset;
		for (size_t j = 0; j < sh[i].sh_size / sizeof(*sym); j++) {
			if (strcmp(str + sym[j].st_name, fn))
				continue;
			for (int k = 0; k < eh->e_phnum; k++)
				if (ph[k].p_type == PT_LOAD && sym[j].st_value >= ph[k].p_vaddr &&
				    sym[j].st_value < ph[k].p_vaddr + ph[k].p_memsz) {
					*file_off =
						sym[j].st_value - ph[k].p_vaddr + ph[k].p_offset;
					return sym[j].st_value;
				}
		}
	}
	fail_msg("no symbol '%s'", fn);
	return 0;
}

/* The offset of fn in the file at path */
static uint64_t file_offset_of(const char *path, const char *fn)
{
	uint8_t buf[65536];
	uint64_t off = 0;
	int fd = open(path, O_RDONLY);
	ssize_t n;

	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf));
	close(fd);
	assert_true(n > (ssize_t)sizeof(Elf64_Ehdr));
	sym_value(buf, fn, &off);
	return off;
}

/*
 * Process pid maps the file mapped_as whose identity is that of the file
 * `ident` (device, inode: the kernel's view in /proc/PID/maps) at BASE,
 * executable, from file offset 0; one sample at BASE + off.
 */
static uint32_t add_proc(struct profile *p, uint32_t pid, const char *mapped_as, const char *ident,
			 uint64_t off)
{
	struct profile_mapping m = { .start = BASE, .end = BASE + LEN, .offset = 0 };
	struct stat sb;
	bool created;
	uint64_t ip = BASE + off;
	int proc = profile__process(p, pid, &created);

	assert_true(proc >= 0);
	assert_int_equal(stat(ident, &sb), 0);
	m.inode = sb.st_ino;
	m.dev_major = major(sb.st_dev);
	m.dev_minor = minor(sb.st_dev);
	memcpy(m.perms, "r-xp", 5);
	m.path = profile__intern(p, mapped_as);
	assert_true(profile__add_mapping(p, (uint32_t)proc, &m) >= 0);
	assert_true(profile__add_stack(p, (uint32_t)proc, &ip, 0, 1, 1, 1, &created) >= 0);
	return (uint32_t)proc;
}

/* The location of process proc at addr */
static const struct profile_location *loc_of(const struct profile *p, uint32_t proc, uint64_t addr)
{
	for (size_t i = 0; i < p->nr_locs; i++)
		if (p->locs[i].proc == proc && p->locs[i].addr == addr)
			return &p->locs[i];
	fail_msg("no location %u:%llx", proc, (unsigned long long)addr);
	return NULL;
}

static void assert_func(const struct profile *p, uint32_t proc, uint64_t addr, const char *func)
{
	const struct profile_location *l = loc_of(p, proc, addr);

	if (!func) {
		if (l->func)
			fail_msg("proc %u: named '%s', want unnamed", proc, l->func);
		return;
	}
	if (!l->func || strcmp(l->func, func))
		fail_msg("proc %u: named '%s', want '%s'", proc, l->func ? l->func : "(none)",
			 func);
	assert_int_equal(l->func_offset, 0);
}

/*
 * Container roots and the DSO cache's identity: the same path in two roots
 * is two files; the same (path, device, inode) is one, read once.
 */
static void test_container_roots_and_cache_identity(void **state)
{
	char one[256], two[256], lib[256];
	struct profile *p = profile__new();
	struct symbolizer *sy = symbolizer__new(NULL, proc_dir);
	uint64_t off1, off2;
	uint32_t a, b, c, d;
	const struct profile_location *l;

	assert_non_null(p);
	assert_non_null(sy);
	snprintf(one, sizeof(one), "%s/100/root/opt/lib/libx.so", proc_dir);
	snprintf(two, sizeof(two), "%s/200/root/opt/lib/libx.so", proc_dir);
	off1 = file_offset_of(one, "one_fn");
	off2 = file_offset_of(two, "two_fn");
	a = add_proc(p, 100, "/opt/lib/libx.so", one, off1);
	b = add_proc(p, 200, "/opt/lib/libx.so", two, off2);
	/* 300 maps 100's file (same device and inode) but its root lacks it: the cache names it */
	c = add_proc(p, 300, "/opt/lib/libx.so", one, off1);
	/* 400: same path, another inode, no file anywhere: not named from 100's entry */
	snprintf(lib, sizeof(lib), "%s/lib_two_fn.so", tmp);
	d = add_proc(p, 400, "/opt/lib/libx.so", lib, off1);

	assert_int_equal(symbolizer__symbolize(sy, p), 0);
	assert_func(p, a, BASE + off1, "one_fn");
	assert_func(p, b, BASE + off2, "two_fn");
	assert_func(p, c, BASE + off1, "one_fn");
	assert_func(p, d, BASE + off1, NULL);
	l = loc_of(p, d, BASE + off1);
	assert_non_null(l->dso);
	assert_string_equal(l->dso, "libx.so");
	/* unnamed, but still told apart by its address: "DSO+0xADDR" */
	assert_non_null(l->addr_name);
	assert_true(!strncmp(l->addr_name, "libx.so+0x", 10));
	/* the build-id read from each file lands in its mapping */
	assert_true(p->procs[a].mappings[0].build_id_len > 0);
	assert_true(p->procs[b].mappings[0].build_id_len > 0);
	assert_memory_not_equal(p->procs[a].mappings[0].build_id, p->procs[b].mappings[0].build_id,
				p->procs[a].mappings[0].build_id_len);
	assert_int_equal(p->procs[d].mappings[0].build_id_len, 0);
	symbolizer__free(sy);
	profile__free(p);
}

/*
 * map_files pins: process 500's file is in no root, only behind
 * /proc/500/map_files/START-END (as for a deleted file, or one in another
 * mount namespace once the process is gone); 600 has no such entry.
 */
static void test_map_files_pin(void **state)
{
	char pinned[256], one[256], two[256];
	struct profile *p = profile__new();
	struct symbolizer *sy = symbolizer__new(NULL, proc_dir);
	const struct profile_mapping *m;
	uint8_t id[64];
	uint64_t off;
	uint32_t a, b;
	int fd;

	assert_non_null(p);
	assert_non_null(sy);
	snprintf(one, sizeof(one), "%s/lib_one_fn.so", tmp);
	snprintf(two, sizeof(two), "%s/lib_two_fn.so", tmp);
	snprintf(pinned, sizeof(pinned), "%s/500/map_files/%llx-%llx", proc_dir, BASE, BASE + LEN);
	assert_int_equal(sh("cp %s %s", one, pinned), 0);
	off = file_offset_of(one, "one_fn");
	a = add_proc(p, 500, "/opt/gone/liby.so (deleted)", one, off);
	b = add_proc(p, 600, "/opt/gone/liby.so (deleted)", two, off);
	assert_int_equal(symbolizer__pin(sy, p, a), 0);
	assert_int_equal(symbolizer__pin(sy, p, b), 0);
	/* the pin holds the file open: removing the name changes nothing */
	assert_int_equal(unlink(pinned), 0);

	assert_int_equal(symbolizer__symbolize(sy, p), 0);
	assert_func(p, a, BASE + off, "one_fn");
	assert_func(p, b, BASE + off, NULL);

	/* the file for copying is the pinned one, checked against the mapping's build-id */
	m = &p->procs[a].mappings[0];
	assert_true(m->build_id_len > 0);
	fd = symbolizer__open_file(sy, p, a, m);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, id, 4, 0), 4);
	assert_memory_equal(id, ELFMAG, 4);
	close(fd);
	/* a deleted file without a build-id is not looked up by a path that may name another file */
	assert_int_equal(symbolizer__open_file(sy, p, b, &p->procs[b].mappings[0]), -ENOENT);
	/* another build-id than the mapping's: refused */
	{
		struct profile_mapping other = *m;

		other.build_id[0] ^= 0xff;
		assert_int_equal(symbolizer__open_file(sy, p, a, &other), -ESTALE);
	}
	symbolizer__free(sy);
	profile__free(p);
}

/*
 * The notices' thread's halves (symbolizer__capture, symbolizer__adopt):
 * process 500's maps text names its file twice (two executable mappings:
 * one descriptor) and a data mapping (none); the capture opens the
 * map_files entry, the process then goes (the entries removed), and the
 * adopted descriptor names its frames. A second adopt of the same file
 * holds nothing more; max_files 0 opens none.
 */
static void test_capture_adopt(void **state)
{
	char one[256], pinned[256], pinned2[256], text[1024];
	struct profile *p = profile__new();
	struct symbolizer *sy = symbolizer__new(NULL, proc_dir);
	struct symbolizer_counts sc;
	struct sym_capture c;
	struct stat sb;
	uint64_t off, ip;
	bool created;
	int proc;

	assert_non_null(p);
	assert_non_null(sy);
	snprintf(one, sizeof(one), "%s/lib_one_fn.so", tmp);
	assert_int_equal(stat(one, &sb), 0);
	snprintf(pinned, sizeof(pinned), "%s/500/map_files/%llx-%llx", proc_dir, BASE, BASE + LEN);
	snprintf(pinned2, sizeof(pinned2), "%s/500/map_files/%llx-%llx", proc_dir, BASE + LEN,
		 BASE + 2 * LEN);
	assert_int_equal(sh("cp %s %s && cp %s %s", one, pinned, one, pinned2), 0);
	snprintf(text, sizeof(text),
		 "%llx-%llx r-xp 00000000 %02x:%02x %llu /opt/gone/liby.so (deleted)\n"
		 "%llx-%llx r-xp 00000000 %02x:%02x %llu /opt/gone/liby.so (deleted)\n"
		 "%llx-%llx rw-p 00000000 00:00 0 \n",
		 BASE, BASE + LEN, major(sb.st_dev), minor(sb.st_dev),
		 (unsigned long long)sb.st_ino, BASE + LEN, BASE + 2 * LEN, major(sb.st_dev),
		 minor(sb.st_dev), (unsigned long long)sb.st_ino, BASE + 2 * LEN, BASE + 3 * LEN);

	symbolizer__capture(proc_dir, 1 << 20, 500, 0, text, strlen(text), 0, &c);
	assert_int_equal(c.nr_files, 0);
	sym_capture__release(&c);
	symbolizer__capture(proc_dir, 1 << 20, 500, 0, text, strlen(text), 64, &c);
	assert_int_equal(c.nr_files, 1); /* one file, however many mappings */
	assert_true(c.files[0].fd >= 0);
	assert_true(c.files[0].start == BASE);
	/* the process goes: its map_files with it */
	assert_int_equal(unlink(pinned), 0);
	assert_int_equal(unlink(pinned2), 0);

	/* the owner's side: the process's profile from the same text, then the adopt */
	proc = profile__process(p, 500, &created);
	assert_true(proc >= 0);
	assert_int_equal(procmaps__merge(p, (uint32_t)proc, text, strlen(text), "test"), 3);
	assert_int_equal(symbolizer__adopt(sy, p, (uint32_t)proc, &c), 0);
	assert_int_equal(c.files[0].fd, -1); /* the symbolizer's now */
	sym_capture__release(&c);
	symbolizer__counts(sy, &sc);
	assert_int_equal(sc.nr_pins, 1);

	off = file_offset_of(one, "one_fn");
	ip = BASE + off;
	assert_true(profile__add_stack(p, (uint32_t)proc, &ip, 0, 1, 1, 1, &created) >= 0);
	assert_int_equal(symbolizer__symbolize(sy, p), 0);
	assert_func(p, (uint32_t)proc, BASE + off, "one_fn");

	/* captured again (the entry back): held already, the new descriptor closed */
	assert_int_equal(sh("cp %s %s", one, pinned), 0);
	symbolizer__capture(proc_dir, 1 << 20, 500, 0, text, strlen(text), 64, &c);
	assert_int_equal(c.nr_files, 1);
	assert_int_equal(symbolizer__adopt(sy, p, (uint32_t)proc, &c), 0);
	assert_true(c.files[0].fd >= 0); /* left to c */
	sym_capture__release(&c);
	symbolizer__counts(sy, &sc);
	assert_int_equal(sc.nr_pins, 1);
	assert_int_equal(unlink(pinned), 0);
	symbolizer__free(sy);
	profile__free(p);
}

/* [vdso] frames are named from our own vDSO, as every 64-bit process maps the same image. */
/* Process pid mapping the file `path` in its root, whole, executable, from offset 0 */
static uint32_t add_whole_file(struct profile *p, uint32_t pid, const char *mapped_as,
			       const char *path)
{
	struct profile_mapping m = { .start = BASE, .offset = 0 };
	struct stat sb;
	bool created;
	int proc = profile__process(p, pid, &created);

	assert_true(proc >= 0);
	assert_int_equal(stat(path, &sb), 0);
	m.end = BASE + (((uint64_t)sb.st_size + 4095) & ~4095ull);
	m.inode = sb.st_ino;
	m.dev_major = major(sb.st_dev);
	m.dev_minor = minor(sb.st_dev);
	memcpy(m.perms, "r-xp", 5);
	m.path = profile__intern(p, mapped_as);
	assert_true(profile__add_mapping(p, (uint32_t)proc, &m) >= 0);
	return (uint32_t)proc;
}

#define LIBC_LOCS 700
#define LIBX_LOCS 100

/*
 * Locations [from, to) of the test's list: libc's at every 0x301st byte
 * from 0x20000 (named, a few past any symbol), then libx's at one_fn and
 * the bytes after it (past its end: "DSO+0xADDR"); one stack each.
 */
static struct profile *many_locs(const char *libc, const char *libx, uint64_t off_x, int from,
				 int to)
{
	struct profile *p = profile__new();
	uint32_t c, x;
	bool created;

	assert_non_null(p);
	c = add_whole_file(p, 800, "/opt/lib/libc.so.6", libc);
	x = add_whole_file(p, 100, "/opt/lib/libx.so", libx);
	for (int i = from; i < to; i++) {
		uint64_t ip = i < LIBC_LOCS ? BASE + 0x20000 + (uint64_t)i * 0x301 :
					      BASE + off_x + (uint64_t)(i - LIBC_LOCS);

		assert_true(profile__add_stack(p, i < LIBC_LOCS ? c : x, &ip, 0, 1, 1, 1,
					       &created) >= 0);
	}
	return p;
}

static bool same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/*
 * Many locations (their look-ups over two threads, a file each) are named
 * as the same locations are 200 at a time, under the split's threshold (one
 * thread): function, offset, DSO, and the "DSO+0xADDR" of those past any symbol.
 */
static void test_many_locations_over_two_threads(void **state)
{
	char libc[256], libx[256];
	struct profile *all;
	struct symbolizer *sy = symbolizer__new(NULL, proc_dir);
	uint64_t off_x;
	size_t named = 0, unnamed = 0;

	assert_non_null(sy);
	if (sh("mkdir -p %s/800/root/opt/lib && cp \"$(gcc -print-file-name=libc.so.6)\" "
	       "%s/800/root/opt/lib/libc.so.6",
	       proc_dir, proc_dir))
		skip();
	snprintf(libc, sizeof(libc), "%s/800/root/opt/lib/libc.so.6", proc_dir);
	snprintf(libx, sizeof(libx), "%s/100/root/opt/lib/libx.so", proc_dir);
	off_x = file_offset_of(libx, "one_fn");
	all = many_locs(libc, libx, off_x, 0, LIBC_LOCS + LIBX_LOCS);
	assert_int_equal(symbolizer__symbolize(sy, all), 0);
	/* the locations are the profile's from here (profile__resolve_locs) */
	assert_int_equal(all->nr_locs, LIBC_LOCS + LIBX_LOCS);
	for (int from = 0; from < LIBC_LOCS + LIBX_LOCS; from += 200) {
		struct symbolizer *one = symbolizer__new(NULL, proc_dir);
		struct profile *p = many_locs(libc, libx, off_x, from, from + 200);

		assert_non_null(one);
		assert_int_equal(symbolizer__symbolize(one, p), 0);
		for (size_t i = 0; i < p->nr_locs; i++) {
			const struct profile_location *a = &p->locs[i];
			const struct profile_location *b =
				loc_of(all, all->procs[a->proc].pid == 800 ? 0 : 1, a->addr);

			if (!same_str(a->func, b->func) || !same_str(a->dso, b->dso) ||
			    !same_str(a->addr_name, b->addr_name) ||
			    a->func_offset != b->func_offset)
				fail_msg("%llx: '%s'+%llu '%s' alone, '%s'+%llu '%s' among all",
					 (unsigned long long)a->addr, a->func ? a->func : "-",
					 (unsigned long long)a->func_offset,
					 a->addr_name ? a->addr_name : "-", b->func ? b->func : "-",
					 (unsigned long long)b->func_offset,
					 b->addr_name ? b->addr_name : "-");
			named += a->func != NULL;
			unnamed += a->addr_name != NULL;
		}
		symbolizer__free(one);
		profile__free(p);
	}
	/* both kinds met: libc's functions, and libx's bytes past one_fn */
	assert_true(named > LIBC_LOCS / 2);
	assert_true(unnamed > LIBX_LOCS / 2);
	symbolizer__free(sy);
	profile__free(all);
}

/* Until the preload has tried n files (5 s at most) */
static void wait_preload_tried(struct symbolizer *sy, size_t n)
{
	struct symbolizer_counts sc;

	for (int i = 0; i < 5000; i++) {
		symbolizer__counts(sy, &sc);
		if (sc.nr_preload_tried >= n)
			break;
		usleep(1000);
	}
	assert_int_equal(sc.nr_preload_tried, n);
}

/*
 * Tables read while sampling (symbolizer__preload): the pinned files are
 * read on the preload's thread, and the profile is named as by a
 * symbolizer that reads them at the end, by path. libc's pin reads (the
 * table is taken); libx's map_files entry is not an ELF file: its read
 * fails, and libx is read again at the end the usual way (by path, under
 * the process's root).
 */
static void test_preload(void **state)
{
	char libc[256], libx[256], pin_c[256], pin_x[256];
	struct profile *p, *q;
	struct symbolizer *sy = symbolizer__new(NULL, proc_dir);
	struct symbolizer *plain = symbolizer__new(NULL, proc_dir);
	struct symbolizer_counts sc;
	uint64_t off_x;

	assert_non_null(sy);
	assert_non_null(plain);
	if (sh("mkdir -p %s/800/root/opt/lib && cp \"$(gcc -print-file-name=libc.so.6)\" "
	       "%s/800/root/opt/lib/libc.so.6",
	       proc_dir, proc_dir))
		skip();
	snprintf(libc, sizeof(libc), "%s/800/root/opt/lib/libc.so.6", proc_dir);
	snprintf(libx, sizeof(libx), "%s/100/root/opt/lib/libx.so", proc_dir);
	off_x = file_offset_of(libx, "one_fn");
	p = many_locs(libc, libx, off_x, 0, LIBC_LOCS + LIBX_LOCS);
	q = many_locs(libc, libx, off_x, 0, LIBC_LOCS + LIBX_LOCS);
	snprintf(pin_c, sizeof(pin_c), "%s/800/map_files/%llx-%llx", proc_dir,
		 (unsigned long long)p->procs[0].mappings[0].start,
		 (unsigned long long)p->procs[0].mappings[0].end);
	snprintf(pin_x, sizeof(pin_x), "%s/100/map_files/%llx-%llx", proc_dir,
		 (unsigned long long)p->procs[1].mappings[0].start,
		 (unsigned long long)p->procs[1].mappings[0].end);
	assert_int_equal(sh("mkdir -p %s/800/map_files %s/100/map_files && cp %s %s && "
			    "echo not-an-elf-file > %s",
			    proc_dir, proc_dir, libc, pin_c, pin_x),
			 0);

	assert_int_equal(symbolizer__preload(sy, 8, 0), 0);
	assert_int_equal(symbolizer__pin(sy, p, 0), 0);
	assert_int_equal(symbolizer__pin(sy, p, 1), 0);
	assert_int_equal(symbolizer__pin(sy, p, 0), 0); /* pinned already: not queued again */
	wait_preload_tried(sy, 2);
	symbolizer__counts(sy, &sc);
	assert_int_equal(sc.nr_preload_queued, 2);
	assert_int_equal(sc.nr_preloaded, 0);

	assert_int_equal(symbolizer__symbolize(sy, p), 0);
	assert_int_equal(symbolizer__symbolize(plain, q), 0);
	symbolizer__counts(sy, &sc);
	assert_int_equal(sc.nr_preloaded, 1); /* libc's; libx's read failed */
	assert_int_equal(sc.nr_files, 2);
	assert_int_equal(p->nr_locs, q->nr_locs);
	for (size_t i = 0; i < p->nr_locs; i++) {
		const struct profile_location *a = &p->locs[i], *b = &q->locs[i];

		assert_true(a->addr == b->addr && a->proc == b->proc);
		if (!same_str(a->func, b->func) || !same_str(a->dso, b->dso) ||
		    !same_str(a->addr_name, b->addr_name) || a->func_offset != b->func_offset)
			fail_msg("%llx: '%s'+%llu preloaded, '%s'+%llu read at the end",
				 (unsigned long long)a->addr, a->func ? a->func : "-",
				 (unsigned long long)a->func_offset, b->func ? b->func : "-",
				 (unsigned long long)b->func_offset);
	}
	assert_non_null(loc_of(p, 1, BASE + off_x)->func);
	assert_string_equal(loc_of(p, 1, BASE + off_x)->func, "one_fn");
	/* the build-ids recorded from the preloaded table, as from one read at the end */
	assert_true(p->procs[0].mappings[0].build_id_len > 0);
	assert_int_equal(p->procs[0].mappings[0].build_id_len,
			 q->procs[0].mappings[0].build_id_len);
	assert_memory_equal(p->procs[0].mappings[0].build_id, q->procs[0].mappings[0].build_id,
			    q->procs[0].mappings[0].build_id_len);
	assert_int_equal(sh("rm -rf %s/800/map_files %s/100/map_files", proc_dir, proc_dir), 0);
	symbolizer__free(sy);
	symbolizer__free(plain);
	profile__free(p);
	profile__free(q);
}

/* The i-th stack of the passes' test: a leaf and two return addresses, the callers shared */
static void ahead_stack(struct profile *p, uint32_t proc, int i)
{
	/* in both libraries' text (libc's from 0x26000, libstdc++'s 0x99000-0x19a000) */
	uint64_t ips[3] = { BASE + 0xa0000 + (uint64_t)i * 0x301, BASE + 0xb0001 + (i % 7) * 0x111,
			    BASE + 0xc0001 + (i % 3) * 0x55 };
	bool created;

	assert_true(profile__add_stack(p, proc, ips, 0, 3, 1, 1, &created) >= 0);
}

#define AHEAD_STACKS 600

/*
 * The mappings' changes of the passes' test, once half the stacks are in:
 * process 1 gets an executable anonymous mapping below its file's (the
 * file's mapping moves up one), process 0's file is replaced by a small
 * mapping of another file in its middle (its other addresses unmapped)
 */
static void ahead_remap(struct profile *p, const char *other)
{
	struct profile_mapping anon = { .start = BASE - 0x10000, .end = BASE }, m;
	struct stat sb;

	memcpy(anon.perms, "r-xp", 5);
	anon.path = profile__intern(p, "");
	assert_int_equal(profile__add_mapping(p, 1, &anon), 1);
	assert_int_equal(stat(other, &sb), 0);
	m = (struct profile_mapping){ .start = BASE + 0xb0000,
				      .end = BASE + 0xe0000,
				      .offset = 0x40000,
				      .inode = sb.st_ino,
				      .dev_major = major(sb.st_dev),
				      .dev_minor = minor(sb.st_dev) };
	memcpy(m.perms, "r-xp", 5);
	m.path = profile__intern(p, "/opt/lib/other.so");
	assert_int_equal(profile__add_mapping(p, 0, &m), 1);
}

/* Writer w's output of a and of b, byte for byte the same */
#define assert_same_output(w, a, b, ...)                       \
	do {                                                   \
		struct buf x_ = { 0 }, y_ = { 0 };             \
                                                               \
		assert_int_equal(w(a, &x_, ##__VA_ARGS__), 0); \
		assert_int_equal(w(b, &y_, ##__VA_ARGS__), 0); \
		assert_int_equal(x_.len, y_.len);              \
		assert_memory_equal(x_.data, y_.data, x_.len); \
		buf__free(&x_);                                \
		buf__free(&y_);                                \
	} while (0)

/*
 * Every location and mapping of a and b the same (the build-ids and debug
 * paths perf.data's writer takes from them too), and their folded, pprof,
 * SVG and .prof outputs byte for byte
 */
static void assert_same_profiles(const struct profile *a, const struct profile *b)
{
	assert_int_equal(a->nr_locs, b->nr_locs);
	for (size_t i = 0; i < a->nr_locs; i++) {
		const struct profile_location *x = &a->locs[i], *y = &b->locs[i];

		if (x->addr != y->addr || x->proc != y->proc || x->is_return != y->is_return ||
		    x->mapping != y->mapping || x->is_jit != y->is_jit ||
		    x->func_offset != y->func_offset || x->line != y->line ||
		    !same_str(x->func, y->func) || !same_str(x->sys_func, y->sys_func) ||
		    !same_str(x->dso, y->dso) || !same_str(x->addr_name, y->addr_name) ||
		    !same_str(x->src_file, y->src_file))
			fail_msg("location %zu (%u:%llx): '%s' (%s) +%llu '%s' map %d by passes, "
				 "'%s' (%s) +%llu '%s' map %d at once",
				 i, x->proc, (unsigned long long)x->addr, x->func ? x->func : "-",
				 x->sys_func ? x->sys_func : "-",
				 (unsigned long long)x->func_offset, x->dso ? x->dso : "-",
				 x->mapping, y->func ? y->func : "-",
				 y->sys_func ? y->sys_func : "-",
				 (unsigned long long)y->func_offset, y->dso ? y->dso : "-",
				 y->mapping);
	}
	for (size_t i = 0; i < a->nr_procs; i++) {
		assert_int_equal(a->procs[i].nr_mappings, b->procs[i].nr_mappings);
		for (size_t j = 0; j < a->procs[i].nr_mappings; j++) {
			const struct profile_mapping *x = &a->procs[i].mappings[j],
						     *y = &b->procs[i].mappings[j];

			assert_int_equal(x->build_id_len, y->build_id_len);
			assert_memory_equal(x->build_id, y->build_id, x->build_id_len);
			assert_true(same_str(x->debug_path, y->debug_path));
		}
	}
	assert_same_output(write_folded, a, b);
	assert_same_output(write_pprof, a, b);
	assert_same_output(write_svg, a, b, "t");
	assert_same_output(write_gperf, a, b, NULL);
}

/*
 * One run of the passes' test: profile p built as while sampling, a pass
 * (symbolizer__symbolize_ahead) after every 100 stacks, the tables read by
 * the preload from the processes' pins (none before the second pass: the
 * first names nothing and the locations wait), the mappings changed half
 * way (ahead_remap), then symbolized at the end; q, the same profile
 * built whole, symbolized once by a symbolizer without a preload. With
 * debuginfod expected, the files whose names it may replace (.dynsym and a
 * build-id: the host's libc and libstdc++) are left to the end. Then a
 * second period's profile, named by the same symbolizer's passes from the
 * tables the first read, against the same named once. Returns the
 * locations the first period's passes named.
 */
static size_t ahead_run(const char *libc, const char *libcxx, const char *other, bool debuginfod)
{
	struct symbolizer *sy = symbolizer__new(NULL, proc_dir),
			  *once = symbolizer__new(NULL, proc_dir);
	struct profile *p, *q;
	struct symbolizer_counts sc, all;
	size_t demangled = 0;
	char pin[256];

	assert_non_null(sy);
	assert_non_null(once);
	symbolizer__expect_debuginfod(sy, debuginfod);
	p = profile__new();
	q = profile__new();
	assert_non_null(p);
	assert_non_null(q);
	assert_int_equal(add_whole_file(p, 800, "/opt/lib/libc.so.6", libc), 0);
	assert_int_equal(add_whole_file(p, 900, "/opt/lib/libstdc++.so.6", libcxx), 1);
	assert_int_equal(add_whole_file(q, 800, "/opt/lib/libc.so.6", libc), 0);
	assert_int_equal(add_whole_file(q, 900, "/opt/lib/libstdc++.so.6", libcxx), 1);
	for (int k = 0; k < 2; k++) {
		const struct profile_mapping *m = &p->procs[k].mappings[0];

		snprintf(pin, sizeof(pin), "%s/%u/map_files/%llx-%llx", proc_dir, p->procs[k].pid,
			 (unsigned long long)m->start, (unsigned long long)m->end);
		assert_int_equal(sh("mkdir -p %s/%u/map_files && cp %s %s", proc_dir,
				    p->procs[k].pid, k ? libcxx : libc, pin),
				 0);
	}
	assert_int_equal(symbolizer__preload(sy, 8, 0), 0);
	for (int i = 0; i < AHEAD_STACKS; i++) {
		if (i && !(i % 100)) {
			assert_int_equal(symbolizer__symbolize_ahead(sy, p), 0);
			symbolizer__counts(sy, &sc);
			if (i == 100) {
				/* no table read yet: nothing named, and what waits is named later */
				assert_int_equal(sc.nr_named_ahead, 0);
				assert_int_equal(symbolizer__pin(sy, p, 0), 0);
				assert_int_equal(symbolizer__pin(sy, p, 1), 0);
				wait_preload_tried(sy, 2);
			}
		}
		if (i == AHEAD_STACKS / 2)
			ahead_remap(p, other);
		ahead_stack(p, (uint32_t)(i & 1), i);
		ahead_stack(q, (uint32_t)(i & 1), i);
	}
	ahead_remap(q, other);
	symbolizer__counts(sy, &sc);
	assert_int_equal(sc.nr_ahead_passes, AHEAD_STACKS / 100 - 1);
	assert_int_equal(symbolizer__symbolize(sy, p), 0);
	assert_int_equal(symbolizer__symbolize(once, q), 0);
	assert_same_profiles(p, q);
	for (size_t i = 0; i < q->nr_locs; i++)
		demangled += q->locs[i].sys_func != NULL;
	assert_true(demangled > 0); /* libstdc++'s C++ names, demangled both ways */
	profile__free(p);
	profile__free(q);

	/*
	 * The next period (--interval), the same files mapped again: its
	 * passes name from the tables the first period read (the preload is
	 * gone with it), as the end does
	 */
	p = profile__new();
	q = profile__new();
	assert_non_null(p);
	assert_non_null(q);
	assert_int_equal(add_whole_file(p, 900, "/opt/lib/libstdc++.so.6", libcxx), 0);
	assert_int_equal(add_whole_file(q, 900, "/opt/lib/libstdc++.so.6", libcxx), 0);
	for (int i = 0; i < AHEAD_STACKS / 2; i++) {
		if (i && !(i % 100))
			assert_int_equal(symbolizer__symbolize_ahead(sy, p), 0);
		ahead_stack(p, 0, i + 7);
		ahead_stack(q, 0, i + 7);
	}
	symbolizer__counts(sy, &all);
	assert_int_equal(all.nr_ahead_passes, 2);
	assert_int_equal(all.nr_named_ahead > 0, !debuginfod);
	assert_int_equal(symbolizer__symbolize(sy, p), 0);
	assert_int_equal(symbolizer__symbolize(once, q), 0);
	assert_same_profiles(p, q);
	assert_int_equal(sh("rm -rf %s/800/map_files %s/900/map_files", proc_dir, proc_dir), 0);
	symbolizer__free(sy);
	symbolizer__free(once);
	profile__free(p);
	profile__free(q);
	return sc.nr_named_ahead;
}

/*
 * Locations named while sampling (symbolizer__symbolize_ahead), a pass at
 * a time, end as those of the same profile named once at the end: every
 * location's names, mapping and offset, the mappings' build-ids, and the
 * folded and pprof outputs byte for byte; also where the mappings changed
 * after a pass had named their locations. With debuginfod expected, the
 * host's stripped libraries are left to the end (fewer named ahead).
 */
static void test_ahead_as_at_once(void **state)
{
	char libc[256], libcxx[256], other[256];
	size_t all, some;

	if (sh("mkdir -p %s/800/root/opt/lib %s/900/root/opt/lib && "
	       "cp \"$(gcc -print-file-name=libc.so.6)\" %s/800/root/opt/lib/libc.so.6 && "
	       "cp \"$(gcc -print-file-name=libstdc++.so.6)\" %s/900/root/opt/lib/libstdc++.so.6 && "
	       "cp %s/800/root/opt/lib/libc.so.6 %s/800/root/opt/lib/other.so",
	       proc_dir, proc_dir, proc_dir, proc_dir, proc_dir, proc_dir))
		skip();
	snprintf(libc, sizeof(libc), "%s/800/root/opt/lib/libc.so.6", proc_dir);
	snprintf(libcxx, sizeof(libcxx), "%s/900/root/opt/lib/libstdc++.so.6", proc_dir);
	snprintf(other, sizeof(other), "%s/800/root/opt/lib/other.so", proc_dir);
	all = ahead_run(libc, libcxx, other, false);
	some = ahead_run(libc, libcxx, other, true);
	assert_true(all > 0);
	assert_true(some < all);
}

static void test_vdso(void **state)
{
	const uint8_t *img = (const uint8_t *)getauxval(AT_SYSINFO_EHDR);
	struct profile_mapping m = { .start = BASE, .end = BASE + 0x2000 };
	struct profile *p = profile__new();
	struct symbolizer *sy = symbolizer__new(NULL, proc_dir);
	const struct profile_location *l;
	uint64_t off = 0, ip;
	bool created;
	int proc;

	if (!img)
		skip();
	assert_non_null(p);
	assert_non_null(sy);
	sym_value(img, "__vdso_clock_gettime", &off);
	proc = profile__process(p, 700, &created);
	assert_true(proc >= 0);
	memcpy(m.perms, "r-xp", 5);
	m.path = profile__intern(p, "[vdso]");
	assert_true(profile__add_mapping(p, (uint32_t)proc, &m) >= 0);
	ip = BASE + off;
	assert_true(profile__add_stack(p, (uint32_t)proc, &ip, 0, 1, 1, 1, &created) >= 0);
	assert_int_equal(symbolizer__symbolize(sy, p), 0);
	l = loc_of(p, (uint32_t)proc, ip);
	assert_non_null(l->func);
	/* the same address carries clock_gettime and __vdso_clock_gettime: either is right */
	assert_non_null(strstr(l->func, "clock_gettime"));
	assert_int_equal(l->func_offset, 0);
	assert_string_equal(l->dso, "[vdso]");
	symbolizer__free(sy);
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_container_roots_and_cache_identity),
		cmocka_unit_test(test_map_files_pin),
		cmocka_unit_test(test_capture_adopt),
		cmocka_unit_test(test_vdso),
		cmocka_unit_test(test_many_locations_over_two_threads),
		cmocka_unit_test(test_preload),
		cmocka_unit_test(test_ahead_as_at_once),
	};

	return cmocka_run_group_tests(tests, setup_all, teardown_all);
}

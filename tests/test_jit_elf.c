// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/write/jit_elf.c (include/jit_elf.h): which mappings are
 * JIT regions, planning images for them, and the images written, each read
 * back here with libelf/gelf directly: ELF header, PT_LOAD with file offset
 * == virtual address == JIT_ELF_FIRST_OFFSET, .text, .symtab (values,
 * types, sizes cut so they do not overlap; the newest entry of a table
 * where entries share an address or overlap), the GNU build-id note
 * against the jit_map's build_id, DWARF sections present, file mode, no
 * temporary left behind, and the failure path.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
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
#include <unistd.h>
#include <cmocka.h>
#include "jit_elf.h"
#include "profile.h"
#include "sym_jitdump.h"

#define PID 77
#define FILE_START 0x400000ull /* /usr/bin/node r-xp */
#define MEMFD_START 0x7e0000000000ull /* "/memfd:x (deleted)" r-xp, 16 KiB */
#define MEMFD_LEN 0x4000ull
#define NAMED_START 0x7e8000000000ull /* "[anon:jit]" r-xp, 4 KiB */
#define NAMED_LEN 0x1000ull
#define R 0x7f0000000000ull /* anonymous r-xp, 64 KiB */
#define R_LEN 0x10000ull
#define RW_START 0x7f0000010000ull /* anonymous rw-p */
#define VDSO_START 0x7fff00000000ull

static void add_map(struct profile *p, uint32_t proc, uint64_t start, uint64_t end,
		    const char *perms, const char *path, uint64_t inode)
{
	struct profile_mapping m = { .start = start, .end = end, .inode = inode };

	memcpy(m.perms, perms, 5);
	m.path = profile__intern(p, path);
	assert_non_null(m.path);
	assert_int_equal(profile__add_mapping(p, proc, &m), 1);
}

static struct profile *make_profile(uint32_t *proc)
{
	struct profile *p = profile__new();
	bool created;
	int i;

	assert_non_null(p);
	i = profile__process(p, PID, &created);
	assert_true(i >= 0);
	*proc = (uint32_t)i;
	add_map(p, *proc, FILE_START, FILE_START + 0x1000, "r-xp", "/usr/bin/node", 1234);
	add_map(p, *proc, MEMFD_START, MEMFD_START + MEMFD_LEN, "r-xp", "/memfd:x (deleted)", 99);
	add_map(p, *proc, NAMED_START, NAMED_START + NAMED_LEN, "r-xp", "[anon:jit]", 0);
	add_map(p, *proc, R, R + R_LEN, "r-xp", "", 0);
	add_map(p, *proc, RW_START, RW_START + 0x10000, "rw-p", "", 0);
	add_map(p, *proc, VDSO_START, VDSO_START + 0x2000, "r-xp", "[vdso]", 0);
	return p;
}

static char made_dir[64]; /* removed by teardown even when a test fails */

static void tmpdir(char *dir, size_t size)
{
	snprintf(dir, size, "/tmp/bpfprof-jitelf.XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(made_dir, sizeof(made_dir), "%s", dir);
}

static void rmtree(const char *dir)
{
	char cmd[PATH_MAX];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
}

static int teardown(void **state)
{
	if (made_dir[0])
		rmtree(made_dir);
	made_dir[0] = '\0';
	return 0;
}

static void test_anon_code(void **state)
{
	static const struct {
		const char *perms, *path;
		bool want;
	} cases[] = {
		{ "r-xp", "", true },
		{ "r-xp", NULL, true },
		{ "rwxp", "", true },
		{ "r-xp", "[anon:v8 jit]", true },
		{ "r-xp", "/memfd:x (deleted)", true },
		{ "r-xs", "/memfd:doublemap", true },
		{ "r-xp", "/usr/bin/node", false },
		{ "r-xp", "/tmp/jit-17.dump", false },
		{ "rw-p", "", false },
		{ "r--p", "", false },
		{ "rw-p", "/memfd:x (deleted)", false },
		{ "r-xp", "[vdso]", false },
		{ "--xp", "[vsyscall]", false },
		{ "r-xp", "[heap]", false },
		{ "r-xp", "[stack]", false },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct profile_mapping m = { .start = 0x1000,
					     .end = 0x2000,
					     .path = cases[i].path };

		memcpy(m.perms, cases[i].perms, 5);
		if (jit_elf__anon_code(&m) != cases[i].want)
			fail_msg("%s %s: want %d", cases[i].perms,
				 cases[i].path ? cases[i].path : "(null)", cases[i].want);
	}
}

static void check_jit_map(const struct profile_mapping *jm, uint64_t start, uint64_t len,
			  const char *dir, int k)
{
	char want[PATH_MAX];

	snprintf(want, sizeof(want), "%s/jitted-%u-%d.so", dir, PID, k);
	assert_int_equal(jm->start, start);
	assert_int_equal(jm->end, start + len);
	assert_int_equal(jm->offset, JIT_ELF_FIRST_OFFSET);
	assert_string_equal(jm->perms, "r-xp");
	assert_non_null(jm->path);
	assert_string_equal(jm->path, want);
	assert_int_equal(jm->build_id_len, 0);
}

static void test_plan(void **state)
{
	uint32_t proc;
	struct profile *p = make_profile(&proc);
	struct profile_process *pr;

	assert_int_equal(jit_elf__plan(p, proc, "/var/tmp/jit"), 3);
	pr = &p->procs[proc];
	assert_int_equal(pr->nr_jit_maps, 3);
	/* the memfd, the named anonymous and the anonymous r-x mappings, in address order */
	check_jit_map(&pr->jit_maps[0], MEMFD_START, MEMFD_LEN, "/var/tmp/jit", 0);
	check_jit_map(&pr->jit_maps[1], NAMED_START, NAMED_LEN, "/var/tmp/jit", 1);
	check_jit_map(&pr->jit_maps[2], R, R_LEN, "/var/tmp/jit", 2);
	/* the process's own mappings are left alone */
	assert_int_equal(pr->nr_mappings, 6);

	/* planned already: nothing more */
	assert_int_equal(jit_elf__plan(p, proc, "/var/tmp/jit"), 0);
	assert_int_equal(p->procs[proc].nr_jit_maps, 3);

	/* a mapping that appears later gets the next number */
	add_map(p, proc, 0x7f1000000000ull, 0x7f1000002000ull, "rwxp", "", 0);
	assert_int_equal(jit_elf__plan(p, proc, "/var/tmp/jit"), 1);
	pr = &p->procs[proc];
	assert_int_equal(pr->nr_jit_maps, 4);
	check_jit_map(&pr->jit_maps[3], 0x7f1000000000ull, 0x2000, "/var/tmp/jit", 3);
	assert_int_equal(jit_elf__plan(p, proc, "/var/tmp/jit"), 0);
	profile__free(p);
}

static void test_plan_limits(void **state)
{
	struct profile *p = profile__new();
	bool created;
	uint32_t proc;
	int i;

	assert_non_null(p);
	i = profile__process(p, PID, &created);
	assert_true(i >= 0);
	proc = (uint32_t)i;
	/* one region over the byte cap by itself: no image */
	add_map(p, proc, 0x100000000ull, 0x100000000ull + JIT_ELF_MAX_REGIONS + 0x1000, "r-xp", "",
		0);
	assert_int_equal(jit_elf__plan(p, proc, "/tmp"), 0);
	assert_int_equal(p->procs[proc].nr_jit_maps, 0);
	/* exactly the cap fits; the next page does not */
	add_map(p, proc, 0x200000000ull, 0x200000000ull + JIT_ELF_MAX_REGIONS, "r-xp", "", 0);
	add_map(p, proc, 0x300000000ull, 0x300000000ull + 0x1000, "r-xp", "", 0);
	assert_int_equal(jit_elf__plan(p, proc, "/tmp"), 1);
	assert_int_equal(p->procs[proc].nr_jit_maps, 1);
	assert_int_equal(p->procs[proc].jit_maps[0].start, 0x200000000ull);
	profile__free(p);
}

/* --- reading images back with libelf --- */

struct sym {
	char name[64];
	uint64_t value, size;
	unsigned type, bind, shndx;
};

struct image {
	int fd;
	Elf *e;
	GElf_Ehdr eh;
	size_t shstrndx;
	struct sym syms[32];
	size_t nr_syms; /* excluding the null symbol */
	size_t text_ndx;
};

static Elf_Scn *find_scn(struct image *im, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(im->e, scn))) {
		const char *n;

		assert_non_null(gelf_getshdr(scn, sh));
		n = elf_strptr(im->e, im->shstrndx, sh->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

static void open_image(struct image *im, const char *path)
{
	memset(im, 0, sizeof(*im));
	assert_int_not_equal(elf_version(EV_CURRENT), EV_NONE);
	im->fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(im->fd >= 0);
	im->e = elf_begin(im->fd, ELF_C_READ, NULL);
	assert_non_null(im->e);
	assert_int_equal(elf_kind(im->e), ELF_K_ELF);
	assert_int_equal(gelf_getclass(im->e), ELFCLASS64);
	assert_non_null(gelf_getehdr(im->e, &im->eh));
	assert_int_equal(elf_getshdrstrndx(im->e, &im->shstrndx), 0);
}

static void close_image(struct image *im)
{
	elf_end(im->e);
	close(im->fd);
}

static void read_symtab(struct image *im)
{
	GElf_Shdr sh, text_sh;
	Elf_Scn *scn = find_scn(im, ".symtab", &sh), *text = find_scn(im, ".text", &text_sh);
	Elf_Data *d;
	size_t n;

	assert_non_null(scn);
	assert_non_null(text);
	im->text_ndx = elf_ndxscn(text);
	assert_int_equal(sh.sh_type, SHT_SYMTAB);
	assert_int_equal(sh.sh_entsize, sizeof(Elf64_Sym));
	d = elf_getdata(scn, NULL);
	assert_non_null(d);
	n = sh.sh_size / sh.sh_entsize;
	assert_true(n >= 1 && n - 1 <= 32);
	for (size_t i = 0; i < n; i++) {
		GElf_Sym s;
		const char *name;

		assert_non_null(gelf_getsym(d, (int)i, &s));
		name = elf_strptr(im->e, sh.sh_link, s.st_name);
		assert_non_null(name);
		if (i == 0) { /* the undefined symbol */
			assert_int_equal(s.st_value, 0);
			assert_int_equal(s.st_shndx, SHN_UNDEF);
			assert_string_equal(name, "");
			continue;
		}
		struct sym *o = &im->syms[im->nr_syms++];

		snprintf(o->name, sizeof(o->name), "%s", name);
		o->value = s.st_value;
		o->size = s.st_size;
		o->type = GELF_ST_TYPE(s.st_info);
		o->bind = GELF_ST_BIND(s.st_info);
		o->shndx = s.st_shndx;
	}
	/* sh_info: one past the last local symbol (only the null one here) */
	assert_int_equal(sh.sh_info, 1);
}

static const struct sym *find_sym(const struct image *im, const char *name)
{
	for (size_t i = 0; i < im->nr_syms; i++)
		if (!strcmp(im->syms[i].name, name))
			return &im->syms[i];
	return NULL;
}

/* Everything that holds for any image of a region of len bytes. */
static void check_image_common(struct image *im, uint64_t len, const struct profile_mapping *jm)
{
	GElf_Shdr sh;
	GElf_Phdr ph;
	Elf_Scn *scn;
	Elf_Data *d;
	size_t phnum, nloads = 0, nnotes = 0;
	bool found_id = false;

	assert_int_equal(im->eh.e_type, ET_DYN);
	assert_int_equal(im->eh.e_ident[EI_DATA],
			 __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB);
#if defined(__x86_64__)
	assert_int_equal(im->eh.e_machine, EM_X86_64);
#elif defined(__aarch64__)
	assert_int_equal(im->eh.e_machine, EM_AARCH64);
#endif
	assert_int_equal(elf_getphdrnum(im->e, &phnum), 0);
	for (size_t i = 0; i < phnum; i++) {
		assert_non_null(gelf_getphdr(im->e, (int)i, &ph));
		if (ph.p_type == PT_LOAD) {
			nloads++;
			assert_int_equal(ph.p_offset, JIT_ELF_FIRST_OFFSET);
			assert_int_equal(ph.p_vaddr, JIT_ELF_FIRST_OFFSET);
			assert_int_equal(ph.p_filesz, len);
			assert_int_equal(ph.p_memsz, len);
			assert_true(ph.p_flags & PF_X);
			assert_true(ph.p_flags & PF_R);
			assert_true(ph.p_align == 0 ||
				    (ph.p_vaddr - ph.p_offset) % ph.p_align == 0);
		} else if (ph.p_type == PT_NOTE) {
			nnotes++;
		}
	}
	assert_int_equal(nloads, 1);
	assert_int_equal(nnotes, 1);

	scn = find_scn(im, ".text", &sh);
	assert_non_null(scn);
	assert_int_equal(sh.sh_type, SHT_PROGBITS);
	assert_int_equal(sh.sh_offset, JIT_ELF_FIRST_OFFSET);
	assert_int_equal(sh.sh_addr, JIT_ELF_FIRST_OFFSET);
	assert_int_equal(sh.sh_size, len);
	assert_int_equal(sh.sh_flags & (SHF_ALLOC | SHF_EXECINSTR), SHF_ALLOC | SHF_EXECINSTR);
	d = elf_getdata(scn, NULL);
	assert_non_null(d);
	assert_int_equal(d->d_size, len);
	for (size_t i = 0; i < len; i++)
		if (((const uint8_t *)d->d_buf)[i])
			fail_msg(".text byte %zu is not zero", i);

	/* the GNU build-id note, equal to what the jit_map got */
	scn = find_scn(im, ".note.gnu.build-id", &sh);
	assert_non_null(scn);
	assert_int_equal(sh.sh_type, SHT_NOTE);
	d = elf_getdata(scn, NULL);
	assert_non_null(d);
	for (size_t off = 0, name_off, desc_off;;) {
		GElf_Nhdr nh;
		size_t next = gelf_getnote(d, off, &nh, &name_off, &desc_off);

		if (!next)
			break;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp((const char *)d->d_buf + name_off, "GNU", 4)) {
			assert_int_equal(nh.n_descsz, PROFILE_BUILD_ID_MAX);
			assert_int_equal(jm->build_id_len, PROFILE_BUILD_ID_MAX);
			assert_memory_equal((const char *)d->d_buf + desc_off, jm->build_id,
					    PROFILE_BUILD_ID_MAX);
			found_id = true;
		}
		off = next;
	}
	assert_true(found_id);

	/* DWARF beside the .symtab */
	scn = find_scn(im, ".debug_info", &sh);
	assert_non_null(scn);
	assert_true(sh.sh_size > 11);
	assert_int_equal(sh.sh_flags & SHF_ALLOC, 0);
	assert_non_null(find_scn(im, ".debug_abbrev", &sh));
	assert_non_null(find_scn(im, ".debug_line", &sh));

	read_symtab(im);
	for (size_t i = 0; i < im->nr_syms; i++) {
		const struct sym *s = &im->syms[i];

		assert_int_equal(s->type, STT_FUNC);
		assert_int_equal(s->shndx, im->text_ndx);
		assert_true(s->size > 0);
		assert_true(s->value >= JIT_ELF_FIRST_OFFSET);
		assert_true(s->value + s->size <= JIT_ELF_FIRST_OFFSET + len);
		/* no two symbols overlap */
		for (size_t j = 0; j < im->nr_syms; j++)
			if (j != i && im->syms[j].value >= s->value)
				assert_true(im->syms[j].value >= s->value + s->size);
	}
}

/* .debug_info names every function of the .symtab */
static void check_debug_names(struct image *im)
{
	GElf_Shdr sh;
	Elf_Scn *scn = find_scn(im, ".debug_info", &sh);
	Elf_Data *d = elf_getdata(scn, NULL);

	assert_non_null(d);
	for (size_t i = 0; i < im->nr_syms; i++)
		assert_non_null(memmem(d->d_buf, d->d_size, im->syms[i].name,
				       strlen(im->syms[i].name) + 1));
}

static void add(struct jit_table *t, uint64_t start, uint64_t size, uint64_t ts, const char *name)
{
	assert_int_equal(jit_table__add(t, start, size, ts, name, strlen(name)), 0);
}

static struct jit_table *make_table(int variant)
{
	struct jit_table *t = jit_table__new();

	assert_non_null(t);
	add(t, R + 0x100, 0x80, 1, variant == 2 ? "fA" : "fa");
	/* same address: the newer timestamp wins though it comes first */
	add(t, R + 0x400, 0x60, 9, "new");
	add(t, R + 0x400, 0x40, 5, "old");
	/* overlapping, the later one newer: the first is cut where the second starts */
	add(t, R + 0x1000, 0x100, 2, "ov1");
	add(t, R + 0x1080, 0x100, 3, "ov2");
	/* an older entry inside a newer one: lookup never names it */
	add(t, R + 0x5000, 0x1000, 10, "big");
	add(t, R + 0x5100, 0x10, 4, "inner");
	/* a newer entry inside an older one */
	add(t, R + 0x8000, 0x1000, 1, "big2");
	add(t, R + 0x8100, 0x10, 7, "inner2");
	/* running past the region: cut at its end */
	add(t, R + 0xff00, 0x200, 1, "tail");
	/* not in the region */
	add(t, R - 0x100, 0x200, 1, "straddle");
	add(t, R + R_LEN, 0x10, 1, "after");
	add(t, RW_START + 0x100, 0x10, 1, "in_rw");
	add(t, FILE_START + 0x100, 0x10, 1, "in_file");
	add(t, VDSO_START + 0x100, 0x10, 1, "in_vdso");
	add(t, R + 0x3000, 0, 1, "empty");
	/* the memfd region */
	add(t, MEMFD_START + 0x10, 0x20, 1, "m1");
	add(t, MEMFD_START + MEMFD_LEN - 0x10, 0x10, 1, "m_last");
	if (variant == 1)
		add(t, R + 0xa000, 0x10, 1, "extra");
	jit_table__finish(t);
	return t;
}

static void image_path(char *out, size_t size, const char *dir, int k)
{
	snprintf(out, size, "%s/jitted-%u-%d.so", dir, PID, k);
}

static void test_write_images(void **state)
{
	static const struct {
		const char *name;
		uint64_t off, size;
	} want_r[] = {
		{ "fa", 0x100, 0x80 },	    { "new", 0x400, 0x60 },    { "ov1", 0x1000, 0x80 },
		{ "ov2", 0x1080, 0x100 },   { "big", 0x5000, 0x1000 }, { "big2", 0x8000, 0x100 },
		{ "inner2", 0x8100, 0x10 }, { "tail", 0xff00, 0x100 },
	};
	static const char *const absent[] = { "old",	 "inner",   "straddle", "after", "in_rw",
					      "in_file", "in_vdso", "empty",	"m1",	 "m_last" };
	char dir[64], path[PATH_MAX];
	uint32_t proc;
	struct profile *p = make_profile(&proc);
	struct jit_table *t = make_table(0);
	struct profile_process *pr;
	struct image im;
	struct stat sb;
	DIR *dh;
	struct dirent *de;
	int nfiles = 0;

	tmpdir(dir, sizeof(dir));
	assert_int_equal(jit_elf__plan(p, proc, dir), 3);
	assert_int_equal(jit_elf__write(p, proc, t, 0640), 0);
	pr = &p->procs[proc];

	/* the 64 KiB anonymous region */
	image_path(path, sizeof(path), dir, 2);
	assert_string_equal(pr->jit_maps[2].path, path);
	assert_int_equal(stat(path, &sb), 0);
	assert_true(S_ISREG(sb.st_mode));
	assert_int_equal(sb.st_mode & 07777, 0640);
	assert_true((uint64_t)sb.st_size >= JIT_ELF_FIRST_OFFSET + R_LEN);
	open_image(&im, path);
	check_image_common(&im, R_LEN, &pr->jit_maps[2]);
	assert_int_equal(im.nr_syms, sizeof(want_r) / sizeof(want_r[0]));
	for (size_t i = 0; i < sizeof(want_r) / sizeof(want_r[0]); i++) {
		const struct sym *s = find_sym(&im, want_r[i].name);

		if (!s)
			fail_msg("no symbol %s", want_r[i].name);
		assert_int_equal(s->value, JIT_ELF_FIRST_OFFSET + want_r[i].off);
		assert_int_equal(s->size, want_r[i].size);
		assert_int_equal(s->bind, STB_GLOBAL);
	}
	for (size_t i = 0; i < sizeof(absent) / sizeof(absent[0]); i++)
		if (find_sym(&im, absent[i]))
			fail_msg("symbol %s should not be in the image", absent[i]);
	check_debug_names(&im);
	close_image(&im);

	/* the memfd region */
	image_path(path, sizeof(path), dir, 0);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0640);
	open_image(&im, path);
	check_image_common(&im, MEMFD_LEN, &pr->jit_maps[0]);
	assert_int_equal(im.nr_syms, 2);
	assert_non_null(find_sym(&im, "m1"));
	assert_int_equal(find_sym(&im, "m1")->value, JIT_ELF_FIRST_OFFSET + 0x10);
	assert_int_equal(find_sym(&im, "m1")->size, 0x20);
	assert_int_equal(find_sym(&im, "m_last")->value, JIT_ELF_FIRST_OFFSET + MEMFD_LEN - 0x10);
	assert_null(find_sym(&im, "fa"));
	check_debug_names(&im);
	close_image(&im);

	/* a region with no functions still gets an image */
	image_path(path, sizeof(path), dir, 1);
	open_image(&im, path);
	check_image_common(&im, NAMED_LEN, &pr->jit_maps[1]);
	assert_int_equal(im.nr_syms, 0);
	close_image(&im);

	/* each region its own identity */
	assert_memory_not_equal(pr->jit_maps[0].build_id, pr->jit_maps[2].build_id,
				PROFILE_BUILD_ID_MAX);
	assert_memory_not_equal(pr->jit_maps[1].build_id, pr->jit_maps[2].build_id,
				PROFILE_BUILD_ID_MAX);

	/* nothing else in the directory: the temporaries were renamed */
	dh = opendir(dir);
	assert_non_null(dh);
	while ((de = readdir(dh))) {
		if (de->d_name[0] == '.' && (!de->d_name[1] || !strcmp(de->d_name, "..")))
			continue;
		nfiles++;
		assert_non_null(strstr(de->d_name, "jitted-77-"));
		assert_int_equal(strlen(de->d_name), strlen("jitted-77-0.so"));
	}
	closedir(dh);
	assert_int_equal(nfiles, 3);

	jitdump__free(t);
	profile__free(p);
	rmtree(dir);
}

/*
 * The build-id follows the region's symbols: same table, same id; another
 * function, or another name, another id; other regions keep theirs.
 */
static void test_build_id_identity(void **state)
{
	char dir[64];
	uint8_t first[3][PROFILE_BUILD_ID_MAX];
	uint32_t proc;
	struct profile *p = make_profile(&proc);
	struct jit_table *t = make_table(0), *t2 = make_table(1), *t3 = make_table(2);
	struct profile_process *pr;

	tmpdir(dir, sizeof(dir));
	assert_int_equal(jit_elf__plan(p, proc, dir), 3);
	assert_int_equal(jit_elf__write(p, proc, t, 0644), 0);
	pr = &p->procs[proc];
	for (int k = 0; k < 3; k++)
		memcpy(first[k], pr->jit_maps[k].build_id, PROFILE_BUILD_ID_MAX);
	assert_int_equal(jit_elf__write(p, proc, t, 0644), 0);
	for (int k = 0; k < 3; k++)
		assert_memory_equal(first[k], pr->jit_maps[k].build_id, PROFILE_BUILD_ID_MAX);
	assert_int_equal(jit_elf__write(p, proc, t2, 0644), 0);
	assert_memory_equal(first[0], pr->jit_maps[0].build_id, PROFILE_BUILD_ID_MAX);
	assert_memory_equal(first[1], pr->jit_maps[1].build_id, PROFILE_BUILD_ID_MAX);
	assert_memory_not_equal(first[2], pr->jit_maps[2].build_id, PROFILE_BUILD_ID_MAX);
	assert_int_equal(jit_elf__write(p, proc, t3, 0644), 0);
	assert_memory_equal(first[0], pr->jit_maps[0].build_id, PROFILE_BUILD_ID_MAX);
	assert_memory_not_equal(first[2], pr->jit_maps[2].build_id, PROFILE_BUILD_ID_MAX);
	jitdump__free(t);
	jitdump__free(t2);
	jitdump__free(t3);
	profile__free(p);
	rmtree(dir);
}

static void test_write_failures(void **state)
{
	const char *dir = "/nonexistent-bpfprof-jit-dir/sub";
	char path[PATH_MAX];
	struct profile *p = profile__new();
	struct jit_table *t = make_table(0);
	bool created;
	uint32_t proc;
	int i;

	assert_non_null(p);
	i = profile__process(p, PID, &created);
	assert_true(i >= 0);
	proc = (uint32_t)i;
	/* no regions: nothing to write */
	add_map(p, proc, FILE_START, FILE_START + 0x1000, "r-xp", "/usr/bin/node", 1);
	assert_int_equal(jit_elf__plan(p, proc, dir), 0);
	assert_int_equal(jit_elf__write(p, proc, t, 0644), -ENOENT);

	/* a directory that does not exist */
	add_map(p, proc, R, R + R_LEN, "r-xp", "", 0);
	assert_int_equal(jit_elf__plan(p, proc, dir), 1);
	assert_true(jit_elf__write(p, proc, t, 0644) < 0);
	image_path(path, sizeof(path), dir, 0);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(p->procs[proc].jit_maps[0].build_id_len, 0);
	jitdump__free(t);
	profile__free(p);
}

/* One image cannot be put in place: the others are written, it keeps no build-id, no temporary stays. */
static void test_write_one_fails(void **state)
{
	char dir[64], path[PATH_MAX];
	uint32_t proc;
	struct profile *p = make_profile(&proc);
	struct jit_table *t = make_table(0);
	struct profile_process *pr;
	struct stat sb;
	DIR *dh;
	struct dirent *de;
	int nentries = 0;
	FILE *f;

	tmpdir(dir, sizeof(dir));
	assert_int_equal(jit_elf__plan(p, proc, dir), 3);
	/* a non-empty directory where image 1 goes: rename(2) onto it fails */
	image_path(path, sizeof(path), dir, 1);
	assert_int_equal(mkdir(path, 0755), 0);
	strcat(path, "/keep");
	f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
	assert_true(jit_elf__write(p, proc, t, 0644) < 0);
	pr = &p->procs[proc];
	assert_int_equal(pr->jit_maps[0].build_id_len, PROFILE_BUILD_ID_MAX);
	assert_int_equal(pr->jit_maps[1].build_id_len, 0);
	assert_int_equal(pr->jit_maps[2].build_id_len, PROFILE_BUILD_ID_MAX);
	image_path(path, sizeof(path), dir, 0);
	assert_int_equal(stat(path, &sb), 0);
	assert_true(S_ISREG(sb.st_mode));
	image_path(path, sizeof(path), dir, 2);
	assert_int_equal(stat(path, &sb), 0);
	assert_true(S_ISREG(sb.st_mode));
	image_path(path, sizeof(path), dir, 1);
	assert_int_equal(stat(path, &sb), 0);
	assert_true(S_ISDIR(sb.st_mode));
	dh = opendir(dir);
	assert_non_null(dh);
	while ((de = readdir(dh)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			nentries++;
	closedir(dh);
	assert_int_equal(nentries, 3);
	jitdump__free(t);
	profile__free(p);
	rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_anon_code),
		cmocka_unit_test(test_plan),
		cmocka_unit_test(test_plan_limits),
		cmocka_unit_test_teardown(test_write_images, teardown),
		cmocka_unit_test_teardown(test_build_id_identity, teardown),
		cmocka_unit_test(test_write_failures),
		cmocka_unit_test_teardown(test_write_one_fails, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

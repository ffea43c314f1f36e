// SPDX-License-Identifier: MIT
/*
 * JIT ELF images (include/jit_elf.h), written with libelf in manual layout
 * (ELF_F_LAYOUT): the Elf64 header and two program headers (PT_LOAD,
 * PT_NOTE), the region's .text at JIT_ELF_FIRST_OFFSET, then the build-id
 * note, .symtab, .strtab, the DWARF sections, .shstrtab and the section
 * headers. (libelf fills the gaps between sections and before the section
 * headers, so nothing else may go there.)
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "array.h"
#include "buf.h"
#include "jit_dwarf.h"
#include "jit_elf.h"
#include "log.h"

#define PAGE 0x1000ull
#define ALIGN_UP(x, a) (((x) + (a)-1) & ~((uint64_t)(a)-1))

#if defined(__x86_64__)
#define HOST_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define HOST_MACHINE EM_AARCH64
#elif defined(__powerpc64__)
#define HOST_MACHINE EM_PPC64
#elif defined(__s390x__)
#define HOST_MACHINE EM_S390
#elif defined(__riscv)
#define HOST_MACHINE EM_RISCV
#else
#define HOST_MACHINE EM_NONE
#endif

bool jit_elf__anon_code(const struct profile_mapping *m)
{
	const char *path = m->path ? m->path : "";

	if (m->perms[2] != 'x')
		return false;
	/* "" anonymous, "[anon:name]" named anonymous; not [vdso], [vsyscall] */
	if (path[0] != '/')
		return path[0] == '\0' || !strncmp(path, "[anon:", 6);
	return !strncmp(path, "/memfd:", 7);
}

static bool planned(const struct profile_process *pr, const struct profile_mapping *m)
{
	for (size_t i = 0; i < pr->nr_jit_maps; i++)
		if (pr->jit_maps[i].start == m->start && pr->jit_maps[i].end == m->end)
			return true;
	return false;
}

int jit_elf__plan(struct profile *p, uint32_t proc, const char *dir)
{
	struct profile_process *pr = &p->procs[proc];
	uint64_t bytes = 0;
	int added = 0;

	for (size_t i = 0; i < pr->nr_jit_maps; i++)
		bytes += pr->jit_maps[i].end - pr->jit_maps[i].start;
	for (size_t i = 0; i < pr->nr_mappings; i++) {
		const struct profile_mapping *m = &pr->mappings[i];
		struct profile_mapping *jm;
		char path[PATH_MAX];
		const char *ipath;

		if (!jit_elf__anon_code(m) || m->end <= m->start || planned(pr, m))
			continue;
		if (bytes + (m->end - m->start) > JIT_ELF_MAX_REGIONS ||
		    pr->nr_jit_maps >= JIT_ELF_MAX_MAPS) {
			pr_warn("pid %u: JIT code over %llu MiB or %d mappings; %llx-%llx gets no image\n",
				pr->pid, (unsigned long long)(JIT_ELF_MAX_REGIONS >> 20),
				JIT_ELF_MAX_MAPS, (unsigned long long)m->start,
				(unsigned long long)m->end);
			continue;
		}
		if (snprintf(path, sizeof(path), "%s/jitted-%u-%zu.so", dir, pr->pid,
			     pr->nr_jit_maps) >= (int)sizeof(path))
			return added;
		ipath = profile__intern(p, path);
		if (!ipath || array__grow((void **)&pr->jit_maps, &pr->cap_jit_maps,
					  pr->nr_jit_maps + 1, sizeof(*pr->jit_maps)))
			return -ENOMEM;
		jm = &pr->jit_maps[pr->nr_jit_maps++];
		memset(jm, 0, sizeof(*jm));
		jm->start = m->start;
		jm->end = m->end;
		jm->offset = JIT_ELF_FIRST_OFFSET;
		memcpy(jm->perms, "r-xp", 5);
		jm->path = ipath;
		bytes += m->end - m->start;
		added++;
	}
	return added;
}

/* What goes into one image, gathered before anything is written. */
struct image {
	const struct profile_mapping *region;
	Elf64_Sym *syms;
	struct jit_dwarf_fn *fns; /* parallel to syms[1..] */
	size_t nr_syms, cap_syms, cap_fns;
	struct buf strtab;
	uint8_t build_id[PROFILE_BUILD_ID_MAX];
};

static void image_free(struct image *im)
{
	free(im->syms);
	free(im->fns);
	buf__free(&im->strtab);
}

static int add_sym(struct image *im, const char *name, uint64_t value, uint64_t size)
{
	Elf64_Sym *s;

	if (array__grow((void **)&im->syms, &im->cap_syms, im->nr_syms + 1, sizeof(*s)) ||
	    array__grow((void **)&im->fns, &im->cap_fns, im->nr_syms + 1, sizeof(*im->fns)))
		return -ENOMEM;
	s = &im->syms[im->nr_syms];
	memset(s, 0, sizeof(*s));
	s->st_name = (Elf64_Word)im->strtab.len;
	if (im->nr_syms) { /* index 0 is the undefined symbol */
		s->st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
		s->st_shndx = 1; /* .text */
		im->fns[im->nr_syms - 1] = (struct jit_dwarf_fn){ value, value + size, NULL };
	}
	s->st_value = value;
	s->st_size = size;
	buf__put_bytes(&im->strtab, name, strlen(name) + 1);
	im->nr_syms++;
	return im->strtab.err;
}

/* FNV-1a, folded into the 20 bytes of a build-id (an identity, not a digest). */
static void hash_bytes(uint64_t h[3], const void *data, size_t len)
{
	const uint8_t *b = data;

	for (size_t i = 0; i < len; i++)
		for (int k = 0; k < 3; k++)
			h[k] = (h[k] ^ b[i]) * 0x100000001b3ull;
}

/*
 * Symbols: every entry of t that starts in the region and wins the lookup
 * at its own start, cut where the next one starts (DWARF ranges must not
 * overlap) or where the region ends.
 */
static int gather(struct image *im, uint32_t pid, const struct jit_table *t)
{
	uint64_t h[3] = { 0xcbf29ce484222325ull, 0x84222325cbf29ce4ull, 0x9e3779b97f4a7c15ull };
	const struct profile_mapping *r = im->region;
	struct jit_sym sym;
	int err;

	if ((err = add_sym(im, "", 0, 0)))
		return err;
	hash_bytes(h, &pid, sizeof(pid));
	hash_bytes(h, &r->start, sizeof(r->start));
	hash_bytes(h, &r->end, sizeof(r->end));
	for (size_t i = 0; i < jitdump__count(t); i++) {
		uint64_t value, size;

		if (jitdump__sym(t, i, &sym) || !sym.size || sym.start < r->start ||
		    sym.start >= r->end)
			continue;
		if (jitdump__lookup(t, sym.start, NULL) != sym.name)
			continue; /* replaced by newer code at this address */
		value = r->offset + (sym.start - r->start);
		size = sym.size < r->end - sym.start ? sym.size : r->end - sym.start;
		if (im->nr_syms > 1) {
			struct jit_dwarf_fn *prev = &im->fns[im->nr_syms - 2];

			if (prev->low == value)
				continue; /* same start, older entry in file order */
			if (prev->high > value)
				prev->high = value;
		}
		if ((err = add_sym(im, sym.name, value, size)))
			return err;
		hash_bytes(h, &value, sizeof(value));
		hash_bytes(h, sym.name, strlen(sym.name) + 1);
	}
	for (size_t i = 1; i < im->nr_syms; i++) {
		im->fns[i - 1].name = (const char *)im->strtab.data + im->syms[i].st_name;
		im->syms[i].st_size = im->fns[i - 1].high - im->fns[i - 1].low;
	}
	memcpy(im->build_id, h, sizeof(im->build_id));
	return 0;
}

static Elf_Scn *add_scn(Elf *e, struct buf *shstr, const char *name, Elf64_Word type,
			uint64_t flags, uint64_t *off, const void *data, size_t size,
			uint64_t align)
{
	Elf_Scn *scn = elf_newscn(e);
	Elf64_Shdr *sh;
	Elf_Data *d;

	if (!scn || !(sh = elf64_getshdr(scn)) || !(d = elf_newdata(scn)))
		return NULL;
	*off = ALIGN_UP(*off, align);
	sh->sh_name = (Elf64_Word)shstr->len;
	buf__put_bytes(shstr, name, strlen(name) + 1);
	sh->sh_type = type;
	sh->sh_flags = flags;
	sh->sh_offset = *off;
	sh->sh_addr = (flags & SHF_ALLOC) ? *off : 0; /* vaddr == file offset */
	sh->sh_size = size;
	sh->sh_addralign = align;
	d->d_buf = (void *)data;
	d->d_size = size;
	d->d_type = ELF_T_BYTE; /* host byte order throughout: nothing to convert */
	d->d_align = align;
	d->d_version = EV_CURRENT;
	*off += size;
	return scn;
}

/* Lay out and write one image to fd. */
static int emit(Elf *e, struct image *im, const char *unit_name)
{
	const struct profile_mapping *r = im->region;
	uint64_t len = r->end - r->start, off = r->offset;
	struct buf shstr = { 0 }, info = { 0 }, abbrev = { 0 }, line = { 0 };
	uint8_t note[12 + 4 + PROFILE_BUILD_ID_MAX];
	Elf_Scn *text, *symtab, *strtab, *shstrtab;
	Elf64_Ehdr *eh;
	Elf64_Phdr *ph;
	void *zeros = calloc(1, len);
	int err = -EIO;

	if (!zeros)
		return -ENOMEM;
	if (jit_dwarf__build(im->fns, im->nr_syms - 1, unit_name, &info, &abbrev, &line)) {
		err = -ENOMEM;
		goto out;
	}
	elf_flagelf(e, ELF_C_SET, ELF_F_LAYOUT);
	if (!(eh = elf64_newehdr(e)) || !(ph = elf64_newphdr(e, 2)))
		goto out;
	eh->e_ident[EI_DATA] = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB :
									   ELFDATA2MSB;
	eh->e_type = ET_DYN;
	eh->e_machine = HOST_MACHINE;
	eh->e_version = EV_CURRENT;
	eh->e_phoff = sizeof(Elf64_Ehdr);
	buf__put_bytes(&shstr, "", 1);
	text = add_scn(e, &shstr, ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, &off, zeros,
		       len, 16);
	ph[0] = (Elf64_Phdr){ .p_type = PT_LOAD,
			      .p_flags = PF_R | PF_X,
			      .p_offset = r->offset,
			      .p_vaddr = r->offset,
			      .p_paddr = r->offset,
			      .p_filesz = len,
			      .p_memsz = len,
			      .p_align = PAGE };
	/* Elf64_Nhdr (namesz, descsz, type), "GNU\0", the id */
	memcpy(note, &(uint32_t[3]){ 4, PROFILE_BUILD_ID_MAX, NT_GNU_BUILD_ID }, 12);
	memcpy(note + 12, "GNU", 4);
	memcpy(note + 16, im->build_id, PROFILE_BUILD_ID_MAX);
	if (!text || !add_scn(e, &shstr, ".note.gnu.build-id", SHT_NOTE, SHF_ALLOC, &off, note,
			      sizeof(note), 4))
		goto out;
	ph[1] = (Elf64_Phdr){ .p_type = PT_NOTE,
			      .p_flags = PF_R,
			      .p_offset = off - sizeof(note),
			      .p_vaddr = off - sizeof(note),
			      .p_paddr = off - sizeof(note),
			      .p_filesz = sizeof(note),
			      .p_memsz = sizeof(note),
			      .p_align = 4 };
	symtab = add_scn(e, &shstr, ".symtab", SHT_SYMTAB, 0, &off, im->syms,
			 im->nr_syms * sizeof(Elf64_Sym), 8);
	strtab = add_scn(e, &shstr, ".strtab", SHT_STRTAB, 0, &off, im->strtab.data, im->strtab.len,
			 1);
	if (!symtab || !strtab ||
	    !add_scn(e, &shstr, ".debug_abbrev", SHT_PROGBITS, 0, &off, abbrev.data, abbrev.len,
		     1) ||
	    !add_scn(e, &shstr, ".debug_info", SHT_PROGBITS, 0, &off, info.data, info.len, 1) ||
	    !add_scn(e, &shstr, ".debug_line", SHT_PROGBITS, 0, &off, line.data, line.len, 1))
		goto out;
	/* last, and filled last: it holds its own name */
	shstrtab = add_scn(e, &shstr, ".shstrtab", SHT_STRTAB, 0, &off, NULL, 0, 1);
	if (!shstrtab || shstr.err)
		goto out;
	elf_getdata(shstrtab, NULL)->d_buf = shstr.data;
	elf_getdata(shstrtab, NULL)->d_size = shstr.len;
	elf64_getshdr(shstrtab)->sh_size = shstr.len;
	off += shstr.len;
	elf64_getshdr(symtab)->sh_link = (Elf64_Word)elf_ndxscn(strtab);
	elf64_getshdr(symtab)->sh_info = 1; /* first non-local symbol */
	elf64_getshdr(symtab)->sh_entsize = sizeof(Elf64_Sym);
	eh->e_shstrndx = (Elf64_Half)elf_ndxscn(shstrtab);
	eh->e_shoff = ALIGN_UP(off, 8);
	elf_flagphdr(e, ELF_C_SET, ELF_F_DIRTY);
	if (elf_update(e, ELF_C_WRITE) >= 0)
		err = 0;
out:
	free(zeros);
	buf__free(&shstr);
	buf__free(&info);
	buf__free(&abbrev);
	buf__free(&line);
	return err;
}

/* Write region k's image through a temporary file. */
static int write_image(struct image *im, uint32_t pid, unsigned mode)
{
	const char *path = im->region->path, *base = strrchr(path, '/');
	char tmp[PATH_MAX];
	Elf *e;
	int fd, err;

	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	e = elf_begin(fd, ELF_C_WRITE, NULL);
	err = e ? emit(e, im, base ? base + 1 : path) : -EIO;
	if (err == -EIO)
		pr_warn("cannot write JIT image '%s': %s\n", path, elf_errmsg(-1));
	elf_end(e);
	if (!err && (fchmod(fd, mode) || fsync(fd)))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

int jit_elf__write(struct profile *p, uint32_t proc, const struct jit_table *t, unsigned mode)
{
	struct profile_process *pr = &p->procs[proc];
	int first_err = 0;

	if (!pr->nr_jit_maps)
		return -ENOENT;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	for (size_t k = 0; k < pr->nr_jit_maps; k++) {
		struct profile_mapping *r = &pr->jit_maps[k];
		struct image im = { .region = r };
		int err = gather(&im, pr->pid, t);

		if (!err)
			err = write_image(&im, pr->pid, mode);
		if (!err) {
			memcpy(r->build_id, im.build_id, PROFILE_BUILD_ID_MAX);
			r->build_id_len = PROFILE_BUILD_ID_MAX;
		} else if (err != -EIO) {
			pr_warn("cannot write JIT image '%s': %s\n", r->path, strerror(-err));
		}
		if (err && !first_err)
			first_err = err;
		image_free(&im);
	}
	return first_err;
}

// SPDX-License-Identifier: MIT
/*
 * XRay instrumentation map reader (include/xray_instr_map.h): sled entries of
 * the `xray_instr_map` section → function ids → addresses, names through
 * include/sym_elf.h. Layout per compiler-rt's XRaySledEntry (read field by
 * field in the ELF's byte order, never through a mirrored struct) and LLVM's
 * docs/XRay.rst.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "lib_cursor.h"
#include "log.h"
#include "sym_elf.h"
#include "xray_instr_map.h"

#define SLED_SIZE 32 /* address u64, function u64, kind u8, always u8, version u8, pad 13 */
#define SLED_VERSION_OFF 18
#define PAGE_SIZE_ 4096ULL
/* upper bound on functions, so a hostile section cannot make us allocate wildly */
#define MAX_FUNCS (1U << 28) /* function ids are 28 bits in FDR records */

struct seg {
	uint64_t vaddr, memsz, offset, filesz;
	uint32_t flags;
};

struct reloc {
	uint64_t offset; /* vaddr patched */
	uint64_t addend; /* R_*_RELATIVE: the value at load base 0 */
};

struct xray_instr_map {
	char *path;
	uint64_t base; /* load base added to link-time addresses */
	uint64_t *addrs; /* [id], link-time; [0] unused */
	const char **names; /* [id], into names_pool or NULL */
	char *names_pool;
	uint32_t nr_funcs;
	struct seg *segs;
	size_t nr_segs;
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	uint8_t build_id[ELF_BUILD_ID_MAX];
	uint8_t build_id_len;
};

static int cmp_reloc(const void *a, const void *b)
{
	const struct reloc *x = a, *y = b;

	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static const struct reloc *find_reloc(const struct reloc *r, size_t n, uint64_t off)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r[mid].offset == off)
			return &r[mid];
		if (r[mid].offset < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static bool is_relative(GElf_Half machine, uint32_t type)
{
	return (machine == EM_X86_64 && type == 8 /* R_X86_64_RELATIVE */) ||
	       (machine == EM_AARCH64 && type == 1027 /* R_AARCH64_RELATIVE */) ||
	       (machine == EM_PPC64 && type == 22 /* R_PPC64_RELATIVE */);
}

/* R_*_RELATIVE relocations that patch [lo, hi), sorted by offset. */
static int collect_relocs(Elf *elf, const GElf_Ehdr *eh, uint64_t lo, uint64_t hi,
			  struct reloc **out, size_t *nr)
{
	struct reloc *r = NULL, *tmp;
	size_t n = 0, cap = 0;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;
		size_t i, cnt;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		cnt = d->d_size / sh.sh_entsize;
		for (i = 0; i < cnt; i++) {
			GElf_Rela rela;

			if (!gelf_getrela(d, (int)i, &rela))
				break;
			if (rela.r_offset < lo || rela.r_offset >= hi ||
			    !is_relative(eh->e_machine, (uint32_t)GELF_R_TYPE(rela.r_info)))
				continue;
			if (n == cap) {
				cap = cap ? cap * 2 : 64;
				tmp = reallocarray(r, cap, sizeof(*r));
				if (!tmp) {
					free(r);
					return -ENOMEM;
				}
				r = tmp;
			}
			r[n].offset = rela.r_offset;
			r[n].addend = (uint64_t)rela.r_addend;
			n++;
		}
	}
	if (n)
		qsort(r, n, sizeof(*r), cmp_reloc);
	*out = r;
	*nr = n;
	return 0;
}

static Elf_Scn *find_section(Elf *elf, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, &sh))
			continue;
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

static int load_segments(struct xray_instr_map *m, Elf *elf)
{
	size_t phnum, i;

	if (elf_getphdrnum(elf, &phnum))
		return -EINVAL;
	m->segs = calloc(phnum ? phnum : 1, sizeof(*m->segs));
	if (!m->segs)
		return -ENOMEM;
	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		m->segs[m->nr_segs++] = (struct seg){ ph.p_vaddr, ph.p_memsz, ph.p_offset,
						      ph.p_filesz, ph.p_flags };
	}
	return 0;
}

/* Sleds → function ids, the way LLVM's InstrumentationMap numbers them. */
static int load_sleds(struct xray_instr_map *m, Elf *elf, const GElf_Ehdr *eh, bool swap)
{
	struct reloc *relocs = NULL;
	size_t nr_relocs = 0, nr_sleds, i, cap = 0;
	uint64_t cur_fn = 0, *tmp;
	Elf_Scn *scn;
	Elf_Data *d;
	GElf_Shdr sh;
	int err;

	scn = find_section(elf, "xray_instr_map");
	if (!scn || !gelf_getshdr(scn, &sh)) {
		pr_warn("xray: '%s' has no xray_instr_map section; was it built with "
			"-fxray-instrument?\n",
			m->path);
		return -ENODATA;
	}
	d = elf_rawdata(scn, NULL);
	if (!d || (sh.sh_type != SHT_NOBITS && d->d_size != sh.sh_size) || !d->d_buf) {
		pr_warn("xray: '%s': cannot read xray_instr_map: %s\n", m->path, elf_errmsg(-1));
		return -EINVAL;
	}
	if (d->d_size % SLED_SIZE) {
		pr_warn("xray: '%s': xray_instr_map size %zu is not a multiple of %d\n", m->path,
			d->d_size, SLED_SIZE);
		return -EINVAL;
	}
	nr_sleds = d->d_size / SLED_SIZE;
	err = collect_relocs(elf, eh, sh.sh_addr, sh.sh_addr + d->d_size, &relocs, &nr_relocs);
	if (err)
		return err;
	for (i = 0; i < nr_sleds; i++) {
		const uint8_t *e = (const uint8_t *)d->d_buf + i * SLED_SIZE;
		uint64_t at = sh.sh_addr + i * SLED_SIZE + 8; /* vaddr of the function field */
		uint64_t fn = bo__load64(e + 8, swap);
		const struct reloc *r;

		if (e[SLED_VERSION_OFF] >= 2)
			fn += at;
		else if ((r = find_reloc(relocs, nr_relocs, at)))
			fn = r->addend;
		if (fn == cur_fn && m->nr_funcs)
			continue;
		cur_fn = fn;
		if (m->nr_funcs + 1 >= MAX_FUNCS) {
			err = -EINVAL;
			pr_warn("xray: '%s': more than %u functions in xray_instr_map\n", m->path,
				MAX_FUNCS);
			goto out;
		}
		if (m->nr_funcs + 2 > cap) {
			cap = cap ? cap * 2 : 256;
			tmp = reallocarray(m->addrs, cap, sizeof(*m->addrs));
			if (!tmp) {
				err = -ENOMEM;
				goto out;
			}
			m->addrs = tmp;
		}
		m->addrs[++m->nr_funcs] = fn;
	}
	err = 0;
out:
	free(relocs);
	return err;
}

/* Names through the symbol table: link-time vaddr → file offset → symbol. */
static int load_names(struct xray_instr_map *m)
{
	struct elf_symtab *st;
	size_t pool_len = 0, pool_cap = 0;
	uint32_t id;
	size_t *offs;

	m->names = calloc(m->nr_funcs + 1, sizeof(*m->names));
	offs = calloc(m->nr_funcs + 1, sizeof(*offs));
	if (!m->names || !offs) {
		free(offs);
		return -ENOMEM;
	}
	st = elf_symtab__load(m->path, "");
	if (!st) {
		pr_info("xray: '%s': no symbols (%s); frames stay unnamed\n", m->path,
			strerror(errno));
		free(offs);
		return errno == ENOMEM ? -ENOMEM : 0;
	}
	for (id = 1; id <= m->nr_funcs; id++) {
		uint64_t va = m->addrs[id], off = 0, so;
		const char *name = NULL;
		bool found = false;
		size_t i, len;

		offs[id] = SIZE_MAX;
		for (i = 0; i < m->nr_segs && !found; i++)
			if (va >= m->segs[i].vaddr && va - m->segs[i].vaddr < m->segs[i].filesz) {
				off = va - m->segs[i].vaddr + m->segs[i].offset;
				found = true;
			}
		if (found)
			name = elf_symtab__lookup_offset(st, off, &so);
		if (!name)
			continue;
		len = strlen(name) + 1;
		if (pool_len + len > pool_cap) {
			char *tmp;

			pool_cap = (pool_len + len) * 2 + 4096;
			tmp = realloc(m->names_pool, pool_cap);
			if (!tmp) {
				elf_symtab__free(st);
				free(offs);
				return -ENOMEM;
			}
			m->names_pool = tmp;
		}
		memcpy(m->names_pool + pool_len, name, len);
		offs[id] = pool_len;
		pool_len += len;
	}
	for (id = 1; id <= m->nr_funcs; id++)
		m->names[id] = offs[id] == SIZE_MAX ? NULL : m->names_pool + offs[id];
	elf_symtab__free(st);
	free(offs);
	return 0;
}

int xray_instr_map__load(const char *path, struct xray_instr_map **out)
{
	struct xray_instr_map *m;
	Elf *elf = NULL;
	GElf_Ehdr eh;
	struct stat sb;
	int fd, err;
	bool swap;

	*out = NULL;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOTSUP;
	m = calloc(1, sizeof(*m));
	if (!m || !(m->path = strdup(path))) {
		free(m);
		return -ENOMEM;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &sb)) {
		err = -errno;
		pr_warn("xray: cannot open instrumentation map '%s': %s\n", path, strerror(-err));
		goto out;
	}
	if (!S_ISREG(sb.st_mode)) {
		err = -EINVAL;
		pr_warn("xray: '%s' is not a regular file\n", path);
		goto out;
	}
	m->inode = sb.st_ino;
	m->dev_major = major(sb.st_dev);
	m->dev_minor = minor(sb.st_dev);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
		err = -EINVAL;
		pr_warn("xray: '%s' is not an ELF file\n", path);
		goto out;
	}
	if (eh.e_ident[EI_CLASS] != ELFCLASS64) {
		err = -ENOTSUP;
		pr_warn("xray: '%s': only 64-bit ELF instrumentation maps are supported\n", path);
		goto out;
	}
	swap = (eh.e_ident[EI_DATA] == ELFDATA2MSB) != (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__);
	m->base = eh.e_type == ET_DYN ? XRAY_PIE_BASE : 0;
	err = load_segments(m, elf);
	if (!err)
		err = load_sleds(m, elf, &eh, swap);
	if (!err)
		err = load_names(m);
	if (!err) {
		int n = elf__read_build_id(path, m->build_id);

		m->build_id_len = n > 0 ? (uint8_t)n : 0;
	}
out:
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	if (err) {
		xray_instr_map__free(m);
		return err;
	}
	*out = m;
	return 0;
}

void xray_instr_map__free(struct xray_instr_map *m)
{
	if (!m)
		return;
	free(m->path);
	free(m->addrs);
	free(m->names);
	free(m->names_pool);
	free(m->segs);
	free(m);
}

uint32_t xray_instr_map__nr_funcs(const struct xray_instr_map *m)
{
	return m->nr_funcs;
}

uint64_t xray_instr_map__addr(const struct xray_instr_map *m, uint32_t id)
{
	return id && id <= m->nr_funcs ? m->addrs[id] + m->base : 0;
}

const char *xray_instr_map__name(const struct xray_instr_map *m, uint32_t id)
{
	return id && id <= m->nr_funcs && m->names ? m->names[id] : NULL;
}

const char *xray_instr_map__path(const struct xray_instr_map *m)
{
	return m->path;
}

int xray_instr_map__add_mappings(const struct xray_instr_map *m, struct profile *p, uint32_t proc)
{
	char abs[PATH_MAX];
	const char *path;
	uint64_t prev_end = 0;
	size_t i;

	path = profile__intern(p, realpath(m->path, abs) ? abs : m->path);
	if (!path)
		return -ENOMEM;
	for (i = 0; i < m->nr_segs; i++) {
		const struct seg *s = &m->segs[i];
		struct profile_mapping pm = { 0 };
		uint64_t start = (s->vaddr & ~(PAGE_SIZE_ - 1)) + m->base;
		uint64_t end =
			((s->vaddr + s->memsz + PAGE_SIZE_ - 1) & ~(PAGE_SIZE_ - 1)) + m->base;

		/* keep segments that share a page from replacing each other */
		if (start < prev_end)
			start = prev_end;
		if (start >= end)
			continue;
		pm.start = start;
		pm.end = end;
		pm.offset = (s->offset & ~(PAGE_SIZE_ - 1)) +
			    (start - m->base - (s->vaddr & ~(PAGE_SIZE_ - 1)));
		pm.inode = m->inode;
		pm.dev_major = m->dev_major;
		pm.dev_minor = m->dev_minor;
		pm.perms[0] = s->flags & PF_R ? 'r' : '-';
		pm.perms[1] = s->flags & PF_W ? 'w' : '-';
		pm.perms[2] = s->flags & PF_X ? 'x' : '-';
		pm.perms[3] = 'p';
		pm.path = path;
		memcpy(pm.build_id, m->build_id, m->build_id_len);
		pm.build_id_len = m->build_id_len;
		if (profile__add_mapping(p, proc, &pm) < 0)
			return -ENOMEM;
		prev_end = end;
	}
	return 0;
}

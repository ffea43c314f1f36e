// SPDX-License-Identifier: MIT
/*
 * ELF function symbols and GNU build-id through libelf (see include/sym_elf.h).
 * Function symbols come from .symtab and .dynsym (merged, deduplicated by
 * address); a file without .symtab borrows the .symtab of its separate debug
 * file, found by build-id or .gnu_debuglink the way gdb searches (binutils
 * "Separate Debug Files"), and accepted only when its build-id, if any, matches.
 * Program headers always come from the original file. The Elf handles are
 * closed before returning: names are copied into one pool owned by the table.
 * Every table, count and string index is checked against the file size or the
 * section it refers to (ELF gABI), so malformed files give -EINVAL or fewer
 * symbols, never out-of-bounds reads.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "array.h"
#include "log.h"
#include "sym_elf.h"

/* Zero-size symbol without a following symbol or section end: cover this much. */
#define ELF_SYM_TAIL_MAX 4096

struct elf_sym {
	uint64_t addr;
	uint64_t end;		/* exclusive; for size 0: the section end */
	uint64_t size;		/* st_size, 0 when unknown */
	size_t name;		/* offset into elf_symtab.names */
	unsigned int rank;	/* binding preference: GLOBAL 2, WEAK 1, LOCAL 0 */
	size_t seq;		/* load order, the final tie-break */
};

struct elf_load {
	uint64_t offset;
	uint64_t filesz;
	uint64_t vaddr;
};

struct elf_symtab {
	struct elf_sym *syms;
	size_t nr_syms;
	size_t cap_syms;
	char *names;		/* NUL-terminated names back to back */
	size_t names_len;
	size_t names_cap;
	struct elf_load *loads;
	size_t nr_loads;
	uint8_t build_id[ELF_BUILD_ID_MAX];
	size_t build_id_len;
};

/* An open ELF file: the fd must outlive the Elf handle (ELF_C_READ_MMAP). */
struct elf_file {
	int fd;
	Elf *elf;
	GElf_Ehdr ehdr;
	uint64_t file_size;
	size_t shnum;
};

static bool libelf_ready;

static int libelf_init(void)
{
	/* elf_version() only records the version; calling it again is harmless. */
	if (!libelf_ready) {
		if (elf_version(EV_CURRENT) == EV_NONE) {
			pr_warn("libelf: version init failed: %s\n", elf_errmsg(-1));
			return -ENOTSUP;
		}
		libelf_ready = true;
	}
	return 0;
}

static void elf_file__close(struct elf_file *f)
{
	if (f->elf)
		elf_end(f->elf);
	if (f->fd >= 0)
		close(f->fd);
	f->elf = NULL;
	f->fd = -1;
}

/*
 * Open path and check the headers libelf reads lazily: the ELF header, and
 * that the program and section header tables lie inside the file.
 * Returns 0, -errno from open/fstat, or -EINVAL.
 */
static int elf_file__open(struct elf_file *f, const char *path)
{
	uint64_t tbl_end;
	struct stat sb;
	size_t phnum;
	int err;

	memset(f, 0, sizeof(*f));
	f->fd = -1;
	err = libelf_init();
	if (err)
		return err;
	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0)
		return -errno;
	if (fstat(f->fd, &sb)) {
		err = -errno;
		goto out_close;
	}
	if (!S_ISREG(sb.st_mode)) {
		err = -EINVAL;
		pr_warn("elf: '%s' is not a regular file\n", path);
		goto out_close;
	}
	f->file_size = sb.st_size;
	f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
	if (!f->elf || elf_kind(f->elf) != ELF_K_ELF) {
		err = -EINVAL;
		pr_debug("elf: '%s' is not an ELF file\n", path);
		goto out_close;
	}
	if (!gelf_getehdr(f->elf, &f->ehdr)) {
		err = -EINVAL;
		pr_warn("elf: '%s': bad ELF header: %s\n", path, elf_errmsg(-1));
		goto out_close;
	}
	if (elf_getphdrnum(f->elf, &phnum) || elf_getshdrnum(f->elf, &f->shnum)) {
		err = -EINVAL;
		pr_warn("elf: '%s': bad header counts: %s\n", path, elf_errmsg(-1));
		goto out_close;
	}
	/*
	 * libelf silently clamps the counts to the entries that fit in the
	 * file; a clamped count means a truncated file. 0 and PN_XNUM are
	 * escapes to extended numbering, which libelf has resolved.
	 */
	if ((f->ehdr.e_phnum != PN_XNUM && phnum != f->ehdr.e_phnum) ||
	    (f->ehdr.e_shnum && f->shnum != f->ehdr.e_shnum)) {
		err = -EINVAL;
		pr_warn("elf: '%s': truncated: %zu of %u phdrs, %zu of %u shdrs\n", path, phnum,
			f->ehdr.e_phnum, f->shnum, f->ehdr.e_shnum);
		goto out_close;
	}
	/*
	 * Both counts are bounded by the file size now, so the products cannot
	 * overflow; an offset past EOF is rejected before its sum is trusted.
	 */
	tbl_end = f->ehdr.e_phoff +
		  (uint64_t)phnum * gelf_fsize(f->elf, ELF_T_PHDR, 1, EV_CURRENT);
	if (phnum && (f->ehdr.e_phoff > f->file_size || tbl_end > f->file_size)) {
		err = -EINVAL;
		pr_warn("elf: '%s': program headers at %llu (%zu entries) exceed file size %llu\n",
			path, (unsigned long long)f->ehdr.e_phoff, phnum,
			(unsigned long long)f->file_size);
		goto out_close;
	}
	tbl_end = f->ehdr.e_shoff +
		  (uint64_t)f->shnum * gelf_fsize(f->elf, ELF_T_SHDR, 1, EV_CURRENT);
	if (f->shnum && (f->ehdr.e_shoff > f->file_size || tbl_end > f->file_size)) {
		err = -EINVAL;
		pr_warn("elf: '%s': section headers at %llu (%zu entries) exceed file size %llu\n",
			path, (unsigned long long)f->ehdr.e_shoff, f->shnum,
			(unsigned long long)f->file_size);
		goto out_close;
	}
	return 0;

out_close:
	elf_file__close(f);
	return err;
}

/* Section data, or NULL when the header is unreadable or points past EOF. */
static Elf_Data *scn_data(const struct elf_file *f, Elf_Scn *scn, GElf_Shdr *sh)
{
	if (!gelf_getshdr(scn, sh))
		return NULL;
	if (sh->sh_type != SHT_NOBITS &&
	    (sh->sh_offset > f->file_size || sh->sh_size > f->file_size - sh->sh_offset))
		return NULL;
	return elf_getdata(scn, NULL);
}

static Elf_Scn *find_scn_by_type(const struct elf_file *f, Elf64_Word type)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(f->elf, scn))) {
		if (gelf_getshdr(scn, &sh) && sh.sh_type == type)
			return scn;
	}
	return NULL;
}

static Elf_Scn *find_scn_by_name(const struct elf_file *f, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	const char *n;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(f->elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(f->elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		/* elf_strptr checks the index and the terminating NUL. */
		n = elf_strptr(f->elf, shstrndx, sh.sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

/*
 * Scan one note area for NT_GNU_BUILD_ID with owner "GNU". Ids longer than
 * ELF_BUILD_ID_MAX are skipped rather than truncated: a truncated id would
 * name the wrong .build-id debug file. Returns the length, or 0.
 */
static size_t notes_build_id(Elf_Data *data, uint8_t id[ELF_BUILD_ID_MAX])
{
	size_t off = 0, next, name_off, desc_off;
	GElf_Nhdr nh;

	if (!data || !data->d_buf)
		return 0;
	/* gelf_getnote returns 0 when a note would run past d_size. */
	while (off < data->d_size &&
	       (next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp((const char *)data->d_buf + name_off, "GNU", 4) &&
		    nh.n_descsz > 0 && nh.n_descsz <= ELF_BUILD_ID_MAX) {
			memcpy(id, (const char *)data->d_buf + desc_off, nh.n_descsz);
			return nh.n_descsz;
		}
		off = next;
	}
	return 0;
}

/* Build-id from PT_NOTE segments, else SHT_NOTE sections (e.g. debug files). */
static size_t read_build_id(const struct elf_file *f, uint8_t id[ELF_BUILD_ID_MAX])
{
	Elf_Scn *scn = NULL;
	size_t phnum, i, len;
	GElf_Phdr ph;
	GElf_Shdr sh;

	if (!elf_getphdrnum(f->elf, &phnum)) {
		for (i = 0; i < phnum; i++) {
			if (!gelf_getphdr(f->elf, i, &ph) || ph.p_type != PT_NOTE)
				continue;
			/* elf_getdata_rawchunk rejects ranges outside the file. */
			len = notes_build_id(elf_getdata_rawchunk(f->elf, ph.p_offset, ph.p_filesz,
								  ph.p_align == 8 ? ELF_T_NHDR8 :
										    ELF_T_NHDR),
					     id);
			if (len)
				return len;
		}
	}
	while ((scn = elf_nextscn(f->elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		len = notes_build_id(scn_data(f, scn, &sh), id);
		if (len)
			return len;
	}
	return 0;
}

static int collect_loads(struct elf_symtab *st, const struct elf_file *f, const char *path)
{
	size_t phnum, i, cap = 0;
	GElf_Phdr ph;
	int err;

	if (elf_getphdrnum(f->elf, &phnum))
		return -EINVAL;
	for (i = 0; i < phnum; i++) {
		if (!gelf_getphdr(f->elf, i, &ph)) {
			pr_warn("elf: '%s': bad program header %zu: %s\n", path, i, elf_errmsg(-1));
			return -EINVAL;
		}
		if (ph.p_type != PT_LOAD || !ph.p_filesz)
			continue;
		err = array__grow((void **)&st->loads, &cap, st->nr_loads + 1, sizeof(*st->loads));
		if (err)
			return err;
		st->loads[st->nr_loads].offset = ph.p_offset;
		st->loads[st->nr_loads].filesz = ph.p_filesz;
		st->loads[st->nr_loads].vaddr = ph.p_vaddr;
		st->nr_loads++;
	}
	return 0;
}

static int pool_add(struct elf_symtab *st, const char *s, size_t *off)
{
	size_t len = strlen(s) + 1;
	int err;

	if (len > SIZE_MAX - st->names_len)
		return -ENOMEM;
	err = array__grow((void **)&st->names, &st->names_cap, st->names_len + len, 1);
	if (err)
		return err;
	memcpy(st->names + st->names_len, s, len);
	*off = st->names_len;
	st->names_len += len;
	return 0;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

static unsigned int bind_rank(unsigned char bind)
{
	switch (bind) {
	case STB_GLOBAL:
		return 2;
	case STB_WEAK:
		return 1;
	default:
		return 0;
	}
}

/*
 * Append the function symbols of one SHT_SYMTAB/SHT_DYNSYM section. A broken
 * section (unreadable data, sh_link not a string table) is skipped, as are
 * single symbols with bad section indexes or names: 0 or -ENOMEM.
 */
static int collect_syms(struct elf_symtab *st, const struct elf_file *f, Elf_Scn *scn,
			const char *path)
{
	GElf_Shdr sh, strsh, symsh;
	size_t i, nr, fsize;
	Elf_Scn *strscn, *symscn;
	const char *name;
	struct elf_sym *s;
	Elf_Data *data;
	unsigned char type;
	uint64_t sec_end;
	GElf_Sym sym;
	int err;

	data = scn_data(f, scn, &sh);
	if (!data || !data->d_buf) {
		pr_debug("elf: '%s': unreadable symbol table section %zu\n", path, elf_ndxscn(scn));
		return 0;
	}
	if (sh.sh_link == 0 || sh.sh_link >= f->shnum ||
	    !(strscn = elf_getscn(f->elf, sh.sh_link)) || !gelf_getshdr(strscn, &strsh) ||
	    strsh.sh_type != SHT_STRTAB) {
		pr_debug("elf: '%s': symbol table %zu: bad string table link %u\n", path,
			 elf_ndxscn(scn), sh.sh_link);
		return 0;
	}
	fsize = gelf_fsize(f->elf, ELF_T_SYM, 1, EV_CURRENT);
	if (!fsize)
		return 0;
	nr = data->d_size / fsize;
	for (i = 1; i < nr; i++) {
		if (!gelf_getsym(data, i, &sym))
			break;
		type = GELF_ST_TYPE(sym.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || !sym.st_value)
			continue;
		/* Only symbols defined in an allocated section (not UNDEF, ABS, COMMON). */
		if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE ||
		    sym.st_shndx >= f->shnum)
			continue;
		symscn = elf_getscn(f->elf, sym.st_shndx);
		if (!symscn || !gelf_getshdr(symscn, &symsh) || !(symsh.sh_flags & SHF_ALLOC))
			continue;
		name = elf_strptr(f->elf, sh.sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		if (f->ehdr.e_machine == EM_ARM)
			sym.st_value &= ~1ULL;	/* Thumb bit */
		err = array__grow((void **)&st->syms, &st->cap_syms, st->nr_syms + 1,
				 sizeof(*st->syms));
		if (err)
			return err;
		s = &st->syms[st->nr_syms];
		s->addr = sym.st_value;
		s->size = sym.st_size;
		/* Size 0: up to the next symbol (see finalize_syms), at most the section end. */
		sec_end = symsh.sh_addr + symsh.sh_size;
		if (sym.st_size)
			s->end = sat_add(sym.st_value, sym.st_size);
		else if (sec_end > sym.st_value && sec_end >= symsh.sh_addr)
			s->end = sec_end;
		else
			s->end = sat_add(sym.st_value, ELF_SYM_TAIL_MAX);
		s->rank = bind_rank(GELF_ST_BIND(sym.st_info));
		s->seq = st->nr_syms;
		err = pool_add(st, name, &s->name);
		if (err)
			return err;
		st->nr_syms++;
	}
	return 0;
}

/* Address ascending; within an address the preferred name first. */
static int sym_cmp(const void *a, const void *b)
{
	const struct elf_sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	if (!x->size != !y->size)
		return x->size ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return 0;
}

/*
 * Sort and keep one symbol per address: the best name, the largest size.
 * Zero-size symbols need no clipping at the next symbol: a lookup picks the
 * last symbol at or below the address, so the next one takes over anyway.
 */
static void finalize_syms(struct elf_symtab *st)
{
	size_t i, n = 0;
	struct elf_sym *d;

	if (!st->nr_syms)
		return;
	qsort(st->syms, st->nr_syms, sizeof(*st->syms), sym_cmp);
	for (i = 0; i < st->nr_syms; i++) {
		if (n && st->syms[n - 1].addr == st->syms[i].addr) {
			d = &st->syms[n - 1];
			if (st->syms[i].size > d->size) {
				d->size = st->syms[i].size;
				d->end = st->syms[i].end;
			}
			continue;
		}
		st->syms[n++] = st->syms[i];
	}
	st->nr_syms = n;
}

static bool debug_file_usable(const struct elf_symtab *st, const struct elf_file *dbg)
{
	uint8_t id[ELF_BUILD_ID_MAX];
	size_t len;

	if (!find_scn_by_type(dbg, SHT_SYMTAB))
		return false;
	if (!st->build_id_len)
		return true;
	len = read_build_id(dbg, id);
	/* A debug file without a build-id note cannot be checked; accept it. */
	return !len || (len == st->build_id_len && !memcmp(id, st->build_id, len));
}

static bool try_debug_file(const struct elf_symtab *st, const char *cand, struct elf_file *dbg)
{
	if (elf_file__open(dbg, cand))
		return false;
	if (debug_file_usable(st, dbg)) {
		pr_debug("elf: using debug file '%s'\n", cand);
		return true;
	}
	elf_file__close(dbg);
	return false;
}

/*
 * The .gnu_debuglink name: a NUL-terminated file name, padding, CRC32.
 * Names with '/' are refused so that the name stays inside the searched
 * directories. Returns a pointer into the section data, or NULL.
 */
static const char *debuglink_name(const struct elf_file *f)
{
	Elf_Scn *scn = find_scn_by_name(f, ".gnu_debuglink");
	const char *name;
	Elf_Data *data;
	GElf_Shdr sh;

	if (!scn)
		return NULL;
	data = scn_data(f, scn, &sh);
	if (!data || !data->d_buf || !data->d_size)
		return NULL;
	name = data->d_buf;
	if (!memchr(name, '\0', data->d_size) || !*name || strchr(name, '/'))
		return NULL;
	return name;
}

/*
 * Search the separate debug file of f (see the file comment) and open it in
 * *dbg. path's directory is taken relative to debug_root: a path that already
 * starts with debug_root has that prefix removed first.
 */
static bool find_debug_file(const struct elf_symtab *st, const struct elf_file *f,
			    const char *path, const char *root, struct elf_file *dbg)
{
	static const char *const link_fmts[] = {
		"%s%s/%s",			/* next to the file */
		"%s%s/.debug/%s",		/* in .debug/ next to it */
		"%s/usr/lib/debug%s/%s",	/* under the global debug directory */
	};
	char cand[PATH_MAX], hex[2 * ELF_BUILD_ID_MAX + 1], *dir, *slash;
	size_t i, root_len = strlen(root);
	const char *link, *rel = path;
	bool found = false;
	int n;

	if (st->build_id_len) {
		for (i = 0; i < st->build_id_len; i++)
			snprintf(hex + 2 * i, 3, "%02x", st->build_id[i]);
		n = snprintf(cand, sizeof(cand), "%s/usr/lib/debug/.build-id/%.2s/%s.debug", root,
			     hex, hex + 2);
		if (n > 0 && (size_t)n < sizeof(cand) && try_debug_file(st, cand, dbg))
			return true;
	}
	link = debuglink_name(f);
	if (!link)
		return false;
	if (root_len && !strncmp(path, root, root_len) && path[root_len] == '/')
		rel = path + root_len;
	/* The directories are absolute; resolve a relative path on the host only. */
	dir = rel[0] != '/' && !root_len ? realpath(rel, NULL) : strdup(rel);
	if (!dir)
		return false;
	slash = strrchr(dir, '/');
	if (dir[0] != '/' || !slash) {
		free(dir);
		return false;
	}
	*slash = '\0';		/* "/foo" leaves "", the root directory */
	for (i = 0; i < sizeof(link_fmts) / sizeof(link_fmts[0]) && !found; i++) {
		n = snprintf(cand, sizeof(cand), link_fmts[i], root, dir, link);
		if (n > 0 && (size_t)n < sizeof(cand))
			found = try_debug_file(st, cand, dbg);
	}
	free(dir);
	return found;
}

struct elf_symtab *elf_symtab__load(const char *path, const char *debug_root)
{
	struct elf_file f, dbg;
	struct elf_symtab *st;
	Elf_Scn *scn;
	int err;

	dbg.fd = -1;
	dbg.elf = NULL;
	if (!debug_root)
		debug_root = "";
	err = elf_file__open(&f, path);
	if (err) {
		errno = -err;
		return NULL;
	}
	st = calloc(1, sizeof(*st));
	if (!st) {
		err = -ENOMEM;
		goto out_close;
	}
	err = collect_loads(st, &f, path);
	if (err)
		goto out_free;
	st->build_id_len = read_build_id(&f, st->build_id);

	scn = find_scn_by_type(&f, SHT_SYMTAB);
	if (scn) {
		err = collect_syms(st, &f, scn, path);
	} else if (find_debug_file(st, &f, path, debug_root, &dbg)) {
		/* Same link-time addresses as the original file. */
		err = collect_syms(st, &dbg, find_scn_by_type(&dbg, SHT_SYMTAB), path);
	}
	if (err)
		goto out_free;
	scn = find_scn_by_type(&f, SHT_DYNSYM);
	if (scn) {
		err = collect_syms(st, &f, scn, path);
		if (err)
			goto out_free;
	}
	finalize_syms(st);
	elf_file__close(&dbg);
	elf_file__close(&f);
	return st;

out_free:
	elf_symtab__free(st);
	st = NULL;
out_close:
	elf_file__close(&dbg);
	elf_file__close(&f);
	if (err == -ENOMEM)
		pr_warn("elf: '%s': out of memory loading symbols\n", path);
	errno = -err;
	return NULL;
}

void elf_symtab__free(struct elf_symtab *st)
{
	if (!st)
		return;
	free(st->syms);
	free(st->names);
	free(st->loads);
	free(st);
}

int elf_symtab__offset_to_vaddr(const struct elf_symtab *st, uint64_t off, uint64_t *vaddr)
{
	const struct elf_load *l;
	size_t i;

	for (i = 0; i < st->nr_loads; i++) {
		l = &st->loads[i];
		if (off >= l->offset && off - l->offset < l->filesz) {
			*vaddr = off - l->offset + l->vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

const char *elf_symtab__lookup_offset(const struct elf_symtab *st, uint64_t off, uint64_t *sym_off)
{
	size_t lo = 0, hi = st->nr_syms, mid;
	const struct elf_sym *s;
	uint64_t vaddr;

	if (elf_symtab__offset_to_vaddr(st, off, &vaddr))
		return NULL;
	/* First symbol above vaddr; the candidate is the one before it. */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (st->syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s = &st->syms[lo - 1];
	if (vaddr >= s->end)
		return NULL;
	if (sym_off)
		*sym_off = vaddr - s->addr;
	return st->names + s->name;
}

size_t elf_symtab__build_id(const struct elf_symtab *st, uint8_t id[ELF_BUILD_ID_MAX])
{
	memcpy(id, st->build_id, st->build_id_len);
	return st->build_id_len;
}

size_t elf_symtab__count(const struct elf_symtab *st)
{
	return st->nr_syms;
}

int elf__read_build_id(const char *path, uint8_t id[ELF_BUILD_ID_MAX])
{
	struct elf_file f;
	size_t len;
	int err;

	err = elf_file__open(&f, path);
	if (err)
		return err;
	len = read_build_id(&f, id);
	elf_file__close(&f);
	return (int)len;
}

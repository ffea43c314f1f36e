// SPDX-License-Identifier: MIT
/*
 * ELF function symbols and GNU build-id through libelf (see include/sym_elf.h).
 * Function symbols come from .symtab and .dynsym (merged, deduplicated by
 * address); a file without .symtab borrows the .symtab of its separate debug
 * file, found by build-id or .gnu_debuglink the way gdb searches (binutils
 * "Separate Debug Files"), and accepted only when its build-id, if any, matches.
 * Program headers always come from the original file. The Elf handles are
 * closed before returning.
 *
 * Memory: a table lives as long as the profiler caches it, and big C++
 * programs have 100 000 function names (node: 11 MB of them), of which a
 * profile names a few hundred. So a symbol is 16 bytes (address, length,
 * string-table offset) and names stay in the file: the table keeps the
 * descriptor of each string table's file and reads a name with pread(2) the
 * first time a lookup returns it, into a cache that never moves what it
 * returned. A file's name pages are never even touched while loading. When
 * descriptors run short (half of RLIMIT_NOFILE in use) the table reads its
 * string tables whole instead, as before.
 * Every table, count and string index is checked against the file size or the
 * section it refers to (ELF gABI), so malformed files give -EINVAL or fewer
 * symbols, never out-of-bounds reads.
 */
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include "array.h"
#include "lib_hashmap.h"
#include "log.h"
#include "sym_elf.h"
#include "sym_gopclntab.h"
#include "sym_minidebug.h"

/* Zero-size symbol without a following symbol or section end: cover this much. */
#define ELF_SYM_TAIL_MAX 4096
/* .symtab's and .dynsym's string tables */
#define ELF_MAX_STRTABS 2
#define ELF_SYM_LEN_MAX 0x7fffffffu
#define ELF_SYM_TAB_BIT 0x80000000u
/* first size of the name cache's chunks; they double up to ELF_NAME_CHUNK_MAX */
#define ELF_NAME_CHUNK_MIN 4096
#define ELF_NAME_CHUNK_MAX 65536
/* a table built from this many symbols gives its scratch memory back to the system */
#define ELF_TRIM_SYMS 16384
/* symbols a bucket of the lazy index holds on average, at most twice as many (uniform addresses) */
#define ELF_BUCKET_SYMS 8
#define ELF_BUCKET_UNBUILT UINT32_MAX
/* a bucket this small is sorted by insertion (stable) */
#define ELF_BUCKET_INSERTION 32
/* symbols with broken names a lookup steps over before it gives up */
#define ELF_SYM_BAD_NAME_WALK 16

/*
 * A function symbol while the table is built: what choosing among aliases
 * needs. Its load order, the final tie-break, is its place in
 * elf_symtab.raw, which the sort by address keeps (stable).
 */
struct elf_sym_raw {
	uint64_t addr;
	uint64_t end; /* exclusive; for size 0: the section end */
	uint64_t size; /* st_size, 0 when unknown */
	uint32_t name; /* st_name: offset into string table `tab` */
	uint8_t rank; /* binding preference: GLOBAL 2, WEAK 1, LOCAL 0 */
	uint8_t tab; /* index into elf_symtab.strtabs */
};

/*
 * A function symbol of the finished table, 16 bytes: tables of every sampled
 * file stay cached for the profiler's lifetime.
 */
struct elf_sym {
	uint64_t addr;
	/* bits 0-30: bytes covered (end - addr, at most 2 GiB); bit 31: string table index */
	uint32_t len_tab;
	uint32_t name; /* st_name: offset into that string table */
};

_Static_assert(sizeof(struct elf_sym) == 16, "struct elf_sym is 16 bytes");

struct elf_load {
	uint64_t offset;
	uint64_t filesz;
	uint64_t vaddr;
};

/* Where a string table's bytes are: in its file (fd), or read whole (data). */
struct elf_strtab {
	const void *src; /* while loading: the struct elf_file it is in */
	int fd; /* -1 when data holds the table, or none */
	uint64_t off; /* file offset of the section */
	uint64_t size; /* its size, bytes */
	char *data; /* the whole table, when no descriptor is kept */
};

/* Names read so far, in chunks that never move: returned names stay valid. */
struct elf_name_chunk {
	struct elf_name_chunk *next;
	size_t used, cap;
	char data[];
};

/*
 * The symbols are indexed lazily (finalize_syms): grouped at load by
 * address into buckets of about ELF_BUCKET_SYMS, in one counting pass, and
 * a bucket is sorted and made one symbol per address when a lookup first
 * needs it. A profile names a few hundred addresses of node's 78,000
 * symbols: sorting them all took most of its table's load.
 */
struct elf_symtab {
	/* bucket b's symbols, sorted by addr, one per address, from bstart[b] once built */
	struct elf_sym *syms;
	size_t nr_syms; /* in the buckets built */
	/*
	 * every symbol collected: while loading in load order, then grouped
	 * by bucket (load order within each); freed once every bucket is built
	 */
	struct elf_sym_raw *raw;
	size_t nr_raw;
	size_t cap_raw;
	uint64_t lo; /* the lowest symbol address: bucket b holds addresses lo + (b << shift) on */
	unsigned int shift;
	uint32_t nr_buckets, nr_unbuilt;
	uint32_t *bstart; /* nr_buckets + 1: where each bucket's records and symbols begin */
	uint32_t *bcount; /* each bucket's symbols once built, ELF_BUCKET_UNBUILT before */
	struct elf_strtab strtabs[ELF_MAX_STRTABS];
	unsigned int nr_strtabs;
	struct u64map names; /* name cache: symbol index + 1 -> name, NULL when it has none */
	struct elf_name_chunk *chunks; /* newest first */
	struct elf_load *loads;
	size_t nr_loads;
	uint8_t build_id[ELF_BUILD_ID_MAX];
	size_t build_id_len;
	char *debug_path; /* the separate debug file read, NULL when none */
	enum elf_names_src names_src;
	struct go_pclntab *go; /* a Go binary's own table (.gopclntab), NULL when none or refused */
	/*
	 * [entry, entry_end): the entry function (e_entry) where no symbol
	 * names it, named _start; entry_end 0 when a symbol covers e_entry
	 */
	uint64_t entry, entry_end;
};

/*
 * Bytes after e_entry named _start where no symbol bounds it: glibc's
 * x86-64 _start is 38 bytes, ld.so's _start with _dl_start_user, where
 * _dl_start returns, 61
 */
#define ELF_ENTRY_SPAN 64

/* An open ELF file: the fd must outlive the Elf handle (ELF_C_READ_MMAP). */
struct elf_file {
	int fd;
	Elf *elf;
	GElf_Ehdr ehdr;
	uint64_t file_size;
	size_t shnum;
};

static pthread_once_t libelf_once = PTHREAD_ONCE_INIT;
static bool libelf_ready;

static void libelf_setup(void)
{
	libelf_ready = elf_version(EV_CURRENT) != EV_NONE;
	if (!libelf_ready)
		pr_warn("libelf: version init failed: %s\n", elf_errmsg(-1));
}

/* Once per process, whichever thread reads a table first (symbolize.c reads them over two) */
static int libelf_init(void)
{
	pthread_once(&libelf_once, libelf_setup);
	return libelf_ready ? 0 : -ENOTSUP;
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
static int elf_file__open_fd(struct elf_file *f, int fd, const char *path);

static int elf_file__open(struct elf_file *f, const char *path)
{
	int fd;

	memset(f, 0, sizeof(*f));
	f->fd = -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	return elf_file__open_fd(f, fd, path);
}

/* As elf_file__open, of fd (taken: closed with f, or on failure); path for messages */
static int elf_file__open_fd(struct elf_file *f, int fd, const char *path)
{
	uint64_t tbl_end;
	struct stat sb;
	size_t phnum;
	int err;

	memset(f, 0, sizeof(*f));
	f->fd = fd;
	err = libelf_init();
	if (err)
		goto out_close;
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
	tbl_end = f->ehdr.e_phoff + (uint64_t)phnum * gelf_fsize(f->elf, ELF_T_PHDR, 1, EV_CURRENT);
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

static Elf_Scn *find_scn_by_name(const struct elf_file *f, const char *name);

/*
 * A Go binary's function table: .gopclntab, .data.rel.ro.gopclntab in a PIE
 * (-buildmode=pie), both kept by -ldflags="-s -w" and strip. A bad one is
 * refused with one warning (the file is loaded once), and the file is named
 * from its symbols alone. 0, or -ENOMEM.
 */
static int load_gopclntab(struct elf_symtab *st, const struct elf_file *f, const char *path)
{
	Elf_Scn *scn = find_scn_by_name(f, ".gopclntab"), *text;
	GElf_Shdr sh, text_sh;
	Elf_Data *d;

	if (!scn)
		scn = find_scn_by_name(f, ".data.rel.ro.gopclntab");
	if (!scn)
		return 0;
	d = scn_data(f, scn, &sh);
	text = find_scn_by_name(f, ".text");
	/* Go 1.26 leaves the header's textStart 0: the runtime's text is .text's start */
	if (!text || !gelf_getshdr(text, &text_sh))
		text_sh.sh_addr = 0;
	st->go = d && d->d_buf ? go_pclntab__parse(d->d_buf, d->d_size, text_sh.sh_addr) : NULL;
	if (!st->go) {
		const char *why = !d || !d->d_buf ? "unreadable" :
				  errno == EFBIG  ? "too large" :
						    "malformed or of a Go release before 1.16";

		if (errno == ENOMEM)
			return -ENOMEM;
		pr_warn("elf: '%s': Go function table refused (%s): its Go functions are named from its symbols only\n",
			path, why);
		return 0;
	}
	pr_debug("elf: '%s': Go %u function table, %zu functions\n", path,
		 go_pclntab__version(st->go), go_pclntab__count(st->go));
	return 0;
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
		    !memcmp((const char *)data->d_buf + name_off, "GNU", 4) && nh.n_descsz > 0 &&
		    nh.n_descsz <= ELF_BUILD_ID_MAX) {
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

/*
 * The string table at sh (linked from a symbol table of f), registered once
 * per file and section. Returns its index, or -1 when its bytes do not lie
 * inside the file or both slots hold other tables.
 */
static int add_strtab(struct elf_symtab *st, const struct elf_file *f, const GElf_Shdr *sh)
{
	struct elf_strtab *t;
	unsigned int i;

	if (sh->sh_offset > f->file_size || sh->sh_size > f->file_size - sh->sh_offset)
		return -1;
	for (i = 0; i < st->nr_strtabs; i++)
		if (st->strtabs[i].src == f && st->strtabs[i].off == sh->sh_offset)
			return (int)i;
	if (st->nr_strtabs == ELF_MAX_STRTABS)
		return -1;
	t = &st->strtabs[st->nr_strtabs];
	t->src = f;
	t->fd = -1;
	t->off = sh->sh_offset;
	t->size = sh->sh_size;
	t->data = NULL;
	return (int)st->nr_strtabs++;
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
	struct elf_sym_raw *s;
	struct sec_info {
		uint64_t addr, size;
		bool alloc;
	} * secs, *sec;
	int tab;
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
	tab = add_strtab(st, f, &strsh);
	if (tab < 0) {
		pr_debug("elf: '%s': symbol table %zu: string table %u outside the file\n", path,
			 elf_ndxscn(scn), sh.sh_link);
		return 0;
	}
	fsize = gelf_fsize(f->elf, ELF_T_SYM, 1, EV_CURRENT);
	if (!fsize)
		return 0;
	nr = data->d_size / fsize;
	/* the sections symbols point into, read once instead of once per symbol */
	secs = calloc(f->shnum ? f->shnum : 1, sizeof(*secs));
	if (!secs)
		return -ENOMEM;
	for (i = 1; i < f->shnum; i++) {
		symscn = elf_getscn(f->elf, i);
		if (symscn && gelf_getshdr(symscn, &symsh) && (symsh.sh_flags & SHF_ALLOC)) {
			secs[i].alloc = true;
			secs[i].addr = symsh.sh_addr;
			secs[i].size = symsh.sh_size;
		}
	}
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
		sec = &secs[sym.st_shndx];
		if (!sec->alloc)
			continue;
		/*
		 * Offset 0 is the empty name; other names are read when looked
		 * up (elf_symtab__lookup_offset checks them then), so that the
		 * name pages of the file are not touched here.
		 */
		if (!sym.st_name || sym.st_name >= strsh.sh_size)
			continue;
		if (f->ehdr.e_machine == EM_ARM)
			sym.st_value &= ~1ULL; /* Thumb bit */
		/* room for the section's symbols at once: one allocation, not a doubling series */
		err = st->nr_raw >= UINT32_MAX ?
			      -ENOMEM :
			      array__grow((void **)&st->raw, &st->cap_raw, st->nr_raw + (nr - i),
					  sizeof(*st->raw));
		if (err) {
			free(secs);
			return err;
		}
		s = &st->raw[st->nr_raw];
		s->addr = sym.st_value;
		s->size = sym.st_size;
		/* Size 0: up to the next symbol (see finalize_syms), at most the section end. */
		sec_end = sec->addr + sec->size;
		if (sym.st_size)
			s->end = sat_add(sym.st_value, sym.st_size);
		else if (sec_end > sym.st_value && sec_end >= sec->addr)
			s->end = sec_end;
		else
			s->end = sat_add(sym.st_value, ELF_SYM_TAIL_MAX);
		s->rank = bind_rank(GELF_ST_BIND(sym.st_info));
		s->name = sym.st_name;
		s->tab = (uint8_t)tab;
		st->nr_raw++;
	}
	free(secs);
	return 0;
}

/* bits of the address a radix pass sorts on: 2048 counters, 16 KiB, stay in L1/L2 */
#define SYM_RADIX_BITS 11
#define SYM_RADIX_SIZE (1u << SYM_RADIX_BITS)

/*
 * Sort n collected symbols by address, stably (so that within an address
 * they stay in load order): LSD radix sort of the records themselves on
 * addr - the lowest address, 11 bits a pass, as many passes as the span of
 * addresses needs; tmp has room for n. A bucket of the lazy index is
 * sorted so when it is large (a dense run of addresses). Returns a or tmp,
 * whichever holds the result.
 */
static struct elf_sym_raw *radix_sort_syms(struct elf_sym_raw *a, struct elf_sym_raw *tmp, size_t n)
{
	struct elf_sym_raw *src = a, *dst = tmp, *t;
	uint64_t lo = UINT64_MAX, span = 0;
	size_t count[SYM_RADIX_SIZE], i, sum, c;
	unsigned int shift;

	for (i = 0; i < n; i++)
		if (a[i].addr < lo)
			lo = a[i].addr;
	for (i = 0; i < n; i++)
		span |= a[i].addr - lo;
	for (shift = 0; shift < 64 && span >> shift; shift += SYM_RADIX_BITS) {
		memset(count, 0, sizeof(count));
		for (i = 0; i < n; i++)
			count[((src[i].addr - lo) >> shift) & (SYM_RADIX_SIZE - 1)]++;
		for (sum = 0, i = 0; i < SYM_RADIX_SIZE; i++) {
			c = count[i];
			count[i] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			dst[count[((src[i].addr - lo) >> shift) & (SYM_RADIX_SIZE - 1)]++] = src[i];
		t = src;
		src = dst;
		dst = t;
	}
	return src;
}

/* Sort a bucket's records by address in place, stably; by insertion where memory is short. */
static void sort_bucket(struct elf_sym_raw *a, size_t n)
{
	struct elf_sym_raw *tmp, *sorted, cur;
	size_t i, j;

	if (n > ELF_BUCKET_INSERTION && (tmp = malloc(sizeof(*tmp) * n))) {
		sorted = radix_sort_syms(a, tmp, n);
		if (sorted != a)
			memcpy(a, sorted, sizeof(*a) * n);
		free(tmp);
		return;
	}
	for (i = 1; i < n; i++) {
		cur = a[i];
		for (j = i; j > 0 && a[j - 1].addr > cur.addr; j--)
			a[j] = a[j - 1];
		a[j] = cur;
	}
}

/*
 * Whether a is preferred to b as an address's name: binding rank
 * descending, a sized symbol before a zero-size one; equal ones keep load
 * order (the caller scans in it).
 */
static bool sym_preferred(const struct elf_sym_raw *a, const struct elf_sym_raw *b)
{
	if (a->rank != b->rank)
		return a->rank > b->rank;
	return a->size && !b->size;
}

/*
 * Build bucket b of the lazy index: its records sorted by address, one
 * symbol per address, the best name and the largest size, in the compact
 * form lookups use. Zero-size symbols need no clipping at the next symbol:
 * a lookup picks the last symbol at or below the address, so the next one
 * takes over anyway. The records stay until every bucket is built
 * (drop_raw). Lookups call it through a const table: the index is not part
 * of the table's value.
 */
static void build_bucket(struct elf_symtab *st, uint32_t b)
{
	struct elf_sym_raw *recs, *r, *best, *widest;
	size_t i, j, k, n = 0;
	struct elf_sym *out;
	uint64_t len;

	if (st->bcount[b] != ELF_BUCKET_UNBUILT)
		return;
	recs = &st->raw[st->bstart[b]];
	k = st->bstart[b + 1] - st->bstart[b];
	out = &st->syms[st->bstart[b]];
	sort_bucket(recs, k);
	for (i = 0; i < k; i = j) {
		/*
		 * One address's symbols, in load order: the name is the
		 * preferred one's (the first of the most preferred), the
		 * extent the largest size's (the preferred order's first of
		 * them), as a sort by (preference, load order) would give.
		 */
		best = &recs[i];
		for (j = i + 1; j < k && recs[j].addr == best->addr; j++)
			if (sym_preferred(&recs[j], best))
				best = &recs[j];
		widest = best;
		for (r = &recs[i]; r < &recs[j]; r++)
			if (r->size > widest->size ||
			    (r->size == widest->size && r->size && sym_preferred(r, widest)))
				widest = r;
		len = widest->end - best->addr;
		out[n].addr = best->addr;
		out[n].len_tab = (len > ELF_SYM_LEN_MAX ? ELF_SYM_LEN_MAX : (uint32_t)len) |
				 (best->tab ? ELF_SYM_TAB_BIT : 0);
		out[n].name = best->name;
		n++;
	}
	st->bcount[b] = (uint32_t)n;
	st->nr_syms += n;
	st->nr_unbuilt--;
}

/* Every bucket built: the records are not needed any more (not while a caller scans them). */
static void drop_raw(struct elf_symtab *st)
{
	if (!st->raw || st->nr_unbuilt)
		return;
	free(st->raw);
	st->raw = NULL;
#ifdef __GLIBC__
	/* freed amid the heap, where glibc keeps them (finalize_syms) */
	if (st->nr_raw >= ELF_TRIM_SYMS)
		malloc_trim(0);
#endif
}

/* The bucket address addr falls in, the last one for addresses past it; addr >= st->lo. */
static uint32_t bucket_of(const struct elf_symtab *st, uint64_t addr)
{
	uint64_t b = (addr - st->lo) >> st->shift;

	return b < st->nr_buckets ? (uint32_t)b : st->nr_buckets - 1;
}

/*
 * Group the collected symbols by bucket (one counting pass and one stable
 * scatter) for the lazy index; no bucket is built yet. Returns 0 or
 * -ENOMEM.
 */
static int finalize_syms(struct elf_symtab *st)
{
	struct elf_sym_raw *grouped;
	uint64_t span = 0, want;
	uint32_t b, *pos;
	size_t i;

	if (!st->nr_raw) {
		free(st->raw);
		st->raw = NULL;
		st->cap_raw = 0;
		return 0;
	}
	st->lo = UINT64_MAX;
	for (i = 0; i < st->nr_raw; i++)
		if (st->raw[i].addr < st->lo)
			st->lo = st->raw[i].addr;
	for (i = 0; i < st->nr_raw; i++)
		span |= st->raw[i].addr - st->lo;
	/* fewest bits of shift that keep the buckets at most want */
	want = 1;
	while (want * ELF_BUCKET_SYMS < st->nr_raw)
		want <<= 1;
	for (st->shift = 0; st->shift < 63 && (span >> st->shift) >= want; st->shift++)
		;
	st->nr_buckets = (uint32_t)(span >> st->shift) + 1;
	st->bstart = calloc((size_t)st->nr_buckets + 1, sizeof(*st->bstart));
	st->bcount = malloc(sizeof(*st->bcount) * st->nr_buckets);
	/* pages touched only where buckets are built */
	st->syms = malloc(sizeof(*st->syms) * st->nr_raw);
	grouped = malloc(sizeof(*grouped) * st->nr_raw);
	if (!st->bstart || !st->bcount || !st->syms || !grouped) {
		free(grouped);
		return -ENOMEM;
	}
	for (i = 0; i < st->nr_raw; i++)
		st->bstart[bucket_of(st, st->raw[i].addr) + 1]++;
	for (b = 0; b < st->nr_buckets; b++)
		st->bstart[b + 1] += st->bstart[b];
	pos = st->bcount; /* the scatter's positions, then each bucket's state */
	memcpy(pos, st->bstart, sizeof(*pos) * st->nr_buckets);
	for (i = 0; i < st->nr_raw; i++)
		grouped[pos[bucket_of(st, st->raw[i].addr)]++] = st->raw[i];
	for (b = 0; b < st->nr_buckets; b++)
		st->bcount[b] = ELF_BUCKET_UNBUILT;
	st->nr_unbuilt = st->nr_buckets;
	free(st->raw);
	st->raw = grouped;
	st->cap_raw = st->nr_raw;
#ifdef __GLIBC__
	/*
	 * The records as collected (32 bytes a symbol, 2.5 MB for node)
	 * were freed amid the heap, where glibc keeps them: hand the pages
	 * back, or they stay in RSS for the rest of the run.
	 */
	if (st->nr_raw >= ELF_TRIM_SYMS)
		malloc_trim(0);
#endif
	return 0;
}

static void hex_id(char *hex, const uint8_t *id, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	hex[2 * len] = '\0';
}

/* What a debug file must be: of the file's build-id, holding the section wanted. */
struct debug_want {
	const uint8_t *build_id;
	size_t build_id_len; /* 0: the file has none, nothing to check */
	const char *section; /* NULL: a .symtab, for names */
};

/*
 * Whether dbg is what w wants: a .symtab whose entries and string table lie
 * inside the file (a truncated copy is refused, not half read), or the named
 * section with bits inside the file; and the same build-id. A debug file
 * without a build-id note cannot be checked: accepted when found by search,
 * refused when `strict` (debuginfod's, asked for by build-id). Refusals of
 * files that exist are warned, naming the file.
 */
static bool debug_file_usable(const struct debug_want *w, const struct elf_file *dbg,
			      const char *cand, bool strict)
{
	char want[2 * ELF_BUILD_ID_MAX + 1], got[2 * ELF_BUILD_ID_MAX + 1];
	const char *what = w->section ? w->section : ".symtab";
	Elf_Scn *scn = w->section ? find_scn_by_name(dbg, w->section) :
				    find_scn_by_type(dbg, SHT_SYMTAB),
		*strscn;
	uint8_t id[ELF_BUILD_ID_MAX];
	GElf_Shdr sh, strsh;
	size_t len;

	if (scn && w->section && gelf_getshdr(scn, &sh) &&
	    (sh.sh_type == SHT_NOBITS || !sh.sh_size))
		scn = NULL;
	if (!scn) {
		if (strict)
			pr_warn("elf: debug file '%s' refused: it has no %s\n", cand, what);
		else
			pr_info("elf: debug file '%s' has no %s; not used\n", cand, what);
		return false;
	}
	if (w->section) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_offset > dbg->file_size ||
		    sh.sh_size > dbg->file_size - sh.sh_offset) {
			pr_warn("elf: debug file '%s' refused: %s at %llu+%llu exceeds the file's %llu bytes (truncated?)\n",
				cand, what, (unsigned long long)sh.sh_offset,
				(unsigned long long)sh.sh_size, (unsigned long long)dbg->file_size);
			return false;
		}
	} else if (!gelf_getshdr(scn, &sh) || sh.sh_offset > dbg->file_size ||
		   sh.sh_size > dbg->file_size - sh.sh_offset || sh.sh_link >= dbg->shnum ||
		   !(strscn = elf_getscn(dbg->elf, sh.sh_link)) || !gelf_getshdr(strscn, &strsh) ||
		   strsh.sh_offset > dbg->file_size ||
		   strsh.sh_size > dbg->file_size - strsh.sh_offset) {
		pr_warn("elf: debug file '%s' refused: .symtab or its strings at %llu+%llu exceed the file's %llu bytes (truncated?)\n",
			cand, (unsigned long long)sh.sh_offset, (unsigned long long)sh.sh_size,
			(unsigned long long)dbg->file_size);
		return false;
	}
	len = read_build_id(dbg, id);
	if (!w->build_id_len)
		return !strict;
	if (!len) {
		if (strict)
			pr_warn("elf: debug file '%s' refused: it has no build-id to check\n",
				cand);
		return !strict;
	}
	if (len == w->build_id_len && !memcmp(id, w->build_id, len))
		return true;
	hex_id(want, w->build_id, w->build_id_len);
	hex_id(got, id, len);
	pr_warn("elf: debug file '%s' refused: build-id %s, the file's is %s\n", cand, got, want);
	return false;
}

static bool try_debug_file(const struct debug_want *w, const char *cand, struct elf_file *dbg,
			   bool strict)
{
	int err = elf_file__open(dbg, cand);

	if (err) {
		/* a missing candidate is the usual case; one that exists but is no ELF file is not */
		if (err == -EINVAL)
			pr_warn("elf: debug file '%s' refused: not a valid ELF file\n", cand);
		else if (strict || err != -ENOENT)
			pr_info("elf: debug file '%s': %s\n", cand, strerror(-err));
		return false;
	}
	if (debug_file_usable(w, dbg, cand, strict)) {
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
static bool find_debug_file_in(const struct debug_want *w, const struct elf_file *f,
			       const char *path, const char *root, struct elf_file *dbg,
			       char **found_path)
{
	static const char *const link_fmts[] = {
		"%s%s/%s", /* next to the file */
		"%s%s/.debug/%s", /* in .debug/ next to it */
		"%s/usr/lib/debug%s/%s", /* under the global debug directory */
	};
	char cand[PATH_MAX], hex[2 * ELF_BUILD_ID_MAX + 1], *dir, *slash;
	size_t i, root_len = strlen(root);
	const char *link, *rel = path;
	bool found = false;
	int n;

	if (w->build_id_len) {
		hex_id(hex, w->build_id, w->build_id_len);
		n = snprintf(cand, sizeof(cand), "%s/usr/lib/debug/.build-id/%.2s/%s.debug", root,
			     hex, hex + 2);
		if (n > 0 && (size_t)n < sizeof(cand) && try_debug_file(w, cand, dbg, false))
			return (*found_path = strdup(cand)) != NULL;
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
	*slash = '\0'; /* "/foo" leaves "", the root directory */
	for (i = 0; i < sizeof(link_fmts) / sizeof(link_fmts[0]) && !found; i++) {
		n = snprintf(cand, sizeof(cand), link_fmts[i], root, dir, link);
		if (n > 0 && (size_t)n < sizeof(cand))
			found = try_debug_file(w, cand, dbg, false);
	}
	free(dir);
	if (found && !(*found_path = strdup(cand))) {
		elf_file__close(dbg);
		found = false;
	}
	return found;
}

/*
 * Search the separate debug file of f under debug_root, then, when
 * host_too and debug_root is another directory, under the host's root:
 * a container's debug files first, the host's debug packages next.
 * path is the file's name as the process sees it.
 */
static bool find_debug_file(const struct debug_want *w, const struct elf_file *f, const char *path,
			    const char *root, bool host_too, struct elf_file *dbg,
			    char **found_path)
{
	if (find_debug_file_in(w, f, path, root, dbg, found_path))
		return true;
	return host_too && root[0] && find_debug_file_in(w, f, path, "", dbg, found_path);
}

/*
 * MiniDebugInfo: decompress f's .gnu_debugdata (sym_minidebug.h) and open
 * the ELF file inside as dbg, if it is usable (debug_file_usable). Returns
 * true when dbg is open.
 */
static bool open_minidebug(const struct elf_symtab *st, const struct elf_file *f, const char *path,
			   struct elf_file *dbg)
{
	Elf_Scn *scn = find_scn_by_name(f, ".gnu_debugdata");
	char name[64], what[PATH_MAX + 32];
	Elf_Data *data;
	GElf_Shdr sh;
	int fd;

	if (!scn)
		return false;
	data = scn_data(f, scn, &sh);
	if (!data || !data->d_buf || sh.sh_type == SHT_NOBITS) {
		pr_warn("elf: '%s': .gnu_debugdata at %llu+%llu is unreadable (outside the file, or no bits); ignored\n",
			path, (unsigned long long)sh.sh_offset, (unsigned long long)sh.sh_size);
		return false;
	}
	fd = minidebug__decompress(data->d_buf, data->d_size, MINIDEBUG_MAX_SIZE, path);
	if (fd < 0)
		return false;
	snprintf(name, sizeof(name), "/proc/self/fd/%d", fd);
	snprintf(what, sizeof(what), "%s (.gnu_debugdata)", path);
	if (elf_file__open(dbg, name)) {
		pr_warn("elf: '%s': .gnu_debugdata does not hold a valid ELF file; ignored\n",
			path);
		close(fd);
		return false;
	}
	close(fd); /* dbg holds its own descriptor */
	if (debug_file_usable(&(struct debug_want){ st->build_id, st->build_id_len, NULL }, dbg,
			      what, false))
		return true;
	elf_file__close(dbg);
	return false;
}

/* Read [off, off + len) of fd whole. Returns 0, -errno, or -EIO when the file is shorter. */
static int pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			return -EIO;
		done += n;
	}
	return 0;
}

/*
 * After the Elf handles are done with: keep the descriptor of each string
 * table's file (f or dbg, whose fd is then taken over) so that names can be
 * read on lookup, or, when half of RLIMIT_NOFILE is in use already, read the
 * tables whole and keep no descriptor. Returns 0, -ENOMEM, or -errno of a
 * failed read.
 */
static int keep_strtabs(struct elf_symtab *st, struct elf_file *f, struct elf_file *dbg,
			const char *path)
{
	struct elf_file *files[2] = { f, dbg };
	struct rlimit rl;
	bool eager;
	unsigned int i, k;
	int err;

	if (!st->nr_buckets) {
		st->nr_strtabs = 0;
		return 0;
	}
	/* descriptors are handed out lowest first: the highest one tells how many are open */
	eager = !getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY &&
		(rlim_t)(f->fd > dbg->fd ? f->fd : dbg->fd) >= rl.rlim_cur / 2;
	for (i = 0; i < st->nr_strtabs; i++) {
		struct elf_strtab *t = &st->strtabs[i];
		struct elf_file *src = NULL;

		for (k = 0; k < 2; k++)
			if (t->src == files[k])
				src = files[k];
		t->src = NULL;
		if (!src || src->fd < 0) {
			/* cannot happen: every table came from f or dbg; own no descriptor */
			for (k = 0; k < st->nr_strtabs; k++)
				st->strtabs[k].fd = -1;
			return -EBADF;
		}
		if (eager) {
			t->data = malloc(t->size ? t->size : 1);
			if (!t->data)
				return -ENOMEM;
			err = pread_all(src->fd, t->data, t->size, t->off);
			if (err) {
				pr_warn("elf: '%s': string table at %llu: %s\n", path,
					(unsigned long long)t->off, strerror(-err));
				return err;
			}
			continue;
		}
		t->fd = src->fd;
	}
	if (eager)
		return 0;
	/* the kept descriptors are the table's now; the Elf handles go */
	for (k = 0; k < 2; k++) {
		for (i = 0; i < st->nr_strtabs && st->strtabs[i].fd != files[k]->fd; i++)
			;
		if (i < st->nr_strtabs) {
			if (files[k]->elf)
				elf_end(files[k]->elf);
			files[k]->elf = NULL;
			files[k]->fd = -1;
		}
	}
	return 0;
}

/* The separate debug file: the one given (debuginfod's), else searched. True when dbg is open. */
static bool open_debug(struct elf_symtab *st, const struct elf_file *f, const char *name,
		       const char *debug_root, const struct elf_load_opts *o, struct elf_file *dbg)
{
	struct debug_want w = { st->build_id, st->build_id_len, NULL };

	if (!o->debug_file)
		return find_debug_file(&w, f, name, debug_root, o->host_debug, dbg,
				       &st->debug_path);
	if (!try_debug_file(&w, o->debug_file, dbg, true))
		return false;
	st->debug_path = strdup(o->debug_file);
	if (st->debug_path)
		return true;
	elf_file__close(dbg);
	return false;
}

static void set_entry(struct elf_symtab *st, const struct elf_file *f);

struct elf_symtab *elf_symtab__load(const char *path, const char *debug_root)
{
	struct elf_load_opts o = { .debug_root = debug_root };

	return elf_symtab__load_opts(path, &o);
}

struct elf_symtab *elf_symtab__load_opts(const char *path, const struct elf_load_opts *o)
{
	const char *debug_root = o->debug_root ? o->debug_root : "";
	const char *name = o->file_path ? o->file_path : path;
	struct elf_file f, dbg;
	struct elf_symtab *st;
	Elf_Scn *scn;
	int err;

	dbg.fd = -1;
	dbg.elf = NULL;
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
	err = load_gopclntab(st, &f, path);
	if (err)
		goto out_free;

	scn = find_scn_by_type(&f, SHT_SYMTAB);
	st->names_src = ELF_NAMES_DYNSYM;
	if (scn) {
		st->names_src = ELF_NAMES_SYMTAB;
		err = collect_syms(st, &f, scn, path);
	} else if (open_debug(st, &f, name, debug_root, o, &dbg)) {
		/* Same link-time addresses as the original file. */
		st->names_src = ELF_NAMES_DEBUG_FILE;
		err = collect_syms(st, &dbg, find_scn_by_type(&dbg, SHT_SYMTAB), path);
	} else if (!o->debug_file && open_minidebug(st, &f, path, &dbg)) {
		st->names_src = ELF_NAMES_MINIDEBUG;
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
	err = finalize_syms(st);
	if (err)
		goto out_free;
	set_entry(st, &f);
	err = keep_strtabs(st, &f, &dbg, path);
	if (err)
		goto out_free;
	pr_debug("elf: '%s': %zu function symbols collected, names %s\n", path, st->nr_raw,
		 st->nr_strtabs && st->strtabs[0].fd < 0 ? "read whole" : "read on lookup");
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
	struct elf_name_chunk *c, *next;
	unsigned int i;

	if (!st)
		return;
	for (i = 0; i < st->nr_strtabs; i++) {
		/* two tables of one file share its descriptor */
		if (st->strtabs[i].fd >= 0 && (i == 0 || st->strtabs[i].fd != st->strtabs[0].fd))
			close(st->strtabs[i].fd);
		free(st->strtabs[i].data);
	}
	for (c = st->chunks; c; c = next) {
		next = c->next;
		free(c);
	}
	u64map__free(&st->names);
	free(st->syms);
	free(st->raw);
	free(st->bstart);
	free(st->bcount);
	free(st->loads);
	free(st->debug_path);
	go_pclntab__free(st->go);
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

/* Copy a name into the chunk cache. Returns the copy, or NULL (ENOMEM). */
static const char *cache_name(struct elf_symtab *st, const char *s, size_t len)
{
	struct elf_name_chunk *c = st->chunks;
	size_t cap;
	char *d;

	if (!c || c->cap - c->used < len + 1) {
		cap = c ? c->cap * 2 : ELF_NAME_CHUNK_MIN;
		if (cap > ELF_NAME_CHUNK_MAX)
			cap = ELF_NAME_CHUNK_MAX;
		if (cap < len + 1)
			cap = len + 1;
		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->cap = cap;
		c->used = 0;
		c->next = st->chunks;
		st->chunks = c;
	}
	d = c->data + c->used;
	memcpy(d, s, len);
	d[len] = '\0';
	c->used += len + 1;
	return d;
}

/*
 * Read the name at `off` of string table t: the bytes up to the first NUL,
 * which must come before the table's end. Returns the name (cached, or inside
 * t->data), or NULL when there is none (empty, unterminated, unreadable).
 */
static const char *read_name(struct elf_symtab *st, const struct elf_strtab *t, uint32_t off)
{
	char small[256], *buf = small, *nul, *big = NULL;
	size_t want = sizeof(small), got = 0;
	const char *name = NULL;
	ssize_t n;

	if (off >= t->size)
		return NULL;
	if (t->data) {
		nul = memchr(t->data + off, '\0', t->size - off);
		return nul && nul != t->data + off ? t->data + off : NULL;
	}
	for (;;) {
		if (want > t->size - off)
			want = t->size - off;
		n = pread(t->fd, buf + got, want - got, (off_t)(t->off + off + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* unreadable, or the file shrank */
		nul = memchr(buf + got, '\0', n);
		got += n;
		if (nul) {
			if (nul != buf)
				name = cache_name(st, buf, nul - buf);
			break;
		}
		if (got == t->size - off)
			break; /* no NUL before the table's end */
		if (got == want) {
			/* a long (C++, Rust) name: grow, without bound but the table's size */
			char *tmp = realloc(big, want * 4);

			if (!tmp)
				break;
			if (!big)
				memcpy(tmp, small, got);
			big = buf = tmp;
			want *= 4;
		}
	}
	free(big);
	return name;
}

/* Name of symbol i, read on first use. NULL when it has none or on ENOMEM. */
static const char *sym_name(struct elf_symtab *st, uint32_t i)
{
	const struct elf_sym *s = &st->syms[i];
	uint64_t key = (uint64_t)i + 1, cached;
	const char *name;

	if (u64map__get(&st->names, key, &cached))
		return (const char *)(uintptr_t)cached;
	name = read_name(st, &st->strtabs[(s->len_tab & ELF_SYM_TAB_BIT) ? 1 : 0], s->name);
	/* out of memory: uncached, read again next time */
	u64map__put(&st->names, key, (uintptr_t)name);
	return name;
}

/*
 * The symbol before (b, k) in address order, building the buckets it
 * crosses: *b and *k move there. A cursor (b, k) is the k-th symbol of
 * bucket b counted from 1; false when none is before.
 */
static bool sym_prev(struct elf_symtab *st, uint32_t *b, uint32_t *k)
{
	if (*k > 1) {
		(*k)--;
		return true;
	}
	while (*b > 0) {
		(*b)--;
		build_bucket(st, *b);
		if (st->bcount[*b]) {
			*k = st->bcount[*b];
			return true;
		}
	}
	return false;
}

/* The symbol covering vaddr, as elf_symtab__lookup_offset says; NULL when none */
static const char *lookup_sym(const struct elf_symtab *cst, uint64_t vaddr, uint64_t *sym_off)
{
	/* the lazy index and the name cache are not part of the table's value: lookups stay const */
	struct elf_symtab *st = (struct elf_symtab *)cst;
	size_t lo, hi, mid;
	const struct elf_sym *s, *syms;
	const char *name = NULL;
	unsigned int steps;
	uint32_t b, k;
	bool any;

	if (!st->nr_buckets || vaddr < st->lo)
		return NULL;
	b = bucket_of(st, vaddr);
	build_bucket(st, b);
	/* First symbol above vaddr in its bucket; the candidate is the one before it. */
	syms = &st->syms[st->bstart[b]];
	lo = 0;
	hi = st->bcount[b];
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	k = (uint32_t)lo + 1; /* the cursor past the candidate */
	any = sym_prev(st, &b, &k);
	/*
	 * A symbol whose name turns out empty or broken counts as absent, as
	 * if it had been dropped at load: the one below it may cover vaddr.
	 */
	for (steps = 0; any && steps < ELF_SYM_BAD_NAME_WALK; steps++) {
		name = sym_name(st, st->bstart[b] + k - 1);
		if (name)
			break;
		any = sym_prev(st, &b, &k);
	}
	drop_raw(st);
	if (!name)
		return NULL;
	s = &st->syms[st->bstart[b] + k - 1];
	if (vaddr - s->addr >= (s->len_tab & ELF_SYM_LEN_MAX))
		return NULL;
	if (sym_off)
		*sym_off = vaddr - s->addr;
	return name;
}

/*
 * The entry function where no symbol names it (Debian's ld.so keeps no
 * .symtab; a stripped executable's _start is not in .dynsym): from e_entry
 * to the next symbol, ELF_ENTRY_SPAN bytes at most. Executables and shared
 * objects that have an entry point only (ELF gABI: e_entry 0 for none).
 * By addresses alone (names are read, and their absence cached, on
 * lookup), from the records: the next symbol's address, and whether the
 * symbol of any address at or below e_entry covers it (only an address
 * with a record reaching past e_entry can: its bucket is built to tell).
 */
static void set_entry(struct elf_symtab *st, const struct elf_file *f)
{
	uint64_t e = f->ehdr.e_entry, next = UINT64_MAX, end;
	const struct elf_sym_raw *r;
	const struct elf_sym *sy;
	uint32_t b, j;
	size_t i;

	st->entry = st->entry_end = 0;
	if ((f->ehdr.e_type != ET_EXEC && f->ehdr.e_type != ET_DYN) || !e)
		return;
	for (i = 0; i < st->nr_raw; i++)
		if (st->raw[i].addr > e && st->raw[i].addr < next)
			next = st->raw[i].addr;
	/* bucket by bucket: building one reorders its own records only */
	for (b = 0; b < st->nr_buckets; b++) {
		for (i = st->bstart[b]; i < st->bstart[b + 1]; i++) {
			r = &st->raw[i];
			if (r->addr <= e && r->end > e)
				break;
		}
		if (i == st->bstart[b + 1])
			continue;
		build_bucket(st, b);
		for (j = 0; j < st->bcount[b]; j++) {
			sy = &st->syms[st->bstart[b] + j];
			if (sy->addr <= e && e - sy->addr < (sy->len_tab & ELF_SYM_LEN_MAX))
				return; /* a symbol covers it */
		}
	}
	end = e + ELF_ENTRY_SPAN;
	st->entry = e;
	st->entry_end = next < end ? next : end;
}

const char *elf_symtab__lookup_offset(const struct elf_symtab *st, uint64_t off, uint64_t *sym_off)
{
	const char *name;
	uint64_t vaddr;

	if (elf_symtab__offset_to_vaddr(st, off, &vaddr))
		return NULL;
	/* Go's own table first: what its tracebacks say, also where .symtab is gone */
	if (st->go) {
		struct go_func_info fi;

		if (!go_pclntab__lookup(st->go, vaddr, &fi)) {
			if (sym_off)
				*sym_off = vaddr - fi.entry;
			return fi.name;
		}
	}
	name = lookup_sym(st, vaddr, sym_off);
	if (!name && vaddr >= st->entry && vaddr < st->entry_end) {
		if (sym_off)
			*sym_off = vaddr - st->entry;
		return "_start";
	}
	return name;
}

int elf_symtab__lookup_line(const struct elf_symtab *st, uint64_t off, const char **file,
			    uint32_t *line)
{
	struct go_func_info fi;
	uint64_t vaddr;

	if (!st->go || elf_symtab__offset_to_vaddr(st, off, &vaddr) ||
	    go_pclntab__lookup(st->go, vaddr, &fi) || !fi.file || !fi.line)
		return -ENOENT;
	*file = fi.file;
	*line = fi.line;
	return 0;
}

size_t elf_symtab__build_id(const struct elf_symtab *st, uint8_t id[ELF_BUILD_ID_MAX])
{
	memcpy(id, st->build_id, st->build_id_len);
	return st->build_id_len;
}

void elf_symtab__settle(struct elf_symtab *st)
{
	for (uint32_t b = 0; st->nr_unbuilt && b < st->nr_buckets; b++)
		build_bucket(st, b);
	drop_raw(st);
}

size_t elf_symtab__count(const struct elf_symtab *cst)
{
	/* every bucket built (not part of the table's value: the count stays const) */
	struct elf_symtab *st = (struct elf_symtab *)cst;

	elf_symtab__settle(st);
	return st->nr_syms;
}

const char *elf_symtab__debug_path(const struct elf_symtab *st)
{
	return st->debug_path;
}

enum elf_names_src elf_symtab__names_src(const struct elf_symtab *st)
{
	return st->names_src;
}

bool elf_build_id_libelf_only;

/* PT_NOTE bytes read_build_id_fast reads at most; a larger segment goes to libelf */
#define FAST_NOTES_MAX 4096

/* gelf_getnote's walk (elfutils libelf/gelf_getnote.c) over raw little-endian notes */
static size_t raw_notes_build_id(const uint8_t *d, size_t size, bool align8,
				 uint8_t id[ELF_BUILD_ID_MAX])
{
	size_t off = 0, a = align8 ? 8 : 4;
	uint32_t nh[3]; /* namesz, descsz, type */

	while (off < size && size - off >= sizeof(nh)) {
		size_t name_off, desc_off, descsz;

		memcpy(nh, d + off, sizeof(nh));
		name_off = off + sizeof(nh);
		if (nh[0] > size || name_off > size - nh[0])
			return 0;
		desc_off = (name_off + nh[0] + a - 1) & ~(a - 1);
		descsz = ((size_t)nh[1] + a - 1) & ~(a - 1);
		if (desc_off > size || size - desc_off < descsz || (!descsz && nh[1]))
			return 0;
		if (nh[2] == NT_GNU_BUILD_ID && nh[0] == 4 && !memcmp(d + name_off, "GNU", 4) &&
		    nh[1] > 0 && nh[1] <= ELF_BUILD_ID_MAX) {
			memcpy(id, d + desc_off, nh[1]);
			return nh[1];
		}
		off = desc_off + descsz;
	}
	return 0;
}

/*
 * The build-id by pread of the ELF header, the program headers and a
 * PT_NOTE segment: a few system calls where libelf's elf_begin, with the
 * file's open and its header checks, cost 35-45 us a file (and 180 the
 * first) on this VM (docs/BENCHMARKS.md, "benchmark 2's own CPU, fifth
 * pass"). Only for a file libelf would open without complaint and whose
 * build-id is in a PT_NOTE (the answer read_build_id gives first): a
 * regular 64-bit little-endian ELF file whose header tables lie in it,
 * counts without extended numbering. Returns the length, or 0: not such a
 * file, or no build-id found this way (libelf's read then decides).
 */
static size_t read_build_id_fast(int fd, uint8_t id[ELF_BUILD_ID_MAX])
{
	uint8_t notes[FAST_NOTES_MAX];
	Elf64_Phdr ph[64];
	Elf64_Ehdr eh;
	struct stat sb;
	size_t len;

	if (elf_build_id_libelf_only || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__)
		return 0;
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode) ||
	    pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh))
		return 0;
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_ident[EI_VERSION] != EV_CURRENT ||
	    eh.e_ehsize < sizeof(eh) || eh.e_phentsize != sizeof(Elf64_Phdr) || !eh.e_phnum ||
	    eh.e_phnum > sizeof(ph) / sizeof(ph[0]) || !eh.e_shnum || eh.e_shnum >= SHN_LORESERVE ||
	    eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shstrndx == SHN_XINDEX)
		return 0;
	/* both tables in the file: libelf would clamp neither count (elf_file__open_fd's checks) */
	if (eh.e_phoff > (uint64_t)sb.st_size ||
	    (uint64_t)sb.st_size - eh.e_phoff < (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr) ||
	    eh.e_shoff > (uint64_t)sb.st_size ||
	    (uint64_t)sb.st_size - eh.e_shoff < (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr))
		return 0;
	len = (size_t)eh.e_phnum * sizeof(Elf64_Phdr);
	if (pread(fd, ph, len, (off_t)eh.e_phoff) != (ssize_t)len)
		return 0;
	for (size_t i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type != PT_NOTE)
			continue;
		/* elf_getdata_rawchunk's range check: a segment past the end gives nothing */
		if (ph[i].p_offset > (uint64_t)sb.st_size ||
		    (uint64_t)sb.st_size - ph[i].p_offset < ph[i].p_filesz)
			continue;
		if (ph[i].p_filesz > sizeof(notes))
			return 0;
		len = (size_t)ph[i].p_filesz;
		if (pread(fd, notes, len, (off_t)ph[i].p_offset) != (ssize_t)len)
			return 0;
		len = raw_notes_build_id(notes, len, ph[i].p_align == 8, id);
		if (len)
			return len;
	}
	return 0;
}

int elf__read_build_id_fd(int fd, uint8_t id[ELF_BUILD_ID_MAX])
{
	char self[64];
	size_t len = read_build_id_fast(fd, id);

	if (len)
		return (int)len;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	return elf__read_build_id(self, id);
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

int elf__open_debug_file(const char *path, const char *section, const struct elf_load_opts *o,
			 char **found)
{
	const char *root = o && o->debug_root ? o->debug_root : "";
	struct elf_file f, dbg = { .fd = -1 };
	uint8_t id[ELF_BUILD_ID_MAX];
	struct debug_want w = { id, 0, section };
	int fd = -ENOENT, err;

	*found = NULL;
	err = elf_file__open(&f, path);
	if (err)
		return err;
	w.build_id_len = read_build_id(&f, id);
	if (o && o->debug_file) {
		if (try_debug_file(&w, o->debug_file, &dbg, true))
			*found = strdup(o->debug_file);
	} else {
		find_debug_file(&w, &f, o && o->file_path ? o->file_path : path, root,
				o && o->host_debug, &dbg, found);
	}
	if (*found) {
		fd = dbg.fd;
		dbg.fd = -1; /* the caller's now */
	} else if (dbg.elf) {
		fd = -ENOMEM; /* found, but strdup failed */
	}
	elf_file__close(&dbg);
	elf_file__close(&f);
	return fd;
}

int elf__dynsym_values(int fd, const char *path, const char *const *names, size_t n,
		       uint64_t *values, uint64_t off, int64_t *load_delta)
{
	struct elf_file f;
	Elf_Scn *scn;
	GElf_Shdr sh;
	Elf_Data *d;
	size_t nsyms, phnum, found = 0;
	int dup_fd, err;

	memset(values, 0, n * sizeof(*values));
	dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (dup_fd < 0)
		return -errno;
	err = elf_file__open_fd(&f, dup_fd, path);
	if (err)
		return err;
	err = -ENOENT;
	if (elf_getphdrnum(f.elf, &phnum))
		goto out;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(f.elf, (int)i, &ph) && ph.p_type == PT_LOAD && off >= ph.p_offset &&
		    off - ph.p_offset < ph.p_filesz) {
			*load_delta = (int64_t)(ph.p_vaddr - ph.p_offset);
			err = 0;
			break;
		}
	}
	if (err)
		goto out;
	scn = find_scn_by_type(&f, SHT_DYNSYM);
	d = scn ? scn_data(&f, scn, &sh) : NULL;
	if (!d || !sh.sh_entsize) {
		err = -ENOENT;
		goto out;
	}
	nsyms = sh.sh_size / sh.sh_entsize;
	for (size_t i = 0; i < nsyms && found < n; i++) {
		GElf_Sym sym;
		const char *name;

		if (!gelf_getsym(d, (int)i, &sym) || !sym.st_value || sym.st_shndx == SHN_UNDEF)
			continue;
		/* elf_strptr checks the index and the terminating NUL */
		name = elf_strptr(f.elf, sh.sh_link, sym.st_name);
		if (!name)
			continue;
		for (size_t k = 0; k < n; k++) {
			if (!values[k] && !strcmp(name, names[k])) {
				values[k] = sym.st_value;
				found++;
				break;
			}
		}
	}
out:
	elf_file__close(&f);
	return err;
}

// SPDX-License-Identifier: MIT
/*
 * The running kernel into the model (include/kernel_image.h): text bounds
 * from kallsyms, modules from /proc/modules named by modules.dep, the
 * build-id from /sys/kernel/notes. Each file is read once; the text lines
 * are lexed with lib_cursor.h's hex lexer, the notes through a cursor.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "kernel_image.h"
#include "lib_cursor.h"
#include "lib_hashmap.h"
#include "log.h"

#define NT_GNU_BUILD_ID 3
#define NOTES_MAX 8192 /* /sys/kernel/notes is a few hundred bytes */
#define MODULE_NAME_MAX 64 /* MODULE_NAME_LEN in <linux/module.h>, with the NUL */

static const char *skip_blanks(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* The hex number at *s after blanks and an optional "0x", *s past it; false when none. */
static bool hex_field(const char **s, uint64_t *v)
{
	const char *p = skip_blanks(*s);

	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	if (lex__hex(&p, p + strlen(p), v) <= 0)
		return false;
	*s = p;
	return true;
}

/* The next blank-separated word at *s: its start and length, *s past it; 0 when none. */
static size_t word(const char **s, const char **w)
{
	const char *p = skip_blanks(*s);
	size_t n = strcspn(p, " \t\n");

	*w = p;
	*s = p + n;
	return n;
}

static bool word_is(const char *w, size_t n, const char *s)
{
	return n == strlen(s) && !memcmp(w, s, n);
}

/*
 * _text and _etext from kallsyms ("addr type name[\t[module]]"), module
 * symbols skipped; a missing _etext becomes the highest kernel address
 * (text + 1 when there is none above _text). Leaves both 0 without _text.
 */
static void read_text(const char *path, uint64_t *text, uint64_t *etext)
{
	uint64_t t = 0, e = 0, last = 0;
	char *line = NULL;
	size_t cap = 0;
	FILE *f = fopen(path, "re");

	*text = *etext = 0;
	if (!f) {
		pr_debug("kernel image: cannot open '%s': %s; no kernel map\n", path,
			 strerror(errno));
		return;
	}
	while (getline(&line, &cap, f) > 0) {
		const char *s = line, *w;
		uint64_t addr;
		size_t n;

		if (!hex_field(&s, &addr) || !word(&s, &w) || !(n = word(&s, &w)))
			continue;
		if (strchr(line, '[')) /* module symbols: "addr t name [module]" */
			continue;
		if (word_is(w, n, "_text"))
			t = addr;
		else if (word_is(w, n, "_etext"))
			e = addr;
		if (addr > last)
			last = addr;
	}
	free(line);
	fclose(f);
	if (!t) {
		pr_debug("kernel image: no _text in '%s'; no kernel map\n", path);
		return;
	}
	if (e <= t)
		e = last > t ? last : t + 1;
	*text = t;
	*etext = e;
}

/* A module name as perf compares it: '-' and '_' are the same character. */
static void normalize(char *dst, const char *src, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		dst[i] = src[i] == '-' ? '_' : src[i];
	dst[n] = '\0';
}

struct module_line {
	char name[MODULE_NAME_MAX]; /* as /proc/modules gives it */
	uint64_t start, size;
	char *path; /* from modules.dep (malloc'ed), NULL: "[name]" */
};

/*
 * Name each module by the first modules.dep entry whose file is NAME.ko
 * (then any compression suffix): absolute as written, else under dir.
 */
static int name_modules(struct module_line *mods, size_t nr, const char *dir)
{
	struct strset names; /* normalized names, each once */
	char dep[PATH_MAX], key[MODULE_NAME_MAX], *line = NULL, **found;
	size_t cap = 0, i;
	FILE *f = NULL;
	int err = strset__init(&names, true);

	found = calloc(nr, sizeof(*found)); /* by index in names: the entry's path */
	if (!found)
		err = -ENOMEM;
	for (i = 0; i < nr && !err; i++) {
		normalize(key, mods[i].name, strlen(mods[i].name));
		if (strset__add(&names, key) < 0)
			err = -ENOMEM;
	}
	snprintf(dep, sizeof(dep), "%s/modules.dep", dir);
	if (!err && !(f = fopen(dep, "re")))
		pr_debug("kernel image: cannot open '%s': %s; modules named [name]\n", dep,
			 strerror(errno));
	while (f && !err && getline(&line, &cap, f) > 0) {
		char *colon = strchr(line, ':');
		const char *base, *ko;
		int64_t idx;

		if (!colon)
			continue;
		*colon = '\0';
		base = strrchr(line, '/');
		base = base ? base + 1 : line;
		ko = strstr(base, ".ko");
		if (!ko || (size_t)(ko - base) >= sizeof(key))
			continue;
		normalize(key, base, (size_t)(ko - base));
		idx = strset__find(&names, key);
		if (idx < 0 || found[idx])
			continue;
		if (line[0] == '/')
			found[idx] = strdup(line);
		else if (asprintf(&found[idx], "%s/%s", dir, line) < 0)
			found[idx] = NULL;
		if (!found[idx])
			err = -ENOMEM;
	}
	free(line);
	if (f)
		fclose(f);
	for (i = 0; i < nr && !err; i++) {
		int64_t idx;

		normalize(key, mods[i].name, strlen(mods[i].name));
		idx = strset__find(&names, key);
		if (idx >= 0 && found[idx] && !(mods[i].path = strdup(found[idx])))
			err = -ENOMEM;
	}
	for (i = 0; found && i < names.nr; i++)
		free(found[i]);
	free(found);
	strset__free(&names);
	return err;
}

/*
 * /proc/modules: "name size refs deps state 0xaddr ..."; a module at address
 * 0 (hidden) is left out. dir: modules.dep's folder, NULL to name them all
 * "[name]".
 */
static int read_modules(struct profile *p, const char *path, const char *dir)
{
	struct module_line *mods = NULL;
	size_t nr = 0, cap = 0, lcap = 0, i;
	char *line = NULL;
	int err = 0;
	FILE *f = fopen(path, "re");

	if (!f) {
		pr_debug("kernel image: cannot open '%s': %s; no module maps\n", path,
			 strerror(errno));
		return 0;
	}
	while (!err && getline(&line, &lcap, f) > 0) {
		const char *s = line, *name, *w;
		uint64_t size, addr;
		size_t n = word(&s, &name);
		int k;

		if (!n || n >= MODULE_NAME_MAX)
			continue;
		size = strtoull(s, NULL, 10);
		if (!word(&s, &w) || w[0] < '0' || w[0] > '9')
			continue;
		for (k = 0; k < 3 && word(&s, &w); k++) /* refs, deps, state */
			;
		if (k < 3 || !hex_field(&s, &addr) || !addr)
			continue;
		if (nr == cap) {
			struct module_line *m = reallocarray(mods, cap ? cap * 2 : 64, sizeof(*m));

			if (!m) {
				err = -ENOMEM;
				break;
			}
			mods = m;
			cap = cap ? cap * 2 : 64;
		}
		memcpy(mods[nr].name, name, n);
		mods[nr].name[n] = '\0';
		mods[nr].start = addr;
		mods[nr].size = size;
		mods[nr].path = NULL;
		nr++;
	}
	free(line);
	fclose(f);
	if (!err && nr && dir)
		err = name_modules(mods, nr, dir);
	for (i = 0; i < nr; i++) {
		char bracketed[MODULE_NAME_MAX + 2];

		if (!err && !mods[i].path)
			snprintf(bracketed, sizeof(bracketed), "[%s]", mods[i].name);
		if (!err)
			err = profile__add_module(p, mods[i].path ? mods[i].path : bracketed,
						  mods[i].start, mods[i].size);
		free(mods[i].path);
	}
	free(mods);
	return err;
}

int kernel_image__notes_build_id(const char *path, uint8_t id[PROFILE_BUILD_ID_MAX])
{
	uint8_t notes[NOTES_MAX];
	struct cursor c;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, notes, sizeof(notes));
	close(fd);
	if (n < 0)
		return -errno;
	c = (struct cursor){ .p = notes, .end = notes + n };
	/* Elf_Nhdr { u32 namesz, descsz, type }, name and desc each padded to 4 bytes */
	for (;;) {
		uint32_t namesz, descsz, type;
		const uint8_t *name, *desc;
		size_t name_pad, desc_pad;

		if (!cursor__u32(&c, &namesz) || !cursor__u32(&c, &descsz) ||
		    !cursor__u32(&c, &type))
			break;
		name_pad = ((size_t)namesz + 3) & ~(size_t)3;
		desc_pad = ((size_t)descsz + 3) & ~(size_t)3;
		if (namesz > cursor__left(&c))
			break;
		name = c.p;
		if (name_pad > cursor__left(&c))
			break;
		c.p += name_pad;
		if (descsz > cursor__left(&c))
			break;
		desc = c.p;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(name, "GNU", 4) &&
		    descsz >= 1 && descsz <= PROFILE_BUILD_ID_MAX) {
			memcpy(id, desc, descsz);
			return (int)descsz;
		}
		if (desc_pad > cursor__left(&c))
			break;
		c.p += desc_pad;
	}
	return -ENOENT;
}

int kernel_image__read(struct profile *p, uint64_t text, uint64_t etext,
		       const struct kernel_image_paths *paths)
{
	static const struct kernel_image_paths host = { 0 };
	struct profile_kernel *k = &p->kernel;
	char dir[PATH_MAX];
	const char *notes;
	struct utsname u;
	int n, err;

	if (!paths)
		paths = &host;
	k->nr_modules = 0;
	k->build_id_len = 0;
	if (text && etext > text) {
		k->text = text;
		k->etext = etext;
	} else {
		read_text(paths->kallsyms ? paths->kallsyms : "/proc/kallsyms", &k->text,
			  &k->etext);
	}

	if (paths->modules_dir)
		snprintf(dir, sizeof(dir), "%s", paths->modules_dir);
	else if (!uname(&u))
		snprintf(dir, sizeof(dir), "/lib/modules/%s", u.release);
	else
		dir[0] = '\0';
	err = read_modules(p, paths->modules ? paths->modules : "/proc/modules",
			   dir[0] ? dir : NULL);
	if (err)
		return err;

	notes = paths->notes ? paths->notes : "/sys/kernel/notes";
	n = kernel_image__notes_build_id(notes, k->build_id);
	if (n > 0)
		k->build_id_len = (uint8_t)n;
	else
		pr_debug("kernel image: no build-id in '%s': %s\n", notes, strerror(-n));
	return 0;
}

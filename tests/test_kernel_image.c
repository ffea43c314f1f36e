// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/symbolize/kernel_image.c (include/kernel_image.h):
 * the kernel's text bounds, modules and build-id read into the model from
 * fake kallsyms, modules, modules.dep and notes files in a temporary folder,
 * their bytes written here as the kernel formats them.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "kernel_image.h"
#include "profile.h"

#define TEXT 0xffffffff81000000ULL
#define ETEXT 0xffffffff8220bb08ULL

static const uint8_t kernel_id[20] = { 0x4a, 0x5a, 0x9b, 0x0a, 0xff, 0xb6, 0x6c, 0x43, 0x7a, 0xbc,
				       0xd4, 0x55, 0xd2, 0x73, 0x8a, 0xf8, 0x79, 0x98, 0x5f, 0xa9 };

/* An Elf_Nhdr note before the build-id one, which the reader must step over, then the GNU one */
static const uint8_t notes_head[] = {
	6,   0,	  0,   0,   4,	 0, 0, 0, 1, 1, 0, 0, /* namesz 6, descsz 4, type 0x101 */
	'L', 'i', 'n', 'u', 'x', 0, 0, 0, /* name, padded to 8 */
	0,   0,	  0,   0, /* desc */
	4,   0,	  0,   0,   20,	 0, 0, 0, 3, 0, 0, 0, /* namesz 4, descsz 20, NT_GNU_BUILD_ID */
	'G', 'N', 'U', 0,
};

static const char kallsyms[] = "ffffffff81000000 T _stext\n"
			       "ffffffff81000000 T _text\n"
			       "ffffffff81001000 T do_syscall_64\n"
			       "ffffffff8220bb08 T _etext\n"
			       "ffffffff83000000 D _end\n"
			       "ffffffffc0200000 t fake_fn\t[fake_mod]\n"
			       "ffffffffc9000000 t far_fn\t[fake_mod]\n";

/* kptr_restrict: every address 0 */
static const char kallsyms_hidden[] = "0000000000000000 T _text\n"
				      "0000000000000000 T _etext\n";

/* no _etext: the highest kernel (not module) address ends the text */
static const char kallsyms_no_etext[] = "ffffffff81000000 T _text\n"
					"ffffffff81001000 T do_syscall_64\n"
					"ffffffff82000000 D last_thing\n"
					"ffffffffc0200000 t fake_fn\t[fake_mod]\n";

/* /proc/modules: name size refs deps state addr [taint]; a hidden one (address 0) */
static const char modules[] = "nf_tables 348160 0 - Live 0xffffffffc0a00000\n"
			      "bpfprof_fake_mod 16384 1 nf_tables, Live 0xffffffffc0200000 (OE)\n"
			      "hidden_mod 4096 0 - Live 0x0000000000000000\n"
			      "dm-crypt 65536 0 - Live 0xffffffffc0300000\n"
			      "not_in_dep 8192 0 - Loading 0xffffffffc0400000\n";

/* modules.dep: relative and absolute paths, compressed files, '-' for '_', a repeat */
static const char modules_dep[] =
	"kernel/net/netfilter/nf_tables.ko.zst:\n"
	"/opt/mods/bpfprof-fake-mod.ko: kernel/net/netfilter/nf_tables.ko.zst\n"
	"kernel/drivers/md/dm_crypt.ko.xz:\n"
	"extra/bpfprof_fake_mod.ko:\n"
	"kernel/drivers/md/hidden_mod.ko:\n";

struct fixture {
	char dir[64];
	char kallsyms[96], modules[96], dep[96], notes[96];
	struct kernel_image_paths paths;
	struct profile *p;
};

static void write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	uint8_t notes[sizeof(notes_head) + 20];

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_kernel_image.XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->kallsyms, sizeof(f->kallsyms), "%s/kallsyms", f->dir);
	snprintf(f->modules, sizeof(f->modules), "%s/modules", f->dir);
	snprintf(f->dep, sizeof(f->dep), "%s/modules.dep", f->dir);
	snprintf(f->notes, sizeof(f->notes), "%s/notes", f->dir);
	write_file(f->kallsyms, kallsyms, strlen(kallsyms));
	write_file(f->modules, modules, strlen(modules));
	write_file(f->dep, modules_dep, strlen(modules_dep));
	memcpy(notes, notes_head, sizeof(notes_head));
	memcpy(notes + sizeof(notes_head), kernel_id, 20);
	write_file(f->notes, notes, sizeof(notes));
	f->paths = (struct kernel_image_paths){ .kallsyms = f->kallsyms,
						.modules = f->modules,
						.modules_dir = f->dir,
						.notes = f->notes };
	f->p = profile__new();
	if (!f->p)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	unlink(f->kallsyms);
	unlink(f->modules);
	unlink(f->dep);
	unlink(f->notes);
	rmdir(f->dir);
	profile__free(f->p);
	free(f);
	return 0;
}

static void check_module(const struct profile *p, size_t i, const char *path, uint64_t start,
			 uint64_t size)
{
	assert_true(i < p->kernel.nr_modules);
	assert_string_equal(p->kernel.modules[i].path, path);
	assert_int_equal(p->kernel.modules[i].start, start);
	assert_int_equal(p->kernel.modules[i].size, size);
}

/* Everything from the files: text, the modules in /proc/modules order, the build-id. */
static void test_read(void **state)
{
	struct fixture *f = *state;
	const struct profile_kernel *k = &f->p->kernel;
	char want[160];

	assert_int_equal(kernel_image__read(f->p, 0, 0, &f->paths), 0);
	assert_int_equal(k->text, TEXT);
	assert_int_equal(k->etext, ETEXT);
	assert_int_equal(k->nr_modules, 4); /* hidden_mod (address 0) left out */
	snprintf(want, sizeof(want), "%s/kernel/net/netfilter/nf_tables.ko.zst", f->dir);
	check_module(f->p, 0, want, 0xffffffffc0a00000ULL, 348160);
	/* the first matching line wins, '-' matching '_' */
	check_module(f->p, 1, "/opt/mods/bpfprof-fake-mod.ko", 0xffffffffc0200000ULL, 16384);
	snprintf(want, sizeof(want), "%s/kernel/drivers/md/dm_crypt.ko.xz", f->dir);
	check_module(f->p, 2, want, 0xffffffffc0300000ULL, 65536);
	/* not in modules.dep: perf's "[name]" */
	check_module(f->p, 3, "[not_in_dep]", 0xffffffffc0400000ULL, 8192);
	assert_int_equal(k->build_id_len, 20);
	assert_memory_equal(k->build_id, kernel_id, 20);

	/* a second read replaces the first */
	assert_int_equal(kernel_image__read(f->p, 0, 0, &f->paths), 0);
	assert_int_equal(k->nr_modules, 4);
}

/* The caller's text bounds (the symbolizer's kallsyms) win; kallsyms is not read then. */
static void test_given_text(void **state)
{
	struct fixture *f = *state;

	unlink(f->kallsyms);
	assert_int_equal(kernel_image__read(f->p, TEXT + 0x1000, ETEXT + 0x1000, &f->paths), 0);
	assert_int_equal(f->p->kernel.text, TEXT + 0x1000);
	assert_int_equal(f->p->kernel.etext, ETEXT + 0x1000);
	/* bounds that are no range: read from the file, here gone, so unknown */
	assert_int_equal(kernel_image__read(f->p, TEXT, TEXT, &f->paths), 0);
	assert_int_equal(f->p->kernel.text, 0);
	assert_int_equal(f->p->kernel.etext, 0);
	assert_int_equal(f->p->kernel.nr_modules, 4);
}

static void test_text_fallbacks(void **state)
{
	struct fixture *f = *state;

	write_file(f->kallsyms, kallsyms_hidden, strlen(kallsyms_hidden));
	assert_int_equal(kernel_image__read(f->p, 0, 0, &f->paths), 0);
	assert_int_equal(f->p->kernel.text, 0);
	assert_int_equal(f->p->kernel.etext, 0);

	write_file(f->kallsyms, kallsyms_no_etext, strlen(kallsyms_no_etext));
	assert_int_equal(kernel_image__read(f->p, 0, 0, &f->paths), 0);
	assert_int_equal(f->p->kernel.text, TEXT);
	assert_int_equal(f->p->kernel.etext, 0xffffffff82000000ULL); /* not the module's address */

	write_file(f->kallsyms, "ffffffff81000000 T _text\n", 25);
	assert_int_equal(kernel_image__read(f->p, 0, 0, &f->paths), 0);
	assert_int_equal(f->p->kernel.text, TEXT);
	assert_int_equal(f->p->kernel.etext, TEXT + 1);
}

/* Missing files leave their part unknown; nothing fails. */
static void test_missing_files(void **state)
{
	struct fixture *f = *state;
	const struct profile_kernel *k = &f->p->kernel;

	unlink(f->dep);
	assert_int_equal(kernel_image__read(f->p, 0, 0, &f->paths), 0);
	assert_int_equal(k->nr_modules, 4);
	check_module(f->p, 0, "[nf_tables]", 0xffffffffc0a00000ULL, 348160);
	check_module(f->p, 2, "[dm-crypt]", 0xffffffffc0300000ULL, 65536);

	unlink(f->modules);
	unlink(f->notes);
	unlink(f->kallsyms);
	assert_int_equal(kernel_image__read(f->p, 0, 0, &f->paths), 0);
	assert_int_equal(k->text, 0);
	assert_int_equal(k->nr_modules, 0);
	assert_int_equal(k->build_id_len, 0);
}

/* The notes reader: truncated and malformed notes, a note without a build-id. */
static void test_notes(void **state)
{
	struct fixture *f = *state;
	uint8_t notes[sizeof(notes_head) + 20], id[20];
	size_t n;

	memcpy(notes, notes_head, sizeof(notes_head));
	memcpy(notes + sizeof(notes_head), kernel_id, 20);
	/* every truncation: no build-id, no read past the end */
	for (n = 0; n < sizeof(notes); n++) {
		write_file(f->notes, notes, n);
		assert_int_equal(kernel_image__notes_build_id(f->notes, id), -ENOENT);
	}
	write_file(f->notes, notes, sizeof(notes));
	assert_int_equal(kernel_image__notes_build_id(f->notes, id), 20);
	assert_memory_equal(id, kernel_id, 20);
	/* a name size past the end */
	notes[0] = 0xff;
	write_file(f->notes, notes, sizeof(notes));
	assert_int_equal(kernel_image__notes_build_id(f->notes, id), -ENOENT);
	/* a GNU note of another type */
	notes[0] = 6;
	notes[sizeof(notes_head) - 8] = 1;
	write_file(f->notes, notes, sizeof(notes));
	assert_int_equal(kernel_image__notes_build_id(f->notes, id), -ENOENT);
	unlink(f->notes);
	assert_int_equal(kernel_image__notes_build_id(f->notes, id), -ENOENT);
}

/* The running system's files, when readable: a result consistent with itself. */
static void test_host(void **state)
{
	struct fixture *f = *state;
	const struct profile_kernel *k = &f->p->kernel;
	size_t i;

	assert_int_equal(kernel_image__read(f->p, 0, 0, NULL), 0);
	assert_true(!k->text || k->etext > k->text);
	for (i = 0; i < k->nr_modules; i++)
		assert_true(k->modules[i].path[0] == '/' || k->modules[i].path[0] == '[');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_given_text, setup, teardown),
		cmocka_unit_test_setup_teardown(test_text_fallbacks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_notes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_host, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

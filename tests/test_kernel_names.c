// SPDX-License-Identifier: MIT
/*
 * kernel_names__parse: the kernel's "%pS" strings (kernel/kallsyms.c
 * __sprint_symbol) read back into a symbol's start, name and module, as
 * /proc/kallsyms would give them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "kernel_names.h"

#define TEXT 0xffffffff81000000ULL
#define END 0xffffffff83000000ULL

static void core_symbol(void **state)
{
	char s[] = "do_sys_openat2+0x1a/0x80";
	struct kernel_sym sym;

	assert_true(kernel_names__parse(s, 0xffffffff81234560ULL, TEXT, END, &sym));
	assert_int_equal(sym.start, 0xffffffff81234560ULL - 0x1a);
	assert_string_equal(sym.name, "do_sys_openat2");
	assert_null(sym.module);
}

static void module_symbol(void **state)
{
	char s[] = "nvme_irq+0x10/0x200 [nvme]";
	struct kernel_sym sym;

	assert_true(kernel_names__parse(s, 0xffffffffc0001010ULL, TEXT, END, &sym));
	assert_int_equal(sym.start, 0xffffffffc0001000ULL);
	assert_string_equal(sym.name, "nvme_irq");
	assert_string_equal(sym.module, "nvme");
}

/* %pS gives JITed BPF code no module; /proc/kallsyms lists it under [bpf] */
static void bpf_program(void **state)
{
	char s[] = "bpf_prog_6deef7357e7b4530_on_sample+0x5/0x100";
	char core[] = "bpf_prog_put+0x5/0x20";
	struct kernel_sym sym;

	assert_true(kernel_names__parse(s, 0xffffffffa0000105ULL, TEXT, END, &sym));
	assert_string_equal(sym.name, "bpf_prog_6deef7357e7b4530_on_sample");
	assert_string_equal(sym.module, "bpf");
	/* the core kernel's own bpf_* functions stay [kernel.kallsyms] */
	assert_true(kernel_names__parse(core, 0xffffffff81300005ULL, TEXT, END, &sym));
	assert_null(sym.module);
	/* nor those of init text, past _etext but inside the image */
	strcpy(core, "bpf_mt_init+0x3/0x9");
	assert_true(kernel_names__parse(core, 0xffffffff82800003ULL, TEXT, END, &sym));
	assert_null(sym.module);
}

/* a name with '+' in it: the offset is after the last one */
static void plus_in_name(void **state)
{
	char s[] = "a+b+0x8/0x10";
	struct kernel_sym sym;

	assert_true(kernel_names__parse(s, 0xffffffff81000108ULL, TEXT, END, &sym));
	assert_string_equal(sym.name, "a+b");
	assert_int_equal(sym.start, 0xffffffff81000100ULL);
}

static void no_symbol(void **state)
{
	char raw[] = "0xffffffffc0001234";
	char unclosed[] = "f+0x1/0x2 [mod";
	char past[] = "f+0x20/0x40";
	char garbage[] = "f+0xzz/0x2";
	struct kernel_sym sym;

	assert_false(kernel_names__parse(raw, 0xffffffffc0001234ULL, TEXT, END, &sym));
	assert_false(kernel_names__parse(unclosed, 0xffffffff81000001ULL, TEXT, END, &sym));
	/* an offset past the address itself */
	assert_false(kernel_names__parse(past, 0x10, TEXT, END, &sym));
	assert_false(kernel_names__parse(garbage, 0xffffffff81000001ULL, TEXT, END, &sym));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(core_symbol), cmocka_unit_test(module_symbol),
		cmocka_unit_test(bpf_program), cmocka_unit_test(plus_in_name),
		cmocka_unit_test(no_symbol),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

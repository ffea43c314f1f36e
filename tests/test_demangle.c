// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/symbolize/demangle.c: C++ (Itanium), Rust legacy
 * (hash dropped) and v0 names demangled as c++filt shows them; names the
 * demangler does not know (C, Go, broken manglings, too long) left to the
 * caller; a long result cut at the buffer's size with the mark; hostile
 * nesting neither crashes nor overflows; the symbolizer's pass over a
 * profile (user/symbolize/symbolize.c: symbolizer__demangle_names).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "demangle.h"
#include "profile_fixture.h"
#include "symbolize.h"

static void expect(const char *sym, const char *want)
{
	char out[DEMANGLE_MAX];
	size_t n = demangle(sym, out, sizeof(out));

	assert_int_equal(n, strlen(want));
	assert_string_equal(out, want);
}

static void test_cxx(void **state)
{
	expect("_ZNSt6vectorIiSaIiEE9push_backERKi",
	       "std::vector<int, std::allocator<int> >::push_back(int const&)");
	expect("_ZN2ns5Shape4areaEv", "ns::Shape::area()");
	expect("_ZN2nsplERKNS_3VecES2_", "ns::operator+(ns::Vec const&, ns::Vec const&)");
	expect("_ZZ4mainENKUliE_clEi", "main::{lambda(int)#1}::operator()(int) const");
	/* gcc's clones keep their suffix, as c++filt shows it */
	expect("_Z4workv.cold", "work() [clone .cold]");
}

static void test_rust(void **state)
{
	expect("_ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write");
	expect("_RNvNtCs1234_7mycrate3foo3bar", "mycrate::foo::bar");
	expect("_RNvMNtCs6xxl1lAjzDf_1a1mNtB2_1S4spin", "<a::m::S>::spin");
}

static void test_not_mangled(void **state)
{
	static const char *const plain[] = {
		"main",
		"runtime.goexit",
		"main.(*T).Run",
		"_start",
		"__libc_start_main",
		"_Z",
		"_Zxyz",
		"_R",
		"_RNv",
		"",
		"_ZN4core3fmt5write17h0123456789abcdef",
	};
	char out[DEMANGLE_MAX];
	size_t i;

	for (i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
		memset(out, 'x', sizeof(out));
		assert_int_equal(demangle(plain[i], out, sizeof(out)), 0);
	}
	assert_int_equal(demangle(NULL, out, sizeof(out)), 0);
	/* a buffer with no room for the mark is refused */
	assert_int_equal(demangle("_ZN2ns5Shape4areaEv", out, 4), 0);
}

/* "_Z1fI" + n times "i" + "Evv": "void f<int, int, ..., int>()", 5 n + 9 bytes */
static char *nested(size_t n)
{
	char *s = malloc(n + 9);

	memcpy(s, "_Z1fI", 5);
	memset(s + 5, 'i', n);
	strcpy(s + 5 + n, "Evv");
	return s;
}

static void test_cut(void **state)
{
	char *sym = nested(600), out[DEMANGLE_MAX], small[32];
	size_t n = demangle(sym, out, sizeof(out));

	assert_int_equal(n, DEMANGLE_MAX - 1);
	assert_int_equal(strlen(out), n);
	assert_string_equal(out + n - strlen(DEMANGLE_CUT_MARK), DEMANGLE_CUT_MARK);
	assert_memory_equal(out, "void f<int, int, ", 17);
	n = demangle(sym, small, sizeof(small));
	assert_int_equal(n, sizeof(small) - 1);
	assert_string_equal(small, "void f<int, int, int, int, i...");
	free(sym);
	/* one that fits exactly is not cut */
	sym = nested(2);
	assert_int_equal(demangle(sym, small, 19), 18);
	assert_string_equal(small, "void f<int, int>()");
	free(sym);
}

static void test_hostile(void **state)
{
	size_t n = DEMANGLE_MAX_INPUT + 16, i;
	char *sym = malloc(n + 1), out[DEMANGLE_MAX];

	/* too long to hand over: shown as it is */
	free(sym);
	sym = nested(DEMANGLE_MAX_INPUT);
	assert_int_equal(demangle(sym, out, sizeof(out)), 0);
	free(sym);
	/* deep nesting within the length bound: the library's recursion limit refuses it */
	sym = malloc(n + 1);
	memcpy(sym, "_Z", 2);
	for (i = 2; i < DEMANGLE_MAX_INPUT - 8; i++)
		sym[i] = "PFv"[i % 3];
	sym[i] = '\0';
	demangle(sym, out, sizeof(out)); /* any answer, no crash */
	assert_true(strlen(out) < sizeof(out));
	for (i = 2; i < DEMANGLE_MAX_INPUT - 8; i++)
		sym[i] = 'N';
	demangle(sym, out, sizeof(out));
	free(sym);
}

/*
 * The profile pass (symbolizer__demangle_names): func demangled, the symbol
 * in sys_func; plain names, Python frames and a second pass left alone
 */
static void test_profile_pass(void **state)
{
	static const char *const names[] = { "_ZN2ns5Shape4areaEv", "main", "_ZN2ns5Shape4areaEv",
					     "_RNvNtCs1234_7mycrate3foo3bar",
					     "_ZN2ns5Shape4areaEv" };
	struct profile *p = profile__new();
	const uint64_t ips[] = { 0x1000, 0x2000, 0x3000, 0x4000, 0x5000 };
	bool created;
	int proc;
	size_t i;

	assert_non_null(p);
	proc = profile__process(p, 1, &created);
	assert_true(proc >= 0);
	add_stack(p, (uint32_t)proc, ips, 0, 5, 1);
	assert_int_equal(profile__resolve_locs(p), 0);
	for (i = 0; i < 5; i++)
		name_loc(p, (uint32_t)proc, ips[i], names[i], "app", false);
	/* a Python frame whose name happens to look mangled */
	for (i = 0; i < p->nr_locs; i++)
		if (p->locs[i].addr == 0x5000)
			p->locs[i].src_func = p->locs[i].func;
	assert_int_equal(symbolizer__demangle_names(p), 0);
	assert_int_equal(symbolizer__demangle_names(p), 0); /* idempotent */
	for (i = 0; i < p->nr_locs; i++) {
		const struct profile_location *l = &p->locs[i];

		switch (l->addr) {
		case 0x1000:
		case 0x3000:
			assert_string_equal(l->func, "ns::Shape::area()");
			assert_string_equal(l->sys_func, "_ZN2ns5Shape4areaEv");
			break;
		case 0x2000:
			assert_string_equal(l->func, "main");
			assert_null(l->sys_func);
			break;
		case 0x4000:
			assert_string_equal(l->func, "mycrate::foo::bar");
			assert_string_equal(l->sys_func, "_RNvNtCs1234_7mycrate3foo3bar");
			break;
		default:
			assert_string_equal(l->func, "_ZN2ns5Shape4areaEv");
			assert_null(l->sys_func);
		}
	}
	profile__free(p);
}

/*
 * Enough distinct symbols for the pass to split its demangling over two
 * threads: every location named as one pass at a time names it, two
 * symbols of one demangled name share its interned string
 */
static void test_profile_pass_split(void **state)
{
	enum { STACKS = 12, DEPTH = 100, SYMS = 700 };
	struct profile *p = profile__new();
	uint64_t ips[DEPTH];
	char sym[64], want[64];
	const char *ctor = NULL;
	bool created;
	int proc;
	size_t i, k;

	assert_non_null(p);
	proc = profile__process(p, 1, &created);
	assert_true(proc >= 0);
	for (k = 0; k < STACKS; k++) {
		for (i = 0; i < DEPTH; i++)
			ips[i] = 0x10000 + (k * DEPTH + i) * 16;
		add_stack(p, (uint32_t)proc, ips, 0, DEPTH, 1);
	}
	assert_int_equal(profile__resolve_locs(p), 0);
	for (i = 0; i < STACKS * DEPTH; i++) {
		size_t j = i % SYMS;

		if (i == 3 || i == 4) /* a constructor's complete and base object symbols */
			snprintf(sym, sizeof(sym), "_ZN2ns1CC%zuEv", i - 2);
		else if (j % 5 == 0)
			snprintf(sym, sizeof(sym), "plain%zu", j);
		else
			snprintf(sym, sizeof(sym), "_ZN2ns%zuf%zuEv",
				 1 + (size_t)snprintf(NULL, 0, "%zu", j), j);
		name_loc(p, (uint32_t)proc, 0x10000 + i * 16, sym, "app", false);
	}
	assert_int_equal(symbolizer__demangle_names(p), 0);
	for (i = 0; i < p->nr_locs; i++) {
		const struct profile_location *l = &p->locs[i];
		size_t n = (size_t)(l->addr - 0x10000) / 16, j = n % SYMS;

		if (n == 3 || n == 4) {
			assert_string_equal(l->func, "ns::C::C()");
			snprintf(sym, sizeof(sym), "_ZN2ns1CC%zuEv", n - 2);
			assert_string_equal(l->sys_func, sym);
			if (ctor)
				assert_ptr_equal(l->func, ctor);
			ctor = l->func;
		} else if (j % 5 == 0) {
			snprintf(want, sizeof(want), "plain%zu", j);
			assert_string_equal(l->func, want);
			assert_null(l->sys_func);
		} else {
			snprintf(want, sizeof(want), "ns::f%zu()", j);
			assert_string_equal(l->func, want);
			assert_non_null(l->sys_func);
			assert_memory_equal(l->sys_func, "_ZN2ns", 6);
		}
	}
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cxx),
		cmocka_unit_test(test_rust),
		cmocka_unit_test(test_not_mangled),
		cmocka_unit_test(test_cut),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_profile_pass),
		cmocka_unit_test(test_profile_pass_split),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

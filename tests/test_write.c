// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/write/write.c, the output table: every format has a row
 * with a file name extension and a name output.c maps back to it; perf.data
 * alone has no write function (it is streamed); each row's write gives the
 * very bytes of its writer's own call on a small profile, and the .prof row
 * reports the samples written.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "profile_fixture.h"
#include "write.h"
#include "write_folded.h"
#include "write_gperf.h"
#include "write_otlp.h"
#include "write_pprof.h"
#include "write_svg.h"

static void test_rows(void **state)
{
	static const enum output_format all[] = { OUTPUT_GPERF, OUTPUT_PERFDATA, OUTPUT_SVG,
						  OUTPUT_PPROF, OUTPUT_FOLDED, OUTPUT_OTLP };
	size_t i, j;

	assert_null(writer__of(OUTPUT_NONE));
	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		const struct writer *w = writer__of(all[i]);
		bool ext = false;

		assert_non_null(w);
		assert_int_equal(output__format_from_name(w->name), all[i]);
		assert_string_equal(output__format_name(all[i]), w->name);
		assert_true((w->write == NULL) == (all[i] == OUTPUT_PERFDATA));
		for (j = 0; j < nr_writers; j++)
			if (writers[j].format == all[i] && writers[j].ext) {
				char path[32] = "x";

				ext = true;
				strcat(path, writers[j].ext);
				assert_int_equal(output__format_from_path(path), all[i]);
			}
		assert_true(ext);
	}
}

static void test_same_bytes(void **state)
{
	static const uint64_t ips[] = { 0x401010, 0x402020 };
	struct profile *p = profile__new();
	struct write_opts wo = { .title = "t" };
	struct gperf_stats gs;
	bool created;
	int proc;

	assert_non_null(p);
	p->period_ns = 10000000;
	proc = profile__process(p, 42, &created);
	assert_true(proc >= 0);
	strcpy(p->procs[proc].comm, "app");
	add_stack(p, (uint32_t)proc, ips, 0, 2, 3);
	assert_int_equal(profile__resolve_locs(p), 0);
	name_loc(p, (uint32_t)proc, ips[0], "leaf", "app", false);
	name_loc(p, (uint32_t)proc, ips[1], "root", "app", false);
	for (size_t i = 0; i < nr_writers; i++) {
		const struct writer *w = &writers[i];
		struct write_result r = { 0 };
		struct buf a = { 0 }, b = { 0 };

		if (!w->write)
			continue;
		assert_int_equal(w->write(p, &a, &wo, &r), 0);
		switch (w->format) {
		case OUTPUT_GPERF:
			assert_int_equal(write_gperf(p, &b, &gs), 0);
			assert_int_equal(r.samples, gs.samples_written);
			assert_int_equal(r.samples, 3);
			break;
		case OUTPUT_PPROF:
			assert_int_equal(write_pprof(p, &b), 0);
			break;
		case OUTPUT_OTLP:
			assert_int_equal(write_otlp(p, NULL, &b), 0);
			break;
		case OUTPUT_FOLDED:
			assert_int_equal(write_folded(p, &b), 0);
			break;
		case OUTPUT_SVG:
			assert_int_equal(write_svg(p, &b, "t"), 0);
			break;
		default:
			fail();
		}
		/* pprof stamps no time of its own: the same profile gives the same bytes */
		assert_int_equal(a.len, b.len);
		assert_memory_equal(a.data, b.data, a.len);
		buf__free(&a);
		buf__free(&b);
	}
	profile__free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_same_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

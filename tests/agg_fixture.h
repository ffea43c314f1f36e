/* SPDX-License-Identifier: MIT */
/*
 * Shared by the aggregator's cmocka drivers (test_agg.c, test_agg_churn.c):
 * a fake /proc in a temporary directory (fake_proc.h, from AGG_TMPDIR_TEMPLATE
 * defined by the includer) and a profile + aggregator per test. Include after cmocka.h.
 */
#ifndef BPFPROF_TESTS_AGG_FIXTURE_H
#define BPFPROF_TESTS_AGG_FIXTURE_H

#define FAKE_PROC_TEMPLATE AGG_TMPDIR_TEMPLATE
#include "fake_proc.h"

#define PERIOD_NS 10101010ULL
#define MS 1000000ULL

/* the cgroup id of the records send_sample builds */
static uint64_t sample_cgroup_id = 0xc0ffee;
/* the process start time of the records send_sample builds (0: unknown, as before issue 24) */
static uint32_t sample_start;
/* the records' thread: 0, another than the main one (tgid + 1); else this one */
static uint32_t sample_tid;

struct fixture {
	struct profile *p;
	struct proc_table *t; /* the fake /proc under tmpdir, nothing remembered */
	struct agg *a;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	f->p = profile__new();
	f->t = proc_table__new(tmpdir, false);
	f->a = f->p && f->t ? agg__new(f->p, f->t, PERIOD_NS) : NULL;
	if (!f->a) {
		proc_table__free(f->t);
		profile__free(f->p);
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	agg__free(f->a);
	proc_table__free(f->t);
	profile__free(f->p);
	free(f);
	return 0;
}

/*
 * Build a record and send exactly the bytes the BPF side would (header plus
 * the declared frames), from an exact-size heap copy.
 */
static int send_sample(struct agg *a, uint32_t tgid, uint64_t time_ns, const char *comm,
		       const uint64_t *kips, uint16_t nk, const uint64_t *uips, uint16_t nu)
{
	struct bpfprof_sample s;
	size_t size = BPFPROF_SAMPLE_HDR_SIZE + ((size_t)nk + nu) * 8;
	void *buf;
	int ret;

	memset(&s, 0, sizeof(s));
	s.type = BPFPROF_REC_SAMPLE;
	s.cpu = 3;
	s.tgid = tgid;
	s.tid = sample_tid ? sample_tid : tgid + 1;
	s.time_ns = time_ns;
	s.cgroup_id = sample_cgroup_id;
	s.start = sample_start;
	/* like the kernel's comm: NUL-padded, no NUL when it fills all 16 bytes */
	memcpy(s.comm, comm, strnlen(comm, sizeof(s.comm)));
	s.nr_kernel = nk;
	s.nr_user = nu;
	if (nk)
		memcpy(s.ips, kips, nk * 8);
	if (nu)
		memcpy(s.ips + nk, uips, nu * 8);
	buf = malloc(size);
	assert_non_null(buf);
	memcpy(buf, &s, size);
	ret = agg__record(a, buf, size);
	free(buf);
	return ret;
}

#endif /* BPFPROF_TESTS_AGG_FIXTURE_H */

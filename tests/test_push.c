// SPDX-License-Identifier: MIT
/*
 * cmocka tests for user/write/push.c (include/push.h) without network: option
 * checks, the auth file, service names and labels per series, the
 * PushRequest encoding (decoded back with protoc-c's generated unpack of
 * Pyroscope's push.proto and compared with literal expectations), and the
 * legacy ingest query string; the OTLP endpoint and the reading of an OTLP
 * receiver's partial_success answer.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "gunzip_fixture.h"
#include "profile_fixture.h"
#include "push.h"
#include "push/v1/push.pb-c.h"
#include "opentelemetry/proto/collector/profiles/v1development/profiles_service.pb-c.h"

static char tmpdir[] = "/tmp/bpfprof-test-push.XXXXXX";

static const char *write_file(const char *name, const char *data, size_t len, mode_t mode)
{
	static char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
	assert_int_equal(chmod(path, mode), 0);
	return path;
}

static void test_check_url(void **state)
{
	const char *why;

	assert_int_equal(push__check_url("http://127.0.0.1:4040", &why), 0);
	assert_int_equal(push__check_url("https://pyroscope.example/base/", &why), 0);
	assert_int_equal(push__check_url("ftp://host", &why), -EINVAL);
	assert_int_equal(push__check_url("http://", &why), -EINVAL);
	assert_int_equal(push__check_url("http://:80/", &why), -EINVAL);
	assert_int_equal(push__check_url("http://127.0.0.1:/x", &why), -EINVAL);
	assert_int_equal(push__check_url("http://user:pw@host/", &why), -EINVAL);
	assert_non_null(strstr(why, "--push-auth-file"));
	assert_int_equal(push__check_url("http://host/ingest?name=x", &why), -EINVAL);
	assert_int_equal(push__check_url("http://host/a b", &why), -EINVAL);
	/* an '@' in the path is not credentials */
	assert_int_equal(push__check_url("http://host/a@b", &why), 0);
}

static void test_api_and_endpoint(void **state)
{
	char *e;

	assert_int_equal(push__api_for("http://h:4040", PUSH_API_AUTO), PUSH_API_CONNECT);
	assert_int_equal(push__api_for("http://h:4040/ingest", PUSH_API_AUTO), PUSH_API_INGEST);
	assert_int_equal(push__api_for("http://h:4040/ingest/", PUSH_API_AUTO), PUSH_API_INGEST);
	assert_int_equal(push__api_for("http://h:4040/ingest", PUSH_API_CONNECT), PUSH_API_CONNECT);
	assert_int_equal(push__api_for("http://h:4040/", PUSH_API_INGEST), PUSH_API_INGEST);
	e = push__endpoint("http://h:4040", PUSH_API_CONNECT);
	assert_string_equal(e, "http://h:4040/push.v1.PusherService/Push");
	free(e);
	e = push__endpoint("http://h:4040/prefix/", PUSH_API_CONNECT);
	assert_string_equal(e, "http://h:4040/prefix/push.v1.PusherService/Push");
	free(e);
	e = push__endpoint("http://h/push.v1.PusherService/Push", PUSH_API_CONNECT);
	assert_string_equal(e, "http://h/push.v1.PusherService/Push");
	free(e);
	e = push__endpoint("http://h/ingest", PUSH_API_INGEST);
	assert_string_equal(e, "http://h/ingest");
	free(e);
	/* OTLP: the signal's path appended to a bare URL, a URL with a path used as it is */
	assert_int_equal(push__api_for("http://h:4318", PUSH_API_OTLP), PUSH_API_OTLP);
	e = push__endpoint("http://h:4318", PUSH_API_OTLP);
	assert_string_equal(e, "http://h:4318/v1development/profiles");
	free(e);
	e = push__endpoint("https://h:4318/", PUSH_API_OTLP);
	assert_string_equal(e, "https://h:4318/v1development/profiles");
	free(e);
	e = push__endpoint("http://h/otlp/v1development/profiles", PUSH_API_OTLP);
	assert_string_equal(e, "http://h/otlp/v1development/profiles");
	free(e);
	e = push__endpoint("http://h/custom/", PUSH_API_OTLP);
	assert_string_equal(e, "http://h/custom");
	free(e);
}

/*
 * The OTLP body: gzip, the request with service.name and the --label pairs
 * on its resource; over the size limit refused (-E2BIG) and nothing added.
 */
static void test_otlp_body(void **state)
{
	Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceRequest *r;
	const Opentelemetry__Proto__Resource__V1__Resource *res;
	struct push_opts o = {
		.url = "http://h:4318", .api = PUSH_API_OTLP, .labels = { "env=ci" }, .nr_labels = 1
	};
	struct push_env env = { .hostname = "host-1", .default_service = "svc" };
	struct profile *p = profile__new();
	const uint64_t ips[] = { 0x401010, 0x402020 };
	struct buf b = { 0 };
	uint8_t *raw;
	size_t raw_len;
	bool created;
	int proc;

	assert_non_null(p);
	p->period_ns = 1000000;
	proc = profile__process(p, 42, &created);
	add_stack(p, (uint32_t)proc, ips, 0, 2, 7);
	assert_int_equal(profile__resolve_locs(p), 0);

	assert_int_equal(push__otlp_body(&o, &env, p, 100, &b), -E2BIG);
	assert_int_equal(b.len, 0);
	assert_int_equal(push__otlp_body(&o, &env, p, 64u << 20, &b), 0);
	assert_true(b.len > 18 && b.data[0] == 0x1f && b.data[1] == 0x8b);
	raw = gunzip(b.data, b.len, &raw_len);
	r = opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__unpack(
		NULL, raw_len, raw);
	free(raw);
	assert_non_null(r);
	res = r->resource_profiles[0]->resource;
	assert_int_equal(res->n_attributes, 4);
	assert_string_equal(res->attributes[0]->value->string_value, "host-1");
	assert_string_equal(res->attributes[2]->key, "service.name");
	assert_string_equal(res->attributes[2]->value->string_value, "svc");
	assert_string_equal(res->attributes[3]->key, "env");
	assert_string_equal(res->attributes[3]->value->string_value, "ci");
	assert_int_equal(
		r->resource_profiles[0]->scope_profiles[0]->profiles[0]->samples[0]->values[0], 7);
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__free_unpacked(
		r, NULL);
	buf__free(&b);
	profile__free(p);
}

/* An OTLP receiver's answer: empty (full success), partial success, garbage. */
static void test_otlp_partial_success(void **state)
{
	Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceResponse r =
		OPENTELEMETRY__PROTO__COLLECTOR__PROFILES__V1DEVELOPMENT__EXPORT_PROFILES_SERVICE_RESPONSE__INIT;
	Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesPartialSuccess ps =
		OPENTELEMETRY__PROTO__COLLECTOR__PROFILES__V1DEVELOPMENT__EXPORT_PROFILES_PARTIAL_SUCCESS__INIT;
	static const uint8_t garbage[] = { 0x0a, 0x7f, 0x01 }; /* field 1, 127 bytes, 1 there */
	uint8_t packed[128];
	int64_t rejected = -1;
	char *msg = (char *)"x";
	size_t len;

	assert_int_equal(push__otlp_partial_success("", 0, &rejected, &msg), 0);
	assert_int_equal(rejected, 0);
	assert_null(msg);

	ps.rejected_profiles = 2;
	ps.error_message = "2 profiles without samples";
	r.partial_success = &ps;
	len = opentelemetry__proto__collector__profiles__v1development__export_profiles_service_response__pack(
		&r, packed);
	assert_true(len > 0 && len < sizeof(packed));
	assert_int_equal(push__otlp_partial_success(packed, len, &rejected, &msg), 0);
	assert_int_equal(rejected, 2);
	assert_string_equal(msg, "2 profiles without samples");
	free(msg);

	/* an empty partial_success: accepted whole */
	ps.rejected_profiles = 0;
	ps.error_message = "";
	len = opentelemetry__proto__collector__profiles__v1development__export_profiles_service_response__pack(
		&r, packed);
	assert_int_equal(push__otlp_partial_success(packed, len, &rejected, &msg), 0);
	assert_int_equal(rejected, 0);
	assert_null(msg);

	assert_int_equal(push__otlp_partial_success(garbage, sizeof(garbage), &rejected, &msg),
			 -EINVAL);
	assert_int_equal(push__otlp_partial_success("<html>", 6, &rejected, &msg), -EINVAL);
}

static void test_check_label(void **state)
{
	const char *why;

	assert_int_equal(push__check_label("env=prod", &why), 0);
	assert_int_equal(push__check_label("_k9=a=b c", &why),
			 0); /* the value may hold '=' and spaces */
	assert_int_equal(push__check_label("env", &why), -EINVAL);
	assert_int_equal(push__check_label("=x", &why), -EINVAL);
	assert_int_equal(push__check_label("9x=1", &why), -EINVAL);
	assert_int_equal(push__check_label("a-b=1", &why), -EINVAL);
	assert_int_equal(push__check_label("__name__=x", &why), -EINVAL);
	assert_int_equal(push__check_label("service_name=x", &why), -EINVAL);
	assert_non_null(strstr(why, "--service-name"));
	assert_int_equal(push__check_label("hostname=x", &why), -EINVAL);
	assert_int_equal(push__check_label("pid=1", &why), -EINVAL);
	assert_int_equal(push__check_label("k=", &why), -EINVAL);
	assert_int_equal(push__check_label("k=a\tb", &why), -EINVAL);
}

static void expect_auth(const char *content, size_t len, mode_t mode, int err, const char *header)
{
	const char *path = write_file("auth", content, len, mode);
	char *h = (char *)1;

	assert_int_equal(push__read_auth(path, &h), err);
	if (header)
		assert_string_equal(h, header);
	else
		assert_null(h);
	free(h);
}

static void test_read_auth(void **state)
{
	char big[5000], *h;

	/* "user:s3cret" in base64 is dXNlcjpzM2NyZXQ= */
	expect_auth("user:s3cret\n", 12, 0600, 0, "Authorization: Basic dXNlcjpzM2NyZXQ=");
	expect_auth("  user:s3cret \r\n# a comment\n", 28, 0640, 0,
		    "Authorization: Basic dXNlcjpzM2NyZXQ=");
	expect_auth("ab:c", 4, 0400, 0, "Authorization: Basic YWI6Yw==");
	expect_auth("Bearer glc_abc.def\n", 19, 0600, 0, "Authorization: Bearer glc_abc.def");
	expect_auth("bearer   tok", 12, 0600, 0, "Authorization: Bearer tok");
	expect_auth("tok123\n", 7, 0600, 0, "Authorization: Bearer tok123");
	/* refused */
	expect_auth("user:pw\n", 8, 0644, -EPERM, NULL);
	expect_auth("user:pw\n", 8, 0604, -EPERM, NULL);
	expect_auth("", 0, 0600, -EINVAL, NULL);
	expect_auth("  \r\n", 4, 0600, -EINVAL, NULL);
	expect_auth("\nuser:pw\n", 9, 0600, -EINVAL, NULL);
	expect_auth("user:p\x01w\n", 9, 0600, -EINVAL, NULL);
	expect_auth("user:p\0w\n", 9, 0600, -EINVAL, NULL);
	expect_auth("Bearer\n", 7, 0600, -EINVAL, NULL);
	expect_auth("Bearer a b\n", 11, 0600, -EINVAL, NULL);
	expect_auth("two words\n", 10, 0600, -EINVAL, NULL);
	memset(big, 'a', sizeof(big));
	expect_auth(big, sizeof(big), 0600, -EINVAL, NULL);
	assert_int_equal(push__read_auth("/nonexistent/bpfprof-auth", &h), -ENOENT);
	assert_null(h);
	assert_int_equal(push__read_auth(tmpdir, &h), -EINVAL); /* a directory */
}

static void test_default_service(void **state)
{
	struct push_env env = { .proc_root = tmpdir };
	char path[PATH_MAX], *s;

	env.command = "/usr/bin/my-app";
	s = push__default_service(&env);
	assert_string_equal(s, "my-app");
	free(s);
	env.command = "./a b{c}";
	s = push__default_service(&env);
	assert_string_equal(s, "a_b_c_");
	free(s);
	env.command = NULL;
	snprintf(path, sizeof(path), "%s/4321", tmpdir);
	assert_int_equal(mkdir(path, 0755), 0);
	write_file("4321/comm", "nginx: worker\n", 14, 0644);
	env.first_pid = 4321;
	s = push__default_service(&env);
	assert_string_equal(s, "nginx__worker");
	free(s);
	env.first_pid = 4322; /* gone */
	s = push__default_service(&env);
	assert_string_equal(s, "ebpf/unspecified");
	free(s);
	env.first_pid = 0;
	s = push__default_service(&env);
	assert_string_equal(s, "ebpf/unspecified");
	free(s);
}

#define CID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

/*
 * pid 10, 11: one container; pid 20: a systemd service; pid 30: root cgroup;
 * pid 40: no cgroup known; pid 50: no samples.
 */
static struct profile *five_services(void)
{
	struct profile *p = profile__new();
	const uint32_t pids[] = { 10, 11, 20, 30, 40, 50 };
	const char *cg[] = { "/system.slice/docker-" CID ".scope",
			     "/system.slice/docker-" CID ".scope",
			     "/system.slice/nginx.service",
			     "/",
			     NULL,
			     "/x" };
	const uint64_t samples[] = { 3, 4, 5, 6, 7, 0 };

	assert_non_null(p);
	for (int i = 0; i < 6; i++) {
		uint32_t k = add_labeled_proc(p, pids[i], "c", cg[i], i < 2 ? CID : NULL);

		p->procs[k].nr_samples = samples[i];
	}
	return p;
}

static const char *label(const struct push_series *s, const char *name)
{
	for (size_t i = 0; i < s->nr_labels; i++)
		if (!strcmp(s->labels[i].name, name))
			return s->labels[i].value;
	return NULL;
}

static void check_sorted(const struct push_series *s)
{
	for (size_t i = 1; i < s->nr_labels; i++)
		assert_true(strcmp(s->labels[i - 1].name, s->labels[i].name) < 0);
	assert_int_equal(strlen(s->id), 36);
	assert_int_equal(s->id[14], '4'); /* UUID version 4 */
}

static void test_group_split(void **state)
{
	struct push_opts o = { .labels = { "env=prod", "team=a", "env=stage" }, .nr_labels = 3 };
	struct push_env env = { .split_services = true, .hostname = "host1", .pid = 0 };
	struct profile *p = five_services();
	struct push_series *s;
	uint32_t *of;
	int n = push__group(&o, &env, p, &s, &of);

	assert_int_equal(n, 3);
	/* in order of first process: container, nginx, root cgroup and no cgroup together */
	assert_int_equal(of[0], 0);
	assert_int_equal(of[1], 0);
	assert_int_equal(of[2], 1);
	assert_int_equal(of[3], 2);
	assert_int_equal(of[4], 2);
	assert_int_equal(of[5], UINT32_MAX);
	assert_string_equal(label(&s[0], "service_name"), "ebpf/container/0123456789ab");
	assert_string_equal(label(&s[0], "container_id"), CID);
	assert_null(label(&s[0], "cgroup"));
	assert_int_equal(s[0].nr_samples, 7);
	assert_string_equal(label(&s[1], "service_name"), "ebpf/cgroup/system.slice/nginx.service");
	assert_string_equal(label(&s[1], "cgroup"), "/system.slice/nginx.service");
	assert_int_equal(s[1].nr_samples, 5);
	assert_string_equal(label(&s[2], "service_name"), "ebpf/unspecified");
	assert_null(label(&s[2], "cgroup"));
	assert_int_equal(s[2].nr_samples, 13);
	for (int i = 0; i < 3; i++) {
		check_sorted(&s[i]);
		assert_string_equal(label(&s[i], "__name__"), "process_cpu");
		assert_string_equal(label(&s[i], "hostname"), "host1");
		assert_string_equal(label(&s[i], "env"), "stage"); /* the last --label wins */
		assert_string_equal(label(&s[i], "team"), "a");
		assert_null(label(&s[i], "pid"));
	}
	assert_int_equal(s[0].nr_labels, 6);
	assert_string_not_equal(s[0].id, s[1].id);
	push__series_free(s, (size_t)n);
	free(of);

	/* --service-name: the same name, still one series per cgroup */
	o.service_name = "web";
	n = push__group(&o, &env, p, &s, &of);
	assert_int_equal(n, 3);
	assert_string_equal(label(&s[0], "service_name"), "web");
	assert_string_equal(label(&s[1], "service_name"), "web");
	assert_string_equal(label(&s[1], "cgroup"), "/system.slice/nginx.service");
	push__series_free(s, (size_t)n);
	free(of);
	profile__free(p);
}

static void test_group_one_series(void **state)
{
	struct push_opts o = { 0 };
	struct push_env env = { .hostname = "h", .pid = 10 };
	struct profile *p = five_services();
	struct push_series *s;
	uint32_t *of;
	int n;

	env.default_service = "hotcold";
	n = push__group(&o, &env, p, &s, &of);
	assert_int_equal(n, 1);
	for (int i = 0; i < 5; i++)
		assert_int_equal(of[i], 0);
	assert_int_equal(of[5], UINT32_MAX);
	assert_int_equal(s[0].nr_samples, 25);
	assert_int_equal(s[0].nr_labels, 4);
	assert_string_equal(s[0].labels[0].name, "__name__");
	assert_string_equal(s[0].labels[1].name, "hostname");
	assert_string_equal(s[0].labels[2].name, "pid");
	assert_string_equal(s[0].labels[2].value, "10");
	assert_string_equal(s[0].labels[3].name, "service_name");
	assert_string_equal(s[0].labels[3].value, "hotcold");
	push__series_free(s, (size_t)n);
	free(of);
	profile__free(p);

	/* nothing sampled: no series */
	p = profile__new();
	n = push__group(&o, &env, p, &s, &of);
	assert_int_equal(n, 0);
	push__series_free(s, 0);
	free(of);
	profile__free(p);
}

static void set_series(struct push_series *s, const char *svc, const char *bytes, const char *id)
{
	static const char *names[] = { "__name__", "service_name" };

	memset(s, 0, sizeof(*s));
	s->labels = calloc(2, sizeof(*s->labels));
	s->nr_labels = 2;
	s->labels[0].name = strdup(names[0]);
	s->labels[0].value = strdup("process_cpu");
	s->labels[1].name = strdup(names[1]);
	s->labels[1].value = strdup(svc);
	buf__put_bytes(&s->pprof, bytes, strlen(bytes));
	snprintf(s->id, sizeof(s->id), "%s", id);
}

static void test_encode_request(void **state)
{
	struct push_series *s = calloc(3, sizeof(*s));
	Push__V1__PushRequest *req;
	bool skip[3] = { false, true, false };
	struct buf b = { 0 };

	set_series(&s[0], "a", "\x1f\x8b pprof a", "11111111-1111-4111-8111-111111111111");
	set_series(&s[1], "b", "pprof b", "22222222-2222-4222-8222-222222222222");
	set_series(&s[2], "c", "", "33333333-3333-4333-8333-333333333333");
	assert_int_equal(push__encode_request(s, 3, NULL, &b), 0);
	req = push__v1__push_request__unpack(NULL, b.len, b.data);
	assert_non_null(req);
	assert_int_equal(req->n_series, 3);
	assert_int_equal(req->series[0]->n_labels, 2);
	assert_string_equal(req->series[0]->labels[0]->name, "__name__");
	assert_string_equal(req->series[0]->labels[0]->value, "process_cpu");
	assert_string_equal(req->series[1]->labels[1]->value, "b");
	assert_int_equal(req->series[0]->n_samples, 1);
	assert_int_equal(req->series[0]->samples[0]->raw_profile.len, 10);
	assert_memory_equal(req->series[0]->samples[0]->raw_profile.data, "\x1f\x8b pprof a", 10);
	assert_string_equal(req->series[1]->samples[0]->id, "22222222-2222-4222-8222-222222222222");
	assert_int_equal(req->series[2]->samples[0]->raw_profile.len, 0);
	assert_int_equal(req->series[0]->n_annotations, 0);
	push__v1__push_request__free_unpacked(req, NULL);

	/* the wire bytes of the first field: series (1, LEN), then its first label (1, LEN) */
	assert_int_equal(b.data[0], 0x0a);
	b.len = 0;
	assert_int_equal(push__encode_request(s, 3, skip, &b), 0);
	req = push__v1__push_request__unpack(NULL, b.len, b.data);
	assert_non_null(req);
	assert_int_equal(req->n_series, 2);
	assert_string_equal(req->series[1]->labels[1]->value, "c");
	push__v1__push_request__free_unpacked(req, NULL);
	/* appended to what the buffer holds */
	assert_int_equal(push__encode_request(s, 1, NULL, &b), 0);
	buf__free(&b);
	push__series_free(s, 3);
}

static void test_ingest_query(void **state)
{
	struct push_series s = { 0 };
	const char *pairs[][2] = { { "__name__", "process_cpu" },
				   { "cgroup", "/a,b{c}" },
				   { "env", "x y" },
				   { "hostname", "h1" },
				   { "service_name", "ebpf/cgroup/a" } };
	char *q;

	s.labels = calloc(5, sizeof(*s.labels));
	for (int i = 0; i < 5; i++) {
		s.labels[i].name = strdup(pairs[i][0]);
		s.labels[i].value = strdup(pairs[i][1]);
	}
	s.nr_labels = 5;
	q = push__ingest_query(&s, 1700000000500000000ULL, 1700000010200000000ULL, 99);
	/* name=ebpf/cgroup/a{cgroup=/a_b_c_,env=x y,hostname=h1}, percent-encoded; until rounded up */
	assert_string_equal(
		q, "name=ebpf%2Fcgroup%2Fa%7Bcgroup%3D%2Fa_b_c_%2Cenv%3Dx%20y%2Chostname%3Dh1%7D"
		   "&from=1700000000&until=1700000011&format=pprof&sampleRate=99&spyName=bpfprof");
	free(q);
	for (int i = 0; i < 5; i++) {
		free(s.labels[i].name);
		free(s.labels[i].value);
	}
	free(s.labels);
}

static int setup(void **state)
{
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_url),
		cmocka_unit_test(test_api_and_endpoint),
		cmocka_unit_test(test_check_label),
		cmocka_unit_test(test_read_auth),
		cmocka_unit_test(test_default_service),
		cmocka_unit_test(test_group_split),
		cmocka_unit_test(test_group_one_series),
		cmocka_unit_test(test_encode_request),
		cmocka_unit_test(test_ingest_query),
		cmocka_unit_test(test_otlp_partial_success),
		cmocka_unit_test(test_otlp_body),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

// SPDX-License-Identifier: MIT
/*
 * --push (include/push.h): interval profiles to a Pyroscope server through
 * libcurl, from a thread of their own. Requests follow Pyroscope's server
 * API page: the Connect API's push.v1.PusherService/Push (PushRequest from
 * proto/pyroscope/push/v1/push.proto, packed by protoc-c's code) or the
 * legacy /ingest?name=...&format=pprof, body the gzip pprof; or OTLP/HTTP's
 * /v1development/profiles, body the gzip ExportProfilesServiceRequest
 * (write_otlp.h). One queue, spool, backoff, TLS and auth for all three:
 * only the encoding of an interval (push__submit) and of its request
 * (send_item, spool_or_drop) depend on the API.
 *
 *   sampling thread                          push thread
 *   interval__end ─► push__submit            loop: head of queue, if not backing off
 *     push__group (series, labels)             send (connect: one request; ingest: one per series)
 *     write_pprof_procs per series             2xx ─► pushed, backoff reset
 *     queue full? oldest ─► spool / drop       5xx, 408, 429, network ─► back to the head, backoff x2
 *     append, signal ──────────────────────►   other 4xx ─► spool / drop (retrying cannot help)
 *   push__finish: deadline, signal, join     past the deadline: the rest ─► spool / drop
 *
 * The queue and the counters are under one mutex; the thread never holds it
 * across a request, and the sampling thread never waits for the network.
 */
#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <curl/curl.h>
#include <zlib.h>
#include "log.h"
#include "outdir.h"
#include "output.h"
#include "push.h"
#include "write_otlp.h"
#include "write_pprof.h"
#include "proto/push/v1/push.pb-c.h"
#include "opentelemetry/proto/collector/profiles/v1development/profiles_service.pb-c.h"

#define AUTH_FILE_MAX 4096
#define BACKOFF_MIN_NS 1000000000ULL
#define BACKOFF_MAX_NS 30000000000ULL
#define CONNECT_TIMEOUT_MS 5000L
#define ERR_BODY_MAX 300 /* bytes of a server's error answer quoted in a warning */
#define RESP_MAX 4096 /* bytes of an answer kept (OTLP's partial_success is read from it) */
#define LABEL_VALUE_MAX 1024
#define UNSPECIFIED "ebpf/unspecified"
#define SPOOL_MAX (256 << 20) /* largest spooled request replayed, bytes */

static const char *const reserved_labels[] = { "service_name", "hostname", "pid", "cgroup",
					       "container_id" };

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t cpu_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* ---- options, auth, labels ---- */

int push__check_url(const char *url, const char **why)
{
	const char *host, *end;

	if (!strncmp(url, "http://", 7))
		host = url + 7;
	else if (!strncmp(url, "https://", 8))
		host = url + 8;
	else
		return *why = "not an http:// or https:// URL", -EINVAL;
	end = host + strcspn(host, "/");
	if (end == host || *host == ':')
		return *why = "no host", -EINVAL;
	if (end[-1] == ':')
		return *why = "an empty port", -EINVAL;
	if (memchr(host, '@', (size_t)(end - host)))
		return *why = "credentials in the URL: put them in --push-auth-file", -EINVAL;
	if (strpbrk(url, "?#"))
		return *why = "a query or fragment: bpfprof adds its own", -EINVAL;
	for (const char *c = url; *c; c++)
		if ((unsigned char)*c <= ' ' || *c == 0x7f)
			return *why = "a space or control character", -EINVAL;
	return 0;
}

enum push_api push__api_for(const char *url, enum push_api api)
{
	size_t n = strlen(url);

	if (api != PUSH_API_AUTO)
		return api;
	while (n && url[n - 1] == '/')
		n--;
	return n >= 7 && !strncmp(url + n - 7, "/ingest", 7) ? PUSH_API_INGEST : PUSH_API_CONNECT;
}

char *push__endpoint(const char *url, enum push_api api)
{
	size_t n = strlen(url), k = strlen(PUSH_CONNECT_PATH);
	char *out;

	if (api == PUSH_API_INGEST)
		return strdup(url);
	while (n && url[n - 1] == '/')
		n--;
	if (api == PUSH_API_OTLP) {
		const char *host = strstr(url, "://") ? strstr(url, "://") + 3 : url;

		/* a path of its own is used as it is, as the SDKs' per-signal endpoints */
		if (host + strcspn(host, "/") < url + n)
			return strndup(url, n);
		if (asprintf(&out, "%.*s%s", (int)n, url, OTLP_PROFILES_PATH) < 0)
			return NULL;
		return out;
	}
	if (n >= k && !strncmp(url + n - k, PUSH_CONNECT_PATH, k))
		return strndup(url, n);
	if (asprintf(&out, "%.*s%s", (int)n, url, PUSH_CONNECT_PATH) < 0)
		return NULL;
	return out;
}

static bool label_name_ok(const char *k, size_t n)
{
	if (!n || !(isalpha((unsigned char)k[0]) || k[0] == '_'))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!isalnum((unsigned char)k[i]) && k[i] != '_')
			return false;
	return true;
}

int push__check_label(const char *kv, const char **why)
{
	const char *eq = strchr(kv, '=');
	size_t kn;

	if (!eq)
		return *why = "not KEY=VALUE", -EINVAL;
	kn = (size_t)(eq - kv);
	if (!label_name_ok(kv, kn))
		return *why = "the key is not [a-zA-Z_][a-zA-Z0-9_]*", -EINVAL;
	if (kn >= 2 && kv[0] == '_' && kv[1] == '_')
		return *why = "keys starting with __ are reserved", -EINVAL;
	for (size_t i = 0; i < sizeof(reserved_labels) / sizeof(*reserved_labels); i++)
		if (strlen(reserved_labels[i]) == kn && !strncmp(kv, reserved_labels[i], kn))
			return *why = "bpfprof sets this label (service_name: use --service-name)",
			       -EINVAL;
	if (!eq[1] || strlen(eq + 1) > LABEL_VALUE_MAX)
		return *why = "the value is empty or longer than 1024 bytes", -EINVAL;
	for (const char *c = eq + 1; *c; c++)
		if ((unsigned char)*c < ' ' || *c == 0x7f)
			return *why = "a control character in the value", -EINVAL;
	return 0;
}

static char *base64(const uint8_t *src, size_t n)
{
	static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *out = malloc((n + 2) / 3 * 4 + 1), *o = out;
	size_t i;

	if (!out)
		return NULL;
	for (i = 0; i + 2 < n; i += 3) {
		uint32_t v = (uint32_t)src[i] << 16 | (uint32_t)src[i + 1] << 8 | src[i + 2];

		*o++ = t[v >> 18];
		*o++ = t[(v >> 12) & 63];
		*o++ = t[(v >> 6) & 63];
		*o++ = t[v & 63];
	}
	if (i < n) {
		uint32_t v = (uint32_t)src[i] << 16 | (i + 1 < n ? (uint32_t)src[i + 1] << 8 : 0);

		*o++ = t[v >> 18];
		*o++ = t[(v >> 12) & 63];
		*o++ = i + 1 < n ? t[(v >> 6) & 63] : '=';
		*o++ = '=';
	}
	*o = '\0';
	return out;
}

int push__read_auth(const char *path, char **header)
{
	char data[AUTH_FILE_MAX + 1], *line, *end, *enc;
	struct stat st;
	ssize_t n;
	int fd, err;

	*header = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		err = -errno;
		pr_warn("cannot read push auth file '%s': %s\n", path, strerror(-err));
		return err;
	}
	if (fstat(fd, &st)) {
		err = -errno;
		pr_warn("cannot read push auth file '%s': %s\n", path, strerror(-err));
		goto out_close;
	}
	err = -EINVAL;
	if (!S_ISREG(st.st_mode)) {
		pr_warn("push auth file '%s' is not a regular file\n", path);
		goto out_close;
	}
	if (st.st_mode & S_IROTH) {
		pr_warn("push auth file '%s' is readable by every user (mode %04o): 'chmod o-r' it, or 600\n",
			path, (unsigned int)(st.st_mode & 07777));
		err = -EPERM;
		goto out_close;
	}
	if (st.st_size > AUTH_FILE_MAX) {
		pr_warn("push auth file '%s' is %lld bytes: more than %d for one credential\n",
			path, (long long)st.st_size, AUTH_FILE_MAX);
		goto out_close;
	}
	n = read(fd, data, AUTH_FILE_MAX);
	if (n < 0) {
		err = -errno;
		pr_warn("cannot read push auth file '%s': %s\n", path, strerror(-err));
		goto out_close;
	}
	data[n] = '\0';
	/* the first line, trailing CR/spaces dropped; later lines (comments) ignored */
	line = data;
	end = memchr(data, '\n', (size_t)n);
	if (!end)
		end = data + n;
	if (memchr(data, '\0', (size_t)(end - data))) {
		pr_warn("push auth file '%s': a NUL byte at offset %td\n", path,
			(char *)memchr(data, '\0', (size_t)(end - data)) - data);
		goto out_close;
	}
	*end = '\0';
	while (end > line && (end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t'))
		*--end = '\0';
	while (*line == ' ' || *line == '\t')
		line++;
	if (!*line) {
		pr_warn("push auth file '%s' is empty: it needs 'user:password' or a token on its first line\n",
			path);
		goto out_close;
	}
	for (char *c = line; *c; c++)
		if ((unsigned char)*c < ' ' || *c == 0x7f) {
			pr_warn("push auth file '%s': a control character at offset %td of the credential\n",
				path, c - data);
			goto out_close;
		}
	err = -ENOMEM;
	if (!strcasecmp(line, "bearer")) {
		pr_warn("push auth file '%s': 'Bearer' needs a token after it\n", path);
		err = -EINVAL;
		goto out_close;
	}
	if (!strncasecmp(line, "bearer ", 7)) {
		line += 7;
		while (*line == ' ')
			line++;
		if (!*line || strchr(line, ' ')) {
			pr_warn("push auth file '%s': 'Bearer' needs one token after it\n", path);
			err = -EINVAL;
			goto out_close;
		}
		if (asprintf(header, "Authorization: Bearer %s", line) < 0)
			*header = NULL;
	} else if (strchr(line, ':')) {
		enc = base64((const uint8_t *)line, strlen(line));
		if (enc && asprintf(header, "Authorization: Basic %s", enc) < 0)
			*header = NULL;
		free(enc);
	} else {
		if (strchr(line, ' ')) {
			pr_warn("push auth file '%s': a token with a space (expected 'user:password', 'Bearer TOKEN' or TOKEN)\n",
				path);
			err = -EINVAL;
			goto out_close;
		}
		if (asprintf(header, "Authorization: Bearer %s", line) < 0)
			*header = NULL;
	}
	if (*header)
		err = 0;
out_close:
	explicit_bzero(data, sizeof(data));
	close(fd);
	return err;
}

/* Service names as Pyroscope's ingest endpoint takes them: [A-Za-z0-9_.-/], others '_'. */
static void sanitize_service(char *s)
{
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("_.-/", *s))
			*s = '_';
}

char *push__default_service(const struct push_env *env)
{
	char path[64], comm[64] = "", *out = NULL;
	ssize_t n;
	int fd;

	if (env->command) {
		const char *b = strrchr(env->command, '/');

		out = strdup(b ? b + 1 : env->command);
	} else if (env->first_pid) {
		snprintf(path, sizeof(path), "%s/%u/comm",
			 env->proc_root ? env->proc_root : "/proc", env->first_pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			n = read(fd, comm, sizeof(comm) - 1);
			close(fd);
			comm[n > 0 ? n : 0] = '\0';
			comm[strcspn(comm, "\n")] = '\0';
		}
		out = strdup(comm[0] ? comm : UNSPECIFIED);
	}
	if (!out || !out[0]) {
		free(out);
		out = strdup(UNSPECIFIED);
	}
	if (out)
		sanitize_service(out);
	return out;
}

static int add_label(struct push_series *s, const char *name, const char *value, size_t value_len)
{
	struct push_label *l = realloc(s->labels, (s->nr_labels + 1) * sizeof(*l));

	if (!l)
		return -ENOMEM;
	s->labels = l;
	l = &s->labels[s->nr_labels];
	l->name = strdup(name);
	l->value = strndup(value, value_len);
	if (!l->name || !l->value) {
		free(l->name);
		free(l->value);
		return -ENOMEM;
	}
	s->nr_labels++;
	return 0;
}

static int cmp_label(const void *a, const void *b)
{
	return strcmp(((const struct push_label *)a)->name, ((const struct push_label *)b)->name);
}

void push__series_free(struct push_series *s, size_t n)
{
	for (size_t i = 0; s && i < n; i++) {
		for (size_t j = 0; j < s[i].nr_labels; j++) {
			free(s[i].labels[j].name);
			free(s[i].labels[j].value);
		}
		free(s[i].labels);
		buf__free(&s[i].pprof);
	}
	free(s);
}

static void new_uuid(char out[37])
{
	uint8_t b[16];
	size_t got = 0;

	while (got < sizeof(b)) {
		ssize_t n = getrandom(b + got, sizeof(b) - got, 0);

		if (n <= 0) {
			/* never expected; an ID only has to differ between profiles */
			uint64_t t = mono_ns() ^ (uint64_t)getpid() << 32;

			memcpy(b, &t, sizeof(t));
			memcpy(b + 8, &t, sizeof(t));
			break;
		}
		got += (size_t)n;
	}
	b[6] = (b[6] & 0x0f) | 0x40; /* RFC 4122 version 4 */
	b[8] = (b[8] & 0x3f) | 0x80;
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
		 b[13], b[14], b[15]);
}

/* The grouping key of a process: "c:ID", "g:PATH", or "" for neither (the unspecified series). */
static const char *group_key(const struct profile_process *pr, char *tmp, size_t len)
{
	if (pr->container_id && pr->container_id[0])
		snprintf(tmp, len, "c:%s", pr->container_id);
	else if (pr->cgroup_path && pr->cgroup_path[0] && strcmp(pr->cgroup_path, "/"))
		snprintf(tmp, len, "g:%s", pr->cgroup_path);
	else
		tmp[0] = '\0';
	return tmp;
}

static int series_labels(const struct push_opts *o, const struct push_env *env,
			 struct push_series *s, const char *key)
{
	char service[512], num[16];
	int err;

	if (o->service_name)
		snprintf(service, sizeof(service), "%s", o->service_name);
	else if (!env->split_services)
		snprintf(service, sizeof(service), "%s",
			 env->default_service ? env->default_service : UNSPECIFIED);
	else if (key[0] == 'c')
		snprintf(service, sizeof(service), "ebpf/container/%.12s", key + 2);
	else if (key[0] == 'g')
		snprintf(service, sizeof(service), "ebpf/cgroup/%s",
			 key[2] == '/' ? key + 3 : key + 2);
	else
		snprintf(service, sizeof(service), "%s", UNSPECIFIED);
	sanitize_service(service);
	err = add_label(s, "__name__", PUSH_PROFILE_NAME, strlen(PUSH_PROFILE_NAME));
	err = err ?: add_label(s, "service_name", service, strlen(service));
	if (!err && env->hostname && env->hostname[0])
		err = add_label(s, "hostname", env->hostname, strlen(env->hostname));
	if (!err && key[0] == 'c')
		err = add_label(s, "container_id", key + 2, strlen(key + 2));
	if (!err && key[0] == 'g')
		err = add_label(s, "cgroup", key + 2, strlen(key + 2));
	if (!err && env->pid && !env->split_services) {
		snprintf(num, sizeof(num), "%u", env->pid);
		err = add_label(s, "pid", num, strlen(num));
	}
	for (int i = 0; !err && i < o->nr_labels; i++) {
		const char *eq = strchr(o->labels[i], '=');
		char name[256];

		if (!eq || (size_t)(eq - o->labels[i]) >= sizeof(name))
			continue; /* checked by the command line already */
		snprintf(name, sizeof(name), "%.*s", (int)(eq - o->labels[i]), o->labels[i]);
		/* a --label given twice: the last one wins */
		for (size_t j = 0; j < s->nr_labels; j++)
			if (!strcmp(s->labels[j].name, name)) {
				free(s->labels[j].name);
				free(s->labels[j].value);
				s->labels[j] = s->labels[--s->nr_labels];
				break;
			}
		err = add_label(s, name, eq + 1, strlen(eq + 1));
	}
	if (!err)
		qsort(s->labels, s->nr_labels, sizeof(*s->labels), cmp_label);
	new_uuid(s->id);
	return err;
}

int push__group(const struct push_opts *o, const struct push_env *env, const struct profile *p,
		struct push_series **series, uint32_t **group_of)
{
	struct push_series *s = NULL;
	char **keys = NULL, tmp[4200];
	uint32_t *of;
	size_t n = 0, i, g;
	int err = -ENOMEM;

	*series = NULL;
	*group_of = of = malloc((p->nr_procs ? p->nr_procs : 1) * sizeof(*of));
	if (!of)
		return -ENOMEM;
	for (i = 0; i < p->nr_procs; i++) {
		const struct profile_process *pr = &p->procs[i];
		const char *key = env->split_services ? group_key(pr, tmp, sizeof(tmp)) : "";

		of[i] = UINT32_MAX;
		if (!pr->nr_samples)
			continue;
		for (g = 0; g < n && strcmp(keys[g], key); g++)
			;
		if (g == n) {
			struct push_series *ns = realloc(s, (n + 1) * sizeof(*s));
			char **nk = realloc(keys, (n + 1) * sizeof(*keys));

			if (ns)
				s = ns;
			if (nk)
				keys = nk;
			if (!ns || !nk || !(keys[n] = strdup(key)))
				goto out_err;
			memset(&s[n], 0, sizeof(s[n]));
			n++;
			if (series_labels(o, env, &s[g], key))
				goto out_err;
		}
		of[i] = (uint32_t)g;
		s[g].nr_samples += pr->nr_samples;
	}
	for (g = 0; g < n; g++)
		free(keys[g]);
	free(keys);
	*series = s;
	return (int)n;

out_err:
	for (g = 0; g < n; g++)
		free(keys[g]);
	free(keys);
	push__series_free(s, n);
	free(of);
	*group_of = NULL;
	return err;
}

int push__encode_request(const struct push_series *s, size_t n, const bool *skip, struct buf *out)
{
	Push__V1__PushRequest req = PUSH__V1__PUSH_REQUEST__INIT;
	Push__V1__RawProfileSeries *ser = calloc(n ? n : 1, sizeof(*ser)),
				   **ser_ptrs = calloc(n ? n : 1, sizeof(*ser_ptrs));
	Push__V1__RawSample *smp = calloc(n ? n : 1, sizeof(*smp)),
			    **smp_ptrs = calloc(n ? n : 1, sizeof(*smp_ptrs));
	Types__V1__LabelPair *lp = NULL, **lp_ptrs = NULL;
	size_t i, j, nl = 0, k = 0, len;
	int err = -ENOMEM;

	for (i = 0; i < n; i++)
		nl += s[i].nr_labels;
	lp = calloc(nl ? nl : 1, sizeof(*lp));
	lp_ptrs = calloc(nl ? nl : 1, sizeof(*lp_ptrs));
	if (!ser || !ser_ptrs || !smp || !smp_ptrs || !lp || !lp_ptrs)
		goto out_free;
	nl = 0;
	for (i = 0; i < n; i++) {
		if (skip && skip[i])
			continue;
		push__v1__raw_profile_series__init(&ser[k]);
		ser[k].labels = &lp_ptrs[nl];
		for (j = 0; j < s[i].nr_labels; j++) {
			types__v1__label_pair__init(&lp[nl]);
			lp[nl].name = s[i].labels[j].name;
			lp[nl].value = s[i].labels[j].value;
			lp_ptrs[nl] = &lp[nl];
			nl++;
		}
		ser[k].n_labels = s[i].nr_labels;
		push__v1__raw_sample__init(&smp[k]);
		smp[k].raw_profile.data = s[i].pprof.data;
		smp[k].raw_profile.len = s[i].pprof.len;
		smp[k].id = (char *)s[i].id;
		smp_ptrs[k] = &smp[k];
		ser[k].samples = &smp_ptrs[k];
		ser[k].n_samples = 1;
		ser_ptrs[k] = &ser[k];
		k++;
	}
	req.series = ser_ptrs;
	req.n_series = k;
	len = push__v1__push_request__get_packed_size(&req);
	if (buf__reserve(out, len ? len : 1))
		goto out_free;
	out->len += push__v1__push_request__pack(&req, out->data + out->len);
	err = 0;
out_free:
	free(ser);
	free(ser_ptrs);
	free(smp);
	free(smp_ptrs);
	free(lp);
	free(lp_ptrs);
	return err;
}

/* Percent-encode s (RFC 3986 unreserved characters kept) onto b. */
static void put_escaped(struct buf *b, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (isalnum(c) || strchr("-._~", c))
			buf__put_bytes(b, s, 1);
		else
			buf__printf(b, "%%%02X", c);
	}
}

char *push__ingest_query(const struct push_series *s, uint64_t from_ns, uint64_t until_ns,
			 uint32_t freq_hz)
{
	struct buf name = { 0 }, q = { 0 };
	const char *service = UNSPECIFIED;
	bool first = true;
	char *out = NULL;
	size_t i;

	for (i = 0; i < s->nr_labels; i++)
		if (!strcmp(s->labels[i].name, "service_name"))
			service = s->labels[i].value;
	buf__printf(&name, "%s{", service);
	for (i = 0; i < s->nr_labels; i++) {
		const char *n = s->labels[i].name;

		if (!strcmp(n, "service_name") || !strcmp(n, "__name__"))
			continue;
		buf__printf(&name, "%s%s=", first ? "" : ",", n);
		/* the legacy name syntax ends a value at ',' or '}' */
		for (const char *v = s->labels[i].value; *v; v++)
			buf__put_bytes(&name, strchr(",{}=", *v) ? "_" : v, 1);
		first = false;
	}
	buf__put_bytes(&name, "}", 2); /* with its NUL */
	buf__put_bytes(&q, "name=", 5);
	if (!name.err)
		put_escaped(&q, (const char *)name.data);
	buf__printf(&q, "&from=%llu&until=%llu&format=pprof&sampleRate=%u&spyName=bpfprof",
		    (unsigned long long)(from_ns / 1000000000ULL),
		    (unsigned long long)((until_ns + 999999999ULL) / 1000000000ULL), freq_hz);
	buf__put_bytes(&q, "", 1);
	if (!name.err && !q.err) {
		out = (char *)q.data;
		q.data = NULL;
	}
	buf__free(&name);
	buf__free(&q);
	return out;
}

/* ---- the queue and the push thread ---- */

struct push_item {
	struct push_item *next;
	char stamp[OUTDIR_STAMP_LEN + 1];
	uint64_t from_ns, until_ns; /* CLOCK_REALTIME */
	struct push_series *series;
	size_t nr_series;
	bool *sent; /* per series (ingest sends them one by one) */
	struct buf otlp; /* OTLP: the gzip ExportProfilesServiceRequest (no series) */
	unsigned int attempts;
};

struct pusher {
	struct push_opts o;
	struct push_env env;
	enum push_api api;
	char *endpoint;
	char *auth_header;
	char *tenant_header;
	char hostname[256];
	CURL *curl;
	struct curl_slist *headers; /* connect or otlp: the API's own, spooled requests' too */
	struct curl_slist *ingest_headers;
	const char *spool_name; /* PUSH_SPOOL_NAME or PUSH_OTLP_SPOOL_NAME */
	char resp[RESP_MAX + 1]; /* the answer's first RESP_MAX bytes, NUL-terminated */
	size_t resp_len;
	bool resp_cut; /* the answer was longer */

	pthread_t thread;
	bool started, joined;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct push_item *head, *tail; /* FIFO, oldest first */
	size_t queued;
	bool stopping;
	uint64_t deadline_ns; /* CLOCK_MONOTONIC; valid when stopping */
	uint64_t retry_at_ns, backoff_ns;
	bool failing; /* the last attempt failed: warn once per outage */
	struct push_counters c;
};

static void item_free(struct push_item *it)
{
	if (!it)
		return;
	push__series_free(it->series, it->nr_series);
	buf__free(&it->otlp);
	free(it->sent);
	free(it);
}

/*
 * Write what is left of it to the output directory as STAMP-push.pb (a
 * PushRequest: curl --data-binary @FILE -H 'Content-Type: application/proto'
 * URL/push.v1.PusherService/Push replays it) or STAMP-push.otlp.gz (the
 * request body as sent: curl -H 'Content-Encoding: gzip' -H 'Content-Type:
 * application/x-protobuf' --data-binary @FILE URL/v1development/profiles),
 * or count it dropped. Called without the lock; frees it.
 */
static void spool_or_drop(struct pusher *ps, struct push_item *it, const char *why)
{
	struct output o = { .fd = -1, .mode = ps->env.spool_mode };
	struct buf b = { 0 };
	char *path = NULL;
	int err = 0;

	if (ps->env.spool_dir &&
	    asprintf(&path, "%s/%s-%s", ps->env.spool_dir, it->stamp, ps->spool_name) >= 0) {
		o.path = path;
		if (ps->api == PUSH_API_OTLP)
			buf__put_bytes(&b, it->otlp.data, it->otlp.len);
		else
			err = push__encode_request(it->series, it->nr_series, it->sent, &b);
		err = err ?: b.err;
		err = err ?: output__open(&o);
		err = err ?: output__commit(&o, &b);
		if (err)
			output__abort(&o);
	} else {
		path = NULL;
		err = -ENOENT;
	}
	pthread_mutex_lock(&ps->lock);
	if (!err)
		ps->c.spooled++;
	else
		ps->c.dropped++;
	pthread_mutex_unlock(&ps->lock);
	if (!err)
		pr_info("push: interval %s spooled to '%s' (%s)\n", it->stamp, path, why);
	else if (path)
		pr_warn("push: interval %s lost: %s, and cannot write '%s': %s\n", it->stamp, why,
			path, strerror(-err));
	else
		pr_warn("push: interval %s dropped: %s, and no --output-dir to spool it to\n",
			it->stamp, why);
	buf__free(&b);
	free(path);
	item_free(it);
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *ctx)
{
	struct pusher *ps = ctx;
	size_t n = size * nmemb, room = RESP_MAX - ps->resp_len;

	memcpy(ps->resp + ps->resp_len, data, n < room ? n : room);
	ps->resp_len += n < room ? n : room;
	ps->resp_cut |= n > room;
	ps->resp[ps->resp_len] = '\0';
	return n;
}

/* libcurl's progress callback: abandon a request once the final flush's time is up. */
static int on_progress(void *ctx, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	struct pusher *ps = ctx;
	bool stop;

	pthread_mutex_lock(&ps->lock);
	stop = ps->stopping && mono_ns() >= ps->deadline_ns;
	pthread_mutex_unlock(&ps->lock);
	return stop;
}

enum send_result { SEND_OK, SEND_RETRY, SEND_REJECTED };

/* One POST; *what gets a description of a failure. */
static enum send_result post(struct pusher *ps, const char *url, struct curl_slist *headers,
			     const void *body, size_t len, char *what, size_t what_len)
{
	long status = 0;
	CURLcode rc;
	size_t i;

	ps->resp_len = 0;
	ps->resp_cut = false;
	ps->resp[0] = '\0';
	curl_easy_setopt(ps->curl, CURLOPT_URL, url);
	curl_easy_setopt(ps->curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(ps->curl, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(ps->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	rc = curl_easy_perform(ps->curl);
	pthread_mutex_lock(&ps->lock);
	ps->c.requests++;
	if (rc == CURLE_OK)
		ps->c.bytes_sent += len;
	pthread_mutex_unlock(&ps->lock);
	if (rc != CURLE_OK) {
		snprintf(what, what_len, "%s", curl_easy_strerror(rc));
		return SEND_RETRY;
	}
	curl_easy_getinfo(ps->curl, CURLINFO_RESPONSE_CODE, &status);
	if (status >= 200 && status < 300)
		return SEND_OK;
	for (i = 0; i < ps->resp_len; i++)
		if ((unsigned char)ps->resp[i] < ' ' || (unsigned char)ps->resp[i] >= 0x7f)
			ps->resp[i] = ' ';
	snprintf(what, what_len, "HTTP %ld%s%.*s", status, ps->resp_len ? ": " : "", ERR_BODY_MAX,
		 ps->resp);
	/* the server may take it later: its own fault, overload, a timeout */
	if (status >= 500 || status == 408 || status == 429)
		return SEND_RETRY;
	return SEND_REJECTED;
}

int push__otlp_partial_success(const void *body, size_t len, int64_t *rejected, char **msg)
{
	Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceResponse *r;
	const Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesPartialSuccess
		*ps;
	int err = 0;

	*rejected = 0;
	*msg = NULL;
	if (!len)
		return 0;
	r = opentelemetry__proto__collector__profiles__v1development__export_profiles_service_response__unpack(
		NULL, len, body);
	if (!r)
		return -EINVAL;
	ps = r->partial_success;
	if (ps) {
		*rejected = ps->rejected_profiles;
		if (ps->error_message && ps->error_message[0] &&
		    !(*msg = strdup(ps->error_message)))
			err = -ENOMEM;
	}
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_response__free_unpacked(
		r, NULL);
	return err;
}

/*
 * An OTLP receiver took the request (2xx): what its answer says of it. A
 * partial success (profiles rejected, or a warning) is reported and
 * counted; retrying cannot change it (specification.md, "Partial Success").
 */
static void otlp_answer(struct pusher *ps, const char *stamp)
{
	int64_t rejected;
	char *msg = NULL;
	int err = ps->resp_cut ?
			  -EINVAL :
			  push__otlp_partial_success(ps->resp, ps->resp_len, &rejected, &msg);

	if (err) {
		pr_warn("push: '%s' took interval %s but its answer (%zu%s bytes) is not an ExportProfilesServiceResponse\n",
			ps->endpoint, stamp, ps->resp_len, ps->resp_cut ? "+" : "");
		return;
	}
	if (rejected || msg) {
		for (char *c = msg; c && *c; c++)
			if ((unsigned char)*c < ' ' || *c == 0x7f)
				*c = ' ';
		pr_warn("push: '%s' took interval %s partly: %lld profiles rejected%s%.*s\n",
			ps->endpoint, stamp, (long long)rejected, msg ? ": " : "", ERR_BODY_MAX,
			msg ? msg : "");
		pthread_mutex_lock(&ps->lock);
		ps->c.otlp_rejected += rejected > 0 ? (uint64_t)rejected : 0;
		pthread_mutex_unlock(&ps->lock);
	}
	free(msg);
}

static enum send_result send_item(struct pusher *ps, struct push_item *it, char *what,
				  size_t what_len)
{
	enum send_result r = SEND_OK;
	struct buf b = { 0 };
	char *url;

	if (ps->api == PUSH_API_OTLP) {
		r = post(ps, ps->endpoint, ps->headers, it->otlp.data, it->otlp.len, what,
			 what_len);
		if (r == SEND_OK)
			otlp_answer(ps, it->stamp);
		return r;
	}
	if (ps->api == PUSH_API_CONNECT) {
		if (push__encode_request(it->series, it->nr_series, it->sent, &b)) {
			snprintf(what, what_len, "out of memory");
			return SEND_RETRY;
		}
		r = post(ps, ps->endpoint, ps->headers, b.data, b.len, what, what_len);
		buf__free(&b);
		return r;
	}
	for (size_t i = 0; i < it->nr_series && r == SEND_OK; i++) {
		char *q;

		if (it->sent[i])
			continue;
		q = push__ingest_query(&it->series[i], it->from_ns, it->until_ns, ps->env.freq_hz);
		if (!q || asprintf(&url, "%s?%s", ps->endpoint, q) < 0) {
			free(q);
			snprintf(what, what_len, "out of memory");
			return SEND_RETRY;
		}
		free(q);
		r = post(ps, url, ps->ingest_headers, it->series[i].pprof.data,
			 it->series[i].pprof.len, what, what_len);
		free(url);
		if (r == SEND_OK)
			it->sent[i] = true;
	}
	return r;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "20261124T120000Z-push.pb": a spooled request (outdir.h's stamp, then the API's spool name). */
static bool is_spool_name(const char *n, const char *spool_name)
{
	for (int i = 0; i < OUTDIR_STAMP_LEN; i++)
		if (i == 8 ? n[i] != 'T' : i == 15 ? n[i] != 'Z' : (n[i] < '0' || n[i] > '9'))
			return false;
	return n[OUTDIR_STAMP_LEN] == '-' && !strcmp(n + OUTDIR_STAMP_LEN + 1, spool_name);
}

/* Read a spooled request: a regular file, not a link, at most SPOOL_MAX bytes. */
static int read_spool(int dirfd, const char *name, struct buf *b)
{
	struct stat st;
	ssize_t n;
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK), err = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > SPOOL_MAX) {
		close(fd);
		return -EINVAL;
	}
	if (buf__reserve(b, (size_t)st.st_size + 1)) {
		close(fd);
		return -ENOMEM;
	}
	while (b->len < (size_t)st.st_size) {
		n = read(fd, b->data + b->len, (size_t)st.st_size - b->len);
		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			break;
		}
		b->len += (size_t)n;
	}
	close(fd);
	return err;
}

/*
 * The server takes profiles again and nothing is queued: send the spooled
 * requests, oldest first, removing each one it takes, until one fails or new
 * intervals are queued (they go first). Connect and OTLP: a spooled file is
 * the request body as it would have been sent. Called without the lock.
 */
static void replay_spool(struct pusher *ps)
{
	char **names = NULL, what[ERR_BODY_MAX + 64];
	size_t n = 0, cap = 0, i;
	struct dirent *de;
	int dfd;
	DIR *d;

	if (ps->api == PUSH_API_INGEST || !ps->env.spool_dir || !(d = opendir(ps->env.spool_dir)))
		return;
	while ((de = readdir(d))) {
		if (!is_spool_name(de->d_name, ps->spool_name))
			continue;
		if (n == cap) {
			char **nn = realloc(names, (cap = cap ? cap * 2 : 16) * sizeof(*nn));

			if (!nn)
				break;
			names = nn;
		}
		if (!(names[n] = strdup(de->d_name)))
			break;
		n++;
	}
	dfd = dirfd(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_name);
	for (i = 0; i < n; i++) {
		struct buf b = { 0 };
		enum send_result r;
		bool busy;

		pthread_mutex_lock(&ps->lock);
		busy = ps->head || (ps->stopping && mono_ns() >= ps->deadline_ns);
		pthread_mutex_unlock(&ps->lock);
		if (busy)
			break;
		if (read_spool(dfd, names[i], &b)) {
			buf__free(&b);
			continue; /* pruned by --keep meanwhile, or not ours */
		}
		r = post(ps, ps->endpoint, ps->headers, b.data, b.len, what, sizeof(what));
		buf__free(&b);
		if (r == SEND_OK && ps->api == PUSH_API_OTLP)
			otlp_answer(ps, names[i]);
		if (r == SEND_OK) {
			if (unlinkat(dfd, names[i], 0))
				pr_warn("push: cannot remove the replayed '%s/%s': %s\n",
					ps->env.spool_dir, names[i], strerror(errno));
			pthread_mutex_lock(&ps->lock);
			ps->c.replayed++;
			pthread_mutex_unlock(&ps->lock);
			pr_info("push: spooled '%s' replayed\n", names[i]);
		} else if (r == SEND_REJECTED) {
			char refused[NAME_MAX + 1];

			snprintf(refused, sizeof(refused), "%s.refused", names[i]);
			pr_warn("push: '%s' refused the spooled '%s/%s': %s; renamed '%s'\n",
				ps->endpoint, ps->env.spool_dir, names[i], what, refused);
			renameat(dfd, names[i], dfd, refused);
		} else {
			pr_info("push: replaying '%s': %s; later\n", names[i], what);
			break;
		}
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(d);
}

static void timed_wait(struct pusher *ps, uint64_t until_ns)
{
	struct timespec ts = { .tv_sec = (time_t)(until_ns / 1000000000ULL),
			       .tv_nsec = (long)(until_ns % 1000000000ULL) };

	pthread_cond_timedwait(&ps->cond, &ps->lock, &ts);
}

static void *push_thread(void *arg)
{
	struct pusher *ps = arg;
	char what[ERR_BODY_MAX + 64];

	pthread_mutex_lock(&ps->lock);
	for (;;) {
		struct push_item *it;
		enum send_result r;
		uint64_t now = mono_ns(), t0;
		bool retry, replay;

		if (ps->stopping && (!ps->head || now >= ps->deadline_ns))
			break;
		if (!ps->head) {
			pthread_cond_wait(&ps->cond, &ps->lock);
			continue;
		}
		if (now < ps->retry_at_ns) {
			timed_wait(ps, ps->stopping && ps->deadline_ns < ps->retry_at_ns ?
					       ps->deadline_ns :
					       ps->retry_at_ns);
			continue;
		}
		it = ps->head;
		ps->head = it->next;
		if (!ps->head)
			ps->tail = NULL;
		ps->queued--;
		retry = it->attempts++ > 0;
		if (retry)
			ps->c.retried++;
		pthread_mutex_unlock(&ps->lock);

		t0 = mono_ns();
		r = send_item(ps, it, what, sizeof(what));
		now = mono_ns();

		pthread_mutex_lock(&ps->lock);
		ps->c.thread_cpu_ns = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
		if (r == SEND_OK) {
			ps->c.pushed++;
			ps->backoff_ns = 0;
			ps->retry_at_ns = 0;
			if (ps->failing)
				pr_warn("push: '%s' takes profiles again; interval %s pushed (attempt %u)\n",
					ps->endpoint, it->stamp, it->attempts);
			else
				pr_info("push: interval %s pushed (%zu %s, %.0f ms)\n", it->stamp,
					it->nr_series ? it->nr_series : it->otlp.len,
					it->nr_series ? "series" : "bytes",
					(double)(now - t0) / 1e6);
			ps->failing = false;
			/* at the end too, within --push-timeout */
			replay = !ps->head && (!ps->stopping || now < ps->deadline_ns);
			pthread_mutex_unlock(&ps->lock);
			item_free(it);
			if (replay)
				replay_spool(ps);
			pthread_mutex_lock(&ps->lock);
			continue;
		}
		if (r == SEND_REJECTED) {
			/* a request the server refuses as such is refused again: keep it on disk */
			pthread_mutex_unlock(&ps->lock);
			pr_warn("push: '%s' refused interval %s: %s\n", ps->endpoint, it->stamp,
				what);
			spool_or_drop(ps, it, "refused by the server");
			pthread_mutex_lock(&ps->lock);
			continue;
		}
		ps->backoff_ns = ps->backoff_ns ? ps->backoff_ns * 2 : BACKOFF_MIN_NS;
		if (ps->backoff_ns > BACKOFF_MAX_NS)
			ps->backoff_ns = BACKOFF_MAX_NS;
		ps->retry_at_ns = now + ps->backoff_ns;
		if (!ps->failing)
			pr_warn("push: '%s': %s; retrying with backoff, sampling goes on\n",
				ps->endpoint, what);
		else
			pr_info("push: interval %s, attempt %u: %s; next in %.0f s (%zu queued)\n",
				it->stamp, it->attempts, what, (double)ps->backoff_ns / 1e9,
				ps->queued + 1);
		ps->failing = true;
		/* back to the head: the oldest goes first, and a full queue spools it first */
		it->next = ps->head;
		ps->head = it;
		if (!ps->tail)
			ps->tail = it;
		ps->queued++;
		while (ps->queued > (size_t)ps->o.queue_max) {
			struct push_item *old = ps->head;

			ps->head = old->next;
			if (!ps->head)
				ps->tail = NULL;
			ps->queued--;
			pthread_mutex_unlock(&ps->lock);
			spool_or_drop(ps, old, "push queue full");
			pthread_mutex_lock(&ps->lock);
		}
	}
	/* out of time (or nothing left): what is still queued goes to disk */
	while (ps->head) {
		struct push_item *it = ps->head;

		ps->head = it->next;
		ps->queued--;
		pthread_mutex_unlock(&ps->lock);
		spool_or_drop(ps, it, "not pushed before the end");
		pthread_mutex_lock(&ps->lock);
	}
	ps->tail = NULL;
	ps->c.thread_cpu_ns = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
	pthread_mutex_unlock(&ps->lock);
	return NULL;
}

static int setup_curl(struct pusher *ps)
{
	char ua[64];
	long timeout_ms = (long)(ps->o.timeout_s * 1000);
	struct curl_slist *h = NULL, *hi = NULL;

	ps->curl = curl_easy_init();
	if (!ps->curl)
		return -ENOMEM;
	snprintf(ua, sizeof(ua), "bpfprof/%s", "0.1.0");
	curl_easy_setopt(ps->curl, CURLOPT_USERAGENT, ua);
	curl_easy_setopt(ps->curl, CURLOPT_NOSIGNAL,
			 1L); /* a thread: no SIGALRM for DNS timeouts */
	curl_easy_setopt(ps->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(ps->curl, CURLOPT_FOLLOWLOCATION,
			 0L); /* credentials never follow a redirect */
	curl_easy_setopt(ps->curl, CURLOPT_CONNECTTIMEOUT_MS,
			 CONNECT_TIMEOUT_MS < timeout_ms ? CONNECT_TIMEOUT_MS : timeout_ms);
	curl_easy_setopt(ps->curl, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(ps->curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(ps->curl, CURLOPT_WRITEDATA, ps);
	curl_easy_setopt(ps->curl, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(ps->curl, CURLOPT_XFERINFODATA, ps);
	curl_easy_setopt(ps->curl, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(ps->curl, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(ps->curl, CURLOPT_SSL_VERIFYHOST, 2L);
	if (ps->o.ca_file && curl_easy_setopt(ps->curl, CURLOPT_CAINFO, ps->o.ca_file) != CURLE_OK)
		return -EINVAL;
	if (ps->api == PUSH_API_OTLP) {
		/* OTLP/HTTP binary protobuf, gzip (opentelemetry-proto docs/specification.md) */
		h = curl_slist_append(h, "Content-Type: application/x-protobuf");
		h = h ? curl_slist_append(h, "Content-Encoding: gzip") : NULL;
	} else {
		/* Connect's unary protocol with the binary codec (connectrpc.com/docs/protocol) */
		h = curl_slist_append(h, "Content-Type: application/proto");
		h = h ? curl_slist_append(h, "Connect-Protocol-Version: 1") : NULL;
	}
	hi = curl_slist_append(hi, "Content-Type: application/octet-stream");
	if (ps->auth_header) {
		h = h ? curl_slist_append(h, ps->auth_header) : NULL;
		hi = hi ? curl_slist_append(hi, ps->auth_header) : NULL;
	}
	if (ps->tenant_header) {
		h = h ? curl_slist_append(h, ps->tenant_header) : NULL;
		hi = hi ? curl_slist_append(hi, ps->tenant_header) : NULL;
	}
	/* no "Expect: 100-continue" round trip before a body */
	h = h ? curl_slist_append(h, "Expect:") : NULL;
	hi = hi ? curl_slist_append(hi, "Expect:") : NULL;
	ps->headers = h;
	ps->ingest_headers = hi;
	return h && hi ? 0 : -ENOMEM;
}

int push__new(const struct push_opts *o, const struct push_env *env, struct pusher **out)
{
	struct pusher *ps;
	pthread_condattr_t ca;
	sigset_t all, old;
	struct utsname u;
	struct stat st;
	int err = -ENOMEM;

	*out = NULL;
	ps = calloc(1, sizeof(*ps));
	if (!ps)
		return -ENOMEM;
	ps->o = *o;
	ps->env = *env;
	if (ps->o.queue_max < 1)
		ps->o.queue_max = PUSH_DEFAULT_QUEUE;
	if (!(ps->o.timeout_s > 0))
		ps->o.timeout_s = PUSH_DEFAULT_TIMEOUT_S;
	pthread_mutex_init(&ps->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&ps->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (!ps->env.hostname) {
		if (!uname(&u))
			snprintf(ps->hostname, sizeof(ps->hostname), "%s", u.nodename);
		ps->env.hostname = ps->hostname;
	}
	ps->env.default_service = push__default_service(&ps->env);
	ps->api = push__api_for(o->url, o->api);
	ps->endpoint = push__endpoint(o->url, ps->api);
	ps->spool_name = ps->api == PUSH_API_OTLP ? PUSH_OTLP_SPOOL_NAME : PUSH_SPOOL_NAME;
	if (!ps->env.default_service || !ps->endpoint)
		goto out_free;
	if (o->auth_file) {
		err = push__read_auth(o->auth_file, &ps->auth_header);
		if (err)
			goto out_free;
	}
	if (o->ca_file) {
		int fd = open(o->ca_file, O_RDONLY | O_CLOEXEC);

		if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
			err = fd < 0 ? -errno : -EINVAL;
			pr_warn("cannot read --push-ca '%s': %s\n", o->ca_file,
				fd < 0 ? strerror(-err) : "not a regular file");
			if (fd >= 0)
				close(fd);
			goto out_free;
		}
		close(fd);
	}
	err = -ENOMEM;
	if (o->tenant && asprintf(&ps->tenant_header, "X-Scope-OrgID: %s", o->tenant) < 0) {
		ps->tenant_header = NULL;
		goto out_free;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		pr_warn("push: libcurl failed to initialize\n");
		goto out_free;
	}
	err = setup_curl(ps);
	if (err) {
		pr_warn("push: cannot set up libcurl: %s\n", strerror(-err));
		goto out_free;
	}
	/* signals stay with the sampling thread */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = -pthread_create(&ps->thread, NULL, push_thread, ps);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pr_warn("push: cannot start its thread: %s\n", strerror(-err));
		goto out_free;
	}
	ps->started = true;
	pr_info("push: to '%s' (%s API), service_name %s, queue %d intervals, spool %s\n",
		ps->endpoint,
		ps->api == PUSH_API_INGEST ? "ingest" :
		ps->api == PUSH_API_OTLP   ? "OTLP" :
					     "Connect",
		o->service_name					? o->service_name :
		env->split_services && ps->api != PUSH_API_OTLP ? "per container/cgroup" :
								  ps->env.default_service,
		ps->o.queue_max, env->spool_dir ? env->spool_dir : "none (drop past the queue)");
	*out = ps;
	return 0;

out_free:
	push__free(ps);
	return err;
}

/* Append src as one gzip member (zlib's deflate with a gzip header) to out. */
static int gzip_append(struct buf *out, const uint8_t *src, size_t len)
{
	z_stream zs = { 0 };
	int zerr;

	if (len > UINT32_MAX)
		return -E2BIG;
	if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	if (buf__reserve(out, deflateBound(&zs, (uLong)len))) {
		deflateEnd(&zs);
		return -ENOMEM;
	}
	zs.next_in = (Bytef *)src;
	zs.avail_in = (uInt)len;
	zs.next_out = out->data + out->len;
	zs.avail_out = (uInt)(out->cap - out->len > UINT32_MAX ? UINT32_MAX : out->cap - out->len);
	zerr = deflate(&zs, Z_FINISH);
	out->len = (size_t)(zs.next_out - out->data);
	deflateEnd(&zs);
	return zerr == Z_STREAM_END ? 0 : -EINVAL;
}

int push__otlp_body(const struct push_opts *o, const struct push_env *env, const struct profile *p,
		    size_t max_bytes, struct buf *out)
{
	struct otlp_opts oo = { .hostname = env->hostname,
				.service_name = o->service_name ? o->service_name :
								  env->default_service,
				.attrs = o->labels,
				.nr_attrs = (size_t)o->nr_labels };
	struct buf raw = { 0 };
	int err = write_otlp(p, &oo, &raw);

	if (!err && raw.len > max_bytes) {
		pr_warn("push: the interval's OTLP request is %zu bytes (%.1f MiB), over the %zu an OTLP receiver takes (opentelemetry-proto's recommended limit, 64 MiB): not sent; a shorter --interval makes smaller ones\n",
			raw.len, (double)raw.len / (1 << 20), max_bytes);
		err = -E2BIG;
	}
	err = err ?: gzip_append(out, raw.data, raw.len);
	buf__free(&raw);
	return err;
}

/* OTLP: the interval's request in it->otlp. Returns 1, 0 when nothing was sampled, or -errno. */
static int prepare_otlp(struct pusher *ps, const struct profile *p, struct push_item *it)
{
	if (!p->nr_samples && !p->nr_offcpu_blocks)
		return 0;
	return push__otlp_body(&ps->o, &ps->env, p, OTLP_MAX_REQUEST_BYTES, &it->otlp) ?: 1;
}

/* Pyroscope: one gzip pprof per service (push__group). Returns the number of series, or -errno. */
static int prepare_series(struct pusher *ps, const struct profile *p, struct push_item *it)
{
	uint32_t *group_of = NULL;
	bool *mask = NULL;
	size_t i, g;
	int n, err = -ENOMEM;

	n = push__group(&ps->o, &ps->env, p, &it->series, &group_of);
	if (n <= 0)
		return n;
	it->nr_series = (size_t)n;
	it->sent = calloc((size_t)n, sizeof(*it->sent));
	mask = calloc(p->nr_procs ? p->nr_procs : 1, sizeof(*mask));
	if (!it->sent || !mask)
		goto out;
	for (g = 0; g < it->nr_series; g++) {
		for (i = 0; i < p->nr_procs; i++)
			mask[i] = group_of[i] == g;
		err = write_pprof_procs(p, mask, &it->series[g].pprof);
		if (err)
			goto out;
	}
	err = n;
out:
	free(mask);
	free(group_of);
	return err;
}

int push__submit(struct pusher *ps, const struct profile *p)
{
	uint64_t t0 = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
	struct push_item *it, *evicted = NULL;
	int n, err = -ENOMEM;
	size_t g, pprof_bytes = 0;

	it = calloc(1, sizeof(*it));
	if (!it)
		goto out_drop;
	outdir__stamp(p->start_realtime_ns, it->stamp);
	it->from_ns = p->start_realtime_ns;
	it->until_ns =
		p->start_realtime_ns + (p->end_ns > p->start_ns ? p->end_ns - p->start_ns : 0);
	n = ps->api == PUSH_API_OTLP ? prepare_otlp(ps, p, it) : prepare_series(ps, p, it);
	if (n < 0) {
		err = n;
		goto out_drop;
	}
	if (n == 0) {
		/* nothing sampled: no request (Pyroscope would store an empty profile) */
		pr_info("push: interval %s had no samples; nothing to push\n", it->stamp);
		item_free(it);
		return 0;
	}
	pprof_bytes = it->otlp.len;
	for (g = 0; g < it->nr_series; g++)
		pprof_bytes += it->series[g].pprof.len;

	pthread_mutex_lock(&ps->lock);
	ps->c.submitted++;
	ps->c.pprof_bytes += pprof_bytes;
	ps->c.prepare_ns += cpu_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
	if (ps->queued >= (size_t)ps->o.queue_max) {
		evicted = ps->head;
		ps->head = evicted->next;
		if (!ps->head)
			ps->tail = NULL;
		ps->queued--;
	}
	if (ps->tail)
		ps->tail->next = it;
	else
		ps->head = it;
	ps->tail = it;
	ps->queued++;
	pthread_cond_signal(&ps->cond);
	pthread_mutex_unlock(&ps->lock);
	if (evicted)
		spool_or_drop(ps, evicted, "push queue full");
	return 0;

out_drop:
	pr_warn("push: cannot prepare interval: %s; dropped\n",
		err == -E2BIG ? "too large for the receiver" : strerror(-err));
	item_free(it);
	pthread_mutex_lock(&ps->lock);
	ps->c.submitted++;
	ps->c.dropped++;
	pthread_mutex_unlock(&ps->lock);
	return err;
}

void push__finish(struct pusher *ps)
{
	if (!ps || !ps->started || ps->joined)
		return;
	pthread_mutex_lock(&ps->lock);
	if (ps->queued)
		pr_info("push: %zu intervals queued; pushing them for at most %.1f s\n", ps->queued,
			ps->o.timeout_s);
	ps->stopping = true;
	ps->deadline_ns = mono_ns() + (uint64_t)(ps->o.timeout_s * 1e9);
	pthread_cond_signal(&ps->cond);
	pthread_mutex_unlock(&ps->lock);
	pthread_join(ps->thread, NULL);
	ps->joined = true;
}

void push__free(struct pusher *ps)
{
	if (!ps)
		return;
	push__finish(ps);
	while (ps->head) {
		struct push_item *it = ps->head;

		ps->head = it->next;
		item_free(it);
	}
	if (ps->curl)
		curl_easy_cleanup(ps->curl);
	curl_slist_free_all(ps->headers);
	curl_slist_free_all(ps->ingest_headers);
	if (ps->auth_header) {
		explicit_bzero(ps->auth_header, strlen(ps->auth_header));
		free(ps->auth_header);
	}
	free(ps->tenant_header);
	free(ps->endpoint);
	free(ps->env.default_service);
	pthread_mutex_destroy(&ps->lock);
	pthread_cond_destroy(&ps->cond);
	free(ps);
}

void push__counters(struct pusher *ps, struct push_counters *c)
{
	pthread_mutex_lock(&ps->lock);
	*c = ps->c;
	pthread_mutex_unlock(&ps->lock);
}

void push__report(struct pusher *ps, FILE *f)
{
	struct push_counters c;
	char rejected[64] = "";

	push__counters(ps, &c);
	if (ps->api == PUSH_API_OTLP)
		snprintf(rejected, sizeof(rejected), "; %llu profiles rejected by the receiver",
			 (unsigned long long)c.otlp_rejected);
	fprintf(f,
		"bpfprof: push: %llu intervals: %llu pushed, %llu spooled, %llu dropped; %llu retried; "
		"%llu replayed from the spool; "
		"%llu requests, %llu bytes sent (%s %llu bytes)%s; CPU: push thread %.1f ms, preparing %.1f ms\n",
		(unsigned long long)c.submitted, (unsigned long long)c.pushed,
		(unsigned long long)c.spooled, (unsigned long long)c.dropped,
		(unsigned long long)c.retried, (unsigned long long)c.replayed,
		(unsigned long long)c.requests, (unsigned long long)c.bytes_sent,
		ps->api == PUSH_API_OTLP ? "OTLP" : "pprof", (unsigned long long)c.pprof_bytes,
		rejected, (double)c.thread_cpu_ns / 1e6, (double)c.prepare_ns / 1e6);
}

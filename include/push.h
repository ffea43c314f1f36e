/* SPDX-License-Identifier: MIT */
/*
 * --push: ship each interval's profile to a Grafana Pyroscope server (or
 * Grafana Alloy's pyroscope.receive_http, which takes the same requests).
 *
 * Three endpoints: two of Pyroscope, as its server API page documents them
 * (docs/sources/reference-server-api/index.md in github.com/grafana/pyroscope):
 *   - Connect API (default): POST BASE/push.v1.PusherService/Push, body a
 *     protobuf push.v1.PushRequest (proto/pyroscope/push/v1/push.proto,
 *     encoded by protoc-c's generated code), "Content-Type: application/proto",
 *     "Connect-Protocol-Version: 1"; one RawProfileSeries per service, each
 *     with its labels and one RawSample holding the gzip pprof bytes.
 *   - legacy ingest: POST .../ingest?name=SERVICE{k=v,...}&from=S&until=S
 *     &format=pprof&sampleRate=F&spyName=bpfprof, body the gzip pprof bytes
 *     of one service (one request per service).
 * and OpenTelemetry's (--push-api otlp), for a Collector or any OTLP/HTTP
 * receiver of profiles (opentelemetry-proto v1.11.0 docs/specification.md,
 * "OTLP/HTTP"): POST URL/v1development/profiles (the path appended when the
 * URL has none, as the SDKs do with OTEL_EXPORTER_OTLP_ENDPOINT), body the
 * ExportProfilesServiceRequest of the whole interval (write_otlp.h),
 * "Content-Type: application/x-protobuf", "Content-Encoding: gzip"; the
 * answer's partial_success (rejected profiles, message) is read and
 * reported. A request over OTLP_MAX_REQUEST_BYTES is refused (dropped with
 * a message naming the size), as a receiver would refuse it.
 *
 * The sampling thread only builds the profiles (write_pprof per service)
 * and queues them (push__submit, never blocking on the network); a push
 * thread sends them through libcurl, retries failures with exponential
 * backoff (1 s doubling to 30 s, shared by the queue: a down server costs
 * one attempt per backoff step, not one per queued interval), and when the
 * queue is full writes the oldest interval to the output directory as
 * STAMP-push.pb (the PushRequest bytes: replayable with curl) or, without
 * one, drops it (OTLP: STAMP-push.otlp.gz, the gzip request body). Every
 * submitted interval ends counted exactly once as
 * pushed, spooled or dropped. With the Connect API and OTLP, once the server takes
 * profiles again and the queue is empty, the spooled requests in the
 * directory (oldest first, earlier runs' too) are sent and removed
 * ("replayed"); one the server refuses is renamed STAMP-push.pb.refused.
 */
#ifndef BPFPROF_PUSH_H
#define BPFPROF_PUSH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "buf.h"
#include "profile.h"

#define PUSH_MAX_LABELS 16 /* --label */
#define PUSH_DEFAULT_QUEUE 8 /* intervals held in memory */
#define PUSH_DEFAULT_TIMEOUT_S 10.0 /* one request, and the flush at the end */
#define PUSH_CONNECT_PATH "/push.v1.PusherService/Push"
#define PUSH_SPOOL_NAME "push.pb" /* spooled as OUTPUT_DIR/STAMP-push.pb */
#define PUSH_OTLP_SPOOL_NAME "push.otlp.gz" /* OTLP: OUTPUT_DIR/STAMP-push.otlp.gz */
/* Pyroscope's profile name for CPU profiles (profile type process_cpu:cpu:nanoseconds:cpu:nanoseconds) */
#define PUSH_PROFILE_NAME "process_cpu"

enum push_api {
	PUSH_API_AUTO = 0, /* ingest when the URL path ends in /ingest, else connect */
	PUSH_API_CONNECT,
	PUSH_API_INGEST,
	PUSH_API_OTLP, /* OpenTelemetry OTLP/HTTP profiles */
};

/* What the command line says (user/cli.c fills it; strings borrowed from argv). */
struct push_opts {
	const char *url; /* --push; NULL: no push */
	enum push_api api; /* --push-api */
	const char *auth_file; /* --push-auth-file */
	const char *tenant; /* --tenant: X-Scope-OrgID */
	const char *ca_file; /* --push-ca: PEM bundle instead of the system CAs */
	const char *service_name; /* --service-name; NULL: inferred (push__service_name) */
	const char *labels[PUSH_MAX_LABELS]; /* --label "key=value" */
	int nr_labels;
	int queue_max; /* --push-queue: intervals held in memory, >= 1 */
	double timeout_s; /* --push-timeout */
};

/* Everything the pusher needs besides the options; borrowed for its lifetime. */
struct push_env {
	const char *spool_dir; /* --output-dir, or NULL: past the queue, drop */
	unsigned int spool_mode; /* permission bits of spooled files */
	bool split_services; /* -a: one series per container / cgroup */
	const char *command; /* the command's argv[0] (service_name: its base name), or NULL */
	uint32_t pid; /* the one -p process ("pid" label), or 0 */
	uint32_t first_pid; /* the first -p process (service_name: its comm), or 0 */
	const char *hostname; /* "hostname" label; NULL: uname -n */
	const char *proc_root; /* "/proc" (tests: a fixture) */
	uint32_t freq_hz; /* sampleRate for the ingest endpoint */
	char *default_service; /* set by push__new: service_name when not split */
};

/* One label of a series; strings owned by the series. */
struct push_label {
	char *name;
	char *value;
};

/* One service's share of an interval: its labels and its pprof bytes. */
struct push_series {
	struct push_label *labels; /* sorted by name, names unique */
	size_t nr_labels;
	struct buf pprof; /* gzip pprof profile */
	uint64_t nr_samples;
	char id[37]; /* RawSample.ID: a random UUID */
};

struct push_counters {
	uint64_t submitted; /* intervals queued */
	uint64_t pushed; /* intervals the server accepted (2xx) */
	uint64_t retried; /* attempts after a failed one */
	uint64_t spooled; /* intervals written to the output directory instead */
	uint64_t dropped; /* intervals lost: no output directory, or it failed */
	uint64_t replayed; /* spooled requests (this run's or older) sent once the server took profiles again */
	uint64_t requests; /* HTTP requests made */
	uint64_t bytes_sent; /* request bodies sent, bytes */
	uint64_t pprof_bytes; /* gzip pprof bytes submitted (OTLP: gzip request bytes) */
	uint64_t otlp_rejected; /* profiles an OTLP receiver's partial_success says it rejected */
	uint64_t thread_cpu_ns; /* CPU time of the push thread */
	uint64_t prepare_ns; /* CPU time push__submit took in the caller (pprof per service) */
};

struct pusher;

/*
 * Check the options that need no network (URL, labels, API) and read the
 * auth file, then start the push thread. Call before sampling: a missing,
 * non-regular, world-readable or empty auth file, or one with control
 * characters, fails here with a message naming the file. Returns 0 and
 * *out, or -errno (-ENOENT, -EACCES, -EPERM for world-readable, -EINVAL for
 * empty/malformed, -ENOMEM). Free with push__free.
 */
int push__new(const struct push_opts *o, const struct push_env *env, struct pusher **out);

/*
 * Queue the interval's profile (symbolized): builds one gzip pprof per
 * service in the caller's thread, then returns; the network is never waited
 * for. A full queue sends its oldest interval to the spool directory (or
 * drops it). Returns 0, or -ENOMEM (the interval counted as dropped).
 */
int push__submit(struct pusher *ps, const struct profile *p);

/*
 * Stop: push what is queued for at most timeout_s (--push-timeout), then
 * spool or drop the rest, and join the thread. Safe to call twice.
 */
void push__finish(struct pusher *ps);
void push__free(struct pusher *ps);
/* A snapshot of the counters (any time, any thread). */
void push__counters(struct pusher *ps, struct push_counters *c);
/* One summary line: "push: N pushed, N retried, N spooled, N dropped; ..." */
void push__report(struct pusher *ps, FILE *f);

/* ---- pieces with no thread or network, public for the unit tests ---- */

/*
 * Read an auth file: its first line is "user:password" (basic auth), or
 * "Bearer TOKEN", or a bare TOKEN (bearer). Refused: a file that is not
 * regular, is readable by others (mode & 0004), is larger than 4 KiB, is
 * empty, or holds control characters. *header gets the whole
 * "Authorization: ..." header line (malloc'd, caller frees). Returns 0 or
 * -errno with the reason printed, naming the file.
 */
int push__read_auth(const char *path, char **header);

/* The API the options select for url (PUSH_API_AUTO resolved). */
enum push_api push__api_for(const char *url, enum push_api api);
/*
 * The URL to POST to for url and api: connect: url + PUSH_CONNECT_PATH
 * unless it already ends with it; ingest: url as given; otlp: url +
 * OTLP_PROFILES_PATH when the URL has no path (or only "/"), else url as
 * given. NULL on ENOMEM.
 */
char *push__endpoint(const char *url, enum push_api api);

/*
 * Check one --label: "key=value", key matching [a-zA-Z_][a-zA-Z0-9_]*, not
 * starting with "__" and not one bpfprof sets (service_name, hostname, pid,
 * cgroup, container_id), value 1-1024 bytes with no control character.
 * Returns 0 or -EINVAL with *why set to a static explanation.
 */
int push__check_label(const char *kv, const char **why);

/*
 * The series of one interval: which process goes to which service, and the
 * labels of each. Without split, one series with every process. With split
 * (-a), one per container id, else per cgroup path, processes with neither
 * in one "ebpf/unspecified" series. service_name: opts->service_name, else
 * split: "ebpf/container/ID12" (first 12 characters of the id, as docker
 * shows it), "ebpf/cgroup/PATH" (leading '/' dropped), "ebpf/unspecified"
 * for the root cgroup or none (the name Pyroscope's eBPF agent gives
 * processes it has no target for); not split: env->default_service
 * (push__default_service).
 * Labels: __name__=process_cpu, service_name, hostname, container_id or
 * cgroup, pid (env->pid), then --label pairs; sorted by name.
 * *group_of gets, per process of p, its series index (caller frees).
 * *series gets nr series with labels set and pprof empty (free with
 * push__series_free). Only processes with samples are grouped; returns the
 * number of series (0 when p has no samples), or -ENOMEM.
 */
int push__group(const struct push_opts *o, const struct push_env *env, const struct profile *p,
		struct push_series **series, uint32_t **group_of);
void push__series_free(struct push_series *s, size_t n);

/*
 * service_name when the series are not split and --service-name is not
 * given: the base name of env->command, else the comm of env->first_pid (read
 * from PROC_ROOT/PID/comm), else "ebpf/unspecified"; characters other than
 * [A-Za-z0-9_.-/] become '_' (what Pyroscope's ingest endpoint accepts in
 * a service name). malloc'd, NULL on ENOMEM.
 */
char *push__default_service(const struct push_env *env);

/*
 * Check a --push URL: http:// or https://, a host, no user:password (the
 * credentials go in --push-auth-file), no query or fragment. Returns 0 or
 * -EINVAL with *why set.
 */
int push__check_url(const char *url, const char **why);

/*
 * Append the protobuf push.v1.PushRequest for these series to out, leaving
 * out those with skip[i] set (skip may be NULL). Returns 0 or -ENOMEM.
 */
int push__encode_request(const struct push_series *s, size_t n, const bool *skip, struct buf *out);
/*
 * The query string of a legacy ingest request for one series (after '?'):
 * name=SERVICE{k=v,...} (labels but __name__ and service_name, URL-encoded),
 * from and until in Unix seconds, format=pprof, sampleRate, spyName=bpfprof.
 * malloc'd; NULL on ENOMEM.
 */
char *push__ingest_query(const struct push_series *s, uint64_t from_ns, uint64_t until_ns,
			 uint32_t freq_hz);

/*
 * The body of an OTLP request for interval profile p (symbolized): the gzip
 * ExportProfilesServiceRequest (write_otlp.h) with host.name
 * env->hostname, service.name o->service_name or env->default_service and
 * the --label pairs on its resource, appended to out. Refused with -E2BIG
 * and a message naming the size when the request is over max_bytes
 * (OTLP_MAX_REQUEST_BYTES for --push). Returns 0 or -errno.
 */
int push__otlp_body(const struct push_opts *o, const struct push_env *env, const struct profile *p,
		    size_t max_bytes, struct buf *out);

/*
 * Read an OTLP receiver's answer body (ExportProfilesServiceResponse,
 * binary): *rejected and *msg (malloc'd, NULL when empty; caller frees)
 * from its partial_success. An empty body is full success. Returns 0, or
 * -EINVAL when the body does not decode (garbage), -ENOMEM.
 */
int push__otlp_partial_success(const void *body, size_t len, int64_t *rejected, char **msg);

#endif /* BPFPROF_PUSH_H */

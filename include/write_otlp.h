/* SPDX-License-Identifier: MIT */
/*
 * OpenTelemetry OTLP profiles writer (.otlp, and --push-api otlp's body): a
 * binary opentelemetry.proto.collector.profiles.v1development.
 * ExportProfilesServiceRequest, encoded with protobuf-c from the vendored
 * opentelemetry-proto v1.11.0 files (proto/opentelemetry/), not compressed
 * (protoc --decode reads it as it is).
 *
 * One ResourceProfiles (host.name, os.type, service.name and extra
 * attributes), one ScopeProfiles ("bpfprof"), one Profile per sample type:
 * CPU samples (samples/count, period_type cpu/nanoseconds, period
 * 1e9/frequency, as the OpenTelemetry eBPF profiler fills it), then with
 * --off-cpu the blocked time (off_cpu/nanoseconds); a traced profile
 * (bpfprof xray, p->view PROFILE_VIEW_VALUE_US) has cpu/nanoseconds of self
 * time instead of samples, and no period. The profiles share one
 * ProfilesDictionary whose tables all start with the zero value at index 0.
 * Samples carry their process's attributes (process.pid,
 * process.executable.name, process.linux.cgroup, container.id), mappings
 * their GNU build-id (process.executable.build_id.gnu), locations
 * profile.frame.type. The model aggregates samples, so no per-sample
 * timestamps are written.
 * Ref: github.com/open-telemetry/opentelemetry-proto v1.11.0
 * opentelemetry/proto/profiles/v1development/profiles.proto; attribute
 * names from the OpenTelemetry semantic conventions (process, container,
 * host, os, profile registries).
 */
#ifndef BPFPROF_WRITE_OTLP_H
#define BPFPROF_WRITE_OTLP_H

#include <stddef.h>
#include "buf.h"
#include "profile.h"

/* The largest request a receiver takes by default (opentelemetry-proto docs/specification.md) */
#define OTLP_MAX_REQUEST_BYTES (64u << 20)
/* The OTLP/HTTP path of profiles, after the Collector's base URL */
#define OTLP_PROFILES_PATH "/v1development/profiles"

struct otlp_opts {
	const char *hostname; /* host.name; NULL: uname -n */
	const char *service_name; /* service.name; NULL: left out */
	const char *const *attrs; /* more resource attributes, "key=value" (--label), borrowed */
	size_t nr_attrs;
};

/*
 * Append the encoded request for p (symbolized: p->locs and every stack's
 * locs set) to out; o may be NULL. Returns 0, -ENOMEM, or -EINVAL when a
 * stack has no resolved locations.
 */
int write_otlp(const struct profile *p, const struct otlp_opts *o, struct buf *out);

#endif /* BPFPROF_WRITE_OTLP_H */

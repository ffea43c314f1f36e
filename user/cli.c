// SPDX-License-Identifier: MIT
/*
 * Option parsing with argp (glibc), after retsnoop's env.c and bcc's
 * profile.c: a table, long-only ids from 1000, strtol/strtod with range
 * checks, and argp_error (exit 2 with a usage hint) for anything invalid.
 */
#include <argp.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h>
#include "bpfprof_abi.h"
#include "cgroup.h"
#include "cli.h"
#include "log.h"
#include "sym_jitdump.h"
#include "unwind_cache.h"

#define BPFPROF_VERSION "0.1.0"

const char *argp_program_version = "bpfprof " BPFPROF_VERSION;
const char *argp_program_bug_address = "<https://github.com/bpfprof/bpfprof/issues>";

static const char doc[] =
	"bpfprof: sample CPU stacks with BPF and write profiles for pprof and perf.\n"
	"\n"
	"EXAMPLES:\n"
	"  sudo bpfprof -p 1234 -d 30 -o out.prof      # one process, 30 s, for go tool pprof\n"
	"  sudo bpfprof -p 1234,5678 -o out.prof       # several processes until Ctrl-C\n"
	"  sudo bpfprof -a -d 10 -F 999 -o all.prof    # every process on every CPU\n"
	"  sudo bpfprof -F 999 -o run.prof -- ./myprog args   # run a command under the profiler\n"
	"  sudo bpfprof -a -o all.prof -- sleep 5      # whole machine while the command runs\n"
	"  sudo bpfprof -a --cgroup system.slice/nginx.service -d 60 -o web.prof  # one cgroup subtree\n"
	"  sudo bpfprof --off-cpu -o out.pb.gz -o offcpu.svg -- ./server  # where it waits, too\n"
	"  sudo bpfprof -a --interval 60 --output-dir /var/lib/bpfprof --keep 60 --push http://pyroscope:4040\n"
	"\n"
	"Outputs (-o, repeatable; format from the extension or --format):\n"
	"  .prof  gperftools CPU profile: go tool pprof, google-pprof\n"
	"  .data  perf.data: perf report, perf script, perf buildid-list, perf inject\n"
	"  .svg   interactive flame graph: any browser\n"
	"  .pb.gz pprof protobuf (also .pprof): go tool pprof, Pyroscope, Parca, speedscope\n"
	"  .folded folded stacks: flamegraph.pl, inferno, speedscope\n"
	"  .otlp  OpenTelemetry profiles (ExportProfilesServiceRequest): protoc --decode, Collector\n"
	"  -      stdout (needs --format; not for perf.data, which is seekable)\n";

static const char args_doc[] = "[-- COMMAND [ARG...]]";

enum {
	OPT_RINGBUF_SIZE = 1000,
	OPT_FORMAT,
	OPT_TOP,
	OPT_NO_PROGRESS,
	OPT_CGROUP,
	OPT_INTERVAL,
	OPT_OUTPUT_DIR,
	OPT_KEEP,
	OPT_OUTPUT_MODE,
	OPT_JIT_MAX_SIZE,
	OPT_CHECK_USER_STACKS,
	OPT_PUSH,
	OPT_PUSH_API,
	OPT_PUSH_AUTH_FILE,
	OPT_PUSH_CA,
	OPT_PUSH_QUEUE,
	OPT_PUSH_TIMEOUT,
	OPT_TENANT,
	OPT_SERVICE_NAME,
	OPT_LABEL,
	OPT_DEBUGINFOD,
	OPT_NO_DEBUGINFOD,
	OPT_DEBUGINFOD_DEADLINE,
	OPT_OFF_CPU,
	OPT_OFF_CPU_THRESH,
	OPT_NO_BUILDID_CACHE,
	OPT_NO_JVM_PERFMAP,
	OPT_NO_PYTHON,
	OPT_NO_JAVA,
	OPT_NO_NODE,
	OPT_NO_DEMANGLE,
	OPT_CALL_GRAPH,
	OPT_UNWIND_MEMORY,
	OPT_UNWIND_TABLE_SIZE,
	OPT_CHECK_UNWIND,
	OPT_MAX_STACK,
	OPT_UNWIND_CACHE,
	OPT_UNWIND_CACHE_SIZE,
};

static const struct argp_option options[] = {
	{ NULL, 0, NULL, 0, "Targets:", 1 },
	{ "pid", 'p', "PID[,PID...]", 0, "Profile these processes (all their threads)", 1 },
	{ "all-cpus", 'a', NULL, 0, "Profile every process on every CPU", 1 },
	{ "cgroup", OPT_CGROUP, "PATH", 0,
	  "Keep only samples from this cgroup v2 directory and its descendants (absolute, or relative "
	  "to the cgroup2 mount); repeatable; with -a or a command",
	  1 },
	{ NULL, 0, NULL, 0, "Sampling:", 2 },
	{ "freq", 'F', "HZ", 0, "Samples per second per CPU, 1-100000 (default 99)", 2 },
	{ "event", 'e', "EVENT", 0, "cpu-clock (default) or cycles (needs a hardware PMU)", 2 },
	{ "duration", 'd', "SECONDS", 0,
	  "Stop after SECONDS (fractional); default: Ctrl-C or target exit", 2 },
	{ "ringbuf-size", OPT_RINGBUF_SIZE, "BYTES", 0,
	  "Ring buffer size, power of two, K/M suffix (default 512K per CPU, at least 2M): "
	  "split over the CPUs' own rings that samples go to (16K-2M each), and half of it "
	  "the shared ring; raise it when samples are lost",
	  2 },
	{ "call-graph", OPT_CALL_GRAPH, "MODE", 0,
	  "How user stacks are walked: dwarf (default: unwind tables from .eh_frame where there is CFI, "
	  "frame pointers elsewhere) or fp (frame pointers only)",
	  2 },
	{ "unwind-memory", OPT_UNWIND_MEMORY, "BYTES", 0,
	  "Kernel memory unwind tables may take at most, about 4 bytes a row (K/M/G suffix; default "
	  "256M); taken as files come, given back as they go; when full, the least recently used "
	  "tables go first",
	  2 },
	{ "unwind-cache", OPT_UNWIND_CACHE, "DIR", 0,
	  "Keep built unwind tables in DIR, one file per build-id, so that the next run reads them "
	  "instead of the CFI (default $BPFPROF_UNWIND_CACHE, else " UNWIND_CACHE_DEFAULT_DIR
	  "; root's alone, mode 0700, else refused); none: no cache",
	  2 },
	{ "unwind-cache-size", OPT_UNWIND_CACHE_SIZE, "BYTES", 0,
	  "Disk space the unwind cache's files may take (K/M/G suffix; default 256M); the least "
	  "recently used go first",
	  2 },
	{ "unwind-table-size", OPT_UNWIND_TABLE_SIZE, "BYTES", OPTION_HIDDEN,
	  "The former name of --unwind-memory", 2 },
	{ "max-stack", OPT_MAX_STACK, "N", 0,
	  "User frames a stack keeps at most (1-512, default 127; perf's kernel.perf_event_max_stack)",
	  2 },
	{ "check-unwind", OPT_CHECK_UNWIND, NULL, 0,
	  "Also copy the registers and top 8 KB of the stack of some samples and unwind them with "
	  "libdwfl, as perf report does for --call-graph dwarf; report how often the BPF walk differs "
	  "(for testing)",
	  2 },
	{ "check-user-stacks", OPT_CHECK_USER_STACKS, NULL, 0,
	  "Also walk each user stack with the kernel's walker (as perf record -g does) and report how "
	  "often bpfprof's own walk differs (implies --call-graph fp; slower; for testing)",
	  2 },
	{ "off-cpu", OPT_OFF_CPU, NULL, 0,
	  "Also record where the targets' threads block and for how long (off-CPU time): a second "
	  "sample type in .pb.gz and perf.data (event offcpu-time); for .prof, .folded and .svg, "
	  "outputs named offcpu* get it",
	  2 },
	{ "off-cpu-thresh", OPT_OFF_CPU_THRESH, "US", 0,
	  "Keep only blocks at least US microseconds long (default 500); shorter ones are counted",
	  2 },
	{ "jit-max-size", OPT_JIT_MAX_SIZE, "BYTES", 0,
	  "Largest jitdump or perf-PID.map read per process (K, M, G suffixes; default 256M)", 2 },
	{ "debuginfod", OPT_DEBUGINFOD, "URLS", 0,
	  "debuginfod servers (space-separated http(s):// or file:// URLs) to fetch missing debug files "
	  "from after sampling; default: $DEBUGINFOD_URLS",
	  2 },
	{ "no-debuginfod", OPT_NO_DEBUGINFOD, NULL, 0,
	  "Never fetch debug files from debuginfod servers", 2 },
	{ "debuginfod-deadline", OPT_DEBUGINFOD_DEADLINE, "SECONDS", 0,
	  "Give up fetching debug files after SECONDS in all (0.1-600, default 5)", 2 },
	{ "no-jvm-perfmap", OPT_NO_JVM_PERFMAP, NULL, 0,
	  "Do not ask running JVMs for their perf map (jcmd Compiler.perfmap) at the end", 2 },
	{ "no-python", OPT_NO_PYTHON, NULL, 0,
	  "Do not walk Python (CPython 3.8-3.13) frames: native frames only", 2 },
	{ "no-java", OPT_NO_JAVA, NULL, 0,
	  "Do not walk nor name Java frames of HotSpot JVMs (libjvm.so): native frames, and the perf map's names, only",
	  2 },
	{ "no-node", OPT_NO_NODE, NULL, 0,
	  "Do not look for V8 (node) in processes: native frames only", 2 },
	{ NULL, 0, NULL, 0, "Output:", 3 },
	{ "output", 'o', "FILE", 0, "Write a profile to FILE ('-' for stdout); repeatable", 3 },
	{ "format", OPT_FORMAT, "FORMAT", 0,
	  "Output format for every -o, overriding the extension: prof, perf, pprof, folded, svg, otlp",
	  3 },
	{ "output-mode", OPT_OUTPUT_MODE, "MODE", 0,
	  "Permission bits of the written files, octal, owner-readable (default 0600; umask not applied)",
	  3 },
	{ "top", OPT_TOP, "N", 0, "Functions in the summary (default 10, 0 to omit)", 3 },
	{ "no-demangle", OPT_NO_DEMANGLE, NULL, 0,
	  "Show C++ and Rust names as the files spell them (mangled) in the summary, folded, SVG, pprof and OTLP",
	  3 },
	{ "no-buildid-cache", OPT_NO_BUILDID_CACHE, NULL, 0,
	  "Do not copy the sampled binaries into perf's build-id cache (~/.debug) for perf.data",
	  3 },
	{ NULL, 0, NULL, 0, "Continuous profiling:", 4 },
	{ "output-dir", OPT_OUTPUT_DIR, "DIR", 0,
	  "Write the outputs into DIR as STAMP-NAME for each -o NAME (default NAME: profile.pb.gz), "
	  "STAMP being the interval's start time (UTC)",
	  4 },
	{ "interval", OPT_INTERVAL, "SECONDS", 0,
	  "One set of outputs every SECONDS (needs --output-dir)", 4 },
	{ "keep", OPT_KEEP, "N", 0, "Keep only the newest N sets of outputs in DIR (default: all)",
	  4 },
	{ NULL, 0, NULL, 0, "Pushing to Pyroscope or an OpenTelemetry Collector:", 5 },
	{ "push", OPT_PUSH, "URL", 0,
	  "Send each interval's profile (or the run's) to a Pyroscope server: URL/push.v1.PusherService/Push, "
	  "or the legacy endpoint when the URL ends in /ingest; API otlp: an OpenTelemetry OTLP/HTTP "
	  "receiver's URL/v1development/profiles (unless the URL has a path)",
	  5 },
	{ "push-api", OPT_PUSH_API, "API", 0,
	  "connect, ingest (whatever the URL's path) or otlp (OpenTelemetry profiles, gzip protobuf)",
	  5 },
	{ "push-auth-file", OPT_PUSH_AUTH_FILE, "FILE", 0,
	  "Credentials: first line 'user:password' (basic) or 'Bearer TOKEN' or TOKEN; not readable by others",
	  5 },
	{ "push-ca", OPT_PUSH_CA, "FILE", 0, "Trust this PEM CA bundle instead of the system's",
	  5 },
	{ "tenant", OPT_TENANT, "ID", 0, "Send X-Scope-OrgID: ID (a multi-tenant Pyroscope)", 5 },
	{ "service-name", OPT_SERVICE_NAME, "NAME", 0,
	  "service_name label (default: the command or process name; with -a one per container/cgroup)",
	  5 },
	{ "label", OPT_LABEL, "KEY=VALUE", 0, "Add a label to every pushed series; repeatable", 5 },
	{ "push-queue", OPT_PUSH_QUEUE, "N", 0,
	  "Intervals held in memory while the server is unreachable (default 8); older ones are spooled "
	  "to --output-dir as STAMP-push.pb, or dropped without it",
	  5 },
	{ "push-timeout", OPT_PUSH_TIMEOUT, "SECONDS", 0,
	  "Limit of one request, and of the last push at exit (default 10)", 5 },
	{ "no-progress", OPT_NO_PROGRESS, NULL, 0, "No progress line on a terminal", 3 },
	{ "verbose", 'v', NULL, 0, "More diagnostics (-vv: libbpf debug output)", 3 },
	{},
};

static long long parse_ll(struct argp_state *st, const char *what, const char *arg, long long lo,
			  long long hi)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(arg, &end, 10);
	if (errno || end == arg || *end || v < lo || v > hi)
		argp_error(st, "invalid %s: '%s' (expected %lld-%lld)", what, arg, lo, hi);
	return v;
}

static void parse_pids(struct argp_state *st, struct bpfprof_config *cfg, const char *arg)
{
	char *copy = strdup(arg), *tok, *save = NULL;

	if (!copy)
		argp_failure(st, 1, ENOMEM, "out of memory");
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (cfg->nr_pids >= CLI_MAX_PIDS)
			argp_error(st, "too many PIDs (at most %d)", CLI_MAX_PIDS);
		cfg->pids[cfg->nr_pids++] = (uint32_t)parse_ll(st, "PID", tok, 1, INT_MAX);
	}
	free(copy);
	if (!cfg->nr_pids)
		argp_error(st, "invalid PID list: '%s'", arg);
}

/* BYTES with an optional K, M or G suffix (powers of 1024), within [min, max]. */
static uint64_t parse_bytes(struct argp_state *st, const char *what, const char *arg, uint64_t min,
			    uint64_t max, bool pow2)
{
	unsigned long long v, mult = 1;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (*end == 'K' || *end == 'k')
		mult = 1ULL << 10, end++;
	else if (*end == 'M' || *end == 'm')
		mult = 1ULL << 20, end++;
	else if (*end == 'G' || *end == 'g')
		mult = 1ULL << 30, end++;
	if (errno || end == arg || *end || *arg == '-' || !v || v > max / mult || v * mult < min ||
	    (pow2 && ((v * mult) & (v * mult - 1))))
		argp_error(st, "invalid %s: '%s' (%s%llu-%lluK)", what, arg,
			   pow2 ? "power of two, " : "", (unsigned long long)min >> 10,
			   (unsigned long long)max >> 10);
	return v * mult;
}

/* --debuginfod URLS: what DEBUGINFOD_URLS holds, URLs separated by spaces; at least one. */
static void check_urls(struct argp_state *st, const char *arg)
{
	static const char *const schemes[] = { "http://", "https://", "file://" };
	const char *p = arg;
	size_t n, k, nr = 0;

	for (;;) {
		p += strspn(p, " ");
		if (!*p)
			break;
		n = strcspn(p, " ");
		for (k = 0; k < sizeof(schemes) / sizeof(schemes[0]); k++)
			if (n > strlen(schemes[k]) && !strncmp(p, schemes[k], strlen(schemes[k])))
				break;
		if (k == sizeof(schemes) / sizeof(schemes[0]))
			argp_error(st,
				   "invalid debuginfod URL '%.*s' (http://, https:// or file://)",
				   (int)n, p);
		nr++;
		p += n;
	}
	if (!nr)
		argp_error(st, "--debuginfod needs at least one URL");
}

void cli__add_output(struct argp_state *st, struct output *outputs, int *nr_outputs, char *path)
{
	if (*nr_outputs >= CLI_MAX_OUTPUTS)
		argp_error(st, "too many outputs (at most %d)", CLI_MAX_OUTPUTS);
	outputs[*nr_outputs].path = path;
	outputs[*nr_outputs].fd = -1;
	(*nr_outputs)++;
}

void cli__set_format(struct argp_state *st, const char **format, const char *name)
{
	if (output__format_from_name(name) == OUTPUT_NONE)
		argp_error(st, "invalid FORMAT: '%s' (prof, perf, pprof, folded, svg, otlp)", name);
	*format = name;
}

static error_t parse_arg(int key, char *arg, struct argp_state *st)
{
	struct bpfprof_config *cfg = st->input;
	char *end;

	switch (key) {
	case 'p':
		parse_pids(st, cfg, arg);
		break;
	case 'a':
		cfg->all_cpus = true;
		break;
	case 'F':
		cfg->freq_hz = (uint32_t)parse_ll(st, "FREQUENCY", arg, 1, 100000);
		break;
	case 'e':
		if (strcmp(arg, "cpu-clock") && strcmp(arg, "cycles"))
			argp_error(st, "invalid EVENT: '%s' (cpu-clock or cycles)", arg);
		cfg->event = arg;
		break;
	case 'd':
		errno = 0;
		cfg->duration_s = strtod(arg, &end);
		if (errno || end == arg || *end || !(cfg->duration_s > 0) || cfg->duration_s > 1e9)
			argp_error(st, "invalid SECONDS: '%s'", arg);
		break;
	case OPT_DEBUGINFOD:
		check_urls(st, arg);
		cfg->debuginfod_urls = arg;
		break;
	case OPT_NO_DEBUGINFOD:
		cfg->no_debuginfod = true;
		break;
	case OPT_DEBUGINFOD_DEADLINE: {
		double v;

		errno = 0;
		v = strtod(arg, &end);
		if (errno || end == arg || *end || !(v >= 0.1) || v > 600)
			argp_error(st, "invalid debuginfod deadline: '%s' (0.1-600 seconds)", arg);
		cfg->debuginfod_deadline_ms = (uint32_t)(v * 1000 + 0.5);
		break;
	}
	case OPT_RINGBUF_SIZE:
		cfg->ringbuf_bytes =
			parse_bytes(st, "ring buffer size", arg, 4096, 1ULL << 31, true);
		break;
	case OPT_JIT_MAX_SIZE:
		cfg->jit_max_bytes =
			parse_bytes(st, "JIT file size cap", arg, 4096, 1ULL << 40, false);
		break;
	case 'o':
		cli__add_output(st, cfg->outputs, &cfg->nr_outputs, arg);
		break;
	case OPT_FORMAT:
		cli__set_format(st, &cfg->format, arg);
		break;
	case OPT_OUTPUT_MODE: {
		unsigned long mode;
		int i;

		errno = 0;
		mode = strtoul(arg, &end, 8);
		if (errno || *arg < '0' || *arg > '7' || *end || mode > 0777 || !(mode & 0400))
			argp_error(
				st,
				"invalid MODE: '%s' (octal permission bits, 0400-0777, owner-readable)",
				arg);
		/* every slot, so that -o given before or after it gets the mode */
		for (i = 0; i < CLI_MAX_OUTPUTS; i++)
			cfg->outputs[i].mode = (unsigned int)mode;
		break;
	}
	case OPT_TOP:
		cfg->top_n = (int)parse_ll(st, "N", arg, 0, 64);
		break;
	case OPT_CGROUP: {
		int err;

		if (cfg->nr_cgroups >= CLI_MAX_CGROUPS)
			argp_error(st, "too many cgroups (at most %d)", CLI_MAX_CGROUPS);
		err = cgroup__id(arg, &cfg->cgroup_ids[cfg->nr_cgroups]);
		if (err)
			argp_error(st, "invalid cgroup '%s': %s", arg,
				   err == -EINVAL ? "not a cgroup v2 directory" : strerror(-err));
		cfg->cgroups[cfg->nr_cgroups++] = arg;
		break;
	}
	case OPT_INTERVAL:
		errno = 0;
		cfg->interval_s = strtod(arg, &end);
		if (errno || end == arg || *end || !(cfg->interval_s >= 1) || cfg->interval_s > 1e7)
			argp_error(
				st,
				"invalid interval SECONDS: '%s' (1 or more: outputs are named by the second)",
				arg);
		break;
	case OPT_OUTPUT_DIR:
		cfg->output_dir = arg;
		break;
	case OPT_KEEP:
		cfg->keep = (int)parse_ll(st, "N", arg, 1, 1000000);
		break;
	case OPT_NO_PROGRESS:
		cfg->progress = false;
		break;
	case OPT_CHECK_USER_STACKS:
		cfg->check_user_stacks = true;
		break;
	case OPT_PUSH: {
		const char *why;

		if (push__check_url(arg, &why))
			argp_error(st, "invalid --push URL '%s': %s", arg, why);
		cfg->push.url = arg;
		break;
	}
	case OPT_PUSH_API:
		if (!strcmp(arg, "connect"))
			cfg->push.api = PUSH_API_CONNECT;
		else if (!strcmp(arg, "ingest"))
			cfg->push.api = PUSH_API_INGEST;
		else if (!strcmp(arg, "otlp"))
			cfg->push.api = PUSH_API_OTLP;
		else
			argp_error(st, "invalid --push-api: '%s' (connect, ingest or otlp)", arg);
		break;
	case OPT_PUSH_AUTH_FILE:
		cfg->push.auth_file = arg;
		break;
	case OPT_PUSH_CA:
		cfg->push.ca_file = arg;
		break;
	case OPT_PUSH_QUEUE:
		cfg->push.queue_max = (int)parse_ll(st, "N", arg, 1, 10000);
		break;
	case OPT_PUSH_TIMEOUT:
		errno = 0;
		cfg->push.timeout_s = strtod(arg, &end);
		if (errno || end == arg || *end || !(cfg->push.timeout_s >= 0.1) ||
		    cfg->push.timeout_s > 3600)
			argp_error(st, "invalid --push-timeout SECONDS: '%s' (0.1-3600)", arg);
		break;
	case OPT_TENANT:
		if (!*arg || strlen(arg) > 150 || strpbrk(arg, "\r\n\t "))
			argp_error(st, "invalid --tenant: '%s' (1-150 characters, no spaces)", arg);
		for (const char *c = arg; *c; c++)
			if ((unsigned char)*c < ' ' || *c == 0x7f)
				argp_error(st, "invalid --tenant: a control character");
		cfg->push.tenant = arg;
		break;
	case OPT_SERVICE_NAME:
		if (!*arg || strlen(arg) > 255 ||
		    strspn(arg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				"0123456789_.-/") != strlen(arg))
			argp_error(st,
				   "invalid --service-name: '%s' (1-255 of A-Z a-z 0-9 _ . - /)",
				   arg);
		cfg->push.service_name = arg;
		break;
	case OPT_LABEL: {
		const char *why;

		if (cfg->push.nr_labels >= PUSH_MAX_LABELS)
			argp_error(st, "too many --label (at most %d)", PUSH_MAX_LABELS);
		if (push__check_label(arg, &why))
			argp_error(st, "invalid --label '%s': %s", arg, why);
		cfg->push.labels[cfg->push.nr_labels++] = arg;
		break;
	}
	case OPT_OFF_CPU:
		cfg->offcpu = true;
		break;
	case OPT_OFF_CPU_THRESH:
		cfg->offcpu_thresh_us =
			(uint64_t)parse_ll(st, "threshold US", arg, 0, 3600LL * 1000000);
		cfg->offcpu_thresh_set = true;
		break;
	case OPT_NO_BUILDID_CACHE:
		cfg->no_buildid_cache = true;
		break;
	case OPT_NO_JVM_PERFMAP:
		cfg->no_jvm_perfmap = true;
		break;
	case OPT_NO_PYTHON:
		cfg->no_python = true;
		break;
	case OPT_NO_JAVA:
		cfg->no_java = true;
		break;
	case OPT_NO_NODE:
		cfg->no_node = true;
		break;
	case OPT_NO_DEMANGLE:
		cfg->no_demangle = true;
		break;
	case OPT_CALL_GRAPH:
		if (!strcmp(arg, "dwarf"))
			cfg->call_graph = CALL_GRAPH_DWARF;
		else if (!strcmp(arg, "fp"))
			cfg->call_graph = CALL_GRAPH_FP;
		else
			argp_error(st, "invalid call graph mode: '%s' (expected dwarf or fp)", arg);
		cfg->call_graph_set = true;
		break;
	case OPT_UNWIND_MEMORY:
	case OPT_UNWIND_TABLE_SIZE:
		cfg->unwind_memory =
			parse_bytes(st, "unwind memory", arg, 64 << 10, 64ULL << 30, false);
		break;
	case OPT_UNWIND_CACHE:
		if (!*arg)
			argp_error(st, "invalid --unwind-cache: '' (a directory, or none)");
		cfg->unwind_cache = arg;
		cfg->unwind_cache_set = true;
		break;
	case OPT_UNWIND_CACHE_SIZE:
		cfg->unwind_cache_bytes =
			parse_bytes(st, "unwind cache size", arg, 64 << 10, 1ULL << 40, false);
		break;
	case OPT_MAX_STACK:
		cfg->max_stack = (uint32_t)parse_ll(st, "max stack", arg, 1, BPFPROF_MAX_USER_STACK);
		break;
	case OPT_CHECK_UNWIND:
		cfg->check_unwind = true;
		break;
	case 'v':
		log_verbosity++;
		break;
	case ARGP_KEY_ARG:
		argp_error(st, "unexpected argument '%s' (a command goes after '--')", arg);
		break;
	case ARGP_KEY_END:
		if (!cfg->nr_pids && !cfg->all_cpus && !cfg->command)
			argp_error(st, "no target: give -p PID, -a, or -- COMMAND");
		if (cfg->nr_pids && (cfg->all_cpus || cfg->command))
			argp_error(st, "-p cannot be combined with -a or a command");
		if (cfg->nr_cgroups && cfg->nr_pids)
			argp_error(st, "--cgroup goes with -a or a command, not -p");
		if (cfg->offcpu_thresh_set && !cfg->offcpu)
			argp_error(st, "--off-cpu-thresh needs --off-cpu");
		if ((cfg->interval_s > 0 || cfg->keep) && !cfg->output_dir)
			argp_error(st, "--interval and --keep need --output-dir");
		if (!cfg->push.url &&
		    (cfg->push.api || cfg->push.auth_file || cfg->push.ca_file ||
		     cfg->push.tenant || cfg->push.service_name || cfg->push.nr_labels ||
		     cfg->push.queue_max || cfg->push.timeout_s > 0))
			argp_error(
				st,
				"--push-api, --push-auth-file, --push-ca, --tenant, --service-name, --label, "
				"--push-queue and --push-timeout go with --push URL");
		if (cfg->no_debuginfod && cfg->debuginfod_urls)
			argp_error(st, "--debuginfod and --no-debuginfod exclude each other");
		if (cfg->check_user_stacks) {
			if (cfg->call_graph_set && cfg->call_graph != CALL_GRAPH_FP)
				argp_error(
					st,
					"--check-user-stacks compares frame-pointer walks: not with --call-graph dwarf");
			cfg->call_graph = CALL_GRAPH_FP;
		}
		if (cfg->check_unwind && cfg->call_graph != CALL_GRAPH_DWARF)
			argp_error(
				st,
				"--check-unwind checks the dwarf walk: not with --call-graph fp");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* The file name part of a path */
static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

uint64_t cli__default_ringbuf_bytes(long nr_cpus, uint32_t freq_hz)
{
	uint64_t cpus = nr_cpus > 0 ? (uint64_t)nr_cpus : 0, size = 2u << 20;
	uint64_t want = cpus * (512u << 10);

	if (cpus * freq_hz * CLI_RING_RECORD_BYTES > want)
		want = cpus * freq_hz * CLI_RING_RECORD_BYTES;

	while (size < want && size < (1ULL << 30))
		size <<= 1;
	return size;
}

int cli__parse(int argc, char **argv, struct bpfprof_config *cfg)
{
	static const struct argp argp = { options, parse_arg, args_doc, doc };
	int i, opt_argc;

	memset(cfg, 0, sizeof(*cfg));
	cfg->freq_hz = 99;
	cfg->event = "cpu-clock";
	cfg->ringbuf_bytes = 0; /* from -F once parsed, unless --ringbuf-size */
	cfg->jit_max_bytes = JIT_FILE_MAX_SIZE;
	cfg->call_graph = CALL_GRAPH_DWARF;
	cfg->unwind_memory = CLI_DEFAULT_UNWIND_MEMORY;
	cfg->unwind_cache = getenv("BPFPROF_UNWIND_CACHE");
	cfg->unwind_cache_set = cfg->unwind_cache && *cfg->unwind_cache;
	if (!cfg->unwind_cache_set)
		cfg->unwind_cache = UNWIND_CACHE_DEFAULT_DIR;
	cfg->unwind_cache_bytes = UNWIND_CACHE_DEFAULT_BYTES;
	cfg->max_stack = BPFPROF_MAX_STACK;
	cfg->top_n = 10;
	cfg->progress = true;
	cfg->offcpu_thresh_us = CLI_DEFAULT_OFFCPU_THRESH_US;
	/* argp_error exits with argp_err_exit_status, which is 64 unless set */
	argp_err_exit_status = 2;
	/*
	 * Everything after the first "--" is the command, untouched: argp would
	 * otherwise permute the command's own options into ours.
	 */
	for (opt_argc = 1; opt_argc < argc && strcmp(argv[opt_argc], "--"); opt_argc++)
		;
	if (opt_argc < argc) {
		if (opt_argc + 1 >= argc) {
			fprintf(stderr, "bpfprof: no command after '--'\n"
					"Try 'bpfprof --help' for more information.\n");
			return 2;
		}
		cfg->command = argv + opt_argc + 1;
	}
	if (argp_parse(&argp, opt_argc, argv, 0, NULL, cfg))
		return 2;
	if (!cfg->ringbuf_bytes)
		cfg->ringbuf_bytes =
			cli__default_ringbuf_bytes(sysconf(_SC_NPROCESSORS_CONF), cfg->freq_hz);
	if (cfg->output_dir && !cfg->nr_outputs) {
		cfg->outputs[0].path = "profile.pb.gz";
		cfg->outputs[0].fd = -1;
		cfg->nr_outputs = 1;
	}
	for (i = 0; i < cfg->nr_outputs; i++) {
		struct output *o = &cfg->outputs[i];

		if (cfg->output_dir && (strchr(o->path, '/') || !strcmp(o->path, "-"))) {
			fprintf(stderr,
				"bpfprof: with --output-dir, -o takes a file name, not '%s'\n"
				"Try 'bpfprof --help' for more information.\n",
				o->path);
			return 2;
		}
		o->format = cfg->format ? output__format_from_name(cfg->format) :
					  output__format_from_path(o->path);
		if (o->format == OUTPUT_NONE) {
			fprintf(stderr,
				"bpfprof: cannot tell the format of '%s'; use a known extension (.prof, .data, .pb.gz, .pprof, .folded, .svg, .otlp) or --format\n"
				"Try 'bpfprof --help' for more information.\n",
				o->path);
			return 2;
		}
		if ((o->format == OUTPUT_GPERF || o->format == OUTPUT_FOLDED ||
		     o->format == OUTPUT_SVG) &&
		    !strncmp(basename_of(o->path), "offcpu", 6)) {
			if (!cfg->offcpu) {
				fprintf(stderr,
					"bpfprof: '%s' is named as an off-CPU output: add --off-cpu\n"
					"Try 'bpfprof --help' for more information.\n",
					o->path);
				return 2;
			}
			cfg->offcpu_output[i] = true;
		}
		if (o->format == OUTPUT_PERFDATA && !strcmp(o->path, "-")) {
			fprintf(stderr,
				"bpfprof: perf.data cannot go to stdout: it is rewritten at the end; give a file\n"
				"Try 'bpfprof --help' for more information.\n");
			return 2;
		}
	}
	cfg->argc = argc;
	cfg->argv = argv;
	return 0;
}

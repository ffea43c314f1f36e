/* SPDX-License-Identifier: MIT */
/* Command line → struct bpfprof_config (argp; option table in user/cli.c). */
#ifndef BPFPROF_CLI_H
#define BPFPROF_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include "output.h"
#include "push.h"

#define CLI_MAX_OUTPUTS 16
#define CLI_MAX_PIDS 1024
#define CLI_MAX_CGROUPS 64
/*
 * --off-cpu-thresh default, µs: the number perf's option had when its unit
 * was µs (OFFCPU_THRESH 500000 ns); see docs/OFFCPU.md.
 */
#define CLI_DEFAULT_OFFCPU_THRESH_US 500
/*
 * --unwind-memory default: the OpenTelemetry profiler's 250 MB for its
 * whole agent; about 60 M rows, 70 times Debian's libLLVM-14
 */
#define CLI_DEFAULT_UNWIND_MEMORY (256ULL << 20)

enum call_graph {
	CALL_GRAPH_DWARF, /* unwind tables from CFI where there is some, frame pointers elsewhere */
	CALL_GRAPH_FP, /* frame pointers only (perf record -g) */
};

struct bpfprof_config {
	uint32_t pids[CLI_MAX_PIDS]; /* -p */
	int nr_pids;
	bool all_cpus; /* -a */
	const char *cgroups[CLI_MAX_CGROUPS]; /* --cgroup: cgroup v2 directories */
	uint64_t cgroup_ids[CLI_MAX_CGROUPS]; /* their ids, resolved by cli__parse */
	int nr_cgroups;
	char **command; /* argv after "--", NULL-terminated; NULL when none */
	uint32_t freq_hz; /* -F, 1..100000 */
	const char *event; /* -e */
	double duration_s; /* -d; 0 = until Ctrl-C / target exit */
	uint64_t ringbuf_bytes; /* --ringbuf-size, power of two */
	uint64_t jit_max_bytes; /* --jit-max-size: cap per JIT file read, bytes */
	struct output outputs[CLI_MAX_OUTPUTS]; /* -o */
	int nr_outputs;
	const char *format; /* --format: overrides every output's extension */
	int top_n; /* --top */
	double interval_s; /* --interval: one set of outputs per interval; 0 = one set */
	const char *output_dir; /* --output-dir: outputs go there, named by interval start */
	int keep; /* --keep: interval sets kept in output_dir; 0 = all */
	bool progress; /* one-line progress on a terminal (--no-progress) */
	bool check_user_stacks; /* --check-user-stacks: compare with the kernel's walk */
	struct push_opts push; /* --push and its options; push.url NULL when not pushing */
	const char *debuginfod_urls; /* --debuginfod: replaces $DEBUGINFOD_URLS; NULL: keep it */
	bool no_debuginfod; /* --no-debuginfod */
	uint32_t debuginfod_deadline_ms; /* --debuginfod-deadline; 0: the default */
	bool offcpu; /* --off-cpu: also where tasks block, and for how long */
	uint64_t offcpu_thresh_us; /* --off-cpu-thresh: shortest block kept, µs */
	bool offcpu_thresh_set;
	/*
	 * Outputs of the off-CPU kind: a .prof, folded or SVG output whose
	 * file name starts with "offcpu" (offcpu.svg, offcpu-web.folded);
	 * pprof and perf.data outputs hold both kinds.
	 */
	bool offcpu_output[CLI_MAX_OUTPUTS];
	bool no_buildid_cache; /* --no-buildid-cache: perf.data's DSOs not copied to ~/.debug */
	bool no_jvm_perfmap; /* --no-jvm-perfmap: running JVMs not asked for their perf map */
	bool no_python; /* --no-python: no Python frames (python_procs.h) */
	bool no_java; /* --no-java: HotSpot JVMs not looked for (interp_hotspot.h) */
	bool no_node; /* --no-node: V8 not looked for (interp_v8.h) */
	bool no_demangle; /* --no-demangle: names as the files spell them (symbolize.h) */
	enum call_graph call_graph; /* --call-graph */
	bool call_graph_set; /* given on the command line */
	uint64_t unwind_memory; /* --unwind-memory: kernel memory for unwind tables at most, bytes */
	/*
	 * --unwind-cache: the persistent cache's directory, "none" for none;
	 * default $BPFPROF_UNWIND_CACHE, else /var/cache/bpfprof/unwind
	 */
	const char *unwind_cache;
	bool unwind_cache_set; /* named by the option or the environment */
	uint64_t unwind_cache_bytes; /* --unwind-cache-size: its entries at most, bytes */
	bool check_unwind; /* --check-unwind: libdwfl against the BPF walk */
	uint32_t max_stack; /* --max-stack: user frames a stack keeps at most */
	int argc; /* bpfprof's own argv, for perf.data's CMDLINE */
	char **argv;
};

/*
 * Parse argv into cfg (defaults first). On a usage error prints the reason
 * and a usage hint to stderr and returns 2, the exit status for bad options;
 * returns 0 on success. --help and --version exit(0) from inside argp.
 */
int cli__parse(int argc, char **argv, struct bpfprof_config *cfg);

/* Bytes of ring buffer a sample a second is given by default (see below) */
#define CLI_RING_RECORD_BYTES 256

/*
 * The default --ringbuf-size for nr_cpus CPUs sampled at freq_hz, in bytes:
 * 512 KiB per CPU, or a second of samples at CLI_RING_RECORD_BYTES each
 * (a 24-frame record is 300-400 bytes) where that is more, at least 2 MiB,
 * rounded up to a power of two (bpf_ringbuf's size rule,
 * kernel/bpf/ringbuf.c), at most 1 GiB. The reader, woken at an eighth of
 * the buffer (and a second apart at most), drains it long before, unless the host's load
 * keeps it off the CPUs: at -a -F 10000 on 2 busy CPUs it fell 0.25 s
 * behind (2 MiB), and the BPF program sheds walks once the buffer is half
 * full. The reader maps the data pages twice (libbpf's ring_buffer__add),
 * so the size counts twice in its resident memory, which is why it is no
 * larger at the usual frequencies (999 Hz: 0.5 MiB of records a second on
 * 2 CPUs). It is split over the CPUs' own rings that samples go to, and
 * half of it is the shared ring buffer (include/cpu_ring.h cpu_ring_sizes).
 */
uint64_t cli__default_ringbuf_bytes(long nr_cpus, uint32_t freq_hz);

struct argp_state;
/*
 * -o PATH, as bpfprof and bpfprof xray take it: append an output (path
 * borrowed from argv, fd -1) to outputs[*nr_outputs]; more than
 * CLI_MAX_OUTPUTS is a usage error (argp_error: exit 2 with a usage hint).
 */
void cli__add_output(struct argp_state *st, struct output *outputs, int *nr_outputs, char *path);
/* --format NAME, as both take it: a name output__format_from_name knows, else a usage error. */
void cli__set_format(struct argp_state *st, const char **format, const char *name);

#endif /* BPFPROF_CLI_H */

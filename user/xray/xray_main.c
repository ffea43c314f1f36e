// SPDX-License-Identifier: MIT
/*
 * `bpfprof xray [--instr-map BINARY] TRACE... -o FILE...` (include/xray.h):
 * read LLVM XRay traces (user/xray/read_xray.c) into a profile and write it with
 * the sampling writers; --account prints per-function calls, total and self
 * time. Outputs are temporaries until everything is read: a malformed trace
 * leaves no output file (unless --keep-going), and Ctrl-C removes them.
 *
 * gperftools .prof has one weight per stack, a count of samples of
 * period_us each. The model keeps value = self ns and count = calls; for
 * .prof the stacks are rewritten as count = self time in µs (rounded) with a
 * 1 µs period, so pprof's "cpu" is self time and its sample count is µs.
 *
 * perf.data gets one SAMPLE per distinct call path of each process, its
 * period the path's self time in ns (write_perfdata_view): perf report's
 * overhead is the share of self time, unrounded. The model holds call paths
 * with their summed times, not single calls, so a sample per call could only
 * repeat a path's mean; and a trace of millions of calls would make as many
 * records for nothing a reader shows.
 */
#include <argp.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "buf.h"
#include "build_ids.h"
#include "cli.h"
#include "kernel_image.h"
#include "log.h"
#include "output.h"
#include "profile.h"
#include "read_xray.h"
#include "symbolize.h"
#include "write.h"
#include "write_perfdata.h"
#include "xray.h"
#include "xray_account.h"
#include "xray_instr_map.h"

#define XRAY_MAX_TRACES 4096

struct xray_config {
	const char *instr_map;
	const char *traces[XRAY_MAX_TRACES];
	int nr_traces;
	struct output outputs[CLI_MAX_OUTPUTS];
	int nr_outputs;
	const char *format;
	bool account;
	bool keep_going;
	bool no_demangle; /* --no-demangle: names as the binary spells them */
};

static struct xray_config xcfg;

static const char xdoc[] =
	"bpfprof xray: turn LLVM XRay traces (FDR and basic mode) into profiles.\n"
	"\n"
	"EXAMPLES:\n"
	"  bpfprof xray --instr-map ./app xray-log.app.XXXX -o app.prof   # go tool pprof ./app app.prof\n"
	"  bpfprof xray --instr-map ./app --account xray-log.app.*         # calls, total, self time\n"
	"  bpfprof xray --instr-map ./app xray-log.app.XXXX -o app.data   # perf report -i app.data\n"
	"\n"
	"Stack weights are self time (TSC ticks through the trace's cycle frequency);\n"
	"in .prof one sample is 1 us of self time; in perf.data one sample per call path\n"
	"has its self time in ns as its period. Without --instr-map frames are fn#ID.\n";

enum { OPT_FORMAT = 1000, OPT_ACCOUNT, OPT_KEEP_GOING, OPT_NO_DEMANGLE };

static const struct argp_option xoptions[] = {
	{ "instr-map", 'm', "BINARY", 0,
	  "The instrumented binary: function ids to addresses and names", 0 },
	{ "output", 'o', "FILE", 0, "Write a profile to FILE ('-' for stdout); repeatable", 0 },
	{ "format", OPT_FORMAT, "FORMAT", 0,
	  "Output format for every -o, overriding the extension: prof, perf, pprof, folded, svg, otlp",
	  0 },
	{ "account", OPT_ACCOUNT, NULL, 0,
	  "Print per function: calls, total time, self time (stdout)", 0 },
	{ "keep-going", 'k', NULL, 0, "Write what was read even when a trace is damaged", 0 },
	{ "no-demangle", OPT_NO_DEMANGLE, NULL, 0,
	  "Show C++ and Rust names as the binary spells them (mangled) in the outputs", 0 },
	{ "verbose", 'v', NULL, 0, "More diagnostics", 0 },
	{},
};

static error_t xparse(int key, char *arg, struct argp_state *st)
{
	struct xray_config *c = st->input;

	switch (key) {
	case 'm':
		c->instr_map = arg;
		break;
	case 'o':
		cli__add_output(st, c->outputs, &c->nr_outputs, arg);
		break;
	case OPT_FORMAT:
		cli__set_format(st, &c->format, arg);
		break;
	case OPT_ACCOUNT:
		c->account = true;
		break;
	case 'k':
		c->keep_going = true;
		break;
	case OPT_NO_DEMANGLE:
		c->no_demangle = true;
		break;
	case 'v':
		log_verbosity++;
		break;
	case ARGP_KEY_ARG:
		if (c->nr_traces >= XRAY_MAX_TRACES)
			argp_error(st, "too many traces (at most %d)", XRAY_MAX_TRACES);
		c->traces[c->nr_traces++] = arg;
		break;
	case ARGP_KEY_END:
		if (!c->nr_traces)
			argp_error(st, "no trace given");
		if (!c->nr_outputs && !c->account)
			argp_error(st, "nothing to do: give -o FILE or --account");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static int check_outputs(struct xray_config *c)
{
	int i;

	for (i = 0; i < c->nr_outputs; i++) {
		struct output *o = &c->outputs[i];

		o->format = c->format ? output__format_from_name(c->format) :
					output__format_from_path(o->path);
		if (o->format == OUTPUT_NONE) {
			fprintf(stderr,
				"bpfprof: cannot tell the format of '%s'; use a known extension "
				"(.prof, .data, .pb.gz, .folded, .svg, .otlp) or --format\n"
				"Try 'bpfprof xray --help' for more information.\n",
				o->path);
			return 2;
		}
		if (o->format == OUTPUT_PERFDATA && !strcmp(o->path, "-")) {
			fprintf(stderr,
				"bpfprof: perf.data cannot go to stdout: it is rewritten at the end; "
				"give a file\n");
			return 2;
		}
		if (c->account && !strcmp(o->path, "-")) {
			fprintf(stderr, "bpfprof: --account and -o - both write to stdout\n");
			return 2;
		}
	}
	return 0;
}

static void on_signal(int sig)
{
	int i;

	for (i = 0; i < xcfg.nr_outputs; i++)
		output__abort_signal_safe(&xcfg.outputs[i]);
	_exit(128 + sig);
}

/*
 * What a perf.data output describes beyond the traces, into p: this
 * machine's kernel (kernel_image.h) and the build-ids of the traced files
 * that the instrumentation map left without one (build_ids.h). Nothing is
 * read without a perf.data output. Returns 0 or -ENOMEM.
 */
static int describe_for_perfdata(const struct xray_config *c, struct profile *p)
{
	int i, err;

	for (i = 0; i < c->nr_outputs; i++)
		if (c->outputs[i].format == OUTPUT_PERFDATA)
			break;
	if (i == c->nr_outputs)
		return 0;
	err = kernel_image__read(p, 0, 0, NULL);
	return err ? err : build_ids__fill(p, "/proc");
}

/*
 * perf.data of p on o->fd: COMM and MMAP2 of each process (the instrumented
 * binary's segments, with its build-id), then one SAMPLE per call path with
 * self time, period = that time in ns, of the event "xray-self-time" (a
 * software clock event, so perf reads the period as time). The kernel maps
 * are this machine's, as perf record writes them even for user-only events:
 * perf report warns of restricted kernel maps without them (p->kernel,
 * describe_for_perfdata). Times are synthesized,
 * 1 µs apart in stack order (the model keeps no time per path). *nr gets the
 * samples written.
 */
static int write_perfdata_view(const struct profile *p, struct output *o, int argc, char **argv,
			       uint64_t *nr)
{
	struct perfdata_opts po = {
		.event = "xray-self-time", .freq_hz = 1000, .argc = argc, .argv = argv
	};
	const uint64_t t0 = 1000000;
	struct perfdata_writer *w = perfdata__new(o->fd, &po, p);
	size_t i;
	int err = 0;

	if (!w)
		return -errno;
	for (i = 0; i < p->nr_procs && !err; i++)
		err = perfdata__maps(w, p, (uint32_t)i, t0);
	for (i = 0; i < p->nr_stacks && !err; i++) {
		const struct profile_stack *s = &p->stacks[i];
		const struct profile_process *pr = &p->procs[s->proc];
		struct profile_sample ev = { .pid = pr->pid,
					     .tid = pr->pid,
					     .time_ns = t0 + i * 1000,
					     .comm = pr->comm,
					     .ips = s->ips,
					     .nr_kernel = s->nr_kernel,
					     .nr_user = s->nr_user };

		if (s->value)
			err = perfdata__sample_period(w, &ev, s->value);
	}
	if (!err)
		err = perfdata__finish(w, p);
	*nr = perfdata__nr_samples(w);
	perfdata__free(w);
	return err;
}

/*
 * Every output of the converted traces. pprof gets the model itself
 * (samples/count = calls, cpu/nanoseconds = self time), perf.data one sample
 * per call path; .prof, folded and SVG read the µs view of it
 * (PROFILE_VIEW_VALUE_US): one "sample" per µs of self time, so call paths
 * with under 0.5 µs of it weigh nothing there.
 */
static int write_outputs(struct xray_config *c, const struct profile *p, int argc, char **argv)
{
	struct profile us_view = *p;
	uint64_t dropped_ns = 0;
	size_t j;
	int i, err = 0;

	us_view.view = PROFILE_VIEW_VALUE_US;
	us_view.event = "xray-self-time";
	for (j = 0; j < p->nr_stacks; j++)
		if (!profile__weight(&us_view, &p->stacks[j]))
			dropped_ns += p->stacks[j].value;
	for (i = 0; i < c->nr_outputs; i++) {
		struct output *o = &c->outputs[i];
		const struct writer *wr = writer__of(o->format);
		struct write_opts wo = { .title = "bpfprof XRay self time (1 sample = 1 us)" };
		struct write_result wres = { 0 };
		struct buf b = { 0 };
		uint64_t nr_perf = 0;

		if (o->format == OUTPUT_PERFDATA)
			err = write_perfdata_view(p, o, argc, argv, &nr_perf);
		else
			err = wr->write(o->format == OUTPUT_PPROF ? p : &us_view, &b, &wo, &wres);
		if (err) {
			pr_warn("cannot write '%s': %s\n", o->path, strerror(-err));
			output__abort(o);
			buf__free(&b);
			break;
		}
		err = output__commit(o, o->format == OUTPUT_PERFDATA ? NULL : &b);
		if (!err && o->format == OUTPUT_PERFDATA)
			fprintf(stderr,
				"bpfprof: wrote '%s': %llu samples (one per call path, period = its "
				"self time in ns)\n",
				o->path, (unsigned long long)nr_perf);
		else if (!err && o->format == OUTPUT_GPERF)
			fprintf(stderr,
				"bpfprof: wrote '%s': %llu samples (1 sample = 1 us of self time), "
				"%zu bytes\n",
				o->path, (unsigned long long)wres.samples, b.len);
		else if (!err)
			fprintf(stderr, "bpfprof: wrote '%s': %zu bytes\n", o->path, b.len);
		buf__free(&b);
		if (err)
			break;
	}
	if (!err && dropped_ns)
		pr_info("stacks with under 0.5 us of self time left out of .prof: %.3f us in all\n",
			dropped_ns / 1e3);
	return err;
}

int xray__main(int argc, char **argv)
{
	struct argp argp = { xoptions, xparse, "TRACE...", xdoc };
	struct sigaction sa = { .sa_handler = on_signal };
	struct xray_instr_map *map = NULL;
	struct xray_reader *r = NULL;
	const struct xray_read_stats *st;
	struct profile *p = NULL;
	int i, err = 0, bad = 0, ret;

	argp_err_exit_status = 2;
	argv[0] = (char *)"bpfprof xray"; /* for argp's messages */
	if (argp_parse(&argp, argc, argv, 0, NULL, &xcfg))
		return 2;
	ret = check_outputs(&xcfg);
	if (ret)
		return ret;
	if (xcfg.instr_map) {
		err = xray_instr_map__load(xcfg.instr_map, &map);
		if (err)
			return 1;
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	for (i = 0; i < xcfg.nr_outputs; i++) {
		err = output__open(&xcfg.outputs[i]);
		if (err)
			goto out;
	}
	p = profile__new();
	r = p ? xray_reader__new(p, map) : NULL;
	if (!r) {
		err = -ENOMEM;
		pr_warn("out of memory\n");
		goto out;
	}
	for (i = 0; i < xcfg.nr_traces; i++) {
		err = xray_reader__read_file(r, xcfg.traces[i]);
		if (err == -ENOMEM) {
			pr_warn("out of memory reading '%s'\n", xcfg.traces[i]);
			goto out;
		}
		if (err)
			bad++;
	}
	err = 0;
	st = xray_reader__stats(r);
	if (bad && !xcfg.keep_going) {
		pr_warn("%d of %d traces malformed; no output written (--keep-going writes what "
			"was read)\n",
			bad, xcfg.nr_traces);
		err = -EINVAL;
		goto out;
	}
	if (st->unmatched_exits || st->unwound_frames || st->open_at_end)
		pr_info("%llu exits without entry ignored, %llu frames closed by a caller's exit, "
			"%llu left open at the end\n",
			(unsigned long long)st->unmatched_exits,
			(unsigned long long)st->unwound_frames,
			(unsigned long long)st->open_at_end);
	err = xray_reader__name_locs(r);
	if (!err && !xcfg.no_demangle)
		err = symbolizer__demangle_names(p);
	if (err)
		goto out;
	if (xcfg.account) {
		err = xray_account__print(r, stdout);
		if (err) {
			pr_warn("cannot write the account to stdout: %s\n", strerror(-err));
			goto out;
		}
	}
	err = describe_for_perfdata(&xcfg, p);
	if (!err)
		err = write_outputs(&xcfg, p, argc, argv);
out:
	for (i = 0; i < xcfg.nr_outputs; i++)
		output__abort(&xcfg.outputs[i]);
	xray_reader__free(r);
	profile__free(p);
	xray_instr_map__free(map);
	return err ? 1 : 0;
}

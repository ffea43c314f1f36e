// SPDX-License-Identifier: MIT
/*
 * bpfprof: orchestration only. cli → checks → outputs opened → session
 * (BPF) → agg (ring buffer → profile) → symbolize → writers → summary.
 * Everything collected is written on a duration end, Ctrl-C, SIGTERM or the
 * target's exit; a second signal while writing removes the temporaries.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "agg.h"
#include "cli.h"
#include "log.h"
#include "output.h"
#include "profile.h"
#include "report.h"
#include "session.h"
#include "symbolize.h"
#include "write_gperf.h"
#include "write_folded.h"
#include "write_perfdata.h"
#include "write_pprof.h"
#include "write_svg.h"

#define CAP_PERFMON_BIT 38
#define CAP_BPF_BIT 39
#define CAP_SYS_ADMIN_BIT 21

static struct bpfprof_config cfg;
/* perf.data writers, parallel to cfg.outputs; NULL for other formats or after a failure */
static struct perfdata_writer *streams[CLI_MAX_OUTPUTS];
static int stream_err[CLI_MAX_OUTPUTS];
static volatile sig_atomic_t exiting;
static volatile sig_atomic_t writing;

static void on_signal(int sig)
{
	int i;

	if (writing) {
		/* second signal while writing: leave no partial file behind */
		for (i = 0; i < cfg.nr_outputs; i++)
			output__abort_signal_safe(&cfg.outputs[i]);
		_exit(128 + sig);
	}
	exiting = sig;
}

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Effective capability set from /proc/self/status (CapEff, hex). */
static uint64_t effective_caps(void)
{
	unsigned long long caps = 0;
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &caps) == 1)
			break;
	fclose(f);
	return caps;
}

static int check_system(void)
{
	uint64_t caps = effective_caps();
	bool bpf = caps & (1ULL << CAP_BPF_BIT), perfmon = caps & (1ULL << CAP_PERFMON_BIT);
	bool admin = caps & (1ULL << CAP_SYS_ADMIN_BIT);
	struct stat st;

	if (geteuid() != 0 && !(bpf && perfmon) && !admin) {
		pr_warn("insufficient privileges: needs root, or CAP_BPF and CAP_PERFMON (missing:%s%s); "
			"run it with sudo\n",
			bpf ? "" : " CAP_BPF", perfmon ? "" : " CAP_PERFMON");
		return -EPERM;
	}
	if (stat("/sys/kernel/btf/vmlinux", &st)) {
		pr_warn("kernel BTF not found at /sys/kernel/btf/vmlinux: needs a kernel built with "
			"CONFIG_DEBUG_INFO_BTF=y (5.4 or later)\n");
		return -ENOTSUP;
	}
	return 0;
}

/* A process that is gone or a zombie no longer runs anything to sample. */
static bool process_alive(uint32_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	bool alive = false;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) && p[1] == ' ')
		alive = p[2] != 'Z' && p[2] != 'X';
	fclose(f);
	return alive;
}

/* Tgid of a pid, so that -p with a thread id profiles its whole process (0 if unknown). */
static uint32_t tgid_of(uint32_t pid)
{
	unsigned int tgid = 0;
	char path[64], line[128];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %u", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

/*
 * Fork the command stopped before exec, so that it becomes a target before it
 * runs any code; it execs once `go` is closed.
 */
static pid_t start_command(char **argv, int *go)
{
	int fds[2];
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		char c;

		close(fds[1]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		if (read(fds[0], &c, 1) != 0)
			_exit(127); /* the profiler failed: never run unprofiled */
		execvp(argv[0], argv);
		fprintf(stderr, "bpfprof: cannot run '%s': %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(fds[0]);
	*go = fds[1];
	return pid;
}

/* A perf.data output that fails while streaming (disk full) is dropped; the others go on. */
static void stream_failed(int i, int err)
{
	pr_warn("cannot write '%s': %s; no file written\n", cfg.outputs[i].path, strerror(-err));
	stream_err[i] = err;
	perfdata__free(streams[i]);
	streams[i] = NULL;
	output__abort(&cfg.outputs[i]);
}

static int stream_maps(void *ctx, const struct profile *p, uint32_t proc, uint64_t time_ns)
{
	int i, err;

	for (i = 0; i < cfg.nr_outputs; i++)
		if (streams[i] && (err = perfdata__maps(streams[i], p, proc, time_ns)))
			stream_failed(i, err);
	return 0;
}

static int stream_sample(void *ctx, const struct profile *p, uint32_t proc, const struct bpfprof_sample *s)
{
	int i, err;

	for (i = 0; i < cfg.nr_outputs; i++)
		if (streams[i] && (err = perfdata__sample(streams[i], s)))
			stream_failed(i, err);
	return 0;
}

static void stream_round(void)
{
	int i, err;

	for (i = 0; i < cfg.nr_outputs; i++)
		if (streams[i] && (err = perfdata__round(streams[i])))
			stream_failed(i, err);
}

static int open_streams(struct agg *agg)
{
	struct perfdata_opts po = {
		.event = cfg.event,
		.freq_hz = cfg.freq_hz,
		.period_ns = 1000000000ULL / cfg.freq_hz,
		.argc = cfg.argc,
		.argv = cfg.argv,
		.kallsyms_path = "/proc/kallsyms",
	};
	struct agg_observer obs = { .maps_changed = stream_maps, .sample = stream_sample };
	int i, n = 0;

	for (i = 0; i < cfg.nr_outputs; i++) {
		if (cfg.outputs[i].format != OUTPUT_PERFDATA)
			continue;
		streams[i] = perfdata__new(cfg.outputs[i].fd, &po);
		if (!streams[i]) {
			int err = -errno;

			pr_warn("cannot write '%s': %s\n", cfg.outputs[i].path, strerror(-err));
			return err;
		}
		n++;
	}
	if (n)
		agg__set_observer(agg, &obs);
	return 0;
}

static int on_record(void *ctx, void *data, size_t size)
{
	int err = agg__record(ctx, data, size);

	return err == -ENOMEM ? err : 0;
}

static void print_progress(double elapsed, uint64_t samples, uint64_t lost)
{
	fprintf(stderr, "\r\033[Kbpfprof: %.1f s, %llu samples, %llu lost", elapsed,
		(unsigned long long)samples, (unsigned long long)lost);
}

static int write_outputs(const struct profile *p)
{
	int i, err = 0;

	writing = 1;
	for (i = 0; i < cfg.nr_outputs; i++) {
		struct output *o = &cfg.outputs[i];
		struct buf b = { 0 };
		struct gperf_stats gs;
		uint64_t samples = 0;
		int ret = -EINVAL;

		switch (o->format) {
		case OUTPUT_GPERF:
			ret = write_gperf(p, &b, &gs);
			if (ret == -E2BIG)
				pr_warn("'%s': too many processes for one address space\n", o->path);
			break;
		case OUTPUT_PERFDATA:
			ret = stream_err[i];
			if (!ret && streams[i]) {
				samples = perfdata__nr_samples(streams[i]);
				ret = perfdata__finish(streams[i], p);
			}
			break;
		case OUTPUT_PPROF:
			ret = write_pprof(p, &b);
			break;
		case OUTPUT_FOLDED:
			ret = write_folded(p, &b);
			break;
		case OUTPUT_SVG:
			ret = write_svg(p, &b, "bpfprof CPU flame graph");
			break;
		case OUTPUT_NONE:
			break;
		}
		if (ret) {
			if (!stream_err[i])
				pr_warn("cannot write '%s': %s\n", o->path, strerror(-ret));
			output__abort(o);
		} else {
			ret = output__commit(o, o->format == OUTPUT_PERFDATA ? NULL : &b);
		}
		if (!ret && o->format == OUTPUT_PERFDATA)
			fprintf(stderr, "bpfprof: wrote '%s': %llu samples\n", o->path,
				(unsigned long long)samples);
		else if (!ret && o->format != OUTPUT_GPERF)
			fprintf(stderr, "bpfprof: wrote '%s': %zu bytes\n", o->path, b.len);
		if (!ret && o->format == OUTPUT_GPERF) {
			/* as perf record's "Captured and wrote" line; readers' totals match it */
			fprintf(stderr, "bpfprof: wrote '%s': %llu samples, %zu bytes", o->path,
				(unsigned long long)gs.samples_written, b.len);
			if (gs.samples_skipped)
				fprintf(stderr, " (%llu samples without user frames left out)",
					(unsigned long long)gs.samples_skipped);
			fputc('\n', stderr);
		}
		buf__free(&b);
		if (ret && !err)
			err = ret;
	}
	writing = 0;
	return err;
}

static void report_lost(struct session *s)
{
	int n = session__nr_cpus(s), cpu;
	uint64_t samples, dropped, per_cpu[n];

	session__stats(s, &samples, &dropped, per_cpu);
	if (!dropped)
		return;
	fprintf(stderr, "bpfprof: lost %llu samples: ring buffer full (", (unsigned long long)dropped);
	for (cpu = 0; cpu < n; cpu++)
		if (per_cpu[cpu])
			fprintf(stderr, " cpu%d: %llu", cpu, (unsigned long long)per_cpu[cpu]);
	fprintf(stderr, " ); consider --ringbuf-size %lluM\n",
		(unsigned long long)(cfg.ringbuf_bytes >> 20 ? (cfg.ringbuf_bytes >> 20) * 4 : 4));
}

int main(int argc, char **argv)
{
	struct session_opts sopts = { 0 };
	struct symbolizer *sy = NULL;
	struct session *s = NULL;
	struct profile *p = NULL;
	struct agg *agg = NULL;
	uint64_t start, last_progress = 0, last_check = 0, dropped = 0, bpf_samples;
	bool tty, child_done = false;
	pid_t child = -1;
	int go = -1, err, i, status;
	struct sigaction sa = { .sa_handler = on_signal };

	log__libbpf_bridge();
	err = cli__parse(argc, argv, &cfg);
	if (err)
		return err;

	err = check_system();
	if (err)
		return 1;
	for (i = 0; i < cfg.nr_pids; i++) {
		uint32_t tgid = tgid_of(cfg.pids[i]);

		if (!process_alive(cfg.pids[i]) || !tgid) {
			pr_warn("no such process: %u\n", cfg.pids[i]);
			return 1;
		}
		if (tgid != cfg.pids[i])
			pr_info("%u is a thread of process %u: profiling the process\n", cfg.pids[i], tgid);
		cfg.pids[i] = tgid;
	}
	for (i = 0; i < cfg.nr_outputs; i++) {
		err = output__open(&cfg.outputs[i]);
		if (err)
			goto out;
	}

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	p = profile__new();
	agg = p ? agg__new(p, "/proc", 1000000000ULL / cfg.freq_hz) : NULL;
	if (!agg) {
		err = -ENOMEM;
		goto out;
	}
	err = open_streams(agg);
	if (err)
		goto out;
	p->event = profile__intern(p, cfg.event);
	p->freq_hz = cfg.freq_hz;
	p->period_ns = 1000000000ULL / cfg.freq_hz;

	if (cfg.command) {
		child = start_command(cfg.command, &go);
		if (child < 0) {
			err = -errno;
			pr_warn("cannot start '%s': %s\n", cfg.command[0], strerror(-err));
			goto out;
		}
	}

	sopts.event = cfg.event;
	sopts.freq_hz = cfg.freq_hz;
	sopts.ringbuf_bytes = cfg.ringbuf_bytes;
	sopts.filter_tgid = !cfg.all_cpus;
	sopts.follow_forks = cfg.command && !cfg.all_cpus;
	sopts.cgroup_ids = cfg.cgroup_ids;
	sopts.nr_cgroups = (size_t)cfg.nr_cgroups;
	sopts.on_record = on_record;
	sopts.ctx = agg;
	err = session__open(&sopts, &s);
	if (err)
		goto out;
	for (i = 0; i < cfg.nr_pids && !err; i++)
		err = session__add_target(s, cfg.pids[i]);
	if (!err && child > 0 && !cfg.all_cpus)
		err = session__add_target(s, (uint32_t)child);
	if (err) {
		pr_warn("cannot add target: %s\n", strerror(-err));
		goto out;
	}

	p->start_ns = start = now_ns(CLOCK_MONOTONIC);
	p->start_realtime_ns = now_ns(CLOCK_REALTIME);
	if (go >= 0) {
		close(go); /* the command execs now */
		go = -1;
	}
	tty = cfg.progress && isatty(STDERR_FILENO);
	while (!exiting) {
		uint64_t now;

		err = session__poll(s, 100);
		if (err < 0 && err != -EINTR) {
			pr_warn("ring buffer: %s\n", strerror(-err));
			break;
		}
		if (err > 0)
			stream_round();
		err = 0;
		now = now_ns(CLOCK_MONOTONIC);
		if (cfg.duration_s > 0 && (double)(now - start) >= cfg.duration_s * 1e9)
			break;
		if (child > 0 && waitpid(child, &status, WNOHANG) == child) {
			child_done = true;
			break;
		}
		if (cfg.nr_pids && now - last_check > 200000000ULL) {
			bool any = false;

			last_check = now;
			for (i = 0; i < cfg.nr_pids && !any; i++)
				any = process_alive(cfg.pids[i]);
			if (!any) {
				pr_info("every target process has exited\n");
				break;
			}
		}
		if (tty && now - last_progress >= 1000000000ULL) {
			last_progress = now;
			session__stats(s, &bpf_samples, &dropped, NULL);
			print_progress((double)(now - start) / 1e9, p->nr_samples, dropped);
		}
	}
	p->end_ns = now_ns(CLOCK_MONOTONIC);
	session__stop(s);
	err = session__drain(s);
	if (err < 0) {
		pr_warn("ring buffer: %s\n", strerror(-err));
		goto out;
	}
	if (err > 0)
		stream_round();
	err = 0;
	if (tty)
		fprintf(stderr, "\r\033[K");
	session__stats(s, &bpf_samples, &dropped, NULL);
	p->nr_lost = dropped;
	if (agg__nr_bad(agg))
		pr_warn("%llu malformed ring buffer records skipped\n",
			(unsigned long long)agg__nr_bad(agg));

	if (child > 0 && !child_done) {
		/* the run ended first (duration, signal): stop the command as perf does */
		kill(child, SIGTERM);
		waitpid(child, &status, 0);
		child_done = true;
	}
	if (child_done && child > 0 && WIFEXITED(status) && WEXITSTATUS(status))
		pr_warn("command exited with status %d\n", WEXITSTATUS(status));

	sy = symbolizer__new("/proc/kallsyms", "/proc");
	err = sy ? symbolizer__symbolize(sy, p) : -ENOMEM;
	if (err) {
		pr_warn("symbolization failed: %s\n", strerror(-err));
		goto out;
	}
	err = write_outputs(p);
	report__summary(stderr, p, (double)(p->end_ns - p->start_ns) / 1e9, cfg.top_n);
	report_lost(s);
	if (!p->nr_samples)
		pr_warn("no samples collected\n");

out:
	if (go >= 0) {
		/* never released: a byte instead of EOF tells the child to exit unrun */
		if (write(go, "x", 1) != 1)
			kill(child, SIGKILL);
		close(go);
	}
	if (child > 0 && !child_done)
		waitpid(child, NULL, 0);
	for (i = 0; i < cfg.nr_outputs; i++) {
		perfdata__free(streams[i]);
		output__abort(&cfg.outputs[i]);
	}
	session__close(s);
	symbolizer__free(sy);
	agg__free(agg);
	profile__free(p);
	return err != 0;
}

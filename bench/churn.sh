#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Bounded by design (issue 24): a host agent's run, `bpfprof -v -a --interval
# 10 --output-dir D --keep 2 -F 999`, over NPROCS (default 100 000)
# short-lived processes started one after the other (each 0.3 ms of CPU time
# in churn_hot, then exit; some are sampled, so their maps are read, their
# files held and, under the default --call-graph dwarf, their unwind entries
# loaded). At 0, 25, 50, 75 and 100 % of the processes, and 3 s after the
# last, it notes bpfprof's RSS (VmRSS, RssAnon), its descriptors and the
# entries of its BPF maps that gain one per process (tests/tools/held.c:
# counted from the kernel's side). Flat means: what the run holds follows
# the processes alive, not those ever seen. The processes run in a cgroup
# of their own, the only one bpfprof samples (--cgroup), so that other work
# on the machine is not counted in. Needs root and gcc. QUICK=1: 10 000.
# NOTES=FILE: the notes also go to FILE as they come (for a run cut short).
#   bench/churn.sh [NPROCS]
set -euo pipefail
. "$(dirname "$0")/lib.bash"

NPROCS=${1:-100000}
[ "$QUICK" = 1 ] && NPROCS=10000
cg_root=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
[ -n "$cg_root" ] || { echo "bench: churn needs a cgroup2 hierarchy" >&2; exit 1; }
cg=$cg_root/bpfprof-bench-churn.$$
mkdir "$cg"
trap 'xargs -r kill -KILL <"$cg/cgroup.procs" 2>/dev/null; sleep 0.2; rmdir "$cg" 2>/dev/null; cleanup' EXIT
cd "$work"

gcc -O1 "$top/tests/tools/held.c" -o held
cat >child.c <<'EOF'
#include <time.h>
static volatile unsigned long sink;
__attribute__((noinline)) void churn_hot(void)
{
	struct timespec ts, now;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	do {
		for (int i = 0; i < 1000; i++)
			sink = sink * 6364136223846793005UL + 1;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
	} while ((now.tv_sec - ts.tv_sec) * 1000000000L + now.tv_nsec - ts.tv_nsec < 300000);
}
int main(void)
{
	churn_hot();
	return 0;
}
EOF
gcc -O0 -g -fno-omit-frame-pointer child.c -o child
# spawner N CGROUP: joins CGROUP, then runs ./child N times, one at a time;
# at each quarter (and 3 s after the last) one line about its parent, bpfprof:
# "PCT ELAPSED_S rss KB anon KB fds N MAP N ..."
cat >spawner.c <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double t0;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void note(const char *pct)
{
	char cmd[256], line[256], path[64];
	long rss = -1, anon = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", getppid());
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		sscanf(line, "VmRSS: %ld", &rss);
		sscanf(line, "RssAnon: %ld", &anon);
	}
	if (f)
		fclose(f);
	printf("%s %.1f rss %ld anon %ld ", pct, now() - t0, rss, anon);
	fflush(stdout);
	snprintf(cmd, sizeof(cmd), "./held %d unwind_procs unwind_mappings py_procs seen noticed "
		 "offcpu_pending", getppid());
	if (system(cmd))
		printf("\n");
	fflush(stdout);
}

int main(int argc, char **argv)
{
	long n = atol(argv[1]);
	FILE *f = fopen(argv[2], "w");

	if (!f || fprintf(f, "%d\n", getpid()) < 0 || fclose(f))
		return 1;
	t0 = now();
	sleep(1);
	for (long i = 0; i <= n; i++) {
		pid_t p;

		if (i % (n / 4) == 0) {
			char pct[8];

			snprintf(pct, sizeof(pct), "%ld%%", i * 100 / n);
			note(pct);
		}
		if (i == n)
			break;
		p = fork();
		if (p == 0) {
			execl("./child", "child", (char *)NULL);
			_exit(127);
		}
		if (p < 0 || waitpid(p, NULL, 0) < 0)
			return 1;
	}
	sleep(3);
	note("after");
	return 0;
}
EOF
gcc -O1 spawner.c -o spawner
mkdir out
"$BPFPROF" -v -a --cgroup "$cg" -F 999 --interval 10 --output-dir "$work/out" --keep 2 -o p.pb.gz \
	-- ./spawner "$NPROCS" "$cg/cgroup.procs" >notes.txt 2>log.txt &
bp=$!
# the notes as they come, for a run cut short (NOTES=FILE)
[ -z "${NOTES:-}" ] || tail -f notes.txt >"$NOTES" &
wait $bp
echo "$NPROCS processes, one at a time, under bpfprof -v -a --cgroup --interval 10 -F 999:"
cat notes.txt
grep -E '^bpfprof: [0-9.]+ s, ' log.txt | tail -1
grep -c '^bpfprof: held: RSS' log.txt | sed 's/^/intervals written: /'
grep '^bpfprof: held:' log.txt | tail -2
# RESULT lines: the growth from 25 % to 100 % (past the start's one-time costs) per 1000 processes
n25() { awk -v p="$1" -v k="$2" '$1 == p { for (i = 3; i < NF; i += 2) if ($i == k) print $(i + 1) }' notes.txt; }
for k in rss anon fds unwind_procs unwind_mappings; do
	a=$(n25 25% $k) b=$(n25 100% $k) c=$(n25 after $k)
	result "churn $k, 25 % -> 100 % of $NPROCS processes (3 s after)" "$a -> $b ($c)" - \
		"$(calc "($b - $a) / ($NPROCS * 0.75 / 1000)") a 1000 processes" "flat" info
done

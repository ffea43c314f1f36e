#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Process churn under -a: bpfprof -a -F 999 profiles the machine while a
# script starts NLONG processes that live 60 ms doing CPU work in churn_hot
# (churnlong) with PER short ones (churnshort, 1 ms of work) before each:
# thousands of processes, many more than the aggregator keeps whole maps
# snapshots for (AGG_MAX_TRACKED, 256), so exited ones are reduced to their
# sampled mappings as it runs (user/capture/agg.c). Each maps MAPS x 2 extra regions
# first, as heavier programs do (a JVM has thousands), so that what a
# process costs is plain to see. Measured:
#  - the share of churnlong's samples with user frames whose leaf frame is
#    named: processes living 50 ms or more must stay named (>= MIN_NAMED %);
#  - bpfprof's anonymous memory (RssAnon) over the second half of the
#    spawns, when the limit is long reached, per process started: what one
#    more process costs (<= MAX_KB_PER_PROC; measured 1.0-3.3 kB: its
#    samples and 2 or 3 mappings; 13.8 kB with every snapshot kept whole,
#    53 kB for each process whose maps were read in time);
#  - the peak RSS of the whole run, writing included (<= MAX_PEAK_MB).
# Needs root (BPF) and gcc.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
BPFPROF=${BPFPROF:-$top/bpfprof}
NLONG=${NLONG:-150}
PER=${PER:-12}
MAPS=${MAPS:-300}
MIN_NAMED=${MIN_NAMED:-85}
MAX_KB_PER_PROC=${MAX_KB_PER_PROC:-6}
MAX_PEAK_MB=${MAX_PEAK_MB:-256}
work=$(mktemp -d /tmp/bpfprof-churn.XXXXXX)
trap 'rm -rf "$work"' EXIT

. "$(dirname "$0")/lib.bash"

if [ "$(id -u)" -ne 0 ]; then
	skip "process churn" "needs root for BPF and perf events"
	finish
fi
if [ ! -x "$BPFPROF" ]; then
	fail "build" "missing $BPFPROF: run make"
	finish
fi
if [ ! -x /usr/bin/time ]; then
	skip "process churn" "/usr/bin/time not installed (package time)"
	finish
fi
cd "$work" || exit 1

# churner SECONDS NREGIONS: 2 x NREGIONS mappings (alternating protections
# keep them apart), then CPU work in churn_hot; frame pointers, no inlining
cat >churner.c <<'EOC'
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) void churn_hot(unsigned long n)
{
	unsigned long x = sink;

	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void churn_run(double seconds)
{
	double end = now() + seconds;

	while (now() < end)
		churn_hot(20000);
}

int main(int argc, char **argv)
{
	long pg = sysconf(_SC_PAGESIZE), n = argc > 2 ? atol(argv[2]) : 0;
	char *base = n > 0 ? mmap(NULL, 2 * n * pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) : NULL;

	for (long i = 0; base && base != MAP_FAILED && i < n; i++)
		mprotect(base + 2 * i * pg, pg, PROT_READ);
	churn_run(argc > 1 ? atof(argv[1]) : 0.06);
	return 0;
}
EOC
if ! gcc -g -O0 -fno-omit-frame-pointer churner.c -o churnlong 2>cc.err; then
	fail "build churner.c" "$(cat cc.err)"
	finish
fi
cp churnlong churnshort

# The command bpfprof runs (its parent is bpfprof): the processes, with
# bpfprof's RssAnon noted before the first, halfway and after the last.
cat >spawn.sh <<'EOS'
#!/bin/bash
rss() { awk '/^RssAnon:/ { print $2 }' /proc/$PPID/status; }
sleep 1
echo "start $(rss)" >rss.txt
for ((i = 0; i < NLONG; i++)); do
	[ $i -eq $((NLONG / 2)) ] && echo "mid $(rss)" >>rss.txt
	for ((j = 0; j < PER; j++)); do
		./churnshort 0.001 $MAPS
	done
	./churnlong 0.06 $MAPS
done
echo "end $(rss)" >>rss.txt
EOS
chmod +x spawn.sh

start=$(date +%s)
NLONG=$NLONG PER=$PER MAPS=$MAPS /usr/bin/time -v -o time.txt "$BPFPROF" -v -a -F 999 -o churn.folded -o churn.pb.gz \
	-- ./spawn.sh >out.txt 2>log.txt
rc=$?
secs=$(($(date +%s) - start))
nprocs=$(sed -n 's/^bpfprof: [0-9.]* s, [0-9]* samples, [0-9]* lost, \([0-9]*\) processes.*/\1/p' log.txt)
if [ $rc -ne 0 ] || [ ! -s churn.folded ] || [ -z "$nprocs" ]; then
	fail "bpfprof -a over the churn: rc=$rc" "$(grep -v '^bpfprof: no symbols for' log.txt | head -20)"
	finish
fi
spawned=$((NLONG * (PER + 1)))
if [ "$nprocs" -gt 1000 ] && grep -q "over 256 processes tracked" log.txt; then
	ok "churn: $spawned processes started in ${secs} s, $nprocs profiled; exited ones reduced past 256 tracked"
else
	fail "churn: $nprocs processes profiled; want over 1000 and the reduction running" \
		"$(grep -v '^bpfprof: no symbols for' log.txt | head -20)"
fi

# Folded lines: "comm;user root;...;user leaf;kernel..._[k] count". Per comm:
# samples with user frames, those whose user leaf is named, those in churn_hot.
named_of() {
	awk -v c="$1" '{ n = $NF; line = substr($0, 1, length($0) - length(n) - 1); k = split(line, f, ";");
		if (f[1] != c) next; leaf = ""; for (i = 2; i <= k; i++) if (f[i] !~ /_\[k\]$/) leaf = f[i];
		if (leaf == "") next; t += n; if (leaf !~ /^\[/) named += n; if (leaf == "churn_hot") hot += n }
		END { printf "%d %d %d\n", t, named, hot }' churn.folded
}
read -r total named hot <<<"$(named_of churnlong)"
pct=$(awk -v n="$named" -v t="$total" 'BEGIN { if (t) printf "%.1f", 100 * n / t }')
hotpct=$(awk -v n="$hot" -v t="$total" 'BEGIN { if (t) printf "%.1f", 100 * n / t }')
read -r stotal snamed _ <<<"$(named_of churnshort)"
spct=$(awk -v n="$snamed" -v t="$stotal" 'BEGIN { if (t) printf "%.1f", 100 * n / t }')
# Enough samples for the share to mean something: at least 5 per 60 ms
# process (NLONG * 5, 750). At 999 Hz an idle machine gives each about 60;
# other load on the CPUs leaves it fewer (2466 for 150 processes measured with
# 10 runnable tasks on 2 CPUs), since churn_run spins for 60 ms of wall time.
# With 750 samples the standard error of a share of 85-98 % is at most 1.3
# points, so the MIN_NAMED bound (about 13 points under the measured 97-98 %)
# is not reached by chance.
min_samples=$((NLONG * 5))
if [ "$total" -ge "$min_samples" ] && awk -v p="$pct" -v m="$MIN_NAMED" 'BEGIN { exit !(p != "" && p >= m) }'; then
	ok "60 ms processes: $pct% of $total samples named (churn_hot $hotpct%; want >= $MIN_NAMED% of >= $min_samples); 1 ms ones: $spct% of $stotal"
else
	fail "60 ms processes: $pct% of $total samples named (churn_hot $hotpct%), want >= $MIN_NAMED% of >= $min_samples samples" \
		"$(awk '$1 ~ /^churnlong;/' churn.folded | sort -t' ' -k2 -nr | head -8)"
fi

# go tool pprof reads the same process labels: churnlong's churn_hot is there
if command -v go >/dev/null; then
	if HOME=${HOME:-/root} PPROF_TMPDIR=$work go tool pprof -top -tagfocus=comm=churnlong churn.pb.gz 2>pprof.err |
		grep -q ' churn_hot$'; then
		ok "pprof -tagfocus=comm=churnlong: churn_hot named"
	else
		fail "pprof -tagfocus=comm=churnlong lacks churn_hot" "$(cat pprof.err)"
	fi
fi

read -r _ rss0 <<<"$(grep '^start ' rss.txt)"
read -r _ rss1 <<<"$(grep '^mid ' rss.txt)"
read -r _ rss2 <<<"$(grep '^end ' rss.txt)"
peak=$(sed -n 's/^[[:space:]]*Maximum resident set size (kbytes): //p' time.txt)
half=$(((NLONG - NLONG / 2) * (PER + 1)))
per=$(awk -v a="${rss1:-0}" -v b="${rss2:-0}" -v n="$half" 'BEGIN { printf "%.2f", (b - a) / n }')
if [ -n "${rss1:-}" ] && [ -n "${rss2:-}" ] && awk -v p="$per" -v m="$MAX_KB_PER_PROC" 'BEGIN { exit !(p <= m) }'; then
	ok "memory: RssAnon ${rss0:-?} kB at the start, $rss1 halfway, $rss2 at the end: $per kB per process over the second half (want <= $MAX_KB_PER_PROC)"
else
	fail "memory: RssAnon '${rss0:-}' -> '${rss1:-}' -> '${rss2:-}' kB, $per kB per process over the second half (want <= $MAX_KB_PER_PROC)"
fi
if [ -n "$peak" ] && [ "$peak" -le $((MAX_PEAK_MB * 1024)) ]; then
	ok "peak RSS of the run, writing included: $((peak / 1024)) MB (want <= $MAX_PEAK_MB)"
else
	fail "peak RSS '$peak' kB, want <= $MAX_PEAK_MB MB" "$(cat time.txt)"
fi
finish

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Benchmark 5 (issue 8): peak RSS (wait4 rusage ru_maxrss) of a DURATION
# (default 60 s) `bpfprof -a -F 999 -d DURATION -o OUT.pb.gz` run, with
# bench/spin on every CPU and a short-lived process every 50 ms (new
# processes are what grow a profiler: maps, comm, cgroup, files held open).
# Reference: `perf record -a -g -F 999 -- sleep DURATION` under the same load.
# Also printed: the same bpfprof run with --ringbuf-size 8M, the default
# before 2026-11-24 (the BPF ring buffer's data pages are mapped twice into
# the reader, so an 8 MiB buffer alone is 16 MiB of RSS; the default is now
# 512 KiB per CPU, at least 2 MiB), and with --cgroup limited to a cgroup that
# holds only the load (CGROUP=0 skips it): on a shared machine, what -a sees
# besides the load (other people's tests, thousands of processes) weighs more
# than bpfprof itself. Goal: at most 30 MB.
set -euo pipefail
. "$(dirname "$0")/lib.bash"

DURATION=${DURATION:-60}
SMALL_RING=${SMALL_RING:-1}
CGROUP=${CGROUP:-1}
if [ "$QUICK" = 1 ]; then
	DURATION=10 SMALL_RING=0 CGROUP=0
fi
cg_root=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
cg=
if [ "$CGROUP" = 1 ] && [ -n "$cg_root" ]; then
	cg=$cg_root/bpfprof-bench.$$
	mkdir "$cg" || cg=
fi
cg_cleanup() { [ -z "$cg" ] || rmdir "$cg" 2>/dev/null || true; }

load_start() {
	# each joins the load's cgroup (when there is one) before it forks anything
	sh -c '[ -z "$1" ] || echo $$ >"$1/cgroup.procs"; exec "$2" -i 10000000000000' sh "$cg" "$SPIN" >/dev/null &
	spin_pid=$!
	(
		[ -z "$cg" ] || echo "$BASHPID" >"$cg/cgroup.procs"
		while :; do /bin/true; sleep 0.05; done
	) &
	churn_pid=$!
}
load_stop() {
	kill "$churn_pid" 2>/dev/null || true
	kill "$spin_pid" 2>/dev/null || true	# spin stops its workers
	wait "$spin_pid" "$churn_pid" 2>/dev/null || true
}

load_start
"$RUNSTAT" -o "$work/b.rs" -- "$BPFPROF" -a -F 999 -d "$DURATION" -o "$work/mem.pb.gz" 2>"$work/b.err"
"$RUNSTAT" -o "$work/p.rs" -- "$PERF" record -a -g -F 999 -o "$work/p.data" -- sleep "$DURATION" 2>"$work/p.err"
if [ "$SMALL_RING" = 1 ]; then
	"$RUNSTAT" -o "$work/b4.rs" -- "$BPFPROF" -a -F 999 -d "$DURATION" --ringbuf-size 8M \
		-o "$work/mem8.pb.gz" 2>"$work/b4.err"
fi
if [ -n "$cg" ]; then
	"$RUNSTAT" -o "$work/bc.rs" -- "$BPFPROF" -a --cgroup "$cg" -F 999 -d "$DURATION" \
		-o "$work/memc.pb.gz" 2>"$work/bc.err"
fi
load_stop
sleep 0.2
cg_cleanup

b=$(field "$work/b.rs" maxrss_kb)
p=$(field "$work/p.rs" maxrss_kb)
echo "bpfprof: $(sed -n 's/^bpfprof: \([0-9.]* s, .*\)/\1/p' "$work/b.err" | head -1); $(cat "$work/b.rs")"
echo "perf record: $(perf_samples "$work/p.err") samples; $(cat "$work/p.rs")"
if [ "$SMALL_RING" = 1 ]; then
	echo "bpfprof --ringbuf-size 8M: peak RSS $(field "$work/b4.rs" maxrss_kb) kB, $(bpfprof_lost "$work/b4.err") lost"
fi
if [ -n "$cg" ]; then
	echo "bpfprof -a --cgroup (the load only): peak RSS $(field "$work/bc.rs" maxrss_kb) kB; $(sed -n 's/^bpfprof: \([0-9.]* s, .*\)/\1/p' "$work/bc.err" | head -1)"
fi
result "peak RSS, ${DURATION} s -a -F 999" "bpfprof $(calc "$b / 1024") MiB" "perf record -g $(calc "$p / 1024") MiB" \
	"$(calc "$b / $p")" "<= 30 MB" "$(verdict "$b" "<=" $((30 * 1000000 / 1024)))"

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `make bench`: every issue-8 benchmark in turn, then a summary table of the
# RESULT lines (figure, reference measured in the same run, ratio, goal).
# Needs root. About 8 minutes; QUICK=1 about 1 (sanity only, figures not to
# be quoted). The full log goes to bench-results/DATE.log under OUTPUT.
#   BPFPROF=path/to/bpfprof OUTPUT=build/dir bench/run.sh [NAME...]
# NAME: overhead (benchmarks 1 and 2), floor (what the sampling costs with
# an empty BPF program), agg-throughput, finalize, memory, loss,
# symbols (the symbol tables alone; BEFORE=path/to/old/symload compares),
# churn (100 000 short processes under -a --interval: RSS, descriptors, BPF
# map entries at each quarter; not in the default list: minutes on an idle
# machine, hours on a loaded 2-CPU VM where a process takes 65 ms to start).
# bpf-cost (the BPF program's run time a sample at 24 frames, dwarf and fp,
# and per frame, against the primitives' floor when PRIMITIVES names that
# build: `make bench` does; bpf-cost.sh OLD/bpfprof NEW/bpfprof compares
# builds in turn). Not in the default list: python (the
# Python walk's BPF time a sample, 30 frames, and the naming cost); java and
# node (the same for 30 Java or JavaScript frames; node: BEFORE=old/bpfprof
# runs an older build in the same rounds); cache (the
# unwind table cache: a restart warm against cold, about 5 minutes).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
export OUTPUT=${OUTPUT:-$top/.output}
export BPFPROF=${BPFPROF:-$top/bpfprof}
export QUICK=${QUICK:-0}
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(overhead floor bpf-cost agg-throughput finalize memory loss symbols ready mmap_events)
logdir=$OUTPUT/bench-results
mkdir -p "$logdir"
log=$logdir/$(date -u +%Y%m%dT%H%M%SZ).log

{
	echo "bpfprof benchmarks, $(date -u '+%Y-%m-%d %H:%M UTC')$([ "$QUICK" = 1 ] && echo ', QUICK (sanity run)')"
	echo "machine: $(nproc) CPUs ($(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)), $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo), kernel $(uname -r)"
	echo "bpfprof: $BPFPROF ($(cd "$top" && git describe --always --dirty 2>/dev/null || echo '?')); $(perf --version); clang $(clang++-14 --version 2>/dev/null | sed -n '1s/.*version \([0-9.]*\).*/\1/p')"
	echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$log"
for n in "${names[@]}"; do
	echo "== $n" | tee -a "$log"
	start=$(date +%s)
	"$top/bench/$n.sh" 2>&1 | tee -a "$log"
	echo "($n: $(($(date +%s) - start)) s)" | tee -a "$log"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$log"
{
	echo
	echo "| benchmark | bpfprof | reference (same run) | ratio | goal | |"
	echo "|---|---|---|---|---|---|"
	sed -n 's/^RESULT \(.*\)$/| \1 |/p' "$log"
} | tee -a "$log"
echo "log: $log"

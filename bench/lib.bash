# SPDX-License-Identifier: MIT
# Shared by the benchmark scripts (sourced). Finds the binaries, holds the
# arithmetic (awk: no bc needed) and prints each figure as one line:
#
#   RESULT <name> | <figure> | <reference> | <ratio> | <goal> | met|MISSED|info
#
# bench/run.sh collects those lines into the summary table. QUICK=1 shortens
# every benchmark to a sanity run whose figures are not meant to be quoted.
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUTPUT=${OUTPUT:-$top/.output}
BPFPROF=${BPFPROF:-$top/bpfprof}
BENCH_BIN=${BENCH_BIN:-$OUTPUT/bench}
QUICK=${QUICK:-0}
# Every benchmark starts cold (tables built, not read from the host's unwind
# cache) unless it names a cache itself (bench/cache.sh)
export BPFPROF_UNWIND_CACHE=none
SPIN=$BENCH_BIN/spin
RUNSTAT=$BENCH_BIN/runstat
REPLAY=$BENCH_BIN/agg_replay
PERF=${PERF:-perf}
NCPU=$(nproc)

for b in "$BPFPROF" "$SPIN" "$RUNSTAT" "$REPLAY"; do
	[ -x "$b" ] || { echo "bench: missing '$b': run 'make bench'" >&2; exit 1; }
done
if [ "$(id -u)" -ne 0 ]; then
	echo "bench: needs root (BPF programs, perf record -a)" >&2
	exit 1
fi

# calc EXPR: awk arithmetic, printed with up to 6 significant digits
calc() { awk "BEGIN { printf \"%.6g\n\", $* }"; }
# median of the arguments (the mean of the middle two for an even count)
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# field FILE KEY: the value after KEY in a "key value key value" line
field() { awk -v k="$2" '{ for (i = 1; i < NF; i++) if ($i == k) { print $(i + 1); exit } }' "$1"; }
# verdict VALUE OP LIMIT: "met" or "MISSED" (OP is <= or >=)
verdict() { awk -v v="$1" -v l="$3" -v op="$2" 'BEGIN { ok = op == "<=" ? v <= l : v >= l; print ok ? "met" : "MISSED" }'; }
result() { # NAME FIGURE REFERENCE RATIO GOAL VERDICT
	printf 'RESULT %s | %s | %s | %s | %s | %s\n' "$@"
}

# Samples bpfprof reports in its summary line ("bpfprof: 10.08 s, 20084 samples, 0 lost, ...")
bpfprof_samples() { sed -n 's/^bpfprof: [0-9.]* s, \([0-9]*\) samples, \([0-9]*\) lost.*/\1/p' "$1" | tail -1; }
bpfprof_lost() { sed -n 's/^bpfprof: [0-9.]* s, \([0-9]*\) samples, \([0-9]*\) lost.*/\2/p' "$1" | tail -1; }
# Samples perf record reports ("[ perf record: Captured and wrote 1.2 MB x (12345 samples) ]")
perf_samples() { sed -n 's/.*Captured and wrote .*(\([0-9]*\) samples).*/\1/p' "$1" | tail -1; }

# Restore the sysctls benchmarks change; perf also lowers
# kernel.perf_event_max_sample_rate by itself when interrupts run long.
saved_bpf_stats=$(sysctl -n kernel.bpf_stats_enabled)
saved_max_rate=$(sysctl -n kernel.perf_event_max_sample_rate)
restore_sysctls() {
	sysctl -q -w kernel.bpf_stats_enabled="$saved_bpf_stats" >/dev/null || true
	sysctl -q -w kernel.perf_event_max_sample_rate="$saved_max_rate" >/dev/null || true
}

work=$(mktemp -d /tmp/bpfprof-bench.XXXXXX)
cleanup() {
	local j
	for j in $(jobs -p); do kill "$j" 2>/dev/null || true; done
	wait 2>/dev/null || true
	restore_sysctls
	rm -rf "$work"
}
trap cleanup EXIT

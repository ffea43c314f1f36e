#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Benchmark `bpfprof xray` against `llvm-xray stack` on the same FDR trace of
# at least MIN_MB (default 50) MB, written by tests/xray/workload.c. Prints
# both wall times (best of RUNS) and the ratio. One thread in one buffer:
# llvm-xray 14's stack rejects traces whose threads span several buffers
# ("record with no matching function entry"), which bpfprof reads.
# Usage: bench/xray-bench.sh
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
BPFPROF=${BPFPROF:-$top/bpfprof}
MIN_MB=${MIN_MB:-50}
ITERS=${ITERS:-400000}
RUNS=${RUNS:-3}
XRAY=$(command -v llvm-xray-14 || command -v llvm-xray)
CLANG=$(command -v clang-14 || command -v clang)
work=$(mktemp -d /tmp/bpfprof-xray-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

"$CLANG" -g -O1 -fxray-instrument -fxray-instruction-threshold=1 "$top/tests/xray/workload.c" \
	-o "$work/wl" -lpthread
XRAY_WORKLOAD_CONFIG="func_duration_threshold_us=0 buffer_size=134217728 buffer_max=2" \
XRAY_OPTIONS="patch_premain=false xray_logfile_base=$work/xray-log." \
	"$work/wl" fdr "$ITERS" 1 2>/dev/null
trace=$(ls "$work"/xray-log.*)
mb=$(( $(stat -c %s "$trace") / 1000000 ))
if [ "$mb" -lt "$MIN_MB" ]; then
	echo "trace is $mb MB, under $MIN_MB MB: raise ITERS" >&2
	exit 1
fi

# both must succeed on the file before they are timed
"$BPFPROF" xray --instr-map "$work/wl" "$trace" -o "$work/out.prof"
"$XRAY" stack -instr_map="$work/wl" "$trace" >"$work/stack.txt"

best() { # best wall time in seconds of RUNS runs of "$@"
	local b=999999 s e t i
	for i in $(seq "$RUNS"); do
		s=$(date +%s.%N)
		"$@" >/dev/null 2>&1
		e=$(date +%s.%N)
		t=$(echo "$e - $s" | bc)
		b=$(echo "if ($t < $b) $t else $b" | bc)
	done
	echo "$b"
}

ours=$(best "$BPFPROF" xray --instr-map "$work/wl" "$trace" -o "$work/out.prof")
theirs=$(best "$XRAY" stack -instr_map="$work/wl" "$trace")
printf 'trace: %s MB FDR v5, %s\n' "$mb" "$(basename "$trace")"
printf 'bpfprof xray -o out.prof : %.3f s\n' "$ours"
printf 'llvm-xray stack          : %.3f s\n' "$theirs"
printf 'ratio                    : %.1fx\n' "$(echo "$theirs / $ours" | bc -l)"

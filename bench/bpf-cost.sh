#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The BPF program's run time per sample, for comparing builds (not part of
# `make bench`'s goals; benchmark 2 reports the same figure for one build).
# bench/spin loads every CPU while each given bpfprof runs `-a -F 999`; the
# program's run_time_ns / run_cnt (kernel.bpf_stats_enabled, bpftool prog
# show) is read over a window in the middle of the run. The builds run in
# turn, ROUNDS times, so a disturbance hits each alike; medians.
#   bench/bpf-cost.sh OLD/bpfprof NEW/bpfprof ...
# Measured this way: the kernel's user-stack walk (bpf_get_stack with
# BPF_F_USER_STACK) against the walk in bpf/unwind.bpf.h (docs/BENCHMARKS.md).
set -euo pipefail
. "$(dirname "$0")/lib.bash"

ROUNDS=${ROUNDS:-3}
[ "$QUICK" = 1 ] && ROUNDS=1
[ $# -gt 0 ] || set -- "$BPFPROF"
command -v bpftool >/dev/null || { echo "bench: bpftool missing" >&2; exit 1; }
sysctl -q -w kernel.bpf_stats_enabled=1

# "run_time_ns run_cnt" of the loaded on_sample programs
counters() {
	bpftool prog show name on_sample --json | awk '
		{ while (match($0, /"run_time_ns":[0-9]+/)) { t += substr($0, RSTART + 14, RLENGTH - 14); $0 = substr($0, RSTART + RLENGTH) } }
		END { printf "%d ", t }'
	bpftool prog show name on_sample --json | awk '
		{ while (match($0, /"run_cnt":[0-9]+/)) { c += substr($0, RSTART + 10, RLENGTH - 10); $0 = substr($0, RSTART + RLENGTH) } }
		END { printf "%d\n", c }'
}

declare -A per_build
for ((r = 1; r <= ROUNDS; r++)); do
	for b in "$@"; do
		"$SPIN" -i 10000000000000 >/dev/null &
		spin=$!
		"$b" -a -F 999 -d 5 -o "$work/cost.folded" 2>"$work/cost.err" &
		prof=$!
		sleep 1.5
		read -r t0 c0 <<<"$(counters)"
		sleep 2
		read -r t1 c1 <<<"$(counters)"
		wait "$prof" || true
		kill "$spin" 2>/dev/null || true
		wait "$spin" 2>/dev/null || true
		ns=$(calc "($t1 - $t0) / ($c1 - $c0)")
		echo "round $r: $b: $ns ns a run ($((c1 - c0)) runs)"
		per_build[$b]="${per_build[$b]:-} $ns"
	done
done
for b in "$@"; do
	# shellcheck disable=SC2086
	result "BPF run time per sample, -a -F 999 ($b)" "$(median ${per_build[$b]}) ns" "-" "-" "-" "info"
done

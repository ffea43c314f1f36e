#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The floor under benchmark 1: how much of the slowdown is the sampling
# itself (a cpu-clock perf event per CPU firing at -F, an hrtimer interrupt
# and an overflow each time) rather than what the profiler does per sample.
# bench/spin's fixed work on every CPU, as in bench/overhead.sh, alone and
# under, interleaved over ROUNDS rounds (order rotating; each profiled run
# against the alone runs on both sides of it), medians:
#   empty   bpfprof -a -F 999 built with BPFPROF_BENCH_EMPTY_PROGRAM (its
#           program returns at once: no stacks, no ring buffer; make bench
#           builds it into .output-bench-empty)
#   bpfprof bpfprof -a -F 999
#   perf-g  perf record -a -g -F 999
#   perf    perf record -a -F 999 (no callchains)
# Where "empty" is as slow as the others, the profilers' own work is lost in
# what the events cost the machine (on this project's VMs: about 40 us a
# sample), and no profiler built on these events can be much lighter.
set -euo pipefail
. "$(dirname "$0")/lib.bash"

EMPTY=${EMPTY:-$top/.output-bench-empty/bpfprof}
[ -x "$EMPTY" ] || { echo "bench: missing '$EMPTY': run 'make bench-floor-bin'" >&2; exit 1; }
ROUNDS=${ROUNDS:-5}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-3}
if [ "$QUICK" = 1 ]; then
	ROUNDS=1 SECONDS_PER_RUN=1
fi
cal=$("$SPIN" -i 200000000 | awk '{ print $2 }')
ITERS=$(awk -v c="$cal" -v s="$SECONDS_PER_RUN" 'BEGIN { printf "%.0f", 200000000 * s / c }')

run() { # VARIANT ROUND: spin's report in $work/VARIANT.ROUND
	local spin=("$SPIN" -i "$ITERS") out="$work/$1.$2"
	case $1 in
	alone)	"${spin[@]}" >"$out" ;;
	empty)	"$EMPTY" -a -F 999 -o "$work/e.pb.gz" -- "${spin[@]}" >"$out" 2>/dev/null ;;
	bpfprof) "$BPFPROF" -a -F 999 -o "$work/b.pb.gz" -- "${spin[@]}" >"$out" 2>/dev/null ;;
	perf-g)	"$PERF" record -a -g -F 999 -o "$work/pg.data" -- "${spin[@]}" >"$out" 2>/dev/null ;;
	perf)	"$PERF" record -a -F 999 -o "$work/p.data" -- "${spin[@]}" >"$out" 2>/dev/null ;;
	esac
}

# each profiled run against the mean of the alone runs just before and after
# it (bench/overhead.sh says why)
variants=(empty bpfprof perf-g perf)
for ((r = 1; r <= ROUNDS; r++)); do
	run alone "$r.0"
	for ((i = 0; i < ${#variants[@]}; i++)); do
		v=${variants[$(((i + r - 1) % ${#variants[@]}))]}
		run "$v" "$r"
		run alone "$r.$((i + 1))"
		echo "$i $((i + 1))" >"$work/$v.$r.alone"
	done
	printf 'round %d: alone' "$r"
	for ((i = 0; i <= ${#variants[@]}; i++)); do printf ' %ss' "$(field "$work/alone.$r.$i" elapsed_s)"; done
	for v in "${variants[@]}"; do printf ' %s %ss' "$v" "$(field "$work/$v.$r" elapsed_s)"; done
	echo
done

slowdowns() {
	local r a b
	for ((r = 1; r <= ROUNDS; r++)); do
		read -r a b <"$work/$1.$r.alone"
		calc "($(field "$work/$1.$r" elapsed_s) * 2 / ($(field "$work/alone.$r.$a" elapsed_s) + $(field "$work/alone.$r.$b" elapsed_s)) - 1) * 100"
	done
}
for v in empty bpfprof perf-g perf; do
	echo "$v slowdown % per round: $(slowdowns "$v" | tr '\n' ' ')"
done
e=$(median $(slowdowns empty))
b=$(median $(slowdowns bpfprof))
pg=$(median $(slowdowns perf-g))
p=$(median $(slowdowns perf))
result "floor: slowdown with an empty BPF program, -a -F 999" "empty $(calc "$e")%, bpfprof $(calc "$b")%" \
	"perf record -g $(calc "$pg")%, without -g $(calc "$p")%" "$(calc "$b - $e") points over the floor" "-" "info"

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The BPF program's run time per sample, for comparing builds (issue 34's
# figure; benchmark 2 reports the same for one build). bench/spin loads
# every CPU while each given bpfprof runs `-a -F 999`; the program's
# run_time_ns / run_cnt (kernel.bpf_stats_enabled) is read over a window in
# the middle of the run, from that bpfprof's own on_sample (its descriptors'
# prog_id: other profilers on the host do not count). The builds run in
# turn, ROUNDS times, so a disturbance hits each alike; medians.
#   bench/bpf-cost.sh OLD/bpfprof NEW/bpfprof ...
# Figures a build:
#   dwarf    spin -d $DEPTH (default 18: 25 user frames with tables, 23
#            by frame pointers), --call-graph dwarf (the default)
#   fp       the same, --call-graph fp
#   /frame   dwarf's slope between spin -d 4 and -d 40 (11 and 47 frames),
#            in ns a frame, of -p spin's workers (kept_run); PER_FRAME=0
#            leaves it out
#   floor    with PRIMITIVES=path/to/bpfprof (make bench-primitives-bin:
#            BPFPROF_BENCH_PRIMITIVES, bench/bench.bpf.h), the same -a run
#            of a build whose program does only what any record needs (the
#            header (time, cpu, comm), one read of the user stack to its page's
#            end, a 400-byte record written into the CPU's ring as a sample's
#            is, its head left as it was) and no walk, in the
#            same rounds: the goals' floor on the host measured, the
#            reference of the RESULT lines (make bench runs it so)
# Measured this way: the kernel's user-stack walk (bpf_get_stack with
# BPF_F_USER_STACK) against the walk in bpf/unwind.bpf.h, and the walk's
# parts (docs/BENCHMARKS.md, issue 34).
set -euo pipefail
. "$(dirname "$0")/lib.bash"

ROUNDS=${ROUNDS:-3}
DEPTH=${DEPTH:-18}
PER_FRAME=${PER_FRAME:-1}
[ "$QUICK" = 1 ] && ROUNDS=1
[ $# -gt 0 ] || set -- "$BPFPROF"
command -v bpftool >/dev/null || { echo "bench: bpftool missing" >&2; exit 1; }
sysctl -q -w kernel.bpf_stats_enabled=1

# "run_time_ns run_cnt" of the on_sample programs that process $1 holds
counters() {
	local id
	# grep, not awk: mawk stops at a descriptor closed since the glob
	for id in $(grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{ print $2 }' | sort -u); do
		bpftool prog show id "$id"
	done | awk '/ name on_sample / {
		for (i = 1; i < NF; i++) { if ($i == "run_time_ns") t += $(i + 1); if ($i == "run_cnt") c += $(i + 1) }
	} END { print t + 0, c + 0 }'
}

# one_run BPFPROF DEPTH CALL_GRAPH: ns a run of on_sample
one_run() {
	local spin prof t0 c0 t1 c1
	"$SPIN" -i 10000000000000 -d "$2" >/dev/null &
	spin=$!
	"$1" -a -F 999 -d 8 --call-graph "$3" -o "$work/cost.folded" 2>"$work/cost.err" &
	prof=$!
	# from 1 s after the program first ran (start-up takes longer on a loaded host)
	for ((i = 0; i < 50; i++)); do
		sleep 0.1
		read -r t0 c0 <<<"$(counters "$prof")"
		[ "$c0" -gt 0 ] && break
	done
	sleep 1
	read -r t0 c0 <<<"$(counters "$prof")"
	sleep 2
	read -r t1 c1 <<<"$(counters "$prof")"
	kill -INT "$prof" 2>/dev/null || true
	wait "$prof" || true
	kill "$spin" 2>/dev/null || true
	wait "$spin" 2>/dev/null || true
	if [ "$c1" -le "$c0" ]; then
		echo "bench: no runs counted for $1 (left out)" >&2
		return
	fi
	calc "($t1 - $t0) / ($c1 - $c0)"
}

# kept_run BPFPROF DEPTH: BPF ns a kept sample of `-p` spin's workers (its
# -v line's run time over all runs, the filtered ones' too, / the samples
# kept); on a shared host -a's average is other processes' walks as much
# as spin's, which no slope survives
kept_run() {
	local spin
	"$SPIN" -i 10000000000000 -d "$2" >/dev/null &
	spin=$!
	sleep 0.3
	"$1" -v -p "$(pgrep -P "$spin" | paste -sd,)" -F 999 -d 3 -o "$work/kept.folded" 2>"$work/kept.err" || true
	kill "$spin" 2>/dev/null || true
	wait "$spin" 2>/dev/null || true
	awk '/^bpfprof: [0-9.]* s, [0-9]* samples/ { n = $4 }
		/BPF run time: [0-9]* ns a sample/ { t = $5; r = $10 }
		END { if (n > 0 && r > 0) printf "%.0f\n", t * r / n }' "$work/kept.err"
}

PRIMITIVES=${PRIMITIVES:-}
declare -A dwarf fp slope=()
floor=()
for ((r = 1; r <= ROUNDS; r++)); do
	if [ -n "$PRIMITIVES" ]; then
		p=$(one_run "$PRIMITIVES" "$DEPTH" fp)
		floor+=("$p")
		echo "round $r: the primitives alone ($PRIMITIVES): ${p:-?} ns a run"
	fi
	for b in "$@"; do
		d=$(one_run "$b" "$DEPTH" dwarf)
		f=$(one_run "$b" "$DEPTH" fp)
		line="round $r: $b: dwarf ${d:-?} ns, fp ${f:-?} ns a run"
		dwarf[$b]="${dwarf[$b]:-} $d"
		fp[$b]="${fp[$b]:-} $f"
		if [ "$PER_FRAME" = 1 ]; then
			lo=$(kept_run "$b" 4)
			hi=$(kept_run "$b" 40)
			if [ -n "$lo" ] && [ -n "$hi" ]; then
				s=$(calc "($hi - $lo) / 36")
				slope[$b]="${slope[$b]:-} $s"
				line="$line; -d 4 $lo, -d 40 $hi: $s ns a frame"
			fi
		fi
		echo "$line"
	done
done
ref=- fl=
if [ ${#floor[@]} -gt 0 ] && [ -n "$(median "${floor[@]}")" ]; then
	fl=$(median "${floor[@]}")
	ref="a record's primitives alone $fl ns"
fi
# ratio FIGURE: FIGURE / the floor, or -
ratio() { if [ -n "$fl" ] && [ -n "$1" ]; then calc "$1 / $fl"; else echo -; fi; }
for b in "$@"; do
	# shellcheck disable=SC2086
	d=$(median ${dwarf[$b]:-})
	# shellcheck disable=SC2086
	f=$(median ${fp[$b]:-})
	result "BPF run time per sample, -a -F 999, spin -d $DEPTH, dwarf ($b)" "$d ns" "$ref" "$(ratio "$d")" "<= 2500 ns" \
		"$(verdict "$d" "<=" 2500)"
	result "BPF run time per sample, -a -F 999, spin -d $DEPTH, fp ($b)" "$f ns" "$ref" "$(ratio "$f")" "<= 1000 ns" \
		"$(verdict "$f" "<=" 1000)"
	if [ "$PER_FRAME" = 1 ]; then
		# shellcheck disable=SC2086
		result "BPF run time per frame, dwarf, -p (slope -d 4 to 40) ($b)" "$(median ${slope[$b]:-}) ns" "-" "-" "-" "info"
	fi
done

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The unwinder (--call-graph dwarf) on code without frame pointers, side by
# side in one run (issue 13's figures, docs/BENCHMARKS.md):
#  1. BPF program time per sample (run_time_ns / run_cnt, kernel.bpf_stats_enabled)
#     on Debian's xz and python3.11, -p at 999 Hz, dwarf against fp, with the
#     frames a stack from bpfprof's summary;
#  2. slowdown at 999 Hz of one xz -9 -T1 per CPU on a fixed input (wall time
#     until all finish): alone, under bpfprof dwarf, bpfprof fp and perf record
#     --call-graph dwarf, rounds interleaved, medians;
#  3. perf.data bytes per sample: bpfprof's against perf record --call-graph dwarf's;
#  4. table build time per MiB of CFI (xz, python3.11: bpfprof -v's table line);
#  5. the whole machine under -a: tables, rows, kernel memory of the unwinder's
#     maps (bpftool map show: memlock bytes), build time, peak RSS.
set -euo pipefail
. "$(dirname "$0")/lib.bash"

ROUNDS=${ROUNDS:-5}
[ "$QUICK" = 1 ] && ROUNDS=1
command -v bpftool >/dev/null || { echo "bench: bpftool missing" >&2; exit 1; }
sysctl -q -w kernel.bpf_stats_enabled=1

# "run_time_ns run_cnt" of the on_sample program that process $1 holds (its
# fdinfo names the program ids): other bpfprof runs on the machine do not count
counters() {
	local ids
	ids=$(sed -n 's/^prog_id:\s*//p' /proc/"$1"/fdinfo/* 2>/dev/null | sort -u | tr '\n' ' ')
	bpftool prog show name on_sample --json | awk -v ids=" $ids" '
		{ n = split($0, progs, /\},\{/)
		  for (i = 1; i <= n; i++) {
			if (!match(progs[i], /"id":[0-9]+/)) continue
			id = substr(progs[i], RSTART + 5, RLENGTH - 5)
			if (index(ids, " " id " ") == 0) continue
			if (match(progs[i], /"run_time_ns":[0-9]+/)) t += substr(progs[i], RSTART + 14, RLENGTH - 14)
			if (match(progs[i], /"run_cnt":[0-9]+/)) c += substr(progs[i], RSTART + 10, RLENGTH - 10)
		  } }
		END { printf "%d %d\n", t, c }'
}

seq 1 $((QUICK == 1 ? 300000 : 1500000)) | awk '{ print $1, $1 * 7919 % 100003, "the quick brown fox" }' >"$work/text"
cat >"$work/fib.py" <<'EOF'
import time
def fib(n): return n if n < 2 else fib(n - 1) + fib(n - 2)
t = time.time()
while time.time() - t < 60: fib(22)
EOF

# 1, 3, 4: bpfprof -p on a running workload, each mode; perf record on the same workload after
per_sample() { # NAME MODE CMD...
	local name=$1 mode=$2 pid t0 c0 t1 c1
	shift 2
	"$@" >/dev/null &
	pid=$!
	sleep 0.5
	"$BPFPROF" -v --call-graph "$mode" -F 999 -d 4 -p "$pid" -o "$work/$name-$mode.data" >"$work/$name-$mode.log" 2>&1 &
	local prof=$!
	sleep 1.5
	read -r t0 c0 <<<"$(counters $prof)"
	sleep 2
	read -r t1 c1 <<<"$(counters $prof)"
	wait "$prof" || true
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	echo "$(calc "($t1 - $t0) / ($c1 - $c0) / 1000")" \
		"$(sed -n 's/.*end of the stack, \([0-9.]*\) frames.*/\1/p' "$work/$name-$mode.log")"
}

for w in "xz:xz -9 -T1 -c $work/text" "python:python3.11 $work/fib.py"; do
	name=${w%%:*}
	cmd=${w#*:}
	d_us=() f_us=()
	for ((r = 1; r <= ROUNDS; r++)); do
		# shellcheck disable=SC2086
		read -r us frames <<<"$(per_sample "$name" dwarf $cmd)"
		d_us+=("$us")
		d_frames=$frames
		# shellcheck disable=SC2086
		read -r us frames <<<"$(per_sample "$name" fp $cmd)"
		f_us+=("$us")
		f_frames=$frames
	done
	result "BPF time per sample, $name, dwarf ($d_frames frames)" "$(median "${d_us[@]}") us" \
		"fp: $(median "${f_us[@]}") us ($f_frames frames)" "-" "<= 5 us at 20 frames" \
		"$(verdict "$(median "${d_us[@]}")" "<=" 5)"
	line=$(grep 'unwind tables:' "$work/$name-dwarf.log")
	ms=$(echo "$line" | sed -n 's/.*, \([0-9.]*\) ms building from \([0-9.]*\) MiB.*/\1/p')
	mib=$(echo "$line" | sed -n 's/.*, \([0-9.]*\) ms building from \([0-9.]*\) MiB.*/\2/p')
	rows=$(echo "$line" | sed -n 's/.* \([0-9]*\) of [0-9]* rows.*/\1/p')
	result "table build, $name ($rows rows, $mib MiB CFI)" "$ms ms" "-" "$(calc "$ms / $mib") ms/MiB" "-" "info"
done

# 3: perf.data bytes per sample, same workload, perf record --call-graph dwarf
xz -9 -T1 -c "$work/text" >/dev/null &
pid=$!
sleep 0.5
"$PERF" record -q --call-graph dwarf -F 999 -p "$pid" -o "$work/perf.data" -- sleep 3 >"$work/perf.log" 2>&1 || true
kill "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
pn=$("$PERF" report -i "$work/perf.data" --stats 2>/dev/null | awk '/SAMPLE events:/ { print $3; exit }')
bn=$(bpfprof_samples "$work/xz-dwarf.log")
pb=$(calc "$(stat -c %s "$work/perf.data") / $pn")
bb=$(calc "$(stat -c %s "$work/xz-dwarf.data") / $bn")
result "perf.data bytes per sample, xz" "$bb B" "perf --call-graph dwarf: $pb B" "$(calc "$bb / $pb")" "<= 1/20" \
	"$(verdict "$(calc "$bb / $pb")" "<=" 0.05)"

# 2: slowdown at 999 Hz: one xz per CPU, the wall time until all are done, so
# that what a profiler spends on its own CPU (perf writing 8 KB a sample) counts
# as much as what it costs in the sampled tasks; interleaved rounds, medians
head -c $((QUICK == 1 ? 2 : 6))M "$work/text" >"$work/text-small" # a few seconds of xz a run
{
	echo '#!/bin/bash'
	echo "for i in \$(seq $NCPU); do xz -9 -T1 -c '$work/text-small' >/dev/null & done"
	echo 'wait'
} >"$work/load.sh"
chmod +x "$work/load.sh"
wall_of() { # seconds the load takes under "$@"
	local t0 t1
	t0=$(date +%s.%N)
	"$@" >/dev/null 2>&1
	t1=$(date +%s.%N)
	calc "$t1 - $t0"
}
declare -A wall
for ((r = 1; r <= ROUNDS; r++)); do
	wall[none]+=" $(wall_of "$work/load.sh")"
	wall[dwarf]+=" $(wall_of "$BPFPROF" -F 999 -o "$work/s.data" -- "$work/load.sh")"
	wall[fp]+=" $(wall_of "$BPFPROF" --call-graph fp -F 999 -o "$work/s.data" -- "$work/load.sh")"
	wall[perf]+=" $(wall_of "$PERF" record -q --call-graph dwarf -F 999 -o "$work/s.perf.data" -- "$work/load.sh")"
	echo "round $r: none ${wall[none]##* } s, dwarf ${wall[dwarf]##* } s, fp ${wall[fp]##* } s, perf dwarf ${wall[perf]##* } s"
done
# shellcheck disable=SC2086
base=$(median ${wall[none]})
# shellcheck disable=SC2086
sd=$(calc "100 * ($(median ${wall[dwarf]}) - $base) / $base")
# shellcheck disable=SC2086
sf=$(calc "100 * ($(median ${wall[fp]}) - $base) / $base")
# shellcheck disable=SC2086
sp=$(calc "100 * ($(median ${wall[perf]}) - $base) / $base")
result "slowdown at 999 Hz, $NCPU xz -9, dwarf (alone: $base s)" "$sd %" "perf --call-graph dwarf: $sp %; bpfprof fp: $sf %" \
	"$(calc "$sd / ($sp ? $sp : 1)")" "<= 1/2 of perf's, within 1 point of fp" \
	"$(awk -v d="$sd" -v p="$sp" -v f="$sf" 'BEGIN { print (d <= p / 2 && d - f <= 1) ? "met" : "MISSED" }')"

# 5: the whole machine
xz -9 -T1 -c "$work/text" >/dev/null &
python3.11 "$work/fib.py" &
sleep 0.5
/usr/bin/time -f 'rss %M' "$BPFPROF" -v -a -F 99 -d $((QUICK == 1 ? 3 : 10)) -o "$work/all.folded" >"$work/all.log" 2>&1 &
prof=$!
sleep $((QUICK == 1 ? 2 : 8))
# the unwinder's maps of this bpfprof only (its fdinfo names its map ids)
ids=$(sed -n 's/^map_id:\s*//p' /proc/"$(pgrep -P "$prof" -x bpfprof)"/fdinfo/* 2>/dev/null | sort -u | tr '\n' ' ')
maps_kib=$(bpftool map show --json | awk -v ids=" $ids" '
	{ n = split($0, maps, /\},\{/)
	  for (i = 1; i <= n; i++) {
		if (!match(maps[i], /"id":[0-9]+/)) continue
		id = substr(maps[i], RSTART + 5, RLENGTH - 5)
		if (index(ids, " " id " ") == 0 || maps[i] !~ /"name":"unwind_/) continue
		if (match(maps[i], /"bytes_memlock":[0-9]+/)) t += substr(maps[i], RSTART + 16, RLENGTH - 16)
	  } }
	END { printf "%.0f", t / 1024 }')
wait "$prof" || true
kill %1 %2 2>/dev/null || true
line=$(grep 'unwind tables:' "$work/all.log" || true)
rss=$(awk '/^rss/ { printf "%.1f", $2 / 1024 }' "$work/all.log")
result "-a: unwind tables ($(echo "$line" | sed -n 's/.*unwind tables: //p'))" "$(calc "$maps_kib / 1024") MiB BPF maps" "-" "-" "<= 16 MiB" \
	"$(verdict "$(calc "$maps_kib / 1024")" "<=" 16)"
result "-a: peak RSS with the unwinder" "$rss MiB" "-" "-" "<= 30 MB" "$(verdict "$rss" "<=" 28.6)"

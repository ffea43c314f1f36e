#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Benchmark 3 (issue 8): aggregation throughput without BPF. bench/agg_replay
# replays ring-buffer sample records (32 frames: 8 kernel, 24 user; 10 000
# distinct stacks over 8 processes, each process with its maps read from a
# fake /proc) through the aggregator as the reader feeds it (agg__queue, a
# flush at each 64 KiB, the BPF side's wake-up) on one CPU, RUNS times; the
# median rate, samples per second of the replaying thread's CPU time (so that
# other load on the machine does not count), is the figure; the wall-clock rate is printed
# too. Goal: at least 5 million samples per second.
# Since 2026-11-29 (issue 34) the figure is the reader's part alone
# (agg_replay -b -C): each wake-up's records are written into the ring
# first and flushed from the caches, untimed, as the BPF program on the
# sampling CPUs writes them (its cost is benchmark 2's), then queued and
# flushed into the profile, timed, reading them from memory. Before, the
# harness's own copy of each record into the ring was timed with it (half
# of the figure, docs/BENCHMARKS.md "Benchmark 3, third pass"); that rate
# is still printed, as "with the producer's copy".
# Reference: perf report aggregating the same records. agg_replay writes the
# first REF_SAMPLES of its replay as perf.data through bpfprof's streaming
# writer, and `perf report --stdio -g none --sort pid,sym` reads it (its own
# aggregation, by process and function; with callchains it is ten times
# slower still); its rate is samples over its CPU time (user + system).
set -euo pipefail
. "$(dirname "$0")/lib.bash"

RUNS=${RUNS:-3}
SAMPLES=${SAMPLES:-20000000}
REF_SAMPLES=${REF_SAMPLES:-100000}
if [ "$QUICK" = 1 ]; then
	RUNS=1 SAMPLES=2000000 REF_SAMPLES=20000
fi

rates=() copy_rates=()
for ((r = 1; r <= RUNS; r++)); do
	"$REPLAY" -n "$SAMPLES" -s 10000 -d 32 -c 0 -b -C >"$work/replay.$r"
	rates+=("$(field "$work/replay.$r" samples_per_s)")
	echo "run $r: $(field "$work/replay.$r" samples_per_s) samples/CPU-s, $(field "$work/replay.$r" ns_per_sample) ns/sample, $(field "$work/replay.$r" wall_samples_per_s) samples/wall-s" >&2
	"$REPLAY" -n "$SAMPLES" -s 10000 -d 32 -c 0 >"$work/copy.$r"
	copy_rates+=("$(field "$work/copy.$r" samples_per_s)")
	echo "run $r, with the producer's copy: $(field "$work/copy.$r" samples_per_s) samples/CPU-s, $(field "$work/copy.$r" ns_per_sample) ns/sample" >&2
done
rate=$(median "${rates[@]}")
copy_rate=$(median "${copy_rates[@]}")

"$REPLAY" -n "$REF_SAMPLES" -s 10000 -d 32 -w "$work/replay.data" -W "$REF_SAMPLES" >/dev/null
"$RUNSTAT" -o "$work/report.rs" -- "$PERF" report -i "$work/replay.data" --stdio -g none --sort pid,sym \
	>"$work/report.txt" 2>"$work/report.err"
# per CPU second too, as the figure (perf report is single-threaded here)
ref=$(calc "$REF_SAMPLES / ($(field "$work/report.rs" user_s) + $(field "$work/report.rs" sys_s))")
echo "agg_replay: $SAMPLES samples per run, rates ${rates[*]}; with the producer's copy ${copy_rates[*]}"
echo "perf report: $REF_SAMPLES samples in $(field "$work/report.rs" wall_s) s wall, $(cpu=$(calc "$(field "$work/report.rs" user_s) + $(field "$work/report.rs" sys_s)"); echo "$cpu") s CPU"
result "aggregation throughput (1 CPU, 32 frames, 10k stacks)" "$(calc "$rate / 1e6") M samples/s" \
	"perf report -g none $(calc "$ref / 1e6") M samples/s" "$(calc "$rate / $ref")" ">= 5 M/s" \
	"$(verdict "$rate" ">=" 5000000)"
result "aggregation throughput with the producer's copy timed too (the figure before 2026-11-29)" \
	"$(calc "$copy_rate / 1e6") M samples/s" "-" "-" "-" "info"

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Benchmark 6 (issue 8): lost samples at 10 kHz per CPU. bench/spin keeps
# every CPU busy (so every sample carries a 20-frame stack) while
# `bpfprof -a -F 10000 -d DURATION` runs with its defaults; lost samples are
# the ones its summary reports (ring buffer full). Reference: `perf record -a
# -g -F 10000 -- sleep DURATION` under the same load, its LOST and
# LOST_SAMPLES records (perf report --stats). Samples against the nominal
# 10 000 x CPUs x DURATION are printed too (the kernel may throttle both),
# and a bpfprof run with --ringbuf-size 1M (half the default up to 4 CPUs;
# SMALL_RING=0 skips it). Goal: 0 lost.
set -euo pipefail
. "$(dirname "$0")/lib.bash"

DURATION=${DURATION:-10}
SMALL_RING=${SMALL_RING:-1}
[ "$QUICK" = 1 ] && DURATION=3 SMALL_RING=0

"$SPIN" -i 10000000000000 >/dev/null &
spin_pid=$!
"$RUNSTAT" -o "$work/b.rs" -- "$BPFPROF" -a -F 10000 -d "$DURATION" -o "$work/loss.pb.gz" 2>"$work/b.err"
"$RUNSTAT" -o "$work/p.rs" -- "$PERF" record -a -g -F 10000 -o "$work/p.data" -- sleep "$DURATION" 2>"$work/p.err"
if [ "$SMALL_RING" = 1 ]; then
	"$RUNSTAT" -o "$work/b4.rs" -- "$BPFPROF" -a -F 10000 -d "$DURATION" --ringbuf-size 1M \
		-o "$work/loss4.pb.gz" 2>"$work/b4.err"
fi
kill "$spin_pid" 2>/dev/null || true	# spin stops its workers
wait "$spin_pid" 2>/dev/null || true

bs=$(bpfprof_samples "$work/b.err")
bl=$(bpfprof_lost "$work/b.err")
ps=$(perf_samples "$work/p.err")
"$PERF" report -i "$work/p.data" --stats >"$work/p.stats" 2>/dev/null || true
pl=$(awk '$1 == "LOST" || $1 == "LOST_SAMPLES" { n += $3 } END { print n + 0 }' "$work/p.stats")
nominal=$((10000 * NCPU * DURATION))
echo "nominal samples: $nominal (10 kHz x $NCPU CPUs x $DURATION s)"
echo "bpfprof: $bs samples ($(calc "$bs * 100 / $nominal")% of nominal), $bl lost; $(cat "$work/b.rs")"
echo "perf record: $ps samples ($(calc "$ps * 100 / $nominal")% of nominal), $pl lost (LOST + LOST_SAMPLES); $(cat "$work/p.rs")"
if [ "$SMALL_RING" = 1 ]; then
	echo "bpfprof --ringbuf-size 1M: $(bpfprof_samples "$work/b4.err") samples, $(bpfprof_lost "$work/b4.err") lost, peak RSS $(field "$work/b4.rs" maxrss_kb) kB"
fi
result "lost samples, -a -F 10000, ${DURATION} s" "bpfprof $bl lost of $bs" "perf record -g $pl lost of $ps" "-" "0" \
	"$(verdict "$bl" "<=" 0)"

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Continuous mode memory: run `bpfprof -a --interval 10` for DURATION seconds
# (default 600) next to two workloads and a stream of short-lived processes,
# and print bpfprof's RSS every 10 s. Flat RSS means every interval frees
# what it collected. Needs root.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dur=${1:-600}
out=$(mktemp -d /tmp/bpfprof-cont.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$out"' EXIT
"$top/.output/workload/hotcold" $((dur + 20)) &
(while :; do /bin/true; sleep 0.05; done) &
"$top/bpfprof" -a -F 99 --interval 10 --output-dir "$out" --keep 3 -o p.pb.gz -o p.folded -o p.prof \
	-d "$dur" 2>"$out.log" &
bp=$!
echo "elapsed_s rss_kb files"
for ((t = 10; t <= dur; t += 10)); do
	sleep 10
	kill -0 $bp 2>/dev/null || break
	echo "$t $(awk '/VmRSS/ { print $2 }' /proc/$bp/status) $(ls "$out" | wc -l)"
done
wait $bp
tail -3 "$out.log"
rm -f "$out.log"

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# JavaScript frames (issue 31): the BPF program's run time per sample of a
# node process 31 JavaScript frames deep (the script's top level, down()
# 29 times, a loop at the bottom; all tiers on), profiled by `bpfprof -p
# -F 999` with the V8 walk and with --no-node (the native walk alone, on
# the same process), ROUNDS rounds interleaved, medians. The figure is a
# node sample's: on_sample's run time x its runs (the other CPUs' filtered
# runs included) / the node samples of the -v summary. Then the naming cost
# from -v's counters: functions read from /proc/PID/mem a second of
# reading, the share of frames the names' cache answered, and the share of
# JavaScript frames the BPF walk classified from its per-CPU cache of
# recent functions (no user read).
# BEFORE=path/to/old/bpfprof runs that build too, in the same rounds
# (A/B interleaved: a loaded machine's drift falls on both).
#   sudo BPFPROF=./bpfprof OUTPUT=.output bench/run.sh node
set -euo pipefail
. "$(dirname "$0")/lib.bash"

NODE=${NODE:-$(command -v node || true)}
ROUNDS=${ROUNDS:-5}
DUR=${DUR:-3}
BEFORE=${BEFORE:-}
[ "$QUICK" = 1 ] && ROUNDS=1 DUR=1
[ -x "$NODE" ] || { echo "bench: no node" >&2; exit 1; }
sysctl -q -w kernel.bpf_stats_enabled=1
cat >"$work/deep.js" <<'JS'
'use strict';
// 31 JavaScript frames: the top level, down() 29 times, bottom()'s loop
function bottom() {
  let x = 0;
  for (let i = 0; i < 200000; i++) x = (x * 31 + i) | 0;
  return x;
}
function down(n) { return n === 0 ? bottom() : down(n - 1) + 1; }
const end = Date.now() + (+process.argv[2] || 1000) * 1000;
let s = 0;
while (Date.now() < end) s += down(29);
JS
"$NODE" "$work/deep.js" 1000 &
np=$!
sleep 2

# ns a node sample of log $1: run time x runs / node samples
per_sample() {
	local run runs n
	run=$(sed -n 's/.*BPF run time: \([0-9]*\) ns a sample (on_sample, \([0-9]*\) runs.*/\1/p' "$1" | tail -1)
	runs=$(sed -n 's/.*BPF run time: \([0-9]*\) ns a sample (on_sample, \([0-9]*\) runs.*/\2/p' "$1" | tail -1)
	n=$(bpfprof_samples "$1")
	[ -n "$run" ] && [ -n "$n" ] && [ "$n" -gt 0 ] && calc "$run * $runs / $n" || echo 0
}
one() { # NAME BINARY [FLAGS...]: the per-sample figure, the log kept as NAME.log
	local name=$1 bin=$2
	shift 2
	"$bin" -v -p "$np" -F 999 -d "$DUR" -o "$work/n.folded" "$@" >"$work/$name.log" 2>&1
	per_sample "$work/$name.log"
}

declare -A ns
builds=(new)
[ -n "$BEFORE" ] && builds=(new old)
for ((r = 1; r <= ROUNDS; r++)); do
	for b in "${builds[@]}"; do
		bin=$BPFPROF
		[ "$b" = old ] && bin=$BEFORE
		ns[$b-js]="${ns[$b-js]:-} $(one $b-js "$bin")"
		ns[$b-no]="${ns[$b-no]:-} $(one $b-no "$bin" --no-node)"
		ns[$b-diff]="${ns[$b-diff]:-} $(calc "${ns[$b-js]##* } - ${ns[$b-no]##* }")"
		echo "round $r: $b: ${ns[$b-js]##* } ns a node sample with JavaScript frames, ${ns[$b-no]##* } ns --no-node (load $(cut -d' ' -f1 /proc/loadavg))"
	done
done
kill "$np" 2>/dev/null || true
wait "$np" 2>/dev/null || true
grep 'V8: pid\|V8: naming\|V8: BPF walk' "$work/new-js.log" | cut -c1-400 || true
for b in "${builds[@]}"; do
	a=$(median ${ns[$b-js]})
	c=$(median ${ns[$b-no]})
	# the median of each round's difference: a round's two runs share its load
	d=$(median ${ns[$b-diff]})
	result "BPF run time a node sample, 31 JavaScript frames, against --no-node (medians; the difference: of each round's) ($b: $([ "$b" = old ] && echo "$BEFORE" || echo "$BPFPROF"))" \
		"$a ns" "$c ns" "+$d ns" "<= +3000 ns" "$(verdict "$d" "<=" 3000)"
done
line=$(grep 'V8: naming' "$work/new-js.log" || true)
hit=$(echo "$line" | sed -n 's/.* frames, \([0-9.]*\) % cached.*/\1/p')
us=$(echo "$line" | sed -n 's/.*, \([0-9.]*\) us a function.*/\1/p')
fps=$([ -n "$us" ] && calc "1e6 / $us" || echo '?')
result "JavaScript naming: functions read from /proc/PID/mem a second of reading" "${fps} /s (${us:-?} us each)" "-" "-" "-" "info"
result "JavaScript naming: recorded frames answered by the names' cache" "${hit:-?} %" "-" "-" "-" "info"
walk=$(grep 'V8: BPF walk' "$work/new-js.log" || true)
fr=$(echo "$walk" | sed -n 's/.* \([0-9]*\) JavaScript frames (.*/\1/p')
cached=$(echo "$walk" | sed -n 's/.*JavaScript frames (\([0-9]*\) from the per-CPU cache.*/\1/p')
if [ -n "$cached" ] && [ -n "$fr" ] && [ "$fr" -gt 0 ]; then
	result "JavaScript frames the BPF walk took from its per-CPU cache (no user read)" "$(calc "100 * $cached / $fr") %" "-" "-" "-" "info"
fi

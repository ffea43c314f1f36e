#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What --push costs (issue 17's goal: no sampling loss, under 1 % of one CPU
# at a 10 s interval with -a). Two runs of DUR seconds (default 60; QUICK=1:
# 20), `bpfprof -a -F 99 --interval 10 --output-dir`, next to one hotcold per
# CPU and a short-lived process every 50 ms: with --push to the test receiver
# on 127.0.0.1 (tests/integration/pyroscope_receiver.py, answering at once)
# and without. Prints as RESULT lines:
#   - the push thread's CPU (CLOCK_THREAD_CPUTIME_ID, from the summary) as a
#     share of one CPU over the run, and with the preparation in the sampling
#     thread (write_pprof per service, PushRequest) added;
#   - bytes sent per interval against the local profile.pb.gz of the same
#     intervals (one pprof for everything; the push sends one per service);
#   - bpfprof's own CPU (wait4 rusage via /usr/bin/time) with and without push;
#   - samples per interval and lost samples with and without push.
# Needs root. Not part of make test.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
BPFPROF=${BPFPROF:-$top/bpfprof}
OUTPUT=${OUTPUT:-$top/.output}
HOTCOLD=$OUTPUT/workload/hotcold
RECEIVER=$top/tests/integration/pyroscope_receiver.py
QUICK=${QUICK:-0}
DUR=${DUR:-$([ "$QUICK" = 1 ] && echo 20 || echo 60)}
work=$(mktemp -d /tmp/bpfprof-bench-push.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
result() { printf 'RESULT %s | %s | %s | %s | %s | %s\n' "$@"; }
calc() { awk "BEGIN { printf \"%.4g\n\", $* }"; }

[ "$(id -u)" -eq 0 ] || { echo "bench: needs root" >&2; exit 1; }
for _ in $(seq "$(nproc)"); do "$HOTCOLD" $((3 * DUR + 60)) & done
(while :; do /bin/true; sleep 0.05; done) &
python3 "$RECEIVER" --port-file "$work/port" --out "$work/recv" 2>"$work/recv.err" &
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
url=http://127.0.0.1:$(cat "$work/port")

# run NAME ARGS...: bpfprof for DUR s; its log in $work/NAME.log, rusage in $work/NAME.time
run() {
	local name=$1
	shift
	mkdir -p "$work/$name"
	/usr/bin/time -f '%U %S %e' -o "$work/$name.time" "$BPFPROF" -a -F 99 --interval 10 -d "$DUR" \
		--output-dir "$work/$name" --no-progress --top 0 "$@" 2>"$work/$name.log"
}
run push --push "$url"
run nopush

# per-interval figures from the local files: count, mean .pb.gz bytes, mean samples
local_stats() {
	local n=0 bytes=0 samples=0 f s
	for f in "$work/$1"/*-profile.pb.gz; do
		s=$(python3 "$RECEIVER" --decode-pprof "$f" | python3 -c 'import json,sys; print(json.load(sys.stdin)["samples"])')
		n=$((n + 1)) bytes=$((bytes + $(stat -c %s "$f"))) samples=$((samples + s))
	done
	echo "$n $((bytes / n)) $((samples / n))"
}
read -r n_push pb_push smp_push < <(local_stats push)
read -r n_nopush pb_nopush smp_nopush < <(local_stats nopush)
line=$(grep 'bpfprof: push: [0-9]* intervals' "$work/push.log" | tail -1)
echo "$line"
num() { echo "$line" | grep -oE "[0-9.]+ $1" | head -1 | awk '{ print $1 }'; }
pushed=$(num pushed) sent=$(echo "$line" | grep -oE '[0-9]+ bytes sent' | awk '{ print $1 }')
pprof=$(echo "$line" | grep -oE 'pprof [0-9]+ bytes' | awk '{ print $2 }')
thread_ms=$(echo "$line" | grep -oE 'push thread [0-9.]+ ms' | awk '{ print $3 }')
prep_ms=$(echo "$line" | grep -oE 'preparing [0-9.]+ ms' | awk '{ print $2 }')
series=$(wc -l <"$work/recv/index.jsonl")
read -r u1 s1 e1 <"$work/push.time"
read -r u0 s0 e0 <"$work/nopush.time"
lost1=$(awk '/lost [0-9]+ samples/ { for (i = 1; i < NF; i++) if ($i == "lost") s += $(i + 1) } END { print s + 0 }' "$work/push.log")
lost0=$(awk '/lost [0-9]+ samples/ { for (i = 1; i < NF; i++) if ($i == "lost") s += $(i + 1) } END { print s + 0 }' "$work/nopush.log")

echo "run: $DUR s, -a -F 99 --interval 10 on $(nproc) CPUs; $n_push intervals with push, $n_nopush without"
result "push thread CPU, share of one CPU" "$(calc "100 * $thread_ms / 1000 / $e1") % ($thread_ms ms in $e1 s)" "-" "-" "< 1 %" \
	"$(awk -v v="$thread_ms" -v e="$e1" 'BEGIN { print 100 * v / 1000 / e < 1 ? "met" : "MISSED" }')"
result "push CPU with preparation (write_pprof per service)" "$(calc "100 * ($thread_ms + $prep_ms) / 1000 / $e1") % ($prep_ms ms preparing)" "-" "-" "< 1 %" \
	"$(awk -v v="$thread_ms" -v p="$prep_ms" -v e="$e1" 'BEGIN { print 100 * (v + p) / 1000 / e < 1 ? "met" : "MISSED" }')"
result "bytes sent per interval (PushRequest, $((series / (pushed > 0 ? pushed : 1))) series)" "$((sent / (pushed > 0 ? pushed : 1)))" \
	"local profile.pb.gz $pb_push" "$(calc "$sent / ($pushed > 0 ? $pushed : 1) / $pb_push")" "-" "info"
result "pprof bytes per interval, all series" "$((pprof / (pushed > 0 ? pushed : 1)))" "local profile.pb.gz $pb_push" \
	"$(calc "$pprof / ($pushed > 0 ? $pushed : 1) / $pb_push")" "-" "info"
result "bpfprof CPU (user+sys), whole run" "$(calc "$u1 + $s1") s with push" "$(calc "$u0 + $s0") s without" \
	"$(calc "($u1 + $s1) / ($u0 + $s0)")" "-" "info"
result "samples per interval" "$smp_push with push" "$smp_nopush without" "$(calc "$smp_push / $smp_nopush")" "no loss" "info"
result "lost samples" "$lost1 with push" "$lost0 without" "-" "0" "$([ "$lost1" = 0 ] && echo met || echo MISSED)"

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What --push costs (issue 17's goal: no sampling loss, under 1 % of one CPU
# at a 10 s interval with -a). ROUNDS (default 2; QUICK=1: 1) pairs of runs of
# DUR seconds (default 40; QUICK=1: 20), the order alternating, of `bpfprof -a
# -F 99 --interval 10 --output-dir` next to one hotcold per CPU, each in a
# cgroup of its own, and a short-lived process every 50 ms in a third (so
# that -a pushes several series): with --push to the test receiver on
# 127.0.0.1 (tests/integration/pyroscope_receiver.py, answering at once) and
# without. Prints as RESULT lines (sums or means over the rounds):
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
DUR=${DUR:-$([ "$QUICK" = 1 ] && echo 20 || echo 40)}
ROUNDS=${ROUNDS:-$([ "$QUICK" = 1 ] && echo 1 || echo 2)}
work=$(mktemp -d /tmp/bpfprof-bench-push.XXXXXX)
cg2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
cgs=()
cleanup() {
	kill $(jobs -p) 2>/dev/null
	wait 2>/dev/null
	for c in "${cgs[@]}"; do rmdir "$c" 2>/dev/null; done
	rm -rf "$work"
}
trap cleanup EXIT
# into_cgroup NAME PID: a cgroup of the bench's own for PID, when cgroup2 lets us
into_cgroup() {
	[ -n "$cg2" ] || return 0
	mkdir -p "$cg2/bpfprof-bench-$1.$$" 2>/dev/null || return 0
	cgs+=("$cg2/bpfprof-bench-$1.$$")
	echo "$2" >"$cg2/bpfprof-bench-$1.$$/cgroup.procs" 2>/dev/null || true
}
result() { printf 'RESULT %s | %s | %s | %s | %s | %s\n' "$@"; }
calc() { awk "BEGIN { printf \"%.4g\n\", $* }"; }

[ "$(id -u)" -eq 0 ] || { echo "bench: needs root" >&2; exit 1; }
for i in $(seq "$(nproc)"); do
	"$HOTCOLD" $((2 * ROUNDS * DUR + 120)) &
	into_cgroup "hot$i" $!
done
(while :; do /bin/true; sleep 0.05; done) &
into_cgroup churn $!
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
for r in $(seq "$ROUNDS"); do
	if [ $((r % 2)) = 1 ]; then
		run "nopush$r"
		run "push$r" --push "$url"
	else
		run "push$r" --push "$url"
		run "nopush$r"
	fi
done

# per-interval figures from the local files: count, mean .pb.gz bytes, mean samples
local_stats() {
	local n=0 bytes=0 samples=0 f s
	for f in "$work"/$1*/*-profile.pb.gz; do
		s=$(python3 "$RECEIVER" --decode-pprof "$f" | python3 -c 'import json,sys; print(json.load(sys.stdin)["samples"])')
		n=$((n + 1)) bytes=$((bytes + $(stat -c %s "$f"))) samples=$((samples + s))
	done
	echo "$n $((bytes / n)) $((samples / n))"
}
read -r n_push pb_push smp_push < <(local_stats push)
read -r n_nopush pb_nopush smp_nopush < <(local_stats nopush)
# the push summary lines of every round, summed
grep -h 'bpfprof: push: [0-9]* intervals' "$work"/push*.log | tee "$work/lines"
sumf() { awk -v pat="$1" -v k="$2" '{ for (i = 1; i <= NF; i++) if ($i == pat) s += $(i + k) } END { print s + 0 }' "$work/lines"; }
pushed=$(sumf pushed, -1)
sent=$(sumf sent -2)
pprof=$(sumf "(pprof" 1)
thread_ms=$(sumf thread 1)
prep_ms=$(sumf preparing 1)
series=$(wc -l <"$work/recv/index.jsonl")
cat "$work"/push*.time >"$work/t1"
cat "$work"/nopush*.time >"$work/t0"
read -r u1 s1 e1 < <(awk '{ u += $1; s += $2; e += $3 } END { print u, s, e }' "$work/t1")
read -r u0 s0 e0 < <(awk '{ u += $1; s += $2; e += $3 } END { print u, s, e }' "$work/t0")
lostf() { cat "$work"/$1*.log | awk '/lost [0-9]+ samples/ { for (i = 1; i < NF; i++) if ($i == "lost") s += $(i + 1) } END { print s + 0 }'; }
lost1=$(lostf push)
lost0=$(lostf nopush)

echo "runs: $ROUNDS x $DUR s each way, -a -F 99 --interval 10 on $(nproc) CPUs; $n_push intervals with push, $n_nopush without; CPU times per run: with push $(tr '\n' ';' <"$work/t1") without $(tr '\n' ';' <"$work/t0")"
result "push thread CPU, share of one CPU" "$(calc "100 * $thread_ms / 1000 / $e1") % ($thread_ms ms in $e1 s)" "-" "-" "< 1 %" \
	"$(awk -v v="$thread_ms" -v e="$e1" 'BEGIN { print 100 * v / 1000 / e < 1 ? "met" : "MISSED" }')"
result "push CPU with preparation (write_pprof per service)" "$(calc "100 * ($thread_ms + $prep_ms) / 1000 / $e1") % ($prep_ms ms preparing)" "-" "-" "< 1 %" \
	"$(awk -v v="$thread_ms" -v p="$prep_ms" -v e="$e1" 'BEGIN { print 100 * (v + p) / 1000 / e < 1 ? "met" : "MISSED" }')"
result "bytes sent per interval (PushRequest, $((series / (pushed > 0 ? pushed : 1))) series)" "$((sent / (pushed > 0 ? pushed : 1)))" \
	"local profile.pb.gz $pb_push" "$(calc "$sent / ($pushed > 0 ? $pushed : 1) / $pb_push")" "-" "info"
result "pprof bytes per interval, all series" "$((pprof / (pushed > 0 ? pushed : 1)))" "local profile.pb.gz $pb_push" \
	"$(calc "$pprof / ($pushed > 0 ? $pushed : 1) / $pb_push")" "-" "info"
result "bpfprof CPU (user+sys), all rounds" "$(calc "$u1 + $s1") s with push" "$(calc "$u0 + $s0") s without" \
	"$(calc "($u1 + $s1) / ($u0 + $s0)")" "-" "info"
result "samples per interval" "$smp_push with push" "$smp_nopush without" "$(calc "$smp_push / $smp_nopush")" "no loss" "info"
result "lost samples" "$lost1 with push" "$lost0 without" "-" "0" "$([ "$lost1" = 0 ] && echo met || echo MISSED)"

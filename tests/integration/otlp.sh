#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# OpenTelemetry profiles: the .otlp writer and --push-api otlp
# (user/write/write_otlp.c, user/write/push.c) against a receiver started
# here on 127.0.0.1 (tests/integration/otlp_receiver.py: OTLP/HTTP as
# opentelemetry-proto v1.11.0 specifies it, every body decoded by
# `protoc-c --decode` with the vendored official .proto files and by hand;
# it is not a Collector). Workloads spin only while they are profiled.
#
#  1. -o out.otlp -o out.pb.gz with --off-cpu of the off-CPU workload:
#     protoc-c decodes the .otlp; two profiles, samples/count (period 1e9/F
#     ns) and off_cpu/nanoseconds holding blocked time, with the pprof's
#     sample count and off-CPU nanoseconds.
#  2. -a --cgroup (the test's own) --interval 1 --push-api otlp, --push-queue 1,
#     hotcold at --duty 50: up, then down until an interval is spooled, then
#     up (the queue pushed, the spool replayed), then a partial success
#     answered (reported), then up. Every interval's local profile
#     (--output-dir) is matched by exactly one received request with its
#     samples: nothing lost, nothing twice; >= 3 intervals; the summary adds
#     up; hotcold's hot_a and hot_b at 75/25 (±split_tol) over the received
#     requests.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
BPFPROF=${BPFPROF:-$top/bpfprof}
HOTCOLD=${HOTCOLD:-$top/.output/workload/hotcold}
OFFCPU=${OFFCPU:-$top/.output/workload/offcpu}
RECEIVER=$top/tests/integration/otlp_receiver.py
TOL=${TOL:-7}
work=$(mktemp -d /tmp/bpfprof-otlp.XXXXXX)
pids=()
cg=
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null && kill -CONT "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -n "$cg" ] && rmdir "$cg" 2>/dev/null
	[ -n "${KEEP:-}" ] && echo "kept $work" || rm -rf "$work"
}
trap cleanup EXIT

. "$(dirname "$0")/lib.bash"
require_bpf "otlp"
require_python "otlp"
command -v protoc-c >/dev/null || {
	skip "otlp" "protoc-c not installed"
	finish
}
decode() {
	protoc-c --proto_path="$top/proto/opentelemetry" \
		--decode=opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest \
		opentelemetry/proto/collector/profiles/v1development/profiles_service.proto <"$1"
}

# ---- 1. the file, with off-CPU time ----
"$BPFPROF" -F 499 --off-cpu -o "$work/out.otlp" -o "$work/out.pb.gz" -- "$OFFCPU" 0.5 4000 >/dev/null 2>"$work/file.log"
rc=$?
if [ $rc -eq 0 ] && decode "$work/out.otlp" >"$work/out.txt" 2>"$work/decode.err"; then
	"$PY" "$RECEIVER" --summary "$work/out.otlp" >"$work/out.json"
	if "$PY" -c '
import gzip, json, sys
sys.path.insert(0, sys.argv[2])
from receiver_lib import fields, packed_ints
p = json.load(open(sys.argv[1]))
# the pprof of the same capture: value 0 (samples) and 2 (off_cpu ns) summed
tot = [0, 0, 0, 0]
for n, _, v in fields(gzip.decompress(open(sys.argv[3], "rb").read())):
    if n == 2:
        vals = [x for n2, w2, v2 in fields(v) if n2 == 2 for x in packed_ints(w2, v2)]
        tot = [a + b for a, b in zip(tot, vals)]
sys.exit(not (len(p) == 2 and p[0]["type"] == "samples/count" and p[0]["period"] == 10**9 // 499
              and p[0]["samples"] > 0 and p[1]["type"] == "off_cpu/nanoseconds" and p[1]["samples"] > 10**8
              and p[0]["samples"] == tot[0] and p[1]["samples"] == tot[2]))
' "$work/out.json" "$top/tests/integration" "$work/out.pb.gz"; then
		ok "file: protoc-c decodes out.otlp; samples/count (period 1e9/F) and off_cpu/nanoseconds, the pprof's totals ($(sed -n 's/.*"off_cpu\/nanoseconds", "time": [0-9]*, "period": 0, "samples": \([0-9]*\).*/\1/p' "$work/out.json") ns blocked)"
	else
		fail "file: profiles" "$(cat "$work/out.json")"
	fi
else
	fail "file: rc=$rc" "$(tail -3 "$work/file.log" "$work/decode.err")"
fi

# ---- 2. pushed every interval, with the receiver down once ----
cg2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
[ -n "$cg2" ] && mkdir "$cg2/bpfprof-otlp.$$" 2>/dev/null && cg=$cg2/bpfprof-otlp.$$
"$HOTCOLD" 60 --duty 50 &
wl=$!
pids+=("$wl")
wait_exec $wl hotcold
kill -STOP $wl
[ -n "$cg" ] && echo $wl >"$cg/cgroup.procs"
port=$(free_port)
mode=$work/mode
echo ok >"$mode"
recv_up() { start_recv r --port "$port" --out "$work/r" --mode-file "$mode" --pid $wl; }
recv_up
mkdir -p "$work/b"
"$BPFPROF" -a ${cg:+--cgroup "$cg"} -F 999 --interval 1 --output-dir "$work/b" --push "http://127.0.0.1:$port" \
	--push-api otlp --push-queue 1 --push-timeout 5 --label run=otlp -v --no-progress --top 0 2>"$work/b.log" &
bp=$!
pids+=("$bp")
wait_sampling $bp perf_event
kill -CONT $wl
missed=()
pushed='interval .* pushed (' spooled=' spooled to ' replayed="' replayed$" partly=' partly: 1 profiles rejected: test'
wait_log "$pushed" 1 || missed+=("a push")
stop_recv
wait_log "$spooled" 1 || missed+=("spooled while down")
recv_up
wait_log "$replayed" 1 || missed+=("replayed once back")
echo partial >"$mode"
wait_log "$partly" 1 || missed+=("partial success reported")
echo ok >"$mode"
wait_log "$pushed" $(($(seen "$pushed") + 1)) || missed+=("a push after the partial success")
kill -INT $bp
wait $bp
rc=$?
kill -STOP $wl
stop_recv
[ ${#missed[@]} -eq 0 ] && ok "push: up, down until spooled, back and replayed, partial success, back: each seen in bpfprof's log" ||
	fail "push: not seen: ${missed[*]}" "$(grep 'push' "$work/b.log" | tail -8)"
[ $rc -eq 0 ] || fail "push: bpfprof exited $rc" "$(tail -5 "$work/b.log")"
[ ! -s "$work/r/errors.log" ] && [ -s "$work/r/index.jsonl" ] &&
	ok "push: every request POST /v1development/profiles, x-protobuf, gzip; protoc-c decodes each body" ||
	fail "push: malformed requests" "$(head -5 "$work/r/errors.log" "$work/r.recv.err" 2>/dev/null)"
"$PY" - "$work/b" "$work/r/index.jsonl" "$work/b.log" "$top/tests/integration/pyroscope_receiver.py" $wl \
	>"$work/check" <<'PYEOF'
import glob, json, os, re, sys, importlib.util
outdir, index, log, pyro, wpid = sys.argv[1:6]
spec = importlib.util.spec_from_file_location("pyro", pyro)
R = importlib.util.module_from_spec(spec); spec.loader.exec_module(R)
def out(ok, name, detail=""): print("%s\t%s\t%s" % ("ok" if ok else "fail", name, detail))
local = {}
for f in glob.glob(os.path.join(outdir, "*-profile.pb.gz")):
    s = R.pprof_summary(open(f, "rb").read())
    if s["samples"]:
        local[s["time_nanos"]] = s["samples"]
got, twice, leaf = {}, [], {}
for line in open(index) if os.path.exists(index) else []:
    cpu = json.loads(line)["profiles"][0]
    if cpu["time"] in got: twice.append(cpu["time"])
    got[cpu["time"]] = cpu["samples"]
    for k, v in cpu["leaf"].items(): leaf[k] = leaf.get(k, 0) + v
left = glob.glob(os.path.join(outdir, "*-push.otlp.gz"))
lost = [t for t in local if t not in got]
extra = [t for t in got if t not in local]
mism = [(t, local[t], got[t]) for t in local if t in got and got[t] != local[t]]
out(len(local) >= 3 and not lost and not extra and not twice and not mism and not left,
    "push: all %d intervals received once with their local profile's samples (%d samples), none lost, spool empty"
    % (len(local), sum(local.values())), "lost %s extra %s twice %s mismatched %s spool %s" % (lost, extra, twice, mism[:3], left))
m = re.findall(r"push: (\d+) intervals: (\d+) pushed, (\d+) spooled, (\d+) dropped; (\d+) retried; (\d+) replayed"
               r".*?(\d+) profiles rejected by the receiver", open(log).read())
n, p, sp, d, rt, rp, rej = map(int, m[-1]) if m else (-1,) * 7
out(n == len(local) and p + rp == len(got) and sp == rp and sp > 0 and d == 0 and rej >= 1,
    "push: summary: %d intervals = %d pushed + %d spooled (all replayed) + %d dropped; %d profiles rejected reported"
    % (n, p, sp, d, rej), m[-1] if m else "no summary")
t = sum(leaf.values())
print("split\t%s\t%s\t%s" % (100.0 * leaf.get("hot_a", 0) / t if t else "", 100.0 * leaf.get("hot_b", 0) / t if t else "", t))
PYEOF
while IFS=$'\t' read -r st name detail n; do
	case $st in
	ok) ok "$name" ;;
	fail) fail "$name" "$detail" "$(grep 'push' "$work/b.log" | tail -6)" ;;
	split)
		a=$(printf '%.1f' "${name:-0}") b=$(printf '%.1f' "${detail:-0}") tol=$(split_tol "$n" $TOL)
		if [ -n "$tol" ] && near "$a" 75 "$tol" && near "$b" 25 "$tol"; then
			ok "push: hotcold's samples in the received requests: hot_a $a %, hot_b $b % of $n (75/25 ±$tol)"
		else
			fail "push: hot_a '$a' hot_b '$b' of '$n' samples (±'$tol')"
		fi
		;;
	esac
done <"$work/check"
{ kill -KILL $wl; wait $wl; } 2>/dev/null

finish

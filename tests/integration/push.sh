#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --push (user/write/push.c) against a receiver started here on 127.0.0.1
# (tests/integration/pyroscope_receiver.py: it follows Pyroscope's published
# server API for /push.v1.PusherService/Push and /ingest, and is not
# Pyroscope). The receiver checks every request (method, path, headers,
# labels, the PushRequest protobuf, the pprof inside) and saves each profile.
# Workloads spin only while they are profiled: hotcold stopped (SIGSTOP)
# but while bpfprof samples it, or run as bpfprof's command.
#
#  1. Connect API, -p hotcold at 2999 Hz for 0.4 s of its CPU time, basic
#     auth, tenant, --label: one request, the labels, go tool pprof names
#     hot_a 75 % and hot_b 25 % (±split_tol: TOL points, or 4 standard
#     deviations of a 75 % share at the samples the pushed profile holds
#     when that is more).
#  2. The legacy /ingest endpoint: name=hotcold{...}, from/until, the pprof.
#  3. -a --cgroup --interval 1 with faults, each one started as soon as
#     bpfprof's -v log shows the last one had its effect: the receiver down at
#     start (a retry), answering slowly (a request longer than an interval),
#     down again until an interval is spooled, back until the spool is
#     replayed, answering 500 (a retry), back. Every interval's local profile
#     (--output-dir) must be matched by a pushed profile or a spooled
#     STAMP-push.pb with exactly its sample count (no interval lost, none
#     twice); sampling never stalled: each interval holds F x the CPU time the
#     workload had in it (/proc/PID/schedstat, polled every 20 ms) of its
#     samples, ±4 standard deviations and a scheduler tick; intervals are back
#     to back; the summary's counts add up; one series per cgroup (the
#     workload's and the receiver's), the workload's series names hot_a and
#     hot_b with the 3:1 split.
#  4. A server that refuses (401): the interval is spooled, exit 0; the next
#     run replays it; a server slower than --push-timeout.
#  5. TLS: https with --push-ca works; without it the certificate is refused,
#     the interval is dropped (no --output-dir) and bpfprof exits 1.
#  6. Bad auth files (missing, world-readable, empty) stop bpfprof before it
#     samples, exit 1; bad option values exit 2.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
BPFPROF=${BPFPROF:-$top/bpfprof}
HOTCOLD=${HOTCOLD:-$top/.output/workload/hotcold}
RECEIVER=$top/tests/integration/pyroscope_receiver.py
TOL=${TOL:-7}
work=$(mktemp -d /tmp/bpfprof-push.XXXXXX)
pids=()
cg=
# On exit: every process started here (SIGCONT for the stopped ones), the
# test cgroups, the directory.
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null && kill -CONT "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -n "$cg" ] && rmdir "$cg"/w "$cg"/r "$cg" 2>/dev/null
	[ -n "${KEEP:-}" ] && echo "kept $work" || rm -rf "$work"
}
trap cleanup EXIT
export PPROF_TMPDIR=$work/pprof HOME=${HOME:-/root}

. "$(dirname "$0")/lib.bash"
require_bpf "push"
require_python "push"

# cpu_ms PID: the CPU time PID (its main thread) has had, ms (schedstat)
# go tool pprof -top in samples: "name<TAB>flat" per function
top_counts() {
	go tool pprof -top -sample_index=samples -nodefraction=0 -nodecount=100000 "$@" 2>"$work/pprof.err" |
		awk 'f { n = $6; for (i = 7; i <= NF; i++) n = n " " $i; print n "\t" $1 } / flat +flat% / { f = 1 }'
}
pct_of() { awk -F'\t' -v f="$2" '{ t += $2; if ($1 == f) v += $2 } END { if (t) printf "%.1f", 100 * v / t }' "$1"; }
# total samples of a top_counts FILE, for split_tol (lib.bash)
top_total() { awk -F'\t' '{ n += $2 } END { print n + 0 }' "$1"; }
# the last "push:" summary line's field: count_of LOG WORD (pushed, spooled, dropped, retried, intervals)
count_of() { grep 'bpfprof: push: [0-9]* intervals' "$1" | tail -1 | grep -oE "[0-9]+ $2" | awk '{ print $1 }'; }
# samples of a pprof FILE (gzip) as the receiver decodes it
samples_of() { "$PY" "$RECEIVER" --decode-pprof "$1" | sed -n 's/.*"samples": \([0-9]*\).*/\1/p'; }

printf 'user:s3cret\n' >"$work/auth"
chmod 600 "$work/auth"
basic=$(printf 'user:s3cret' | base64)
# hot: the -p target of 1 and 2, stopped except while bpfprof samples it
"$HOTCOLD" 60 &
hot=$!
pids+=("$hot")
wait_exec $hot hotcold
kill -STOP $hot
# run_hot MS ARGS...: bpfprof -p $hot ARGS, hot let run MS ms of CPU once
# bpfprof is about to sample, then SIGINT. Its exit status in $rc.
run_hot() {
	local ms=$1 bp
	shift
	"$BPFPROF" -p $hot "$@" &
	bp=$!
	wait_sampling $bp
	spin $hot "$ms"
	kill -INT $bp
	wait $bp
	rc=$?
}

# ---- 1. Connect API, one-shot ----
# 2999 Hz while hotcold has 0.4 s of CPU: 1,200 samples (±5, TOL is more)
if start_recv r1 --out "$work/r1" --expect-header "Authorization: Basic $basic" \
	--expect-header "X-Scope-OrgID: team-a" --expect-label env=ci --expect-label pid=$hot \
	--expect-label service_name=hotcold; then
	port=$(cat "$work/r1.port")
	run_hot 400 -F 2999 --push "http://127.0.0.1:$port" --push-auth-file "$work/auth" \
		--tenant team-a --label env=ci -o "$work/one.pb.gz" 2>"$work/one.log"
	stop_recv
	n=$(wc -l <"$work/r1/index.jsonl" 2>/dev/null)
	f=$(ls "$work"/r1/*.pb.gz 2>/dev/null | head -1)
	if [ $rc -eq 0 ] && [ "$n" = 1 ] && [ ! -s "$work/r1/errors.log" ] && [ "$(count_of "$work/one.log" pushed)" = 1 ]; then
		ok "connect: one PushRequest, method, path, headers, labels and protobuf as the API says"
	else
		fail "connect: rc=$rc requests=$n" "$(cat "$work/one.log" "$work/r1/errors.log" 2>/dev/null | tail -8)"
	fi
	if [ -n "$f" ] && command -v go >/dev/null; then
		top_counts "$f" >"$work/one.top"
		a=$(pct_of "$work/one.top" hot_a) b=$(pct_of "$work/one.top" hot_b) tol=$(split_tol "$(top_total "$work/one.top")" $TOL)
		if [ ! -s "$work/pprof.err" ] && [ -n "$tol" ] && near "$a" 75 "$tol" && near "$b" 25 "$tol"; then
			ok "connect: go tool pprof reads the pushed profile: hot_a $a %, hot_b $b % (75/25 ±$tol)"
		else
			fail "connect: pushed profile: hot_a '$a' hot_b '$b' (±'$tol': empty under 50 samples)" \
				"$(head -5 "$work/pprof.err")" "$(head -5 "$work/one.top")"
		fi
		# the pushed bytes are the run's profile: the same samples as the -o file
		p1=$(samples_of "$f") p2=$(samples_of "$work/one.pb.gz")
		[ -n "$p1" ] && [ "$p1" = "$p2" ] && ok "connect: the pushed profile has the -o file's $p1 samples" ||
			fail "connect: pushed $p1 samples, -o file $p2"
	else
		skip "connect: go tool pprof" "no profile received or go missing"
	fi
else
	fail "connect: the receiver did not start" "$(cat "$work/r1.recv.err")"
fi

# ---- 2. legacy /ingest ----
# 2999 Hz while hotcold has 0.25 s of CPU: 750 samples (±6.3; the check allows TOL + 3)
if start_recv r2 --out "$work/r2" --expect-header "Authorization: Basic $basic" --expect-label pid=$hot \
	--expect-label service_name=hotcold --expect-header "Content-Type: application/octet-stream"; then
	port=$(cat "$work/r2.port")
	run_hot 250 -F 2999 --push "http://127.0.0.1:$port/ingest" --push-auth-file "$work/auth" \
		2>"$work/ingest.log"
	stop_recv
	f=$(ls "$work"/r2/*.pb.gz 2>/dev/null | head -1)
	if [ $rc -eq 0 ] && [ -n "$f" ] && [ ! -s "$work/r2/errors.log" ] && grep -q '"api": "ingest"' "$work/r2/index.jsonl"; then
		top_counts "$f" >"$work/ingest.top"
		a=$(pct_of "$work/ingest.top" hot_a) tol=$(split_tol "$(top_total "$work/ingest.top")" $((TOL + 3)))
		if [ -n "$tol" ] && near "$a" 75 "$tol"; then
			ok "ingest: POST /ingest?name=hotcold{hostname=...,pid=...}&from&until&format=pprof; hot_a $a % (±$tol)"
		else
			fail "ingest: hot_a '$a' (±'$tol')" "$(head -5 "$work/ingest.top")"
		fi
	else
		fail "ingest: rc=$rc" "$(cat "$work/ingest.log" "$work/r2/errors.log" 2>/dev/null | tail -8)"
	fi
else
	fail "ingest: the receiver did not start" "$(cat "$work/r2.recv.err")"
fi
{ kill -KILL $hot; wait $hot; } 2>/dev/null

# ---- 3. continuous, -a --cgroup, with server faults ----
# The workload (hotcold at --duty 50) in cgroup w, the receiver in r, both
# under the test's own cgroup, which alone bpfprof samples (-a --cgroup):
# other scripts' processes are neither sampled nor judged. Without cgroup2,
# plain -a, and only the workload's pid is judged.
cg2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
if [ -n "$cg2" ] && mkdir "$cg2/bpfprof-push.$$" 2>/dev/null; then
	cg=$cg2/bpfprof-push.$$
	mkdir "$cg/w" "$cg/r" || cg=
fi
F3=999
"$HOTCOLD" 60 --duty 50 &
wl=$!
pids+=("$wl")
wait_exec $wl hotcold
kill -STOP $wl
[ -n "$cg" ] && echo $wl >"$cg/w/cgroup.procs"
# the workload's CPU time (ns, /proc/PID/schedstat's first field) every 20 ms,
# "REALTIME_NS RUNTIME_NS", until STOP exists: then once more, and it exits
"$PY" -c '
import os, sys, time
src, out, stop = sys.argv[1:4]
with open(out, "w", buffering=1) as o:
    while True:
        last = os.path.exists(stop)
        t = time.time_ns()
        with open(src) as f:
            o.write("%d %s\n" % (t, f.read().split()[0]))
        if last:
            break
        time.sleep(0.02)
' "/proc/$wl/schedstat" "$work/cpu.log" "$work/cpu.stop" 2>"$work/poller.err" &
poller=$!
pids+=("$poller")
for _ in $(seq 500); do [ -s "$work/cpu.log" ] && break; sleep 0.02; done
port=$(free_port)
mode=$work/mode
echo ok >"$mode"
mkdir -p "$work/b"
"$BPFPROF" -a ${cg:+--cgroup "$cg"} -F $F3 --interval 1 --output-dir "$work/b" --push "http://127.0.0.1:$port" \
	--push-queue 2 --push-timeout 5 --label run=faults -v --no-progress --top 0 2>"$work/b.log" &
bp=$!
pids+=("$bp")
wait_sampling $bp perf_event
kill -CONT $wl
rargs=(--port "$port" --out "$work/rb" --mode-file "$mode" --expect-label run=faults)
# recv_up: the receiver back on the same port, in cgroup r
recv_up() {
	start_recv rb "${rargs[@]}"
	[ -n "$cg" ] && echo "$recv_pid" >"$cg/r/cgroup.procs"
}
missed=()
retrying='retrying with backoff' back='takes profiles again' pushed='interval .* pushed (' spooled=' spooled to ' replayed="' replayed$"
# down at start: the first interval's push fails
wait_log "$retrying" 1 || missed+=("down at start")
# slow: a request takes 1.5 s, longer than an interval
echo "slow 1.5" >"$mode"
recv_up
wait_log "$back" 1 || missed+=("slow answer")
echo ok >"$mode"
wait_log "$pushed" $(($(seen "$pushed") + 1)) || missed+=("a push after the slow one")
# down again until the queue (2) overflows: an interval spooled
stop_recv
wait_log "$spooled" $(($(seen "$spooled") + 1)) || missed+=("spooled while down")
# back: the queue pushed, then the spool replayed
recv_up
wait_log "$replayed" $(($(seen "$replayed") + 1)) || missed+=("replayed once back")
# 500s: a retry; then back
echo 500 >"$mode"
wait_log "$retrying" $(($(seen "$retrying") + 1)) || missed+=("500 answered")
echo ok >"$mode"
wait_log "$back" $(($(seen "$back") + 1)) || missed+=("back after the 500")
kill -INT $bp
wait $bp
rc=$?
# a poll after the last interval's end, then the workload goes
touch "$work/cpu.stop"
wait $poller
kill $wl 2>/dev/null
wait $wl 2>/dev/null
stop_recv
[ ${#missed[@]} -eq 0 ] && ok "faults: down at start, slow, down until spooled, back and replayed, 500, back: each seen in bpfprof's log" ||
	fail "faults: not seen: ${missed[*]}" "$(grep 'push' "$work/b.log" | tail -8)"
grep -q 'bpfprof: push: .*retrying' "$work/b.log" && ok "faults: the outage is reported once, sampling goes on" ||
	fail "faults: no warning about the outage" "$(tail -5 "$work/b.log")"
[ ! -s "$work/rb/errors.log" ] && ok "faults: every request the receiver read was well-formed" ||
	fail "faults: malformed requests" "$(head -5 "$work/rb/errors.log")"
[ $rc -eq 0 ] || fail "faults: bpfprof exited $rc" "$(tail -5 "$work/b.log")"
"$PY" - "$work/b" "$work/rb/index.jsonl" "$work/b.log" "$RECEIVER" $F3 "bpfprof-push.$$/w" $wl "$work/cpu.log" \
	>"$work/b.check" <<'PYEOF'
import bisect, glob, gzip, json, math, os, re, sys, importlib.util
outdir, index, log, receiver, freq, cgname, wpid, cpulog = sys.argv[1:9]
freq, wpid = int(freq), int(wpid)
spec = importlib.util.spec_from_file_location("recv", receiver)
R = importlib.util.module_from_spec(spec); spec.loader.exec_module(R)
def out(ok, name, detail=""): print("%s\t%s\t%s" % ("ok" if ok else "fail", name, detail))
def pid_samples(raw, pid):
    """samples of process PID in a gzip pprof (its "pid" label)"""
    strings, samples, n = [], [], 0
    for num, wt, v in R.fields(gzip.decompress(raw)):
        if num == 6: strings.append(v.decode())
        elif num == 2: samples.append(v)
    kpid = strings.index("pid") if "pid" in strings else -1
    for v in samples:
        vals, pids = [], []
        for n2, w2, v2 in R.fields(v):
            if n2 == 2: vals += R.packed_ints(w2, v2)
            elif n2 == 3:
                lab = dict((n3, v3) for n3, _, v3 in R.fields(v2))
                if lab.get(1) == kpid: pids.append(lab.get(3))
        if pid in pids and vals: n += vals[0]
    return n
# intervals are keyed by their pprof time_nanos (the same in every copy of one interval's profile)
local = {}
for f in glob.glob(os.path.join(outdir, "*-profile.pb.gz")):
    raw = open(f, "rb").read()
    summ = R.pprof_summary(raw)
    summ["wl"] = pid_samples(raw, wpid)
    local[summ["time_nanos"]] = summ
pushed, late, cgseries, seen, dups = {}, set(), [], set(), 0
for line in open(index) if os.path.exists(index) else []:
    r = json.loads(line)
    # delivery is at least once: a receiver stopped between storing a request and answering it
    # gets it again, with the same RawSample ID (the same profile to Pyroscope)
    if r["id"] in seen:
        dups += 1
        continue
    seen.add(r["id"])
    s = r["time_nanos"]
    p = pushed.setdefault(s, {"samples": 0, "ids": set(), "labels": []})
    p["samples"] += r["samples"]; p["ids"].add(r["id"]); p["labels"].append(dict(r["labels"]))
    if r["received"] - (r["time_nanos"] + r["duration_nanos"]) / 1e9 > 2.0: late.add(s)
    if dict(r["labels"]).get("cgroup") == "/" + cgname: cgseries.append(os.path.join(os.path.dirname(index), r["file"]))
spooled = {}
for f in glob.glob(os.path.join(outdir, "*-push.pb")):
    recs = [json.loads(l) for l in os.popen("%s %s --decode-push %s" % (sys.executable, receiver, f)).read().splitlines()]
    spooled[recs[0]["time_nanos"] if recs else f] = sum(r["samples"] for r in recs)
lost = [s for s in local if s not in pushed and s not in spooled]
both = [s for s in local if s in pushed and s in spooled]
extra = [s for s in list(pushed) + list(spooled) if s not in local]
# at least 6: the first interval fails, three end while the server is down again (a queue of 2, the
# third spools the oldest), one is answered 500, and the last one ends with the run
out(not lost and not both and not extra and len(local) >= 6,
    "faults: all %d intervals accounted for: %d pushed (%d of them more than 2 s late), %d spooled, none lost or twice"
    " (%d series received again with the same ID)" % (len(local), len(pushed), len(late), len(spooled), dups),
    "lost %s both %s extra %s" % (lost, both, extra))
mism = [(s, local[s]["samples"], (pushed.get(s) or {}).get("samples", spooled.get(s))) for s in local
        if (pushed[s]["samples"] if s in pushed else spooled.get(s)) != local[s]["samples"]]
out(not mism, "faults: each pushed or spooled interval has exactly its local profile's samples", str(mism[:5]))
ts = sorted((v["time_nanos"], v["duration_nanos"]) for v in local.values())
# Sampling never stalled: an interval holds F x the CPU time the workload had in it of its samples
# (cpu-clock fires every 1/F s of a CPU; each tick lands in the workload or not: at most sqrt(E)
# standard deviation around E), within 4 standard deviations and F x 10 ms (schedstat's runtime
# is brought up to date at the scheduler tick: 4 ms at 250 Hz, 10 at 100 Hz). The CPU time is
# bounded by the polls around each edge. Each interval starts where the last one ended (durations
# are monotonic, from the first one's start); a renamed one's time_nanos is a second late.
polls = [(0, 0)]
for l in open(cpulog):
    w = l.split()
    if len(w) == 2: polls.append((int(w[0]), int(w[1])))
pt = [p[0] for p in polls]
def cpu_between(a, b):
    """CPU ns the workload surely had in [a, b], and at most"""
    i0, i1 = bisect.bisect_left(pt, a), bisect.bisect_right(pt, b) - 1      # polls inside
    o0, o1 = bisect.bisect_right(pt, a) - 1, bisect.bisect_left(pt, b)      # polls outside
    lo = polls[i1][1] - polls[i0][1] if i0 < len(polls) and i1 >= i0 else 0
    hi = polls[o1][1] - polls[o0][1] if o1 < len(polls) else None
    return lo, hi
start, bad, ratios = ts[0][0] if ts else 0, [], []
for tn, dn in ts:
    lo, hi = cpu_between(start, start + dn)
    n = local[tn]["wl"]
    if hi is None:
        bad.append((tn, n, "no poll after the interval"))
    else:
        elo, ehi = freq * lo / 1e9, freq * hi / 1e9
        if not elo - 4 * math.sqrt(elo) - freq * 0.01 <= n <= ehi + 4 * math.sqrt(ehi) + freq * 0.01:
            bad.append((tn, n, "expected %.0f-%.0f" % (elo, ehi)))
        if lo + hi: ratios.append(n / (freq * (lo + hi) / 2e9))
    start += dn
out(ts and not bad, "faults: sampling never stalled: each interval's workload samples F x its CPU time in the"
    " interval (±4 sd + 10 ms; ratios %.2f-%.2f)" % (min(ratios or [0]), max(ratios or [0])), str(bad[:5]))
gaps = [(b[0] - (a[0] + a[1])) / 1e6 for a, b in zip(ts, ts[1:])]
lens = [d / 1e9 for _, d in ts[:-1]]
# each interval begins where the last one was drained, however long writing it took; but one
# that starts in the second of the last (after an interval cut short: the sanitizer build writes
# slowly) is named, and its pprof time set, a second later, which moves its two edges
renamed = open(log).read().count("named a second later")
off = [g for g in gaps if abs(g) >= 5]
out(gaps and len(off) <= 2 * renamed and all(abs(g) < 1000 for g in off),
    "faults: intervals back to back (gaps %.1f..%.1f ms; %d renamed; lengths %.2f-%.2f s)"
    % (min(gaps or [0]), max(gaps or [0]), renamed, min(lens or [0]), max(lens or [0])))
m = re.findall(r"push: (\d+) intervals: (\d+) pushed, (\d+) spooled, (\d+) dropped; (\d+) retried; (\d+) replayed",
               open(log).read())
n, p, sp, d, rt, rp = map(int, m[-1]) if m else (-1,) * 6
# (retries are likely but timing-dependent: a full queue may spool an interval before its retry)
# spooled requests replayed once the server was back: received, and their files gone
out(n == len(local) and p + rp == len(pushed) and sp - rp == len(spooled) and d == 0 and p + sp + d == n and sp > 0
    and rp > 0,
    "faults: summary adds up: %d intervals = %d pushed + %d spooled + %d dropped; %d retried; %d of the spooled "
    "replayed once the server was back (received: %d, spool files left: %d)" % (n, p, sp, d, rt, rp, len(pushed), len(spooled)),
    "received %d, spool files %d" % (len(pushed), len(spooled)))
multi = [s for s, v in pushed.items() if len(v["ids"]) != len(v["labels"])]
cg_ok = all(sum(1 for l in v["labels"] if l.get("cgroup") == "/" + cgname) <= 1 for v in pushed.values())
svc = {l["service_name"] for v in pushed.values() for l in v["labels"]}
out(not multi and cg_ok and ("ebpf/cgroup/" + cgname) in svc,
    "faults: one series per cgroup a request, the workload's as service_name ebpf/cgroup/%s (%d services)" % (cgname, len(svc)),
    "services %s" % sorted(svc)[:10])
print("files\t" + " ".join(cgseries))
PYEOF
while IFS=$'\t' read -r st name detail; do
	case $st in
	ok) ok "$name" ;;
	fail)
		[ -z "$cg" ] && [[ $name == *"one series per cgroup"* ]] && { skip "faults: the cgroup series" "no cgroup2"; continue; }
		fail "$name" "$detail" "$(grep 'push' "$work/b.log" | tail -6)"
		;;
	files) cgfiles=$name ;;
	esac
done <"$work/b.check"
if [ -n "${cgfiles:-}" ] && command -v go >/dev/null; then
	# shellcheck disable=SC2086
	top_counts $cgfiles >"$work/cg.top"
	a=$(pct_of "$work/cg.top" hot_a) b=$(pct_of "$work/cg.top" hot_b) tol=$(split_tol "$(top_total "$work/cg.top")" $((TOL + 3)))
	# a user stack is cut where hotcold enters the kernel: a few samples hold no hot_ frame
	if [ -n "$tol" ] && near "$a" 75 "$tol" && near "$b" 25 "$tol"; then
		ok "faults: the cgroup's pushed profiles merged by go tool pprof: hot_a $a %, hot_b $b % (±$tol)"
	else
		fail "faults: cgroup series hot_a '$a' hot_b '$b' (±'$tol')" "$(head -5 "$work/cg.top")"
	fi
elif [ -z "$cg" ]; then
	skip "faults: the cgroup series split" "no cgroup2"
fi
[ -n "$cg" ] && rmdir "$cg"/w "$cg"/r "$cg" 2>/dev/null && cg=

# ---- 4. a server that refuses the request ----
# 4 to 5 need a profile with samples (an empty interval is not pushed), not a
# split: hotcold as the command, 0.25 s at --duty 20, about 50 samples at 999 Hz
short=("$HOTCOLD" 0.25 --duty 20)
if start_recv r4 --out "$work/r4" --mode-file "$work/mode401"; then
	echo 401 >"$work/mode401"
	mkdir -p "$work/e"
	"$BPFPROF" -F 999 --output-dir "$work/e" --push "http://127.0.0.1:$(cat "$work/r4.port")" \
		-- "${short[@]}" 2>"$work/e.log"
	rc=$?
	stop_recv
	sp=$(ls "$work"/e/*-push.pb 2>/dev/null | head -1)
	if [ $rc -eq 0 ] && grep -q "refused interval .*HTTP 401" "$work/e.log" && [ -n "$sp" ] &&
		[ "$(count_of "$work/e.log" spooled)" = 1 ] &&
		"$PY" "$RECEIVER" --decode-push "$sp" | grep -q '"service_name", "hotcold"'; then
		ok "401: the interval is spooled as $(basename "$sp") (a PushRequest with its labels), exit 0"
	else
		fail "401: rc=$rc spool='$sp'" "$(tail -5 "$work/e.log")" "$(ls "$work/e")" "$(cat "$work/r4.recv.err" 2>/dev/null)"
	fi
fi

# ---- 4a. the spooled request of 4 replayed by the next run once the server takes profiles ----
if [ -n "${sp:-}" ] && start_recv r7 --out "$work/r7"; then
	old_id=$("$PY" "$RECEIVER" --decode-push "$sp" | "$PY" -c 'import json,sys; print(json.loads(sys.stdin.readline())["id"])')
	"$BPFPROF" -F 999 --output-dir "$work/e" --push "http://127.0.0.1:$(cat "$work/r7.port")" \
		-- "${short[@]}" 2>"$work/e2.log"
	rc=$?
	stop_recv
	if [ $rc -eq 0 ] && [ ! -e "$sp" ] && [ "$(wc -l <"$work/r7/index.jsonl")" = 2 ] &&
		grep -q "\"id\": \"$old_id\"" "$work/r7/index.jsonl" && grep -q '1 replayed from the spool' "$work/e2.log"; then
		ok "replay: the next run pushes its interval, then the earlier spooled request (same ID), and removes it"
	else
		fail "replay: rc=$rc" "$(tail -3 "$work/e2.log")" "$(ls "$work/e")"
	fi
fi

# ---- 4b. a server slower than --push-timeout ----
if start_recv r6 --out "$work/r6" --mode-file "$work/mode-slow"; then
	echo "slow 2.5" >"$work/mode-slow"
	mkdir -p "$work/s"
	"$BPFPROF" -F 999 --output-dir "$work/s" --push "http://127.0.0.1:$(cat "$work/r6.port")" \
		--push-timeout 1 -- "${short[@]}" 2>"$work/s.log"
	rc=$?
	# the receiver still answers the abandoned request (1.5 s after bpfprof gave up)
	for _ in $(seq 150); do [ -s "$work/r6/index.jsonl" ] && break; sleep 0.02; done
	stop_recv
	sp=$(ls "$work"/s/*-push.pb 2>/dev/null | head -1)
	id=$([ -n "$sp" ] && "$PY" "$RECEIVER" --decode-push "$sp" | "$PY" -c 'import json,sys; print(json.loads(sys.stdin.readline())["id"])')
	if [ $rc -eq 0 ] && grep -qi 'timeout' "$work/s.log" && [ -n "$sp" ] && [ "$(count_of "$work/s.log" spooled)" = 1 ]; then
		ok "timeout: a request over --push-timeout is abandoned; at the end the interval is spooled, exit 0"
	else
		fail "timeout: rc=$rc spool='$sp'" "$(tail -5 "$work/s.log")"
	fi
	# at least once, not exactly once: the server may still store what the client gave up on
	if [ -n "$id" ] && grep -q "\"id\": \"$id\"" "$work/r6/index.jsonl" 2>/dev/null; then
		ok "timeout: the slow server stored the abandoned request too (same RawSample ID $id as the spool)"
	else
		skip "timeout: duplicate" "the receiver did not store the abandoned request"
	fi
fi

# ---- 5. TLS ----
if command -v openssl >/dev/null &&
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$work/key.pem" -out "$work/cert.pem" -days 1 \
		-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1 &&
	start_recv r5 --out "$work/r5" --tls-cert "$work/cert.pem" --tls-key "$work/key.pem"; then
	port=$(cat "$work/r5.port")
	"$BPFPROF" -F 999 --push "https://127.0.0.1:$port" --push-ca "$work/cert.pem" -- "${short[@]}" 2>"$work/tls.log"
	rc=$?
	[ $rc -eq 0 ] && [ "$(count_of "$work/tls.log" pushed)" = 1 ] && [ -s "$work/r5/index.jsonl" ] &&
		ok "tls: https with --push-ca: pushed" || fail "tls: rc=$rc" "$(tail -5 "$work/tls.log")"
	"$BPFPROF" -F 999 --push "https://127.0.0.1:$port" --push-timeout 1 -- "${short[@]}" 2>"$work/tls2.log"
	rc=$?
	stop_recv
	[ $rc -eq 1 ] && grep -qi 'certificate' "$work/tls2.log" && [ "$(count_of "$work/tls2.log" dropped)" = 1 ] &&
		[ "$(wc -l <"$work/r5/index.jsonl")" = 1 ] &&
		ok "tls: an unknown CA is refused; the interval is dropped and counted, exit 1" ||
		fail "tls without --push-ca: rc=$rc" "$(tail -5 "$work/tls2.log")"
else
	skip "tls" "openssl or the TLS receiver unavailable"
fi

# ---- 6. bad auth files, bad options ----
# these runs end before sampling: their target (-p) only has to exist, and sleeps
sleep 60 &
idle=$!
pids+=("$idle")
port=$(free_port)
: >"$work/empty"
chmod 600 "$work/empty"
printf 'user:pw\n' >"$work/open"
chmod 644 "$work/open"
for c in "missing:$work/nonexistent:cannot read push auth file" "world-readable:$work/open:readable by every user" \
	"empty:$work/empty:is empty"; do
	IFS=: read -r what file msg <<<"$c"
	"$BPFPROF" -p $idle -d 5 -o "$work/auth-$what.prof" --push "http://127.0.0.1:$port" --push-auth-file "$file" \
		>/dev/null 2>"$work/auth.log"
	rc=$?
	if [ $rc -eq 1 ] && grep -q "$msg" "$work/auth.log" && grep -q "'$file'" "$work/auth.log" &&
		[ ! -e "$work/auth-$what.prof" ] && ! grep -q 'samples' "$work/auth.log"; then
		ok "auth file $what: '$msg', before sampling, exit 1"
	else
		fail "auth file $what: rc=$rc" "$(cat "$work/auth.log")"
	fi
done
for c in "--push ftp://host" "--push http://user:pw@host" "--push http://h/x?y=1" "--push http://h --label k" \
	"--push http://h --label service_name=x" "--push http://h --label __x=1" "--push http://h --push-api grpc" \
	"--push http://h --tenant=" "--label k=v" "--push http://h --push-queue 0" "--push http://h --service-name a{b}"; do
	# shellcheck disable=SC2086
	"$BPFPROF" -p $idle -d 1 $c >/dev/null 2>"$work/opt.log"
	rc=$?
	[ $rc -eq 2 ] && grep -q "Try" "$work/opt.log" || { fail "bad option '$c': rc=$rc" "$(cat "$work/opt.log")"; continue; }
	bad_ok=$((${bad_ok:-0} + 1))
done
[ "${bad_ok:-0}" = 11 ] && ok "11 bad push option values: exit 2 with a usage hint"

finish

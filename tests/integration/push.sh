#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --push (user/write/push.c) against a receiver started here on 127.0.0.1
# (tests/integration/pyroscope_receiver.py: it follows Pyroscope's published
# server API for /push.v1.PusherService/Push and /ingest, and is not
# Pyroscope). The receiver checks every request (method, path, headers,
# labels, the PushRequest protobuf, the pprof inside) and saves each profile.
#
#  1. Connect API, -p hotcold for 3 s at 499 Hz, basic auth, tenant, --label:
#     one request, the labels, go tool pprof names hot_a 75 % and hot_b 25 %
#     (±TOL points: 1,500 samples give a standard deviation of 1.1 points;
#     the rest is room for other agents' load on a shared 2-CPU VM).
#  2. The legacy /ingest endpoint: name=hotcold{...}, from/until, the pprof.
#  3. -a --interval 1 with faults: the receiver down at start, answering
#     slowly, down again for more than two intervals, answering 500. Every
#     interval's local profile (--output-dir) must be matched by a pushed
#     profile or a spooled STAMP-push.pb with exactly its sample count (no
#     interval lost, none twice); each interval holds F x duration x CPUs
#     samples within -25 %/+5 % (two hotcold processes keep both CPUs busy, so
#     only idle moments can lower it: sampling never stalled); intervals are
#     back to back; the summary's counts add up; one series per cgroup, the
#     workload's cgroup series names hot_a and hot_b with the 3:1 split.
#  4. A server that refuses (401): the interval is spooled, exit 0.
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
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -n "$cg" ] && rmdir "$cg" 2>/dev/null
	[ -n "${KEEP:-}" ] && echo "kept $work" || rm -rf "$work"
}
trap cleanup EXIT
export PPROF_TMPDIR=$work/pprof HOME=${HOME:-/root}

. "$(dirname "$0")/lib.bash"
require_bpf "push"
# Debian's python3 (tools/install-deps.sh), else whatever python3 PATH has
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3) || {
	skip "push" "python3 (the receiver) not installed"
	finish
}

free_port() { "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# start_recv NAME ARGS...: the receiver in the background, $recv_pid set, waits for its port file
start_recv() {
	local name=$1
	shift
	rm -f "$work/$name.port"
	"$PY" "$RECEIVER" --port-file "$work/$name.port" "$@" 2>>"$work/$name.recv.err" &
	recv_pid=$!
	pids+=("$recv_pid")
	for _ in $(seq 100); do
		[ -s "$work/$name.port" ] && return 0
		sleep 0.1
	done
	return 1
}
stop_recv() { kill "$recv_pid" 2>/dev/null; wait "$recv_pid" 2>/dev/null; }
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

printf 'user:s3cret\n' >"$work/auth"
chmod 600 "$work/auth"
basic=$(printf 'user:s3cret' | base64)
"$HOTCOLD" 200 &
hot=$!
pids+=("$hot")

# ---- 1. Connect API, one-shot ----
if start_recv r1 --out "$work/r1" --expect-header "Authorization: Basic $basic" \
	--expect-header "X-Scope-OrgID: team-a" --expect-label env=ci --expect-label pid=$hot \
	--expect-label service_name=hotcold; then
	port=$(cat "$work/r1.port")
	"$BPFPROF" -p $hot -d 3 -F 499 --push "http://127.0.0.1:$port" --push-auth-file "$work/auth" \
		--tenant team-a --label env=ci -o "$work/one.pb.gz" 2>"$work/one.log"
	rc=$?
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
		p1=$("$PY" "$RECEIVER" --decode-pprof "$f" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["samples"])')
		p2=$("$PY" "$RECEIVER" --decode-pprof "$work/one.pb.gz" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["samples"])')
		[ -n "$p1" ] && [ "$p1" = "$p2" ] && ok "connect: the pushed profile has the -o file's $p1 samples" ||
			fail "connect: pushed $p1 samples, -o file $p2"
	else
		skip "connect: go tool pprof" "no profile received or go missing"
	fi
else
	fail "connect: the receiver did not start" "$(cat "$work/r1.recv.err")"
fi

# ---- 2. legacy /ingest ----
if start_recv r2 --out "$work/r2" --expect-header "Authorization: Basic $basic" --expect-label pid=$hot \
	--expect-label service_name=hotcold --expect-header "Content-Type: application/octet-stream"; then
	port=$(cat "$work/r2.port")
	"$BPFPROF" -p $hot -d 2 -F 499 --push "http://127.0.0.1:$port/ingest" --push-auth-file "$work/auth" \
		2>"$work/ingest.log"
	rc=$?
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

# ---- 3. continuous, -a, with server faults ----
ncpu=$(nproc)
cg2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
if [ -n "$cg2" ] && mkdir "$cg2/bpfprof-push.$$" 2>/dev/null; then
	cg=$cg2/bpfprof-push.$$
fi
wl=()
for _ in $(seq "$ncpu"); do
	"$HOTCOLD" 40 &
	wl+=($!)
	pids+=($!)
	[ -n "$cg" ] && echo $! >"$cg/cgroup.procs"
done
port=$(free_port)
mode=$work/mode
echo ok >"$mode"
mkdir -p "$work/b"
"$BPFPROF" -a -F 99 --interval 1 --output-dir "$work/b" --push "http://127.0.0.1:$port" --push-queue 2 \
	--push-timeout 5 --label run=faults -v --no-progress --top 0 2>"$work/b.log" &
bp=$!
pids+=($bp)
rargs=(--port "$port" --out "$work/rb" --mode-file "$mode" --expect-label run=faults)
sleep 2                                    # down at start
echo "slow 1.5" >"$mode"
start_recv rb "${rargs[@]}"; sleep 2.5      # slow answers
echo ok >"$mode"; sleep 1
stop_recv; sleep 2.5                        # down again, over two intervals
start_recv rb "${rargs[@]}"; sleep 1.5      # back
echo 500 >"$mode"; sleep 1.5                # 500s
echo ok >"$mode"; sleep 2
kill -INT $bp
wait $bp
rc=$?
stop_recv
for p in "${wl[@]}"; do kill "$p" 2>/dev/null; done
wait "${wl[@]}" 2>/dev/null
[ -n "$cg" ] && rmdir "$cg" 2>/dev/null && cg=
grep -q 'bpfprof: push: .*retrying' "$work/b.log" && ok "faults: the outage is reported once, sampling goes on" ||
	fail "faults: no warning about the outage" "$(tail -5 "$work/b.log")"
[ ! -s "$work/rb/errors.log" ] && ok "faults: every request the receiver read was well-formed" ||
	fail "faults: malformed requests" "$(head -5 "$work/rb/errors.log")"
[ $rc -eq 0 ] || fail "faults: bpfprof exited $rc" "$(tail -5 "$work/b.log")"
"$PY" - "$work/b" "$work/rb/index.jsonl" "$work/b.log" "$RECEIVER" "$ncpu" 99 "bpfprof-push.$$" >"$work/b.check" <<'EOF'
import glob, json, os, re, sys, time, importlib.util
outdir, index, log, receiver, ncpu, freq, cgname = sys.argv[1:8]
ncpu, freq = int(ncpu), int(freq)
spec = importlib.util.spec_from_file_location("recv", receiver)
R = importlib.util.module_from_spec(spec); spec.loader.exec_module(R)
def stamp(ns): return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(ns // 10**9))
def out(ok, name, detail=""): print("%s\t%s\t%s" % ("ok" if ok else "fail", name, detail))
# intervals are keyed by their pprof time_nanos (the same in every copy of one interval's profile)
local = {}
for f in glob.glob(os.path.join(outdir, "*-profile.pb.gz")):
    summ = R.pprof_summary(open(f, "rb").read())
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
out(not lost and not both and not extra and len(local) >= 10,
    "faults: all %d intervals accounted for: %d pushed (%d of them more than 2 s late), %d spooled, none lost or twice"
    " (%d series received again with the same ID)" % (len(local), len(pushed), len(late), len(spooled), dups),
    "lost %s both %s extra %s" % (lost, both, extra))
mism = [(s, local[s]["samples"], (pushed.get(s) or {}).get("samples", spooled.get(s))) for s in local
        if (pushed[s]["samples"] if s in pushed else spooled.get(s)) != local[s]["samples"]]
out(not mism, "faults: each pushed or spooled interval has exactly its local profile's samples", str(mism[:5]))
ratios = sorted((local[s]["samples"] / (freq * ncpu * local[s]["duration_nanos"] / 1e9), s) for s in local)
bad = [r for r in ratios if not 0.75 <= r[0] <= 1.05]
out(not bad and ratios, "faults: samples per interval within F x duration x %d CPUs -25%%/+5%%: ratios %.2f-%.2f"
    % (ncpu, ratios[0][0], ratios[-1][0]) if ratios else "faults: no intervals", str(bad[:5]))
ts = sorted((v["time_nanos"], v["duration_nanos"]) for v in local.values())
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
out(n == len(local) and p + rp == len(pushed) and sp - rp == len(spooled) and d == 0 and p + sp + d == n and sp > 0,
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
EOF
while IFS=$'\t' read -r st name detail; do
	case $st in
	ok) ok "$name" ;;
	fail) fail "$name" "$detail" "$(grep 'push' "$work/b.log" | tail -6)" ;;
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
elif [ -z "$cg" ] && [ -z "$cg2" ]; then
	skip "faults: the cgroup series" "no cgroup2"
fi

# ---- 4. a server that refuses the request ----
if start_recv r4 --out "$work/r4" --mode-file "$work/mode401"; then
	echo 401 >"$work/mode401"
	mkdir -p "$work/e"
	"$BPFPROF" -p $hot -d 2 -F 199 --output-dir "$work/e" --push "http://127.0.0.1:$(cat "$work/r4.port")" \
		2>"$work/e.log"
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
	"$BPFPROF" -p $hot -d 1 -F 199 --output-dir "$work/e" --push "http://127.0.0.1:$(cat "$work/r7.port")" \
		2>"$work/e2.log"
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
	"$BPFPROF" -p $hot -d 1 -F 199 --output-dir "$work/s" --push "http://127.0.0.1:$(cat "$work/r6.port")" \
		--push-timeout 1 2>"$work/s.log"
	rc=$?
	# the receiver still answers the abandoned request (1.5 s after bpfprof gave up)
	for _ in $(seq 30); do [ -s "$work/r6/index.jsonl" ] && break; sleep 0.1; done
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
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$work/key.pem" -out "$work/cert.pem" -days 1 \
		-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1 &&
	start_recv r5 --out "$work/r5" --tls-cert "$work/cert.pem" --tls-key "$work/key.pem"; then
	port=$(cat "$work/r5.port")
	"$BPFPROF" -p $hot -d 1 --push "https://127.0.0.1:$port" --push-ca "$work/cert.pem" 2>"$work/tls.log"
	rc=$?
	[ $rc -eq 0 ] && [ "$(count_of "$work/tls.log" pushed)" = 1 ] && [ -s "$work/r5/index.jsonl" ] &&
		ok "tls: https with --push-ca: pushed" || fail "tls: rc=$rc" "$(tail -5 "$work/tls.log")"
	"$BPFPROF" -p $hot -d 1 --push "https://127.0.0.1:$port" --push-timeout 1 2>"$work/tls2.log"
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
port=$(free_port)
: >"$work/empty"
chmod 600 "$work/empty"
printf 'user:pw\n' >"$work/open"
chmod 644 "$work/open"
for c in "missing:$work/nonexistent:cannot read push auth file" "world-readable:$work/open:readable by every user" \
	"empty:$work/empty:is empty"; do
	IFS=: read -r what file msg <<<"$c"
	"$BPFPROF" -p $hot -d 5 -o "$work/auth-$what.prof" --push "http://127.0.0.1:$port" --push-auth-file "$file" \
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
	"$BPFPROF" -p $hot -d 1 $c >/dev/null 2>"$work/opt.log"
	rc=$?
	[ $rc -eq 2 ] && grep -q "Try" "$work/opt.log" || { fail "bad option '$c': rc=$rc" "$(cat "$work/opt.log")"; continue; }
	bad_ok=$((${bad_ok:-0} + 1))
done
[ "${bad_ok:-0}" = 11 ] && ok "11 bad push option values: exit 2 with a usage hint"

finish

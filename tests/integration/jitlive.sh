#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# JIT code of processes that keep running after the profile (issue 15,
# item 6), attached with -p, each in a fresh directory:
# - a HotSpot JVM (java -XX:+PreserveFramePointer Hot: hotA does 7 units of
#   work for each 3 of hotB, 70 % / 30 % by construction) that publishes no
#   perf map by itself: bpfprof asks it for one at the end (dynamic attach,
#   Compiler.perfmap); the summary and the folded stacks must name
#   long Hot.hotA(long) and hotB at 70 % +- TOL, and so must go tool pprof
#   on the .prof and perf report on the perf.data (through the JIT images
#   made from the map), no /tmp/perf-PID.map may be
#   left behind, and the JVM must still run. --no-jvm-perfmap must leave it
#   unnamed and say so, with the remedy. The same JVM in a container (its
#   own pid namespace, where it is pid 1, and its own /tmp) is asked
#   through /proc/PID/root and named. These runs take --no-java: what they
#   test is the perf-map path, which HotSpot's own frames (jvm.sh) would
#   otherwise name first.
# - node --perf-prof (tests/jit/hot.js, hotA 75 %) whose jitdump V8 writes
#   through a stdio buffer whose last 4 KiB (in a fresh directory: hotB's
#   LOAD record) reach the file only when node exits: JS:*hotA and JS:*hotB
#   named in the summary at 75 % +- TOL with nothing reported unnamed
#   (jit_tail.h reads the unflushed bytes from the process).
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
BPFPROF=${BPFPROF:-$top/bpfprof}
# hotA's share of hotA + hotB is fixed by construction. Each runtime is
# profiled once its code of hotA and hotB is compiled (the JVM's C2, V8's
# TurboFan: -XX:+PrintCompilation, --trace-opt), at 999 Hz for 0.7-1 s: up
# to 700-1000 samples of them, fewer as other jobs load the 2 CPUs (their
# share is a fixed time's). The tolerance is TOL, or four standard deviations
# of the share at the samples taken when that is more (tol_at, below).
# The runs walk user stacks by frame pointers (--call-graph fp; the JVM keeps
# them, -XX:+PreserveFramePointer, and so does V8's code): what they check is
# the leaf's name, and with the default walk each attach builds unwind tables
# of libjvm.so or node (tens of MB of .eh_frame) while the runtime spins:
# 12.5-13 CPU-s for the script on the sanitizer build, 6.8 with fp (the
# normal build: 7.3 -> 6.1). jit.sh profiles node with the default walk.
TOL=${TOL:-10}
work=$(mktemp -d /tmp/bpfprof-jitlive.XXXXXX)
jpid= npid= cpid= upid=
cleanup() {
	for p in $jpid $npid $cpid $upid; do
		kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
		# HotSpot leaves its attach socket when killed by a signal
		rm -f "/tmp/.java_pid$p" "/tmp/perf-$p.map"
	done
	rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/home"
export HOME=$work/home

. "$(dirname "$0")/lib.bash"
require_bpf "live JIT processes"

# tol_at N PCT: the points allowed around a share of PCT % measured over N
# samples: TOL, or 4 standard deviations (100 * sqrt(p (1 - p) / N)) when
# that is more (lib.bash split_tol, for any share); nothing under 50 samples.
tol_at() { awk -v n="${1:-0}" -v p="$2" -v base="$TOL" 'BEGIN { if (n < 50) exit; p /= 100
	t = 4 * 100 * sqrt(p * (1 - p) / n); printf "%.1f", (t > base ? t : base) }'; }
# JIT samples of hotA and hotB in the summary of log $1 (count: column 2)
jit_n() { awk '/\[jit\]$/ && /hot[AB]/ { n += $2 } END { print n + 0 }' "$1"; }
# c2_wait FILE: until the JVM's -XX:+PrintCompilation output in FILE has
# tier 4 (C2) code of Hot.hotA and Hot.hotB ("  84   10       4       Hot::hotA
# (35 bytes)"; OSR entries have a %), 10 s at most; fails when it has not
c2_wait() {
	local i
	for i in $(seq 200); do
		grep -qE '^ +[0-9]+ +[0-9]+ +4 +Hot::hotA \(' "$1" && grep -qE '^ +[0-9]+ +[0-9]+ +4 +Hot::hotB \(' "$1" &&
			return 0
		sleep 0.05
	done
	return 1
}
# hotA's share of hotA + hotB, in percent, from "PCT NAME" lines
share() { awk '$2 ~ /hotA/ { a += $1 } $2 ~ /hotB/ { b += $1 } END { if (a + b > 0) printf "%.1f", 100 * a / (a + b) }'; }
# summary rows "  71.60%  58  long Hot.hotA(long) [jit]" -> "71.60 hotA"
rows() { awk '/\[jit\]$/ { p = $1; sub("%", "", p); n = ($0 ~ /hotA/) ? "hotA" : ($0 ~ /hotB/) ? "hotB" : "other"; print p, n }' "$1"; }

if ! command -v java >/dev/null || ! command -v javac >/dev/null; then
	skip "JVM" "no java/javac (openjdk-17-jdk-headless)"
else
	mkdir -p "$work/java"
	cat >"$work/java/Hot.java" <<'EOF'
// hotA does 7 units of work for every 3 of hotB: 70 % / 30 % of the samples.
public class Hot {
	static volatile long sink;

	static long hotA(long n) {
		long x = sink;
		for (long i = 0; i < n; i++)
			x = x * 6364136223846793005L + 1442695040888963407L;
		return x;
	}

	static long hotB(long n) {
		long x = sink;
		for (long i = 0; i < n; i++)
			x = x * 6364136223846793005L + 1442695040888963407L;
		return x;
	}

	public static void main(String[] args) {
		long end = System.nanoTime() + (long)(Double.parseDouble(args[0]) * 1e9);
		java.util.Random r = new java.util.Random();
		while (System.nanoTime() < end) {
			long unit = 20000 + r.nextInt(40000);
			sink = hotA(7 * unit);
			sink = hotB(3 * unit);
		}
	}
}
EOF
	# javac's own JVM: C1 only, serial GC, no hsperfdata file: 0.85 CPU-s, not 1.6
	if ! (cd "$work/java" && javac -J-XX:TieredStopAtLevel=1 -J-XX:+UseSerialGC -J-XX:-UsePerfData Hot.java \
		2>"$work/javac.err"); then
		fail "javac Hot.java" "$(head -5 "$work/javac.err")"
	else
		# no hsperfdata file in /tmp; the JVM outlives both runs (60 s is a bound: it is killed after them)
		(cd "$work/java" && exec java -XX:+PreserveFramePointer -XX:-UsePerfData -XX:+PrintCompilation Hot 60 \
			>"$work/jvm.out") &
		jpid=$!
		c2_wait "$work/jvm.out" || fail "JVM: no C2 code of Hot.hotA and Hot.hotB in 10 s" "$(tail -5 "$work/jvm.out")"
		d=$work/jvm
		mkdir -p "$d"
		"$BPFPROF" -v --no-java --call-graph fp -F 999 -p "$jpid" -d 1 -o "$d/out.folded" -o "$d/out.prof" -o "$d/out.data" >"$d/log" 2>&1 ||
			fail "JVM: bpfprof exits 0" "$(tail -5 "$d/log")"
		a_share=$(rows "$d/log" | share) n=$(jit_n "$d/log")
		tol=$(tol_at "$n" 70)
		if [ -z "$tol" ]; then
			fail "JVM: $n JIT samples of hotA and hotB, too few to judge the split" "$(tail -8 "$d/log")"
			tol=0
		elif grep -q 'Hot\.hotA(long) \[jit\]$' "$d/log" && grep -q 'Hot\.hotB(long) \[jit\]$' "$d/log" &&
			near "$a_share" 70 "$tol" && grep -q "JVM pid $jpid wrote its perf map" "$d/log"; then
			ok "JVM: asked for its perf map at the end; summary names Hot.hotA/hotB, hotA share $a_share % (±$tol, $n samples)"
		else
			fail "JVM: summary names Hot.hotA/hotB at 70 % (±$tol, $n samples)" "share: $a_share" "$(tail -8 "$d/log")"
		fi
		grep -q 'Hot\.hotA(long).* [0-9]*$' "$d/out.folded" && grep -q 'Hot\.hotB(long).* [0-9]*$' "$d/out.folded" &&
			ok "JVM: folded stacks name Hot.hotA and Hot.hotB" ||
			fail "JVM: folded stacks name Hot.hotA/hotB" "$(head -3 "$d/out.folded")"
		# .prof and perf.data: the JIT images (OUTPUT.jit/) made from the map before it was removed
		go tool pprof -top "$d/out.prof" >"$d/top" 2>"$d/top.err"
		a_share=$(awk '$0 ~ /Hot\.hot[AB]/ { sub("%", "", $2); n = ($0 ~ /hotA/) ? "hotA" : "hotB"; print $2, n }' "$d/top" | share)
		grep -q 'Hot\.hotB' "$d/top" && near "$a_share" 70 "$tol" && ! grep -qv '^\(Some binary filenames not available\|Try setting PPROF_BINARY_PATH\)' "$d/top.err" &&
			ok "JVM: go tool pprof on the .prof names Hot.hotA/hotB, hotA share $a_share %" ||
			fail "JVM: go tool pprof on the .prof" "share: $a_share" "$(head -8 "$d/top")" "$(head -3 "$d/top.err")"
		perf report -i "$d/out.data" --no-children --sort sym --stdio >"$d/report" 2>"$d/report.err"
		a_share=$(awk '$0 ~ /Hot\.hot[AB]/ { sub("%", "", $1); n = ($0 ~ /hotA/) ? "hotA" : "hotB"; print $1, n }' "$d/report" | share)
		grep -q 'Hot\.hotB' "$d/report" && near "$a_share" 70 "$tol" && ! grep -q . "$d/report.err" &&
			ok "JVM: perf report on the perf.data names Hot.hotA/hotB, hotA share $a_share %" ||
			fail "JVM: perf report on the perf.data" "share: $a_share" "$(grep -v '^#' "$d/report" | head -6)" \
				"$(head -3 "$d/report.err")"
		if kill -0 "$jpid" 2>/dev/null && [ ! -e "/tmp/perf-$jpid.map" ] &&
			! ls "$work/java"/.attach_pid* /tmp/.attach_pid"$jpid" >/dev/null 2>&1; then
			ok "JVM: still running, no /tmp/perf-$jpid.map or .attach_pid file left"
		else
			fail "JVM: still running, nothing left behind" "$(ls -la /tmp/perf-"$jpid".map "$work/java" 2>&1)"
		fi

		d=$work/jvm-off
		mkdir -p "$d"
		# 0.3 s at 999 Hz: the check needs some JIT samples, not a split
		"$BPFPROF" --no-java --no-jvm-perfmap --call-graph fp -F 999 -p "$jpid" -d 0.3 -o "$d/out.folded" >"$d/log" 2>&1
		if ! grep -q 'Hot\.hot[AB]' "$d/log" &&
			grep -q "samples (.*) in JIT code of pid $jpid (java) not named: the JVM wrote no perf map (--no-jvm-perfmap); run 'jcmd $jpid Compiler.perfmap'" "$d/log"; then
			ok "--no-jvm-perfmap: not asked; the unnamed JIT samples reported with the remedy"
		else
			fail "--no-jvm-perfmap: unnamed JIT samples reported" "$(tail -6 "$d/log")"
		fi
		kill "$jpid" 2>/dev/null
		wait "$jpid" 2>/dev/null
		rm -f "/tmp/.java_pid$jpid"
		jpid=

		# a JVM in a container: its own pid namespace (pid 1 there) and a /tmp of its own
		if command -v unshare >/dev/null; then
			d=$work/jvm-ct
			mkdir -p "$d"
			unshare --mount --pid --fork --propagation private sh -c \
				"cd '$work/java' && mount -t tmpfs jt /tmp && mkdir /tmp/app && cp Hot.class /tmp/app/ &&
				 cd /tmp/app && exec java -cp /tmp/app -XX:+PreserveFramePointer -XX:-UsePerfData -XX:+PrintCompilation Hot 60" \
				>"$work/jvm-ct.out" &
			upid=$!
			cpid=
			for _ in $(seq 200); do
				cpid=$(pgrep -P "$upid" -x java) && break
				sleep 0.05
			done
			c2_wait "$work/jvm-ct.out" ||
				fail "JVM in a container: no C2 code of Hot.hotA and Hot.hotB in 10 s" "$(tail -5 "$work/jvm-ct.out")"
			nspid=$(awk '/^NSpid:/ { print $NF }' "/proc/$cpid/status" 2>/dev/null)
			"$BPFPROF" -v --no-java --call-graph fp -F 999 -p "$cpid" -d 0.7 -o "$d/out.folded" >"$d/log" 2>&1
			a_share=$(rows "$d/log" | share) n=$(jit_n "$d/log")
			tol=$(tol_at "$n" 70)
			if [ -n "$cpid" ] && [ "$nspid" != "$cpid" ] && grep -q 'Hot\.hotB(long) \[jit\]$' "$d/log" &&
				[ -n "$tol" ] && near "$a_share" 70 "$tol" && [ -d "/proc/$cpid/root/tmp/app" ] &&
				[ ! -e "/proc/$cpid/root/tmp/perf-$nspid.map" ] && [ ! -e "/tmp/perf-$nspid.map" ]; then
				ok "JVM in a container (pid $nspid in its namespace, its own /tmp): named, hotA share $a_share % (±$tol, $n samples), its map removed"
			else
				fail "JVM in a container" "pid $cpid nspid $nspid share $a_share (±$tol, $n samples)" "$(tail -6 "$d/log")" \
					"$(ls -la "/proc/$cpid/root/tmp/" 2>&1 | head -5)"
			fi
			kill "$cpid" 2>/dev/null
			wait "$upid" 2>/dev/null
		fi
	fi
fi

if ! command -v node >/dev/null; then
	skip "node" "node is not installed"
else
	# a fresh directory: the jitdump's layout (and where V8's buffer cuts it) depends on the paths
	d=$work/node/fresh
	mkdir -p "$d"
	cp "$top/tests/jit/hot.js" "$d/app.js"
	# --trace-opt: V8 says on stdout when TurboFan code of hotA and hotB is ready (60 s is a bound)
	(cd "$d" && exec node --perf-prof --interpreted-frames-native-stack --trace-opt app.js 60 >"$work/node.out") &
	npid=$!
	for _ in $(seq 200); do
		grep -q 'completed optimizing .*hotA .*(target TURBOFAN)\]' "$work/node.out" &&
			grep -q 'completed optimizing .*hotB .*(target TURBOFAN)\]' "$work/node.out" && break
		sleep 0.05
	done
	# --no-node: the names under test are the jitdump's (V8's own frames would name them first)
	"$BPFPROF" -vv --no-node --call-graph fp -F 999 -p "$npid" -d 1 -o "$d/out.folded" -o "$d/out.prof" >"$d/log" 2>&1 ||
		fail "node: bpfprof exits 0" "$(tail -5 "$d/log")"
	a_share=$(rows "$d/log" | share) n=$(jit_n "$d/log")
	tol=$(tol_at "$n" 75)
	tail=$(grep -o '[0-9]* unflushed bytes read from its buffer at offset [0-9]*' "$d/log")
	if [ -z "$tol" ]; then
		fail "node: $n JIT samples of hotA and hotB, too few to judge the split" "$(grep -v 'libbpf' "$d/log" | tail -8)"
		tol=0
	elif grep -q ':\*hotA .*\[jit\]$' "$d/log" && grep -q ':\*hotB .*\[jit\]$' "$d/log" && near "$a_share" 75 "$tol" &&
		! grep -q "not named" "$d/log"; then
		ok "node (running on): summary names JS:*hotA and JS:*hotB, hotA share $a_share % (±$tol, $n samples; ${tail:-no unflushed bytes})"
	else
		fail "node: JS:*hotA/hotB named at 75 % (±$tol, $n samples)" "share: $a_share" "$(grep -v 'libbpf' "$d/log" | tail -8)"
	fi
	# the JIT images come from the same records: pprof names hotB too
	go tool pprof -top "$d/out.prof" >"$d/top" 2>"$d/top.err"
	a_share=$(awk '/:\*hot[AB]/ { sub("%", "", $2); n = ($0 ~ /hotA/) ? "hotA" : "hotB"; print $2, n }' "$d/top" | share)
	grep -q ':\*hotB' "$d/top" && near "$a_share" 75 "$tol" &&
		ok "node (running on): go tool pprof on the .prof names JS:*hotA/hotB, hotA share $a_share %" ||
		fail "node: go tool pprof on the .prof" "share: $a_share" "$(head -8 "$d/top")" "$(head -3 "$d/top.err")"
	kill -0 "$npid" 2>/dev/null && ok "node: still running after the profile" || fail "node outlives the profile"
	kill "$npid" 2>/dev/null
	wait "$npid" 2>/dev/null
	npid=
fi

finish

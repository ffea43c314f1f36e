#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# JIT frames (issue 4): profile Node running tests/jit/hot.js (hotA 75 %,
# hotB 25 % of JIT samples by construction) with its jitdump
# (--perf-prof) and with its perf map only (--perf-basic-prof), and check the
# names and the split in the summary, go tool pprof on the .prof, perf report
# on the perf.data and the folded and pprof outputs; then a hostile process
# that swaps its JIT file paths for symlinks (to a FIFO, to a root-only
# file): bpfprof must refuse them with a warning and finish.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
BPFPROF=${BPFPROF:-$top/bpfprof}
JITSWAP=${JITSWAP:-$top/.output/workload/jitswap}
# Points around 75 % for hotA's share of hotA + hotB: TOL, or four standard
# deviations at the JIT samples of hotA and hotB a run took when that is more
# (lib.bash split_tol). Node runs hot.js for 0.6 s of its CPU time (hot.js's
# cpu argument) at 999 Hz: about 450 such samples whatever the load (4 sd:
# 8.2 points); 10 leaves room for the JIT tiers' uneven speed while V8 warms
# up. Node's start and V8's compiler threads count in that time too.
TOL=${TOL:-10}
work=$(mktemp -d /tmp/bpfprof-jit.XXXXXX)
bp=
trap '[ -n "$bp" ] && kill "$bp" 2>/dev/null; rm -rf "$work"' EXIT
# bpfprof fills perf's build-id cache ($HOME/.debug) for perf.data, as perf record does: keep it in $work
mkdir -p "$work/home"
export PPROF_TMPDIR=$work/pprof HOME=$work/home

. "$(dirname "$0")/lib.bash"

# Stderr of a reader: empty, but for go tool pprof's notice about system
# libraries without symbols (the dynamic loader), which is not about the file.
clean_err() { ! grep -vE '^(Some binary filenames not available|Try setting PPROF_BINARY_PATH)' "$1" | grep -q .; }

# V8 names optimized code "JS:*name file:line:col" (Debian 12's Node 18 and
# Node 20 alike; older V8 wrote "LazyCompile:*name"): the patterns take any prefix.

# hotA's share of hotA + hotB, in percent, from "PCT NAME" lines
share() { awk '$2 ~ /hotA/ { a += $1 } $2 ~ /hotB/ { b += $1 } END { if (a + b > 0) printf "%.1f", 100 * a / (a + b) }'; }

check_node() {
	local mode=$1 d=$work/$1 log a_share n tol; shift
	mkdir -p "$d"
	# node execs in place of sh, whose pid it keeps: --perf-basic-prof's /tmp/perf-PID.map is removed after;
	# --no-node: the names under test are the jitdump's and the map's (V8's own come first: node.sh)
	if ! (cd "$d" && "$BPFPROF" --no-node -F 999 -o out.prof -o out.data -o out.folded -o out.pb.gz \
		-- sh -c 'echo $$ >node.pid && exec node "$@"' sh "$@" "$top/tests/jit/hot.js" 0.6 cpu >"$d/log" 2>&1); then
		rm -f "/tmp/perf-$(cat "$d/node.pid" 2>/dev/null).map"
		fail "$mode: bpfprof exits 0" "$(tail -5 "$d/log")"
		return
	fi
	rm -f "/tmp/perf-$(cat "$d/node.pid" 2>/dev/null).map"
	# summary: "  72.24%  1098  JS:*hotA /…/hot.js:7:14 [jit]"
	a_share=$(awk '/\[jit\]$/ { sub("%", "", $1); print $1, $3 }' "$d/log" | share)
	n=$(awk '/\[jit\]$/ && $3 ~ /hot[AB]/ { n += $2 } END { print n + 0 }' "$d/log")
	tol=$(split_tol "$n" "$TOL")
	if [ -z "$tol" ]; then
		fail "$mode: $n JIT samples of hotA and hotB, too few to judge the split" "$(grep -A6 self% "$d/log")"
		tol=0
	elif grep -q '[A-Za-z]*:\*hotA .*\[jit\]$' "$d/log" && grep -q '[A-Za-z]*:\*hotB .*\[jit\]$' "$d/log" &&
		near "$a_share" 75 "$tol"; then
		ok "$mode: summary names JS:*hotA and JS:*hotB, hotA share $a_share % (±$tol, $n samples)"
	else
		fail "$mode: summary names JS:*hotA/JS:*hotB at 75 % (±$tol, $n samples)" "share: $a_share" "$(grep -A6 self% "$d/log")"
	fi

	[ "$(stat -c %a "$d"/out.prof.jit/jitted-*-0.so 2>/dev/null)" = 600 ] &&
		ok "$mode: JIT image written beside the .prof, mode 0600 as the outputs" ||
		fail "$mode: JIT image in out.prof.jit/, mode 0600" "$(ls -la "$d" "$d/out.prof.jit")"

	go tool pprof -top -nodecount=20 "$d/out.prof" >"$d/top" 2>"$d/top.err"
	a_share=$(awk '/[A-Za-z]*:\*hot[AB]/ { sub("%", "", $2); print $2, $6 }' "$d/top" | share)
	if grep -q '[A-Za-z]*:\*hotA' "$d/top" && grep -q '[A-Za-z]*:\*hotB' "$d/top" && near "$a_share" 75 "$tol" &&
		clean_err "$d/top.err"; then
		ok "$mode: go tool pprof -top on the .prof names JS:*hotA/hotB, hotA share $a_share %, stderr clean"
	else
		fail "$mode: go tool pprof -top names the JIT functions" "share: $a_share" "$(head -14 "$d/top")" \
			"$(cat "$d/top.err")"
	fi

	perf report -i "$d/out.data" --stdio --no-children --sort sym,dso -g none >"$d/report" 2>"$d/report.err"
	a_share=$(awk '/\[\.\] [A-Za-z]*:\*hot[AB]/ { sub("%", "", $1); print $1, $3 }' "$d/report" | share)
	if grep -q '[A-Za-z]*:\*hotA.*jitted-[0-9]*-[0-9]*\.so' "$d/report" && near "$a_share" 75 "$tol" &&
		clean_err "$d/report.err"; then
		ok "$mode: perf report names JS:*hotA/hotB in the JIT image, hotA share $a_share %, stderr clean"
	else
		fail "$mode: perf report names the JIT functions" "share: $a_share" \
			"$(grep -v '^#' "$d/report" | head -8)" "$(head -5 "$d/report.err")"
	fi

	# perf finds the image by the build-id the perf.data records for it
	local img id
	img=$(ls "$d"/out.prof.jit/jitted-*-0.so 2>/dev/null | head -1)
	id=$(readelf -n "$img" 2>/dev/null | awk '/Build ID/ { print $3 }')
	if [ -n "$id" ] && perf buildid-list -i "$d/out.data" 2>"$d/bid.err" | grep -q "^$id $img$" &&
		clean_err "$d/bid.err"; then
		ok "$mode: perf buildid-list gives the image's own build-id"
	else
		fail "$mode: perf buildid-list lists the JIT image" "image $img: $id" \
			"$(perf buildid-list -i "$d/out.data" 2>&1 | head -5)" "$(cat "$d/bid.err")"
	fi

	go tool pprof -top -nodecount=20 "$d/out.pb.gz" >"$d/pbtop" 2>"$d/pbtop.err"
	a_share=$(awk '/[A-Za-z]*:\*hot[AB]/ { sub("%", "", $2); print $2, $6 }' "$d/pbtop" | share)
	grep -q '[A-Za-z]*:\*hotA' "$d/pbtop" && near "$a_share" 75 "$tol" && ! grep -q . "$d/pbtop.err" &&
		ok "$mode: pprof protobuf names JS:*hotA/hotB, hotA share $a_share %" ||
		fail "$mode: pprof protobuf names the JIT functions" "$(head -12 "$d/pbtop")" "$(cat "$d/pbtop.err")"
	grep -q '[A-Za-z]*:\*hotA' "$d/out.folded" && ok "$mode: folded stacks name JS:*hotA" ||
		fail "$mode: folded stacks name JS:*hotA"
}

cd "$work" || exit 1
require_bpf "all JIT tests"

if ! command -v node >/dev/null; then
	skip "node" "node is not installed (make deps installs it)"
else
	check_node jitdump --perf-prof --interpreted-frames-native-stack
	check_node perfmap --perf-basic-prof
fi

# A process that swaps its JIT paths for symlinks; run as nobody, as an
# unprivileged runtime would be. TARGET: a FIFO, then a root-only file. The
# refusals come when bpfprof first handles a sample of the process, which a
# loaded machine delays (seen: past a 0.5 s run, the files gone with the
# process, so nothing to refuse): the workload runs until both are logged
# (10 s at most), then 0.3 s more for spin's samples, and is told to end (its
# STOPFILE). 199 Hz, as before: the first sample comes after the workload's
# first 5 ms, by when its files are in place. While the FIFO case runs, a
# reader of any other script that follows /tmp/perf-PID.map blocks on the
# FIFO (perf report on a -a file with
# this process's samples): after the run it is opened for writing (which lets
# such a reader go, to read an end of file) and removed, and the links the
# workload leaves when killed too.
mkfifo "$work/fifo"
echo "secret 1 secret" >"$work/secret" && chmod 600 "$work/secret"
mkdir -m 1777 "$work/jitdir"
chmod 755 "$work"
for target in fifo secret; do
	log=$work/swap-$target.log
	start=$(date +%s)
	timeout 30 "$BPFPROF" -F 199 -o "$work/swap-$target.folded" -- \
		setpriv --reuid=nobody --regid=nogroup --clear-groups "$JITSWAP" 10 "$work/$target" "$work/jitdir" \
		"$work/stop-$target" >"$log" 2>&1 &
	bp=$!
	for _ in $(seq 200); do
		[ "$(grep -c 'refusing JIT file' "$log")" -ge 2 ] || ! kill -0 $bp 2>/dev/null && break
		sleep 0.05
	done
	sleep 0.3
	touch "$work/stop-$target"
	wait $bp
	rc=$? took=$(($(date +%s) - start)) bp=
	# every link to the target first, so no reader can reach the FIFO after
	# the write-open below has let the blocked ones go
	for m in $(grep -o "/tmp/perf-[0-9]*\.map" "$log" | sort -u) "$work"/jitdir/*; do
		[ -L "$m" ] && rm -f "$m"
	done
	if [ "$target" = fifo ]; then
		exec 3<>"$work/fifo" && exec 3>&-
		rm -f "$work/fifo"
	fi
	if [ $rc -eq 0 ] && grep -q "refusing JIT file '.*jit-[0-9]*\.dump' of pid [0-9]*: a symbolic link" "$log" &&
		grep -q "refusing JIT file '/tmp/perf-[0-9]*\.map' of pid [0-9]*: a symbolic link" "$log" &&
		grep -q ' spin ' "$log"; then
		ok "symlink to a $target as jitdump and perf map: refused with a warning, run completes in ${took}s"
	else
		fail "symlink to a $target: refused, run completes" "rc $rc after ${took}s" \
			"$(grep -v '^ *[0-9.]*%' "$log" | tail -8)" "$(grep ' spin ' "$log")"
	fi
done

finish

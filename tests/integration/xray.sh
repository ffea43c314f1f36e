#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `bpfprof xray` end to end, no root needed: build the project's XRay workload
# (tests/xray/workload.c) with clang -fxray-instrument, trace it in FDR and
# basic mode, and check bpfprof's per-function calls against `llvm-xray
# account` on the same file (exactly) and total times (within TIME_TOL %);
# the .prof through go tool pprof; the spec-built version 1 trace of
# tests/xray/gen_v1 against its known totals; truncated, corrupted and random
# traces rejected with the file and offset named and no output left behind.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
BPFPROF=${BPFPROF:-$top/bpfprof}
TIME_TOL=${TIME_TOL:-1}
work=$(mktemp -d /tmp/bpfprof-xray.XXXXXX)
trap 'rm -rf "$work"' EXIT
export PPROF_TMPDIR=$work/pprof HOME=${HOME:-/root}
# On the sanitizer build a report exits 86, not 1: exit 1 is how bpfprof
# rejects a damaged trace, which the checks below expect (the corruption loop
# counts only exits above 1 as crashes). No effect on the normal build.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=86 UBSAN_OPTIONS=${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}exitcode=86

. "$(dirname "$0")/lib.bash"

XRAY=$(command -v llvm-xray-14 || command -v llvm-xray || true)
CLANG=$(command -v clang-14 || command -v clang || true)

# bpfprof --account → "id calls total_s self_s"
ours() { awk 'NR > 2 { print $1, $2, $3, $4 }' "$1"; }
# llvm-xray account -format=csv → "id calls sum_s"
theirs() { awk -F, 'NR > 1 { print $1, $2, $8 }' "$1"; }

# Compare two accounts: counts equal for every function, totals within TIME_TOL %.
compare() {
	local name=$1 a=$2 b=$3 msg
	msg=$(awk -v tol="$TIME_TOL" '
		NR == FNR { c[$1] = $2; t[$1] = $3; next }
		{ seen[$1] = 1
		  if (!($1 in c)) { printf "fn %s: llvm-xray %s calls, bpfprof none\n", $1, $2; bad = 1; next }
		  if (c[$1] != $2) { printf "fn %s: calls %s != llvm-xray %s\n", $1, c[$1], $2; bad = 1 }
		  d = t[$1] - $3; if (d < 0) d = -d
		  if ($3 > 0 && d / $3 * 100 > tol) { printf "fn %s: total %s s vs llvm-xray %s s\n", $1, t[$1], $3; bad = 1 }
		  if (d / ($3 > 0 ? $3 : 1) * 100 > worst) worst = d / ($3 > 0 ? $3 : 1) * 100 }
		END { for (k in c) if (!(k in seen)) { printf "fn %s: bpfprof %s calls, llvm-xray none\n", k, c[k]; bad = 1 }
		      if (!bad) printf "worst total-time difference %.4f%%\n", worst; exit bad }' "$a" "$b")
	if [ $? -eq 0 ]; then
		ok "$name: calls equal llvm-xray account for $(wc -l <"$b") functions, $msg"
	else
		fail "$name: differs from llvm-xray account" "$msg"
	fi
}

if [ ! -x "$BPFPROF" ]; then
	fail "bpfprof binary" "not found at $BPFPROF (run make)"
	finish
fi

# ---- version 1 trace from the spec ----
if cc -O1 -I"$top/tests/xray" "$top/tests/xray/gen_v1.c" -o "$work/gen_v1" 2>"$work/cc.err"; then
	"$work/gen_v1" "$work/v1.xray" >"$work/v1.expect"
	if "$BPFPROF" xray --account "$work/v1.xray" >"$work/v1.acct" 2>"$work/v1.err"; then
		# expected ns → seconds with 9 decimals, as --account prints
		awk '{ printf "%s %s %.9f %.9f\n", $1, $2, $3 / 1e9, $4 / 1e9 }' "$work/v1.expect" >"$work/v1.want"
		if diff <(ours "$work/v1.acct") "$work/v1.want" >"$work/v1.diff"; then
			ok "v1 spec trace (TSCWrap, Entry_Args, Tail_Exit, NewCPUId, custom event): known totals"
		else
			fail "v1 spec trace totals" "$(cat "$work/v1.diff")"
		fi
	else
		fail "v1 spec trace rejected" "$(cat "$work/v1.err")"
	fi
else
	fail "build gen_v1" "$(cat "$work/cc.err")"
fi

# ---- real traces from clang's XRay runtime ----
if [ -z "$CLANG" ] || [ -z "$XRAY" ]; then
	skip "XRay runtime traces" "needs clang and llvm-xray (clang-14, llvm-14, libclang-rt-14-dev)"
	finish
fi
WL=$work/xray-workload
if ! "$CLANG" -g -O1 -fxray-instrument -fxray-instruction-threshold=1 "$top/tests/xray/workload.c" \
	-o "$WL" -lpthread 2>"$work/cc.err"; then
	skip "XRay runtime traces" "cannot build an XRay binary: $(head -2 "$work/cc.err")"
	finish
fi

# fdr1: one thread, one buffer: llvm-xray account reads it completely. With
# several threads or buffers llvm-xray 14 drops records (it skips any record
# older than the first one it accounted, and sorts a thread's buffers with an
# inconsistent comparator), so fdr2 is checked against the known call counts.
# basic: one thread too; with two, llvm-xray's drops vary from run to run with
# the threads' interleaving (seen under the sanitizer run's load).
# 2000 iterations (fdr2: about 560 KB in 9 buffers of the two threads; 20000
# made every file ten times larger and every reader ten times slower for the
# same checks).
BIG="func_duration_threshold_us=0 buffer_size=33554432 buffer_max=4"
for run in "fdr1 fdr 2000 1" "fdr2 fdr 2000 2" "basic basic 2000 1"; do
	set -- $run
	name=$1 mode=$2 iters=$3 threads=$4
	mkdir -p "$work/$name"
	XRAY_WORKLOAD_CONFIG=$([ "$name" = fdr1 ] && echo "$BIG") \
	XRAY_OPTIONS="patch_premain=false xray_logfile_base=$work/$name/xray-log." \
		"$WL" "$mode" "$iters" "$threads" 2>"$work/$name.run"
	[ "$name" = fdr1 ] || unset XRAY_WORKLOAD_CONFIG
	trace=$(ls "$work/$name"/xray-log.* 2>/dev/null | head -1)
	if [ -z "$trace" ]; then
		fail "$name: no trace written" "$(cat "$work/$name.run")"
		continue
	fi
	if ! "$BPFPROF" xray --instr-map "$WL" --account "$trace" -o "$work/$name.prof" \
		>"$work/$name.acct" 2>"$work/$name.err"; then
		fail "$name: bpfprof xray failed" "$(cat "$work/$name.err")"
		continue
	fi
	if [ "$name" = fdr2 ]; then
		# iterations per thread: main ITERS, worker ITERS/2
		want=$(awk -v i="$iters" 'BEGIN { w = int(i / 2); printf "%d %d %d", 2 * (i + w), 2 * (i + w),
			4 * (i + w) + 5 * (int((i + 15) / 16) + int((w + 15) / 16)) }')
		got=$(awk '$5 == "hot_a" { a = $2 } $5 == "hot_b" { b = $2 } $5 == "spin" { s = $2 }
			END { printf "%d %d %d", a, b, s }' "$work/$name.acct")
		if [ "$want" = "$got" ]; then
			ok "$name: two threads, many buffers: hot_a hot_b spin calls $got as the workload makes them"
		else
			fail "$name: calls hot_a hot_b spin: $got, want $want" "$(cat "$work/$name.acct")"
		fi
	else
		# -k: llvm-xray stops at the first record it cannot account otherwise
		if ! "$XRAY" account -k -format=csv -instr_map="$WL" "$trace" >"$work/$name.csv" 2>/dev/null; then
			fail "$name: llvm-xray account failed"
			continue
		fi
		ours "$work/$name.acct" >"$work/$name.ours"
		theirs "$work/$name.csv" >"$work/$name.theirs"
		compare "$name" "$work/$name.ours" "$work/$name.theirs"
	fi
	# the .prof: pprof names the functions from the binary; its total is what bpfprof wrote
	n=$(sed -n "s/^bpfprof: wrote '.*': \([0-9]*\) samples.*/\1/p" "$work/$name.err")
	if go tool pprof -top -nodecount=30 "$work/$name.prof" >"$work/$name.top" 2>"$work/$name.perr" &&
		grep -q ' spin$' "$work/$name.top" && grep -q ' hot_a$' "$work/$name.top"; then
		pn=$(go tool pprof -top -sample_index=samples "$work/$name.prof" 2>/dev/null |
			sed -n 's/.* of \([0-9]*\) total.*/\1/p')
		if [ -n "$n" ] && [ "$n" = "$pn" ]; then
			ok "$name: go tool pprof names spin, hot_a; total $pn us of self time as written"
		else
			fail "$name: pprof total '$pn' != bpfprof's '$n'" "$(head -8 "$work/$name.top")"
		fi
	else
		fail "$name: go tool pprof -top" "$(cat "$work/$name.perr")" "$(head -8 "$work/$name.top")"
	fi
done

# ---- damaged traces: an error naming file and offset, no output, no temporaries ----
fdr=$(ls "$work/fdr2"/xray-log.* | head -1)
check_rejected() {
	local name=$1 file=$2 rc
	"$BPFPROF" xray --instr-map "$WL" "$file" -o "$work/out/bad.prof" 2>"$work/bad.err" >/dev/null
	rc=$?
	if [ $rc -eq 1 ] && grep -q "'$file'.*offset [0-9]" "$work/bad.err" && [ -z "$(ls -A "$work/out")" ]; then
		ok "$name: exit 1, '$(grep -m1 offset "$work/bad.err" | cut -c1-100)…', no file left"
	else
		fail "$name: rc $rc, output dir: $(ls -A "$work/out" | tr '\n' ' ')" "$(head -3 "$work/bad.err")"
	fi
}
mkdir -p "$work/out"
size=$(stat -c %s "$fdr")
head -c $((size / 2 + 3)) "$fdr" >"$work/truncated.xray"
check_rejected "truncated FDR trace" "$work/truncated.xray"
head -c 4096 /dev/urandom >"$work/random.xray"
check_rejected "random bytes" "$work/random.xray"
cp "$fdr" "$work/flipped.xray"
# a function record's action bits become 7 in the middle of the first block
printf '\x0e' | dd of="$work/flipped.xray" bs=1 seek=$((32 + 16 * 5 + 8 * 10)) conv=notrunc 2>/dev/null
check_rejected "corrupted FDR record" "$work/flipped.xray"
# --keep-going writes what the undamaged buffers hold
if "$BPFPROF" xray -k --instr-map "$WL" "$work/flipped.xray" -o "$work/out/kept.prof" 2>"$work/keep.err" &&
	[ -s "$work/out/kept.prof" ]; then
	ok "--keep-going: damaged buffer reported, the others written"
else
	fail "--keep-going" "$(cat "$work/keep.err")"
fi
rm -f "$work/out/kept.prof"
# many random single-byte corruptions: never a crash (nor a sanitizer report),
# never a temporary left behind. CORRUPTIONS runs (default 100; make
# test-san's sanitizer pass runs 50: each run of the ASan build costs 0.15 s
# of CPU, and tests/fuzz/fuzz_read_xray fuzzes the same reader under ASan
# with thousands of inputs a second)
CORRUPTIONS=${CORRUPTIONS:-100}
crashes=0
for i in $(seq 1 "$CORRUPTIONS"); do
	cp "$fdr" "$work/f.xray"
	off=$(( (RANDOM * 32768 + RANDOM) % size ))
	printf -v byte '\\x%02x' $((RANDOM % 256))
	printf "$byte" | dd of="$work/f.xray" bs=1 seek=$off conv=notrunc 2>/dev/null
	"$BPFPROF" xray --instr-map "$WL" "$work/f.xray" -o "$work/out/f.prof" >/dev/null 2>&1
	rc=$?
	[ $rc -gt 1 ] && crashes=$((crashes + 1))
	[ ! -e "$work/out/f.prof" ] || rm -f "$work/out/f.prof"
done
if [ $crashes -eq 0 ] && [ -z "$(ls -A "$work/out")" ]; then
	ok "$CORRUPTIONS random byte corruptions: no crash, no temporary left"
else
	fail "random byte corruptions: $crashes crashes" "$(ls -A "$work/out")"
fi
# the other writers serve XRay profiles too
if "$BPFPROF" xray --instr-map "$WL" "$fdr" -o "$work/x.pb.gz" -o "$work/x.folded" -o "$work/x.svg" \
	2>"$work/multi.err" && go tool pprof -top -sample_index=cpu "$work/x.pb.gz" 2>/dev/null | grep -q ' hot_a$' &&
	grep -qE ';hot_a [0-9]+$' "$work/x.folded" && grep -q '<title>hot_a (' "$work/x.svg"; then
	ok "xray: .pb.gz (pprof names hot_a), .folded and .svg written from the trace"
else
	fail "xray: pprof/folded/svg outputs" "$(cat "$work/multi.err")" "$(head -3 "$work/x.folded" 2>/dev/null)"
fi

# perf.data: one sample per call path, its period the path's self time in ns.
# perf report's self shares per function must be --account's self column
# (the same nanoseconds): within 0.01 points, as perf prints two decimals
# (+-0.005) and --account rounds to the ns (+-0.0005 points on this trace of
# about 200 us). perf report and perf script must not print anything on stderr.
if ! command -v perf >/dev/null; then
	skip "xray perf.data" "perf not installed"
elif "$BPFPROF" xray --instr-map "$WL" --account "$fdr" -o "$work/x.data" >"$work/pd.acct" 2>"$work/pd.err"; then
	n=$(sed -n "s/^bpfprof: wrote '.*x.data': \([0-9]*\) samples.*/\1/p" "$work/pd.err")
	perf report -i "$work/x.data" --stdio --no-children -g none --sort sym --percent-limit 0 -F overhead,sym \
		>"$work/pd.rep" 2>"$work/pd.rerr"
	perf script -i "$work/x.data" >"$work/pd.script" 2>"$work/pd.serr"
	pn=$(sed -n 's/^# Samples: \([0-9]*\) .*/\1/p' "$work/pd.rep")
	sn=$(grep -c ' xray-self-time: *$' "$work/pd.script")
	msg=$(awk 'NR == FNR { if (FNR > 2) { self[$5] += $4; tot += $4 }; next }
		/^#/ || NF < 3 { next } { sub("%", "", $1); p[$NF] = $1 }
		END { for (f in self) { want = 100 * self[f] / tot; d = want - p[f]; if (d < 0) d = -d
			if (d > 0.01) { printf "%s: perf %s%%, --account %.4f%%\n", f, p[f], want; bad = 1 } }
			if (!tot) { print "no self time in the account"; bad = 1 }; exit bad }' "$work/pd.acct" "$work/pd.rep")
	if [ $? -eq 0 ] && [ -n "$n" ] && [ "$n" = "$pn" ] && [ "$n" = "$sn" ] && [ ! -s "$work/pd.rerr" ] &&
		[ ! -s "$work/pd.serr" ]; then
		ok "xray -o x.data: perf report and perf script read $n samples without a warning; self shares equal --account's"
	else
		fail "xray perf.data: samples bpfprof '$n' report '$pn' script '$sn'" "$msg" "$(cat "$work/pd.rerr" "$work/pd.serr")"
	fi
else
	fail "xray -o x.data" "$(cat "$work/pd.err")"
fi
finish

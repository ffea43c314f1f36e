#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Integration tests: profile the project's own workload (tests/workload/hotcold.c:
# hot_a 75 %, hot_b 25 %, hot_a under via_x and via_y, hot_b under via_z) with
# the real BPF program, and check the result through the real readers
# (go tool pprof, google-pprof). Needs root (BPF, perf events); skips, saying
# why, only where the kernel refuses.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
BPFPROF=${BPFPROF:-$top/bpfprof}
HOTCOLD=${HOTCOLD:-$top/.output/workload/hotcold}
TOL=${TOL:-7} # percentage points allowed around the known split, at least (lib.bash split_tol)
work=$(mktemp -d /tmp/bpfprof-it.XXXXXX)
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
export PPROF_TMPDIR=$work/pprof HOME=${HOME:-/root}

. "$(dirname "$0")/lib.bash"

# Percent of the total that `go tool pprof -top` gives a function as flat%.
flat_pct() { awk -v f="$2" '$NF == f { sub("%", "", $2); print $2; exit }' "$1"; }
# Same for google-pprof --text: "count pct% sum% cum cum% name".
gflat_pct() { awk -v f="$2" '$NF == f { sub("%", "", $2); print $2; exit }' "$1"; }
# Samples bpfprof reported writing to the .prof ("wrote 'F': N samples").
reported() { sed -n "s/^bpfprof: wrote '.*\.prof': \([0-9]*\) samples.*/\1/p" "$1" | head -1; }

# go tool pprof -top/-traces/-raw, with stderr kept for inspection.
pprof() { go tool pprof "$@" 2>"$work/pprof.err"; }

# Readiness, polled (10 s at most) instead of fixed sleeps, so that a workload
# spins only while it is profiled: lib.bash wait_exec, and wait_perf_events
# PID: bpfprof PID has its perf events open, the last step before it samples.
wait_perf_events() {
	local i
	for ((i = 0; i < 1000; i++)); do
		ls -l "/proc/$1/fd" 2>/dev/null | grep -q 'anon_inode:\[perf_event\]' && return 0
		sleep 0.01
	done
	return 1
}
# On exit: the background jobs still running (workloads, bpfprof; containers
# are unshare --kill-child, so theirs go too), the test cgroup, the directory.
cleanup() {
	local p
	for p in $(jobs -p); do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -n "${cgdir:-}" ] && rmdir "$cgdir" 2>/dev/null
	rm -rf "$work"
}

# Check a .prof of hotcold: split, callers, totals, through go tool pprof and google-pprof.
check_split() {
	local name=$1 prof=$2 log=$3 top traces gtext a b n pn tol
	top=$work/$name.top traces=$work/$name.traces gtext=$work/$name.gtext
	# the split's tolerance: TOL, or 4 standard deviations at the samples written (lib.bash split_tol)
	tol=$(split_tol "$(reported "$log")" "$TOL")
	if ! pprof -top -nodecount=50 "$prof" >"$top"; then
		fail "$name: go tool pprof -top" "$(cat "$work/pprof.err")"
		return
	fi
	# pprof's own notice when a system library has no symbols for it (the
	# dynamic loader, sampled while it starts the workload) is not about the file
	if grep -vE '^(Some binary filenames not available|Try setting PPROF_BINARY_PATH)' "$work/pprof.err" | grep -q .; then
		fail "$name: go tool pprof printed on stderr" "$(cat "$work/pprof.err")"
	fi
	a=$(flat_pct "$top" hot_a) b=$(flat_pct "$top" hot_b)
	if [ -n "$tol" ] && near "$a" 75 "$tol" && near "$b" 25 "$tol"; then
		ok "$name: go tool pprof -top: hot_a $a%, hot_b $b% (expect 75/25 ±$tol)"
	else
		fail "$name: go tool pprof -top split hot_a=$a% hot_b=$b% (±'$tol': empty under 50 samples)" \
			"$(head -15 "$top")" "pprof's stderr: $(cat "$work/pprof.err")" "its maps: $(strings "$prof" | grep -E '^[0-9a-f]+-[0-9a-f]+ ')"
	fi
	if google-pprof --text "$HOTCOLD" "$prof" >"$gtext" 2>"$work/gpprof.err"; then
		# it announces the files it uses; anything else is a complaint
		if grep -v '^Using local file ' "$work/gpprof.err" | grep -q .; then
			fail "$name: google-pprof printed on stderr" "$(cat "$work/gpprof.err")"
		fi
		a=$(gflat_pct "$gtext" hot_a) b=$(gflat_pct "$gtext" hot_b)
		if [ -n "$tol" ] && near "$a" 75 "$tol" && near "$b" 25 "$tol"; then
			ok "$name: google-pprof --text: hot_a $a%, hot_b $b%"
		else
			fail "$name: google-pprof split hot_a=$a% hot_b=$b%" "$(head -12 "$gtext")"
		fi
	else
		fail "$name: google-pprof --text" "$(cat "$work/gpprof.err")"
	fi
	pprof -traces "$prof" >"$traces"
	# each trace block lists leaf first: the line after the leaf is its caller
	if awk '/^-+\+/ { prev = ""; next } { f = $NF; if (prev == "hot_a" && f == "via_x") x = 1;
		if (prev == "hot_a" && f == "via_y") y = 1; if (prev == "hot_b" && f == "via_z") z = 1; prev = f }
		END { exit !(x && y && z) }' "$traces"; then
		ok "$name: go tool pprof -traces: hot_a under via_x and via_y, hot_b under via_z"
	else
		fail "$name: callers missing in -traces" "$(head -30 "$traces")"
	fi
	n=$(reported "$log")
	pn=$(pprof -top -sample_index=samples "$prof" | sed -n 's/.* of \([0-9]*\) total.*/\1/p')
	if [ -n "$n" ] && [ "$n" = "$pn" ]; then
		ok "$name: pprof sample total $pn equals bpfprof's $n"
	else
		fail "$name: pprof total '$pn' != bpfprof's '$n'" "$(cat "$log")"
	fi
}

if [ ! -x "$HOTCOLD" ]; then
	fail "build" "missing $HOTCOLD: run make"
	finish
fi
cd "$work" || exit 1
require_bpf "all integration tests"

# 1. Command form at 2999 Hz for 1 s: about 3 000 samples on an idle CPU, 1 500
# with half of one, where split_tol's four standard deviations are 4.5 points
# (TOL, 7, applies); the 999 Hz x 3 s run before gave no more.
"$BPFPROF" -F 2999 -o "$work/cmd.prof" -- "$HOTCOLD" 1 >"$work/cmd.out" 2>"$work/cmd.log"
rc=$?
if [ $rc -eq 0 ] && [ -s "$work/cmd.prof" ]; then
	ok "command form: exit 0, profile written"
	check_split cmd "$work/cmd.prof" "$work/cmd.log"
	if grep -q 'hot_a \[hotcold\]' "$work/cmd.log"; then
		ok "command form: summary names hot_a [hotcold]"
	else
		fail "summary lacks hot_a" "$(cat "$work/cmd.log")"
	fi
	[ ! -s "$work/cmd.out" ] && ok "command form: nothing on stdout" || fail "stdout not empty" "$(head -3 "$work/cmd.out")"
else
	fail "command form: rc=$rc" "$(cat "$work/cmd.log")"
fi

# 2. -p PID -d 1 at 2999 Hz: as many samples as 4 s at 99 Hz gave before, 30
# times more (the default rate's Period is checked in 6). The workload lives
# for at most 8 s and is killed as soon as bpfprof ends.
"$HOTCOLD" 8 &
wl=$!
wait_exec $wl hotcold
"$BPFPROF" -p $wl -d 1 -F 2999 -o "$work/pid.prof" 2>"$work/pid.log"
rc=$?
kill $wl 2>/dev/null
wait $wl 2>/dev/null
if [ $rc -eq 0 ] && [ -s "$work/pid.prof" ]; then
	ok "-p PID -d 1: exit 0, profile written"
	check_split pid "$work/pid.prof" "$work/pid.log"
else
	fail "-p PID: rc=$rc" "$(cat "$work/pid.log")"
fi

# 2b. The locations named while sampling (a pass every 200 ms from 1 s into a
# -p or command run: symbolizer__symbolize_ahead): -p PID -d 2, -vv says the
# passes named locations, and the profile's names give the split of 2.
"$HOTCOLD" 8 &
wl=$!
wait_exec $wl hotcold
"$BPFPROF" -vv -p $wl -d 2 -F 999 -o "$work/ahead.prof" 2>"$work/ahead.log"
rc=$?
kill $wl 2>/dev/null
wait $wl 2>/dev/null
ahead=$(sed -n 's/.*symbolizing: \([0-9]*\) of [0-9]* locations named by \([0-9]*\) passes while sampling.*/\1 \2/p' "$work/ahead.log")
if [ $rc -eq 0 ] && [ -n "$ahead" ] && [ "${ahead% *}" -gt 0 ] && [ "${ahead#* }" -ge 3 ]; then
	ok "-p PID -d 2: ${ahead% *} locations named by ${ahead#* } passes while sampling"
	check_split ahead "$work/ahead.prof" "$work/ahead.log"
else
	fail "-p PID -d 2 -vv: rc=$rc, passes '$ahead'" "$(grep symboliz "$work/ahead.log")"
fi

# 3. A forking command: two processes in one .prof, each in its own window
# (1 s at 1999 Hz: 4 000 samples idle, a third of the 3 s at 499 Hz before).
"$BPFPROF" -F 1999 -o "$work/fork.prof" -- "$HOTCOLD" 1 --fork 2>"$work/fork.log"
if grep -q ' 2 processes' "$work/fork.log"; then
	ok "forking command: both processes profiled"
	check_split fork "$work/fork.prof" "$work/fork.log"
	nmap=$(pprof -raw "$work/fork.prof" | grep -c 'workload/hotcold')
	[ "$nmap" -ge 2 ] && ok "forking command: pprof sees $nmap hotcold mappings (one per process)" ||
		fail "forking command: $nmap hotcold mappings" "$(pprof -raw "$work/fork.prof" | sed -n '/^Mappings/,$p')"
else
	fail "forking command: want 2 processes" "$(cat "$work/fork.log")"
fi

# 3b. -p of two processes whose tgids share a slot of the BPF side's target
# filter (bpf/filter.bpf.h: tgid % 4096, BPFPROF_TARGET_SLOTS), with a third
# process in the same slot that is not a target: both targets' samples are
# kept, the third's dropped. The pids are chosen through ns_last_pid (root),
# racy with the host's other forks: a few tries, else a skip saying so.
SLOTS=4096
started=0
# start_at PID CMD...: CMD in the background as PID, if the kernel gives it
start_at() {
	local want=$1 i
	shift
	started=0
	for i in 1 2 3 4 5; do
		[ -e "/proc/$want" ] && return
		echo $((want - 1)) >/proc/sys/kernel/ns_last_pid 2>/dev/null || return
		"$@" >/dev/null 2>&1 &
		[ $! -eq "$want" ] && { started=$!; return; }
		# KILL: before its exec the child is this shell, whose TERM trap
		# would run cleanup there (the directory gone under the script)
		kill -KILL $! 2>/dev/null
		wait $! 2>/dev/null
	done
}
"$HOTCOLD" 8 &
sa=$!
pid_max=$(cat /proc/sys/kernel/pid_max)
sb=0 sc=0
for want in $((sa + SLOTS)) $((sa - SLOTS)) $((sa + 2 * SLOTS)) $((sa - 2 * SLOTS)) $((sa + 3 * SLOTS)) $((sa - 3 * SLOTS)); do
	[ "$want" -gt 300 ] && [ "$want" -lt "$pid_max" ] || continue
	if [ "$sb" = 0 ]; then
		start_at "$want" "$HOTCOLD" 8
		sb=$started
	elif [ "$sc" = 0 ]; then
		start_at "$want" "$HOTCOLD" 8
		sc=$started
	fi
done
if [ "$sb" != 0 ] && [ "$sc" != 0 ]; then
	wait_exec $sa hotcold
	wait_exec $sb hotcold
	wait_exec $sc hotcold
	"$BPFPROF" -p $sa,$sb -d 1 -F 999 -o "$work/slot.pb.gz" 2>"$work/slot.log"
	rc=$?
	pprof -raw "$work/slot.pb.gz" >"$work/slot.raw"
	for p in $sa $sb; do
		n=$(grep -c "pid:\[$p\]" "$work/slot.raw")
		[ $rc -eq 0 ] && [ "$n" -gt 0 ] && ok "-p of two tgids in one filter slot ($sa, $sb): $p's samples kept" ||
			fail "-p $sa,$sb: no sample of $p (rc=$rc)" "$(cat "$work/slot.log")"
	done
	n=$(grep -c "pid:\[$sc\]" "$work/slot.raw")
	[ "$n" = 0 ] && ok "-p $sa,$sb: $sc, in the same slot and not a target, has no sample" ||
		fail "-p $sa,$sb: $n samples of $sc, not a target" "$(grep -m3 "pid:\[$sc\]" "$work/slot.raw")"
else
	skip "-p of tgids in one filter slot" "no free pids $SLOTS apart from $sa (ns_last_pid)"
fi
for p in $sa $sb $sc; do
	# 0: not started (kill 0 would signal this script's whole process group)
	[ "$p" != 0 ] && kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
done

# 4. -a -- COMMAND: the whole machine while the command runs. Other scripts
# run hotcold beside this one: ours is a copy under a name of its own, and its
# hot_a is looked for in its own process (-tagfocus on the .pb.gz's comm,
# symbolized by bpfprof). The .prof of the same run must read, with the
# copy's mapping, without symbolizing (go tool pprof would run addr2line on
# every binary of the machine: 1.8 CPU-s on this VM; the .prof's names are
# checked in 1-3, 5, 6 and 12). 0.5 s at 999 Hz: about 500 samples of the
# command, 375 of hot_a; one is enough.
hca=hca$$
cp "$HOTCOLD" "$work/$hca"
"$BPFPROF" -a --no-jvm-perfmap -F 999 -o "$work/all.prof" -o "$work/all.pb.gz" -- "$work/$hca" 0.5 2>"$work/all.log"
rc=$?
a=$(pprof -top -tagfocus=comm="$hca" "$work/all.pb.gz" | awk '$NF == "hot_a" { print $2 }')
# (grep reads all of -raw's listing: grep -q would leave at its first match,
# and pprof, still writing, die of SIGPIPE, a failure under pipefail)
if [ $rc -eq 0 ] && [ -n "$a" ] && pprof -symbolize=none -raw "$work/all.prof" | grep -E "^ *[0-9]+: .* [^ ]*/$hca *\$" >/dev/null; then
	ok "-a -- COMMAND: hot_a symbolized ($a) in the command's process, among $(sed -n 's/.* \([0-9]*\) processes.*/\1/p' "$work/all.log") processes; the .prof maps it"
else
	fail "-a -- COMMAND: rc=$rc, hot_a of $hca not found, or $hca not mapped in the .prof" "$(cat "$work/all.log")" "$(cat "$work/pprof.err")"
fi

# 5. SIGINT ends sampling and still writes the profile. The workload runs a
# fifth of the time (--duty 20): 0.5 s of sampling at 999 Hz once bpfprof's
# events are open gives about 100 samples, 75 of hot_a; one is enough.
"$HOTCOLD" 8 --duty 20 &
wl=$!
wait_exec $wl hotcold
"$BPFPROF" -p $wl -F 999 -o "$work/int.prof" 2>"$work/int.log" &
bp=$!
wait_perf_events $bp
sleep 0.5
kill -INT $bp
wait $bp
rc=$?
kill $wl 2>/dev/null
wait $wl 2>/dev/null
if [ $rc -eq 0 ] && [ -n "$(pprof -top "$work/int.prof" | awk '$NF == "hot_a"')" ]; then
	ok "SIGINT: exit 0 and the profile names hot_a"
else
	fail "SIGINT: rc=$rc" "$(cat "$work/int.log")"
fi

# 6. The target exits on its own: bpfprof stops and writes what it has. At the
# default 99 Hz, whose Period (1e6/99 µs in ns) pprof must read; the workload
# runs 30 % of the time for 1.5 s: about 40 samples once bpfprof samples, 30
# of hot_a; one is enough (none of 20 by chance: 0.25^20, 1e-12).
"$HOTCOLD" 1.5 --duty 30 &
wl=$!
wait_exec $wl hotcold
start=$(date +%s)
timeout 20 "$BPFPROF" -p $wl -o "$work/exit.prof" 2>"$work/exit.log"
rc=$?
wait $wl 2>/dev/null
if [ $rc -eq 0 ] && [ $(($(date +%s) - start)) -lt 10 ] && [ -n "$(pprof -top "$work/exit.prof" | awk '$NF == "hot_a"')" ]; then
	ok "target exit: bpfprof stops by itself and writes the profile"
	period=$(pprof -raw "$work/exit.prof" | sed -n 's/^Period: //p')
	[ "$period" = "$((1000000 / 99 * 1000))" ] && ok "-p at the default rate: go tool pprof -raw Period $period (1e6/99 µs x 1000)" ||
		fail "-p: Period '$period', want $((1000000 / 99 * 1000))"
else
	fail "target exit: rc=$rc" "$(cat "$work/exit.log")"
fi

# 7. Errors.
"$BPFPROF" -p 999999999 -o "$work/none.prof" >/dev/null 2>"$work/err1.log"
rc=$?
if [ $rc -eq 1 ] && grep -q 'no such process' "$work/err1.log" && ! ls "$work"/*none.prof* >/dev/null 2>&1; then
	ok "nonexistent PID: exit 1, 'no such process', nothing written"
else
	fail "nonexistent PID: rc=$rc" "$(cat "$work/err1.log")" "$(ls -a "$work")"
fi
"$BPFPROF" -F 0 -p 1 -o "$work/x.prof" >/dev/null 2>"$work/err2.log"
rc=$?
[ $rc -eq 2 ] && grep -q "invalid FREQUENCY" "$work/err2.log" && grep -q -- "--help" "$work/err2.log" &&
	ok "invalid -F: exit 2 with a usage hint" || fail "invalid -F: rc=$rc" "$(cat "$work/err2.log")"
"$BPFPROF" -F 100001 -p 1 >/dev/null 2>&1
[ $? -eq 2 ] && ok "-F above 100000: exit 2" || fail "-F 100001 accepted"
"$BPFPROF" -o "$work/x.prof" >/dev/null 2>"$work/err3.log"
rc=$?
[ $rc -eq 2 ] && grep -q "no target" "$work/err3.log" && ok "no target: exit 2" || fail "no target: rc=$rc" "$(cat "$work/err3.log")"
"$BPFPROF" -p 1 -o "$work/x.unknownext" >/dev/null 2>"$work/err4.log"
[ $? -eq 2 ] && ok "unknown output extension: exit 2" || fail "unknown extension" "$(cat "$work/err4.log")"
start=$(date +%s%N)
"$BPFPROF" -p 1 -d 5 -o "$work/missing/dir/out.prof" >/dev/null 2>"$work/err5.log"
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
if [ $rc -eq 1 ] && grep -q "cannot write '$work/missing/dir/out.prof'" "$work/err5.log" && [ $ms -lt 3000 ]; then
	ok "output in a missing directory: exit 1 after ${ms} ms, before sampling"
else
	fail "missing output dir: rc=$rc after ${ms} ms" "$(cat "$work/err5.log")"
fi
if command -v setpriv >/dev/null; then
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$BPFPROF" -p 1 -d 1 \
		>/dev/null 2>"$work/err6.log"
	rc=$?
	if [ $rc -eq 1 ] && grep -q "needs root, or CAP_BPF and CAP_PERFMON" "$work/err6.log"; then
		ok "as nobody: exit 1, names root or CAP_BPF + CAP_PERFMON"
	else
		fail "as nobody: rc=$rc" "$(cat "$work/err6.log")"
	fi
else
	skip "unprivileged run" "setpriv not installed"
fi

# 8. -e cycles: the hardware event where a PMU exists, a clear refusal where not.
"$BPFPROF" -e cycles -d 0.3 -o "$work/cyc.prof" -- "$HOTCOLD" 0.3 >/dev/null 2>"$work/cyc.log"
rc=$?
if [ -e /sys/bus/event_source/devices/cpu/events/cpu-cycles ] ||
	[ -e /sys/bus/event_source/devices/cpu_core/events/cpu-cycles ]; then
	[ $rc -eq 0 ] && ok "-e cycles on a machine with a PMU: profile written" ||
		fail "-e cycles with a PMU: rc=$rc" "$(cat "$work/cyc.log")"
elif [ $rc -eq 1 ] && grep -q "no hardware PMU" "$work/cyc.log" && ! ls "$work"/*cyc.prof* >/dev/null 2>&1; then
	ok "-e cycles without a PMU: exit 1, 'no hardware PMU', nothing written"
else
	fail "-e cycles without a PMU: rc=$rc" "$(cat "$work/cyc.log")"
fi

# 9. A ring buffer too small for the rate: losses are counted per CPU, reported
# with the option that fixes them, and the profile is still written. 0.3 s of
# two processes at 20 kHz: about 12 000 samples for a ring of 4 KiB.
"$BPFPROF" -a --no-jvm-perfmap -F 20000 --ringbuf-size 4K -o "$work/lost.prof" -- "$HOTCOLD" 0.3 --fork >/dev/null 2>"$work/lost.log"
rc=$?
nlost=$(sed -n 's/^bpfprof: [0-9.]* s, [0-9]* samples, \([0-9]*\) lost.*/\1/p' "$work/lost.log")
if [ $rc -eq 0 ] && [ "${nlost:-0}" -gt 0 ] && grep -q "lost $nlost samples: ring buffer full (.*cpu[0-9]*: [0-9]" "$work/lost.log" &&
	grep -q -- "consider --ringbuf-size" "$work/lost.log" && [ -s "$work/lost.prof" ]; then
	ok "4K ring buffer at 20 kHz: $nlost samples lost, reported per CPU with the fix"
else
	fail "lost samples: rc=$rc lost='$nlost'" "$(cat "$work/lost.log")"
fi

# 10. --cgroup: a workload moved into a test cgroup is profiled, an identical
# one outside it (a copy of the binary under another name) is not.
cg2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
if [ -z "$cg2" ]; then
	skip "--cgroup" "no cgroup2 file system mounted"
elif ! mkdir "$cg2/bpfprof-it.$$" 2>/dev/null; then
	skip "--cgroup" "cannot create a cgroup under $cg2"
else
	cgdir=$cg2/bpfprof-it.$$
	cp "$HOTCOLD" "$work/outsider"
	"$HOTCOLD" 8 --duty 20 &
	inside=$!
	echo $inside >"$cgdir/cgroup.procs"
	"$work/outsider" 8 --duty 20 &
	outside=$!
	wait_exec $inside hotcold
	wait_exec $outside outsider
	# both run a fifth of the time; 999 Hz for 0.5 s: about 100 samples of
	# each workload on an idle machine, where one sample of hot_a (75 % of
	# them) is all the check needs, and the outsider's absence means something
	"$BPFPROF" -a --cgroup "bpfprof-it.$$" -F 999 -d 0.5 -o "$work/cg.prof" 2>"$work/cg.log"
	rc=$?
	kill $inside $outside 2>/dev/null
	wait $inside $outside 2>/dev/null
	rmdir "$cgdir" && cgdir=
	if [ $rc -eq 0 ] && grep -q 'hot_a \[hotcold\]' "$work/cg.log" && ! grep -q outsider "$work/cg.log" &&
		grep -q ' 1 processes' "$work/cg.log"; then
		ok "--cgroup: the workload inside is profiled, the one outside is not"
	else
		fail "--cgroup: rc=$rc" "$(cat "$work/cg.log")"
	fi
fi
"$BPFPROF" -a --cgroup /nonexistent-cgroup -d 1 >/dev/null 2>"$work/cg2.log"
[ $? -eq 2 ] && grep -q "invalid cgroup" "$work/cg2.log" && ok "--cgroup with a missing directory: exit 2" ||
	fail "--cgroup missing dir" "$(cat "$work/cg2.log")"

# 12. Continuous mode: one set of outputs per interval, named by its start,
# complete and readable, the oldest removed beyond --keep.
# The workload runs a tenth of the time: about 100 samples of it an interval
# at 999 Hz, where each kept .prof needs one of hot_a.
mkdir -p "$work/cont"
"$HOTCOLD" 6 --duty 10 &
wl=$!
wait_exec $wl hotcold
"$BPFPROF" -p $wl -F 999 --interval 1 --output-dir "$work/cont" --keep 2 -o hc.prof -o hc.folded -d 4.5 \
	2>"$work/cont.log"
rc=$?
kill $wl 2>/dev/null
wait $wl 2>/dev/null
nsets=$(grep -c "^bpfprof: wrote '.*-hc.prof'" "$work/cont.log")
left=$(ls "$work/cont" | grep -cE '^[0-9]{8}T[0-9]{6}Z-hc\.(prof|folded)$')
badprof=0
for f in "$work"/cont/*-hc.prof; do
	pprof -top "$f" | grep -q ' hot_a$' || badprof=$((badprof + 1))
done
if [ $rc -eq 0 ] && [ "$nsets" -ge 4 ] && [ "$left" -eq 4 ] && [ $badprof -eq 0 ] &&
	[ -z "$(ls -A "$work/cont" | grep '^\.')" ]; then
	ok "--interval 1 --keep 2: $nsets sets written, the newest 2 kept (4 files), each readable"
else
	fail "continuous mode: rc=$rc sets=$nsets files=$left unreadable=$badprof" "$(ls -la "$work/cont")" "$(cat "$work/cont.log")"
fi
"$BPFPROF" -a --interval 5 -o x.prof >/dev/null 2>"$work/cont2.log"
[ $? -eq 2 ] && grep -q "need --output-dir" "$work/cont2.log" && ok "--interval without --output-dir: exit 2" ||
	fail "--interval without --output-dir" "$(cat "$work/cont2.log")"

# 11. Containers: a binary that exists only on a tmpfs mounted inside the
# workload's own mount namespace is read through /proc/PID/root.
if command -v unshare >/dev/null; then
	mkdir -p "$work/ctr/mnt"
	unshare --mount --pid --kill-child --propagation private bash -c "mount -t tmpfs none '$work/ctr/mnt' &&
		cp '$HOTCOLD' '$work/ctr/mnt/incontainer' && exec '$work/ctr/mnt/incontainer' 8" 2>"$work/ctr.err" &
	ctr=$!
	# the container's first process (unshare's child) once it runs incontainer
	inner=
	for ((i = 0; i < 1000; i++)); do
		inner=$(cat "/proc/$ctr/task/$ctr/children" 2>/dev/null | awk '{ print $1 }')
		[ -n "$inner" ] && wait_exec "$inner" incontainer && break
		sleep 0.01
	done
	# 999 Hz for 0.5 s: about 500 samples of the workload, 375 of hot_a; one
	# is enough. The summary's 64 rows (--top's most) name every function
	# with more than a 64th of the samples, the other scripts' included: the
	# workload, spinning, has a third or more of them beside one other
	"$BPFPROF" -a --no-jvm-perfmap -d 0.5 -F 999 --top 64 -o "$work/ctr.pb.gz" 2>"$work/ctr.log"
	rc=$?
	# the container's init takes only SIGKILL from outside, and unshare holds
	# SIGTERM while it waits (it would spin on for its 8 s); unshare's own
	# end kills it too (--kill-child: the trap's way)
	[ -n "$inner" ] && kill -KILL "$inner" 2>/dev/null
	wait $ctr 2>/dev/null
	if [ -e "$work/ctr/mnt/incontainer" ]; then
		fail "container: the tmpfs leaked into the host namespace"
	elif [ $rc -eq 0 ] && grep -q 'hot_a \[incontainer\]' "$work/ctr.log" &&
		pprof -top -tagfocus=comm=incontainer "$work/ctr.pb.gz" | grep -q ' hot_a$'; then
		ok "container: binary only inside the mount namespace is symbolized (summary and pprof)"
	else
		fail "container: rc=$rc" "$(cat "$work/ctr.log")"
	fi
	# the same container run as the command: it has exited, its namespace
	# and tmpfs are gone, by the time bpfprof symbolizes
	mkdir -p "$work/ctr2/mnt"
	# 0.5 s at 999 Hz: about 500 samples, 375 of hot_a; one is enough
	"$BPFPROF" -F 999 -o "$work/ctr2.pb.gz" -- unshare --mount --pid --fork --propagation private bash -c \
		"mount -t tmpfs none '$work/ctr2/mnt' && cp '$HOTCOLD' '$work/ctr2/mnt/incontainer' &&
		exec '$work/ctr2/mnt/incontainer' 0.5" 2>"$work/ctr2.log"
	rc=$?
	if [ $rc -eq 0 ] && grep -q 'hot_a \[incontainer\]' "$work/ctr2.log"; then
		ok "container that exited before the end: its binary, held open while it ran, is symbolized"
	else
		fail "exited container: rc=$rc" "$(cat "$work/ctr2.log")"
	fi
else
	skip "container" "unshare not installed"
fi

# 13. -d and --interval end at their cut however late bpfprof reads (issue
# 24, fault 6: "-a -d 0.5 reported 0.95 s" on a busy machine). Both CPUs
# busy (two spinning shells in a cgroup of this script's own, the only one
# sampled) and bpfprof held stopped from 0.7 s to 1.6 s of a
# `--interval 1 -d 1.4` run, so that it reads a 0.9 s backlog past the
# interval's boundary and past the deadline: the first interval must be 1.00 s
# and the second 0.40 s (as printed: the sampled time, not the time until it
# was written), and each perf.data's samples span no more than its interval
# + 20 ms, the two together no more than 1.42 s.
if [ -n "$cg2" ] && mkdir "$cg2/bpfprof-cut.$$" 2>/dev/null; then
	cgdir=$cg2/bpfprof-cut.$$
	mkdir "$work/cut"
	sh -c 'echo $$ >"$1/cgroup.procs"; while :; do :; done' _ "$cgdir" &
	s1=$!
	sh -c 'echo $$ >"$1/cgroup.procs"; while :; do :; done' _ "$cgdir" &
	s2=$!
	"$BPFPROF" -a --cgroup "$cgdir" -F 499 -d 1.4 --interval 1 --output-dir "$work/cut" \
		-o cut.data >/dev/null 2>"$work/cut.log" &
	bp=$!
	wait_perf_events $bp
	sleep 0.7
	kill -STOP $bp
	sleep 0.9
	kill -CONT $bp
	wait $bp
	rc=$?
	kill $s1 $s2
	wait $s1 $s2 2>/dev/null
	rmdir "$cgdir" && cgdir=
	durs=$(sed -n 's/^bpfprof: \([0-9.]*\) s, [0-9]* samples.*/\1/p' "$work/cut.log" | paste -sd ' ')
	# first and last sample time of each interval's perf.data, s
	spans=$(for f in "$work"/cut/*-cut.data; do
		perf script -i "$f" -F time 2>/dev/null | tr -d ': ' | sort -n | sed -n '1p;$p' | tr '\n' ' '
	done)
	if [ $rc -eq 0 ] && [ "$durs" = "1.00 0.40" ] && echo "$spans" | awk '{ exit !(NF == 4 &&
		$2 - $1 <= 1.02 && $4 - $3 <= 0.42 && $3 >= $2 && $4 - $1 <= 1.42) }'; then
		ok "-d, --interval with both CPUs busy and a 0.9 s backlog: intervals of $durs s, samples $spans"
	else
		fail "-d, --interval cut: rc=$rc, intervals of '$durs' s (want 1.00 0.40), sample times $spans" \
			"$(grep -v '^ ' "$work/cut.log" | head -8)"
	fi
else
	skip "-d, --interval cut under load" "no cgroup2 to keep the run to its own spinners"
fi

echo "$passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Faults around a run (docs/RELIABILITY.md lists them all, with the tests of
# the other scripts): signals, a second signal while writing, the target
# killed, a full disk, a lost-sample ring buffer, symbolic links and other
# non-regular outputs, output modes, a closed stdout, bpfprof itself killed.
# Outputs are read back with go tool pprof and perf report. Needs root (BPF,
# mount); strace for the two tests that stop bpfprof inside its commit.
# tests/integration/run.sh already covers: SIGINT writes the profile, the
# target exiting by itself, a missing output directory, the lost-sample
# summary line.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
BPFPROF=${BPFPROF:-$top/bpfprof}
HOTCOLD=${HOTCOLD:-$top/.output/workload/hotcold}
work=$(mktemp -d /tmp/bpfprof-faults.XXXXXX)
bg_pids=()
mounts=()
cleanup() {
	local p m
	for p in "${bg_pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	for m in "${mounts[@]}"; do umount "$m" 2>/dev/null; done
	rm -rf "$work"
}
trap cleanup EXIT
# perf's build-id cache of its own: other runs sharing ~/.debug cannot race with it
# bpfprof fills perf's build-id cache ($HOME/.debug) for perf.data, as perf record does: keep it in $work
mkdir -p "$work/home"
export PPROF_TMPDIR=$work/pprof HOME=$work/home PERF_BUILDID_DIR=$work/buildid

. "$(dirname "$0")/lib.bash"

# Functions `go tool pprof -top` lists, one per line.
top_funcs() { go tool pprof -top "$1" 2>/dev/null | awk 'NR > 1 && $NF ~ /^[A-Za-z_]/ { print $NF }'; }
# Does go tool pprof name both hot functions in $1?
names_hot() { local f; f=$(top_funcs "$1"); grep -qx hot_a <<<"$f" && grep -qx hot_b <<<"$f"; }
# Everything in directory $1, dot files too, one line.
listing() { ls -A "$1" | tr '\n' ' ' | sed 's/ $//'; }
# Milliseconds since $1 (from now_ms).
now_ms() { echo $(($(date +%s%N) / 1000000)); }
# cpu_ms PID: the CPU time PID (its main thread) has had, ms (schedstat)
# Workloads spin only while they are profiled. start_hotcold ARGS: hotcold
# ARGS in the background, stopped (SIGSTOP) once it has exec'd; its pid in
# $wl. spin_hotcold MS [MAX_S]: once bpfprof ($bp) is about to sample, let it
# run (SIGCONT) for MS ms of CPU, then stop it again (the rest of the test
# needs no more samples). stop_hotcold: it ends.
start_hotcold() {
	"$HOTCOLD" "$@" &
	wl=$!
	bg_pids+=("$wl")
	wait_exec "$wl" hotcold
	kill -STOP "$wl"
}
spin_hotcold() {
	local t0
	wait_sampling "$bp"
	t0=$(cpu_ms "$wl")
	kill -CONT "$wl"
	wait_cpu "$wl" $((t0 + $1)) "${2:-30}"
	kill -STOP "$wl"
}
stop_hotcold() { kill "$wl" 2>/dev/null && kill -CONT "$wl" 2>/dev/null; wait "$wl" 2>/dev/null; }
# kill_command: SIGKILL bpfprof's ($bp) command and the command's children
kill_command() {
	local cmd kids
	cmd=$(cat /proc/$bp/task/*/children 2>/dev/null | awk '{ print $1 }')
	[ -n "$cmd" ] || return 0
	kids=$(cat /proc/"$cmd"/task/*/children 2>/dev/null)
	# shellcheck disable=SC2086
	kill -9 "$cmd" $kids 2>/dev/null
}
# A profile that names hot_a and hot_b: 1999 Hz while hotcold has SPIN ms of
# CPU, 300 samples (no hot_b among them at 25 %: 1e-37)
SPIN=150

if [ ! -x "$HOTCOLD" ]; then
	fail "build" "missing $HOTCOLD: run make"
	finish
fi
cd "$work" || exit 1
require_bpf "all fault tests"

# ---- 1. SIGTERM and SIGHUP end sampling; every output is written ----
# (SIGINT: run.sh.) SIGTERM with all five formats, each read by its reader.
mkdir term
start_hotcold 10
"$BPFPROF" -p $wl -F 1999 -o term/t.prof -o term/t.pb.gz -o term/t.data -o term/t.folded -o term/t.svg \
	2>term.log &
bp=$!
spin_hotcold $SPIN
kill -TERM $bp
wait $bp
rc=$?
stop_hotcold
bad=()
names_hot term/t.prof || bad+=("t.prof: go tool pprof -top lacks hot_a/hot_b")
names_hot term/t.pb.gz || bad+=("t.pb.gz: go tool pprof -top lacks hot_a/hot_b")
perf report -i term/t.data --stdio --sort sym >term.report 2>&1
grep -q '\] hot_a *$' term.report || bad+=("t.data: perf report lacks hot_a:" "$(grep -v '^#' term.report | head -8)")
grep -q 'hot_a' term/t.folded || bad+=("t.folded lacks hot_a")
{ xmllint --noout term/t.svg 2>/dev/null && grep -q 'hot_a' term/t.svg; } || bad+=("t.svg: not XML or no hot_a")
if [ $rc -eq 0 ] && [ ${#bad[@]} -eq 0 ] && [ "$(listing term)" = "t.data t.folded t.pb.gz t.prof t.svg" ]; then
	ok "SIGTERM: exit 0, all five outputs written and read back (pprof, perf report, xmllint)"
else
	fail "SIGTERM: rc=$rc" "${bad[@]}" "$(listing term)" "$(cat term.log)"
fi

start_hotcold 10
"$BPFPROF" -p $wl -F 1999 -o hup.prof 2>hup.log &
bp=$!
spin_hotcold $SPIN
kill -HUP $bp
wait $bp
rc=$?
stop_hotcold
if [ $rc -eq 0 ] && names_hot hup.prof; then
	ok "SIGHUP: exit 0, go tool pprof names hot_a and hot_b"
else
	fail "SIGHUP: rc=$rc" "$(cat hup.log)"
fi

# ---- 2. Signals during the commit, bpfprof held there by strace ----
# strace delays the entry of linkat, the call that names an output's
# finished temporary (O_TMPFILE) just before its rename: the process waits
# there, the output written and fsynced but not in place.
case $(uname -m) in
x86_64) nr_linkat=265 ;;
aarch64) nr_linkat=37 ;;
*) nr_linkat= ;;
esac
# Start strace on $bp delaying its Nth linkat by $2 s; wait until attached.
hold_linkat() {
	strace -qq -o /dev/null -p "$bp" -e trace=linkat -e inject=linkat:delay_enter="$2"s:when="$1" &
	st=$!
	bg_pids+=("$st")
	for _ in $(seq 250); do
		[ "$(awk '/^TracerPid/ { print $2 }' /proc/$bp/status 2>/dev/null)" = "$st" ] && return 0
		sleep 0.02
	done
	return 1
}
# Wait (up to 20 s) until bpfprof sits in linkat.
in_linkat() {
	for _ in $(seq 1000); do
		[ "$(cut -d' ' -f1 /proc/$bp/syscall 2>/dev/null)" = "$nr_linkat" ] && return 0
		kill -0 $bp 2>/dev/null || return 1
		sleep 0.02
	done
	return 1
}
if ! command -v strace >/dev/null; then
	skip "second signal while writing" "strace not installed"
	skip "one signal while writing" "strace not installed"
elif [ -z "$nr_linkat" ]; then
	skip "second signal while writing" "linkat's number unknown on $(uname -m)"
	skip "one signal while writing" "linkat's number unknown on $(uname -m)"
else
	# 2a. Two outputs replacing older files. First SIGINT: sampling ends, a.prof
	# is committed; bpfprof is held committing b.folded; second SIGINT: it must
	# exit 130 with b.folded still the old file and no temporary left.
	mkdir sig2
	echo OLD-A >sig2/a.prof
	echo OLD-B >sig2/b.folded
	start_hotcold 20
	"$BPFPROF" -p $wl -F 1999 -o sig2/a.prof -o sig2/b.folded 2>sig2.log &
	bp=$!
	if hold_linkat 2 5; then
		spin_hotcold $SPIN
		kill -INT $bp
		held=no tmpsize= a_then=
		if in_linkat; then
			held=yes
			# b.folded's temporary: the one output file bpfprof still has open
			for fd in /proc/$bp/fd/*; do
				[[ $(readlink "$fd") == "$work/sig2/"*"(deleted)" ]] && tmpsize=$(stat -L -c %s "$fd")
			done
			grep -qx OLD-A sig2/a.prof && a_then=old || a_then=new
		fi
		kill -INT $bp
		wait $bp
		rc=$?
		wait $st 2>/dev/null
		if [ $held = yes ] && [ $rc -eq 130 ] && [ "$a_then" = new ] && [ "${tmpsize:-0}" -gt 0 ] &&
			[ "$(cat sig2/b.folded)" = OLD-B ] && [ "$(listing sig2)" = "a.prof b.folded" ] &&
			names_hot sig2/a.prof; then
			ok "second SIGINT while writing: exit 130, a.prof complete, b.folded's ${tmpsize}-byte temporary discarded, old b.folded intact"
		else
			fail "second SIGINT while writing: held=$held rc=$rc a.prof='$a_then' temporary=${tmpsize:-none}" \
				"b.folded: $(head -c 40 sig2/b.folded)" "dir: $(listing sig2)" "$(cat sig2.log)"
		fi
	else
		kill -9 $bp 2>/dev/null
		skip "second signal while writing" "strace cannot attach to bpfprof"
	fi
	stop_hotcold

	# 2b. The run ends by -d; one SIGTERM while it commits is not a second
	# signal: the output is still written. (-d 2 leaves strace time to attach
	# before the commit; the workload spins SPIN ms of CPU, 1 s at most, of it.)
	start_hotcold 10
	"$BPFPROF" -p $wl -F 1999 -d 2 -o one.prof 2>one.log &
	bp=$!
	if hold_linkat 1 3; then
		spin_hotcold $SPIN 1
		held=no
		in_linkat && held=yes && kill -TERM $bp
		wait $bp
		rc=$?
		wait $st 2>/dev/null
		if [ $held = yes ] && [ $rc -eq 0 ] && names_hot one.prof && [ "$(ls -A | grep -c '^\.one\.prof')" = 0 ]; then
			ok "one SIGTERM while writing (after -d): exit 0, profile written"
		else
			fail "one SIGTERM while writing: held=$held rc=$rc" "$(cat one.log)"
		fi
	else
		kill -9 $bp 2>/dev/null
		skip "one signal while writing" "strace cannot attach to bpfprof"
	fi
	stop_hotcold
fi

# ---- 3. The target dies during the run: its samples are kept and named ----
start_hotcold 30
"$BPFPROF" -p $wl -F 1999 -o k9.prof 2>k9.log &
bp=$!
spin_hotcold $SPIN
t0=$(now_ms)
{ kill -9 $wl; wait $wl; } 2>/dev/null
wait $bp
rc=$?
ms=$(($(now_ms) - t0))
# (6 s from bpfprof's start with the target killed 2.5 s in, before: 3.5 s from the kill)
if [ $rc -eq 0 ] && [ $ms -lt 3500 ] && names_hot k9.prof; then
	ok "-p target killed with -9: bpfprof stops by itself (${ms} ms after), go tool pprof names hot_a and hot_b"
else
	fail "-p target killed: rc=$rc after ${ms} ms" "$(top_funcs k9.prof | head -5)" "$(cat k9.log)"
fi

# Command form, forking, killed with -9 (both processes), its binary deleted
# before: the .pb.gz is symbolized by bpfprof from the files it held open.
cp "$HOTCOLD" "$work/hcdel"
"$BPFPROF" -F 1999 -o k9cmd.pb.gz -- "$work/hcdel" 30 --fork 2>k9cmd.log &
bp=$!
bg_pids+=("$bp")
# the command runs once bpfprof samples; its child, once it runs
cmd='' kids=''
for _ in $(seq 500); do
	cmd=$(cat /proc/$bp/task/*/children 2>/dev/null | awk '{ print $1 }')
	[ -n "$cmd" ] && kids=$(cat /proc/"$cmd"/task/*/children 2>/dev/null) && [ -n "$kids" ] && break
	sleep 0.02
done
# both sampled for SPIN ms of CPU each
for p in $cmd $kids; do wait_cpu "$p" $SPIN; done
rm -f "$work/hcdel"
sleep 0.1
kill -9 $cmd $kids 2>/dev/null
wait $bp
rc=$?
if [ -n "$cmd" ] && [ -n "$kids" ] && [ $rc -eq 0 ] && names_hot k9cmd.pb.gz &&
	grep -q 'hot_a \[hcdel\]' k9cmd.log && grep -q ' 2 processes' k9cmd.log; then
	ok "command killed with -9 after its binary was deleted: 2 processes, .pb.gz names hot_a and hot_b"
else
	fail "command killed with -9: cmd='$cmd' children='$kids' rc=$rc" "$(top_funcs k9cmd.pb.gz | head -5)" "$(cat k9cmd.log)"
fi

# ---- 4. The output file system fills up ----
# 4a. perf.data outgrows a 64 KiB tmpfs while it streams: dropped at once
# (temporary gone), sampling goes on, the outputs that fit are written (64,
# not 32: a run that went on 1.1 s under load wrote a 14.7 KiB .prof and a
# .folded that no longer fitted beside it in 32).
mkdir full
if mount -t tmpfs -o size=64k bpfprof-faults "$work/full"; then
	mounts+=("$work/full")
	# the command runs until bpfprof says perf.data filled the file system
	# (at once, as it happens: ~500 samples), then it is killed, which ends the run
	"$BPFPROF" -F 4999 -o full/big.data -o full/hc.prof -o full/hc.folded -- "$HOTCOLD" 30 --fork \
		>/dev/null 2>full.log &
	bp=$!
	bg_pids+=("$bp")
	for _ in $(seq 1000); do
		grep -q 'No space left on device' full.log && break
		kill -0 $bp 2>/dev/null || break
		sleep 0.02
	done
	kill_command
	wait $bp
	rc=$?
	if [ $rc -eq 1 ] && grep -q "cannot write 'full/big.data': No space left on device" full.log &&
		[ "$(listing full)" = "hc.folded hc.prof" ] && names_hot full/hc.prof && grep -q hot_a full/hc.folded; then
		ok "disk full while perf.data streams: exit 1, error names big.data, no file or temporary, .prof and .folded written"
	else
		fail "disk full (streaming): rc=$rc" "dir: $(listing full)" "$(cat full.log)"
	fi
	umount "$work/full"
else
	skip "disk full" "cannot mount a tmpfs"
fi
# 4b. A flame graph that does not fit when written at the end (two free pages
# left), replacing an older one: the old file stays, the .folded after it is
# written. Sizes at 1999 Hz over 150 ms of hotcold's CPU, both CPUs busy: the
# SVG 9.1-19.1 KiB (never under 8: its header and hotcold's frames), the
# .folded 0.3-2.7 KiB, over 4 KiB once in CI (one page free then: its
# distinct kernel stacks vary with where the interrupts land).
mkdir full2
if mount -t tmpfs -o size=64k bpfprof-faults "$work/full2"; then
	mounts+=("$work/full2")
	echo OLD >full2/hc.svg
	head -c $((13 * 4096)) /dev/zero >full2/filler
	start_hotcold 10
	"$BPFPROF" -p $wl -F 1999 -o full2/hc.svg -o full2/hc.folded >/dev/null 2>full2.log &
	bp=$!
	spin_hotcold $SPIN
	kill -INT $bp
	wait $bp
	rc=$?
	stop_hotcold
	if [ $rc -eq 1 ] && grep -q "cannot write 'full2/hc.svg': No space left on device" full2.log &&
		[ "$(cat full2/hc.svg)" = OLD ] && [ "$(listing full2)" = "filler hc.folded hc.svg" ] &&
		grep -q hot_a full2/hc.folded; then
		ok "disk full at the final write: exit 1, error names hc.svg, old hc.svg intact, .folded written"
	else
		fail "disk full (final write): rc=$rc" "dir: $(listing full2)" "$(cat full2.log)"
	fi
	umount "$work/full2"
else
	skip "disk full at the final write" "cannot mount a tmpfs"
fi

# ---- 5. Ring buffer overflow recorded in perf.data ----
"$BPFPROF" -a --no-jvm-perfmap -F 20000 --ringbuf-size 4K -o lost.data -- "$HOTCOLD" 0.3 --fork >/dev/null 2>lost.log
rc=$?
nlost=$(sed -n 's/^bpfprof: [0-9.]* s, [0-9]* samples, \([0-9]*\) lost.*/\1/p' lost.log)
plost=$(perf report -i lost.data --stats 2>/dev/null | awk '/LOST_SAMPLES events:/ { v = $3 } END { print v }')
hlost=$(perf report -i lost.data --stdio 2>/dev/null | sed -n 's/^# Total Lost Samples: \([0-9]*\)/\1/p')
if [ $rc -eq 0 ] && [ "${nlost:-0}" -gt 0 ] && [ "$plost" = "$nlost" ] && [ "$hlost" = "$nlost" ] &&
	grep -q "lost $nlost samples: ring buffer full" lost.log; then
	ok "4K ring buffer at 20 kHz: $nlost lost, the same number in the summary and in perf report (--stats, header)"
else
	fail "lost samples in perf.data: rc=$rc summary='$nlost' --stats='$plost' header='$hlost'" "$(tail -3 lost.log)"
fi

# ---- 6. Outputs that are not plain files: refused before sampling ----
echo precious >victim
ln -s victim link.prof
ln -s "$work/created-through-link" dangling.prof
mkdir adir
mkfifo fifo.prof
for t in "link.prof:symbolic link" "dangling.prof:symbolic link" "adir:is a directory" "fifo.prof:not a regular file"; do
	out=${t%%:*} msg=${t#*:}
	t0=$(now_ms)
	"$BPFPROF" -p 1 -d 5 -o good.prof -o "$out" --format prof >/dev/null 2>refuse.log
	rc=$?
	ms=$(($(now_ms) - t0))
	if [ $rc -eq 1 ] && [ $ms -lt 3000 ] && grep -q "cannot write '$out': .*$msg" refuse.log &&
		[ "$(cat victim)" = precious ] && [ "$(readlink link.prof)" = victim ] && [ -p fifo.prof ] &&
		[ ! -e created-through-link ] && [ ! -e good.prof ] && [ -z "$(ls -A | grep '^\.')" ]; then
		ok "-o $out: exit 1 after ${ms} ms, '$msg', nothing written or replaced"
	else
		fail "-o $out: rc=$rc after ${ms} ms" "$(cat refuse.log)" "$(ls -la)"
	fi
done

# ---- 7. Permissions: 0600 whatever the umask, --output-mode exact ----
# (the first run's files need no samples: its workload stays stopped)
start_hotcold 10
echo old >m1.prof
chmod 644 m1.prof
(umask 000 && "$BPFPROF" -p $wl -F 1999 -d 0.3 -o m1.prof -o m1.data 2>mode1.log)
rc1=$?
(umask 077 && exec "$BPFPROF" -p $wl -F 1999 --output-mode=0640 -o m2.prof -o m2.data 2>mode2.log) &
bp=$!
spin_hotcold $SPIN
kill -INT $bp
wait $bp
rc2=$?
stop_hotcold
modes="$(stat -c %a m1.prof m1.data m2.prof m2.data | tr '\n' ' ')"
if [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && [ "$modes" = "600 600 640 640 " ] && names_hot m2.prof; then
	ok "modes: 0600 under umask 000 (an existing 0644 file replaced too), --output-mode=0640 under umask 077"
else
	fail "modes: rc=$rc1/$rc2 modes='$modes'" "$(cat mode1.log mode2.log)"
fi
bad=
for m in 999 0200 1777 abc -640 ''; do
	"$BPFPROF" -p 1 --output-mode="$m" -o x.prof >/dev/null 2>badmode.log
	[ $? -eq 2 ] && grep -q "invalid MODE" badmode.log || bad="$bad '$m'"
done
[ -z "$bad" ] && ok "--output-mode: 999, 0200, 1777, abc, -640 and '' refused with exit 2" ||
	fail "--output-mode accepted:$bad"

# ---- 8. stdout closed under bpfprof: an error, not a death ----
start_hotcold 10
"$BPFPROF" -p $wl -F 1999 --format folded -o - -o pipe.folded 2>pipe.log > >(true) &
bp=$!
spin_hotcold $SPIN
kill -INT $bp
wait $bp
rc=$?
stop_hotcold
if [ $rc -eq 1 ] && grep -q "cannot write profile to stdout: Broken pipe" pipe.log && grep -q hot_a pipe.folded; then
	ok "stdout reader gone: exit 1, 'Broken pipe', the file output still written"
else
	fail "closed stdout: rc=$rc" "$(cat pipe.log)"
fi

"$BPFPROF" -p 1 -o - --format perf >/dev/null 2>stdout-perf.log
rc=$?
[ $rc -eq 2 ] && grep -q "perf.data cannot go to stdout" stdout-perf.log && ok "perf.data to stdout: exit 2" ||
	fail "perf.data to stdout: rc=$rc" "$(cat stdout-perf.log)"

# A command that fails: said, and its profile still written.
"$BPFPROF" -F 199 -o cmdfail.prof -- sh -c 'exit 3' >/dev/null 2>cmdfail.log
rc=$?
if [ $rc -eq 0 ] && grep -q "command exited with status 3" cmdfail.log && [ -s cmdfail.prof ]; then
	ok "command exiting with status 3: said on stderr, profile written, exit 0"
else
	fail "failing command: rc=$rc" "$(cat cmdfail.log)"
fi

# ---- 9. The output directory removed during the run ----
mkdir gone
start_hotcold 10
"$BPFPROF" -p $wl -F 1999 -o gone/x.prof -o kept.prof 2>gone.log &
bp=$!
wait_sampling $bp
rm -rf gone
spin_hotcold $SPIN
kill -INT $bp
wait $bp
rc=$?
stop_hotcold
if [ $rc -eq 1 ] && grep -q "cannot write 'gone/x.prof': No such file or directory" gone.log &&
	[ ! -e gone ] && names_hot kept.prof; then
	ok "output directory removed during the run: exit 1 naming the file, the other output written"
else
	fail "directory removed: rc=$rc" "$(cat gone.log)"
fi

# ---- 10. bpfprof itself killed with -9: nothing left, older output intact ----
mkdir k9self
echo OLD >k9self/out.prof
start_hotcold 10
"$BPFPROF" -p $wl -F 1999 -o k9self/out.prof -o k9self/out.data 2>/dev/null &
bp=$!
spin_hotcold $SPIN
{ kill -9 $bp; wait $bp; stop_hotcold; } 2>/dev/null
if [ "$(cat k9self/out.prof)" = OLD ] && [ "$(listing k9self)" = out.prof ]; then
	ok "bpfprof killed with -9 mid-run: no temporary left, old output intact"
else
	fail "bpfprof killed with -9: $(listing k9self)" "$(head -c 20 k9self/out.prof)"
fi

echo "$passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]

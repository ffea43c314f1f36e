#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Integration tests of the perf.data output (user/write/write_perfdata.c): profile
# the project's workload (tests/workload/hotcold.c: hot_a 75 %, hot_b 25 %,
# hot_a under via_x and via_y, hot_b under via_z) with the real BPF program
# and read the file back with the real perf tools: perf report (split,
# callers, header), perf script (every sample, symbolized), perf buildid-list
# (against readelf -n), perf inject --jit (needs use_clockid + CLOCK_MONOTONIC).
# perf exits 0 on many broken files, so the stderr of every perf command is
# checked too. The header fields are compared with a real perf record made
# here. Needs root (BPF, perf events); skips, saying why, only where the
# kernel refuses or perf is missing.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
BPFPROF=${BPFPROF:-$top/bpfprof}
HOTCOLD=${HOTCOLD:-$top/.output/workload/hotcold}
# Percentage points allowed around the known split: TOL, or four standard
# deviations of the share at the samples the run gave (lib.bash split_tol)
# when that is more. The command form runs hotcold for 1 s of its CPU time
# (--cpu): about 1000 samples at 999 Hz whatever the load (4 sd: 5.5 points).
# The -a run is 1 s of wall time: under load (two scripts at once, fuzzers
# beside them, other work) its workloads get less (250 samples of the two
# seen at a load of 8 on 2 CPUs: 11 points).
TOL=${TOL:-7}
work=$(mktemp -d /tmp/bpfprof-pd.XXXXXX)
bg=()
cg=
cleanup() {
	local p
	for p in "${bg[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -n "$cg" ] && rmdir "$cg" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
# keep perf's build-id cache out of the user's ~/.debug
export PERF_BUILDID_DIR=$work/buildid
# bpfprof fills perf's build-id cache ($HOME/.debug) for perf.data, as perf record does: keep it in $work
mkdir -p "$work/home"
export HOME=$work/home

. "$(dirname "$0")/lib.bash"

# Samples bpfprof reported writing to a perf.data ("wrote 'F.data': N samples").
reported() { sed -n "s/^bpfprof: wrote '.*\.data': \([0-9]*\) samples.*/\1/p" "$1" | head -1; }

# Run perf with stdout to $work/NAME.out and stderr to $work/NAME.err; fail on
# a non-zero status or on a suspicious stderr line. No line is filtered out:
# perf prints nothing on stderr for a well-formed file with these commands.
# Returns non-zero when the command failed. A time limit: perf report blocks
# for good opening /tmp/perf-PID.map of a process that made it a link to a
# FIFO (jit.sh's jitswap does) when a -a file holds that process's samples.
perf_ok() {
	local name=$1
	shift
	timeout 120 perf "$@" >"$work/$name.out" 2>"$work/$name.err"
	local rc=$?
	if [ $rc -ne 0 ]; then
		fail "$name: perf $* exited $rc" "$(head -5 "$work/$name.err")"
		return 1
	fi
	if grep -qiE 'warning|error|failed|unknown|invalid|bad' "$work/$name.err"; then
		fail "$name: perf $* printed on stderr" "$(head -5 "$work/$name.err")"
		return 1
	fi
	ok "$name: perf $1 exit 0, stderr clean"
}

# Field of `perf report --header-only` ("# key : value").
hdr_field() { sed -n "s/^# $2 *: //p" "$1" | head -1; }

if [ "$(id -u)" -ne 0 ]; then
	skip "all perf.data integration tests" "needs root for BPF and perf events"
	finish
fi
if ! command -v perf >/dev/null 2>&1; then
	skip "all perf.data integration tests" "perf is not installed (Debian: linux-perf)"
	finish
fi
if [ ! -x "$BPFPROF" ] || [ ! -x "$HOTCOLD" ]; then
	fail "build" "missing $BPFPROF or $HOTCOLD: run make"
	finish
fi
cd "$work" || exit 1

if ! "$BPFPROF" -d 0.2 -o "$work/probe.data" -- true >"$work/probe.log" 2>&1; then
	if grep -qiE 'operation not permitted|permission denied|not supported' "$work/probe.log"; then
		skip "all perf.data integration tests" "the kernel refuses BPF here: $(head -2 "$work/probe.log" | tr '\n' ' ')"
		finish
	fi
	fail "probe run" "$(cat "$work/probe.log")"
fi

# Reference header from the real perf record on this machine.
if perf record -N -F 99 -g -a -o "$work/ref.data" -- sleep 0.2 >/dev/null 2>"$work/ref.log" &&
	perf report -i "$work/ref.data" --header-only >"$work/ref.hdr" 2>>"$work/ref.log"; then
	have_ref=1
else
	have_ref=0
	skip "header comparison with perf record" "perf record failed: $(head -2 "$work/ref.log" | tr '\n' ' ')"
fi

# Header of a bpfprof file: same host fields as perf record, bpfprof's cmdline, the event.
check_header() {
	local name=$1 data=$2 want_cmd=$3 hdr=$work/$1.hdr key a b bad=()
	perf_ok "$name-header" report -i "$data" --header-only || return
	cp "$work/$name-header.out" "$hdr"
	if [ $have_ref -eq 1 ]; then
		for key in hostname "os release" arch "nrcpus online" "nrcpus avail" cpudesc cpuid "total memory"; do
			a=$(hdr_field "$hdr" "$key") b=$(hdr_field "$work/ref.hdr" "$key")
			[ -n "$a" ] && [ "$a" = "$b" ] || bad+=("$key: bpfprof '$a', perf record '$b'")
		done
		if [ ${#bad[@]} -eq 0 ]; then
			ok "$name: header-only host fields equal perf record's (hostname $(hdr_field "$hdr" hostname), cpuid $(hdr_field "$hdr" cpuid), nrcpus $(hdr_field "$hdr" "nrcpus online")/$(hdr_field "$hdr" "nrcpus avail"))"
		else
			fail "$name: header fields differ from perf record's" "${bad[@]}"
		fi
	fi
	a=$(hdr_field "$hdr" cmdline)
	case "$a" in
	*bpfprof*"$want_cmd"*) ok "$name: cmdline is bpfprof's: $a" ;;
	*) fail "$name: cmdline '$a' lacks '$want_cmd'" ;;
	esac
	grep -q '^# event : name = cpu-clock, .*type = 1,.*use_clockid = 1, clockid = 1' "$hdr" &&
		ok "$name: event cpu-clock, use_clockid = 1, clockid = 1 (monotonic)" ||
		fail "$name: event line" "$(grep '^# event' "$hdr")"
	grep -q '^# time of first sample' "$hdr" && ok "$name: sample time range present" ||
		fail "$name: no SAMPLE_TIME" "$(cat "$hdr")"
}

# Every sample of perf script: "count unsymbolized", where unsymbolized counts
# the samples of command $2 (any command when empty) without one named frame,
# and of the pids in $ours ("P1,P2") only when it is set (a -a run judges only
# its own processes: another script may run a hotcold beside this one);
# their header lines go to FILE.bad. perf script prints a sample as a header
# line ("comm pid [cpu] time: ..."), frame lines, then a blank line.
ours=
script_stats() {
	awk -v comm="${2:-}" -v pids="$ours" -v badf="$1.bad" 'BEGIN { n = 0; bad = 0; printf "" >badf
			k = split(pids, pl, ","); for (i = 1; i <= k; i++) want[pl[i]] = 1 }
		function close_s() { if (in_s && !named && (comm == "" || c == comm) && (!k || p in want)) { bad++; print hdr >badf } }
		/^[^ \t]/ { close_s(); n++; in_s = 1; named = 0; hdr = $0; c = $1; p = $2; next }
		/^[ \t]+[0-9a-f]+ / { if ($2 != "[unknown]") named = 1; next }
		END { close_s(); print n, bad }' "$1"
}

check_buildids() {
	local name=$1 data=$2 list=$work/$1-buildid-list.out want
	perf_ok "$name-buildid-list" buildid-list -i "$data" || return
	want=$(readelf -n "$HOTCOLD" | sed -n 's/.*Build ID: *//p')
	if [ -n "$want" ] && grep -q "^$want .*workload/hotcold\$" "$list"; then
		ok "$name: buildid-list has hotcold with its ELF build-id $want"
	else
		fail "$name: hotcold build-id $want not listed" "$(cat "$list")"
	fi
	grep -q ' \[kernel.kallsyms\]$' "$list" && ok "$name: buildid-list has [kernel.kallsyms]" ||
		fail "$name: no kernel build-id" "$(cat "$list")"
	if grep -q '(/.*/libc\.so\.6)' "$work/$name-script.out" 2>/dev/null; then
		local libc
		libc=$(grep -o '(/[^)]*/libc\.so\.6)' "$work/$name-script.out" | head -1 | tr -d '()')
		want=$(readelf -n "$libc" 2>/dev/null | sed -n 's/.*Build ID: *//p')
		grep -q "^$want $libc\$" "$list" && ok "$name: buildid-list has $libc ($want), which has samples" ||
			fail "$name: libc has samples but its build-id $want is not listed" "$(cat "$list")"
	fi
}

check_inject() {
	local name=$1 data=$2 n=$3 m
	perf_ok "$name-inject" inject --jit -i "$data" -o "$work/$name.jit.data" || return
	perf_ok "$name-inject-script" script -i "$work/$name.jit.data" || return
	m=$(script_stats "$work/$name-inject-script.out" | cut -d' ' -f1)
	[ "$m" = "$n" ] && ok "$name: perf inject --jit output has all $n samples" ||
		fail "$name: injected file has $m samples, want $n"
}

# hot_a/hot_b self share from perf report --sort sym, and the callers with -g caller;
# $4: the samples the shares are taken over (for the tolerance).
check_split() {
	local name=$1 data=$2 a b tol
	tol=$(split_tol "$4" "$TOL")
	if [ -z "$tol" ]; then
		fail "$name: $4 samples of hotcold, too few to judge the split"
		return
	fi
	perf_ok "$name-report" report -i "$data" ${ours:+--pid "$ours"} --stdio --no-children --sort sym -g none || return
	a=$(awk '$NF == "hot_a" { sub("%", "", $1); print $1; exit }' "$work/$name-report.out")
	b=$(awk '$NF == "hot_b" { sub("%", "", $1); print $1; exit }' "$work/$name-report.out")
	if [ "$3" = total ]; then
		# system-wide: other processes share the machine (only ours are reported); compare hot_a's part of hot_a + hot_b
		a=$(awk -v a="$a" -v b="$b" 'BEGIN { if (a + b > 0) printf "%.2f", 100 * a / (a + b) }')
		b=$(awk -v a="$a" 'BEGIN { if (a != "") printf "%.2f", 100 - a }')
	fi
	if near "$a" 75 "$tol" && near "$b" 25 "$tol"; then
		ok "$name: perf report: hot_a $a%, hot_b $b% (expect 75/25 ±$tol, $4 samples)"
	else
		fail "$name: perf report split hot_a=$a% hot_b=$b%" "$(grep '%' "$work/$name-report.out" | head -10)"
	fi
	perf_ok "$name-caller" report -i "$data" ${ours:+--pid "$ours"} --stdio --no-children --sort sym -g caller || return
	# each entry "NN% [.] leaf" is followed by its chains, root first: the caller sits just above the leaf
	if awk '/%.*\[[.k]\] / { leaf = $NF; next }
		{ f = $NF; sub(/^-+/, "", f); sub(/.*--/, "", f) }
		leaf == "hot_a" && f == "via_x" { x = 1 } leaf == "hot_a" && f == "via_y" { y = 1 }
		leaf == "hot_b" && f == "via_z" { z = 1 } leaf == "hot_a" && f == "via_z" { bad = 1 }
		END { exit !(x && y && z && !bad) }' "$work/$name-caller.out"; then
		ok "$name: perf report -g caller: hot_a under via_x and via_y, hot_b under via_z"
	else
		fail "$name: callers missing in perf report -g caller" "$(sed -n '/hot_a/,+20p' "$work/$name-caller.out" | head -25)"
	fi
}

# perf script: all n samples, and every sample (of command $4 when given)
# with a named frame (system-wide, other processes may run code no file
# describes, such as JIT code without a perf map).
check_script() {
	local name=$1 data=$2 n=$3 comm=${4:-} stats
	perf_ok "$name-script" script -i "$data" || return
	stats=$(script_stats "$work/$name-script.out" "$comm")
	if [ "${stats% *}" = "$n" ] && [ "${stats#* }" = 0 ]; then
		ok "$name: perf script prints all $n samples, every ${comm:+$comm }sample with a symbolized frame"
	else
		fail "$name: perf script: samples/unsymbolized '$stats', bpfprof wrote $n" \
			"$(head -5 "$work/$name-script.out.bad")"
	fi
}

# 1. Command form at 999 Hz, perf.data and .prof together (1 CPU-s: about 1000 samples).
"$BPFPROF" -F 999 -o "$work/cmd.data" -o "$work/cmd.prof" -- "$HOTCOLD" 1 --cpu >/dev/null 2>"$work/cmd.log"
rc=$?
n=$(reported "$work/cmd.log")
if [ $rc -eq 0 ] && [ -s "$work/cmd.data" ] && [ -n "$n" ] && [ "$n" -gt 0 ]; then
	ok "command form: exit 0, perf.data written ($n samples)"
	check_header cmd "$work/cmd.data" "-o $work/cmd.data -o $work/cmd.prof -- $HOTCOLD 1 --cpu"
	check_split cmd "$work/cmd.data" self "$n"
	check_script cmd "$work/cmd.data" "$n"
	check_buildids cmd "$work/cmd.data"
	check_inject cmd "$work/cmd.data" "$n"
else
	fail "command form: rc=$rc" "$(cat "$work/cmd.log")"
fi

# The -a runs keep only the samples of a cgroup of this script's own
# (--cgroup), where cgroup2 is mounted: the processes of scripts running beside
# this one stay out of the files, such as jit.sh's jitswap, whose
# /tmp/perf-PID.map is a link to a FIFO that perf report would block on, or a
# node whose jitdump is deleted by the time perf inject --jit opens it (which
# then fails: "failed to process type: 10").
cg2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
[ -n "$cg2" ] && mkdir "$cg2/bpfprof-pd.$$" 2>/dev/null && cg=$cg2/bpfprof-pd.$$

# 2. A syscall-heavy command, system-wide: named kernel frames. 300,000
# one-byte reads and writes: about 0.2 s of dd's CPU time, 200 samples of it
# whatever the load (cpu-clock counts its CPU time), most in the kernel.
# dd moves itself into the cgroup (a shell that then execs it); bpfprof stays out.
cgrun=()
[ -n "$cg" ] && cgrun=(sh -c 'echo $$ >"$0" && exec "$@"' "$cg/cgroup.procs")
"$BPFPROF" -F 999 -a -o "$work/sys.data" ${cg:+--cgroup "$cg"} -- "${cgrun[@]}" \
	dd if=/dev/zero of=/dev/null bs=1 count=300000 >/dev/null 2>"$work/sys.log"
rc=$?
n=$(reported "$work/sys.log")
if [ $rc -eq 0 ] && [ -n "$n" ]; then
	if perf_ok sys-report report -i "$work/sys.data" --stdio --no-children --comm dd --sort dso,sym -g none; then
		k=$(grep -cE '\[kernel\.kallsyms\] +\[k\] [A-Za-z_]' "$work/sys-report.out")
		raw=$(grep -cE '\[k\] 0x[0-9a-f]+' "$work/sys-report.out")
		[ "$k" -ge 3 ] && ok "syscall-heavy -a: $k named [kernel.kallsyms] symbols for dd ($raw raw addresses)" ||
			fail "syscall-heavy -a: $k named kernel symbols" "$(grep '%' "$work/sys-report.out" | head)"
	fi
	perf_ok sys-script script -i "$work/sys.data" &&
		{ m=$(script_stats "$work/sys-script.out" | cut -d' ' -f1); [ "$m" = "$n" ] &&
			ok "syscall-heavy -a: perf script prints all $n samples" || fail "syscall-heavy -a: $m samples in perf script, want $n"; }
	check_header sys "$work/sys.data" "-a -o $work/sys.data ${cg:+--cgroup $cg }-- ${cgrun[*]:+${cgrun[*]} }dd"
else
	fail "syscall-heavy -a: rc=$rc" "$(cat "$work/sys.log")"
fi

# 3. System-wide for a fixed time with two hotcold processes running: they
# start just before the run (bpfprof -a needs no pid; the first samples may
# fall in their startup) and are killed as soon as it ends (10 s is a bound).
# They run in the cgroup (above); every check below judges only them anyway.
"$HOTCOLD" 10 &
bg+=($!)
"$HOTCOLD" 10 &
bg+=($!)
[ -n "$cg" ] && for p in "${bg[@]}"; do echo "$p" >"$cg/cgroup.procs"; done
"$BPFPROF" -a ${cg:+--cgroup "$cg"} -d 1 -F 999 -o "$work/all.data" >/dev/null 2>"$work/all.log"
rc=$?
ours=$(IFS=,; echo "${bg[*]}")
kill "${bg[@]}" 2>/dev/null
wait 2>/dev/null
bg=()
n=$(reported "$work/all.log")
if [ $rc -eq 0 ] && [ -n "$n" ]; then
	ok "-a -d 1: exit 0, $n samples"
	check_script all "$work/all.data" "$n" hotcold
	# the split is taken over our two processes' samples only (perf script: a header line per sample)
	check_split all "$work/all.data" total "$(awk -v p="$ours" 'BEGIN { split(p, pl, ","); want[pl[1]] = want[pl[2]] = 1 }
		/^[^ \t]/ && $1 == "hotcold" && ($2 in want) { n++ } END { print n + 0 }' "$work/all-script.out")"
	check_buildids all "$work/all.data"
	check_inject all "$work/all.data" "$n"
	if perf_ok all-pids report -i "$work/all.data" --stdio --no-children --comm hotcold --sort pid -g none; then
		np=0
		for p in ${ours//,/ }; do
			grep -qE "%.* $p:hotcold\$" "$work/all-pids.out" && np=$((np + 1))
		done
		[ "$np" -eq 2 ] && ok "-a -d 1: both hotcold processes reported (pids $ours)" ||
			fail "-a -d 1: $np of our hotcold pids ($ours)" "$(grep '%' "$work/all-pids.out" | head)"
	fi
else
	fail "-a -d 1: rc=$rc" "$(cat "$work/all.log")"
fi

finish

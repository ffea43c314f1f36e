#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Integration tests of where names come from for stripped code (issue 15),
# with the real BPF program on real processes:
#  - a stripped workload of ours (static hot_a/hot_b, about 70/30, only in its
#    debug file) named through a real debuginfod server (debuginfod -F over a
#    directory holding the debug file, in a network namespace of its own so
#    that it listens on that namespace's 127.0.0.1 only; bpfprof runs in it)
#    in the summary, the .folded and the .pb.gz (read by go tool pprof -top);
#    the second run from the client's cache, with no request in the server's
#    verbose log;
#  - a stopped server and one that accepts and never answers: the outputs are
#    delayed by at most the stated bound (deadline 5 s + 1.5 s) and keep
#    distinct DSO+0xADDR frames;
#  - a MiniDebugInfo binary (.gnu_debugdata made as Fedora's find-debuginfo
#    makes it) named with no debug file anywhere;
#  - the debug file in the build-id tree of the process's own mount
#    namespace (a container's root) only;
#  - Debian's xz -9 -T1: bpfprof -p and perf record on the same process at
#    the same time; the top rows are distinct liblzma.so.5.4.1+0xADDR frames
#    whose shares match perf report --sort dso,sym within 2 points;
#  - bad option values exit 2.
# Needs root (BPF, perf events, namespaces); skips, saying why, where the
# kernel refuses or a tool is missing. Leaves nothing outside its directory:
# the debuginfod client cache and perf's build-id cache live in it.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
BPFPROF=${BPFPROF:-$top/bpfprof}
TOL=${TOL:-7} # points around the workload's 70/30 split (a loaded 2-CPU machine)
XZ_TOL=${XZ_TOL:-2}
work=$(mktemp -d /tmp/bpfprof-dbg.XXXXXX)
bg=()
cleanup() {
	local p
	for p in "${bg[@]}"; do kill "$p" 2>/dev/null && kill -CONT "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
export PERF_BUILDID_DIR=$work/perf-buildid
export DEBUGINFOD_CACHE_PATH=$work/cache
unset DEBUGINFOD_URLS DEBUGINFOD_PROGRESS DEBUGINFOD_VERBOSE DEBUGINFOD_MAXSIZE

. "$(dirname "$0")/lib.bash"

require_bpf "debuginfo integration tests"
cd "$work" || exit 1

# --- bad options --------------------------------------------------------
for args in "--debuginfod=" "--debuginfod=ftp://x" "--debuginfod=http://x --no-debuginfod" \
	"--debuginfod-deadline=0" "--debuginfod-deadline=abc"; do
	# shellcheck disable=SC2086
	"$BPFPROF" $args -a -d 0.1 -o x.folded 2>bad.err
	rc=$?
	if [ $rc -eq 2 ] && grep -q "Try .bpfprof --help" bad.err; then
		ok "bad option '$args': exit 2 with a usage hint"
	else
		fail "bad option '$args': exit $rc" "$(cat bad.err)"
	fi
done

# --- the workloads -------------------------------------------------------
# hot_a and hot_b run the same loop (as tests/workload/hotcold.c), 7 and 3
# units a round: a 70/30 split. Sampled at 2999 Hz for 0.5 s, about 1 500
# samples on an idle CPU, 750 with half of one: the share's standard error
# (sqrt(0.21 / N)) is 1.2 to 1.7 points; check_named allows TOL (7) or four
# of them at the samples the run reports, when that is more.
cat >w.c <<'EOF'
#include <stdlib.h>
static volatile unsigned long sink;
/* a multiply chain: its speed does not depend on where the loop lies */
static __attribute__((noinline)) void hot_a(unsigned long n)
{
	unsigned long x = sink;
	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
}
static __attribute__((noinline)) void hot_b(unsigned long n)
{
	unsigned long x = sink;
	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
}
int main(void)
{
	/* rounds of random length, so that they cannot fall into step with the sampling timer */
	for (;;) {
		unsigned long unit = 50000 + (unsigned long)rand() % 100000;

		hot_a(7 * unit);
		hot_b(3 * unit);
	}
}
EOF
# stripw: stripped, no .gnu_debuglink, its debug file found by build-id only
if ! gcc -g -O0 -fno-omit-frame-pointer -Wl,--build-id w.c -o stripw 2>cc.err ||
	! objcopy --only-keep-debug stripw stripw.debug || ! strip --strip-all stripw; then
	fail "build the stripped workload" "$(cat cc.err)"
	finish
fi
id=$(readelf -n stripw | awk '/Build ID/ { print $3 }')
if [ ${#id} -ne 40 ] || readelf -SW stripw | grep -q " .symtab " || ! nm stripw.debug | grep -q ' t hot_a$'; then
	fail "stripped workload: want a 20-byte build-id, no symbols, hot_a local in the debug file" "id '$id'"
	finish
fi
ok "stripped workload: build-id $id, hot_a/hot_b only in stripw.debug"
# miniw: the same code with MiniDebugInfo, as find-debuginfo's add_minidebug does it
cp w.c m.c
if gcc -g -O0 -fno-omit-frame-pointer -Wl,--build-id m.c -o miniw 2>cc.err &&
	objcopy --only-keep-debug miniw miniw.full && strip --strip-all miniw &&
	nm -D miniw --format=posix --defined-only | awk '{ print $1 }' | sort >miniw.dyn &&
	nm miniw.full --format=sysv --defined-only |
	awk -F '|' '{ if ($4 ~ "FUNC") { sub(/ +$/, "", $1); print $1 } }' | sort >miniw.funcs &&
	comm -13 miniw.dyn miniw.funcs >miniw.keep &&
	objcopy -S --remove-section .gdb_index --remove-section .comment --keep-symbols=miniw.keep \
		miniw.full miniw.mini && xz -f miniw.mini &&
	objcopy --add-section .gnu_debugdata=miniw.mini.xz miniw && ! readelf -SW miniw | grep -q " .symtab "; then
	ok "MiniDebugInfo workload: .gnu_debugdata of $(stat -c %s miniw.mini.xz) bytes, no .symtab"
else
	fail "build the MiniDebugInfo workload" "$(cat cc.err)"
fi

start_bg() { # start_bg CMD...: run in the background, remembered for cleanup; sets $pid
	"$@" &
	pid=$!
	bg+=("$pid")
}
# (a stopped process gets its SIGTERM once continued)
stop_bg() { kill "$1" 2>/dev/null && kill -CONT "$1" 2>/dev/null; wait "$1" 2>/dev/null; }

# Workloads spin only while sampled: start_w NAME CMD... starts CMD (which
# execs NAME) and stops it (SIGSTOP) once it runs NAME (lib.bash wait_exec);
# sampled W D CMD... runs CMD, a bpfprof -p W -d D, continues W once a
# process of CMD has its perf events open (bpfprof's last step before
# sampling) and stops it again D seconds later: W stays alive, its maps and
# root readable, while bpfprof symbolizes, fetches or waits. Polled, 10 s at
# most.
tree() { # PID and every process under it
	local c
	echo "$1"
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do tree "$c"; done
}
wait_perf_events() {
	local i p
	for ((i = 0; i < 1000; i++)); do
		for p in $(tree "$1"); do
			ls -l "/proc/$p/fd" 2>/dev/null | grep -q 'anon_inode:\[perf_event\]' && return 0
		done
		sleep 0.01
	done
	return 1
}
start_w() {
	local name=$1
	shift
	start_bg "$@"
	wait_exec "$pid" "$name"
	kill -STOP "$pid"
}
sampled() {
	local w=$1 d=$2 p
	shift 2
	"$@" &
	p=$!
	wait_perf_events "$p"
	kill -CONT "$w"
	sleep "$d"
	kill -STOP "$w"
	wait "$p"
}

# Share of NAME [dso] in a summary (bpfprof's stderr), in percent; empty if absent.
share() { awk -v f="$2" '$3 == f { sub("%", "", $1); print $1; exit }' "$1"; }
# Frames of the form DSO+0xADDR in a .folded file, distinct.
addr_frames() { tr ';' '\n' <"$1" | sed 's/ [0-9]*$//' | grep -E "^$2\+0x[0-9a-f]+$" | sort -u | wc -l; }

check_named() { # check_named WHAT LOG FOLDED: hot_a/hot_b in the summary and the .folded, split kept
	local a b n tol
	a=$(share "$2" hot_a)
	b=$(share "$2" hot_b)
	# TOL, or four standard deviations of a 30 % share at the samples reported
	# when that is more (as lib.bash split_tol); nothing under 50 samples
	n=$(sed -n 's/^bpfprof: [0-9.]* s, \([0-9]*\) samples.*/\1/p' "$2" | head -1)
	tol=$(awk -v n="${n:-0}" -v base="$TOL" 'BEGIN { if (n < 50) exit; t = 4 * 100 * sqrt(0.21 / n)
		printf "%.1f", (t > base ? t : base) }')
	if [ -n "$tol" ] && near "$a" 70 "$tol" && near "$b" 30 "$tol"; then
		ok "$1: summary names hot_a $a %, hot_b $b % (70/30 ± $tol, $n samples)"
	else
		fail "$1: summary split hot_a '$a' hot_b '$b' (± '$tol' at '$n' samples: empty under 50)" "$(grep -v '^bpfprof: wrote' "$2" | head -8)"
	fi
	if grep -q ';hot_a [0-9]' "$3" && grep -q ';hot_b [0-9]' "$3" && ! grep -q 'stripw+0x\|miniw+0x' "$3"; then
		ok "$1: .folded names hot_a and hot_b, no unnamed frame of the workload"
	else
		fail "$1: .folded" "$(head -5 "$3")"
	fi
}

# --- a real debuginfod server ---------------------------------------------
have_srv=1
command -v debuginfod >/dev/null || { have_srv=; skip "debuginfod server tests" "debuginfod not installed (tools/install-deps.sh)"; }
if [ -n "$have_srv" ]; then
	mkdir srv && cp stripw.debug srv/
	port=8002
	# its own network namespace: the server listens on that namespace's loopback only
	start_bg unshare -n -- sh -c "ip link set lo up && exec debuginfod -F -v -p $port -d '$work/db.sqlite' -t 0 -g 0 '$work/srv'" >srv.log 2>&1
	srv=$pid
	url=http://127.0.0.1:$port
	innet() { nsenter -t "$srv" -n -- "$@"; }
	ready=
	for _ in $(seq 100); do
		if innet curl -sf -o /dev/null "$url/buildid/$id/debuginfo" 2>/dev/null; then
			ready=1
			break
		fi
		sleep 0.1
	done
	if [ -z "$ready" ]; then
		fail "debuginfod server did not serve $id within 10 s" "$(tail -5 srv.log)"
		have_srv=
	else
		ok "debuginfod -F serves stripw.debug on 127.0.0.1:$port (private network namespace)"
	fi
fi
requests() { grep -c "GET /buildid/$id/debuginfo" srv.log; }

if [ -n "$have_srv" ]; then
	before=$(requests)
	start_w stripw ./stripw
	w=$pid
	sampled "$w" 0.5 innet env DEBUGINFOD_URLS="$url" "$BPFPROF" -p "$w" -F 2999 -d 0.5 -o s1.folded -o s1.pb.gz 2>s1.log
	rc=$?
	stop_bg "$w"
	after=$(requests)
	if [ $rc -eq 0 ] && [ $((after - before)) -eq 1 ]; then
		ok "first run: one request for $id in the server's log"
	else
		fail "first run: exit $rc, $((after - before)) requests" "$(tail -5 s1.log)"
	fi
	check_named "debuginfod" s1.log s1.folded
	if command -v go >/dev/null; then
		if go tool pprof -top s1.pb.gz >s1.top 2>s1.perr && grep -qE ' hot_a$' s1.top && grep -qE ' hot_b$' s1.top &&
			! grep -qiE 'error|fail' s1.perr; then
			ok "debuginfod: go tool pprof -top names hot_a and hot_b"
		else
			fail "debuginfod: go tool pprof -top" "$(head -12 s1.top)" "$(head -3 s1.perr)"
		fi
	else
		skip "go tool pprof -top of the debuginfod run" "go not installed"
	fi
	if [ -s "$DEBUGINFOD_CACHE_PATH/$id/debuginfo" ] && cmp -s "$DEBUGINFOD_CACHE_PATH/$id/debuginfo" stripw.debug; then
		ok "the client's cache (DEBUGINFOD_CACHE_PATH) holds the debug file"
	else
		fail "no debug file in $DEBUGINFOD_CACHE_PATH/$id" "$(ls -R "$DEBUGINFOD_CACHE_PATH" | head)"
	fi

	# second run: from the cache, no request
	before=$(requests)
	start_w stripw ./stripw
	w=$pid
	sampled "$w" 0.5 innet env DEBUGINFOD_URLS="$url" "$BPFPROF" -p "$w" -F 2999 -d 0.5 -o s2.folded 2>s2.log
	stop_bg "$w"
	after=$(requests)
	if [ "$after" -eq "$before" ]; then
		ok "second run: no request in the server's log ($after in all)"
	else
		fail "second run asked the server again: $((after - before)) requests"
	fi
	check_named "debuginfod, cached" s2.log s2.folded

	# the server stopped: refused connections, frames stay DSO+0xADDR
	stop_bg "$srv"
	export DEBUGINFOD_CACHE_PATH=$work/cache-stopped
	# the checks below need a few distinct addresses: 0.3 s at 999 Hz gives
	# about 300 samples (a few dozen would do)
	start_w stripw ./stripw
	w=$pid
	t0=$(date +%s.%N)
	DEBUGINFOD_URLS=http://127.0.0.1:9 sampled "$w" 0.3 "$BPFPROF" -p "$w" -F 999 -d 0.3 -o s3.folded -o s3.pb.gz 2>s3.log
	t1=$(date +%s.%N)
	stop_bg "$w"
	n=$(addr_frames s3.folded stripw)
	if [ "$n" -ge 4 ] && ! grep -q 'hot_a' s3.folded && grep -q 'stripw+0x' s3.log; then
		ok "stopped server: $n distinct stripw+0xADDR frames in .folded and the summary, in $(echo "$t1 - $t0" | bc) s"
	else
		fail "stopped server: $n stripw+0x frames" "$(head -5 s3.folded)" "$(head -8 s3.log)"
	fi
	# pprof: locations with address and mapping, no function: its address view keeps them apart
	if command -v go >/dev/null; then
		n=$(go tool pprof -symbolize=none -top -addresses s3.pb.gz 2>/dev/null | grep -cE '^ .* [0-9a-f]{8,} \[stripw\]$')
		if [ "$n" -ge 4 ]; then
			ok "stopped server: go tool pprof -top -addresses lists $n distinct stripw addresses"
		else
			fail "stopped server: go tool pprof -addresses" "$(go tool pprof -symbolize=none -top -addresses s3.pb.gz 2>&1 | sed -n 6,12p)"
		fi
	fi
fi

# a server that accepts and never answers: the delay against --no-debuginfod
export DEBUGINFOD_CACHE_PATH=$work/cache-dead
cat >hole.py <<'EOF'
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(64)
print(s.getsockname()[1], flush=True)
time.sleep(120)
EOF
start_bg python3 hole.py >hole.port
hole=$pid
for _ in $(seq 50); do [ -s hole.port ] && break; sleep 0.1; done
# (the workload sampled 0.3 s a run, stopped while the second waits)
start_w stripw ./stripw
w=$pid
t0=$(date +%s.%N)
sampled "$w" 0.3 "$BPFPROF" --no-debuginfod -p "$w" -F 999 -d 0.3 -o s4.folded 2>s4.log
t1=$(date +%s.%N)
DEBUGINFOD_URLS=http://127.0.0.1:$(cat hole.port) sampled "$w" 0.3 "$BPFPROF" -p "$w" -F 999 -d 0.3 -o s5.folded 2>s5.log
t2=$(date +%s.%N)
stop_bg "$w"
stop_bg "$hole"
base=$(echo "$t1 - $t0" | bc)
dead=$(echo "$t2 - $t1" | bc)
delay=$(echo "$dead - $base" | bc)
# stated bound: 5 s deadline + 1.5 s grace; 0.5 s more for a loaded machine
if awk -v d="$delay" 'BEGIN { exit !(d >= 4 && d <= 7.0) }' && grep -q 'no answer for .*stripw' s5.log; then
	ok "silent server: outputs delayed by $delay s (run $dead s against $base s with --no-debuginfod; bound 6.5 s)"
else
	fail "silent server: delay $delay s (run $dead s, baseline $base s)" "$(grep -v '^ ' s5.log | head -5)"
fi
n4=$(addr_frames s4.folded stripw)
n5=$(addr_frames s5.folded stripw)
if [ "$n4" -ge 4 ] && [ "$n5" -ge 4 ]; then
	ok "--no-debuginfod and the silent server: $n4 and $n5 distinct stripw+0xADDR frames"
else
	fail "distinct stripw+0xADDR frames: $n4 and $n5" "$(head -3 s5.folded)"
fi

# --- bad answers: another build's debug file, a truncated one (file:// URLs) ---------
for bad in other truncated; do
	export DEBUGINFOD_CACHE_PATH=$work/cache-$bad
	mkdir -p "files-$bad/buildid/$id"
	if [ $bad = other ]; then
		cp miniw.full "files-$bad/buildid/$id/debuginfo"
		want="refused: build-id"
	else
		head -c $(($(stat -c %s stripw.debug) / 2)) stripw.debug >"files-$bad/buildid/$id/debuginfo"
		want="refused"
	fi
	start_w stripw ./stripw
	w=$pid
	# on a terminal (script's pty) for the progress line
	sampled "$w" 0.3 script -qec "'$BPFPROF' --debuginfod 'file://$work/files-$bad' -p $w -F 999 -d 0.3 -o b.folded" b.log >/dev/null
	stop_bg "$w"
	n=$(addr_frames b.folded stripw)
	if grep -q "debug file '$DEBUGINFOD_CACHE_PATH/$id/debuginfo' $want" b.log && [ "$n" -ge 4 ] &&
		! grep -q hot_a b.folded; then
		ok "debuginfod answer of $bad debug file: refused with a warning naming it, $n stripw+0xADDR frames"
	else
		fail "debuginfod answer of $bad debug file" "$(grep -v '^ ' b.log | head -5)"
	fi
	if grep -q 'fetching debug info (debuginfod): 0 of 1 files' b.log; then
		ok "on a terminal: a progress line while fetching"
	else
		fail "no progress line on a terminal" "$(tr '\r' '\n' <b.log | head -3)"
	fi
done

# --- MiniDebugInfo ------------------------------------------------------------
if [ -x miniw ]; then
	start_w miniw ./miniw
	w=$pid
	sampled "$w" 0.5 "$BPFPROF" --no-debuginfod -p "$w" -F 2999 -d 0.5 -o m.folded 2>m.log
	stop_bg "$w"
	check_named "MiniDebugInfo" m.log m.folded
fi

# --- the process's own root: its build-id tree only ---------------------------------
mkdir -p "croot/.build-id/${id:0:2}" && cp stripw.debug "croot/.build-id/${id:0:2}/${id:2}.debug"
if unshare -m --propagation private true 2>/dev/null; then
	start_w stripw unshare -m --propagation private -- sh -c "mount --bind '$work/croot' /usr/lib/debug && exec ./stripw"
	w=$pid
	if [ -e "/proc/$w/root/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" ] &&
		[ ! -e "/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" ]; then
		sampled "$w" 0.5 "$BPFPROF" --no-debuginfod -p "$w" -F 2999 -d 0.5 -o c.folded 2>c.log
		check_named "container root's build-id tree" c.log c.folded
	else
		fail "mount namespace: the debug file is not (only) in the process's root"
	fi
	stop_bg "$w"
else
	skip "container root's build-id tree" "unshare -m refused"
fi

# --- Debian's xz: bpfprof and perf record on the same process at once -----------------
if ! command -v perf >/dev/null || ! command -v xz >/dev/null; then
	skip "xz against perf" "perf or xz missing"
	finish
fi
lib=$(ldd "$(command -v xz)" | awk '/liblzma/ { print $3 }')
lib=$(readlink -f "$lib")
dso=$(basename "$lib")
# 8 MB of text that keeps xz -9 busy past the 3 s it runs (1.3 MB/s measured
# on one idle CPU): numbers and words
awk 'BEGIN { srand(7); for (i = 0; i < 200000; i++) printf "%d %s %d lorem ipsum %x\n", i, (rand() < .5 ? "dolor" : "sit amet"), int(rand() * 100000), i * 2654435761 % 4294967296 }' >text
start_bg xz -9 -T1 -c text >/dev/null
xzp=$pid
sleep 0.2 # past xz's start-up, into the compression
kill -STOP "$xzp"
# Both at 10 000 Hz on the same process at the same time: xz is stopped
# until both have their events open, runs 2 s, is stopped again, and both
# are ended by SIGINT: the two see the same 2 s of xz, 20 000 samples each
# on an idle CPU, 10 000 while xz gets half of one. The two
# samplers' timers are independent, so each row's share is its own binomial
# estimate of the same true share: standard error sqrt(p(1-p)/n), 0.3 points
# at p = 0.24 (the top row) and n = 20 000, and the difference of the two
# sqrt(p(1-p)(1/n1 + 1/n2)), 0.43 points. A row may differ by XZ_TOL (2)
# points, or four standard deviations of the difference at the samples the
# two runs took when that is more (2.4 points for the top row at 10 000 each).
# (At 99 Hz for 3 s, 150 samples, the difference would have a standard error
# of 5 points: hence the rate.)
perf record -N -F 10000 -p "$xzp" -o perf.data >perf.rec.log 2>&1 &
perfp=$!
"$BPFPROF" -F 10000 -p "$xzp" --no-debuginfod --top 8 -o xz.folded 2>xz.log &
bpfp=$!
wait_perf_events "$perfp"
wait_perf_events "$bpfp"
kill -CONT "$xzp"
sleep 2
kill -STOP "$xzp"
kill -INT "$perfp" "$bpfp"
wait "$perfp"
wait "$bpfp"
rc=$?
stop_bg "$xzp"
[ $rc -eq 0 ] || fail "xz: bpfprof exit $rc" "$(head -5 xz.log)"
perf report -i perf.data --sort dso,sym --stdio 2>perf.rep.err |
	awk -v d="$dso" '$2 == d && $3 == "[.]" { sub("%", "", $1); a = $4; sub(/^0x0*/, "", a); print d "+0x" a, $1 }' >perf.rows
awk -v d="$dso" '$4 == "[" d "]" { sub("%", "", $1); print $3, $1 }' xz.log >bpf.rows
nb=$(grep -c "^$dso+0x" bpf.rows)
if [ "$nb" -ge 3 ]; then
	ok "xz: the summary's top rows are $nb distinct $dso+0xADDR frames"
else
	fail "xz: want distinct $dso+0xADDR rows" "$(grep -v '^bpfprof: wrote' xz.log | head -10)"
fi
# every bpfprof top row of 3 % or more against perf's row for the same address
nbs=$(sed -n 's/^bpfprof: [0-9.]* s, \([0-9]*\) samples.*/\1/p' xz.log | head -1)
nps=$(perf report -i perf.data --stats 2>/dev/null | awk '$1 == "SAMPLE" && $2 == "events:" { print $3; exit }')
cmp_rows=0 bad_rows=()
while read -r frame pct; do
	awk -v p="$pct" 'BEGIN { exit !(p >= 3) }' || continue
	pp=$(awk -v f="$frame" '$1 == f { print $2; exit }' perf.rows)
	tol=$(awk -v p="$pct" -v n1="${nbs:-0}" -v n2="${nps:-0}" -v base="$XZ_TOL" 'BEGIN { if (n1 < 1000 || n2 < 1000) exit
		p /= 100; t = 4 * 100 * sqrt(p * (1 - p) * (1 / n1 + 1 / n2)); printf "%.1f", (t > base ? t : base) }')
	cmp_rows=$((cmp_rows + 1))
	[ -n "$tol" ] && near "$pct" "${pp:-0}" "$tol" ||
		bad_rows+=("$frame: bpfprof $pct %, perf ${pp:-absent} % (± '$tol' at $nbs and $nps samples: empty under 1000)")
	echo "$frame bpfprof $pct perf ${pp:-absent} ±$tol" >>xz.cmp
done <bpf.rows
if [ "$cmp_rows" -ge 2 ] && [ ${#bad_rows[@]} -eq 0 ]; then
	ok "xz: $cmp_rows rows of 3 % or more match perf report --sort dso,sym ($nbs and $nps samples): $(tr '\n' ';' <xz.cmp)"
else
	fail "xz: rows against perf report ($cmp_rows compared)" "${bad_rows[@]}" "$(head -8 perf.rows)"
fi

finish

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# User stacks of code built without frame pointers (--call-graph dwarf, the
# default: unwind tables from .eh_frame walked in BPF), each against
# `perf record --call-graph dwarf` on the same process at the same time:
#
#  - Debian's xz (-9 -T1), Debian's /usr/bin/python3.11 running a recursive
#    fib, and tests/workload/nofp (ours: -O2 -fomit-frame-pointer, known
#    callers, a signal handler, a PLT call into its own shared library, a
#    thread), each profiled by bpfprof -p and by perf record -p;
#  - both perf.data files go through the same reader, `perf script`, and a
#    sample "reaches the end of the stack" when its outermost user frame is
#    _start (named, or at the executable's entry point when the file is
#    stripped) or clone3 (a thread): bpfprof must reach it in at least 99 %
#    of its samples wherever perf reaches it in at least 99 % of its own
#    (else no more than 1 point below perf);
#  - --check-unwind: some of bpfprof's stacks are copied with their registers
#    and unwound again with libdwfl (as perf report does): 0 may differ;
#  - nofp's known callers in the folded stacks, the signal handler's stack
#    through __restore_rt into the interrupted code and on to _start;
#  - main-side frames above the hot functions in perf report, go tool pprof
#    and the flame graph;
#  - nofp again, built by clang-14 and linked by GNU gold, which type
#    .eh_frame SHT_X86_64_UNWIND (checked with readelf -S) as in Debian's
#    LLVM: the same pair, and at least 99 % of bpfprof's samples must reach
#    the end of the stack whatever perf's share;
#  - the same workload in a container (a mount and pid namespace, binary on
#    a tmpfs only it sees);
#  - --max-stack: a 400-deep recursion stops at 127 frames by default, and
#    reaches _start with --max-stack 512;
#  - --call-graph fp still gives the frame-pointer walk (1-2 frames on xz),
#    on the same xz process while the pair runs.
#
# Sampled data: 999 Hz (perf's limit if lower) for 1 s per pair (0.5 s for
# python and gold, to keep make test within 7 minutes: half the samples,
# still ten times the 50 a profile needs), 0.5 s in the container: about 1,000 samples a thread on an idle CPU, 300-500
# on a loaded one (the checks count what was collected: at least 50 a
# profile, 5 a leaf). A workload is started just before its profile, polled until it runs
# its own code (past the loader), and killed (SIGKILL) right after. The 99 %
# bound leaves room for the samples taken while the loader maps a library:
# none in these -p runs.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
BPFPROF=${BPFPROF:-$top/bpfprof}
NOFP=${NOFP:-$top/.output/workload/nofp}
NOFP_GOLD=${NOFP_GOLD:-$top/.output/workload/gold/nofp}
work=$(mktemp -d /tmp/bpfprof-unwind.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
# bpfprof fills perf's build-id cache ($HOME/.debug) for perf.data, as perf record does: keep it in $work
mkdir -p "$work/home"
export PPROF_TMPDIR=$work/pprof HOME=$work/home

. "$(dirname "$0")/lib.bash"
require_bpf "unwinding code without frame pointers"
if ! command -v perf >/dev/null; then
	skip "unwinding against perf" "perf (linux-perf) not installed"
	finish
fi

# 999 Hz, or the kernel's limit (kernel.perf_event_max_sample_rate) where lower
F=$(awk '{ print $1 < 999 ? $1 : 999 }' /proc/sys/kernel/perf_event_max_sample_rate 2>/dev/null)
F=${F:-999}

# ready PID CMD...: poll every 20 ms (10 s at most) until CMD succeeds; fails if PID is gone
ready() {
	local pid=$1 i
	shift
	for ((i = 0; i < 500; i++)); do
		"$@" 2>/dev/null && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.02
	done
	return 1
}
# threads PID: PID runs main (it started its second thread)
threads() { [ "$(ls "/proc/$1/task" | wc -l)" -ge 2 ]; }
# stop PID: SIGKILL a workload and reap it (no job notice)
stop() { kill -KILL "$1" 2>/dev/null; wait "$1" 2>/dev/null; }

# pair NAME PID SECONDS [HZ]: bpfprof and perf record --call-graph dwarf on PID at the same time
pair() {
	local name=$1 pid=$2 secs=$3 hz=${4:-$F}
	"$BPFPROF" -v --check-unwind -F "$hz" -d "$secs" -p "$pid" -o "$work/$name.data" -o "$work/$name.folded" \
		-o "$work/$name.prof" -o "$work/$name.pb.gz" -o "$work/$name.svg" >"$work/$name.log" 2>&1 &
	local bp=$!
	perf record -q --call-graph dwarf -F "$hz" -p "$pid" -o "$work/$name.perf.data" -- sleep "$secs" \
		>"$work/$name.perf.log" 2>&1
	wait $bp
}


# compare NAME EXE: bpfprof's share of complete stacks against perf's, same run
compare() {
	local name=$1 exe=$2 b p bn pn
	read -r b bn <<<"$(ends "$work/$name.data" "$exe")"
	read -r p pn <<<"$(ends "$work/$name.perf.data" "$exe")"
	if [ "${bn:-0}" -lt 50 ] || [ "${pn:-0}" -lt 50 ]; then
		fail "$name: too few samples (bpfprof $bn, perf $pn)" "$(tail -5 "$work/$name.log")"
		return
	fi
	if awk -v b="$b" -v p="$p" 'BEGIN { exit !((p >= 99 && b >= 99) || (p < 99 && b >= p - 1)) }'; then
		ok "$name: $b % of $bn bpfprof stacks reach _start/clone3; perf --call-graph dwarf $p % of $pn"
	else
		fail "$name: $b % of bpfprof's stacks reach the end, perf's $p %" "$(grep 'user stack' "$work/$name.log")"
	fi
	# --check-unwind: every 4th stack copied and unwound again by libdwfl, as perf report does
	local line n same diff
	line=$(grep "BPF unwinds against libdwfl's" "$work/$name.log")
	read -r n same diff <<<"$(echo "$line" | sed -n 's/.*(\([0-9]*\) stacks checked): \([0-9]*\) identical, .* \([0-9]*\) different, .*/\1 \2 \3/p')"
	if [ -n "$diff" ] && [ "$diff" -eq 0 ] && [ "${n:-0}" -ge 5 ] && [ "$same" -ge $((n * 9 / 10)) ]; then
		ok "$name: --check-unwind: $same of $n BPF walks identical to libdwfl's, 0 different"
	else
		fail "$name: --check-unwind" "${line:-no check line}"
	fi
	if [ -s "$work/script.err" ] && grep -v 'no symbols found' "$work/script.err" | grep -q .; then
		fail "$name: perf script warned" "$(head -3 "$work/script.err")"
	fi
}

# folded_share FILE LEAF CHAIN: % of samples with leaf LEAF whose frames end with ;CHAIN
folded_share() {
	awk -v leaf="$2" -v chain="$3" '{ n = $NF; s = substr($0, 1, length($0) - length(n) - 1);
		k = split(s, fr, ";"); user = ""; for (i = 2; i <= k; i++) if (fr[i] !~ /_\[k\]$/) user = user ";" fr[i];
		m = split(user, u, ";"); if (u[m] != leaf) next; t += n;
		if (substr(user, length(user) - length(chain)) == ";" chain) v += n }
		END { printf "%.1f %d\n", t ? 100 * v / t : 0, t }' "$1"
}

# --- xz, and --call-graph fp on it at the same time --------------------------
# 13 MB of text: about 10 s of xz -9 here, 3 times what the profiles need
seq 1 400000 | awk '{ print $1, $1 * 7919 % 100003, "the quick brown fox" }' >"$work/text"
xz -9 -T1 -c <"$work/text" >/dev/null &
xzp=$!
pids+=("$xzp")
# ready once xz has read some of its input (fd 0's offset): its main runs
ready "$xzp" awk '/^pos:/ { exit !($2 > 0) }' "/proc/$xzp/fdinfo/0" || fail "xz: did not start reading"
"$BPFPROF" -v --call-graph fp -F "$F" -d 1 -p "$xzp" -o "$work/fp.folded" >"$work/fp.log" 2>&1 &
fpp=$!
pair xz "$xzp" 1
wait "$fpp"
stop "$xzp"
compare xz /usr/bin/xz
perf report -i "$work/xz.data" --stdio -G --no-children >"$work/xz.report" 2>"$work/report.err"
if awk '/---/ { s = 1 } s && /__libc_start_main/ { m = 1 } s && m && /lzma_code/ { x = 1 } /^$/ { s = m = 0 } END { exit !x }' \
	"$work/xz.report" && ! grep -qiE 'warning|error' "$work/report.err"; then
	ok "xz: perf report on bpfprof's perf.data shows __libc_start_main above liblzma"
else
	fail "xz: perf report callchains" "$(head -3 "$work/report.err")"
fi

# --- python3.11 ----------------------------------------------------------
cat >"$work/fib.py" <<'EOF'
import sys, time
def fib(n): return n if n < 2 else fib(n - 1) + fib(n - 2)
open(sys.argv[1], "w").close()
t = time.time()
while time.time() - t < 20: fib(22)
EOF
# Debian's interpreter by its path: PATH may name another build (pyenv's, with
# its symbols in a libpython) ahead of it
PY=${PY:-/usr/bin/python3.11}
"$PY" "$work/fib.py" "$work/fib.ready" &
pyp=$!
pids+=("$pyp")
ready "$pyp" test -e "$work/fib.ready" || fail "python3.11: did not start"
pair python "$pyp" 0.5
stop "$pyp"
compare python "$(readlink -f "$PY")"
# Debian's binary is stripped: its names are .dynsym's, which bpfprof reads
# and writes into the pprof protobuf and the flame graph (go tool pprof names
# a .prof's addresses from .symtab only: nothing here)
go tool pprof -traces "$work/python.pb.gz" 2>"$work/pprof.err" >"$work/python.traces"
if awk '/_PyEval_EvalFrameDefault/ { h = 1 } /Py_BytesMain/ && h { x = 1 } /^-+\+/ { h = 0 } END { exit !x }' \
	"$work/python.traces" && ! grep -v '^Main binary filename not available' "$work/pprof.err" | grep -q . &&
	grep -q 'Py_BytesMain' "$work/python.svg" && grep -q '_PyEval_EvalFrameDefault' "$work/python.svg"; then
	ok "python3.11: go tool pprof (.pb.gz) and the flame graph show Py_BytesMain above the interpreter loop"
else
	fail "python3.11: Py_BytesMain above the interpreter loop" "$(head -3 "$work/pprof.err")" \
		"$(grep -m3 -B2 -A12 '^-' "$work/python.traces" | head -20)"
fi

# --- nofp: ours, known callers --------------------------------------------
# SIGALRM every 5 ms, not 20: the handler gets about 10 % of the main thread
"$NOFP" 20 5000 &
np=$!
pids+=("$np")
ready "$np" threads "$np" || fail "nofp: did not start"
pair nofp "$np" 1
stop "$np"
compare nofp "$NOFP"
for c in "hot_a main;run;via_x;hot_a" "hot_b main;run;via_y;hot_b" "lib_hot main;run;via_lib;lib_hot" \
	"hot_t worker;via_t;hot_t" "hot_sig on_alarm;hot_sig"; do
	read -r leaf chain <<<"$c"
	read -r share n <<<"$(folded_share "$work/nofp.folded" "$leaf" "$chain")"
	if [ "${n:-0}" -ge 5 ] && awk -v s="$share" 'BEGIN { exit !(s >= 98) }'; then
		ok "nofp: $share % of $n $leaf samples have callers $chain"
	elif [ "${n:-0}" -lt 5 ] && [ "$leaf" = hot_sig ]; then
		skip "nofp: signal handler callers" "only ${n:-0} samples in the handler"
	else
		fail "nofp: $leaf callers: $share % of $n are $chain" "$(grep ";$leaf " "$work/nofp.folded" | sort -t' ' -k2 -nr | head -3)"
	fi
done
# the handler's stack goes on through the signal frame into the interrupted code and to the
# end of the stack: main's (_start ... main;run, anywhere below: a hot function, its caller,
# clock_gettime) or the worker thread's (clone3 ... worker;via_t), which takes the
# process-directed SIGALRM while the main thread has one pending. A signal is delivered on the
# way back to user mode, so on a loaded machine also where a preempted thread resumes.
if awk '/on_alarm;hot_sig [0-9]+$/ { t += $NF
	if ($0 ~ /^nofp;(_start;.*;main;run;|__clone3;start_thread;worker;via_t;).*;on_alarm;hot_sig /) v += $NF }
	END { exit !(t == 0 || v >= 0.98 * t) }' "$work/nofp.folded"; then
	ok "nofp: signal handler stacks continue through __restore_rt into the interrupted frame and to _start/clone3"
else
	fail "nofp: signal handler stacks" "$(grep 'on_alarm;hot_sig' "$work/nofp.folded" | head -3)"
fi

# --- nofp by clang-14 and gold: .eh_frame typed SHT_X86_64_UNWIND ----------
gold_lib=$(dirname "$NOFP_GOLD")/libnofp_lib.so
if [ ! -x "$NOFP_GOLD" ]; then
	fail "nofp (clang-14, gold): $NOFP_GOLD not built (make all)"
elif ! readelf -SW "$NOFP_GOLD" "$gold_lib" | awk '$2 == ".eh_frame" && $3 == "X86_64_UNWIND" { n++ } END { exit n != 2 }'; then
	fail "nofp (clang-14, gold): .eh_frame is not SHT_X86_64_UNWIND in both files" \
		"$(readelf -SW "$NOFP_GOLD" "$gold_lib" | grep -E '^File|eh_frame ')"
else
	"$NOFP_GOLD" 20 5000 &
	gp=$!
	pids+=("$gp")
	ready "$gp" threads "$gp" || fail "nofp (clang-14, gold): did not start"
	pair gold "$gp" 0.5
	stop "$gp"
	compare gold "$NOFP_GOLD"
	read -r b bn <<<"$(ends "$work/gold.data" "$NOFP_GOLD")"
	if awk -v b="$b" 'BEGIN { exit !(b >= 99) }'; then
		ok "nofp (clang-14, gold): .eh_frame SHT_X86_64_UNWIND in both files; $b % of $bn bpfprof stacks complete"
	else
		fail "nofp (clang-14, gold): $b % of $bn bpfprof stacks complete, under 99 %" \
			"$(grep -E 'user stack|unwind tables' "$work/gold.log")"
	fi
	read -r share n <<<"$(folded_share "$work/gold.folded" lib_hot "main;run;via_lib;lib_hot")"
	if [ "${n:-0}" -ge 5 ] && awk -v s="$share" 'BEGIN { exit !(s >= 98) }'; then
		ok "nofp (clang-14, gold): $share % of $n lib_hot samples have callers main;run;via_lib;lib_hot"
	else
		fail "nofp (clang-14, gold): lib_hot callers: $share % of $n" "$(grep ';lib_hot ' "$work/gold.folded" | sort -t' ' -k2 -nr | head -3)"
	fi
fi

# --- a container: binary on a tmpfs only its mount namespace sees ----------
if command -v unshare >/dev/null; then
	mkdir -p "$work/ctr/mnt"
	# nofp is the namespace's init, which ignores SIGTERM: SIGKILL it, and
	# --kill-child takes it down with unshare
	unshare --mount --pid --fork --kill-child --propagation private bash -c "mount -t tmpfs none '$work/ctr/mnt' &&
		cp '$NOFP' '$(dirname "$NOFP")/libnofp_lib.so' '$work/ctr/mnt/' && exec '$work/ctr/mnt/nofp' 20" 2>"$work/ctr.err" &
	ush=$!
	pids+=("$ush")
	cp=
	for _ in $(seq 250); do
		cp=$(pgrep -f "^$work/ctr/mnt/nofp" | head -1)
		[ -n "$cp" ] && break
		sleep 0.02
	done
	if [ -n "$cp" ] && ready "$cp" threads "$cp"; then
		"$BPFPROF" -F "$F" -d 0.5 -p "$cp" -o "$work/ctr.folded" >"$work/ctr.log" 2>&1
		kill -KILL "$cp" 2>/dev/null
		wait "$ush" 2>/dev/null
		read -r share n <<<"$(folded_share "$work/ctr.folded" hot_a "main;run;via_x;hot_a")"
		if grep -qv '^nofp;_start;' < <(grep ';hot_a ' "$work/ctr.folded"); then
			share="$share (but not all from _start)"
			n=0
		fi
		if [ "${n:-0}" -ge 5 ] && awk -v s="$share" 'BEGIN { exit !(s >= 98) }'; then
			ok "container: $share % of $n hot_a stacks complete, _start to hot_a"
		else
			fail "container: $share % of $n hot_a stacks complete" "$(sort -t' ' -k2 -nr "$work/ctr.folded" | head -3)"
		fi
	else
		fail "container: workload did not start"
	fi
else
	skip "container" "unshare not installed"
fi

# --- --max-stack: a 400-deep recursion without frame pointers ----------------
cat >"$work/deep.c" <<'EOF'
#include <stdlib.h>
__attribute__((noinline)) long rec(int n, long x)
{
	if (!n) {
		for (long i = 0; i < 2000000; i++)
			x = x * 31 + i;
		return x;
	}
	return rec(n - 1, x + n) + 1; /* not a tail call */
}
int main(int argc, char **argv)
{
	long s = 0;
	for (;;)
		s += rec(atoi(argv[1]), s);
}
EOF
if gcc -O1 -fomit-frame-pointer -o "$work/deep" "$work/deep.c" 2>"$work/deep.err"; then
	"$work/deep" 400 &
	dp=$!
	pids+=("$dp")
	ready "$dp" awk '/^Rss:/ { exit 0 } END { exit 1 }' "/proc/$dp/smaps_rollup"
	"$BPFPROF" -v -F "$F" -d 0.5 -p "$dp" -o "$work/deep127.folded" >"$work/deep127.log" 2>&1
	"$BPFPROF" -v -F "$F" -d 0.5 --max-stack 512 -p "$dp" -o "$work/deep512.folded" >"$work/deep512.log" 2>&1
	stop "$dp"
	# deep FOLDED: "SHARE FRAMES SAMPLES": % of stacks from _start, mean user frames
	# (a few samples fall in main between two recursions: short, complete stacks)
	deep() { awk '{ n = split($1, f, ";"); u = 0; for (i = 2; i <= n; i++) if (f[i] !~ /_\[k\]$/) u++
		t += $NF; d += u * $NF; if (f[2] == "_start") e += $NF }
		END { printf "%.1f %.1f %d\n", t ? 100 * e / t : 0, t ? d / t : 0, t }' "$1"; }
	read -r s1 d1 n1 <<<"$(deep "$work/deep127.folded")"
	read -r s2 d2 n2 <<<"$(deep "$work/deep512.folded")"
	if [ "${n1:-0}" -ge 20 ] && [ "${n2:-0}" -ge 20 ] && awk -v s1="$s1" -v d1="$d1" -v s2="$s2" -v d2="$d2" \
		'BEGIN { exit !(s1 <= 5 && d1 >= 120 && s2 >= 99 && d2 > 400) }'; then
		ok "--max-stack: a 400-deep recursion: 127 frames by default, $d2 with --max-stack 512 ($s2 % of $n2 from _start)"
	else
		fail "--max-stack: default $d1 frames, $s1 % of $n1 from _start; 512: $d2 frames, $s2 % of $n2" \
			"$(grep 'user stack' "$work/deep127.log" "$work/deep512.log")"
	fi
else
	fail "--max-stack: cannot build the workload" "$(head -3 "$work/deep.err")"
fi

# --- --call-graph fp: the frame-pointer walk, as perf record -g (run on xz above)
# (no frame stepped by CFI; a stack may reach the end where xz's chain happens to: at glibc's root)
if grep -q 'call-graph fp): .*; 0.0% of frames stepped by CFI' "$work/fp.log"; then
	ok "--call-graph fp: frame pointers only ($(sed -n 's/.*end of the stack, \([0-9.]*\) frames.*/\1/p' "$work/fp.log") frames a stack on xz)"
else
	fail "--call-graph fp" "$(grep 'user stack' "$work/fp.log")"
fi

finish

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
#  - the same workload in a container (a mount and pid namespace, binary on
#    a tmpfs only it sees);
#  - --call-graph fp still gives the frame-pointer walk (1-2 frames on xz).
#
# Sampled data: 299 Hz for 2 s per run. The 99 % bound leaves room for the
# samples taken while the loader maps a library: none in these -p runs.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
BPFPROF=${BPFPROF:-$top/bpfprof}
NOFP=${NOFP:-$top/.output/workload/nofp}
work=$(mktemp -d /tmp/bpfprof-unwind.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
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

# pair NAME PID SECONDS: bpfprof and perf record --call-graph dwarf on PID at the same time
pair() {
	local name=$1 pid=$2 secs=$3
	"$BPFPROF" -v --check-unwind -F 299 -d "$secs" -p "$pid" -o "$work/$name.data" -o "$work/$name.folded" \
		-o "$work/$name.prof" -o "$work/$name.svg" >"$work/$name.log" 2>&1 &
	local bp=$!
	perf record -q --call-graph dwarf -F 299 -p "$pid" -o "$work/$name.perf.data" -- sleep "$secs" \
		>"$work/$name.perf.log" 2>&1
	wait $bp
}

# ends FILE EXE: "share samples" of perf.data FILE whose outermost frame is the end of the stack
ends() {
	local entry
	entry=$(readelf -h "$2" | awk '/Entry point/ { print $4 }')
	perf script -i "$1" -F ip,sym,dso 2>"$work/script.err" | awk -v exe="$(readlink -f "$2")" -v entry="$entry" '
		function hex(s,   i, c, v) {
			sub(/^0x/, "", s); v = 0
			for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", tolower(substr(s, i, 1))); v = v * 16 + c - 1 }
			return v
		}
		function root(l,   f, v) {
			n++; split(l, f, " ");
			if (l ~ / (_start|clone3|__clone3) \(/) { e++; return }
			v = hex(f[1]); if (index(l, "(" exe ")") && v >= hex(entry) && v < hex(entry) + 64) e++
		}
		NF == 0 { if (last != "") root(last); last = ""; next } { last = $0 }
		END { if (last != "") root(last); printf "%.1f %d\n", n ? 100 * e / n : 0, n }'
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

# --- xz ------------------------------------------------------------------
seq 1 3000000 | awk '{ print $1, $1 * 7919 % 100003, "the quick brown fox" }' >"$work/text"
xz -9 -T1 -c "$work/text" >/dev/null &
xzp=$!
pids+=("$xzp")
sleep 0.3
pair xz "$xzp" 2
kill "$xzp" 2>/dev/null
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
import time
def fib(n): return n if n < 2 else fib(n - 1) + fib(n - 2)
t = time.time()
while time.time() - t < 30: fib(22)
EOF
python3.11 "$work/fib.py" &
pyp=$!
pids+=("$pyp")
sleep 0.3
pair python "$pyp" 2
kill "$pyp" 2>/dev/null
compare python /usr/bin/python3.11
go tool pprof -traces "$work/python.prof" 2>"$work/pprof.err" >"$work/python.traces"
# pprof names from .symtab only (nm): libpython's _PyEval_EvalFrameDefault, in .dynsym, stays
# [libpython3.11.so.1.0] there, so the check is on PyEval_EvalCode, which calls it
if awk '/PyEval_EvalCode/ { h = 1 } /Py_BytesMain/ && h { x = 1 } /^-+\+/ { h = 0 } END { exit !x }' "$work/python.traces" &&
	grep -q 'Py_BytesMain' "$work/python.svg" && grep -q '_PyEval_EvalFrameDefault' "$work/python.svg"; then
	ok "python3.11: go tool pprof and the flame graph show Py_BytesMain above the interpreter loop"
else
	fail "python3.11: Py_BytesMain above the interpreter loop" "$(head -3 "$work/pprof.err")"
fi

# --- nofp: ours, known callers --------------------------------------------
"$NOFP" 30 &
np=$!
pids+=("$np")
sleep 0.3
pair nofp "$np" 2
kill "$np" 2>/dev/null
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
# the handler's stack goes on through the signal frame into the interrupted code and to _start
if awk '/on_alarm;hot_sig [0-9]+$/ { t += $NF; if ($0 ~ /^nofp;_start;.*main;run;via_[a-z]+;(hot_[ab]|lib_hot);.*on_alarm;hot_sig /) v += $NF }
	END { exit !(t == 0 || v >= 0.98 * t) }' "$work/nofp.folded"; then
	ok "nofp: signal handler stacks continue through __restore_rt into the interrupted frame and to _start"
else
	fail "nofp: signal handler stacks" "$(grep 'on_alarm;hot_sig' "$work/nofp.folded" | head -3)"
fi

# --- a container: binary on a tmpfs only its mount namespace sees ----------
if command -v unshare >/dev/null; then
	mkdir -p "$work/ctr/mnt"
	unshare --mount --pid --fork --propagation private bash -c "mount -t tmpfs none '$work/ctr/mnt' &&
		cp '$NOFP' '$(dirname "$NOFP")/libnofp_lib.so' '$work/ctr/mnt/' && exec '$work/ctr/mnt/nofp' 30" &
	pids+=($!)
	for _ in $(seq 50); do
		cp=$(pgrep -f "^$work/ctr/mnt/nofp" | head -1)
		[ -n "$cp" ] && break
		sleep 0.1
	done
	sleep 0.3
	if [ -n "$cp" ]; then
		"$BPFPROF" -F 299 -d 2 -p "$cp" -o "$work/ctr.folded" >"$work/ctr.log" 2>&1
		kill "$cp" 2>/dev/null
		read -r share n <<<"$(folded_share "$work/ctr.folded" hot_a "main;run;via_x;hot_a")"
		if grep ';hot_a ' "$work/ctr.folded" | grep -qv '^nofp;_start;'; then
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

# --- --call-graph fp: the frame-pointer walk, as perf record -g ------------
xz -9 -T1 -c "$work/text" >/dev/null &
xzp=$!
pids+=("$xzp")
sleep 0.3
"$BPFPROF" -v --call-graph fp -F 299 -d 1 -p "$xzp" -o "$work/fp.folded" >"$work/fp.log" 2>&1
kill "$xzp" 2>/dev/null
if grep -q 'call-graph fp): 0.0% reached the end' "$work/fp.log"; then
	ok "--call-graph fp: frame pointers only ($(sed -n 's/.*end of the stack, \([0-9.]*\) frames.*/\1/p' "$work/fp.log") frames a stack on xz)"
else
	fail "--call-graph fp" "$(grep 'user stack' "$work/fp.log")"
fi

finish

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# No sample walked without tables because they were late (issue 22, item 3):
# a command run as `bpfprof -- COMMAND` is sampled from its exec, tens to
# hundreds of ms before its tables are built. Those samples come to user
# space with their registers and a copy of the top of their stack (struct
# bpfprof_sample_copy) and are walked there with the same rows and rules
# (user/unwind/unwind_step.c), so that:
#  - -v counts 0 frame-pointer walks "for want of tables" and some stacks
#    copied (a fresh command has no tables at its first samples: a run with
#    no copy did not test anything);
#  - ≥ 99 % of the samples that have a user stack reach its end: the
#    executable's _start, the dynamic loader's (_start, _dl_start_user:
#    the loader's own startup, before the executable's _start runs) or
#    clone3 for other threads; node's JIT frames are walked by frame
#    pointers and count as complete when they reach _start;
#  - perl: --check-unwind's libdwfl unwind of every 4th stack (the copies
#    walked in user space at once among them) finds 0 different (node's is
#    shown: V8's builtins have no CFI, and where the walk steps them by frame
#    pointers libdwfl's fallback may skip a frame);
# for a 0.3 s Debian perl one-liner and a 0.5 s node -e script, each also
# run under `perf record --call-graph dwarf` in this test, whose share is
# shown beside (perf copies 8 KB of stack on every sample; its share is not
# a bound: it stops where its copy ends). Both shares are read the same way,
# by perf script, from perf.data (bpfprof writes one).
#
# Sampled data: 999 Hz (the kernel's limit if lower) for 0.3 and 0.5 s of
# wall time: about 300 and 500 samples on an idle CPU, 50 and 80 with a
# sixth of one; under 100 samples 1 % is less than one stack, so the share
# needs 100 % there. A check needs 40 samples with a user stack. perl: ≥ 99
# % (runs here: 99.5-100 %). node: ≥ 99 % (runs here with both CPUs busy:
# 99.8-100 % in 8 runs; 98.0-100 % before V8's frames below, 98.4-99.0 %
# before the fixes after them). What ended short in node's first 50 ms
# were gaps of the tables, not of their readiness, and the BPF walk of a
# ready process ended there too. Fixed: OpenSSL's constructor called from
# _init (crti.o has no CFI: rows of its known shape now, unwind_table.c
# crt_prologue); a sample in the page fault of a new stack page (rsp's page
# not there: the copy has holes now, not an end); CRYPTO_THREAD_read_lock's
# `ret` (CFI saying rbp at CFA-16 after the pop, below rsp: unchanged now);
# a V8 builtin's frame-pointer step into V8's code space, mapped 0.2 s in,
# after node's registration (taken for garbage; now sent as a copy within
# 2 s of a registration, bpf/unwind.bpf.h YOUNG_NS, and walked after the
# next: 1-7 copies a run). Left: _dl_runtime_resolve (its CFA is
# rbx-based: no row) and V8's deserializer recursing deeper than the 32 KiB
# copy, 0-1 stacks a run. Seen once with a kernel matrix's QEMU guests
# beside it (load 15+): perl 96.4 % of 84 samples, every one copied (the
# registration came after the copies it was asked for); not reproduced
# since.
# About 8 s of wall time on an idle machine, 14 s at load 15 (two commands
# twice, perf script over each: node's perf.data dominates).
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
BPFPROF=${BPFPROF:-$top/bpfprof}
work=$(mktemp -d /tmp/bpfprof-ready.XXXXXX)
trap 'wait; rm -rf "$work"' EXIT
# bpfprof fills perf's build-id cache ($HOME/.debug) for perf.data, as perf record does: keep it in $work
mkdir -p "$work/home"
export HOME=$work/home

. "$(dirname "$0")/lib.bash"
require_bpf "samples taken before their process's tables were ready"
if ! command -v perf >/dev/null; then
	skip "samples before tables were ready" "perf (linux-perf) not installed"
	finish
fi

F=$(awk '{ print $1 < 999 ? $1 : 999 }' /proc/sys/kernel/perf_event_max_sample_rate 2>/dev/null)
F=${F:-999}

# complete DATA COMM: "PCT N" over COMM's samples in perf.data DATA that have
# a user frame: the share whose outermost frame is the end of the stack
complete() {
	perf script --no-inline -i "$1" --comms "$2" -F ip,sym,dso 2>"$work/script.err" | awk '
		function root(l) {
			if (!user) return
			n++
			if (l ~ / (_start|_dl_start_user|clone3|__clone3) \(/) e++
		}
		NF == 0 { if (last != "") root(last); last = ""; user = 0; next }
		{ last = $0; if ($0 !~ /\[kernel\.kallsyms\]|\(\[unknown\]\)$/ || $0 ~ /^ *[0-7][0-9a-f]{0,11} /) user = 1 }
		END { if (last != "") root(last); printf "%.1f %d\n", n ? 100 * e / n : 0, n }'
}

# run NAME COMM MIN CMD...: bpfprof -- CMD, then perf record -- CMD; the checks above,
# MIN the least share of complete stacks (100 under 100 samples)
run() {
	local name=$1 comm=$2 min=$3 line notready copies b bn p pn cline n diff
	shift 3
	"$BPFPROF" -v --check-unwind --max-stack 512 -F "$F" -o "$work/$name.data" -- "$@" \
		>"$work/$name.log" 2>&1
	perf record -N -q --call-graph dwarf -F "$F" -o "$work/$name.perf.data" -- "$@" \
		>"$work/$name.perf.log" 2>&1
	line=$(grep "user stack ends" "$work/$name.log")
	notready=$(echo "$line" | sed -n 's/.* \([0-9]*\) walked by frame pointers for want of tables.*/\1/p')
	copies=$(echo "$line" | sed -n 's/.* \([0-9]*\) stacks copied for a user-space walk.*/\1/p')
	if [ "${notready:-x}" = 0 ] && [ "${copies:-0}" -gt 0 ]; then
		ok "$name: 0 walked by frame pointers for want of tables, $copies stacks copied for a user-space walk"
	else
		fail "$name: samples before the tables were ready" "${line:-no walk line}" "$(tail -3 "$work/$name.log")"
	fi
	read -r b bn <<<"$(complete "$work/$name.data" "$comm")"
	read -r p pn <<<"$(complete "$work/$name.perf.data" "$comm")"
	if [ "${bn:-0}" -lt 40 ]; then
		fail "$name: $bn samples with a user stack, fewer than the 40 a share needs" "$(tail -3 "$work/$name.log")"
	elif awk -v s="$b" -v n="$bn" -v m="$min" 'BEGIN { exit !(n < 100 ? s >= 100 : s >= m) }'; then
		ok "$name: $b % of $bn bpfprof stacks reach _start/clone3; perf --call-graph dwarf $p % of $pn"
	else
		fail "$name: $b % of $bn bpfprof stacks reach _start/clone3 (perf --call-graph dwarf: $p % of $pn)" \
			"$(perf script --no-inline -i "$work/$name.data" --comms "$comm" -F ip,sym 2>/dev/null |
				awk 'NF == 0 { if (last != "" && last !~ / (_start|_dl_start_user|clone3|__clone3)$/) print "ends at" last; last = ""; next } { last = $0 }' |
				sort | uniq -c | sort -rn | head -5)"
	fi
	cline=$(grep "against libdwfl's" "$work/$name.log")
	read -r n diff <<<"$(echo "$cline" | sed -n 's/.*(\([0-9]*\) stacks checked): .* \([0-9]*\) different, .*/\1 \2/p')"
	if [ "$name" = node ]; then
		# V8's builtins have no CFI: their frame-pointer steps and libdwfl's fallback may differ
		echo "       $name: ${cline#bpfprof: }"
	elif [ "${diff:-x}" = 0 ] && [ "${n:-0}" -gt 0 ]; then
		ok "$name: --check-unwind: 0 of $n stacks different from libdwfl's (copies walked in user space among them)"
	else
		fail "$name: --check-unwind" "${cline:-no check line}"
	fi
}

if command -v perl >/dev/null; then
	run perl perl 99 perl -MTime::HiRes=time -e \
		'my ($e, $s) = (time + 0.3, 0); while (time < $e) { $s += $_ * 2 for 1 .. 1000 } print "$s\n"'
else
	skip "perl one-liner" "perl not installed"
fi

if command -v node >/dev/null; then
	run node node 99 node -e \
		'function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
		 let t = Date.now(), s = 0; while (Date.now() - t < 500) s += fib(18); console.log(s > 0);'
else
	skip "node script" "node not installed"
fi

finish

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Complete stacks on what a real host runs (issue 22, "Tests that must
# pass"): one run of `bpfprof -a --cgroup` and, inside it, one run of
# `perf record -a -G --call-graph dwarf` on the same cgroup, while the
# script's processes (moved into a cgroup of their own) run at once:
#  - Debian's clang-14 -O2 -c on a generated C file (LLVM's .eh_frame is
#    SHT_X86_64_UNWIND, libLLVM-14.so.1 has 4.9 MB of CFI);
#  - `make -j2` of a generated C project of 7 files (cc1, as, collect2/ld,
#    make; sh for the recipes' echo);
#  - a node -e script and two `java -version` runs (a JVM: libjvm's CFI).
# Both profilers see the same processes in the same time, and both perf.data
# files are read the same way, by one `perf script` each, per process name
# (comm). A stack is complete when its outermost user frame is the end of
# the stack (per_comm below): _start, the loader's _dl_start_user, clone3,
# the entry point of a stripped executable (make, as, gcc), or glibc's
# __libc_start_call_main (perf's libdw stops there, one frame short).
# Checks:
#  1. clang-14: bpfprof's share of complete stacks ≥ perf's (perf copies 8 KB
#     of stack a sample: clang's are deeper), and its mean number of user
#     frames a stack is greater (--max-stack 512);
#  2. cc1, as, ld, collect2, gcc, make, sh: bpfprof's share ≥ perf's − 1 point,
#     for each with ≥ 5 samples in both (fewer: shown, not judged);
#  3. -v: no file "did not fit" at the default --unwind-memory, and the
#     unwinder's kernel memory and peak RSS lines are there and parse (shown
#     in the ok line);
#  4. -v: 0 samples "walked by frame pointers for want of tables" (a process's
#     first samples come with a copy of its stack, walked in user space once
#     its tables are built, or from the maps remembered at its first sample
#     when it is gone by then, or, gone even before its maps were read,
#     from its mmap events: perf's dummy event's MMAP2, FORK and COMM exec
#     records, user/capture/mmap_events.c). Without the mmap events this
#     failed under load: a short-lived process (`as`, here) gone before
#     bpfprof read the notice of its first sample had no maps remembered,
#     and its copies were walked by frame pointers: 16-34 such walks a run
#     here at load 4-8 (105 and 148 in two runs with the mmap events turned
#     off), every one in 1-3 `as` processes whose notice was read 390-470
#     ms after it was sent (-vv: "notice 1 of pid N: No such process 469.1
#     ms after it was sent"; notices p90 467 ms, max 1.3 s, median 20 ms;
#     reading them sooner was not enough, commit 705437f's header). With
#     them: 0 in five runs, the maps of 1-3 gone processes a run rendered
#     from the records (shown in the ok line);
#  5. nothing left behind: no /tmp/perf-PID.map of the node or JVM processes.
#
# Sampled data: 999 Hz (the kernel's limit if lower) over each process's CPU
# time (cpu-clock in the cgroup counts its CPU time, not wall time, so the
# numbers of samples do not depend on load): clang-14 about 1,800, cc1 about
# 1,400, java 400-500, node 250-350, as and ld 80-130, gcc 60-100, sh 40-50,
# make and collect2 10-25. Tolerances: clang's comparison has none (bpfprof
# walks all of a stack; perf stops where its 8 KB copy ends: 7-11 % of its
# stacks complete here, 30 % in issue 22's run); the build's tools get the
# 1 point issue 22 states, or where more, the sampling error of comparing
# two shares: both profilers sample the same processes at the same time,
# but at different instants, so the shares differ by chance too. Three
# standard errors of the difference of two proportions, 3 * sqrt(p(1-p)
# (1/Nb + 1/Np)) with p their pooled share (one-sided, about 1 false
# failure in 700 comparisons): cc1 at 1,600 samples and 78 % about 4.4
# points, the gcc driver at 100 and 73 % about 19 (gcc gave 71.7 % against
# perf's 74.5 % once: both stop at the same stacks, a vfork child sampled
# before its exec; the one-stack tolerance used before failed there). Where
# bpfprof leads (as, ld, make, sh: by 15-75 points) none of this matters. --ringbuf-size 32M: at the default 512K a CPU,
# 268 of 4170 samples were lost at load 8 while the reader lagged, every
# ld sample among them; at 8M, walks were shed (the record goes with its
# leaf only once half the ring waits) in 3 of about 12 runs of 2026-11-29,
# 330-855 of them, ld's among them: the make's new processes are stack
# copies of 15 KiB each (about 10 MiB/s of them), and a reader that gets
# little of 2 CPUs beside clang, cc1, two JVMs, node and perf record lags
# 0.4 s. What this script checks is the walk, not the ring's size.
#
# Cost, /usr/bin/time -v of the whole script on 2 CPUs shared with other
# test runs (no idle machine to measure on): 16 s of wall time and 15.4 s of
# CPU (10.0 user, 5.5 system) at load 4; 28 s wall, 15.8 s CPU at load 7;
# peak RSS 142 MB (perf script over perf record's perf.data). Not in
# run-all.sh's heavy list: unwind.sh took 56 s of CPU beside it.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
BPFPROF=${BPFPROF:-$top/bpfprof}
work=$(mktemp -d /tmp/bpfprof-hosts.XXXXXX)
cgdir=
cleanup() {
	if [ -n "$cgdir" ]; then
		xargs -r kill -KILL <"$cgdir/cgroup.procs" 2>/dev/null
		for _ in 1 2 3 4 5 6 7 8 9 10; do rmdir "$cgdir" 2>/dev/null && break; sleep 0.1; done
	fi
	wait 2>/dev/null
	# KEEP=1: leave $work for a look at the logs and perf.data files
	[ -n "${KEEP:-}" ] && echo "kept $work" || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
# bpfprof fills perf's build-id cache ($HOME/.debug) for perf.data, as perf record does: keep it in $work
mkdir -p "$work/home"
export HOME=$work/home

. "$(dirname "$0")/lib.bash"
require_bpf "complete stacks on a host's programs"
for c in perf clang-14 gcc make node java; do
	if ! command -v "$c" >/dev/null; then
		skip "complete stacks on a host's programs" "$c not installed"
		finish
	fi
done
cg2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
if [ -z "$cg2" ] || ! mkdir "$cg2/bpfprof-hosts.$$" 2>/dev/null; then
	skip "complete stacks on a host's programs" "no cgroup2 directory of its own (${cg2:-no cgroup2 mounted})"
	finish
fi
cgdir=$cg2/bpfprof-hosts.$$

F=$(awk '{ print $1 < 999 ? $1 : 999 }' /proc/sys/kernel/perf_event_max_sample_rate 2>/dev/null)
F=${F:-999}

cd "$work" || exit 1
# --- the workloads -----------------------------------------------------------
# a C file for clang-14 -O2: about 1 s of its CPU time
awk -v n=90 'BEGIN { for (i = 0; i < n; i++) {
	printf "struct s%d { int a[%d]; double d; struct s%d *next; };\n", i, i % 7 + 1, i
	printf "static int g%d(struct s%d *p, int x) { int r = 0; for (int i = 0; i < x; i++) { if (p && p->a[i %% %d] > i) r += p->a[0] * i; else r ^= (x << (i & 7)) + %d; switch (r & 7) { case 0: r += 3; break; case 1: r *= 5; break; case 2: r -= x; break; default: r ^= i; } } return r + (p ? (int)p->d : 0); }\n", i, i, i % 7 + 1, i
	printf "int f%d(int x) { struct s%d v = { { x }, x * 0.5, 0 }; return g%d(&v, x) + (x > 0 ? f%d(x - 1) : 0); }\n", i, i, i, (i ? i - 1 : 0) } }' >big.c
# a C project: 6 units and main, built by make -j2 (gcc: cc1, as, collect2, ld;
# sh for each recipe, which echoes before it compiles)
mkdir proj
for u in 1 2 3 4 5 6; do
	awk -v u=$u 'BEGIN { for (i = 0; i < 12; i++) printf "static int h%d(int *a, int x) { int r = 0; for (int i = 0; i < x; i++) { r += a[i %% 16] * i; if (r & 1) r ^= x; } return r; }\nint m%d_%d(int x) { int a[16] = { x }; return h%d(a, x) + %d; }\n", i, u, i, i, i }' >proj/u$u.c
done
printf 'int m1_0(int);\nint main(void) { return m1_0(3) & 1; }\n' >proj/main.c
printf 'OBJS = main.o u1.o u2.o u3.o u4.o u5.o u6.o\nprog: $(OBJS)\n\tgcc -o $@ $(OBJS)\n%%.o: %%.c\n\t@echo CC $@; gcc -O2 -c -o $@ $<\n' >proj/Makefile
# The command perf record runs: it moves itself into the test cgroup, then
# starts everything at once and notes node's and the JVMs' pids
cat >driver.sh <<'EOS'
#!/bin/bash
echo $$ >"$CG/cgroup.procs" || exit 1
clang-14 -O2 -c -o big.o big.c &
make -s -j2 -C proj >make.out 2>&1 &
node -e 'let t = Date.now(), s = 0; while (Date.now() - t < 300) s += Math.sqrt(t); console.log(s > 0)' >node.out &
echo $! >>jit.pids
(for i in 1 2; do java -Xshare:auto -version 2>/dev/null & echo $! >>jit.pids; wait $!; done) &
wait
EOS
chmod +x driver.sh

CG=$cgdir "$BPFPROF" -v -a --cgroup "bpfprof-hosts.$$" --max-stack 512 --ringbuf-size 32M -F "$F" \
	-o bp.data -- perf record -q -a -e cpu-clock -G "bpfprof-hosts.$$" --call-graph dwarf -F "$F" -o perf.data \
	-- ./driver.sh >bp.out 2>bp.log
rc=$?
if [ $rc -ne 0 ] || [ ! -s bp.data ] || [ ! -s perf.data ] || [ ! -s big.o ] || [ ! -x proj/prog ]; then
	fail "bpfprof -a --cgroup over the workloads: rc=$rc" "$(grep -v '^bpfprof: no symbols for' bp.log | head -20)" \
		"$(head -5 proj/make.out 2>/dev/null)"
	finish
fi

# per_comm DATA: "COMM N COMPLETE FRAMES" per process name, over the samples
# with a user frame: how many, how many complete, user frames in all. The
# outermost user frame is the end when it is _start, the loader's
# _dl_start_user, clone3, glibc's __libc_start_call_main/__libc_start_main
# (main's callers: perf's libdw stops there on Debian's libc, a frame short
# of _start, with every frame of the program above it), or within 64 bytes
# of the entry point of a stripped executable (perf script prints addresses
# as offsets in their file).
per_comm() {
	perf script --no-inline -i "$1" -F comm,ip,sym,dso 2>"$1.err" | awk '
		function hex(s,   i, c, v) {
			sub(/^0x/, "", s); v = 0
			for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", tolower(substr(s, i, 1))); v = v * 16 + c - 1 }
			return v
		}
		function entry(dso,   cmd, l, f, x) {
			if (!(dso in ent)) {
				ent[dso] = -1
				# the entry point as a file offset, through the LOAD segment that holds it
				cmd = "readelf -lW \"" dso "\" 2>/dev/null"
				while ((cmd | getline l) > 0) {
					split(l, f, " ")
					if (l ~ /^Entry point/) x = hex(f[3])
					else if (f[1] == "LOAD" && x >= hex(f[3]) && x < hex(f[3]) + hex(f[6])) ent[dso] = x - hex(f[3]) + hex(f[2])
				}
				close(cmd)
			}
			return ent[dso]
		}
		function flush(   f, dso, v, x) {
			if (comm == "" || !user) return
			n[comm]++; d[comm] += user
			if (last ~ / (_start|_dl_start_user|clone3|__clone3|__libc_start_call_main|__libc_start_main(_impl|@@GLIBC_[0-9.]+)?)(\+0x[0-9a-f]+)? \(/) { e[comm]++; return }
			if (last ~ / \[unknown\] \(\/[^)]*\)$/) {
				split(last, f, " "); v = hex(f[1]); dso = last; sub(/.*\(/, "", dso); sub(/\)$/, "", dso)
				x = entry(dso); if (x > 0 && v >= x && v < x + 64) e[comm]++
			}
		}
		/^[^ \t]/ { flush(); comm = $0; sub(/[ \t]+$/, "", comm); gsub(/ /, "_", comm); user = 0; last = ""; next }
		NF == 0 { flush(); comm = ""; next }
		$0 !~ /\[kernel\.kallsyms\]|\(\[unknown\]\)$/ || $0 ~ /^[ \t]*[0-7][0-9a-f]{0,11} / { last = $0; user++ }
		END { flush(); for (c in n) printf "%s %d %d %d\n", c, n[c], e[c], d[c] }' | sort
}
per_comm bp.data >bp.comms
per_comm perf.data >perf.comms
# stat FILE COMM: "PCT N MEAN" for COMM
stat() { awk -v c="$2" '$1 == c { printf "%.1f %d %.1f\n", 100 * $3 / $2, $2, $4 / $2; f = 1 } END { if (!f) print "0 0 0" }' "$1"; }

# 1. clang-14
read -r b bn bd <<<"$(stat bp.comms clang-14)"
read -r p pn pd <<<"$(stat perf.comms clang-14)"
if [ "$bn" -lt 100 ] || [ "$pn" -lt 100 ]; then
	fail "clang-14: too few samples (bpfprof $bn, perf $pn)"
elif awk -v b="$b" -v p="$p" -v bd="$bd" -v pd="$pd" 'BEGIN { exit !(b >= p && bd > pd) }'; then
	ok "clang-14 -O2: $b % of $bn bpfprof stacks complete, $bd user frames a stack; perf --call-graph dwarf $p % of $pn, $pd frames"
else
	fail "clang-14 -O2: $b % of $bn bpfprof stacks complete, $bd frames a stack; perf $p % of $pn, $pd frames" \
		"$(grep 'user stack' bp.log)"
fi

# share_tol B NB P NP: the points bpfprof's share B % of NB may lie below
# perf's P % of NP: 1, or 3 standard errors of their difference (above)
share_tol() {
	awk -v b="$1" -v nb="$2" -v p="$3" -v np="$4" 'BEGIN {
		q = (b * nb + p * np) / (nb + np) / 100
		t = 300 * sqrt(q * (1 - q) * (1 / nb + 1 / np))
		printf "%.1f", (t > 1 ? t : 1) }'
}

# 2. the build's tools
for c in cc1 as ld collect2 gcc make sh; do
	read -r b bn bd <<<"$(stat bp.comms "$c")"
	read -r p pn pd <<<"$(stat perf.comms "$c")"
	if [ "$bn" -lt 5 ] || [ "$pn" -lt 5 ]; then
		echo "       $c: $bn bpfprof samples, $pn perf: too few to judge"
	elif tol=$(share_tol "$b" "$bn" "$p" "$pn") &&
		awk -v b="$b" -v p="$p" -v t="$tol" 'BEGIN { exit !(b >= p - t) }'; then
		ok "make -j2: $c: $b % of $bn bpfprof stacks complete; perf $p % of $pn (at most $tol points below)"
	else
		fail "make -j2: $c: $b % of $bn bpfprof stacks complete; perf $p % of $pn" "$(grep 'user stack' bp.log)"
	fi
done
echo "       others: $(awk '$1 !~ /^(clang-14|cc1|as|ld|collect2|gcc|make|sh)$/ { printf "%s %d/%d  ", $1, $3, $2 }' bp.comms)"

# 3. the unwinder's memory
echo "       $(grep "user stack ends" bp.log | cut -c1-400)"
tl=$(grep '^bpfprof: unwind tables:' bp.log)
read -r nofit mib budget peak <<<"$(echo "$tl" | sed -n 's/.* \([0-9]*\) did not fit, .* at most \([0-9.]*\) MiB of the \([0-9]*\) MiB --unwind-memory.*; peak RSS \([0-9.]*\) MiB$/\1 \2 \3 \4/p')"
if [ -z "$tl" ] || [ -z "$peak" ]; then
	fail "-v: no unwind tables line with kernel memory and peak RSS" "$(grep -v '^bpfprof: no symbols for' bp.log | head -10)"
elif [ "$nofit" -ne 0 ] || grep -qi 'did not fit' <(grep -v '^bpfprof: unwind tables:' bp.log); then
	fail "-v: files did not fit at the default --unwind-memory" "$tl"
else
	ok "clang-14, node, 2 JVMs, cc1 at once: 0 files did not fit; unwind tables at most $mib MiB of kernel memory (of $budget MiB), bpfprof peak RSS $peak MiB"
fi

# 4. samples before their tables were ready
wl=$(grep '^bpfprof: user stack ends:' bp.log)
notready=$(echo "$wl" | sed -n 's/.* \([0-9]*\) walked by frame pointers for want of tables.*/\1/p')
copies=$(echo "$wl" | sed -n 's/.* \([0-9]*\) stacks copied for a user-space walk.*/\1/p')
frommm=$(sed -n 's/^bpfprof: mmap events: .*; maps of \([0-9]*\) processes gone before they were read rendered.*/\1/p' bp.log)
if [ "${notready:-x}" = 0 ]; then
	ok "-v: 0 walked by frame pointers for want of tables ($copies stacks copied for a user-space walk; ${frommm:-no} processes' maps from mmap events)"
else
	fail "-v: ${notready:-?} walked by frame pointers for want of tables" "${wl:-no walk line}" \
		"$(grep -E '^bpfprof: (unwind readiness|stack copies|mmap events|lost)' bp.log)"
fi

# 5. nothing left behind by node or the JVMs
left=
for p in $(cat jit.pids 2>/dev/null); do
	[ -e "/tmp/perf-$p.map" ] && left="$left /tmp/perf-$p.map"
done
if [ -z "$left" ] && [ -s jit.pids ]; then
	ok "no /tmp/perf-PID.map left by node or the JVMs"
else
	fail "left behind:${left:- (no pids noted)}"
	rm -f $left
fi

finish

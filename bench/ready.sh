#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What samples taken before their process's tables were ready cost (issue
# 22, item 3; docs/BENCHMARKS.md): such a sample goes to user space with its
# registers and up to 32 KiB of stack (struct bpfprof_sample_copy) and is
# walked there (user/unwind/unwind_step.c). Side by side in one run:
#  1. a 0.5 s `node -e` script as `bpfprof -v -- node`: samples, copies,
#     ring-buffer bytes a copy (-v), the BPF program's time a sample
#     (kernel.bpf_stats_enabled: -v's "BPF run time"), the user-space walk's
#     time a copy, bpfprof's own CPU time (-v's "CPU:" line, getrusage
#     RUSAGE_SELF: not node's, which runstat's wait4 rusage of bpfprof
#     includes) and the part of it spent before sampling began (start-up);
#     with the unwind cache cold (BPFPROF_UNWIND_CACHE=none, as every
#     benchmark starts) and warm (a cache of $work filled by a first run):
#     issue 34's goal, a new process with a warm cache, is ≤ 5 % copied and
#     ≤ 0.1 CPU-s;
#  2. the steady state: the same script looping for 4 s, bpfprof -p on it
#     from 1 s on (its tables are built before sampling: no copy): the BPF
#     time a sample and the ring-buffer bytes a sample (64 + 8 a frame,
#     user frames from -v, kernel frames from the folded output);
#  3. perf record --call-graph dwarf on the same 0.5 s command: perf.data
#     bytes a sample (its 8 KiB stack copy on every sample).
# The BPF time of a copied sample is derived from 1 and 2: (run 1's total -
# its walked samples at run 2's time a sample) / its copies.
set -euo pipefail
. "$(dirname "$0")/lib.bash"

ROUNDS=${ROUNDS:-3}
[ "$QUICK" = 1 ] && ROUNDS=1
command -v node >/dev/null || { echo "bench: node missing" >&2; exit 1; }
sysctl -q -w kernel.bpf_stats_enabled=1
export HOME=$work/home # perf's build-id cache, bpfprof's too
mkdir -p "$HOME"
JS='function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
let t = Date.now(), s = 0; while (Date.now() - t < (+process.argv[1] || 500)) s += fib(18); console.log(s > 0);'

# num LOG REGEX: the first number REGEX's group 1 captures in LOG
num() { sed -n "s/$2/\1/p" "$1" | head -1; }

declare -a cns cbytes cwalk ccpu cratio sns sbytes pbytes cstart wratio wcpu wstart wready wreg
# own CPU, start-up's part and the readiness of bpfprof -v's log $1: "cpu start ready"
own_cpu() {
	sed -n 's/^bpfprof: CPU: \([0-9.]*\) s .*; \([0-9.]*\) ms before sampling began.*/\1 \2/p' "$1" | head -1
}
# the warm cache: filled by a first run, read by the rounds' warm runs
BPFPROF_UNWIND_CACHE=$work/cache "$BPFPROF" -F 999 -o "$work/w.folded" -- node -e "$JS" 100 >/dev/null 2>&1
for ((r = 0; r < ROUNDS; r++)); do
	# 1w: a command from its exec, its tables in the cache
	BPFPROF_UNWIND_CACHE=$work/cache "$BPFPROF" -v -F 999 -o "$work/w.folded" -- node -e "$JS" 500 >"$work/w.log" 2>&1
	wn=$(num "$work/w.log" '.* \([0-9]*\) samples, [0-9]* lost.*')
	wcopies=$(num "$work/w.log" '.* \([0-9]*\) stacks copied for a user-space walk.*')
	read -r wc ws <<<"$(own_cpu "$work/w.log")"
	wratio+=("$(calc "100 * $wcopies / $wn")")
	wcpu+=("$wc")
	wstart+=("$(calc "$ws / 1000")")
	wready+=("$(num "$work/w.log" '.*registered at their first sample, \([0-9.]*\) ms on average.*')")
	# CPU a registration: the thread's registering CPU over the registrations made
	wreg+=("$(calc "$(num "$work/w.log" '.*; \([0-9.]*\) ms of CPU registering them.*') / $(num "$work/w.log" '.*unwind registrations: \([0-9]*\) .*')")")
	# 1: a command from its exec
	"$RUNSTAT" -o "$work/cpu" -- "$BPFPROF" -v -F 999 -o "$work/c.folded" -- node -e "$JS" 500 >"$work/c.log" 2>&1
	n=$(num "$work/c.log" '.* \([0-9]*\) samples, [0-9]* lost.*')
	ns=$(num "$work/c.log" '.*BPF run time: \([0-9]*\) ns a sample.*')
	copies=$(num "$work/c.log" '.* \([0-9]*\) stacks copied for a user-space walk.*')
	kib=$(num "$work/c.log" '.* \([0-9.]*\) KiB a copy.*')
	walk=$(num "$work/c.log" '.*walked in user space, \([0-9.]*\) us a stack.*')
	read -r cpu cs <<<"$(own_cpu "$work/c.log")"
	cstart+=("$(calc "$cs / 1000")")
	# 2: the steady state, tables built before sampling
	node -e "$JS" 4000 >/dev/null &
	pid=$!
	sleep 1
	"$BPFPROF" -v -F 999 -d 1 -p "$pid" -o "$work/s.folded" >"$work/s.log" 2>&1
	wait "$pid" || true
	s_ns=$(num "$work/s.log" '.*BPF run time: \([0-9]*\) ns a sample.*')
	s_frames=$(num "$work/s.log" '.*, \([0-9.]*\) frames a stack.*')
	s_k=$(awk '{ n = split($1, f, ";"); k = 0; for (i = 2; i <= n; i++) if (f[i] ~ /_\[k\]$/) k++; t += $NF; s += k * $NF } END { printf "%.1f", t ? s / t : 0 }' "$work/s.folded")
	# 3: perf record --call-graph dwarf on the same command
	perf record -N -q --call-graph dwarf -F 999 -o "$work/p.data" -- node -e "$JS" 500 >/dev/null 2>&1
	pn=$(perf report -i "$work/p.data" --stats 2>/dev/null | awk '/SAMPLE events:/ { print $3; exit }')
	cns+=("$(calc "($ns * $n - ($n - $copies) * $s_ns) / $copies")")
	cbytes+=("$(calc "$kib * 1024")")
	cwalk+=("$walk")
	ccpu+=("$cpu")
	cratio+=("$(calc "100 * $copies / $n")")
	sns+=("$s_ns")
	sbytes+=("$(calc "64 + 8 * ($s_frames + $s_k)")")
	pbytes+=("$(calc "$(stat -c %s "$work/p.data") / ${pn:-1}")")
	echo "round $r: node -- : $n samples, $copies copied ($kib KiB each), ${ns} ns a sample, walk ${walk} us a copy, bpfprof cpu ${cpu} s (start-up ${cs} ms); warm cache: $wn samples, $wcopies copied, bpfprof cpu $wc s (start-up $ws ms), tables ${wready[-1]} ms after the first sample; steady: ${s_ns} ns, $s_frames user + $s_k kernel frames; perf dwarf: ${pn} samples, $(stat -c %s "$work/p.data") bytes" >&2
done

result "node -- 0.5 s: samples copied (tables not ready)" "$(median "${cratio[@]}") %" "-" "-" "-" info
result "ring-buffer bytes a copied sample" "$(median "${cbytes[@]}")" "steady sample $(median "${sbytes[@]}")" "$(calc "$(median "${cbytes[@]}") / $(median "${sbytes[@]}")")x" "-" info
result "perf.data bytes a sample, perf --call-graph dwarf" "$(median "${pbytes[@]}")" "bpfprof copy $(median "${cbytes[@]}")" "-" "-" info
result "BPF ns a copied sample (derived)" "$(median "${cns[@]}")" "steady walk $(median "${sns[@]}") ns" "$(calc "$(median "${cns[@]}") / $(median "${sns[@]}")")x" "-" info
result "user-space walk a copied sample" "$(median "${cwalk[@]}") us" "-" "-" "-" info
result "bpfprof CPU, -- node 0.5 s (its own, start-up included)" "$(median "${ccpu[@]}") s" "start-up $(median "${cstart[@]}") s" "-" "-" info
result "node -- 0.5 s, warm cache: samples copied" "$(median "${wratio[@]}") %" "cold $(median "${cratio[@]}") %" "-" "<= 5 %" "$(verdict "$(median "${wratio[@]}")" "<=" 5)"
result "node -- 0.5 s, warm cache: CPU a registration" "$(median "${wreg[@]}") ms" "-" "-" "<= 5 ms" "$(verdict "$(median "${wreg[@]}")" "<=" 5)"
result "node -- 0.5 s, warm cache: first sample to tables" "$(median "${wready[@]}") ms" "-" "-" "<= 20 ms" "$(verdict "$(median "${wready[@]}")" "<=" 20)"
result "bpfprof CPU, -- node 0.5 s, warm cache (its own, start-up included)" "$(median "${wcpu[@]}") s" "start-up $(median "${wstart[@]}") s" "-" "<= 0.1 s" "$(verdict "$(median "${wcpu[@]}")" "<=" 0.1)"
result "start-up CPU before sampling (--call-graph dwarf)" "$(median "${wstart[@]}") s" "-" "-" "<= 0.05 s" "$(verdict "$(median "${wstart[@]}")" "<=" 0.05)"

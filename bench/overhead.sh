#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Benchmarks 1 and 2 (issue 8): what profiling costs the machine.
#
# 1. Overhead. bench/spin runs a fixed amount of work on every CPU (one pinned
#    worker per CPU, a 16-deep frame-pointer call chain) and reports its wall
#    time: alone, under `bpfprof -a -F 999`, under `perf record -a -g -F 999`,
#    and both again at 99 Hz. ROUNDS rounds, the order rotating every round
#    so that a disturbance hits every variant alike; each profiled run is
#    compared with the mean of the alone runs just before and after it, and
#    the median slowdown is printed. Goals: bpfprof's slowdown at most half of perf record's (999 Hz);
#    at most 1 % at 99 Hz.
# 2. Cost per sample, from the same 999 Hz runs. The figure (issue 34) is
#    what sampling costs: bpfprof's CPU time while the load runs (every
#    thread's /proc/PID/task/*/schedstat, read by the profiled command before
#    and after the work) plus its BPF program's run time
#    (kernel.bpf_stats_enabled, run_time_ns from the program's fdinfo), per
#    program run. Goal: at most 5 us a sample. Start-up (bpfprof's CPU before
#    the load began: its threads' schedstat at the first read) and finalize
#    (its whole-run CPU less what it had spent when the work ended) are shown
#    apart, in ms, and the whole run's cost per sample as before: the own CPU
#    time (user + system from wait4 rusage: start, sampling, writing the
#    output; less the load's CPU time, which wait4 adds because the load is
#    the profiler's child, measured by an inner runstat), plus the BPF run
#    time, divided by the samples. perf's own in-kernel cost per sample (the
#    callchain walk and the copy into its buffer, the same work bpfprof's BPF
#    program does) is not in its figure: the kernel accounts it to no
#    process. Also printed: the BPF time per program run, and each
#    profiler's cost implied by the slowdown (the workers' lost time per
#    sample, kernel side included).
#
# Each profiler runs the load as its command (`-a -- COMMAND`), so startup and
# the writing of outputs are outside the timed work; both write their usual
# output (bpfprof a .pb.gz, perf record its perf.data) to the same file system.
set -euo pipefail
. "$(dirname "$0")/lib.bash"

ROUNDS=${ROUNDS:-5}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-3}
if [ "$QUICK" = 1 ]; then
	ROUNDS=1 SECONDS_PER_RUN=1
fi
# the fixed work: as many iterations as take SECONDS_PER_RUN alone here, now
if [ -z "${ITERS:-}" ]; then
	cal=$("$SPIN" -i 200000000 | awk '{ print $2 }')
	ITERS=$(awk -v c="$cal" -v s="$SECONDS_PER_RUN" 'BEGIN { printf "%.0f", 200000000 * s / c }')
fi
echo "fixed work: $ITERS iterations per CPU" >&2

sysctl -q -w kernel.bpf_stats_enabled=1

# run VARIANT ROUND: one run; leaves $work/VARIANT.ROUND.{spin,rs,err,bpf}
run() {
	local v=$1 r=$2 spin="$SPIN -i $ITERS" base="$work/$1.$2"
	# The profiler runs `runstat -o IN -- sh -c LOAD`: IN has the load's own CPU time, which the
	# profiler's rusage includes (wait4 adds a child's reaped descendants) and which is taken off.
	# LOAD reads the profiler's (its grandparent's) CPU time in ns, all its threads', and BPF
	# program counters before and after the work.
	local prof="\$(cut -d' ' -f4 /proc/\$PPID/stat)"
	# one process (awk), not one per descriptor: bpfprof -a reads the maps of every process it
	# samples; the threads' sum printed before the descriptors, which may close while read, and
	# each thread name's ("thread: NAME NS": bpfprof-notice, -mmap, -unwind, the main thread's)
	local snap="p=$prof; awk -v k=cpu: 'FILENAME ~ /comm\$/ { d = FILENAME; sub(/comm\$/, \"\", d); name[d] = \$1; next } FILENAME ~ /schedstat/ { cpu += \$1; d = FILENAME; sub(/schedstat\$/, \"\", d); by[name[d]] += \$1; next } !done { print k, cpu + 0; for (n in by) print \"thread:\", n, by[n]; done = 1 } FNR == 1 { b = 0; id = 0 } /^prog_type:/ { b = 1 } b && /^prog_id:/ { id = \$2 } b && /^run_/ { print \$1, id, \$2 }' /proc/\$p/task/*/comm /proc/\$p/task/*/schedstat /proc/\$p/fdinfo/* 2>/dev/null"
	local load=("$RUNSTAT" -o "$base.in" -- sh -c "{ $snap; } >$base.s0; $spin >$base.spin; { $snap; } >$base.s1; true")
	case $v in
	alone)	"$RUNSTAT" -o "$base.rs" -- sh -c "$spin >$base.spin" ;;
	bpf999)	"$RUNSTAT" -o "$base.rs" -- "$BPFPROF" -a -F 999 -o "$work/b.pb.gz" -- "${load[@]}" 2>"$base.err" ;;
	bpf99)	"$RUNSTAT" -o "$base.rs" -- "$BPFPROF" -a -F 99 -o "$work/b.pb.gz" -- "${load[@]}" 2>"$base.err" ;;
	perf999) "$RUNSTAT" -o "$base.rs" -- "$PERF" record -a -g -F 999 -o "$work/p.data" -- "${load[@]}" 2>"$base.err" ;;
	perf99)	"$RUNSTAT" -o "$base.rs" -- "$PERF" record -a -g -F 99 -o "$work/p.data" -- "${load[@]}" 2>"$base.err" ;;
	esac
}

# Each profiled run is bracketed by runs of the load alone, and compared
# with their mean: the host's speed drifts over seconds (other guests, the
# CPU's clock), and an alone run next to each profiled one on both sides
# cancels a drift that is linear over the three, where one alone run a
# round was up to four runs away from what it was compared with.
variants=(bpf999 perf999 bpf99 perf99)
for ((r = 1; r <= ROUNDS; r++)); do
	run alone "$r.0"
	for ((i = 0; i < ${#variants[@]}; i++)); do
		v=${variants[$(((i + r - 1) % ${#variants[@]}))]}
		run "$v" "$r"
		run alone "$r.$((i + 1))"
		echo "$((i)) $((i + 1))" >"$work/$v.$r.alone"
	done
	printf 'round %d: alone' "$r" >&2
	for ((i = 0; i <= ${#variants[@]}; i++)); do printf ' %ss' "$(field "$work/alone.$r.$i.spin" elapsed_s)" >&2; done
	for v in "${variants[@]}"; do printf ' %s %ss' "$v" "$(field "$work/$v.$r.spin" elapsed_s)" >&2; done
	echo >&2
done

# the alone time VARIANT's run of ROUND is compared with: the mean of the two around it
alone_of() {
	local a b
	read -r a b <"$work/$1.$2.alone"
	calc "($(field "$work/alone.$2.$a.spin" elapsed_s) + $(field "$work/alone.$2.$b.spin" elapsed_s)) / 2"
}
# slowdown of VARIANT in %, per round against the alone runs around it
slowdowns() {
	local r
	for ((r = 1; r <= ROUNDS; r++)); do
		calc "($(field "$work/$1.$r.spin" elapsed_s) / $(alone_of "$1" "$r") - 1) * 100"
	done
}
# counter deltas over the load: CPU ns of the profiler, BPF run time and runs
cpu_at() { awk '$1 == "cpu:" { print $2 }' "$1"; } # FILE: the profiler's CPU ns in a snapshot
cpu_ns() { echo $(($(cpu_at "$work/$1.$2.s1") - $(cpu_at "$work/$1.$2.s0"))); }
# (lines "KEY: PROG_ID VALUE"): only programs in both snapshots count; one
# closed or loaded between them (the kernel names' program, loaded late) would
# add or take away its whole count
bpf_delta() { # VARIANT ROUND KEY
	awk -v k="$3:" '$1 != k { next } FILENAME == ARGV[1] { a[$2] = $3; next } ($2 in a) { s += $3 - a[$2] } END { print s + 0 }' \
		"$work/$1.$2.s0" "$work/$1.$2.s1"
}
# the profiler's own CPU seconds: its rusage less the load's (runstat -o IN inside it)
cpu_s() {
	calc "$(field "$work/$1.$2.rs" user_s) + $(field "$work/$1.$2.rs" sys_s) - $(field "$work/$1.$2.in" user_s) - $(field "$work/$1.$2.in" sys_s)"
}
# start-up: the profiler's CPU before the work began; finalize: its whole run's less the CPU
# it had spent when the work ended (ms)
startup_ms() { calc "$(cpu_at "$work/$1.$2.s0") / 1e6"; }
finalize_ms() { calc "$(cpu_s "$1" "$2") * 1e3 - $(cpu_at "$work/$1.$2.s1") / 1e6"; }
# the CPU ms of THREAD's threads (a comm name; "main" for those not named bpfprof-*: the reader)
# while sampling: VARIANT ROUND THREAD; a thread started meanwhile counts from 0
thread_ms() {
	local f
	for f in "$work/$1.$2.s0" "$work/$1.$2.s1"; do
		awk -v t="$3" '$1 == "thread:" { n = ($2 ~ /^bpfprof-/) ? $2 : "main"; if (n == t) s += $3 } END { print s + 0 }' "$f"
	done | awk 'NR == 1 { a = $1 } NR == 2 { printf "%.1f\n", ($1 - a) / 1e6 }'
}
bpf_prog_ns() { calc "$(bpf_delta "$1" "$2" run_time_ns) / $(bpf_delta "$1" "$2" run_cnt)"; }
# bpfprof's CPU ns while sampling, per sample
window_ns() { calc "$(cpu_ns "$1" "$2") / $(bpf_delta "$1" "$2" run_cnt)"; }
# what sampling costs, ns a sample: CPU while sampling + BPF run time, over the program's runs
sampling_ns() { calc "($(cpu_ns "$1" "$2") + $(bpf_delta "$1" "$2" run_time_ns)) / $(bpf_delta "$1" "$2" run_cnt)"; }
# whole-run cost per sample, ns: own CPU (+ all BPF run time for bpfprof) / samples
bpf_cost() { calc "($(cpu_s "$1" "$2") * 1e9 + $(bpf_delta "$1" "$2" run_time_ns)) / $(bpfprof_samples "$work/$1.$2.err")"; }
perf_cost() { calc "$(cpu_s "$1" "$2") * 1e9 / $(perf_samples "$work/$1.$2.err")"; }

b999=$(median $(slowdowns bpf999))
p999=$(median $(slowdowns perf999))
b99=$(median $(slowdowns bpf99))
p99=$(median $(slowdowns perf99))
alone=$(median $(for ((r = 1; r <= ROUNDS; r++)); do for ((i = 0; i <= ${#variants[@]}; i++)); do field "$work/alone.$r.$i.spin" elapsed_s; done; done))
echo "spin alone: median $alone s over $ROUNDS rounds of $((${#variants[@]} + 1)) runs, $NCPU CPUs"
echo "slowdown % per round: bpfprof 999 Hz: $(slowdowns bpf999 | tr '\n' ' ')"
echo "                      perf 999 Hz:    $(slowdowns perf999 | tr '\n' ' ')"
echo "                      bpfprof 99 Hz:  $(slowdowns bpf99 | tr '\n' ' ')"
echo "                      perf 99 Hz:     $(slowdowns perf99 | tr '\n' ' ')"

# the ratio of two slowdowns near 0 is noise-dominated: print it, judge by the difference too
ratio999=$(awk -v b="$b999" -v p="$p999" 'BEGIN { if (p > 0) printf "%.2f", b / p; else print "n/a" }')
goal999=$(awk -v b="$b999" -v p="$p999" 'BEGIN { print (b <= p / 2) ? "met" : "MISSED" }')
result "overhead -a -F 999 (median slowdown)" "bpfprof $(calc "$b999")%" "perf record -g $(calc "$p999")%" \
	"$ratio999" "<= 0.5 x perf" "$goal999"
ratio99=$(awk -v b="$b99" -v p="$p99" 'BEGIN { if (p > 0) printf "%.2f", b / p; else print "n/a" }')
result "overhead -a -F 99 (median slowdown)" "bpfprof $(calc "$b99")%" "perf record -g $(calc "$p99")%" \
	"$ratio99" "<= 1%" "$(verdict "$b99" "<=" 1)"

bc_all=() pc_all=() prog_all=() win_all=() samp_all=() st_all=() fin_all=()
for ((r = 1; r <= ROUNDS; r++)); do
	bc_all+=("$(bpf_cost bpf999 "$r")")
	pc_all+=("$(perf_cost perf999 "$r")")
	prog_all+=("$(bpf_prog_ns bpf999 "$r")")
	win_all+=("$(window_ns bpf999 "$r")")
	samp_all+=("$(sampling_ns bpf999 "$r")")
	st_all+=("$(startup_ms bpf999 "$r")")
	fin_all+=("$(finalize_ms bpf999 "$r")")
done
bcost=$(median "${bc_all[@]}")
pcost=$(median "${pc_all[@]}")
scost=$(median "${samp_all[@]}")
echo "own CPU (+ BPF) ns per sample, whole run, per round: bpfprof ${bc_all[*]}; perf record ${pc_all[*]}"
echo "  bpfprof's sampling (CPU while sampling + BPF), ns per sample: ${samp_all[*]}"
echo "  bpfprof's BPF program, ns per run: ${prog_all[*]}"
echo "  bpfprof's CPU while sampling, ns per sample: ${win_all[*]}"
echo "  bpfprof's start-up, finalize, ms of CPU: ${st_all[*]}; ${fin_all[*]}"
# where the CPU while sampling went, by thread (medians over the rounds)
by_thread=""
for t in main bpfprof-notice bpfprof-mmap bpfprof-unwind; do
	by_thread+=" $t $(median $(for ((r = 1; r <= ROUNDS; r++)); do thread_ms bpf999 "$r" "$t"; done))"
done
echo "  bpfprof's CPU while sampling by thread, ms (median; main: the reader and the rest):$by_thread"
echo "last bpfprof run: $(sed -n 's/^bpfprof: \([0-9.]* s, [0-9]* samples, [0-9]* lost\).*/\1/p' "$work/bpf999.$ROUNDS.err"), own CPU $(cpu_s bpf999 "$ROUNDS") s, $(cat "$work/bpf999.$ROUNDS.rs")"
echo "last perf run:    $(perf_samples "$work/perf999.$ROUNDS.err") samples, own CPU $(cpu_s perf999 "$ROUNDS") s, $(cat "$work/perf999.$ROUNDS.rs")"
result "cost per sample -F 999 (CPU while sampling + BPF time)" "bpfprof $(calc "$scost / 1000") us (BPF $(calc "$(median "${prog_all[@]}") / 1000") us, own CPU $(calc "$(median "${win_all[@]}") / 1000") us; apart: start-up $(median "${st_all[@]}") ms, finalize $(median "${fin_all[@]}") ms; whole run $(calc "$bcost / 1000") us a sample)" \
	"perf record $(calc "$pcost / 1000") us (user space only, whole run)" "$(calc "$scost / $pcost")" "<= 5 us" \
	"$(verdict "$scost" "<=" 5000)"

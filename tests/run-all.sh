#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The whole suite, as make test runs it: the kernel matrix (tests/kernels/
# run.sh: bpfprof on Debian's kernels under QEMU) while the cmocka unit tests
# (on the normal build and, when its OUTPUT is given, on the ASan + UBSan
# build) and then every libFuzzer harness in OUTPUT/fuzz (FUZZ_TIME seconds
# each, FUZZ_JOBS at once, default 1; tests/run-fuzz.sh; FUZZ_TIME=0 skips)
# run beside it; then every integration script on the normal build and the
# parser and writer scripts again on the sanitizer build, TEST_JOBS scripts
# at once (default: the number of CPUs), beside what is left of the fuzzing.
#
# Why at once: the integration scripts are bound by their workloads, one
# spinning thread each for the seconds a check needs, so one script keeps one
# CPU busy; two keep a 2-CPU machine busy. The fuzzers run for a fixed time
# whatever CPU they get, so one at a time beside two scripts each gets about
# two thirds of a CPU (its executions are in its line) instead of a minute of
# wall time of their own. Every sampled check states its tolerance for a
# workload that gets a fraction of a CPU (tests/integration/lib.bash
# split_tol), and no script judges another's processes, so the order they run
# in does not change a result.
#
# Each part's output is printed whole when it ends, with its wall seconds;
# the last lines are the wall seconds per part and one
# "N passed, N failed, N skipped" total for everything.
#
# usage: [TEST_JOBS=N] [FUZZ_TIME=S] [SAN_ONLY=1] tests/run-all.sh [OUTPUT [SAN_OUTPUT]]
set -uo pipefail
out=${1:-.output}
san=${2:-}
jobs=${TEST_JOBS:-$(nproc)}
here=$(cd "$(dirname "$0")" && pwd)
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

# The scripts that drive bpfprof's parsers and writers, run again on the
# sanitizer build: perfdata (perf.data writer), outputs (every writer in one
# -a run), xray (trace and instrumentation map readers), jit (jitdump and perf
# map readers, JIT ELF images), push and otlp (the push thread, its queue and libcurl;
# it found the unwinder's leak at exit), gone (the build-id cache and .prof
# file copies), jitlive (a JVM's attach socket, a process's stdio buffer read
# from its memory), names (the demangler and Go's .gopclntab reader on real
# files), jvm (the JVMs' vmStructs tables read from their memory), node
# (V8's metadata read from a real node binary). The rest (targets, options,
# the browser's flame graph checks, unwinding against perf) gain nothing
# from it.
san_scripts=(perfdata outputs xray jit push otlp gone jitlive names jvm node)

# Heaviest first (CPU seconds measured with each script alone), so that the
# last to start are short and both CPUs stay busy to the end; scripts not
# named here follow in name order.
heavy=(python push churn faults run debuginfo jit gone unwind xray)

# Scripts that run beside the end of the kernel matrix, one at a time: those
# that neither time anything nor bound a sampled share (XRay files against
# llvm-xray's account of the same files, make install, privilege checks,
# memcheck's report of a run, the unwind cache's entries, the JVMs' tables
# against jhsdb's, node's V8 metadata against its binary). Not those that
# bound a function's share of a process's samples: beside a guest the
# kernel's interrupt path (pvm_irq_enable) took 19 % of hotcold's samples in
# perfdata.sh's command run, hot_a 61 % where 75 ± 7 was due (1 CI-style
# run of 3; outputs.sh's 69.4 % in another).
beside=(xray install privileges valgrind cache jvm node)
done_beside=()

# part NAME CMD...: run CMD with its output in $logs/NAME.log, then print that
# output whole under a "== NAME" header with the part's wall seconds
part() {
	local name=$1 t0=$SECONDS rc TIMEFORMAT='%U %S'
	shift
	# bash's time keyword: the user and system CPU seconds of the part and
	# everything it waited for, for the per-part CPU line at the end
	{ time "$@" >"$logs/$name.log" 2>&1; } 2>"$logs/$name.cpu"
	rc=$?
	echo "$name $((SECONDS - t0))" >"$logs/$name.time"
	echo "$rc" >"$logs/$name.rc"
	{
		echo "== $name ($((SECONDS - t0)) s)"
		cat "$logs/$name.log"
	} | (flock 9 && cat) 9>"$logs/print.lock"
	return "$rc"
}

# The kernel matrix (tests/kernels/run.sh), the longest part, beside the unit
# tests and then the fuzzers, one at a time: the guests keep one CPU of two
# busy (single-threaded TCG runs both vCPUs on one thread), and neither the
# unit tests nor the fuzzers time anything; the scripts in `beside` follow
# while the matrix runs. The other integration
# scripts wait for the matrix: beside two scripts every guest would get less
# of the CPU than its sampled checks were sized for, and the scripts less
# than theirs (push.sh's stall check and gone.sh's splits failed so).
# SAN_ONLY=1 (make test-san): the sanitizer build's unit tests and scripts alone.
san_only=${SAN_ONLY:-0}
if [ "$san_only" = 1 ]; then
	[ -n "$san" ] || { echo "SAN_ONLY=1 needs the sanitizer build's OUTPUT" >&2; exit 2; }
	part san:unit "$here/run-unit.sh" "$san"
else
	part kernels "$here/kernels/run.sh" &
	kernels_pid=$!
	UNIT_JOBS=1 part unit "$here/run-unit.sh" "$out"
	[ -n "$san" ] && UNIT_JOBS=1 part san:unit "$here/run-unit.sh" "$san"

	# the fuzzers, one stream
	[ "${FUZZ_TIME:-10}" = 0 ] || FUZZ_JOBS=${FUZZ_JOBS:-1} part fuzz "$here/run-fuzz.sh" "$out"
	# then, while the matrix still runs, the scripts that time and sample
	# nothing, one at a time (the matrix outlasted the unit tests and the
	# fuzzers by 50-80 s, half a CPU idle)
	for n in "${beside[@]}"; do
		kill -0 "$kernels_pid" 2>/dev/null || break
		[ -f "$here/integration/$n.sh" ] || continue
		part "$n.sh" "$here/integration/$n.sh"
		done_beside+=("$n")
	done
	wait "$kernels_pid"
fi

# the integration queue: "NAME|SCRIPT|BPFPROF" each, heaviest first
queue=()
for n in "${heavy[@]}"; do
	[ -f "$here/integration/$n.sh" ] && queue+=("$n")
done
for t in "$here"/integration/*.sh; do
	n=$(basename "$t" .sh)
	[[ " ${heavy[*]} " == *" $n "* ]] || queue+=("$n")
done
jobs_list=()
for n in "${queue[@]}"; do
	[ "$san_only" = 1 ] || [[ " ${done_beside[*]} " == *" $n "* ]] ||
		jobs_list+=("$n.sh|$here/integration/$n.sh|")
	if [ -n "$san" ] && [[ " ${san_scripts[*]} " == *" $n "* ]]; then
		jobs_list+=("san:$n.sh|$here/integration/$n.sh|$(cd "$san" && pwd)/bpfprof")
	fi
done
running=0
for j in "${jobs_list[@]}"; do
	IFS='|' read -r name script bin <<<"$j"
	if [ -n "$bin" ]; then
		# a sanitizer report exits 86, not 1: a script that expects bpfprof
		# to reject its input with 1 cannot take one for a rejection
		BPFPROF=$bin CORRUPTIONS=50 ASAN_OPTIONS=${ASAN_OPTIONS:-exitcode=86} UBSAN_OPTIONS=${UBSAN_OPTIONS:-exitcode=86} \
			part "$name" "$script" &
	else
		part "$name" "$script" &
	fi
	running=$((running + 1))
	if [ "$running" -ge "$jobs" ]; then
		wait -n
		running=$((running - 1))
	fi
done
# every script
while [ "$running" -gt 0 ]; do
	wait -n
	running=$((running - 1))
done
wait

total() { sed -n "s/^\(unit: \)\{0,1\}\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\2 \3 \4/p" "$logs"/*.log |
	awk '{ p += $1; f += $2; s += $3 } END { printf "%d passed, %d failed, %d skipped\n", p, f, s }'; }
all=$(total)
echo
echo "wall seconds per part: $(cat "$logs"/*.time | sort -k2 -nr | awk '{ printf "%s%s %s", (NR > 1 ? ", " : ""), $1, $2 }'), $SECONDS in all"
# CPU seconds (user + system) per part: what a part costs the machine, which
# decides the suite's wall time on 2 CPUs more than its own wall seconds do
echo "CPU seconds per part: $(for f in "$logs"/*.cpu; do
	n=$(basename "$f" .cpu)
	awk -v n="$n" 'NF == 2 { printf "%s %.0f\n", n, $1 + $2 }' "$f"
done | sort -k2 -nr | awk '{ t += $2; printf "%s%s %s", (NR > 1 ? ", " : ""), $1, $2 } END { printf ", %d in all", t }')"
# a part that ended badly without a failed check (a script's own error)
bad=$(grep -lv '^0$' "$logs"/*.rc | xargs -r -n1 basename | sed 's/\.rc$//' | tr '\n' ' ')
[ -n "$bad" ] && echo "parts that exited non-zero: $bad"
echo "all: $all"
[ -z "$bad" ] && [[ $all == *" 0 failed,"* ]]

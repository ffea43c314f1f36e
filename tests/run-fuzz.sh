#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# CI fuzzing: every libFuzzer harness built in OUTPUT/fuzz (tests/fuzz/fuzz_*.c)
# runs for FUZZ_TIME seconds (default 10, as make test runs it) on its corpus
# tests/fuzz/corpus/<reader>, read only: new inputs go to a throwaway corpus
# under OUTPUT/fuzz-ci, wiped first, so tests/ stays unchanged. FUZZ_JOBS
# harnesses run at once (default: the number of CPUs). One ok line per harness
# with executions and coverage from -print_final_stats; a crash, leak, timeout
# or out-of-memory fails it, naming the reproducer left under OUTPUT/fuzz-ci.
# Prints "N passed, N failed, N skipped" last; exits non-zero on any failure.
#
# With --replay (make check) nothing is fuzzed: each harness runs every file
# of its corpus once, as libFuzzer does for file arguments, and fails on a
# crash, leak or sanitizer report: seconds, not minutes.
#
# usage: [FUZZ_TIME=S] [FUZZ_JOBS=N] tests/run-fuzz.sh [--replay] [OUTPUT]   (FUZZ_TIME=0 skips)
set -uo pipefail
replay=
if [ "${1:-}" = --replay ]; then
	replay=1
	shift
fi
out=${1:-.output}
time_s=${FUZZ_TIME:-10}
jobs=${FUZZ_JOBS:-$(nproc)}
here=$(cd "$(dirname "$0")" && pwd)
work=$out/fuzz-ci

. "$here/integration/lib.bash"
finish() { echo "$passed passed, $failed failed, $skipped skipped"; [ $failed -eq 0 ]; exit; }

bins=()
for f in "$here"/fuzz/fuzz_*.c; do
	bins+=("$out/fuzz/$(basename "$f" .c)")
done

if [ -n "$replay" ]; then
	for bin in "${bins[@]}"; do
		name=${bin##*/fuzz_}
		files=("$here/fuzz/corpus/$name"/*)
		if [ ! -x "$bin" ]; then
			fail "fuzz_$name: not built ($bin): make check builds it"
		elif [ ! -f "${files[0]}" ]; then
			fail "fuzz_$name: no corpus in tests/fuzz/corpus/$name"
		elif log=$("$bin" -rss_limit_mb=2048 -timeout=25 "${files[@]}" 2>&1); then
			ok "fuzz_$name: ${#files[@]} corpus files replayed"
		else
			fail "fuzz_$name: replay of tests/fuzz/corpus/$name" \
				"$(grep -m1 -E '^==[0-9]+==ERROR|^SUMMARY|deadly signal|ALARM|out-of-memory|^Running: ' <<<"$log")" \
				"$(grep -E 'Test unit written to|^Running: ' <<<"$log" | tail -1)"
		fi
	done
	finish
fi
if [ "$time_s" = 0 ]; then
	skip "fuzzing" "FUZZ_TIME=0"
	finish
fi
rm -rf "$work"
mkdir -p "$work"

# run_one BIN: fuzz it into $work/NAME.log; its exit status in $work/NAME.rc
run_one() {
	local bin=$1 name seeds
	name=${bin##*/fuzz_}
	seeds=$here/fuzz/corpus/$name
	mkdir -p "$work/corpus-$name" "$work/artifacts-$name"
	[ -d "$seeds" ] || seeds=
	# -timeout: one input running this long is a hang, not slowness
	"$bin" -max_total_time="$time_s" -print_final_stats=1 -timeout=25 -rss_limit_mb=2048 \
		-artifact_prefix="$work/artifacts-$name/" "$work/corpus-$name" ${seeds:+"$seeds"} \
		>"$work/$name.log" 2>&1
	echo $? >"$work/$name.rc"
}

running=0
for bin in "${bins[@]}"; do
	[ -x "$bin" ] || continue
	run_one "$bin" &
	running=$((running + 1))
	if [ $running -ge "$jobs" ]; then
		wait -n
		running=$((running - 1))
	fi
done
wait

for bin in "${bins[@]}"; do
	name=${bin##*/fuzz_}
	if [ ! -x "$bin" ]; then
		fail "fuzz_$name: not built ($bin): make fuzz-ci builds it"
		continue
	fi
	log=$work/$name.log rc=$(cat "$work/$name.rc")
	stat() { sed -n "s/^stat::$1: *\([0-9]*\)$/\1/p" "$log"; }
	execs=$(stat number_of_executed_units) rate=$(stat average_exec_per_sec)
	newu=$(stat new_units_added) rss=$(stat peak_rss_mb)
	# the closing status line: "#N DONE cov: C ft: F corp: U/SIZE ..."
	done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE ' "$log" | tail -1)
	cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$done_line")
	ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$done_line")
	corp=$(sed -n 's/.* corp: \([0-9]*\)\/.*/\1/p' <<<"$done_line")
	if [ "$rc" -eq 0 ] && [ "${execs:-0}" -gt 0 ] && [ -n "$cov" ]; then
		ok "fuzz_$name: ${time_s} s, $execs executions ($rate/s), cov $cov, ft $ft, corpus $corp ($newu units added), peak RSS $rss MB"
	else
		# libFuzzer's report: the sanitizer's error and the reproducer it wrote
		fail "fuzz_$name: exit $rc after ${execs:-0} executions" \
			"$(grep -m1 -E '^==[0-9]+==ERROR|^SUMMARY|deadly signal|ALARM|out-of-memory' "$log")" \
			"$(grep -E '^artifact_prefix|Test unit written to' "$log" | tail -1)" "log: $log"
	fi
done
finish

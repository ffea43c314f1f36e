#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Run every cmocka driver in OUTPUT/tests and total their results.
# UNIT_JOBS drivers run at once (default: the number of CPUs); their output is
# printed whole, one driver after the other, in name order.
# Prints "N passed, N failed, N skipped" last; exits non-zero on any failure.
set -uo pipefail
out=${1:-.output}
jobs=${UNIT_JOBS:-$(nproc)}
passed=0 failed=0 skipped=0
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

tests=()
for t in "$out"/tests/test_*; do
	# the directory also holds the compiler's .d files
	[ -f "$t" ] && [ -x "$t" ] && tests+=("$t")
done

running=0
for t in "${tests[@]}"; do
	name=${t##*/}
	("$t" >"$logs/$name.log" 2>&1; echo $? >"$logs/$name.rc") &
	running=$((running + 1))
	if [ $running -ge "$jobs" ]; then
		wait -n
		running=$((running - 1))
	fi
done
wait

for t in "${tests[@]}"; do
	name=${t##*/} log=$logs/${t##*/}.log
	rc=$(cat "$logs/$name.rc")
	cat "$log"
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
	f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
	s=$(grep -c '^\[  SKIPPED \]' "$log")
	passed=$((passed + ${p:-0}))
	failed=$((failed + ${f:-0}))
	skipped=$((skipped + s))
	if [ "$rc" -ne 0 ] && [ -z "$f" ]; then
		echo "FAIL - $t exited with status $rc"
		failed=$((failed + 1))
	fi
done
echo "unit: $passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Run every cmocka driver in OUTPUT/tests and total their results.
# Prints "N passed, N failed, N skipped" last; exits non-zero on any failure.
set -uo pipefail
out=${1:-.output}
passed=0 failed=0 skipped=0
for t in "$out"/tests/test_*; do
	[ -x "$t" ] || continue
	log=$(mktemp)
	"$t" >"$log" 2>&1
	rc=$?
	cat "$log"
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
	f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
	s=$(grep -c '^\[  SKIPPED \]' "$log")
	rm -f "$log"
	passed=$((passed + ${p:-0}))
	failed=$((failed + ${f:-0}))
	skipped=$((skipped + s))
	if [ $rc -ne 0 ] && [ -z "$f" ]; then
		echo "FAIL - $t exited with status $rc"
		failed=$((failed + 1))
	fi
done
echo "unit: $passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]

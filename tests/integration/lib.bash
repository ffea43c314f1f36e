# SPDX-License-Identifier: MIT
# Shared by the integration scripts (sourced; not a test itself): TAP-like
# result lines and the closing "N passed, N failed, N skipped" total.
passed=0 failed=0 skipped=0
ok() { echo "ok   - $1"; passed=$((passed + 1)); }
# fail NAME [DETAIL...]: each detail printed indented below
fail() { echo "FAIL - $1"; shift; for l in "$@"; do echo "       $l"; done; failed=$((failed + 1)); }
skip() { echo "skip - $1: $2"; skipped=$((skipped + 1)); }
# near A B TOL: |A - B| <= TOL, and A is not empty
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d <= t) }'; }

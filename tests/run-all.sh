#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The whole suite: cmocka unit tests, then the root-only integration tests
# (valgrind.sh and churn.sh among them), then the unit tests and the parser
# and writer suites again on the ASan + UBSan build when its OUTPUT is given,
# then every libFuzzer harness built in OUTPUT/fuzz for FUZZ_TIME seconds
# (tests/run-fuzz.sh; FUZZ_TIME=0 skips).
# Ends with one "N passed, N failed, N skipped" line for everything.
set -uo pipefail
out=${1:-.output}
san=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
log=$(mktemp)
trap 'rm -f "$log"' EXIT

"$here/run-unit.sh" "$out" | tee "$log"
unit_rc=${PIPESTATUS[0]}
it_rc=0
for t in "$here"/integration/*.sh; do
	echo "== $(basename "$t")"
	"$t" | tee -a "$log"
	[ "${PIPESTATUS[0]}" -eq 0 ] || it_rc=1
done

if [ -n "$san" ]; then
	echo "== sanitizer build (ASan + UBSan): unit tests"
	"$here/run-unit.sh" "$san" | tee -a "$log"
	[ "${PIPESTATUS[0]}" -eq 0 ] || unit_rc=1
	# Only the suites that drive bpfprof's parsers and writers run again:
	# perfdata (perf.data writer), outputs (every writer, .prof included, in
	# one -a run), xray (trace and instrumentation map readers), jit (jitdump
	# and perf map readers, JIT ELF images), push (the push thread, its queue
	# and libcurl; it found the unwinder's leak at exit). run.sh (targets,
	# options, errors) and the flame graph suite (a browser's checks) gain
	# nothing from it. gone (the build-id cache and .prof file copies) and
	# jitlive (a JVM's attach socket, a process's stdio buffer read from its
	# memory) read what other processes hand them.
	for t in "$here"/integration/{perfdata,outputs,xray,jit,push,gone,jitlive}.sh; do
		echo "== sanitizer build: $(basename "$t")"
		BPFPROF=$(cd "$san" && pwd)/bpfprof "$t" | tee -a "$log"
		[ "${PIPESTATUS[0]}" -eq 0 ] || it_rc=1
	done
fi

echo "== fuzzing: each libFuzzer harness ${FUZZ_TIME:-10} s"
"$here/run-fuzz.sh" "$out" | tee -a "$log"
fuzz_rc=${PIPESTATUS[0]}

total() { sed -n "s/^\(unit: \)\{0,1\}\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\2 \3 \4/p" "$log" |
	awk '{ p += $1; f += $2; s += $3 } END { printf "%d passed, %d failed, %d skipped\n", p, f, s }'; }
echo
echo "all: $(total)"
[ $unit_rc -eq 0 ] && [ $it_rc -eq 0 ] && [ $fuzz_rc -eq 0 ]

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

# each part's wall time, for the summary at the end (what make test costs, part by part)
times=$(mktemp)
trap 'rm -f "$log" "$times"' EXIT
timed() {
	local name=$1 t0=$SECONDS rc
	shift
	"$@" | tee -a "$log"
	rc=${PIPESTATUS[0]}
	echo "$name $((SECONDS - t0))" >>"$times"
	return "$rc"
}

timed unit "$here/run-unit.sh" "$out"
unit_rc=$?
it_rc=0
for t in "$here"/integration/*.sh; do
	echo "== $(basename "$t")"
	timed "$(basename "$t")" "$t" || it_rc=1
done

if [ -n "$san" ]; then
	echo "== sanitizer build (ASan + UBSan): unit tests"
	timed san:unit "$here/run-unit.sh" "$san" || unit_rc=1
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
		BPFPROF=$(cd "$san" && pwd)/bpfprof timed "san:$(basename "$t")" "$t" || it_rc=1
	done
fi

echo "== fuzzing: each libFuzzer harness ${FUZZ_TIME:-10} s"
timed fuzz "$here/run-fuzz.sh" "$out"
fuzz_rc=$?

total() { sed -n "s/^\(unit: \)\{0,1\}\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\2 \3 \4/p" "$log" |
	awk '{ p += $1; f += $2; s += $3 } END { printf "%d passed, %d failed, %d skipped\n", p, f, s }'; }
echo
echo "wall seconds per part: $(sort -k2 -nr "$times" | awk '{ printf "%s%s %s", (NR > 1 ? ", " : ""), $1, $2 }'), $(awk '{ s += $2 } END { print s }' "$times") in all"
echo "all: $(total)"
[ $unit_rc -eq 0 ] && [ $it_rc -eq 0 ] && [ $fuzz_rc -eq 0 ]

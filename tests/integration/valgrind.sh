#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One whole run under valgrind memcheck: bpfprof profiles hotcold for 0.5 s
# (command form, 999 Hz: 100-500 samples, hot_a three in four of them)
# writing every format at once (.prof, perf.data, .pb.gz, .folded, .svg),
# with no memory error and no definite or indirect leak. Most of the run's
# CPU time is valgrind's on bpfprof's start and exit, whatever the workload's
# length; 2 s of hotcold only added 2 CPU-seconds of spinning. Only valgrind's blind spots about bpf(2) are suppressed
# (tests/valgrind.supp says which and why). Needs root (BPF) and valgrind.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
BPFPROF=${BPFPROF:-$top/bpfprof}
HOTCOLD=${HOTCOLD:-$top/.output/workload/hotcold}
SUPP=$top/tests/valgrind.supp
work=$(mktemp -d /tmp/bpfprof-vg.XXXXXX)
trap 'rm -rf "$work"' EXIT
# bpfprof fills perf's build-id cache ($HOME/.debug) for perf.data, as perf record does: keep it in $work
mkdir -p "$work/home"
export HOME=$work/home

. "$(dirname "$0")/lib.bash"

if [ "$(id -u)" -ne 0 ]; then
	skip "valgrind run" "needs root for BPF and perf events"
	finish
fi
if ! command -v valgrind >/dev/null; then
	skip "valgrind run" "valgrind not installed (tools/install-deps.sh installs it)"
	finish
fi
if [ ! -x "$BPFPROF" ] || [ ! -x "$HOTCOLD" ]; then
	fail "build" "missing $BPFPROF or $HOTCOLD: run make"
	finish
fi
# an ASan build cannot run under valgrind
if nm -D "$BPFPROF" 2>/dev/null | grep -q __asan_init || ldd "$BPFPROF" 2>/dev/null | grep -q libasan; then
	skip "valgrind run" "$BPFPROF is a sanitizer build"
	finish
fi
cd "$work" || exit 1

# --error-exitcode: 99, not an exit status bpfprof uses itself
valgrind --tool=memcheck --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect \
	--errors-for-leak-kinds=definite,indirect --suppressions="$SUPP" --log-file="$work/vg.log" \
	"$BPFPROF" -F 999 -o "$work/vg.prof" -o "$work/vg.data" -o "$work/vg.pb.gz" -o "$work/vg.folded" \
	-o "$work/vg.svg" -- "$HOTCOLD" 0.5 >"$work/out" 2>"$work/err"
rc=$?
summary=$(sed -n 's/^==[0-9]*== ERROR SUMMARY: //p' "$work/vg.log")
leaks=$(grep -E '^==[0-9]+== +(definitely|indirectly) lost:|All heap blocks were freed' "$work/vg.log" |
	sed 's/^==[0-9]*== *//' | tr '\n' ' ')
heap=$(sed -n 's/^==[0-9]*== *total heap usage: //p' "$work/vg.log")
if [ $rc -eq 0 ] && [[ $summary == "0 errors from 0 contexts"* ]]; then
	ok "memcheck: exit 0, ERROR SUMMARY: $summary; heap: $heap; $leaks"
else
	fail "memcheck: rc=$rc, ERROR SUMMARY: $summary" "$(grep -v -- '^--[0-9]*-- WARNING' "$work/vg.log" | head -80)" \
		"stderr: $(cat "$work/err")"
fi
# the run did its work under valgrind: every output written, the split found
missing=
for f in vg.prof vg.data vg.pb.gz vg.folded vg.svg; do
	[ -s "$work/$f" ] || missing="$missing $f"
done
if [ -z "$missing" ] && grep -q 'hot_a \[hotcold\]' "$work/err" &&
	[ "$(grep -c "^bpfprof: wrote '" "$work/err")" -eq 5 ]; then
	ok "under valgrind: 5 outputs written, summary names hot_a [hotcold]"
else
	fail "under valgrind: outputs missing:${missing:- none}" "$(cat "$work/err")"
fi
finish

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The BPF program's own user-stack walk (frame pointers, from page copies:
# bpf/profile.bpf.c) against the kernel's walker, the one perf record -g
# uses (bpf_get_stack with BPF_F_USER_STACK, perf_callchain_user), on every
# sample of real processes: --check-user-stacks runs both and counts samples
# where bpfprof's addresses are the kernel's, their first part (the kernel
# went on past a frame without frame pointers, into garbage), or different.
# No sample may differ. Workloads: hotcold (C, frame pointers, libc without),
# node running JIT code with --interpreted-frames-native-stack (V8 frames),
# and the whole machine (-a) while both run.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
BPFPROF=${BPFPROF:-$top/bpfprof}
HOTCOLD=${HOTCOLD:-$top/.output/workload/hotcold}
work=$(mktemp -d /tmp/bpfprof-walker.XXXXXX)
trap 'rm -rf "$work"' EXIT

. "$(dirname "$0")/lib.bash"
require_bpf "user stack walk against the kernel's"

# check NAME LOG: the summary's counts; no sample differs, most are compared
check() {
	local name=$1 log=$2 line same shorter differ samples
	line=$(grep "user stacks against the kernel's walk" "$log")
	samples=$(sed -n 's/^bpfprof: [0-9.]* s, \([0-9]*\) samples.*/\1/p' "$log" | head -1)
	read -r same shorter differ <<<"$(echo "$line" |
		sed -n 's/.*: \([0-9]*\) the same, \([0-9]*\) its first part, \([0-9]*\) different/\1 \2 \3/p')"
	if [ -n "$differ" ] && [ "$differ" -eq 0 ] && [ -n "$samples" ] &&
		[ $((same + shorter)) -ge $((samples * 9 / 10)) ] && [ "$samples" -gt 100 ]; then
		ok "$name: $same of $samples samples the same as the kernel's walk, $shorter its first part, 0 different"
	else
		fail "$name: user stacks differ from the kernel's walk" "${line:-no check line}" "$(tail -5 "$log")"
	fi
}

"$BPFPROF" --check-user-stacks -F 999 -o "$work/c.folded" -- "$HOTCOLD" 3 >"$work/c.log" 2>&1
check "hotcold" "$work/c.log"

if command -v node >/dev/null; then
	(cd "$work" && "$BPFPROF" --check-user-stacks -F 499 -o "$work/n.folded" -- \
		node --perf-prof --interpreted-frames-native-stack "$top/tests/jit/hot.js" 3 >"$work/n.log" 2>&1)
	check "node JIT code" "$work/n.log"
else
	skip "node JIT code" "node not installed"
fi

"$HOTCOLD" 4 >/dev/null &
hc=$!
"$BPFPROF" --check-user-stacks -a -F 499 -d 3 -o "$work/a.folded" >"$work/a.log" 2>&1
wait $hc
check "whole machine (-a)" "$work/a.log"

finish

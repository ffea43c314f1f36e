#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The BPF program's own user-stack walk (frame pointers, from page copies:
# bpf/unwind.bpf.h) against the kernel's walker, the one perf record -g
# uses (bpf_get_stack with BPF_F_USER_STACK, perf_callchain_user), on every
# sample of real processes: --check-user-stacks runs both and counts samples
# where bpfprof's addresses are the kernel's, their first part (the kernel
# went on past a frame without frame pointers, into garbage), or different.
# No sample may differ. Workloads: hotcold (C, frame pointers, libc without),
# node running JIT code with --interpreted-frames-native-stack (V8 frames),
# and the whole machine (-a) while a hotcold of its own runs: every process's
# walks, other tests' among them (no other process can make a walk differ).
#
# Sampled data: 1999 Hz (the kernel's limit if lower) for 1 s each, every
# sample compared: about 2,000 samples on an idle CPU, 300 with a sixth of
# one (load 12 on 2 CPUs); a check needs more than 100.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
BPFPROF=${BPFPROF:-$top/bpfprof}
HOTCOLD=${HOTCOLD:-$top/.output/workload/hotcold}
work=$(mktemp -d /tmp/bpfprof-walker.XXXXXX)
hc=
trap '[ -n "$hc" ] && kill -KILL "$hc" 2>/dev/null; wait; rm -rf "$work"' EXIT

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

# 1999 Hz, or the kernel's limit (kernel.perf_event_max_sample_rate) where lower
F=$(awk '{ print $1 < 1999 ? $1 : 1999 }' /proc/sys/kernel/perf_event_max_sample_rate 2>/dev/null)
F=${F:-1999}

"$BPFPROF" --check-user-stacks -F "$F" -o "$work/c.folded" -- "$HOTCOLD" 1 >"$work/c.log" 2>&1
check "hotcold" "$work/c.log"

if command -v node >/dev/null; then
	(cd "$work" && "$BPFPROF" --check-user-stacks -F "$F" -o "$work/n.folded" -- \
		node --perf-prof --interpreted-frames-native-stack "$top/tests/jit/hot.js" 1 >"$work/n.log" 2>&1)
	check "node JIT code" "$work/n.log"
else
	skip "node JIT code" "node not installed"
fi

# -a: every process on the machine, other tests' among them, while a hotcold
# of this script's runs; the check holds for any process (the same frame
# pointers, read twice in one sample), so whatever else runs cannot fail it
"$HOTCOLD" 10 >/dev/null &
hc=$!
# ready once it runs hotcold (exec'd, past the shell's fork)
for _ in $(seq 250); do
	[ "$(readlink "/proc/$hc/exe")" = "$(readlink -f "$HOTCOLD")" ] && break
	sleep 0.02
done
"$BPFPROF" --check-user-stacks -a --no-java --no-jvm-perfmap -F "$F" -d 1 -o "$work/a.folded" >"$work/a.log" 2>&1
kill -KILL $hc 2>/dev/null
wait $hc 2>/dev/null
hc=
check "whole machine (-a)" "$work/a.log"

finish

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Symbol tables (what benchmarks 4 and 5 spend on them): bench/symload loads
# /proc/kallsyms and the big libraries of the finalize workload (libLLVM,
# libclang-cpp, libstdc++, libc) and node when installed, then looks up 2000
# offsets in each, RUNS times; prints the median load times and the RSS the
# tables hold. Reference: `perf report`'s own cost is in finalize.sh; here
# the reference is the same tool built from the commit before the
# optimizations when BEFORE=path/to/symload is given.
set -euo pipefail
. "$(dirname "$0")/lib.bash"

RUNS=${RUNS:-5}
[ "$QUICK" = 1 ] && RUNS=1
files=()
for f in /usr/lib/x86_64-linux-gnu/libLLVM-14.so.1 /usr/lib/x86_64-linux-gnu/libclang-cpp.so.14 \
	/usr/lib/x86_64-linux-gnu/libstdc++.so.6 /usr/lib/x86_64-linux-gnu/libc.so.6 /usr/bin/node; do
	[ -f "$f" ] && files+=("$f")
done

measure() { # TOOL LABEL
	local k=() e=() r=() p=() i
	for ((i = 1; i <= RUNS; i++)); do
		"$1" "${files[@]}" >"$work/s.$i"
		k+=("$(awk '$1 == "kallsyms" { print $3 }' "$work/s.$i")")
		e+=("$(awk '$1 == "elf" { print $3 }' "$work/s.$i")")
		r+=("$(awk '$1 == "lookups" { print $9 }' "$work/s.$i")")
		p+=("$(awk '$1 == "lookups" { print $11 }' "$work/s.$i")")
	done
	echo "$2: kallsyms $(median "${k[@]}") ms, $(printf '%s ' "${files[@]##*/}")$(median "${e[@]}") ms, RSS after lookups $(median "${r[@]}") kB, peak $(median "${p[@]}") kB" >&2
	echo "$(median "${k[@]}") $(median "${e[@]}") $(median "${r[@]}") $(median "${p[@]}")"
}
read -r k e r p < <(measure "$BENCH_BIN/symload" "bpfprof")
if [ -n "${BEFORE:-}" ]; then
	read -r k0 e0 r0 p0 < <(measure "$BEFORE" "before")
	result "symbol tables: kallsyms + ${#files[@]} ELF files, load" "$(calc "$k + $e") ms" "before $(calc "$k0 + $e0") ms" \
		"$(calc "($k0 + $e0) / ($k + $e)")x faster" "-" "info"
	result "symbol tables: peak RSS" "$(calc "$p / 1024") MiB" "before $(calc "$p0 / 1024") MiB" "$(calc "$p / $p0")" "-" "info"
else
	result "symbol tables: kallsyms + ${#files[@]} ELF files, load" "$(calc "$k + $e") ms" "-" "-" "-" "info"
	result "symbol tables: peak RSS" "$(calc "$p / 1024") MiB" "-" "-" "-" "info"
fi

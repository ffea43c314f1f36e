#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The unwind table cache (--unwind-cache, docs/UNWINDING.md, "The unwind table cache"): a
# continuous -a run restarted with a warm cache against one started cold,
# on the same workloads, rounds interleaved (cold, warm, cold, warm, ...):
#   - time from a process's first sample to its tables being in place
#     (bpfprof -v "unwind readiness": mean and slowest), and the samples
#     walked before their process's tables were ready (-v "walked before
#     their tables were ready");
#   - time spent building tables (-v "ms building"), tables read from the
#     cache, and the cache's bytes on disk (its *.unw files).
# Workloads, each in a cgroup of this script's (bpfprof -a --cgroup, so that
# other processes of the machine do not count): Debian's python3.11 (a
# recursive fib), perl (a loop), xz -9, node (a loop) and clang-14 -O2
# compiling a generated C file again and again (libLLVM-14, 4.9 MB of CFI:
# a new clang process every second or so, as in a build).
# Then a restart under -p, whose tables are in place before sampling starts,
# on a clang-14 driver held stopped once its libraries are mapped (libLLVM-14
# and libclang-cpp: 12.5 MB of CFI, 2.5 M rows): bpfprof's CPU time (user +
# sys, /usr/bin/time: what the machine's load changes least) and its wall
# time, cold against warm.
# Environment: ROUNDS (default 3), DUR (seconds a run, default 3).
set -euo pipefail
. "$(dirname "$0")/lib.bash"

ROUNDS=${ROUNDS:-3}
DUR=${DUR:-3}
[ "$QUICK" = 1 ] && ROUNDS=1 DUR=2
PY=/usr/bin/python3.11
cg2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
[ -n "$cg2" ] || { echo "bench: no cgroup2 mount" >&2; exit 1; }
cg=$cg2/bpfprof-bench-cache.$$
mkdir "$cg"
cache_cleanup() {
	xargs -r kill -KILL <"$cg/cgroup.procs" 2>/dev/null || true
	sleep 0.2
	rmdir "$cg" 2>/dev/null || true
	cleanup
}
trap cache_cleanup EXIT
# in_cg CMD...: CMD in the bench's cgroup, in the background
in_cg() { sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg" "$@" >/dev/null 2>&1 & }

cat >"$work/fib.py" <<'EOF'
def fib(n): return n if n < 2 else fib(n - 1) + fib(n - 2)
while True: fib(22)
EOF
awk 'BEGIN { for (i = 0; i < 400; i++) {
	printf "int f%d(int *a, int n) { int s = 0; for (int i = 0; i < n; i++) s += a[i] * %d ^ (s >> 3); return s; }\n", i, i }
	print "int main(void) { return 0; }" }' >"$work/gen.c"
head -c 20000000 /dev/urandom >"$work/rand"

in_cg "$PY" "$work/fib.py"
in_cg perl -e 'my $s = 0; while (1) { $s += $_ for 1 .. 1000 }'
in_cg sh -c "while :; do xz -9 -T1 -c '$work/rand' >/dev/null; done"
command -v node >/dev/null && in_cg node -e 'let s = 0; for (;;) { for (let i = 0; i < 1e6; i++) s += i % 7; }'
command -v clang-14 >/dev/null && in_cg sh -c "while :; do clang-14 -O2 -c '$work/gen.c' -o /dev/null; done"
sleep 1

cache=$work/cache
# one NAME: bpfprof -v -a --cgroup for DUR seconds; its log NAME.log, then the cache's bytes in NAME.bytes
one() {
	"$BPFPROF" -v -a --cgroup "${cg#"$cg2"/}" -F 999 -d "$DUR" --no-debuginfod --no-jvm-perfmap \
		--unwind-cache "$cache" -o "$work/$1.folded" >"$work/$1.log" 2>&1
	find "$cache" -name '*.unw' -printf '%s\n' | awk '{ t += $1 } END { print t + 0 }' >"$work/$1.bytes"
}
num() { sed -n "s/.*$2.*/\\1/p" "$work/$1.log" | head -1; }
for ((r = 1; r <= ROUNDS; r++)); do
	rm -rf "$cache"
	one "cold$r"
	one "warm$r"
done

# -p on one clang-14: the CPU and wall time of bpfprof runs of 0.2 s, cold then warm
pcold=() pwarm=() pcoldw=() pwarmw=()
clang-14 -O2 -c "$work/gen.c" -o /dev/null >/dev/null 2>&1 &
pid=$!
for ((i = 0; i < 500; i++)); do
	grep -q libLLVM "/proc/$pid/maps" 2>/dev/null && break
	sleep 0.01
done
kill -STOP "$pid"
for ((r = 1; r <= ROUNDS; r++)); do
	for kind in cold warm; do
		[ $kind = cold ] && rm -rf "$cache"
		/usr/bin/time -f '%U %S %e' -o "$work/p$kind$r.time" "$BPFPROF" -v -p "$pid" -F 99 -d 0.2 --no-debuginfod \
			--unwind-cache "$cache" -o "$work/p.folded" >"$work/p$kind$r.log" 2>&1 || true
		read -r u s e <"$work/p$kind$r.time"
		if [ $kind = cold ]; then pcold+=("$(calc "$u + $s")") pcoldw+=("$e"); else pwarm+=("$(calc "$u + $s")") pwarmw+=("$e"); fi
	done
done
kill -KILL "$pid"
echo "-p clang-14: CPU s cold ${pcold[*]}, warm ${pwarm[*]}; wall s cold ${pcoldw[*]}, warm ${pwarmw[*]}"
grep -h 'unwind tables:\|unwind cache' "$work/pcold1.log" "$work/pwarm1.log" | sed 's/^/  /'

declare -A v
for kind in cold warm; do
	means=() maxes=() notready=() build=() hits=() cpu=() procs=() rows=() readms=()
	for ((r = 1; r <= ROUNDS; r++)); do
		n=$kind$r
		means+=("$(num "$n" ' \([0-9.]*\) ms on average from it to their tables')")
		maxes+=("$(num "$n" ' \([0-9.]*\) ms at most')")
		notready+=("$(num "$n" ' \([0-9]*\) walked before their tables were ready')")
		build+=("$(num "$n" ' \([0-9.]*\) ms building')")
		cpu+=("$(num "$n" ' \([0-9.]*\) ms of CPU registering them')")
		procs+=("$(num "$n" 'unwind tables: \([0-9]*\) processes')")
		rows+=("$(num "$n" ' \([0-9]*\) rows in ')")
		readms+=("$(num "$n" ' tables loaded from it in \([0-9.]*\) ms')")
		hits+=("$(num "$n" ' \([0-9]*\) tables loaded from it')")
	done
	v[$kind.mean]=$(median "${means[@]}")
	v[$kind.max]=$(median "${maxes[@]}")
	v[$kind.notready]=$(median "${notready[@]}")
	v[$kind.build]=$(median "${build[@]}")
	v[$kind.hits]=$(median "${hits[@]}")
	v[$kind.cpu]=$(median "${cpu[@]}")
	v[$kind.procs]=$(median "${procs[@]}")
	v[$kind.rows]=$(median "${rows[@]}")
	v[$kind.readms]=$(median "${readms[@]}")
	echo "$kind: readiness mean ${means[*]} ms, slowest ${maxes[*]} ms; not-ready samples ${notready[*]}; building ${build[*]} ms; CPU registering processes ${cpu[*]} ms; tables from the cache ${hits[*]} (read in ${readms[*]} ms); processes with tables at the end ${procs[*]}, rows ${rows[*]}"
done
bytes=$(cat "$work/warm$ROUNDS.bytes")
tables=$(find "$cache" -name '*.unw' | wc -l)
grep -h 'unwind tables:\|unwind cache' "$work/cold1.log" "$work/warm1.log" | sed 's/^/  /'

result "restart with a warm cache: slowest process from first sample to tables (ms)" "${v[warm.max]}" \
	"cold ${v[cold.max]}" "$(calc "${v[warm.max]} / (${v[cold.max]} + 0.001)")" "-" "info"
result "restart with a warm cache: mean from first sample to tables (ms)" "${v[warm.mean]}" \
	"cold ${v[cold.mean]}" "$(calc "${v[warm.mean]} / (${v[cold.mean]} + 0.001)")" "-" "info"
result "restart with a warm cache: samples walked before their tables were ready" "${v[warm.notready]}" \
	"cold ${v[cold.notready]}" "-" "< cold" "$(verdict "${v[warm.notready]}" "<=" "${v[cold.notready]}")"
result "restart with a warm cache: CPU ms registering the processes sampled (tables read or built, maps loaded)" "${v[warm.cpu]}" \
	"cold ${v[cold.cpu]}" "$(calc "${v[warm.cpu]} / (${v[cold.cpu]} + 0.001)")" "-" "info (warm registers more processes in the same time)"
result "restart with a warm cache: processes with their tables at the end of the run" "${v[warm.procs]} (${v[warm.rows]} rows)" \
	"cold ${v[cold.procs]} (${v[cold.rows]} rows)" "-" ">= cold" "$(verdict "${v[warm.procs]}" ">=" "${v[cold.procs]}")"
result "restart: ms reading tables from the cache (warm) against building them (cold)" "${v[warm.readms]} + ${v[warm.build]} building" \
	"cold ${v[cold.build]} building" "$(calc "(${v[warm.readms]} + ${v[warm.build]}) / (${v[cold.build]} + 0.001)")" "< cold" \
	"$(verdict "$(calc "${v[warm.readms]} + ${v[warm.build]}")" "<=" "${v[cold.build]}")"
result "-p restart on clang-14: bpfprof CPU s (user + sys) of a 0.2 s run, warm cache" "$(median "${pwarm[@]}")" \
	"cold $(median "${pcold[@]}")" "$(calc "$(median "${pwarm[@]}") / $(median "${pcold[@]}")")" "< cold" \
	"$(verdict "$(median "${pwarm[@]}")" "<=" "$(median "${pcold[@]}")")"
result "-p restart on clang-14: bpfprof wall s of a 0.2 s run, warm cache" "$(median "${pwarmw[@]}")" \
	"cold $(median "${pcoldw[@]}")" "$(calc "$(median "${pwarmw[@]}") / $(median "${pcoldw[@]}")")" "-" "info"
result "unwind cache on disk ($tables tables)" "$(calc "$bytes / 1048576") MiB" "-" "-" "<= 256 MiB (--unwind-cache-size)" \
	"$(verdict "$bytes" "<=" $((256 << 20)))"
# KEEP=DIR: the runs' logs are copied there
if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP" && cp "$work"/*.log "$KEEP"/; fi

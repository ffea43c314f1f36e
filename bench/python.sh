#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Python frames (issue 23): the BPF program's run time per sample of a
# Python process 30 Python frames deep (<module> and deep() 29 times, a loop
# at the bottom), profiled by `bpfprof -p -F 999` with the Python walk and
# with --no-python (the native walk alone, on the same kind of process),
# ROUNDS rounds interleaved, medians; the modern and the legacy variant
# (tail calls). Then what a non-Python process pays (bench/spin's 16-frame
# chain, with and without --no-python: one hash lookup), and the naming
# cost from -v's counters: code objects read from /proc/PID/mem per second
# of reading, and the share of frame lookups the cache answered.
#   sudo BPFPROF=./bpfprof OUTPUT=.output bench/run.sh python
set -euo pipefail
. "$(dirname "$0")/lib.bash"

PY=${PY:-/usr/bin/python3.11}
ROUNDS=${ROUNDS:-5}
DUR=${DUR:-3}
[ "$QUICK" = 1 ] && ROUNDS=1 DUR=1
[ -x "$PY" ] || { echo "bench: $PY missing" >&2; exit 1; }
sysctl -q -w kernel.bpf_stats_enabled=1
cat >"$work/deep.py" <<'PYEOF'
def deep(n):
    if n == 0:
        x = 0
        for i in range(200000):
            x += i
        return x
    return deep(n - 1)
while True:
    deep(28)
PYEOF

# run_ns LOG: the "BPF run time: N ns a sample" figure of a -v log
run_ns() { sed -n 's/.*BPF run time: \([0-9]*\) ns a sample.*/\1/p' "$1" | tail -1; }

# one NAME PID VARIANT ARGS...: bpfprof -v -p PID for DUR s, log NAME.log; prints the ns a sample
one() {
	local name=$1 pid=$2 v=$3
	shift 3
	BPFPROF_BPF_VARIANT=$v "$BPFPROF" -v -p "$pid" -F 999 -d "$DUR" -o "$work/p.folded" "$@" >"$work/$name.log" 2>&1
	run_ns "$work/$name.log"
}

"$PY" "$work/deep.py" &
py=$!
"$SPIN" -i 10000000000000 >/dev/null &
spin=$!
sleep 0.5
declare -A ns
for ((r = 1; r <= ROUNDS; r++)); do
	for v in modern legacy; do
		ns[$v-py]="${ns[$v-py]:-} $(one $v-py $py $v)"
		ns[$v-nopy]="${ns[$v-nopy]:-} $(one $v-nopy $py $v --no-python)"
	done
	ns[spin-py]="${ns[spin-py]:-} $(one spin-py $spin modern)"
	ns[spin-nopy]="${ns[spin-nopy]:-} $(one spin-nopy $spin modern --no-python)"
	echo "round $r: python3.11 30 frames: modern ${ns[modern-py]##* } ns (native only ${ns[modern-nopy]##* }), legacy ${ns[legacy-py]##* } (${ns[legacy-nopy]##* }); spin ${ns[spin-py]##* } (${ns[spin-nopy]##* })"
done
grep 'Python:' "$work/modern-py.log" || true
# shellcheck disable=SC2086
for v in modern legacy; do
	a=$(median ${ns[$v-py]})
	b=$(median ${ns[$v-nopy]})
	result "BPF run time a sample, python3.11 30 Python frames deep, $v variant (against --no-python)" \
		"$a ns" "$b ns" "+$(calc "$a - $b") ns" "<= +2000 ns" "$(verdict "$(calc "$a - $b")" "<=" 2000)"
done
# shellcheck disable=SC2086
result "BPF run time a sample, a native process (bench/spin) (against --no-python)" \
	"$(median ${ns[spin-py]}) ns" "$(median ${ns[spin-nopy]}) ns" "-" "-" "info"
kill "$py" "$spin" 2>/dev/null || true

# naming: a process with many functions, each read once (-- COMMAND, 2 s)
cat >"$work/many.py" <<'PYEOF'
import time
src = "\n".join("def f%d(n):\n    return sum(range(n))\n" % i for i in range(3000))
ns = {}
exec(compile(src, "many.py", "exec"), ns)
fs = [ns["f%d" % i] for i in range(3000)]
end = time.time() + 2
while time.time() < end:
    for f in fs:
        f(300)
PYEOF
"$BPFPROF" -v -F 999 -o "$work/many.folded" -- "$PY" "$work/many.py" >"$work/many.log" 2>&1
line=$(grep 'Python code objects' "$work/many.log" || true)
echo "$line"
reads=$(echo "$line" | sed -n 's/.*objects: \([0-9]*\) read.*/\1/p')
us=$(echo "$line" | sed -n 's/.*, \([0-9.]*\) us each.*/\1/p')
hit=$(echo "$line" | sed -n 's/.*, \([0-9.]*\) % cached.*/\1/p')
result "Python naming: code objects read from /proc/PID/mem ($reads in a 3000-function run)" \
	"$(calc "1000000 / $us") /s ($us us each)" "-" "-" "-" "info"
result "Python naming: frame lookups answered by the cache" "$hit %" "-" "-" "-" "info"

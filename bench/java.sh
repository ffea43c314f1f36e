#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Java frames (issue 30): the BPF run time a sample of a JVM thread 30 Java
# frames deep (a recursion 28 deep under Thread.run, spinning at the
# bottom) against the same with --no-java, interpreted (-Xint: 30 physical
# interpreter frames, which the native walk also follows by rbp without the
# HotSpot step) and on default tiers (C2: fewer physical frames, the
# inlined ones named in user space); and the naming cost (methods read from
# /proc/PID/mem, frame cache hits) from the -v summary. Modern variant
# (the legacy one has no HotSpot step). `bench/run.sh java`; not in the
# default list.
set -euo pipefail
. "$(dirname "$0")/lib.bash"

JDK=${JDK:-/usr/lib/jvm/java-17-openjdk-amd64}
ROUNDS=${ROUNDS:-5}
DUR=${DUR:-3}
[ "$QUICK" = 1 ] && ROUNDS=1 DUR=1
[ -x "$JDK/bin/javac" ] || { echo "bench: $JDK/bin/javac missing" >&2; exit 1; }
sysctl -q -w kernel.bpf_stats_enabled=1
cat >"$work/Deep.java" <<'JEOF'
public class Deep {
	static volatile long sink;
	static long deep(int n, long x) {
		if (n == 0) {
			for (int i = 0; i < 200000; i++)
				x = x * 6364136223846793005L + i;
			return x;
		}
		return deep(n - 1, x + 1) + 1;
	}
	public static void main(String[] a) throws Exception {
		Thread t = new Thread(() -> { long s = 0; while (true) s += deep(28, s); }, "deep");
		t.setDaemon(true);
		t.start();
		Thread.sleep(Long.parseLong(a[0]) * 1000);
	}
}
JEOF
"$JDK/bin/javac" -d "$work" "$work/Deep.java"

run_ns() { sed -n 's/.*BPF run time: \([0-9]*\) ns a sample.*/\1/p' "$1" | tail -1; }

one() {
	local name=$1 pid=$2
	shift 2
	"$BPFPROF" -v -p "$pid" -F 999 -d "$DUR" -o "$work/j.folded" "$@" >"$work/$name.log" 2>&1
	run_ns "$work/$name.log"
}

declare -A ns
for mode in Xint tiered; do
	flags=()
	[ "$mode" = Xint ] && flags=(-Xint)
	(cd "$work" && exec "$JDK/bin/java" -XX:-UsePerfData "${flags[@]}" Deep 1000) &
	jvm=$!
	sleep 2
	for ((r = 1; r <= ROUNDS; r++)); do
		ns[$mode-java]="${ns[$mode-java]:-} $(one $mode-java $jvm)"
		ns[$mode-nojava]="${ns[$mode-nojava]:-} $(one $mode-nojava $jvm --no-java)"
		echo "round $r: $mode: ${ns[$mode-java]##* } ns with Java frames, ${ns[$mode-nojava]##* } ns --no-java"
	done
	grep 'HotSpot: pid\|HotSpot: names' "$work/$mode-java.log" | cut -c1-400 || true
	kill "$jvm" 2>/dev/null || true
	wait "$jvm" 2>/dev/null || true
	a=$(median ${ns[$mode-java]})
	b=$(median ${ns[$mode-nojava]})
	result "BPF run time a sample, a JVM thread 30 Java frames deep ($mode) against --no-java" \
		"$a ns" "$b ns" "+$(calc "$a - $b") ns" "<= +3000 ns" "$(verdict "$(calc "$a - $b")" "<=" 3000)"
done
line=$(grep 'HotSpot: names' "$work/tiered-java.log" || true)
hit=$(echo "$line" | sed -n 's/.*frame cache \([0-9.]*\)% hits.*/\1/p')
us=$(echo "$line" | sed -n 's/.*; \([0-9.]*\) us a method.*/\1/p')
result "Java naming: a method read from /proc/PID/mem" "${us:-?} us" "-" "-" "-" "info"
result "Java naming: recorded frames answered by the cache" "${hit:-?} %" "-" "-" "-" "info"

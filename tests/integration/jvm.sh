#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# HotSpot JVMs found with no agent (issue 30, its first part: the JVM's
# self-description read from its memory, interp_hotspot.c and
# hotspot_vmstructs.c). For OpenJDK 17 and Temurin 25 (each skipped, saying
# so, where /usr/lib/jvm lacks it), tests/workload/JvmSpin.java (compiled
# by 17's javac) attached with -p under -vv:
# - the JVM found, its release string equal to the build `java -version`
#   prints, its tables walked (hundreds of structs entries), one summary
#   line for it;
# - the code cache's heaps read (CodeCache::_heaps) equal to the bounds the
#   JVM itself reports (jcmd Compiler.codecache);
# - every field offset and type size bpfprof logs (-vv) equal to what the
#   Serviceability Agent reads from the same JVM by itself (`jhsdb clhsdb`
#   `vmstructsdump`: HotSpot's own reader of the same tables, in Java), at
#   least 30 of them; and, for the two builds checked by hand, a handful of
#   well-known offsets as measured there (CodeBlob::_frame_size, nmethod's
#   Method*, ConstMethod's size, CodeHeap::_segmap);
# - --no-java: no JVM looked for, no such line;
# - a process mapping a "libjvm.so" that is no JVM (a copy of libz): one
#   warning naming the process and the reason, and it is profiled as before.
# Java frames (the BPF walk through interpreted, compiled and stub frames,
# named in user space), with tests/workload/JavaChain.java (two workers,
# known chains and shares) on default tiers, -Xint and
# -XX:TieredStopAtLevel=1, attached with -p after 1 s for 3 s:
# - of the samples with a JavaChain frame, >= 95 % hold the whole chain
#   from the thread's root (start_thread; thread_native_entry; ...;
#   java.lang.Thread.run) down to the leaf (the issue's goal);
# - worker-a's frames in order: Thread.run, the lambda, outerA, midA, then
#   leafA or leafB, as the JVM's own Thread.getStackTrace printed them
#   (lambda classes, hidden there, left out), and go tool pprof's lines of
#   those callers equal to the ones it printed;
# - shares: leafA has 2/3 of worker-a's chain (midA calls leafA(2n),
#   leafB(n)): 0.50-0.85 (the sampled tests' tolerance, a small sample);
# - go tool pprof -lines names leafA and leafB at their hot lines (the
#   lines marked LEAF-A / LEAF-B in the source) for the default run, and
#   perf report names the Java methods (through the JIT images);
# - the -v summary gives the JVM's samples with Java frames.
# - tests/workload/JavaCases.java on 17: overloads apart, a nested class, a
#   recursion 400 deep (the leaf's end kept), a native method calling back
#   into Java (Method.invoke's native accessor), with --off-cpu a thread
#   blocked in Thread.sleep named under its Java caller; a JVM that exits mid-run
#   still named; `-- java` (start-up included); two JVMs (17 and 25) in
#   one run, both with Java frames.
# - a container's JVM (check_ct_all: its own mount + pid namespace, its JDK
#   and classes at paths only it sees): -p names the whole chain and leafA,
#   leafB at their lines; -a with it, 17 and 25 on the host: each JVM with
#   Java frames and leafA named.
# Cost: each JVM spins one thread about 3 s, jhsdb starts a JVM of its own
# (about 1 CPU-s), the Java-frame runs 2 threads for 5 s each, 3 runs a JDK;
# check_ct_all 3 JVMs for about 6 s: some 85 CPU-s in all.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
BPFPROF=${BPFPROF:-$top/bpfprof}
work=$(mktemp -d /tmp/bpfprof-jvm.XXXXXX)
jpid= fpid=
jpids=()
cleanup() {
	for p in $jpid $fpid "${jpids[@]}"; do
		kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
		rm -f "/tmp/.java_pid$p"
	done
	rm -rf "$work"
}
trap cleanup EXIT

. "$(dirname "$0")/lib.bash"
require_bpf "HotSpot JVMs"

JDK17=/usr/lib/jvm/java-17-openjdk-amd64
JDK25=$(ls -d /usr/lib/jvm/temurin-25* /usr/lib/jvm/*-25-* 2>/dev/null | head -1)

# check_jvm NAME JDK [RELEASE FRAME_SIZE NM_METHOD CONSTMETHOD_SIZE SEGMAP]:
# the checks above on JDK's java; the hand-checked values for build RELEASE
start_jvm() {
	local jdk=$1
	(cd "$work/java" && exec "$jdk/bin/java" -XX:-UsePerfData -XX:+UseSerialGC JvmSpin 20 \
		>"$work/java.out" 2>&1) &
	jpid=$!
	for _ in $(seq 100); do
		grep -q ready "$work/java.out" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

check_jvm() {
	local name=$1 jdk=$2 rel_known=${3:-} d=$work/$1 want log n same differ
	mkdir -p "$d"
	if [ -z "$jdk" ] || [ ! -x "$jdk/bin/java" ]; then
		skip "$name" "no such JDK in /usr/lib/jvm"
		return
	fi
	# the VM's build string, as java -version gives it: "(build 17.0.15+6-Debian-1deb12u1, mixed mode, sharing)"
	want=$("$jdk/bin/java" -XX:-UsePerfData -version 2>&1 | sed -n 's/.*VM.*(build \([^,]*\),.*/\1/p')
	if ! start_jvm "$jdk"; then
		fail "$name: JvmSpin started" "$(cat "$work/java.out")"
		return
	fi
	"$BPFPROF" -p "$jpid" -d 1 -vv -o "$d/out.folded" >"$d/log" 2>&1
	log=$d/log
	if grep -q "java: pid $jpid (java): found HotSpot $want (" "$log" &&
		grep -q "HotSpot: pid $jpid (java): found HotSpot $want, offsets read" "$log"; then
		ok "$name: found HotSpot $want (java -version's), one summary line"
	else
		fail "$name: found HotSpot $want" "$(grep -i 'java\|hotspot' "$log" | head -5)"
	fi
	n=$(sed -n "s/.*java: pid $jpid (java): found HotSpot .* offsets read (\([0-9]*\) structs fields.*/\1/p" "$log")
	if [ "${n:-0}" -ge 300 ] && [ -s "$d/out.folded" ]; then
		ok "$name: $n structs entries walked, the profile written"
	else
		fail "$name: structs entries walked" "${n:-none}" "$(ls -la "$d")"
	fi
	# the code heaps read against the JVM's own account (jcmd Compiler.codecache:
	# "bounds [low_boundary, high, high_boundary]" of each CodeHeap's reservation)
	if [ -x "$jdk/bin/jcmd" ]; then
		local ours theirs
		ours=$(sed -n "s/.*java: pid $jpid (java): found HotSpot .* code heaps: \(.*\)/\1/p" "$log" |
			tr ',' '\n' | tr -d ' ' | sort | paste -sd' ')
		theirs=$("$jdk/bin/jcmd" "$jpid" Compiler.codecache 2>&1 |
			sed -n 's/.*bounds \[0x0*\([0-9a-f]*\), 0x[0-9a-f]*, 0x0*\([0-9a-f]*\)\].*/\1-\2/p' |
			sort | paste -sd' ')
		rm -f "/tmp/.java_pid$jpid"
		if [ -n "$ours" ] && [ "$ours" = "$theirs" ]; then
			ok "$name: code heaps $ours, as jcmd Compiler.codecache gives them"
		else
			fail "$name: code heaps" "ours: ${ours:-none}" "jcmd's: ${theirs:-none}"
		fi
	else
		skip "$name: code heaps against jcmd" "no jcmd in $jdk"
	fi
	# the Serviceability Agent's own reading of the same JVM's tables
	if [ -x "$jdk/bin/jhsdb" ]; then
		printf 'vmstructsdump\nquit\n' | timeout 60 "$jdk/bin/jhsdb" clhsdb --pid "$jpid" >"$d/sa" 2>&1
		read -r same differ < <(awk '
			FNR == NR { sub(/^hsdb> /, "")
				if ($1 == "field" && NF >= 7) off[$2 "::" $3] = $(NF - 1)
				if ($1 == "type" && NF == 7) size[$2] = $7
				next }
			/: field .* offset / { k = $(NF - 2); v = $NF
				if (k in off && off[k] == v) same++; else { differ++; print k, v, off[k] > "/dev/stderr" } }
			/: type .* size / { k = $(NF - 2); v = $NF
				if (k in size && size[k] == v) same++; else { differ++; print k, v, size[k] > "/dev/stderr" } }
			END { print same + 0, differ + 0 }' "$d/sa" "$log" 2>"$d/differ")
		if [ "$same" -ge 30 ] && [ "$differ" -eq 0 ]; then
			ok "$name: $same field offsets and type sizes equal to jhsdb's vmstructsdump"
		else
			fail "$name: offsets against jhsdb" "$same equal, $differ differ: $(head -5 "$d/differ")" \
				"$(head -3 "$d/sa")"
		fi
	else
		skip "$name: offsets against jhsdb" "no jhsdb in $jdk"
	fi
	# the values measured by hand on the builds installed here (vmStructs of the live JVM)
	if [ -n "$rel_known" ] && [ "$want" = "$rel_known" ]; then
		shift 3
		if grep -q "field CodeBlob::_frame_size offset $1\$" "$log" &&
			grep -qE "field (nmethod|CompiledMethod)::_method offset $2\$" "$log" &&
			grep -q "type ConstMethod size $3\$" "$log" &&
			grep -q "field CodeHeap::_segmap offset $4\$" "$log"; then
			ok "$name: CodeBlob::_frame_size $1, _method $2, sizeof ConstMethod $3, CodeHeap::_segmap $4"
		else
			fail "$name: well-known offsets" "$(grep -E '_frame_size|::_method|ConstMethod size|_segmap' "$log")"
		fi
	fi
	"$BPFPROF" -p "$jpid" -d 0.5 -v --no-java -o "$d/nojava.folded" >"$d/nojava.log" 2>&1
	if [ -s "$d/nojava.folded" ] && ! grep -qi 'hotspot\|java: pid' "$d/nojava.log"; then
		ok "$name: --no-java: no JVM looked for, the profile written"
	else
		fail "$name: --no-java" "$(grep -i 'hotspot\|java: pid' "$d/nojava.log" | head -3)"
	fi
	kill "$jpid" 2>/dev/null && wait "$jpid" 2>/dev/null
	rm -f "/tmp/.java_pid$jpid"
	jpid=
}

# check_frames NAME JDK [JVM FLAGS...]: the Java-frame checks above
check_frames() {
	local name=$1 jdk=$2 d total whole order share leafa chain trace ok_lines
	shift 2
	d=$work/frames-$name
	mkdir -p "$d"
	if [ -z "$jdk" ] || [ ! -x "$jdk/bin/java" ]; then
		skip "$name: Java frames" "no such JDK in /usr/lib/jvm"
		return
	fi
	(cd "$work/java" && exec "$jdk/bin/java" -XX:-UsePerfData "$@" JavaChain 5 \
		>"$d/java.out" 2>&1) &
	jpid=$!
	for _ in $(seq 100); do
		grep -q ready "$d/java.out" 2>/dev/null && break
		sleep 0.1
	done
	sleep 1
	"$BPFPROF" -p "$jpid" -d 3 -v -o "$d/out.folded" -o "$d/out.pb.gz" -o "$d/out.data" \
		>"$d/log" 2>&1
	wait "$jpid" 2>/dev/null
	jpid=
	total=$(grep 'JavaChain\.' "$d/out.folded" | awk '{s += $NF} END {print s + 0}')
	whole=$(grep 'JavaChain\.' "$d/out.folded" |
		grep 'start_thread;thread_native_entry(Thread\*);.*;java\.lang\.Thread\.run() (Thread\.java)_\[j\];' |
		awk '{s += $NF} END {print s + 0}')
	if [ "$total" -ge 20 ] && [ $((whole * 100)) -ge $((total * 95)) ]; then
		ok "$name: whole chain from the thread's root in $whole of $total samples with Java frames"
	else
		fail "$name: whole chain in >= 95 % of $total samples" "$whole" \
			"$(grep 'JavaChain\.' "$d/out.folded" | grep -v 'thread_native_entry' | head -3)"
	fi
	# the JVM's own view of worker-a, root first, its leaf left out; ours from
	# the commonest leafA stack. Ours may show what getStackTrace hides (JDK
	# 21+'s @Hidden Thread.runWith, lambda forms): the JVM's frames must be
	# ours in the same order, lambda classes left out on both sides
	trace=$(grep '^trace ' "$d/java.out" | tac | sed 's/^trace \([^ ]*\) .*/\1/' |
		grep -v 'JavaChain\.leaf\|\$\$Lambda' | paste -sd';')
	chain=$(grep 'JavaChain\.leafA' "$d/out.folded" | awk '{ print $NF "\t" $0 }' | sort -nr | head -1 | cut -f2- | tr ';' '\n' |
		sed -n 's/^\([^ (]*\)(.*_\[j\]$/\1/p' | grep -v 'JavaChain\.leaf\|\$\$Lambda' | paste -sd';')
	if [ -n "$trace" ] && awk -v t="$trace" -v c="$chain" 'BEGIN {
		nt = split(t, a, ";"); nc = split(c, b, ";"); k = 1
		for (i = 1; i <= nc && k <= nt; i++) if (b[i] == a[k]) k++
		exit !(k > nt) }'; then
		ok "$name: Java frames in the order Thread.getStackTrace gives ($trace)"
	else
		fail "$name: Java frames as Thread.getStackTrace" "jvm: $trace" "ours: $chain"
	fi
	# the lines of those frames: pprof's equal getStackTrace's (the call sites)
	if command -v go >/dev/null; then
		local missing=
		go tool pprof -traces -lines "$d/out.pb.gz" >"$d/traces" 2>/dev/null
		while read -r _ m fl; do
			case $m in *Lambda* | JavaChain.leaf*) continue ;; esac
			grep -qF "$m(" "$d/traces" && grep -qF ") $fl" < <(grep -F "$m(" "$d/traces") ||
				missing="$missing $m:$fl"
		done < <(grep '^trace ' "$d/java.out")
		if [ -z "$missing" ] && [ -s "$d/traces" ]; then
			ok "$name: pprof's lines of the callers equal Thread.getStackTrace's"
		else
			fail "$name: caller lines as Thread.getStackTrace" "missing:$missing" \
				"$(grep -m3 'JavaChain\.mid\|Thread\.run' "$d/traces")"
		fi
	fi
	# leafA's share of worker-a's chain (midA calls leafA(2n) and leafB(n))
	chain=$(grep 'JavaChain\.midA' "$d/out.folded" | awk '{s += $NF} END {print s + 0}')
	leafa=$(grep 'JavaChain\.midA' "$d/out.folded" | grep 'JavaChain\.leafA' | awk '{s += $NF} END {print s + 0}')
	share=$(awk -v a="$leafa" -v c="$chain" 'BEGIN {printf "%.2f", c ? a / c : 0}')
	# tolerance: 4 binomial standard deviations of a 2/3 share over the
	# chain's samples, at least 0.15 (midA's own loop and calls, which the
	# tiers weigh differently); a CI host running the kernel matrix beside
	# gives the JVM fewer samples (55 in one run: 0.45 was 3.4 sigma off
	# under the old fixed 0.50-0.85 band, 0.62-0.75 in every other run)
	tol=$(awk -v c="$chain" 'BEGIN {t = c ? 4 * sqrt(2 / 9 / c) : 1; printf "%.2f", t < 0.15 ? 0.15 : t}')
	if [ "$chain" -ge 30 ] && awk -v s="$share" -v t="$tol" 'BEGIN {exit !(s >= 2 / 3 - t && s <= 2 / 3 + t)}'; then
		ok "$name: leafA has $share of midA's samples (2/3 expected, +-$tol over $chain samples)"
	else
		fail "$name: leafA's share of midA's samples" "$share ($leafa of $chain; 2/3 +-$tol, at least 30 samples)"
	fi
	if grep -q "HotSpot: pid [0-9]* (java): [0-9]* samples, [0-9]* with Java frames" "$d/log"; then
		ok "$name: -v summary: $(grep -o '[0-9]* samples, [0-9]* with Java frames ([0-9.]*%' "$d/log" | head -1))"
	else
		fail "$name: -v summary of Java frames" "$(grep HotSpot "$d/log" | head -3)"
	fi
	if [ "$name" = "${name%-*}" ] && command -v go >/dev/null; then
		# default tiers: pprof's lines of the hot methods are the marked source lines
		local la lb
		la=$(grep -n 'LEAF-A' "$top/tests/workload/JavaChain.java" | cut -d: -f1 | paste -sd'|')
		lb=$(grep -n 'LEAF-B' "$top/tests/workload/JavaChain.java" | cut -d: -f1 | paste -sd'|')
		go tool pprof -top -lines "$d/out.pb.gz" >"$d/lines" 2>/dev/null
		ok_lines=$(grep -cE "JavaChain\.leafA\(int\) JavaChain\.java:($la)\$|JavaChain\.leafB\(int\) JavaChain\.java:($lb)\$" "$d/lines")
		# the marked lines' share of the two methods' flat time: a sample in
		# a method's prologue is its first line's (`long x = n;`), rightly;
		# a wrong line table puts most of it elsewhere
		marked=$(awk -v re="java:($la|$lb)\$" '/JavaChain\.leaf[AB]\(int\) JavaChain\.java:/ {
			sub("%", "", $2); all += $2; if ($NF ~ re) m += $2 }
			END { printf "%.1f", all ? 100 * m / all : 0 }' "$d/lines")
		if [ "$ok_lines" -ge 2 ] && awk -v m="$marked" 'BEGIN { exit !(m >= 95) }'; then
			ok "$name: go tool pprof -lines: leafA and leafB at their hot lines ($marked % of their flat time; want >= 95)"
		else
			fail "$name: pprof lines of leafA, leafB: $marked % at the marked lines" "$(grep 'JavaChain' "$d/lines" | head -5)"
		fi
	fi
	if [ "$name" = "${name%-*}" ] && command -v perf >/dev/null; then
		# perf report names the Java frames through the JIT images, no extra step
		perf report -i "$d/out.data" --stdio --no-children -g caller 2>/dev/null >"$d/perf.txt"
		if grep -q 'JavaChain\.leafB(int) (JavaChain\.java)' "$d/perf.txt" &&
			grep -q 'java\.lang\.Thread\.run() (Thread\.java)' "$d/perf.txt" &&
			grep -q 'JavaCalls::call_helper' "$d/perf.txt"; then
			ok "$name: perf report names the Java methods, under JavaCalls::call_helper"
		else
			fail "$name: perf report's Java frames" "$(grep -m3 'JavaChain\|unknown' "$d/perf.txt")"
		fi
	fi
}

# check_cases: tests/workload/JavaCases.java on OpenJDK 17 (overloads, a
# nested class, a recursion past --max-stack, a native method calling back
# into Java), then a JVM that exits mid-run, `-- java` (start-up included),
# and two JVMs of different versions in one run
check_cases() {
	local d=$work/cases n deep pids=() p1 p2
	mkdir -p "$d"
	(cd "$work/java" && exec "$JDK17/bin/java" -XX:-UsePerfData \
		-Dsun.reflect.inflationThreshold=1000000000 JavaCases 8 >"$d/java.out" 2>&1) &
	jpid=$!
	for _ in $(seq 100); do
		grep -q ready "$d/java.out" 2>/dev/null && break
		sleep 0.1
	done
	sleep 1
	"$BPFPROF" --off-cpu -p "$jpid" -d 3 -o "$d/out.folded" -o "$d/offcpu.folded" >"$d/log" 2>&1
	wait "$jpid" 2>/dev/null
	jpid=
	n=$(grep -F 'JavaCases.sleepy() (JavaCases.java)_[j];java.lang.Thread.sleep(long) (Thread.java)_[j];JVM_Sleep' \
		"$d/offcpu.folded" | grep -F 'start_thread' | wc -l)
	if [ "$n" -ge 1 ]; then
		ok "cases: off-CPU: Thread.sleep's block named under its Java caller (sleepy), from the thread's root"
	else
		fail "cases: off-CPU Java stack" "$(grep -m2 -o 'sleep.*' "$d/offcpu.folded" | cut -c1-200)"
	fi
	if grep -qF 'JavaCases.work(int) (JavaCases.java)_[j]' "$d/out.folded" &&
		grep -qF 'JavaCases.work(long) (JavaCases.java)_[j]' "$d/out.folded"; then
		ok "cases: the overloads work(int) and work(long) apart"
	else
		fail "cases: overloads" "$(grep -o 'JavaCases\.work[^;]*' "$d/out.folded" | sort -u | head -3)"
	fi
	if grep -qF 'JavaCases$Inner.spin(long) (JavaCases.java)_[j]' "$d/out.folded"; then
		ok "cases: the static nested class's method (JavaCases\$Inner.spin)"
	else
		fail "cases: nested class" "$(grep -o 'Inner[^;]*' "$d/out.folded" | sort -u | head -3)"
	fi
	# 400 calls deep: the deepest frames kept (--max-stack 127 native frames, inlined ones more)
	deep=$(grep -F 'JavaCases.bottom(long)' "$d/out.folded" | awk '{n = gsub(/JavaCases\.down\(int, long\)/, ""); if (n > m) m = n} END {print m + 0}')
	if [ "$deep" -ge 100 ] && grep -qv 'start_thread' < <(grep -F 'JavaCases.bottom(long)' "$d/out.folded"); then
		ok "cases: recursion 400 deep: $deep frames of down() kept at the leaf's end, the root cut"
	else
		fail "cases: deep recursion" "$deep frames of down()"
	fi
	n=$(grep -E 'invoke0\(.*_\[j\];JVM_InvokeMethod;.*JavaCalls::call_helper.*;\[stub\] [^;]*;JavaCases\.reflected\(\)' "$d/out.folded" |
		awk '{s += $NF} END {print s + 0}')
	if [ "$n" -ge 3 ]; then
		ok "cases: a native method calling back into Java: invoke0 -> JVM_InvokeMethod -> call stub -> reflected() in $n samples"
	else
		fail "cases: native callback" "$n samples" "$(grep -m1 -o 'invoke0.*' "$d/out.folded" | cut -c1-300)"
	fi

	# a JVM that exits mid-run: its frames still named
	(cd "$work/java" && exec "$JDK17/bin/java" -XX:-UsePerfData JavaChain 3 >"$d/exit.out" 2>&1) &
	jpid=$!
	for _ in $(seq 100); do
		grep -q ready "$d/exit.out" 2>/dev/null && break
		sleep 0.1
	done
	"$BPFPROF" -p "$jpid" -d 10 -o "$d/exit.folded" >"$d/exit.log" 2>&1
	wait "$jpid" 2>/dev/null
	jpid=
	n=$(grep -F 'JavaChain.leafA(int) (JavaChain.java)_[j]' "$d/exit.folded" | grep -F 'java.lang.Thread.run()' | awk '{s += $NF} END {print s + 0}')
	if [ "$n" -ge 5 ]; then
		ok "a JVM that exits mid-run: its Java frames named ($n samples in leafA with the chain)"
	else
		fail "a JVM that exits mid-run" "$n samples" "$(tail -3 "$d/exit.log" | cut -c1-200)"
	fi

	# -- java: start-up included
	(cd "$work/java" && "$BPFPROF" -o "$d/cmd.folded" -- "$JDK17/bin/java" -XX:-UsePerfData JavaChain 1 \
		>"$d/cmd.log" 2>&1)
	n=$(grep -F 'JavaChain.leafA(int) (JavaChain.java)_[j]' "$d/cmd.folded" | grep -F 'java.lang.Thread.run()' | awk '{s += $NF} END {print s + 0}')
	if [ "$n" -ge 5 ]; then
		ok "-- java: Java frames from a JVM started under bpfprof ($n samples in leafA with the chain)"
	else
		fail "-- java" "$n samples" "$(grep -i 'java' "$d/cmd.log" | head -3)"
	fi

	# two JVMs of different versions in one run
	if [ -n "$JDK25" ] && [ -x "$JDK25/bin/java" ]; then
		(cd "$work/java" && exec "$JDK17/bin/java" -XX:-UsePerfData JavaChain 8 >"$d/a.out" 2>&1) &
		p1=$!
		(cd "$work/java" && exec "$JDK25/bin/java" -XX:-UsePerfData JavaChain 8 >"$d/b.out" 2>&1) &
		p2=$!
		for _ in $(seq 100); do
			grep -q ready "$d/a.out" 2>/dev/null && grep -q ready "$d/b.out" 2>/dev/null && break
			sleep 0.1
		done
		sleep 1
		"$BPFPROF" -p "$p1,$p2" -d 2 -v -o "$d/two.folded" >"$d/two.log" 2>&1
		wait "$p1" "$p2" 2>/dev/null
		n=$(grep -c "HotSpot: pid [0-9]* (java): [0-9]* samples, [1-9][0-9]* with Java frames" "$d/two.log")
		if [ "$n" -eq 2 ]; then
			ok "two JVMs (17 and 25) in one run: both with Java frames"
		else
			fail "two JVMs in one run" "$(grep 'HotSpot: pid\|samples\|exited' "$d/two.log" | cut -c1-200)"
		fi
	else
		skip "two JVMs of different versions" "no Temurin 25"
	fi
}

# check_ct_all: a container's JVM, and -a with JVMs of different versions,
# all at once. OpenJDK 17 in its own mount + pid namespace (pid 1 there),
# its JDK bind-mounted and JavaChain's class on a tmpfs, at a path only that
# namespace sees (libjvm.so and the class exist only through /proc/PID/root),
# beside 17 and Temurin 25 on the host. `-a --call-graph fp -d 2` (not
# -p): each JVM with Java frames in the -v summary and leafA named in its
# own samples (perf script of the perf.data, by pid). fp, not the default
# walk: under -a a process is registered at its first sample and, until its
# tables are loaded, its samples go to user space as stack copies, walked
# with no Java frames; measured here, 1.7 s on average and 3.5 s at most
# with the unwind cache cold (the Java walk in BPF needs no table: it
# starts at the pc in the code cache; -p's checks use the default walk).
# Then -p with the container's host pid for 2 s: the whole chain from the
# thread's root in >= 95 % of the samples with JavaChain frames (as
# check_frames), leafA and leafB at their marked lines (go tool pprof
# -lines). The JVMs run 30 s at most, killed after.
check_ct_all() {
	local d=$work/ct-all ct='' upid='' cpid='' p f n nspid
	local -A pid_of=() ns_of=()
	mkdir -p "$d/root"
	if unshare --mount --pid --fork --propagation private true 2>/dev/null; then
		ct=$d/root
		unshare --mount --pid --fork --propagation private sh -c \
			"mount -t tmpfs ct '$ct' && mkdir '$ct/jdk' '$ct/app' && mount --bind '$JDK17' '$ct/jdk' &&
			 cp '$work/java/JavaChain.class' '$ct/app/' && cd '$ct/app' &&
			 exec '$ct/jdk/bin/java' -XX:-UsePerfData JavaChain 30" >"$d/ct.out" 2>&1 &
		upid=$!
		jpids+=("$upid")
	else
		skip "a container's JVM" "unshare --mount --pid refused"
	fi
	(cd "$work/java" && exec "$JDK17/bin/java" -XX:-UsePerfData JavaChain 30 >"$d/17.out" 2>&1) &
	pid_of[17]=$!
	jpids+=($!)
	if [ -n "$JDK25" ] && [ -x "$JDK25/bin/java" ]; then
		(cd "$work/java" && exec "$JDK25/bin/java" -XX:-UsePerfData JavaChain 30 >"$d/25.out" 2>&1) &
		pid_of[25]=$!
		jpids+=($!)
	else
		skip "-a with two JVMs of different versions" "no Temurin 25"
	fi
	for _ in $(seq 150); do
		[ -n "$upid" ] && [ -z "$cpid" ] && cpid=$(pgrep -P "$upid" -x java)
		n=0
		for f in "$d"/*.out; do grep -q ready "$f" || n=1; done
		[ "$n" = 0 ] && { [ -z "$upid" ] || [ -n "$cpid" ]; } && break
		sleep 0.1
	done
	[ -n "$cpid" ] && pid_of[ct]=$cpid && jpids+=("$cpid")
	sleep 1
	"$BPFPROF" -a --call-graph fp -d 2 -v -o "$d/all.data" >"$d/all.log" 2>&1
	# each JVM's pid in its namespace, for the perf map asked of it for the
	# perf.data's JIT images (/tmp/perf-NSPID.map: the container shares /tmp)
	for f in "${!pid_of[@]}"; do
		ns_of[$f]=$(awk '/^NSpid:/ { print $NF }' "/proc/${pid_of[$f]}/status" 2>/dev/null)
	done
	if [ -n "$cpid" ]; then
		check_ct_p "$d" "$cpid"
	elif [ -n "$ct" ]; then
		fail "a container's JVM started" "$(cat "$d/ct.out")"
	fi
	# leafA's frames of each JVM's samples: perf script's "PID" lines, then
	# their callchains' "ip sym" lines
	perf script -i "$d/all.data" --pid "$(IFS=,; echo "${pid_of[*]}")" -F pid,ip,sym 2>/dev/null |
		awk '/^ *[0-9]+ *$/ { p = $1 } /JavaChain\.leafA\(int\) \(JavaChain\.java\)/ { n[p]++ }
			END { for (p in n) print p, n[p] }' >"$d/leafa"
	for f in "${!pid_of[@]}"; do
		p=${pid_of[$f]}
		n=$(awk -v p="$p" '$1 == p { print $2 }' "$d/leafa")
		nspid=${ns_of[$f]}
		if grep -qE "HotSpot: pid $p \(java\): [0-9]+ samples, [1-9][0-9]* with Java frames" "$d/all.log" &&
			[ "${n:-0}" -ge 1 ] && [ -n "$nspid" ] && [ ! -e "/tmp/perf-$nspid.map" ]; then
			ok "-a: the JVM $f (pid $p) with Java frames, leafA named in its samples ($n frames), no perf-$nspid.map left"
		else
			fail "-a: the JVM $f (pid $p) with Java frames and leafA named" "${n:-0} leafA frames" \
				"nspid ${nspid:-none}: $(ls "/tmp/perf-$nspid.map" 2>&1)" \
				"$(grep "pid $p \|unwind readiness" "$d/all.log" | cut -c1-200)"
		fi
	done
	for p in "${jpids[@]}"; do
		kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	# HotSpot's attach sockets (left when killed by a signal), by the pids they know
	for p in "${ns_of[@]}"; do
		[ -n "$p" ] && rm -f "/tmp/.java_pid$p"
	done
	jpids=()
}

# check_ct_p DIR PID: -p on the container's JVM (host pid PID), see above
check_ct_p() {
	local d=$1 cpid=$2 ct=$1/root nspid total whole la lb
	nspid=$(awk '/^NSpid:/ { print $NF }' "/proc/$cpid/status" 2>/dev/null)
	"$BPFPROF" -p "$cpid" -d 2 -v -o "$d/ct.folded" -o "$d/ct.pb.gz" >"$d/ct.log" 2>&1
	total=$(grep 'JavaChain\.' "$d/ct.folded" | awk '{s += $NF} END {print s + 0}')
	whole=$(grep 'JavaChain\.' "$d/ct.folded" |
		grep 'start_thread;thread_native_entry(Thread\*);.*;java\.lang\.Thread\.run() (Thread\.java)_\[j\];' |
		awk '{s += $NF} END {print s + 0}')
	if [ "$nspid" = 1 ] && [ ! -e "$ct/jdk/lib/server/libjvm.so" ] &&
		grep -q "java: pid $cpid (java): found HotSpot .* in '$ct/jdk/lib/server/libjvm.so'" "$d/ct.log" &&
		[ "$total" -ge 10 ] && [ $((whole * 100)) -ge $((total * 95)) ]; then
		ok "a container's JVM (pid 1 there, libjvm.so only in its root) with -p: whole chain in $whole of $total samples"
	else
		fail "a container's JVM with -p: whole chain in >= 95 % of $total samples" "nspid $nspid, $whole" \
			"$(grep -i 'java: pid\|HotSpot: pid' "$d/ct.log" | cut -c1-200)"
	fi
	la=$(grep -n 'LEAF-A' "$top/tests/workload/JavaChain.java" | cut -d: -f1 | paste -sd'|')
	lb=$(grep -n 'LEAF-B' "$top/tests/workload/JavaChain.java" | cut -d: -f1 | paste -sd'|')
	if command -v go >/dev/null; then
		go tool pprof -top -lines "$d/ct.pb.gz" >"$d/lines" 2>/dev/null
		if grep -qE "JavaChain\.leafA\(int\) JavaChain\.java:($la)\$" "$d/lines" &&
			grep -qE "JavaChain\.leafB\(int\) JavaChain\.java:($lb)\$" "$d/lines" &&
			! grep -E 'JavaChain\.leaf[AB]\(int\) JavaChain\.java:' "$d/lines" | grep -vqE "java:($la|$lb)\$"; then
			ok "a container's JVM: go tool pprof -lines: leafA and leafB at their hot lines"
		else
			fail "a container's JVM: pprof lines of leafA, leafB" "$(grep 'JavaChain' "$d/lines" | head -5)"
		fi
	fi
}

if [ ! -x "$JDK17/bin/javac" ]; then
	skip "HotSpot JVMs" "no OpenJDK 17 javac in $JDK17 (openjdk-17-jdk-headless)"
else
	mkdir -p "$work/java"
	# javac's own JVM: C1 only, serial GC, no hsperfdata file
	if ! "$JDK17/bin/javac" -J-XX:TieredStopAtLevel=1 -J-XX:+UseSerialGC -J-XX:-UsePerfData \
		-d "$work/java" "$top/tests/workload/JvmSpin.java" 2>"$work/javac.err"; then
		fail "javac JvmSpin.java" "$(head -5 "$work/javac.err")"
	else
		check_jvm openjdk17 "$JDK17" 17.0.15+6-Debian-1deb12u1 28 112 48 120
		check_jvm temurin25 "$JDK25" 25.0.3+9-LTS 44 80 56 112
	fi
	if ! "$JDK17/bin/javac" -J-XX:TieredStopAtLevel=1 -J-XX:+UseSerialGC -J-XX:-UsePerfData \
		-d "$work/java" "$top/tests/workload/JavaChain.java" 2>"$work/javac.err"; then
		fail "javac JavaChain.java" "$(head -5 "$work/javac.err")"
	else
		check_frames openjdk17 "$JDK17"
		check_frames openjdk17-xint "$JDK17" -Xint
		check_frames openjdk17-c1 "$JDK17" -XX:TieredStopAtLevel=1
		check_frames temurin25 "$JDK25"
		check_frames temurin25-xint "$JDK25" -Xint
		check_frames temurin25-c1 "$JDK25" -XX:TieredStopAtLevel=1
	fi
	if ! "$JDK17/bin/javac" -J-XX:TieredStopAtLevel=1 -J-XX:+UseSerialGC -J-XX:-UsePerfData \
		-d "$work/java" "$top/tests/workload/JavaCases.java" 2>"$work/javac.err"; then
		fail "javac JavaCases.java" "$(head -5 "$work/javac.err")"
	else
		check_cases
		check_ct_all
	fi
fi

# A "libjvm.so" that is no JVM: libz under that name, loaded by a process of ours
libz=$(ls /usr/lib/x86_64-linux-gnu/libz.so.1 /lib/x86_64-linux-gnu/libz.so.1 2>/dev/null | head -1)
if [ -z "$libz" ] || ! command -v python3 >/dev/null; then
	skip "a libjvm.so that is no JVM" "no libz.so.1 or python3"
else
	mkdir -p "$work/fake"
	cp "$libz" "$work/fake/libjvm.so"
	python3 -c "import ctypes, time; ctypes.CDLL('$work/fake/libjvm.so'); print('ready', flush=True)
end = time.time() + 20
while time.time() < end: pass" >"$work/fake.out" 2>&1 &
	fpid=$!
	for _ in $(seq 50); do grep -q ready "$work/fake.out" && break; sleep 0.1; done
	"$BPFPROF" -p "$fpid" -d 0.5 --no-python -o "$work/fake.folded" >"$work/fake.log" 2>&1
	n=$(grep -c "java: pid $fpid (python3): HotSpot's tables in '$work/fake/libjvm.so' not usable: libjvm.so exports no gHotSpotVM\* tables: profiled without Java frames" "$work/fake.log")
	if [ "$n" -eq 1 ] && [ -s "$work/fake.folded" ]; then
		ok "a libjvm.so that is no JVM: one warning with its reason, profiled natively"
	else
		fail "a libjvm.so that is no JVM" "$n warnings" "$(head -5 "$work/fake.log")"
	fi
	kill "$fpid" 2>/dev/null && wait "$fpid" 2>/dev/null
	fpid=
fi

finish

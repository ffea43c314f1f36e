#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Python frames (issue 23): tests/workload/pywork.py (known functions, shares
# and callers) under Debian's /usr/bin/python3.11 and pyenv's 3.12 and 3.13,
# and 3.8-3.10 where pyenv has them (a missing version is skipped, saying so):
#
#  - -p on a running process (mix): hot_a 75 % of hot_a + hot_b (split_tol),
#    hot_a under Worker.step (3.11+: qualified names; step before), hot_b
#    under caller_b, <module> the first Python frame of the main thread's
#    stacks, under _PyEval_EvalFrameDefault and Py_RunMain, native frames
#    leafward of Python ones; a generator, sorted()'s key callback under
#    sorted's C frames, recursion 150 deep (the deepest frames and the
#    marker for the rest), the zlib.compress thread (GIL released) named
#    under compress_loop down to deflate, an asyncio task, a non-ASCII name;
#    pprof: hot_a's line is the line in the script;
#  - 3.11: perf report on the perf.data and go tool pprof on the .prof name
#    the Python functions (through the JIT images), the legacy BPF variant,
#    --no-python (no Python frames, no summary line), a container (a mount
#    and pid namespace, the interpreter on a tmpfs only it sees), -- COMMAND
#    (a 0.3 s process), --off-cpu (napper in time.sleep named, on 3.11 and
#    the newest version);
#  - -a with every interpreter at once (kept to a cgroup of ours).
#
# Workloads spin only while profiled (lib.bash spin): 0.4-0.6 s of CPU a
# version at 1999 Hz, some 800-1,200 samples of the main thread (the checks
# count what was collected: tolerances from split_tol), the zlib thread about
# a third of a CPU beside it. About 35 s of CPU in all (14 bpfprof runs,
# 9 go tool pprof, 2 perf report) for 63 checks on 6 versions.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
BPFPROF=${BPFPROF:-$top/bpfprof}
WL=$top/tests/workload/pywork.py
PYENV=${PYENV_ROOT:-${HOME:-/root}/.pyenv}
work=$(mktemp -d /tmp/bpfprof-python.XXXXXX)
pids=()
cg=
cleanup() {
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -n "$cg" ] && rmdir "$cg" 2>/dev/null
	[ -n "${KEEP:-}" ] && echo "kept $work" || rm -rf "$work"
}
trap cleanup EXIT
# KEEP=1: the work directory stays, for a look at a failure
mkdir -p "$work/home"
export PPROF_TMPDIR=$work/pprof HOME=$work/home

. "$(dirname "$0")/lib.bash"
require_bpf "Python frames"
cd "$work" || exit 1

F=$(awk '{ print $1 < 1999 ? $1 : 1999 }' /proc/sys/kernel/perf_event_max_sample_rate 2>/dev/null)
HOT_A_LINE=$(grep -n 'HOT_A_LINE' "$WL" | cut -d: -f1)

# The interpreters: "VERSION PATH" for those present (PY_VERSIONS="3.11 3.9": only those)
interps=()
[ -x /usr/bin/python3.11 ] && interps+=("3.11 /usr/bin/python3.11")
for v in 3.12 3.13 3.8 3.9 3.10; do
	# shellcheck disable=SC2086
	p=$(ls -d $PYENV/versions/$v.*/bin/python$v 2>/dev/null | sort -V | tail -1)
	if [ -n "$p" ] && [ -x "$p" ]; then
		interps+=("$v $p")
	elif [ "$v" = 3.12 ] || [ "$v" = 3.13 ]; then
		skip "CPython $v" "not installed (pyenv: $PYENV/versions/$v.*)"
	fi
done
[ -x /usr/bin/python3.11 ] || skip "CPython 3.11" "Debian's /usr/bin/python3.11 is missing"
if [ -n "${PY_VERSIONS:-}" ]; then
	sel=()
	for e in "${interps[@]}"; do [[ " $PY_VERSIONS " == *" ${e%% *} "* ]] && sel+=("$e"); done
	interps=("${sel[@]}")
fi

# start_py NAME PY MODE: PY pywork.py in the background, stopped once its loop
# runs; its pid in $wl
start_py() {
	rm -f "$work/$1.ready"
	"$2" "$WL" "$work/$1.ready" "$3" &
	wl=$!
	pids+=("$wl")
	for ((i = 0; i < 1000; i++)); do
		[ -e "$work/$1.ready" ] && break
		sleep 0.01
	done
	kill -STOP "$wl"
}
# profile_p NAME PID MS [ARGS...]: bpfprof -p PID while PID has MS ms of CPU;
# outputs NAME.folded, NAME.pb.gz and the ARGS' ones, log NAME.log
profile_p() {
	local name=$1 pid=$2 ms=$3
	shift 3
	"$BPFPROF" -p "$pid" -F "$F" -o "$name.folded" -o "$name.pb.gz" ${BPFPROF_ARGS:-} "$@" >"$name.log" 2>&1 &
	local bp=$!
	wait_sampling "$bp"
	spin "$pid" "$ms"
	kill -INT "$bp"
	wait "$bp"
}
# count FILE ERE: samples of the folded stacks matching ERE
count() { awk -v re="$2" '$0 ~ re { n += $NF } END { print n + 0 }' "$1"; }

# the checks of one -p profile of the mix workload by CPython version v
check_mix() {
	local v=$1 f=$2.folded step="Worker\\.step" a b tol sh all full mod lines
	case $v in 3.8 | 3.9 | 3.10) step="step" ;; esac
	a=$(count "$f" ';hot_a \(pywork\.py\)_\[j\]')
	b=$(count "$f" ';hot_b \(pywork\.py\)_\[j\]')
	tol=$(split_tol $((a + b)) 6)
	sh=$(awk -v a="$a" -v b="$b" 'BEGIN { if (a + b) printf "%.1f", 100 * a / (a + b) }')
	if [ -n "$tol" ] && near "$sh" 75 "$tol"; then
		ok "$v: hot_a $sh % of hot_a + hot_b ($((a + b)) samples, 75 +- $tol)"
	else
		fail "$v: hot_a's share" "hot_a $a, hot_b $b: $sh % (75 +- ${tol:-?})" "$(grep -v '%' "$2.log" | tail -3)"
	fi
	# callers: every hot_a under the method, every hot_b under caller_b, and
	# 90 % of them under the whole chain (a few early stacks walk before the
	# process's unwind tables are in)
	full=$(count "$f" "Py_RunMain;.*;_PyEval_EvalFrameDefault;<module> \\(pywork\\.py\\)_\\[j\\];.*mix \\(pywork\\.py\\)_\\[j\\];.*$step \\(pywork\\.py\\)_\\[j\\];.*hot_a \\(pywork\\.py\\)")
	# (before 3.11 each Python frame has its own eval-loop frame: native frames between)
	if [ "$(count "$f" ";hot_a \\(pywork")" = "$(count "$f" "$step \\(pywork\\.py\\)_\\[j\\](;[^;(]+)*;hot_a")" ] &&
		[ "$(count "$f" ";hot_b \\(pywork")" = "$(count "$f" "caller_b \\(pywork\\.py\\)_\\[j\\](;[^;(]+)*;hot_b")" ] &&
		[ $((full * 10)) -ge $((a * 9)) ]; then
		ok "$v: hot_a under ${step//\\/}, hot_b under caller_b; $full of $a hot_a under Py_RunMain, the eval loop, <module>, mix"
	else
		fail "$v: callers" "$full of $a full chains" "$(grep ';hot_a' "$f" | sort -t' ' -k2 -nr | head -2 | cut -c1-600)"
	fi
	# <module> is the main thread's first Python frame (but where the native
	# walk reached its 127 frames: recursion, before 3.11 3-4 native frames a
	# Python one)
	all=$(awk '/mix \(pywork\.py\)/ && !/recurse/ { n += $NF } END { print n + 0 }' "$f")
	mod=$(awk '/mix \(pywork\.py\)/ && !/recurse/ { i = index($0, "_[j]"); pre = substr($0, 1, i + 3); if (pre ~ /;<module> \(pywork\.py\)_\[j\]$/) n += $NF } END { print n + 0 }' "$f")
	if [ "$all" -gt 0 ] && [ $((mod * 10)) -ge $((all * 9)) ] &&
		[ "$(count "$f" 'hot_a \(pywork\.py\)_\[j\];[^;]*[A-Za-z_]')" -gt 0 ]; then
		ok "$v: <module> at the root of the Python part ($mod of $all), native frames leafward of hot_a"
	else
		fail "$v: <module> at the root ($mod of $all)" "$(grep 'mix (pywork' "$f" | head -2 | cut -c1-500)"
	fi
	if [ "$(count "$f" 'gen_values \(pywork\.py\)_\[j\]')" -gt 0 ] &&
		[ "$(count "$f" 'größe \(pywork\.py\)_\[j\]')" -gt 0 ] &&
		[ "$(count "$f" 'coro_work \(pywork\.py\)_\[j\]')" -gt 0 ] &&
		[ "$(count "$f" '_run \(events\.py\)_\[j\];.*coro_work')" -gt 0 ]; then
		ok "$v: a generator (gen_values), a non-ASCII name (größe), an asyncio task (coro_work under the loop's _run)"
	else
		fail "$v: generator, non-ASCII name, asyncio task" \
			"gen_values $(count "$f" gen_values), größe $(count "$f" größe), coro_work $(count "$f" coro_work)"
	fi
	# sorted's C frames: named by pyenv's builds, addresses in Debian's stripped one
	if [ "$(count "$f" 'mix \(pywork\.py\)_\[j\](;[^;(]+)+;_PyEval_EvalFrameDefault;keyfn \(pywork\.py\)_\[j\]')" -gt 0 ]; then
		ok "$v: sorted()'s key callback keyfn under mix, C frames and the eval loop"
	else
		fail "$v: keyfn under sorted" "$(grep keyfn "$f" | head -2 | cut -c1-500)"
	fi
	lines=$(awk '/leaf_work \(pywork\.py\)/ && /\[older Python frames not shown\]/ { n = gsub(/recurse \(pywork\.py\)/, "&"); if (n > m) m = n } END { print m + 0 }' "$f")
	if [ "$lines" -ge 100 ]; then
		ok "$v: recursion 150 deep: $lines recurse frames above leaf_work, the older ones marked"
	else
		fail "$v: deep recursion ($lines recurse frames with the marker)" "$(grep -c recurse "$f")"
	fi
	if [ "$(count "$f" 'compress_loop \(pywork\.py\)_\[j\];.*deflate')" -gt 0 ]; then
		ok "$v: the zlib thread (GIL released) named: compress_loop above deflate"
	else
		fail "$v: zlib thread" "$(grep compress_loop "$f" | head -2 | cut -c1-500)"
	fi
	# pprof: hot_a's lines are the loop's (the statement, or the for line)
	lines=$(go tool pprof -lines -top -nodecount=1000 "$2.pb.gz" 2>/dev/null |
		awk '$6 == "hot_a" { sub(/.*:/, "", $7); print $7 }' | sort -un | tr '\n' ' ')
	if [[ " $lines" == *" $HOT_A_LINE "* ]] &&
		[ -z "$(echo "$lines" | tr ' ' '\n' | grep -vx "$((HOT_A_LINE - 1))\|$HOT_A_LINE" | grep .)" ]; then
		ok "$v: pprof: hot_a at pywork.py:$HOT_A_LINE (the script's line), lines $lines"
	else
		fail "$v: pprof lines of hot_a: '$lines', want $HOT_A_LINE" \
			"$(go tool pprof -lines -top "$2.pb.gz" 2>&1 | head -12)"
	fi
	if grep -qE '^bpfprof: Python: [0-9]+ samples of 1 interpreters \(CPython '"$v"'\): [1-9][0-9]* with Python frames' "$2.log"; then
		ok "$v: summary: $(grep -o '[0-9]* with Python frames' "$2.log") of $(grep -o 'Python: [0-9]* samples' "$2.log" | cut -d' ' -f2)"
	else
		fail "$v: summary line" "$(grep -i python "$2.log")"
	fi
}

# --- a version not supported: one warning, native frames ---------------------
# shellcheck disable=SC2086
old=$(ls -d $PYENV/versions/3.7.*/bin/python3.7 2>/dev/null | sort -V | tail -1)
if [ -n "$old" ] && [ -x "$old" ]; then
	"$BPFPROF" -F "$F" -o old.folded -- "$old" -c 'import time
e = time.process_time() + 0.2
while time.process_time() < e: sum(range(1000))' >old.log 2>&1
	if [ "$(grep -c 'CPython 3.7 is not supported (3.8 to 3.13 are): profiled without Python frames' old.log)" = 1 ] &&
		grep -q '_PyEval_EvalFrameDefault' old.folded && ! grep -q '_\[j\]' old.folded &&
		grep -q 'Python: 1 processes of unsupported versions' old.log; then
		ok "CPython 3.7: one warning, native frames, counted in the summary"
	else
		fail "CPython 3.7 (not supported)" "$(grep -v '%' old.log)" \
			"eval-loop stacks: $(grep -c _PyEval_EvalFrameDefault old.folded), Python frames: $(grep -c '_\[j\]' old.folded)"
	fi
else
	skip "CPython 3.7 (not supported)" "not installed: no unsupported version to try"
fi

# --- -p, each version -------------------------------------------------------
for e in "${interps[@]}"; do
	v=${e%% *}
	py=${e#* }
	start_py "mix$v" "$py" mix
	if [ "$v" = 3.11 ]; then
		profile_p "mix$v" "$wl" 600 -o "mix$v.data" -o "mix$v.prof"
	else
		profile_p "mix$v" "$wl" 400
	fi
	kill -KILL "$wl"
	wait "$wl" 2>/dev/null
	check_mix "$v" "mix$v"
done

# --- 3.11: perf report, go tool pprof on .prof, legacy, --no-python ----------
if [ -x /usr/bin/python3.11 ] && [[ " ${interps[*]} " == *" /usr/bin/python3.11 "* ]]; then
	if perf report -i mix3.11.data --stdio --no-children --sort sym -g none >report.txt 2>report.err &&
		grep -q 'hot_a (pywork.py)' report.txt && grep -q 'Worker.step (pywork.py)' <(perf report -i mix3.11.data --stdio --no-children --sort sym -G 2>/dev/null); then
		ok "3.11: perf report names the Python functions (hot_a, Worker.step in callers)"
	else
		fail "3.11: perf report" "$(head -3 report.err)" "$(grep -v '^#' report.txt | head -5)"
	fi
	if go tool pprof -top mix3.11.prof >prof.top 2>prof.err && grep -qE ' hot_a( |$)' prof.top && grep -qE ' hot_b( |$)' prof.top; then
		ok "3.11: go tool pprof on the .prof names hot_a and hot_b"
	else
		fail "3.11: go tool pprof .prof" "$(head -3 prof.err)" "$(head -12 prof.top)"
	fi
	start_py legacy /usr/bin/python3.11 mix
	BPFPROF_BPF_VARIANT=legacy profile_p legacy "$wl" 400
	kill -KILL "$wl"
	wait "$wl" 2>/dev/null
	if [ "$(count legacy.folded 'Worker\.step \(pywork\.py\)_\[j\];hot_a')" -gt 0 ] &&
		[ "$(count legacy.folded 'older Python frames not shown')" -gt 0 ]; then
		ok "3.11, legacy variant: hot_a under Worker.step, the deep recursion marked"
	else
		fail "3.11, legacy variant" "$(grep -i 'python\|variant' legacy.log | head -3)"
	fi
	start_py nopy /usr/bin/python3.11 mix
	profile_p nopy "$wl" 200 --no-python
	kill -KILL "$wl"
	wait "$wl" 2>/dev/null
	if [ -s nopy.folded ] && ! grep -q '_\[j\]' nopy.folded && ! grep -q 'Python:' nopy.log &&
		grep -q '_PyEval_EvalFrameDefault' nopy.folded; then
		ok "--no-python: native frames only, no Python summary"
	else
		fail "--no-python" "$(grep -c '_\[j\]' nopy.folded) Python frames" "$(grep Python nopy.log)"
	fi

	# -- COMMAND: a 0.3 s process is named
	"$BPFPROF" -F "$F" -o cmd.folded -- /usr/bin/python3.11 "$WL" "$work/cmd.ready" burst >cmd.log 2>&1
	if [ "$(count cmd.folded 'Worker\.step \(pywork\.py\)_\[j\];hot_a')" -gt 0 ]; then
		ok "-- COMMAND: a 0.3 s python3.11 named ($(count cmd.folded 'hot_a') hot_a samples)"
	else
		fail "-- COMMAND" "$(grep -i python cmd.log)"
	fi

	# a container: the interpreter on a tmpfs that only its mount namespace sees
	if unshare --mount --pid --fork --propagation private true 2>/dev/null; then
		mkdir -p ct
		unshare --mount --pid --fork --propagation private sh -c \
			"mount -t tmpfs ct '$work/ct' && cp /usr/bin/python3.11 '$WL' '$work/ct/' &&
			 exec '$work/ct/python3.11' '$work/ct/pywork.py' '$work/ct.ready' mix" 2>ct.err &
		pids+=($!)
		for ((i = 0; i < 1000; i++)); do
			cpid=$(pgrep -P "$!" -x python3.11) && [ -e ct.ready ] && break
			sleep 0.01
		done
		kill -STOP "$cpid"
		profile_p ct "$cpid" 300
		kill -KILL "$cpid"
		wait 2>/dev/null
		if [ "$(count ct.folded 'Worker\.step \(pywork\.py\)_\[j\];hot_a')" -gt 0 ]; then
			ok "container: python3.11 from a tmpfs of its own mount namespace named"
		else
			fail "container" "$(grep -i python ct.log)"
		fi
	else
		skip "container" "unshare --mount --pid refused"
	fi
fi

# --- --off-cpu: napper in time.sleep ------------------------------------------
newest=${interps[1]:-}
for e in "${interps[0]:-}" "$newest"; do
	[ -n "$e" ] || continue
	v=${e%% *}
	py=${e#* }
	start_py "off$v" "$py" sleep
	"$BPFPROF" -p "$wl" --off-cpu --off-cpu-thresh 100 -F "$F" -o "off$v.pb.gz" >"off$v.log" 2>&1 &
	bp=$!
	wait_sampling "$bp"
	kill -CONT "$wl"
	sleep 0.5
	kill -STOP "$wl"
	kill -INT "$bp"
	wait "$bp"
	kill -KILL "$wl"
	wait "$wl" 2>/dev/null
	go tool pprof -sample_index=off_cpu -traces "off$v.pb.gz" >"off$v.traces" 2>/dev/null
	# time.sleep: clock_nanosleep, select() before 3.11
	if awk '/clock_nanosleep|__select/ { s = 1 } s && /napper/ { x = 1 } /^-+\+/ { s = 0 } END { exit !x }' "off$v.traces"; then
		ok "$v --off-cpu: time.sleep's blocks named under napper"
	else
		fail "$v --off-cpu: napper" "$(grep -m1 -A14 'clock_nanosleep\|__select' "off$v.traces")" "$(grep -i 'python\|off-cpu' "off$v.log")"
	fi
done

# --- -a: every interpreter at once -------------------------------------------
cg2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
if [ ${#interps[@]} -ge 2 ] && [ -n "$cg2" ] && mkdir "$cg2/bpfprof-python.$$" 2>/dev/null; then
	cg=$cg2/bpfprof-python.$$
	all=()
	for e in "${interps[@]:0:3}"; do
		start_py "all${e%% *}" "${e#* }" mix
		echo "$wl" >"$cg/cgroup.procs"
		all+=("$wl")
	done
	"$BPFPROF" -a --no-jvm-perfmap --cgroup "$cg" -F "$F" -o all.folded >all.log 2>&1 &
	bp=$!
	wait_sampling "$bp" perf_event
	for p in "${all[@]}"; do kill -CONT "$p"; done
	for p in "${all[@]}"; do wait_cpu "$p" $(($(cpu_ms "$p") + 300)) 10; done
	for p in "${all[@]}"; do kill -KILL "$p" && wait "$p" 2>/dev/null; done
	kill -INT "$bp"
	wait "$bp"
	n=0
	for e in "${interps[@]:0:3}"; do
		comm=$(basename "${e#* }")
		[ "$(count all.folded "^$comm;.*Worker\\.step \\(pywork\\.py\\)_\\[j\\];hot_a|^$comm;.*step \\(pywork\\.py\\)_\\[j\\];.*hot_a")" -gt 0 ] && n=$((n + 1))
	done
	want=$((${#interps[@]} < 3 ? ${#interps[@]} : 3))
	if [ "$n" = "$want" ] && grep -q "samples of $want interpreters" all.log; then
		ok "-a: $want interpreters at once ($(grep -o 'CPython [0-9., ]*' all.log)), each names hot_a"
	else
		fail "-a: $n of $want interpreters named" "$(grep -i python all.log)"
	fi
else
	skip "-a with several interpreters" "fewer than 2 interpreters, or no cgroup v2 to keep the run to"
fi

finish

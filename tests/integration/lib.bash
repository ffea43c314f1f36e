# SPDX-License-Identifier: MIT
# Shared by the integration scripts (sourced; not a test itself): TAP-like
# result lines and the closing "N passed, N failed, N skipped" total.
#
# Whole-machine runs (-a) not kept to a cgroup of the script's own pass
# --no-jvm-perfmap: at its end bpfprof -a asks every JVM it sampled for its
# perf map (docs/INTERPRETERS.md, "JIT-compiled code"), and jitlive.sh, which may run at the
# same time, checks that its JVM is left without one.
#
# No script writes the host's unwind cache (/var/cache/bpfprof/unwind,
# docs/UNWINDING.md): every run starts cold, as before the cache;
# cache.sh, which tests the cache, names a directory in its $work.
export BPFPROF_UNWIND_CACHE=none
passed=0 failed=0 skipped=0
ok() { echo "ok   - $1"; passed=$((passed + 1)); }
# fail NAME [DETAIL...]: each detail printed indented below
fail() { echo "FAIL - $1"; shift; for l in "$@"; do echo "       $l"; done; failed=$((failed + 1)); }
skip() { echo "skip - $1: $2"; skipped=$((skipped + 1)); }
# near A B TOL: |A - B| <= TOL, and A is not empty
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d <= t) }'; }
# split_tol N BASE: the points allowed around hotcold's 75/25 split measured
# over N samples: BASE, or four standard deviations of a 75 % share
# (100 * sqrt(0.75 * 0.25 / N)) when that is more: make test runs two scripts
# at once beside the fuzzers, which can leave a workload a fraction of the
# samples a run was sized for. Four, not three: the suite makes about a hundred
# such checks a run, and at three (0.27 % each) one run in four would fail one
# by chance; at four (0.006 %) about one run in 160. Prints nothing under
# 50 samples (too few to judge a split).
split_tol() { awk -v n="${1:-0}" -v base="$2" 'BEGIN { if (n < 50) exit; t = 4 * 100 * sqrt(0.1875 / n)
	printf "%.1f", (t > base ? t : base) }'; }
# The closing total; the exit status says whether anything failed.
finish() { echo "$passed passed, $failed failed, $skipped skipped"; [ "$failed" -eq 0 ]; exit; }
# require_bpf WHAT: end the script unless it runs as root with $BPFPROF built
# and the kernel loads bpfprof's program (then skip, saying why). Run in $work.
require_bpf() {
	if [ "$(id -u)" -ne 0 ]; then
		skip "$1" "needs root for BPF and perf events"
		finish
	fi
	if [ ! -x "$BPFPROF" ]; then
		fail "build" "missing $BPFPROF: run make"
		finish
	fi
	if ! "$BPFPROF" -d 0.2 -o "$work/probe.prof" -- true >"$work/probe.log" 2>&1; then
		if grep -qiE 'operation not permitted|permission denied|not supported' "$work/probe.log"; then
			skip "$1" "the kernel refuses BPF here: $(head -2 "$work/probe.log" | tr '\n' ' ')"
			finish
		fi
		fail "probe run" "$(cat "$work/probe.log")"
	fi
}

# Workloads that spin only while measured (the scripts SIGSTOP them until
# bpfprof samples, then give them the CPU time a check needs):
# wait_exec PID COMM: until PID runs COMM (exec'd, past the shell's fork), 10 s at most
wait_exec() {
	local i
	for ((i = 0; i < 1000; i++)); do
		[ "$(cat "/proc/$1/comm" 2>/dev/null)" = "$2" ] && return 0
		sleep 0.01
	done
	return 1
}
# wait_sampling PID [KIND]: until bpfprof PID holds an anon_inode:[KIND]
# (default pidfd: a -p target's, its last step before sampling; perf_event
# for -a), or 3 s after it holds perf events; fails when it exits first
wait_sampling() {
	local i fds
	for ((i = 0; i < 1000; i++)); do
		fds=$(ls -l "/proc/$1/fd" 2>/dev/null)
		[[ $fds == *"anon_inode:[${2:-pidfd}]"* ]] && return 0
		[[ $fds == *'anon_inode:[perf_event]'* ]] && [ $i -ge 300 ] && return 0
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.01
	done
	return 1
}
# cpu_ms PID: PID's CPU time so far, ms
cpu_ms() { local ns; read -r ns _ 2>/dev/null <"/proc/$1/schedstat" && echo $((ns / 1000000)); }
# spin PID MS: let stopped PID run (SIGCONT) until it has had MS more ms of
# CPU (30 s at most), then stop it again. Samples come from CPU time: F x
# MS/1000 of them at any load, not F x wall time x the share of a CPU it got
# (a 0.4 s run at 2999 Hz got 1 sample at a load of 10).
spin() {
	local i t0 now
	t0=$(cpu_ms "$1") || return 1
	kill -CONT "$1"
	for ((i = 0; i < 1500; i++)); do
		now=$(cpu_ms "$1") || break
		[ $((now - t0)) -ge "$2" ] && break
		sleep 0.02
	done
	kill -STOP "$1"
}
# wait_cpu PID MS [MAX_S]: until PID has had MS ms of CPU since it started
# (MAX_S whole seconds, default 30, at most)
wait_cpu() {
	local i now
	for ((i = 0; i < ${3:-30} * 50; i++)); do
		now=$(cpu_ms "$1") || return 1
		[ "$now" -ge "$2" ] && return 0
		sleep 0.02
	done
	return 1
}
# ends DATA EXE [ERR]: "PCT N": the share of perf.data DATA's N samples whose
# outermost user frame is the end of the stack, _start or clone3 (named, or
# at EXE's entry point when it is stripped), read by perf script (its
# stderr into ERR, default $work/script.err)
ends() {
	local entry
	entry=$(readelf -h "$2" | awk '/Entry point/ { print $4 }')
	perf script -i "$1" -F ip,sym,dso 2>"${3:-$work/script.err}" | awk -v exe="$(readlink -f "$2")" -v entry="$entry" '
		function hex(s,   i, c, v) {
			sub(/^0x/, "", s); v = 0
			for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", tolower(substr(s, i, 1))); v = v * 16 + c - 1 }
			return v
		}
		function root(l,   f, v) {
			n++; split(l, f, " ");
			if (l ~ / (_start|clone3|__clone3) \(/) { e++; return }
			v = hex(f[1]); if (index(l, "(" exe ")") && v >= hex(entry) && v < hex(entry) + 64) e++
		}
		NF == 0 { if (last != "") root(last); last = ""; next } { last = $0 }
		END { if (last != "") root(last); printf "%.1f %d\n", n ? 100 * e / n : 0, n }'
}

# The --push tests (push.sh, otlp.sh): a receiver of their own on 127.0.0.1,
# $RECEIVER run by python3, and bpfprof $bp's log $work/b.log watched.
# require_python WHAT: $PY set to Debian's python3 (tools/install-deps.sh),
# else whatever python3 PATH has; without one skip WHAT and end the script
require_python() {
	PY=/usr/bin/python3
	[ -x "$PY" ] || PY=$(command -v python3) || {
		skip "$1" "python3 (the receiver) not installed"
		finish
	}
}
# free_port: a TCP port of 127.0.0.1 free now
free_port() { "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# start_recv NAME ARGS...: the receiver in the background (stderr to
# $work/NAME.recv.err), $recv_pid set, waits for its port file $work/NAME.port
start_recv() {
	local name=$1
	shift
	rm -f "$work/$name.port"
	"$PY" "$RECEIVER" --port-file "$work/$name.port" "$@" 2>>"$work/$name.recv.err" &
	recv_pid=$!
	pids+=("$recv_pid")
	for _ in $(seq 500); do
		[ -s "$work/$name.port" ] && return 0
		sleep 0.02
	done
	return 1
}
stop_recv() { kill "$recv_pid" 2>/dev/null; wait "$recv_pid" 2>/dev/null; }
# seen PATTERN: lines of bpfprof's log that match; wait_log PATTERN N: until
# there are N (20 s at most; 1 if bpfprof ended first)
seen() { grep -c -- "$1" "$work/b.log"; }
wait_log() {
	local i
	for ((i = 0; i < 400; i++)); do
		[ "$(seen "$1")" -ge "$2" ] && return 0
		kill -0 "$bp" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

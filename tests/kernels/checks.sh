#!/bin/sh
# SPDX-License-Identifier: MIT
# checks.sh: bpfprof's runs on one kernel, inside the guest that vm.sh boots
# (busybox sh, as root; TREE is the tested tree, at the host's path). It only
# runs them and keeps what they wrote in /out: run.sh judges the files on
# the host, through the same readers and with the same tolerances as the
# integration scripts. Each run leaves /out/NAME.{rc,log,stdout} and prints
#   === BEGIN NAME: ARGS
#   === END NAME rc=N secs=S
# on the console; a failed run is repeated with -vv (/out/NAME.vv.log) and
# its last 40 lines are printed. The workloads spin for the CPU time a check
# needs, not for a wall time (a guest under TCG runs code about ten times
# slower than the host, and a loaded host slows it down further).

B=$TREE/bpfprof
W=$TREE/.output/workload
T=90 # seconds a bpfprof run may take before it is killed and counted as failed
export DEBUGINFOD_URLS=
# every run cold, as on the host's tests (tests/integration/lib.bash)
export BPFPROF_UNWIND_CACHE=none

now() { cut -d' ' -f1 /proc/uptime; }

# bp NAME ARGS...: bpfprof -v ARGS, no debuginfod
bp() {
	name=$1
	shift
	echo "=== BEGIN $name: $*"
	t0=$(now)
	timeout $T "$B" -v --no-debuginfod "$@" >/out/$name.stdout 2>/out/$name.log
	rc=$?
	echo $rc >/out/$name.rc
	if [ $rc -ne 0 ]; then
		tail -15 /out/$name.log
		echo "--- $name: exit $rc; again with -vv, its last 40 lines:"
		timeout $T "$B" -vv --no-debuginfod "$@" >/dev/null 2>/out/$name.vv.log
		tail -40 /out/$name.vv.log
	fi
	echo "=== END $name rc=$rc secs=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')"
}

# cpu_ms PID: PID's CPU time, ms (lib.bash's)
cpu_ms() { read -r ns _ </proc/$1/schedstat && echo $((ns / 1000000)); }
# wait_comm PID COMM: until PID has exec'd COMM (10 s at most)
wait_comm() {
	i=0
	while [ $i -lt 1000 ] && [ "$(cat /proc/$1/comm 2>/dev/null)" != "$2" ]; do
		sleep 0.01
		i=$((i + 1))
	done
}
# wait_sampling PID: until bpfprof PID holds its -p target's pidfd, its last
# step before sampling (lib.bash's); fails when it exits first
wait_sampling() {
	i=0
	while [ $i -lt 6000 ]; do
		ls -l /proc/$1/fd 2>/dev/null | grep -q 'anon_inode:\[pidfd\]' && return 0
		kill -0 $1 2>/dev/null || return 1
		sleep 0.01
		i=$((i + 1))
	done
	return 1
}
# spin PID MS: let stopped PID run until it has had MS more ms of CPU (lib.bash's)
spin() {
	s0=$(cpu_ms $1)
	kill -CONT $1
	i=0
	while [ $i -lt 3000 ] && [ $(($(cpu_ms $1) - s0)) -lt $2 ]; do
		sleep 0.02
		i=$((i + 1))
	done
	kill -STOP $1
}

echo "=== INFO $(uname -r): perf_event_max_sample_rate $(cat /proc/sys/kernel/perf_event_max_sample_rate)," \
	"clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"

# 1. hotcold as a command, --call-graph dwarf (the default), every output
# format from the one run: 2 s of its CPU time at 999 Hz, where the host
# takes 1 s: emulated, each sample's interrupt costs the workload about 0.4
# ms of its CPU time, and this leaves 700-1000 samples of hot_a and hot_b
bp cmd -F 999 -o /out/cmd.prof -o /out/cmd.pb.gz -o /out/cmd.data -o /out/cmd.folded -o /out/cmd.svg \
	-- "$W/hotcold" 2 --cpu

# 2. hotcold by -p, --call-graph fp: stopped past its start (the dynamic
# loader's 0.1 s of CPU here) while bpfprof starts, then 2 s of CPU at 999
# Hz (see 1); SIGINT ends the run
"$W/hotcold" 600 &
hp=$!
wait_comm $hp hotcold
i=0
while [ $i -lt 500 ] && [ "$(cpu_ms $hp)" -lt 300 ]; do
	sleep 0.02
	i=$((i + 1))
done
kill -STOP $hp
echo "=== BEGIN pid_fp: -p hotcold --call-graph fp"
t0=$(now)
"$B" -v --no-debuginfod --call-graph fp -F 999 -p $hp \
	-o /out/pid_fp.prof -o /out/pid_fp.folded >/out/pid_fp.stdout 2>/out/pid_fp.log &
b=$!
if wait_sampling $b; then
	spin $hp 2000
	kill -INT $b
fi
# a run that hangs in its commit is killed like bp's: T seconds in all
( sleep $T; kill -KILL $b 2>/dev/null ) &
w=$!
wait $b
rc=$?
kill $w 2>/dev/null
echo $rc >/out/pid_fp.rc
if [ $rc -ne 0 ]; then
	tail -15 /out/pid_fp.log
	echo "--- pid_fp: exit $rc; again with -vv (-d 1), its last 40 lines:"
	kill -CONT $hp
	timeout $T "$B" -vv --no-debuginfod --call-graph fp -F 999 -p $hp -d 1 \
		-o /tmp/pid_fp.prof >/dev/null 2>/out/pid_fp.vv.log
	tail -40 /out/pid_fp.vv.log
fi
kill -KILL $hp
wait $hp 2>/dev/null
echo "=== END pid_fp rc=$rc secs=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')"

# 3. nofp (-O2 -fomit-frame-pointer, a PLT call, a thread, SIGALRM every
# 5 ms) by -p for 2 s (under TCG 1 s gave about 100 samples, hot_b 4-8 of
# them against the 5 its check wants), as tests/integration/unwind.sh
# profiles it: already running, so that no sample falls before its unwind
# tables exist
"$W/nofp" 60 5000 &
np=$!
i=0
while [ $i -lt 1000 ] && [ "$(ls /proc/$np/task 2>/dev/null | wc -l)" -lt 2 ]; do
	sleep 0.01
	i=$((i + 1))
done
bp nofp -F 999 -d 2 -p $np -o /out/nofp.data -o /out/nofp.folded
kill -KILL $np
wait $np 2>/dev/null

# 4. -a --cgroup: a hotcold in a cgroup of its own is profiled, a copy
# outside it (another name) is not; both at half duty, so that the guest's
# two CPUs have room for bpfprof; as in tests/integration/run.sh, one sample
# of hot_a is all it needs
mkdir /sys/fs/cgroup/kt
cp "$W/hotcold" /tmp/outsider
"$W/hotcold" 600 --duty 50 &
ip=$!
echo $ip >/sys/fs/cgroup/kt/cgroup.procs
/tmp/outsider 600 --duty 50 &
op=$!
wait_comm $ip hotcold
bp cgroup -a --cgroup kt -F 999 -d 1 -o /out/cgroup.prof -o /out/cgroup.folded
kill -KILL $ip $op
wait $ip $op 2>/dev/null

# 5. --off-cpu on the offcpu workload (tests/integration/offcpu.sh's first
# run): its parts' own wall times on stdout, /out/offcpu.stdout. Blocks of
# 200/100 ms, where the host's are 4/2 ms: emulated, the BPF run at each
# switch and system call exit, and the wake-ups, cost milliseconds of each
# part's wall time that are not off-CPU time (pipe_part's 2 ms block took
# 6.5 ms, its 50 ms block 57 ms on 6.12); 50 times longer blocks leave that
# well within offcpu.sh's bounds, in 5 rounds
bp offcpu --off-cpu --off-cpu-thresh 100 -o /out/offcpu.folded -o /out/offcpu-cpu.folded \
	-o /out/offcpu.pb.gz -o /out/offcpu.data -o /out/offcpu.svg -- "$W/offcpu" 2 200000

dmesg >/out/dmesg.txt
# The kernel's symbols, for the host's perf to name the guest's kernel frames
# in perf.data (run.sh puts them in a build-id cache): only the functions in
# the folded outputs of the same runs, each with the symbol after it (its
# end), and _text (perf's reference for the kernel's load address). All of
# /proc/kallsyms would take 6 s of the serial line.
cat /out/*.folded 2>/dev/null | tr ';' '\n' | sed -n 's/_\[k\]\( [0-9]*\)\{0,1\}$//p' | sort -u >/tmp/knames
awk 'NR == FNR { want[$1]; next } next_too { print; next_too = 0 }
	$3 in want || $3 == "_text" || $3 == "_stext" || $3 == "_etext" { print; next_too = 1 }' /tmp/knames /proc/kallsyms >/out/kallsyms
exit 0

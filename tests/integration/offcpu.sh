#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --off-cpu with the real BPF programs on the project's own workload
# (tests/workload/offcpu.c: spin_part burns the CPU, sleep_part blocks in
# nanosleep, pipe_part blocks in a pipe read that a second thread feeds,
# 2 : 4 : 2 of each round's wall time; it prints the wall time each part
# really took). Checked through the real readers: the folded and SVG
# outputs, go tool pprof -sample_index=off_cpu on the .pb.gz, perf report on
# the perf.data (two events, no warnings); the threshold; -p, a command,
# -a with --cgroup; bpfprof and the idle task never counted; bad options.
# Needs root; skips, saying why, only where the kernel refuses BPF.
#
# The runs are independent, and mostly sleep: they all run at once in the
# background (the first, the command whose shares are measured, ahead of the
# others), and each section below checks its own run in turn. The -p and
# --cgroup runs each have their own workload, started just before and killed
# right after, and are judged by pid through their perf.data too, so that
# the other runs' copies of the workload cannot pass for theirs.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
BPFPROF=${BPFPROF:-$top/bpfprof}
OFFCPU=${OFFCPU:-$top/.output/workload/offcpu}
work=$(mktemp -d /tmp/bpfprof-offcpu.XXXXXX)
cg=
# the background runs, and the workloads and -a run they start (pids in $work/*.wl, a.pid)
cleanup() {
	local p
	for p in $(jobs -p) $(cat "$work"/*.wl "$work/a.pid" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$work"
	[ -n "$cg" ] && rmdir "$cg" 2>/dev/null
}
trap cleanup EXIT
# bpfprof fills perf's build-id cache ($HOME/.debug) for perf.data, as perf record does: keep it in $work
mkdir -p "$work/home"
export PPROF_TMPDIR=$work/pprof HOME=$work/home

. "$(dirname "$0")/lib.bash"
require_bpf "off-CPU tests"

# µs of off-CPU time in the lines of a folded file that contain a frame
# (";NAME;" or ";NAME " at the end of the stack): folded weights are µs here.
folded_us() { awk -v f="$2" 'index($0, ";" f ";") || index($0, ";" f " ") { s += $NF } END { print s + 0 }' "$1"; }
# us as seconds
calc_s() { awk -v u="$1" 'BEGIN { printf "%.6f", u / 1e6 }'; }
# The workload's own wall time of a part, µs ("part ns" lines on its stdout).
wall_us() { awk -v f="$2" '$1 == f { printf "%d\n", $2 / 1000 }' "$1"; }
# started NAME PID: PID runs its rounds (the feeder thread exists); its pid in $work/NAME.wl for cleanup
started() {
	local i
	echo "$2" >"$work/$1.wl"
	for ((i = 0; i < 500; i++)); do
		[ "$(ls "/proc/$2/task" 2>/dev/null | wc -l)" -ge 2 ] && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.02
	done
	return 1
}
# offcpu_pids FILE: the pids of FILE's offcpu-time samples, one a line
offcpu_pids() { perf script -i "$1" -F pid,event 2>/dev/null | awk '$2 ~ /offcpu-time/ { print $1 }' | sort -u; }
# only_pid FILE PID: FILE's offcpu-time samples are all PID's (true without perf to read it)
only_pid() { ! command -v perf >/dev/null || [ "$(offcpu_pids "$1")" = "$2" ]; }
# rc_of NAME: the exit status background run NAME left in $work/NAME.rc
rc_of() { cat "$work/$1.rc" 2>/dev/null || echo none; }
# wait_for NAME: background run NAME is over
declare -A job
wait_for() { wait "${job[$1]}" 2>/dev/null; }

# --- the runs, in the background; each section below checks its own -------
# 1 first, and the others once its workload runs (bpfprof runs the command once it
# profiles): the startups of eight bpfprof runs at once would delay it by seconds
("$BPFPROF" --off-cpu --off-cpu-thresh 100 -o "$work/offcpu.folded" -o "$work/cpu.folded" \
	-o "$work/out.pb.gz" -o "$work/perf.data" -o "$work/offcpu.svg" -o "$work/offcpu.prof" \
	-- "$OFFCPU" 3 4000 >"$work/parts" 2>"$work/cmd.log"
echo $? >"$work/cmd.rc") &
job[cmd]=$!
for ((i = 0; i < 500; i++)); do
	bp=$(pgrep -P "${job[cmd]}" | head -1)
	[ -n "$bp" ] && pgrep -x -P "$bp" offcpu >/dev/null && break
	kill -0 "${job[cmd]}" 2>/dev/null || break
	sleep 0.02
done
# 1b: the sys_exit path
(BPFPROF_OFFCPU_SYS_EXIT=1 "$BPFPROF" -v --off-cpu --off-cpu-thresh 100 -o "$work/offcpu-se.folded" \
	-- "$OFFCPU" 1.5 4000 >"$work/parts-se" 2>"$work/se.log"
echo $? >"$work/se.rc") &
job[se]=$!
# 1c: the legacy variant (kernels without bpf_loop: 5.10 to 5.16), the same parts
(BPFPROF_BPF_VARIANT=legacy "$BPFPROF" -v --off-cpu --off-cpu-thresh 100 -o "$work/offcpu-lg.folded" \
	-- "$OFFCPU" 1.5 4000 >"$work/parts-lg" 2>"$work/lg.log"
echo $? >"$work/lg.rc") &
job[lg]=$!
# 2, 3, 5, 7 judge blocks only: their workloads spin 0 us a round (the third argument)
# 2: a threshold above the blocks
("$BPFPROF" --off-cpu --off-cpu-thresh 1000000 -o "$work/offcpu-t.folded" -o "$work/t.data" -- "$OFFCPU" 1 4000 0 \
	>/dev/null 2>"$work/t.log"
echo $? >"$work/t.rc") &
job[t]=$!
# 3: -p (the workload runs until killed: 20 s at most)
(
	"$OFFCPU" 20 4000 0 >/dev/null &
	pid=$!
	echo "$pid" >"$work/p.pid"
	started p "$pid"
	"$BPFPROF" -p $pid --off-cpu --off-cpu-thresh 100 -d 1.5 -o "$work/offcpu-p.folded" -o "$work/p.data" 2>"$work/p.log"
	echo $? >"$work/p.rc"
	kill -KILL $pid 2>/dev/null
	wait $pid 2>/dev/null
) &
job[p]=$!
# 4: -a
(
	"$BPFPROF" -a --no-jvm-perfmap --off-cpu --off-cpu-thresh 0 -d 1 -o "$work/a.data" 2>"$work/a.log" &
	echo $! >"$work/a.pid"
	wait $!
	echo $? >"$work/a.rc"
) &
job[a]=$!
# 5: -a --cgroup, one copy of the workload inside, one (named outsider) outside
cg2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
if [ -n "$cg2" ] && mkdir "$cg2/bpfprof-offcpu.$$" 2>/dev/null; then
	cg=$cg2/bpfprof-offcpu.$$
	cp "$OFFCPU" "$work/outsider"
	(
		"$OFFCPU" 20 4000 0 >/dev/null &
		inside=$!
		echo $inside >"$cg/cgroup.procs"
		echo "$inside" >"$work/cg.pid"
		"$work/outsider" 20 4000 0 >/dev/null &
		outside=$!
		started cg-in $inside && started cg-out $outside
		"$BPFPROF" -a --cgroup "bpfprof-offcpu.$$" --off-cpu --off-cpu-thresh 100 -d 1.5 \
			-o "$work/offcpu-cg.folded" -o "$work/cg.data" 2>"$work/cg.log"
		echo $? >"$work/cg.rc"
		kill -KILL $inside $outside 2>/dev/null
		wait $inside $outside 2>/dev/null
	) &
	job[cg]=$!
fi
# 6: --interval, on a process that outlives the run (see section 6)
mkdir "$work/cont"
(
	"$OFFCPU" 20 >/dev/null &
	pid=$!
	started cont "$pid"
	"$BPFPROF" -p $pid -F 999 --off-cpu --off-cpu-thresh 100 --output-dir "$work/cont" --interval 1 -d 2.5 \
		-o p.pb.gz -o offcpu.folded 2>"$work/cont.log"
	echo $? >"$work/cont.rc"
	kill -KILL $pid 2>/dev/null
	wait $pid 2>/dev/null
) &
job[cont]=$!
# 7: only the host agent's capabilities (dist/systemd/bpfprof.service.in: no
# CAP_SYS_ADMIN), on another user's process
caps=$(sed -n 's/^AmbientCapabilities=//p' "$top/dist/systemd/bpfprof.service.in" 2>/dev/null)
if [ -n "$caps" ] && command -v setpriv >/dev/null; then
	set_=$(echo "$caps" | tr 'A-Z' 'a-z' | sed -e 's/cap_/+/g' -e 's/ /,/g')
	chmod 755 "$work"
	cp "$OFFCPU" "$work/offcpu"
	(
		setpriv --reuid=65534 --regid=65534 --clear-groups "$work/offcpu" 20 4000 0 >/dev/null &
		nb=$!
		started caps $nb
		setpriv --inh-caps=-all,"$set_" --ambient-caps=-all,"$set_" --bounding-set=-all,"$set_" \
			"$BPFPROF" -p $nb --off-cpu --off-cpu-thresh 100 -d 1.5 -o "$work/offcpu-caps.folded" 2>"$work/caps.log"
		echo $? >"$work/caps.rc"
		kill -KILL $nb 2>/dev/null
		wait $nb 2>/dev/null
	) &
	job[caps]=$!
fi

# 1. A command: off-CPU shares against the workload's own clock.
wait_for cmd
rc=$(rc_of cmd)
if [ "$rc" != 0 ]; then
	fail "--off-cpu -- command: rc=$rc" "$(cat "$work/cmd.log")"
	finish
fi
s_off=$(folded_us "$work/offcpu.folded" sleep_part)
p_off=$(folded_us "$work/offcpu.folded" pipe_part)
spin_off=$(folded_us "$work/offcpu.folded" spin_part)
main_off=$(folded_us "$work/offcpu.folded" main)
s_wall=$(wall_us "$work/parts" sleep_part)
p_wall=$(wall_us "$work/parts" pipe_part)
# The share of sleep_part in the two blocking parts' off-CPU time against its
# share of their wall time. Off-CPU time is a part's wall time less its CPU
# time there (a system call's entry and exit: microseconds per 2-4 ms block)
# and less time it was preempted between being woken and reading the clock;
# both also hit the other part, so on this ratio they mostly cancel. 5
# percentage points leave room for a loaded 2-CPU machine (6 agents), where
# a preemption of a few ms in one round moves the ratio by about 0.1 point.
share=$(awk -v s="$s_off" -v p="$p_off" 'BEGIN { if (s + p) printf "%.1f", 100 * s / (s + p) }')
want=$(awk -v s="$s_wall" -v p="$p_wall" 'BEGIN { if (s + p) printf "%.1f", 100 * s / (s + p) }')
if near "$share" "$want" 5; then
	ok "sleep_part:pipe_part off-CPU split $share % against $want % of their wall time (design 66.7 %)"
else
	fail "off-CPU split: sleep_part $share % of sleep+pipe, wall $want %" \
		"off us: sleep $s_off pipe $p_off; wall us: sleep $s_wall pipe $p_wall" "$(cat "$work/offcpu.folded")"
fi
# Absolute: each part's off-CPU time is at most its wall time (a subset of
# it) and at least 80 % of it (the rest: CPU in the part, preemption, see above).
if awk -v o="$s_off" -v w="$s_wall" -v o2="$p_off" -v w2="$p_wall" \
	'BEGIN { exit !(w > 0 && w2 > 0 && o <= 1.01 * w && o >= 0.8 * w && o2 <= 1.01 * w2 && o2 >= 0.8 * w2) }'; then
	ok "off-CPU time of each part within 80-100 % of its wall time (sleep $s_off/$s_wall us, pipe $p_off/$p_wall us)"
else
	fail "off-CPU against wall time: sleep $s_off/$s_wall us, pipe $p_off/$p_wall us"
fi
# spin_part never blocks (preemption is not counted): no share above noise, 1 % of the main thread's.
if awk -v s="$spin_off" -v m="$main_off" 'BEGIN { exit !(m > 0 && s <= 0.01 * m) }'; then
	ok "spin_part: $spin_off us off-CPU of the main thread's $main_off us (at most 1 %)"
else
	fail "spin_part off-CPU $spin_off us of $main_off us"
fi
# Kernel frames under the blocks: the nanosleep and pipe read paths down from the
# system call entry. Scheduler functions (.sched.text: schedule, do_nanosleep)
# are not among them: the kernel leaves them out of another task's stack
# (stack_trace_save_tsk), as /proc/PID/stack does.
if grep -q 'nanosleep_\[k\]' < <(grep ';sleep_part;' "$work/offcpu.folded") &&
	grep -q 'pipe_read_\[k\]' < <(grep ';pipe_part;' "$work/offcpu.folded") &&
	! grep -E ';(sleep|pipe)_part;' "$work/offcpu.folded" | grep -vq 'entry_SYSCALL_64'; then
	ok "kernel frames: nanosleep under sleep_part, pipe_read under pipe_part, from the syscall entry"
else
	fail "kernel frames of the blocks" "$(cat "$work/offcpu.folded")"
fi
# cpu.folded is the CPU kind: weights are samples, and add up to the samples the summary gave
cpu_sum=$(awk '{ s += $NF } END { print s + 0 }' "$work/cpu.folded")
cpu_said=$(sed -n 's/^bpfprof: [0-9.]* s, \([0-9]*\) samples,.*/\1/p' "$work/cmd.log")
[ "$cpu_sum" = "$cpu_said" ] && grep -q ';spin_part ' "$work/cpu.folded" &&
	ok "cpu.folded: the CPU kind ($cpu_sum samples, spin_part among them)" ||
	fail "cpu.folded: $cpu_sum against $cpu_said samples" "$(cat "$work/cpu.folded")"
grep -q 'off-CPU: [0-9]* blocks of 100 us or more' "$work/cmd.log" && grep -qE '% +[0-9.]+ +sleep_part \[offcpu\]' "$work/cmd.log" &&
	ok "summary: top off-CPU functions (sleep_part) next to the CPU ones" || fail "summary" "$(cat "$work/cmd.log")"
grep -q 'sleep_part (.* us off-CPU' "$work/offcpu.svg" && ok "offcpu.svg: widths in us off-CPU" ||
	fail "offcpu.svg" "$(head -c 600 "$work/offcpu.svg")"

# perf report (Debian's perf 6.1) on the perf.data: both events, nothing on stderr.
if command -v perf >/dev/null; then
	perf report -i "$work/perf.data" --stdio >"$work/report" 2>"$work/report.err"
	rc=$?
	if [ $rc -eq 0 ] && [ ! -s "$work/report.err" ] && grep -q "of event 'cpu-clock'" "$work/report" &&
		grep -q "of event 'offcpu-time'" "$work/report" && grep -q sleep_part "$work/report"; then
		ok "perf report: cpu-clock and offcpu-time events, no warnings"
	else
		fail "perf report: rc=$rc" "$(cat "$work/report.err")" "$(grep -E '^# (Samples|Event)' "$work/report")"
	fi
	# offcpu-time's periods are the blocks' ns: their sum is the blocked time the summary gave
	sum=$(perf script -i "$work/perf.data" -F pid,period,event 2>/dev/null |
		awk '$3 ~ /offcpu-time/ { s += $2 } END { printf "%.3f", s / 1e9 }')
	said=$(sed -n 's/.*off-CPU: [0-9]* blocks of [0-9]* us or more, \([0-9.]*\) s blocked.*/\1/p' "$work/cmd.log")
	near "$sum" "$said" 0.002 && ok "perf script: offcpu-time periods add up to the $said s blocked" ||
		fail "offcpu-time periods $sum s, summary $said s"
else
	skip "perf report" "perf is not installed"
fi

# go tool pprof: -sample_index=off_cpu names the parts; the default stays cpu.
if command -v go >/dev/null; then
	if go tool pprof -sample_index=off_cpu -top -nodecount=100 "$work/out.pb.gz" >"$work/top" 2>"$work/top.err" &&
		grep -q 'Type: off_cpu' "$work/top" && grep -q ' sleep_part$' "$work/top" && grep -q ' pipe_part$' "$work/top" &&
		! grep -vE '^(Some binary filenames not available|Try setting PPROF_BINARY_PATH)' "$work/top.err" | grep -q .; then
		ok "go tool pprof -sample_index=off_cpu -top names sleep_part and pipe_part"
	else
		fail "go tool pprof -sample_index=off_cpu" "$(cat "$work/top.err")" "$(head -20 "$work/top")"
	fi
	go tool pprof -top "$work/out.pb.gz" 2>/dev/null | grep -q 'Type: cpu' && ok "pprof's default sample type stays cpu" ||
		fail "default sample type"
	# offcpu.prof: one "sample" per us blocked; pprof's total is the blocked time of the user stacks
	go tool pprof -top -nodecount=100 "$work/offcpu.prof" >"$work/ptop" 2>/dev/null
	total=$(sed -n 's/.* of \([0-9.]*\)\(ms\|s\) total.*/\1 \2/p' "$work/ptop" | awk '{ print $2 == "s" ? $1 : $1 / 1000 }')
	said=$(sed -n "s/^bpfprof: wrote '.*offcpu.prof': \([0-9]*\) us off-CPU.*/\1/p" "$work/cmd.log")
	if grep -q ' sleep_part$' "$work/ptop" && grep -q ' pipe_part$' "$work/ptop" && near "$total" "$(calc_s "$said")" 0.01; then
		ok "offcpu.prof: go tool pprof -top names the parts, $total s in all as written"
	else
		fail "offcpu.prof: total '$total' s, written '$said' us" "$(head -12 "$work/ptop")"
	fi
else
	skip "go tool pprof" "go is not installed"
fi

# 1b. Kernels without BPF task work (before 6.18) walk a block's user stack at
# its system call exit instead (bpf/offcpu.bpf.h); BPFPROF_OFFCPU_SYS_EXIT=1
# takes that path here (run in the background above): the same parts, with their user frames.
wait_for se
rc=$(rc_of se)
se_s=$(folded_us "$work/offcpu-se.folded" sleep_part)
se_p=$(folded_us "$work/offcpu-se.folded" pipe_part)
se_share=$(awk -v s="$se_s" -v p="$se_p" 'BEGIN { if (s + p) printf "%.1f", 100 * s / (s + p) }')
se_want=$(awk -v s="$(wall_us "$work/parts-se" sleep_part)" -v p="$(wall_us "$work/parts-se" pipe_part)" \
	'BEGIN { if (s + p) printf "%.1f", 100 * s / (s + p) }')
if [ "$rc" = 0 ] && grep -q 'user stacks walked at sys_exit' "$work/se.log" && near "$se_share" "$se_want" 5 &&
	grep -q 'nanosleep_\[k\]' < <(grep ';sleep_part;' "$work/offcpu-se.folded"); then
	ok "sys_exit path: sleep_part $se_share % of the blocked time against $se_want % of the wall time"
else
	fail "sys_exit path: rc=$rc, $se_share % against $se_want %" "$(grep -v '^bpfprof: \(elf\|unwind\|maps\)' "$work/se.log")"
fi

# 1c. The legacy BPF variant (bpf/compat.bpf.h "Variants": bounded loops and
# tail calls, blocked threads in a hash map, the task's registers by CO-RE
# reads), which Linux 5.10 to 5.16 load, here on this kernel: the same parts,
# with their user frames, at sys_exit.
wait_for lg
rc=$(rc_of lg)
lg_s=$(folded_us "$work/offcpu-lg.folded" sleep_part)
lg_p=$(folded_us "$work/offcpu-lg.folded" pipe_part)
lg_share=$(awk -v s="$lg_s" -v p="$lg_p" 'BEGIN { if (s + p) printf "%.1f", 100 * s / (s + p) }')
lg_want=$(awk -v s="$(wall_us "$work/parts-lg" sleep_part)" -v p="$(wall_us "$work/parts-lg" pipe_part)" \
	'BEGIN { if (s + p) printf "%.1f", 100 * s / (s + p) }')
if [ "$rc" = 0 ] && grep -q 'BPF variant legacy' "$work/lg.log" && grep -q 'user stacks walked at sys_exit' "$work/lg.log" &&
	near "$lg_share" "$lg_want" 5 && grep -q 'nanosleep_\[k\]' < <(grep ';sleep_part;' "$work/offcpu-lg.folded"); then
	ok "legacy variant: sleep_part $lg_share % of the blocked time against $lg_want % of the wall time"
else
	fail "legacy variant: rc=$rc, $lg_share % against $lg_want %" "$(grep -v '^bpfprof: \(elf\|unwind\|maps\)' "$work/lg.log")"
fi

# 2. A threshold above the blocks' length (4 and 2 ms; the feeder's ~6 ms): they are
# left out, and counted. 1 s, not just above 6 ms: on a loaded machine a 4 ms
# sleep's wake-up waited up to 56 ms for a CPU (seen here), and such a block
# is rightly kept at a 20 ms threshold. Every block kept must be at least the
# threshold long (perf script's periods), whatever the load.
wait_for t
rc=$(rc_of t)
short=$(perf script -i "$work/t.data" -F period,event 2>/dev/null | awk '$2 ~ /offcpu-time/ && $1 < 1e9' | wc -l)
if [ "$rc" = 0 ] && ! grep -qE 'sleep_part|pipe_part' "$work/offcpu-t.folded" && [ "$short" -eq 0 ] &&
	grep -qE 'off-CPU: [1-9][0-9]* blocks under 1000000 us left out' "$work/t.log"; then
	ok "--off-cpu-thresh 1000000 (above the blocks): none kept, the short ones counted"
else
	fail "threshold: rc=$rc, $short kept blocks under 1 s" "$(cat "$work/t.log")" "$(head -5 "$work/offcpu-t.folded")"
fi

# 3. -p: a running process (its blocks only: by comm in the folded stacks, by pid in perf.data).
wait_for p
rc=$(rc_of p)
pid=$(cat "$work/p.pid" 2>/dev/null)
if [ "$rc" = 0 ] && [ "$(folded_us "$work/offcpu-p.folded" sleep_part)" -gt 500000 ] &&
	! grep -qv '^offcpu;' "$work/offcpu-p.folded" && only_pid "$work/p.data" "$pid"; then
	ok "-p PID --off-cpu: the process's blocks, no other process's"
else
	fail "-p --off-cpu: rc=$rc" "$(cat "$work/p.log")" "$(head -5 "$work/offcpu-p.folded")" \
		"pids: $(offcpu_pids "$work/p.data" | tr '\n' ' ') (want $pid)"
fi

# 4. -a: this bpfprof and the idle task (pid 0) are never counted (other
# agents' bpfprof runs on a shared machine are other processes: by pid).
wait_for a
rc=$(rc_of a)
self=$(cat "$work/a.pid" 2>/dev/null)
if command -v perf >/dev/null; then
	offcpu_pids "$work/a.data" >"$work/a.pids"
	if [ "$rc" = 0 ] && [ -n "$self" ] && [ -s "$work/a.pids" ] && ! grep -qxE "0|$self" "$work/a.pids"; then
		ok "-a --off-cpu: blocks of $(wc -l <"$work/a.pids") processes, none of this bpfprof ($self) or the idle task"
	else
		fail "-a --off-cpu: rc=$rc" "$(cat "$work/a.log")" "$(grep -xE "0|$self" "$work/a.pids")"
	fi
else
	skip "-a --off-cpu" "perf is not installed"
fi

# 5. -a --cgroup: only the blocks of the workload inside the cgroup, not of a copy outside
# (by comm in the folded stacks, by pid in perf.data: the other runs' workloads are outside too).
if [ -z "$cg2" ]; then
	skip "-a --cgroup --off-cpu" "no cgroup2 file system mounted"
elif [ -z "$cg" ]; then
	skip "-a --cgroup --off-cpu" "cannot create a cgroup under $cg2"
else
	wait_for cg
	rc=$(rc_of cg)
	inside=$(cat "$work/cg.pid" 2>/dev/null)
	if [ "$rc" = 0 ] && grep -q '^offcpu;.*;sleep_part;' "$work/offcpu-cg.folded" &&
		! grep -qv '^offcpu;' "$work/offcpu-cg.folded" && only_pid "$work/cg.data" "$inside"; then
		ok "-a --cgroup --off-cpu: the blocks of the workload inside, none of the copy outside"
	else
		fail "-a --cgroup --off-cpu: rc=$rc" "$(cat "$work/cg.log")" "$(cut -c1-100 "$work/offcpu-cg.folded" | sort | uniq -c | head)" \
			"pids: $(offcpu_pids "$work/cg.data" | tr '\n' ' ') (want $inside)"
	fi
	rmdir "$cg" 2>/dev/null && cg=
fi

# 6. Continuous mode: every interval's set (1 s, 1 s, 0.5 s) carries both kinds. -p and -d:
# with a command, the last set is written after the command exited, and its user frames
# are [unknown] when none of its records was read while the process lived (seen with a
# 0.19 s last set on a loaded machine: a fresh set does not keep the maps the previous
# one read). 999 Hz: spin_part then has about 25 CPU samples in the 0.5 s set even with
# a fifth of a CPU; at 99 Hz a short set had none now and then.
wait_for cont
rc=$(rc_of cont)
nsets=$(ls "$work/cont" | grep -c 'p\.pb\.gz$')
nblocked=0
for f in "$work/cont"/*-offcpu.folded; do
	grep -q ';sleep_part;' "$f" && nblocked=$((nblocked + 1))
done
ncpu=0
if command -v go >/dev/null; then
	for f in "$work/cont"/*-p.pb.gz; do
		go tool pprof -sample_index=off_cpu -top "$f" 2>/dev/null | grep -q ' sleep_part$' &&
			go tool pprof -sample_index=samples -top "$f" 2>/dev/null | grep -q ' spin_part$' && ncpu=$((ncpu + 1))
	done
else
	ncpu=$nsets
fi
if [ "$rc" = 0 ] && [ "$nsets" -ge 2 ] && [ "$nblocked" -eq "$nsets" ] && [ "$ncpu" -eq "$nsets" ]; then
	ok "--interval: each of the $nsets sets has off-CPU (sleep_part) and CPU (spin_part) data"
else
	fail "--interval --off-cpu: rc=$rc sets=$nsets with blocks=$nblocked with both in pprof=$ncpu" "$(cat "$work/cont.log")"
fi

# 7. With only the host agent's capabilities (dist/systemd/bpfprof.service.in: no
# CAP_SYS_ADMIN), on another user's process: the tracepoints, task-local
# storage and task work load, the blocks keep their names.
if [ -z "$caps" ] || ! command -v setpriv >/dev/null; then
	skip "--off-cpu with the unit's capabilities" "no unit file or no setpriv"
else
	wait_for caps
	rc=$(rc_of caps)
	if [ "$rc" = 0 ] && grep -q ';main;sleep_part;' "$work/offcpu-caps.folded"; then
		ok "--off-cpu with only the unit's capabilities ($caps), another user's process"
	else
		fail "--off-cpu with the unit's capabilities: rc=$rc" "$(cat "$work/caps.log")"
	fi
fi

# 8. Bad options: exit 2 with a usage hint.
for args in "--off-cpu-thresh 100 -a -d 1" "-a -d 1 -o $work/offcpu.svg" "--off-cpu --off-cpu-thresh -5 -a -d 1" \
	"--off-cpu --off-cpu-thresh 1ms -a -d 1"; do
	# shellcheck disable=SC2086
	"$BPFPROF" $args >/dev/null 2>"$work/bad.log"
	rc=$?
	[ $rc -eq 2 ] && grep -q "bpfprof --help" "$work/bad.log" && ok "bad options exit 2: $args" ||
		fail "bad options '$args': rc=$rc" "$(cat "$work/bad.log")"
done

finish

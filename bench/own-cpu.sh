#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Benchmark 2's own-CPU part, for comparing builds (issue 34): bpfprof's CPU
# while the load runs, per sample and per thread. The measure is
# bench/overhead.sh's: each given bpfprof runs `-a -F 999 -- runstat -- sh -c
# LOAD`, LOAD being bench/spin on every CPU for about SECONDS_PER_RUN s with
# a snapshot before and after it of the profiler's threads' CPU
# (/proc/PID/task/*/schedstat, by comm: the reader "main", bpfprof-notice,
# bpfprof-mmap, bpfprof-unwind) and of its BPF programs' counters
# (kernel.bpf_stats_enabled). What changes is the comparison: the builds run
# in turn, ROUNDS times, the order alternating, and only counters of the
# programs present in both snapshots count (a program loaded meanwhile, as
# the kernel names' one, does not make a negative count). Cold unwind cache,
# as every benchmark (lib.bash).
#   bench/own-cpu.sh OLD/bpfprof NEW/bpfprof ...
# CGROUP=1 keeps the sampling to a cgroup v2 directory of the script's own
# that the load runs in (`-a --cgroup`): the other processes of a shared
# host are then not sampled, not noticed and not registered, which is what
# a quiet host's run sees (its registrations are the load's and the
# snapshots' few processes); their mmap events are still read. SELF=1 (with
# CGROUP=1) starts bpfprof itself in that cgroup too: it samples, notices
# and registers itself as `-a` does on a quiet host (make bench's runs).
# ARGS: more options for every bpfprof (-v: its registrations' lines);
# ERRDIR: a directory each run's stderr is copied to (bN.rR.err).
# Per run: samples (the programs' runs), BPF ns a run, the CPU while the
# load ran (ms, per sample), and by thread; at the end the medians a build.
set -euo pipefail
. "$(dirname "$0")/lib.bash"

[ $# -ge 1 ] || { echo "usage: $0 BPFPROF [BPFPROF...]" >&2; exit 2; }
ROUNDS=${ROUNDS:-5}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-3}
[ "$QUICK" = 1 ] && ROUNDS=1 SECONDS_PER_RUN=1
cal=$("$SPIN" -i 200000000 | awk '{ print $2 }')
ITERS=${ITERS:-$(awk -v c="$cal" -v s="$SECONDS_PER_RUN" 'BEGIN { printf "%.0f", 200000000 * s / c }')}
sysctl -q -w kernel.bpf_stats_enabled=1

cg=
if [ "${CGROUP:-0}" = 1 ]; then
	root=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	[ -n "$root" ] || { echo "bench: no cgroup2 mounted" >&2; exit 1; }
	cg=$root/bpfprof-own-cpu.$$
	mkdir "$cg"
	trap 'rmdir "$cg" 2>/dev/null || true; cleanup' EXIT
fi

# run BPFPROF TAG: leaves $work/TAG.{s0,s1,err}
run() {
	local b=$1 base=$work/$2 prof='$(cut -d" " -f4 /proc/$PPID/stat)' snap load
	# the thread names' CPU, then each program's run counters by prog_id
	snap="p=$prof; awk 'FILENAME ~ /comm\$/ { d = FILENAME; sub(/comm\$/, \"\", d); name[d] = \$1; next } FILENAME ~ /schedstat\$/ { d = FILENAME; sub(/schedstat\$/, \"\", d); n = name[d]; if (n !~ /^bpfprof-/) n = \"main\"; print \"thread:\", n, \$1; next } FNR == 1 { b = 0; id = 0 } /^prog_type:/ { b = 1 } b && /^prog_id:/ { id = \$2 } b && /^run_/ { print \$1, id, \$2 }' /proc/\$p/task/*/comm /proc/\$p/task/*/schedstat /proc/\$p/fdinfo/* 2>/dev/null"
	load=("$RUNSTAT" -o "$base.in" -- sh -c "{ $snap; } >$base.s0; $SPIN -i $ITERS >$base.spin; { $snap; } >$base.s1; true")
	local in_cg=(sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg")
	if [ -n "$cg" ] && [ "${SELF:-0}" = 1 ]; then
		"${in_cg[@]}" "$b" -a -F 999 --cgroup "$cg" ${ARGS:-} -o "$work/b.pb.gz" -- \
			"${load[@]}" 2>"$base.err"
	elif [ -n "$cg" ]; then
		"$b" -a -F 999 --cgroup "$cg" ${ARGS:-} -o "$work/b.pb.gz" -- "${in_cg[@]}" \
			"${load[@]}" 2>"$base.err"
	else
		"$b" -a -F 999 ${ARGS:-} -o "$work/b.pb.gz" -- "${load[@]}" 2>"$base.err"
	fi
	[ -z "${ERRDIR:-}" ] || cp "$base.err" "$ERRDIR/$2.err"
}

# figures TAG: "runs bpf_ns cpu_ms main notice mmap unwind" (ms)
figures() {
	awk 'FNR == 1 { f++ }
	$1 == "thread:" { t[f, $2] += $3 }
	$1 == "run_time_ns:" { rt[f, $2] = $3; ids[$2] = 1 }
	$1 == "run_cnt:" { rc[f, $2] = $3 }
	END {
		for (i in ids) if ((1, i) in rc && (2, i) in rc) { n += rc[2, i] - rc[1, i]; ns += rt[2, i] - rt[1, i] }
		split("main bpfprof-notice bpfprof-mmap bpfprof-unwind", th, " ")
		for (k = 1; k <= 4; k++) { d[k] = (t[2, th[k]] - t[1, th[k]]) / 1e6; all += d[k] }
		printf "%d %.0f %.2f %.2f %.2f %.2f %.2f\n", n, n ? ns / n : 0, all, d[1], d[2], d[3], d[4]
	}' "$work/$1.s0" "$work/$1.s1"
}

echo "fixed work: $ITERS iterations per CPU; ${cg:+cgroup $cg; }load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for ((r = 1; r <= ROUNDS; r++)); do
	order=$(seq 1 $#)
	((r % 2)) || order=$(seq $# -1 1)
	for i in $order; do
		b=${!i}
		run "$b" "b$i.r$r"
		read -r n bns ms m no mm un <<<"$(figures "b$i.r$r")"
		printf 'round %d %s: %d samples, BPF %d ns, CPU while sampling %.1f ms (%.2f us a sample): main %.1f, notice %.1f, mmap %.1f, unwind %.1f\n' \
			"$r" "$b" "$n" "$bns" "$ms" "$(calc "$ms * 1000 / ($n > 0 ? $n : 1)")" "$m" "$no" "$mm" "$un" >&2
		echo "$n $bns $ms $m $no $mm $un" >>"$work/b$i.all"
	done
done
echo "load at the end $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for ((i = 1; i <= $#; i++)); do
	col() { median $(awk -v c="$1" '{ print $c }' "$work/b$i.all"); }
	per=$(median $(awk '{ print ($1 > 0) ? $3 * 1000 / $1 : 0 }' "$work/b$i.all"))
	result "own CPU while sampling, ${!i}" "$(col 3) ms, $per us a sample (main $(col 4), notice $(col 5), mmap $(col 6), unwind $(col 7) ms)" \
		"BPF $(col 2) ns a sample, $(col 1) samples" "-" "-" info
done

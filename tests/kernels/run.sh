#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The kernel matrix: bpfprof on Debian's stock kernels (kernels.list: 5.10,
# 6.1, 6.12, 7.x), each booted under QEMU (vm.sh) to run checks.sh, whose
# files are then judged here through the same readers and with the same
# tolerances as the integration scripts: the hot/cold split of
# tests/workload/hotcold.c by a command (--call-graph dwarf, every output
# format) and by -p (--call-graph fp), nofp's complete stacks by -p
# (unwind.sh), -a --cgroup (run.sh), --off-cpu's shares (offcpu.sh), and a
# kernel log without warnings. One "ok/FAIL - KERNEL: check" line each, the
# seconds each kernel took, and lib.bash's closing total.
#
# Environment: KERNELS="5.10 6.1" (names of kernels.list; default all; none),
# TREE (the built tree to test; default this repository), TIMEOUT (seconds
# a guest may run, default 240), BPFPROF_KERNEL_CACHE (fetch.sh), RESULTS (a
# folder that keeps each kernel's console log and files; default: removed).
# Skips, saying why, a kernel that is neither cached nor downloadable for
# want of a network, and everything without QEMU.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
export TREE=${TREE:-$(cd "$here/../.." && pwd)}
TOL=${TOL:-7} # percentage points around hotcold's split, at least (lib.bash split_tol)
export TIMEOUT=${TIMEOUT:-240}
work=$(mktemp -d /tmp/bpfprof-kernels.XXXXXX)
trap 'rm -rf "$work"' EXIT
results=${RESULTS:-$work}
mkdir -p "$work/pprof"
export PPROF_TMPDIR=$work/pprof

. "$here/../integration/lib.bash"

if [ "${KERNELS:-}" = none ]; then
	skip "kernel matrix" "KERNELS=none"
	finish
fi
if ! command -v qemu-system-x86_64 >/dev/null; then
	skip "kernel matrix" "qemu-system-x86_64 not installed (apt-get install qemu-system-x86 busybox-static cpio)"
	finish
fi
for f in bpfprof .output/workload/hotcold .output/workload/nofp .output/workload/offcpu; do
	if [ ! -x "$TREE/$f" ]; then
		fail "build" "missing $TREE/$f: run make"
		finish
	fi
done

read -r -a names <<<"${KERNELS:-$(awk '!/^#/ && NF { printf "%s ", $1 }' "$here/kernels.list")}"
"$here/fetch.sh" "${names[@]}" >"$work/kernels" 2>"$work/fetch.log"
frc=$?
for n in "${names[@]}"; do
	grep -q "^$n " "$work/kernels" && continue
	if [ $frc -eq 3 ]; then
		skip "$n" "not cached and no network to download it: $(grep -m1 -iE 'resolv|connect|unreachable' "$work/fetch.log")"
	else
		fail "$n: fetch.sh" "$(tail -5 "$work/fetch.log")"
	fi
done

# --- readers -----------------------------------------------------------------
# (these run inside judge: $jw is its folder for temporary files)
pprof() { go tool pprof "$@" 2>"$jw/pprof.err"; }
# pprof_clean: go tool pprof printed nothing but its notice about system
# libraries it has no symbols for (run.sh's)
pprof_clean() { ! grep -vE '^(Some binary filenames not available|Try setting PPROF_BINARY_PATH)' "$jw/pprof.err" | grep -q .; }
# flat NAME FILE: the flat column of NAME in a `-top`/`--text` listing
flat() { awk -v f="$1" '$NF == f { v = $1; sub("[a-z%]+$", "", v); print v; exit }' "$2"; }
# ratio A B: A's percentage of A + B (hot_a's part of hot_a + hot_b)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + b > 0) printf "%.1f", 100 * a / (a + b) }'; }
# leaf_counts FOLDED: "HOT_A HOT_B" samples whose innermost user frame is hot_a, hot_b
leaf_counts() {
	awk '{ n = $NF; s = substr($0, 1, length($0) - length(n) - 1); k = split(s, fr, ";"); u = ""
		for (i = k; i >= 2; i--) if (fr[i] !~ /_\[k\]$/) { u = fr[i]; break }
		if (u == "hot_a") a += n; if (u == "hot_b") b += n }
		END { printf "%d %d\n", a, b }' "$1"
}
# callers_ok TRACES: go tool pprof -traces has hot_a under via_x and via_y, hot_b under via_z
callers_ok() {
	awk '/^-+\+/ { prev = ""; next } { f = $NF; if (prev == "hot_a" && f == "via_x") x = 1;
		if (prev == "hot_a" && f == "via_y") y = 1; if (prev == "hot_b" && f == "via_z") z = 1; prev = f }
		END { exit !(x && y && z) }' "$1"
}
# written LOG: the samples bpfprof reported
written() { sed -n 's/^bpfprof: [0-9.]* s, \([0-9]*\) samples,.*/\1/p' "$1" | head -1; }
# folded_share FOLDED LEAF CHAIN: "PCT N": of the samples with leaf LEAF, % whose user frames end with ;CHAIN (unwind.sh's)
folded_share() {
	awk -v leaf="$2" -v chain="$3" '{ n = $NF; s = substr($0, 1, length($0) - length(n) - 1);
		k = split(s, fr, ";"); user = ""; for (i = 2; i <= k; i++) if (fr[i] !~ /_\[k\]$/) user = user ";" fr[i];
		m = split(user, u, ";"); if (u[m] != leaf) next; t += n;
		if (substr(user, length(user) - length(chain)) == ";" chain) v += n }
		END { printf "%.1f %d\n", t ? 100 * v / t : 0, t }' "$1"
}
# folded_us FOLDED NAME: us off-CPU in the stacks that hold NAME (offcpu.sh's)
folded_us() { awk -v f="$2" 'index($0, ";" f ";") || index($0, ";" f " ") { s += $NF } END { print s + 0 }' "$1"; }
wall_us() { awk -v f="$2" '$1 == f { printf "%d\n", $2 / 1000 }' "$1"; }
has() { command -v "$1" >/dev/null; }

# split K NAME WHAT A B N: hot_a's part A of A + B against 75 %, over N samples
split() {
	local k=$1 name=$2 what=$3 r tol
	r=$(ratio "$4" "$5")
	tol=$(split_tol "$6" "$TOL")
	if [ -n "$tol" ] && near "$r" 75 "$tol"; then
		ok "$k: $name: $what: hot_a $r % of hot_a + hot_b (expect 75 ±$tol, $6 samples)"
	else
		fail "$k: $name: $what: hot_a $r % of hot_a + hot_b (expect 75 ±'$tol': empty under 50 samples; $6 samples)" \
			"hot_a $4, hot_b $5"
	fi
}

# ran K NAME: the guest's run NAME exited 0; else one failure with its first
# libbpf error and the last 40 lines of its -vv rerun
ran() {
	local k=$1 name=$2 rc err
	rc=$(cat "$o/$name.rc" 2>/dev/null || echo none)
	[ "$rc" = 0 ] && return 0
	err=$(cat "$o/$name.log" "$o/$name.vv.log" 2>/dev/null | grep -m1 -E '^libbpf: .*(failed|incompatible|invalid|cannot|error)')
	fail "$k: $name: bpfprof exit $rc${err:+: $err}" "$(grep -m3 '^bpfprof: ' "$o/$name.log" 2>/dev/null)" \
		"-- the -vv rerun's last 40 lines:" "$(tail -40 "$o/$name.vv.log" 2>/dev/null | sed '2,$s/^/       /')"
	return 1
}

# --- one kernel's files ------------------------------------------------------
# variant_first KERNEL NAME LOG WANT: run NAME loaded variant WANT, the one
# the kernel has what for (docs/KERNELS.md), at the first try: a variant
# refused (a chain of calls past 512 bytes of stack) falls back to the next
# and still passes every other check, with fewer frames and twice the
# verifier's time
variant_first() {
	local got
	got=$(sed -n 's/.*: BPF variant \([a-z0-9-]*\) (.*/\1/p' "$3" | tail -1)
	if [ "$got" = "$4" ] && ! grep -q 'did not load' "$3"; then
		ok "$1: $2: the $4 variant loaded, at the first try"
	else
		fail "$1: $2: variant '$got', want $4 at the first try" "$(grep -E 'BPF variant|did not load' "$3")"
	fi
}

judge() {
	local k=$1 o=$2 a b n t r tol s p jw=$work/judge.$1
	mkdir -p "$jw"
	# the guest kernel's symbols where perf looks for a kernel that is not
	# the running one: the build-id cache in HOME, as perf archive leaves it
	export HOME=$o/home
	mkdir -p "$HOME"
	if has perf && [ -s "$o/kallsyms" ]; then
		s=$(perf buildid-list -i "$o/cmd.data" 2>/dev/null || perf buildid-list -i "$o/nofp.data" 2>/dev/null)
		s=$(echo "$s" | awk '$2 == "[kernel.kallsyms]" { print $1; exit }')
		[ -z "$s" ] || { mkdir -p "$HOME/.debug/[kernel.kallsyms]/$s" && mv "$o/kallsyms" "$HOME/.debug/[kernel.kallsyms]/$s/kallsyms"; }
	fi

	# 1. hotcold as a command, dwarf, every format
	if ran "$k" cmd; then
		n=$(written "$o/cmd.log")
		read -r a b <<<"$(leaf_counts "$o/cmd.folded")"
		t=$((a + b))
		split "$k" cmd folded "$a" "$b" "$t"
		[ "$(awk '{ s += $NF } END { print s + 0 }' "$o/cmd.folded")" = "$n" ] &&
			ok "$k: cmd: folded holds all $n samples" || fail "$k: cmd: folded total against bpfprof's $n"
		variant_first "$k" cmd "$o/cmd.log" "$([ "$k" = 5.10 ] && echo legacy || echo modern)"
		if has go; then
			if pprof -top -unit=ms -nodecount=50 "$o/cmd.prof" >"$jw/top" && pprof_clean; then
				split "$k" cmd "go tool pprof -top .prof" "$(flat hot_a "$jw/top")" "$(flat hot_b "$jw/top")" "$t"
			else
				fail "$k: cmd: go tool pprof -top .prof" "$(cat "$jw/pprof.err")"
			fi
			pprof -traces "$o/cmd.prof" >"$jw/traces"
			callers_ok "$jw/traces" && ok "$k: cmd: go tool pprof -traces: hot_a under via_x and via_y, hot_b under via_z" ||
				fail "$k: cmd: callers missing in -traces" "$(head -30 "$jw/traces")"
			if pprof -top -sample_index=samples -nodecount=50 "$o/cmd.pb.gz" >"$jw/pbtop" && pprof_clean; then
				split "$k" cmd "go tool pprof -top .pb.gz" "$(flat hot_a "$jw/pbtop")" "$(flat hot_b "$jw/pbtop")" "$t"
			else
				fail "$k: cmd: go tool pprof .pb.gz" "$(cat "$jw/pprof.err")"
			fi
		else
			skip "$k: cmd: go tool pprof" "go not installed"
		fi
		if has google-pprof; then
			google-pprof --text "$TREE/.output/workload/hotcold" "$o/cmd.prof" >"$jw/gtext" 2>"$jw/gerr"
			if grep -v '^Using local file ' "$jw/gerr" | grep -q .; then
				fail "$k: cmd: google-pprof printed on stderr" "$(cat "$jw/gerr")"
			else
				split "$k" cmd "google-pprof --text" "$(flat hot_a "$jw/gtext")" "$(flat hot_b "$jw/gtext")" "$t"
			fi
		fi
		if has perf; then
			perf report -i "$o/cmd.data" --stdio --no-children --sort sym -g none >"$jw/report" 2>"$jw/report.err"
			if [ -s "$jw/report.err" ]; then
				fail "$k: cmd: perf report printed on stderr" "$(head -5 "$jw/report.err")"
			else
				split "$k" cmd "perf report" "$(awk '$NF == "hot_a" { sub("%", "", $1); print $1; exit }' "$jw/report")" \
					"$(awk '$NF == "hot_b" { sub("%", "", $1); print $1; exit }' "$jw/report")" "$t"
			fi
			s=$(perf script -i "$o/cmd.data" -F comm 2>/dev/null | grep -c . || true)
			[ "$s" = "$n" ] && ok "$k: cmd: perf script prints all $n samples" || fail "$k: cmd: perf script: $s samples, bpfprof wrote $n"
		else
			skip "$k: cmd: perf report" "perf not installed"
		fi
		if has xmllint; then
			xmllint --noout "$o/cmd.svg" 2>"$jw/xml.err" && grep -q 'hot_a' "$o/cmd.svg" &&
				ok "$k: cmd: svg is XML (xmllint) and names hot_a" || fail "$k: cmd: svg" "$(head -3 "$jw/xml.err")"
		else
			grep -q 'hot_a' "$o/cmd.svg" && ok "$k: cmd: svg names hot_a" || fail "$k: cmd: svg without hot_a"
		fi
	fi

	# 2. hotcold by -p, frame pointers
	if ran "$k" pid_fp; then
		read -r a b <<<"$(leaf_counts "$o/pid_fp.folded")"
		t=$((a + b))
		split "$k" pid_fp folded "$a" "$b" "$t"
		if has go; then
			if pprof -top -unit=ms -nodecount=50 "$o/pid_fp.prof" >"$jw/top" && pprof_clean; then
				split "$k" pid_fp "go tool pprof -top .prof" "$(flat hot_a "$jw/top")" "$(flat hot_b "$jw/top")" "$t"
			else
				fail "$k: pid_fp: go tool pprof -top .prof" "$(cat "$jw/pprof.err")"
			fi
			pprof -traces "$o/pid_fp.prof" >"$jw/traces"
			callers_ok "$jw/traces" && ok "$k: pid_fp: go tool pprof -traces: hot_a under via_x and via_y, hot_b under via_z" ||
				fail "$k: pid_fp: callers missing in -traces" "$(head -30 "$jw/traces")"
		fi
	fi

	# 3. nofp by -p: complete stacks (unwind.sh: >= 99 % reach _start/clone3), known callers
	if ran "$k" nofp; then
		if has perf; then
			read -r p n <<<"$(ends "$o/nofp.data" "$TREE/.output/workload/nofp" "$jw/script.err")"
			if [ "${n:-0}" -ge 50 ] && awk -v p="$p" 'BEGIN { exit !(p >= 99) }' && [ ! -s "$jw/script.err" ]; then
				ok "$k: nofp: $p % of $n stacks reach _start/clone3 (perf script)"
			else
				fail "$k: nofp: $p % of ${n:-0} stacks reach _start/clone3 (want >= 99 % of >= 50)" \
					"$(grep 'user stack' "$o/nofp.log")" "$(head -3 "$jw/script.err")"
			fi
		fi
		for c in "hot_a main;run;via_x;hot_a" "hot_b main;run;via_y;hot_b" "lib_hot main;run;via_lib;lib_hot" \
			"hot_t worker;via_t;hot_t" "hot_sig on_alarm;hot_sig"; do
			read -r leaf chain <<<"$c"
			read -r s n <<<"$(folded_share "$o/nofp.folded" "$leaf" "$chain")"
			if [ "${n:-0}" -ge 5 ] && awk -v s="$s" 'BEGIN { exit !(s >= 98) }'; then
				ok "$k: nofp: $s % of $n $leaf samples have callers $chain"
			else
				fail "$k: nofp: $leaf callers: $s % of ${n:-0} are $chain" "$(grep ";$leaf " "$o/nofp.folded" | sort -t' ' -k2 -nr | head -3)"
			fi
		done
	fi

	# 4. -a --cgroup (run.sh's check 10)
	if ran "$k" cgroup; then
		grep -q 'hot_a \[hotcold\]' "$o/cgroup.log" && ! grep -q outsider "$o/cgroup.log" "$o/cgroup.folded" &&
			grep -q ' 1 processes' "$o/cgroup.log" &&
			ok "$k: cgroup: -a --cgroup profiles the workload inside, not the one outside" ||
			fail "$k: cgroup: -a --cgroup" "$(cat "$o/cgroup.log")"
	fi

	# 5. --off-cpu (offcpu.sh's first run)
	if ran "$k" offcpu; then
		local s_off p_off spin_off main_off s_wall p_wall want
		# every interpreter's unwinder is loaded at start-up with --off-cpu
		case $k in
		5.10) want=legacy ;;
		7.*) want=task-work-7 ;;
		*) want=modern ;;
		esac
		variant_first "$k" offcpu "$o/offcpu.log" "$want"
		s_off=$(folded_us "$o/offcpu.folded" sleep_part)
		p_off=$(folded_us "$o/offcpu.folded" pipe_part)
		spin_off=$(folded_us "$o/offcpu.folded" spin_part)
		main_off=$(folded_us "$o/offcpu.folded" main)
		s_wall=$(wall_us "$o/offcpu.stdout" sleep_part)
		p_wall=$(wall_us "$o/offcpu.stdout" pipe_part)
		s=$(ratio "$s_off" "$p_off")
		want=$(ratio "$s_wall" "$p_wall")
		near "$s" "$want" 5 && ok "$k: offcpu: sleep_part:pipe_part off-CPU split $s % against $want % of their wall time (±5)" ||
			fail "$k: offcpu: split: sleep_part $s % of sleep+pipe, wall $want %" \
				"off us: sleep $s_off pipe $p_off; wall us: sleep $s_wall pipe $p_wall"
		awk -v o="$s_off" -v w="$s_wall" -v o2="$p_off" -v w2="$p_wall" \
			'BEGIN { exit !(w > 0 && w2 > 0 && o <= 1.01 * w && o >= 0.8 * w && o2 <= 1.01 * w2 && o2 >= 0.8 * w2) }' &&
			ok "$k: offcpu: each part's off-CPU time 80-100 % of its wall time (sleep $s_off/$s_wall us, pipe $p_off/$p_wall us)" ||
			fail "$k: offcpu: off-CPU against wall time: sleep $s_off/$s_wall us, pipe $p_off/$p_wall us"
		awk -v s="$spin_off" -v m="$main_off" 'BEGIN { exit !(m > 0 && s <= 0.01 * m) }' &&
			ok "$k: offcpu: spin_part $spin_off us off-CPU of the main thread's $main_off us (at most 1 %)" ||
			fail "$k: offcpu: spin_part off-CPU $spin_off us of $main_off us"
		grep ';sleep_part;' "$o/offcpu.folded" | grep -q 'nanosleep_\[k\]' &&
			grep ';pipe_part;' "$o/offcpu.folded" | grep -q 'pipe_read_\[k\]' &&
			! grep -E ';(sleep|pipe)_part;' "$o/offcpu.folded" | grep -vq 'entry_SYSCALL_64' &&
			ok "$k: offcpu: kernel frames: nanosleep under sleep_part, pipe_read under pipe_part, from the syscall entry" ||
			fail "$k: offcpu: kernel frames of the blocks" "$(head -5 "$o/offcpu.folded")"
		if has perf; then
			perf report -i "$o/offcpu.data" --stdio >"$jw/report" 2>"$jw/report.err"
			[ ! -s "$jw/report.err" ] && grep -q "of event 'cpu-clock'" "$jw/report" &&
				grep -q "of event 'offcpu-time'" "$jw/report" && grep -q sleep_part "$jw/report" &&
				ok "$k: offcpu: perf report: cpu-clock and offcpu-time events, no warnings" ||
				fail "$k: offcpu: perf report" "$(head -3 "$jw/report.err")"
			s=$(perf script -i "$o/offcpu.data" -F pid,period,event 2>/dev/null |
				awk '$3 ~ /offcpu-time/ { s += $2 } END { printf "%.3f", s / 1e9 }')
			p=$(sed -n 's/.*off-CPU: [0-9]* blocks of [0-9]* us or more, \([0-9.]*\) s blocked.*/\1/p' "$o/offcpu.log")
			near "$s" "$p" 0.002 && ok "$k: offcpu: perf script: offcpu-time periods add up to the $p s blocked" ||
				fail "$k: offcpu: offcpu-time periods $s s, summary $p s"
		fi
		if has go; then
			pprof -sample_index=off_cpu -top -nodecount=100 "$o/offcpu.pb.gz" >"$jw/top" && pprof_clean &&
				grep -q 'Type: off_cpu' "$jw/top" && grep -q ' sleep_part$' "$jw/top" && grep -q ' pipe_part$' "$jw/top" &&
				ok "$k: offcpu: go tool pprof -sample_index=off_cpu names sleep_part and pipe_part" ||
				fail "$k: offcpu: go tool pprof -sample_index=off_cpu" "$(cat "$jw/pprof.err")" "$(head -12 "$jw/top")"
		fi
	fi

	# the kernel's log after every run
	if [ -s "$o/dmesg.txt" ]; then
		if grep -qE 'WARNING|BUG|Oops|Call Trace|lockup|LOCKUP|rcu.*stall|general protection|splat' "$o/dmesg.txt"; then
			fail "$k: dmesg: a warning, splat or lockup" \
				"$(grep -m10 -E 'WARNING|BUG|Oops|Call Trace|lockup|LOCKUP|rcu.*stall|general protection|splat' "$o/dmesg.txt")"
		else
			ok "$k: dmesg: no warning, splat or lockup"
		fi
	else
		fail "$k: dmesg: not brought back"
	fi
}

# --- each kernel in turn: one VM at a time -----------------------------------
# A kernel's files are judged (about 13 s of the host's readers) while the
# next kernel boots; the lines come out in the kernels' order.
export INITRD=$work/initramfs.cpio.gz
while read -r k kdir; do
	t0=$SECONDS
	"$here/vm.sh" "$kdir" "$here/checks.sh" "$results/$k" >"$work/$k.vm.log" 2>&1 </dev/null
	rc=$?
	vm_s=$((SECONDS - t0))
	(
		passed=0 failed=0 skipped=0 t1=$SECONDS o=$results/$k/out
		case $rc in
		0) ;;
		124) fail "$k: guest still running after ${TIMEOUT}s: killed" "$(grep '^=== ' "$results/$k/console.log" | tail -3)" ;;
		125) fail "$k: guest ended without an exit status" "$(tail -20 "$results/$k/console.log")" "$(cat "$work/$k.vm.log")" ;;
		*) fail "$k: guest exit $rc" "$(cat "$work/$k.vm.log")" ;;
		esac
		# what came back is judged even from a guest that failed
		[ -n "$(ls "$o" 2>/dev/null)" ] && judge "$k" "$o"
		echo "# $k ($(basename "$kdir"), $(cat "$results/$k/accel" 2>/dev/null)): boot to power-off" \
			"$(cat "$results/$k/wall_s" 2>/dev/null) s, $vm_s s with the initramfs, judged in $((SECONDS - t1)) s"
		echo "#counts $passed $failed $skipped"
	) >"$work/$k.judged" 2>&1 </dev/null &
done <"$work/kernels"
wait
while read -r k _; do
	grep -v '^#counts ' "$work/$k.judged"
	read -r _ p f s <<<"$(grep '^#counts ' "$work/$k.judged")"
	[ -n "$s" ] || fail "$k: judging ended early"
	passed=$((passed + ${p:-0})) failed=$((failed + ${f:-0})) skipped=$((skipped + ${s:-0}))
done <"$work/kernels"
echo "# the matrix: $SECONDS s"
finish

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The BPF variants (bpf/compat.bpf.h "Variants", include/kernel_features.h)
# on this kernel: which one bpfprof chooses from its probes, and the legacy
# variant, which Linux 5.10 to 5.16 load (bounded loops and tail calls instead
# of bpf_loop), forced here with BPFPROF_BPF_VARIANT=legacy so that every make
# test runs it, not only the kernel matrix (tests/kernels):
#
#  - with --off-cpu the task work variant where the kernel's BTF has the
#    kfunc (6.18's _impl, 7.x's plain name), else the modern one; without it,
#    the modern one; -v says which and why;
#  - legacy: hotcold's known 75/25 split by -p; the no-frame-pointer workload
#    (nofp) by -p: at least 99 % of its stacks reach the end of the stack,
#    and --check-unwind's copies, unwound again by libdwfl as perf report
#    does, never differ from the BPF walk; --call-graph fp with
#    --check-user-stacks: no walk differs from the kernel's own;
#  - a variant that does not exist: exit 1, naming it.
# The off-CPU path of the legacy variant is in offcpu.sh (1c).
#
# Sampled data: 999 Hz (the kernel's limit if lower); each workload is
# stopped until bpfprof samples it, then runs for 500 ms of CPU: about 500
# samples a check, at any load (lib.bash spin). A check needs 50.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
BPFPROF=${BPFPROF:-$top/bpfprof}
HOTCOLD=${HOTCOLD:-$top/.output/workload/hotcold}
NOFP=${NOFP:-$top/.output/workload/nofp}
work=$(mktemp -d /tmp/bpfprof-variants.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/home"
export HOME=$work/home

. "$(dirname "$0")/lib.bash"
require_bpf "BPF variants"

F=$(awk '{ print $1 < 999 ? $1 : 999 }' /proc/sys/kernel/perf_event_max_sample_rate 2>/dev/null)
F=${F:-999}

# variant LOG: the variant bpfprof -v says it loaded
variant() { sed -n 's/^bpfprof: kernel .*: BPF variant \([a-z0-9-]*\) .*/\1/p' "$1" | head -1; }

# --- the choice -------------------------------------------------------------
want=modern
if command -v bpftool >/dev/null; then
	btf=$(bpftool btf dump file /sys/kernel/btf/vmlinux format raw 2>/dev/null)
	if grep -q "FUNC 'bpf_task_work_schedule_resume' " <<<"$btf"; then
		want=task-work-7
	elif grep -q "FUNC 'bpf_task_work_schedule_resume_impl' " <<<"$btf"; then
		want=task-work
	fi
fi
"$BPFPROF" -v -d 0.2 -a --no-jvm-perfmap -o "$work/none.folded" >"$work/choose.log" 2>&1
"$BPFPROF" -v -d 0.2 -a --no-jvm-perfmap --off-cpu -o "$work/none2.folded" >"$work/choose-off.log" 2>&1
got=$(variant "$work/choose.log") got_off=$(variant "$work/choose-off.log")
if [ "$got" = modern ] && [ "$got_off" = "$want" ]; then
	ok "chosen variant: $got, with --off-cpu $got_off (the kernel's BTF: $want)"
elif [ "$got" = legacy ] && [ "$got_off" = legacy ] && ! grep -q 'no bpf_loop' "$work/choose.log"; then
	fail "chosen variant: legacy on a kernel with bpf_loop" "$(grep 'variant' "$work/choose.log")"
elif [ "$got" = legacy ] && [ "$got_off" = legacy ]; then
	ok "chosen variant: legacy (this kernel has no bpf_loop)"
else
	fail "chosen variant: $got, with --off-cpu $got_off (want modern and $want)" \
		"$(grep -h 'variant\|cannot' "$work/choose.log" "$work/choose-off.log")"
fi

# --- legacy: hotcold's split by -p ------------------------------------------
# hotcold stops itself until bpfprof samples: SIGSTOPped here, let go by spin
"$HOTCOLD" 30 --cpu >/dev/null &
hc=$!
pids+=("$hc")
wait_exec "$hc" hotcold
kill -STOP "$hc"
BPFPROF_BPF_VARIANT=legacy "$BPFPROF" -v -F "$F" -p "$hc" -o "$work/hc.folded" >"$work/hc.log" 2>&1 &
bp=$!
if wait_sampling "$bp"; then
	spin "$hc" 500
fi
kill -INT "$bp" 2>/dev/null
wait "$bp"
rc=$?
kill -KILL "$hc" 2>/dev/null; wait "$hc" 2>/dev/null
read -r a b n <<<"$(awk '{ n = $NF; t += n } / hot_a|;hot_a / { a += n } / hot_b|;hot_b / { b += n }
	END { if (t) printf "%.1f %.1f %d\n", 100 * a / t, 100 * b / t, t }' "$work/hc.folded" 2>/dev/null)"
tol=$(split_tol "${n:-0}" 7)
if [ "$rc" = 0 ] && [ "$(variant "$work/hc.log")" = legacy ] && [ -n "$tol" ] &&
	near "$a" 75 "$tol" && near "$b" 25 "$tol"; then
	ok "legacy -p: hot_a $a %, hot_b $b % of $n samples (75/25 ±$tol)"
else
	fail "legacy -p: rc=$rc, hot_a ${a:-?} %, hot_b ${b:-?} % of ${n:-0} samples (75/25 ±${tol:-?})" \
		"$(tail -5 "$work/hc.log")"
fi

# --- legacy: nofp by -p, the CFI walk -----------------------------------------
"$NOFP" 20 &
np=$!
pids+=("$np")
wait_exec "$np" nofp
sleep 0.1 # past the loader: its thread started
kill -STOP "$np"
BPFPROF_BPF_VARIANT=legacy "$BPFPROF" -v --check-unwind -F "$F" -p "$np" -o "$work/np.folded" \
	>"$work/np.log" 2>&1 &
bp=$!
if wait_sampling "$bp"; then
	spin "$np" 500
fi
kill -INT "$bp" 2>/dev/null
wait "$bp"
rc=$?
kill -KILL "$np" 2>/dev/null; wait "$np" 2>/dev/null
ends=$(sed -n 's/.*: \([0-9.]*\)% reached the end of the stack.*/\1/p' "$work/np.log" | head -1)
line=$(grep "BPF unwinds against libdwfl's" "$work/np.log")
diff=$(sed -n 's/.* \([0-9]*\) different.*/\1/p' <<<"$line")
if [ "$rc" = 0 ] && awk -v e="$ends" 'BEGIN { exit !(e != "" && e >= 99) }' && [ "${diff:-x}" = 0 ]; then
	ok "legacy -p nofp: $ends % of stacks reach the end of the stack; libdwfl: ${line#*: }"
else
	fail "legacy -p nofp: rc=$rc, ${ends:-?} % reach the end; ${line:-no --check-unwind line}" \
		"$(grep 'user stack' "$work/np.log")"
fi

# --- legacy: the frame-pointer walk against the kernel's -----------------------
BPFPROF_BPF_VARIANT=legacy "$BPFPROF" --check-user-stacks -F "$F" -o "$work/fp.folded" \
	-- "$HOTCOLD" 0.5 --cpu >"$work/fp.log" 2>&1
line=$(grep "user stacks against the kernel's walk" "$work/fp.log")
if grep -q ', 0 different' <<<"$line"; then
	ok "legacy --check-user-stacks: ${line#*: }"
else
	fail "legacy --check-user-stacks: the walk differs from the kernel's" "${line:-no check line}" \
		"$(tail -3 "$work/fp.log")"
fi

# --- a variant that does not exist -------------------------------------------
BPFPROF_BPF_VARIANT=fast "$BPFPROF" -d 0.1 -a -o "$work/x.folded" >"$work/bad.log" 2>&1
rc=$?
if [ "$rc" = 1 ] && grep -q "unknown variant 'fast'" "$work/bad.log"; then
	ok "BPFPROF_BPF_VARIANT=fast: exit 1, named"
else
	fail "BPFPROF_BPF_VARIANT=fast: exit $rc" "$(cat "$work/bad.log")"
fi
finish

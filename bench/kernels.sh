#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The BPF program's run time per sample on each kernel of the matrix
# (tests/kernels: Debian's 5.10, 6.1, 6.12, 7.x under QEMU), for the variant
# the kernel gets (legacy on 5.10: bounded loops and tail calls; modern
# elsewhere: bpf_loop) and for the legacy one forced on every kernel, at a
# 20-frame user stack: bench/spin -d 17 (one worker), profiled by -p at
# 999 Hz for 3 s with --call-graph dwarf. In the guest
# kernel.bpf_stats_enabled=1, and bpfprof -v prints the program's run time
# per sample (run_time_ns / run_cnt of on_sample, its tail calls included)
# and the mean frames a stack. Emulated (TCG here): the figures compare the
# kernels and variants with each other, not with the host's.
#   sudo bench/kernels.sh            (KERNELS="5.10 6.1" for some)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
export OUTPUT=${OUTPUT:-$top/.output}
export TREE=${TREE:-$top}
SPIN=$OUTPUT/bench/spin
[ -x "$SPIN" ] || make -C "$top" --no-print-directory "$SPIN" >/dev/null
work=$(mktemp -d /tmp/bpfprof-bench-kernels.XXXXXX)
trap 'rm -rf "$work"' EXIT

cat >"$work/guest.sh" <<EOF
echo 1 >/proc/sys/kernel/bpf_stats_enabled
for v in auto legacy; do
	$SPIN -i 100000000000 -d 17 -j 1 >/dev/null &
	sp=\$!
	sleep 0.5
	w=\$(cat /proc/\$sp/task/*/children 2>/dev/null | tr ' ' '\n' | head -1)
	[ "\$v" = auto ] || export BPFPROF_BPF_VARIANT=\$v
	\$TREE/bpfprof -v --no-debuginfod -F 999 -d 3 -p \${w:-\$sp} -o /tmp/x.folded 2>/out/\$v.log >/dev/null
	unset BPFPROF_BPF_VARIANT
	kill \$sp
	wait \$sp 2>/dev/null
done
EOF

"$top/tests/kernels/fetch.sh" ${KERNELS:-} >"$work/kernels"
printf '%-8s %-10s %14s %14s %8s\n' kernel variant "ns a sample" "frames/stack" samples
while read -r k kdir; do
	EXTRA=$SPIN INITRD=$work/initrd.$k "$top/tests/kernels/vm.sh" "$kdir" "$work/guest.sh" "$work/$k" \
		>"$work/$k.vm.log" 2>&1 </dev/null || true
	for v in auto legacy; do
		log=$work/$k/out/$v.log
		name=$(sed -n 's/.*BPF variant \([a-z0-9-]*\) .*/\1/p' "$log" 2>/dev/null | head -1)
		ns=$(sed -n 's/.*BPF run time: \([0-9]*\) ns a sample.*/\1/p' "$log" 2>/dev/null | head -1)
		fr=$(sed -n 's/.*, \([0-9.]*\) frames a stack.*/\1/p' "$log" 2>/dev/null | head -1)
		n=$(sed -n 's/^bpfprof: [0-9.]* s, \([0-9]*\) samples.*/\1/p' "$log" 2>/dev/null | head -1)
		printf '%-8s %-10s %14s %14s %8s\n' "$k" "${name:-?}" "${ns:-?}" "${fr:-?}" "${n:-?}"
		echo "RESULT BPF run time per sample, $k, ${name:-?} variant: ${ns:-?} ns (${fr:-?} frames a stack)" >>"$work/results"
	done
done <"$work/kernels"
cat "$work/results"

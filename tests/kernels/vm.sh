#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# vm.sh KERNEL_DIR SCRIPT RESULTS: boot one kernel (KERNEL_DIR/vmlinuz, as
# fetch.sh caches it) under QEMU with an initramfs of static busybox,
# bpfprof, its shared libraries and the test workloads, run SCRIPT (busybox
# sh, as root) inside and power off. Into RESULTS: console.log (the guest's
# serial console), out/ (the files the guest left in /out), qemu.log,
# wall_s (boot to power-off). No disk, network, modules or 9p: what the
# guest needs is in the initramfs, and comes back over serial lines.
#
# Environment:
#   TREE     the built tree to test (default: the repository this script is
#            in): TREE/bpfprof and TREE/.output/workload/{hotcold,nofp,
#            libnofp_lib.so,offcpu}. They sit in the guest at the same paths
#            as here, as do the libraries, so that the host's readers (perf,
#            pprof) find the very files the guest profiled.
#   INITRD   the initramfs to boot; built there when missing (run.sh builds
#            one for all its kernels)
#   TIMEOUT  seconds before QEMU is killed (default 300)
#   SMP MEM  the guest's CPUs and memory (default 2, 1G)
#   ACCEL    kvm or tcg (default: kvm where /dev/kvm works, see below)
#   EXTRA    more programs for the guest (absolute paths, kept as they are)
#
# Exit status: SCRIPT's, as the guest printed it; 124 when QEMU timed out,
# 125 when the guest printed none (a panic, or no power-off).
#
# The same idea as the OpenTelemetry eBPF profiler's and Parca's kernel
# tests (test binaries in an initramfs, prebuilt kernels under QEMU, the
# serial log read back), with Debian's own kernels: docs/TESTING.md.
set -euo pipefail

[ $# -eq 3 ] || { echo "usage: $0 KERNEL_DIR SCRIPT RESULTS" >&2; exit 2; }
kdir=$(realpath "$1")
script=$(realpath "$2")
res=$(realpath -m "$3")
here=$(cd "$(dirname "$0")" && pwd)
TREE=$(realpath "${TREE:-$here/../..}")
TIMEOUT=${TIMEOUT:-300}
SMP=${SMP:-2}
MEM=${MEM:-1G}
[ -s "$kdir/vmlinuz" ] || { echo "vm.sh: no vmlinuz in $kdir" >&2; exit 2; }
command -v qemu-system-x86_64 >/dev/null || { echo "vm.sh: qemu-system-x86_64 missing (apt-get install qemu-system-x86)" >&2; exit 2; }

rm -rf "$res"
mkdir -p "$res/out"
root=
trap 'rm -rf "$root"' EXIT

# --- initramfs -------------------------------------------------------------
build_initrd() {
	local f busybox b
	local wl=(hotcold nofp libnofp_lib.so offcpu)
	for f in bpfprof "${wl[@]/#/.output/workload/}"; do
		[ -e "$TREE/$f" ] || { echo "vm.sh: $TREE/$f missing: run make in $TREE" >&2; return 2; }
	done
	busybox=$(command -v busybox || true)
	if [ -z "$busybox" ] || ! file -L "$busybox" | grep -q 'statically linked'; then
		echo "vm.sh: need a static busybox (apt-get install busybox-static)" >&2
		return 2
	fi
	root=$(mktemp -d)
	mkdir -p "$root"/{bin,sbin,etc,proc,sys,dev,tmp,run,root,out} "$root$TREE/.output/workload"
	cp "$busybox" "$root/bin/busybox"
	for a in $("$busybox" --list); do
		[ "$a" = busybox ] || ln -sf busybox "$root/bin/$a"
	done
	cp "$TREE/bpfprof" "$root$TREE/"
	for f in "${wl[@]}"; do cp "$TREE/.output/workload/$f" "$root$TREE/.output/workload/"; done
	# EXTRA: more programs, at their host paths (bench/kernels.sh's load)
	for f in ${EXTRA:-}; do cp -L --parents "$f" "$root/"; done
	# the libraries and the dynamic loader, at the host's paths
	for b in "$TREE/bpfprof" "$TREE/.output/workload/"{hotcold,nofp,offcpu} ${EXTRA:-}; do
		ldd "$b" 2>/dev/null | grep -o '/[^ )]*' || true
	done | grep -v "^$TREE/" | sort -u | while read -r f; do
		cp -L --parents "$f" "$root/"
	done
	printf 'root:x:0:0:root:/root:/bin/sh\n' >"$root/etc/passwd"
	printf 'root:x:0:\n' >"$root/etc/group"
	echo "TREE=$TREE" >"$root/etc/kt.env"
	cp "$script" "$root/checks.sh"
	cat >"$root/init" <<'EOF'
#!/bin/busybox sh
export PATH=/bin:/sbin HOME=/root TMPDIR=/tmp
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
# /tmp stays the initramfs's own (writable): a tree built under /tmp (a CI
# clone) sits there at its host path, which a tmpfs on top would hide
mount -t tmpfs tmpfs /run
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t bpf bpf /sys/fs/bpf 2>/dev/null
mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null
# Emulated, a sample's BPF takes about ten times its native time: the kernel
# would lower perf_event_max_sample_rate below the checks' rates mid-run
echo 0 >/proc/sys/kernel/perf_cpu_time_max_percent
. /etc/kt.env
export TREE
echo "=== GUEST START $(uname -r) btf=$([ -e /sys/kernel/btf/vmlinux ] && echo y || echo n) cpus=$(nproc) uptime=$(cut -d' ' -f1 /proc/uptime)"
sh /checks.sh
rc=$?
echo "=== GUEST rc=$rc uptime=$(cut -d' ' -f1 /proc/uptime)"
# /out on the second serial line, apart from the kernel's messages
{ tar -C /out -cf - . | gzip -1 | base64; echo "=== END"; } >/dev/ttyS1
poweroff -f
EOF
	chmod +x "$root/init"
	(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet | gzip -1) >"$INITRD.tmp"
	mv "$INITRD.tmp" "$INITRD"
}
if [ -z "${INITRD:-}" ]; then
	INITRD=$res/initramfs.cpio.gz
fi
[ -s "$INITRD" ] || build_initrd

# --- the kernel --------------------------------------------------------------
# vmlinux decompressed here (under a second) when the kernel can start
# without its decompressor (PVH, QEMU's entry for an ELF kernel): emulated,
# the decompressor takes about 5 s of each boot. The bzImage's setup header
# gives the payload (offset 0x248, length 0x24c, after the setup sectors,
# 0x1f1); its last 4 bytes are the size the build appends.
kernel=$kdir/vmlinuz
if grep -q '^CONFIG_PVH=y' "$kdir/config" 2>/dev/null; then
	read -r off len <<<"$(od -An -tu4 -j $((0x248)) -N8 "$kernel")"
	sects=$(od -An -tu1 -j $((0x1f1)) -N1 "$kernel")
	start=$(((${sects:-4} + 1) * 512 + ${off:-0}))
	case $(od -An -tx1 -j "$start" -N4 "$kernel" | tr -d ' ') in
	fd377a58) unpack=(xz -dcq) ;;
	28b52ffd) unpack=(zstd -dcq) ;;
	*) unpack=() ;;
	esac
	if [ ${#unpack[@]} -gt 0 ] && command -v "${unpack[0]}" >/dev/null &&
		dd if="$kernel" bs=1M iflag=skip_bytes,count_bytes skip="$start" count=$((len - 4)) status=none |
		"${unpack[@]}" >"$res/vmlinux" 2>/dev/null && [ "$(head -c4 "$res/vmlinux" | od -An -tx1 | tr -d ' ')" = 7f454c46 ]; then
		kernel=$res/vmlinux
	fi
fi

# --- boot ------------------------------------------------------------------
# KVM only where it runs a stock kernel at native speed: under kvm_pvm (a
# paravirtual nested hypervisor, as on Firecracker-style CI machines) every
# privileged instruction is emulated and the decompressor alone took
# minutes, while TCG boots in seconds. TCG has no vPMU: only software events
# (cpu-clock, bpfprof's default), which is all the checks use.
# Single-threaded TCG (both vCPUs on one host thread): with thread=multi,
# QEMU 7.2 hung a guest in about 1 run of 25 of the off-CPU check (6.1, CI
# and here, host loaded): as bpfprof closed its sched_switch link, the
# kernel's text_poke_bp left an int3 in __schedule, one vCPU kept trapping
# on it with interrupts off while guest memory already held the final NOP
# (a stale translation), and the other vCPU waited for it in
# smp_call_function_many_cond for ever (soft lockup). 0 hangs in 80 runs
# single-threaded; the matrix takes 177 s instead of about 150 s here, and a
# third of the host CPU time (multi-threaded TCG spun both host CPUs).
if [ -z "${ACCEL:-}" ]; then
	ACCEL=tcg
	if [ -w /dev/kvm ] && [ ! -d /sys/module/kvm_pvm ]; then ACCEL=kvm; fi
fi
case $ACCEL in
kvm) accel=(-accel kvm -cpu host) ;;
tcg) accel=(-accel tcg,thread=single -cpu max) ;;
*) echo "vm.sh: ACCEL must be kvm or tcg" >&2; exit 2 ;;
esac
echo "$ACCEL" >"$res/accel"
t0=$(date +%s.%N)
set +e
timeout -k 5 "$TIMEOUT" qemu-system-x86_64 -nodefaults -no-user-config -display none -no-reboot \
	"${accel[@]}" -smp "$SMP" -m "$MEM" -kernel "$kernel" -initrd "$INITRD" \
	-append "console=ttyS0 panic=-1 quiet tsc=reliable" -serial stdio -serial "file:$res/out.b64" \
	</dev/null 2>"$res/qemu.log" | tr -d '\r' >"$res/console.log"
qrc=${PIPESTATUS[0]}
set -e
awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f\n", b - a }' >"$res/wall_s"
rm -f "$res/vmlinux"

if grep -q '^=== END' "$res/out.b64" 2>/dev/null; then
	sed '/^=== END/,$d' "$res/out.b64" | tr -d '\r' | base64 -d | tar -xz -C "$res/out"
	rm -f "$res/out.b64"
fi
rc=$(sed -n 's/^=== GUEST rc=\([0-9]*\).*/\1/p' "$res/console.log" | tail -1)
if [ "$qrc" -eq 124 ] || [ "$qrc" -eq 137 ]; then
	rc=124
elif [ -z "$rc" ]; then
	rc=125
fi
exit "$rc"

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Regenerate vmlinux/<arch>/vmlinux.h from the running kernel's BTF.
# The header is committed so that builds do not depend on the build host's
# kernel: CO-RE relocations adapt the BPF object to the kernel it loads on.
set -euo pipefail
arch=${1:-$(uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/' -e 's/ppc64le/powerpc/' -e 's/s390x/s390/' -e 's/riscv64/riscv/')}
btf=${BTF:-/sys/kernel/btf/vmlinux}
top=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$top/vmlinux/$arch"
${BPFTOOL:-bpftool} btf dump file "$btf" format c > "$top/vmlinux/$arch/vmlinux.h.tmp"
mv "$top/vmlinux/$arch/vmlinux.h.tmp" "$top/vmlinux/$arch/vmlinux.h"
echo "wrote vmlinux/$arch/vmlinux.h from $btf"

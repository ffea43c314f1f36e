#!/bin/sh
# SPDX-License-Identifier: MIT
# skel-layout.sh SKEL_H: what a BPF object must share with another to be
# opened through its skeleton (bpf/compat.bpf.h, "Variants"): the names of
# its maps and programs, which libbpf looks up by name, and the layout of its
# global variables, which the skeleton reads and writes in place.
awk '
/s->(maps|progs)\[[0-9]+\]\.name = / { sub(/\[[0-9]+\]/, ""); names[n++] = $0; next }
/struct [a-z0-9_]+__(rodata|bss|data|kconfig) \{/ { in_sec = 1 }
in_sec { print }
in_sec && /\} \*[a-z]+;/ { in_sec = 0 }
END { for (i = 0; i < n; i++) print names[i] | "LC_ALL=C sort" }
' "$1"

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Python frames on another kernel, in QEMU (../shared/vmtest/vmtest.sh):
# Debian's /usr/bin/python3.11 with a zip of the stdlib modules it needs to
# start (encodings, codecs, abc, io), tests/vm/vmpy.py (hot_a under
# Worker.step 150 Python frames deep, napper in time.sleep) and
# tests/vm/python-check.sh in the guest: samples and --off-cpu blocks must
# name the Python functions, the deep recursion marked. One VM at a time.
#   tests/vm/python-vm.sh /tmp/kernels/5.10.0-46-amd64 [OUT]
# Checked: 5.10.0-46 (legacy variant) and 7.3.4 (modern, task-work-7).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
kdir=$1
out=${2:-/tmp/bpfprof-python-vm}
vmtest=${VMTEST:-$top/../shared/vmtest/vmtest.sh}
stage=$(mktemp -d /tmp/bpfprof-python-vm.XXXXXX)
trap 'rm -rf "$stage"' EXIT
cp /usr/bin/python3.11 "$top/tests/vm/vmpy.py" "$stage/"
(cd /usr/lib/python3.11 && zip -qr "$stage/python311.zip" encodings codecs.py abc.py io.py -x '*__pycache__*')
TREE=$top OUT=$out EXTRA="$stage/python3.11 $stage/python311.zip $stage/vmpy.py" TIMEOUT=${TIMEOUT:-400} \
	"$vmtest" "$kdir" "$top/tests/vm/python-check.sh"
grep -E '^=== (RESULT|PYCHECK)|bpfprof: (kernel|Python)' "$out"/*/serial.log

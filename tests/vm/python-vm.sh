#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Python frames on another kernel, in QEMU (tests/kernels/vm.sh, the kernel
# matrix's harness): Debian's /usr/bin/python3.11 with a zip of the stdlib
# modules it needs to start (encodings, codecs, abc, io), tests/vm/vmpy.py
# (hot_a under Worker.step 150 Python frames deep, napper in time.sleep) and
# tests/vm/python-check.sh in the guest: samples and --off-cpu blocks must
# name the Python functions, the deep recursion marked. One VM at a time;
# not part of `make test`.
#   tests/vm/python-vm.sh KERNEL [RESULTS]
# KERNEL: a name of tests/kernels/kernels.list (5.10, 6.1, 6.12, 7.3; fetched
# and cached by tests/kernels/fetch.sh), or a folder holding vmlinuz (and
# config), as fetch.sh caches them. RESULTS (default /tmp/bpfprof-python-vm)
# gets vm.sh's console.log and the guest's files; TIMEOUT (default 400 s).
# Exit status: the number of failed checks; vm.sh's 124/125 for a guest that
# timed out or printed no status.
# Checked: 5.10.0-46 (legacy variant; 53 s here) and 7.3.4 (modern, task-work-7).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -ge 1 ] || { echo "usage: $0 KERNEL [RESULTS]" >&2; exit 2; }
kdir=$1
res=${2:-/tmp/bpfprof-python-vm}
if [ ! -d "$kdir" ]; then
	kdir=$("$top/tests/kernels/fetch.sh" "$1" | awk -v n="$1" '$1 == n { print $2 }')
	[ -n "$kdir" ] || { echo "$0: kernel '$1' not available" >&2; exit 2; }
fi
# The guest's files sit at their host paths (vm.sh copies EXTRA so): the
# check script finds them through W, set by the script vm.sh runs.
stage=$(mktemp -d /tmp/bpfprof-python-vm.XXXXXX)
trap 'rm -rf "$stage"' EXIT
cp /usr/bin/python3.11 "$top/tests/vm/vmpy.py" "$top/tests/vm/python-check.sh" "$stage/"
# the stdlib modules python3.11 needs to start, zipped by python3 (no zip
# package needed), without their __pycache__
python3 - "$stage/python311.zip" <<'PY'
import os, sys, zipfile
os.chdir("/usr/lib/python3.11")
with zipfile.ZipFile(sys.argv[1], "w") as z:
    for top in ("encodings", "codecs.py", "abc.py", "io.py"):
        paths = [top] if os.path.isfile(top) else [
            os.path.join(d, f) for d, ds, fs in os.walk(top) if "__pycache__" not in d for f in fs]
        for p in sorted(paths):
            z.write(p)
PY
printf 'W=%s\n. "$W/python-check.sh"\n' "$stage" >"$stage/guest.sh"
set +e
EXTRA="$stage/python3.11 $stage/python311.zip $stage/vmpy.py $stage/python-check.sh" \
	TIMEOUT=${TIMEOUT:-400} "$top/tests/kernels/vm.sh" "$kdir" "$stage/guest.sh" "$res"
rc=$?
set -e
grep -E '^=== (RESULT|PYCHECK)|bpfprof: (kernel|Python)' "$res/console.log" || true
exit $rc

#!/bin/sh
# Python frames on this kernel (the guest's part of tests/vm/python-vm.sh):
# Debian's python3.11 (stdlib: a zip of encodings) in W, bpfprof in TREE.
export PYTHONHOME=/nonexistent PYTHONPATH=$W/python311.zip DEBUGINFOD_URLS=
cd "$W"
fails=0
uname -r
run() {
	name=$1
	shift
	echo "=== BEGIN $name: bpfprof $*"
	timeout 90 "$TREE/bpfprof" --no-debuginfod -v "$@" >/out/$name.log 2>&1
	rc=$?
	grep -E 'variant|Python:|BPF run time|off-CPU: [0-9]+ blocks|wrote|libbpf: prog' /out/$name.log | head -12
	[ $rc -ne 0 ] && { tail -20 /out/$name.log; fails=$((fails + 1)); }
	echo "=== END $name rc=$rc"
}
run py -F 499 -o /out/py.folded -o /out/py.pb.gz -- "$W/python3.11" -S "$W/vmpy.py" 3
a=$(grep 'Worker.step (vmpy.py)_\[j\];hot_a (vmpy.py)_\[j\]' /out/py.folded | awk '{ n += $NF } END { print n + 0 }')
m=$(grep -c 'older Python frames not shown' /out/py.folded)
t=$(awk '{ n += $NF } END { print n + 0 }' /out/py.folded)
echo "=== RESULT py: $a of $t samples hot_a under Worker.step; $m stacks with the deep-recursion marker"
[ "$a" -gt 0 ] && [ "$m" -gt 0 ] || fails=$((fails + 1))
grep 'hot_a' /out/py.folded | sort -t' ' -k2 -nr | head -1 | cut -c1-400
run pyoff --off-cpu --off-cpu-thresh 100 -F 199 -o /out/offcpu.folded -- "$W/python3.11" -S "$W/vmpy.py" 2
o=$(grep -c 'napper (vmpy.py)_\[j\];.*nanosleep' /out/offcpu.folded)
echo "=== RESULT pyoff: $o folded stacks with napper"
echo "=== PYCHECK fails=$fails"
exit $fails

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The layering rule of make check: the stage folders of user/ include one
# another only downwards, in the order below, and include/*.h holds no include
# cycle. A header belongs to the folder of the .c file of the same name
# (include/agg.h to user/capture/agg.c); headers without one (the ABI, the
# model's profile.h of user/, lib_cursor.h) belong to no stage and any folder
# may include them.
#
# Order, lowest first: lib (no project headers), symbolize (the readers: ELF,
# /proc files, kallsyms, JIT dumps), unwind (tables built from those files),
# capture (BPF, the process table and the aggregator, which use the readers
# and the tables), write (the outputs of the model), xray (a second front end
# to the model and the writers). main.c, interval.c, cli.c and profile.c in
# user/ are above and below no stage: main.c and interval.c wire the stages
# together.
#
# usage: tools/check-layering.sh   (from the repository root; exit 1 on a
# violation, each printed as FILE: includes HEADER of FOLDER)
set -euo pipefail
order=(lib symbolize unwind capture write xray)
declare -A rank owner
for i in "${!order[@]}"; do rank[${order[$i]}]=$i; done
for d in "${order[@]}"; do
	for c in user/"$d"/*.c; do
		b=$(basename "$c" .c)
		[ -f "include/$b.h" ] && owner[$b.h]=$d
	done
done

bad=0
includes() { sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$1"; }
for d in "${order[@]}"; do
	for f in user/"$d"/*.[ch]; do
		[ -f "$f" ] || continue
		for h in $(includes "$f"); do
			s=${owner[$h]:-}
			[ -n "$s" ] || continue
			if [ "${rank[$s]}" -gt "${rank[$d]}" ]; then
				echo "$f: includes $h of user/$s, a later stage than user/$d"
				bad=1
			fi
		done
	done
done

# Header cycles: tsort reports a loop in the include graph of include/*.h.
pairs=$(for h in include/*.h; do
	n=$(basename "$h")
	echo "$n $n"
	for i in $(includes "$h"); do [ -f "include/$i" ] && echo "$n $i"; done
done)
if ! out=$(tsort <<<"$pairs" 2>&1 >/dev/null) || [ -n "$out" ]; then
	echo "include/: include cycle: $out"
	bad=1
fi
[ $bad -eq 0 ] && echo "layering: stage folders include downwards only, no include cycle in include/"
exit $bad

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What learning of mappings as they happen costs (issue 22 item 3;
# user/capture/mmap_events.c, docs/BENCHMARKS.md): bpfprof -a --call-graph dwarf
# opens perf's side-band dummy event on every CPU (MMAP2, COMM exec, FORK,
# EXIT records) and reads it on a thread of its own ("bpfprof-mmap"). While
# `make -j2` of a generated 12-file C project runs over and over, one run of
# bpfprof -a -v and, beside it, `perf record -e dummy -a` (perf's own
# side-band records of the same processes, the reference):
#  - records and bytes a second (bpfprof's -v "mmap events" line);
#  - the reader thread's CPU time (/proc/PID/task/TID/stat utime + stime,
#    read just before the run ends), ms a second;
#  - the memory held for the processes' mappings at the end (-v);
#  - perf's records of the same kinds received from the kernel (timed ones:
#    perf's synthesized records of the processes alive at its start have
#    time 0) in the same time: the ratio shows both read the same stream.
set -euo pipefail
. "$(dirname "$0")/lib.bash"

DUR=${DUR:-10}
[ "$QUICK" = 1 ] && DUR=4
proj=$work/proj
mkdir -p "$proj"
for i in $(seq 1 12); do
	printf 'int f%d(int x) { int s = 0; for (int i = 0; i < x; i++) s += i * %d; return s; }\n' "$i" "$i" >"$proj/f$i.c"
done
printf 'OBJS := %s\nall: $(OBJS)\n%%.o: %%.c\n\t$(CC) -O2 -c $< -o $@\nclean:\n\trm -f *.o\n' \
	"$(cd "$proj" && ls f*.c | sed 's/\.c$/.o/' | tr '\n' ' ')" >"$proj/Makefile"

"$BPFPROF" -a -v -d "$DUR" -o "$work/b.folded" >"$work/b.log" 2>&1 &
bp=$!
"$PERF" record -q -e dummy -a -o "$work/p.data" -- sleep $((DUR - 1)) >"$work/p.log" 2>&1 &
pp=$!
sleep 1
builds=0
end=$((SECONDS + DUR - 3))
while [ $SECONDS -lt $end ]; do
	make -s -C "$proj" clean >/dev/null
	make -s -j2 -C "$proj" >/dev/null
	builds=$((builds + 1))
done
ticks=0
for t in /proc/$bp/task/*; do
	if [ "$(cat "$t/comm" 2>/dev/null)" = bpfprof-mmap ]; then
		ticks=$(awk '{ s = $0; sub(/.*\) /, "", s); split(s, f, " "); print f[12] + f[13] }' "$t/stat")
	fi
done
wait "$bp" "$pp"
line=$(grep '^bpfprof: mmap events:' "$work/b.log" || true)
[ -n "$line" ] || { echo "bench: no mmap events line" >&2; cat "$work/b.log" >&2; exit 1; }
recs=$(echo "$line" | sed -n 's/.*mmap events: \([0-9]*\) records (\([0-9]*\) bytes.*/\1/p')
bytes=$(echo "$line" | sed -n 's/.*mmap events: \([0-9]*\) records (\([0-9]*\) bytes.*/\2/p')
held=$(echo "$line" | sed -n 's/.*processes held (\([0-9]*\) bytes.*/\1/p')
lost=$(echo "$line" | sed -n 's/.* \([0-9]*\) lost, .*/\1/p')
prec=$("$PERF" script -i "$work/p.data" --show-mmap-events --show-task-events 2>/dev/null |
	awk '{ for (i = 2; i <= NF; i++) if ($i ~ /^PERF_RECORD_(MMAP2|COMM|FORK|EXIT)/) { if ($(i - 1) + 0 > 0) n++; break } } END { print n + 0 }')
hz=$(getconf CLK_TCK)
echo "bench: $builds builds of 12 files in $((DUR - 3)) s; bpfprof: $line" >&2
result "mmap events: records a second (make -j2 loop, -a)" "$(calc "$recs / $DUR")" \
	"perf -e dummy -a: $(calc "$prec / ($DUR - 1)")" "$(calc "($recs / $DUR) / ($prec / ($DUR - 1))")" "-" info
result "mmap events: bytes a second" "$(calc "$bytes / $DUR")" "-" "-" "-" info
result "mmap events: bytes a record" "$(calc "$bytes / $recs")" "-" "-" "-" info
result "mmap events: reader thread CPU, ms a second" "$(calc "$ticks * 1000 / $hz / $DUR")" "-" "-" "-" info
result "mmap events: mappings held at the end, bytes" "$held" "-" "-" "-" info
result "mmap events: records lost (64 KiB ring a CPU)" "$lost" "-" "-" "0" "$(verdict "$lost" "<=" 0)"

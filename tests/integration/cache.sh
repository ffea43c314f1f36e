#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The persistent cache of unwind tables (--unwind-cache, docs/UNWINDING.md,
# "The unwind table cache"), on tests/workload/nofp (-O2, no frame pointers, its own shared
# library) profiled with -p, whose tables are in place before sampling:
#
#  - a first run into an empty cache directory writes one entry per file
#    with a build-id (nofp, libnofp_lib.so, libc, ld.so) and -v says so;
#  - a second run reads every table from it: none built but the vDSO's
#    (no build-id: never cached), none missed, none written; its stacks reach
#    the end of the stack as the first run's do (at least 99 %, or no more
#    than 1 point below the first run), so the tables read are the ones built;
#  - nofp's entry with one byte of its rows flipped: -v names the file and
#    "checksum mismatch", the table is rebuilt and the entry written again,
#    byte for byte the first run's;
#  - a cache directory of another owner, or with group/other access: one
#    warning each, the run succeeds without a cache, and nothing is written
#    there (a symlink, a file: tests/test_unwind_cache.c);
#  - a full disk (a 16 KiB tmpfs): one warning, the run succeeds, no
#    temporary file is left.
#
# Cost: six bpfprof runs of 0.4 s, the last three at once: about 5 s of wall
# time on an idle machine, 12 s at a load of 8. All files are
# in the script's temporary directory (the tmpfs is mounted there and
# unmounted at exit); the host's /var/cache/bpfprof is not touched.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
BPFPROF=${BPFPROF:-$top/bpfprof}
NOFP=${NOFP:-$top/.output/workload/nofp}
work=$(mktemp -d /tmp/bpfprof-cache.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	mountpoint -q "$work/full" && umount "$work/full"
	rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/home"
export HOME=$work/home

. "$(dirname "$0")/lib.bash"
cd "$work" || exit 1
require_bpf "the unwind table cache"
if [ ! -x "$NOFP" ]; then
	fail "build" "missing $NOFP: run make"
	finish
fi

"$NOFP" 60 >/dev/null &
wl=$!
pids+=("$wl")
wait_exec "$wl" nofp || fail "nofp did not start"
cache=$work/cache

# run NAME [OPTIONS...]: bpfprof -v -p nofp for 0.4 s into NAME.folded, stderr in NAME.log
run() {
	local name=$1
	shift
	"$BPFPROF" -v -p "$wl" -F 999 -d 0.4 --no-debuginfod -o "$name.folded" "$@" 2>"$name.log"
	echo $? >"$name.rc"
}
# field LOG REGEX: the number before REGEX on the unwind-cache or tables line
field() { grep -oE "[0-9]+ $2" "$1" | head -1 | grep -oE '^[0-9]+'; }
share() { grep -oE '[0-9.]+% reached the end of the stack' "$1" | grep -oE '^[0-9.]+'; }

# ---- cold, then warm ----
run cold --unwind-cache "$cache"
written=$(field cold.log 'written')
entries=$(find "$cache" -name '*.unw' | wc -l)
if [ "$(cat cold.rc)" = 0 ] && [ "${written:-0}" -ge 3 ] && [ "$entries" -eq "$written" ] &&
	[ "$(stat -c %a "$cache")" = 700 ]; then
	ok "cold run: $written tables written, one entry each, directory 0700"
else
	fail "cold run: rc $(cat cold.rc), $written written, $entries entries, mode $(stat -c %a "$cache")" \
		"$(grep -E 'unwind|error' cold.log | head -5)"
fi
nofp_id=$(readelf -n "$NOFP" | awk '/Build ID/ { print $3 }')
entry=$cache/$nofp_id.unw
cp "$entry" nofp.unw 2>/dev/null

run warm --unwind-cache "$cache"
hits=$(field warm.log 'tables loaded from it')
misses=$(field warm.log 'not in it')
wrote=$(field warm.log 'written')
built=$(field warm.log 'built')
s1=$(share cold.log) s2=$(share warm.log)
if [ "$(cat warm.rc)" = 0 ] && [ "${hits:-0}" -ge "$written" ] && [ "$misses" = 0 ] && [ "$wrote" = 0 ] &&
	[ "${built:-9}" -le 1 ]; then
	ok "warm run: every table from the cache ($hits read, $misses missed, $built built: the vDSO)"
else
	fail "warm run: rc $(cat warm.rc), $hits read of $written, $misses missed, $wrote written, $built built" \
		"$(grep -E 'unwind' warm.log | head -5)"
fi
# the tables read walk as the built ones do
if [ -n "$s1" ] && [ -n "$s2" ] && awk -v a="$s1" -v b="$s2" 'BEGIN { exit !(b >= 99 || b >= a - 1) }'; then
	ok "stacks from cached tables reach the end as built ones do ($s2 % against $s1 %)"
else
	fail "stacks from cached tables: $s2 % reached the end, built ones $s1 %" "$(grep 'user stack' warm.log)"
fi

# ---- a corrupt entry: one byte of its rows flipped ----
size=$(stat -c %s "$entry" 2>/dev/null || echo 0)
if [ "$size" -gt 200 ]; then
	off=$((size - 40))
	byte=$(od -An -tu1 -j $off -N1 "$entry" | tr -d ' ')
	printf "\\$(printf %03o $(((byte + 1) % 256)))" | dd of="$entry" bs=1 seek=$off conv=notrunc status=none
fi
run corrupt --unwind-cache "$cache"
rejected=$(field corrupt.log 'bad entries rebuilt')
if [ "$(cat corrupt.rc)" = 0 ] && [ "$rejected" = 1 ] &&
	grep -q "unwind cache: '$entry' (for '[^']*nofp'): checksum mismatch" corrupt.log &&
	cmp -s "$entry" nofp.unw; then
	ok "corrupt entry: named with 'checksum mismatch' at -v, rebuilt, written again as before"
else
	fail "corrupt entry: rc $(cat corrupt.rc), $rejected rejected, rewritten: $(cmp -s "$entry" nofp.unw && echo same || echo differs)" \
		"$(grep -E 'unwind cache' corrupt.log | head -5)"
fi

# ---- directories that are not root's alone, and a full disk (16 KiB tmpfs): three runs at once ----
mkdir -m 0700 other && chown 65534:65534 other
mkdir -m 0755 open && chmod 0755 open
mkdir -m 0700 full
mounted=0
mount -t tmpfs -o size=16k,mode=0700 tmpfs full 2>/dev/null && mounted=1
runs=()
run refused-other --unwind-cache "$work/other" &
runs+=($!)
run refused-open --unwind-cache "$work/open" &
runs+=($!)
if [ $mounted = 1 ]; then
	run full --unwind-cache "$work/full" &
	runs+=($!)
fi
wait "${runs[@]}"
for d in other open; do
	n=$(grep -c "unwind cache: '$work/$d' refused" "refused-$d.log")
	if [ "$(cat "refused-$d.rc")" = 0 ] && [ "$n" = 1 ] && [ -s "refused-$d.folded" ] &&
		[ -z "$(find "$d" -mindepth 1)" ] && ! grep -q "unwind cache '$work/$d'" "refused-$d.log"; then
		ok "cache directory '$d' ($(stat -c '%U, mode %a' "$d")): one warning, a profile, nothing written"
	else
		fail "cache directory '$d': rc $(cat "refused-$d.rc"), $n warnings, $(find "$d" -mindepth 1 | wc -l) files" \
			"$(grep -E 'unwind cache' "refused-$d.log" | head -3)"
	fi
done
if [ $mounted = 1 ]; then
	n=$(grep -c "unwind cache: cannot write .*No space left on device" full.log)
	if [ "$(cat full.rc)" = 0 ] && [ "$n" = 1 ] && [ -s full.folded ] && [ -z "$(find full -name '.tmp*')" ]; then
		ok "full disk: one warning, a profile, no temporary file left ($(find full -name '*.unw' | wc -l) entries fitted)"
	else
		fail "full disk: rc $(cat full.rc), $n warnings" "$(grep -E 'unwind cache' full.log | head -3)" "$(ls -A full)"
	fi
	umount full
else
	skip "full disk" "cannot mount a tmpfs here"
fi
finish

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# V8 found by its postmortem metadata (issue 31, first part): a real node
# profiled with -p under -v/-vv names the V8 it runs, with the version node
# reports (process.versions.v8) and the count of v8dbg_* symbols nm lists,
# and the frame offsets, frame-type markers, instance types and field
# offsets bpfprof read equal those read from the binary independently
# (readelf's symbol table and the file's bytes at each symbol, by python);
# --no-node says nothing of V8; a program named node without the metadata
# gets one warning and is profiled as before; so does a process mapping a
# library with forged metadata (the fuzz seeds' ELF), while one mapping the
# whole metadata in a library is found. Short: node spends ~20 % of a CPU
# for about a second a run, the other programs spin for a second each.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
BPFPROF=${BPFPROF:-$top/bpfprof}
work=$(mktemp -d /tmp/bpfprof-node.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$work"' EXIT

. "$(dirname "$0")/lib.bash"

require_bpf "node"
if ! command -v node >/dev/null; then
	skip "node" "no node installed"
	finish
fi

# A node busy 3 ms in every 15: sampled, light
node -e 'setInterval(() => { const t = Date.now(); while (Date.now() - t < 3); }, 15)' &
np=$!
pids+=("$np")
wait_exec "$np" node || { fail "node starts"; finish; }
exe=$(readlink -f "/proc/$np/exe")

# The values of exe's v8dbg_* symbols, "NAME VALUE" each, read without bpfprof:
# readelf's tables and the 4 bytes at each symbol's file offset (0 in .bss)
python3 - "$exe" >"$work/vals" <<'PY'
import struct, subprocess, sys
f = sys.argv[1]
secs = {}
for l in subprocess.run(['readelf', '-SW', f], capture_output=True, text=True).stdout.splitlines():
    p = l.replace('[ ', '[').split()
    if len(p) > 6 and p[0].startswith('[') and p[0] != '[Nr]':
        secs[int(p[0][1:-1])] = (p[2], int(p[3], 16), int(p[4], 16))
data, seen = open(f, 'rb'), set()
for l in subprocess.run(['readelf', '-sW', '--dyn-syms', f], capture_output=True, text=True).stdout.splitlines():
    p = l.split()
    if len(p) < 8 or not p[7].startswith('v8dbg_') or p[7] in seen or not p[6].isdigit() or p[2] != '4':
        continue
    seen.add(p[7])
    typ, addr, off = secs[int(p[6])]
    v = 0
    if typ != 'NOBITS':
        data.seek(int(p[1], 16) - addr + off)
        v = struct.unpack('<i', data.read(4))[0]
    print(p[7], v)
PY
val() { awk -v n="v8dbg_$1" '$1 == n { print $2 }' "$work/vals"; }

# --- -p under -vv: found V8, its version, its symbols, its layout ----------
"$BPFPROF" -vv -F 499 -p "$np" -d 1 -o "$work/on.folded" >"$work/on.log" 2>&1
want_ver=$("$exe" -p process.versions.v8)
nsym=$(nm -D "$exe" 2>/dev/null | grep -c ' v8dbg_')
nsym2=$(nm "$exe" 2>/dev/null | grep -c ' v8dbg_')
[ "$nsym2" -gt "$nsym" ] && nsym=$nsym2
line=$(grep "v8: pid $np (node): found V8 " "$work/on.log")
if [ "$(grep -c "v8: pid $np (node): found V8 " "$work/on.log")" = 1 ] &&
	[[ $line == *"found V8 $want_ver in $exe (metadata: $nsym symbols read)"* ]]; then
	ok "-v: found V8 $want_ver (= process.versions.v8) in $exe, $nsym symbols (= nm's count)"
else
	fail "-v: found V8 $want_ver in $exe (metadata: $nsym symbols read), once" "$line" "$(grep -i v8 "$work/on.log" | head -5)"
fi
got=$(grep -o "v8: pid $np: fp function .*" "$work/on.log")
want="v8: pid $np: fp function $(val off_fp_function) context $(val off_fp_context) bytecode_array $(val off_fp_bytecode_array) bytecode_offset $(val off_fp_bytecode_offset);"
want+=" markers entry $(val frametype_EntryFrame) interpreted $(val frametype_InterpretedFrame) baseline $(val frametype_BaselineFrame) turbofan $(val frametype_TurbofanFrame) stub $(val frametype_StubFrame) internal $(val frametype_InternalFrame);"
want+=" types JSFunction $(val type_JSFunction__JS_FUNCTION_TYPE)-$(($(val type_JSFunction__JS_FUNCTION_TYPE) + 15)) SharedFunctionInfo $(val type_SharedFunctionInfo__SHARED_FUNCTION_INFO_TYPE) Code $(val type_Code__CODE_TYPE);"
want+=" JSFunction.shared $(val class_JSFunction__shared__SharedFunctionInfo) SharedFunctionInfo.name_or_scope_info $(val class_SharedFunctionInfo__name_or_scope_info__Object)"
want+=" Script.name $(val class_Script__name__Object) Map.instance_type $(val class_Map__instance_type__uint16_t)"
if [ -n "$(val off_fp_function)" ] && [ "$got" = "$want" ]; then
	ok "-vv: frame offsets, markers, types and fields equal the binary's (readelf + its bytes): fp function $(val off_fp_function), interpreted $(val frametype_InterpretedFrame), JSFunction $(val type_JSFunction__JS_FUNCTION_TYPE)"
else
	fail "-vv: the layout equals the binary's" "got:  $got" "want: $want"
fi
grep -q "^bpfprof: V8: 1 processes with V8 found, 0 with unusable metadata" "$work/on.log" &&
	ok "-v summary: 1 process with V8 found" ||
	fail "-v summary: V8 line" "$(grep 'V8:' "$work/on.log")"
[ -s "$work/on.folded" ] && ok "the profile is written (native frames as before)" ||
	fail "profile written" "$(tail -3 "$work/on.log")"

# --- --no-node: nothing of V8 ----------------------------------------------
"$BPFPROF" -v -F 499 -p "$np" -d 0.5 --no-node -o "$work/off.folded" >"$work/off.log" 2>&1
if [ -s "$work/off.folded" ] && ! grep -qE '^bpfprof: (v8|V8): ' "$work/off.log"; then
	ok "--no-node: no V8 line, profile written"
else
	fail "--no-node: no V8 line" "$(grep -iE 'v8' "$work/off.log" | head -3)"
fi
kill "$np" 2>/dev/null

# --- a program named node without the metadata: one warning ---------------
mkdir -p "$work/bin"
cp "$(command -v bash)" "$work/bin/node"
"$work/bin/node" -c 'end=$((SECONDS + 3)); while [ $SECONDS -lt $end ]; do :; done' &
fp=$!
pids+=("$fp")
wait_exec "$fp" node
"$BPFPROF" -v -F 499 -p "$fp" -d 0.5 -o "$work/fake.folded" >"$work/fake.log" 2>&1
rc=$?
kill "$fp" 2>/dev/null
n=$(grep -c "v8: pid $fp (node): $work/bin/node: no v8dbg_ metadata: profiled without JavaScript frames" "$work/fake.log")
if [ "$rc" = 0 ] && [ "$n" = 1 ] && [ -s "$work/fake.folded" ] &&
	grep -q "V8: 0 processes with V8 found, 0 with unusable metadata, 0 node files unreadable, 1 without metadata" "$work/fake.log"; then
	ok "a node without v8dbg_ metadata: one warning naming it, profiled as before"
else
	fail "a node without metadata: one warning, rc 0" "rc $rc, $n warnings" "$(grep -iE 'v8' "$work/fake.log" | head -3)"
fi

# --- a library that forges the metadata, and one that carries it ----------
# python3 maps tests/fuzz/corpus/v8_metadata's fixtures executable under the
# names of node's library (the fixtures are node 20's metadata written into
# a small ELF, tests/v8_fixture.h): one with off_fp_function left out, one
# whole: found in any mapped library, refused with the symbol's name.
for kind in missing-fp-function node20-symtab; do
	mkdir -p "$work/$kind"
	cp "$top/tests/fuzz/corpus/v8_metadata/$kind" "$work/$kind/libnode.so.115"
	python3 -c '
import mmap, sys, time
f = open(sys.argv[1], "rb")
m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ | mmap.PROT_EXEC)
end = time.time() + 3
while time.time() < end:
    pass' "$work/$kind/libnode.so.115" &
	pids+=($!)
done
sleep 0.3
bad=${pids[-2]} good=${pids[-1]}
"$BPFPROF" -v -F 499 -p "$bad,$good" -d 0.5 -o "$work/lib.folded" >"$work/lib.log" 2>&1
rc=$?
kill "$bad" "$good" 2>/dev/null
n=$(grep -c "v8: pid $bad (python3): $work/missing-fp-function/libnode.so.115: unusable V8 metadata: v8dbg_off_fp_function: missing: profiled without JavaScript frames" "$work/lib.log")
if [ "$rc" = 0 ] && [ "$n" = 1 ] && [ -s "$work/lib.folded" ]; then
	ok "forged metadata in a mapped library: one warning naming the symbol, profiled as before"
else
	fail "forged metadata: one warning, rc 0" "rc $rc, $n warnings" "$(grep -iE 'v8' "$work/lib.log" | head -3)"
fi
grep -q "v8: pid $good (python3): found V8 11.3.244.8-node.38 in $work/node20-symtab/libnode.so.115 (metadata: 88 symbols read)" "$work/lib.log" &&
	ok "metadata in a mapped library (not the executable): found" ||
	fail "metadata in a mapped library: found" "$(grep -iE 'v8' "$work/lib.log" | head -3)"

finish

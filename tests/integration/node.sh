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
#
# JavaScript frames (issue 31, BPF walk and naming), with programs of ours:
# - work.js (known functions and shares: hotA does 9 times hotB's work; a
#   class method, an arrow, Array.prototype.sort's comparator calling back
#   into JavaScript) run under `-- node` optimized (default tiers) and
#   interpreted only (--no-opt --no-sparkplug): both named, hotA:hotB of
#   their cumulative samples 9 within a factor of 1.6, hotA's share of the
#   two in both runs within 5 points; the comparator under sortWork through the
#   sort builtins; pprof lines of spin are its loop's (the script's line 5);
#   the names of work.js's functions those a --perf-basic-prof run of the
#   same script writes (no /tmp/perf-PID.map left behind);
# - async.js: an async function resumed after an await, named at its line
#   under V8's microtask queue with its callee;
# - an HTTP server on node's own http module under a load generator of
#   ours on the loopback, attached with -p after 2 s: its handlers named
#   under their callers (the request listener, an arrow, under
#   EventEmitter's emit), /compute above /render, at most 2 % of its
#   samples with a frame left [unknown] or [anon] (the issue's bound; see
#   below);
# - --no-node: the same server unnamed (JIT frames [anon]);
# - --off-cpu: a function blocked in child_process.execSync named under its
#   JavaScript callers;
# - -a with two node processes, one exiting mid-run: both named;
# - a container's node (own mount + pid namespace, binary and script only
#   in its root): -a with the default call graph, beside a host node, both
#   named; -p on it: hotA named, spin at its line.
# About 25 s of one CPU.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
BPFPROF=${BPFPROF:-$top/bpfprof}
work=$(mktemp -d /tmp/bpfprof-node.XXXXXX)
export PPROF_TMPDIR=$work/pprof
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
bad=${pids[-2]} good=${pids[-1]}
# until both have mapped their fixture (python3's start-up takes longer on a loaded host)
for _ in $(seq 250); do
	grep -q libnode.so.115 "/proc/$bad/maps" 2>/dev/null && grep -q libnode.so.115 "/proc/$good/maps" 2>/dev/null && break
	sleep 0.02
done
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

# --- JavaScript frames: work.js, optimized and interpreted ------------------
cat >"$work/work.js" <<'JS'
'use strict';
// hotA does 3 x 30000 units for hotB's 1 x 10000 each round: 9 to 1 (the arrow: 8000)
function spin(n) {
  let s = 0;
  for (let i = 0; i < n; i++) s += Math.sqrt(i + s % 7);
  return s;
}
function hotA() { return spin(30000); }
function hotB() { return spin(10000); }
class Shape {
  area(n) { return spin(n); }
}
const arrowWork = (n) => new Shape().area(n);
function sortWork() {
  const a = [];
  for (let i = 0; i < 2000; i++) a.push((i * 7919) % 2003);
  return a.sort((x, y) => { spin(3); return x - y; }).length;
}
const end = Date.now() + (+process.argv[2] || 3000);
function loop() {
  for (let k = 0; k < 20; k++) { hotA(); hotA(); hotA(); hotB(); arrowWork(8000); sortWork(); }
  if (Date.now() < end) setImmediate(loop);
}
loop();
JS
# samples of stacks with frame NAME of work.js (each stack once)
cum() { grep -F "$2 (work.js)_[j]" "$1" | awk '{ s += $NF } END { print s + 0 }'; }
# spin's hottest pprof line in profile $1
spin_line() { go tool pprof -unit=ms -lines -top -nodecount=1000 "$1" 2>/dev/null | awk '$6 == "spin" { split($7, f, ":"); if ($4 + 0 > best) { best = $4 + 0; l = f[2] } } END { print l }'; }

# work.js's checks under node binary $1, for $2 ms a run, "$3" before each
# message ("" for the system's node, "node 22: " for another version): run
# under `-- node` optimized and interpreted only, named with lines, the same
# shares, the comparator, arrow and class method; node's own modules with
# lines; names those of a --perf-basic-prof run. $compiled_lines (set by the
# caller) is 0 where the V8 gives optimized frames no Code to take a line
# from (13.x: JSFunction has a dispatch handle; docs/INTERPRETERS.md): the
# optimized run's line check is then left out, said in its message.
work_checks() {
	local nb=$1 ms=$2 tag=$3 mode flags a b tot n m k line un want got compile_lines pp map perf_names ours missing left sfx inl name
	sfx=${tag:+-${tag//[^0-9]/}}
	for mode in opt interp; do
		flags=
		if [ "$mode" = interp ]; then
			flags="--no-opt --no-sparkplug"
			# Maglev (on by default from node 22), where this node knows the flag
			"$nb" --no-maglev -e 0 2>/dev/null && flags+=" --no-maglev"
		fi
		# shellcheck disable=SC2086
		"$BPFPROF" -v -F 499 -o "$work/$mode$sfx.folded" -o "$work/$mode$sfx.pb.gz" -- "$nb" $flags "$work/work.js" "$ms" >"$work/$mode$sfx.log" 2>&1
		a=$(cum "$work/$mode$sfx.folded" hotA) b=$(cum "$work/$mode$sfx.folded" hotB)
		tot=$(awk '{ s += $NF } END { print s + 0 }' "$work/$mode$sfx.folded")
		eval "a_$mode=$a b_$mode=$b"
		# hotA's share of the pair, 0.9 by construction: within 4 binomial
		# standard deviations at the pair's samples, at least 0.05 (a loaded
		# host gives fewer samples: 168:11 of 179, 0.94, failed a fixed x1.6
		# ratio band once while 1.7 sigma from 0.9)
		if [ "$b" -gt 0 ] && awk -v a="$a" -v b="$b" 'BEGIN { n = a + b; t = 4 * sqrt(0.09 / n); if (t < 0.05) t = 0.05; s = a / n; exit !(n >= 50 && s >= 0.9 - t && s <= 0.9 + t) }'; then
			ok "$tag$mode: hotA $a, hotB $b samples of $tot (9:1 by construction, hotA's share within 4 sigma of 0.9)"
		else
			fail "$tag$mode: hotA:hotB 9:1" "hotA $a hotB $b of $tot" "$(grep 'V8: pid' "$work/$mode$sfx.log")"
		fi
		# (spin inlined into the comparator: under it only where optimized frames show what they inline)
		inl=";spin \\(work.js\\)_\\[j\\]"
		[ "$mode" = opt ] && [ "$compiled_lines" = 0 ] && inl=
		n=$(grep -cE "sortWork \(work.js\)_\[j\];.*Builtins_ArrayTimSort.*;\(anonymous\) \(work.js\)_\[j\]$inl" "$work/$mode$sfx.folded")
		m=$(grep -cE "arrowWork \(work.js\)_\[j\];(area \(work.js\)_\[j\];)?spin" "$work/$mode$sfx.folded")
		k=$(grep -cE "area \(work.js\)_\[j\]" "$work/$mode$sfx.folded")
		if [ "$n" -gt 0 ] && [ "$m" -gt 0 ] && { [ "$k" -gt 0 ] || [ "$mode" = opt ]; }; then
			ok "$tag$mode: the sort comparator under sortWork through Array.prototype.sort's builtins ($n stacks), the arrow arrowWork ($m), the class method area ($k)"
		else
			fail "$tag$mode: comparator, arrow, class method named" "comparator $n, arrow $m, method $k" "$(grep 'work.js' "$work/$mode$sfx.folded" | head -3 | cut -c1-300)"
		fi
		line=$(spin_line "$work/$mode$sfx.pb.gz")
		if [ "$mode" = opt ] && [ "$compiled_lines" = 0 ]; then
			ok "$tag$mode: pprof: no line checked (this V8's optimized frames are named without lines; spin's hottest: '$line')"
		elif [ "$line" = 5 ]; then
			ok "$tag$mode: pprof: spin's hottest line is 5, its loop's line in work.js"
		else
			fail "$tag$mode: pprof: spin at work.js:5" "line '$line'" "$(go tool pprof -lines -top "$work/$mode$sfx.pb.gz" 2>&1 | head -14)"
		fi
		un=$(grep -E "work.js" "$work/$mode$sfx.folded" | grep -E "\[unknown\]|\[anon\]" | awk '{ s += $NF } END { print s + 0 }')
		if awk -v u="$un" -v t="$tot" 'BEGIN { exit !(t > 0 && u <= 0.02 * t) }'; then
			ok "$tag$mode: $un of $tot samples of work.js stacks with a frame [unknown] or [anon] (at most 2 %)"
		else
			fail "$tag$mode: at most 2 % [unknown]" "$un of $tot" "$(grep 'V8: pid' "$work/$mode$sfx.log")"
		fi
	done
	# the tiers change what the rest costs (the sort's builtins, the loop): the hot pair's split is the invariant.
	# Two binomial shares of about 300 samples each differ by 2.4 points (one sigma) by chance alone:
	# the bound is 4 sigma of the difference (pooled share), at least 5 points (a fixed 5 failed 1 run in 20)
	if awk -v a="$a_opt" -v b="$b_opt" -v c="$a_interp" -v d="$b_interp" 'BEGIN { if (a + b == 0 || c + d == 0) exit 1; x = a / (a + b) - c / (c + d); if (x < 0) x = -x; p = (a + c) / (a + b + c + d); t = 4 * sqrt(p * (1 - p) * (1 / (a + b) + 1 / (c + d))); if (t < 0.05) t = 0.05; exit !(x <= t) }'; then
		ok "${tag}hotA's share of hotA + hotB: optimized $a_opt/$((a_opt + b_opt)), interpreted $a_interp/$((a_interp + b_interp)), within 4 binomial sigma (0.9 by construction)"
	else
		fail "${tag}the same shares optimized and interpreted" "$a_opt:$b_opt vs $a_interp:$b_interp"
	fi
	# node's own modules (external strings: their sources are node's data): lines as node's stack traces give them
	echo 'console.log(new Error().stack)' >"$work/st.js"
	want=$("$nb" "$work/st.js" | sed -n 's/.*at Module._compile (\(node:internal\/modules\/cjs\/loader:[0-9]*\):.*/\1/p')
	# the entries with a line (a frame whose Code was unreadable is named without one: counted, not a name of another line)
	# (from both runs, the interpreted one first: Module._compile is on the stack
	# only during work.js's first loop() call, 0-30 ms when optimized, about
	# 350 ms interpreted; one optimized run had no sample in it)
	# Named Module._compile where V8 keeps its inferred name (node 20); node
	# 22 and 24 (V8 12+) keep none for node's snapshotted modules, their
	# stack traces name it from the receiver: (anonymous) there, its line the same
	compile_lines=$(for m in interp opt; do go tool pprof -lines -top -nodecount=1000 "$work/$m$sfx.pb.gz" 2>/dev/null; done | awk -v w="$want" '$6 == "Module._compile" || $7 == w')
	got=$(awk '$7 != "" { print $7; exit }' <<<"$compile_lines")
	name=$(awk '$7 != "" { print $6; exit }' <<<"$compile_lines")
	if [ -n "$want" ] && [ "$got" = "$want" ] &&
		{ [ "$name" = Module._compile ] || { [ -n "$tag" ] && [ "$name" = "(anonymous)" ]; }; }; then
		ok "${tag}node's own modules named with lines: Module._compile ($name) at $got, as node's stack trace"
	else
		fail "${tag}Module._compile's line as node's stack trace" "got '$got' ($name), want '$want'; pprof's entries: $compile_lines"
	fi
	# (node 24's main thread calls itself MainThread)
	grep -qE "^bpfprof: V8: pid [0-9]+ \([^)]*\): [0-9]+ samples, [0-9]+ with JavaScript frames" "$work/opt$sfx.log" &&
		ok "$tag-v summary: samples with JavaScript frames and why others had none" ||
		fail "$tag-v summary line" "$(grep 'V8' "$work/opt$sfx.log")"

	# names equal a --perf-basic-prof run's (its map's "JS:~name path:line:col"), then no map left behind
	( cd "$work" && exec "$nb" --perf-basic-prof "$work/work.js" 1000 ) &
	pp=$!
	wait "$pp"
	map=/tmp/perf-$pp.map
	perf_names=$(grep -F " $work/work.js:" "$map" 2>/dev/null | awk '{ n = $3; sub(/^[A-Za-z]+:[~^*+-]?/, "", n); if (n != "") print n }' | sort -u)
	rm -f "$map"
	ours=$(grep -o '[^;]* (work.js)_\[j\]' "$work/opt$sfx.folded" "$work/interp$sfx.folded" | sed 's/^[^:]*://; s/ (work.js)_\[j\]$//' | grep -v '^(anonymous)$' | sort -u)
	missing=$(comm -23 <(echo "$ours") <(echo "$perf_names"))
	if [ -n "$ours" ] && [ -z "$missing" ] && echo "$ours" | grep -qx hotA && echo "$ours" | grep -qx area; then
		ok "${tag}names of work.js's functions ($(echo $ours)) are those of a --perf-basic-prof run"
	else
		fail "${tag}names equal --perf-basic-prof's" "ours: $(echo $ours)" "perf map: $(echo $perf_names)" "not in the map: $missing"
	fi
	left=$(ls /tmp/perf-"$pp".map 2>/dev/null)
	[ -z "$left" ] && ok "${tag}no /tmp/perf-PID.map left behind" || fail "${tag}perf map left" "$left"
}
compiled_lines=1
work_checks "$(command -v node)" 3000 ""

# --- an async function after an await ---------------------------------------
# afterAwait resumes from the microtask queue after each `await null` and
# calls grind (line 7), which does nearly all of the script's work: its
# stacks run through V8's RunMicrotasks builtin, with afterAwait at line 7
# above grind. grind's share of the samples is at least half (by
# construction it is most of them: 92 % measured; a loaded host adds
# node's start-up and GC samples, never half).
cat >"$work/async.js" <<'JS'
'use strict';
function grind(n) { let s = 0; for (let i = 0; i < n; i++) s += Math.sqrt(i + s % 7); return s; }
async function afterAwait() {
  const end = Date.now() + (+process.argv[2] || 1500);
  while (Date.now() < end) {
    await null;
    grind(20000);
  }
}
afterAwait();
JS
"$BPFPROF" -F 499 -o "$work/async.folded" -o "$work/async.pb.gz" -- node "$work/async.js" 1500 >"$work/async.log" 2>&1
tot=$(awk '{ s += $NF } END { print s + 0 }' "$work/async.folded")
n=$(grep -E "Builtins_RunMicrotasks;.*afterAwait \(async.js\)_\[j\];grind \(async.js\)_\[j\]" "$work/async.folded" | awk '{ s += $NF } END { print s + 0 }')
# afterAwait's line with the most cumulative time (its own samples at the await's line 6 too)
line=$(go tool pprof -unit=ms -lines -top -nodecount=1000 "$work/async.pb.gz" 2>/dev/null | awk '$6 == "afterAwait" { split($7, f, ":"); if ($4 + 0 > best) { best = $4 + 0; l = f[2] } } END { print l }')
if [ "$tot" -gt 100 ] && [ $((2 * n)) -ge "$tot" ] && [ "$line" = 7 ]; then
	ok "async function after an await: afterAwait (line $line) above grind under the microtask queue in $n of $tot samples"
else
	fail "async function after an await named" "$n of $tot under RunMicrotasks;afterAwait;grind, afterAwait's line '$line'" "$(sort -t' ' -k2 -n "$work/async.folded" | tail -1 | tr ';' '\n' | tail -6)"
fi

# --- an HTTP server on node's http module under our load generator ---------
cat >"$work/server.js" <<'JS'
'use strict';
const http = require('http');
function renderPage(q) {
  let s = '';
  for (let i = 0; i < 200; i++) s += String(i * q).padStart(6, ' ');
  return s;
}
function checksum(buf) {
  let h = 0;
  for (let i = 0; i < buf.length; i++) h = (h * 31 + buf.charCodeAt(i)) | 0;
  return h;
}
function handleCompute(req, res) { res.end(String(checksum(renderPage(3).repeat(40)))); }
function handleRender(req, res) { res.end(renderPage(7)); }
const server = http.createServer((req, res) => {
  if (req.url === '/compute') handleCompute(req, res);
  else handleRender(req, res);
});
server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\n'));
JS
cat >"$work/load.js" <<'JS'
'use strict';
// keep-alive requests on the loopback, 4 at a time: 3 /compute to 1 /render
const http = require('http');
const port = +process.argv[2], end = Date.now() + (+process.argv[3] || 5000);
const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
let n = 0;
function one() {
  if (Date.now() > end) return;
  const path = n++ % 4 === 3 ? '/render' : '/compute';
  http.get({ host: '127.0.0.1', port, path, agent }, (res) => { res.resume(); res.on('end', one); })
    .on('error', () => {});
}
for (let i = 0; i < 4; i++) one();
JS
node "$work/server.js" >"$work/port" &
sp=$!
pids+=("$sp")
for _ in $(seq 50); do [ -s "$work/port" ] && break; sleep 0.1; done
node "$work/load.js" "$(cat "$work/port")" 14000 &
pids+=($!)
sleep 2
"$BPFPROF" -v -F 999 -p "$sp" -d 5 -o "$work/srv.folded" >"$work/srv.log" 2>&1
"$BPFPROF" -F 499 -p "$sp" -d 1 --no-node -o "$work/srvn.folded" >/dev/null 2>&1
kill "${pids[-1]}" "$sp" 2>/dev/null
sv() { grep -F "$1" "$work/srv.folded" | awk '{ s += $NF } END { print s + 0 }'; }
tot=$(awk '{ s += $NF } END { print s + 0 }' "$work/srv.folded")
c=$(sv 'emit (node:events)_[j];(anonymous) (server.js)_[j];handleCompute (server.js)_[j]')
r=$(sv 'emit (node:events)_[j];(anonymous) (server.js)_[j];handleRender (server.js)_[j]')
if [ "$c" -gt "$r" ] && [ "$r" -gt 0 ]; then
	ok "server: handleCompute ($c) and handleRender ($r) of $tot samples under the request listener under emit"
else
	fail "server: handlers under their callers" "compute $c render $r of $tot" "$(grep 'V8: pid' "$work/srv.log")"
fi
# The issue's 2 %, with no further tolerance: -p finds V8 before the
# target's sampling starts and loads its tables at once (no stack copies),
# so what is left is mostly a leaf in a callee's prologue or epilogue (its
# frame not built yet) whose code no earlier frame was seen in: measured
# 0.5 to 1.5 % (about 1 % on average) of 850-1,550 samples at 499 Hz on a
# loaded 2-CPU host (15 runs, load 5-10). Sampled at 999 Hz here (about
# 2,500 samples) so that the count's own spread (binomial: 0.2 points at
# 1 %) keeps a run at the average rate 5 sigma below the bound. (Before,
# the samples of node's first 100-130 ms, while its metadata was read at
# the first sample, were not walked: 1.5 to 3.5 % in all.)
un=$(grep -E "\[unknown\]|\[anon\]" "$work/srv.folded" | awk '{ s += $NF } END { print s + 0 }')
if awk -v u="$un" -v t="$tot" 'BEGIN { exit !(t > 100 && u <= 0.02 * t) }'; then
	ok "server: $un of $tot samples with a frame [unknown] or [anon] (at most 2 %)"
else
	fail "server: at most 2 % [unknown]" "$un of $tot" "$(grep 'V8: pid' "$work/srv.log")"
fi
un=$(grep -E "\[anon\]" "$work/srvn.folded" | awk '{ s += $NF } END { print s + 0 }')
if [ "$un" -gt 0 ] && ! grep -q "(server.js)" "$work/srvn.folded"; then
	ok "server with --no-node: no JavaScript names, $un samples through [anon] JIT code"
else
	fail "--no-node: JIT frames unnamed" "$un [anon], $(grep -c 'server.js' "$work/srvn.folded") named"
fi

# --- off-CPU: a function blocked in child_process.execSync, under its callers
cat >"$work/block.js" <<'JS'
'use strict';
const cp = require('child_process');
function waitChild() { cp.execSync('sleep 0.2'); }
function outer() { waitChild(); }
const end = Date.now() + 2000;
while (Date.now() < end) outer();
JS
"$BPFPROF" --off-cpu -F 99 -o "$work/on.folded" -o "$work/offcpu.folded" -- node "$work/block.js" >"$work/off.log" 2>&1
n=$(grep -E "outer \(block.js\)_\[j\];waitChild \(block.js\)_\[j\];execSync \(node:child_process\)_\[j\]" "$work/offcpu.folded" | awk '{ s += $NF } END { print s + 0 }')
if [ "$n" -gt 0 ]; then
	ok "off-CPU: waitChild blocked in execSync under outer ($n us)"
else
	fail "off-CPU: waitChild under outer" "$(grep -c 'block.js' "$work/offcpu.folded") stacks of block.js" "$(tail -3 "$work/off.log")"
fi

# --- -a with two node processes, one exiting mid-run: both named ----------
node "$work/work.js" 2600 &
n1=$!
node "$work/work.js" 4000 &
n2=$!
pids+=("$n1" "$n2")
sleep 0.5
# --call-graph fp: under -a the tables of every process are built first
# (seconds: their samples go to user space as stack copies, whose
# JavaScript frames are found there only once V8 is); JavaScript frames
# keep frame pointers
"$BPFPROF" -v -a --call-graph fp -F 499 -d 2.5 -o "$work/two.folded" >"$work/two.log" 2>&1
kill "$n2" 2>/dev/null
w1=$(grep -E "^node;" "$work/two.folded" | grep -F "hotA (work.js)_[j]" | awk '{ s += $NF } END { print s + 0 }')
l1=$(grep -cE "^bpfprof: V8: pid $n1 \(node\): [0-9]+ samples, [1-9][0-9]* with JavaScript frames" "$work/two.log")
l2=$(grep -cE "^bpfprof: V8: pid $n2 \(node\): [0-9]+ samples, [1-9][0-9]* with JavaScript frames" "$work/two.log")
if [ "$w1" -gt 0 ] && [ "$l1" = 1 ] && [ "$l2" = 1 ]; then
	ok "-a: two node processes (one exiting mid-run) each with JavaScript frames, hotA named in $w1 samples"
else
	fail "-a: two node processes named" "hotA $w1, lines $l1 $l2" "$(grep 'V8: pid' "$work/two.log")"
fi

# --- a container's node, and -a with the default call graph ----------------
# node in its own mount + pid namespace (pid 1 there): its binary
# bind-mounted and work.js on a tmpfs, at paths only that namespace sees
# (found through /proc/PID/root), beside a node on the host running the same
# script as hostwork.js. `-a -d 6` with the default walk (dwarf): both with
# JavaScript frames in the -v summary and hotA named in each one's own
# samples (hotA (work.js), hotA (hostwork.js)). Under -a a process is registered at its first sample and its
# samples go to user space as stack copies (their JavaScript frames found
# in user space, v8_copy_walk.c, once V8 is found in it) until its
# tables are loaded: node's .eh_frame, under a second when the unwind cache
# has it, but 3.6 s on average (4.6 at most, 30 processes registered) in a
# run beside other helpers' builds (load 10), whose -d 4 left neither node
# a sample walked in BPF: hence 6 s. Then -p with the container's host pid for 2 s: hotA
# named, spin's hottest pprof line its loop's (work.js:5).
ct=$work/ct
mkdir -p "$ct"
if ! unshare --mount --pid --fork --propagation private true 2>/dev/null; then
	skip "a container's node" "unshare --mount --pid refused"
else
	unshare --mount --pid --fork --propagation private sh -c \
		"mount -t tmpfs ct '$ct' && touch '$ct/node' && mount --bind '$exe' '$ct/node' &&
		 cp '$work/work.js' '$ct/' && exec '$ct/node' '$ct/work.js' 20000" 2>"$work/ct.err" &
	up=$!
	pids+=("$up")
	cp "$work/work.js" "$work/hostwork.js"
	node "$work/hostwork.js" 20000 &
	hp=$!
	pids+=("$hp")
	ctp=
	for _ in $(seq 100); do
		ctp=$(pgrep -P "$up" -x node) && break
		sleep 0.05
	done
	[ -n "$ctp" ] && pids+=("$ctp")
	sleep 0.5
	"$BPFPROF" -v -a -F 499 -d 6 -o "$work/all.folded" >"$work/all.log" 2>&1
	"$BPFPROF" -v -F 499 -p "$ctp" -d 2 -o "$work/ct.folded" -o "$work/ct.pb.gz" >"$work/ct.log" 2>&1
	nspid=$(awk '/^NSpid:/ { print $NF }' "/proc/$ctp/status" 2>/dev/null)
	kill "$ctp" "$hp" 2>/dev/null
	for p in "$ctp" "$hp"; do
		what="the container's node (pid $p)" js=work.js
		[ "$p" = "$hp" ] && what="the host's node (pid $p)" js=hostwork.js
		n=$(grep -F "hotA ($js)_[j]" "$work/all.folded" | awk '{ s += $NF } END { print s + 0 }')
		if [ -n "$p" ] && grep -qE "^bpfprof: V8: pid $p \(node\): [0-9]+ samples, [1-9][0-9]* with JavaScript frames" "$work/all.log" &&
			[ "${n:-0}" -ge 1 ]; then
			ok "-a (default call graph): $what with JavaScript frames, hotA ($js) named in $n samples"
		else
			fail "-a (default call graph): $what with JavaScript frames and hotA named" "$n samples of hotA ($js)" \
				"$(grep "V8: pid $p \|unwind readiness" "$work/all.log" | cut -c1-200)"
		fi
	done
	a=$(cum "$work/ct.folded" hotA)
	line=$(go tool pprof -unit=ms -lines -top -nodecount=1000 "$work/ct.pb.gz" 2>/dev/null | awk '$6 == "spin" { split($7, f, ":"); if ($4 + 0 > best) { best = $4 + 0; l = f[2] } } END { print l }')
	if [ "$nspid" = 1 ] && [ ! -e "$ct/node" ] && grep -q "v8: pid $ctp (node): found V8 .* in $ct/node " "$work/ct.log" &&
		[ "$a" -gt 0 ] && [ "$line" = 5 ]; then
		ok "a container's node (pid 1 there, its binary and script only in its root) with -p: hotA in $a samples, spin at work.js:5"
	else
		fail "a container's node with -p: hotA named, spin at work.js:5" "nspid $nspid, hotA $a, line '$line'" \
			"$(grep -i 'v8' "$work/ct.log" | head -3 | cut -c1-200)" "$(cat "$work/ct.err")"
	fi
fi


# --- other node versions: the core checks ----------------------------------
# node 18 (V8 10.2: Code holds its instructions), 22 (V8 12.4: Code apart
# from its InstructionStream, BytecodeArray in trusted space) and 24 (V8
# 13.6: no JSFunction.code), the official builds tools/fetch-node.sh put in
# $BPFPROF_NODE_CACHE (make deps): found with the version each reports;
# work.js's checks above (shares, names and lines optimized and interpreted,
# comparator, arrow, class method, Module._compile, names of a
# --perf-basic-prof run); -p on one that has run for a second. A version not
# fetched (no registry) is skipped with the reason. About 15 s each.
node_cache=${BPFPROF_NODE_CACHE:-/opt/bpfprof-test/node}
for v in ${BPFPROF_NODE_VERSIONS:-18.20.8 22.23.5 24.22.3}; do
	nb=$node_cache/$v/bin/node
	if [ ! -x "$nb" ]; then
		why="not in $node_cache (make deps fetches it: tools/fetch-node.sh)"
		[ -s "$node_cache/$v.failed" ] && why="not fetched: $(cut -c1-160 "$node_cache/$v.failed")"
		skip "node $v" "$why"
		continue
	fi
	tag="node ${v%%.*}: "
	want_ver=$("$nb" -p process.versions.v8)
	compiled_lines=1
	[ "${want_ver%%.*}" -ge 13 ] && compiled_lines=0
	work_checks "$nb" 2500 "$tag"
	sfx=-${v%%.*}
	if grep -q "v8: pid [0-9]* ([^)]*): found V8 $want_ver in $nb " "$work/opt$sfx.log"; then
		ok "${tag}-v: found V8 $want_ver (= process.versions.v8) in $nb"
	else
		fail "${tag}-v: found V8 $want_ver in $nb" "$(grep -iE 'v8:' "$work/opt$sfx.log" | head -3)"
	fi
	# a V8 whose compiled frames cannot be given lines: one warning saying why
	if [ "$compiled_lines" = 0 ]; then
		n=$(grep -c "v8: $nb (V8 $want_ver): compiled JavaScript frames named without lines: " "$work/opt$sfx.log")
		[ "$n" = 1 ] && ok "${tag}one warning: compiled frames named without lines ($(grep -o 'without lines: .*' "$work/opt$sfx.log"))" ||
			fail "${tag}one warning for compiled frames without lines" "$n warnings"
	fi
	# -p on a node that has run for a second
	"$nb" "$work/work.js" 6000 &
	vp=$!
	pids+=("$vp")
	sleep 1
	"$BPFPROF" -v -F 499 -p "$vp" -d 2 -o "$work/p$sfx.folded" -o "$work/p$sfx.pb.gz" >"$work/p$sfx.log" 2>&1
	kill "$vp" 2>/dev/null
	a=$(cum "$work/p$sfx.folded" hotA)
	line=$(spin_line "$work/p$sfx.pb.gz")
	if [ "$a" -gt 0 ] && { [ "$line" = 5 ] || [ "$compiled_lines" = 0 ]; }; then
		ok "$tag-p on a running node: hotA in $a samples, spin's hottest line '$line'$([ "$compiled_lines" = 0 ] && echo ' (not checked: optimized frames without lines)')"
	else
		fail "$tag-p on a running node: hotA named, spin at work.js:5" "hotA $a, line '$line'" "$(grep 'V8: pid' "$work/p$sfx.log" | cut -c1-250)"
	fi
done

finish

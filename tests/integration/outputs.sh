#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Checks of the pprof (.pb.gz) and folded (.folded) writers through readers
# that share no code with them: go tool pprof (-raw, -top, -traces,
# -tagfocus) and npm's pprof-format (tests/pprof-decode/decode.js).
#
#  1. tests/tools/profile2.c, built here with gcc, writes a known two-process
#     profile through both writers: every number is checked exactly. No root.
#  2. bpfprof -F 999 -o x.pb.gz -o x.folded -- hotcold 1 --cpu (root, BPF): hot_a
#     75 %, hot_b 25 % (±TOL, or more at few samples), callers
#     via_x/via_y/via_z, in both files. Skipped while bpfprof does not take
#     these extensions yet (exit 2).
#  3. bpfprof -a with two workloads of names of this run's own: each isolated
#     by its comm in every format.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
BPFPROF=${BPFPROF:-$top/bpfprof}
HOTCOLD=${HOTCOLD:-$top/.output/workload/hotcold}
# Percentage points allowed around the known split: TOL, or four standard
# deviations of the share at the samples a workload gave (lib.bash split_tol)
# when that is more: the commands run hotcold for 1 s of its CPU time (--cpu),
# about 1000 samples at 999 Hz whatever the load (4 sd: 5.5 points); the
# second workload of the -a run gets what the load leaves it (53 samples seen
# at a load of 8 on 2 CPUs: 24 points).
TOL=${TOL:-7}
DECODER=$top/tests/pprof-decode
work=$(mktemp -d /tmp/bpfprof-outputs.XXXXXX)
other= cg=
trap '[ -n "$other" ] && kill "$other" 2>/dev/null; wait; [ -n "$cg" ] && rmdir "$cg"; rm -rf "$work"' EXIT
# bpfprof fills perf's build-id cache ($HOME/.debug) for perf.data, as perf record does: keep it in $work
mkdir -p "$work/home"
export PPROF_TMPDIR=$work/pprof HOME=$work/home

. "$(dirname "$0")/lib.bash"

# go tool pprof with its stderr kept in $work/pprof.err.
pprof() { go tool pprof "$@" 2>"$work/pprof.err"; }

# `go tool pprof -top` in sample counts, every node: "name flat" per line.
top_counts() {
	pprof -top -sample_index=samples -nodefraction=0 -edgefraction=0 -nodecount=100000 "$@" |
		awk 'f { n = $6; for (i = 7; i <= NF; i++) n = n " " $i; print n "\t" $1 } / flat +flat% / { f = 1 }'
}
# Percent of the listed total that function $2 has in the top_counts file $1.
pct_of() { awk -F'\t' -v f="$2" '{ t += $2; if ($1 == f) v += $2 } END { if (t) printf "%.1f", 100 * v / t }' "$1"; }
has_fn() { awk -F'\t' -v f="$2" '$1 == f { x = 1 } END { exit !x }' "$1"; }
sum_of() { awk -F'\t' '{ t += $2 } END { print t + 0 }' "$1"; }

# `pprof -traces` lists each trace leaf first: the line after a leaf is its caller.
callers_ok() {
	awk '/^-+\+/ { prev = ""; next } { f = $NF; if (prev == "hot_a" && f == "via_x") x = 1;
		if (prev == "hot_a" && f == "via_y") y = 1; if (prev == "hot_b" && f == "via_z") z = 1; prev = f }
		END { exit !(x && y && z) }' "$1"
}

# Folded: share of samples (in %) whose stack holds frame $2, lines of comm $3 only.
folded_pct() {
	awk -v f="$2" -v c="$3" '{ n = $NF; s = substr($0, 1, length($0) - length(n) - 1); k = split(s, fr, ";");
		if (fr[1] != c) next; t += n; for (i = 2; i <= k; i++) if (fr[i] == f) { v += n; break } }
		END { if (t) printf "%.1f", 100 * v / t }' "$1"
}
folded_callers_ok() {
	grep -q ';via_x;hot_a\( \|;\)' "$1" && grep -q ';via_y;hot_a\( \|;\)' "$1" && grep -q ';via_z;hot_b\( \|;\)' "$1"
}
# Every line: frames without empty parts, a space, a count.
folded_wellformed() { ! grep -vqE '^[^;]+(;[^;]+)* [0-9]+$' "$1"; }

# pprof-format from npm, into tests/pprof-decode/node_modules (not committed),
# installed under a lock on the directory: make test runs this script twice at
# once (normal and sanitizer builds), and two npm installs into one
# node_modules left a package without its files. Installed means it loads.
decoder=
if ! command -v node >/dev/null; then
	skip "pprof-format decoder" "node not installed"
elif (cd "$DECODER" && flock . sh -c 'node -e "require(\"pprof-format\")" 2>/dev/null ||
	npm install --no-package-lock --no-audit --no-fund --loglevel=error') >"$work/npm.log" 2>&1; then
	decoder=1
else
	skip "pprof-format decoder" "npm install failed: $(tail -3 "$work/npm.log" | tr '\n' ' ')"
fi
# Run decode.js on $1, then the JavaScript assertions $2 on its JSON `d`; prints what failed.
decode_check() {
	node "$DECODER/decode.js" "$1" >"$work/decoded.json" 2>"$work/decode.err" || { cat "$work/decode.err"; return 1; }
	node -e "const d = JSON.parse(require('fs').readFileSync(process.argv[1])); const bad = [];
		const want = (c, what) => { if (!c) bad.push(what); }; $2;
		if (bad.length) { console.log(bad.join('; ')); console.log(JSON.stringify(d)); process.exit(1); }" \
		"$work/decoded.json"
}

have_go=1
command -v go >/dev/null || { have_go=; skip "go tool pprof checks" "go not installed"; }

# ---- 1. the known profile from tests/tools/profile2.c ----

# Linked with the library of the build under test where there is one (the
# sanitizer build's too, then with its sanitizers): 0.2 CPU-s, not 1.1 for
# compiling the writers again.
build_driver() {
	local cflags="-std=gnu11 -O2 -g -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -D_GNU_SOURCE"
	local lib=$(dirname "$BPFPROF")/libbpfprof.a
	[ -f "$lib" ] || lib=$top/.output/libbpfprof.a
	if [ -f "$lib" ]; then
		# grep reads all of nm's listing: -q's early exit would kill nm with
		# SIGPIPE, a failure under pipefail (the sanitizer build then linked
		# without its runtime)
		nm "$lib" 2>/dev/null | grep __asan_ >/dev/null && cflags="$cflags -O1 -fsanitize=address,undefined"
		gcc $cflags -I"$top/include" -o "$work/profile2" "$top/tests/tools/profile2.c" "$lib" \
			$(pkg-config --libs libprotobuf-c zlib libdeflate libbpf) && return
	fi
	mkdir -p "$work/proto" &&
		protoc-c --proto_path="$top/proto" --c_out="$work/proto" "$top/proto/profile.proto" &&
		gcc $cflags -I"$top/include" -I"$work" -o "$work/profile2" "$top/tests/tools/profile2.c" \
			"$top"/user/profile.c "$top"/user/lib/{array,buf,log,lib_hashmap}.c "$top"/user/write/{write_pprof,write_folded,mapping_slots}.c "$work/proto/profile.pb-c.c" \
			$(pkg-config --cflags --libs libprotobuf-c zlib libdeflate libbpf)
}
if ! build_driver >"$work/build.log" 2>&1; then
	fail "build tests/tools/profile2.c (needs protobuf-c-compiler, libprotobuf-c-dev)" "$(cat "$work/build.log")"
	finish
fi
if ! "$work/profile2" "$work/drv" 2>"$work/drv.log" || [ ! -s "$work/drv.pb.gz" ]; then
	fail "profile2 wrote no profile" "$(cat "$work/drv.log")"
	finish
fi
ok "profile2: wrote drv.pb.gz and drv.folded"

if [ "$(head -c 2 "$work/drv.pb.gz" | od -An -tx1 | tr -d ' ')" = "1f8b" ]; then
	ok "profile2: .pb.gz is gzip"
else
	fail "profile2: .pb.gz does not start with the gzip magic"
fi

cat >"$work/drv.want" <<'EOF'
hotcold;[libc.so.6];main;via_x;hot_a 450
hotcold;[libc.so.6];main;via_y;hot_a 300
hotcold;[libc.so.6];main;via_z;hot_b 250
noise;main;[libc.so.6];entry_SYSCALL_64_[k];do_syscall_64_[k] 10
noise;main;spin 90
EOF
if cmp -s "$work/drv.want" "$work/drv.folded"; then
	ok "profile2: .folded is exactly the expected text"
else
	fail "profile2: .folded differs" "$(diff "$work/drv.want" "$work/drv.folded")"
fi

if [ -n "$have_go" ]; then
	# -symbolize=none: the synthetic libc path does not exist, and the check is on parsing
	for mode in -raw -top; do
		if pprof -symbolize=none $mode "$work/drv.pb.gz" >"$work/drv$mode" && [ ! -s "$work/pprof.err" ]; then
			ok "profile2: go tool pprof $mode reads it, nothing on stderr"
		else
			fail "profile2: go tool pprof $mode" "$(cat "$work/pprof.err")"
		fi
	done
	raw=$work/drv-raw
	if grep -q '^PeriodType: cpu nanoseconds$' "$raw" && grep -q '^Period: 1001001$' "$raw" &&
		grep -q '^Duration: 3s$' "$raw" && grep -q '^samples/count cpu/nanoseconds$' "$raw" &&
		grep -q '450  450450450: ' "$raw" && grep -q 'container_id:\[0123456789ab\]' "$raw" &&
		grep -q 'comm:\[hotcold\]' "$raw" && grep -q 'pid:\[4242\]' "$raw" &&
		grep -q '/usr/local/bin/hotcold 5e1f0c01d00dcafe123456789abcdef001234567 \[FN\]' "$raw" &&
		grep -q '\[kernel.kallsyms\] *\[FN\]' "$raw" &&
		grep -q 'M=[0-9]* entry_SYSCALL_64 \[kernel.kallsyms\]' "$raw"; then
		ok "profile2: -raw shows period, duration, sample types, labels, build-id, kernel mapping"
	else
		fail "profile2: -raw content" "$(head -40 "$raw")"
	fi
	top_counts -symbolize=none -tagfocus comm=hotcold "$work/drv.pb.gz" >"$work/drv.hc"
	a=$(pct_of "$work/drv.hc" hot_a) b=$(pct_of "$work/drv.hc" hot_b)
	if [ "$a" = "75.0" ] && [ "$b" = "25.0" ] && [ "$(sum_of "$work/drv.hc")" = 1000 ] &&
		! has_fn "$work/drv.hc" spin; then
		ok "profile2: -tagfocus comm=hotcold isolates it: 1000 samples, hot_a $a%, hot_b $b%"
	else
		fail "profile2: -tagfocus comm=hotcold" "$(cat "$work/drv.hc")" "$(cat "$work/pprof.err")"
	fi
	top_counts -symbolize=none -tagfocus comm=noise "$work/drv.pb.gz" >"$work/drv.nz"
	if [ "$(sum_of "$work/drv.nz")" = 100 ] && has_fn "$work/drv.nz" spin && ! has_fn "$work/drv.nz" hot_a; then
		ok "profile2: -tagfocus comm=noise isolates it: 100 samples, spin, no hot_a"
	else
		fail "profile2: -tagfocus comm=noise" "$(cat "$work/drv.nz")"
	fi
	# anchored: pprof reads a value that starts with digits as a numeric range
	top_counts -symbolize=none -tagfocus 'container_id=^0123456789ab$' "$work/drv.pb.gz" >"$work/drv.ct"
	[ "$(sum_of "$work/drv.ct")" = 100 ] && ok "profile2: -tagfocus container_id= selects the container's 100 samples" ||
		fail "profile2: -tagfocus container_id" "$(cat "$work/drv.ct")"
	pprof -symbolize=none -traces "$work/drv.pb.gz" >"$work/drv.traces"
	callers_ok "$work/drv.traces" && ok "profile2: -traces: hot_a under via_x and via_y, hot_b under via_z" ||
		fail "profile2: callers in -traces" "$(head -30 "$work/drv.traces")"
fi

if [ -n "$decoder" ]; then
	if msg=$(decode_check "$work/drv.pb.gz" "
		want(d.sampleTypes.join() === 'samples/count,cpu/nanoseconds', 'sample types');
		want(d.periodType === 'cpu/nanoseconds' && d.period === 1001001, 'period');
		want(d.durationNanos === 3e9, 'duration');
		want(d.sampleCount === 5 && d.totals[0] === 1100 && d.totals[1] === 1100 * 1001001, 'samples');
		want(d.functions.join() === 'do_syscall_64,entry_SYSCALL_64,hot_a,hot_b,main,spin,via_x,via_y,via_z', 'functions');
		want(JSON.stringify(d.labels.comm) === '[\"hotcold\",\"noise\"]', 'comm labels');
		want(JSON.stringify(d.labels.pid) === '[4242,4343]', 'pid labels');
		want(JSON.stringify(d.labels.container_id) === '[\"0123456789ab\"]', 'container_id label');
		want(d.labels.cgroup.length === 2, 'cgroup labels');
		want(d.byComm.hotcold === 1000 && d.byComm.noise === 100, 'samples per comm');
		want(d.byLeaf.hot_a === 750 && d.byLeaf.hot_b === 250 && d.byLeaf.spin === 90, 'leaves');
		want(d.mappings[0].filename === '/usr/local/bin/hotcold' && d.mappings[0].hasFunctions &&
			d.mappings[0].buildId === '5e1f0c01d00dcafe123456789abcdef001234567', 'main mapping');
		want(d.mappings.some((m) => m.filename === '[kernel.kallsyms]'), 'kernel mapping')"); then
		ok "profile2: pprof-format decodes it: types, period, 5 samples, 9 functions, labels, mappings"
	else
		fail "profile2: pprof-format" "$msg"
	fi
fi

# ---- 2. bpfprof on the hotcold workload ----

if [ "$(id -u)" -ne 0 ]; then
	skip "bpfprof .pb.gz/.folded run" "needs root for BPF and perf events"
	finish
fi
if [ ! -x "$BPFPROF" ] || [ ! -x "$HOTCOLD" ]; then
	fail "build" "missing $BPFPROF or $HOTCOLD: run make"
	finish
fi
cd "$work" || exit 1
"$BPFPROF" -F 999 -o "$work/hc.pb.gz" -o "$work/hc.folded" -- "$HOTCOLD" 1 --cpu >"$work/hc.out" 2>"$work/hc.log"
rc=$?
if [ $rc -eq 2 ] && grep -qE "format|extension" "$work/hc.log"; then
	skip "bpfprof -o x.pb.gz -o x.folded" "this bpfprof does not write these formats yet ($(head -1 "$work/hc.log"))"
	finish
fi
if [ $rc -ne 0 ] && grep -qiE 'operation not permitted|permission denied|not supported' "$work/hc.log"; then
	skip "bpfprof -o x.pb.gz -o x.folded" "the kernel refuses BPF here: $(head -2 "$work/hc.log" | tr '\n' ' ')"
	finish
fi
if [ $rc -eq 0 ] && [ -s "$work/hc.pb.gz" ] && [ -s "$work/hc.folded" ]; then
	ok "bpfprof: exit 0, wrote hc.pb.gz and hc.folded"
else
	fail "bpfprof: rc=$rc" "$(cat "$work/hc.log")"
	finish
fi
# the tolerance at the samples the run wrote (the .folded total; checked against the .pb.gz's below)
tol=$(split_tol "$(awk '{ t += $NF } END { print t + 0 }' "$work/hc.folded")" "$TOL")
[ -n "$tol" ] || { fail "bpfprof: fewer than 50 samples of hotcold" "$(cat "$work/hc.log")"; finish; }

if [ -n "$have_go" ]; then
	for mode in -raw -top; do
		if pprof $mode "$work/hc.pb.gz" >"$work/hc$mode" && [ ! -s "$work/pprof.err" ]; then
			ok "bpfprof: go tool pprof $mode reads hc.pb.gz, nothing on stderr"
		else
			fail "bpfprof: go tool pprof $mode" "$(cat "$work/pprof.err")"
		fi
	done
	top_counts -tagfocus comm=hotcold "$work/hc.pb.gz" >"$work/hc.hc"
	all=$(top_counts "$work/hc.pb.gz" | sum_of /dev/stdin)
	a=$(pct_of "$work/hc.hc" hot_a) b=$(pct_of "$work/hc.hc" hot_b) n=$(sum_of "$work/hc.hc")
	if near "$a" 75 "$tol" && near "$b" 25 "$tol"; then
		ok "bpfprof: -tagfocus comm=hotcold: $n of $all samples, hot_a $a%, hot_b $b% (75/25 ±$tol)"
	else
		fail "bpfprof: -tagfocus comm=hotcold split hot_a=$a% hot_b=$b%" "$(head -15 "$work/hc.hc")"
	fi
	top_counts -tagfocus comm=no-such-comm "$work/hc.pb.gz" >"$work/hc.none"
	[ "$(sum_of "$work/hc.none")" = 0 ] && ok "bpfprof: -tagfocus comm=no-such-comm selects nothing" ||
		fail "bpfprof: -tagfocus of an unknown comm" "$(head "$work/hc.none")"
	pprof -traces "$work/hc.pb.gz" >"$work/hc.traces"
	callers_ok "$work/hc.traces" && ok "bpfprof: -traces: hot_a under via_x and via_y, hot_b under via_z" ||
		fail "bpfprof: callers missing in -traces" "$(head -30 "$work/hc.traces")"
	if grep -q '^PeriodType: cpu nanoseconds$' "$work/hc-raw" &&
		grep -q "^Period: $((1000000000 / 999))$" "$work/hc-raw" &&
		grep -qE 'workload/hotcold [0-9a-f]{40} \[FN\]' "$work/hc-raw"; then
		ok "bpfprof: -raw: period 1e9/999 ns, hotcold mapping with build-id and functions"
	else
		fail "bpfprof: -raw header or mapping" "$(grep -E '^Period|hotcold' "$work/hc-raw" | head)"
	fi
fi

if [ -n "$decoder" ]; then
	if msg=$(decode_check "$work/hc.pb.gz" "
		want(d.sampleTypes.join() === 'samples/count,cpu/nanoseconds', 'sample types');
		want(d.periodType === 'cpu/nanoseconds', 'period type');
		want(d.durationNanos > 0.9e9, 'duration');
		for (const f of ['hot_a', 'hot_b', 'via_x', 'via_y', 'via_z', 'main'])
			want(d.functions.includes(f), 'function ' + f);
		want((d.labels.comm || []).includes('hotcold'), 'comm label');
		want((d.labels.pid || []).length >= 1, 'pid label');
		const hc = d.byComm.hotcold || 0;
		want(Math.abs(100 * (d.byLeaf.hot_a || 0) / hc - 75) <= $tol, 'hot_a share');
		want(Math.abs(100 * (d.byLeaf.hot_b || 0) / hc - 25) <= $tol, 'hot_b share');
		want(d.mappings.some((m) => m.filename.endsWith('/hotcold') && /^[0-9a-f]{40}$/.test(m.buildId) &&
			m.hasFunctions), 'hotcold mapping')"); then
		ok "bpfprof: pprof-format decodes hc.pb.gz: types, functions, labels, split"
	else
		fail "bpfprof: pprof-format" "$msg"
	fi
fi

f=$work/hc.folded
if folded_wellformed "$f"; then
	ok "bpfprof: every .folded line is 'frames count'"
else
	fail "bpfprof: malformed .folded lines" "$(grep -vE '^[^;]+(;[^;]+)* [0-9]+$' "$f" | head -5)"
fi
if LC_ALL=C sort -c "$f" 2>/dev/null; then
	ok "bpfprof: .folded lines sorted"
else
	fail "bpfprof: .folded not sorted"
fi
a=$(folded_pct "$f" hot_a hotcold) b=$(folded_pct "$f" hot_b hotcold)
if near "$a" 75 "$tol" && near "$b" 25 "$tol"; then
	ok "bpfprof: .folded: hot_a $a%, hot_b $b% of hotcold's samples"
else
	fail "bpfprof: .folded split hot_a=$a% hot_b=$b%" "$(sort -k2 -n -t' ' "$f" | tail -8)"
fi
folded_callers_ok "$f" && ok "bpfprof: .folded: via_x;hot_a, via_y;hot_a, via_z;hot_b" ||
	fail "bpfprof: .folded callers" "$(head -10 "$f")"
if [ -n "$have_go" ]; then
	fn=$(awk '{ t += $NF } END { print t + 0 }' "$f")
	pn=$(top_counts "$work/hc.pb.gz" | sum_of /dev/stdin)
	[ "$fn" = "$pn" ] && ok "bpfprof: .folded and .pb.gz hold the same $fn samples" ||
		fail "bpfprof: .folded total $fn != pprof total $pn"
fi

# ---- 3. -a with two workloads: each isolated by its comm ----

# Copies named for this run (comm: 15 characters at most): a -a run judges
# only its own processes, and other scripts run hotcold beside this one. The
# second starts just before the run and is killed right after it (10 s is a
# bound); the command runs 1 CPU-s at 999 Hz (about 1000 samples; the other
# gets what the load leaves it): the tolerance is TOL + 3, or split_tol's at
# the samples taken.
# Both run in a cgroup of this script's own whose samples alone the run keeps
# (--cgroup), where cgroup2 is mounted: the processes of scripts running
# beside this one stay out of the files, such as jit.sh's jitswap, whose
# /tmp/perf-PID.map is a link to a FIFO that perf report blocks on. bpfprof
# stays out of it (the command moves itself in, then execs): pprof -raw would
# read the sanitizer build's DWARF for its samples, 6 CPU-s.
hc=hotcold$$ ch=coldhot$$
cp "$HOTCOLD" "$work/$hc" && cp "$HOTCOLD" "$work/$ch"
cg2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
[ -n "$cg2" ] && mkdir "$cg2/bpfprof-outputs.$$" 2>/dev/null && cg=$cg2/bpfprof-outputs.$$
"$work/$ch" 10 >/dev/null &
other=$!
cgrun=()
if [ -n "$cg" ]; then
	echo $other >"$cg/cgroup.procs"
	cgrun=(sh -c 'echo $$ >"$0" && exec "$@"' "$cg/cgroup.procs")
fi
"$BPFPROF" -a ${cg:+--cgroup "$cg"} -F 999 -o "$work/all.pb.gz" -o "$work/all.folded" -o "$work/all.prof" \
	-o "$work/all.data" -o "$work/all.svg" -- "${cgrun[@]}" "$work/$hc" 1 --cpu >/dev/null 2>"$work/all.log"
rc=$?
kill $other 2>/dev/null
wait $other 2>/dev/null
other=
if [ $rc -ne 0 ] || [ ! -s "$work/all.pb.gz" ]; then
	fail "-a: rc=$rc" "$(cat "$work/all.log")"
	finish
fi
for c in $hc $ch; do
	# samples of $c in the .folded (the .pb.gz's are checked equal in section 2's run)
	tol=$(split_tol "$(awk -v c="$c" 'index($0, c ";") == 1 { t += $NF } END { print t + 0 }' "$work/all.folded")" $((TOL + 3)))
	if [ -z "$tol" ]; then
		fail "-a: fewer than 50 samples of $c" "$(grep "^$c;" "$work/all.folded" | head -5)"
		continue
	fi
	if [ -n "$have_go" ]; then
		# system-wide: other processes may lack binaries, so only pprof's exit status counts here
		top_counts -tagfocus "comm=^$c\$" "$work/all.pb.gz" >"$work/all.$c"
		a=$(pct_of "$work/all.$c" hot_a) b=$(pct_of "$work/all.$c" hot_b)
		if near "$a" 75 "$tol" && near "$b" 25 "$tol"; then
			ok "-a: -tagfocus comm=$c isolates it: $(sum_of "$work/all.$c") samples, hot_a $a%, hot_b $b% (±$tol)"
		else
			fail "-a: -tagfocus comm=$c split hot_a=$a% hot_b=$b% (±$tol)" "$(head -12 "$work/all.$c")" "$(cat "$work/pprof.err")"
		fi
	fi
	a=$(folded_pct "$work/all.folded" hot_a $c)
	near "$a" 75 "$tol" && ok "-a: .folded: $c hot_a $a% (±$tol)" ||
		fail "-a: .folded $c hot_a=$a% (±$tol)" "$(grep "^$c;" "$work/all.folded" | head -5)"
done
if [ -n "$decoder" ]; then
	if msg=$(decode_check "$work/all.pb.gz" "
		want(d.byComm['$hc'] > 0 && d.byComm['$ch'] > 0, 'both workloads');
		want(d.labels.pid.length >= 2, 'pids')"); then
		ok "-a: pprof-format decodes all.pb.gz with both workloads"
	else
		fail "-a: pprof-format" "$msg"
	fi
fi

# The same capture in the other three formats: both processes named in each.
# .prof has no pids: each process has its own address window, so both binaries
# appear as mappings and pprof names hot_a in both.
pprof -raw "$work/all.prof" >"$work/all.raw"
named=0
for c in $hc $ch; do
	# the mapping id of the binary, then a location in it that pprof named hot_a
	mid=$(awk -v c="/$c" '/^Mappings/ { m = 1; next } m && index($0, c " ") { sub(":", "", $1); print $1; exit }' "$work/all.raw")
	[ -n "$mid" ] && grep -qE "M=$mid hot_a " "$work/all.raw" && named=$((named + 1))
done
if [ $named -eq 2 ]; then
	ok "-a: .prof: pprof names hot_a inside both processes' windows"
else
	fail "-a: .prof" "$(pprof -raw "$work/all.prof" | sed -n '/^Mappings/,$p' | head)" "$(cat "$work/pprof.err")"
fi
if command -v perf >/dev/null; then
	timeout 120 perf report -i "$work/all.data" --stdio --sort comm,sym 2>"$work/perf.err" >"$work/all.perf"
	if grep -qE "$hc +\[\.\] hot_a" "$work/all.perf" && grep -qE "$ch +\[\.\] hot_a" "$work/all.perf" &&
		! grep -qiE 'warning|error|failed' "$work/perf.err"; then
		ok "-a: perf.data: perf report names hot_a in $hc and in $ch, nothing on stderr"
	else
		fail "-a: perf.data" "$(grep hot_ "$work/all.perf" | head -5)" "$(head -5 "$work/perf.err")"
	fi
else
	skip "-a: perf.data" "perf not installed"
fi
if grep -q "<title>$hc (" "$work/all.svg" && grep -q "<title>$ch (" "$work/all.svg" &&
	[ "$(grep -c '<title>hot_a (' "$work/all.svg")" -ge 2 ]; then
	ok "-a: .svg: a tower per process, hot_a in both"
else
	fail "-a: .svg" "$(grep -o '<title>[^<]*' "$work/all.svg" | head -8)"
fi

finish

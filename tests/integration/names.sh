#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Names as people read them (README "Names"), on workloads of ours profiled
# by the real BPF program (-p, each stopped until bpfprof samples, then given
# 300 ms of CPU: about 300 samples at 999 Hz at any load; lib.bash spin):
#
#  - demangling: tests/workload/cxxnames.cpp (a class template's member in a
#    namespace, two overloads, an operator, a lambda) and rustnames.rs built
#    with rustc's default mangling (legacy) and with v0: the demangled names
#    in the summary, the folded stacks, the SVG's tooltips (its box labels
#    hold no mangled name) and pprof's Function.name, the mangled symbol in
#    its system_name (go tool pprof -raw prints it in brackets);
#    --no-demangle: the mangled names everywhere.
#  - Go: tests/workload/gonames/main.go built as is, with -ldflags="-s -w"
#    (no .symtab) and that stripped (strip --strip-all): each build's
#    goroutines' functions named alike (from .gopclntab) in every output, no
#    frame of their stacks left unnamed (DSO+0xADDR), pprof's file:line in
#    the function's lines of the source, and the same goroutine stacks in the
#    three (the stripped builds, which have no CFI, unwound from the table);
#    a copy whose table claims more functions than it holds: refused with
#    one warning, frames left DSO+0xADDR, exit 0.
#  - roots: >= 99 % of the goroutine stacks start at runtime.goexit and the
#    summary says >= 98 % reached the end of the stack (the runtime's own
#    stacks are in it too); with --call-graph fp
#    hotcold (frame pointers, glibc without) >= 99 % too.
#  - entry points: stacks sampled while ld.so loads a program (20 runs of
#    cxxnames with LD_BIND_NOW) start at _start (e_entry), none at an
#    unnamed ld.so address; test_sym_elf checks the same on a stripped
#    executable and on ld.so without its build-id (no debug file).
#  - a command that cannot be started: bpfprof exits 127 (not found) or
#    126 (not executable), as shells do; one that ran and exited 127 still
#    gives 0 and "command exited with status 127".
# Without rustc (or go) their workloads are not built and their checks are
# skipped, saying so.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
BPFPROF=${BPFPROF:-$top/bpfprof}
WL=${WL:-$top/.output/workload}
F=${F:-999}
work=$(mktemp -d /tmp/bpfprof-names.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
[ -n "${KEEP:-}" ] && trap - EXIT
mkdir -p "$work/home" "$work/pprof"
export HOME=$work/home PPROF_TMPDIR=$work/pprof

. "$(dirname "$0")/lib.bash"
require_bpf "names"

# start NAME EXE [ARGS...]: run EXE stopped once exec'd (and $delay seconds
# more when set: past the loader); its pid in $started
start() {
	local comm=${2##*/}
	shift
	"$@" >/dev/null 2>&1 &
	started=$!
	pids+=("$started")
	wait_exec "$started" "${comm:0:15}" || return 1
	[ -n "${delay:-}" ] && sleep "$delay"
	kill -STOP "$started"
}
# profile OUT MS "PID..." [OPTIONS...]: bpfprof -p the PIDs into OUT.{folded,svg,pb.gz}
# (its stderr in OUT.log), each PID given MS ms of CPU while sampled; $rc its exit status
profile() {
	local out=$1 ms=$2 targets=$3 p bp
	shift 3
	"$BPFPROF" -F "$F" --top 64 -p "${targets// /,}" "$@" -o "$out.folded" -o "$out.svg" -o "$out.pb.gz" \
		>"$out.log" 2>&1 &
	bp=$!
	if wait_sampling "$bp"; then
		for p in $targets; do spin "$p" "$ms"; done
	fi
	kill -INT "$bp" 2>/dev/null
	wait "$bp"
	rc=$?
}
# svg_titles SVG: each frame's tooltip name, XML-unescaped
svg_titles() {
	sed -n 's/^<g><title>\(.*\) ([0-9]* samples\?, [0-9.]*%)<\/title>.*/\1/p' "$1" |
		sed -e 's/&lt;/</g' -e 's/&gt;/>/g' -e 's/&quot;/"/g' -e "s/&apos;/'/g" -e 's/&amp;/\&/g'
}
# svg_labels SVG: the text of each frame's box
svg_labels() { sed -n 's/^<g><title>.*<text [^>]*>\(.*\)<\/text>.*/\1/p' "$1"; }
# raw_funcs PB: "name<TAB>system name" of each location's function (go tool pprof -raw)
raw_funcs() {
	go tool pprof -raw -symbolize=none "$1" 2>"$work/pprof.err" |
		sed -n '/^Locations/,/^Mappings/s/^ *[0-9]*: 0x[0-9a-f]* M=[0-9]* \(.*\) [^ ]*:[0-9]* s=[0-9]*\(.*\)$/\1\t\2/p' |
		sed 's/\t(\(.*\))$/\t\1/' | sort -u
}
# (no grep -q after a pipe: its early exit fails the writer with SIGPIPE under pipefail)
# has_everywhere OUT NAME SYM: NAME in the summary, the folded stacks, an SVG
# tooltip and a pprof function of OUT, whose system name is SYM; else why not in $why
has_everywhere() {
	local out=$1 name=$2 sym=$3
	why=
	grep -qF " $name [" "$out.log" || why+=" summary"
	awk '{ $NF = ""; n = split($0, f, ";"); for (i = 1; i <= n; i++) print f[i] }' "$out.folded" |
		sed 's/ $//' | grep -xF "$name" >/dev/null || why+=" folded"
	svg_titles "$out.svg" | grep -xF "$name" >/dev/null || why+=" svg"
	if [ -n "$have_go" ]; then
		raw_funcs "$out.pb.gz" >"$out.raw"
		if [ "$name" = "$sym" ]; then
			grep -qxF "$name	" "$out.raw" || why+=" pprof"
		else
			grep -qxF "$name	$sym" "$out.raw" || why+=" pprof(name/system_name)"
		fi
	fi
	[ -z "$why" ]
}

have_go=1
command -v go >/dev/null || { have_go=; skip "pprof name/system_name checks" "go (go tool pprof) not installed"; }

# ---- 1. demangling: C++ and Rust (legacy, v0) ----
targets=() # "exe|demangled|mangled" of each leaf checked
targets_cxx=(
	"names::Acc<long>::spin(long)|_ZN5names3AccIlE4spinEl"
	"names::work(int)|_ZN5names4workEi"
	"names::work(double)|_ZN5names4workEd"
	"names::operator+(names::Vec const&, names::Vec const&)|_ZN5namesplERKNS_3VecES2_"
	"main::{lambda(int)#1}::operator()(int) const|_ZZ4mainENKUliE_clEi"
)
exes=("$WL/cxxnames")
for t in "${targets_cxx[@]}"; do targets+=("cxxnames|$t"); done
# the Rust symbols as this rustc spelt them (legacy hashes differ by build)
rust_sym() { nm "$WL/$1" | awk -v re="$2" '$3 ~ re { print $3; exit }'; }
if [ -x "$WL/rustnames" ] && [ -x "$WL/rustnames-v0" ]; then
	exes+=("$WL/rustnames" "$WL/rustnames-v0")
	sym=$(rust_sym rustnames 'Square4spin')
	if [[ $sym == _ZN* ]]; then
		targets+=("rustnames|rustnames::shapes::Square::spin|$sym")
		targets+=("rustnames|rustnames::shapes::churn|$(rust_sym rustnames '6shapes5churn')")
	else
		skip "Rust legacy mangling" "this rustc's default mangling is not legacy ($sym)"
	fi
	targets+=("rustnames-v0|<rustnames::shapes::Square>::spin|$(rust_sym rustnames-v0 '^_R.*6Square4spin$')")
	targets+=("rustnames-v0|rustnames::shapes::churn::<u64>|$(rust_sym rustnames-v0 '^_R.*5churn')")
else
	skip "Rust demangling" "rustc not installed: tests/workload/rustnames.rs not built (tools/install-deps.sh installs it)"
fi

for mode in demangled mangled; do
	tp=()
	for e in "${exes[@]}"; do
		start "${e##*/}" "$e" 60 || { fail "start ${e##*/}"; continue; }
		tp+=("$started")
	done
	opt=()
	[ $mode = mangled ] && opt=(--no-demangle)
	profile "$work/$mode" 300 "${tp[*]}" "${opt[@]}"
	for p in "${tp[@]}"; do kill -KILL "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	if [ "$rc" != 0 ]; then
		fail "$mode run: bpfprof exited $rc" "$(tail -5 "$work/$mode.log")"
		continue
	fi
	bad=()
	for t in "${targets[@]}"; do
		IFS='|' read -r exe name sym <<<"$t"
		[ $mode = mangled ] && name=$sym
		has_everywhere "$work/$mode" "$name" "$sym" || bad+=("$exe: '$name' missing from:$why")
	done
	# no box label shows a mangled name when demangling (cut labels end in "..")
	if [ $mode = demangled ] && svg_labels "$work/$mode.svg" | grep -E '^_(Z|R)[A-Z0-9]' >/dev/null; then
		bad+=("SVG box labels: $(svg_labels "$work/$mode.svg" | grep -E '^_(Z|R)[A-Z0-9]' | head -3 | tr '\n' ' ')")
	fi
	if [ ${#bad[@]} -eq 0 ]; then
		ok "$mode: ${#targets[@]} C++ and Rust functions in the summary, folded, SVG and pprof$([ $mode = demangled ] && echo ' (mangled in system_name)')"
	else
		fail "$mode: names" "${bad[@]}" "$(grep -A12 'self%' "$work/$mode.log")"
	fi
done

# ---- 2. Go: names and lines from .gopclntab, with and without .symtab ----
# pprof_lines PB: "exe<TAB>name<TAB>file<TAB>line" of each location (go tool pprof -raw)
pprof_lines() {
	go tool pprof -raw -symbolize=none "$1" 2>"$work/pprof.err" | awk '
		/^Locations/ { sec = "l"; next } /^Mappings/ { sec = "m"; next }
		sec == "l" && match($0, / M=[0-9]+ /) {
			m = substr($0, RSTART + 3, RLENGTH - 4); rest = substr($0, RSTART + RLENGTH)
			sub(/ s=[0-9]+.*$/, "", rest); n = split(rest, w, " "); fl = w[n]
			name = substr(rest, 1, length(rest) - length(fl) - 1)
			i = match(fl, /:[0-9]+$/); loc[++nl] = m "\t" name "\t" substr(fl, 1, i - 1) "\t" substr(fl, i + 1)
		}
		sec == "m" && /^[0-9]+: / { id = $1; sub(/:$/, "", id); f = $3; sub(/.*\//, "", f); exe[id] = f }
		END { for (i = 1; i <= nl; i++) { split(loc[i], p, "\t"); print exe[p[1]] "\t" p[2] "\t" p[3] "\t" p[4] } }'
}
gosrc=$top/tests/workload/gonames/main.go
# first and last line of the Go function whose declaration matches $1
go_lines() { awk -v re="$1" '$0 ~ re { s = NR } s && /^}/ { print s, NR; exit }' "$gosrc"; }
go_funcs=("main.(*spinner).spinA|^func \\(s \\*spinner\\) spinA" "main.spinB|^func spinB")
if [ ! -x "$WL/gonames-strip" ]; then
	skip "Go names" "go not installed: tests/workload/gonames not built"
else
	tp=()
	for b in gonames gonames-sw gonames-strip; do
		start "$b" "$WL/$b" 60 || { fail "start $b"; continue; }
		tp+=("$started")
	done
	profile "$work/go" 300 "${tp[*]}"
	for p in "${tp[@]}"; do kill -KILL "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	[ -n "$have_go" ] && pprof_lines "$work/go.pb.gz" >"$work/go.lines"
	for b in gonames gonames-sw gonames-strip; do
		bad=() named=()
		for fl in "${go_funcs[@]}"; do
			IFS='|' read -r name decl <<<"$fl"
			read -r first last <<<"$(go_lines "$decl")"
			grep -F "$name [$b]" "$work/go.log" >/dev/null || bad+=("$name not in the summary as $b's")
			grep "^$b;" "$work/go.folded" | awk '{ $NF = ""; n = split($0, f, ";"); for (i = 1; i <= n; i++) print f[i] }' |
				sed 's/ $//' | grep -xF "$name" >/dev/null || bad+=("$name not in $b's folded stacks")
			svg_titles "$work/go.svg" | grep -xF "$name" >/dev/null || bad+=("$name not in the SVG")
			if [ -n "$have_go" ]; then
				lines=$(awk -F'\t' -v b="$b" -v n="$name" '$1 == b && $2 == n { print $3 ":" $4 }' "$work/go.lines" | sort -u)
				wrong=$(awk -F: -v src="$gosrc" -v a="$first" -v z="$last" '$1 != src || $2 < a || $2 > z' <<<"$lines")
				if [ -z "$lines" ] || [ -n "$wrong" ]; then
					bad+=("pprof $name of $b: lines $(echo $lines) (want $gosrc:$first-$last)")
				else
					named+=("$name at $(sed 's/.*://' <<<"$lines" | paste -sd, -)")
				fi
			fi
		done
		# (only there: a rare walk across runtime.morestack's switch of stacks can go astray)
		unnamed=$(grep -E "^$b;.*;main\.(\(\*spinner\)\.spinA|spinB)( |;)" "$work/go.folded" |
			grep -oE ";$b\+0x[0-9a-f]+" | sort -u | head -3 | tr '\n' ' ')
		[ -n "$unnamed" ] && bad+=("unnamed frames in $b's goroutines: $unnamed")
		if [ ${#bad[@]} -eq 0 ]; then
			ok "Go $b: goroutines' functions named in the summary, folded, SVG and pprof; pprof lines ${named[*]:-(no go tool pprof)}"
		else
			fail "Go $b" "${bad[@]}" "$(grep -A6 'self%' "$work/go.log")"
		fi
	done
	# the same goroutine stacks (user frames, root to the spinning leaf: not
	# those in runtime.asyncPreempt, Go's preemption signal) in each build: the
	# stripped ones are unwound from .gopclntab's SP deltas (no CFI is left)
	for b in gonames gonames-sw gonames-strip; do
		grep -E "^$b;.*;main\.(\(\*spinner\)\.spinA|spinB)( |;)" "$work/go.folded" |
			awk '{ n = split($1, f, ";"); s = ""; for (i = 2; i <= n; i++) if (f[i] !~ /_\[k\]$/) s = s ";" f[i]
				if (s ~ /\.spin[AB]$/) print substr(s, 2) }' |
			sort -u >"$work/$b.paths"
	done
	if [ -s "$work/gonames.paths" ] && cmp -s "$work/gonames.paths" "$work/gonames-sw.paths" &&
		cmp -s "$work/gonames.paths" "$work/gonames-strip.paths"; then
		ok "Go: the same goroutine stacks in the three builds: $(paste -sd' ' "$work/gonames.paths")"
	else
		fail "Go: goroutine stacks differ between builds" "$(head -5 "$work"/gonames*.paths)"
	fi
	# a hostile table (nfunc beyond its bytes): refused with one warning, the run goes on unnamed
	cp "$WL/gonames-strip" "$work/gobad"
	off=$(readelf -SW "$work/gobad" | awk '{ for (i = 1; i < NF; i++) if ($i == ".gopclntab") print $(i + 3) }')
	printf '\377\377\377\377\377\377\377\177' | dd of="$work/gobad" bs=1 seek=$((0x${off:-0} + 8)) conv=notrunc 2>/dev/null
	"$BPFPROF" -F 999 -o "$work/gobad.folded" -- "$work/gobad" 0.2 >"$work/gobad.log" 2>&1
	rc=$?
	warned=$(grep -c "Go function table refused (malformed" "$work/gobad.log")
	if [ -n "$off" ] && [ "$rc" = 0 ] && [ "$warned" = 1 ] && grep -q '^gobad;.*gobad+0x' "$work/gobad.folded"; then
		ok "Go: a malformed .gopclntab refused with one warning, its frames gobad+0xADDR, exit 0"
	else
		fail "Go: malformed .gopclntab: rc=$rc, $warned warnings" "$(head -5 "$work/gobad.log")"
	fi
	# ---- 3. Go's roots: goroutine stacks end at runtime.goexit, and the summary knows it ----
	ends=$(sed -n 's/.*: \([0-9.]*\)% reached the end of the stack.*/\1/p' "$work/go.log" | head -1)
	read -r gr gn <<<"$(grep -E ';main\.(\(\*spinner\)\.spinA|spinB)( |;)' "$work/go.folded" |
		awk '{ n = $NF; t += n; split($1, f, ";"); if (f[2] == "runtime.goexit") r += n }
			END { if (t) printf "%.1f %d\n", 100 * r / t, t }')"
	# (the summary counts the runtime's own stacks too: a signal handler's on its
	# own stack, a vDSO call cut short are incomplete; 0.1-0.5 % of them here)
	if awk -v e="$ends" -v g="$gr" 'BEGIN { exit !(e != "" && e >= 98 && g != "" && g >= 99) }'; then
		ok "Go roots: $gr % of $gn goroutine stacks start at runtime.goexit; the summary: $ends % reached the end"
	else
		fail "Go roots: ${gr:-?} % of ${gn:-0} goroutine stacks from runtime.goexit (want >= 99), summary ${ends:-?} % (>= 98)" \
			"$(grep 'user stack' "$work/go.log")"
	fi
fi

# ---- 3. a frame-pointer walk's roots: glibc's frames its chain ends in ----
# (past ld.so, whose code keeps no frame pointers, before sampling: 50 ms)
if delay=0.05 start hotcold "$WL/hotcold" 60; then
	hc=$started
	profile "$work/fp" 300 "$hc" --call-graph fp
	kill -KILL "$hc" 2>/dev/null && wait "$hc" 2>/dev/null
	ends=$(sed -n 's/.*(--call-graph fp): \([0-9.]*\)% reached the end of the stack.*/\1/p' "$work/fp.log")
	if [ "$rc" = 0 ] && awk -v e="$ends" 'BEGIN { exit !(e != "" && e >= 99) }'; then
		ok "--call-graph fp: $ends % of hotcold's stacks reached the end (__libc_start_call_main)"
	else
		fail "--call-graph fp: rc=$rc, ${ends:-?} % reached the end (want >= 99)" "$(grep 'user stack' "$work/fp.log")"
	fi
else
	fail "start hotcold"
fi

# ---- 4. entry points: stacks sampled while ld.so loads a program end in _start ----
# (cxxnames with libstdc++, every symbol bound at load: LD_BIND_NOW; 20 runs, about 0.1 s of CPU)
"$BPFPROF" -F 4999 --no-python -o "$work/ld.folded" -- sh -c \
	"for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do LD_BIND_NOW=1 '$WL/cxxnames' 0; done" \
	>"$work/ld.log" 2>&1
rc=$?
# roots of cxxnames' stacks in ld.so (_dl_start named by a debug file, else ld-linux-…+0x…),
# and stacks whose root is an unnamed ld.so address
read -r lds unnamed <<<"$(awk '{ split($1, f, ";") } f[1] == "cxxnames" && f[2] == "_start" && (f[3] == "_dl_start" || f[3] ~ /^ld-linux/) { n += $NF }
	f[2] ~ /^ld-linux.*\+0x/ { u += $NF } END { print n + 0, u + 0 }' "$work/ld.folded" 2>/dev/null)"
if [ "$rc" = 0 ] && [ "${lds:-0}" -ge 1 ] && [ "${unnamed:-1}" = 0 ]; then
	ok "ld.so: $lds samples while it loaded cxxnames, every one from _start (e_entry); no unnamed ld.so root"
else
	fail "ld.so: rc=$rc, ${lds:-0} samples from _start in ld.so, ${unnamed:-?} from an unnamed ld.so address" \
		"$(grep -E '^[^;]*;ld-linux' "$work/ld.folded" | head -3)"
fi

# ---- 5. a command that cannot be started: 127 (not found), 126 (not executable), as shells ----
printf '#!/bin/sh\nexit 0\n' >"$work/noexec.sh"
chmod 0644 "$work/noexec.sh"
bad=()
for c in "/no/such/command|127|No such file or directory" "$work/noexec.sh|126|Permission denied" \
	"sh -c 'exit 127'|0|command exited with status 127"; do
	IFS='|' read -r cmd want msg <<<"$c"
	eval "\"\$BPFPROF\" -F 99 -o \"\$work/cmd.prof\" -- $cmd" >/dev/null 2>"$work/cmd.log"
	rc=$?
	{ [ "$rc" = "$want" ] && grep -qF "$msg" "$work/cmd.log" && [ -s "$work/cmd.prof" ]; } ||
		bad+=("$cmd: exit $rc (want $want), '$msg' $(grep -qF "$msg" "$work/cmd.log" || echo not) said: $(tr '\n' ' ' <"$work/cmd.log")")
	rm -f "$work/cmd.prof"
done
if [ ${#bad[@]} -eq 0 ]; then
	ok "commands: not found exits 127, not executable 126, a command's own 127 exits 0 (profile written each time)"
else
	fail "command exit statuses" "${bad[@]}"
fi

finish

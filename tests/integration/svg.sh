#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Flame graph (.svg) integration tests. Profiles the project's workload
# (tests/workload/hotcold.c: hot_a 75 % under via_x and via_y, hot_b 25 %
# under via_z) into an SVG with the real BPF program, and checks it:
#  - xmllint --noout (libxml2-utils) accepts it;
#  - the frame widths give hot_a and hot_b their share (±TOL points) and
#    hot_a sits on via_x and via_y, hot_b on via_z;
#  - in headless Chromium (tests/svg/check.sh): hover details, click-to-zoom
#    (the clicked frame takes the full width, its root dims as a parent),
#    search "hot_" (highlights, "Matched: P%" equal to the hot_ share), reset
#    zoom and search, and a screenshot.
# Where `bpfprof -o x.svg` is not supported yet (exit 2) the bpfprof part is
# skipped; the same checks always run on tests/tools/svgdemo.c's hand-built
# hotcold-shaped profile. Missing xmllint or chromium are installed with
# apt-get as root, or their checks skipped with the reason.
# SVG_ARTIFACTS=DIR keeps the SVGs and screenshots there.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
BPFPROF=${BPFPROF:-$top/bpfprof}
HOTCOLD=${HOTCOLD:-$top/.output/workload/hotcold}
LIB=${LIB:-$top/.output/libbpfprof.a}
TOL=${TOL:-7} # percentage points allowed around the known split
work=$(mktemp -d /tmp/bpfprof-svg.XXXXXX)
trap 'rm -rf "$work"' EXIT

. "$(dirname "$0")/lib.bash"

# Install a Debian package for a missing command, as root; true when the command is there after.
apt_updated=
ensure() {
	local cmd=$1 pkg=$2
	command -v "$cmd" >/dev/null && return 0
	[ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null || return 1
	export DEBIAN_FRONTEND=noninteractive
	if ! apt-get install -y --no-install-recommends "$pkg" >>"$work/apt.log" 2>&1 && [ -z "$apt_updated" ]; then
		apt_updated=1
		apt-get update >>"$work/apt.log" 2>&1 &&
			apt-get install -y --no-install-recommends "$pkg" >>"$work/apt.log" 2>&1
	fi
	command -v "$cmd" >/dev/null
}

have_xmllint=1 have_chromium=1
ensure xmllint libxml2-utils || { have_xmllint=; why_xmllint="xmllint missing and libxml2-utils could not be installed$([ "$(id -u)" -ne 0 ] && echo ' (not root)')"; }
ensure chromium chromium || { have_chromium=; why_chromium="chromium missing and could not be installed$([ "$(id -u)" -ne 0 ] && echo ' (not root)')"; }

# One line per frame: name<TAB>samples<TAB>x<TAB>y<TAB>width (names as written, XML-escaped).
frames() {
	awk '/^<g><title>/ {
		t = $0; sub(/^<g><title>/, "", t); sub(/<\/title>.*/, "", t)
		n = t; sub(/ \([0-9]+ samples?, [0-9.]+%\)$/, "", n)
		c = t; sub(/.* \(/, "", c); sub(/ .*/, "", c)
		match($0, / x="[0-9.]+"/); x = substr($0, RSTART + 4, RLENGTH - 5)
		match($0, / y="[0-9.]+"/); y = substr($0, RSTART + 4, RLENGTH - 5)
		match($0, / width="[0-9.]+"/); w = substr($0, RSTART + 8, RLENGTH - 9)
		printf "%s\t%s\t%s\t%s\t%s\n", n, c, x, y, w
	}' "$1"
}
# Percent of the root's width covered by frames named $2.
share() { awk -F'\t' -v f="$2" '$1 == "all" { all = $5 } $1 == f { s += $5 } END { if (all > 0) printf "%.2f", 100 * s / all }' "$1"; }
# Percent of the root's width covered by frames whose name matches the regex $2 (none nested).
share_re() { awk -F'\t' -v re="$2" '$1 == "all" { all = $5 } $1 ~ re { s += $5 } END { if (all > 0) printf "%.2f", 100 * s / all }' "$1"; }
# Names of the frames right under each frame named $2 (its callers), sorted, comma-separated.
callers() {
	awk -F'\t' -v f="$2" '{ n[NR] = $1; x[NR] = $3; y[NR] = $4; w[NR] = $5 }
		END { for (i = 1; i <= NR; i++) if (n[i] == f) for (j = 1; j <= NR; j++)
			if (y[j] == y[i] + 16 && x[j] <= x[i] + 0.01 && x[j] + w[j] >= x[i] + w[i] - 0.01) print n[j] }' "$1" |
		sort -u | paste -sd, -
}
kv() { sed -n "s/^fgcheck: $2=//p" "$1" | head -1; }

# All checks on one SVG of a hotcold-shaped profile. The split's tolerance:
# TOL, or for a sampled profile (SAMPLED=1) four standard deviations of a
# 75 % share at the root frame's sample count when that is more (lib.bash
# split_tol); svgdemo's profile is built, not sampled.
check_svg() {
	local name=$1 svg=$2 tsv=$work/$1.tsv out=$work/$1.chromium a b c tol=$TOL
	if [ -n "$have_xmllint" ]; then
		if xmllint --noout "$svg" 2>"$work/$name.xmllint"; then
			ok "$name: xmllint --noout accepts the SVG ($(wc -c <"$svg") bytes)"
		else
			fail "$name: xmllint --noout" "$(head -5 "$work/$name.xmllint")"
		fi
	else
		skip "$name: xmllint" "$why_xmllint"
	fi
	frames "$svg" >"$tsv"
	[ "${SAMPLED:-}" = 1 ] && tol=$(split_tol "$(awk -F'\t' '$1 == "all" { print $2; exit }' "$tsv")" "$TOL")
	a=$(share "$tsv" hot_a) b=$(share "$tsv" hot_b)
	if [ -n "$tol" ] && near "$a" 75 "$tol" && near "$b" 25 "$tol"; then
		ok "$name: frame widths: hot_a $a%, hot_b $b% (expect 75/25 ±$tol) of $(wc -l <"$tsv") frames"
	else
		fail "$name: frame widths hot_a=$a% hot_b=$b% (±'$tol': empty under 50 samples)" "$(sort -t"$(printf '\t')" -k5 -gr "$tsv" | head -12)"
	fi
	c="$(callers "$tsv" hot_a) / $(callers "$tsv" hot_b)"
	if [ "$c" = "via_x,via_y / via_z" ]; then
		ok "$name: hot_a stacked on via_x and via_y, hot_b on via_z"
	else
		fail "$name: callers (hot_a / hot_b) are '$c'" "$(head -20 "$tsv")"
	fi
	if [ -z "$have_chromium" ]; then
		skip "$name: chromium checks" "$why_chromium"
		return
	fi
	if ! "$top/tests/svg/check.sh" "$svg" "$work/$name.out" hot_a hot_ >"$out" 2>"$out.err"; then
		fail "$name: tests/svg/check.sh" "$(tail -5 "$out.err")"
		return
	fi
	if [ "$(kv "$out" done)" != 1 ]; then
		fail "$name: chromium harness did not finish" "$(cat "$out")" "$(tail -3 "$work/$name.out/chromium.log")"
		return
	fi
	[ "$(kv "$out" details)" = "Function: $(grep -o 'hot_a ([0-9]* samples, [0-9.]*%)' "$svg" | sort -t'(' -k2 -nr | head -1)" ] &&
		ok "$name: chromium: hover shows '$(kv "$out" details)'" ||
		fail "$name: chromium: hover details '$(kv "$out" details)'" "$(cat "$out")"
	if near "$(kv "$out" zoomed_width)" 1180 0.01 && [ "$(kv "$out" zoomed_x)" = 10.00 ] &&
		[ "$(kv "$out" root_is_parent)" = true ] && [ "$(kv "$out" unzoom_shown)" = true ] &&
		[ "$(kv "$out" zoomed_label)" = hot_a ] && [ "$(kv "$out" hidden_zoomed)" -gt 0 ]; then
		ok "$name: chromium: click zooms hot_a from $(kv "$out" target_width) px to the full 1180 px, $(kv "$out" hidden_zoomed) frames hidden"
	else
		fail "$name: chromium: zoom" "$(cat "$out")"
	fi
	local m mz
	m=$(kv "$out" matched | sed -n 's/^Matched: \([0-9.]*\)%$/\1/p')
	mz=$(kv "$out" matched_zoomed)
	if near "$m" "$(share_re "$tsv" hot_)" 0.1 && [ "$mz" = "Matched: 100.0%" ] &&
		[[ ",$(kv "$out" highlighted_names)," == *,hot_a,*hot_b,* ]] &&
		[ "$(kv "$out" highlighted_after_reset)" = 0 ]; then
		ok "$name: chromium: search 'hot_' highlights $(kv "$out" highlighted) frames, matched $m% (100% inside the zoom)"
	else
		fail "$name: chromium: search matched '$m' (want $(share_re "$tsv" hot_) from the widths), zoomed '$mz'" "$(cat "$out")"
	fi
	if [ "$(kv "$out" unzoomed_width)" = "$(kv "$out" target_width)" ] && [ "$(kv "$out" hidden_unzoomed)" = 0 ]; then
		ok "$name: chromium: Reset Zoom restores the widths"
	else
		fail "$name: chromium: reset zoom" "$(cat "$out")"
	fi
	local png=$work/$name.out/flame.png
	if [ -s "$png" ] && [ "$(head -c 8 "$png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] &&
		[ "$(wc -c <"$png")" -gt 5000 ]; then
		ok "$name: chromium: screenshot rendered ($(wc -c <"$png") bytes PNG)"
	else
		fail "$name: chromium: screenshot" "$(ls -l "$work/$name.out")" "$(tail -3 "$work/$name.out/chromium.log")"
	fi
	if [ -n "${SVG_ARTIFACTS:-}" ]; then
		mkdir -p "$SVG_ARTIFACTS" && cp "$svg" "$SVG_ARTIFACTS/$name.svg" && cp "$png" "$SVG_ARTIFACTS/$name.png"
	fi
}

# 1. bpfprof itself: ./bpfprof -F 2999 -o x.svg -- hotcold 1: about 3 000
# samples on an idle CPU, 1 500 with half of one (split_tol: 4.5 points, under
# TOL), as many as the 3 s at 999 Hz before.
if [ "$(id -u)" -ne 0 ]; then
	skip "bpfprof -o x.svg" "needs root for BPF and perf events"
elif [ ! -x "$BPFPROF" ] || [ ! -x "$HOTCOLD" ]; then
	fail "build" "missing $BPFPROF or $HOTCOLD: run make"
else
	"$BPFPROF" -d 0.2 -o "$work/probe.svg" -- true >"$work/probe.log" 2>&1
	rc=$?
	if [ $rc -eq 2 ]; then
		skip "bpfprof -o x.svg" "not supported by this bpfprof yet (exit 2: $(head -1 "$work/probe.log"))"
	elif [ $rc -ne 0 ] && grep -qiE 'operation not permitted|permission denied|not supported' "$work/probe.log"; then
		skip "bpfprof -o x.svg" "the kernel refuses BPF here: $(head -2 "$work/probe.log" | tr '\n' ' ')"
	elif [ $rc -ne 0 ]; then
		fail "probe run: rc=$rc" "$(cat "$work/probe.log")"
	else
		(cd "$work" && "$BPFPROF" -F 2999 -o "$work/x.svg" -- "$HOTCOLD" 1 >"$work/cmd.out" 2>"$work/cmd.log")
		rc=$?
		if [ $rc -eq 0 ] && [ -s "$work/x.svg" ]; then
			ok "bpfprof -F 2999 -o x.svg -- hotcold 1: exit 0, $(wc -c <"$work/x.svg") bytes"
			SAMPLED=1 check_svg bpfprof "$work/x.svg"
		else
			fail "bpfprof -o x.svg: rc=$rc" "$(cat "$work/cmd.log")"
		fi
	fi
fi

# 2. The writer on a hand-built profile (tests/tools/svgdemo.c): kernel and
# JIT frames, several processes, escaping, a frame too narrow to draw.
if [ ! -f "$LIB" ]; then
	fail "svgdemo" "missing $LIB: run make"
elif ! gcc -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter -g -I"$top/include" \
	"$top/tests/tools/svgdemo.c" "$LIB" -lbpf -lelf -lz -o "$work/svgdemo" 2>"$work/svgdemo.cc"; then
	fail "svgdemo: build" "$(head -10 "$work/svgdemo.cc")"
elif ! "$work/svgdemo" "$work/demo.svg" 2>"$work/svgdemo.log"; then
	fail "svgdemo: run" "$(cat "$work/svgdemo.log")"
else
	ok "svgdemo: wrote $(wc -c <"$work/demo.svg") bytes"
	check_svg svgdemo "$work/demo.svg"
	grep -q '<title>std::vector&lt;int, A&amp;&gt;::operator&quot;&quot; (' "$work/demo.svg" &&
		! grep -q '<title>tiny ' "$work/demo.svg" && grep -q '<title>\[libc.so.6\] (' "$work/demo.svg" &&
		ok "svgdemo: escaped <&\"> name, [dso] for an unsymbolized frame, sub-0.1 px frame left out" ||
		fail "svgdemo: escaping, [dso] or narrow-frame omission" "$(grep -o '<title>[^<]*' "$work/demo.svg")"
fi

finish

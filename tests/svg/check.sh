#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Check a flame graph SVG in headless Chromium, without puppeteer:
#  1. wrap the SVG inline in an XHTML page (parsed as XML, like the .svg
#     itself) followed by tests/svg/harness.js, which hovers, clicks (zoom),
#     searches and resets through DOM events and writes its findings into the
#     page; `chromium --dump-dom` prints them as "fgcheck: key=value" lines;
#  2. take a screenshot of the SVG file itself (OUTDIR/flame.png).
#
# usage: check.sh SVG OUTDIR [FRAME [TERM]]   (defaults: hot_a, hot_)
# Prints the fgcheck lines on stdout; exits 1 when Chromium fails.
set -uo pipefail

svg=$1 outdir=$2 target=${3:-hot_a} term=${4:-hot_}
here=$(cd "$(dirname "$0")" && pwd)
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || command -v google-chrome)}
[ -n "$CHROMIUM" ] || { echo "check.sh: no chromium" >&2; exit 1; }
mkdir -p "$outdir"
profile_dir=$(mktemp -d /tmp/svgcheck-chromium.XXXXXX)
trap 'rm -rf "$profile_dir"' EXIT

chrome() {
	timeout 90 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$profile_dir" --virtual-time-budget=3000 "$@"
}

# JS string literals for the harness (JSON-compatible: escape \ and ")
js_str() { printf '"%s"' "$(printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g')"; }

page=$outdir/check.xhtml
{
	echo '<?xml version="1.0" encoding="UTF-8"?>'
	echo '<html xmlns="http://www.w3.org/1999/xhtml"><head><title>flame graph check</title></head><body>'
	echo '<pre id="result">harness did not run</pre>'
	sed '1{/^<?xml/d}' "$svg"
	echo '<script type="text/javascript"><![CDATA['
	echo "var TARGET = $(js_str "$target"), TERM = $(js_str "$term");"
	cat "$here/harness.js"
	echo ']]></script>'
	echo '</body></html>'
} >"$page"

chrome --dump-dom "file://$(realpath "$page")" >"$outdir/dom.txt" 2>"$outdir/chromium.log" ||
	{ echo "check.sh: chromium --dump-dom failed" >&2; tail -5 "$outdir/chromium.log" >&2; exit 1; }
grep '^fgcheck: ' "$outdir/dom.txt" | sed 's/&amp;/\&/g; s/&lt;/</g; s/&gt;/>/g; s/&quot;/"/g'

height=$(sed -n 's/^<svg [^>]*height="\([0-9]*\)".*/\1/p' "$svg" | head -1)
chrome --screenshot="$outdir/flame.png" --window-size="1200,${height:-800}" --hide-scrollbars \
	"file://$(realpath "$svg")" >/dev/null 2>>"$outdir/chromium.log" ||
	{ echo "check.sh: chromium --screenshot failed" >&2; exit 1; }
[ -s "$outdir/flame.png" ] && echo "fgcheck: screenshot=$outdir/flame.png"
exit 0

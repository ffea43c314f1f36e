#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Check a flame graph SVG in headless Chromium, without puppeteer, in one
# launch (1.3 CPU-s each on this VM):
#  1. a copy of the SVG (OUTDIR/check.svg: a standalone SVG document, as a
#     browser opens the file) gets a hidden <text id="result"> and, after the
#     graph's own script, tests/svg/harness.js, which hovers, clicks (zoom),
#     searches and resets through DOM events and writes its findings into
#     that element; `chromium --dump-dom` prints them as "fgcheck: key=value"
#     lines;
#  2. the same launch takes a screenshot of it (OUTDIR/flame.png), once the
#     harness has reset zoom and search: the graph as it first renders.
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

grep -q '</svg>[[:space:]]*$' "$svg" || { echo "check.sh: $svg does not end with </svg>" >&2; exit 1; }
page=$outdir/check.svg
{
	# everything up to the closing </svg> (the last line that holds it)
	last=$(grep -n '</svg>' "$svg" | tail -1 | cut -d: -f1)
	head -n $((last - 1)) "$svg"
	sed -n "${last}s|</svg>[[:space:]]*\$||p" "$svg"
	echo '<text id="result" display="none">harness did not run</text>'
	echo '<script type="text/ecmascript"><![CDATA['
	echo "var TARGET = $(js_str "$target"), TERM = $(js_str "$term");"
	cat "$here/harness.js"
	echo ']]></script>'
	echo '</svg>'
} >"$page"

height=$(sed -n 's/^<svg [^>]*height="\([0-9]*\)".*/\1/p' "$svg" | head -1)
chrome --dump-dom --screenshot="$outdir/flame.png" --window-size="1200,${height:-800}" --hide-scrollbars \
	"file://$(realpath "$page")" >"$outdir/dom.txt" 2>"$outdir/chromium.log" ||
	{ echo "check.sh: chromium failed" >&2; tail -5 "$outdir/chromium.log" >&2; exit 1; }
grep '^fgcheck: ' "$outdir/dom.txt" | sed 's/&amp;/\&/g; s/&lt;/</g; s/&gt;/>/g; s/&quot;/"/g'
[ -s "$outdir/flame.png" ] && echo "fgcheck: screenshot=$outdir/flame.png"
exit 0

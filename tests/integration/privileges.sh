#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The privilege checks made before anything else (user/capture/preflight.c), on the
# real kernel: each missing privilege gives its one message and exit 1 at
# once, with no output file left; a user holding only CAP_BPF and
# CAP_PERFMON (ambient capabilities, as setcap would give) profiles.
# Runs as root, dropping privileges with setpriv and unshare.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
BPFPROF=${BPFPROF:-$top/bpfprof}
HOTCOLD=${HOTCOLD:-$top/.output/workload/hotcold}
work=$(mktemp -d /tmp/bpfprof-priv.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"

. "$(dirname "$0")/lib.bash"

if [ "$(id -u)" -ne 0 ]; then
	skip "privilege checks" "needs root to drop privileges"
	finish
fi
if ! command -v setpriv >/dev/null; then
	skip "privilege checks" "setpriv not installed (util-linux)"
	finish
fi
if [ ! -x "$BPFPROF" ] || [ ! -x "$HOTCOLD" ]; then
	fail "build" "missing $BPFPROF or $HOTCOLD: run make"
	finish
fi
mkdir "$work/out" && chmod 777 "$work/out"

# refused NAME EXPECTED_TEXT SETPRIV_OR_UNSHARE_ARGS...: exit 1 within 2 s, one
# line on stderr holding the text, no output file nor temporary left
refused() {
	local name=$1 want=$2 rc ms start
	shift 2
	rm -f "$work"/out/* "$work"/out/.??* 2>/dev/null
	start=$(date +%s%N)
	"$@" "$BPFPROF" -a -d 5 -o "$work/out/x.prof" >"$work/$name.out" 2>"$work/$name.err"
	rc=$?
	ms=$((($(date +%s%N) - start) / 1000000))
	if [ $rc -eq 1 ] && [ "$(wc -l <"$work/$name.err")" -eq 1 ] && grep -qF -- "$want" "$work/$name.err" &&
		[ -z "$(ls -A "$work/out")" ] && [ ! -s "$work/$name.out" ] && [ $ms -lt 2000 ]; then
		ok "$name: exit 1 after $ms ms, one line: $(cut -c1-90 "$work/$name.err")..."
	else
		fail "$name: rc=$rc after $ms ms, want exit 1 and one line with '$want'" \
			"stderr: $(cat "$work/$name.err")" "left: $(ls -A "$work/out")"
	fi
}

nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)
refused "nobody, no capabilities" "needs root, or CAP_BPF and CAP_PERFMON (missing: CAP_BPF CAP_PERFMON); run it with sudo, or grant them: sudo setcap cap_bpf,cap_perfmon+ep $BPFPROF" \
	"${nobody[@]}" --inh-caps=-all
refused "nobody with CAP_PERFMON only" "(missing: CAP_BPF); run it with sudo" \
	"${nobody[@]}" --inh-caps=+perfmon --ambient-caps=+perfmon
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
if [ "$paranoid" -gt 0 ]; then
	refused "nobody with CAP_BPF only, perf_event_paranoid $paranoid" \
		"kernel.perf_event_paranoid is $paranoid and CAP_PERFMON is missing" \
		"${nobody[@]}" --inh-caps=+bpf --ambient-caps=+bpf
else
	refused "nobody with CAP_BPF only, perf_event_paranoid $paranoid" "(missing: CAP_PERFMON)" \
		"${nobody[@]}" --inh-caps=+bpf --ambient-caps=+bpf
fi
refused "root without CAP_BPF, CAP_PERFMON, CAP_SYS_ADMIN (a container)" \
	"running as root but without CAP_BPF CAP_PERFMON (a container" \
	setpriv --bounding-set=-bpf,-perfmon,-sys_admin
if unshare -U -r true 2>/dev/null; then
	refused "root of a user namespace" "running in a user namespace (a rootless container?)" unshare -U -r
else
	skip "user namespace" "unshare -U is not allowed here"
fi

# CAP_BPF and CAP_PERFMON are enough: nobody profiles its own command
# (0.3 s at 1999 Hz: 600 samples on a free CPU, 30 on a twentieth of one;
# one of hot_a, 75 % of them, is enough)
cd "$work/out" || exit 1
"${nobody[@]}" --inh-caps=+bpf,+perfmon --ambient-caps=+bpf,+perfmon \
	"$BPFPROF" -F 1999 -o "$work/out/caps.folded" -- "$HOTCOLD" 0.3 >/dev/null 2>"$work/caps.err"
rc=$?
if [ $rc -eq 0 ] && grep -q '^hotcold;.*hot_a ' "$work/out/caps.folded"; then
	ok "nobody with CAP_BPF and CAP_PERFMON: profiles its command, hot_a named"
else
	fail "nobody with CAP_BPF and CAP_PERFMON: rc=$rc" "$(cat "$work/caps.err")" \
		"$(head -3 "$work/out/caps.folded" 2>/dev/null)"
fi
finish

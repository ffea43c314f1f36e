#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make install / uninstall and what they install (docs/HOST.md):
#  1. make install DESTDIR=... PREFIX=/usr installs exactly the documented
#     files with their modes, the unit pointing at the installed binary;
#     make uninstall removes them (an edited environment file stays).
#  2. The man page renders with no groff warning (man --warnings -l) and
#     names every option `bpfprof --help` and `bpfprof xray --help` list.
#  3. The bash completion parses (bash -n) and completes options, option
#     values and output file names.
#  4. systemd-analyze verify accepts the installed unit (where systemd is).
#  5. The unit's capability set (read from the installed unit) is enough:
#     root with only those capabilities (setpriv: bounding, inheritable and
#     ambient sets) profiles a process of another user (nobody) with its
#     whole stack named (root, BPF). The process spins only while it is
#     profiled, for the CPU time the check needs.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
BPFPROF=${BPFPROF:-$top/bpfprof}
HOTCOLD=${HOTCOLD:-$top/.output/workload/hotcold}
work=$(mktemp -d /tmp/bpfprof-install.XXXXXX)
hc='' bp=''
# On exit: the processes started here (SIGCONT for a stopped one), the directory.
cleanup() {
	local p
	for p in $hc $bp; do kill "$p" && kill -CONT "$p"; done 2>/dev/null
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
. "$(dirname "$0")/lib.bash"

# Readiness, polled (10 s at most): lib.bash wait_exec, and wait_pidfd PID:
# bpfprof PID holds its -p target's pidfd, opened just before it samples.
wait_pidfd() {
	local i
	for ((i = 0; i < 1000; i++)); do
		[[ $(ls -l "/proc/$1/fd" 2>/dev/null) == *'anon_inode:[pidfd]'* ]] && return 0
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.01
	done
	return 1
}

# ---- 1. install, uninstall ----
# the documented list (docs/HOST.md), mode and path
expected="644 etc/default/bpfprof
644 usr/lib/systemd/system/bpfprof.service
644 usr/share/bash-completion/completions/bpfprof
644 usr/share/man/man8/bpfprof.8
755 usr/sbin/bpfprof"
d=$work/destdir
if make -s -C "$top" install DESTDIR="$d" PREFIX=/usr >"$work/install.log" 2>&1; then
	got=$(cd "$d" && find . -type f -printf '%m %P\n' | sort)
	if [ "$got" = "$expected" ]; then
		ok "make install DESTDIR PREFIX=/usr: exactly the 5 documented files and modes"
	else
		fail "make install: files differ" "$(diff <(echo "$expected") <(echo "$got"))"
	fi
	grep -q '^ExecStart=/usr/sbin/bpfprof -a --interval ${BPFPROF_INTERVAL} --output-dir /var/lib/bpfprof' \
		"$d/usr/lib/systemd/system/bpfprof.service" &&
		grep -q '^EnvironmentFile=-/etc/default/bpfprof$' "$d/usr/lib/systemd/system/bpfprof.service" &&
		! grep -q '@' "$d/usr/lib/systemd/system/bpfprof.service" &&
		ok "the unit runs /usr/sbin/bpfprof with /etc/default/bpfprof" ||
		fail "unit paths" "$(grep -E 'ExecStart|EnvironmentFile' "$d/usr/lib/systemd/system/bpfprof.service")"
	cmp -s "$BPFPROF" "$d/usr/sbin/bpfprof" && ok "the installed binary is the built one" ||
		fail "installed binary differs from $BPFPROF"
	echo 'BPFPROF_KEEP=10' >>"$d/etc/default/bpfprof"
	make -s -C "$top" uninstall DESTDIR="$d" PREFIX=/usr >"$work/uninstall.log" 2>&1
	left=$(cd "$d" && find . -type f -printf '%P\n')
	[ "$left" = "etc/default/bpfprof" ] && grep -q 'kept' "$work/uninstall.log" &&
		ok "make uninstall removes them all but an edited /etc/default/bpfprof" ||
		fail "make uninstall left: $left" "$(cat "$work/uninstall.log")"
	rm -f "$d/etc/default/bpfprof"
	make -s -C "$top" install DESTDIR="$d" PREFIX=/usr >/dev/null 2>&1
	make -s -C "$top" uninstall DESTDIR="$d" PREFIX=/usr >/dev/null 2>&1
	[ -z "$(cd "$d" && find . -type f)" ] && ok "make uninstall of an unedited install leaves no file" ||
		fail "uninstall left files" "$(cd "$d" && find . -type f)"
else
	fail "make install" "$(tail -5 "$work/install.log")"
fi

# ---- 2. the man page ----
man=$top/docs/bpfprof.8
if command -v man >/dev/null; then
	MANWIDTH=80 man --warnings -l "$man" >"$work/man.txt" 2>"$work/man.err"
	rc=$?
	[ $rc -eq 0 ] && [ ! -s "$work/man.err" ] && grep -q 'EXIT STATUS' "$work/man.txt" &&
		ok "man --warnings -l bpfprof.8: renders, no warning" ||
		fail "man: rc=$rc" "$(head -5 "$work/man.err")"
else
	skip "man page rendering" "man not installed"
fi
missing=()
mantext=$(<"$man")
for o in $({ "$BPFPROF" --help; "$BPFPROF" xray --help; } 2>/dev/null | grep -oE '^ +(-[a-zA-Z?], )?--[a-z][a-z0-9-]*' | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u); do
	# as roff writes it: every - as \-
	[[ $mantext == *"${o//-/\\-}"* ]] || missing+=("$o")
done
[ ${#missing[@]} -eq 0 ] && ok "the man page names every option of --help and xray --help" ||
	fail "options missing from docs/bpfprof.8 (add them there)" "${missing[*]}"
for c in 0 1 2; do grep -q "^\.B $c\$" "$man" || fail "man page: exit status $c not listed"; done

# ---- 3. bash completion ----
comp=$top/dist/bash-completion/bpfprof
if bash -n "$comp"; then
	ok "bash -n on the completion"
else
	fail "bash -n $comp"
fi
mkdir -p "$work/files"
touch "$work/files/a.prof" "$work/files/b.pb.gz" "$work/files/c.txt"
# complete WORDS...: the candidates for the last word, one per line
complete_words() {
	(
		PATH=$(dirname "$BPFPROF"):$PATH
		cd "$work/files" || exit 1
		. "$comp"
		COMP_WORDS=("$@")
		COMP_CWORD=$(($# - 1))
		_bpfprof
		printf '%s\n' "${COMPREPLY[@]}"
	) 2>/dev/null
}
r1=$(complete_words bpfprof --push- | tr '\n' ' ')
r2=$(complete_words bpfprof --format '' | tr '\n' ' ')
r3=$(complete_words bpfprof -o '' | sort | tr '\n' ' ')
r4=$(complete_words bpfprof --off | tr '\n' ' ')
if [[ $r1 == *--push-auth-file=* && $r1 == *--push-timeout=* && $r2 == "prof perf pprof folded svg otlp " &&
	$r3 == "a.prof b.pb.gz " && $r4 == *--off-cpu* ]]; then
	ok "completion: --push-* options, --format values, -o output files by extension, options read from --help"
else
	fail "completion" "--push-: $r1" "--format: $r2" "-o: $r3" "--off: $r4"
fi

# ---- 4. systemd-analyze verify ----
if command -v systemd-analyze >/dev/null; then
	# installed for real (no DESTDIR) under $work, so that ExecStart exists
	make -s -C "$top" install PREFIX="$work/prefix" >/dev/null 2>&1
	unit=$work/prefix/lib/systemd/system/bpfprof.service
	MANPATH=$work/prefix/share/man systemd-analyze verify "$unit" >"$work/verify.log" 2>&1
	rc=$?
	[ $rc -eq 0 ] && [ ! -s "$work/verify.log" ] && ok "systemd-analyze verify accepts bpfprof.service" ||
		fail "systemd-analyze verify: rc=$rc" "$(cat "$work/verify.log")"
else
	skip "systemd-analyze verify" "systemd not installed"
fi

# ---- 5. the unit's capabilities, in practice ----
unitfile=$top/dist/systemd/bpfprof.service.in
caps=$(sed -n 's/^AmbientCapabilities=//p' "$unitfile")
bound=$(sed -n 's/^CapabilityBoundingSet=//p' "$unitfile")
if [ "$caps" != "$bound" ]; then
	fail "unit: AmbientCapabilities and CapabilityBoundingSet differ" "$caps" "$bound"
elif [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null; then
	skip "the unit's capability set" "needs root and setpriv"
else
	set_=$(echo "$caps" | tr 'A-Z' 'a-z' | sed -e 's/cap_/+/g' -e 's/ /,/g')
	chmod 755 "$work"
	cp "$HOTCOLD" "$work/hotcold"
	# (setpriv execs each in place: the pids are hotcold's and bpfprof's)
	setpriv --reuid=65534 --regid=65534 --clear-groups "$work/hotcold" 30 &
	hc=$!
	wait_exec $hc hotcold
	kill -STOP $hc
	setpriv --inh-caps=-all,"$set_" --ambient-caps=-all,"$set_" --bounding-set=-all,"$set_" \
		"$BPFPROF" -p $hc -F 1999 -o "$work/caps.folded" 2>"$work/caps.err" &
	bp=$!
	# 1999 Hz for 100 ms of its CPU: 200 samples, half of them through via_x
	wait_pidfd $bp
	spin $hc 100
	kill -INT $bp
	wait $bp
	rc=$?
	bp=
	if [ $rc -eq 0 ] && grep -q '^hotcold;_start;.*;main;run;via_x;hot_a ' "$work/caps.folded" &&
		! grep -qi 'refus\|denied' "$work/caps.err"; then
		ok "the unit's capabilities ($caps) profile another user's process, whole stack named"
	else
		fail "unit capabilities: rc=$rc" "$(cat "$work/caps.err")" "$(head -3 "$work/caps.folded" 2>/dev/null)"
	fi
fi

finish

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Profiles that stay named after the process is gone (issue 15, item 7).
# A hotcold-like workload (hot_a 75 %, hot_b 25 % by construction), built
# here with a build-id of its own, runs (a) from a tmpfs that exists only in
# its own mount namespace (unshare --mount --pid --fork), (b) from a file
# deleted once it runs, (c) from "odd dir/burn er" (spaces), (d) from a
# memfd (fexecve), and is profiled with -p into perf.data and .prof; the
# readers run only after the process, its namespace and the file are gone:
# `perf report` with HOME pointing at a directory that held nothing before
# the run (so only the build-id cache bpfprof filled can name the code; (b)
# moves the cache with perf's buildid.dir setting) and `go tool pprof -top`
# (which reads the maps text of the .prof) must name hot_a and hot_b with
# hot_a's share of the two at 75 % +- TOL points (more at few samples:
# prof_tol), and their stderr must be clean. Item 5: a stripped copy whose functions only its debug file
# (.gnu_debuglink) names: the debug file goes into the cache entry and
# beside the .prof, and names hot_a/hot_b in both readers, also moved
# elsewhere (perf archive into another HOME; PPROF_BINARY_PATH). Then
# --no-buildid-cache must leave the cache alone, and a -a .prof must give no
# "Local symbolization failed" warning for a memfd.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
BPFPROF=${BPFPROF:-$top/bpfprof}
# hot_a's share of hot_a + hot_b is 75 % by construction; a profile takes
# 400-500 samples at 999 Hz (the four cases: the workload's 0.5 s of CPU time
# less bpfprof's start, whatever the load; the debug cases: 0.5 s of wall
# time, fewer under load): a 10-point band is 4.6 standard deviations of the
# sampling error at 400 (2.2 points) and leaves room for the load's
# unevenness (67.9-81.7 % measured); more at fewer samples (prof_tol).
TOL=${TOL:-10}
work=$(mktemp -d /tmp/bpfprof-gone.XXXXXX)
pids=()
cg=
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -n "$cg" ] && rmdir "$cg/job" "$cg" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
export PPROF_TMPDIR=$work/pprof

. "$(dirname "$0")/lib.bash"
require_bpf "profiles of gone processes"
for tool in gcc perf go unshare; do
	if ! command -v $tool >/dev/null; then
		skip "profiles of gone processes" "$tool is not installed (tools/install-deps.sh)"
		finish
	fi
done

# hot_a's share of hot_a + hot_b, from "PCT NAME" lines
share() { awk '$2 == "hot_a" { a += $1 } $2 == "hot_b" { b += $1 } END { if (a + b > 0) printf "%.1f", 100 * a / (a + b) }'; }
# The tolerance of a share for the run that logged to $1: TOL, or four
# standard deviations at the samples it wrote to out.prof (lib.bash split_tol):
# a run of fixed wall time under the sanitizer build and other load can get a
# tenth of its samples (about 25 seen with 2 s at 99 Hz: one sigma 9 points).
prof_tol() { split_tol "$(sed -n "s/^bpfprof: wrote '.*out\.prof': \([0-9]*\) samples.*/\1/p" "$1" | head -1)" "$TOL"; }
# a reader's stderr: empty but for pprof's notice about libraries without symbols
clean_err() { ! grep -vE '^(Some binary filenames not available|Try setting PPROF_BINARY_PATH)' "$1" | grep -q .; }

# -g: go tool pprof names C functions of a PIE from DWARF only
id=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
gcc -O1 -g -fno-omit-frame-pointer -fno-inline -Wl,--build-id=0x$id -o "$work/burner" \
	"$top/tests/workload/hotcold.c" || { fail "build the workload"; finish; }
cat >"$work/memfd-exec.c" <<'EOF'
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>
extern char **environ;
/* memfd-exec FILE ARGV0 ARGS...: run FILE from a memfd, as sandboxes and runc do */
int main(int argc, char **argv)
{
	struct stat sb;
	int in = open(argv[1], O_RDONLY), fd = memfd_create("burner", MFD_CLOEXEC);

	if (argc < 2 || in < 0 || fd < 0 || fstat(in, &sb) || sendfile(fd, in, NULL, sb.st_size) != sb.st_size)
		return 127;
	fexecve(fd, argv + 2, environ);
	return 127;
}
EOF
gcc -O1 -o "$work/memfd-exec" "$work/memfd-exec.c" || { fail "build memfd-exec"; finish; }

# exec_wait PID PATTERN: wait until /proc/PID/exe matches the glob PATTERN,
# that is until the process runs the workload (bpfprof -p must attach after
# the exec: a target that execs later is taken for gone, see the report), 5 s
# at most; clears $pid when it does not.
exec_wait() {
	local i
	for i in $(seq 500); do
		# shellcheck disable=SC2254
		case $(readlink "/proc/$1/exe" 2>/dev/null) in $2) return ;; esac
		sleep 0.01
	done
	pid=
}

# start CASE [ARGS]: the workload's pid in $pid, running with ARGS (default
# 10: seconds, a bound for the runs that kill it), however the case runs it
start() {
	local c=$1 args=${2:-10} i
	pid=
	case $c in
	container)
		mkdir -p "$work/ct"
		unshare --mount --pid --fork --propagation private sh -c \
			"mount -t tmpfs ct '$work/ct' && cp '$work/burner' '$work/ct/burner' && exec '$work/ct/burner' $args" &
		pids+=($!)
		for i in $(seq 500); do
			pid=$(pgrep -P "$!" -x burner) && break
			sleep 0.01
		done
		;;
	deleted)
		mkdir -p "$work/del"
		cp "$work/burner" "$work/del/burner"
		"$work/del/burner" $args &
		pid=$!
		pids+=($pid)
		exec_wait "$pid" "$work/del/burner"
		rm "$work/del/burner"
		;;
	space)
		mkdir -p "$work/odd dir"
		cp "$work/burner" "$work/odd dir/burn er"
		"$work/odd dir/burn er" $args &
		pid=$!
		pids+=($pid)
		exec_wait "$pid" "$work/odd dir/burn er"
		;;
	memfd)
		"$work/memfd-exec" "$work/burner" burner $args &
		pid=$!
		pids+=($pid)
		exec_wait "$pid" "/memfd:burner*"
		;;
	esac
}

check_case() {
	local c=$1 d=$work/$1 home=$work/$1/home a_share reason
	mkdir -p "$d" "$home"
	if [ "$c" = deleted ]; then
		# perf's buildid.dir setting moves the cache (perf record honours it, and so must we)
		printf '[buildid]\n\tdir = %s\n' "$d/cache" >"$home/.perfconfig"
	fi
	# the workload exits during the run (which then ends): the files are
	# copied from the descriptors held since its first sample, after the
	# process, its mount namespace (tmpfs), the deleted file or memfd are gone.
	# It spends 0.5 s of CPU time (--cpu), so that the run has its samples
	# whatever the load; -d 10 is a bound.
	start "$c" "0.5 --cpu"
	if [ -z "$pid" ]; then
		fail "$c: start the workload"
		return
	fi
	# held until bpfprof samples: its start (the sanitizer build's, beside
	# other scripts) can outlast the workload's 0.5 s
	kill -STOP "$pid"
	HOME=$home "$BPFPROF" -v -F 999 -p "$pid" -d 10 -o "$d/out.data" -o "$d/out.prof" >"$d/log" 2>&1 &
	local bp=$!
	wait_sampling $bp
	kill -CONT "$pid"
	wait $bp || fail "$c: bpfprof exits 0" "$(tail -5 "$d/log")"
	grep -q 'every target process has exited' "$d/log" || fail "$c: the workload exits before the run ends"
	kill "$pid" 2>/dev/null
	wait 2>/dev/null
	pids=()
	[ "$c" = container ] && [ -e "$work/ct/burner" ] && fail "$c: the tmpfs is gone with the namespace"
	[ "$c" = space ] && rm -rf "$work/odd dir"

	HOME=$home perf report -i "$d/out.data" --no-children --sort sym --stdio >"$d/report" 2>"$d/report.err"
	a_share=$(awk '$1 ~ /%$/ { sub("%", "", $1); print $1, $3 }' "$d/report" | share)
	if grep -q '\] hot_a' "$d/report" && grep -q '\] hot_b' "$d/report" && near "$a_share" 75 "$(prof_tol "$d/log")" &&
		! grep -q . "$d/report.err"; then
		ok "$c: perf report (HOME without anything else) names hot_a/hot_b, hot_a share $a_share %, stderr clean"
	else
		fail "$c: perf report names hot_a/hot_b at 75 %" "share: $a_share" "$(grep -v '^#' "$d/report" | head -6)" \
			"$(head -5 "$d/report.err")" "$(find "$home" "$d/cache" 2>/dev/null | head -20)"
	fi
	if [ "$c" = deleted ]; then
		[ -L "$d/cache/.build-id/${id:0:2}/${id:2}" ] && [ -f "$d/cache/.build-id/${id:0:2}/${id:2}/elf" ] &&
			[ ! -e "$home/.debug" ] &&
			ok "$c: cache in perf's buildid.dir ($d/cache), .build-id/xx/rest -> <path>/<id>/elf" ||
			fail "$c: cache in buildid.dir" "$(find "$home" "$d/cache" | head -20)"
	fi

	go tool pprof -top "$d/out.prof" >"$d/top" 2>"$d/top.err"
	a_share=$(awk '$6 == "hot_a" || $6 == "hot_b" { sub("%", "", $2); print $2, $6 }' "$d/top" | share)
	if grep -q ' hot_a$' "$d/top" && grep -q ' hot_b$' "$d/top" && near "$a_share" 75 "$(prof_tol "$d/log")" &&
		clean_err "$d/top.err"; then
		ok "$c: go tool pprof -top names hot_a/hot_b, hot_a share $a_share %, stderr clean"
	else
		fail "$c: go tool pprof names hot_a/hot_b at 75 %" "share: $a_share" "$(head -8 "$d/top")" \
			"$(head -5 "$d/top.err")" "$(grep burn "$d/out.prof" | head -3)"
	fi
	# names the maps text gives: no space inside, each an existing file
	if strings "$d/out.prof" | awk '$2 ~ /x/ && NF > 6' | grep -q .; then
		fail "$c: maps text: one file name per line" "$(strings "$d/out.prof" | awk '$2 ~ /x/ && NF > 6')"
	fi
}

for c in container deleted space memfd; do
	check_case $c
done

# Item 5: a stripped workload whose functions only its separate debug file
# names (found by .gnu_debuglink in DIR/.debug/). The debug file reaches
# perf's build-id cache as the entry's "debug" and the .prof's directory as
# the file its maps text names; the binary and the debug file are gone
# before the readers run, and the files also work moved "to another
# machine": perf archive's tarball unpacked into a fresh HOME, and the .prof
# directory moved and named by PPROF_BINARY_PATH, as docs/SYMBOLS.md says.
d=$work/debug
mkdir -p "$d/home" "$d/bin/.debug" "$d/elsewhere/home/.debug"
cp "$work/burner" "$d/bin/stripped"
objcopy --only-keep-debug "$d/bin/stripped" "$d/bin/.debug/stripped.debug" &&
	strip --strip-all "$d/bin/stripped" &&
	objcopy --add-gnu-debuglink="$d/bin/.debug/stripped.debug" "$d/bin/stripped" ||
	fail "debug: strip the workload"
if nm "$d/bin/stripped" 2>/dev/null | grep -q hot_a || nm -D "$d/bin/stripped" 2>/dev/null | grep -q hot_a; then
	fail "debug: hot_a must be named only by the debug file"
fi
# the workload runs on through the run (10 s is a bound) and is killed right after
"$d/bin/stripped" 10 &
pid=$!
pids+=($pid)
exec_wait "$pid" "$d/bin/stripped"
HOME=$d/home "$BPFPROF" -F 999 -p "$pid" -d 0.5 -o "$d/out.data" -o "$d/out.prof" >"$d/log" 2>&1 ||
	fail "debug: bpfprof exits 0" "$(tail -5 "$d/log")"
kill "$pid" 2>/dev/null
wait 2>/dev/null
pids=()
rm -rf "$d/bin"
[ -f "$d/home/.debug/.build-id/${id:0:2}/${id:2}/debug" ] &&
	ok "debug: the debug file is the cache entry's 'debug' (.build-id/${id:0:2}/${id:2}/debug)" ||
	fail "debug: no 'debug' in the cache entry" "$(find "$d/home" | head -20)"
HOME=$d/home perf report -i "$d/out.data" --no-children --sort sym --stdio >"$d/report" 2>"$d/report.err"
a_share=$(awk '$1 ~ /%$/ { sub("%", "", $1); print $1, $3 }' "$d/report" | share)
grep -q '\] hot_b' "$d/report" && near "$a_share" 75 "$(prof_tol "$d/log")" && ! grep -q . "$d/report.err" &&
	ok "debug: perf report names hot_a/hot_b from the cached debug file, hot_a share $a_share %" ||
	fail "debug: perf report from the cached debug file" "share: $a_share" "$(grep -v '^#' "$d/report" | head -5)" \
		"$(head -3 "$d/report.err")"
(cd "$d" && HOME=$d/home perf archive out.data >/dev/null 2>&1) &&
	tar xjf "$d/out.data.tar.bz2" -C "$d/elsewhere/home/.debug" 2>/dev/null
HOME=$d/elsewhere/home perf report -i "$d/out.data" --no-children --sort sym --stdio >"$d/report2" 2>"$d/report2.err"
a_share=$(awk '$1 ~ /%$/ { sub("%", "", $1); print $1, $3 }' "$d/report2" | share)
grep -q '\] hot_b' "$d/report2" && near "$a_share" 75 "$(prof_tol "$d/log")" && ! grep -q . "$d/report2.err" &&
	ok "debug: perf archive + tar xjf into another HOME: perf report names hot_a/hot_b, hot_a share $a_share %" ||
	fail "debug: perf archive elsewhere" "share: $a_share" "$(grep -v '^#' "$d/report2" | head -5)" \
		"$(head -3 "$d/report2.err")"
go tool pprof -top "$d/out.prof" >"$d/top" 2>"$d/top.err"
a_share=$(awk '$6 == "hot_a" || $6 == "hot_b" { sub("%", "", $2); print $2, $6 }' "$d/top" | share)
grep -q ' hot_b$' "$d/top" && near "$a_share" 75 "$(prof_tol "$d/log")" && clean_err "$d/top.err" &&
	ok "debug: go tool pprof names hot_a/hot_b from the debug file's copy in out.prof.bin/, hot_a share $a_share %" ||
	fail "debug: go tool pprof from out.prof.bin" "share: $a_share" "$(head -8 "$d/top")" "$(head -3 "$d/top.err")"
mv "$d/out.prof.bin" "$d/elsewhere/bin"
PPROF_BINARY_PATH=$d/elsewhere/bin go tool pprof -top "$d/out.prof" >"$d/top2" 2>"$d/top2.err"
a_share=$(awk '$6 == "hot_a" || $6 == "hot_b" { sub("%", "", $2); print $2, $6 }' "$d/top2" | share)
grep -q ' hot_b$' "$d/top2" && near "$a_share" 75 "$(prof_tol "$d/log")" && clean_err "$d/top2.err" &&
	ok "debug: the directory moved, PPROF_BINARY_PATH=it go tool pprof names hot_a/hot_b, hot_a share $a_share %" ||
	fail "debug: PPROF_BINARY_PATH" "share: $a_share" "$(head -8 "$d/top2")" "$(head -3 "$d/top2.err")"

# The same with the debug file fetched by debuginfod (a file:// server:
# DIR/buildid/<id>/debuginfo) into the client's cache, the stripped binary
# carrying no debug link: the fetched file reaches both readers.
d=$work/debuginfod
mkdir -p "$d/home" "$d/bin" "$d/srv/buildid/$id" "$d/elsewhere"
cp "$work/burner" "$d/bin/stripped"
objcopy --only-keep-debug "$d/bin/stripped" "$d/srv/buildid/$id/debuginfo" && strip --strip-all "$d/bin/stripped" ||
	fail "debuginfod: strip the workload"
"$d/bin/stripped" 10 &
pid=$!
pids+=($pid)
exec_wait "$pid" "$d/bin/stripped"
HOME=$d/home DEBUGINFOD_URLS="file://$d/srv" DEBUGINFOD_CACHE_PATH=$d/dcache \
	"$BPFPROF" -F 999 -p "$pid" -d 0.5 -o "$d/out.data" -o "$d/out.prof" >"$d/log" 2>&1 ||
	fail "debuginfod: bpfprof exits 0" "$(tail -5 "$d/log")"
kill "$pid" 2>/dev/null
wait 2>/dev/null
pids=()
rm -rf "$d/bin" "$d/srv" "$d/dcache"
HOME=$d/home perf report -i "$d/out.data" --no-children --sort sym --stdio >"$d/report" 2>"$d/report.err"
a_share=$(awk '$1 ~ /%$/ { sub("%", "", $1); print $1, $3 }' "$d/report" | share)
[ -f "$d/home/.debug/.build-id/${id:0:2}/${id:2}/debug" ] && grep -q '\] hot_b' "$d/report" &&
	near "$a_share" 75 "$(prof_tol "$d/log")" && ! grep -q . "$d/report.err" &&
	ok "debuginfod: the fetched debug file in the cache entry; perf report names hot_a/hot_b, hot_a share $a_share %" ||
	fail "debuginfod: perf report from the fetched debug file" "share: $a_share" \
		"$(grep -v '^#' "$d/report" | head -5)" "$(head -3 "$d/report.err")" "$(tail -4 "$d/log")"
mv "$d/out.prof.bin" "$d/elsewhere/bin"
PPROF_BINARY_PATH=$d/elsewhere/bin go tool pprof -top "$d/out.prof" >"$d/top" 2>"$d/top.err"
a_share=$(awk '$6 == "hot_a" || $6 == "hot_b" { sub("%", "", $2); print $2, $6 }' "$d/top" | share)
grep -q ' hot_b$' "$d/top" && near "$a_share" 75 "$(prof_tol "$d/log")" && clean_err "$d/top.err" &&
	ok "debuginfod: the fetched debug file beside the .prof, moved: PPROF_BINARY_PATH go tool pprof names hot_a/hot_b, hot_a share $a_share %" ||
	fail "debuginfod: go tool pprof with the fetched debug file" "share: $a_share" "$(head -8 "$d/top")" "$(head -3 "$d/top.err")"

# --no-buildid-cache: nothing written under HOME
d=$work/nocache
mkdir -p "$d/home"
start deleted
HOME=$d/home "$BPFPROF" --no-buildid-cache -F 999 -p "$pid" -d 0.3 -o "$d/out.data" >"$d/log" 2>&1
rc=$?
kill "$pid" 2>/dev/null
wait 2>/dev/null
pids=()
[ $rc -eq 0 ] && [ -s "$d/out.data" ] && [ -z "$(ls -A "$d/home")" ] &&
	ok "--no-buildid-cache: perf.data written, the build-id cache left alone" ||
	fail "--no-buildid-cache leaves the build-id cache alone" "rc=$rc" "$(tail -3 "$d/log")" "$(find "$d/home" | head)"

# The locations named while sampling (-p: a pass every 200 ms from 1 s in),
# the workload's file deleted and the workload gone before the run ends:
# the names the passes gave from its pinned file are the end's (hot_a and
# hot_b at 75 % in go tool pprof, as the cases above).
d=$work/ahead
mkdir -p "$d/home"
start deleted "1.8 --cpu"
HOME=$d/home "$BPFPROF" -vv -F 999 -p "$pid" -d 10 -o "$d/out.prof" >"$d/log" 2>&1
rc=$?
kill "$pid" 2>/dev/null
wait 2>/dev/null
pids=()
named=$(sed -n 's/.*symbolizing: \([0-9]*\) of [0-9]* locations named by [0-9]* passes while sampling.*/\1/p' "$d/log")
go tool pprof -top "$d/out.prof" >"$d/top" 2>"$d/top.err"
a_share=$(awk '$6 == "hot_a" || $6 == "hot_b" { sub("%", "", $2); print $2, $6 }' "$d/top" | share)
[ $rc -eq 0 ] && [ "${named:-0}" -gt 0 ] && grep -q 'every target process has exited' "$d/log" &&
	grep -q ' hot_b$' "$d/top" && near "$a_share" 75 "$(prof_tol "$d/log")" &&
	ok "passes while sampling: $named locations named before the workload and its deleted file were gone; go tool pprof: hot_a share $a_share %" ||
	fail "passes while sampling, the workload gone" "rc=$rc named=$named share=$a_share" "$(grep -E 'symboliz|exited' "$d/log")" "$(head -8 "$d/top")"

# -a: the memfd workload system-wide; pprof must not try to open "/memfd:...".
# The workload runs in a cgroup of this script's own whose samples alone the
# run keeps (--cgroup), where cgroup2 is mounted: pprof symbolizes every
# mapping of a .prof, and other processes (the sanitizer build of bpfprof of
# a script beside this one, with its DWARF) cost it 6 CPU-s.
d=$work/all
mkdir -p "$d/home"
cg2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
[ -n "$cg2" ] && mkdir "$cg2/bpfprof-gone.$$" 2>/dev/null && cg=$cg2/bpfprof-gone.$$
start memfd
[ -n "$cg" ] && [ -n "$pid" ] && echo "$pid" >"$cg/cgroup.procs"
HOME=$d/home "$BPFPROF" -a ${cg:+--cgroup "$cg"} -F 999 -d 0.5 -o "$d/all.prof" >"$d/log" 2>&1 ||
	fail "-a: bpfprof exits 0" "$(tail -3 "$d/log")"
kill "$pid" 2>/dev/null
wait 2>/dev/null
pids=()
go tool pprof -top "$d/all.prof" >"$d/top" 2>"$d/top.err"
# -raw: hot_a inside this workload's own mapping (its file named by its
# build-id, memfd:burner-ID), not another process's hot_a
go tool pprof -raw "$d/all.prof" >"$d/raw" 2>/dev/null
mid=$(awk -v f="/memfd:burner-${id:0:12}" '/^Mappings/ { m = 1; next } m && index($0, f) { sub(":", "", $1); print $1; exit }' "$d/raw")
if ! grep -q 'Local symbolization failed for memfd' "$d/top.err" && grep -q ' hot_a$' "$d/top" &&
	[ -n "$mid" ] && grep -qE "M=$mid hot_a " "$d/raw"; then
	ok "-a: go tool pprof names the memfd workload's hot_a (in its memfd:burner-${id:0:12}), no 'Local symbolization failed for memfd:'"
else
	fail "-a: no memfd symbolization warning, hot_a in the memfd mapping" "$(grep -i memfd "$d/top.err" | head -3)" \
		"$(head -8 "$d/top")" "$(grep -A30 '^Mappings' "$d/raw" | grep -i memfd)"
fi

# A process whose samples are read after it exited and its cgroup was
# removed (a container that ran one job; a reader behind a backlog): its
# samples keep the cgroup label of the cgroup they were taken in (issue 24,
# fault 3). bpfprof is held stopped (SIGSTOP) while the workload, in a cgroup
# made before the run, spins, is reaped and the cgroup removed; then it reads
# the queued records. The label comes from the records' cgroup id (learnt
# while the cgroup existed), not from /proc/PID/cgroup, gone by then.
d=$work/cgroup
mkdir -p "$d"
if [ -z "$cg" ] || ! mkdir "$cg/job"; then
	skip "-a: a gone process in a removed cgroup keeps its cgroup label" "cannot create a cgroup under '$cg2'"
else
	"$work/burner" 10 >/dev/null &
	w=$!
	kill -STOP $w
	echo $w >"$cg/job/cgroup.procs"
	"$BPFPROF" -a --cgroup "$cg" -F 999 -d 20 -o "$d/cg.pb.gz" >"$d/log" 2>&1 &
	bp=$!
	wait_sampling $bp perf_event && sleep 0.2
	kill -STOP $bp
	spin $w 300
	kill -KILL $w
	wait $w 2>/dev/null
	rmdir "$cg/job"
	kill -CONT $bp
	sleep 0.2
	kill -INT $bp
	wait $bp
	rc=$?
	# per label key, the samples that carry it ("comm: Total N"), then "N (P%): VALUE" lines
	go tool pprof -sample_index=samples -tags "$d/cg.pb.gz" >"$d/tags" 2>"$d/tags.err"
	total=$(awk '$1 == "comm:" { print $3 + 0 }' "$d/tags")
	labelled=$(awk -v v="/${cg#"$cg2"/}/job" '/^ *[a-z_]+: Total/ { t = $1 == "cgroup:"; next }
		t && $NF == v { n += $1 } END { print n + 0 }' "$d/tags")
	if [ $rc -eq 0 ] && [ "${total:-0}" -ge 50 ] && [ "$labelled" = "$total" ]; then
		ok "-a: a gone process in a removed cgroup keeps its cgroup label: $labelled of $total samples"
	else
		fail "-a: a gone process in a removed cgroup keeps its cgroup label: rc=$rc, $labelled of $total samples" \
			"$(cat "$d/tags")" "$(tail -3 "$d/log")"
	fi
fi

# A deploy (issue 24): the binary is rebuilt and renamed over its path while
# its process runs, and a new process starts from the new file. The two
# builds differ in build-id and layout: the new one starts with 8 KiB of
# deploy_pad, where the old one has old_hot and main, so the old process's
# addresses read in the new file would be named deploy_pad. Both run in the
# script's cgroup under one -a --cgroup run; the old process is sampled
# before the deploy (its file pinned then) and after it, the new one after.
# The readers run after both files are gone: bpfprof's own names (the
# .pb.gz, per pid label), perf script (HOME holding only the build-id cache
# bpfprof filled: each process's file by its own build-id) and perf
# buildid-list (both build-ids, the new file as 'svc (inode N)': perf 6.1
# matches that section to its DSOs by name alone; before, the old process
# was named deploy_pad from the new build and the new one [unknown]).
d=$work/deploy
mkdir -p "$d/home" "$d/app"
cat >"$d/deploy.c" <<'EOF'
static volatile unsigned long sink;
#define SPIN(name) __attribute__((noinline)) void name(void) { unsigned long x = sink; \
	for (unsigned long i = 0; i < 20000; i++) x = x * 6364136223846793005UL + 1442695040888963407UL; \
	sink = x; }
#ifdef NEW
/* first in .text: the old build's old_hot and main lie where this lies in the new one */
__attribute__((noinline)) void deploy_pad(void) { __asm__ volatile(".fill 8192, 1, 0x90"); }
SPIN(new_hot)
#define HOT new_hot
#else
SPIN(old_hot)
#define HOT old_hot
#endif
int main(void)
{
	for (;;)
		HOT();
}
EOF
ido=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
idn=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
if [ -z "$cg" ]; then
	skip "deploy: a binary replaced at its path while its process runs" "no cgroup of this script's own under '$cg2'"
elif ! gcc -O1 -g -fno-omit-frame-pointer -fno-inline -Wl,--build-id=0x$ido -o "$d/old" "$d/deploy.c" ||
	! gcc -O1 -g -DNEW -fno-omit-frame-pointer -fno-inline -Wl,--build-id=0x$idn -o "$d/new" "$d/deploy.c"; then
	fail "deploy: build the two versions"
elif [ "$(addr2line -f -e "$d/new" "0x$(nm "$d/old" | awk '$3 == "old_hot" { print $1 }')" | head -1)" != deploy_pad ]; then
	fail "deploy: old_hot's address must lie in deploy_pad in the new build" "$(nm "$d/old" "$d/new" | grep ' T ')"
else
	cp "$d/old" "$d/app/svc"
	"$d/app/svc" &
	a=$!
	pids+=($a)
	kill -STOP $a
	echo $a >"$cg/cgroup.procs"
	HOME=$d/home "$BPFPROF" -a --cgroup "$cg" -F 999 -d 60 -o "$d/out.data" -o "$d/out.pb.gz" \
		-o "$d/out.prof" >"$d/log" 2>&1 &
	bp=$!
	wait_sampling $bp perf_event && sleep 0.2
	spin $a 150
	# the deploy: the new build renamed over the path (the old process's maps say 'svc (deleted)')
	cp "$d/new" "$d/app/.svc.new" && mv "$d/app/.svc.new" "$d/app/svc"
	"$d/app/svc" &
	b=$!
	pids+=($b)
	kill -STOP $b
	echo $b >"$cg/cgroup.procs"
	spin $b 300
	spin $a 150
	kill -INT $bp
	wait $bp
	rc=$?
	kill -KILL $a $b
	wait $a $b 2>/dev/null
	pids=()
	# .prof (read while the new build is at its path, which the .prof names; the old
	# one is copied beside it): no pid, each build's function from its own file
	go tool pprof -top "$d/out.prof" >"$d/top" 2>"$d/top.err"
	read -r po pn pp <<<"$(awk '$6 == "old_hot" { o = $1 } $6 == "new_hot" { n = $1 } $6 == "deploy_pad" { p = $1 }
		END { printf "%d %d %d\n", o, n, p }' "$d/top")"
	# flat ms at 999 Hz: about one per sample
	if [ "$po" -ge 100 ] && [ "$pn" -ge 100 ] && [ "$pp" -eq 0 ] && clean_err "$d/top.err"; then
		ok "deploy (.prof, go tool pprof): old_hot $po ms, new_hot $pn ms, deploy_pad none"
	else
		fail "deploy (.prof, go tool pprof): old_hot $po ms, new_hot $pn ms, deploy_pad $pp ms" \
			"$(head -10 "$d/top")" "$(head -3 "$d/top.err")"
	fi
	rm -rf "$d/app" "$d/old" "$d/new"
	# "PID FUNCTION COUNT" for every function of each sample's stack
	go tool pprof -sample_index=samples -traces "$d/out.pb.gz" 2>"$d/traces.err" |
		awk '/^-----/ { p = ""; n = 0; next } $1 == "pid:" { p = $2; next }
			p != "" && NF == 2 && $1 ~ /^[0-9]+$/ { n = $1; f[p " " $2] += n; next }
			p != "" && NF == 1 { f[p " " $1] += n } END { for (k in f) print k, f[k] }' >"$d/pprof.txt"
	# perf script: "PID FUNCTION" of each sample's user leaf, then counted
	HOME=$d/home perf script -i "$d/out.data" -F pid,ip,sym,dso 2>"$d/script.err" |
		awk 'NF == 0 { n = 0; next } { n++ } n == 1 { p = $1; leaf = ""; next }
			leaf == "" && $0 !~ /kernel\.kallsyms/ { leaf = $2; print p, leaf }' |
		sort | uniq -c | awk '{ print $2, $3, $1 }' >"$d/perf.txt"
	HOME=$d/home perf buildid-list -i "$d/out.data" >"$d/ids" 2>&1
	for r in pprof perf; do
		read -r ao ab an bn bo bb <<<"$(awk -v a=$a -v b=$b '
			{ k[$1 " " $2] = $3 } END { printf "%d %d %d %d %d %d\n", k[a " old_hot"], k[a " deploy_pad"],
				k[a " new_hot"], k[b " new_hot"], k[b " old_hot"], k[b " deploy_pad"] }' "$d/$r.txt")"
		# each spun 300 ms at 999 Hz: at least 100 samples each in its own build's function, none in the other's
		if [ $rc -eq 0 ] && [ "$ao" -ge 100 ] && [ "$bn" -ge 100 ] && [ $((ab + an + bo + bb)) -eq 0 ]; then
			ok "deploy ($r): the old process $ao samples in old_hot (its old build), the new one $bn in new_hot, none crossed"
		else
			fail "deploy ($r): rc=$rc; old process: old_hot $ao, deploy_pad $ab, new_hot $an; new process: new_hot $bn, old_hot $bo, deploy_pad $bb" \
				"$(sort -k3nr "$d/$r.txt" | head -6)" "$(tail -3 "$d/log")" "$(head -3 "$d/script.err")"
		fi
	done
	# the two files at one path under two names (perf matches the section's build-ids by name):
	# the first seen keeps the path, the other is 'PATH (inode N)', or the old
	# one 'PATH (deleted)' where its maps were read after the rename (either
	# process may be seen first)
	no=$(awk -v id="$ido" '$1 == id { $1 = ""; print substr($0, 2); exit }' "$d/ids")
	nn=$(awk -v id="$idn" '$1 == id { $1 = ""; print substr($0, 2); exit }' "$d/ids")
	if [[ $no == */app/svc* ]] && [[ $nn == */app/svc* ]] && [ "$no" != "$nn" ]; then
		ok "deploy: perf buildid-list has both builds: $(grep -o '/app/svc.*' "$d/ids" | paste -sd,)"
	else
		fail "deploy: perf buildid-list has both builds ($ido, $idn)" "$(cat "$d/ids")"
	fi
fi

finish

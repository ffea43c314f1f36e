#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Benchmark 4 (issue 8): finalize latency, the time from the end of sampling
# to all outputs written, with a large shared library in the stacks: clang++
# (clang 14: libLLVM-14.so.1, 110 MB, and libclang-cpp) compiling a
# template-heavy C++ file, profiled as `bpfprof -F 999 -- COMMAND` writing all
# five formats (.prof .pb.gz .folded .svg perf.data). The command is run by
# bench/runstat, which notes the time it exited; the outer runstat notes when
# bpfprof exited. References, timed on the same compile: `perf report
# --stdio` on the perf.data of `perf record -g -F 999 -- COMMAND`, and
# `go tool pprof -top` on bpfprof's .prof. perf record's own time after the
# command exits (it post-processes build-ids) is printed too. RUNS rounds,
# medians. Goal: at least 5 times faster than perf report.
set -euo pipefail
. "$(dirname "$0")/lib.bash"

RUNS=${RUNS:-3}
DEPTH=${DEPTH:-12}	# template depth of the compiled file: about 3 s of clang
if [ "$QUICK" = 1 ]; then
	RUNS=1 DEPTH=5
fi
CXX=${CXX:-$(command -v clang++-14 || command -v clang++)}
GO=${GO:-$(command -v go || echo /usr/lib/go/bin/go)}

cat >"$work/fin.cc" <<SRC
#include <algorithm>
#include <functional>
#include <iostream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>
template <int N> struct W {
	std::map<std::string, std::vector<W<N - 1>>> m;
	std::unordered_map<int, std::function<int(int)>> f;
	int run(const std::string &s) {
		std::regex r("([a-z]+)" + std::to_string(N));
		std::smatch sm;
		int n = std::regex_search(s, sm, r) ? (int)sm.size() : 0;
		for (auto &kv : m)
			for (auto &w : kv.second)
				n += w.run(kv.first);
		std::vector<int> v(n + 3);
		std::sort(v.begin(), v.end(), std::greater<int>());
		std::ostringstream os;
		os << n << s;
		return n + (int)os.str().size() + v[0];
	}
};
template <> struct W<0> {
	int run(const std::string &s) { return (int)s.size(); }
};
int main(int argc, char **argv) { W<$DEPTH> w; std::cout << w.run(argv[0]) << "\n"; }
SRC
compile=("$CXX" -O2 -c "$work/fin.cc" -o "$work/fin.o")

fin=() rep=() ppr=() prec=()
for ((r = 1; r <= RUNS; r++)); do
	"$RUNSTAT" -o "$work/b.$r.rs" -- "$BPFPROF" -F 999 -o "$work/b.prof" -o "$work/b.pb.gz" \
		-o "$work/b.folded" -o "$work/b.svg" -o "$work/b.data" \
		-- "$RUNSTAT" -o "$work/bi.$r.rs" -- "${compile[@]}" 2>"$work/b.$r.err"
	fin+=("$(calc "$(field "$work/b.$r.rs" end_rt) - $(field "$work/bi.$r.rs" end_rt)")")

	"$RUNSTAT" -o "$work/p.$r.rs" -- "$PERF" record -g -F 999 -o "$work/p.data" \
		-- "$RUNSTAT" -o "$work/pi.$r.rs" -- "${compile[@]}" 2>"$work/p.$r.err"
	prec+=("$(calc "$(field "$work/p.$r.rs" end_rt) - $(field "$work/pi.$r.rs" end_rt)")")
	"$RUNSTAT" -o "$work/rep.$r.rs" -- "$PERF" report --stdio -i "$work/p.data" >"$work/report.txt" 2>"$work/rep.$r.err"
	rep+=("$(field "$work/rep.$r.rs" wall_s)")

	"$RUNSTAT" -o "$work/pp.$r.rs" -- "$GO" tool pprof -top "$work/b.prof" >"$work/pprof.txt" 2>"$work/pp.$r.err"
	ppr+=("$(field "$work/pp.$r.rs" wall_s)")
	echo "round $r: bpfprof finalize ${fin[-1]} s, perf record after exit ${prec[-1]} s, perf report ${rep[-1]} s, pprof -top ${ppr[-1]} s" >&2
done
f=$(median "${fin[@]}")
p=$(median "${rep[@]}")
g=$(median "${ppr[@]}")
echo "compile: $(field "$work/bi.$RUNS.rs" wall_s) s wall under bpfprof, $(bpfprof_samples "$work/b.$RUNS.err") samples; $(perf_samples "$work/p.$RUNS.err") samples under perf record"
echo "bpfprof finalize per round: ${fin[*]} s (5 outputs: $(cd "$work" && ls -s --block-size=K b.prof b.pb.gz b.folded b.svg b.data | tr '\n' ' '))"
echo "perf report --stdio per round: ${rep[*]} s ($(wc -l <"$work/report.txt") lines); perf record after the command: ${prec[*]} s"
echo "go tool pprof -top per round: ${ppr[*]} s"
echo "bpfprof top functions:"; sed -n '/self%/,+5p' "$work/b.$RUNS.err"
result "finalize latency (clang++, libLLVM; 5 outputs)" "bpfprof $(calc "$f * 1000") ms" "perf report --stdio $(calc "$p * 1000") ms" \
	"$(calc "$p / $f")x faster" ">= 5x faster than perf report" "$(verdict "$(calc "$p / $f")" ">=" 5)"
result "finalize vs go tool pprof -top on the .prof" "bpfprof $(calc "$f * 1000") ms" "pprof -top $(calc "$g * 1000") ms" \
	"$(calc "$g / $f")x faster" "-" "info"

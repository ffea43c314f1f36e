#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Demo: profile the bundled workload (hot_a 75 %, hot_b 25 %) for 3 s at
# 999 Hz, print bpfprof's summary, then read the profile with go tool pprof.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
mkdir -p demo
sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)
echo "\$ sudo ./bpfprof -F 999 -o demo/hotcold.prof -- .output/workload/hotcold 3"
"${sudo[@]}" ./bpfprof -F 999 -o demo/hotcold.prof -- .output/workload/hotcold 3
echo
echo "\$ go tool pprof -top demo/hotcold.prof"
"${sudo[@]}" go tool pprof -top demo/hotcold.prof 2>/dev/null | head -14

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install the Debian 12 packages that building, the demo and the tests need,
# only those that are missing (so a ready machine pays nothing). Runs apt-get
# as root, or through sudo.
set -euo pipefail

pkgs=(
	# build
	make gcc pkg-config clang llvm bpftool libbpf-dev libelf-dev libdw-dev zlib1g-dev
	libprotobuf-c-dev protobuf-c-compiler libcurl4-openssl-dev
	# build: MiniDebugInfo (.gnu_debugdata is xz) and debuginfod's client
	liblzma-dev libdebuginfod-dev
	# build: the demangler (user/symbolize/demangle.c; a static libiberty.a)
	libiberty-dev
	# build: the pprof output's gzip (user/write/write_pprof.c: half zlib's CPU)
	libdeflate-dev
	# tests: unit tests, and the real readers the integration tests use
	libcmocka-dev golang-go google-perftools binutils util-linux procps
	linux-perf llvm libclang-rt-14-dev chromium libxml2-utils strace
	# tests: the C++ and Rust workloads of tests/integration/names.sh
	g++ rustc
	# tests: clang-14 with GNU gold (binutils' ld.gold), which type .eh_frame
	# SHT_X86_64_UNWIND (tests/integration/unwind.sh)
	clang-14
	# tests: the memcheck run, and the peak RSS of the churn test
	valgrind time
	# make format: .clang-format's style
	clang-format
	# tests: the --push receiver (tests/integration/pyroscope_receiver.py), its TLS
	# certificate, the man page check of make install
	python3 openssl man-db
	# tests: a real debuginfod server, xz for MiniDebugInfo and the liblzma workload
	debuginfod xz-utils curl
	# tests: a running JVM asked for its perf map (tests/integration/jitlive.sh)
	openjdk-17-jdk-headless
	# tests: the kernel matrix (tests/kernels/): Debian's kernels booted under
	# QEMU with an initramfs of static busybox, their packages fetched by apt,
	# their xz or zstd payload unpacked to boot without the decompressor
	qemu-system-x86 busybox-static cpio debian-archive-keyring zstd
)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing+=("$p")
done
# node and npm (pprof-format decoder test) may come from another repository
# than Debian's: ask for Debian's only when the commands are missing
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)
if [ ${#missing[@]} -gt 0 ]; then
	echo "install-deps: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	"${sudo[@]}" apt-get update -qq
	"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# tests: node 18, 22 and 24 beside the system's (tests/integration/node.sh),
# into a cache outside the repository, once; never a failure (no registry: skipped)
"${sudo[@]}" "$(dirname "$0")/fetch-node.sh" || true

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# fetch.sh [NAME...]: the kernels of tests/kernels/kernels.list (default: all),
# downloaded from Debian's mirror without installing them, into a cache that
# keeps only what QEMU boots: CACHE/<uname -r>_<version>/{vmlinuz,config}.
# A kernel already there costs nothing: when every kernel asked for is
# cached, nothing is downloaded, not even apt's lists. Prints "NAME DIR" on
# stdout for each kernel ready; diagnostics go to stderr.
#
# CACHE: $BPFPROF_KERNEL_CACHE, default /var/cache/bpfprof/kernels (or
# ~/.cache/bpfprof/kernels for a user who cannot write there). Several runs
# at once (two worktrees' make test) share it under a lock.
# MIRROR, SECURITY_MIRROR: the Debian archive and its security archive
# (default: the mirror this host's apt uses, and .../debian-security there).
# A pin gone from the mirror is still on snapshot.debian.org, e.g.
#   MIRROR=http://snapshot.debian.org/archive/debian/20260101T000000Z
#   SECURITY_MIRROR=http://snapshot.debian.org/archive/debian-security/20260101T000000Z
#
# Exit status: 0 when every kernel asked for is ready, 3 when some are not
# because the network is missing, 1 on any other failure (a pin left the
# mirror, a package without a kernel in it).
#
# How: apt-get download through a private
# apt state (sources, lists, cache in a temporary directory; the host's apt
# and dpkg state are neither read nor changed), then only /boot (up to 6.x)
# or usr/lib/modules/<ver>/{vmlinuz,config} (7.x) unpacked.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
list=$here/kernels.list

cache=${BPFPROF_KERNEL_CACHE:-/var/cache/bpfprof/kernels}
if [ -z "${BPFPROF_KERNEL_CACHE:-}" ] && ! mkdir -p "$cache" 2>/dev/null; then
	cache=${XDG_CACHE_HOME:-$HOME/.cache}/bpfprof/kernels
fi
mkdir -p "$cache"

# kver PACKAGE: the kernel release a package holds (its uname -r)
kver() {
	local k=${1%%=*}
	k=${k#linux-image-}
	k=${k#linux-binary-}
	k=${k#linux-base-}
	echo "${k%-unsigned}"
}
# entry NAME: "SUITE PKG=VER..." of NAME in kernels.list
entry() { awk -v n="$1" '!/^#/ && $1 == n { $1 = ""; print substr($0, 2) }' "$list"; }
# dir_of PKG=VER: the kernel's folder in the cache
dir_of() { echo "$cache/$(kver "$1")_${1#*=}"; }

names=("$@")
[ ${#names[@]} -gt 0 ] || mapfile -t names < <(awk '!/^#/ && NF { print $1 }' "$list")
for n in "${names[@]}"; do
	[ -n "$(entry "$n")" ] || { echo "fetch.sh: no kernel '$n' in $list" >&2; exit 1; }
done

exec 9>"$cache/.lock"
flock 9

# The kernels not cached yet
missing=()
for n in "${names[@]}"; do
	read -r _ first _ <<<"$(entry "$n")"
	d=$(dir_of "$first")
	if [ -s "$d/vmlinuz" ] && [ -s "$d/config" ]; then
		echo "$n $d"
	else
		missing+=("$n")
	fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

mirror=${MIRROR:-$(grep -rhoE 'https?://[^ ]+/debian/?([[:space:]]|$)' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null |
	head -1 | sed -E 's,/debian/?[[:space:]]*$,/debian,' || true)}
mirror=${mirror:-http://deb.debian.org/debian}
security=${SECURITY_MIRROR:-${mirror%/debian}/debian-security}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -r "$keyring" ] || { echo "fetch.sh: no $keyring (apt-get install debian-archive-keyring)" >&2; exit 1; }

# the private apt state and the downloads: in the cache's file system, so
# that a kernel's folder appears whole (mv) or not at all
tmp=$(mktemp -d "$cache/.fetch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/lists/partial" "$tmp/cache/archives/partial" "$tmp/debs"
for n in "${missing[@]}"; do
	read -r suite _ <<<"$(entry "$n")"
	case $suite in
	*-security) echo "deb [signed-by=$keyring] $security ${suite} main" ;;
	*) echo "deb [signed-by=$keyring] $mirror ${suite} main" ;;
	esac
done | sort -u >"$tmp/sources.list"
apto=(-o Dir::Etc::sourcelist="$tmp/sources.list" -o Dir::Etc::sourceparts=-
	-o Dir::State::Lists="$tmp/lists" -o Dir::Cache="$tmp/cache"
	-o Dir::State::status=/dev/null -o APT::Architecture=amd64
	-o Acquire::Retries=2 -o Acquire::http::Timeout=20)
# snapshot.debian.org serves Release files past their Valid-Until
[[ $mirror$security != *snapshot.debian.org* ]] || apto+=(-o Acquire::Check-Valid-Until=false)

echo "fetch.sh: downloading ${missing[*]} into $cache" >&2
if ! apt-get "${apto[@]}" -q update >"$tmp/update.log" 2>&1 || grep -q '^[WE]: Failed to fetch' "$tmp/update.log"; then
	cat "$tmp/update.log" >&2
	# no route, no name resolution: the network is missing (run.sh skips)
	if grep -qiE 'Temporary failure resolving|Could not resolve|Network is unreachable|Could not connect|Connection timed out|No route to host' \
		"$tmp/update.log"; then
		exit 3
	fi
	exit 1
fi
rc=0
for n in "${missing[@]}"; do
	read -r _ pkgs <<<"$(entry "$n")"
	read -r -a pkgs <<<"$pkgs"
	if ! (cd "$tmp/debs" && apt-get "${apto[@]}" -q download "${pkgs[@]}") >"$tmp/dl.log" 2>&1; then
		cat "$tmp/dl.log" >&2
		grep -q 'was not found' "$tmp/dl.log" &&
			echo "fetch.sh: $n's pin left the mirror: see $list (newest: apt-cache policy ${pkgs[*]%%=*} with a private apt state as here)" >&2
		rc=1
		continue
	fi
	d=$(dir_of "${pkgs[0]}")
	x=$tmp/x.$n
	mkdir -p "$x"
	for p in "${pkgs[@]}"; do
		deb=$(ls "$tmp/debs/${p%%=*}"_*.deb)
		# only the kernel and its config; tar still reads the whole archive
		dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$x" --wildcards --no-anchored 'vmlinuz*' 'config*' 2>/dev/null || true
		rm -f "$deb"
	done
	k=$(kver "${pkgs[0]}")
	mkdir -p "$tmp/d.$n"
	cp "$(ls "$x/boot/vmlinuz-$k" "$x/usr/lib/modules/$k/vmlinuz" 2>/dev/null | head -1)" "$tmp/d.$n/vmlinuz" 2>/dev/null || true
	cp "$(ls "$x/boot/config-$k" "$x/usr/lib/modules/$k/config" 2>/dev/null | head -1)" "$tmp/d.$n/config" 2>/dev/null || true
	rm -rf "$x"
	if [ ! -s "$tmp/d.$n/vmlinuz" ] || [ ! -s "$tmp/d.$n/config" ]; then
		echo "fetch.sh: $n: no vmlinuz or config for $k in ${pkgs[*]}" >&2
		rc=1
		continue
	fi
	grep -q '^CONFIG_DEBUG_INFO_BTF=y' "$tmp/d.$n/config" || echo "fetch.sh: $n: kernel built without BTF" >&2
	rm -rf "$d"
	mv "$tmp/d.$n" "$d"
	echo "fetch.sh: $n: $(du -sh "$d" | cut -f1) in $d" >&2
	echo "$n $d"
done
exit $rc

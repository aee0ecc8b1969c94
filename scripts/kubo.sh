#!/usr/bin/env bash
# Builds Kubo 0.42.0's ipfs from the Go module proxy (nothing else is
# downloaded) into .cache/kubo/ipfs, once, and prints its path. make bench
# times "ipfs add --only-hash" on the same folder as the node's scan, and
# the tests of internal/kubotest run Kubo daemons with it.
#
# --if-built prints the path only when it is already built (and nothing
# otherwise, successfully): make test passes it on without waiting
# minutes for a build.
set -euo pipefail
cd "$(dirname "$0")/.."
out="$PWD/.cache/kubo/ipfs"
if [ -x "$out" ]; then echo "$out"; exit 0; fi
if [ "${1:-}" = "--if-built" ]; then exit 0; fi
mkdir -p "$(dirname "$out")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dir=$(cd "$tmp" && GOFLAGS=-mod=mod go mod download -json github.com/ipfs/kubo@v0.42.0 | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
echo "building Kubo 0.42.0 from $dir (a few minutes, once)" >&2
(cd "$dir" && GOFLAGS=-mod=mod go build -o "$out" ./cmd/ipfs) >&2
echo "$out"

#!/usr/bin/env bash
# Builds the release archives: for linux/amd64, linux/arm64 and linux/arm
# (ARMv7) a static metamesh (CGO_ENABLED=0, -trimpath, the version and
# commit stamped, no build ID), packed with README.md, INSTALL.md and the
# service unit into DIST/metamesh-<version>-linux-<arch>.tar.gz, and
# DIST/SHA256SUMS over the archives. Reproducible: the archives' entries
# are sorted, owned by 0:0 and dated from the commit, and gzip stores no
# name or time, so two runs on one commit give the same sums.
#   scripts/release.sh [DIST]     (default dist; ARCHES="amd64 arm64 arm")
set -euo pipefail
cd "$(dirname "$0")/.."
dist=${1:-dist}
GO=${GO:-go}
ARCHES=${ARCHES:-amd64 arm64 arm}
VERSION=${VERSION:-$(git describe --always --dirty 2>/dev/null || echo dev)}
COMMIT=${COMMIT:-$(git rev-parse --short=12 HEAD 2>/dev/null || true)}
# Every archive entry is dated from the commit (or SOURCE_DATE_EPOCH).
epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}

mkdir -p "$dist"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
rm -f "$dist"/metamesh-*.tar.gz "$dist/SHA256SUMS"
for arch in $ARCHES; do
  name="metamesh-$VERSION-linux-$arch"
  dir="$stage/$name"
  mkdir -p "$dir"
  goarm=""
  [ "$arch" = arm ] && goarm=7
  echo "building $name" >&2
  CGO_ENABLED=0 GOOS=linux GOARCH=$arch GOARM=$goarm $GO build -trimpath -buildvcs=false \
    -ldflags "-s -w -buildid= -X github.com/metamesh/node/node.Version=$VERSION -X github.com/metamesh/node/node.Commit=$COMMIT" \
    -o "$dir/metamesh" ./cmd/metamesh
  cp README.md deploy/INSTALL.md deploy/systemd/metamesh.service deploy/systemd/metamesh.env "$dir/"
  chmod 755 "$dir/metamesh"
  chmod 644 "$dir"/*.md "$dir/metamesh.service" "$dir/metamesh.env"
  tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" \
    --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime -cf - "$name" |
    gzip -n -9 >"$dist/$name.tar.gz"
done
(cd "$dist" && sha256sum metamesh-"$VERSION"-linux-*.tar.gz >SHA256SUMS)
cat "$dist/SHA256SUMS"

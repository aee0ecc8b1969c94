#!/usr/bin/env bash
# Builds the one-household image, metamesh:<version> and metamesh:latest,
# without a registry: FROM scratch with
#   /usr/local/bin/metamesh  static (CGO_ENABLED=0), this checkout's;
#   /usr/bin/redis-server    the host's, with the libraries ldd lists;
#   /usr/bin/ffprobe         the host's, with its libraries (durations,
#                            codecs, languages, subtitles' tracks);
#   /usr/bin/ffmpeg          the host's, with its libraries (videos'
#                            stills);
#   /etc/passwd, /etc/group  root and metamesh (10001), the user it runs as;
#   /data                    owned by metamesh: a new volume there is too.
# redis-server and ffmpeg are installed with apt-get when missing.
#   deploy/image/build.sh [IMAGE]   (default metamesh; VERSION from git)
set -euo pipefail
cd "$(dirname "$0")/../.."
IMAGE=${1:-metamesh}
GO=${GO:-go}
VERSION=${VERSION:-$(git describe --always --dirty 2>/dev/null || echo dev)}
COMMIT=${COMMIT:-$(git rev-parse --short=12 HEAD 2>/dev/null || true)}

./scripts/deps.sh
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root="$stage/rootfs"
mkdir -p "$root/usr/local/bin" "$root/usr/bin" "$root/etc" "$root/tmp" "$root/library" "$stage/data"
chmod 1777 "$root/tmp"

echo "building metamesh $VERSION (static)" >&2
CGO_ENABLED=0 $GO build -trimpath -buildvcs=false \
  -ldflags "-s -w -buildid= -X github.com/metamesh/node/node.Version=$VERSION -X github.com/metamesh/node/node.Commit=$COMMIT" \
  -o "$root/usr/local/bin/metamesh" ./cmd/metamesh

# withlibs FILE...: the libraries ldd lists for the files (the loader
# included) at their own paths.
withlibs() {
  local lib
  for lib in $(for f in "$@"; do ldd "$f" 2>/dev/null || true; done | grep -o '/[^ ]*' | sort -u); do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done
}
for b in redis-server ffprobe ffmpeg; do
  p=$(command -v "$b")
  cp -L "$p" "$root/usr/bin/$b"
  withlibs "$p"
done
printf 'root:x:0:0:root:/:/sbin/nologin\nmetamesh:x:10001:10001:metamesh:/data:/sbin/nologin\n' >"$root/etc/passwd"
printf 'root:x:0:\nmetamesh:x:10001:\n' >"$root/etc/group"
cp deploy/image/Dockerfile "$stage/Dockerfile"
echo "building image $IMAGE:$VERSION" >&2
docker build -q -t "$IMAGE:$VERSION" -t "$IMAGE:latest" "$stage" >/dev/null
echo "built $IMAGE:$VERSION and $IMAGE:latest ($(docker image inspect -f '{{.Size}}' "$IMAGE:$VERSION" | awk '{printf "%.0f MB", $1/1e6}'))"

#!/usr/bin/env bash
# Builds the testnet images without a registry: metamesh-node:latest FROM
# scratch with the static bin/metamesh (run `make build` first), and, when
# no redis:7 image is present, a stand-in redis:7 FROM scratch assembled
# from the host's redis-server and the libraries ldd lists.
set -euo pipefail
cd "$(dirname "$0")/../.."
here=testnet/docker
NODE_IMAGE=${METAMESH_NODE_IMAGE:-metamesh-node:latest}

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

# Node image.
[ -x bin/metamesh ] || { echo "bin/metamesh is missing: run make build" >&2; exit 1; }
if ldd bin/metamesh >/dev/null 2>&1; then
  echo "bin/metamesh is not static (build it with CGO_ENABLED=0)" >&2; exit 1
fi
mkdir -p "$stage/node/rootfs/usr/local/bin" "$stage/node/rootfs/etc" "$stage/node/rootfs/tmp" "$stage/node/data"
cp bin/metamesh "$stage/node/rootfs/usr/local/bin/metamesh"
chmod 1777 "$stage/node/rootfs/tmp"
printf 'root:x:0:0:root:/:/sbin/nologin\nmetamesh:x:10001:10001:metamesh:/data:/sbin/nologin\n' >"$stage/node/rootfs/etc/passwd"
printf 'root:x:0:\nmetamesh:x:10001:\n' >"$stage/node/rootfs/etc/group"
cp "$here/node.Dockerfile" "$stage/node/Dockerfile"
docker build -q -t "$NODE_IMAGE" "$stage/node" >/dev/null
echo "built $NODE_IMAGE"

# Redis: the registry's image when it is there, else a stand-in.
if docker image inspect redis:7 >/dev/null 2>&1; then
  echo "redis:7 present, not rebuilt"
  exit 0
fi
srv=$(command -v redis-server || true)
[ -n "$srv" ] || { echo "no redis:7 image and no redis-server on this host to build one from (apt-get install redis-server)" >&2; exit 1; }
r="$stage/redis/rootfs"
mkdir -p "$r/usr/local/bin" "$r/tmp" "$stage/redis/data"
chmod 1777 "$r/tmp"
cp -L "$srv" "$r/usr/local/bin/redis-server"
# Every library ldd lists (absolute paths), and the loader, at their paths.
for lib in $(ldd "$srv" | grep -o '/[^ ]*' | sort -u); do
  mkdir -p "$r$(dirname "$lib")"
  cp -L "$lib" "$r$lib"
done
cp "$here/redis.Dockerfile" "$stage/redis/Dockerfile"
docker build -q -t redis:7 "$stage/redis" >/dev/null
echo "built redis:7 (stand-in from $srv)"

#!/usr/bin/env bash
# Builds the testnet images without a registry:
#   metamesh-node:latest      FROM scratch with the static bin/metamesh (run
#                             `make build` first);
#   metamesh-node-nat:latest  that image plus busybox, natprobe (built here
#                             from testnet/docker/natprobe) and an entrypoint
#                             that points the default route at the household's
#                             router, for the NAT testnet (testnet/compose/nat.yml);
#   metamesh-router:latest    FROM scratch: busybox, iptables-legacy and its
#                             xtables modules, the NAT testnet's routers;
#   redis:7                   only when no redis:7 image is present: a
#                             stand-in assembled from the host's redis-server.
# Host binaries are copied with the libraries ldd lists and the loader; the
# packages they come from (busybox-static, iptables) are installed with
# apt-get when missing.
set -euo pipefail
cd "$(dirname "$0")/../.."
here=testnet/docker
NODE_IMAGE=${METAMESH_NODE_IMAGE:-metamesh-node:latest}
NAT_IMAGE=${METAMESH_NAT_IMAGE:-metamesh-node-nat:latest}
ROUTER_IMAGE=${METAMESH_ROUTER_IMAGE:-metamesh-router:latest}
GO=${GO:-go}

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

# apt_install PACKAGE...: apt-get install, as root or through sudo.
apt_install() {
  command -v apt-get >/dev/null 2>&1 || { echo "missing $*: install it with your package manager" >&2; exit 1; }
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "installing $* with apt-get" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}

# withlibs ROOTFS FILE...: copies every library ldd lists for the files
# (absolute paths, the loader included) into ROOTFS at the same paths.
withlibs() {
  local root=$1 lib
  shift
  for lib in $(for f in "$@"; do ldd "$f" 2>/dev/null || true; done | grep -o '/[^ ]*' | sort -u); do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done
}

# add_busybox ROOTFS: /bin/busybox (with its libraries when it is not static)
# and /bin links for the applets the images use.
add_busybox() {
  local root=$1 bb a
  bb=$(command -v busybox || true)
  [ -n "$bb" ] || { apt_install busybox-static; bb=$(command -v busybox); }
  mkdir -p "$root/bin"
  cp -L "$bb" "$root/bin/busybox"
  withlibs "$root" "$bb"
  for a in sh ip nc netstat ping cat ls ps grep awk sed sleep su test true false date env wc head tail; do
    ln -s busybox "$root/bin/$a"
  done
}

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

# The NAT testnet's node: the node image, busybox, natprobe, nat-entrypoint.sh.
n="$stage/nat/rootfs"
add_busybox "$n"
mkdir -p "$n/usr/local/bin"
CGO_ENABLED=0 $GO build -trimpath -ldflags "-s -w" -o "$n/usr/local/bin/natprobe" ./testnet/docker/natprobe
cp "$here/nat-entrypoint.sh" "$n/usr/local/bin/nat-entrypoint.sh"
chmod 755 "$n/usr/local/bin/nat-entrypoint.sh"
cp "$here/node-nat.Dockerfile" "$stage/nat/Dockerfile"
docker build -q --build-arg "BASE=$NODE_IMAGE" -t "$NAT_IMAGE" "$stage/nat" >/dev/null
echo "built $NAT_IMAGE"

# The NAT testnet's router: busybox, iptables-legacy (xtables-legacy-multi
# under its iptables names), every xtables module and their libraries.
xt=""
for d in /usr/sbin /sbin; do [ -x "$d/xtables-legacy-multi" ] && xt="$d/xtables-legacy-multi" && break; done
[ -n "$xt" ] || { apt_install iptables; xt=/usr/sbin/xtables-legacy-multi; }
mods=""
for d in /usr/lib/x86_64-linux-gnu/xtables /usr/lib/aarch64-linux-gnu/xtables /usr/lib64/xtables /usr/lib/xtables; do
  [ -f "$d/libxt_MASQUERADE.so" ] && mods=$d && break
done
[ -n "$mods" ] || { echo "no xtables modules (libxt_MASQUERADE.so) next to $xt" >&2; exit 1; }
r="$stage/router/rootfs"
add_busybox "$r"
mkdir -p "$r/usr/sbin" "$r/usr/lib/xtables" "$r/usr/local/bin" "$r/run" "$r/tmp"
chmod 1777 "$r/tmp"
cp -L "$xt" "$r/usr/sbin/xtables-legacy-multi"
for a in iptables iptables-legacy iptables-save iptables-restore; do
  ln -s xtables-legacy-multi "$r/usr/sbin/$a"
done
cp -L "$mods"/*.so "$r/usr/lib/xtables/"
withlibs "$r" "$xt" "$mods"/*.so
cp "$here/router.sh" "$r/usr/local/bin/router.sh"
chmod 755 "$r/usr/local/bin/router.sh"
cp "$here/router.Dockerfile" "$stage/router/Dockerfile"
docker build -q -t "$ROUTER_IMAGE" "$stage/router" >/dev/null
echo "built $ROUTER_IMAGE (iptables from $xt, modules from $mods)"

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
withlibs "$r" "$srv"
cp "$here/redis.Dockerfile" "$stage/redis/Dockerfile"
docker build -q -t redis:7 "$stage/redis" >/dev/null
echo "built redis:7 (stand-in from $srv)"

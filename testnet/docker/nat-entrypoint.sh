#!/bin/sh
# Entrypoint of metamesh-node-nat. For `metamesh run` (as root, with
# NET_ADMIN), ROUTER says where the default route goes:
#   ROUTER=<IPv4>  the household router's LAN address: everything off the
#                  LAN crosses the router's NAT, and Docker's bridge gateway
#                  (whose masquerade would be a way around it) is no longer
#                  a route out;
#   ROUTER=none    no default route: only the container's own networks (the
#                  public household, which is on the internet network);
#   unset          the routes Docker made.
# Then metamesh runs as the metamesh user (uid 10001, no capabilities left)
# through busybox su, so files it writes in /data are the node's own.
set -eu
if [ "${1:-}" = run ] && [ -n "${ROUTER:-}" ]; then
  case "$ROUTER" in
  none) ip route del default 2>/dev/null || true ;;
  *) ip route replace default via "$ROUTER" ;;
  esac
  echo "nat-entrypoint: $(ip route show | tr '\n' ';')" >&2
fi
exec su -p -s /usr/local/bin/metamesh -- metamesh "$@"

#!/bin/sh
# A home router of the NAT testnet (metamesh-router). Environment:
#   WAN  the router's address on the internet network (192.0.0.128/25);
#   LAN  its address on the household's LAN, the LAN's default route;
#   NAT  cone (default): MASQUERADE, which keeps a flow's source port when
#        it is free, so a LAN socket keeps one public port for every
#        destination (endpoint-independent mapping, what hole punching
#        needs); symmetric: MASQUERADE --random-fully, a random public port
#        for every new flow (endpoint-dependent mapping).
#   UNSOLICITED  drop (default): anything unsolicited from the internet,
#        forwarded or to the router itself, is dropped without an answer;
#        reject: it is answered, a TCP RST for TCP and an ICMP port
#        unreachable for the rest, as OpenWrt's default wan zone does and
#        any Linux router without input rules (its kernel answers for the
#        ports nothing listens on).
# Either way inbound is only what answers a flow from the LAN (conntrack
# ESTABLISHED,RELATED), and what conntrack finds INVALID is dropped (it
# would skip the NAT and leave with its LAN address). The
# router has no default route: the internet is the internet subnet,
# nothing beyond it. nat.yml runs it with net.ipv4.ip_forward=1 and
# conntrack's strict TCP window check (nf_conntrack_tcp_be_liberal=0, the
# Linux default; docs/testnet.md "The NAT testnet").
set -eu
: "${WAN:?WAN: the router's internet address}" "${LAN:?LAN: the router's LAN address}"
NAT=${NAT:-cone}
UNSOLICITED=${UNSOLICITED:-drop}
ifof() { ip -o -4 addr show | awk -v a="$1" '{ split($4, p, "/"); if (p[1] == a) print $2 }'; }
wan=$(ifof "$WAN")
lan=$(ifof "$LAN")
if [ -z "$wan" ] || [ -z "$lan" ]; then
  echo "router: no interface holds $WAN (WAN) or $LAN (LAN):" >&2
  ip -o -4 addr show >&2
  exit 1
fi
ip route del default 2>/dev/null || true

ipt=iptables-legacy
$ipt -P FORWARD DROP
$ipt -A FORWARD -m conntrack --ctstate INVALID -j DROP
$ipt -A FORWARD -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT
$ipt -A FORWARD -i "$lan" -o "$wan" -j ACCEPT
$ipt -A INPUT -i "$wan" -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT
case "$UNSOLICITED" in
drop) $ipt -A INPUT -i "$wan" -j DROP ;;
reject)
  for chain in INPUT FORWARD; do
    $ipt -A "$chain" -i "$wan" -p tcp -j REJECT --reject-with tcp-reset
    $ipt -A "$chain" -i "$wan" -j REJECT --reject-with icmp-port-unreachable
  done ;;
*) echo "router: UNSOLICITED=$UNSOLICITED: want drop or reject" >&2; exit 1 ;;
esac
case "$NAT" in
cone) $ipt -t nat -A POSTROUTING -o "$wan" -j MASQUERADE ;;
symmetric) $ipt -t nat -A POSTROUTING -o "$wan" -j MASQUERADE --random-fully ;;
*) echo "router: NAT=$NAT: want cone or symmetric" >&2; exit 1 ;;
esac
echo "router: $NAT NAT, unsolicited packets: $UNSOLICITED, LAN $lan $LAN, WAN $wan $WAN"
$ipt -S
$ipt -t nat -S POSTROUTING
touch /run/ready

# Port 4689 answers on the LAN (a probe for the testnet); from the
# internet it is dropped or rejected like everything else.
trap 'exit 0' TERM INT
nc -ll -p 4689 -e true &
wait

# The NAT testnet's home router (testnet/compose/nat.yml): busybox and
# iptables-legacy with its xtables modules, FROM scratch. router.sh sets
# the NAT up from WAN, LAN and NAT (cone or symmetric) and is healthy once
# the rules are in. Needs NET_ADMIN and net.ipv4.ip_forward=1. Built by
# testnet/docker/images.sh.
FROM scratch
COPY rootfs/ /
ENV PATH=/usr/sbin:/bin XTABLES_LIBDIR=/usr/lib/xtables
HEALTHCHECK --interval=1s --timeout=2s --retries=60 CMD ["/bin/test", "-f", "/run/ready"]
ENTRYPOINT ["/bin/sh", "/usr/local/bin/router.sh"]

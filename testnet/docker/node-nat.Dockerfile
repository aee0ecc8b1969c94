# The NAT testnet's node (testnet/compose/nat.yml): metamesh-node plus
# busybox and nat-entrypoint.sh, which, for `run`, points the default route
# at the household's router and then runs metamesh as the unprivileged
# metamesh user. The container needs NET_ADMIN for the route; the node
# itself runs without capabilities. Built by testnet/docker/images.sh.
ARG BASE=metamesh-node:latest
FROM ${BASE}
COPY rootfs/ /
USER root
ENTRYPOINT ["/bin/sh", "/usr/local/bin/nat-entrypoint.sh"]
CMD ["run", "--library", "/library", "--data", "/data", "--api", "0.0.0.0:4680", "--public-read"]

# The node image: the static binary `make build` leaves in bin/metamesh, on
# nothing else. Built by testnet/docker/images.sh from a staged context
# (plain Dockerfile syntax, no BuildKit needed).
FROM scratch
COPY rootfs/ /
COPY --chown=10001:10001 data/ /data/
USER 10001:10001
ENV HOME=/data METAMESH_DATA=/data
VOLUME ["/data"]
EXPOSE 4680 4681
HEALTHCHECK --interval=2s --timeout=3s --start-period=120s --retries=3 \
  CMD ["/usr/local/bin/metamesh", "health", "--api", "127.0.0.1:4680"]
ENTRYPOINT ["/usr/local/bin/metamesh"]
CMD ["run", "--library", "/library", "--data", "/data", "--api", "0.0.0.0:4680", "--public-read"]

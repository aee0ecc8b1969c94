# A stand-in for the registry's redis:7, for machines that cannot pull:
# the host's redis-server with the shared libraries ldd lists and the
# dynamic loader, FROM scratch. Built by testnet/docker/images.sh only when
# no redis:7 image is present.
FROM scratch
COPY rootfs/ /
COPY data/ /data/
WORKDIR /data
VOLUME ["/data"]
EXPOSE 6379
ENTRYPOINT []
CMD ["redis-server", "--protected-mode", "no", "--dir", "/data"]

#!/usr/bin/env bash
# Installs what the node and its tests need and the machine lacks:
# redis-server (the store), ffmpeg (ffprobe, for media metadata; ffmpeg,
# for videos' stills and the tests that render small clips), with --test chromium (the web page's
# browser test; make run does not need it), systemd-analyze (the service
# unit's check), qemu-user-static (the arm64 and arm release binaries
# run under it), rclone and cadaver (the WebDAV share's tests read it as
# those clients do), and with --bench wrk (the HTTP load generator of make
# bench). Debian/Ubuntu, via apt-get.
set -euo pipefail

need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
{ command -v ffprobe && command -v ffmpeg; } >/dev/null 2>&1 || need+=(ffmpeg)
case "${1:-}" in
--test)
  command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || need+=(chromium)
  command -v systemd-analyze >/dev/null 2>&1 || need+=(systemd)
  { command -v qemu-aarch64-static && command -v qemu-arm-static; } >/dev/null 2>&1 || need+=(qemu-user-static)
  command -v rclone >/dev/null 2>&1 || need+=(rclone)
  command -v cadaver >/dev/null 2>&1 || need+=(cadaver)
  ;;
--bench)
  command -v wrk >/dev/null 2>&1 || need+=(wrk)
  ;;
esac
[ ${#need[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
  echo "missing: ${need[*]}; install them with your package manager" >&2
  exit 1
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "installing ${need[*]} with apt-get" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null

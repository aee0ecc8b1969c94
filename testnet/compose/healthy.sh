# Sourced by up.sh and nat-up.sh.
# wait_healthy NAME CONTAINER: waits up to 180 s for CONTAINER's health
# check to pass; otherwise prints its last log lines and exits 1.
wait_healthy() {
  local s=""
  for _ in $(seq 1 180); do
    s=$(docker inspect -f '{{.State.Health.Status}}' "$2")
    [ "$s" = healthy ] && return 0
    sleep 1
  done
  echo "$1 is $s after 180 s; its log:" >&2
  docker logs --tail 30 "$2" >&2
  exit 1
}

#!/usr/bin/env bash
# Brings the testnet up: sample libraries (testnet/compose/libs.sh), one
# identity per household generated into its data volume (kept across
# runs: the peer IDs are stable), then `up -d`, waits until every household
# is healthy and prints each one's API URL and peer ID. COMPOSE is the
# compose command (docker-compose or "docker compose"), COMPOSE_PROJECT_NAME
# the project.
set -euo pipefail
cd "$(dirname "$0")/../.."
COMPOSE=${COMPOSE:-docker-compose}
export LIBS=${LIBS:-$PWD/testnet/compose/libs}
./testnet/compose/libs.sh "$LIBS"

for h in 1 2 3; do
  id=$($COMPOSE run --rm --no-deps -T --entrypoint /usr/local/bin/metamesh "household$h" id --create --data /data 2>/dev/null | tr -d '\r' | tail -n1)
  case "$id" in 12D3KooW*) ;; *) echo "household$h: no peer ID from metamesh id ($id)" >&2; exit 1 ;; esac
  export "H${h}_PEER=$id"
done
env_file=testnet/compose/.env.${COMPOSE_PROJECT_NAME:-metamesh}
printf 'H1_PEER=%s\nH2_PEER=%s\nH3_PEER=%s\nLIBS=%s\n' "$H1_PEER" "$H2_PEER" "$H3_PEER" "$LIBS" >"$env_file"

start=$(date +%s.%N)
$COMPOSE up -d
. testnet/compose/healthy.sh
for h in 1 2 3; do
  wait_healthy "household$h" "$($COMPOSE ps -q "household$h")"
done
awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "all households healthy in %.1f s\n\n", e - s }'
for h in 1 2 3; do
  port=$($COMPOSE port "household$h" 4680 | tr -d '\r')
  eval "peer=\$H${h}_PEER"
  echo "household$h  http://$port  $peer"
done
echo
echo "peer IDs and LIBS saved in $env_file (for compose by hand: $COMPOSE --env-file $env_file ...)"

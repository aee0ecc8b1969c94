#!/usr/bin/env bash
# Generates the testnet's sample libraries under DIR (default
# testnet/compose/libs). LAYOUT households (the default, docker-compose.yml):
# DIR/household1..3, each with files of its own and files it shares (the
# same bytes) with one other household. LAYOUT nat (testnet/compose/nat.yml):
# DIR/public, cone1, cone2, sym, two files each, every title its own. Files
# are 300 KB of random bytes, so each has three distinct CIDs (midhash256,
# sha2-256, IPFS). Existing libraries are left alone.
#
#   libs.sh [DIR [LAYOUT]]
set -euo pipefail
dir=${1:-$(dirname "$0")/libs}
layout=${2:-households}
mkfile() { # path
  mkdir -p "$(dirname "$1")"
  head -c 300000 /dev/urandom >"$1"
}
[ -f "$dir/.generated" ] && { echo "sample libraries in $dir (kept)"; exit 0; }
mkdir -p "$dir"
if [ "$layout" = nat ]; then
  mkfile "$dir/public/Movies/Pelican Quay (2001).mkv"
  mkfile "$dir/public/Movies/Prism Valley (2004).mkv"
  mkfile "$dir/cone1/Movies/Kestrel Dunes (2002).mkv"
  mkfile "$dir/cone1/Movies/Kindle Marsh (2005).mkv"
  mkfile "$dir/cone2/Movies/Lantern Fjord (2003).mkv"
  mkfile "$dir/cone2/Movies/Lumen Ridge (2006).mkv"
  mkfile "$dir/sym/Movies/Sable Canyon (2007).mkv"
  mkfile "$dir/sym/Movies/Saffron Isle (2008).mkv"
  chmod -R a+rX "$dir"
  touch "$dir/.generated"
  echo "sample libraries ($layout) in $dir"
  exit 0
fi
[ "$layout" = households ] || { echo "libs.sh: layout $layout: want households or nat" >&2; exit 1; }
mkfile "$dir/household1/Movies/Aurora Borealis (2001).mkv"
mkfile "$dir/household1/Movies/Amber Lantern (2004).mkv"
mkfile "$dir/household2/Movies/Basilisk Crossing (2002).mkv"
mkfile "$dir/household2/Movies/Bramble Tower (2005).mkv"
mkfile "$dir/household3/Movies/Cobalt Harbour (2003).mkv"
mkfile "$dir/household3/Movies/Cinder Orchard (2006).mkv"
# Shared between two households: the same bytes under different names.
mkfile "$dir/household1/Movies/Shared Voyage (2010).mkv"
cp "$dir/household1/Movies/Shared Voyage (2010).mkv" "$dir/household2/Movies/Voyage (2010).mkv"
mkfile "$dir/household2/Movies/Twin Meadow (2011).mkv"
cp "$dir/household2/Movies/Twin Meadow (2011).mkv" "$dir/household3/Movies/Twin Meadow (2011).mkv"
mkfile "$dir/household3/Movies/Paired Summit (2012).mkv"
cp "$dir/household3/Movies/Paired Summit (2012).mkv" "$dir/household1/Movies/Paired Summit (2012).mkv"
chmod -R a+rX "$dir"
touch "$dir/.generated"
echo "sample libraries in $dir"

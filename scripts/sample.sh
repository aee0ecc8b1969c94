#!/usr/bin/env bash
# Writes a small sample library into DIR (default ./library) for a first
# look at the node: a few seconds long real videos made by ffmpeg, in the
# layouts a household's media manager leaves (a film in its own folder
# with its NFO, poster and English subtitle; a film named by its release;
# a show with its tvshow.nfo, two seasons and a poster). Files that are
# already there are left as they are, so it can run beside a running node.
set -euo pipefail
dir=${1:-./library}
command -v ffmpeg >/dev/null 2>&1 || { echo "sample: ffmpeg is missing (make sample installs it)" >&2; exit 1; }
if [ -e "$dir" ] && [ ! -d "$dir" ]; then
  echo "sample: $dir is not a directory" >&2
  exit 1
fi

made=0
# clip FILE SECONDS HUE: a test pattern with a tone, encoded for FILE's
# extension (.mkv and .webm: VP9 and Opus; .mp4: H.264 and AAC), all of
# which a browser plays.
clip() {
  local f=$1 secs=$2 hue=$3 v a
  [ -e "$f" ] && return 0
  mkdir -p "$(dirname "$f")"
  case "$f" in
  *.mp4) v=(-c:v libx264 -preset veryfast -pix_fmt yuv420p) a=(-c:a aac -b:a 64k) ;;
  *) v=(-c:v libvpx-vp9 -deadline realtime -cpu-used 8 -b:v 200k) a=(-c:a libopus -b:a 48k) ;;
  esac
  # Written beside and renamed whole: a watching node never hashes half a file.
  local tmp
  tmp="$(dirname "$f")/.partial-$$.${f##*.}"
  ffmpeg -nostdin -loglevel error -y \
    -f lavfi -i "testsrc2=size=320x180:rate=24:duration=$secs,hue=h=$hue" \
    -f lavfi -i "sine=frequency=$((220 + hue)):duration=$secs" \
    "${v[@]}" "${a[@]}" -shortest "$tmp"
  mv "$tmp" "$f"
  made=$((made + 1))
}

# still FILE HUE: a poster-shaped JPEG.
still() {
  local f=$1 hue=$2
  [ -e "$f" ] && return 0
  mkdir -p "$(dirname "$f")"
  ffmpeg -nostdin -loglevel error -y -f lavfi -i "testsrc2=size=200x300,hue=h=$hue" -frames:v 1 "$f"
  made=$((made + 1))
}

# text FILE: FILE from stdin, unless it is there.
text() {
  local f=$1
  if [ -e "$f" ]; then cat >/dev/null; return 0; fi
  mkdir -p "$(dirname "$f")"
  cat >"$f"
  made=$((made + 1))
}

film="$dir/Movies/Night Train (2019)"
text "$film/movie.nfo" <<'EOF'
<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<movie>
  <title>Night Train</title>
  <originaltitle>Nachtzug</originaltitle>
  <year>2019</year>
  <plot>A sample film of the MetaMesh node: six seconds of a test pattern on a night train that never arrives.</plot>
  <genre>Drama / Mystery</genre>
  <rating>7.1</rating>
</movie>
EOF
clip "$film/Night.Train.2019.1080p.WEB-DL.mkv" 6 0
still "$film/poster.jpg" 0
text "$film/Night.Train.2019.1080p.WEB-DL.en.srt" <<'EOF'
1
00:00:00,500 --> 00:00:03,000
The night train leaves at midnight.

2
00:00:03,500 --> 00:00:05,500
It never arrives.
EOF

clip "$dir/Movies/The.Quiet.Harbour.2021.720p.BluRay.x264.mp4" 4 90

show="$dir/Shows/Lighthouse Keepers"
text "$show/tvshow.nfo" <<'EOF'
<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<tvshow>
  <title>Lighthouse Keepers</title>
  <year>2020</year>
  <plot>A sample show of the MetaMesh node: two seasons of short test patterns.</plot>
  <genre>Documentary</genre>
</tvshow>
EOF
still "$show/poster.jpg" 200
clip "$show/Season 01/Lighthouse.Keepers.S01E01.The.Lamp.webm" 3 180
clip "$show/Season 01/Lighthouse.Keepers.S01E02.The.Storm.webm" 3 220
clip "$show/Season 02/Lighthouse.Keepers.S02E01.The.Return.webm" 3 260

echo "sample: $made new files in $dir (Movies/, Shows/)"

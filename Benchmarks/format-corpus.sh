#!/usr/bin/env bash
# Makes the HEIC/HEIF, AVIF and WebP corpus of the format benchmark (Benchmarks/formats.sh runs it) in
# Benchmarks/.corpus/formats/ (git-ignored), from 8 real photos of Benchmarks/.corpus/photos/ (Benchmarks/corpus.sh).
# Cached: the .complete stamp holds the recipe below; a changed recipe (photos, settings) remakes everything.
#
# Each photo is filled and centre-cropped to an iPhone 12 MP frame (4032x3024, portrait 3024x4032; no
# metadata), then written four ways:
#   grid-NAME.heic    as an iPhone writes it: 512x512 HEVC tiles (8x6, portrait 6x8) of a 4096x3072 canvas whose
#                     right and bottom edges are repeated, the tiles encoded by `heif-enc -q 65` (x265, 4:2:0,
#                     8 bits) and re-packed as a grid item with output size 4032x3024 by TestImages/heif_boxes.py
#                     (heif-enc 1.15 has no tiling option), as TestImages/make-format-fixtures.sh makes grid.heic
#   single-NAME.heic  the same frame as one HEVC image (`heif-enc -q 65`), as some Android phones and converters write
#   NAME.avif         `avifenc -j 2 -s 6 -d 8 -y 420 --min 20 --max 30` (libaom, 8-bit 4:2:0 as phones write)
#   NAME.webp         `cwebp -q 80`
# and decoded at full size by the formats' own tools (heif-convert, avifdec, dwebp) into ref/FILE.png: the common
# reference the benchmark scores every tool's output against. Checks: each decode is the frame it was made from
# (RMSE), the grid's primary image is 4032x3024 (portrait 3024x4032), and the grid files are in an iPhone-like
# range of 1-4 MB (a warning, not an error).
set -euo pipefail
cd "$(dirname "$0")/.."
photos=Benchmarks/.corpus/photos
out=Benchmarks/.corpus/formats
IM=/usr/bin/convert
# The corpus's photos of at least 8 MP, largest first, leaving out the three flat vector-style wallpapers
# (Painting-Colors, Fossa, umang: they compress to nothing and are not what a phone writes) and
# Elephants_3840x2160 (a smaller copy of Elephants_5640x3172). Wine is portrait.
names=(Kleiber_by_Lukas_Baubkus Elephants_5640x3172 Infinite-Sea_by_Aury88 seeding_by_Clements_Engelhardt
       Dragonfly_by_Bolly sunset_by_Aitzol_Berasategi Bridge_by_Sander_Klootwijk Wine_by_Jakkub_Mede)
# -q 65 puts the 8 grid files at 1.06-3.93 MB (median 1.48), an iPhone's range; -q 60 made 0.66-3.17 MB with
# half of them under 1 MB.
heic_q=65
recipe="v1 ${names[*]} heic-q=$heic_q tile=512 avif=-s6-d8-y420-min20-max30 webp-q=80"
if [ "$(cat "$out/.complete" 2>/dev/null)" = "$recipe" ]; then exit 0; fi
for tool in heif-enc heif-info heif-convert avifenc avifdec cwebp dwebp python3 $IM /usr/bin/compare /usr/bin/identify; do
  command -v "$tool" >/dev/null || { echo "format-corpus: missing $tool" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rm -rf "$out" && mkdir -p "$out/ref"

rmse() { /usr/bin/compare -metric RMSE "$1" "$2" null: 2>&1 | sed 's/.*(\(.*\))/\1/' || true; }
same() {  # same DECODED.png FRAME.png WHAT: the decode is the frame (normalised RMSE under 3%)
  local r; r=$(rmse "$1" "$2")
  python3 -c "import sys; sys.exit(not float(sys.argv[1]) < 0.03)" "$r" \
    || { echo "format-corpus: $3 does not decode to its frame (RMSE $r)" >&2; exit 1; }
}

for name in "${names[@]}"; do
  src="$photos/$name.jpg"
  [ -f "$src" ] || { echo "format-corpus: $src is missing (run Benchmarks/corpus.sh)" >&2; exit 1; }
  read -r w h < <(/usr/bin/identify -format '%w %h\n' "$src[0]")
  if [ "$h" -gt "$w" ]; then fw=3024 fh=4032; else fw=4032 fh=3024; fi
  cols=$(( (fw + 511) / 512 )) rows=$(( (fh + 511) / 512 ))
  frame="$work/$name.png"
  $IM "$src" -strip -resize "${fw}x${fh}^" -gravity center -extent "${fw}x${fh}" +repage PNG24:"$frame"

  # The grid: canvas cols*512 x rows*512, edges repeated, cut row-major into tiles, one HEVC image each.
  rm -f "$work"/tile-*.png
  $IM "$frame" -virtual-pixel edge -set option:distort:viewport "$((cols * 512))x$((rows * 512))+0+0" \
    -distort SRT 0 +repage -crop 512x512 +repage PNG24:"$work/tile-%d.png"
  tiles=()
  for i in $(seq 0 $((cols * rows - 1))); do tiles+=("$work/tile-$i.png"); done
  heif-enc -q "$heic_q" -o "$work/tiles.heic" "${tiles[@]}" >/dev/null
  python3 TestImages/heif_boxes.py grid "$out/grid-$name.heic" "$fw" "$fh" "$cols" "$rows" "$work/tiles.heic"
  heif-info "$out/grid-$name.heic" | grep -q "^image: ${fw}x${fh} (id=$((cols * rows + 1))), primary" \
    || { echo "format-corpus: grid-$name.heic is not a ${fw}x${fh} grid" >&2; exit 1; }

  heif-enc -q "$heic_q" -o "$out/single-$name.heic" "$frame" >/dev/null
  avifenc -j 2 -s 6 -d 8 -y 420 --min 20 --max 30 "$frame" "$out/$name.avif" >/dev/null
  cwebp -quiet -q 80 "$frame" -o "$out/$name.webp"

  # The references, by each format's own decoder, checked against the frame.
  heif-convert --quiet "$out/grid-$name.heic" "$out/ref/grid-$name.heic.png" >/dev/null
  heif-convert --quiet "$out/single-$name.heic" "$out/ref/single-$name.heic.png" >/dev/null
  avifdec -j 2 "$out/$name.avif" "$out/ref/$name.avif.png" >/dev/null
  dwebp -quiet "$out/$name.webp" -o "$out/ref/$name.webp.png"
  for f in "grid-$name.heic" "single-$name.heic" "$name.avif" "$name.webp"; do
    same "$out/ref/$f.png" "$frame" "$f"
  done
  size=$(stat -c %s "$out/grid-$name.heic")
  if [ "$size" -lt 1000000 ] || [ "$size" -gt 4000000 ]; then
    echo "format-corpus: warning: grid-$name.heic is $size bytes, outside an iPhone's 1-4 MB" >&2
  fi
  printf '%-32s %5sx%-5s grid %8s  single %8s  avif %8s  webp %8s\n' "$name" "$w" "$h" "$size" \
    "$(stat -c %s "$out/single-$name.heic")" "$(stat -c %s "$out/$name.avif")" "$(stat -c %s "$out/$name.webp")"
done
echo "$recipe" > "$out/.complete"

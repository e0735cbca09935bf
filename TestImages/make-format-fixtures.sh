#!/usr/bin/env bash
# Rebuilds TestImages/formats/ (HEIC/HEIF, AVIF and WebP test images) from the two photographs in
# TestImages/photos/ (Debian's mate-backgrounds, GPL-2+, see PROVENANCE.md).
# Needs (Debian 12): libheif-examples 1.15 (heif-enc with x265, heif-info, heif-convert), libavif-bin
# (avifenc, avifdec), webp (cwebp, dwebp, webpmux, img2webp), ImageMagick 6 (/usr/bin/convert,
# /usr/bin/compare), exiftool (libimage-exiftool-perl), python3 (standard library only) and liblcms2.
# heif_boxes.py (next to this script) writes what heif-enc 1.15 cannot: the grid, the irot transform
# and the depth map, by re-packing the HEVC images that heif-enc encoded.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
IM=/usr/bin/convert
boxes="python3 $here/heif_boxes.py"
lady="$here/photos/ladybird-2560x1600.jpg"
storm="$here/photos/storm-1920x1280.jpg"
for tool in heif-enc heif-info heif-convert avifenc avifdec cwebp dwebp webpmux img2webp exiftool python3 \
            /usr/bin/convert /usr/bin/compare; do
  command -v "$tool" >/dev/null || { echo "missing: $tool" >&2; exit 1; }
done
cd "$here"
rm -rf formats && mkdir formats

# Plain inputs (no metadata: -strip), reduced with ImageMagick's default filter.
$IM "$lady" -strip PNG24:"$work/lady-2560.png"
$IM "$lady" -strip -resize 1280x800! PNG24:"$work/lady-1280.png"
$IM "$lady" -strip -resize 1280x800! -depth 16 PNG48:"$work/lady-1280-16bit.png"
$IM "$lady" -strip -resize 640x400! PNG24:"$work/lady-640.png"
$IM "$lady" -strip -resize 640x400! -depth 16 PNG48:"$work/lady-640-16bit.png"
$IM "$storm" -strip -resize 1280x800! PNG24:"$work/storm-1280.png"
$IM "$storm" -strip -resize 480x320! PNG24:"$work/storm-480.png"

# 1. photo.heic: 8-bit HEVC, full size, then EXIF (GPS, Make, Orientation 1) written by exiftool.
heif-enc -q 50 -o formats/photo.heic "$work/lady-2560.png" >/dev/null
exiftool -q -overwrite_original -n -Orientation=1 -GPSLatitude=48.8584 -GPSLatitudeRef=N \
  -GPSLongitude=2.2945 -GPSLongitudeRef=E -Make=PhotoprepTest formats/photo.heic

# 2. grid.heic: the storm at 1280x800 as a 3x2 grid of 512x512 HEVC tiles (canvas 1536x1024, its
#    right and bottom edges repeated to fill the last column and row), output size 1280x800.
$IM "$work/storm-1280.png" -virtual-pixel edge -set option:distort:viewport 1536x1024+0+0 \
  -distort SRT 0 +repage -crop 512x512 +repage PNG24:"$work/tile-%d.png"
heif-enc -q 70 -o "$work/tiles.heic" "$work"/tile-{0,1,2,3,4,5}.png >/dev/null   # row-major
$boxes grid formats/grid.heic 1280 800 3 2 "$work/tiles.heic"

# 3. ten-bit.heic: 10-bit HEVC from a 16-bit PNG (heif-enc -b applies to 16-bit input).
heif-enc -b 10 -q 70 -o formats/ten-bit.heic "$work/lady-640-16bit.png" >/dev/null

# 4. irot-exif-contradicts.heic: pixels stored rotated 90° anti-clockwise (400x640); irot angle 3
#    (3 x 90° anti-clockwise = 90° clockwise) makes them upright 640x400; EXIF says Orientation 3
#    (rotate 180), which must be ignored.
$IM "$work/lady-640.png" -rotate -90 PNG24:"$work/lady-640-ccw.png"
heif-enc -q 70 -o "$work/ccw.heic" "$work/lady-640-ccw.png" >/dev/null
$boxes irot "$work/ccw.heic" formats/irot-exif-contradicts.heic 3
exiftool -q -overwrite_original -n -Orientation=3 formats/irot-exif-contradicts.heic

# 5. with-depth.heic: primary 640x400 (item 2) + a 320x200 monochrome HEVC depth map (item 1,
#    auxC urn:mpeg:hevc:2015:auxid:2, iref auxl 1 -> 2): black on the left to white on the right.
$IM -size 320x200 -define gradient:direction=east gradient:black-white -colorspace Gray -depth 8 \
  -define png:color-type=0 "$work/depth.png"
heif-enc -q 90 -o "$work/depth.heic" "$work/depth.png" >/dev/null
heif-enc -q 70 -o "$work/primary.heic" "$work/lady-640.png" >/dev/null
$boxes depth formats/with-depth.heic "$work/primary.heic" "$work/depth.heic"

# 6. truncated.heic: the first half of photo.heic.
head -c $(( $(stat -c %s formats/photo.heic) / 2 )) formats/photo.heic > formats/truncated.heic

# 7. display-p3.heic: the 640x400 photo converted from sRGB to Display P3 and tagged with a Display P3
#    ICC profile (colr 'prof', as iPhones write), made by Little CMS; heif-enc copies the PNG's iCCP.
$boxes icc "$work"
$IM "$work/lady-640.png" -profile "$work/srgb.icc" -profile "$work/display-p3.icc" PNG24:"$work/lady-640-p3.png"
heif-enc -q 70 -o formats/display-p3.heic "$work/lady-640-p3.png" >/dev/null
# 7b. nclx-display-p3.avif: the same P3 pixels described by an nclx colour box instead of an ICC profile
#     (CICP 12/13/6: Display P3 primaries, sRGB curve, BT.601 matrix), as Android phones and AVIF encoders
#     write (heif-enc 1.15 ignores its nclx options for HEVC, so avifenc).
$IM "$work/lady-640-p3.png" -strip PNG24:"$work/lady-640-p3-bare.png"
avifenc -j 1 -s 6 -d 8 -y 420 --min 20 --max 30 --cicp 12/13/6 "$work/lady-640-p3-bare.png" \
  formats/nclx-display-p3.avif >/dev/null

# 8. AVIF, 1280x800, 4:2:0, 8 and 10 bits (libaom, one thread, so the bytes are reproducible).
avifenc -j 1 -s 6 -d 8 -y 420 --min 20 --max 30 "$work/lady-1280.png" formats/photo-8bit.avif >/dev/null
avifenc -j 1 -s 6 -d 10 -y 420 --min 20 --max 30 "$work/lady-1280-16bit.png" formats/photo-10bit.avif >/dev/null

# 9. WebP.
cwebp -quiet -q 80 "$storm" -o formats/lossy.webp
cwebp -quiet -lossless "$work/storm-480.png" -o formats/lossless.webp
$IM "$work/lady-640.png" \( -size 640x400 xc:white -fill black -draw 'rectangle 320,0 639,399' \) \
  -alpha off -compose CopyOpacity -composite PNG32:"$work/alpha.png"     # right half alpha 0
cwebp -quiet -q 80 -alpha_q 100 "$work/alpha.png" -o formats/alpha.webp
$IM -size 64x48 xc:'#00FF00' PNG24:"$work/green.png"
$IM -size 64x48 xc:'#FF0000' PNG24:"$work/red.png"
img2webp -loop 0 -lossless -d 100 "$work/green.png" "$work/red.png" -o formats/animated.webp 2>/dev/null
# Same pixels and EXIF as edge/exif-orientation-6.png: 60x40, red left third, rest blue; EXIF
# (big-endian TIFF, one IFD0 entry) Orientation 6: upright it is 40x60 with the red band on top.
$IM -size 60x40 xc:'#0000FF' -fill '#FF0000' -draw 'rectangle 0,0 19,39' PNG24:"$work/o6.png"
cwebp -quiet -lossless "$work/o6.png" -o "$work/o6.webp"
printf 'MM\x00\x2a\x00\x00\x00\x08\x00\x01\x01\x12\x00\x03\x00\x00\x00\x01\x00\x06\x00\x00\x00\x00\x00\x00' \
  > "$work/o6.exif"
webpmux -set exif "$work/o6.exif" "$work/o6.webp" -o formats/exif-orientation-6.webp >/dev/null 2>&1 \
  || { echo "webpmux failed" >&2; exit 1; }

# 10. truncated.webp: the first half of lossy.webp. not-really.heic: a 24-byte ftyp (heic; mif1,
#     heic) then 16 bytes of 0xDEADBEEF.
head -c $(( $(stat -c %s formats/lossy.webp) / 2 )) formats/lossy.webp > formats/truncated.webp
{ printf '\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic'; printf '\xde\xad\xbe\xef%.0s' 1 2 3 4; } \
  > formats/not-really.heic

# Checks of what is easy to get wrong.
rmse() { /usr/bin/compare -metric RMSE "$1" "$2" null: 2>&1 | sed 's/.*(\(.*\))/\1/' || true; }
heif-info formats/grid.heic | grep -q '^image: 1280x800 (id=7), primary' || { echo "grid: not 1280x800" >&2; exit 1; }
heif-convert --quiet formats/grid.heic "$work/grid.png"
python3 -c "import sys; sys.exit(float(sys.argv[1]) > 0.02)" "$(rmse "$work/grid.png" "$work/storm-1280.png")" \
  || { echo "grid: decoded image is not the photo" >&2; exit 1; }
heif-convert --quiet formats/irot-exif-contradicts.heic "$work/irot.png"
$IM "$work/lady-640.png" -rotate 180 "$work/lady-640-180.png"
python3 -c "import sys; sys.exit(not (float(sys.argv[1]) < 0.02 < 0.1 < float(sys.argv[2])))" \
  "$(rmse "$work/irot.png" "$work/lady-640.png")" "$(rmse "$work/irot.png" "$work/lady-640-180.png")" \
  || { echo "irot: decoded image is not upright" >&2; exit 1; }
heif-info formats/with-depth.heic | grep -q 'depth channel: yes' || { echo "with-depth: no depth" >&2; exit 1; }
ls -l formats

#!/usr/bin/env bash
# Rebuilds every file in TestImages/ from two real photographs of Debian's mate-backgrounds package
# (GPL-2+, see PROVENANCE.md) plus crafted edge cases. Needs: apt-get download, dpkg, jpegtran,
# exiftool (libimage-exiftool-perl), ImageMagick 6 (/usr/bin/convert), python3 with Pillow.
# The committed files are the reference; this script says exactly how they were made.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
IM=/usr/bin/convert

(cd "$work" && apt-get download mate-backgrounds >/dev/null && dpkg -x mate-backgrounds_*.deb pkg)
src="$work/pkg/usr/share/backgrounds/mate/nature"
cd "$here"
rm -rf photos orientation edge && mkdir -p photos orientation edge

# Real photographs, unchanged.
cp "$src/Storm.jpg" photos/storm-1920x1280.jpg          # baseline 4:2:2, 695 KB: the 500 KiB budget binds
cp "$src/LadyBird.jpg" photos/ladybird-2560x1600.jpg    # baseline 4:2:0, 2560 px: must be resized

# Orientation 1–8, made losslessly from one upright photo (sharp's Landscape_N method):
# the pixels are stored transformed and the EXIF tag says how to undo it. Each also carries GPS.
$IM "$src/LadyBird.jpg" -resize 640x400! -quality 90 -sampling-factor 2x2 "$work/upright.jpg"
declare -A op=([1]="" [2]="-flip horizontal" [3]="-rotate 180" [4]="-flip vertical"
               [5]="-transpose" [6]="-rotate 270" [7]="-transverse" [8]="-rotate 90")
for n in 1 2 3 4 5 6 7 8; do
  jpegtran -copy none -perfect ${op[$n]} "$work/upright.jpg" > "orientation/landscape_$n.jpg"
  exiftool -q -overwrite_original -n -Orientation=$n -GPSLatitude=48.8584 -GPSLatitudeRef=N \
    -GPSLongitude=2.2945 -GPSLongitudeRef=E -Make=PhotoprepTest -Model=Fixture "orientation/landscape_$n.jpg"
done

# JPEG variants of a small crop of the storm photo.
$IM "$src/Storm.jpg" -resize 480x320! -quality 88 "$work/small.jpg"
jpegtran -copy none -progressive "$work/small.jpg" > edge/progressive.jpg
# 4:1:0 chroma (4×2 luma per chroma sample), progressive: TurboJPEG's header call has no name for it, libjpeg decodes it.
$IM "$src/Storm.jpg" -resize 240x160! "$work/s240.ppm"
cjpeg -quality 85 -sample 4x2,1x1,1x1 -progressive "$work/s240.ppm" > edge/progressive-410.jpg
jpegtran -copy none -arithmetic "$work/small.jpg" > edge/arithmetic.jpg
$IM "$work/small.jpg" -colorspace Gray -quality 88 edge/grey.jpg
$IM "$work/small.jpg" -colorspace CMYK -quality 92 edge/cmyk-photo.jpg
head -c 60000 "$src/Storm.jpg" > edge/truncated.jpg       # 60 KB of 695 KB: libjpeg-turbo warns, still decodes
printf 'This is a text file, not a photo.\n' > edge/not-an-image.txt
: > edge/empty.jpg

python3 - "$here/edge" "$work/small.jpg" <<'PY'
import struct, sys, zlib
from PIL import Image
out, small = sys.argv[1], sys.argv[2]

def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff)

def png(path, width, height, bit_depth, colour_type, rows, extra=b"", interlace=0):
    raw = b"".join(b"\x00" + r for r in rows)
    ihdr = struct.pack(">IIBBBBB", width, height, bit_depth, colour_type, 0, 0, interlace)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + extra + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))

# CMYK patches with known colours (pure cyan, magenta, yellow, black, white ink-free) as Photoshop-style
# inverted Adobe CMYK: Pillow writes inverted values with an Adobe marker, like Photoshop.
im = Image.new("CMYK", (160, 32))
for i, c in enumerate([(255, 0, 0, 0), (0, 255, 0, 0), (0, 0, 255, 0), (0, 0, 0, 255), (0, 0, 0, 0)]):
    im.paste(c, (i * 32, 0, i * 32 + 32, 32))
im.save(f"{out}/cmyk-patches.jpg", quality=95)

# 16-bit grey at exactly half level (32768): must decode to mid-grey (128), not 186 nor near-white.
png(f"{out}/grey16-mid.png", 64, 48, 16, 0, [struct.pack(">H", 32768) * 64] * 48)
# 16-bit RGB gradient.
png(f"{out}/rgb16-gradient.png", 256, 64, 16, 2,
    [b"".join(struct.pack(">HHH", x * 257, 65535 - x * 257, 32768) for x in range(256))] * 64)
# 1-bit grey checkerboard.
png(f"{out}/grey1-checker.png", 64, 64, 1, 0,
    [bytes([0xF0 if (y // 4) % 2 == 0 else 0x0F] * 8) for y in range(64)])
# Palette with tRNS: index 0 fully transparent, 1 red, 2 blue; left half transparent.
plte = chunk(b"PLTE", bytes([0, 0, 0, 255, 0, 0, 0, 0, 255]))
trns = chunk(b"tRNS", bytes([0, 255, 255]))
png(f"{out}/palette-trns.png", 64, 32, 8, 3, [bytes([0] * 32 + [1] * 16 + [2] * 16)] * 32, plte + trns)
# Grey + alpha: fully transparent (alpha 0) black everywhere.
png(f"{out}/grey-alpha-transparent.png", 32, 32, 8, 4, [bytes([0, 0] * 32)] * 32)
# RGBA: top half opaque green, bottom half transparent.
png(f"{out}/rgba-half-transparent.png", 40, 40, 8, 6,
    [bytes([0, 200, 0, 255] * 40)] * 20 + [bytes([0, 200, 0, 0] * 40)] * 20)
# A plain 8-bit RGB photo (from the small storm crop); its Adam7-interlaced copy is made below.
photo = Image.open(small).convert("RGB")
photo.save(f"{out}/photo-rgb8.png")
# Pillow's own Lanczos of it: the reference our resizer must match (the benchmarks' SSIM reference).
photo.resize((200, 133), Image.LANCZOS).save(f"{out}/photo-rgb8-pillow-lanczos-200x133.png")
# PNG whose eXIf chunk says orientation 6 (rotate 90° clockwise to display): a 60 × 40 image, left
# third red, rest blue; upright it is 40 × 60 with the red band at the top.
exif = b"MM\x00\x2a\x00\x00\x00\x08\x00\x01" + struct.pack(">HHIHH", 0x0112, 3, 1, 6, 0) + b"\x00\x00\x00\x00"
png(f"{out}/exif-orientation-6.png", 60, 40, 8, 2, [bytes([255, 0, 0] * 20 + [0, 0, 255] * 40)] * 40, chunk(b"eXIf", exif))
# APNG: the default image (IDAT, frame 1) is green; frame 2 (fdAT) is red. The first frame must win.
w = h = 16
actl = chunk(b"acTL", struct.pack(">II", 2, 0))
fctl1 = chunk(b"fcTL", struct.pack(">IIIIIHHBB", 0, w, h, 0, 0, 1, 10, 0, 0))
idat = chunk(b"IDAT", zlib.compress(b"".join(b"\x00" + bytes([0, 255, 0] * w) for _ in range(h))))
fctl2 = chunk(b"fcTL", struct.pack(">IIIIIHHBB", 1, w, h, 0, 0, 1, 10, 0, 0))
fdat = chunk(b"fdAT", struct.pack(">I", 2) + zlib.compress(b"".join(b"\x00" + bytes([255, 0, 0] * w) for _ in range(h))))
ihdr = chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
with open(f"{out}/animated.png", "wb") as f:
    f.write(b"\x89PNG\r\n\x1a\n" + ihdr + actl + fctl1 + idat + fctl2 + fdat + chunk(b"IEND", b""))
# A PNG whose IHDR claims 100 000 × 100 000 pixels (10 gigapixels) over a tiny IDAT.
png(f"{out}/huge-header.png", 100000, 100000, 8, 0, [b"\x00"] * 1)
# A truncated PNG (cut in the middle of IDAT).
data = open(f"{out}/photo-rgb8.png", "rb").read()
open(f"{out}/truncated.png", "wb").write(data[: len(data) // 2])

# A JPEG whose frame header claims 65 000 × 65 000 pixels, and one that claims 12-bit samples.
data = bytearray(open(small, "rb").read())
def find_sof(data):
    i = 2
    while True:  # walk the marker segments: FF xx LLLL ...
        marker, length = data[i + 1], struct.unpack(">H", data[i + 2:i + 4])[0]
        if marker in (0xC0, 0xC1, 0xC2):
            return i
        i += 2 + length
sof = find_sof(data)
huge = bytearray(data); huge[sof + 5:sof + 9] = struct.pack(">HH", 65000, 65000)
open(f"{out}/huge-header.jpg", "wb").write(huge)
twelve = bytearray(data); twelve[sof + 4] = 12
open(f"{out}/twelve-bit.jpg", "wb").write(twelve)
# Formats we do not decode: a real WebP and GIF made by Pillow, a TIFF.
photo.resize((120, 80)).save(f"{out}/photo.webp", quality=80)
photo.resize((120, 80)).convert("P").save(f"{out}/photo.gif")
photo.resize((120, 80)).save(f"{out}/photo.tiff")
# An sRGB ICC profile generated by Little CMS, embedded in a small photo that fits every budget.
from PIL import ImageCms
icc = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
photo.save(f"{out}/with-icc-and-gps.jpg", quality=88, icc_profile=icc)
PY
# Adam7-interlaced copy of the plain photo (Pillow does not write interlaced PNGs: its interlace=1 is ignored).
$IM edge/photo-rgb8.png -interlace PNG -define png:color-type=2 -strip edge/interlaced.png
# ... which also carries EXIF with GPS, XMP and a comment: all must go, losslessly, the ICC must stay.
exiftool -q -overwrite_original -GPSLatitude=48.8584 -GPSLatitudeRef=N -GPSLongitude=2.2945 \
  -GPSLongitudeRef=E -XMP-dc:Creator=Someone -Comment="private note" edge/with-icc-and-gps.jpg
ls -la photos orientation edge | head -60

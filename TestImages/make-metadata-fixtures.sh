#!/usr/bin/env bash
# Rebuilds TestImages/metadata/: a reduced copy of photos/storm-1920x1280.jpg carrying a capture time in each
# format's EXIF (JPEG APP1, PNG eXIf, WebP EXIF, HEIC Exif item), and JPEGs with the odd values cameras write.
# Needs the project's .venv (Pillow) and heif-enc (libheif-examples).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$here/metadata"
mkdir -p "$out"
"$here/../.venv/bin/python" - "$here/photos/storm-1920x1280.jpg" "$out" <<'PY'
import sys
from PIL import Image
source, out = sys.argv[1], sys.argv[2]
photo = Image.open(source).convert("RGB").resize((480, 320), Image.LANCZOS)

def exif(date=None, offset=None, gps=True):
    e = Image.Exif()
    e[0x010F] = "photoprep fixtures"  # Make
    sub = e.get_ifd(0x8769)
    if date is not None: sub[0x9003] = date    # DateTimeOriginal
    if offset is not None: sub[0x9011] = offset  # OffsetTimeOriginal
    sub[0x9004] = "2024:06:02 09:00:00"        # DateTimeDigitized: not the capture time
    if gps:
        g = e.get_ifd(0x8825)
        g[1] = "N"; g[2] = (48.0, 51.0, 29.0)
    return e.tobytes()

taken = exif("2024:06:01 14:03:22", "+02:00")
photo.save(f"{out}/taken.jpg", quality=92, exif=taken)
photo.save(f"{out}/taken.png", exif=taken)
photo.save(f"{out}/taken.webp", quality=90, exif=taken)
photo.save(f"{out}/taken-west.jpg", quality=92, exif=exif("1999:12:31 23:59:59", "-08:00"))
photo.save(f"{out}/no-offset.jpg", quality=92, exif=exif("2024:06:01 14:03:22", None))
photo.save(f"{out}/year-zero.jpg", quality=92, exif=exif("0000:00:00 00:00:00", "+00:00"))
photo.save(f"{out}/garbage.jpg", quality=92, exif=exif("yesterday, probably", "+2h"))
photo.save(f"{out}/february-30.jpg", quality=92, exif=exif("2023:02:30 10:00:00", "+01:00"))
PY
# heif-enc copies a JPEG input's EXIF into the HEIC's Exif item.
heif-enc -q 80 -o "$out/taken.heic" "$out/taken.jpg" >/dev/null

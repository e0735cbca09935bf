#!/usr/bin/env python3
"""The Pillow peer at one given JPEG quality, for the quality benchmark (Benchmarks/quality.sh): the same steps as
pillow_prepare.py's prepare() — draft (JPEG shrink-on-load), EXIF transpose, alpha onto white, Lanczos thumbnail,
ICC profile passed through, EXIF dropped — then a single encode at QUALITY instead of the search under a budget.
quality_compare.py searches the quality (whole process per try) and times the final command. Run under the
Pillow-SIMD venv's python it is the Pillow-SIMD peer.

  pillow_quality.py IN OUT EDGE QUALITY    prints {"quality": q, "bytes": n}
"""
import json
import os
import sys

from PIL import Image, ImageOps

from pillow_prepare import open_image  # the same opener (HEIC through pillow-heif when installed)


def main():
    path, out, edge, quality = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    im = open_image(path)
    if im.format == "JPEG":
        w, h = im.size
        scale = min(1.0, edge / max(w, h))
        im.draft("RGB", (max(1, round(w * scale)), max(1, round(h * scale))))
    icc = im.info.get("icc_profile")
    im = ImageOps.exif_transpose(im)
    if im.mode in ("RGBA", "LA", "PA") or (im.mode == "P" and "transparency" in im.info):
        im = im.convert("RGBA")
        white = Image.new("RGBA", im.size, (255, 255, 255, 255))
        im = Image.alpha_composite(white, im).convert("RGB")
    elif im.mode not in ("RGB", "L"):
        im = im.convert("RGB")
    im.thumbnail((edge, edge), Image.LANCZOS)
    im.save(out, "JPEG", quality=quality, icc_profile=icc)
    print(json.dumps({"quality": quality, "bytes": os.path.getsize(out)}))


if __name__ == "__main__":
    main()

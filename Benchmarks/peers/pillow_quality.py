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

from pillow_prepare import resized  # the same preparation as the budget loop (pillow_prepare.py)


def main():
    path, out, edge, quality = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    im, icc = resized(path, edge)
    im.save(out, "JPEG", quality=quality, icc_profile=icc)
    print(json.dumps({"quality": quality, "bytes": os.path.getsize(out)}))


if __name__ == "__main__":
    main()

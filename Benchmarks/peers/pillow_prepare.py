#!/usr/bin/env python3
"""The Pillow peer, run the way ../shared/research/peers.md describes it: draft (JPEG shrink-on-load),
EXIF transpose, Lanczos thumbnail, alpha onto white, then bisection on quality 1-100 into memory,
keeping the largest quality under the budget; ICC profile passed through, EXIF dropped.
HEIC/HEIF through pillow-heif when it is installed (its opener registered on the first file Pillow cannot
identify itself, so JPEG runs do not pay its ~50 ms import); PILLOW_HEIF_THREADS=N sets its decoding threads
(pillow_heif.options.DECODE_THREADS; unset: pillow-heif's default). AVIF and WebP by Pillow itself (Pillow 13
reads AVIF natively: PIL.features.check("avif")).

  pillow_prepare.py IN OUT EDGE BUDGET            one photo, prints {"quality": q, "encodes": n}
  pillow_prepare.py --loop EDGE BUDGET RUNS IN…   in-process: per photo the median seconds of RUNS runs
"""
import io
import json
import os
import statistics
import sys
import time

from PIL import Image, ImageOps, UnidentifiedImageError

heif_registered = False


def register_heif():
    """Registers pillow-heif's HEIF opener once; False when pillow-heif is not importable."""
    global heif_registered
    if not heif_registered:
        try:
            import pillow_heif
            from pillow_heif import register_heif_opener
        except ImportError:
            return False
        register_heif_opener()
        if os.environ.get("PILLOW_HEIF_THREADS"):
            pillow_heif.options.DECODE_THREADS = int(os.environ["PILLOW_HEIF_THREADS"])
        heif_registered = True
    return True


def open_image(path):
    try:
        return Image.open(path)
    except UnidentifiedImageError:
        if heif_registered or not register_heif():
            raise
        return Image.open(path)


def resized(path, edge):
    """The photo as the Pillow peers prepare it: drafted, upright, flattened onto white, Lanczos to the edge; and its ICC profile."""
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
    return im, icc


def prepare(path, edge, budget):
    im, icc = resized(path, edge)
    lo, hi, best, encodes = 1, 100, None, 0
    while lo <= hi:
        q = (lo + hi) // 2
        buf = io.BytesIO()
        im.save(buf, "JPEG", quality=q, icc_profile=icc)
        encodes += 1
        if buf.tell() < budget:
            best, lo = (q, buf.getvalue()), q + 1
        else:
            hi = q - 1
    if best is None:
        raise SystemExit(f"{path}: budget unreachable")
    return best[0], best[1], encodes


def main():
    if sys.argv[1] == "--loop":
        edge, budget, runs = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
        for path in sys.argv[5:]:
            times = []
            for _ in range(runs):
                start = time.perf_counter()
                quality, data, encodes = prepare(path, edge, budget)
                times.append(time.perf_counter() - start)
            print(json.dumps({"file": path, "seconds": statistics.median(times), "quality": quality, "encodes": encodes, "bytes": len(data)}))
        return
    path, out, edge, budget = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    quality, data, encodes = prepare(path, edge, budget)
    with open(out, "wb") as f:
        f.write(data)
    print(json.dumps({"quality": quality, "encodes": encodes}))


if __name__ == "__main__":
    main()

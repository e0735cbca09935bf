#!/usr/bin/env python3
"""photoprep side by side with Pillow, ImageMagick, libvips and the libjpeg-turbo floor.

Every tool gets the same photos, the same task (long edge, byte budget) and runs single-threaded as a
whole process per photo (median of --runs); photoprep and Pillow are also timed in-process. Quality is
SSIM on luma against one common reference: full-resolution decode -> EXIF transpose -> Lanczos to the
output's own size, no JPEG. Peak memory is each process's max RSS (GNU time). Run through
Benchmarks/run.sh, which installs the peers and fetches the photos.
"""
import argparse
import datetime
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from PIL import Image, ImageOps
from skimage.metrics import structural_similarity

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PHOTOPREP = os.path.join(ROOT, ".build", "release", "photoprep")
PILLOW = [sys.executable, os.path.join(HERE, "peers", "pillow_prepare.py")]
TASKS = {"T2048": (2048, 500 * 1024), "T1024": (1024, 500 * 1024), "T2048-5MiB": (2048, 5 * 1024 * 1024)}
SINGLE = dict(os.environ, MAGICK_THREAD_LIMIT="1", VIPS_CONCURRENCY="1", OMP_NUM_THREADS="1")


def timed(cmd, stdout=None, shell=False):
    """Runs one process; returns (seconds, max RSS in MB, stdout text)."""
    with tempfile.NamedTemporaryFile("r") as rss:
        full = ["/usr/bin/time", "-f", "%M", "-o", rss.name] + (["bash", "-c", cmd] if shell else cmd)
        start = time.perf_counter()
        done = subprocess.run(full, env=SINGLE, capture_output=True, text=True)
        seconds = time.perf_counter() - start
        if done.returncode != 0:
            raise RuntimeError(f"{cmd}: {done.stderr.strip()[-300:]}")
        return seconds, int(rss.read().split()[-1]) / 1000, done.stdout


def target(w, h, edge):
    if max(w, h) <= edge:
        return w, h
    s = edge / max(w, h)
    return (edge, max(1, round(h * s))) if w >= h else (max(1, round(w * s)), edge)


# Each peer: run(photo, out, edge, budget) -> (seconds, rss MB, quality, encodes) for one whole-process run.

def photoprep_cmd(photo, out, edge, budget):
    folder = tempfile.mkdtemp()
    try:
        s, rss, text = timed([PHOTOPREP, "prepare", photo, "--max-edge", str(edge), "--max-bytes", str(budget),
                              "--out", folder, "--jobs", "1", "--json"])
        event = next(json.loads(l) for l in text.splitlines() if '"prepared"' in l)
        shutil.copy(event["output"], out)
        return s, rss, event["report"].get("quality"), event["report"]["encodes"]
    finally:
        shutil.rmtree(folder)


def pillow(photo, out, edge, budget):
    s, rss, text = timed(PILLOW + [photo, out, str(edge), str(budget)])
    result = json.loads(text)
    return s, rss, result["quality"], result["encodes"]


def imagemagick(photo, out, edge, budget):
    # IM's jpeg:extent keeps the file at or under the value: budget - 1 means "under the budget".
    s, rss, _ = timed(["convert", photo, "-auto-orient", "-resize", f"{edge}x{edge}>", "-define",
                       f"jpeg:extent={budget - 1}", out])
    q = int(subprocess.run(["identify", "-format", "%Q", out], capture_output=True, text=True).stdout or 0)
    return s, rss, q, None


def vips(photo, out, edge, budget):
    total, peak, lo, hi, best, encodes = 0.0, 0.0, 1, 100, None, 0
    tmp = out + ".try.jpg"
    while lo <= hi:
        q = (lo + hi) // 2
        s, rss, _ = timed(["vipsthumbnail", photo, "--size", f"{edge}x{edge}>", "-o", f"{tmp}[Q={q},strip]"])
        total, peak, encodes = total + s, max(peak, rss), encodes + 1
        if os.path.getsize(tmp) < budget:
            best, lo = q, q + 1
            shutil.copy(tmp, out)
        else:
            hi = q - 1
    os.remove(tmp)
    return total, peak, best, encodes


def floor(photo, out, edge, budget):
    """libjpeg-turbo's own tools: decode at the best scale, one encode at Q85 (no resize, no search)."""
    w, h = Image.open(photo).size
    tw, th = target(w, h, edge)
    scale = next((f"1/{d}" for d in (8, 4, 2) if -(-w // d) >= tw and -(-h // d) >= th), "1/1")
    decoded = out + ".ppm"
    s1, rss1, _ = timed(["djpeg", "-scale", scale, "-outfile", decoded, photo])
    s2, rss2, _ = timed(["cjpeg", "-quality", "85", "-outfile", out, decoded])
    os.remove(decoded)
    return s1 + s2, max(rss1, rss2), 85, 1


PEERS = {"photoprep": photoprep_cmd, "Pillow": pillow, "ImageMagick": imagemagick, "libvips": vips, "floor": floor}


def ssim_y(reference_cache, photo, out):
    """SSIM on luma of `out` against the full-resolution reference resized to out's own size."""
    got = Image.open(out)
    if got.size not in reference_cache:
        reference_cache[got.size] = np.asarray(reference_cache["full"].resize(got.size, Image.LANCZOS).convert("L"), dtype=np.float64)
    y = np.asarray(got.convert("RGB").convert("L"), dtype=np.float64)
    return structural_similarity(reference_cache[got.size], y, data_range=255, gaussian_weights=True, sigma=1.5,
                                 use_sample_covariance=False)


def in_process(photos, edge, budget, runs):
    ours = {}
    text = subprocess.run([PHOTOPREP, "bench", "--json", "--runs", str(runs), "--max-edge", str(edge), "--max-bytes",
                           str(budget)] + photos, capture_output=True, text=True, env=SINGLE).stdout
    for line in text.splitlines():
        event = json.loads(line)
        ours[event["file"]] = event["seconds"]
    theirs = {}
    text = subprocess.run(PILLOW + ["--loop", str(edge), str(budget), str(runs)] + photos, capture_output=True,
                          text=True, env=SINGLE).stdout
    for line in text.splitlines():
        event = json.loads(line)
        theirs[event["file"]] = event["seconds"]
    return ours, theirs


def batch(photos, edge, budget, jobs):
    """Throughput of a whole folder: photoprep --jobs N vs the peers run N at a time."""
    folder = tempfile.mkdtemp()
    try:
        src = os.path.join(folder, "in")
        os.mkdir(src)
        for p in photos:
            os.symlink(p, os.path.join(src, os.path.basename(p)))
        rates = {}
        for j in (1, jobs):
            start = time.perf_counter()
            subprocess.run([PHOTOPREP, "prepare", src, "--max-edge", str(edge), "--max-bytes", str(budget), "--out",
                            os.path.join(folder, f"out{j}"), "--jobs", str(j), "-q"], check=True)
            rates[f"photoprep --jobs {j}"] = len(photos) / (time.perf_counter() - start)
        for name in ("Pillow", "ImageMagick", "libvips"):
            start = time.perf_counter()
            with ThreadPoolExecutor(jobs) as pool:
                list(pool.map(lambda p: PEERS[name](p, os.path.join(folder, name + os.path.basename(p)), edge, budget), photos))
            rates[f"{name} x{jobs} processes"] = len(photos) / (time.perf_counter() - start)
        return rates
    finally:
        shutil.rmtree(folder)


def targets(results, tasks):
    """The targets of issue #12, per photo against Pillow and the floor: met or missed, and by how much."""
    lines = ["Targets, per photo (whole process, one core): speed against Pillow — median of the per-photo ratios, "
             "and on the slowest quarter (the photos Pillow takes longest on) — and against the libjpeg-turbo floor; "
             "peak RSS and SSIM-Y photo by photo against Pillow's.", "",
             "| task | × Pillow, median (≥ 3) | × Pillow, slowest quarter (≥ 2.5) | × floor, median (≤ 1.5) | "
             "RSS above Pillow's | SSIM-Y below Pillow's | over budget |", "|---|---|---|---|---|---|---|"]
    def verdict(ok):
        return "met" if ok else "missed"
    for task in tasks:
        ours = {r["photo"]: r for r in results.get((task, "photoprep"), [])}
        pil = {r["photo"]: r for r in results.get((task, "Pillow"), [])}
        flo = {r["photo"]: r for r in results.get((task, "floor"), [])}
        common = sorted(p for p in ours if p in pil)
        if not common:
            continue
        ratio = {p: pil[p]["seconds"] / ours[p]["seconds"] for p in common}
        median = statistics.median(ratio.values())
        slowest = sorted(common, key=lambda p: pil[p]["seconds"], reverse=True)[:max(1, -(-len(common) // 4))]
        quarter = statistics.median(ratio[p] for p in slowest)
        to_floor = statistics.median(ours[p]["seconds"] / flo[p]["seconds"] for p in common if p in flo) if flo else float("nan")
        heavier = [(ours[p]["rss"] - pil[p]["rss"], p) for p in common if ours[p]["rss"] > pil[p]["rss"]]
        worse = [(pil[p]["ssim"] - ours[p]["ssim"], p) for p in common if round(ours[p]["ssim"], 4) < round(pil[p]["ssim"], 4)]
        over = sum(ours[p]["over"] for p in common)
        rss = (f"{len(heavier)} of {len(common)} (worst +{max(heavier)[0]:.0f} MB, {os.path.basename(max(heavier)[1])})"
               if heavier else f"0 of {len(common)}")
        ssim = (f"{len(worse)} of {len(common)} (worst −{max(worse)[0]:.4f}, {os.path.basename(max(worse)[1])})"
                if worse else f"0 of {len(common)}")
        lines.append(f"| {task} | {median:.2f}× {verdict(median >= 3)} | {quarter:.2f}× {verdict(quarter >= 2.5)} | "
                     f"{to_floor:.2f}× {verdict(to_floor <= 1.5)} | {rss}: {verdict(not heavier)} | {ssim}: {verdict(not worse)} | "
                     f"{over}: {verdict(over == 0)} |")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("photos", nargs="+")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tasks", default=",".join(TASKS))
    parser.add_argument("--peers", default=",".join(PEERS))
    parser.add_argument("--markdown", help="write the results table here")
    args = parser.parse_args()
    photos = sorted(os.path.abspath(p) for p in args.photos)
    tasks = {t: TASKS[t] for t in args.tasks.split(",")}
    peers = args.peers.split(",")
    work = tempfile.mkdtemp()
    results = {}  # (task, peer) -> list of dicts
    failures = []
    try:
        for photo in photos:
            full = ImageOps.exif_transpose(Image.open(photo)).convert("RGB")
            cache = {"full": full}
            for task, (edge, budget) in tasks.items():
                for peer in peers:
                    out = os.path.join(work, f"{task}-{peer}.jpg")
                    samples = []
                    try:
                        for _ in range(args.runs):
                            samples.append(PEERS[peer](photo, out, edge, budget))
                    except Exception as error:  # a failure is a result, not a crash of the benchmark
                        failures.append(f"{peer} {task} {os.path.basename(photo)}: {error}")
                        continue
                    size = os.path.getsize(out)
                    results.setdefault((task, peer), []).append({
                        "photo": photo, "seconds": statistics.median(s[0] for s in samples),
                        "rss": max(s[1] for s in samples), "quality": samples[-1][2], "encodes": samples[-1][3],
                        "bytes": size, "over": size >= budget and peer != "floor",
                        "ssim": ssim_y(cache, photo, out),
                        "megapixels": full.size[0] * full.size[1] / 1e6,
                    })
            print(f"done {os.path.basename(photo)}", file=sys.stderr)
        inproc = {task: in_process(photos, edge, budget, args.runs) for task, (edge, budget) in tasks.items()}
        edge, budget = next(iter(tasks.values()))
        rates = batch(photos, edge, budget, os.cpu_count() or 2)
    finally:
        shutil.rmtree(work)

    lines = []
    mp = [r["megapixels"] for r in results.get((next(iter(tasks)), "photoprep"), [])]
    lines.append(f"Measured {datetime.date.today()} on {platform.node() or 'this machine'}: {os.cpu_count()} cores, "
                 f"{platform.machine()}, {len(photos)} photos ({min(mp, default=0):.1f}-{max(mp, default=0):.1f} MP), "
                 f"median of {args.runs} runs, single-threaded, whole process per photo. "
                 f"Command: `Benchmarks/run.sh`.")
    lines.append("")
    lines.append("| task | tool | s / photo | × photoprep | bytes (median) | Q (median) | encodes (mean) | SSIM-Y median | peak RSS median / max | over budget |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|")
    for task in tasks:
        ours = results.get((task, "photoprep"))
        base = statistics.median(r["seconds"] for r in ours) if ours else None
        for peer in peers:
            rows = results.get((task, peer))
            if not rows:
                continue
            sec = statistics.median(r["seconds"] for r in rows)
            enc = [r["encodes"] for r in rows if r["encodes"] is not None]
            q = [r["quality"] for r in rows if r["quality"] is not None]
            lines.append(
                f"| {task} | {peer} | {sec:.3f} | {sec / base:.1f}× | {statistics.median(r['bytes'] for r in rows) / 1000:.0f}k | "
                f"{statistics.median(q) if q else '–'} | {statistics.mean(enc) if enc else float('nan'):.1f} | "
                f"{statistics.median(r['ssim'] for r in rows):.4f} | "
                f"{statistics.median(r['rss'] for r in rows):.0f} / {max(r['rss'] for r in rows):.0f} MB | "
                f"{sum(r['over'] for r in rows)} |")
        ours_in, pillow_in = inproc[task]
        if ours_in and pillow_in:
            a, b = statistics.median(ours_in.values()), statistics.median(pillow_in.values())
            lines.append(f"| {task} | photoprep in-process | {a:.3f} | | | | | | | |")
            lines.append(f"| {task} | Pillow in-process | {b:.3f} | {b / a:.1f}× of photoprep in-process | | | | | | |")
    lines.append("")
    lines += targets(results, tasks)
    lines.append("")
    lines.append(f"Batch throughput ({next(iter(tasks))}, {len(photos)} photos, photos per second): " +
                 ", ".join(f"{k} {v:.1f}" for k, v in rates.items()))
    if failures:
        lines.append("")
        lines.append("Failures: " + "; ".join(failures))
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""photoprep side by side with Pillow, Pillow-SIMD, ImageMagick, libvips and the libjpeg-turbo floor.

Every tool gets the same photos, the same task (long edge, byte budget) and runs single-threaded as a
whole process per photo (median of --runs); photoprep, Pillow and Pillow-SIMD are also timed in-process.
Quality is SSIM on luma against one common reference: full-resolution decode -> EXIF transpose -> Lanczos
to the output's own size, no JPEG. Peak memory is each process's max RSS (GNU time). Each photo is
classified by its JPEG frame header (SOF0/SOF1 baseline, SOF2 progressive) and the targets are stated for
baseline photos, progressive photos and photos under 2 MP apart. Run through Benchmarks/run.sh, which
installs the peers and fetches the photos. photoprep runs with `--quality max` (the budget filled, as Pillow's loop
fills it); the perceptual target against the peers at equal score is Benchmarks/quality.sh's.

Environment: PHOTOPREP (the photoprep binary; default .build/release/photoprep), PILLOW_SIMD_PYTHON (the
python of the Pillow-SIMD venv; default .venv-simd/bin/python; Pillow-SIMD is left out, with the reason
stated, when it cannot import pillow-simd there).
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
PHOTOPREP = os.environ.get("PHOTOPREP") or os.path.join(ROOT, ".build", "release", "photoprep")
PILLOW_SCRIPT = os.path.join(HERE, "peers", "pillow_prepare.py")
PILLOW = [sys.executable, PILLOW_SCRIPT]
# Pillow-SIMD conflicts with Pillow (both are the PIL package): its own venv, made by run.sh.
SIMD_PYTHON = os.environ.get("PILLOW_SIMD_PYTHON") or os.path.join(ROOT, ".venv-simd", "bin", "python")
PILLOW_SIMD = [SIMD_PYTHON, PILLOW_SCRIPT]
SIMD_LOG = os.path.join(HERE, ".results", "pillow-simd-install.log")
SMALL = 2_000_000  # "small photo": fewer pixels than this
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


def jpeg_kind(path):
    """The JPEG's frame type from a scan of its markers up to the first frame header: "baseline" (SOF0, SOF1),
    "progressive" (SOF2), "SOFn" for the others (lossless, arithmetic, hierarchical), None when not a JPEG."""
    with open(path, "rb") as f:
        if f.read(2) != b"\xff\xd8":
            return None
        while True:
            byte = f.read(1)
            if not byte:
                return None
            if byte != b"\xff":
                continue  # stray bytes between segments: skip to the next marker
            marker = f.read(1)
            while marker == b"\xff":  # fill bytes
                marker = f.read(1)
            if not marker:
                return None
            m = marker[0]
            if m == 0x01 or 0xD0 <= m <= 0xD7:  # TEM, RSTn: no length
                continue
            if m in (0xD9, 0xDA):  # EOI or a scan before any frame header
                return None
            length = int.from_bytes(f.read(2), "big")
            if 0xC0 <= m <= 0xCF and m not in (0xC4, 0xC8, 0xCC):  # SOFn (not DHT, JPG, DAC)
                return {0xC0: "baseline", 0xC1: "baseline", 0xC2: "progressive"}.get(m, f"SOF{m - 0xC0}")
            if length < 2:
                return None
            f.seek(length - 2, 1)


def shown(path):
    """A path as the report states it: relative to the repository when inside it."""
    rel = os.path.relpath(path, ROOT)
    return path if rel.startswith("..") else rel


def simd_status():
    """(version, None) when PILLOW_SIMD_PYTHON imports pillow-simd's PIL, else (None, why not)."""
    if not os.path.exists(SIMD_PYTHON):
        why = f"{shown(SIMD_PYTHON)} is missing"
    else:
        done = subprocess.run([SIMD_PYTHON, "-c", "import PIL, importlib.metadata as m; "
                               "assert m.version('pillow-simd') == PIL.__version__, 'PIL there is not pillow-simd'; "
                               "print(PIL.__version__)"], capture_output=True, text=True)
        if done.returncode == 0:
            # run.sh stamps the venv with how it built it: say AVX2 only when it was built with -mavx2.
            stamp = os.path.join(os.path.dirname(os.path.dirname(SIMD_PYTHON)), ".photoprep-requirements")
            built = open(stamp).read() if os.path.exists(stamp) else ""
            return done.stdout.strip() + (" (AVX2 build)" if "-mavx2" in built else " (build flags unknown)"), None
        why = (done.stderr.strip().splitlines() or ["exit %d" % done.returncode])[-1]
    if os.path.exists(SIMD_LOG):  # run.sh keeps a failed build's log: its first real error line says why
        with open(SIMD_LOG, errors="replace") as f:
            lines = [l.strip() for l in f if l.strip()]
        generic = re.compile(r"subprocess-exited-with-error|Failed building wheel|Could not build wheels|"
                             r"finished with status|originates from a subprocess")
        errors = [l for l in lines if re.search(r"(?i)\berror\b|exception|headers or library files", l)
                  and not generic.search(l)] or lines[-1:]
        if errors:
            why += f"; its install failed: {errors[0][:300]} (log: {shown(SIMD_LOG)})"
    return None, why


# Each peer: run(photo, out, edge, budget) -> (seconds, rss MB, quality, encodes[, extras]) for one whole-process
# run; extras is a dict of further figures (the floor's decode-only peak RSS).

def photoprep_cmd(photo, out, edge, budget):
    folder = tempfile.mkdtemp()
    try:
        s, rss, text = timed([PHOTOPREP, "prepare", photo, "--max-edge", str(edge), "--max-bytes", str(budget), "--quality", "max",
                              "--out", folder, "--jobs", "1", "--json"])
        event = next(json.loads(l) for l in text.splitlines() if '"prepared"' in l)
        shutil.copy(event["output"], out)
        return s, rss, event["report"].get("quality"), event["report"]["encodes"]
    finally:
        shutil.rmtree(folder)


def pillow_peer(command):
    """The same peer script (peers/pillow_prepare.py) under a given python: Pillow's venv or Pillow-SIMD's."""
    def run(photo, out, edge, budget):
        s, rss, text = timed(command + [photo, out, str(edge), str(budget)])
        result = json.loads(text)
        return s, rss, result["quality"], result["encodes"]
    return run


pillow = pillow_peer(PILLOW)
pillow_simd = pillow_peer(PILLOW_SIMD)


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
    # djpeg's own peak is what decoding the photo costs libjpeg-turbo itself: for a progressive photo it keeps
    # every DCT coefficient of the whole image until the last scan, at any scale — the true floor of its RSS.
    return s1 + s2, max(rss1, rss2), 85, 1, {"decode_rss": rss1}


PEERS = {"photoprep": photoprep_cmd, "Pillow": pillow, "Pillow-SIMD": pillow_simd, "ImageMagick": imagemagick,
         "libvips": vips, "floor": floor}
PYTHON_PEERS = {"Pillow": PILLOW, "Pillow-SIMD": PILLOW_SIMD}  # also timed in-process (--loop)


def ssim_y(reference_cache, photo, out):
    """SSIM on luma of `out` against the full-resolution reference resized to out's own size."""
    got = Image.open(out)
    if got.size not in reference_cache:
        reference_cache[got.size] = np.asarray(reference_cache["full"].resize(got.size, Image.LANCZOS).convert("L"), dtype=np.float64)
    y = np.asarray(got.convert("RGB").convert("L"), dtype=np.float64)
    return structural_similarity(reference_cache[got.size], y, data_range=255, gaussian_weights=True, sigma=1.5,
                                 use_sample_covariance=False)


def in_process(photos, edge, budget, runs, peers):
    """Per tool (photoprep and the Python peers among `peers`): photo -> median seconds inside one process."""
    commands = {"photoprep": [PHOTOPREP, "bench", "--json", "--runs", str(runs), "--max-edge", str(edge),
                              "--max-bytes", str(budget), "--quality", "max"]}
    for name, command in PYTHON_PEERS.items():
        if name in peers:
            commands[name] = command + ["--loop", str(edge), str(budget), str(runs)]
    times = {}
    for name, command in commands.items():
        text = subprocess.run(command + photos, capture_output=True, text=True, env=SINGLE).stdout
        times[name] = {}
        for line in text.splitlines():
            event = json.loads(line)
            times[name][event["file"]] = event["seconds"]
    return times


def batch(photos, edge, budget, jobs, peers):
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
            subprocess.run([PHOTOPREP, "prepare", src, "--max-edge", str(edge), "--max-bytes", str(budget), "--quality", "max", "--out",
                            os.path.join(folder, f"out{j}"), "--jobs", str(j), "-q"], check=True)
            rates[f"photoprep --jobs {j}"] = len(photos) / (time.perf_counter() - start)
        for name in (p for p in peers if p not in ("photoprep", "floor")):
            start = time.perf_counter()
            with ThreadPoolExecutor(jobs) as pool:
                list(pool.map(lambda p: PEERS[name](p, os.path.join(folder, name + os.path.basename(p)), edge, budget), photos))
            rates[f"{name} x{jobs} processes"] = len(photos) / (time.perf_counter() - start)
        return rates
    finally:
        shutil.rmtree(folder)


def verdict(ok):
    return "met" if ok else "missed"


def by_photo(results, task, peer):
    return {r["photo"]: r for r in results.get((task, peer), [])}


def median_ratio(num, den, photos):
    """Median over `photos` of num[p].seconds / den[p].seconds (photos both have), or None."""
    ratios = [num[p]["seconds"] / den[p]["seconds"] for p in photos if p in num and p in den]
    return statistics.median(ratios) if ratios else None


def fmt(x, target=None):
    """A ratio, with its verdict when a target (a predicate) applies; "–" when there is none."""
    if x is None:
        return "–"
    return f"{x:.2f}×" + (f" {verdict(target(x))}" if target else "")


def targets(results, tasks):
    """The speed and memory targets, per photo against Pillow, Pillow-SIMD and the floor: met or missed, and by
    how much."""
    lines = ["Targets, per photo (whole process, one core): speed against Pillow — median of the per-photo ratios, "
             "and on the slowest quarter (the photos Pillow takes longest on) — and against Pillow-SIMD and the "
             "libjpeg-turbo floor; peak RSS and SSIM-Y photo by photo against Pillow's.", "",
             "| task | × Pillow, median (≥ 3) | × Pillow, slowest quarter (≥ 2.5) | × Pillow-SIMD, median (≥ 2.5) | "
             "× floor, median (≤ 1.3) | RSS above Pillow's | SSIM-Y below Pillow's | over budget |",
             "|---|---|---|---|---|---|---|---|"]
    for task in tasks:
        ours, pil = by_photo(results, task, "photoprep"), by_photo(results, task, "Pillow")
        simd, flo = by_photo(results, task, "Pillow-SIMD"), by_photo(results, task, "floor")
        common = sorted(p for p in ours if p in pil)
        if not common:
            continue
        ratio = {p: pil[p]["seconds"] / ours[p]["seconds"] for p in common}
        median = statistics.median(ratio.values())
        slowest = sorted(common, key=lambda p: pil[p]["seconds"], reverse=True)[:max(1, -(-len(common) // 4))]
        quarter = statistics.median(ratio[p] for p in slowest)
        to_simd = median_ratio(simd, ours, ours)
        to_floor = median_ratio(ours, flo, ours)
        heavier = [(ours[p]["rss"] - pil[p]["rss"], p) for p in common if ours[p]["rss"] > pil[p]["rss"]]
        worse = [(pil[p]["ssim"] - ours[p]["ssim"], p) for p in common if round(ours[p]["ssim"], 4) < round(pil[p]["ssim"], 4)]
        over = sum(ours[p]["over"] for p in common)
        rss = (f"{len(heavier)} of {len(common)} (worst +{max(heavier)[0]:.0f} MB, {os.path.basename(max(heavier)[1])})"
               if heavier else f"0 of {len(common)}")
        ssim = (f"{len(worse)} of {len(common)} (worst −{max(worse)[0]:.4f}, {os.path.basename(max(worse)[1])})"
                if worse else f"0 of {len(common)}")
        lines.append(f"| {task} | {median:.2f}× {verdict(median >= 3)} | {quarter:.2f}× {verdict(quarter >= 2.5)} | "
                     f"{fmt(to_simd, lambda x: x >= 2.5)} | {fmt(to_floor, lambda x: x <= 1.3)} | "
                     f"{rss}: {verdict(not heavier)} | {ssim}: {verdict(not worse)} | {over}: {verdict(over == 0)} |")
    return lines


CLASSES = [  # (row label, which photos, targets: × Pillow, × Pillow-SIMD, × floor; None = figure for information)
    ("all photos", lambda r: True, (lambda x: x >= 3, lambda x: x >= 2.5, lambda x: x <= 1.3)),
    ("baseline (SOF0/SOF1)", lambda r: r["kind"] == "baseline", (lambda x: x >= 3, lambda x: x >= 2.5, None)),
    ("progressive (SOF2)", lambda r: r["kind"] == "progressive", (lambda x: x >= 3, lambda x: x >= 2.5, None)),
    ("under 2 MP", lambda r: r["pixels"] < SMALL, (None, None, lambda x: x <= 1.3)),
]


def class_targets(results, tasks):
    """The per-photo median ratios for baseline and progressive photos apart, and for small photos."""
    lines = ["Targets by kind of photo, per photo, whole process, one core: the median of the per-photo "
             "ratios — Pillow's time ÷ photoprep's (≥ 3), Pillow-SIMD's ÷ photoprep's (≥ 2.5) — and photoprep's time "
             "÷ the libjpeg-turbo floor's (≤ 1.3 on all photos and on photos under 2 MP, i.e. fewer than 2,000,000 "
             "pixels). A verdict where a target is set; a bare figure is for information (how far that "
             "kind of photo is from the floor).", "",
             "| task | photos | n | × Pillow, median (≥ 3) | × Pillow-SIMD, median (≥ 2.5) | × floor, median (≤ 1.3) |",
             "|---|---|---|---|---|---|"]
    for task in tasks:
        ours, pil = by_photo(results, task, "photoprep"), by_photo(results, task, "Pillow")
        simd, flo = by_photo(results, task, "Pillow-SIMD"), by_photo(results, task, "floor")
        if not ours:
            continue
        for label, member, (t_pil, t_simd, t_floor) in CLASSES:
            photos = [p for p, r in ours.items() if member(r)]
            lines.append(f"| {task} | {label} | {len(photos)} | {fmt(median_ratio(pil, ours, photos), t_pil)} | "
                         f"{fmt(median_ratio(simd, ours, photos), t_simd)} | {fmt(median_ratio(ours, flo, photos), t_floor)} |")
    return lines


def rss_table(results, tasks, info):
    """Peak RSS photo by photo, photoprep against Pillow (target: at or below it on every photo) and
    Pillow-SIMD; for progressive photos also djpeg's own peak decoding it, the true floor."""
    tools = ("photoprep", "Pillow", "Pillow-SIMD")
    table = {(task, tool): by_photo(results, task, tool) for task in tasks for tool in tools + ("floor",)}
    photos = sorted({p for task in tasks for p in table[(task, "photoprep")]},
                    key=lambda p: (info[p]["pixels"], os.path.basename(p)))
    if not photos:
        return []
    lines = ["Peak RSS per photo (MB, whole process, the highest of the runs), photoprep / Pillow / Pillow-SIMD per "
             "task; the target is photoprep at or below Pillow on every photo. For a progressive photo, djpeg's own "
             "peak decoding it at the task's scale is the true floor: libjpeg-turbo keeps every DCT coefficient of a "
             "progressive image until its last scan, at any scale.", ""]
    header = ["photo", "MP", "progressive?"]
    for task in tasks:
        header += [f"{task}: photoprep / Pillow / Pillow-SIMD", f"{task}: floor (djpeg)"]
    header.append("photoprep ≤ Pillow")
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]

    def mb(row):
        return f"{row['rss']:.1f}" if row else "–"

    above = {task: [] for task in tasks}  # task -> [(MB above Pillow's, photo)]
    compared = {task: 0 for task in tasks}
    above_floor = []  # (MB above the djpeg floor, task, photo), progressive photos
    for p in photos:
        kind = info[p]["kind"]
        cells = [os.path.basename(p), f"{info[p]['pixels'] / 1e6:.1f}",
                 {"progressive": "yes", "baseline": "no"}.get(kind, kind or "not JPEG")]
        misses = []
        for task in tasks:
            ours, pil, simd = (table[(task, t)].get(p) for t in tools)
            flo = table[(task, "floor")].get(p)
            cells.append(" / ".join(mb(r) for r in (ours, pil, simd)))
            decode = flo.get("decode_rss") if flo else None
            cells.append(f"{decode:.1f}" if kind == "progressive" and decode is not None else "–")
            if ours and pil:
                compared[task] += 1
                if ours["rss"] > pil["rss"]:
                    above[task].append((ours["rss"] - pil["rss"], p))
                    misses.append(f"{task} +{ours['rss'] - pil['rss']:.1f}")
            if ours and kind == "progressive" and decode is not None:
                above_floor.append((ours["rss"] - decode, task, p))
        cells.append("yes" if not misses else "no: " + ", ".join(misses))
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    every = all(not above[t] for t in tasks)
    verdicts = []
    for task in tasks:
        if above[task]:
            gap, p = max(above[task])
            pil_rss = table[(task, "Pillow")][p]["rss"]
            verdicts.append(f"{task} above on {len(above[task])} of {compared[task]} (worst +{gap:.1f} MB: "
                            f"{os.path.basename(p)}, {pil_rss + gap:.1f} vs Pillow's {pil_rss:.1f} MB)")
        else:
            verdicts.append(f"{task} above on 0 of {compared[task]}")
    lines.append(f"Peak RSS at or below Pillow's on every photo: {verdict(every)} — " + "; ".join(verdicts) + ".")
    if above_floor:
        gap, task, p = max(above_floor)
        lines.append(f"Progressive photos, photoprep against the djpeg floor: worst {gap:+.1f} MB ({task}, "
                     f"{os.path.basename(p)}); median {statistics.median(g for g, _, _ in above_floor):+.1f} MB.")
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
    notes = []
    simd_version, simd_missing = simd_status() if "Pillow-SIMD" in peers else (None, None)
    if simd_missing:
        peers.remove("Pillow-SIMD")
        notes.append(f"Pillow-SIMD not measured: {simd_missing}.")
    if not os.access(PHOTOPREP, os.X_OK):
        raise SystemExit(f"{PHOTOPREP} is missing: swift build -c release --product photoprep (or set PHOTOPREP)")
    work = tempfile.mkdtemp()
    results = {}  # (task, peer) -> list of dicts
    info = {}  # photo -> {"kind": baseline / progressive / SOFn / None, "pixels": n}
    failures = []
    try:
        for photo in photos:
            full = ImageOps.exif_transpose(Image.open(photo)).convert("RGB")
            cache = {"full": full}
            info[photo] = {"kind": jpeg_kind(photo), "pixels": full.size[0] * full.size[1]}
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
                    row = {
                        "photo": photo, "seconds": statistics.median(s[0] for s in samples),
                        "rss": max(s[1] for s in samples), "quality": samples[-1][2], "encodes": samples[-1][3],
                        "bytes": size, "over": size >= budget and peer != "floor",
                        "ssim": ssim_y(cache, photo, out),
                        "megapixels": full.size[0] * full.size[1] / 1e6, **info[photo],
                    }
                    for key in (samples[-1][4] if len(samples[-1]) > 4 else {}):
                        row[key] = max(s[4][key] for s in samples)
                    results.setdefault((task, peer), []).append(row)
            print(f"done {os.path.basename(photo)}", file=sys.stderr)
        inproc = {task: in_process(photos, edge, budget, args.runs, peers) for task, (edge, budget) in tasks.items()}
        edge, budget = next(iter(tasks.values()))
        rates = batch(photos, edge, budget, os.cpu_count() or 2, peers)
    finally:
        shutil.rmtree(work)

    lines = []
    mp = [r["megapixels"] for r in results.get((next(iter(tasks)), "photoprep"), [])]
    kinds = [i["kind"] for i in info.values()]
    other = len(kinds) - kinds.count("baseline") - kinds.count("progressive")
    versions = f"Pillow {Image.__version__}" + (f", Pillow-SIMD {simd_version}" if simd_version else "")
    lines.append(f"Measured {datetime.date.today()} on {platform.node() or 'this machine'}: {os.cpu_count()} cores, "
                 f"{platform.machine()}, {len(photos)} photos ({min(mp, default=0):.1f}-{max(mp, default=0):.1f} MP; "
                 f"{kinds.count('baseline')} baseline, {kinds.count('progressive')} progressive"
                 + (f", {other} other" if other else "") +
                 f"; {sum(i['pixels'] < SMALL for i in info.values())} under 2 MP), "
                 f"median of {args.runs} runs, single-threaded, whole process per photo; {versions}. "
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
                f"| {task} | {peer} | {sec:.3f} | {f'{sec / base:.1f}×' if base else '–'} | "
                f"{statistics.median(r['bytes'] for r in rows) / 1000:.0f}k | "
                f"{statistics.median(q) if q else '–'} | {statistics.mean(enc) if enc else float('nan'):.1f} | "
                f"{statistics.median(r['ssim'] for r in rows):.4f} | "
                f"{statistics.median(r['rss'] for r in rows):.0f} / {max(r['rss'] for r in rows):.0f} MB | "
                f"{sum(r['over'] for r in rows)} |")
        times = inproc[task]
        if times.get("photoprep"):
            a = statistics.median(times["photoprep"].values())
            lines.append(f"| {task} | photoprep in-process | {a:.3f} | | | | | | | |")
            for name in PYTHON_PEERS:
                if times.get(name):
                    b = statistics.median(times[name].values())
                    lines.append(f"| {task} | {name} in-process | {b:.3f} | {b / a:.1f}× of photoprep in-process | | | | | | |")
    lines.append("")
    lines += targets(results, tasks)
    lines.append("")
    lines += class_targets(results, tasks)
    lines.append("")
    lines += rss_table(results, tasks, info)
    lines.append("")
    lines.append(f"Batch throughput ({next(iter(tasks))}, {len(photos)} photos, photos per second): " +
                 ", ".join(f"{k} {v:.1f}" for k, v in rates.items()))
    if notes:
        lines.append("")
        lines += notes
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

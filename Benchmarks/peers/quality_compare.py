#!/usr/bin/env python3
"""The perceptual quality target side by side: bytes, SSIMULACRA2, time and peak RSS of photoprep and its peers.

Every photo and task (long edge, byte budget) gets one reference: the photo decoded whole with Pillow, EXIF
orientation applied, RGB, resized from full resolution with Lanczos3 (Image.LANCZOS) so that its long edge is the
task's edge (never upscaled). An output whose size differs from the reference's (a pixel of rounding, or shrunk to
fit the budget) is resized to the reference's size with Lanczos first, and the tables say so.

Two scorers, one metric:
  searching        every score inside the searches below goes through `photoprep score REFERENCE OUTPUT... --json`
                   (photoprep's own SSIMULACRA2, in process, ~0.05-0.3 s a photo; several outputs per call). Without
                   a photoprep that has `score`, the PyPI package is used here too (slow: hours for the corpus).
  reported         the output each tool ends with, per photo and task, is scored once more with the PyPI package
                   (ssimulacra2, compute_ssimulacra2's own functions in its order, the reference's half kept:
                   the same number, checked at start by self_test): every score in the tables is the package's.
                   The largest |photoprep score - package| over those outputs is reported.
Both are cached by (reference, output bytes) in Benchmarks/.results/quality-scores.json (photoprep's under a key
naming its binary), so a second run only encodes and times.

Tools, each doing its whole job as one process:
  photoprep        `photoprep prepare PHOTO --max-edge E --max-bytes B --out DIR --jobs 1 --json` (its default: the
                   smallest JPEG scoring >= 85); left out, with a note, while the binary has no --quality option.
                   Its --json report gives its own score (against its own resize), quality, chroma, progressive.
  photoprep max    the same with `--quality max` (fill the budget: the behaviour before the quality target); without
                   --quality, today's binary as it is.
  Pillow budget    peers/pillow_prepare.py: Pillow's bisection filling the budget (the Pillow peer of compare.py).
  Pillow, Pillow-SIMD, libvips, ImageMagick
                   at the lowest JPEG quality (1-100) whose score reaches photoprep's on that photo (85 without
                   photoprep's default), under the budget: peers/pillow_quality.py (draft + Lanczos thumbnail) under
                   .venv and .venv-simd, vipsthumbnail, convert -resize -quality -strip. The search starts at
                   photoprep's quality on the photo (88 without it), steps out 2, 4, 8... until it brackets the
                   answer, then bisects (the same answer as a bisection of 1-100 when the score rises with the
                   quality; ~5 scores instead of 7). An encode is made once per (peer, photo, edge, quality): the
                   T2048 and T2048-5MiB searches share them.
  oracles          libjpeg-turbo (cjpeg -quality Q: baseline, 4:2:0; and the bytes of -optimize -progressive at the
                   same Q) and jpegli (pyjpegli.encode) encoding the reference's own pixels at the lowest quality
                   reaching 85 and photoprep's score. Bytes only.
The searches run in 2 processes, each photo's package scores queued behind them. When every search is done the
timing starts: the final commands one at a time under `taskset -c 0` (one core) with /usr/bin/time for the peak
RSS, median of --runs (interleaved rounds; a command that is the same in two tasks, a peer at the same quality and
edge, is timed once), while at most one package scorer goes on, pinned to the other core. Run through
Benchmarks/quality.sh, which installs the peers and fetches the photos.

The raw rows (and what the tables need) go to Benchmarks/.results/quality-raw.json; `--render THAT_FILE` prints
the tables again from them, without encoding, scoring or timing anything.

Environment: PHOTOPREP (default .build/release/photoprep), PILLOW_SIMD_PYTHON (default .venv-simd/bin/python).
"""
import argparse
import collections
import concurrent.futures as cf
import datetime
import hashlib
import importlib.metadata
import io
import json
import multiprocessing
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
import PIL
from PIL import Image, ImageOps
import ssimulacra2
from ssimulacra2 import ssimulacra2 as s2

PEERS_DIR = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(PEERS_DIR)
ROOT = os.path.dirname(BENCH)
PHOTOPREP = os.environ.get("PHOTOPREP") or os.path.join(ROOT, ".build", "release", "photoprep")
PILLOW_BUDGET = os.path.join(PEERS_DIR, "pillow_prepare.py")
PILLOW_QUALITY = os.path.join(PEERS_DIR, "pillow_quality.py")
SIMD_PYTHON = os.environ.get("PILLOW_SIMD_PYTHON") or os.path.join(ROOT, ".venv-simd", "bin", "python")
RESULTS = os.path.join(BENCH, ".results")
CACHE = os.path.join(RESULTS, "quality-scores.json")
RAW = os.path.join(RESULTS, "quality-raw.json")
TASKS = {"T1024": (1024, 500 * 1024), "T2048": (2048, 500 * 1024), "T2048-5MiB": (2048, 5 * 1024 * 1024)}
TARGET, FLOOR = 85.0, 83.0  # the targets: >= 85 on 95 % of photos, >= 83 on every one
BYTES_VS_MAX = {"T1024": 0.30, "T2048": 0.55, "T2048-5MiB": 0.30}  # photoprep / photoprep max, median bytes
SPEED_TASKS = ("T1024", "T2048")  # >= 2x Pillow's budget loop
SCORERS = 2  # processes for the searches and the scoring (the machine has 2 cores)
GUESS = 88  # where a peer's search starts without photoprep's quality
SINGLE = dict(os.environ, MAGICK_THREAD_LIMIT="1", VIPS_CONCURRENCY="1", OMP_NUM_THREADS="1")
# What a reference is, in the cache key: a change of Pillow (its Lanczos) makes new references.
REF_VERSION = f"pil{PIL.__version__}-lanczos3-fullres"
PASSED_THROUGH = ("passedThrough", "metadataStripped", "losslesslyOriented")
PEERS = ("Pillow", "Pillow-SIMD", "libvips", "ImageMagick")
ORACLES = ("libjpeg-turbo", "jpegli")
CONVERT = "/usr/bin/convert" if os.path.exists("/usr/bin/convert") else (shutil.which("convert") or "convert")
METRIC = "pypi"  # the searches' scorer: "photoprep" when its binary has `score` (set in main, before the fork)
METRIC_TAG = "pypi"  # in the cache key of the searches' scores: "photoprep-<digest of the binary>"


def digest(data):
    return hashlib.sha256(data).hexdigest()[:32]


def target_size(w, h, edge):
    """The task's size for a w x h photo: long edge `edge`, never upscaled, the short edge rounded."""
    if max(w, h) <= edge:
        return w, h
    s = edge / max(w, h)
    return (edge, max(1, round(h * s))) if w >= h else (max(1, round(w * s)), edge)


# ---------------------------------------------------------------------------------------------------------------
# SSIMULACRA2, the PyPI package. compute_ssimulacra2(ref, dist) redoes the reference's half (colour conversion, two
# of the five blurs per scale) on every call; Reference keeps it, calling the package's own functions in the same
# order, so the score is the same number (checked against compute_ssimulacra2 at start: self_test), at about 60 % of
# the time.

class Reference:
    def __init__(self, path):
        rgb = np.array(Image.open(path).convert("RGB"), dtype=np.float64)
        self.size = (rgb.shape[1], rgb.shape[0])
        linear = s2.srgb_to_linear(rgb)
        img = s2.make_positive_xyb(s2.linear_rgb_to_xyb(linear))
        self.scales = []  # per scale: (xyb, blurred xyb^2, blurred xyb)
        for scale in range(s2.kNumScales):
            if img.shape[0] < 8 or img.shape[1] < 8:
                break
            self.scales.append((img, s2.blur_image(img * img), s2.blur_image(img)))
            if scale < s2.kNumScales - 1:
                linear = s2.downsample(linear, 2, 2)
                img = s2.make_positive_xyb(s2.linear_rgb_to_xyb(linear))

    def score(self, rgb):
        """SSIMULACRA2 of an RGB array (H x W x 3, 0-255, the reference's size) against the reference."""
        linear = s2.srgb_to_linear(rgb)
        img2 = s2.make_positive_xyb(s2.linear_rgb_to_xyb(linear))
        msssim = s2.Msssim()
        for scale, (img1, sigma1_sq, mu1) in enumerate(self.scales):
            sigma2_sq = s2.blur_image(img2 * img2)
            sigma12 = s2.blur_image(img1 * img2)
            mu2 = s2.blur_image(img2)
            data = s2.MsssimScale()
            data.avg_ssim = s2.ssim_map(mu1, mu2, sigma1_sq, sigma2_sq, sigma12)
            data.avg_edgediff = s2.edge_diff_map(img1, mu1, img2, mu2)
            msssim.scales.append(data)
            if scale < s2.kNumScales - 1:
                linear = s2.downsample(linear, 2, 2)
                img2 = s2.make_positive_xyb(s2.linear_rgb_to_xyb(linear))
        return msssim.score()


FAST = True  # Reference agrees with compute_ssimulacra2 (self_test); else every score goes through the package
_references = collections.OrderedDict()  # per process: the last two references


def reference(path):
    if path not in _references:
        _references[path] = Reference(path)
        while len(_references) > 2:
            _references.popitem(last=False)
    _references.move_to_end(path)
    return _references[path]


def upright(data):
    return ImageOps.exif_transpose(Image.open(io.BytesIO(data)))  # no-op: outputs carry no orientation


def package_score(ref_png, ref_size, data):
    """The PyPI package's (score, "WxH" when the output had to be resized to the reference's size, else None)."""
    im = upright(data)
    resized = None
    if im.size != tuple(ref_size):
        resized = f"{im.size[0]}x{im.size[1]}"
        im = im.convert("RGB").resize(tuple(ref_size), Image.LANCZOS)
    if FAST:
        return reference(ref_png).score(np.array(im.convert("RGB"), dtype=np.float64)), resized
    buf = io.BytesIO()
    im.convert("RGB").save(buf, "PNG", compress_level=1)
    buf.seek(0)
    return ssimulacra2.compute_ssimulacra2(ref_png, buf), resized


def self_test(photo, work):
    """Reference.score must give compute_ssimulacra2's number: on a 384x256 piece of the first photo, at Q60 and Q90."""
    global FAST
    im = ImageOps.exif_transpose(Image.open(photo)).convert("RGB")
    im.thumbnail((1024, 1024), Image.LANCZOS)
    piece = im.crop((0, 0, min(384, im.width), min(256, im.height)))
    ref = os.path.join(work, "selftest.png")
    piece.save(ref)
    for q in (60, 90):
        buf = io.BytesIO()
        piece.save(buf, "JPEG", quality=q)
        dist = os.path.join(work, f"selftest-{q}.jpg")
        with open(dist, "wb") as f:
            f.write(buf.getvalue())
        want = ssimulacra2.compute_ssimulacra2(ref, dist)
        got = Reference(ref).score(np.array(Image.open(dist).convert("RGB"), dtype=np.float64))
        if abs(want - got) > 1e-9:
            FAST = False
            return f"the cached-reference scorer gave {got} where compute_ssimulacra2 gave {want}: scoring without it (slower)"
    return None


# ---------------------------------------------------------------------------------------------------------------
# SSIMULACRA2, photoprep's: `photoprep score REFERENCE OUTPUT... --json`, one JSON line per output.

def photoprep_scores(ref_png, paths):
    done = subprocess.run([PHOTOPREP, "score", ref_png, *paths, "--json"], env=SINGLE, capture_output=True, text=True)
    got = {}
    for line in done.stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and event.get("score") is not None:
            got[event.get("file")] = float(event["score"])
    lost = [p for p in paths if p not in got]
    if lost:
        raise RuntimeError(f"photoprep score gave no score for {', '.join(os.path.basename(p) for p in lost)} "
                           f"(exit {done.returncode}): {done.stderr.strip()[-300:]}")
    return [got[p] for p in paths]


def comparable(ref_size, data, base):
    """A file `photoprep score` compares with the reference: the output itself as BASE.jpg, or, when its size differs
    from the reference's, the output resized to it with Lanczos (as package_score does) as BASE.png.
    Returns (path, "WxH" or None)."""
    im = upright(data)
    if im.size == tuple(ref_size):
        path = base + ".jpg"
        with open(path, "wb") as f:
            f.write(data)
        return path, None
    path = base + ".png"
    im.convert("RGB").resize(tuple(ref_size), Image.LANCZOS).save(path, compress_level=1)
    return path, f"{im.size[0]}x{im.size[1]}"


class Scorer:
    """The searches' scores of output bytes against one reference (photoprep's metric; the package's when photoprep
    has no `score`), through the cache: `known` maps digest -> [score, resized]; `new` gets the ones computed."""

    def __init__(self, ref, known, scratch):
        self.ref, self.known, self.new, self.scratch = ref, known, {}, scratch

    def many(self, datas):
        out, todo = [None] * len(datas), collections.OrderedDict()
        for i, data in enumerate(datas):
            h = digest(data)
            hit = self.known.get(h) or self.new.get(h)
            if hit is not None:
                out[i] = (hit[0], hit[1])
            else:
                todo.setdefault(h, []).append(i)
        if todo:
            if METRIC == "photoprep":
                files = [(h,) + comparable(self.ref["size"], datas[idx[0]], os.path.join(self.scratch, f"s-{os.getpid()}-{h}"))
                         for h, idx in todo.items()]
                try:
                    scores = photoprep_scores(self.ref["png"], [path for _, path, _ in files])
                finally:
                    for _, path, _ in files:
                        os.remove(path)
                for (h, _, resized), score in zip(files, scores):
                    self.new[h] = [score, resized]
            else:
                for h, idx in todo.items():
                    self.new[h] = list(package_score(self.ref["png"], self.ref["size"], datas[idx[0]]))
            for h, idx in todo.items():
                for i in idx:
                    out[i] = tuple(self.new[h])
        return out

    def __call__(self, data):
        return self.many([data])[0]


def metric_key(ref):
    return f"{ref['key']}/{METRIC_TAG}"


def keep(work, data):
    """Keeps an output the tables report (for its package score); returns its digest."""
    h = digest(data)
    path = os.path.join(work, "keep", h + ".jpg")
    if not os.path.exists(path):
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    return h


# ---------------------------------------------------------------------------------------------------------------
# The tools' commands.

def peer_command(peer, photo, out, edge, quality):
    """The whole job of a peer at one JPEG quality: decode, resize to the edge its usual way, encode."""
    if peer == "Pillow":
        return [sys.executable, PILLOW_QUALITY, photo, out, str(edge), str(quality)]
    if peer == "Pillow-SIMD":
        return [SIMD_PYTHON, PILLOW_QUALITY, photo, out, str(edge), str(quality)]
    if peer == "libvips":
        return ["vipsthumbnail", photo, "--size", f"{edge}x{edge}>", "-o", f"{out}[Q={quality},strip]"]
    if peer == "ImageMagick":
        return [CONVERT, photo, "-auto-orient", "-resize", f"{edge}x{edge}>", "-quality", str(quality), "-strip", out]
    raise ValueError(peer)


def photoprep_command(photo, edge, budget, outdir, extra):
    return [PHOTOPREP, "prepare", photo, "--max-edge", str(edge), "--max-bytes", str(budget), "--out", outdir,
            "--jobs", "1", "--json"] + extra


def photoprep_event(text):
    """The per-file event of `prepare --json` (prepared or unchanged); raises with the reason on any other."""
    for line in text.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("event") in ("prepared", "unchanged"):
            return event
        if event.get("event") in ("failed", "skipped"):
            raise RuntimeError(f"photoprep {event['event']}: {event.get('reason')}")
    raise RuntimeError("photoprep printed no prepared event")


def run(cmd):
    done = subprocess.run(cmd, env=SINGLE, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{os.path.basename(cmd[0])} exit {done.returncode}: {done.stderr.strip()[-300:]}")
    return done.stdout


def read(path):
    with open(path, "rb") as f:
        return f.read()


def search(encode, score_of, target, budget, guess=GUESS):
    """The lowest quality 1-100 whose encode is under `budget` and scores >= `target`, scores rising with the
    quality: from `guess`, steps of 2, 4, 8... until the answer is bracketed, then bisection (an encode over the
    budget is not scored: it and every higher quality are out).
    Returns (quality, status, {quality: (bytes, score or None, resized, data)}): status "met"; "budget" when the
    target needs more bytes than the budget (the quality is then the highest under it); "unreachable" when quality
    100 scores below the target (quality 100); "no fit" when quality 1 is over the budget (quality None)."""
    probes = {}

    def enough(q):  # q reaches the target, or is over the budget: the answer is q or lower
        if q not in probes:
            data = encode(q)
            if len(data) >= budget:
                probes[q] = (len(data), None, None, data)
            else:
                score, resized = score_of(data)
                probes[q] = (len(data), score, resized, data)
        return probes[q][1] is None or probes[q][1] >= target

    g = min(100, max(1, int(guess)))
    step = 2
    if enough(g):  # the answer is in [lo, hi]
        lo, hi = 1, g
        while hi > 1:
            q = max(1, hi - step)
            if enough(q):
                hi = q
            else:
                lo = q + 1
                break
            step *= 2
    else:  # the answer is in [lo, hi], hi = 101: none
        lo, hi = g + 1, 101
        while lo <= 100:
            q = min(100, lo - 1 + step)
            if enough(q):
                hi = q
                break
            lo = q + 1
            step *= 2
    while lo < hi:
        q = (lo + hi) // 2
        if enough(q):
            hi = q
        else:
            lo = q + 1
    # lo - 1 (when >= 1) was tried and scored under the target; lo (when <= 100) was tried and passed or was over.
    if lo > 100:
        return 100, "unreachable", probes
    if probes[lo][1] is not None:
        return lo, "met", probes
    return (lo - 1, "budget", probes) if lo > 1 else (None, "no fit", probes)


def chosen(row, q, probes, work):
    """The row's bytes, score and kept output at quality q of a search."""
    if q is not None:
        size, score, resized, data = probes[q]
        row.update(bytes=size, score=score, metric=score, resized=resized, digest=keep(work, data))
    row["probes"] = {str(k): list(v[:3]) for k, v in sorted(probes.items())}
    row["scores_run"] = sum(v[1] is not None for v in probes.values())
    return row


# ---------------------------------------------------------------------------------------------------------------
# Jobs, run in the pool of SCORERS processes. Each returns (result, {cache key: new scores}).

def job_prepare(photo, stem, photo_hash, tasks, tools, work, known):
    """The references of one photo (one per edge), then photoprep (default, max) and Pillow's budget loop on every
    task, once each (untimed), their outputs scored (one `photoprep score` per reference)."""
    full = ImageOps.exif_transpose(Image.open(photo))
    full = full.convert("RGB")
    info = {"pixels": full.width * full.height, "size": list(full.size)}
    refs = {}
    for edge in sorted({edge for edge, _ in tasks.values()}):
        size = target_size(full.width, full.height, edge)
        img = full if size == full.size else full.resize(size, Image.LANCZOS)
        png, ppm = os.path.join(work, f"{stem}@{edge}.png"), os.path.join(work, f"{stem}@{edge}.ppm")
        img.save(png, compress_level=1)
        img.save(ppm)
        refs[edge] = {"png": png, "ppm": ppm, "size": list(size), "key": f"{photo_hash}@{edge}/{REF_VERSION}"}
    del full
    outputs, errors, made = {}, [], collections.defaultdict(list)  # made: edge -> [(task, tool, row, data)]
    for task, (edge, budget) in tasks.items():
        outputs[task] = {}
        for tool in tools:
            try:
                if tool.startswith("photoprep"):
                    outdir = tempfile.mkdtemp(dir=work)
                    extra = ["--quality", "max"] if tool == "photoprep max" and tools[tool] else []
                    event = photoprep_event(run(photoprep_command(photo, edge, budget, outdir, extra)))
                    data = read(event["output"])
                    shutil.rmtree(outdir)
                    report = event.get("report") or {}
                    row = {"quality": report.get("quality"), "own_score": report.get("score", event.get("score")),
                           "target": report.get("target"), "missed_target": report.get("missedTarget"),
                           "action": report.get("action") or event.get("action"), "chroma": report.get("chroma"),
                           "progressive": report.get("progressive"), "encodes": report.get("encodes")}
                else:  # Pillow budget
                    out = os.path.join(work, f"{stem}-{task}-pillow-budget.jpg")
                    row = json.loads(run([sys.executable, PILLOW_BUDGET, photo, out, str(edge), str(budget)]))
                    data = read(out)
                    os.remove(out)
                row.update(bytes=len(data), over=len(data) >= budget, digest=keep(work, data))
                made[edge].append((task, tool, row, data))
            except Exception as error:  # a failure is a result, not a crash of the benchmark
                errors.append(f"{tool} {task} {os.path.basename(photo)}: {error}")
    new_scores = {}
    for edge, items in made.items():
        ref = refs[edge]
        score_of = Scorer(ref, known.get(metric_key(ref), {}), work)
        try:
            scores = score_of.many([data for _, _, _, data in items])
        except Exception as error:
            errors.append(f"scoring {os.path.basename(photo)} @{edge}: {error}")
            continue
        for (task, tool, row, _), (score, resized) in zip(items, scores):
            row.update(score=score, metric=score, resized=resized)
            outputs[task][tool] = row
        new_scores[metric_key(ref)] = score_of.new
    return {"info": info, "refs": refs, "outputs": outputs, "errors": errors}, new_scores


def job_peer(peer, photo, stem, task, edge, budget, target, guess, ref, work, known):
    """A peer's lowest quality reaching `target` under the budget (see search). Its encodes are kept in work/enc
    for the other task at the same edge."""
    def encode(q):
        path = os.path.join(work, "enc", f"{stem}-{edge}-{peer}-q{q}.jpg")
        if not os.path.exists(path):
            tmp = os.path.join(work, "enc", f"{stem}-{edge}-{peer}-q{q}-{os.getpid()}.jpg")
            run(peer_command(peer, photo, tmp, edge, q))
            os.replace(tmp, path)
        return read(path)
    score_of = Scorer(ref, known.get(metric_key(ref), {}), work)
    q, status, probes = search(encode, score_of, target, budget, guess)
    row = chosen({"quality": q, "status": status, "target": target}, q, probes, work)
    return row, {metric_key(ref): score_of.new}


def job_oracle(oracle, ref, targets, work, known):
    """An encoder on the reference's own pixels (no decode, no resize): per target, the lowest quality reaching it.
    libjpeg-turbo also gives the bytes of -optimize -progressive at that quality (the same coefficients, so the
    same score)."""
    memo = {}
    if oracle == "libjpeg-turbo":
        def encode(q):
            if q not in memo:
                memo[q] = subprocess.run(["cjpeg", "-quality", str(q), ref["ppm"]], capture_output=True, check=True).stdout
            return memo[q]
    else:
        import pyjpegli
        im = Image.open(ref["png"]).convert("RGB")
        rgb, (w, h) = im.tobytes(), im.size

        def encode(q):
            if q not in memo:
                memo[q] = pyjpegli.encode(rgb, w, h, q)
            return memo[q]
    score_of = Scorer(ref, known.get(metric_key(ref), {}), work)
    rows, guess = {}, GUESS
    for label, target in targets.items():
        q, status, probes = search(encode, score_of, target, float("inf"), guess)
        guess = q
        row = chosen({"quality": q, "status": status, "target": target}, q, probes, work)
        if oracle == "libjpeg-turbo":
            row["bytes_optimized"] = len(subprocess.run(["cjpeg", "-quality", str(q), "-optimize", "-progressive",
                                                         ref["ppm"]], capture_output=True, check=True).stdout)
        rows[label] = row
    return rows, {metric_key(ref): score_of.new}


def job_final(ref, digests, work, known):
    """The PyPI package's score of each kept output (by digest) against the reference."""
    got = {}
    for h in digests:
        hit = known.get(ref["key"], {}).get(h)
        got[h] = hit if hit is not None else list(package_score(ref["png"], ref["size"], read(os.path.join(work, "keep", h + ".jpg"))))
    return got, {ref["key"]: got}
# ---------------------------------------------------------------------------------------------------------------
# The peers that are here, and why the others are not.

def photoprep_status():
    """(has --quality, None) or (None, why photoprep cannot run)."""
    if not os.access(PHOTOPREP, os.X_OK):
        return None, f"{PHOTOPREP} is missing (swift build -c release --product photoprep, or set PHOTOPREP)"
    done = subprocess.run([PHOTOPREP, "prepare", "--help"], capture_output=True, text=True)
    return bool(re.search(r"(^|\s)--quality\b", done.stdout + done.stderr)), None


def available_peers():
    have, missing = [], {}
    for peer in PEERS:
        if peer == "Pillow-SIMD":
            if not os.path.exists(SIMD_PYTHON):
                missing[peer] = f"{SIMD_PYTHON} is missing (Benchmarks/run.sh builds it)"
                continue
            done = subprocess.run([SIMD_PYTHON, "-c", "import PIL, importlib.metadata as m; "
                                   "assert m.version('pillow-simd') == PIL.__version__"], capture_output=True, text=True)
            if done.returncode != 0:
                missing[peer] = f"{SIMD_PYTHON} has no pillow-simd"
                continue
        elif peer == "libvips" and not shutil.which("vipsthumbnail"):
            missing[peer] = "vipsthumbnail is not installed (apt: libvips-tools)"
            continue
        elif peer == "ImageMagick":
            done = subprocess.run([CONVERT, "-version"], capture_output=True, text=True)
            if "ImageMagick" not in done.stdout:
                missing[peer] = "ImageMagick's convert is not installed (apt: imagemagick)"
                continue
        have.append(peer)
    oracles, why = [], {}
    if shutil.which("cjpeg"):
        oracles.append("libjpeg-turbo")
    else:
        why["libjpeg-turbo"] = "cjpeg is not installed (apt: libjpeg-turbo-progs)"
    try:
        import pyjpegli  # noqa: F401
        oracles.append("jpegli")
    except ImportError as error:
        why["jpegli"] = f"pyjpegli does not import ({error})"
    return have, missing, oracles, why


def versions():
    parts = [f"Pillow {PIL.__version__}", f"ssimulacra2 {ssimulacra2.__version__}"]
    for name, cmd, pattern in (("libvips", ["vipsthumbnail", "--vips-version"], r"libvips ([\d.]+)"),
                               ("ImageMagick", [CONVERT, "-version"], r"ImageMagick ([\d.-]+)"),
                               ("libjpeg-turbo", ["cjpeg", "-version"], r"version ([\d.]+)")):
        try:
            done = subprocess.run(cmd, capture_output=True, text=True)
            m = re.search(pattern, done.stdout + done.stderr)
            if m:
                parts.append(f"{name} {m.group(1)}")
        except OSError:
            pass
    if os.path.exists(SIMD_PYTHON):
        done = subprocess.run([SIMD_PYTHON, "-c", "import PIL; print(PIL.__version__)"], capture_output=True, text=True)
        if done.returncode == 0:
            parts.insert(1, f"Pillow-SIMD {done.stdout.strip()}")
    try:
        parts.append(f"pyjpegli {importlib.metadata.version('pyjpegli')}")
    except importlib.metadata.PackageNotFoundError:
        pass
    return ", ".join(parts)


def photoprep_has_score():
    """True when this photoprep has `score` and it gives a number (a reference against itself: 100)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "probe.png")
        Image.new("RGB", (64, 48), (90, 140, 200)).save(path)
        try:
            return abs(photoprep_scores(path, [path])[0] - 100) < 0.5
        except Exception:
            return False


def binary_tag(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return "photoprep-" + h.hexdigest()[:16]


# ---------------------------------------------------------------------------------------------------------------
# Timing: one process at a time, on core 0.

def timed(cmd, taskset):
    """(seconds, peak RSS in MB) of one whole-process run."""
    with tempfile.NamedTemporaryFile("r") as rss:
        full = (["taskset", "-c", "0"] if taskset else []) + ["/usr/bin/time", "-f", "%M", "-o", rss.name] + cmd
        start = time.perf_counter()
        done = subprocess.run(full, env=SINGLE, capture_output=True, text=True)
        seconds = time.perf_counter() - start
        if done.returncode != 0:
            raise RuntimeError(f"{os.path.basename(cmd[0])}: {done.stderr.strip()[-300:]}")
        return seconds, int(rss.read().split()[-1]) / 1000


def time_photo(photo, stem, tasks, rows, tools, runs, work, taskset):
    """Per task and tool, the median seconds and the highest peak RSS of `runs` interleaved rounds. A command that
    is the same in two tasks (a peer at the same edge and quality) is timed once, for both."""
    commands, users = {}, collections.defaultdict(list)  # what the command is -> function making it; -> (task, tool)
    timedir = os.path.join(work, "time")
    os.makedirs(timedir, exist_ok=True)
    for task, (edge, budget) in tasks.items():
        for tool, row in rows[task].items():
            if tool.startswith("photoprep"):
                extra = ["--quality", "max"] if tool == "photoprep max" and tools[tool] else []
                key = (tool, edge, budget)
                commands[key] = (lambda edge=edge, budget=budget, extra=extra:
                                 photoprep_command(photo, edge, budget, tempfile.mkdtemp(dir=timedir), extra))
            elif tool == "Pillow budget":
                out = os.path.join(timedir, f"{stem}-time.jpg")
                key = (tool, edge, budget)
                commands[key] = (lambda edge=edge, budget=budget, out=out:
                                 [sys.executable, PILLOW_BUDGET, photo, out, str(edge), str(budget)])
            elif tool in PEERS and row.get("quality") is not None:
                out = os.path.join(timedir, f"{stem}-time.jpg")
                key = (tool, edge, row["quality"])
                commands[key] = (lambda tool=tool, edge=edge, q=row["quality"], out=out:
                                 peer_command(tool, photo, out, edge, q))
            else:
                continue
            users[key].append((task, tool))
    samples = collections.defaultdict(list)
    errors = []
    for _ in range(runs):
        for key, make in commands.items():
            if key in samples and samples[key] is None:
                continue
            try:
                samples[key].append(timed(make(), taskset))
            except Exception as error:
                errors.append(f"{key[0]} {users[key][0][0]} {os.path.basename(photo)} (timing): {error}")
                samples[key] = None
    for key, got in samples.items():
        if got:
            for task, tool in users[key]:
                rows[task][tool]["seconds"] = statistics.median(s for s, _ in got)
                rows[task][tool]["rss"] = max(r for _, r in got)
                rows[task][tool]["timed_with"] = users[key][0][0] if len(users[key]) > 1 else None
    shutil.rmtree(timedir)
    return errors


# ---------------------------------------------------------------------------------------------------------------
# The report.

def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def kb(n):
    return "–" if n is None else f"{n / 1000:.0f}k"


def num(x, fmt="{:.1f}"):
    return "–" if x is None else fmt.format(x)


def missed(by):
    return f"missed by {by}"


def summary_table(task, per_photo, tools, base):
    """One row per tool: bytes, scores, time, RSS over the photos of one task."""
    lines = [f"**{task}** ({TASKS[task][0]} px, budget {TASKS[task][1]} bytes)", "",
             "| tool | photos | bytes (median) | Q (median) | score median | score min | ≥ 85 | s / photo | "
             f"× {base} time | peak RSS median / max | resized to score | target not reached |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    base_rows = [r[base] for r in per_photo.values() if base in r and r[base].get("seconds")]
    base_time = med(r["seconds"] for r in base_rows)
    for tool in tools:
        rows = [r[tool] for r in per_photo.values() if tool in r and r[tool].get("bytes") is not None]
        if not rows:
            continue
        scores = [r["score"] for r in rows if r.get("score") is not None]
        secs = med(r.get("seconds") for r in rows)
        rss = [r["rss"] for r in rows if r.get("rss") is not None]
        resized = sum(1 for r in rows if r.get("resized"))
        short = sum(1 for r in rows if r.get("status") not in (None, "met") or r.get("missed_target"))
        lines.append(
            f"| {tool} | {len(rows)} | {kb(med(r['bytes'] for r in rows))} | {num(med(r.get('quality') for r in rows), '{:.0f}')} | "
            f"{num(med(scores))} | {num(min(scores) if scores else None)} | "
            f"{sum(s >= TARGET for s in scores)}/{len(scores)} | {num(secs, '{:.3f}')} | "
            f"{num(secs / base_time if secs and base_time else None, '{:.2f}×')} | "
            f"{f'{statistics.median(rss):.0f} / {max(rss):.0f} MB' if rss else '–'} | {resized or ''} | {short or ''} |")
        if tool == "libjpeg-turbo ≥85" or tool == "libjpeg-turbo ≥photoprep":
            opt = [r["bytes_optimized"] for r in rows if r.get("bytes_optimized")]
            lines.append(f"| {tool} -optimize -progressive | {len(opt)} | {kb(med(opt))} | | (same) | | | | | | | |")
    return lines


def targets_lines(per_task, pp, pp_is_default, tasks):
    """The issue's targets, each met or missed by how much."""
    lines = ["Targets" + ("" if pp_is_default else " (this photoprep has no --quality: \"photoprep max\" stands in "
                                                   "for photoprep's default, so most of these say little)") + ":", ""]
    for task in tasks:
        per_photo = per_task[task]
        ours = {p: r[pp] for p, r in per_photo.items() if pp in r and r[pp].get("score") is not None}
        if not ours:
            lines.append(f"- {task}: photoprep not measured")
            continue
        n = len(ours)
        scores = [r["score"] for r in ours.values()]
        share = sum(s >= TARGET for s in scores) / n
        low = min(scores)
        ok = share >= 0.95 and low >= FLOOR
        why = []
        if share < 0.95:
            why.append(f"{0.95 - share:.0%} of the photos")
        if low < FLOOR:
            why.append(f"{FLOOR - low:.1f} on the worst photo (min {low:.1f})")
        lines.append(f"- {task} score ≥ 85 on ≥ 95 % and ≥ 83 on every photo: "
                     + ("met" if ok else missed(" and ".join(why))) + f" ({share:.0%} ≥ 85, min {low:.1f}, n={n})")
        # Bytes against photoprep max.
        if pp_is_default:
            mx = [r["photoprep max"]["bytes"] for r in per_photo.values() if "photoprep max" in r]
            ratio = med(r["bytes"] for r in ours.values()) / med(mx) if mx else None
            limit = BYTES_VS_MAX[task]
            if ratio is None:
                lines.append(f"- {task} bytes ≤ {limit:.2f}× photoprep max: not measured")
            else:
                lines.append(f"- {task} median bytes ≤ {limit:.2f}× photoprep max's: "
                             + ("met" if ratio <= limit else missed(f"{ratio - limit:.2f}×")) + f" ({ratio:.2f}×)")
        # Bytes against the oracles at photoprep's score.
        for oracle, limit, label in (("libjpeg-turbo ≥photoprep", 0.90, "≤ 0.90× libjpeg-turbo at photoprep's score"),
                                     ("jpegli ≥photoprep", 1.00, "≤ jpegli at photoprep's score (stretch)")):
            ratios = [r["bytes"] / per_photo[p][oracle]["bytes"] for p, r in ours.items()
                      if oracle in per_photo[p] and per_photo[p][oracle].get("bytes")]
            if not ratios:
                lines.append(f"- {task} bytes {label}: not measured")
                continue
            meet = sum(x <= limit for x in ratios)
            lines.append(f"- {task} bytes {label}, per photo: "
                         + ("met" if meet == len(ratios) else f"missed on {len(ratios) - meet} of {len(ratios)} photos")
                         + f" (median {statistics.median(ratios):.2f}×, worst {max(ratios):.2f}×; {meet} of {len(ratios)} meet it)")
        # Speed against Pillow's budget loop.
        if task in SPEED_TASKS:
            ratios = [per_photo[p]["Pillow budget"]["seconds"] / r["seconds"] for p, r in ours.items()
                      if r.get("seconds") and per_photo[p].get("Pillow budget", {}).get("seconds")]
            if ratios:
                x = statistics.median(ratios)
                lines.append(f"- {task} speed ≥ 2× Pillow's budget loop (median per photo): "
                             + ("met" if x >= 2 else missed(f"{2 - x:.2f}×")) + f" ({x:.2f}×)")
        # Peak RSS against Pillow's budget loop, every photo.
        above = [(r["rss"] - per_photo[p]["Pillow budget"]["rss"], os.path.basename(p)) for p, r in ours.items()
                 if r.get("rss") and per_photo[p].get("Pillow budget", {}).get("rss")
                 and r["rss"] > per_photo[p]["Pillow budget"]["rss"]]
        compared = sum(1 for p, r in ours.items() if r.get("rss") and per_photo[p].get("Pillow budget", {}).get("rss"))
        if compared:
            lines.append(f"- {task} peak RSS ≤ Pillow's (budget loop) on every photo: "
                         + ("met" if not above else f"missed on {len(above)} of {compared} photos, by up to {max(above)[0]:.1f} MB ({max(above)[1]})"))
    return lines


def cell(row, own=False):
    """bytes, score (the package's), then photoprep's own score after a slash, the JPEG quality, 4:4:4, progressive."""
    if not row or row.get("bytes") is None:
        return "–" if not row else f"({row.get('status')})"
    text = f"{kb(row['bytes'])} {num(row.get('score'), '{:.2f}')}"
    if own and row.get("own_score") is not None:
        text += f" / {row['own_score']:.2f}"
    if row.get("quality") is not None:
        text += f" q{row['quality']}"
    if own and row.get("chroma") and "420" not in str(row["chroma"]).replace(":", ""):
        text += f" {row['chroma']}"
    if own and row.get("progressive"):
        text += " prog"
    if row.get("status") and row["status"] != "met":
        text += f" ({row['status']})"
    if own and row.get("missed_target"):
        text += " (missedTarget)"
    if own and row.get("action") in PASSED_THROUGH:
        text += f" ({row['action']})"
    if not row.get("package") and row.get("score") is not None:
        text += " (photoprep's metric: no package score)"
    return text


def photo_table(task, per_photo, info, tools, pp):
    lines = [f"Per photo, {task}: bytes, score (PyPI package, against the full-resolution Lanczos3 reference), "
             f"JPEG quality" + ("; for photoprep, its own score (against its own resize, from --json) after the "
                                "slash, then its quality, chroma when not 4:2:0, prog when progressive" if pp else ""), ""]
    header = ["photo", "MP"] + list(tools) + ["resized to score"]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for photo in sorted(per_photo, key=lambda p: os.path.basename(p)):
        r = per_photo[photo]
        cells = [os.path.basename(photo), f"{info[photo]['pixels'] / 1e6:.1f}"]
        for tool in tools:
            cells.append(cell(r.get(tool), own=tool.startswith("photoprep")))
        resized = [f"{t} {r[t]['resized']}" for t in tools if r.get(t, {}).get("resized")]
        cells.append(", ".join(resized))
        lines.append("| " + " | ".join(cells) + " |")
    return lines


# ---------------------------------------------------------------------------------------------------------------

def load_cache():
    try:
        with open(CACHE) as f:
            cache = json.load(f)
        return cache.get("scores", {}) if cache.get("version") == 1 else {}
    except (OSError, ValueError):
        return {}


def save_cache(scores):
    os.makedirs(RESULTS, exist_ok=True)
    tmp = CACHE + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"version": 1, "scores": scores}, f)
    os.replace(tmp, CACHE)


def metric_agreement(per_task, order):
    """Over the reported outputs (each reference and output once): photoprep's score against the package's."""
    seen = {}
    for task, per_photo in per_task.items():
        for photo, rows in per_photo.items():
            for tool in order:
                r = rows.get(tool)
                if r and r.get("digest") and r.get("metric") is not None and r.get("package"):
                    seen[(photo, TASKS[task][0], r["digest"])] = (abs(r["metric"] - r["score"]), os.path.basename(photo), task, tool,
                                                                   r["score"])
    if not seen:
        return None
    worst = max(seen.values())
    diffs = [v[0] for v in seen.values()]
    near = [v for v in seen.values() if v[4] < 90]
    text = (f"photoprep's metric vs the PyPI package: max difference {worst[0]:.3f} over {len(seen)} outputs "
            f"({worst[1]}, {worst[2]}, {worst[3]}, package score {worst[4]:.2f}); median {statistics.median(diffs):.4f}, "
            f"{sum(d > 0.01 for d in diffs)} over 0.01.")
    if near:
        w = max(near)
        text += (f" Over the {len(near)} outputs the package scores below 90 (where the searches decide): max "
                 f"{w[0]:.3f} ({w[1]}, {w[2]}, {w[3]}), {sum(v[0] > 0.01 for v in near)} over 0.01.")
    return text


def notable_lines(per_task, pp, tasks):
    """photoprep's photos that stand out: under 85, a missed target, bigger than the libjpeg-turbo oracle."""
    lines = []
    for task in tasks:
        per_photo = per_task[task]
        for photo in sorted(per_photo, key=os.path.basename):
            rows = per_photo[photo]
            r = rows.get(pp)
            if not r or r.get("bytes") is None:
                continue
            name = os.path.basename(photo)
            what = f"{kb(r['bytes'])} q{r.get('quality')} {r.get('chroma') or ''}{' progressive' if r.get('progressive') else ''}"
            if r.get("score") is not None and r["score"] < TARGET:
                lines.append(f"- {task} {name}: photoprep scores {r['score']:.2f} (its own score {num(r.get('own_score'), '{:.2f}')}"
                             f"; {what}){' — it reports missedTarget' if r.get('missed_target') else ''}")
            elif r.get("missed_target"):
                lines.append(f"- {task} {name}: photoprep reports missedTarget ({what}; scores {num(r.get('score'), '{:.2f}')})")
            if r.get("action") in PASSED_THROUGH:
                lines.append(f"- {task} {name}: photoprep {r['action']} ({kb(r['bytes'])}, scores {num(r.get('score'), '{:.2f}')})")
            o = rows.get("libjpeg-turbo ≥photoprep")
            if o and o.get("bytes") and r["bytes"] > o["bytes"]:
                opt = o.get("bytes_optimized")
                lines.append(f"- {task} {name}: photoprep {kb(r['bytes'])} ({what}, {num(r.get('score'), '{:.2f}')}) is bigger than "
                             f"libjpeg-turbo at its score, {kb(o['bytes'])} q{o['quality']} ({num(o.get('score'), '{:.2f}')}); "
                             f"{r['bytes'] / o['bytes']:.2f}×" + (f", {r['bytes'] / opt:.2f}× its -optimize -progressive {kb(opt)}" if opt else ""))
    return lines


def main():
    global METRIC, METRIC_TAG
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("photos", nargs="*")
    parser.add_argument("--tasks", default=",".join(TASKS), help="T1024,T2048,T2048-5MiB (default: all)")
    parser.add_argument("--photos", dest="count", type=int, help="only the first N photos (by name)")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per command (median)")
    parser.add_argument("--markdown", help="write the tables here")
    parser.add_argument("--render", metavar="RAW", help="only the tables again, from a run's raw rows "
                        "(Benchmarks/.results/quality-raw.json): no encode, score or timing")
    args = parser.parse_args()
    if args.render:
        with open(args.render) as f:
            output(render(json.load(f)), args.markdown)
        return
    if not args.photos:
        parser.error("no photos")
    started = time.perf_counter()
    photos = sorted((os.path.abspath(p) for p in args.photos), key=os.path.basename)[:args.count]
    tasks = {t: TASKS[t] for t in args.tasks.split(",")}
    notes = []

    has_quality, why = photoprep_status()
    tools = {}  # the photoprep-side tools run once per photo in job_prepare: name -> pass --quality max
    if why:
        notes.append(f"photoprep not measured: {why}.")
    elif has_quality:
        tools = {"photoprep": False, "photoprep max": True}
    else:
        tools = {"photoprep max": False}
        notes.append("photoprep has no --quality option yet: today's binary runs as \"photoprep max\" (it fills the "
                     "budget), the peers aim at 85.")
    if not why and photoprep_has_score():
        METRIC, METRIC_TAG = "photoprep", binary_tag(PHOTOPREP)
    else:
        notes.append("photoprep has no working `score` command: the searches score with the PyPI package (slow).")
    tools["Pillow budget"] = False
    pp = "photoprep" if "photoprep" in tools else ("photoprep max" if "photoprep max" in tools else None)
    peers, missing, oracles, oracle_missing = available_peers()
    for name, reason in {**missing, **oracle_missing}.items():
        notes.append(f"{name} left out: {reason}.")
    taskset = shutil.which("taskset") is not None
    if not taskset:
        notes.append("taskset is missing: the timed runs are not pinned to one core.")
    cpus = sorted(os.sched_getaffinity(0))
    other_core = {cpus[-1]} if len(cpus) > 1 and cpus[-1] != 0 else None  # the package scorer's core while timing

    work = tempfile.mkdtemp(prefix="quality-")
    for sub in ("keep", "enc"):
        os.makedirs(os.path.join(work, sub))
    scores = load_cache()
    cached_before = sum(len(v) for v in scores.values())
    failure = self_test(photos[0], work)
    if failure:
        notes.append(failure)
    per_task = {task: {} for task in tasks}  # task -> photo -> tool -> row
    info, errors = {}, []
    stems = {p: f"{i:02d}-{re.sub(r'[^A-Za-z0-9._-]', '_', os.path.splitext(os.path.basename(p))[0])}"
             for i, p in enumerate(photos)}
    hashes = {p: digest(read(p)) for p in photos}
    refs = {}  # photo -> edge -> reference
    clock = {}  # phase -> seconds since start
    package_runs = collections.Counter()  # "searching" / "timing" -> package scores computed then

    def log(text):
        print(f"{text} ({time.perf_counter() - started:.0f} s)", file=sys.stderr, flush=True)

    # The scheduler: two queues of jobs for SCORERS processes. `searches`: a photo's job_prepare, then (at the
    # front, so that a photo is done before the next one starts) its peers' and oracles' searches. `finals`: per photo
    # and edge, the package's scores of the outputs the tables report, queued when the photo's searches are done and
    # run when no search waits. A job is (photo, function, arguments, cache keys it may use, what to do with its
    # result). When no search is left the timing starts in a thread; from then on at most one job runs, its process
    # pinned to the other core.
    def prepared(photo, result):
        info[photo] = result["info"]
        refs[photo] = result["refs"]
        errors.extend(result["errors"])
        follow = []
        for task, (edge, budget) in tasks.items():
            per_task[task][photo] = rows = result["outputs"][task]
            ref = result["refs"][edge]
            ours = rows.get("photoprep")
            if ours is None or ours.get("score") is None or ours.get("action") in PASSED_THROUGH:
                aim, guess = TARGET, GUESS  # no photoprep default, or it passed the source through: the peers aim at 85
            else:
                aim, guess = ours["score"], ours.get("quality") or GUESS
            for peer in peers:
                follow.append((photo, job_peer, (peer, photo, stems[photo], task, edge, budget, aim, guess, ref, work),
                               [metric_key(ref)], lambda row, task=task, peer=peer: per_task[task][photo].__setitem__(peer, row)))
            oracle_targets = {"≥85": TARGET}
            if pp and rows.get(pp, {}).get("score") is not None:  # passed through (score 100): 85, as the peers
                oracle_targets["≥photoprep"] = aim if pp == "photoprep" else rows[pp]["score"]
            for oracle in oracles:
                def store(got, task=task, oracle=oracle):
                    for label, row in got.items():
                        per_task[task][photo][f"{oracle} {label}"] = row
                follow.append((photo, job_oracle, (oracle, ref, oracle_targets, work), [metric_key(ref)], store))
        log(f"{os.path.basename(photo)}: references and photoprep done")
        return follow

    def apply_final(photo, edge, got):
        for task, (task_edge, _) in tasks.items():
            if task_edge != edge:
                continue
            for row in per_task[task].get(photo, {}).values():
                if row.get("digest") in got:
                    row["score"], row["resized"] = got[row["digest"]]
                    row["package"] = True

    def finals_of(photo):
        """The photo's package scores: the cached ones applied now, a job per edge for the others."""
        jobs = []
        for edge, ref in refs.get(photo, {}).items():
            digests = {row["digest"] for task, (e, _) in tasks.items() if e == edge
                       for row in per_task[task].get(photo, {}).values() if row.get("digest")}
            cached = {h: scores[ref["key"]][h] for h in digests if h in scores.get(ref["key"], {})}
            apply_final(photo, edge, cached)
            todo = sorted(digests - set(cached))
            if todo:
                jobs.append((photo, job_final, (ref, todo, work), [ref["key"]],
                             lambda got, edge=edge: (apply_final(photo, edge, got),
                                                     package_runs.update({"timing" if timing.is_alive() else "searching": len(got)}))))
        return jobs

    def cleanup(photo):
        for ref in refs.get(photo, {}).values():
            for path in (ref["png"], ref["ppm"]):
                if os.path.exists(path):
                    os.remove(path)
        for name in os.listdir(os.path.join(work, "enc")):
            if name.startswith(stems[photo] + "-"):
                os.remove(os.path.join(work, "enc", name))
        digests = {row.get("digest") for per_photo in per_task.values() for row in per_photo.get(photo, {}).values()}
        for h in digests:
            path = os.path.join(work, "keep", f"{h}.jpg")
            if h and os.path.exists(path):
                os.remove(path)

    loads = {}

    def timing_phase():
        quiet.wait()
        loads["before"] = os.getloadavg()
        clock["timing"] = time.perf_counter() - started
        log(f"timing starts, load average {loads['before'][0]:.2f}")
        for photo in photos:
            if photo in info:
                rows = {task: per_task[task][photo] for task in tasks if photo in per_task[task]}
                errors.extend(time_photo(photo, stems[photo], tasks, rows, tools, args.runs, work, taskset))
                log(f"{os.path.basename(photo)}: timed")
        loads["after"] = os.getloadavg()
        clock["timed"] = time.perf_counter() - started

    timing = threading.Thread(target=timing_phase)
    quiet = threading.Event()  # at most one job running, pinned to the other core: the timing may start

    searches, finals = collections.deque(), collections.deque()
    searching, finalling = collections.Counter(), collections.Counter()  # photo -> jobs queued or running
    for photo in photos:
        searches.append((photo, job_prepare, (photo, stems[photo], hashes[photo], tasks, tools, work),
                         [f"{hashes[photo]}@{edge}/{REF_VERSION}/{METRIC_TAG}" for edge, _ in tasks.values()],
                         lambda result, photo=photo: prepared(photo, result)))
        searching[photo] += 1
    pool = cf.ProcessPoolExecutor(SCORERS, mp_context=multiprocessing.get_context("fork"))
    running = {}

    def pin_workers():
        for pid in list(getattr(pool, "_processes", {}) or {}):
            try:
                os.sched_setaffinity(pid, other_core)
            except OSError:
                pass

    phase = "searching"  # then "timing" (at most one job, on the other core), then "after" (all cores again)
    try:
        while searches or finals or running or phase != "after":
            if phase == "timing" and not timing.is_alive():
                phase = "after"
                for pid in list(getattr(pool, "_processes", {}) or {}):
                    try:
                        os.sched_setaffinity(pid, cpus)
                    except OSError:
                        pass
            limit = 1 if phase == "timing" else SCORERS
            while (searches or finals) and len(running) < limit:
                photo, fn, fargs, keys, then = (searches or finals).popleft()
                known = {k: dict(scores.get(k, {})) for k in keys}
                if phase == "timing" and other_core:
                    pin_workers()
                running[pool.submit(fn, *fargs, known)] = (photo, fn, then)
                if phase == "timing" and other_core:
                    pin_workers()  # a process the pool has just started
            if phase == "searching" and not searches and not any(fn is not job_final for _, fn, _ in running.values()):
                clock["searched"] = time.perf_counter() - started
                timing.start()
                phase = "timing"
            if phase == "timing" and not quiet.is_set() and len(running) <= 1:
                if other_core:
                    pin_workers()
                quiet.set()
            if not running:
                timing.join(timeout=1)
                continue
            finished, _ = cf.wait(running, timeout=1, return_when=cf.FIRST_COMPLETED)
            for future in finished:
                photo, fn, then = running.pop(future)
                counter = finalling if fn is job_final else searching
                counter[photo] -= 1
                follow = []
                try:
                    result, new = future.result()
                    for k, entries in new.items():
                        scores.setdefault(k, {}).update(entries)
                    save_cache(scores)
                    follow = then(result) or []
                except Exception as error:  # a failure is a result, not a crash of the benchmark
                    errors.append(f"{fn.__name__} {os.path.basename(photo)}: {error}")
                if fn is not job_final:
                    searches.extendleft(reversed(follow))
                    searching[photo] += len(follow)
                    if searching[photo] == 0:
                        log(f"{os.path.basename(photo)}: searched")
                        jobs = finals_of(photo)
                        finals.extend(jobs)
                        finalling[photo] += len(jobs)
                        if not jobs:
                            cleanup(photo)
                elif finalling[photo] == 0:
                    log(f"{os.path.basename(photo)}: scored by the package")
                    cleanup(photo)
    finally:
        pool.shutdown(cancel_futures=True)
        if timing.is_alive():
            quiet.set()
            timing.join()
    shutil.rmtree(work)
    elapsed = time.perf_counter() - started

    # The report: the raw rows and what the tables need, then the tables from them (--render redoes them).
    order = ([pp] if pp == "photoprep" else []) + (["photoprep max"] if "photoprep max" in tools else []) + \
        ["Pillow budget"] + peers + [f"{o} {label}" for o in oracles for label in (("≥85", "≥photoprep") if pp else ("≥85",))]
    mp = [i["pixels"] / 1e6 for i in info.values()]
    computed = sum(len(v) for v in scores.values()) - cached_before
    command = (("PHOTOPREP=" + os.environ["PHOTOPREP"] + " " if os.environ.get("PHOTOPREP") else "") +
               f"Benchmarks/quality.sh{' --photos ' + str(args.count) if args.count else ''}"
               f"{' --tasks ' + args.tasks if args.tasks != ','.join(TASKS) else ''}"
               f"{' --runs ' + str(args.runs) if args.runs != 3 else ''}")
    before, after = loads.get("before", (0, 0, 0)), loads.get("after", (0, 0, 0))
    head = (f"Measured {datetime.datetime.now():%Y-%m-%d %H:%M} on {platform.node() or 'this machine'}: "
            f"{os.cpu_count()} cores, {platform.machine()}; {len(info)} photos ({min(mp, default=0):.1f}-"
            f"{max(mp, default=0):.1f} MP); whole process per photo, one core (taskset -c 0), median of {args.runs} "
            f"runs; {versions()}. SSIMULACRA2 against the photo resized from full resolution with Lanczos3 (Pillow): "
            "every score in the tables is the PyPI package's; the searches scored with "
            + ("`photoprep score`" if METRIC == "photoprep" else "the package") + ". Peers at the lowest quality "
            "reaching photoprep's score on each photo" + ("" if pp == "photoprep" else " (85: no photoprep default)")
            + f". Load average (1 min / 5 min) {before[0]:.2f} / {before[1]:.2f} when the timing started, "
            f"{after[0]:.2f} / {after[1]:.2f} when it ended (the machine is shared); while timing, at most one package "
            f"scorer ran, pinned to core {min(other_core) if other_core else '–'} ({package_runs['timing']} of "
            f"{sum(package_runs.values())} package scores). Command: `{command}`.")
    searched, timed_at = clock.get("searched", elapsed), clock.get("timed", elapsed)
    tail = [f"Took {elapsed:.0f} s ({elapsed / 60:.1f} min): {searched:.0f} s searching (encodes scored with "
            f"{'photoprep' if METRIC == 'photoprep' else 'the package'}), then {timed_at - searched:.0f} s timing "
            f"beside the package's scores ({sum(package_runs.values())} computed), {elapsed - timed_at:.0f} s after; "
            f"{computed} scores computed in all, {cached_before} were cached."]
    if notes:
        tail += [""] + notes
    if errors:
        tail += ["", "Failures: " + "; ".join(errors)]
    raw = {"tasks": {t: {os.path.basename(p): r for p, r in per_task[t].items()} for t in tasks},
           "photos": {os.path.basename(p): i for p, i in info.items()},
           "meta": {"head": head, "tail": tail, "order": order, "pp": pp, "metric": METRIC}}
    os.makedirs(RESULTS, exist_ok=True)
    with open(RAW, "w") as f:
        json.dump(raw, f, indent=1, default=str)
    output(render(raw), args.markdown)


def render(raw):
    """The tables of a run, from its raw rows (Benchmarks/.results/quality-raw.json)."""
    meta, per_task, info = raw["meta"], raw["tasks"], raw["photos"]
    order, pp, tasks = meta["order"], meta["pp"], list(per_task)
    lines = [meta["head"], ""]
    agreement = metric_agreement(per_task, order) if meta["metric"] == "photoprep" else None
    if agreement:
        lines += [agreement, ""]
    for task in tasks:
        lines += summary_table(task, per_task[task], order, pp or "Pillow budget")
        lines.append("")
    lines += targets_lines(per_task, pp, pp == "photoprep", tasks) if pp else ["photoprep not measured: no targets."]
    lines.append("")
    if pp:
        notable = notable_lines(per_task, pp, tasks)
        lines += ["Photos that stand out (photoprep under 85, a missed target, passed through, or bigger than "
                  "libjpeg-turbo at its score):", ""] + (notable or ["- none"]) + [""]
    for task in tasks:
        lines += photo_table(task, per_task[task], info, order, pp)
        lines.append("")
    return "\n".join(lines + meta["tail"])


def output(text, markdown):
    print(text)
    if markdown:
        with open(markdown, "w") as f:
            f.write(text + "\n")

if __name__ == "__main__":
    main()

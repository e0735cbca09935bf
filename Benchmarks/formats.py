#!/usr/bin/env python3
"""photoprep against its peers on HEIC (iPhone-style grid, and single image), AVIF and WebP input.

Task T2048: long edge <= 2048 px, the output JPEG under 500 KiB (512,000 bytes). Every tool runs as a whole
process per photo, median of --runs; the runs are interleaved (run 1: tool A photo 1, tool B photo 1, ...,
then photo 2 ...; then run 2) so that machine noise hits every tool alike. Wall seconds, CPU seconds (user +
system) and peak RSS are GNU time's view of each process (for libvips, the sum of its processes' times and the
largest peak). Quality is SSIM on luma against one common reference per input file: the file decoded at full
size by its format's own tool (heif-convert, avifdec, dwebp -> Benchmarks/.corpus/formats/ref/FILE.png, made
by format-corpus.sh), Lanczos-resized to the output's own size, as compare.py does.

Tools (each with its defaults on this machine, threads included; libheif decodes a grid's tiles in parallel):
  photoprep    .build/release/photoprep prepare IN --max-edge 2048 --max-bytes 512000 --out DIR --jobs 1 --json
  Pillow       peers/pillow_prepare.py (Pillow, + pillow-heif for HEIC; bisection on quality)
  libvips      vipsthumbnail IN --size 2048x2048> -o tmp.v once (decode + resize), then the quality bisection
               by `vips jpegsave tmp.v out.jpg --Q q --strip` per step
  ImageMagick  convert IN -auto-orient -resize 2048x2048> -define jpeg:extent=511999 OUT
A tool that cannot read a format here is left out of that format's rows, and the notes say why.
HEIC grid is also run single-threaded: photoprep with --decoding-threads 1, Pillow with PILLOW_HEIF_THREADS=1 (pillow_heif.options.DECODE_THREADS),
libvips with VIPS_CONCURRENCY=1, ImageMagick with MAGICK_THREAD_LIMIT=1.

Run through Benchmarks/formats.sh, which installs the peers and makes the corpus.
"""
import argparse
import datetime
import glob
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
from PIL import Image, features
from skimage.metrics import structural_similarity

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PHOTOPREP = os.path.join(ROOT, ".build", "release", "photoprep")
PILLOW = [sys.executable, os.path.join(HERE, "peers", "pillow_prepare.py")]
EDGE, BUDGET = 2048, 512000
GROUPS = {  # key: (label, file pattern in the corpus, ImageMagick's and libvips's name for the format)
    "grid": ("HEIC grid", "grid-*.heic", "HEIC"),
    "single": ("HEIC single", "single-*.heic", "HEIC"),
    "avif": ("AVIF", "*.avif", "AVIF"),
    "webp": ("WebP", "*.webp", "WEBP"),
}
TOOLS = ["photoprep", "Pillow", "libvips", "ImageMagick"]
THREAD_VARS = ("PILLOW_HEIF_THREADS", "VIPS_CONCURRENCY", "MAGICK_THREAD_LIMIT",
               "OMP_NUM_THREADS")
DEFAULT_ENV = {k: v for k, v in os.environ.items() if k not in THREAD_VARS}
ONE_THREAD_ENV = dict(DEFAULT_ENV, PILLOW_HEIF_THREADS="1", VIPS_CONCURRENCY="1",
                      MAGICK_THREAD_LIMIT="1")


class Failed(Exception):
    pass


def timed(cmd, env):
    """Runs one process under GNU time; returns (wall s, CPU s, max RSS MB, stdout)."""
    with tempfile.NamedTemporaryFile("r") as stats:
        start = time.perf_counter()
        done = subprocess.run(["/usr/bin/time", "-f", "%U %S %M", "-o", stats.name] + cmd, env=env,
                              capture_output=True, text=True)
        wall = time.perf_counter() - start
        if done.returncode != 0:
            said = done.stderr.strip() or " ".join(  # photoprep --json reports on stdout, then a summary
                l for l in done.stdout.splitlines() if '"summary"' not in l)
            raise Failed(f"{os.path.basename(cmd[0])} exit {done.returncode}: {said[-300:]}")
        user, system, rss = stats.read().split()[-3:]
        return wall, float(user) + float(system), int(rss) / 1000, done.stdout


# Each tool: run(path, out, env, extra) -> dict(seconds, cpu, rss, quality) for one whole-process run;
# the JPEG it made is at `out`.

def photoprep(path, out, env, extra):
    folder = tempfile.mkdtemp()
    try:
        s, cpu, rss, text = timed([PHOTOPREP, "prepare", path, "--max-edge", str(EDGE), "--max-bytes", str(BUDGET),
                                   "--out", folder, "--jobs", "1", "--json"] + extra, env)
        event = next((json.loads(l) for l in text.splitlines() if '"prepared"' in l), None)
        if event is None:
            raise Failed(f"photoprep: no prepared event in {text.strip()[-300:]!r}")
        shutil.copy(event["output"] if os.path.isabs(event["output"]) else os.path.join(os.getcwd(), event["output"]), out)
        return dict(seconds=s, cpu=cpu, rss=rss, quality=event["report"].get("quality"))
    finally:
        shutil.rmtree(folder)


def pillow(path, out, env, extra):
    s, cpu, rss, text = timed(PILLOW + [path, out, str(EDGE), str(BUDGET)], env)
    return dict(seconds=s, cpu=cpu, rss=rss, quality=json.loads(text)["quality"])


def vips(path, out, env, extra):
    """vipsthumbnail once (decode + resize into a .v file), then one `vips jpegsave` per bisection step."""
    folder = tempfile.mkdtemp()
    try:
        v, tmp = os.path.join(folder, "t.v"), os.path.join(folder, "try.jpg")
        s, cpu, rss, _ = timed(["vipsthumbnail", path, "--size", f"{EDGE}x{EDGE}>", "-o", v], env)
        lo, hi, best = 1, 100, None
        while lo <= hi:
            q = (lo + hi) // 2
            s1, cpu1, rss1, _ = timed(["vips", "jpegsave", v, tmp, "--Q", str(q), "--strip"], env)
            s, cpu, rss = s + s1, cpu + cpu1, max(rss, rss1)
            if os.path.getsize(tmp) < BUDGET:
                best, lo = q, q + 1
                shutil.copy(tmp, out)
            else:
                hi = q - 1
        if best is None:
            raise Failed("libvips: budget unreachable")
        return dict(seconds=s, cpu=cpu, rss=rss, quality=best)
    finally:
        shutil.rmtree(folder)


def imagemagick(path, out, env, extra):
    # jpeg:extent keeps the file at or under the value: budget - 1 means "under the budget".
    s, cpu, rss, _ = timed(["convert", path, "-auto-orient", "-resize", f"{EDGE}x{EDGE}>", "-define",
                            f"jpeg:extent={BUDGET - 1}", out], env)
    q = subprocess.run(["identify", "-format", "%Q", out], capture_output=True, text=True).stdout.strip()
    return dict(seconds=s, cpu=cpu, rss=rss, quality=int(q) if q.isdigit() else None)


RUN = {"photoprep": photoprep, "Pillow": pillow, "libvips": vips, "ImageMagick": imagemagick}


# --- what can read what here ------------------------------------------------------------------------------

def version(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True).stdout.strip().splitlines()[0]
    except (OSError, IndexError):
        return "?"


def capabilities():
    """(readers: {(group, tool): None or the reason it is left out}, versions text, photoprep extra 1-thread args)."""
    im_formats = {}
    for line in subprocess.run(["convert", "-list", "format"], capture_output=True, text=True).stdout.splitlines():
        parts = line.split()
        if len(parts) >= 3:
            im_formats[parts[0].rstrip("*").upper()] = parts[2]
    vips_ops = subprocess.run(["vips", "-l", "foreign"], capture_output=True, text=True).stdout
    try:
        import pillow_heif
        heif_version = f"pillow-heif {pillow_heif.__version__} (libheif {pillow_heif.libheif_version()})"
        heif_avif = bool(pillow_heif.libheif_info().get("AVIF"))
    except ImportError:
        heif_version, heif_avif = None, False
    import PIL
    pillow_avif = features.check("avif")
    out = {}
    for group, (_, _, name) in GROUPS.items():
        out[(group, "photoprep")] = None
        if name == "HEIC":
            out[(group, "Pillow")] = None if heif_version else "pillow-heif is not installed"
        elif name == "AVIF":
            out[(group, "Pillow")] = (None if pillow_avif or heif_avif else
                                      f"Pillow {PIL.__version__} has no AVIF plugin and pillow-heif 1.x reads no AVIF")
        else:
            out[(group, "Pillow")] = None if features.check("webp") else "Pillow built without WebP"
        loader = "heifload" if name in ("HEIC", "AVIF") else "webpload"
        out[(group, "libvips")] = None if loader in vips_ops else f"libvips here has no {loader}"
        mode = im_formats.get(name, "")
        out[(group, "ImageMagick")] = None if "r" in mode else f"ImageMagick here cannot read {name}"
    # photoprep's --decoding-threads, if this binary takes it.
    extra = []
    probe = os.path.join(ROOT, "TestImages", "formats", "grid.heic")
    folder = tempfile.mkdtemp()
    try:
        if os.path.exists(probe) and subprocess.run(
                [PHOTOPREP, "prepare", probe, "--out", folder, "--jobs", "1", "-q", "--decoding-threads", "1"],
                capture_output=True).returncode == 0:
            extra = ["--decoding-threads", "1"]
    finally:
        shutil.rmtree(folder)
    heif_lib = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "libheif1"], capture_output=True,
                              text=True).stdout.strip()
    versions = (f"libheif {heif_lib or '?'} (photoprep, libvips, ImageMagick); Pillow {PIL.__version__}"
                f"{' (AVIF: its own plugin, libavif ' + str(features.version('avif')) + ')' if pillow_avif else ''}, "
                f"{heif_version or 'no pillow-heif'}; {version(['vips', '--version'])}; "
                f"{version(['convert', '-version']).replace('Version: ', '')}")
    return out, versions, extra


# --- scoring ---------------------------------------------------------------------------------------------

class Reference:
    """The full-size decode of one input, resized (Lanczos) to each output size asked for."""

    def __init__(self, png):
        self.png, self.full, self.sized = png, None, {}

    def ssim_y(self, out):
        with Image.open(out) as got:
            size = got.size
            y = np.asarray(got.convert("RGB").convert("L"), dtype=np.float64)
        if size not in self.sized:
            if self.full is None:
                with Image.open(self.png) as full:
                    self.full = full.convert("RGB")
            self.sized[size] = np.asarray(self.full.resize(size, Image.LANCZOS).convert("L"), dtype=np.float64)
        return float(structural_similarity(self.sized[size], y, data_range=255, gaussian_weights=True, sigma=1.5,
                                           use_sample_covariance=False))


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", default=os.path.join(HERE, ".corpus", "formats"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--groups", default=",".join(GROUPS), help="of " + ",".join(GROUPS))
    parser.add_argument("--tools", default=",".join(TOOLS), help="of " + ",".join(TOOLS))
    parser.add_argument("--no-single-thread", action="store_true", help="skip the single-threaded HEIC grid pass")
    parser.add_argument("--markdown", default=os.path.join(HERE, "formats-results.md"))
    parser.add_argument("--results", default=os.path.join(HERE, ".results"), help="folder for the raw JSON lines")
    args = parser.parse_args()
    groups = args.groups.split(",")
    tools = args.tools.split(",")
    if not os.access(PHOTOPREP, os.X_OK):
        raise SystemExit(f"{PHOTOPREP} is missing: swift build -c release --product photoprep")

    readers, versions, one_thread_args = capabilities()
    files = {g: sorted(glob.glob(os.path.join(args.corpus, GROUPS[g][1]))) for g in groups}
    if not all(files.values()):
        raise SystemExit(f"{args.corpus}: no corpus (Benchmarks/format-corpus.sh makes it)")
    # The variants measured: (group, tool, pass); pass "default" or "1 thread".
    variants = {g: [(g, t, "default") for t in tools if readers[(g, t)] is None] for g in groups}
    if "grid" in groups and not args.no_single_thread:
        variants["grid"] += [("grid", t, "1 thread") for t in tools if readers[("grid", t)] is None]

    os.makedirs(args.results, exist_ok=True)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    raw_path = os.path.join(args.results, f"formats-{stamp}.jsonl")
    work = tempfile.mkdtemp()
    samples = {}  # (group, tool, pass, file) -> list of run dicts
    scores = {}   # (group, tool, pass, file) -> dict(bytes, ssim)
    errors = {}   # (group, tool, pass, file) -> message
    started = time.time()
    try:
        with open(raw_path, "w") as raw:
            for run in range(1, args.runs + 1):
                for g in groups:
                    for path in files[g]:
                        name = os.path.basename(path)
                        reference = None
                        for variant in variants[g]:
                            _, tool, pas = variant
                            key = variant + (name,)
                            if key in errors:
                                continue  # failed once: not retried
                            out = os.path.join(work, "out.jpg")
                            if os.path.exists(out):
                                os.remove(out)
                            env = ONE_THREAD_ENV if pas == "1 thread" else DEFAULT_ENV
                            extra = one_thread_args if (pas == "1 thread" and tool == "photoprep") else []
                            record = dict(run=run, format=GROUPS[g][0], tool=tool, threads=pas, file=name,
                                          input_bytes=os.path.getsize(path))
                            try:
                                result = RUN[tool](path, out, env, extra)
                                size = os.path.getsize(out)
                                with Image.open(out) as made:
                                    width, height = made.size
                                record.update(result, bytes=size, over=size >= BUDGET, width=width, height=height)
                                if key not in scores:
                                    if reference is None:
                                        reference = Reference(os.path.join(args.corpus, "ref", name + ".png"))
                                    scores[key] = dict(bytes=size, ssim=reference.ssim_y(out), over=size >= BUDGET)
                                record["ssim"] = scores[key]["ssim"]
                                samples.setdefault(key, []).append(record)
                            except Exception as error:  # a failure is a result, not a crash of the benchmark
                                errors[key] = f"{error}"[:300]
                                record["error"] = errors[key]
                            raw.write(json.dumps(record) + "\n")
                            raw.flush()
                    print(f"run {run}/{args.runs}: {GROUPS[g][0]} done ({time.time() - started:.0f} s)", file=sys.stderr)
    finally:
        shutil.rmtree(work)

    # --- the table ----------------------------------------------------------------------------------------
    count = len(next(iter(files.values())))
    lines = [f"Measured {datetime.date.today()} on {platform.node() or 'this machine'}: {os.cpu_count()} cores, "
             f"{platform.machine()}; {count} photos per format, median of {args.runs} run(s) per photo, whole process "
             f"per photo, runs interleaved across tools. Task T2048: long edge ≤ 2048 px, JPEG < 500 KiB "
             f"(512,000 bytes). Command: `Benchmarks/formats.sh`.", ""]
    lines.append("| format | tool | threads | s / photo | × photoprep | CPU s / photo | peak RSS median / max | "
                 "bytes (median) | Q (median) | SSIM-Y median | over budget | failures |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for g in groups:
        for pas in ("default", "1 thread"):
            rows = [v for v in variants[g] if v[2] == pas]
            base = None
            for variant in rows:
                per_file = {f: samples[variant + (f,)] for f in map(os.path.basename, files[g]) if variant + (f,) in samples}
                failed = sum(1 for f in map(os.path.basename, files[g]) if variant + (f,) in errors)
                if not per_file:
                    lines.append(f"| {GROUPS[g][0]} | {variant[1]} | {pas} | – | | | | | | | | {failed} |")
                    continue
                sec = statistics.median(median(r["seconds"] for r in rs) for rs in per_file.values())
                cpu = statistics.median(median(r["cpu"] for r in rs) for rs in per_file.values())
                rss = [median(r["rss"] for r in rs) for rs in per_file.values()]
                sc = [scores[variant + (f,)] for f in per_file]
                q = median(rs[-1]["quality"] for rs in per_file.values())
                if variant[1] == "photoprep":
                    base = sec
                ratio = f"{sec / base:.2f}×" if base else "–"
                lines.append(
                    f"| {GROUPS[g][0]} | {variant[1]} | {pas} | {sec:.3f} | {ratio} | {cpu:.3f} | "
                    f"{statistics.median(rss):.0f} / {max(max(r['rss'] for r in rs) for rs in per_file.values()):.0f} MB | "
                    f"{statistics.median(s['bytes'] for s in sc) / 1000:.0f}k | {format(q, 'g') if q is not None else '–'} | "
                    f"{statistics.median(s['ssim'] for s in sc):.4f} | {sum(s['over'] for s in sc)} | {failed} |")
    lines.append("")
    sizes = "; ".join(f"{GROUPS[g][0]} {min(map(os.path.getsize, files[g])) / 1e6:.2f}–"
                      f"{max(map(os.path.getsize, files[g])) / 1e6:.2f} MB (median "
                      f"{statistics.median(map(os.path.getsize, files[g])) / 1e6:.2f})" for g in groups)
    names = sorted({os.path.basename(p).removeprefix("grid-").removeprefix("single-").rsplit(".", 1)[0]
                    for g in groups for p in files[g]})
    lines.append(f"Inputs: {count} real photos of the benchmark corpus (≥ 8 MP: {', '.join(names)}), filled and "
                 f"centre-cropped to an iPhone 12 MP frame (4032×3024, one portrait 3024×4032), then written as an "
                 f"iPhone-style grid of 512×512 HEVC tiles (`heif-enc -q 65` + `TestImages/heif_boxes.py grid`), one "
                 f"HEVC image (`heif-enc -q 65`), AVIF (`avifenc -s 6 -d 8 -y 420 --min 20 --max 30`) and WebP "
                 f"(`cwebp -q 80`) by `Benchmarks/format-corpus.sh`. Sizes: {sizes}.")
    lines.append("")
    lines.append(f"Versions: {versions}.")
    lines.append("")
    notes = ["“× photoprep” is the tool's median over photoprep's median in the same format and threads; CPU s is user "
             "+ system time (above the wall time when a tool decodes on both cores). libvips: `vipsthumbnail` once, "
             "then one `vips jpegsave --Q q --strip` process per step of the quality bisection; its times are the sum "
             "of those processes, its peak RSS the largest of them. ImageMagick: `jpeg:extent`, Q as `identify` "
             "reads it. SSIM-Y against the file's own full-size decode (heif-convert, avifdec, dwebp), Lanczos to "
             "the output's size."]
    if "grid" in groups and not args.no_single_thread:
        notes.append("“1 thread” (HEIC grid only): photoprep"
                     + (" with `--decoding-threads 1`" if one_thread_args else
                        " as by default (this binary has no `--decoding-threads`)")
                     + ", Pillow with pillow-heif's DECODE_THREADS = 1, libvips with VIPS_CONCURRENCY=1, ImageMagick "
                     "with MAGICK_THREAD_LIMIT=1 (IM's own threads; IM does not set libheif's decoding threads, so "
                     "its HEIC decode keeps libheif's default).")
    left_out = sorted({f"{t} for {GROUPS[g][0]}: {why}" for (g, t), why in readers.items() if why and g in groups and t in tools})
    if left_out:
        notes.append("Left out: " + "; ".join(left_out) + ".")
    if errors:
        notes.append("Failures: " + "; ".join(f"{k[1]} {GROUPS[k[0]][0]} ({k[2]}) {k[3]}: {v}" for k, v in sorted(errors.items())) + ".")
    lines.append(" ".join(notes))
    text = "\n".join(lines)
    print(text)
    print(f"raw results: {os.path.relpath(raw_path, ROOT)}; table: {os.path.relpath(args.markdown, ROOT)}", file=sys.stderr)
    with open(args.markdown, "w") as f:
        f.write(text + "\n")


if __name__ == "__main__":
    main()

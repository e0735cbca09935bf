"""photoprep's default alone, judged: each photo of a folder prepared by the release binary with the default quality
target, its output scored by the PyPI `ssimulacra2` package against the photo resized from full resolution with
Lanczos3 (Pillow), as Benchmarks/quality.sh scores it — without the peers and without timing, so it takes minutes,
not an hour. One JSON line per photo, then the summary: median bytes, median and lowest score, how many reach 85
and 83, how many the budget kept from the target (photoprep's missedTarget).

  .venv/bin/python Benchmarks/peers/score_check.py --edge 1024 --budget 500KiB
  .venv/bin/python Benchmarks/peers/score_check.py --edge 2048 --budget 5MiB --photos Benchmarks/.corpus/photos
"""
import argparse, json, os, statistics, subprocess, tempfile
from PIL import Image, ImageOps
import ssimulacra2

parser = argparse.ArgumentParser()
parser.add_argument("--edge", type=int, required=True)
parser.add_argument("--budget", required=True)
parser.add_argument("--photos", default="Benchmarks/.corpus/photos")
parser.add_argument("--photoprep", default=".build/release/photoprep")
args = parser.parse_args()

rows = []
with tempfile.TemporaryDirectory() as work:
    for name in sorted(os.listdir(args.photos)):
        source = os.path.join(args.photos, name)
        full = ImageOps.exif_transpose(Image.open(source)).convert("RGB")
        scale = args.edge / max(full.size)
        size = (round(full.width * scale), round(full.height * scale)) if scale < 1 else full.size
        reference = os.path.join(work, "reference.png")
        full.resize(size, Image.LANCZOS).save(reference, compress_level=1)
        out = os.path.join(work, "out")
        subprocess.run(["rm", "-rf", out], check=True)
        run = subprocess.run([args.photoprep, "prepare", source, "--max-edge", str(args.edge), "--max-bytes", args.budget,
                              "--out", out, "--json"], capture_output=True, text=True)
        if run.returncode != 0:
            raise SystemExit(f"{source}: photoprep failed: {run.stderr.strip()}")
        report = json.loads(run.stdout.splitlines()[0])["report"]
        output = os.path.join(out, os.path.splitext(name)[0] + ".jpg")
        judged = output
        if (report["outputWidth"], report["outputHeight"]) != size:
            judged = os.path.join(work, "output-resized.png")
            Image.open(output).convert("RGB").resize(size, Image.LANCZOS).save(judged, compress_level=1)
        row = {"photo": name, "bytes": os.path.getsize(output), "quality": report.get("quality"),
               "chroma": report.get("chroma"), "decodeScale": report.get("decodeScale"),
               "ownScore": report.get("score"), "score": round(ssimulacra2.compute_ssimulacra2(reference, judged), 2),
               "missedTarget": bool(report.get("missedTarget"))}
        rows.append(row)
        print(json.dumps(row), flush=True)

scores = [r["score"] for r in rows]
free = [r["score"] for r in rows if not r["missedTarget"]]
print(f"{len(rows)} photos, {args.edge} px, budget {args.budget}: median {statistics.median(r['bytes'] for r in rows) / 1000:.0f}k, "
      f"score median {statistics.median(scores):.2f} min {min(scores):.2f}; >= 85: {sum(s >= 85 for s in scores)}, "
      f">= 83: {sum(s >= 83 for s in scores)}; kept from the target by the budget: {len(rows) - len(free)}"
      + (f" (the others: min {min(free):.2f}, >= 85: {sum(s >= 85 for s in free)} of {len(free)})" if free else ""))

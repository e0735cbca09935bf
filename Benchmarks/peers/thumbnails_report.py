"""What the thumbnails, placeholders and square crops cost and give, on the corpus, side by side with the peers.

    thumbnails_report.py --photoprep BIN --corpus DIR --work DIR [--sheet PNG] [--limit N]

Prints a Markdown report:
- the placeholder's share of each photo's pipeline time (its own timer in the report);
- the thumbnails' cost on arrival: `prepare --jobs 1` of the corpus with JPEG thumbnails and WebP beside them (album
  photos: photo preset, 512 px; avatars: group preset, 128 and 256 px squares), from the reports' own timers in the same
  run — the thumbnails (`timings.thumbnails`), of which the WebPs (`timings.webp`), against the rest of each photo's
  pipeline (`timings.total` less the thumbnails);
- WebP beside JPEG: for each thumbnail, the JPEG's bytes and SSIMULACRA2, and the WebP's when one was made (photoprep
  makes one only when it reaches the JPEG's score in fewer bytes);
- cwebp (the reference encoder, the same libwebp) on the same pixels at the quality photoprep chose: its time for one
  encode, against photoprep's WebP step (its search of up to three encodes, each decoded and scored);
- AVIF (avifenc, libavif 0.11 with libaom, Debian 12) on the 256 px avatars at 4:4:4: time and bytes per encode at
  the score it reaches;
- square crops: photoprep's attention rule against libvips' (8.14) as `vipsthumbnail -s 256 --smartcrop attention`
  applies it (the photo shrunk until its short side is 256, then `vips smartcrop --interesting attention`), on the same
  prepared photos: how far apart the two squares' centres are, as a fraction of the side; and what each costs
  (photoprep's `timings.squareCrop`; vipsthumbnail's whole command with `--smartcrop attention` and `centre`);
- with --sheet, a contact sheet: each photo's 256 px square by photoprep (top) and by libvips (bottom).
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time


def run(*args, **kwargs):
    return subprocess.run(args, check=True, capture_output=True, text=True, **kwargs)


def prepare(binary, corpus, out, *extra):
    shutil.rmtree(out, ignore_errors=True)
    done = run(binary, "prepare", *corpus, "--out", out, "--json", "--jobs", "1", "--force", *extra)
    reports = {}
    for line in done.stdout.splitlines():
        event = json.loads(line)
        if event.get("report"):
            reports[os.path.basename(event["input"])] = (event["output"], event["report"])
    return reports


def pipeline(report):
    """A photo's pipeline time without its thumbnails."""
    return report["timings"]["total"] - report["timings"]["thumbnails"]


def score(binary, reference, files):
    done = run(binary, "score", reference, *files, "--json")
    return [json.loads(line)["score"] for line in done.stdout.splitlines()]


def timed(args, repeat=3):
    best = None
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(args, check=True, capture_output=True)
        elapsed = time.perf_counter() - start
        best = elapsed if best is None else min(best, elapsed)
    return best


def pct(value):
    return f"{100 * value:+.1f} %"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--photoprep", required=True)
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--sheet")
    parser.add_argument("--limit", type=int, default=0)
    args = parser.parse_args()
    corpus = sorted(os.path.join(args.corpus, name) for name in os.listdir(args.corpus) if name.lower().endswith(".jpg"))
    if args.limit:
        corpus = corpus[: args.limit]
    work, binary = args.work, args.photoprep
    os.makedirs(work, exist_ok=True)
    out = []
    say = out.append

    # Arrival: the photos with JPEG thumbnails and WebP beside them, each stage timed by the pipeline itself.
    album = {"webp": prepare(binary, corpus, f"{work}/album-webp", "--preset", "photo", "--thumbnails", "512", "--webp-thumbnails")}
    avatar = {"webp": prepare(binary, corpus, f"{work}/avatar-webp", "--preset", "group", "--thumbnails", "128,256",
                              "--square-thumbnails", "--webp-thumbnails")}
    n = len(corpus)
    say(f"{n} photos of the benchmark corpus (`Benchmarks/corpus.sh`), `prepare --jobs 1`, one core.\n")

    placeholder = [r["timings"]["placeholder"] / pipeline(r) for _, r in album["webp"].values()]
    placeholder_ms = [1000 * r["timings"]["placeholder"] for _, r in album["webp"].values()]
    say("**Placeholder (ThumbHash).** Its share of each photo's pipeline time (photo preset): "
        f"median {100 * statistics.median(placeholder):.2f} %, max {100 * max(placeholder):.2f} %; "
        f"{statistics.median(placeholder_ms):.2f} ms a photo (median), {max(placeholder_ms):.2f} ms at most.\n")

    say("**Thumbnails on arrival**, as the server makes them (the pipeline's own timers, summed over the photos, one run):\n")
    say("| photos | pipeline without thumbnails | JPEG thumbnails | WebP beside them | all thumbnails |")
    say("|---|---|---|---|---|")
    for label, runs in [("album photos (photo preset), 512 px", album), ("avatars (group preset), 128 + 256 px squares", avatar)]:
        reports = [r for _, r in runs["webp"].values()]
        base = sum(pipeline(r) for r in reports)
        webp = sum(r["timings"]["webp"] for r in reports)
        jpeg = sum(r["timings"]["thumbnails"] for r in reports) - webp
        say(f"| {label} | {base:.2f} s | {jpeg:.2f} s ({pct(jpeg / base)}) | {webp:.2f} s ({pct(webp / base)}) "
            f"| {jpeg + webp:.2f} s ({pct((jpeg + webp) / base)}) |")
    say("")

    say("**WebP beside JPEG**, per thumbnail (photoprep keeps a WebP only when it reaches the JPEG's SSIMULACRA2 in fewer bytes):\n")
    say("| thumbnails | count | with a WebP | JPEG bytes, median | its WebP, median | WebP / JPEG bytes, median | JPEG score, median | WebP score, median |")
    say("|---|---|---|---|---|---|---|---|")
    for label, runs, edges in [("album 512 px", album, [512]), ("avatar 256 px square", avatar, [256]), ("avatar 128 px square", avatar, [128])]:
        thumbs = [t for _, r in runs["webp"].values() for t in r.get("thumbnails") or [] if t["edge"] in edges]
        made = [t for t in thumbs if t.get("webpBytes")]
        if made:
            say(f"| {label} | {len(thumbs)} | {len(made)} | {statistics.median(t['bytes'] for t in made):,.0f} "
                f"| {statistics.median(t['webpBytes'] for t in made):,.0f} | {statistics.median(t['webpBytes'] / t['bytes'] for t in made):.2f} "
                f"| {statistics.median(t['score'] for t in made):.1f} | {statistics.median(t['webpScore'] for t in made):.1f} |")
        else:
            say(f"| {label} | {len(thumbs)} | 0 | {statistics.median(t['bytes'] for t in thumbs):,.0f} | – | – "
                f"| {statistics.median(t['score'] for t in thumbs):.1f} | – |")
    say("")

    # cwebp on the same pixels (the JPEG thumbnail decoded: the pixels photoprep encoded, but for the JPEG's loss).
    album_thumbs = [(name, t) for name, (_, r) in album["webp"].items() for t in r.get("thumbnails") or [] if t.get("webpBytes")]
    webp_step = sum(r["timings"]["webp"] for _, r in album["webp"].values()) / max(1, len([t for _, r in album["webp"].values() for t in r.get("thumbnails") or []]))
    cwebp_times, cwebp_ratio = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for name, t in album_thumbs[:12]:
            jpeg = os.path.join(f"{work}/album-webp/thumbnails/512", os.path.splitext(name)[0] + ".jpg")
            png = f"{tmp}/t.png"
            run("convert", jpeg, png)
            cwebp_times.append(timed(["cwebp", "-quiet", "-q", str(t["webpQuality"]), "-m", "4", "-sharp_yuv", png, "-o", f"{tmp}/c.webp"]))
            cwebp_ratio.append(os.path.getsize(f"{tmp}/c.webp") / t["webpBytes"])
    if cwebp_times:
        say(f"**cwebp** (`-q Q -m 4 -sharp_yuv`, Q the quality photoprep chose) on {len(cwebp_times)} of those 512 px thumbnails: "
            f"{1000 * statistics.median(cwebp_times):.1f} ms an encode (the whole command, median of the best of 3), "
            f"its file {statistics.median(cwebp_ratio):.2f}× photoprep's; photoprep's WebP step, its search included: "
            f"{1000 * webp_step:.1f} ms a thumbnail (its timer above).\n")

    # AVIF at 4:4:4 on the 256 px avatars.
    avif_rows = []
    if shutil.which("avifenc"):
        with tempfile.TemporaryDirectory() as tmp:
            for name, (_, r) in list(avatar["webp"].items())[:8]:
                jpeg = os.path.join(f"{work}/avatar-webp/thumbnails/256", os.path.splitext(name)[0] + ".jpg")
                png = f"{tmp}/a.png"
                run("convert", jpeg, png)
                t = next(t for t in r["thumbnails"] if t["edge"] == 256)
                for q in (10, 20):
                    avif = f"{tmp}/a{q}.avif"
                    seconds = timed(["avifenc", "-j", "1", "-s", "6", "-y", "444", "--min", str(q), "--max", str(q), png, avif], repeat=1)
                    back = f"{tmp}/a{q}.png"
                    run("avifdec", avif, back)
                    avif_rows.append((q, seconds, os.path.getsize(avif) / t["bytes"], score(binary, png, [back])[0], t["score"]))
        for q in (10, 20):
            rows = [row for row in avif_rows if row[0] == q]
            if rows:
                say(f"**AVIF** (avifenc `-s 6 -y 444 --min {q} --max {q}`, one thread) on {len(rows)} 256 px squares: "
                    f"{1000 * statistics.median(r[1] for r in rows):.0f} ms an encode (median), "
                    f"{statistics.median(r[2] for r in rows):.2f}× the JPEG's bytes, SSIMULACRA2 {statistics.median(r[3] for r in rows):.1f} "
                    f"against the JPEG's pixels (the JPEG scores {statistics.median(r[4] for r in rows):.1f} against its own source).\n")

    # Square crops: photoprep's rule against libvips' on the same prepared photos.
    distances = []
    pairs = []
    vips_times = {"attention": [], "centre": []}
    with tempfile.TemporaryDirectory() as tmp:
        for name, (output, r) in sorted(avatar["webp"].items()):
            crop = r.get("squareCrop")
            if not crop or crop["rule"] != "attention":
                continue
            for rule in vips_times:
                vips_times[rule].append(timed(["vipsthumbnail", output, "-s", "256", "--smartcrop", rule, "-o", f"{tmp}/t.jpg"]))
            # As `vipsthumbnail -s 256 --smartcrop attention` does it: shrunk until the short side is 256, then smartcrop.
            w, h = r["outputWidth"], r["outputHeight"]
            scale = 256 / min(w, h)
            cover = f"{tmp}/{name}-cover.v"
            run("vips", "thumbnail", output, cover, str(round(w * scale)), "--height", str(round(h * scale)), "--size", "force")
            cw, ch = (int(run("vipsheader", "-f", field, cover).stdout) for field in ("width", "height"))
            side = min(cw, ch)
            cropped = f"{tmp}/{name}.v"
            run("vips", "smartcrop", cover, cropped, str(side), str(side), "--interesting", "attention")
            left = -int(run("vipsheader", "-f", "xoffset", cropped).stdout)
            top = -int(run("vipsheader", "-f", "yoffset", cropped).stdout)
            vx, vy = (left + side / 2) / cw, (top + side / 2) / ch
            # The distance between the centres, as a fraction of the square's side (the same fraction at any scale).
            distances.append((((vx - crop["x"]) * w) ** 2 + ((vy - crop["y"]) * h) ** 2) ** 0.5 / min(w, h))
            if args.sheet and len(pairs) < 8:
                vips_square = f"{work}/vips-{os.path.splitext(name)[0]}.png"
                run("vips", "copy", cropped, vips_square)
                ours = os.path.join(f"{work}/avatar-webp/thumbnails/256", os.path.splitext(name)[0] + ".jpg")
                pairs.append((ours, vips_square))
    if distances:
        within = sum(d <= 0.1 for d in distances)
        say(f"**Square crops** against libvips' attention rule as `vipsthumbnail -s 256 --smartcrop attention` applies it, on the same {len(distances)} prepared photos: "
            f"the two squares' centres are {statistics.median(distances):.3f} of the side apart (median), "
            f"{sorted(distances)[int(0.9 * (len(distances) - 1))]:.3f} at the 90th percentile, {max(distances):.3f} at most; "
            f"{within} of {len(distances)} within a tenth of the side.\n")
    if vips_times["attention"]:
        ours = [1000 * r["timings"]["squareCrop"] for _, r in avatar["webp"].values() if (r.get("squareCrop") or {}).get("rule") == "attention"]
        avatars = [1000 * (r["timings"]["thumbnails"] - r["timings"]["webp"]) for _, r in avatar["webp"].values()]
        attention, centre = (1000 * statistics.median(vips_times[rule]) for rule in ("attention", "centre"))
        say(f"**The square's cost**, on the same {len(ours)} photos: photoprep's attention rule and cut (`timings.squareCrop`, on the "
            f"photo's decoded pixels) {statistics.median(ours):.2f} ms a photo (median), {max(ours):.2f} ms at most. libvips: "
            f"`vipsthumbnail -s 256 --smartcrop attention` {attention:.1f} ms a photo, `--smartcrop centre` {centre:.1f} ms (the whole "
            f"command from the prepared JPEG — start, decode, shrink, crop, encode — median of the best of 3): its attention rule "
            f"adds {attention - centre:.1f} ms. photoprep's whole avatar step — the square, its 256 and 128 px copies and their JPEG "
            f"searches, without WebP — {statistics.median(avatars):.1f} ms a photo (median, its timers).\n")
    if args.sheet and pairs:
        tiles = [p[0] for p in pairs] + [p[1] for p in pairs]
        run("montage", *tiles, "-tile", f"{len(pairs)}x2", "-geometry", "160x160+4+4", "-background", "white", "-depth", "8", "-strip", args.sheet)
        say(f"Contact sheet: `{args.sheet}` — photoprep's 256 px squares (top row) and libvips' (bottom row), photo by photo.\n")
    print("\n".join(out))


if __name__ == "__main__":
    main()

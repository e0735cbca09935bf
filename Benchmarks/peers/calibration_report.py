"""The tables Benchmarks/calibration.sh prints, from `photoprep bench --curve` and `--fidelity` output in FOLDER."""
import json
import statistics
import sys

folder = sys.argv[1]


def oracle(points, target, chroma444, progressive):
    """The bytes at the lowest quality reaching `target` (None when none does)."""
    for p in sorted((p for p in points if p["fullChroma"] == chroma444), key=lambda p: p["quality"]):
        if p["score"] >= target:
            return (p["progressiveBytes"] if progressive else p["baselineBytes"]), p["quality"]
    return None


for edge in (1024, 2048):
    lines = [json.loads(line) for line in open(f"{folder}/curve-{edge}.jsonl")]
    print(f"\n## {edge} px: {len(lines)} photos")
    qualities = sorted({p["quality"] for p in lines[0]["points"]})
    print("\nmedian SSIMULACRA2 by quality, 4:2:0 (TargetSearch.typicalScore) and 4:4:4; median points a quality step (80-96)")
    print("| quality | 4:2:0 | 4:4:4 | min 4:2:0 | max 4:2:0 |")
    print("|---|---|---|---|---|")
    for q in qualities:
        if q % 10 and q not in (84, 86, 88, 92, 94, 96, 98):
            continue
        s420 = [p["score"] for l in lines for p in l["points"] if p["quality"] == q and not p["fullChroma"]]
        s444 = [p["score"] for l in lines for p in l["points"] if p["quality"] == q and p["fullChroma"]]
        print(f"| {q} | {statistics.median(s420):.1f} | {statistics.median(s444):.1f} | {min(s420):.1f} | {max(s420):.1f} |")
    slopes = []
    for l in lines:
        by = {p["quality"]: p["score"] for p in l["points"] if not p["fullChroma"]}
        slopes.append((by[96] - by[80]) / 16)
    print(f"\nslope, score points a quality step between 80 and 96: median {statistics.median(slopes):.2f}, "
          f"range {min(slopes):.2f}-{max(slopes):.2f}")
    for target in (75, 85, 90):
        rows = []
        for l in lines:
            a = oracle(l["points"], target, False, True)
            b = oracle(l["points"], target, True, True)
            base = oracle(l["points"], target, False, False)
            rows.append((l["file"], a, b, base))
        reach420 = [r for r in rows if r[1]]
        q420 = [r[1][1] for r in reach420]
        smaller444 = [r for r in rows if r[2] and (not r[1] or r[2][0] < r[1][0])]
        prog = [r[1][0] / r[3][0] for r in rows if r[1] and r[3]]
        print(f"\ntarget {target}: 4:2:0 reaches it on {len(reach420)}/{len(rows)} photos, at quality median "
              f"{statistics.median(q420) if q420 else '-'} (range {min(q420) if q420 else '-'}-{max(q420) if q420 else '-'}); "
              f"4:4:4 smaller (or the only one reaching it) on {len(smaller444)}: "
              + ", ".join(f"{r[0]} ({r[2][0] // 1024} vs {r[1][0] // 1024 if r[1] else '-'} KiB)" for r in smaller444))
        print(f"  progressive / baseline bytes at that quality: median {statistics.median(prog):.3f}, "
              f"range {min(prog):.3f}-{max(prog):.3f}")
    small = []
    for l in lines:
        for p in l["points"]:
            if p["quality"] == 86 and not p["fullChroma"]:
                small.append((l["width"] * l["height"], p["progressiveBytes"] / p["baselineBytes"]))
    print("\nprogressive / baseline at Q86 by pixels: " + ", ".join(f"{px / 1e6:.2f} MP {r:.3f}" for px, r in sorted(small)))

for edge in (1024, 2048):
    print(f"\n## shrink-on-load at {edge} px (photoprep bench --fidelity)")
    rows = [line.split() for line in open(f"{folder}/fidelity-{edge}.txt") if "ms" in line and not line.startswith("photoprep")]
    if not rows:
        continue
    header = [line for line in open(f"{folder}/fidelity-{edge}.txt")][1].split()
    margins = [header[i + 1] for i in range(1, len(header), 2)]
    print("| margin | median score | min score | median ms (decode + resize) | photos decoded at a reduced scale |")
    print("|---|---|---|---|---|")
    for i, margin in enumerate(margins):
        cells = [r[1 + 4 * i: 5 + 4 * i] for r in rows]
        scores = [float(c[1]) for c in cells]
        ms = [float(c[2]) for c in cells]
        reduced = sum(1 for c in cells if c[0] != "1/1")
        print(f"| {margin} | {statistics.median(scores):.2f} | {min(scores):.2f} | {statistics.median(ms):.1f} | {reduced}/{len(cells)} |")

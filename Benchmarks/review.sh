#!/usr/bin/env bash
# The review hook's cost: how much longer an upload takes with `--review-url` pointing at a receiver on 127.0.0.1 that
# decodes each photo's bytes and accepts (Benchmarks/peers/review_receiver.py, keep-alive) than without. Each round: a
# fresh server for each row; the corpus photos under 10 MiB uploaded one after the other, each in one tus request
# answered once the photo is stored (Benchmarks/peers/review_latency.py); rows interleaved, the first alternating.
# Prints each row's p50 and p99 per photo (ms), and what the review added: the p50 and p99 of the per-photo
# differences (the same photo, with minus without, in the same round).
#
# Usage:  Benchmarks/review.sh [--rounds N (default 3)]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=3 usage="usage: Benchmarks/review.sh [--rounds N]"
source Benchmarks/backend-common.sh "$@"
corpus_photos
review_port=$(free_port)
"$py" Benchmarks/peers/review_receiver.py "$review_port" & helpers+=($!)

run() {  # ROW ROUND [serve flags...]: a fresh server, the uploads, their times appended to $work/ROW
  local row=$1 round=$2; shift 2
  serve "$row-$round" "$@"
  "$py" Benchmarks/peers/review_latency.py "$port" "$secret" "${photos[@]}" >> "$work/$row"
  unserve
}
for round in $(seq "$rounds"); do
  if [ $((round % 2)) -eq 1 ]; then
    run none "$round"; run review "$round" --review-url "http://127.0.0.1:$review_port/"
  else
    run review "$round" --review-url "http://127.0.0.1:$review_port/"; run none "$round"
  fi
  echo "round $round of $rounds done" >&2
done
"$py" - "$work" "${#photos[@]}" <<'PY'
import json, sys
work, count = sys.argv[1], int(sys.argv[2])
rows = {name: [json.loads(line) for line in open(f"{work}/{name}")] for name in ("none", "review")}
def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, max(0, round(p / 100 * len(values) + 0.5) - 1))]
print(f"| {count} photos one after the other, per round | p50 ms | p99 ms |")
print("|---|---:|---:|")
for name, label in (("none", "no review"), ("review", "--review-url (receiver on 127.0.0.1)")):
    times = [t for r in rows[name] for t in r]
    print(f"| {label} | {pct(times, 50):.1f} | {pct(times, 99):.1f} |")
deltas = [b - a for ra, rb in zip(rows["none"], rows["review"]) for a, b in zip(ra, rb)]
print(f"\nadded by the review, per photo (with minus without, same photo and round): p50 {pct(deltas, 50):+.1f} ms, p99 {pct(deltas, 99):+.1f} ms")
PY

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
rounds=3
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    *) echo "usage: Benchmarks/review.sh [--rounds N]" >&2; exit 2 ;;
  esac
done
photoprep=${PHOTOPREP:-.build/release/photoprep}
[ -x "$photoprep" ] || swift build -c release --product photoprep 2>&1 | tail -1
py=python3; [ -x .venv/bin/python3 ] && py=.venv/bin/python3
Benchmarks/corpus.sh
photos=()
for f in Benchmarks/.corpus/photos/*.jpg; do
  if [ "$(stat -c %s "$f")" -lt $((10 * 1024 * 1024)) ]; then photos+=("$PWD/$f"); fi
done
work=$(mktemp -d)
secret=$(head -c 32 /dev/urandom | base64)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
review_port=$(free_port)
"$py" Benchmarks/peers/review_receiver.py "$review_port" & review_pid=$!
server_pid=""
trap 'kill $review_pid $server_pid 2>/dev/null || true; rm -rf "$work"' EXIT

run() {  # ROW ROUND [serve flags...]: a fresh server, the uploads, their times appended to $work/ROW
  local row=$1 round=$2; shift 2
  local port; port=$(free_port)
  PHOTOPREP_JWT_SECRET=$secret "$photoprep" serve --data "$work/data-$row-$round" --port "$port" --writes-per-user 0 --writes-per-address 0 "$@" \
    > "$work/serve-$row-$round.log" 2>&1 & server_pid=$!
  for _ in $(seq 300); do curl -sf -o /dev/null "http://127.0.0.1:$port/health" && break; sleep 0.1; done
  "$py" Benchmarks/peers/review_latency.py "$port" "$secret" "${photos[@]}" >> "$work/$row"
  kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=""
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

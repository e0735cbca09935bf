#!/usr/bin/env bash
# The upload hook's cost: how long `photoprep serve` takes to create an upload (tus POST /files/, no body) without a
# hook and with `--hook-url` pointing at a receiver on 127.0.0.1 that accepts everything (Benchmarks/peers/
# hook_receiver.py, keep-alive). Each round: a fresh server for each row, 500 creations one after the other by
# Benchmarks/peers/hook_latency.py (one user each, one keep-alive connection); rows interleaved; p50 and p99 in ms,
# each round's, then the medians of the rounds.
#
# Usage:  Benchmarks/hooks.sh [--rounds N (default 3)] [--count N (default 500)]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=3 count=500 extra_options="--count" usage="usage: Benchmarks/hooks.sh [--rounds N] [--count N]"
source Benchmarks/backend-common.sh "$@"
hook_port=$(free_port)
"$py" Benchmarks/peers/hook_receiver.py "$hook_port" & helpers+=($!)

run() {  # ROW ROUND [serve flags...]: a fresh server, the creations, its line appended to $work/ROW
  local row=$1 round=$2; shift 2
  serve "$row-$round" "$@"
  "$py" Benchmarks/peers/hook_latency.py "$port" "$count" "$secret" >> "$work/$row"
  unserve
}
for round in $(seq "$rounds"); do
  run none "$round"
  run hook "$round" --hook-url "http://127.0.0.1:$hook_port/"
done
python3 - "$work" <<'PY'
import json, statistics, sys
rows = {name: [json.loads(line) for line in open(f"{sys.argv[1]}/{name}")] for name in ("none", "hook")}
print("| creation | p50 ms (rounds) | p99 ms (rounds) | p50 median | p99 median |")
print("|---|---|---|---:|---:|")
for name, label in (("none", "no hook"), ("hook", "--hook-url (receiver on 127.0.0.1)")):
    p50 = [r["p50"] for r in rows[name]]; p99 = [r["p99"] for r in rows[name]]
    print(f"| {label} | {' / '.join(f'{v:.2f}' for v in p50)} | {' / '.join(f'{v:.2f}' for v in p99)} | {statistics.median(p50):.2f} | {statistics.median(p99):.2f} |")
added50 = statistics.median(r["p50"] for r in rows["hook"]) - statistics.median(r["p50"] for r in rows["none"])
added99 = statistics.median(r["p99"] for r in rows["hook"]) - statistics.median(r["p99"] for r in rows["none"])
print(f"\nadded by the hook: p50 {added50:+.2f} ms, p99 {added99:+.2f} ms")
PY

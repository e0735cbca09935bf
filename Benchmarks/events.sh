#!/usr/bin/env bash
# The events' cost: `photoprep serve` taking in photos with an event receiver attached (`--events-url`, a receiver on
# 127.0.0.1 that answers 204: Benchmarks/peers/event_receiver.py) against without. Each round: a fresh server for each
# row, COUNT tus uploads at once by Benchmarks/peers/ingest_load.py (as Benchmarks/ingest.sh's tus row: one user and
# one connection each, the corpus photos under 10 MiB in turn, album photos with their 512 px thumbnail); rows
# interleaved, the first row alternating. Per row: photos/s (barrier → last upload answered), the server's CPU seconds,
# and with the receiver, the events that arrived (two an upload: photo.stored, album.photoAdded) and how long after
# the last upload's answer the last of them arrived. Without a receiver the events are still recorded (the outbox is
# always written); what the receiver row adds is their delivery.
#
# Usage:  Benchmarks/events.sh [--rounds N (default 3)] [--count N (default 100)]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=3 count=100 extra_options="--count" usage="usage: Benchmarks/events.sh [--rounds N] [--count N]"
source Benchmarks/backend-common.sh "$@"
corpus_photos
"$photoprep" events secret > "$work/secret"
receiver_port=$(free_port)
"$py" Benchmarks/peers/event_receiver.py "$receiver_port" "$work/received" & helpers+=($!)
ticks=$(getconf CLK_TCK)
cpu_seconds() { awk -v t="$ticks" '{ sub(/^.*\) /, ""); printf "%.2f", ($12 + $13) / t }' "/proc/$1/stat"; }

run() {  # ROW ROUND [serve flags...]: a fresh server, the load, its line appended to $work/ROW
  local row=$1 round=$2; shift 2
  : > "$work/received"
  serve "$row-$round" --max-connections-per-address 0 "$@"
  sync
  local cpu0; cpu0=$(cpu_seconds "$server_pid")
  "$py" Benchmarks/peers/ingest_load.py tus "http://127.0.0.1:$port" "${photos[@]}" --count "$count" --timeout 600 > "$work/load.json"
  local answered; answered=$(date +%s.%N)
  local events=0 lag=""
  if [ "$row" = events ]; then
    for _ in $(seq 600); do   # ≤ 60 s
      events=$(wc -l < "$work/received")
      [ "$events" -ge $((2 * count)) ] && break
      sleep 0.1
    done
    lag=$(awk -v a="$answered" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
  fi
  local cpu; cpu=$(awk -v a="$(cpu_seconds "$server_pid")" -v b="$cpu0" 'BEGIN { printf "%.2f", a - b }')
  "$py" -c 'import json, sys; r = json.load(open(sys.argv[1])); r.update(cpu=float(sys.argv[2]), events=int(sys.argv[3]), lag=sys.argv[4]); print(json.dumps(r))' \
    "$work/load.json" "$cpu" "$events" "${lag:-0}" >> "$work/$row"
  unserve
}
for round in $(seq "$rounds"); do
  if [ $((round % 2)) -eq 1 ]; then
    run none "$round"; run events "$round" --events-url "http://127.0.0.1:$receiver_port/" --events-secret-file "$work/secret"
  else
    run events "$round" --events-url "http://127.0.0.1:$receiver_port/" --events-secret-file "$work/secret"; run none "$round"
  fi
  echo "round $round of $rounds done" >&2
done
"$py" - "$work" "$count" <<'PY'
import json, statistics, sys
work, count = sys.argv[1], int(sys.argv[2])
rows = {name: [json.loads(line) for line in open(f"{work}/{name}")] for name in ("none", "events")}
print("| ingest, %d tus uploads at once | photos/s (rounds) | server CPU s (rounds) | photos/s median | events arrived | last event after the last answer |" % count)
print("|---|---|---|---:|---|---|")
for name, label in (("none", "no receiver (events recorded only)"), ("events", "--events-url (receiver on 127.0.0.1)")):
    rate = [r["photos_per_s"] for r in rows[name]]; cpu = [r["cpu"] for r in rows[name]]
    ok = [r["ok"] for r in rows[name]]
    arrived = " / ".join(str(r["events"]) for r in rows[name]) if name == "events" else "–"
    lag = " / ".join(f'{float(r["lag"]):.2f} s' for r in rows[name]) if name == "events" else "–"
    print(f"| {label} | {' / '.join(f'{v:.2f}' for v in rate)} | {' / '.join(f'{v:.1f}' for v in cpu)} | {statistics.median(rate):.2f} | {arrived} | {lag} |")
    if any(o != count for o in ok): print(f"  (uploads that finished: {ok})")
none, events = statistics.median(r["photos_per_s"] for r in rows["none"]), statistics.median(r["photos_per_s"] for r in rows["events"])
print(f"\nwith the receiver: {100 * (events / none - 1):+.1f} % photos/s (target: within 5 %)")
PY

#!/usr/bin/env bash
# Serving photos back: requests per second and p99 latency of GET on a group photo's download URL (the
# 2048 px photo, and its 256 px thumbnail), `photoprep serve` against nginx serving the very same files
# from the same folder. Fair as ../shared/research/read-side.md says: each server pinned to core 0
# (`taskset`), nginx with one worker, wrk pinned to core 1 with 64 connections for 10 s, page cache warm;
# the two servers run in turn, interleaved, three rounds each; every round is printed, then the medians and
# the targets of issue #28 (at least half of nginx's requests/s on the thumbnail, at most 2x its p99).
# photoprep answers with the checks it does on every request (the token against the database, the
# photo's record, conditional and range headers); nginx only opens the file.
set -euo pipefail
cd "$(dirname "$0")/.."
missing=()
for p in nginx-light wrk; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
swift build -c release --product photoprep 2>&1 | tail -1
pp=.build/release/photoprep
work=$(mktemp -d)
data="$work/data"
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# A group with a photo, uploaded through the server as its admin: stored normalised, with thumbnails.
export PHOTOPREP_JWT_SECRET
PHOTOPREP_JWT_SECRET=$(head -c 32 /dev/urandom | base64)
for u in u1 u2 u3; do "$pp" user add "$u" --name "User $u" --data "$data" >/dev/null; done
group=$("$pp" group create --as u1 --name Bench --participant u2 --participant u3 --data "$data" | awk '{print $2}')
port=$(free_port)
taskset -c 0 "$pp" serve --data "$data" --port "$port" --log-level error > "$work/serve.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.1; done
# One core, one event loop (as nginx's one worker).
grep -q "event loops: 1)" "$work/serve.log" || { echo "photoprep serve did not start one event loop on one core:" >&2; cat "$work/serve.log" >&2; exit 1; }
token=$(scripts/dev-token.py u1)
cp TestImages/photos/ladybird-2560x1600.jpg "$work/photo.jpg"
"$pp" upload "$work/photo.jpg" --to "http://127.0.0.1:$port/files/" --key-prefix "group_photos/$group/" --token "$token" \
  --state "$work/state" -q
photo_json=$(curl -sf -H "Authorization: Bearer $token" "http://127.0.0.1:$port/v1/groups/$group/photo")
photo_url=$(echo "$photo_json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["downloadURL"])')
thumb_url=$(echo "$photo_json" | python3 -c 'import json,sys; print([t for t in json.load(sys.stdin)["thumbnails"] if t["edge"] == 256][0]["downloadURL"])')
photo_file="group_photos/$group/photo.jpg"
thumb_file="thumbnails/256/group_photos/$group/photo.jpg"

# nginx on the same storage folder, one worker.
nport=$(free_port)
cat > "$work/nginx.conf" <<EOF
worker_processes 1;
user $(id -un);
daemon off;
pid $work/nginx.pid;
error_log $work/nginx.err;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  types { image/jpeg jpg; }
  server {
    listen 127.0.0.1:$nport;
    root $data/storage;
    location / { add_header Cache-Control "public, max-age=31536000, immutable"; }
  }
}
EOF
taskset -c 0 nginx -c "$work/nginx.conf" -p "$work" 2>>"$work/nginx.err" &
pids+=($!)
for _ in $(seq 50); do curl -sf -o /dev/null "http://127.0.0.1:$nport/$thumb_file" && break; sleep 0.1; done

# Both answer the same bytes.
cmp <(curl -sf "$photo_url") "$data/storage/$photo_file"
cmp <(curl -sf "http://127.0.0.1:$nport/$photo_file") "$data/storage/$photo_file" || { cat "$work/nginx.err" >&2; exit 1; }
cmp <(curl -sf "$thumb_url") <(curl -sf "http://127.0.0.1:$nport/$thumb_file")

# bench NAME URL: one wrk run; appends "NAME requests/s p99" to the results.
bench() {
  local out rps p99
  out=$(taskset -c 1 wrk -t1 -c64 -d10s --latency "$2")
  rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
  p99=$(echo "$out" | awk '$1 == "99%" {print $2}')
  echo "$1 $rps $p99" >> "$work/results"
  if echo "$out" | grep -q "Non-2xx"; then echo "$1: non-2xx answers" >&2; exit 1; fi
}
for round in 1 2 3; do
  bench "thumbnail(256px)/nginx" "http://127.0.0.1:$nport/$thumb_file"
  bench "thumbnail(256px)/photoprep" "$thumb_url"
  bench "photo(2048px)/nginx" "http://127.0.0.1:$nport/$photo_file"
  bench "photo(2048px)/photoprep" "$photo_url"
  # The floor: the page's 300-byte icon from memory, through the same router and middleware.
  bench "floor(icon.svg)/photoprep" "http://127.0.0.1:$port/web/icon.svg"
done
echo "sizes: thumbnail $(stat -c %s "$data/storage/$thumb_file") bytes, photo $(stat -c %s "$data/storage/$photo_file") bytes, icon $(curl -s "http://127.0.0.1:$port/web/icon.svg" | wc -c) bytes"
printf '%-28s %14s %10s\n' "what/server" "requests/s" "p99"
sort -s -k1,1 "$work/results" | while read -r name rps p99; do printf '%-28s %14s %10s\n' "$name" "$rps" "$p99"; done
python3 - "$work/results" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, rps, p99 = line.split()
    ms = float(p99[:-2]) if p99.endswith("ms") else float(p99[:-2]) / 1000 if p99.endswith("us") else float(p99[:-1]) * 1000
    rows.setdefault(name, []).append((float(rps), ms))
median = {name: (statistics.median(r for r, _ in v), statistics.median(m for _, m in v)) for name, v in rows.items()}
print("medians:")
for name in sorted(median):
    print(f"  {name:<28} {median[name][0]:>12,.0f} requests/s   p99 {median[name][1]:.2f} ms")
for what in ("thumbnail(256px)", "photo(2048px)"):
    ours, theirs = median[f"{what}/photoprep"], median[f"{what}/nginx"]
    print(f"{what}: {ours[0] / theirs[0]:.0%} of nginx's requests/s, {ours[1] / theirs[1]:.2f}x its p99")
PY

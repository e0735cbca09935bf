#!/usr/bin/env bash
# Ingest: how fast `photoprep serve` takes in photos, against what this machine can do.
#
# What it measures, each round (all on 127.0.0.1; rounds interleaved so that machine noise hits every
# row alike; the table gives medians):
#   tus    `photoprep serve` (local store, the embedded SQLite, a fresh --data folder in a temp dir, a
#          free port): 100 uploads at once over tus 1.0 — POST /files/, then the whole file in one PATCH
#   draft  the same over the IETF resumable-upload draft (interop version 6) — one POST /uploads/{key}
#          with the whole body (what URLSession sends)
#          Both by Benchmarks/peers/ingest_load.py (a second process, one thread and one keep-alive
#          connection per upload, bodies by sendfile, all released at once by a barrier). Upload i is
#          user bench{i}'s, key user_photos/bench{i}/bench/{i}.jpg (the photo preset, < 10 MiB), the
#          corpus photos under 10 MiB taken in turn. An upload counts when its final request is answered,
#          which the server does only after preparing, storing and recording the photo: photos/s are
#          normalised photos, MB/s the uploads' bytes over the same wall time (barrier → last answer).
#          Peak RSS: VmHWM from /proc/PID/status, read before the server is stopped (target < 300 MB).
#   curl   machine limit 1, the network side: `curl --parallel` with the same 100 uploads at once (PUT,
#          no Expect: 100-continue) to Benchmarks/peers/ingest_receiver.py — a Python ThreadingHTTPServer
#          that streams each body to its own file 1 MiB at a time, fsyncs it, then answers 201. MB/s and
#          photos/s received (nothing decoded), over curl's wall time.
#   prepare  machine limit 2, the CPU side: `photoprep prepare --jobs 2 --preset photo` (the preset the
#          server uses for user_photos/, StoragePath.preset) on copies of the same 100 files, fresh --out.
#          Twice: plain (flat copies 0.jpg …, out/0.jpg …: the plain limit), and doing the
#          server's own work on each photo: `--thumbnails 512 --webp-thumbnails` (the album photo's 512 px
#          thumbnail and its WebP, made on arrival: `--album-thumbnails`, default 512; `--webp-thumbnails`,
#          default on) on copies laid out as the server's storage keys,
#          user_photos/bench{i}/bench/{i}.jpg — so prepare makes the folders the server makes for 100 users
#          (photo and thumbnail: four new folders a photo, each created and flushed; about 1–1.5 ms of kernel
#          time a photo, measured with the flat copies beside them, 2026-11-28).
# Verdict: serve's photos/s against the slower of the two limits for the same work — curl, and prepare doing
# the server's work (thumbnails, folders) — in photos/s (the same 100 photos, so that is also its MB/s against
# curl's when curl is the slower) — met at ≥ 90 %. The ratio to plain prepare is printed beside it.
#
# Server settings: the defaults, except the two limits that count per client *address*, which 100 users
# all on 127.0.0.1 would otherwise share, where real clients come from 100 addresses:
# --writes-per-address 0 (default 600 creations a minute) and --max-connections-per-address 0 (default
# 128; 100 connections at once come close). The per-user limits (20 unfinished uploads,
# --writes-per-user 120) do not bind: one upload per user. --max-waiting-photos stays 128 (≥ 100, so no
# 503 is expected); --pipeline-threads stays one per core; album thumbnails stay on (512 px). Extra serve
# flags: INGEST_SERVE_ARGS (e.g. "--album-thumbnails none"; then set INGEST_PREPARE_THUMBNAILS=none, which
# leaves out the thumbnails row, or to the sizes given, e.g. 256,512; with "--webp-thumbnails off", set
# INGEST_PREPARE_WEBP=off). prepare's --jobs: INGEST_PREPARE_JOBS
# (default 2, this machine's cores; elsewhere set it to the cores, as the server's
# pipeline has one thread each).
#
# Nothing a row wrote is deleted before the end (the scratch folder goes on exit; about 0.4 GB a round): on a file
# system without a journal, ext4 steps over every inode freed in the last 30 s when it allocates one (recently_deleted
# in find_inode_bit), so a row started right after deleting the row before it paid for that deletion — a server's
# thousand files cost the next server row about 2 ms of kernel time a photo (perf, 2026-11-28), prepare's hundred
# the prepare row far less. What a row deletes itself (the server its uploads' data files) it still pays for.
#
# Usage:  Benchmarks/ingest.sh [--rounds N (1-10, default 3)] [--count N (default 100)] [--markdown FILE]
# The binary: $PHOTOPREP (default .build/release/photoprep), built with `swift build -c release` only when
# PHOTOPREP is unset and the file is missing.
# Python: .venv/bin/python3 if present, else python3 (the helpers use the standard library only).
# INGEST_KEEP=1 keeps the scratch folder (logs, results.jsonl). Every wait is bounded; the servers are
# stopped on exit. On a 2-core machine the client, the server and anything else running share the
# cores: numbers move from run to run.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=3 count=100 markdown=""
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --count) count=$2; shift 2 ;;
    --markdown) markdown=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ "$rounds" =~ ^[0-9]+$ ]] && [ "$rounds" -ge 1 ] && [ "$rounds" -le 10 ] || { echo "--rounds: 1 to 10" >&2; exit 2; }
[[ "$count" =~ ^[0-9]+$ ]] && [ "$count" -ge 1 ] && [ "$count" -le 1000 ] || { echo "--count: 1 to 1000" >&2; exit 2; }
jobs=${INGEST_PREPARE_JOBS:-2}
thumbnails=${INGEST_PREPARE_THUMBNAILS-512}; [ "$thumbnails" = none ] && thumbnails=""
webp=${INGEST_PREPARE_WEBP:-on}; [ "$webp" = on ] || [ "$webp" = off ] || { echo "INGEST_PREPARE_WEBP: on or off" >&2; exit 2; }
[[ "$jobs" =~ ^[0-9]+$ ]] && [ "$jobs" -ge 1 ] || { echo "INGEST_PREPARE_JOBS: a whole number of at least 1" >&2; exit 2; }

# --- The binary (never built when PHOTOPREP is given) ---
if [ -n "${PHOTOPREP:-}" ]; then
  photoprep=$PHOTOPREP
else
  photoprep=.build/release/photoprep
  [ -x "$photoprep" ] || swift build -c release --product photoprep 2>&1 | tail -1
fi
[ -x "$photoprep" ] || { echo "no photoprep binary at $photoprep" >&2; exit 1; }
py=python3; [ -x .venv/bin/python3 ] && py=.venv/bin/python3
peers=Benchmarks/peers

# --- The photos: the corpus' JPEGs under the user_photos/ limit (< 10 MiB), in name order ---
Benchmarks/corpus.sh
photos=()
for f in Benchmarks/.corpus/photos/*.jpg; do
  if [ "$(stat -c %s "$f")" -lt $((10 * 1024 * 1024)) ]; then photos+=("$PWD/$f"); fi
done
[ ${#photos[@]} -gt 0 ] || { echo "no photos under 10 MiB in Benchmarks/.corpus/photos" >&2; exit 1; }

work=$(mktemp -d -t photoprep-ingest.XXXXXX)
server_pid="" receiver_pid=""
cleanup() {
  for pid in $server_pid $receiver_pid; do
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done   # ≤ 10 s, then for good
    kill -KILL "$pid" 2>/dev/null || true
  done
  if [ "${INGEST_KEEP:-}" = 1 ]; then echo "kept: $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
results="$work/results.jsonl"
export PHOTOPREP_JWT_SECRET
PHOTOPREP_JWT_SECRET=$(head -c 32 /dev/urandom | base64)
ticks=$(getconf CLK_TCK)

# cpu_seconds PID: the process' user + system CPU so far.
cpu_seconds() { awk -v t="$ticks" '{ sub(/^.*\) /, ""); printf "%.2f", ($12 + $13) / t }' "/proc/$1/stat"; }
# minus A B: A - B, two decimals.
minus() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a - b }'; }
# peak_kib PID: VmHWM, in KiB.
peak_kib() { awk '$1 == "VmHWM:" {print $2}' "/proc/$1/status"; }

# The batch, once: which file each upload sends (the same list for every row), and copies for prepare.
batch=()
for i in $(seq 0 $((count - 1))); do batch+=("${photos[$((i % ${#photos[@]}))]}"); done
# prepare-in: flat (0.jpg …), the plain limit; prepare-keys: the same files, hard links, at the server's storage
# keys (user_photos/bench{i}/bench/{i}.jpg), so that the prepare row doing the server's work also makes its folders.
mkdir -p "$work/prepare-in"
for i in "${!batch[@]}"; do
  cp "${batch[$i]}" "$work/prepare-in/$i.jpg"
  mkdir -p "$work/prepare-keys/user_photos/bench$i/bench"
  ln "$work/prepare-in/$i.jpg" "$work/prepare-keys/user_photos/bench$i/bench/$i.jpg"
done
batch_bytes=$(cat "${batch[@]}" | wc -c)
echo "batch: $count uploads of ${#photos[@]} distinct photos (< 10 MiB), $(awk -v b="$batch_bytes" 'BEGIN { printf "%.1f", b / 1e6 }') MB in all;" \
  "$photoprep; $(nproc) cores" >&2

# The plain receiver, for every round.
mkdir -p "$work/received"
: > "$work/receiver.out"   # before the background job opens it: the loop below reads it at once
"$py" "$peers/ingest_receiver.py" "$work/received" > "$work/receiver.out" 2> "$work/receiver.err" &
receiver_pid=$!
receiver_port=""
for _ in $(seq 100); do   # ≤ 10 s
  receiver_port=$(awk '/^listening on/ {print $3}' "$work/receiver.out")
  [ -n "$receiver_port" ] && break
  kill -0 "$receiver_pid" 2>/dev/null || break
  sleep 0.1
done
[ -n "$receiver_port" ] || { echo "the receiver did not start: $(cat "$work/receiver.err")" >&2; exit 1; }
# curl's configuration: one PUT per upload, all at once.
for i in "${!batch[@]}"; do
  [ "$i" -gt 0 ] && echo next
  printf 'url = "http://127.0.0.1:%s/r/%s"\nupload-file = "%s"\noutput = "/dev/null"\nheader = "Expect:"\nmax-time = 300\n' \
    "$receiver_port" "$i" "${batch[$i]}"
  printf 'write-out = "%%{http_code} %%{size_upload}\\n"\n'
done > "$work/curl.cfg"

run_curl() {  # ROUND
  sync   # start from clean dirty-page state, as the other rows roughly do
  local cpu0; cpu0=$(cpu_seconds "$receiver_pid")
  timeout --foreground 600 "$py" "$peers/ingest_report.py" time "$work/curl.time" -- \
    curl -s --parallel --parallel-immediate --parallel-max "$count" -K "$work/curl.cfg" > "$work/curl.out" 2> "$work/curl.err" || true
  local ok bytes codes
  ok=$(awk '$1 == 201' "$work/curl.out" | wc -l)
  bytes=$(awk '$1 == 201 {b += $2} END {print b + 0}' "$work/curl.out")
  codes=$(awk '{c[$1]++} END {for (k in c) printf "%s%s: %d", (n++ ? ", " : ""), k, c[k]}' "$work/curl.out")
  "$py" "$peers/ingest_report.py" record "$results" row=curl "round=$1" "count=$count" "ok=$ok" "bytes=$bytes" @"$work/curl.time" \
    "receiver_cpu_s=$(minus "$(cpu_seconds "$receiver_pid")" "$cpu0")" "rss_kib=$(peak_kib "$receiver_pid")" "codes=$codes"
}

run_prepare() {  # ROUND [THUMBNAILS]: plain, or the server's work — its thumbnails, its folders (row prepare_thumbs)
  local row=prepare in="$work/prepare-in" out="$work/prepare-out-$1" extra=()
  if [ -n "${2:-}" ]; then row=prepare_thumbs in="$work/prepare-keys" out="$work/prepare-thumbs-out-$1" extra=(--thumbnails "$2")
    [ "$webp" = off ] || extra+=(--webp-thumbnails)
  fi
  sync
  timeout --foreground 900 "$py" "$peers/ingest_report.py" time "$work/$row.time" -- \
    "$photoprep" prepare "$in" --out "$out" --preset photo --jobs "$jobs" "${extra[@]}" --quiet > "$work/$row.log" 2>&1 || true
  local ok; ok=$(find "$out" -path "$out/thumbnails" -prune -o -name '*.jpg' -type f -print | wc -l)
  "$py" "$peers/ingest_report.py" record "$results" "row=$row" "round=$1" "count=$count" "ok=$ok" "bytes=$batch_bytes" "jobs=$jobs" \
    "thumbnails=${2:+${extra[*]:1}}" @"$work/$row.time"
}

run_serve() {  # PROTOCOL ROUND: a fresh server, the load, its numbers, the server stopped
  local protocol=$1 round=$2 data="$work/data-$1-$2" log="$work/serve-$1-$2.log" port=""
  # Extra flags: the two per-address limits off (see the header); INGEST_SERVE_ARGS on top.
  : > "$log"   # exists before the loop below reads it, however late the background job starts
  # shellcheck disable=SC2086
  "$photoprep" serve --data "$data" --host 127.0.0.1 --port 0 --writes-per-address 0 --max-connections-per-address 0 \
    ${INGEST_SERVE_ARGS:-} >> "$log" 2>&1 &
  server_pid=$!
  for _ in $(seq 600); do   # ≤ 60 s
    port=$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9][0-9]*\).*|\1|p' "$log" | head -1)
    [ -n "$port" ] && curl -sf -o /dev/null "http://127.0.0.1:$port/health" && break
    port=""
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$port" ] || { echo "photoprep serve did not start:" >&2; tail -20 "$log" >&2; exit 1; }
  sync
  local cpu0; cpu0=$(cpu_seconds "$server_pid")
  timeout --foreground 900 "$py" "$peers/ingest_load.py" "$protocol" "http://127.0.0.1:$port" "${batch[@]}" --count "$count" \
    --timeout 600 > "$work/load.json" 2> "$work/load.err" || true
  [ -s "$work/load.json" ] || { echo "the load client failed:" >&2; cat "$work/load.err" >&2; exit 1; }
  kill -0 "$server_pid" 2>/dev/null || { echo "photoprep serve ended during the load:" >&2; tail -20 "$log" >&2; exit 1; }
  local cpu rss metrics stored fivexx
  cpu=$(minus "$(cpu_seconds "$server_pid")" "$cpu0")
  rss=$(peak_kib "$server_pid")
  metrics=$(curl -sf "http://127.0.0.1:$port/metrics" || true)
  stored=$(echo "$metrics" | awk '$1 == "photoprep_photos_stored_total" {print $2 + 0}')
  fivexx=$(echo "$metrics" | awk '/^photoprep_requests_total\{.*status="5/ {n += $2} END {print n + 0}')
  "$py" "$peers/ingest_report.py" record "$results" "row=$protocol" "round=$round" @"$work/load.json" "server_cpu_s=$cpu" \
    "rss_kib=$rss" "stored=${stored:-0}" "server_5xx=$fivexx"
  kill -TERM "$server_pid"
  for _ in $(seq 150); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done   # ≤ 15 s
  kill -KILL "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
}

for round in $(seq "$rounds"); do
  order=(tus draft); [ $((round % 2)) -eq 0 ] && order=(draft tus)   # neither protocol always last
  echo "round $round of $rounds: curl, prepare,${thumbnails:+ prepare --thumbnails $thumbnails,} ${order[0]}, ${order[1]}" >&2
  run_curl "$round"
  run_prepare "$round"
  [ -z "$thumbnails" ] || run_prepare "$round" "$thumbnails"
  run_serve "${order[0]}" "$round"
  run_serve "${order[1]}" "$round"
done

table_args=(--cores "$(nproc)"); [ -n "$markdown" ] && table_args+=(--markdown "$markdown")
"$py" "$peers/ingest_report.py" table "$results" "${table_args[@]}"

#!/usr/bin/env bash
# Upload throughput on loopback: photoprep against curl on the same tus server (resumable-upload,
# PyPI). curl sends the whole file in one PATCH after a POST; photoprep uploads with its defaults
# (256 KiB first, then chunks sized to ~1 s up to 8 MiB, SHA-1 checksums), with fixed 256 KiB chunks and one
# 5 MiB chunk, each with and without checksums (curl too: with the SHA-1 header it computes first).
# Whole-process runs, interleaved round by round so that machine noise hits every variant alike;
# the median of 21 rounds is printed.
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/common.sh
resumable-upload serve --host 127.0.0.1 --port "$port" --upload-dir "$work/srv" --db-path "$work/db" \
  --max-size 10485760 --log-level ERROR >/dev/null 2>&1 &
server=$!
trap 'kill $server; rm -rf "$work"' EXIT
sleep 1
endpoint="http://127.0.0.1:$port/files/"
head -c 5000000 /dev/urandom > "$work/5MB.bin"
head -c 100000 /dev/urandom > "$work/100KB.bin"

curl_upload() {  # FILE [checksum]: POST, then the whole file in one PATCH
  local size; size=$(stat -c %s "$1")
  local location checksum=()
  if [ "${2:-}" = checksum ]; then
    checksum=(-H "Upload-Checksum: sha1 $(openssl dgst -sha1 -binary "$1" | base64)")
  fi
  location=$(curl -s -i -X POST -H "Tus-Resumable: 1.0.0" -H "Upload-Length: $size" "$endpoint" | tr -d '\r' | awk 'tolower($1)=="location:"{print $2}')
  curl -s -o /dev/null -X PATCH -H "Tus-Resumable: 1.0.0" -H "Upload-Offset: 0" "${checksum[@]}" \
    -H "Content-Type: application/offset+octet-stream" --data-binary "@$1" "http://127.0.0.1:$port$location"
}
pp() { rm -rf "$work/state"; "$photoprep" upload "$1" --to "$endpoint" --state "$work/state" -q "${@:2}"; }
# Transfer time only, without process start-up: curl's own time_total of the POST plus the PATCH,
# photoprep's "seconds" on its finished event (discovery, hashing and every request).
curl_transfer() {
  local size; size=$(stat -c %s "$1")
  local out location post patch
  out=$(curl -s -i -w '\n%{time_total}' -X POST -H "Tus-Resumable: 1.0.0" -H "Upload-Length: $size" "$endpoint" | tr -d '\r')
  location=$(echo "$out" | awk 'tolower($1)=="location:"{print $2}'); post=$(echo "$out" | tail -1)
  patch=$(curl -s -o /dev/null -w '%{time_total}' -X PATCH -H "Tus-Resumable: 1.0.0" -H "Upload-Offset: 0" -H "Expect:" \
    -H "Content-Type: application/offset+octet-stream" --data-binary "@$1" "http://127.0.0.1:$port$location")
  echo "$post + $patch" | bc
}
pp_transfer() {
  rm -rf "$work/state"
  "$photoprep" upload "$1" --to "$endpoint" --state "$work/state" --json "${@:2}" \
    | python3 -c 'import json,sys; print([json.loads(l) for l in sys.stdin if "finished" in l][0]["seconds"])'
}

variants=(
  "c5|curl_upload $work/5MB.bin"
  "c5sum|curl_upload $work/5MB.bin checksum"
  "p5|pp $work/5MB.bin"
  "p5no|pp $work/5MB.bin --no-checksums"
  "p5fixed|pp $work/5MB.bin --chunk-size 256KiB"
  "p5one|pp $work/5MB.bin --chunk-size 5MiB"
  "p5oneno|pp $work/5MB.bin --chunk-size 5MiB --no-checksums"
  "c100|curl_upload $work/100KB.bin"
  "p100|pp $work/100KB.bin"
  "p100no|pp $work/100KB.bin --no-checksums"
)
transfers=(
  "x5|curl_transfer $work/5MB.bin"
  "y5|pp_transfer $work/5MB.bin --no-checksums"
  "y5sum|pp_transfer $work/5MB.bin"
  "x100|curl_transfer $work/100KB.bin"
  "y100|pp_transfer $work/100KB.bin --no-checksums"
)
rounds 21 "${variants[@]}"
for _ in $(seq 21); do  # these print their own transfer time
  for v in "${transfers[@]}"; do
    name=${v%%|*}; command=${v#*|}
    $command >> "$work/t.$name"
  done
done
cell() { printf '%.3f s (%.0f MB/s)' "$(m "$1")" "$(echo "5/$(m "$1")" | bc -l)"; }
printf '| loopback, whole process, median of 21 interleaved rounds | curl: POST + one PATCH | photoprep default (256 KiB first, then ~1 s chunks up to 8 MiB) | photoprep, fixed 256 KiB chunks | photoprep, one 5 MiB chunk |\n|---|---|---|---|---|\n'
printf '| 5 MB, SHA-1 checksums | %s | %s | %s | %s |\n' "$(cell c5sum)" "$(cell p5)" "$(cell p5fixed)" "$(cell p5one)"
printf '| 5 MB, no checksums | %s | %s | | %s |\n' "$(cell c5)" "$(cell p5no)" "$(cell p5oneno)"
printf '| 100 KB photo, SHA-1 checksums (photoprep: OPTIONS + POST + PATCH) | | %.3f s | | |\n' "$(m p100)"
printf '| 100 KB photo, no checksums (curl: POST + PATCH; photoprep: OPTIONS + POST with the data) | %.3f s | %.3f s | | |\n' "$(m c100)" "$(m p100no)"
echo
printf '| transfer only (no process start-up), median of 21 | curl: POST + one PATCH (its time_total) | photoprep default (its finished event) | photoprep, with SHA-1 checksums |\n|---|---|---|---|\n'
printf '| 5 MB | %s | %s | %s |\n' "$(cell x5)" "$(cell y5)" "$(cell y5sum)"
printf '| 100 KB photo | %.4f s | %.4f s | |\n' "$(m x100)" "$(m y100)"

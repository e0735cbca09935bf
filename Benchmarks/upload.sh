#!/usr/bin/env bash
# Upload throughput on loopback: photoprep against curl on the same tus server (resumable-upload,
# PyPI). curl sends the whole file in one PATCH after a POST; photoprep uploads with its defaults
# (256 KiB chunks, checksums) and with one 5 MiB chunk. Median of 5 whole-process runs each.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
swift build -c release --product photoprep 2>&1 | tail -1
work=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
resumable-upload serve --host 127.0.0.1 --port "$port" --upload-dir "$work/srv" --db-path "$work/db" \
  --max-size 10485760 --log-level ERROR >/dev/null 2>&1 &
server=$!
trap 'kill $server; rm -rf "$work"' EXIT
sleep 1
endpoint="http://127.0.0.1:$port/files/"
head -c 5000000 /dev/urandom > "$work/5MB.bin"
head -c 100000 /dev/urandom > "$work/100KB.bin"

curl_upload() {
  local size; size=$(stat -c %s "$1")
  local location
  location=$(curl -s -i -X POST -H "Tus-Resumable: 1.0.0" -H "Upload-Length: $size" "$endpoint" | tr -d '\r' | awk 'tolower($1)=="location:"{print $2}')
  curl -s -o /dev/null -X PATCH -H "Tus-Resumable: 1.0.0" -H "Upload-Offset: 0" \
    -H "Content-Type: application/offset+octet-stream" --data-binary "@$1" "http://127.0.0.1:$port$location"
}

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
timeit() {  # runs "$@" 5 times, prints the median seconds
  for _ in 1 2 3 4 5; do
    local start end; start=$(date +%s.%N); "$@" >/dev/null; end=$(date +%s.%N)
    echo "$end - $start" | bc
  done | median
}
pp() { rm -rf "$work/state"; .build/release/photoprep upload "$1" --to "$endpoint" --state "$work/state" -q "${@:2}"; }

c5=$(timeit curl_upload "$work/5MB.bin")
p5=$(timeit pp "$work/5MB.bin")
p5one=$(timeit pp "$work/5MB.bin" --chunk-size 5MiB)
c100=$(timeit curl_upload "$work/100KB.bin")
p100=$(timeit pp "$work/100KB.bin")
printf '| upload on loopback (median of 5, whole process) | curl, one PATCH | photoprep, 256 KiB chunks | photoprep, one 5 MiB chunk |\n|---|---|---|---|\n'
printf '| 5 MB file | %.3f s (%.0f MB/s) | %.3f s (%.0f MB/s) | %.3f s (%.0f MB/s) |\n' "$c5" "$(echo "5/$c5" | bc -l)" "$p5" "$(echo "5/$p5" | bc -l)" "$p5one" "$(echo "5/$p5one" | bc -l)"
printf '| 100 KB photo (create + PATCH) | %.3f s | %.3f s | |\n' "$c100" "$p100"

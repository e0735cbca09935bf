#!/usr/bin/env bash
# S3 uploads on loopback against moto's S3 server (PyPI moto[server]): curl sending the file in one
# SigV4-signed PUT (--aws-sigv4; moto takes longer over signed requests than over anonymous ones,
# so the peer signs too) against photoprep (signed payload + Content-MD5; multipart with 8 MiB parts,
# 4 at once, and one streamed PUT). Whole-process runs interleaved round by round; the median of 11.
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/common.sh
moto_server -H 127.0.0.1 -p "$port" >/dev/null 2>&1 &
server=$!
trap 'kill $server; rm -rf "$work"' EXIT
sleep 2
curl -s -X PUT "http://127.0.0.1:$port/bench" -o /dev/null
export AWS_ENDPOINT_URL="http://127.0.0.1:$port" AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench AWS_REGION=us-east-1
head -c 20000000 /dev/urandom > "$work/20MB.bin"
head -c 500000 /dev/urandom > "$work/500KB.bin"

curl_put() {
  curl -s -o /dev/null --aws-sigv4 "aws:amz:us-east-1:s3" --user bench:bench -X PUT -H "Content-Type: image/jpeg" -H "Expect:" \
    --data-binary "@$1" "http://127.0.0.1:$port/bench/curl/$(basename "$1")"
}
pp() { rm -rf "$work/state"; "$photoprep" upload "$1" --to s3://bench/pp --state "$work/state" -q "${@:2}"; }

variants=(
  "c20|curl_put $work/20MB.bin"
  "p20|pp $work/20MB.bin"
  "p20one|pp $work/20MB.bin --multipart-threshold 32MiB"
  "c500|curl_put $work/500KB.bin"
  "p500|pp $work/500KB.bin"
)
rounds 11 "${variants[@]}"
printf '| moto on loopback, whole process, median of 11 | curl --aws-sigv4, one PUT | photoprep default | photoprep, one PUT |\n|---|---|---|---|\n'
printf '| 20 MB file | %.3f s | %.3f s (multipart: 8 MiB parts, 4 at once) | %.3f s |\n' "$(m c20)" "$(m p20)" "$(m p20one)"
printf '| 500 KB photo | %.3f s | %.3f s (one PUT) | |\n' "$(m c500)" "$(m p500)"

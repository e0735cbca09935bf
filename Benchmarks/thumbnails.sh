#!/usr/bin/env bash
# Placeholders, WebP and square thumbnails on the corpus, side by side with the peers (cwebp, avifenc, libvips'
# smartcrop): Benchmarks/peers/thumbnails_report.py. Writes Benchmarks/.results/thumbnails.md and, with --sheet,
# docs/square-crops.png. PHOTOPREP=/path/to/photoprep runs that binary instead of building.
set -euo pipefail
cd "$(dirname "$0")/.."
sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
need=()
for p in imagemagick libvips-tools webp libavif-bin; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
[ ${#need[@]} -eq 0 ] || { $sudo apt-get update -qq; DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null; }
Benchmarks/corpus.sh
if [ -z "${PHOTOPREP:-}" ]; then
  swift build -c release --product photoprep 2>&1 | tail -1
  PHOTOPREP=.build/release/photoprep
fi
mkdir -p Benchmarks/.results
python3 Benchmarks/peers/thumbnails_report.py --photoprep "$PHOTOPREP" --corpus Benchmarks/.corpus/photos \
  --work Benchmarks/.results/thumbnails "$@" | tee Benchmarks/.results/thumbnails.md

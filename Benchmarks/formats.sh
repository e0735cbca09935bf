#!/usr/bin/env bash
# One command for the format benchmark (HEIC grid and single, AVIF, WebP in; T2048 JPEG out): installs the
# peers (apt: libheif-examples, webp, libavif-bin, libvips-tools, ImageMagick, GNU time; PyPI into .venv/:
# Pillow, pillow-heif, NumPy, scikit-image), fetches the photos (Benchmarks/corpus.sh), builds photoprep in
# release mode, makes the format corpus (Benchmarks/format-corpus.sh, cached), runs Benchmarks/formats.py
# (table in Benchmarks/formats-results.md, raw JSON lines in Benchmarks/.results/) and puts the table into the
# docs/photos.md between the formats-bench markers. Extra arguments go to formats.py (e.g. --runs 1).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --test
sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
need=()
for p in libheif-examples webp libavif-bin libvips-tools imagemagick time; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
[ ${#need[@]} -eq 0 ] || { $sudo apt-get update -qq; DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null; }
# The peers' Python side goes into the project's virtual environment, never the system Python (PEP 668).
.venv/bin/python -m pip install -q --disable-pip-version-check pillow pillow-heif numpy scikit-image
export PATH="$PWD/.venv/bin:$PATH"
Benchmarks/corpus.sh          # the real photos, into Benchmarks/.corpus/photos (once)
swift build -c release --product photoprep 2>&1 | tail -1
Benchmarks/format-corpus.sh   # HEIC/AVIF/WebP made from 8 of them, into Benchmarks/.corpus/formats (once)
python3 Benchmarks/formats.py --markdown Benchmarks/formats-results.md "$@"
python3 - <<'PY'
import re
readme = open("docs/photos.md").read()
table = open("Benchmarks/formats-results.md").read()
start, end = "<!-- formats-bench:start -->", "<!-- formats-bench:end -->"
if start in readme:
    readme = re.sub(re.escape(start) + ".*?" + re.escape(end), lambda _: start + "\n" + table + end, readme, flags=re.S)
    open("docs/photos.md", "w").write(readme)
PY

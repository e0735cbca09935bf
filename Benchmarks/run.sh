#!/usr/bin/env bash
# One command for the side-by-side benchmark: installs the peers (apt: ImageMagick, libvips-tools,
# libjpeg-turbo-progs, GNU time; PyPI into .venv/: Pillow, NumPy, scikit-image), fetches the photos (Benchmarks/corpus.sh),
# builds photoprep in release mode, runs compare.py and puts the
# table into the README between the bench markers. Extra arguments go to compare.py.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --test
sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
need=()
for p in imagemagick libvips-tools libjpeg-turbo-progs time; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
[ ${#need[@]} -eq 0 ] || { $sudo apt-get update -qq; DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null; }
# The peers' Python side goes into the project's virtual environment, never the system Python (PEP 668).
.venv/bin/python -m pip install -q --disable-pip-version-check pillow numpy scikit-image
export PATH="$PWD/.venv/bin:$PATH"
corpus=Benchmarks/.corpus
Benchmarks/corpus.sh   # the real photos, into $corpus/photos (once)
swift build -c release --product photoprep 2>&1 | tail -1
python3 Benchmarks/compare.py "$corpus"/photos/*.jpg --markdown Benchmarks/results.md "$@"
python3 - <<'PY'
import re
readme = open("README.md").read()
table = open("Benchmarks/results.md").read()
start, end = "<!-- bench:start -->", "<!-- bench:end -->"
if start in readme:
    readme = re.sub(re.escape(start) + ".*?" + re.escape(end), start + "\n" + table + end, readme, flags=re.S)
    open("README.md", "w").write(readme)
PY

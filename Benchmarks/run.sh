#!/usr/bin/env bash
# One command for the side-by-side benchmark: installs the peers (apt: ImageMagick, libvips-tools,
# libjpeg-turbo-progs, GNU time; PyPI into .venv/: Pillow, NumPy, scikit-image; Pillow-SIMD into .venv-simd/),
# fetches the photos (Benchmarks/corpus.sh), builds photoprep in release mode, runs compare.py and puts the
# table into docs/results.md between the bench markers, followed by the server's ingest (Benchmarks/ingest.sh).
# Extra arguments go to compare.py.
# PHOTOPREP=/path/to/photoprep runs that binary instead of building (compare.py reads it too).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --test
source Benchmarks/peers.sh  # apt: ImageMagick, libvips-tools, libjpeg-turbo-progs, GNU time; .venv-simd/: Pillow-SIMD
# The peers' Python side goes into the project's virtual environment, never the system Python (PEP 668).
.venv/bin/python -m pip install -q --disable-pip-version-check pillow numpy scikit-image
export PATH="$PWD/.venv/bin:$PATH"
corpus=Benchmarks/.corpus
Benchmarks/corpus.sh   # the real photos, into $corpus/photos (once)
if [ -n "${PHOTOPREP:-}" ]; then
  echo "photoprep: $PHOTOPREP (PHOTOPREP is set: not building)"
else
  swift build -c release --product photoprep 2>&1 | tail -1
fi
python3 Benchmarks/compare.py "$corpus"/photos/*.jpg --markdown Benchmarks/results.md "$@"
# The server's ingest beside the machine's limits (Benchmarks/ingest.sh), appended to the same table.
ingest=$(mktemp)
PHOTOPREP="${PHOTOPREP:-.build/release/photoprep}" Benchmarks/ingest.sh --rounds 3 --markdown "$ingest"
{ echo; echo "Server ingest (\`Benchmarks/ingest.sh --rounds 3\`):"; echo; cat "$ingest"; } >> Benchmarks/results.md
rm -f "$ingest"
python3 - <<'PY'
import re
readme = open("docs/results.md").read()
table = open("Benchmarks/results.md").read()
start, end = "<!-- bench:start -->", "<!-- bench:end -->"
if start in readme:
    readme = re.sub(re.escape(start) + ".*?" + re.escape(end), start + "\n" + table + end, readme, flags=re.S)
    open("docs/results.md", "w").write(readme)
PY

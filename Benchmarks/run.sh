#!/usr/bin/env bash
# One command for the side-by-side benchmark: installs the peers (apt: ImageMagick, libvips-tools,
# libjpeg-turbo-progs, GNU time; PyPI into .venv/: Pillow, NumPy, scikit-image; Pillow-SIMD into .venv-simd/),
# fetches the photos (Benchmarks/corpus.sh), builds photoprep in release mode, runs compare.py and puts the
# table into the README between the bench markers, followed by the server's ingest (Benchmarks/ingest.sh).
# Extra arguments go to compare.py.
# PHOTOPREP=/path/to/photoprep runs that binary instead of building (compare.py reads it too).
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
# Pillow-SIMD (PyPI pillow-simd, the AVX2 fork) is the same PIL package as Pillow, so it gets a venv of its own,
# .venv-simd/ (git-ignored), built from source with AVX2 — only when missing (a stamp records how it was built;
# --no-cache-dir so that pip never reuses a wheel built without -mavx2). A failed build does not stop the
# benchmark: compare.py leaves Pillow-SIMD out and states why, from the log kept in Benchmarks/.results/.
simd=.venv-simd
simd_want="pillow-simd CC=cc -mavx2"
simd_log=Benchmarks/.results/pillow-simd-install.log
if [ "$(cat "$simd/.photoprep-requirements" 2>/dev/null)" != "$simd_want" ] ||
   ! "$simd/bin/python" -c "import importlib.metadata as m, PIL; assert m.version('pillow-simd') == PIL.__version__" 2>/dev/null; then
  mkdir -p Benchmarks/.results
  if ! grep -qw avx2 /proc/cpuinfo; then
    echo "error: this CPU has no AVX2 (/proc/cpuinfo): Pillow-SIMD's AVX2 build would not run here" > "$simd_log"
  else
    need=()
    for p in libjpeg62-turbo-dev zlib1g-dev python3-dev; do
      dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
    done
    [ ${#need[@]} -eq 0 ] || { $sudo apt-get update -qq; DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null; }
    rm -rf "$simd"
    /usr/bin/python3 -m venv "$simd"
    if CC="cc -mavx2" "$simd/bin/python" -m pip install --no-cache-dir --disable-pip-version-check pillow-simd > "$simd_log" 2>&1; then
      echo "$simd_want" > "$simd/.photoprep-requirements"
      rm -f "$simd_log"
      echo "Pillow-SIMD $("$simd/bin/python" -c 'import PIL; print(PIL.__version__)') installed in $simd/"
    else
      echo "Pillow-SIMD failed to build (compare.py goes on without it); the end of $simd_log:" >&2
      tail -n 25 "$simd_log" >&2
    fi
  fi
fi
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
readme = open("README.md").read()
table = open("Benchmarks/results.md").read()
start, end = "<!-- bench:start -->", "<!-- bench:end -->"
if start in readme:
    readme = re.sub(re.escape(start) + ".*?" + re.escape(end), start + "\n" + table + end, readme, flags=re.S)
    open("README.md", "w").write(readme)
PY

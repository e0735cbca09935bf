#!/usr/bin/env bash
# One command for the quality-target benchmark: photoprep's perceptual default (the smallest JPEG scoring >= 85 on
# SSIMULACRA2 against the photo resized from full resolution with Lanczos3) beside `--quality max` (the budget
# filled), Pillow's budget loop, and Pillow, Pillow-SIMD, libvips and ImageMagick at the quality each needs for the
# same score, with libjpeg-turbo and jpegli encoding the reference's own pixels as oracles: bytes, scores, time and
# peak RSS, whole process, one core (taskset -c 0). Then the issue's targets, each met or missed by how much.
#
#   Benchmarks/quality.sh                          all 35 photos, T1024, T2048, T2048-5MiB (~30-40 min on 2 cores:
#                                                  the searches score with `photoprep score`, the reported scores
#                                                  with the PyPI package; both cached, a re-run only encodes and times)
#   Benchmarks/quality.sh --photos 3 --tasks T1024 a quick look
#   Benchmarks/quality.sh --markdown FILE          the tables into FILE too (always printed)
#
# Installs the peers (apt: ImageMagick, libvips-tools, libjpeg-turbo-progs, GNU time; PyPI into .venv/: Pillow,
# NumPy, SciPy, ssimulacra2, pyjpegli; Pillow-SIMD into .venv-simd/, built with AVX2 as Benchmarks/run.sh does),
# fetches the photos (Benchmarks/corpus.sh), builds photoprep in release mode unless PHOTOPREP=/path/to/photoprep is
# set, and runs Benchmarks/peers/quality_compare.py (its docstring says how each tool is run and scored: every
# score inside the searches is `photoprep score`'s, every score in the tables the PyPI package's, and the largest
# difference between the two is reported). Scores are cached in Benchmarks/.results/quality-scores.json, the raw
# rows go to Benchmarks/.results/quality-raw.json.
# Extra arguments go to quality_compare.py (--photos N, --tasks, --runs, --markdown).
set -euo pipefail
cd "$(dirname "$0")/.."
sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
need=()
for p in imagemagick libvips-tools libjpeg-turbo-progs time; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
[ ${#need[@]} -eq 0 ] || { $sudo apt-get update -qq; DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null; }
# The Python side goes into the project's virtual environment, never the system Python (PEP 668).
[ -x .venv/bin/python ] || /usr/bin/python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check pillow numpy scipy ssimulacra2 pyjpegli
# Pillow-SIMD (PyPI pillow-simd, the AVX2 fork) is the same PIL package as Pillow, so it gets a venv of its own,
# .venv-simd/ (git-ignored), built from source with AVX2 when missing, exactly as Benchmarks/run.sh builds it (the
# same stamp, so neither rebuilds the other's). A failed build does not stop the benchmark: quality_compare.py leaves
# Pillow-SIMD out and says so; the log stays in Benchmarks/.results/pillow-simd-install.log.
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
      echo "Pillow-SIMD failed to build (quality_compare.py goes on without it); the end of $simd_log:" >&2
      tail -n 25 "$simd_log" >&2
    fi
  fi
fi
Benchmarks/corpus.sh   # the real photos, into Benchmarks/.corpus/photos (once)
if [ -n "${PHOTOPREP:-}" ]; then
  echo "photoprep: $PHOTOPREP (PHOTOPREP is set: not building)"
else
  scripts/install-deps.sh
  swift build -c release --product photoprep 2>&1 | tail -1
fi
mkdir -p Benchmarks/.results
exec .venv/bin/python Benchmarks/peers/quality_compare.py Benchmarks/.corpus/photos/*.jpg "$@"

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
source Benchmarks/peers.sh  # apt: ImageMagick, libvips-tools, libjpeg-turbo-progs, GNU time; .venv-simd/: Pillow-SIMD
# The Python side goes into the project's virtual environment, never the system Python (PEP 668).
[ -x .venv/bin/python ] || /usr/bin/python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check pillow numpy scipy ssimulacra2 pyjpegli
Benchmarks/corpus.sh   # the real photos, into Benchmarks/.corpus/photos (once)
if [ -n "${PHOTOPREP:-}" ]; then
  echo "photoprep: $PHOTOPREP (PHOTOPREP is set: not building)"
else
  scripts/install-deps.sh
  swift build -c release --product photoprep 2>&1 | tail -1
fi
mkdir -p Benchmarks/.results
exec .venv/bin/python Benchmarks/peers/quality_compare.py Benchmarks/.corpus/photos/*.jpg "$@"

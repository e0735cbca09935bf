#!/usr/bin/env bash
# Calibrates the perceptual quality target on photos the benchmarks never use (Benchmarks/calibration-corpus.sh):
# photoprep's own SSIMULACRA2 (which agrees with the PyPI package to 0.01, SSIMULACRA2Tests) at every second JPEG
# quality from 30 to 100, 4:2:0 and 4:4:4, baseline and progressive (`photoprep bench --curve`), at 1024 and 2048 px;
# and what shrink-on-load costs at several margins (`photoprep bench --fidelity`). Prints the tables the code's
# constants come from: TargetSearch.typicalScore and priorSlope, the 4:4:4 rule, BudgetEncoder.progressiveFromPixels,
# PrepareOptions.shrinkOnLoadMargin.
#
#   Benchmarks/calibration.sh            (PHOTOPREP=/path/to/photoprep to use another binary)
set -euo pipefail
cd "$(dirname "$0")/.."
Benchmarks/calibration-corpus.sh
photoprep=${PHOTOPREP:-.build/release/photoprep}
[ -x "$photoprep" ] || swift build -c release --product photoprep 2>&1 | tail -1
out=Benchmarks/.results/calibration
mkdir -p "$out"
photos=(Benchmarks/.calibration/photos/*)
for edge in 1024 2048; do
  [ -s "$out/curve-$edge.jsonl" ] || "$photoprep" bench --curve --max-edge "$edge" --max-bytes 100MiB "${photos[@]}" > "$out/curve-$edge.jsonl"
done
[ -s "$out/fidelity-2048.txt" ] || "$photoprep" bench --fidelity 1,1.5,2,3,4 --max-edge 2048 --runs 1 "${photos[@]}" > "$out/fidelity-2048.txt"
[ -s "$out/fidelity-1024.txt" ] || "$photoprep" bench --fidelity 1,1.5,2,3,4 --max-edge 1024 --runs 1 "${photos[@]}" > "$out/fidelity-1024.txt"
python3 Benchmarks/peers/calibration_report.py "$out"

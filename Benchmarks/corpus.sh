#!/usr/bin/env bash
# Fetches the real photos the benchmarks use into Benchmarks/.corpus/photos/ (git-ignored), once: the
# .complete stamp marks a finished download. Called by run.sh and formats.sh; safe to run again.
# Real photos from Debian packages (not in the repository): mate-backgrounds (GPL-2+, 16 photos, 1.3-18 MP),
# lomiri-wallpapers-16.04 (CC-BY-4.0 / CC-BY-SA-4.0, 15 camera photos of 1.5-16 MP, most of them progressive)
# and lomiri-wallpapers-20.04 (CC-BY-SA, 4 photos of 9-24 MP).
set -euo pipefail
cd "$(dirname "$0")/.."
corpus=Benchmarks/.corpus
if [ ! -f "$corpus/.complete" ]; then
  rm -rf "$corpus" && mkdir -p "$corpus/photos"
  for package in mate-backgrounds lomiri-wallpapers-16.04 lomiri-wallpapers-20.04; do
    (cd "$corpus" && apt-get download "$package" >/dev/null 2>&1 && dpkg -x "$package"_*.deb "pkg-$package")
  done
  find "$corpus"/pkg-* -name '*.jpg' -exec cp {} "$corpus/photos/" \;
  touch "$corpus/.complete"
fi

#!/usr/bin/env bash
# Installs what photoprep needs on Debian 12 (Swift 6.3 itself is expected on PATH).
#
#   scripts/install-deps.sh          the C libraries photoprep links: libjpeg-turbo (TurboJPEG, and the libjpeg API
#                                    for decoding row by row), libpng, zlib,
#                                    libheif (HEIC and AVIF, with its HEVC and AV1 decoders), libwebp, Little CMS.
#                                    Enough to build and run the command (SQLite is built in).
#   scripts/install-deps.sh --test   also the servers the tests start on 127.0.0.1 — PostgreSQL 15 (Debian's
#                                    postgresql; the tests make their own throwaway cluster); tus: resumable-upload,
#                                    tuspyserver under uvicorn; S3: moto; the tus client tuspy; schemathesis; ssimulacra2 (the
#                                    independent metric the quality tests compare with); Playwright (driving
#                                    Debian's chromium, never a browser of its own) — from PyPI into the project's own
#                                    virtual environment .venv/ (git-ignored). The system Python is never
#                                    touched: Debian's python3 refuses `pip install` (PEP 668). The tests put
#                                    .venv/bin first on the PATH of the servers they start. Debian's nginx and
#                                    systemd: the deploy/ example's site and unit are checked.
#
# Uses sudo when not root. Safe to run again: it installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

test_servers=false
case "${1:-}" in
  "") ;;
  --test) test_servers=true ;;
  *) echo "usage: scripts/install-deps.sh [--test]" >&2; exit 2 ;;
esac

packages=(libturbojpeg0-dev libjpeg62-turbo-dev libpng-dev zlib1g-dev libheif-dev libwebp-dev liblcms2-dev pkg-config)
# Debian's venv module (python3-venv pulls in ensurepip for the default python3).
# The independent decoders the format tests compare with: heif-convert, dwebp, ImageMagick.
# Debian's Chromium: the browser the read path's test loads photos in (driven by Playwright, below).
# valgrind: the speed regression guard counts instructions with callgrind (Benchmarks/instructions.sh).
# nginx-light and systemd: the deploy/ example's site is tested in front of the server, its unit verified.
$test_servers && packages+=(python3 python3-venv postgresql libheif-examples webp imagemagick chromium valgrind nginx-light systemd)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
  echo "installed: ${missing[*]}"
fi
$test_servers || exit 0

# The test servers, pinned, in .venv/ made by Debian's own python3 (not whatever python3 is first on PATH).
venv=.venv
requirements=(resumable-upload==0.3.0 tuspyserver==4.4.3 uvicorn "moto[server]==5.1.22" tuspy==1.1.0 schemathesis==4.32.5 playwright==1.65.2 ssimulacra2==0.3.0 thumbhash-python==1.0.1 standardwebhooks==1.3.0)
stamp="$venv/.photoprep-requirements"
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "${requirements[*]}" ]; then
  rm -rf "$venv"
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "${requirements[@]}"
  echo "${requirements[*]}" > "$stamp"
  echo "test servers installed in $venv/"
fi

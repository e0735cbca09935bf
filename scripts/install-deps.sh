#!/usr/bin/env bash
# Installs what photoprep needs on Debian 12 (Swift 6.3 itself is expected on PATH):
# the C libraries it links (libjpeg-turbo's TurboJPEG, libpng, zlib, SQLite for GRDB), and the tus servers the
# upload tests start on 127.0.0.1 (resumable-upload, tuspyserver under uvicorn, and moto's S3 server, from PyPI).
set -euo pipefail
packages=(libturbojpeg0-dev libpng-dev zlib1g-dev libsqlite3-dev pkg-config)
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
python3 -m pip --version >/dev/null 2>&1 || { sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"; $sudo apt-get install -y -qq python3-pip >/dev/null; }
command -v resumable-upload >/dev/null 2>&1 || python3 -m pip install -q --disable-pip-version-check resumable-upload==0.3.0
python3 -c "import tuspyserver, uvicorn" >/dev/null 2>&1 || python3 -m pip install -q --disable-pip-version-check tuspyserver==4.4.3 uvicorn
command -v moto_server >/dev/null 2>&1 || python3 -m pip install -q --disable-pip-version-check "moto[server]==5.1.22"

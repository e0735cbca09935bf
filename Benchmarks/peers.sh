# Installs the peers Benchmarks/run.sh and Benchmarks/quality.sh compare with; `source` it from the repository root.
# apt (with sudo when not root, only what is missing): ImageMagick, libvips-tools, libjpeg-turbo-progs, GNU time.
sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
need=()
for p in imagemagick libvips-tools libjpeg-turbo-progs time; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
[ ${#need[@]} -eq 0 ] || { $sudo apt-get update -qq; DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null; }
# Pillow-SIMD (PyPI pillow-simd, the AVX2 fork) is the same PIL package as Pillow, so it gets a venv of its own,
# .venv-simd/ (git-ignored), built from source with AVX2 — only when missing (a stamp records how it was built;
# --no-cache-dir so that pip never reuses a wheel built without -mavx2). A failed build does not stop the
# benchmark: compare.py and quality_compare.py leave Pillow-SIMD out and state why, from the log kept in Benchmarks/.results/.
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
      echo "Pillow-SIMD failed to build (the benchmark goes on without it); the end of $simd_log:" >&2
      tail -n 25 "$simd_log" >&2
    fi
  fi
fi

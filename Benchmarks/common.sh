# What the upload benchmarks share; `source` it from the repository root.
# Installs the dependencies and the peers' servers, builds photoprep in release mode (the Swift runtime and
# Foundation linked statically, as Package.swift says), and gives a scratch folder, a free port and the timing
# helpers.
set -euo pipefail
scripts/install-deps.sh --test
export PATH="$PWD/.venv/bin:$PATH"   # the peers' servers (resumable-upload, moto)
swift build -c release --product photoprep 2>&1 | tail -1
photoprep=.build/release/photoprep
work=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

# rounds N VARIANT...: runs every "name|command" variant once per round, N rounds, interleaved so that
# machine noise hits every variant alike, appending each whole-process wall time to $work/t.name.
rounds() {
  local count=$1; shift
  for _ in $(seq "$count"); do
    for v in "$@"; do
      local name=${v%%|*} command=${v#*|} start end
      start=$(date +%s.%N); $command >/dev/null; end=$(date +%s.%N)
      echo "$end - $start" | bc >> "$work/t.$name"
    done
  done
}

# m NAME: the median of what was recorded under NAME.
m() { sort -n "$work/t.$1" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

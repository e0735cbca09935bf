# What the benchmarks of the app's backend in the loop share (Benchmarks/hooks.sh, events.sh, review.sh); `source` it
# from the repository root after setting `rounds` (and any other option) and `usage`: it reads --rounds N and the
# options named in `extra_options` ("--count" sets $count), finds photoprep (PHOTOPREP, else the release build, built
# when missing) and Python (.venv's when there), makes the scratch folder $work and $secret (the servers' HS256
# secret), and gives free_port, serve (a fresh server on its own data folder, waited for) and unserve.
set -euo pipefail
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --count) [[ " ${extra_options:-} " == *" --count "* ]] || { echo "$usage" >&2; exit 2; }; count=$2; shift 2 ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
done
photoprep=${PHOTOPREP:-.build/release/photoprep}
[ -x "$photoprep" ] || swift build -c release --product photoprep 2>&1 | tail -1
py=python3; [ -x .venv/bin/python3 ] && py=.venv/bin/python3
work=$(mktemp -d)
export PHOTOPREP_JWT_SECRET
PHOTOPREP_JWT_SECRET=$(head -c 32 /dev/urandom | base64)
secret=$PHOTOPREP_JWT_SECRET
server_pid=""
helpers=()   # the receivers' process ids, stopped on exit with the server
trap 'kill ${helpers[*]:-} $server_pid 2>/dev/null || true; rm -rf "$work"' EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# serve NAME [serve flags...]: a fresh server on $work/data-NAME, its log $work/serve-NAME.log; sets $port, $server_pid.
serve() {
  local name=$1; shift
  port=$(free_port)
  "$photoprep" serve --data "$work/data-$name" --port "$port" --writes-per-user 0 --writes-per-address 0 "$@" \
    > "$work/serve-$name.log" 2>&1 & server_pid=$!
  for _ in $(seq 300); do curl -sf -o /dev/null "http://127.0.0.1:$port/health" && return; sleep 0.1; done
  echo "photoprep serve did not start:" >&2; tail -20 "$work/serve-$name.log" >&2; exit 1
}

# unserve: stops the server serve started.
unserve() { kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=""; }

# corpus_photos: the benchmark corpus's photos under 10 MiB (an album photo's limit), in $photos.
corpus_photos() {
  Benchmarks/corpus.sh
  photos=()
  for f in Benchmarks/.corpus/photos/*.jpg; do
    if [ "$(stat -c %s "$f")" -lt $((10 * 1024 * 1024)) ]; then photos+=("$PWD/$f"); fi
  done
}

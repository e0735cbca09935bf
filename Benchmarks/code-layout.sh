#!/usr/bin/env bash
# Code layout: writes Sources/photoprep/code-layout.order, the functions of the photoprep executable that
# `prepare` (with `--version` and `probe`) runs, then those `serve` runs taking photos in. The release link
# (Package.swift, codeLayout) lays them out side by side at the start of the code, in the list's order.
#
# Why: the kernel maps a program's code 64 KiB around each page a process touches ("fault-around"). The code a
# `prepare` runs, ~1.7 MB in 4 KiB pages, lay spread over the 38 MB of the one executable: 10 MB of a prepare's
# resident memory, 4.8 MB once gathered; the server's resident code after taking 100 photos in, 21 MB, 14 MB
# (docs/benchmarks.md, "Where a prepare's memory goes").
#
# How: each run below under valgrind's callgrind (undemangled names); then run by run, in this order, the
# functions of the executable that ran, hottest first, each where it first appears: each run's code stays
# together, and a later run adds only what it needs beyond the earlier ones. Re-run it when those paths change
# much, then relink (delete the release binary and build: the list is not a build input SwiftPM tracks). A
# stale list costs memory, never correctness: the linker skips names it does not find, and puts the functions
# not listed after those listed.
#
# Usage:  Benchmarks/code-layout.sh     (PHOTOPREP=path uses that release binary instead of building one)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "code-layout.sh: valgrind is needed (apt-get install valgrind)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -z "${PHOTOPREP:-}" ]; then
  swift build -c release --product photoprep 2>&1 | tail -1
  PHOTOPREP="$(swift build -c release --show-bin-path)/photoprep"
fi
source Benchmarks/instructions/callgrind.sh
callgrind_copy "$PHOTOPREP"

# Start-up alone, then the forms of prepare people run, the commonest first: each preset, a smaller edge with a
# byte budget, the lossless pass-through (orientation photos), progressive JPEG, PNG (alpha, grey), an ICC
# profile, CMYK, two jobs and one; a probe.
runs=(
  "--version"
  "prepare TestImages/photos --preset photo --jobs 2"
  "prepare TestImages/photos --preset group --jobs 1"
  "prepare TestImages/photos/ladybird-2560x1600.jpg --max-edge 1024 --max-bytes 100KiB"
  "prepare TestImages/edge/progressive.jpg TestImages/edge/progressive-410.jpg --preset profile"
  "prepare TestImages/orientation --preset profile"
  "prepare TestImages/edge/photo-rgb8.png TestImages/edge/rgba-half-transparent.png TestImages/edge/grey16-mid.png --preset profile"
  "prepare TestImages/edge/with-icc-and-gps.jpg TestImages/edge/cmyk-photo.jpg TestImages/edge/grey.jpg --preset profile"
  "probe TestImages/photos/storm-1920x1280.jpg"
)
i=0
for r in "${runs[@]}"; do
  read -r -a arguments <<< "$r"
  out=()
  [ "${arguments[0]}" = prepare ] && out=(--out "$work/out.$i")
  "${callgrind[@]}" --demangle=no \
    --compress-strings=no --callgrind-out-file="$work/callgrind.$i" "$work/photoprep" "${arguments[@]}" "${out[@]}" \
    >/dev/null 2>&1 || { echo "code-layout.sh: photoprep $r failed" >&2; exit 1; }
  i=$((i + 1))
done

# Last, the server taking photos in (what Benchmarks/ingest.sh loads it with, on a few photos): `serve` under
# callgrind, four photos sent by tus and two by the draft protocol, then stopped (callgrind writes its counts
# when the process ends). Its own code then follows prepare's instead of lying spread over the executable.
py=python3; [ -x .venv/bin/python3 ] && py=.venv/bin/python3
PHOTOPREP_JWT_SECRET=$(head -c 32 /dev/urandom | base64)
export PHOTOPREP_JWT_SECRET
"${callgrind[@]}" --demangle=no \
  --compress-strings=no --callgrind-out-file="$work/callgrind.$i" "$work/photoprep" serve --data "$work/serve" \
  --host 127.0.0.1 --port 0 > "$work/serve.log" 2>&1 &
server=$!
port=""
for _ in $(seq 600); do   # ≤ 5 minutes
  port=$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9][0-9]*\).*|\1|p' "$work/serve.log" | head -1)
  [ -n "$port" ] && break
  kill -0 "$server" 2>/dev/null || break
  sleep 0.5
done
[ -n "$port" ] || { echo "code-layout.sh: photoprep serve did not start:" >&2; tail -5 "$work/serve.log" >&2; kill "$server" 2>/dev/null; exit 1; }
loaded=0
"$py" Benchmarks/peers/ingest_load.py tus "http://127.0.0.1:$port" TestImages/photos/*.jpg --count 4 --timeout 300 > /dev/null &&
  "$py" Benchmarks/peers/ingest_load.py draft "http://127.0.0.1:$port" TestImages/photos/*.jpg --count 2 --timeout 300 > /dev/null ||
  loaded=1
kill -TERM "$server"
wait "$server" || true
[ "$loaded" = 0 ] && [ -s "$work/callgrind.$i" ] || { echo "code-layout.sh: the server's run failed" >&2; tail -5 "$work/serve.log" >&2; exit 1; }

# A name defined more than once in the executable (a local symbol each module has its own copy of, such as a
# specialisation) would gather every copy, and with it every section holding one: whole object files of the
# server's libraries, which are not compiled with a section per function. Those names are left out.
nm --defined-only "$PHOTOPREP" | awk '{print $3}' | sort | uniq -d > "$work/defined-twice"

python3 - "$work/defined-twice" "$work"/callgrind.* > "$work/code-layout.order" <<'EOF'
import collections, sys
defined_twice = set(open(sys.argv[1]).read().split())
# Run by run, in the order of the runs above, the functions of the executable (ob= ends in /photoprep) that ran,
# hottest first by the instructions they executed themselves; each function where it first appears. So each run's
# code stays together, and later runs add only what they need beyond the earlier ones. (Measured: the windows of
# code a prepare touches, 72 against 85 when ordering every function by how many runs use it.) A cost line right
# after calls= is the call's inclusive cost, not the caller's own.
listed = set()
for path in sorted(sys.argv[2:], key=lambda path: int(path.rsplit(".", 1)[1])):
    cost = collections.Counter()
    ob = fn = None
    after_call = False
    for line in open(path):
        if line.startswith("ob="):
            ob = line[3:].strip()
        elif line.startswith("fn="):
            fn = line[3:].strip()
        elif line.startswith("calls="):
            after_call = True
        elif line[:1].isdigit() or line[:1] in "+-*":
            if after_call:
                after_call = False
            elif ob and ob.endswith("/photoprep") and fn and not fn.startswith("0x"):
                fields = line.split()
                if len(fields) > 1:
                    cost[fn] += int(fields[1])
    for name, _ in cost.most_common():
        if name not in listed and name not in defined_twice:
            listed.add(name)
            print(name)
EOF
[ -s "$work/code-layout.order" ] || { echo "code-layout.sh: callgrind named no function" >&2; exit 1; }
mv "$work/code-layout.order" Sources/photoprep/code-layout.order
echo "Sources/photoprep/code-layout.order: $(wc -l < Sources/photoprep/code-layout.order) functions"

#!/usr/bin/env bash
# The speed regression guard CI runs (scripts/test.sh): whole-process instruction counts of the release
# `photoprep` (in CI, the build the tests ran on: testing enabled, Package.swift) on a few bundled photos, counted by
# valgrind's callgrind — the same count run after run, whatever else the machine is doing, unlike seconds — compared
# with the committed baseline (Benchmarks/instructions/baseline.txt). A case more than 10 % above its baseline fails
# the run.
#
#   Benchmarks/instructions.sh            build, count, compare (exit 1 on a rise of more than 10 %)
#   Benchmarks/instructions.sh --update   build, count, and write the counts as the new baseline
#
# Counts depend on the instruction set the pipeline is built for: release builds use AVX2 when the machine has it
# (Package.swift), so the baseline keeps one set per flavour, "avx2" and "portable" (PHOTOPREP_PORTABLE=1, with
# libjpeg-turbo held to SSE2 as well). Swift's hashing is made deterministic so dictionaries do the same work.
set -euo pipefail
cd "$(dirname "$0")/.."
update=false
case "${1:-}" in
  "") ;;
  --update) update=true ;;
  *) echo "usage: Benchmarks/instructions.sh [--update]" >&2; exit 2 ;;
esac
command -v valgrind >/dev/null || { echo "instructions.sh: valgrind is needed (apt-get install valgrind)" >&2; exit 2; }

if [ -z "${PHOTOPREP_PORTABLE:-}" ] && grep -q ' avx2 ' /proc/cpuinfo && grep -q ' fma ' /proc/cpuinfo; then
  flavour=avx2
else
  flavour=portable
  export JSIMD_FORCESSE2=1
fi
baseline=Benchmarks/instructions/baseline.txt
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Under scripts/test.sh (PHOTOPREP_TESTABLE=1), the release build the tests ran on: one build for both.
swift build -c release --product photoprep 2>&1 | tail -1
binary="$(swift build -c release --show-bin-path)/photoprep"
# The code layout is in force (Package.swift's codeLayout; docs/benchmarks.md, "Where a prepare's memory goes"): the
# first 200 functions Sources/photoprep/code-layout.order lists lie in the first 4 MiB of the code (2.0 MiB today;
# spread over 35 MiB without the layout). Memory itself is measured by run.sh, not here.
python3 - "$binary" Sources/photoprep/code-layout.order <<'EOF'
import subprocess, sys
binary, order = sys.argv[1], sys.argv[2]
address = {}
for line in subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True, check=True).stdout.splitlines():
    fields = line.split()
    if len(fields) == 3 and fields[1] in "tTwW":
        address.setdefault(fields[2], int(fields[0], 16))
listed = [name for name in open(order).read().split() if name in address][:200]
span = (max(address[name] for name in listed) - min(address.values())) / 2**20 if listed else float("inf")
if len(listed) < 200 or span > 4:
    sys.exit(f"instructions.sh: the code layout is not in force: {len(listed)} of the listed functions found, the first "
             f"spread over {span:.1f} MiB of code (at most 4 wanted); relink (delete the release binary and build), or "
             "rewrite the list with Benchmarks/code-layout.sh")
print(f"code layout: the first {len(listed)} listed functions within {span:.1f} MiB of the code's start")
EOF
source Benchmarks/instructions/callgrind.sh
callgrind_copy "$binary"

# name|arguments: start-up alone, a probe, eight small photos (start-up and lossless orientation), a 2.5 MP photo
# for a group (2048 px, 500 KiB), a 4 MP one down to 1024 px, a progressive JPEG, a PNG.
cases=(
  "version|--version"
  "probe|probe TestImages/photos/storm-1920x1280.jpg"
  "eight-small|prepare TestImages/orientation --preset profile"
  "group-2048|prepare TestImages/photos/storm-1920x1280.jpg --preset group"
  "photo-1024|prepare TestImages/photos/ladybird-2560x1600.jpg --max-edge 1024 --max-bytes 500KiB"
  "progressive|prepare TestImages/edge/progressive.jpg --preset profile"
  "png|prepare TestImages/edge/photo-rgb8.png --preset profile"
)
count() {  # OUT ARGUMENTS...: prints the instructions the whole process executed, writing its photos to OUT
  local out=$1
  shift
  rm -rf "$out"
  "${callgrind[@]}" \
    --callgrind-out-file=/dev/null "$work/photoprep" "$@" --out "$out" --jobs 1 -q 2>&1 >/dev/null \
    | awk '/refs:/ {gsub(",", "", $NF); print $NF}'
}
count_version() {
  "${callgrind[@]}" \
    --callgrind-out-file=/dev/null "$work/photoprep" "$@" 2>&1 >/dev/null | awk '/refs:/ {gsub(",", "", $NF); print $NF}'
}

# The cases are counted as many at a time as there are cores: a count does not depend on what runs beside it.
running=0
for c in "${cases[@]}"; do
  name=${c%%|*}
  read -r -a arguments <<< "${c#*|}"
  if [ "${arguments[0]}" = prepare ]; then
    count "$work/out-$name" "${arguments[@]}" > "$work/count-$name" &
  else
    count_version "${arguments[@]}" > "$work/count-$name" &
  fi
  running=$((running + 1))
  if [ "$running" -ge "$(nproc)" ]; then
    wait -n
    running=$((running - 1))
  fi
done
wait

failed=0
missing=0
printf '| %s | instructions, baseline | now | change |\n|---|---:|---:|---:|\n' "case ($flavour)"
for c in "${cases[@]}"; do
  name=${c%%|*}
  now=$(cat "$work/count-$name")
  [ -n "$now" ] || { echo "instructions.sh: valgrind counted nothing for $name" >&2; exit 1; }
  echo "$flavour $name $now" >> "$work/counts"
  before=$(awk -v f="$flavour" -v n="$name" '$1 == f && $2 == n {print $3}' "$baseline" 2>/dev/null || true)
  if [ -z "$before" ]; then
    # A machine of another flavour than the baseline's: counted, but nothing to compare with (say so, loudly).
    printf '| %s | (none for %s) | %s | not compared |\n' "$name" "$flavour" "$now"
    missing=1
    continue
  fi
  change=$(awk -v a="$now" -v b="$before" 'BEGIN {printf "%+.1f %%", (a - b) * 100 / b}')
  verdict=""
  if awk -v a="$now" -v b="$before" 'BEGIN {exit !(a > b * 1.10)}'; then verdict=" **over +10 %**"; failed=1; fi
  printf '| %s | %s | %s | %s%s |\n' "$name" "$before" "$now" "$change" "$verdict"
done

if $update; then
  { grep -v "^$flavour " "$baseline" 2>/dev/null || true; cat "$work/counts"; } | sort > "$work/baseline"
  mv "$work/baseline" "$baseline"
  echo "baseline for $flavour written to $baseline"
elif [ "$missing" -ne 0 ]; then
  echo "instructions.sh: no $flavour baseline in $baseline: nothing was compared; on such a machine run" \
    "Benchmarks/instructions.sh --update and commit the counts" >&2
fi
if ! $update && [ "$failed" -ne 0 ]; then
  echo "instructions.sh: a case rose more than 10 % above $baseline;" \
    "if the rise is intended, run Benchmarks/instructions.sh --update and commit the new baseline" >&2
  exit 1
fi

# What instructions.sh and code-layout.sh share: `source` it from the repository root, with $work set to a scratch
# folder.

# callgrind_copy BINARY: $work/photoprep, a copy of BINARY without its debug information (valgrind 3.19 cannot read
# the Swift compiler's: "possibly corrupted"), $work/sigsuspend.so for the runs, and `callgrind`, the command line
# to run photoprep under: callgrind, with Swift's hashing made deterministic so that dictionaries do the same work
# run after run (`env` execs valgrind, so that a run started with `&` is valgrind's own process: `$!` stops it).
callgrind_copy() {
  objcopy --strip-debug "$1" "$work/photoprep"
  cc -O2 -shared -fPIC Benchmarks/instructions/sigsuspend.c -o "$work/sigsuspend.so"
  callgrind=(env SWIFT_DETERMINISTIC_HASHING=1 LD_PRELOAD="$work/sigsuspend.so" valgrind --tool=callgrind)
}

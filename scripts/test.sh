#!/usr/bin/env bash
# The whole test suite; then the scale-out tests (two servers, PostgreSQL, moto, a balancer for each: the
# heaviest, run on their own, not among 370 others); then the
# services' tests again on PostgreSQL (a throwaway cluster the tests start themselves on 127.0.0.1
# with Debian's postgresql binaries); last, the speed regression guard: the release binary's instruction counts
# on a few photos against the committed baseline (Benchmarks/instructions.sh: fails on a rise of more than 10 %).
# Each step has a time limit (several times what it takes here), so a hang fails with its name instead of
# running into CI's own limit. Run scripts/install-deps.sh --test first.
set -euo pipefail
cd "$(dirname "$0")/.."

# step MINUTES COMMAND...: runs COMMAND, failing (and naming it) if it has not ended within MINUTES.
step() {
    local minutes=$1
    shift
    local status=0
    timeout --kill-after=30 "$((minutes * 60))" "$@" || status=$?
    if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
        echo "test.sh: '$*' did not end within $minutes minutes" >&2
    fi
    return "$status"
}

step 45 swift test --skip ServeSharedUploadsTests "$@"
step 15 swift test --skip-build --filter ServeSharedUploadsTests
PHOTOPREP_TEST_DATABASE=postgres step 15 swift test --skip-build --filter PhotoServicesTests
Benchmarks/instructions.sh

#!/usr/bin/env bash
# One release build serves every step: the tests run on it (testing enabled, for their `@testable` imports) and the
# speed regression guard counts its binary, so nothing is compiled twice. Then: the whole test suite; the scale-out
# tests (two servers, PostgreSQL, moto, a balancer for each: the heaviest, run on their own, not among 500 others); the
# services' tests again on PostgreSQL (a throwaway cluster the tests start themselves on 127.0.0.1 with Debian's
# postgresql binaries); last, the speed regression guard: the binary's instruction counts on a few photos against the
# committed baseline (Benchmarks/instructions.sh: fails on a rise of more than 10 %).
# Each step has a time limit (several times what it takes here), so a hang fails with its name instead of
# running into CI's own limit. Run scripts/install-deps.sh --test first. Arguments go to the first `swift test`
# (e.g. --filter ServeRulesTests).
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

export PHOTOPREP_TESTABLE=1  # this package's modules built with testing enabled (Package.swift)
step 45 swift build -c release --build-tests
step 45 swift test -c release --skip-build --skip ServeSharedUploadsTests "$@"
step 15 swift test -c release --skip-build --filter ServeSharedUploadsTests
PHOTOPREP_TEST_DATABASE=postgres step 15 swift test -c release --skip-build --filter PhotoServicesTests
Benchmarks/instructions.sh

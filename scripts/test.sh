#!/usr/bin/env bash
# The whole test suite; then the scale-out tests (two servers, PostgreSQL, moto, a balancer for each: the
# heaviest, run on their own, not among 370 others); then the
# services' tests again on PostgreSQL (a throwaway cluster the tests start themselves on 127.0.0.1
# with Debian's postgresql binaries); last, the speed regression guard: the release binary's instruction counts
# on a few photos against the committed baseline (Benchmarks/instructions.sh: fails on a rise of more than 10 %).
# Run scripts/install-deps.sh --test first.
set -euo pipefail
cd "$(dirname "$0")/.."
swift test --skip ServeSharedUploadsTests "$@"
swift test --skip-build --filter ServeSharedUploadsTests
PHOTOPREP_TEST_DATABASE=postgres swift test --skip-build --filter PhotoServicesTests
Benchmarks/instructions.sh

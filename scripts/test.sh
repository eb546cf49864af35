#!/usr/bin/env bash
# The README's second command: install what is missing and run the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --tests
swift build --build-tests
log=$(mktemp)
# The per-user clip digest cache ($XDG_CACHE_HOME/enclab) in a folder of the tests' own, not the user's ~/.cache.
cache=$(mktemp -d)
trap 'rm -rf "$log" "$cache"' EXIT
export XDG_CACHE_HOME=$cache
status=0
swift test --skip-build 2>&1 | tee "$log" || status=$?
# The tests are Swift Testing tests (XCTest reports 0 of its own): close with their count in the plain form.
summary=$(grep -E "^. Test run with [0-9]+ tests? in [0-9]+ suites? (passed|failed)" "$log" | tail -n 1 || true)
total=$(sed -E 's/.*Test run with ([0-9]+) tests?.*/\1/' <<<"$summary")
failed=$(grep -cE "^. Test .* failed after" "$log" || true)
if [ -n "$summary" ]; then echo "swift-testing: $((total - failed)) passed, $failed failed"; fi
exit $status

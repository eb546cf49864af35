#!/usr/bin/env bash
# The README's second command: install what is missing and run the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
swift build --build-tests
swift test --skip-build

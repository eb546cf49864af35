#!/bin/bash
# Builds and runs the libFuzzer targets of the H264 module, each for a bounded time.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#
# SECONDS_PER_TARGET defaults to 60; TARGET defaults to every fuzz/targets/*.swift.
# Each target is the H264 sources plus fuzz/targets/<target>.swift, compiled with
# `swiftc -sanitize=fuzzer -parse-as-library`. Seeds come from Tests/H264Tests/Vectors,
# fuzz/seeds/<target>/ and fuzz/regressions/<target>/; the working corpus is fuzz/corpus-work/<target>/ (git-ignored).
# Crashes, timeouts and out-of-memory inputs are copied into fuzz/regressions/<target>/, which the
# H264Tests replay (FuzzRegressionTests). Exit status 1 when anything was found, 2 when a build failed.
#
# SWIFT_BACKTRACE=enable=no: Swift's backtracer can hang on a crash under libFuzzer.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_TARGET=${1:-60}
shift || true
TARGETS=("$@")
if [ ${#TARGETS[@]} -eq 0 ]; then
    for f in fuzz/targets/*.swift; do TARGETS+=("$(basename "$f" .swift)"); done
fi
BUILD=fuzz/corpus-work/build
mkdir -p "$BUILD"
export SWIFT_BACKTRACE=enable=no
found=0
for t in "${TARGETS[@]}"; do
    echo "== $t: building"
    rm -f "$BUILD/$t"
    # ld.gold warns about every sanitizer symbol it cannot export; those lines are noise.
    if ! swiftc -O -sanitize=fuzzer -parse-as-library -module-name FuzzH264 \
        Sources/H264/*.swift "fuzz/targets/$t.swift" -o "$BUILD/$t" > "$BUILD/$t.build.log" 2>&1; then
        grep -v "Cannot export local symbol" "$BUILD/$t.build.log" >&2
        echo "!! $t: build failed" >&2
        exit 2
    fi
    corpus=fuzz/corpus-work/$t
    regressions=fuzz/regressions/$t
    artifacts=fuzz/corpus-work/artifacts-$t
    mkdir -p "$corpus" "$regressions" "$artifacts"
    # Seeds: the test vectors (as whole streams), per-target seeds and earlier regressions.
    cp -n Tests/H264Tests/Vectors/*.264 "$corpus/" 2>/dev/null || true
    cp -n "fuzz/seeds/$t"/* "$corpus/" 2>/dev/null || true
    cp -n "$regressions"/* "$corpus/" 2>/dev/null || true
    echo "== $t: fuzzing for ${SECONDS_PER_TARGET}s"
    set +e
    "$BUILD/$t" "$corpus" -max_total_time="$SECONDS_PER_TARGET" -timeout=5 -rss_limit_mb=2048 \
        -max_len=65536 -print_final_stats=1 -artifact_prefix="$artifacts/" 2>&1 | tee "fuzz/corpus-work/$t.log" | grep -E "^(#[0-9]+ +DONE|stat::number_of_executed_units|==[0-9]+==ERROR|SUMMARY|artifact_prefix|Test unit written)" || true
    set -e
    for a in "$artifacts"/*; do
        [ -e "$a" ] || continue
        cp "$a" "$regressions/"
        echo "!! $t: found $(basename "$a"), kept in $regressions/"
        found=1
    done
    rm -f "$artifacts"/*
done
exit $found

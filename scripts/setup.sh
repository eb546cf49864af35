#!/usr/bin/env bash
# Installs what enclab needs and is missing (Debian packages), then puts the real clips in fixtures/.
# With --tests (scripts/test.sh) it also makes the venv of the tests' BD-rate witness.
# Safe to run again: it installs nothing that is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

# python3-numpy: the tests' witness for x264's SSIM (Tests/EncoderLabTests/LabQualityTests.swift); mkvtoolnix: --mkv;
# python3-venv: the venv below (Debian's system Python refuses pip install, PEP 668).
# libavcodec-dev, libavutil-dev and pkg-config: the verify stage's in-process H.264 decode (target CAVCodec).
# libjs-dygraphs: the report's interactive charts (dygraphs 2.2.1, copied into each report's assets/).
# libpcap0.8-dev: `enclab rtp pack` and `rtp unpack` write and read captures (target CPcap).
# libopenh264-dev: the second encoder, --encoder openh264 (target COpenH264; docs/openh264.md).
packages=(libx264-dev libopenh264-dev libsqlite3-dev libssl-dev libavcodec-dev libavutil-dev pkg-config gnuplot-nox ffmpeg x264 sqlite3 mkvtoolnix python3-numpy python3-venv libjs-dygraphs libpcap0.8-dev)
# The tests' browser check of the report (scripts/report-browser.py, Tests/EndToEndTests/ReportBrowserTests.swift):
# chromium driven through WebDriver (chromium-driver brings chromium) by Debian's python3-selenium.
# GStreamer's openh264enc (gstreamer1.0-plugins-bad) run by gst-launch-1.0 (gstreamer1.0-tools): the OpenH264 tests' second
# witness (Tests/EndToEndTests/OpenH264Tests.swift).
if [ "${1:-}" = "--tests" ]; then packages+=(chromium-driver python3-selenium gstreamer1.0-tools gstreamer1.0-plugins-bad); fi
# The RTP tests' witnesses (Tests/EndToEndTests/RTPCommandTests.swift): GStreamer's rtph264pay and rtph264depay
# (-plugins-good), gst-launch-1.0 (-tools), pcapparse (-plugins-bad), and tshark's RTP and H.264 dissectors.
if [ "${1:-}" = "--tests" ]; then packages+=(gstreamer1.0-plugins-good tshark); fi
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

# The tests' witness for BD-rate (Tests/EncoderLabTests/BjontegaardPackageTests.swift): the `bjontegaard` PyPI package
# 1.3.0 (with numpy, scipy and matplotlib, which it imports) in a venv of its own, one per machine, at
# $ENCLAB_VENV (default /opt/enclab-venv; the tests look in the same place). Made again only when it cannot import
# bjontegaard 1.3.0.
venv="${ENCLAB_VENV:-/opt/enclab-venv}"
if [ "${1:-}" = "--tests" ] && ! "$venv/bin/python" -c 'import bjontegaard, sys; sys.exit(bjontegaard.__version__ != "1.3.0")' 2>/dev/null; then
    echo "setup: creating $venv with bjontegaard 1.3.0 from PyPI"
    SUDO=""; [ -w "$(dirname "$venv")" ] || SUDO="sudo"
    $SUDO python3 -m venv --clear "$venv"
    $SUDO "$venv/bin/python" -m pip install --quiet --disable-pip-version-check bjontegaard==1.3.0
fi

# --metrics (docs/quality-metrics.md): libvmaf and the xpsnr filter come from the ffmpeg binary of the `imageio-ffmpeg`
# PyPI wheel 0.8.1 (a static ffmpeg 9.0.2 built with --enable-libvmaf; GPLv3, the wheel's BSD licence covers only its
# Python wrapper), in the same venv, for both of the README's commands; Debian has no libvmaf and Debian's ffmpeg stays
# the lab's decoder and prober. With --tests, also ffmpeg-quality-metrics 3.13.0, the tests' anchor witness.
if [ ! -x "$venv/bin/python" ]; then
    SUDO=""; [ -w "$(dirname "$venv")" ] || SUDO="sudo"
    $SUDO python3 -m venv "$venv"
fi
want=(imageio-ffmpeg==0.8.1)
if [ "${1:-}" = "--tests" ]; then want+=(ffmpeg-quality-metrics==3.13.0); fi
if ! "$venv/bin/python" -c 'import importlib.metadata as m, sys
want = dict(a.split("==") for a in sys.argv[1:])
sys.exit(any(m.version(n) != v for n, v in want.items()))' "${want[@]}" 2>/dev/null; then
    echo "setup: installing ${want[*]} into $venv from PyPI"
    SUDO=""; [ -w "$venv" ] || SUDO="sudo"
    $SUDO "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${want[@]}"
fi

bash scripts/fixtures.sh

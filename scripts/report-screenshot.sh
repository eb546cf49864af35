#!/usr/bin/env bash
# Renders a page of an enclab report in headless Chromium (Debian's `chromium` package: apt-get install chromium)
# and saves a PNG, to check that the page reads well at 1280 px. Not part of the test command (Chromium is a large
# install).
#
# usage: scripts/report-screenshot.sh PAGE.html OUT.png [WIDTH HEIGHT]
#   e.g. enclab report --db results/tour.sqlite --out results/tour-report
#        scripts/report-screenshot.sh results/tour-report/encode/index.html docs/img/report-experiment.png 1280 900
#   (the guides' screenshots are docs/img/report-experiment.png, report-run.png and report-check.png)
set -euo pipefail
if [ $# -lt 2 ]; then
    echo "usage: $0 PAGE.html OUT.png [WIDTH HEIGHT]" >&2
    exit 64
fi
page=$1 out=$2 width=${3:-1280} height=${4:-1600}
[ -f "$page" ] || { echo "$0: $page: no such page" >&2; exit 66; }
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "$0: chromium not found on PATH (install the Debian package chromium)" >&2; exit 70; }
abs=$(realpath -- "$page")
outabs=$(realpath -m -- "$out")
# A profile of its own, removed after, so no user profile is read or written.
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
# --no-sandbox: Chromium's sandbox needs user namespaces that containers often lack (and root refuses it).
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$profile" \
    --screenshot="$outabs" --window-size="$width,$height" "file://$abs" >/dev/null 2>&1
[ -s "$outabs" ] || { echo "$0: chromium wrote no screenshot to $out" >&2; exit 70; }
echo "$out"

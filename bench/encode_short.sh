#!/usr/bin/env bash
# Benchmark (issue 19, item 11): what a verified `enclab encode` of a short clip costs against x264's CLI, with its
# two run charts drawn on the run's path (today) and with them off it (the charts' scripts and data only,
# Plots.writeScriptAndData; pictures drawn where they are looked at: the report, `enclab plot`).
#
# Usage: bash bench/encode_short.sh [ROUNDS=5] [FRAMES=250]
#
# The clip: fixtures/bigbuckbunny.mp4 looped and scaled to 640x272 (the size of the issue's held-out clip), FRAMES
# frames, decoded once to y4m. Flags: --preset medium (x264's defaults otherwise). Each round runs, in this order
# (interleaved, so drift in the machine's load falls on all alike):
#   x264      x264 --preset medium -o x.264 clip.y4m                          (the limit)
#   plots     enclab encode clip.y4m --preset medium                         (verified; both charts drawn in the run)
#   scripts   enclab encode clip.y4m --preset medium --no-plots              (verified; no gnuplot on the run's path: the
#             run path once the charts are only written, which adds frames.dat and two .gp files, under 1 ms here)
#   none      enclab encode clip.y4m --preset medium --verify none --no-plots
#   render    enclab plot --db DB --out DIR of the scripts run's database    (the pictures, drawn off the run's path)
# Each enclab run gets a fresh database (a done run key would be skipped). Wall time, medians, and ratios of the
# medians to x264's; appended to results/plots-off-path.md and printed.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
frames=${2:-250}
[ -f fixtures/bigbuckbunny.mp4 ] || bash scripts/fixtures.sh >/dev/null
swift build -c release --product enclab 2>&1 | grep -E "error|warning:" || true
lab=.build/release/enclab
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ffmpeg -nostdin -v error -stream_loop -1 -i fixtures/bigbuckbunny.mp4 -an -vf scale=640:272 -frames:v "$frames" \
    -pix_fmt yuv420p -f yuv4mpegpipe "$work/clip.y4m"
flags=(--preset medium)
declare -A wall
measure() {   # measure NAME command...: appends the wall time to the variant's list
    local name=$1; shift
    /usr/bin/time -f "%e" -o "$work/time" "$@" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
    wall[$name]+="$(cat "$work/time") "
}
for i in $(seq "$rounds"); do
    measure x264 x264 --quiet "${flags[@]}" -o "$work/x.264" "$work/clip.y4m"
    measure plots "$lab" encode "$work/clip.y4m" "${flags[@]}" --db "$work/p$i.sqlite" --out "$work/p$i"
    measure scripts "$lab" encode "$work/clip.y4m" "${flags[@]}" --no-plots --db "$work/s$i.sqlite" --out "$work/s$i"
    measure none "$lab" encode "$work/clip.y4m" "${flags[@]}" --verify none --no-plots --db "$work/n$i.sqlite" --out "$work/n$i"
    measure render "$lab" plot --db "$work/s$i.sqlite" --out "$work/r$i"
    rm -rf "$work/p$i" "$work/s$i" "$work/n$i" "$work/r$i" "$work"/*.sqlite
done
median() { printf '%s\n' $1 | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
mx=$(median "${wall[x264]}")
{
    echo
    echo "## $(date -u '+%Y-%m-%d %H:%M UTC'): enclab encode of a short clip against x264's CLI (bench/encode_short.sh $rounds $frames)"
    echo
    echo "bigbuckbunny looped and scaled to 640x272, $frames frames, --preset medium; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)."
    echo
    echo "| variant | median wall s | / x264 | each round |"
    echo "|---|---|---|---|"
    for v in x264 plots scripts none render; do
        m=$(median "${wall[$v]}")
        echo "| $v | $m | $(awk -v a="$m" -v b="$mx" 'BEGIN {printf "%.3f", a / b}') | ${wall[$v]}|"
    done
} | tee -a results/plots-off-path.md

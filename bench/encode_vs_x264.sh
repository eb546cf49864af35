#!/usr/bin/env bash
# Benchmark: `enclab encode` (encode + verify + independent decode + store + plots) against the x264 CLI on the
# same decoded y4m and flags. Runs are interleaved (x264, enclab, x264, enclab, ...) and the medians compared:
# the machine is shared and noisy, so quote the ratio, not the times.
# Usage: bash bench/encode_vs_x264.sh [RUNS=5] [CLIP=fixtures/bigbuckbunny.mp4] [x264 flags...]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
clip=${2:-fixtures/bigbuckbunny.mp4}
shift $(( $# > 2 ? 2 : $# )) || true
flags=("$@")
[ ${#flags[@]} -gt 0 ] || flags=(--preset medium --crf 23 --threads 2)
swift build -c release --product enclab >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ffmpeg -nostdin -v error -i "$clip" -fps_mode passthrough -pix_fmt yuv420p -f yuv4mpegpipe "$work/clip.y4m"
now() { date +%s.%N; }
x264_times=(); lab_times=()
for i in $(seq "$runs"); do
    t0=$(now); x264 --quiet "${flags[@]}" -o "$work/x.264" "$work/clip.y4m" 2>/dev/null; t1=$(now)
    x264_times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')")
    # A fresh database each time: a run whose key is done in the database would be skipped, not encoded.
    t0=$(now); .build/release/enclab encode "$work/clip.y4m" "${flags[@]}" --db "$work/b$i.sqlite" --out "$work/out$i" >/dev/null; t1=$(now)
    lab_times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
mx=$(median "${x264_times[@]}"); ml=$(median "${lab_times[@]}")
echo "clip $clip, flags ${flags[*]}, $runs interleaved runs each"
echo "median x264 CLI: ${mx}s  median enclab encode: ${ml}s  ratio enclab/x264: $(awk -v a="$ml" -v b="$mx" 'BEGIN {printf "%.2f", a / b}')"

#!/usr/bin/env bash
# Benchmark (issue 20): `enclab encode --metrics vmaf` against the route people use today, the x264 CLI then
# ffmpeg-quality-metrics on its stream (decoded to y4m by Debian's ffmpeg, pointed at the imageio-ffmpeg binary with
# libvmaf), and the added cost of VMAF over the same `enclab encode` without --metrics. Runs are interleaved
# (route, enclab --metrics, enclab) and the medians compared: the machine is shared and noisy, so quote the ratios.
# Goal: enclab --metrics at most 0.8 of the route's wall time.
# Usage: bash bench/vmaf.sh [RUNS=5] [CLIP=fixtures/bigbuckbunny.mp4] [x264 flags...]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
clip=${2:-fixtures/bigbuckbunny.mp4}
shift $(( $# > 2 ? 2 : $# )) || true
flags=("$@")
[ ${#flags[@]} -gt 0 ] || flags=(--preset medium --crf 23 --threads 2)
venv="${ENCLAB_VENV:-/opt/enclab-venv}"
vmaf_ffmpeg=$("$venv/bin/python" -c 'import imageio_ffmpeg; print(imageio_ffmpeg.get_ffmpeg_exe())')
fqm="$venv/bin/ffmpeg-quality-metrics"
[ -x "$fqm" ] || { echo "bench/vmaf.sh: $fqm missing (bash scripts/setup.sh --tests installs it)" >&2; exit 69; }
enclab=${ENCLAB:-.build/release/enclab}
[ -n "${ENCLAB:-}" ] || swift build -c release --product enclab >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ffmpeg -nostdin -v error -i "$clip" -fps_mode passthrough -pix_fmt yuv420p -f yuv4mpegpipe "$work/clip.y4m"
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN {print b - a}'; }
route=(); with=(); without=()
for i in $(seq "$runs"); do
    t0=$(now)
    x264 --quiet "${flags[@]}" -o "$work/x.264" "$work/clip.y4m" 2>/dev/null
    ffmpeg -nostdin -v error -y -i "$work/x.264" -pix_fmt yuv420p -f yuv4mpegpipe "$work/x.y4m"
    "$fqm" "$work/x.y4m" "$work/clip.y4m" -m vmaf --ffmpeg-path "$vmaf_ffmpeg" --no-summary > "$work/fqm.json" 2>/dev/null
    route+=("$(since "$t0")")
    # A fresh database each time: a run whose key is done in the database would be skipped, not encoded.
    t0=$(now); "$enclab" encode "$work/clip.y4m" "${flags[@]}" --no-plots --metrics vmaf --db "$work/m$i.sqlite" --out "$work/m$i" >/dev/null
    with+=("$(since "$t0")")
    t0=$(now); "$enclab" encode "$work/clip.y4m" "${flags[@]}" --no-plots --db "$work/p$i.sqlite" --out "$work/p$i" >/dev/null
    without+=("$(since "$t0")")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
mr=$(median "${route[@]}"); mw=$(median "${with[@]}"); mp=$(median "${without[@]}")
echo "clip $clip, flags ${flags[*]}, $runs interleaved runs each"
echo "median x264 CLI + ffmpeg-quality-metrics: ${mr}s  enclab --metrics vmaf: ${mw}s  enclab without: ${mp}s"
echo "ratio enclab --metrics vmaf / route: $(awk -v a="$mw" -v b="$mr" 'BEGIN {printf "%.2f", a / b}') (goal <= 0.80)"
echo "VMAF's added cost: $(awk -v a="$mw" -v b="$mp" 'BEGIN {printf "%.2f s, x%.2f", a - b, a / b}')"

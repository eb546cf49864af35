#!/usr/bin/env bash
# Benchmark (issue 20): `enclab encode --metrics vmaf` against the route people use today, the x264 CLI then
# ffmpeg-quality-metrics on its stream, and the added cost of VMAF over the same `enclab encode` without --metrics.
#
# The route: `x264 FLAGS -o x.mkv clip.y4m` (Matroska, so the stream carries the clip's timestamps and libvmaf's
# framesync pairs frame k with frame k: a raw .264 is read at another timebase and scored twice over, see
# docs/quality-metrics.md), then `ffmpeg-quality-metrics x.mkv clip.y4m -m vmaf --ffmpeg-path FFMPEG` with FFMPEG the
# imageio-ffmpeg binary with libvmaf, the one enclab finds (the same ffmpeg on both sides; its own defaults for
# threads, as users run it). enclab: a fresh database per run (a key already done would be skipped), --no-plots.
# Each round runs the three in turn (route, enclab --metrics vmaf, enclab), so load drifts hit all three; the
# medians, minima and maxima are printed with the per-round ratios and the load average at each round's start;
# CPU time (user + system, children included: bash's `time`) beside wall time, as the machine is shared.
# The scored frame counts and VMAF means of both sides are checked equal (frames) and printed (means).
# Goal: enclab --metrics vmaf at most 0.8 of the route's wall time.
#
# Usage: bash bench/vmaf.sh [ROUNDS=5] [CLIP=fixtures/bigbuckbunny.mp4] [x264 flags...]
#   (default flags: --preset medium --crf 23 --threads 2); ENCLAB=path uses that binary, else the release build.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
clip=${2:-fixtures/bigbuckbunny.mp4}
shift $(( $# > 2 ? 2 : $# )) || true
flags=("$@")
[ ${#flags[@]} -gt 0 ] || flags=(--preset medium --crf 23 --threads 2)
venv="${ENCLAB_VENV:-/opt/enclab-venv}"
vmaf_ffmpeg=$("$venv/bin/python" -c 'import imageio_ffmpeg; print(imageio_ffmpeg.get_ffmpeg_exe())')
fqm="$venv/bin/ffmpeg-quality-metrics"
[ -x "$fqm" ] || { echo "bench/vmaf.sh: $fqm missing (bash scripts/setup.sh installs it)" >&2; exit 69; }
enclab=${ENCLAB:-.build/release/enclab}
[ -n "${ENCLAB:-}" ] || swift build -c release --product enclab >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ffmpeg -nostdin -v error -i "$clip" -fps_mode passthrough -pix_fmt yuv420p -f yuv4mpegpipe "$work/clip.y4m"
frames=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 "$work/clip.y4m")
size=$(head -c 200 "$work/clip.y4m" | head -1 | awk '{print substr($2, 2) "x" substr($3, 2)}')
load() { cut -d' ' -f1 /proc/loadavg; }
TIMEFORMAT='%R %U %S'
# measure VAR_WALL VAR_CPU CMD...: the command's wall and CPU seconds appended to the two arrays.
measure() {
    local -n wall=$1 cpu=$2; shift 2
    local t; t=$( { time "$@" >/dev/null 2>&1; } 2>&1 | tail -1)
    wall+=("$(echo "$t" | awk '{print $1}')"); cpu+=("$(echo "$t" | awk '{printf "%.2f", $2 + $3}')")
}
route_leg() {
    x264 --quiet "${flags[@]}" -o "$work/x.mkv" "$work/clip.y4m" 2>/dev/null &&
    "$fqm" "$work/x.mkv" "$work/clip.y4m" -m vmaf --ffmpeg-path "$vmaf_ffmpeg" > "$work/fqm.json" 2>/dev/null
}
route=(); with=(); without=(); route_cpu=(); with_cpu=(); without_cpu=(); loads=()
echo "round route_s enclab_vmaf_s enclab_s route_cpu_s enclab_vmaf_cpu_s enclab_cpu_s ratio_vmaf_route vmaf_cost_s load1"
for i in $(seq "$rounds"); do
    loads+=("$(load)")
    measure route route_cpu route_leg
    measure with with_cpu "$enclab" encode "$work/clip.y4m" "${flags[@]}" --no-plots --metrics vmaf --db "$work/m$i.sqlite" --out "$work/m$i"
    measure without without_cpu "$enclab" encode "$work/clip.y4m" "${flags[@]}" --no-plots --db "$work/p$i.sqlite" --out "$work/p$i"
    echo "$i ${route[-1]} ${with[-1]} ${without[-1]} ${route_cpu[-1]} ${with_cpu[-1]} ${without_cpu[-1]} $(awk -v a="${with[-1]}" -v b="${route[-1]}" 'BEGIN {printf "%.3f", a / b}') $(awk -v a="${with[-1]}" -v b="${without[-1]}" 'BEGIN {printf "%.3f", a - b}') ${loads[-1]}"
    # Both sides scored every frame of the clip.
    fqm_frames=$("$venv/bin/python" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["vmaf"]))' "$work/fqm.json")
    lab_frames=$(sqlite3 "$work/m$i.sqlite" "SELECT count(vmaf) FROM frame_quality_metrics")
    if [ "$fqm_frames" != "$frames" ] || [ "$lab_frames" != "$frames" ]; then
        echo "bench/vmaf.sh: frames scored: ffmpeg-quality-metrics $fqm_frames, enclab $lab_frames, the clip has $frames" >&2; exit 1
    fi
done
fqm_mean=$("$venv/bin/python" -c 'import json,sys; v=[f["vmaf"] for f in json.load(open(sys.argv[1]))["vmaf"]]; print("%.4f" % (sum(v)/len(v)))' "$work/fqm.json")
lab_mean=$(sqlite3 "$work/m$rounds.sqlite" "SELECT printf('%.4f', mean) FROM run_quality_metrics WHERE metric = 'vmaf'")
stats() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {m = (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2); printf "median %.3f (min %.3f, max %.3f)", m, a[1], a[NR]}'; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
ratios=(); for k in "${!route[@]}"; do ratios+=("$(awk -v a="${with[$k]}" -v b="${route[$k]}" 'BEGIN {print a / b}')"); done
mr=$(median "${route[@]}"); mw=$(median "${with[@]}"); mp=$(median "${without[@]}")
echo "clip $clip ($size, $frames frames), x264 flags ${flags[*]}, $rounds interleaved rounds, $(nproc) cores"
echo "x264 CLI + ffmpeg-quality-metrics: $(stats "${route[@]}") s"
echo "enclab encode --metrics vmaf:      $(stats "${with[@]}") s"
echo "enclab encode (no metrics):        $(stats "${without[@]}") s"
echo "CPU s (user + system): route $(stats "${route_cpu[@]}"); enclab --metrics vmaf $(stats "${with_cpu[@]}"); enclab $(stats "${without_cpu[@]}")"
echo "ratio of CPU medians, enclab --metrics vmaf / route: $(awk -v a="$(median "${with_cpu[@]}")" -v b="$(median "${route_cpu[@]}")" 'BEGIN {printf "%.3f", a / b}')"
echo "ratio enclab --metrics vmaf / route, per round: $(stats "${ratios[@]}"); of the medians $(awk -v a="$mw" -v b="$mr" 'BEGIN {printf "%.3f", a / b}') (goal <= 0.80)"
echo "VMAF's added cost (medians): $(awk -v a="$mw" -v b="$mp" 'BEGIN {printf "%.3f s, x%.3f", a - b, a / b}')"
echo "load average (1 min) at each round's start: $(stats "${loads[@]}")"
echo "last round's mean VMAF: ffmpeg-quality-metrics $fqm_mean, enclab $lab_mean; frames scored $frames on both sides"

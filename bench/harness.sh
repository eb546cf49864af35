#!/usr/bin/env bash
# Benchmark of the harness's cost (issue 12): enclab against x264's own CLI and against the ffmpeg route, on the
# decoded y4m of bigbuckbunny looped to 20 s, with interleaved repeated runs, medians of wall and CPU time, and
# ratios. Writes results/bench.md (the machine described, each figure, the medians) and prints the same.
#
# Usage: bash bench/harness.sh [RUNS=5] [SECONDS=20]
#
# Variants, one of each per round, in this order every round (interleaved, so drift in the machine's load falls on
# all of them alike):
#   x264      x264 --psnr --ssim FLAGS -o out.264 clip.y4m                      (the limit)
#   x264-noavx512  the same with --asm naming the CPU's flags without AVX-512 (the lab turns AVX-512 off, docs/verification.md)
#   full      enclab encode clip.y4m FLAGS (full verification, store, plots)
#   none      enclab encode clip.y4m FLAGS --verify none --no-plots
#   ffmpeg    libx264 through ffmpeg, then ffprobe for the frames and the psnr filter against the source: the same
#             per-frame data (size, type, PTS/DTS, PSNR per plane) the way a user without the lab would get it
# and, once per round, a sweep of 8 runs with threads 1 at --jobs 1 and --jobs 2 (throughput).
# CPU time is user + system of the command and all its children (GNU time); wall time is elapsed. Ratios are given
# two ways: of the medians, and the median over rounds of each round's ratio. When perf can sample, one more run of
# each variant is profiled by process and library ("Where the CPU time goes").
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
seconds=${2:-20}
flags=(--preset medium --bitrate 1000 --keyint 60 --bframes 3 --threads 2)
[ -f fixtures/bigbuckbunny.mp4 ] || bash scripts/fixtures.sh >/dev/null
swift build -c release --product enclab 2>&1 | grep -E "error|warning:" || true
lab=.build/release/enclab
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

ffmpeg -nostdin -v error -stream_loop -1 -i fixtures/bigbuckbunny.mp4 -t "$seconds" -an -fps_mode passthrough \
    -pix_fmt yuv420p -f yuv4mpegpipe "$work/clip.y4m"
frames=$(ffprobe -v error -count_frames -show_entries stream=nb_read_frames -of csv=p=0 "$work/clip.y4m")

# x264's CPU flags as its CLI detects them, minus AVX-512 (x264 prints "using cpu capabilities: ...").
caps=$(x264 --frames 1 -o /dev/null "$work/clip.y4m" 2>&1 | sed -n 's/.*using cpu capabilities: //p' | head -1)
noavx512=$(printf '%s\n' $caps | grep -v '^AVX512' | paste -sd, -)

# The sweep: 8 runs (4 bitrates x 2 keyints) of the 20 s clip's first 100 frames, threads 1.
cat >"$work/sweep.json" <<EOF
{"name": "bench-sweep", "clips": ["$work/clip.y4m"],
 "base": {"preset": "medium", "threads": 1, "frames": 100, "bframes": 3},
 "grid": {"bitrate": [400, 700, 1000, 1300], "keyint": [30, 60]}}
EOF

has_flag() { local help; help=$("$lab" "$1" --help 2>&1); [[ $help == *"$2"* ]]; }
declare -A wall cpu
measure() {   # measure NAME command...: appends "wall cpu" to the variant's lists
    local name=$1; shift
    /usr/bin/time -f "%e %U %S" -o "$work/time" "$@" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
    read -r e u s <"$work/time"
    wall[$name]+="$e "
    cpu[$name]+="$(awk -v u="$u" -v s="$s" 'BEGIN {print u + s}') "
}
ffmpeg_route() {
    ffmpeg -nostdin -v error -y -i "$work/clip.y4m" -c:v libx264 -preset medium -b:v 1000k -g 60 -bf 3 -threads 2 \
        -f h264 "$work/route.264"
    ffprobe -v error -show_frames -show_entries frame=pkt_size,pict_type,pts,pkt_dts -of csv "$work/route.264" \
        >"$work/route-frames.csv"
    ffmpeg -nostdin -v error -i "file:$work/route.264" -i "file:$work/clip.y4m" \
        -lavfi "[0:v][1:v]psnr=stats_file=$work/route-psnr.log" -f null -
}
export -f ffmpeg_route; export work

variants=(x264 x264-noavx512 full ffmpeg)
has_flag encode --verify && has_flag encode --no-plots && variants+=(none)
sweeps=(); has_flag run --jobs && sweeps=(jobs1 jobs2)
for i in $(seq "$runs"); do
    for v in "${variants[@]}"; do
        case $v in
        x264) measure x264 x264 --quiet --psnr --ssim "${flags[@]}" -o "$work/x.264" "$work/clip.y4m" ;;
        x264-noavx512) measure x264-noavx512 x264 --quiet --psnr --ssim --asm "$noavx512" "${flags[@]}" -o "$work/x.264" "$work/clip.y4m" ;;
        full) measure full "$lab" encode "$work/clip.y4m" "${flags[@]}" --db "$work/f$i.sqlite" --out "$work/f$i" ;;
        none) measure none "$lab" encode "$work/clip.y4m" "${flags[@]}" --verify none --no-plots --db "$work/n$i.sqlite" --out "$work/n$i" ;;
        ffmpeg) measure ffmpeg bash -c ffmpeg_route ;;
        esac
    done
    for s in "${sweeps[@]}"; do
        measure "$s" "$lab" run "$work/sweep.json" --jobs "${s#jobs}" --db "$work/$s-$i.sqlite" --out "$work/$s-$i"
    done
    echo "round $i of $runs done" >&2
done

# Where each variant's CPU time goes: one run under perf (when perf can sample here), by process and library.
profile=""
if command -v perf >/dev/null && perf record -q -o "$work/probe.data" true >/dev/null 2>&1; then
    profile=1
    for v in "${variants[@]}"; do
        case $v in
        x264) cmd=(x264 --quiet --psnr --ssim "${flags[@]}" -o "$work/x.264" "$work/clip.y4m") ;;
        x264-noavx512) continue ;;
        full) cmd=("$lab" encode "$work/clip.y4m" "${flags[@]}" --db "$work/pf.sqlite" --out "$work/pf") ;;
        none) cmd=("$lab" encode "$work/clip.y4m" "${flags[@]}" --verify none --no-plots --db "$work/pn.sqlite" --out "$work/pn") ;;
        ffmpeg) cmd=(bash -c ffmpeg_route) ;;
        esac
        perf record -q -F 499 -o "$work/$v.data" -- "${cmd[@]}" >/dev/null 2>&1
        shares=$(perf report -i "$work/$v.data" --no-children --sort comm,dso --stdio -g none 2>/dev/null |
            awk '/^ *[0-9.]+%/ { p = $1; sub("%", "", p); if (p + 0 >= 0.5) { $1 = ""; sub(/^ +/, ""); printf "%s%s %s %%", sep, $0, p; sep = ", " } }')
        echo "- $v: $shares" >>"$work/profile.md"
    done
fi

median() { printf '%s\n' $1 | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; }
# The median over rounds of each round's ratio (a round's runs are neighbours in time, so drift in the machine's
# speed cancels in their ratio): two lists of equal length, "A" over "B".
paired() { paste <(printf '%s\n' $1) <(printf '%s\n' $2) | awk '{printf "%.6f\n", $1 / $2}' | sort -g |
    awk '{a[NR]=$1} END {printf "%.3f", (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
{
    echo "# Harness benchmark"
    echo
    echo "$(date -u +%Y-%m-%d), \`bash bench/harness.sh $runs $seconds\`: $runs interleaved rounds, medians."
    echo "Machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(free -g | awk '/Mem:/ {print $2}') GiB;"
    echo "x264 $(x264 --version 2>/dev/null | head -1 | awk '{print $2}'), enclab $(git rev-parse --short HEAD)."
    echo "Clip: bigbuckbunny looped to $seconds s, $frames frames of 1280x720 y4m. Flags: \`${flags[*]}\`."
    echo
    echo "| variant | median wall s | median CPU s | wall / x264 | CPU / x264 | wall / x264, median of rounds | CPU / x264, median of rounds | wall / x264 without AVX-512 | CPU / x264 without AVX-512 |"
    echo "|---|---|---|---|---|---|---|---|---|"
    bw=$(median "${wall[x264]}"); bc=$(median "${cpu[x264]}")
    nw=$(median "${wall[x264-noavx512]}"); nc=$(median "${cpu[x264-noavx512]}")
    for v in "${variants[@]}"; do
        w=$(median "${wall[$v]}"); c=$(median "${cpu[$v]}")
        echo "| $v | $w | $c | $(ratio "$w" "$bw") | $(ratio "$c" "$bc") | $(paired "${wall[$v]}" "${wall[x264]}") | $(paired "${cpu[$v]}" "${cpu[x264]}") | $(ratio "$w" "$nw") | $(ratio "$c" "$nc") |"
    done
    if [ ${#sweeps[@]} -gt 0 ]; then
        w1=$(median "${wall[jobs1]}"); w2=$(median "${wall[jobs2]}")
        echo
        echo "Sweep of 8 runs (threads 1, 100 frames each): --jobs 1 median ${w1} s, --jobs 2 median ${w2} s;"
        echo "throughput --jobs 2 / --jobs 1 = $(ratio "$w1" "$w2") (median of rounds $(paired "${wall[jobs1]}" "${wall[jobs2]}"))."
    fi
    echo
    echo "## Each round"
    echo
    echo "Wall s / CPU s of each run, round by round:"
    echo
    for v in "${variants[@]}" "${sweeps[@]}"; do
        echo "- $v: $(paste -d/ <(printf '%s\n' ${wall[$v]}) <(printf '%s\n' ${cpu[$v]}) | paste -sd' ' -)"
    done
    if [ -n "$profile" ]; then
        echo
        echo "## Where the CPU time goes"
        echo
        echo "One more run of each variant under \`perf record -F 499\` (all threads and child processes), samples by"
        echo "process and library, as shares of the run's samples (entries under 0.5 % left out):"
        echo
        cat "$work/profile.md"
    fi
} | tee results/bench.md

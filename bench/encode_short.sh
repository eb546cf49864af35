#!/usr/bin/env bash
# Benchmark (issue 19, item 11): what a verified `enclab encode` of a short clip costs against x264's CLI, with the
# run's two charts written as data and scripts only (the default since item 11: no gnuplot on the run's path) and with
# their pictures drawn on the run's path (`--plots render`, the behaviour before).
#
# Usage: bash bench/encode_short.sh [ROUNDS=5] [FRAMES=250]
# Environment: ENCLAB (the binary; default .build/release/enclab, built here with `swift build -c release`).
#
# The clip: fixtures/bigbuckbunny.mp4 looped and scaled to 640x272 (the size of the issue's held-out clip), FRAMES
# frames, decoded once to y4m. Flags: --preset medium (x264's defaults otherwise). Each round runs, in this order
# (interleaved, so drift in the machine's load falls on all alike):
#   x264      x264 --preset medium -o x.264 clip.y4m                          (the limit)
#   x264-ps   x264 --preset medium --psnr --ssim -o x.264 clip.y4m            (not --quiet; the CLI measuring what the lab asks
#             libx264 to measure: every run turns on b_psnr and b_ssim, whose per-frame values it stores, and
#             compares x264's PSNR with its own; the CLI needs these two flags for the same numbers)
#   x264-lab  x264 --preset medium --psnr --ssim -v --dump-yuv recon.yuv ...  (the CLI asked for all the lab asks
#             libx264 for: also its DEBUG log level, whose per-frame lines give the lab each frame's QP (-v), and
#             b_full_recon, so that non-reference B-frames are deblocked and x264's PSNR is that of the pictures a
#             decoder outputs, which the CLI reaches only through --dump-yuv, which also writes those pictures)
#   default   enclab encode clip.y4m --preset medium                          (verified; frames.dat, frames.gp, psnr.gp)
#   render    enclab encode clip.y4m --preset medium --plots render           (verified; both charts drawn in the run)
#   none      enclab encode clip.y4m --preset medium --verify none            (unverified: what the verification costs)
#   plot      enclab plot --db DB --out DIR of the default run's database      (the pictures, drawn off the run's path)
# Each enclab run gets a fresh database (a done run key would be skipped). Wall time and CPU time (user + system, of
# the process and its children: on a shared machine the CPU time moves less with the load than the wall time);
# medians, ratios of the medians to x264's, x264-ps's and x264-lab's, and the spread of each round's own ratio to that round's
# x264 (lowest / median / highest: the rounds are interleaved, so a round's ratio sees the load its x264 run saw);
# appended to OUT (default results/plots-off-path.md) and printed. VARIANTS (default "x264 x264-ps x264-lab default
# render none plot") picks the variants, in that order, e.g. VARIANTS="x264 x264-ps default none" for more rounds in the
# time; x264 must be among them. BASELINE=OTHER/enclab adds a variant "baseline": the default encode by another build.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
frames=${2:-250}
[ -f fixtures/bigbuckbunny.mp4 ] || bash scripts/fixtures.sh >/dev/null
if [ -z "${ENCLAB:-}" ]; then
    swift build -c release --product enclab 2>&1 | grep -E "error|warning:" || true
fi
lab=${ENCLAB:-.build/release/enclab}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ffmpeg -nostdin -v error -stream_loop -1 -i fixtures/bigbuckbunny.mp4 -an -vf scale=640:272 -frames:v "$frames" \
    -pix_fmt yuv420p -f yuv4mpegpipe "$work/clip.y4m"
flags=(--preset medium)
read -r -a variants <<< "${VARIANTS:-x264 x264-ps x264-lab default render none plot}"
[ -n "${BASELINE:-}" ] && variants+=(baseline)
out=${OUT:-results/plots-off-path.md}
declare -A wall cpu
loads=""
measure() {   # measure NAME command...: appends the wall and CPU times to the variant's lists
    local name=$1; shift
    /usr/bin/time -f "%e %U %S" -o "$work/time" "$@" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
    read -r e u s < "$work/time"
    wall[$name]+="$e "
    cpu[$name]+="$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }') "
}
for i in $(seq "$rounds"); do
    loads+="$(cut -d' ' -f1 /proc/loadavg) "
    for v in "${variants[@]}"; do
        case $v in
            x264) measure x264 x264 --quiet "${flags[@]}" -o "$work/x.264" "$work/clip.y4m" ;;
            # Not --quiet: x264's parameter validation turns b_psnr and b_ssim off below X264_LOG_INFO, so
            # `--quiet --psnr --ssim` measures nothing (callgrind, 100 frames: 6,090.7 M instructions against plain
            # x264's 6,090.6 M). Its INFO summary goes to the variant's stderr file.
            x264-ps) measure x264-ps x264 "${flags[@]}" --psnr --ssim -o "$work/x.264" "$work/clip.y4m" ;;
            x264-lab) measure x264-lab x264 --quiet "${flags[@]}" --psnr --ssim -v --dump-yuv "$work/recon.yuv" -o "$work/x.264" "$work/clip.y4m"
                      rm -f "$work/recon.yuv" ;;
            default) measure default "$lab" encode "$work/clip.y4m" "${flags[@]}" --db "$work/d$i.sqlite" --out "$work/d$i" ;;
            render) measure render "$lab" encode "$work/clip.y4m" "${flags[@]}" --plots render --db "$work/r$i.sqlite" --out "$work/r$i" ;;
            none) measure none "$lab" encode "$work/clip.y4m" "${flags[@]}" --verify none --db "$work/n$i.sqlite" --out "$work/n$i" ;;
            plot) [ -f "$work/d$i.sqlite" ] || measure default "$lab" encode "$work/clip.y4m" "${flags[@]}" --db "$work/d$i.sqlite" --out "$work/d$i"
                  measure plot "$lab" plot --db "$work/d$i.sqlite" --out "$work/d$i" ;;
            baseline) measure baseline "$BASELINE" encode "$work/clip.y4m" "${flags[@]}" --db "$work/b$i.sqlite" --out "$work/b$i" ;;
            *) echo "unknown variant $v" >&2; exit 64 ;;
        esac
    done
    rm -rf "$work/d$i" "$work/r$i" "$work/n$i" "$work/b$i" "$work"/*.sqlite
done
median() { printf '%s\n' $1 | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
# lowest / median / highest of each round's value of $1 over the same round's value of $2
spread() {
    local r
    r=$(paste <(printf '%s\n' $1) <(printf '%s\n' $2) | awk '{printf "%.3f\n", $1 / $2}' | sort -g)
    echo "$(head -1 <<< "$r") / $(median "$r") / $(tail -1 <<< "$r")"
}
mx=$(median "${wall[x264]}")
cx=$(median "${cpu[x264]}")
# the median CPU time of $1 over that of variant $2, "-" when $2 was not run
over() { if [ -n "${cpu[$2]:-}" ]; then awk -v a="$1" -v b="$(median "${cpu[$2]}")" 'BEGIN {printf "%.3f", a / b}'; else echo -; fi; }
{
    echo
    echo "## $(date -u '+%Y-%m-%d %H:%M UTC'): enclab encode of a short clip against x264's CLI (bench/encode_short.sh $rounds $frames)"
    echo
    echo "bigbuckbunny looped and scaled to 640x272, $frames frames, --preset medium; $(nproc) cores; load average (1 min)"
    echo "at each round's start: $loads(at the end: $(cut -d' ' -f1-3 /proc/loadavg)). enclab: $lab${BASELINE:+; baseline: $BASELINE}."
    echo
    echo "| variant | median wall s | wall / x264 | median CPU s | CPU / x264 | CPU / x264-ps | CPU / x264-lab | per-round CPU / x264, low / median / high | per-round wall / x264 | wall, each round | CPU, each round |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|"
    for v in "${variants[@]}"; do
        [ -n "${cpu[$v]:-}" ] || continue
        m=$(median "${wall[$v]}")
        c=$(median "${cpu[$v]}")
        if [ "$v" = plot ]; then sc="-"; sw="-"; else sc=$(spread "${cpu[$v]}" "${cpu[x264]}"); sw=$(spread "${wall[$v]}" "${wall[x264]}"); fi
        echo "| $v | $m | $(awk -v a="$m" -v b="$mx" 'BEGIN {printf "%.3f", a / b}') | $c | $(awk -v a="$c" -v b="$cx" 'BEGIN {printf "%.3f", a / b}') | $(over "$c" x264-ps) | $(over "$c" x264-lab) | $sc | $sw | ${wall[$v]}| ${cpu[$v]}|"
    done
} | tee -a "$out"

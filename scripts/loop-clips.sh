#!/usr/bin/env bash
# Makes the long inputs of experiments/rate-accuracy.json: each real clip repeated, picture for picture, to at
# least 30 s and 120 s, in fixtures/loops/ (git-ignored with fixtures/):
#   fixtures/loops/carphone_pristine-30s.mp4   8 copies, 960 frames, 32.032 s
#   fixtures/loops/carphone_pristine-120s.mp4  30 copies, 3600 frames, 120.120 s
#   fixtures/loops/bigbuckbunny-30s.mp4        6 copies, 792 frames, 31.68 s
#   fixtures/loops/bigbuckbunny-120s.mp4       23 copies, 3036 frames, 121.44 s
# A copy is the whole clip (the fewest whole copies that reach the length), so the loop never cuts a GOP.
# ffmpeg -stream_loop with stream copy (-c copy, first video stream only, no audio): the H.264 packets are the
# source's, so every decoded picture is the source's exactly (no re-encode) and a file is the size of its copies;
# ffmpeg continues the timestamps from one copy to the next.
# Idempotent: an output that exists with the expected packet count is kept; a new one is written under a temporary
# name and renamed into place.
#
#   bash scripts/loop-clips.sh                                   # the real clips, 30 s and 120 s, into fixtures/loops
#   bash scripts/loop-clips.sh --out DIR --lengths "1 3" A.mp4 ... # other clips, lengths (whole seconds), folder
#
# Needs ffmpeg and ffprobe (and, for the default clips, scripts/fixtures.sh, which it runs).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

out=$root/fixtures/loops
lengths="30 120"
clips=()
while [ $# -gt 0 ]; do
    case "$1" in
        --out) [ $# -ge 2 ] || { echo "loop-clips: $1 needs a value" >&2; exit 64; }; out=$(realpath -m -- "$2"); shift 2 ;;
        --lengths) [ $# -ge 2 ] || { echo "loop-clips: $1 needs a value" >&2; exit 64; }; lengths="$2"; shift 2 ;;
        -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
        -*) echo "loop-clips: unknown flag '$1'" >&2; exit 64 ;;
        *) clips+=("$(realpath -m -- "$1")"); shift ;;
    esac
done
if [ ${#clips[@]} -eq 0 ]; then
    bash "$root/scripts/fixtures.sh" >/dev/null
    clips=("$root/fixtures/carphone_pristine.mp4" "$root/fixtures/bigbuckbunny.mp4")
fi
for l in $lengths; do
    [[ "$l" =~ ^[1-9][0-9]*$ ]] || { echo "loop-clips: length '$l' is not a whole number of seconds" >&2; exit 64; }
done
mkdir -p -- "$out"

# packets of the first video stream (one per frame in these files), counted without decoding
packets() {
    ffprobe -v error -select_streams v:0 -count_packets -show_entries stream=nb_read_packets -of csv=p=0 \
        "file:$1"
}

for clip in "${clips[@]}"; do
    [ -f "$clip" ] || { echo "loop-clips: no clip '$clip'" >&2; exit 66; }
    abs=$clip
    name=$(basename -- "$clip"); name=${name%.*}
    frames=$(packets "$abs")
    rate=$(ffprobe -v error -select_streams v:0 -show_entries stream=r_frame_rate -of csv=p=0 "file:$abs")
    num=${rate%/*}; den=${rate#*/}
    if ! [[ "$frames" =~ ^[1-9][0-9]*$ && "$num" =~ ^[1-9][0-9]*$ && "$den" =~ ^[1-9][0-9]*$ ]]; then
        echo "loop-clips: $clip: cannot read its frame count ('$frames') or rate ('$rate')" >&2
        exit 65
    fi
    for l in $lengths; do
        # the fewest whole copies whose length, copies x frames x den / num seconds, reaches l
        copies=$(( (l * num + frames * den - 1) / (frames * den) ))
        want=$(( copies * frames ))
        dst="$out/$name-${l}s.mp4"
        if [ -f "$dst" ] && [ "$(packets "$dst" 2>/dev/null)" = "$want" ]; then
            echo "loop-clips: $dst ($copies copies, $want frames, kept)"
            continue
        fi
        tmp="$out/.tmp-$name-${l}s-$$.mp4"
        trap 'rm -f "$tmp"' EXIT
        ffmpeg -nostdin -v error -y -stream_loop $((copies - 1)) -i "file:$abs" \
            -map 0:v:0 -c copy -an -sn -dn -map_metadata -1 "file:$tmp"
        got=$(packets "$tmp")
        if [ "$got" != "$want" ]; then
            echo "loop-clips: $dst: $got frames, expected $want ($copies x $frames)" >&2
            exit 70
        fi
        mv -f "$tmp" "$dst"
        trap - EXIT
        echo "loop-clips: $dst ($copies copies, $want frames)"
    done
done

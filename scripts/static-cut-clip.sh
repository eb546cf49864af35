#!/usr/bin/env bash
# Makes fixtures/static-cut.y4m for experiments/scenecut-and-min-keyint.json: 600 frames (20 s) of 176x144 at
# 30 fps, 4:2:0, mostly static, with two hard cuts each soon after where a keyint-250 keyframe falls:
#   frames   0-9    carphone_pristine.mp4 frame 0, held
#   frames  10-254  bigbuckbunny.mp4 frame 60, scaled to 176x144, held   (a cut 10 frames after IDR 0)
#   frames 255-599  carphone_pristine.mp4 frame 90, held                 (a cut 5 frames after frame 250)
# with a 16x16 grey square moving 2 pixels a frame across row 64 over all of them (the only motion).
# Needs the real clips (scripts/fixtures.sh) and ffmpeg; the same ffmpeg gives the same bytes.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/fixtures.sh >/dev/null
out=fixtures/static-cut.y4m
ffmpeg -nostdin -v error -y \
    -i file:"$PWD/fixtures/carphone_pristine.mp4" -i file:"$PWD/fixtures/bigbuckbunny.mp4" \
    -f lavfi -i color=c=0x808080:s=16x16:r=30 \
    -filter_complex "
        [0:v]split[c0][c1];
        [c0]select='eq(n\,0)',setsar=1,loop=loop=9:size=1:start=0,setpts=N/30/TB[a];
        [1:v]select='eq(n\,60)',scale=176:144:flags=bicubic,setsar=1,loop=loop=244:size=1:start=0,setpts=N/30/TB[b];
        [c1]select='eq(n\,90)',setsar=1,loop=loop=344:size=1:start=0,setpts=N/30/TB[c];
        [a][b][c]concat=n=3:v=1:a=0,fps=30[bg];
        [bg][2:v]overlay=x='mod(2*n\,160)':y=64:eval=frame:shortest=1,format=yuv420p[v]" \
    -map '[v]' -frames:v 600 -f yuv4mpegpipe "file:$PWD/$out"
echo "static-cut: $out ($(grep -c FRAME "$out" 2>/dev/null || true) FRAME lines; sha256 $(sha256sum "$out" | cut -d' ' -f1))"

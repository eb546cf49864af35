#!/usr/bin/env bash
# Makes vN-COMMIT.sqlite: a database of schema version N written by the real enclab of COMMIT (the last commit of
# main with that version: 1 0dea841, 3 e6c4661 (wt-psnr, merged in 3c8b8fa), 4 18965e2, 5 e8c29d0, 6 3eff049, 7 2251b96,
# 8 889fbaa).
# Usage: make_version.sh N COMMIT ENCLAB_BINARY (built from `git worktree add DIR COMMIT` with `swift build`).
# An 8-frame 426x240 testsrc2 clip: run 1 at --qp 30, run 2 at --qp 0 (NULL PSNRs and SSIM); from version 4 on a
# third run at --pts-schedule (timestamp_analysis, frame_durations), from version 5 on that run with VideoToolbox's
# keyframe and data-rate limits (keyframe_analysis, keyframe_violations, data_rate_windows); version 6 fills
# run_metrics and run_gops itself, version 7 runs.repeatable (1 for all three runs). Then VACUUM, journal mode delete.
set -euo pipefail
version=$1 commit=$2
enclab=$(realpath "$3")
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
ffmpeg -v error -f lavfi -i testsrc2=size=426x240:rate=25 -frames:v 8 -pix_fmt yuv420p c.y4m
common=(--threads 1 --preset veryfast --db lab.sqlite --out out)
"$enclab" encode c.y4m "${common[@]}" --qp 30
"$enclab" encode c.y4m "${common[@]}" --qp 0
if [ "$version" -ge 5 ]; then
    "$enclab" encode c.y4m "${common[@]}" --bitrate 300 --pts-schedule 'rate=25;jitter=2ms;seed=7' \
        --vt MaxKeyFrameInterval=3 --vt DataRateLimits=20000,1
elif [ "$version" -ge 4 ]; then
    "$enclab" encode c.y4m "${common[@]}" --bitrate 300 --pts-schedule 'rate=25;jitter=2ms;seed=7'
fi
sqlite3 lab.sqlite "PRAGMA journal_mode = DELETE; VACUUM;" >/dev/null
cp lab.sqlite "$here/v$version-$commit.sqlite"
sqlite3 "$here/v$version-$commit.sqlite" "SELECT run_id, status, frames FROM runs; PRAGMA user_version; PRAGMA journal_mode"

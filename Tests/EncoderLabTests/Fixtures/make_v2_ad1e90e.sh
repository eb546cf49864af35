#!/usr/bin/env bash
# Makes v2-ad1e90e.sqlite: a database of schema version 2 written by enclab at commit ad1e90e (the last version 2).
# Usage: make_v2_ad1e90e.sh ENCLAB_AD1E90E_BINARY (built from `git worktree add DIR ad1e90e` with `swift build`).
# Two done runs of a 4-frame 426x240 testsrc2 clip (chroma width 213, not a multiple of 8, where x264 0.164's own
# chroma PSNR is wrong): run 1 at --qp 30, run 2 at --qp 0 (NULL PSNRs and SSIM). Then VACUUM, journal mode delete.
set -euo pipefail
enclab=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
ffmpeg -v error -f lavfi -i testsrc2=size=426x240:rate=25 -frames:v 4 -pix_fmt yuv420p c.y4m
"$enclab" encode c.y4m --threads 1 --preset veryfast --qp 30 --db lab.sqlite --out out
"$enclab" encode c.y4m --threads 1 --preset veryfast --qp 0 --db lab.sqlite --out out
sqlite3 lab.sqlite "PRAGMA journal_mode = DELETE; VACUUM;" >/dev/null
cp lab.sqlite "$here/v2-ad1e90e.sqlite"
sqlite3 "$here/v2-ad1e90e.sqlite" "SELECT run_id, status, frames FROM runs; PRAGMA user_version; PRAGMA journal_mode"

#!/usr/bin/env bash
# Makes aef06d9.sqlite: a database written by enclab at commit aef06d9 (the version before user_version).
# Usage: make_aef06d9.sh ENCLAB_AEF06D9_BINARY (built from `git worktree add DIR aef06d9` with `swift build`).
# Two done runs of a 4-frame 64x48 testsrc clip (the second at --qp 0: NULL PSNRs and SSIM) and a third run
# killed with SIGKILL while running (its row stays `running`, with no frames). Then VACUUM, journal mode delete.
set -euo pipefail
enclab=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
ffmpeg -v error -f lavfi -i testsrc=size=64x48:rate=25 -frames:v 4 -pix_fmt yuv420p small.y4m
ffmpeg -v error -f lavfi -i testsrc=size=320x240:rate=25 -frames:v 1500 -pix_fmt yuv420p big.y4m
"$enclab" encode small.y4m --preset ultrafast --db lab.sqlite --out out
"$enclab" encode small.y4m --preset ultrafast --qp 0 --db lab.sqlite --out out
"$enclab" encode big.y4m --preset veryslow --db lab.sqlite --out out >/dev/null 2>&1 &
pid=$!
until [ "$(sqlite3 lab.sqlite "SELECT count(*) FROM runs WHERE status = 'running'")" = 1 ]; do sleep 0.05; done
kill -KILL "$pid"
wait "$pid" || true
sqlite3 lab.sqlite "PRAGMA journal_mode = DELETE; VACUUM;" >/dev/null
cp lab.sqlite "$here/aef06d9.sqlite"
sqlite3 "$here/aef06d9.sqlite" "SELECT run_id, status, frames FROM runs; PRAGMA user_version; PRAGMA journal_mode"

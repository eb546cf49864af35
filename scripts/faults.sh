#!/usr/bin/env bash
# The fault suite (issue 6): runs enclab against hostile names, huge numbers, hangs, full and read-only disks,
# locked and foreign databases, missing tools, damaged input and two writers sharing one output folder, and
# checks each exit status (sysexits) and its side effects with independent tools (sqlite3, ffprobe, ffmpeg,
# cmp, sha256sum, find). Section 11 merges copies of a good database damaged with sqlite3 (`merge-*`).
#
#   ENCLAB=/path/to/enclab bash scripts/faults.sh [CASE-GLOB...]
#
# ENCLAB defaults to .build/debug/enclab (built with `swift build` when missing). CASE-GLOBs (e.g. 'inject-*')
# run only the matching cases. One line per case: `NAME  status=N  expected=M  PASS|FAIL  (reason)`, or
# `SKIP NAME (why)` where this machine cannot run it (mounting needs root; as root, the permission cases
# `perm-*` run enclab as nobody with runuser).
# Ends with `faults: N passed, N failed, N skipped` and exits 1 when a case failed. Every case runs in its own
# folder under a `mktemp -d` root that is removed at the end, every command under `timeout -s KILL`. Not part of
# scripts/test.sh: it mounts small tmpfs file systems and runs processes as another user. About 2 minutes.
set -u
umask 022

ORIG_PWD=$PWD
cd "$(dirname "$0")/.." || exit 2
REPO=$PWD
PATTERNS=("$@")

unset ENCLAB_DB_TIMEOUT_MS
ENCLAB=${ENCLAB:-}
if [ -z "$ENCLAB" ]; then
    ENCLAB=$REPO/.build/debug/enclab
    if [ ! -x "$ENCLAB" ]; then
        echo "faults: building $ENCLAB (swift build)"
        timeout -s KILL 1800 swift build 2>&1 | grep -E "error|warning:"
    fi
fi
case $ENCLAB in /*) ;; *) ENCLAB=$ORIG_PWD/$ENCLAB ;; esac
if [ ! -x "$ENCLAB" ]; then echo "faults: no enclab binary at $ENCLAB" >&2; exit 2; fi
for tool in ffmpeg ffprobe x264 sqlite3 gnuplot timeout mkfifo sha256sum pgrep; do
    command -v "$tool" >/dev/null || { echo "faults: $tool is needed to run the suite" >&2; exit 2; }
done

ROOT=$(mktemp -d /tmp/enclab-faults.XXXXXX)
chmod 755 "$ROOT"   # the permission cases, run as nobody, need to reach their folders
LOGS=$ROOT/logs
FX=$ROOT/fixtures
mkdir -p "$LOGS" "$FX"
MOUNTS=()

# On the way out: background jobs still running (each under timeout, which leads its own process group) are
# killed, the tmpfs mounts unmounted, and the root removed.
cleanup() {
    local p m
    for p in $(jobs -p); do kill -KILL -- "-$p" 2>/dev/null || kill -KILL "$p" 2>/dev/null; done
    for m in "${MOUNTS[@]}"; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null; done
    chmod -R u+w "$ROOT" 2>/dev/null
    rm -rf --one-file-system "$ROOT"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

PASSED=0 FAILED=0 SKIPPED=0
FAILED_NAMES=()

# ---------------------------------------------------------------------------------------------------------------
# Helpers

# begin NAME: false when NAME is not selected; else a fresh case folder in $D and no notes yet.
begin() {
    CASE=$1
    if [ "${#PATTERNS[@]}" -gt 0 ]; then
        local p hit=0
        for p in "${PATTERNS[@]}"; do
            # shellcheck disable=SC2053
            [[ $CASE == $p ]] && hit=1
        done
        [ "$hit" = 1 ] || return 1
    fi
    D=$ROOT/cases/$CASE
    mkdir -p "$D"
    BAD=() OK=() ST=- EXPECTED=- ERR=/dev/null OUT=/dev/null MS=0
}
bad() { BAD+=("$1"); }
ok() { OK+=("$1"); }

# run LIMIT CMD...: CMD in $D under `timeout -s KILL LIMIT`, stdin /dev/null; sets ST and MS (elapsed ms).
# Its stdout and stderr are $OUT and $ERR (in $LOGS). The shell's own "Killed" notices are silenced.
run() {
    local limit=$1; shift
    OUT=$LOGS/$CASE.out ERR=$LOGS/$CASE.err
    local t0; t0=$(date +%s%N)
    { (cd "$D" && exec timeout -s KILL "$limit" "$@") >"$OUT" 2>"$ERR" </dev/null; } 2>/dev/null
    ST=$?
    MS=$((($(date +%s%N) - t0) / 1000000))
}

# enclab LIMIT ARGS...: the binary, as `run` runs it.
enclab() { local limit=$1; shift; run "$limit" "$ENCLAB" "$@"; }

# start_bg LIMIT CMD...: CMD in $D in the background under timeout, output to $OUT/$ERR; BG is timeout's pid.
start_bg() {
    local limit=$1; shift
    OUT=$LOGS/$CASE.out ERR=$LOGS/$CASE.err
    { (cd "$D" && exec timeout -s KILL "$limit" "$@") >"$OUT" 2>"$ERR" </dev/null & } 2>/dev/null
    BG=$!
}

# wait_bg: waits for $BG; sets ST.
wait_bg() { { wait "$BG"; } 2>/dev/null; ST=$?; }

# child_of PID: the pid of PID's child (the program timeout runs), waiting up to 5 s for it to appear.
child_of() {
    local i c
    for i in $(seq 50); do
        c=$(pgrep -P "$1" | head -n 1)
        [ -n "$c" ] && { echo "$c"; return 0; }
        sleep 0.1
    done
    return 1
}

# expect STATUS...: the exit status must be one of them; a trap, abort or kill is named.
expect() {
    EXPECTED=$(IFS='|'; echo "$*")
    local s
    for s in "$@"; do [ "$ST" = "$s" ] && return 0; done
    case $ST in
        132) bad "SIGILL trap" ;; 133) bad "SIGTRAP" ;; 134) bad "SIGABRT" ;; 137) bad "killed by the timeout" ;;
        139) bad "SIGSEGV" ;; *) bad "exit $ST" ;;
    esac
    return 1
}

# within MS_LIMIT: the last command took at most that long.
within() { if [ "$MS" -gt "$1" ]; then bad "took ${MS} ms (> $1)"; else ok "${MS} ms"; fi; }

# stderr_has TEXT WHAT: stderr contains TEXT.
stderr_has() { if grep -qF -- "$1" "$ERR"; then ok "stderr names $2"; else bad "stderr does not name $2"; fi; }

# sql DB QUERY: the sqlite3 CLI's answer (read-only: never changes the file); empty on error.
sql() { timeout -s KILL 20 sqlite3 -readonly -batch "$1" "$2" 2>/dev/null; }

# rows DB WHERE: the number of runs rows matching WHERE; 0 without a database or a runs table.
rows() {
    [ -e "$1" ] || { echo 0; return; }
    local n; n=$(sql "$1" "SELECT count(*) FROM runs WHERE $2")
    echo "${n:-0}"
}
no_rows() { local n; n=$(rows "$1" 1); if [ "$n" = 0 ]; then ok "no row"; else bad "$n rows recorded"; fi; }

# no_pwned: no file named PWNED under the root or the caller's folder (removed once seen, for the next case).
no_pwned() {
    local found f
    found=$( (find "$ROOT" -name PWNED; find "$ORIG_PWD" "$REPO" -maxdepth 2 -name PWNED) 2>/dev/null | sort -u)
    if [ -n "$found" ]; then
        bad "PWNED created in $(dirname "$(head -n 1 <<<"$found")" | sed "s|^$ROOT/||")"
        while IFS= read -r f; do rm -f -- "$f"; done <<<"$found"
    else
        ok "no PWNED"
    fi
}

# run_dir DB: the folder of DB's first done run (the parent of its stream_path, relative to $D unless absolute).
run_dir() {
    local stream
    stream=$(sql "$1" "SELECT stream_path FROM runs WHERE status='done' ORDER BY run_id LIMIT 1")
    [ -n "$stream" ] || { echo "$D/(no done run)"; return; }
    case "$stream" in /*) dirname "$stream" ;; *) dirname "$D/$stream" ;; esac
}

# plots DB: the first done run's frames.png and psnr.png exist and are not empty.
plots() {
    local dir; dir=$(run_dir "$1")
    if [ -s "$dir/frames.png" ] && [ -s "$dir/psnr.png" ]; then ok "plots drawn"; else bad "no frames.png/psnr.png in $dir"; fi
}

# frame_count FILE: ffprobe's count of decoded frames (FILE relative to the current folder).
frame_count() {
    local f=$1
    case $f in /*) ;; *) f=$PWD/$f ;; esac
    timeout -s KILL 60 ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames \
        -of csv=p=0 "file:$f" 2>/dev/null | head -n 1 | tr -d '[:space:]'
}

# finish: prints the case line and counts it.
finish() {
    local verdict reason line
    if [ "${#BAD[@]}" -eq 0 ]; then
        verdict=PASS; PASSED=$((PASSED + 1)); reason=$(printf '%s, ' "${OK[@]}")
    else
        verdict=FAIL; FAILED=$((FAILED + 1)); FAILED_NAMES+=("$CASE")
        reason=$(printf '%s; ' "${BAD[@]}")
        # stderr's last line, or a crash's "Fatal error" line
        line=$( (grep -m 1 "Fatal error" "$ERR" || grep -v '^[[:space:]]*$' "$ERR" | tail -n 1) 2>/dev/null | tr -d '\r' | cut -c1-110)
        [ -n "$line" ] && reason="${reason}stderr: $line"
    fi
    reason=${reason%, }; reason=${reason%; }
    printf '%-28s status=%-5s expected=%-6s %s  (%s)\n' "$CASE" "$ST" "$EXPECTED" "$verdict" "$reason"
}

skip() { SKIPPED=$((SKIPPED + 1)); echo "SKIP $CASE ($1)"; }

# mount_tmpfs DIR OPTIONS: mounts a tmpfs there (unmounted by the cleanup); fails without permission.
mount_tmpfs() {
    mkdir -p "$1"
    mount -t tmpfs -o "$2" tmpfs "$1" 2>/dev/null || return 1
    MOUNTS+=("$1")
}

# make_db PATH OUTDIR: a good enclab database at PATH (one done encode of the tiny clip), from $D.
make_db() {
    { (cd "$D" && exec timeout -s KILL 60 "$ENCLAB" encode "$FX/tiny.y4m" --threads 1 --db "$1" --out "$2") \
        >"$LOGS/$CASE.setup.out" 2>"$LOGS/$CASE.setup.err" </dev/null; } 2>/dev/null
}

CAN_MOUNT=0
if [ "$(id -u)" = 0 ] && mount_tmpfs "$ROOT/probe-mount" size=64k; then
    CAN_MOUNT=1
    umount "$ROOT/probe-mount"; MOUNTS=()
fi
# The permission cases need a user that permissions apply to: this one, or nobody when this one is root.
AS_USER=() CAN_NOBODY=1
if [ "$(id -u)" = 0 ]; then
    if command -v runuser >/dev/null && id nobody >/dev/null 2>&1 &&
        runuser -u nobody -- test -x "$ENCLAB" 2>/dev/null && runuser -u nobody -- test -r "$ROOT/logs" 2>/dev/null; then
        AS_USER=(runuser -u nobody --)
    else
        CAN_NOBODY=0
    fi
fi
# mine DIR: a folder the user of AS_USER can write.
mine() { mkdir "$1" && if [ "${#AS_USER[@]}" -gt 0 ]; then chown nobody "$1"; fi; }

# ---------------------------------------------------------------------------------------------------------------
# Fixtures

ff() { timeout -s KILL 120 ffmpeg -nostdin -hide_banner -v error -y "$@"; }
mp4() {  # mp4 OUT SIZE FRAMES [output options]: testsrc in H.264 (MPEG-4 part 2 without libx264)
    local out=$1 size=$2 n=$3; shift 3
    ff -f lavfi -i "testsrc=size=$size:rate=25" -frames:v "$n" -pix_fmt yuv420p -c:v libx264 -preset ultrafast \
        -threads 1 "$@" "$out" 2>/dev/null ||
        ff -f lavfi -i "testsrc=size=$size:rate=25" -frames:v "$n" -pix_fmt yuv420p -c:v mpeg4 "$@" "$out"
}
ff -f lavfi -i testsrc=size=64x48:rate=25 -frames:v 5 -pix_fmt yuv420p "$FX/tiny.y4m"
mp4 "$FX/small.mp4" 64x48 12
mp4 "$FX/seven.mp4" 64x48 7
mp4 "$FX/long.mp4" 640x360 400
mp4 "$FX/faststart.mp4" 160x120 100 -movflags +faststart
ff -f lavfi -i testsrc2=size=320x240:rate=25 -frames:v 60 -pix_fmt yuv420p "$FX/big.y4m"
timeout -s KILL 60 x264 --quiet --threads 1 -o "$FX/s.264" "$FX/tiny.y4m" 2>/dev/null
for f in tiny.y4m small.mp4 seven.mp4 long.mp4 faststart.mp4 big.y4m s.264; do
    [ -s "$FX/$f" ] || { echo "faults: could not make the fixture $f" >&2; exit 2; }
done
chmod -R a+rX "$FX"
INJECT=$'x\nsystem "touch PWNED"\n#'
echo "faults: $ENCLAB ($("$ENCLAB" version 2>/dev/null)), scratch root $ROOT"

# ---------------------------------------------------------------------------------------------------------------
# 1. Injection: exit 0, plots drawn, no PWNED file anywhere.

inject_clbin() {
    begin inject-clbin || return
    enclab 60 encode "$FX/tiny.y4m" --threads 1 --opencl-clbin "$INJECT" --plots render --db db.sqlite --out OUT
    expect 0; plots "$D/db.sqlite"; no_pwned; finish
}

inject_out() {
    begin inject-out || return
    local out="o';system('touch PWNED');'"
    enclab 60 encode "$FX/tiny.y4m" --threads 1 --plots render --db db.sqlite --out "$out"
    expect 0; plots "$D/db.sqlite"; no_pwned; finish
}

inject_clip_name() {
    begin inject-clip-name || return
    local clip=$'a\nsystem "touch PWNED"\n#.y4m'
    cp "$FX/tiny.y4m" "$D/$clip"
    enclab 60 encode "$clip" --threads 1 --plots render --db db.sqlite --out OUT
    expect 0; plots "$D/db.sqlite"; no_pwned; finish
}

inject_experiment() {
    begin inject-experiment || return
    cp "$FX/tiny.y4m" "$D/tiny.y4m"
    cat >"$D/exp.json" <<'EOF'
{"name": "inject", "clips": ["tiny.y4m"], "base": {"threads": 1},
 "grid": {"opencl-clbin": ["x\nsystem \"touch PWNED\"\n#"]}}
EOF
    enclab 60 run exp.json --plots render --db db.sqlite --out OUT
    expect 0; plots "$D/db.sqlite"
    if [ -s "$D/OUT/rd.png" ]; then ok "rd.png drawn"; else bad "no rd.png"; fi
    no_pwned; finish
}

inject_apostrophe() {
    begin inject-apostrophe || return
    enclab 60 encode "$FX/tiny.y4m" --threads 1 --plots render --db db.sqlite --out "John's clips"
    expect 0; plots "$D/db.sqlite"; no_pwned
    if [ -e "$D/John" ] || [ -e "$ORIG_PWD/John" ]; then bad "stray file John"; else ok "no stray John"; fi
    finish
}

# ---------------------------------------------------------------------------------------------------------------
# 2. Paths that look like protocols.

path_colon() {
    begin path-colon || return
    cp "$FX/small.mp4" "$D/12:30.mp4"
    enclab 60 encode 12:30.mp4 --threads 1 --db db.sqlite --out OUT
    expect 0
    local want got
    want=$(cd "$D" && frame_count 12:30.mp4); got=$(sql "$D/db.sqlite" "SELECT frames FROM runs WHERE status='done'")
    if [ -n "$want" ] && [ "$got" = "$want" ]; then ok "frames=$got as ffprobe"; else bad "frames '$got', ffprobe '$want'"; fi
    finish
}

path_concat() {
    begin path-concat || return
    cp "$FX/small.mp4" "$D/a.mp4"
    cp "$FX/seven.mp4" "$D/concat:a.mp4|a.mp4"
    enclab 60 encode 'concat:a.mp4|a.mp4' --threads 1 --db db.sqlite --out OUT
    expect 0
    local own other got
    own=$(cd "$D" && frame_count 'concat:a.mp4|a.mp4'); other=$(cd "$D" && frame_count a.mp4)
    got=$(sql "$D/db.sqlite" "SELECT frames FROM runs WHERE status='done'")
    if [ -z "$own" ] || [ "$own" = "$other" ]; then bad "fixture: frame counts '$own' and '$other' must differ"
    elif [ "$got" = "$own" ]; then ok "frames=$got its own (a.mp4 has $other)"
    else bad "frames '$got', the file has $own (a.mp4 $other)"; fi
    finish
}

path_out_colon() {
    begin path-out-colon || return
    enclab 60 encode "$FX/tiny.y4m" --threads 1 --db db.sqlite --out res:1
    expect 0
    local dir; dir=$(run_dir "$D/db.sqlite")
    case "$dir" in "$D/res:1/"*) ;; *) bad "run folder $dir not under res:1" ;; esac
    if [ -s "$dir/stream.264" ]; then ok "$dir/stream.264 written"; else bad "no $dir/stream.264"; fi
    finish
}

# ---------------------------------------------------------------------------------------------------------------
# 3. Traps: huge numbers are refused, never trap (132/134).

# y4m_with_sar SAR OUT: tiny.y4m with its A token replaced.
y4m_with_sar() {
    local header; header=$(head -n 1 "$FX/tiny.y4m")
    case $header in *" A"*) header=$(sed -E "s/ A[0-9]+:[0-9]+/ A$1/" <<<"$header") ;; *) header="$header A$1" ;; esac
    { printf '%s\n' "$header"; tail -n +2 "$FX/tiny.y4m"; } >"$2"
}

trap_sar() {  # trap_sar NAME SAR
    begin "$1" || return
    y4m_with_sar "$2" "$D/sar.y4m"
    enclab 60 encode sar.y4m --threads 1 --db db.sqlite --out OUT
    expect 65 && ok "refused"
    no_rows "$D/db.sqlite"; finish
}

trap_option() {  # trap_option NAME OPTION
    begin "$1" || return
    enclab 60 encode "$FX/small.mp4" --threads 1 "$2" 3000000000 --db db.sqlite --out OUT
    expect 64 && ok "refused"
    no_rows "$D/db.sqlite"; finish
}

trap_experiment_frames() {
    begin trap-experiment-frames || return
    cat >"$D/exp.json" <<EOF
{"name": "frames", "clips": ["$FX/small.mp4"], "base": {"threads": 1, "frames": 3000000000}}
EOF
    enclab 60 run exp.json --db db.sqlite --out OUT
    expect 64 && ok "refused"
    no_rows "$D/db.sqlite"; finish
}

# ---------------------------------------------------------------------------------------------------------------
# 4. No hang.

hang_long() {  # hang_long OPTION
    begin "hang-long-$1" || return
    local long; long=$(head -c 70000 /dev/zero | tr '\0' 'a')
    enclab 10 encode "$FX/tiny.y4m" --threads 1 "--$1" "$long" --db db.sqlite --out OUT
    expect 64; within 10000; finish
}

accepted() {  # accepted NAME OPTION VALUE
    begin "$1" || return
    enclab 60 encode "$FX/tiny.y4m" --threads 1 "$2" "$3" --db db.sqlite --out OUT
    expect 0 && ok "accepted"
    local n; n=$(rows "$D/db.sqlite" "status='done'")
    [ "$n" = 1 ] || bad "$n done rows"
    finish
}

hang_fifo() {  # hang_fifo EXT
    begin "hang-fifo-$1" || return
    mkfifo "$D/pipe.$1"
    enclab 10 encode "pipe.$1" --threads 1 --db db.sqlite --out OUT
    expect 66; within 10000; no_rows "$D/db.sqlite"; finish
}

db_locked() {
    begin db-locked || return
    EXPECTED=75
    make_db db.sqlite OUT0
    if [ ! -s "$D/db.sqlite" ]; then bad "setup: no database made"; finish; return; fi
    # sqlite3 holds BEGIN EXCLUSIVE until it reads COMMIT from the fifo.
    mkfifo "$D/lock.ctl"
    { (cd "$D" && exec timeout -s KILL 60 sqlite3 -batch db.sqlite <lock.ctl) >"$LOGS/$CASE.lock.out" 2>&1 & } 2>/dev/null
    local lock=$! held=0 i n
    exec 7>"$D/lock.ctl"
    echo 'BEGIN EXCLUSIVE;' >&7
    for i in $(seq 50); do   # held once another writer is refused at once
        if ! timeout -s KILL 5 sqlite3 -batch "$D/db.sqlite" 'PRAGMA busy_timeout=0; BEGIN IMMEDIATE; ROLLBACK;' >/dev/null 2>&1 7>&-; then
            held=1; break
        fi
        sleep 0.1
    done
    # Another rate than make_db's: a run the database does not hold yet, so it must be written (a run of a key that
    # is done already is only read, which a WAL database allows under another process's write lock).
    run 30 env ENCLAB_DB_TIMEOUT_MS=1000 "$ENCLAB" encode "$FX/tiny.y4m" --threads 1 --crf 31 --db db.sqlite --out OUT 7>&-
    echo 'COMMIT;' >&7
    exec 7>&-
    { wait "$lock"; } 2>/dev/null
    [ "$held" = 1 ] || bad "setup: sqlite3 never held the lock"
    expect 75; within 6000
    n=$(rows "$D/db.sqlite" "status='running'"); if [ "$n" = 0 ]; then ok "no running row"; else bad "$n running rows"; fi
    finish
}

# 60 clips (symlinks to one mp4) x 5 crf values: the up-front checks open each clip (an ffmpeg decode, ~0.2 s
# each here), so they last several seconds. (300 crf values x 2 tiny clips are checked in under 1 s here.)
sigint_checks() {
    begin sigint-checks || return
    local i clips="" pid t0 n
    mkdir "$D/c"
    for i in $(seq 60); do ln -s "$FX/small.mp4" "$D/c/clip$i.mp4"; clips="$clips${clips:+, }\"c/clip$i.mp4\""; done
    cat >"$D/exp.json" <<EOF
{"name": "many", "clips": [$clips], "base": {"threads": 1}, "grid": {"crf": [20, 21, 22, 23, 24]}}
EOF
    start_bg 40 "$ENCLAB" run exp.json --db db.sqlite --out OUT
    pid=$(child_of "$BG")
    sleep 1
    t0=$(date +%s%N)
    [ -n "$pid" ] && kill -INT "$pid" 2>/dev/null
    wait_bg
    MS=$((($(date +%s%N) - t0) / 1000000))
    expect 130; within 5000
    n=$(rows "$D/db.sqlite" "status='running'"); if [ "$n" = 0 ]; then ok "no running row"; else bad "$n running rows"; fi
    finish
}

grid_million() {
    begin grid-million || return
    local vals; vals=$(seq -s, 1 1000)
    cat >"$D/exp.json" <<EOF
{"name": "million", "clips": ["$FX/tiny.y4m"], "base": {"threads": 1}, "grid": {"bitrate": [$vals], "keyint": [$vals]}}
EOF
    # (a memory cap, in case the grid is expanded before it is counted)
    run 10 bash -c 'ulimit -v 8000000; exec "$@"' _ "$ENCLAB" run exp.json --db db.sqlite --out OUT
    expect 64; within 5000; stderr_has --max-runs "--max-runs"; no_rows "$D/db.sqlite"; finish
}

# ---------------------------------------------------------------------------------------------------------------
# 5. Exit classes.

db_readonly_mount() {
    begin db-readonly-mount || return
    EXPECTED=73
    [ "$CAN_MOUNT" = 1 ] || { skip "cannot mount a tmpfs (needs root)"; return; }
    mount_tmpfs "$D/mnt" size=16m
    make_db "$D/mnt/db.sqlite" OUT0
    if [ ! -s "$D/mnt/db.sqlite" ]; then bad "setup: no database made"; finish; return; fi
    mount -o remount,ro "$D/mnt" || { bad "setup: remount ro failed"; finish; return; }
    local sum; sum=$(sha256sum <"$D/mnt/db.sqlite")
    enclab 60 encode "$FX/tiny.y4m" --threads 1 --db mnt/db.sqlite --out OUT
    expect 73; stderr_has "db.sqlite" "the file"
    [ "$(sha256sum <"$D/mnt/db.sqlite")" = "$sum" ] || bad "database changed"
    finish
}

db_text_file() {
    begin db-text-file || return
    local i
    for i in $(seq 200); do echo "line $i of my notes, not a database"; done >"$D/notes.sqlite"
    cp "$D/notes.sqlite" "$D/notes.copy"
    enclab 60 encode "$FX/tiny.y4m" --threads 1 --db notes.sqlite --out OUT
    expect 65
    if cmp -s "$D/notes.sqlite" "$D/notes.copy"; then ok "bytes unchanged"; else bad "file changed"; fi
    finish
}

db_foreign_sqlite() {
    begin db-foreign-sqlite || return
    timeout -s KILL 20 sqlite3 "$D/other.db" 'CREATE TABLE t(x)'
    local sum; sum=$(sha256sum <"$D/other.db")
    enclab 60 encode "$FX/tiny.y4m" --threads 1 --db other.db --out OUT
    expect 65
    if [ "$(sha256sum <"$D/other.db")" = "$sum" ]; then ok "sha256 unchanged"; else bad "sha256 changed"; fi
    finish
}

db_corrupt() {
    begin db-corrupt || return
    EXPECTED=65
    make_db db.sqlite OUT0
    timeout -s KILL 20 sqlite3 "$D/db.sqlite" 'PRAGMA wal_checkpoint(TRUNCATE);' >/dev/null 2>&1
    rm -f "$D/db.sqlite-wal" "$D/db.sqlite-shm"
    local size; size=$(stat -c %s "$D/db.sqlite" 2>/dev/null || echo 0)
    if [ "$size" -lt 8192 ]; then bad "setup: database only $size bytes"; finish; return; fi
    yes 'garbage!' | head -c 4096 | dd of="$D/db.sqlite" bs=4096 seek=1 conv=notrunc status=none
    enclab 60 encode "$FX/tiny.y4m" --threads 1 --db db.sqlite --out OUT
    expect 65 && ok "refused"; finish
}

out_readonly() {  # out_readonly mount-point|new-folder
    begin "out-readonly-$1" || return
    EXPECTED=73
    [ "$CAN_MOUNT" = 1 ] || { skip "cannot mount a tmpfs (needs root)"; return; }
    mount_tmpfs "$D/ro" ro,size=1m
    local out=ro; [ "$1" = new-folder ] && out=ro/new
    enclab 60 encode "$FX/tiny.y4m" --threads 1 --db db.sqlite --out "$out"
    expect 73; no_rows "$D/db.sqlite"; finish
}

out_disk_full() {
    begin out-disk-full || return
    EXPECTED=74
    [ "$CAN_MOUNT" = 1 ] || { skip "cannot mount a tmpfs (needs root)"; return; }
    mount_tmpfs "$D/small" size=64k
    # 320x240, 60 frames at --qp 5: a stream of several MB, so the disk fills while it is written.
    enclab 60 encode "$FX/big.y4m" --threads 1 --qp 5 --db db.sqlite --out small
    expect 74
    local n; n=$(rows "$D/db.sqlite" "status='done'")
    if [ "$n" = 0 ]; then ok "no done row"; else bad "$n done rows"; fi
    finish
}

out_regular_file() {
    begin out-regular-file || return
    echo "a file" >"$D/taken"
    enclab 60 encode "$FX/tiny.y4m" --threads 1 --db db.sqlite --out taken
    expect 73; no_rows "$D/db.sqlite"
    [ "$(cat "$D/taken")" = "a file" ] || bad "the file changed"
    finish
}

convert_to_directory() {
    begin convert-to-directory || return
    mkdir "$D/somedir"
    enclab 60 convert --to avcc "$FX/s.264" somedir
    expect 73; stderr_has somedir "the folder"
    [ -z "$(ls -A "$D/somedir")" ] || bad "wrote into the folder"
    finish
}

mp4_undecodable() {
    begin mp4-undecodable || return
    echo "this is plain text, not a video" >"$D/text.mp4"
    enclab 60 encode text.mp4 --threads 1 --db db.sqlite --out OUT
    expect 65
    if tail -n 1 "$ERR" | grep -q "Error marking filters as finished *$"; then bad "message ends with ffmpeg's filter noise"
    else ok "message is not ffmpeg's filter noise"; fi
    no_rows "$D/db.sqlite"; finish
}

sigint_encode() {
    begin sigint-encode || return
    local pid i status frames
    start_bg 60 "$ENCLAB" encode "$FX/long.mp4" --threads 1 --db db.sqlite --out OUT
    pid=$(child_of "$BG")
    for i in $(seq 150); do   # until the run is encoding: its temporary folder holds stream bytes
        compgen -G "$D/OUT/.tmp-*/stream.264" >/dev/null && [ -s "$(compgen -G "$D/OUT/.tmp-*/stream.264" | head -n 1)" ] && break
        kill -0 "$BG" 2>/dev/null || break
        sleep 0.1
    done
    sleep 0.5
    [ -n "$pid" ] && kill -INT "$pid" 2>/dev/null
    wait_bg
    expect 130
    status=$(sql "$D/db.sqlite" "SELECT group_concat(status) FROM runs")
    frames=$(sql "$D/db.sqlite" "SELECT count(*) FROM frames")
    if [ "$status" = failed ]; then ok "run failed"; else bad "runs status '$status'"; fi
    if [ "${frames:-x}" = 0 ]; then ok "no frames"; else bad "frames rows '$frames'"; fi
    finish
}

# Beyond the list: the read-only cases by permission, for machines without mount (as nobody when run as root,
# whom permissions do not stop).
perm_out_unwritable() {
    begin perm-out-unwritable || return
    EXPECTED=73
    [ "$CAN_NOBODY" = 1 ] || { skip "root without runuser: cannot run as nobody"; return; }
    mkdir "$D/locked"; chmod 555 "$D/locked"; mine "$D/mine"
    run 60 "${AS_USER[@]}" "$ENCLAB" encode "$FX/tiny.y4m" --threads 1 --db mine/db.sqlite --out locked
    expect 73; no_rows "$D/mine/db.sqlite"; finish
}

perm_db_unwritable() {
    begin perm-db-unwritable || return
    EXPECTED=73
    [ "$CAN_NOBODY" = 1 ] || { skip "root without runuser: cannot run as nobody"; return; }
    mkdir "$D/dbdir"; mine "$D/mine"
    make_db "$D/dbdir/db.sqlite" OUT0
    if [ ! -s "$D/dbdir/db.sqlite" ]; then bad "setup: no database made"; finish; return; fi
    chmod 444 "$D/dbdir/db.sqlite"; chmod 555 "$D/dbdir"
    local sum; sum=$(sha256sum <"$D/dbdir/db.sqlite")
    run 60 "${AS_USER[@]}" "$ENCLAB" encode "$FX/tiny.y4m" --threads 1 --db dbdir/db.sqlite --out mine/OUT
    expect 73; stderr_has db.sqlite "the file"
    [ "$(sha256sum <"$D/dbdir/db.sqlite")" = "$sum" ] || bad "database changed"
    finish
}

# ---------------------------------------------------------------------------------------------------------------
# 6. Missing tools: refused before anything is written.

missing_tool() {  # missing_tool ffmpeg|gnuplot
    begin "missing-$1" || return
    local tool
    mkdir "$D/bin"
    for tool in ffmpeg ffprobe gnuplot x264 sqlite3; do
        [ "$tool" = "$1" ] || ln -s "$(command -v "$tool")" "$D/bin/$tool"
    done
    run 60 env PATH="$D/bin" "$ENCLAB" encode "$FX/tiny.y4m" --threads 1 --plots render --db db.sqlite --out OUT
    expect 70; stderr_has "$1" "$1"
    if [ -e "$D/db.sqlite" ]; then bad "database file created"; else ok "no database file"; fi
    finish
}

# ---------------------------------------------------------------------------------------------------------------
# 7. Damaged input: a faststart mp4 (moov first) cut at 60 % of its bytes.

mp4_cut() {
    begin mp4-cut || return
    local size w
    size=$(stat -c %s "$FX/faststart.mp4")
    head -c $((size * 60 / 100)) "$FX/faststart.mp4" >"$D/cut.mp4"
    enclab 60 encode cut.mp4 --threads 1 --db db.sqlite --out OUT
    if [ "$ST" = 0 ]; then
        if grep -qi warning "$ERR"; then ok "warning on stderr"; else bad "exit 0 without a warning on stderr"; fi
        w=$(sql "$D/db.sqlite" "SELECT warnings FROM runs WHERE status='done'")
        case $w in '' | '[]' | NULL) bad "runs.warnings empty" ;; *) ok "runs.warnings set" ;; esac
    else
        expect 64 65 66 70 73 74 75 && ok "refused"
    fi
    EXPECTED="0|64-75"
    finish
}

# ---------------------------------------------------------------------------------------------------------------
# 8. inspect: forbidden_zero_bit set in the second NAL unit's header.

BAD264=$ROOT/forbidden.264
make_bad264() {
    [ -s "$BAD264" ] && return 0
    local second at byte
    cp "$FX/s.264" "$BAD264.tmp"
    second=$(LC_ALL=C grep -obUaP '\x00\x00\x01' "$BAD264.tmp" | sed -n 2p | cut -d: -f1)
    [ -n "$second" ] || return 1
    at=$((second + 3))
    byte=$(od -An -tu1 -j "$at" -N1 "$BAD264.tmp" | tr -d ' ')
    [ "$byte" -lt 128 ] || return 1
    # shellcheck disable=SC2059
    printf "\\$(printf '%03o' $((byte ^ 0x80)))" | dd of="$BAD264.tmp" bs=1 seek="$at" conv=notrunc status=none
    [ "$(od -An -tu1 -j "$at" -N1 "$BAD264.tmp" | tr -d ' ')" -ge 128 ] || return 1
    [ "$(cmp -l "$FX/s.264" "$BAD264.tmp" | wc -l)" = 1 ] || return 1
    mv "$BAD264.tmp" "$BAD264"
}

inspect_forbidden() {  # inspect_forbidden NAME EXPECTED [--strict]
    begin "$1" || return
    EXPECTED=$2
    make_bad264 || { bad "setup: could not set the bit"; finish; return; }
    cp "$BAD264" "$D/bad.264"
    if [ $# -ge 3 ]; then enclab 60 inspect "$3" bad.264; else enclab 60 inspect bad.264; fi
    expect "$2"
    [ "$2" = 0 ] && stderr_has forbidden_zero_bit "forbidden_zero_bit"
    [ "$2" = 65 ] && [ "$ST" = 65 ] && ok "refused"
    finish
}

# ---------------------------------------------------------------------------------------------------------------
# 9. Two processes, two databases, one output folder: never a mixed stream.

two_writers() {  # two_writers REPETITION
    begin "two-writers-$1" || return
    local who crf pid_a pid_b sa sb dir name claims bytes got real folders=0
    # Both wait at a gate (a fifo: its opening for writing releases every reader) and start together, with the
    # same clip and settings: the same run key, so the same folder OUT/<key16>: one must win, the other be refused.
    mkfifo "$D/gate"
    for who in a b; do
        crf=20
        { (cd "$D" && { read -r _ <gate || true; } &&
            exec timeout -s KILL 60 "$ENCLAB" encode "$FX/tiny.y4m" --threads 1 --crf "$crf" --db "$who.sqlite" --out shared) \
            >"$LOGS/$CASE.$who.out" 2>"$LOGS/$CASE.$who.err" </dev/null & } 2>/dev/null
        if [ "$who" = a ]; then pid_a=$!; else pid_b=$!; fi
    done
    sleep 0.3
    timeout -s KILL 10 bash -c ': >"$1"' _ "$D/gate"
    { wait "$pid_a"; } 2>/dev/null; sa=$?
    { wait "$pid_b"; } 2>/dev/null; sb=$?
    ST="$sa+$sb" EXPECTED="0+64"
    ERR=$LOGS/$CASE.b.err; [ "$sa" = 0 ] || ERR=$LOGS/$CASE.a.err
    if { [ "$sa" = 0 ] && [ "$sb" = 64 ]; } || { [ "$sa" = 64 ] && [ "$sb" = 0 ]; }; then ok "one won, the other refused"
    else bad "exits $sa and $sb"; fi
    for dir in "$D"/shared/*; do
        [ -d "$dir" ] || continue
        folders=$((folders + 1))
        name=$(basename "$dir")
        claims=0 bytes=
        for who in a b; do
            got=$(sql "$D/$who.sqlite" "SELECT bytes FROM runs WHERE status='done' AND stream_path LIKE '%/$name/stream.264'")
            if [ -n "$got" ]; then claims=$((claims + $(wc -l <<<"$got"))); bytes=$got; fi
        done
        [ "$claims" -le 1 ] || bad "$name claimed by $claims rows"
        if [ -e "$dir/stream.264" ]; then
            if ! timeout -s KILL 60 ffmpeg -nostdin -v error -i "file:$dir/stream.264" -f null - >/dev/null 2>"$LOGS/$CASE.decode" ||
                [ -s "$LOGS/$CASE.decode" ]; then bad "$name/stream.264 does not decode cleanly"; fi
            real=$(stat -c %s "$dir/stream.264")
            if [ "$claims" = 0 ]; then bad "$name/stream.264 claimed by no done row"
            elif [ "$claims" = 1 ] && [ "$real" != "$bytes" ]; then bad "$name/stream.264 is $real bytes, its row says $bytes"; fi
        fi
    done
    [ "$folders" -ge 1 ] || bad "no run folder"
    if compgen -G "$D/shared/.tmp-*" >/dev/null; then bad "a temporary folder is left"; fi
    [ "${#BAD[@]}" -eq 0 ] && ok "$folders folder whole, decodes, size = its row's bytes"
    finish
}


# ---------------------------------------------------------------------------------------------------------------
# 10. From a second attacker's pass: readers that read other files, ~, values x264 would misread, plot's guards.

reader_image_sequence() {  # an mp4 named like an image sequence, with PNGs that match the pattern beside it
    begin reader-image-sequence || return
    cp "$FX/small.mp4" "$D/img%03d.png"
    for i in 1 2 3; do ff -f lavfi -i color=red:size=32x32 -frames:v 1 "$D/img00$i.png"; done
    enclab 60 encode 'img%03d.png' --threads 1 --db db.sqlite --out OUT
    expect 0
    local got; got=$(sql "$D/db.sqlite" "SELECT frames || 'x' || width FROM runs WHERE status='done'")
    if [ "$got" = "12x64" ]; then ok "the file's own 12 frames at 64 wide"; else bad "recorded '$got', not the mp4's 12x64"; fi
    finish
}

reader_playlist() {  # a clip whose bytes are an HLS playlist naming another local file
    begin "reader-$1" || return
    cp "$FX/small.mp4" "$D/other.mp4"
    if [ "$1" = hls ]; then printf '#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1.0,\nother.mp4\n#EXT-X-ENDLIST\n' >"$D/clip.mp4"
    else printf 'ffconcat version 1.0\nfile other.mp4\n' >"$D/clip.mp4"; fi
    enclab 60 encode clip.mp4 --threads 1 --db db.sqlite --out OUT
    expect 65; no_rows "$D/db.sqlite"; finish
}

out_tilde() {  # a folder named ~ is a folder like any other, not the home folder
    begin out-tilde || return
    enclab 60 encode "$FX/tiny.y4m" --threads 1 --plots render --db db.sqlite --out '~'
    expect 0; plots "$D/db.sqlite"
    case "$(run_dir "$D/db.sqlite")" in "$D/~/"*) ok "under ./~" ;; *) bad "run folder not under ./~" ;; esac
    finish
}

value_misread() {  # values x264 would read as something else: 64, nothing made
    begin "value-$1" || return
    enclab 60 encode "$FX/tiny.y4m" --threads 1 "$2" "$3" --db db.sqlite --out OUT
    expect 64
    [ ! -e "$D/db.sqlite" ] && ok "no database" || bad "database made"
    finish
}

plot_not_enclab() {  # plot reads: an empty file stays an empty file
    begin plot-not-enclab || return
    : >"$D/zero.sqlite"
    enclab 60 plot --db zero.sqlite --out P
    expect 65
    [ ! -s "$D/zero.sqlite" ] && ok "file untouched" || bad "file written"
    finish
}

plot_damaged_values() {  # sizes that overflow a sum: 65, not a trap
    begin plot-damaged-values || return
    make_db db.sqlite OUT
    sqlite3 "$D/db.sqlite" "UPDATE frames SET size_bytes = 9223372036854775807" 2>/dev/null
    enclab 60 plot --db db.sqlite --out P
    expect 65; finish
}

# ---------------------------------------------------------------------------------------------------------------
# 11. Issue 17's kinds: writing through planted links, runs done without their files, devices and read-only places
# as the database, a plot beside a sweep.

VICTIM="the victim's own bytes"
# victim_ok FILE...: each still holds $VICTIM.
victim_ok() {
    local f
    for f in "$@"; do [ "$(cat "$f" 2>/dev/null)" = "$VICTIM" ] || { bad "$(basename "$f") overwritten through a link"; return; }; done
    ok "targets untouched"
}
# key16 DB: the first done run's key, first 16 hex digits.
key16() { sql "$1" "SELECT substr(run_key, 1, 16) FROM runs WHERE status='done' ORDER BY run_id LIMIT 1"; }
# whole FILE...: each is a regular file (not a link) and a whole PNG (signature, IEND) or SVG (ends `</svg>`).
whole() {
    local f
    for f in "$@"; do
        if [ -L "$f" ] || [ ! -f "$f" ]; then bad "$(basename "$f") missing or a link"; return; fi
        case $f in
            *.png) [ "$(head -c 8 "$f" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] &&
                   [ "$(tail -c 12 "$f" | od -An -tx1 | tr -d ' \n')" = 0000000049454e44ae426082 ] || { bad "$(basename "$f") not a whole PNG"; return; } ;;
            *.svg) tail -c 8 "$f" | grep -q '</svg>' || { bad "$(basename "$f") not a whole SVG"; return; } ;;
        esac
    done
    ok "pictures whole"
}
EXP2='{"name": "k", "clips": ["%s"], "base": {"threads": 1, "preset": "ultrafast"}, "grid": {"crf": [24, 34]}}'

link_plot_files() {  # links planted in a run folder plot draws into
    begin link-plot-files || return
    make_db db.sqlite OUT
    local k f; k=$(key16 "$D/db.sqlite"); mkdir -p "$D/P/$k"
    for f in frames.png frames.svg psnr.png psnr.svg frames.dat frames.gp; do
        printf '%s' "$VICTIM" >"$D/victim-$f"; ln -s "$D/victim-$f" "$D/P/$k/$f"
    done
    enclab 60 plot --db db.sqlite --out P
    expect 0; victim_ok "$D"/victim-*; whole "$D/P/$k/frames.png" "$D/P/$k/psnr.svg"; finish
}

link_plot_run_folder() {  # the run folder itself a link
    begin link-plot-run-folder || return
    make_db db.sqlite OUT
    local k; k=$(key16 "$D/db.sqlite"); mkdir -p "$D/P" "$D/victim"; printf '%s' "$VICTIM" >"$D/victim/frames.dat"
    ln -s "$D/victim" "$D/P/$k"
    enclab 60 plot --db db.sqlite --out P
    expect 73; stderr_has "symbolic link" "the link"; victim_ok "$D/victim/frames.dat"
    [ "$(ls -A "$D/victim")" = frames.dat ] || bad "files written into the link's target"
    finish
}

link_run_rd() {  # run's rate-distortion plot over planted links in --out
    begin link-run-rd || return
    cp "$FX/tiny.y4m" "$D/c.y4m"; printf "$EXP2" c.y4m >"$D/e.json"; mkdir "$D/O"
    local f
    for f in rd.png rd.svg rd.dat rd.gp; do printf '%s' "$VICTIM" >"$D/victim-$f"; ln -s "$D/victim-$f" "$D/O/$f"; done
    enclab 120 run e.json --db db.sqlite --out O
    expect 0; victim_ok "$D"/victim-*; whole "$D/O/rd.png" "$D/O/rd.svg"; finish
}

link_settle() {  # a link named as a dead process's temporary folder of a done run
    begin link-settle || return
    cp "$FX/tiny.y4m" "$D/c.y4m"
    make_db db.sqlite OUT
    local key k tag host
    key=$(sql "$D/db.sqlite" "SELECT run_key FROM runs"); k=${key:0:16}
    mv "$D/OUT/$k" "$D/victim"; printf '%s' "$VICTIM" >"$D/victim/frames.png"
    tag=$(printf '%s' "$(realpath "$D/db.sqlite")" | sha256sum | cut -c1-8); host=$(hostname | tr - _)
    ln -s "$D/victim" "$D/OUT/.tmp-$key-$tag-$host-4194303-abcdef12"
    enclab 60 encode "$FX/tiny.y4m" --threads 1 --db db.sqlite --out OUT
    expect 0; victim_ok "$D/victim/frames.png"
    [ -L "$D/OUT/$k" ] && bad "the link was moved into place as the run folder"
    finish
}

done_missing_plots() {  # a done run whose pictures are gone: drawn again by the next encode
    begin done-missing-plots || return
    make_db db.sqlite OUT
    local k; k=$(key16 "$D/db.sqlite")
    rm -f "$D/OUT/$k/frames.png"; head -c 100 "$FX/tiny.y4m" >"$D/OUT/$k/psnr.svg"
    enclab 60 encode "$FX/tiny.y4m" --threads 1 --plots render --db db.sqlite --out OUT
    expect 0; grep -q "already done" "$OUT" && ok "already done" || bad "not reported as already done"
    whole "$D/OUT/$k/frames.png" "$D/OUT/$k/frames.svg" "$D/OUT/$k/psnr.png" "$D/OUT/$k/psnr.svg"; finish
}

done_no_frames() {  # a done row without frames (a damaged database) is encoded again
    begin done-no-frames || return
    make_db db.sqlite OUT
    sqlite3 "$D/db.sqlite" "DELETE FROM frames" 2>/dev/null
    enclab 60 encode "$FX/tiny.y4m" --threads 1 --plots render --db db.sqlite --out OUT
    expect 0
    local n want; n=$(sql "$D/db.sqlite" "SELECT count(*) FROM frames"); want=$(frame_count "$FX/tiny.y4m")
    if [ "$n" = "$want" ]; then ok "$n frames stored again (ffprobe $want)"; else bad "$n frames stored, ffprobe counts $want"; fi
    finish
}

sweep_disk_full() {  # a sweep that fills the disk: 74; its done runs get their pictures on the rerun with room
    begin sweep-disk-full || return
    EXPECTED=74
    [ "$CAN_MOUNT" = 1 ] || { skip "cannot mount a tmpfs (needs root)"; return; }
    # 1 MiB: about six runs of 320x240 at qp 45 ... 40 fit (their streams and plot data), the seventh does not.
    mount_tmpfs "$D/small" size=1m
    cp "$FX/big.y4m" "$D/c.y4m"
    printf '{"name": "full", "clips": ["c.y4m"], "base": {"threads": 1, "preset": "ultrafast"}, "grid": {"qp": [45, 44, 43, 42, 41, 40, 39, 38, 30, 20, 10]}}' >"$D/e.json"
    enclab 300 run e.json --plots render --db db.sqlite --out small/O
    expect 74
    local done1 k; done1=$(rows "$D/db.sqlite" "status='done'")
    [ "$done1" -gt 0 ] || bad "setup: no run done before the disk filled"
    mount -o remount,size=64m "$D/small" || { bad "setup: remount failed"; finish; return; }
    enclab 300 run e.json --plots render --db db.sqlite --out small/O
    [ "$ST" = 0 ] || bad "rerun with room: exit $ST"
    for k in $(sql "$D/db.sqlite" "SELECT substr(run_key, 1, 16) FROM runs WHERE status='done'"); do
        whole "$D/small/O/$k/frames.png" "$D/small/O/$k/frames.svg" "$D/small/O/$k/psnr.png" "$D/small/O/$k/psnr.svg"
    done
    ok "$done1 runs done at the 74"; ST=74
    finish
}

db_device() {  # db_device PATH: --db a device: refused before SQLite opens it, nothing beside it
    begin "db-device-$(basename "$1")" || return
    local had=0; [ -e "$1-journal" ] && had=1
    enclab 60 encode "$FX/tiny.y4m" --threads 1 --db "$1" --out OUT
    expect 64; stderr_has "$1" "the device"
    if [ "$had" = 0 ] && [ -e "$1-journal" ]; then bad "$1-journal left"; rm -f "$1-journal"; else ok "no $1-journal"; fi
    enclab 60 plot --db "$1" --out P
    [ "$ST" = 66 ] || bad "plot --db $1: exit $ST, not 66"
    if [ "$had" = 0 ] && [ -e "$1-journal" ]; then bad "$1-journal left by plot"; rm -f "$1-journal"; fi
    ST=64; finish
}

readonly_readers() {  # every command that only reads, on a WAL database in a read-only mount
    begin readonly-readers || return
    EXPECTED=0
    [ "$CAN_MOUNT" = 1 ] || { skip "cannot mount a tmpfs (needs root)"; return; }
    mount_tmpfs "$D/ro" size=16m
    make_db "$D/ro/db.sqlite" OUT
    (cd "$D" && timeout -s KILL 60 "$ENCLAB" encode "$FX/tiny.y4m" --threads 1 --crf 35 --db ro/db.sqlite --out OUT) >/dev/null 2>&1
    mount -o remount,ro "$D/ro" || { bad "setup: remount ro failed"; finish; return; }
    local sum c; sum=$(sha256sum <"$D/ro/db.sqlite")
    for c in "plot --db ro/db.sqlite --out P" "report --db ro/db.sqlite --out R" "check --db ro/db.sqlite --run 1 --expect MaxKeyFrameInterval=250" \
             "compare --db ro/db.sqlite 1 2" "export --db ro/db.sqlite --table runs --format csv --out runs.csv" "merge m.sqlite ro/db.sqlite"; do
        # shellcheck disable=SC2086
        enclab 120 $c
        case $ST in 0) ;; 1) [ "${c%% *}" = check ] || bad "${c%% *}: exit 1" ;; *) bad "${c%% *}: exit $ST" ;; esac
    done
    [ "$(sha256sum <"$D/ro/db.sqlite")" = "$sum" ] || bad "database changed"
    [ "${#BAD[@]}" -eq 0 ] && { ok "plot, report, check, compare, export, merge read it"; ST=0; }
    finish
}

# Timing-dependent (the two meet only while the sweep draws at its end): it passed 2 tries of 2 on 000cdb1, whose two
# plots at once (plot-beside-plot, the same kind: two drawers of one folder) failed 3 rounds of 4.
plot_beside_sweep() {  # plot again and again on the --out of a running sweep: never 74 (nor 70)
    begin plot-beside-sweep || return
    cp "$FX/tiny.y4m" "$D/c.y4m"
    printf '{"name": "side", "clips": ["c.y4m"], "base": {"threads": 1, "preset": "ultrafast"}, "grid": {"crf": [20, 22, 24, 26, 28, 30, 32, 34, 36, 38]}}' >"$D/e.json"
    (cd "$D" && timeout -s KILL 300 "$ENCLAB" run e.json --db db.sqlite --out O) >/dev/null 2>&1
    # The same experiment with twenty more runs, and plot beside it.
    sed 's/"crf": \[/"crf": [21, 23, 25, 27, 29, 31, 33, 35, 37, 39, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, /' "$D/e.json" >"$D/e2.json"
    # One run's plots and the experiment's rd plot, again and again: both drawers write rd.* in O at the sweep's end.
    local i s fails=0 plots=0 k; k=$(key16 "$D/db.sqlite")
    start_bg 300 "$ENCLAB" run e2.json --db db.sqlite --out O
    for i in $(seq 200); do
        kill -0 "$BG" 2>/dev/null || break
        (cd "$D" && timeout -s KILL 60 "$ENCLAB" plot --db db.sqlite --out O --run "$k") >"$LOGS/$CASE.plot.out" 2>"$LOGS/$CASE.plot.err" </dev/null
        s=$?; plots=$((plots + 1))
        [ "$s" = 0 ] || { fails=$((fails + 1)); cp "$LOGS/$CASE.plot.err" "$LOGS/$CASE.plotfail.err"; }
    done
    wait_bg
    expect 0
    if [ "$fails" = 0 ]; then ok "$plots plots beside it, all 0"; else bad "$fails of $plots plots failed: $(head -c 150 "$LOGS/$CASE.plotfail.err")"; fi
    finish
}

plot_beside_plot() {  # two plots of one database into one --out at once, four times: both 0 each time
    begin plot-beside-plot || return
    cp "$FX/tiny.y4m" "$D/c.y4m"
    printf '{"name": "two", "clips": ["c.y4m"], "base": {"threads": 1, "preset": "ultrafast"}, "grid": {"crf": [20, 22, 24, 26, 28, 30, 32, 34, 36, 38]}}' >"$D/e.json"
    (cd "$D" && timeout -s KILL 300 "$ENCLAB" run e.json --db db.sqlite --out O) >/dev/null 2>&1
    local i sa sb fails=0
    for i in 1 2 3 4; do
        start_bg 120 "$ENCLAB" plot --db db.sqlite --out O
        (cd "$D" && timeout -s KILL 120 "$ENCLAB" plot --db db.sqlite --out O) >/dev/null 2>"$LOGS/$CASE.b.err" </dev/null
        sb=$?; wait_bg; sa=$ST
        [ "$sa$sb" = 00 ] || { fails=$((fails + 1)); bad "round $i: exits $sa and $sb"; }
    done
    ST=$fails EXPECTED=0
    [ "$fails" = 0 ] && ok "4 rounds, both 0"
    finish
}

# ---------------------------------------------------------------------------------------------------------------
# 12. Streams that hold nothing, hostile sizes, packets that break PACKETS.md (issue 17): a stream with no NAL unit
#     is 65 naming the file, convert writes no output then, memory stays bounded (each case under `ulimit -v` of
#     512 MiB; the lab's own code and libraries map about 270 MiB), stderr stays a few lines, and a packet whose flags,
#     decode_order or dts_us contradict its NAL units is a warning naming the packet, refused with --strict.

LIMITED=(bash -c 'ulimit -v 524288 && exec "$0" "$@"' "$ENCLAB")

# small_stderr: stderr under 4 KiB.
small_stderr() {
    local n; n=$(stat -c %s "$ERR")
    if [ "$n" -lt 4096 ]; then ok "stderr $n bytes"; else bad "stderr $n bytes"; fi
}

stream_nothing() {  # stream_nothing NAME COMMAND...: the stream in $D/in.264 was made by the caller
    local name=$1; shift
    run 60 "${LIMITED[@]}" "$@"
    expect 65 && ok "refused"
    stderr_has "in.264: no NAL unit" "the file and what is missing"
    small_stderr
    if [ -e "$D/out.avcc" ]; then bad "convert wrote out.avcc ($(stat -c %s "$D/out.avcc") bytes)"; fi
    if compgen -G "$D/.out.avcc.*" >/dev/null; then bad "a temporary file is left"; fi
    finish
}

stream_zeros() {  # stream_zeros NAME MIB inspect|convert: MIB MiB of 0x00
    begin "$1" || return
    truncate -s "$2M" "$D/in.264"
    if [ "$3" = inspect ]; then stream_nothing "$1" inspect in.264
    else stream_nothing "$1" convert --to avcc in.264 out.avcc; fi
}

stream_lone_start_code() {
    begin stream-lone-start-code || return
    printf '\000\000\000\001' >"$D/in.264"
    stream_nothing stream-lone-start-code inspect in.264
}

# start_codes FILE LOG2: 2^LOG2 start codes 00 00 01 back to back.
start_codes() {
    local i
    printf '\000\000\001' >"$1"
    for i in $(seq "$2"); do cat "$1" "$1" >"$1.2" && mv "$1.2" "$1"; done
}

stream_start_codes() {  # 4 Mi start codes (12 MiB), each an empty NAL unit
    begin stream-start-codes || return
    start_codes "$D/in.264" 22
    stream_nothing stream-start-codes convert --to avcc in.264 out.avcc
}

stream_many_empty() {  # a real stream then 1 Mi empty NAL units: exit 0, one warning line
    begin stream-many-empty || return
    start_codes "$D/codes" 20
    cat "$FX/s.264" "$D/codes" >"$D/e.264"
    run 60 "${LIMITED[@]}" inspect e.264
    expect 0
    small_stderr
    local lines; lines=$(grep -c . "$ERR")
    if [ "$lines" = 1 ] && grep -q "1048576 empty NAL units" "$ERR"; then ok "one warning counting 1048576"; else bad "$lines stderr lines"; fi
    finish
}

# packet_offset FILE N: the byte offset of packet N (from 0) of a packet file, by PACKETS.md's layout.
packet_offset() {
    local f=$1 n=$2 p=0 q k i j c len
    u() { od -An -tu1 -j "$1" -N "$2" "$f" | awk '{for (i = 1; i <= NF; i++) v = v * 256 + $i} END {print v + 0}'; }
    for ((k = 0; k < n; k++)); do
        q=$((p + 26))
        for i in 1 2; do
            c=$(u "$q" 1); q=$((q + 1))
            for ((j = 0; j < c; j++)); do len=$(u "$q" 2); q=$((q + 2 + len)); done
        done
        len=$(u "$q" 4); p=$((q + 4 + len))
    done
    echo "$p"
}

packets_broken() {  # packets_broken NAME PACKET FIELD-OFFSET BYTES(printf) FIELD
    begin "$1" || return
    local at
    (cd "$D" && timeout -s KILL 60 "$ENCLAB" convert --to packets "$FX/s.264" s.pkt) >/dev/null 2>&1
    [ -s "$D/s.pkt" ] || { bad "setup: no packets"; finish; return; }
    at=$(packet_offset "$D/s.pkt" "$2")
    # shellcheck disable=SC2059
    printf "$4" | dd of="$D/s.pkt" bs=1 seek=$((at + $3)) conv=notrunc status=none
    enclab 60 inspect s.pkt
    expect 0 && stderr_has "packet $2 at byte $at: $5" "packet $2, its byte and $5"
    enclab 60 inspect --strict s.pkt
    expect 65 && stderr_has "packet $2 at byte $at: $5" "packet $2, its byte and $5 under --strict"
    EXPECTED="0,65"
    finish
}

# ---------------------------------------------------------------------------------------------------------------
# 13. merge of damaged inputs: a copy of a good database edited with sqlite3, merged after the good one. A done run
# whose rows are damaged is stored failed (error `damaged: ...`, no rows); a runs row the schema refuses is 65.

# merge_setup: a.sqlite (one done run of the tiny clip, all in its main file) and its copy d.sqlite, in $D.
merge_setup() {
    make_db a.sqlite OUT
    timeout -s KILL 20 sqlite3 "$D/a.sqlite" 'PRAGMA wal_checkpoint(TRUNCATE);' >/dev/null 2>&1
    cp "$D/a.sqlite" "$D/d.sqlite"
}

merge_damaged() {  # merge_damaged NAME SQL STDERR-TEXT
    begin "merge-damaged-$1" || return
    merge_setup
    timeout -s KILL 20 sqlite3 "$D/d.sqlite" "$2" >/dev/null 2>&1
    enclab 60 merge m.sqlite a.sqlite d.sqlite
    expect 0
    stderr_has "$3" "what is damaged"
    local got; got=$(sql "$D/m.sqlite" "SELECT group_concat(status || ':' || (coalesce(error, '') LIKE 'damaged: run 1 of d.sqlite%'), ' ') FROM (SELECT * FROM runs ORDER BY run_id)")
    if [ "$got" = "done:0 failed:1" ]; then ok "the intact run done, the damaged one failed"; else bad "runs '$got'"; fi
    got=$(sql "$D/m.sqlite" "SELECT count(*) FROM frames WHERE run_id = 2")
    [ "$got" = 0 ] && ok "no rows of the damaged run" || bad "'$got' frames rows of the damaged run"
    finish
}

merge_refused() {  # a run key that is not 64 hex digits, written past the CHECK: 65, no OUT, no temporary file
    begin merge-refused-run-key || return
    merge_setup
    timeout -s KILL 20 sqlite3 "$D/d.sqlite" "PRAGMA ignore_check_constraints = 1; UPDATE runs SET run_key = 'xyz'" >/dev/null 2>&1
    enclab 60 merge m.sqlite a.sqlite d.sqlite
    expect 65
    stderr_has "d.sqlite: run 1" "the input and run"
    [ ! -e "$D/m.sqlite" ] && ok "no m.sqlite" || bad "m.sqlite made"
    if compgen -G "$D/.m.sqlite.merge-*" >/dev/null; then bad "a temporary file is left"; else ok "no temporary file"; fi
    finish
}

merge_repeatable_stored() {  # a stored repeatable 0 on a run of one thread without VBV: worked out again, a conflict
    begin merge-repeatable-stored || return
    merge_setup
    timeout -s KILL 20 sqlite3 "$D/d.sqlite" "UPDATE runs SET repeatable = 0, bytes = bytes + 1; UPDATE frames SET size_bytes = size_bytes + 1 WHERE coded_index = 0" >/dev/null 2>&1
    enclab 60 merge m.sqlite a.sqlite d.sqlite
    expect 0
    local got; got=$(sql "$D/m.sqlite" "SELECT group_concat(status || ':' || repeatable, ' ') FROM (SELECT * FROM runs ORDER BY run_id)")
    if [ "$got" = "done:1 failed:1" ]; then ok "repeatable 1, the other rows a conflict"; else bad "runs '$got' (status:repeatable)"; fi
    finish
}

# ---------------------------------------------------------------------------------------------------------------

inject_clbin; inject_out; inject_clip_name; inject_experiment; inject_apostrophe
reader_image_sequence; reader_playlist hls; reader_playlist ffconcat; out_tilde
value_misread crf-nan --crf nan; value_misread keyint-wraps --keyint 2147483648
plot_not_enclab; plot_damaged_values
path_colon; path_concat; path_out_colon
trap_sar trap-sar-width 3000000000:1; trap_sar trap-sar-height 1:99999999999
trap_option trap-frames --frames; trap_option trap-seek --seek; trap_experiment_frames
hang_long preset; hang_long tune; hang_long profile
accepted preset-number --preset 5; accepted preset-uppercase --preset MEDIUM; accepted tune-list --tune film,fastdecode
hang_fifo y4m; hang_fifo mp4
db_locked; sigint_checks; grid_million
db_readonly_mount; db_text_file; db_foreign_sqlite; db_corrupt
out_readonly mount-point; out_readonly new-folder; out_disk_full; out_regular_file
convert_to_directory; mp4_undecodable; sigint_encode
perm_out_unwritable; perm_db_unwritable
missing_tool ffmpeg; missing_tool gnuplot
mp4_cut
inspect_forbidden inspect-forbidden-bit 0; inspect_forbidden inspect-forbidden-bit-strict 65 --strict
for rep in 1 2 3 4 5 6; do two_writers "$rep"; done
link_plot_files; link_plot_run_folder; link_run_rd; link_settle
done_missing_plots; done_no_frames; sweep_disk_full
db_device /dev/null; db_device /dev/full; readonly_readers
plot_beside_sweep; plot_beside_plot

# ---------------------------------------------------------------------------------------------------------------
# 14. Issue 17's kinds: messages that keep their subject, stored nonsense refused, names that are not UTF-8,
# experiment files read strictly, refused work that leaves nothing, input that changes while read, signals at start.

subject_unknown_flag() {  # an unknown x264 flag without '=' (before a clip, after it): named as unknown
    begin "subject-unknown-flag-$1" || return
    if [ "$1" = last ]; then enclab 60 encode "$FX/tiny.y4m" --frobnicate --db db.sqlite --out OUT
    else enclab 60 encode --frobnicate "$FX/tiny.y4m" --db db.sqlite --out OUT; fi
    expect 64; stderr_has "unknown setting 'frobnicate'" "the flag as unknown"
    [ ! -e "$D/db.sqlite" ] && ok "no database" || bad "database made"
    finish
}

subject_long_path() {  # a 700-character path: the reason after it survives the 500-character cut
    begin subject-long-path || return
    local p i; p=""
    for i in a b c d e f; do p="$p$(head -c 120 /dev/zero | tr '\0' "$i")/"; done
    enclab 60 encode "${p}missing.y4m" --threads 1 --db db.sqlite --out OUT
    expect 66
    if tail -n 1 "$ERR" | grep -q "missing.y4m: no such file$"; then ok "reason kept"; else bad "reason lost"; fi
    finish
}

subject_tcfile_far() {  # a timecode time past 2^59 us: 65 naming the file and line
    begin subject-tcfile-far || return
    { echo "# timecode format v2"; echo 0; echo 40; for i in $(seq 0 10); do echo $((576460752303424 + i * 40)); done; } >"$D/far.txt"
    enclab 60 encode "$FX/tiny.y4m" --threads 1 --tcfile-in far.txt --db db.sqlite --out OUT
    expect 65; stderr_has "far.txt: line 4:" "the file and line"; no_rows "$D/db.sqlite"; finish
}

nonsense_psnr() {  # nonsense_psnr text|blob: a PSNR that is not a number: plot refuses it naming the run
    begin "nonsense-psnr-$1" || return
    make_db db.sqlite OUT
    local v="'abc'"; [ "$1" = blob ] && v="X'00ff'"
    sqlite3 "$D/db.sqlite" "UPDATE frames SET psnr_y = $v WHERE coded_index = 1" 2>/dev/null
    enclab 60 plot --db db.sqlite --out P
    expect 65; stderr_has "run 1, frame 1 in coded order: column psnr_y" "run, frame and column"; finish
}

nonsense_pts() {  # an INT64_MAX PTS in a stored run: check --run refuses it, no negative span
    begin nonsense-pts-int64-max || return
    make_db db.sqlite OUT
    sqlite3 "$D/db.sqlite" "UPDATE frames SET pts = 9223372036854775807 WHERE coded_index = 1" 2>/dev/null
    enclab 60 check --db db.sqlite --run 1 --expect AllowFrameReordering=true
    expect 65; stderr_has "run 1: frame coded_index 1: pts 9223372036854775807" "run, frame and value"; finish
}

name_not_utf8() {  # name_not_utf8 db|clip: bytes that are not UTF-8: 64 naming them, nothing made
    begin "name-not-utf8-$1" || return
    local odd; odd=$(printf 'x\377')
    if [ "$1" = db ]; then enclab 60 encode "$FX/tiny.y4m" --threads 1 --db "$odd.sqlite" --out OUT
    else cp "$FX/tiny.y4m" "$D/$odd.y4m"; enclab 60 encode "$odd.y4m" --threads 1 --db db.sqlite --out OUT; fi
    expect 64; stderr_has 'x\xFF' "the bytes, escaped"
    local n; n=$(find "$D" -mindepth 1 | wc -l)
    if [ "$n" = "$([ "$1" = db ] && echo 0 || echo 1)" ]; then ok "nothing made"; else bad "$n files in the case folder"; fi
    finish
}

experiment_strict() {  # experiment_strict NAME JSON TEXT: refused with 64 naming TEXT
    begin "experiment-$1" || return
    printf '%s\n' "$2" >"$D/exp.json"
    enclab 60 run exp.json --db db.sqlite --out OUT
    expect 64; stderr_has "$3" "$3"; no_rows "$D/db.sqlite"; finish
}

leftovers_refused_db() {  # a database that is not the lab's: the --out folders made for it are removed
    begin leftovers-refused-db || return
    echo "notes" >"$D/notes.sqlite"
    enclab 60 encode "$FX/tiny.y4m" --threads 1 --db notes.sqlite --out NEW/deeper
    expect 65
    [ ! -e "$D/NEW" ] && ok "no NEW folder" || bad "NEW left behind"
    finish
}

leftovers_refused_run() {  # a run refused (its folder is another database's): the new database is removed
    begin leftovers-refused-run || return
    make_db db.sqlite OUT
    enclab 60 encode "$FX/tiny.y4m" --threads 1 --db other.sqlite --out OUT
    expect 64
    [ ! -e "$D/other.sqlite" ] && ok "no other.sqlite" || bad "other.sqlite left behind"
    finish
}

input_changes() {  # input_changes truncate|rewrite: the clip changes during the encode: 65, no done row
    begin "input-changes-$1" || return
    local i header frame size no_done
    ff -f lavfi -i testsrc2=size=320x240:rate=25 -frames:v 250 -pix_fmt yuv420p "$D/clip.y4m"
    header=$(head -n 1 "$D/clip.y4m" | wc -c); frame=$((6 + 320 * 240 * 3 / 2))
    start_bg 120 "$ENCLAB" encode clip.y4m --threads 1 --preset veryslow --db db.sqlite --out OUT
    for i in $(seq 300); do   # until the run is encoding: its temporary folder holds stream bytes
        compgen -G "$D/OUT/.tmp-*/stream.264" >/dev/null && [ -s "$(compgen -G "$D/OUT/.tmp-*/stream.264" | head -n 1)" ] && break
        kill -0 "$BG" 2>/dev/null || break
        sleep 0.05
    done
    if [ "$1" = truncate ]; then truncate -s $((header + 200 * frame)) "$D/clip.y4m"
    else   # frame 0's picture (read already) becomes black: the same size, other bytes
        size=$(stat -c %s "$D/clip.y4m")
        head -c "$((frame - 6))" /dev/zero | dd of="$D/clip.y4m" bs=1M seek="$((header + 6))" oflag=seek_bytes conv=notrunc status=none
        [ "$(stat -c %s "$D/clip.y4m")" = "$size" ] || bad "setup: size changed"; fi
    wait_bg
    expect 65; no_done=$(rows "$D/db.sqlite" "status='done'")
    if [ "$no_done" = 0 ]; then ok "no done row"; else bad "$no_done done rows"; fi
    finish
}

signal_at_start() {  # signal_at_start INT|TERM: the signal as soon as the process has taken it over, 20 times: 130
    begin "signal-at-start-$1" || return
    local k pid i mask got=""
    # 250 frames, not tiny.y4m's 5: a run of 5 frames can end (exit 0, done) before child_of, which looks every 0.1 s,
    # has found the process (seen once in 20 after the store's commits stopped syncing).
    [ -f "$FX/start.y4m" ] || ff -f lavfi -i testsrc=size=64x48:rate=25 -frames:v 250 -pix_fmt yuv420p "$FX/start.y4m"
    for k in $(seq 20); do
        start_bg 60 "$ENCLAB" encode "$FX/start.y4m" --threads 1 --crf $((20 + k)) --db db.sqlite --out OUT
        pid=$(child_of "$BG")
        for i in $(seq 20000); do   # SigCgt or SigIgn holding signals 2 and 15 (bits 1 and 14)
            mask=$(awk '/^Sig(Cgt|Ign):/ { print $2 }' "/proc/$pid/status" 2>/dev/null | { read -r a; read -r b; echo $((0x${a:-0} | 0x${b:-0})); })
            [ $((mask & 0x4002)) = $((0x4002)) ] && break
            kill -0 "$pid" 2>/dev/null || break
        done
        kill "-$1" "$pid" 2>/dev/null
        wait_bg
        # 130 from the shell is also a death by SIGINT (128 + 2): only enclab's own exit says so on stderr.
        if grep -q "^enclab: interrupted by SIG$1\$" "$ERR"; then got="$got $ST"; else got="$got $ST(no-message)"; fi
    done
    ST=$(tr ' ' '\n' <<<"$got" | sed '/^$/d' | sort | uniq -c | awk '{ printf "%s%sx%s", (NR > 1 ? "," : ""), $1, $2 }')
    EXPECTED="20x130"
    [ "$ST" = "20x130" ] && ok "130 with its message every time" || bad "exits:$got"
    finish
}

subject_unknown_flag last; subject_unknown_flag first; subject_long_path; subject_tcfile_far
nonsense_psnr text; nonsense_psnr blob; nonsense_pts
name_not_utf8 db; name_not_utf8 clip
experiment_strict duplicate-key '{"name": "d", "clips": ["'"$FX"'/tiny.y4m"], "grid": {"crf": [20], "crf": [30]}}' "key 'crf' is given twice in 'grid'"
experiment_strict description-number '{"name": "d", "clips": ["'"$FX"'/tiny.y4m"], "description": 5}' "key 'description' must be a string"
experiment_strict empty-clip '{"name": "d", "clips": [""]}' "path 1 is empty"
leftovers_refused_db; leftovers_refused_run
input_changes truncate; input_changes rewrite
signal_at_start INT; signal_at_start TERM
stream_zeros stream-zeros-inspect 16 inspect; stream_zeros stream-zeros-convert 16 convert
stream_zeros stream-zeros-256m 256 inspect; stream_lone_start_code; stream_start_codes; stream_many_empty
packets_broken packets-idr-flag 1 1 '\001' flags; packets_broken packets-decode-order 2 9 '\007' decode_order
packets_broken packets-dts-after-pts 1 18 '\177\377\377\377\377\377\377\377' dts_us
merge_damaged size-text "UPDATE frames SET size_bytes = 'abc' WHERE coded_index = 3" "size_bytes is the text 'abc', not an integer"
merge_damaged size-blob "UPDATE frames SET size_bytes = x'0102' WHERE coded_index = 3" "size_bytes is a BLOB, not an integer"
merge_damaged no-frames "DELETE FROM frames" "it has no frames"
merge_damaged schema "PRAGMA ignore_check_constraints = 1; UPDATE frames SET sse_y = -1 WHERE coded_index = 3" "CHECK constraint failed: sse_y >= 0"
merge_damaged bytes-text "UPDATE runs SET bytes = 'lots'" "runs.bytes is the text 'lots', not an integer"
merge_damaged width-real "UPDATE runs SET width = 1.5" "runs.width is the real 1.5, not an integer"
merge_damaged duration-blob "UPDATE runs SET duration_s = x'00'" "runs.duration_s is a BLOB, not a number"
merge_damaged settings-json "UPDATE runs SET settings = '{not json'" "runs.settings is the text '{not json', not a JSON object"
merge_refused; merge_repeatable_stored

[ "$FAILED" -eq 0 ] || echo "failed: ${FAILED_NAMES[*]}"
echo "faults: $PASSED passed, $FAILED failed, $SKIPPED skipped"
[ "$FAILED" -eq 0 ]

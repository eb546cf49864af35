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
    enclab 60 encode "$FX/tiny.y4m" --threads 1 --opencl-clbin "$INJECT" --db db.sqlite --out OUT
    expect 0; plots "$D/db.sqlite"; no_pwned; finish
}

inject_out() {
    begin inject-out || return
    local out="o';system('touch PWNED');'"
    enclab 60 encode "$FX/tiny.y4m" --threads 1 --db db.sqlite --out "$out"
    expect 0; plots "$D/db.sqlite"; no_pwned; finish
}

inject_clip_name() {
    begin inject-clip-name || return
    local clip=$'a\nsystem "touch PWNED"\n#.y4m'
    cp "$FX/tiny.y4m" "$D/$clip"
    enclab 60 encode "$clip" --threads 1 --db db.sqlite --out OUT
    expect 0; plots "$D/db.sqlite"; no_pwned; finish
}

inject_experiment() {
    begin inject-experiment || return
    cp "$FX/tiny.y4m" "$D/tiny.y4m"
    cat >"$D/exp.json" <<'EOF'
{"name": "inject", "clips": ["tiny.y4m"], "base": {"threads": 1},
 "grid": {"opencl-clbin": ["x\nsystem \"touch PWNED\"\n#"]}}
EOF
    enclab 60 run exp.json --db db.sqlite --out OUT
    expect 0; plots "$D/db.sqlite"
    if [ -s "$D/OUT/rd.png" ]; then ok "rd.png drawn"; else bad "no rd.png"; fi
    no_pwned; finish
}

inject_apostrophe() {
    begin inject-apostrophe || return
    enclab 60 encode "$FX/tiny.y4m" --threads 1 --db db.sqlite --out "John's clips"
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
    run 60 env PATH="$D/bin" "$ENCLAB" encode "$FX/tiny.y4m" --threads 1 --db db.sqlite --out OUT
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
    enclab 60 encode "$FX/tiny.y4m" --threads 1 --db db.sqlite --out '~'
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
# 11. merge of damaged inputs: a copy of a good database edited with sqlite3, merged after the good one. A done run
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

#!/usr/bin/env bash
# Crash-safe resume (issue 12, item 2): kills a sweep with SIGKILL at random moments and checks, each time, that
# what was recorded is whole and that running the sweep again completes it with the rows of an uninterrupted sweep.
#
#   ENCLAB=/path/to/enclab bash scripts/kill-resume.sh [TRIALS]
#
# ENCLAB defaults to .build/debug/enclab (built with `swift build` when missing); TRIALS defaults to 20. The sweep
# is 6 runs (crf 20/30/40 x bframes 0/2, threads 1, so the bytes repeat) of a 64x48 clip of 240 frames (preset medium: the runs, not the plots drawn at the end, fill the sweep's time) made with
# ffmpeg's testsrc; trials alternate --jobs 2 and --jobs 1. First an uninterrupted sweep (--jobs 1) gives the
# reference and its wall time T; then each trial starts a fresh sweep, kills it with SIGKILL after a random delay
# in [0, T), and checks with sqlite3:
#   - PRAGMA integrity_check says ok (when the database was made at all);
#   - every stored run is done and has all its rows (frames count = runs.frames, its parameter sets and checks);
#   - every run folder under its final name (16 hex digits) belongs to a done run;
# then runs the sweep again and checks that it ends 0, holds each run key once, done, leaves no temporary
# folder, and that every done run's rows in every table with a run_id column, keyed by run key, equal the
# reference's. One line per trial; exits 1 when any trial failed. Not part of scripts/test.sh (about 3 minutes).
set -u
cd "$(dirname "$0")/.." || exit 2
REPO=$PWD
TRIALS=${1:-20}
ENCLAB=${ENCLAB:-$REPO/.build/debug/enclab}
if [ ! -x "$ENCLAB" ]; then
    echo "kill-resume: building $ENCLAB (swift build)"
    timeout -s KILL 1800 swift build 2>&1 | grep -E "error|warning:"
fi
[ -x "$ENCLAB" ] || { echo "kill-resume: no enclab binary at $ENCLAB" >&2; exit 2; }
for tool in ffmpeg sqlite3 gnuplot timeout; do
    command -v "$tool" >/dev/null || { echo "kill-resume: $tool is needed" >&2; exit 2; }
done

ROOT=$(mktemp -d /tmp/enclab-kill-resume.XXXXXX)
trap 'rm -rf "$ROOT"' EXIT
cd "$ROOT" || exit 2
ffmpeg -v error -f lavfi -i testsrc=size=64x48:rate=25 -frames:v 240 -pix_fmt yuv420p c.y4m || exit 2
cat > kr.json <<'JSON'
{"name": "kr", "clips": ["c.y4m"], "base": {"threads": 1, "preset": "medium"}, "grid": {"crf": [20, 30, 40], "bframes": [0, 2]}}
JSON

# Every done run's rows, by run key: runs (key, status, frames, bytes, settings), then each table with a run_id
# column, run_id replaced by the run's key; sorted.
. "$REPO/scripts/rows-by-key.sh"

start=$(date +%s%N)
timeout -s KILL 600 "$ENCLAB" run kr.json --jobs 1 --db ref.sqlite --out ref >/dev/null 2>ref.err \
    || { echo "kill-resume: the reference sweep failed: $(cat ref.err)" >&2; exit 1; }
span_ms=$(( ($(date +%s%N) - start) / 1000000 ))
rows_by_key ref.sqlite > ref.rows
runs=$(sqlite3 ref.sqlite "SELECT count(*) FROM runs WHERE status = 'done'")
echo "reference: $runs runs in $span_ms ms, $(wc -l < ref.rows) rows"

failed=0
for trial in $(seq 1 "$TRIALS"); do
    dir=trial$trial
    mkdir "$dir" && cp c.y4m kr.json "$dir/"
    jobs=$(( trial % 2 == 1 ? 2 : 1 ))
    delay_ms=$(( (RANDOM * 32768 + RANDOM) % span_ms ))
    ( cd "$dir" && exec "$ENCLAB" run kr.json --jobs $jobs --db k.sqlite --out k >/dev/null 2>&1 ) &
    pid=$!
    sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
    kill -KILL $pid 2>/dev/null
    wait $pid 2>/dev/null
    problems=()
    done_before=0
    if [ -f "$dir/k.sqlite" ]; then
        integrity=$(sqlite3 "$dir/k.sqlite" "PRAGMA integrity_check" 2>&1)
        [ "$integrity" = ok ] || problems+=("integrity_check: $integrity")
        # The schema may not be there yet when the kill came while the database was being made.
        if [ "$(sqlite3 "$dir/k.sqlite" "SELECT count(*) FROM sqlite_master WHERE name = 'runs'")" = 1 ]; then
            done_before=$(sqlite3 "$dir/k.sqlite" "SELECT count(*) FROM runs WHERE status = 'done'")
            partial=$(sqlite3 "$dir/k.sqlite" "SELECT count(*) FROM runs r WHERE status != 'done'
                OR frames != (SELECT count(*) FROM frames f WHERE f.run_id = r.run_id)
                OR NOT EXISTS (SELECT 1 FROM parameter_sets p WHERE p.run_id = r.run_id)
                OR NOT EXISTS (SELECT 1 FROM bitstream_checks b WHERE b.run_id = r.run_id)")
            [ "$partial" = 0 ] || problems+=("$partial incomplete or not done runs after the kill")
            for folder in $(ls "$dir/k" 2>/dev/null | grep -E '^[0-9a-f]{16}$'); do
                n=$(sqlite3 "$dir/k.sqlite" "SELECT count(*) FROM runs WHERE status = 'done' AND substr(run_key, 1, 16) = '$folder'")
                [ "$n" = 1 ] || problems+=("folder $folder has no done run")
            done
        fi
    fi
    if ! ( cd "$dir" && timeout -s KILL 600 "$ENCLAB" run kr.json --jobs $jobs --db k.sqlite --out k >rerun.out 2>rerun.err ); then
        problems+=("rerun failed: $(tail -1 "$dir/rerun.err")")
    else
        counts=$(sqlite3 "$dir/k.sqlite" "SELECT count(*), count(DISTINCT run_key), sum(status = 'done') FROM runs")
        [ "$counts" = "$runs|$runs|$runs" ] || problems+=("after the rerun: runs, keys, done = $counts")
        leftovers=$(ls -A "$dir/k" | grep -c '^\.tmp-')
        [ "$leftovers" = 0 ] || problems+=("$leftovers temporary folders left")
        rows_by_key "$dir/k.sqlite" > "$dir/k.rows"
        cmp -s ref.rows "$dir/k.rows" || problems+=("rows differ from the uninterrupted sweep's")
    fi
    if [ ${#problems[@]} -eq 0 ]; then
        echo "trial $trial  jobs=$jobs  killed at ${delay_ms} ms  done before=$done_before  PASS"
    else
        failed=$((failed + 1))
        echo "trial $trial  jobs=$jobs  killed at ${delay_ms} ms  done before=$done_before  FAIL  (${problems[*]})"
    fi
    rm -rf "$dir"
done
echo "kill-resume: $((TRIALS - failed)) passed, $failed failed"
[ $failed -eq 0 ]

#!/usr/bin/env bash
# Scale benchmarks of issue 12 item 6 (a benchmark, not a test): times are printed and appended to results/scale.md.
#
#   bash bench/report-scale.sh report   # `enclab report` over a database of >= 1,000,000 frame rows
#   bash bench/report-scale.sh sweep    # a 500-run sweep on fixtures/carphone_pristine.mp4, then its report
#   bash bench/report-scale.sh page     # a run page of 10,000 frames: its weight and its draw time in chromium
#   bash bench/report-scale.sh compare  # the report over ROWS frame rows, today's build against BASELINE, interleaved
#   bash bench/report-scale.sh db       # only make the database of report and compare (kept in WORK for the next)
#   bash bench/report-scale.sh all      # report and sweep (the default)
#
# report: a small carphone experiment (8 runs, 120 frames each, threads 1, --jobs 2) is run, then sqlite3 copies its
# runs and every row of every table holding a run_id under new run ids and new run keys (the first 56 hex digits of
# the original key, then the copy's number in 8) until `frames` has at least ROWS rows (1,000,000 by default); then
# `enclab report --db ... --worst 5 --best 5` is timed (one experiment: 10 run pages). The copies keep the original
# stream and clip paths, so their run pages find their files.
# compare (issue 19, Bench): the same database as `report`; ROUNDS (5 by default) rounds, each timing `enclab report
# --worst 5 --best 5` once with ENCLAB (today's report: interactive run and experiment pages) and once with BASELINE (an
# enclab binary of another commit, e.g. the static report of e13105a^, built with `git archive e13105a^ | tar -x -C
# DIR && swift build -c release --product enclab` in DIR), the two in turn and in alternating order; the medians, their
# ratio (today / baseline; the issue asks at most 1.3) and every round go to results/scale.md. BASELINE_LABEL names it.
# sweep: 10 bitrates x 5 keyints x 10 bframes counts (abr, threads 1, preset medium) = 500 runs with `enclab run
# --jobs 2`; wall time, database size and the report's time are recorded.
#
# page: one carphone run (120 frames, abr 300 kbit/s with a VBV) whose frames sqlite3 repeats, PTS and DTS shifted by
# the run's span each time, into a run of PAGE_FRAMES frames (10,000 by default); `enclab report --runs 1` writes its
# page, and scripts/report-browser.py --timing loads it 5 times in headless chromium and gives the median time at which
# the last chart was drawn (performance.now(), from navigation start). The page's bytes (the HTML with its chart data;
# the gnuplot pictures are files beside it) and the draw time go to results/scale.md.
#
# Environment: ENCLAB (default .build/release/enclab, built here with `swift build -c release` when missing), WORK (the
# scratch folder, default /tmp/enclab-scale), ROWS (frame rows wanted), REPORT_ARGS (extra report flags), LABEL (a
# word written beside the times in results/scale.md, e.g. "before"/"after"), PAGE_FRAMES (page), and for compare
# BASELINE (the other enclab binary), BASELINE_LABEL (its name in results/scale.md) and ROUNDS.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-all}
ENCLAB=${ENCLAB:-.build/release/enclab}
WORK=${WORK:-/tmp/enclab-scale}
ROWS=${ROWS:-1000000}
LABEL=${LABEL:-}
CLIP=$PWD/fixtures/carphone_pristine.mp4
RESULTS=results/scale.md
[ -f "$CLIP" ] || { echo "no $CLIP: run bash scripts/fixtures.sh first" >&2; exit 66; }
if [ ! -x "$ENCLAB" ]; then timeout 3600 swift build -c release --product enclab; fi
ENCLAB=$(readlink -f "$ENCLAB")
mkdir -p "$WORK"

now() { date +%s.%N; }
seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
bytes() { stat -c %s "$1"; }
mib() { awk -v b="$1" 'BEGIN { printf "%.1f MiB", b / 1048576 }'; }
machine() {
    local cpu; cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
    echo "$cpu, $(nproc) cores, $(awk 'NR == 1 { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo) RAM; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
}
header() {
    if [ ! -f "$RESULTS" ]; then
        cat > "$RESULTS" <<'EOF'
# Scale (issue 12 item 6)

Written by `bash bench/report-scale.sh` (a benchmark, not a test). The machine is a 2-core virtual machine shared
with other builds and tests while these ran: times are wall times of one run each, not medians, and move with the
load shown beside them. The report times are of the release build, `--worst 5 --best 5` (10 run pages per experiment).

EOF
    fi
}

# `enclab report` on DB, timed; prints the seconds. BIN (default ENCLAB) is the binary run.
report() {
    local db=$1 out=$2; shift 2
    rm -rf "$out"
    local t0 t1; t0=$(now)
    "${BIN:-$ENCLAB}" report --db "$db" --out "$out" --worst 5 --best 5 ${REPORT_ARGS:-} "$@" > /dev/null 2> "$WORK/report.err" || {
        cat "$WORK/report.err" >&2; exit 70; }
    t1=$(now)
    seconds "$t0" "$t1"
}

# The database of `report` and `compare` (made once: WORK/report/scale.sqlite.ready marks it done).
report_db() {
    local dir=$WORK/report db=$WORK/report/scale.sqlite
    mkdir -p "$dir"
    if [ ! -f "$db.ready" ]; then
        rm -rf "$dir"/*
        cat > "$dir/scale-small.json" <<EOF
{"name": "scale", "clips": ["$CLIP"], "base": {"threads": 1, "preset": "veryfast", "bframes": 3},
 "grid": {"mode": [{"rc": "crf", "crf": 20}, {"rc": "crf", "crf": 26}, {"rc": "crf", "crf": 32}, {"rc": "crf", "crf": 38},
                   {"rc": "abr", "bitrate": 150}, {"rc": "abr", "bitrate": 300}, {"rc": "abr", "bitrate": 600}, {"rc": "abr", "bitrate": 1200}]}}
EOF
        "$ENCLAB" run "$dir/scale-small.json" --db "$db" --out "$dir/out" --jobs 2 > /dev/null
        local frames runs copies
        frames=$(sqlite3 "$db" "SELECT count(*) FROM frames")
        runs=$(sqlite3 "$db" "SELECT max(run_id) FROM runs")
        copies=$(( (ROWS + frames - 1) / frames - 1 ))
        echo "copying $runs runs ($frames frame rows) $copies times" >&2
        # Every table with a run_id column, parents (runs) first; the columns listed so run_id can be shifted.
        local sql="PRAGMA foreign_keys = OFF; BEGIN;
CREATE TEMP TABLE copies (k INTEGER PRIMARY KEY);
WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < $copies) INSERT INTO copies SELECT k FROM n;"
        local table columns shifted
        for table in runs $(sqlite3 "$db" "SELECT m.name FROM sqlite_master m WHERE m.type = 'table' AND m.name != 'runs'
                                             AND EXISTS (SELECT 1 FROM pragma_table_info(m.name) p WHERE p.name = 'run_id') ORDER BY m.name"); do
            columns=$(sqlite3 "$db" "SELECT group_concat(name, ', ') FROM (SELECT name FROM pragma_table_info('$table') ORDER BY cid)")
            shifted=$(sqlite3 "$db" "SELECT group_concat(CASE name WHEN 'run_id' THEN 'run_id + k * $runs'
                                                          WHEN 'run_key' THEN 'CASE WHEN run_key IS NULL THEN NULL ELSE substr(run_key, 1, 56) || printf(''%08x'', k) END'
                                                          ELSE name END, ', ')
                                     FROM (SELECT name FROM pragma_table_info('$table') ORDER BY cid)")
            sql+="
INSERT INTO $table ($columns) SELECT $shifted FROM $table, copies WHERE run_id <= $runs;"
        done
        sql+="
COMMIT; PRAGMA wal_checkpoint(TRUNCATE); ANALYZE;"
        sqlite3 "$db" "$sql" > /dev/null
        touch "$db.ready"
    fi
}

run_report() {
    local dir=$WORK/report db=$WORK/report/scale.sqlite
    report_db
    local frames runs size secs
    frames=$(sqlite3 "$db" "SELECT count(*) FROM frames")
    runs=$(sqlite3 "$db" "SELECT count(*) FROM runs")
    size=$(bytes "$db")
    local m; m=$(machine)
    secs=$(report "$db" "$dir/rep")
    echo "report over $frames frame rows ($runs runs, $(mib "$size")): $secs s" >&2
    header
    {
        echo "## enclab report over a database of $frames frame rows${LABEL:+ ($LABEL)}"
        echo
        echo "$(date -u +%Y-%m-%d), $m. \`bash bench/report-scale.sh report\`: 8 carphone runs copied to $runs runs"
        echo "(one experiment), \`frames\` $frames rows, database $(mib "$size") ($size bytes)."
        echo
        echo "- \`enclab report --db scale.sqlite --worst 5 --best 5\`: **$secs s** (summary, experiment page, 10 run pages)"
        echo
    } >> "$RESULTS"
}

median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'; }

run_compare() {
    local dir=$WORK/report db=$WORK/report/scale.sqlite rounds=${ROUNDS:-5}
    [ -n "${BASELINE:-}" ] && [ -x "$BASELINE" ] || { echo "compare needs BASELINE=an enclab binary to compare with" >&2; exit 64; }
    local baseline; baseline=$(readlink -f "$BASELINE")
    report_db
    local frames runs size m
    frames=$(sqlite3 "$db" "SELECT count(*) FROM frames")
    runs=$(sqlite3 "$db" "SELECT count(*) FROM runs")
    size=$(bytes "$db")
    m=$(machine)
    local today=() base=() loads=() i t
    for i in $(seq "$rounds"); do
        loads+=("$(cut -d' ' -f1 /proc/loadavg)")
        # Alternating order, so a drift in the machine's load falls on both alike.
        if [ $((i % 2)) -eq 1 ]; then
            t=$(BIN=$ENCLAB report "$db" "$dir/rep-today"); today+=("$t")
            t=$(BIN=$baseline report "$db" "$dir/rep-base"); base+=("$t")
        else
            t=$(BIN=$baseline report "$db" "$dir/rep-base"); base+=("$t")
            t=$(BIN=$ENCLAB report "$db" "$dir/rep-today"); today+=("$t")
        fi
        echo "round $i: today ${today[-1]} s, baseline ${base[-1]} s (load ${loads[-1]})" >&2
    done
    local mt mb ratio wt wb
    mt=$(median "${today[@]}"); mb=$(median "${base[@]}")
    ratio=$(awk -v a="$mt" -v b="$mb" 'BEGIN { printf "%.2f", a / b }')
    wt=$(du -sb "$dir/rep-today" | cut -f1); wb=$(du -sb "$dir/rep-base" | cut -f1)
    echo "today $mt s, baseline $mb s: $ratio x" >&2
    header
    {
        echo "## enclab report over $frames frame rows, today's against ${BASELINE_LABEL:-$BASELINE}, interleaved"
        echo
        echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $m. \`ROUNDS=$rounds BASELINE=... bash bench/report-scale.sh compare\`: the database"
        echo "of \`report\` ($runs runs, one experiment, $(mib "$size")), \`enclab report --worst 5 --best 5\` (10 run pages), the two"
        echo "binaries in turn, alternating which goes first; load average (1 min) at each round's start: ${loads[*]}."
        echo
        echo "| report | median s | rounds (s) | report folder |"
        echo "|---|---|---|---|"
        echo "| today (interactive pages) | $mt | ${today[*]} | $(mib "$wt") |"
        echo "| ${BASELINE_LABEL:-baseline} | $mb | ${base[*]} | $(mib "$wb") |"
        echo
        echo "- today / baseline: **$ratio x** (medians; the issue asks at most 1.3)"
        echo
    } >> "$RESULTS"
}

run_sweep() {
    local dir=$WORK/sweep db=$WORK/sweep/sweep.sqlite
    rm -rf "$dir"; mkdir -p "$dir"
    cat > "$dir/sweep500.json" <<EOF
{"name": "sweep500", "clips": ["$CLIP"], "base": {"threads": 1, "preset": "medium", "rc": "abr"},
 "grid": {"bitrate": [100, 150, 200, 300, 400, 500, 700, 900, 1200, 1600],
          "keyint": [15, 30, 60, 120, 250],
          "bframes": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]}}
EOF
    local m; m=$(machine)
    local t0 t1; t0=$(now)
    "$ENCLAB" run "$dir/sweep500.json" --db "$db" --out "$dir/out" --jobs 2 > "$dir/run.out" 2> "$dir/run.err"
    t1=$(now)
    local wall runs frames size out secs
    wall=$(seconds "$t0" "$t1")
    runs=$(sqlite3 "$db" "SELECT count(*) FROM runs WHERE status = 'done'")
    frames=$(sqlite3 "$db" "SELECT count(*) FROM frames")
    size=$(bytes "$db")
    out=$(du -sb "$dir/out" | cut -f1)
    secs=$(report "$db" "$dir/rep")
    echo "sweep: $runs runs in $wall s, database $(mib "$size"), report $secs s" >&2
    header
    {
        echo "## A 500-run sweep on carphone${LABEL:+ ($LABEL)}"
        echo
        echo "$(date -u +%Y-%m-%d), $m. \`bash bench/report-scale.sh sweep\`: fixtures/carphone_pristine.mp4 (176x144, 120"
        echo "frames), abr, 10 bitrates x 5 keyints x 10 bframes counts, threads 1, preset medium, \`enclab run --jobs 2\`."
        echo
        echo "- wall time of \`enclab run\`: **$wall s** for $runs done runs ($(awk -v w="$wall" -v n="$runs" 'BEGIN { printf "%.2f", w / n }') s a run), plots included"
        echo "- database: $(mib "$size") ($size bytes), $frames frame rows; run folders: $(mib "$out")"
        echo "- \`enclab report --db sweep500.sqlite --worst 5 --best 5\`: **$secs s**"
        echo
    } >> "$RESULTS"
}

run_page() {
    local dir=$WORK/page db=$WORK/page/page.sqlite n=${PAGE_FRAMES:-10000}
    rm -rf "$dir"; mkdir -p "$dir"
    cat > "$dir/page.json" <<EOF
{"name": "page", "clips": ["$CLIP"], "base": {"threads": 1, "preset": "veryfast", "rc": "abr", "bitrate": 300, "vbv-maxrate": 400, "vbv-bufsize": 400}}
EOF
    "$ENCLAB" run "$dir/page.json" --db "$db" --out "$dir/out" > /dev/null
    # Frames 120 ... n-1: copy c of frame k is frame k + 120c, its PTS and DTS shifted by c times the run's span.
    local rest span
    rest=$(sqlite3 "$db" "SELECT group_concat('f.' || name, ', ') FROM (SELECT name FROM pragma_table_info('frames') WHERE cid > 9 ORDER BY cid)")
    span=$(sqlite3 "$db" "SELECT (max(pts) - min(pts)) * 120 / 119 FROM frames WHERE run_id = 1")
    sqlite3 "$db" "BEGIN;
WITH RECURSIVE c(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM c WHERE k < ($n + 119) / 120)
INSERT INTO frames SELECT f.run_id, f.coded_index + 120 * c.k, f.display_index + 120 * c.k, f.type, f.keyframe, f.size_bytes,
    f.header_bytes, f.filler_bytes, f.pts + c.k * $span, f.dts + c.k * $span, $rest
    FROM frames f, c WHERE f.run_id = 1 AND f.coded_index + 120 * c.k < $n;
UPDATE runs SET frames = (SELECT count(*) FROM frames WHERE run_id = 1) WHERE run_id = 1; COMMIT;" > /dev/null
    local frames; frames=$(sqlite3 "$db" "SELECT count(*) FROM frames WHERE run_id = 1")
    local t0 t1; t0=$(now)
    "$ENCLAB" report --db "$db" --out "$dir/rep" --runs 1 > /dev/null 2> "$WORK/page.err" || { cat "$WORK/page.err" >&2; exit 70; }
    t1=$(now)
    local page=$dir/rep/page/run-1/index.html m; m=$(machine)
    local timing; timing=$(/usr/bin/python3 scripts/report-browser.py --timing "$page" | grep "^{" | tail -n 1)
    local draw all
    draw=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["draw_ms"])' "$timing")
    all=$(python3 -c 'import json, sys; print(", ".join(str(x) for x in json.loads(sys.argv[1])["draw_ms_all"]))' "$timing")
    echo "run page of $frames frames: $(bytes "$page") bytes, drawn in $draw ms (report $(seconds "$t0" "$t1") s)" >&2
    header
    {
        echo "## A run page of $frames frames${LABEL:+ ($LABEL)}"
        echo
        echo "$(date -u +%Y-%m-%d), $m. \`bash bench/report-scale.sh page\`: one carphone run (abr 300, VBV 400/400) repeated"
        echo "by sqlite3 to $frames frames; \`enclab report --runs 1\` took $(seconds "$t0" "$t1") s."
        echo
        echo "- page weight: **$(bytes "$page") bytes** (\`run-1/index.html\`, chart data included; assets/ $(du -sb "$dir/rep/assets" | cut -f1) bytes, shared by every page)"
        echo "- draw time in headless chromium $(chromium --version 2>/dev/null | awk '{print $2}'): **$draw ms** to the last chart drawn (median of 5 loads: $all ms)"
        echo
    } >> "$RESULTS"
}

case $mode in
    report) run_report ;;
    compare) run_compare ;;
    db) report_db ;;
    sweep) run_sweep ;;
    page) run_page ;;
    all) run_report; run_sweep ;;
    *) echo "usage: bash bench/report-scale.sh [report|compare|db|sweep|page|all]" >&2; exit 64 ;;
esac

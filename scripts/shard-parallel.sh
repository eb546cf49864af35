#!/usr/bin/env bash
# Shards on GNU parallel (issue 12, item 3), for real on this machine: a 6-run sweep split into 3 shards run by
# GNU parallel on localhost (`--sshlogin :`, the local login, so the command line is the one a cluster of ssh hosts
# takes; shard number `{#}`), each into its own database and folder, merged with `enclab merge`, and checked with
# sqlite3 against the same sweep run unsharded: each run key once, done, and every done run's rows in every table
# with a run_id column, keyed by run key, equal.
#
#   ENCLAB=/path/to/enclab bash scripts/shard-parallel.sh
#
# Needs GNU parallel (`apt-get install parallel`), ffmpeg, sqlite3, gnuplot. Not part of scripts/test.sh. Exits 1
# when a check fails. About 30 seconds.
set -u
cd "$(dirname "$0")/.." || exit 2
REPO=$PWD
ENCLAB=${ENCLAB:-$REPO/.build/debug/enclab}
if [ ! -x "$ENCLAB" ]; then
    echo "shard-parallel: building $ENCLAB (swift build)"
    timeout -s KILL 1800 swift build 2>&1 | grep -E "error|warning:"
fi
[ -x "$ENCLAB" ] || { echo "shard-parallel: no enclab binary at $ENCLAB" >&2; exit 2; }
for tool in parallel ffmpeg sqlite3 gnuplot; do
    command -v "$tool" >/dev/null || { echo "shard-parallel: $tool is needed (apt-get install $tool)" >&2; exit 2; }
done
export ENCLAB

ROOT=$(mktemp -d /tmp/enclab-shard-parallel.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$ROOT"' EXIT
cd "$ROOT" || exit 2
ffmpeg -v error -f lavfi -i testsrc=size=64x48:rate=25 -frames:v 12 -pix_fmt yuv420p c.y4m || exit 2
cat > sp.json <<'JSON'
{"name": "sp", "clips": ["c.y4m"], "base": {"threads": 1, "preset": "ultrafast"}, "grid": {"crf": [20, 30, 40], "bframes": [0, 2]}}
JSON

. "$REPO/scripts/rows-by-key.sh"

failed=0
check() { if [ "$2" = "$3" ]; then echo "PASS  $1"; else echo "FAIL  $1: got '$2', expected '$3'"; failed=1; fi; }

"$ENCLAB" run sp.json --jobs 2 --db whole.sqlite --out whole >/dev/null 2>whole.err \
    || { echo "shard-parallel: the unsharded sweep failed: $(cat whole.err)" >&2; exit 1; }
runs=$(sqlite3 whole.sqlite "SELECT count(*) FROM runs WHERE status = 'done'")

# Three shards, all at once on the local login (--sshlogin 3/: : up to 3 jobs on ':', this machine).
parallel --sshlogin 3/: --workdir "$ROOT" --halt now,fail=1 \
    '"$ENCLAB" run sp.json --shard {#}/3 --jobs 1 --db shard-{#}.sqlite --out shard-{#} >shard-{#}.out 2>shard-{#}.err' ::: a b c
check "parallel ran 3 shards" "$?" 0
for k in 1 2 3; do
    check "shard $k/3 holds 2 runs" "$(sqlite3 shard-$k.sqlite "SELECT count(*) FROM runs WHERE status = 'done'")" 2
done
check "the shards' keys are disjoint and cover the sweep" \
    "$(for k in 1 2 3; do sqlite3 shard-$k.sqlite "SELECT run_key FROM runs"; done | LC_ALL=C sort | uniq | tr '\n' ' ')" \
    "$(sqlite3 whole.sqlite "SELECT run_key FROM runs" | LC_ALL=C sort | tr '\n' ' ')"

"$ENCLAB" merge merged.sqlite shard-1.sqlite shard-2.sqlite shard-3.sqlite >merge.out 2>merge.err
check "merge exit status" "$?" 0
check "merged.sqlite was written" "$([ -s merged.sqlite ] && echo yes || echo no)" yes
check "merge summary" "$(tail -1 merge.out)" "merged.sqlite: $runs runs from 3 databases (0 already there left out, 0 conflicts)"
check "merged: runs, distinct keys, done" "$(sqlite3 merged.sqlite "SELECT count(*), count(DISTINCT run_key), sum(status = 'done') FROM runs")" "$runs|$runs|$runs"
check "merged: integrity_check" "$(sqlite3 merged.sqlite "PRAGMA integrity_check")" ok
check "merged: foreign_key_check" "$(sqlite3 merged.sqlite "PRAGMA foreign_key_check")" ""
rows_by_key whole.sqlite > whole.rows
rows_by_key merged.sqlite > merged.rows
check "merged rows by run key equal the unsharded sweep's ($(wc -l < whole.rows) rows)" "$(cmp -s whole.rows merged.rows; echo $?)" 0
exit $failed

#!/usr/bin/env bash
# Shards on Slurm (issue 12, item 3), for real on this machine: the 6-run sweep of scripts/shard-parallel.sh split
# into 3 shards run as a Slurm array job (`sbatch --array=1-3 --wait`; shard number $SLURM_ARRAY_TASK_ID), each into
# its own database and folder on local disk, merged with `enclab merge`, and checked with sqlite3 against the same
# sweep run unsharded: each run key once, done, and every done run's rows in every table with a run_id column,
# keyed by run key, equal.
#
#   ENCLAB=/path/to/enclab bash scripts/shard-slurm.sh        # as root; KEEP=1 keeps the temporary folder
#
# The cluster is one node, this machine, started for the script and stopped at its end: Debian's slurmctld, slurmd,
# slurm-client and munge (installed with apt-get when missing; not the slurm-wlm metapackage). Everything lives under
# a temporary folder: a munge key made with mungekey, munged on its own socket, a slurm.conf (SLURM_CONF) whose
# ClusterName, SlurmctldHost and NodeName are `hostname -s`, with CPUs from nproc, state, spool, log and pid files
# there. No cgroups and no systemd are needed: ProctrackType=proctrack/linuxproc (processes found by parent id),
# TaskPlugin=task/none, JobAcctGatherType=jobacct_gather/none, no accounting; SelectType=select/cons_tres with
# CR_CPU, so one-CPU tasks share the node. The daemons use the usual ports 6817 and 6818 (SLURMCTLD_PORT and
# SLURMD_PORT change them) and must not be taken by another Slurm. Needs root, ffmpeg, sqlite3, gnuplot. Not part
# of scripts/test.sh. Exits 1 when a check fails, 2 when the cluster cannot be set up. About 20 seconds once the
# packages are installed.
set -u
cd "$(dirname "$0")/.." || exit 2
REPO=$PWD
ENCLAB=${ENCLAB:-$REPO/.build/debug/enclab}
if [ ! -x "$ENCLAB" ]; then
    echo "shard-slurm: building $ENCLAB (swift build)"
    timeout -s KILL 1800 swift build 2>&1 | grep -E "error|warning:"
fi
[ -x "$ENCLAB" ] || { echo "shard-slurm: no enclab binary at $ENCLAB" >&2; exit 2; }
ENCLAB=$(cd "$(dirname "$ENCLAB")" && pwd)/$(basename "$ENCLAB")
for tool in ffmpeg sqlite3 gnuplot; do
    command -v "$tool" >/dev/null || { echo "shard-slurm: $tool is needed (apt-get install $tool)" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "shard-slurm: run as root (it installs packages and starts munged, slurmctld, slurmd)" >&2; exit 2; }
missing=
for pkg in munge slurmctld slurmd slurm-client; do
    dpkg-query -W -f '${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || missing="$missing $pkg"
done
if [ -n "$missing" ]; then
    echo "shard-slurm: installing$missing (apt-get)"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing; } >/dev/null \
        || { echo "shard-slurm: apt-get install$missing failed" >&2; exit 2; }
fi
for tool in munged mungekey slurmctld slurmd sbatch sinfo scontrol; do
    command -v "$tool" >/dev/null || { echo "shard-slurm: $tool is missing after installing the packages" >&2; exit 2; }
done
export ENCLAB

ROOT=$(mktemp -d /tmp/enclab-shard-slurm.XXXXXX)
chmod 711 "$ROOT"    # munged wants execute permission for all on its socket's folders
NODE=$(hostname -s)
export SLURM_CONF=$ROOT/slurm/slurm.conf
MUNGE_SOCKET=$ROOT/munge/munge.socket
stop_cluster() {
    # slurmctld and slurmd from their pid files, then munged: only the processes this script started.
    local pidfile pid i
    for pidfile in "$ROOT/slurm/slurmd.pid" "$ROOT/slurm/slurmctld.pid" "$ROOT/munge/munged.pid"; do
        [ -s "$pidfile" ] || continue
        pid=$(cat "$pidfile")
        kill "$pid" 2>/dev/null || continue
        for i in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
        kill -KILL "$pid" 2>/dev/null
    done
}
trap 'stop_cluster; [ -n "${KEEP:-}" ] || rm -rf "$ROOT"' EXIT
trap 'exit 130' INT TERM
cd "$ROOT" || exit 2
mkdir -p munge slurm/state slurm/spool work && chmod 711 munge

# munge: its own key and socket under $ROOT (the system's /etc/munge and /run/munge are left alone).
mungekey --create --keyfile="$ROOT/munge/munge.key" || { echo "shard-slurm: mungekey failed" >&2; exit 2; }
munged --socket="$MUNGE_SOCKET" --key-file="$ROOT/munge/munge.key" --pid-file="$ROOT/munge/munged.pid" \
    --log-file="$ROOT/munge/munged.log" --seed-file="$ROOT/munge/munged.seed" \
    || { echo "shard-slurm: munged did not start: $(tail -3 munge/munged.log 2>/dev/null)" >&2; exit 2; }

cat > "$SLURM_CONF" <<CONF
ClusterName=$NODE
SlurmctldHost=$NODE
SlurmUser=root
SlurmdUser=root
SlurmctldPort=${SLURMCTLD_PORT:-6817}
SlurmdPort=${SLURMD_PORT:-6818}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MUNGE_SOCKET
StateSaveLocation=$ROOT/slurm/state
SlurmdSpoolDir=$ROOT/slurm/spool
SlurmctldPidFile=$ROOT/slurm/slurmctld.pid
SlurmdPidFile=$ROOT/slurm/slurmd.pid
SlurmctldLogFile=$ROOT/slurm/slurmctld.log
SlurmdLogFile=$ROOT/slurm/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
ReturnToService=2
MpiDefault=none
MailProg=/bin/true
NodeName=$NODE CPUs=$(nproc) RealMemory=1024 State=UNKNOWN
PartitionName=main Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
CONF
slurmctld || { echo "shard-slurm: slurmctld did not start: $(tail -3 slurm/slurmctld.log 2>/dev/null)" >&2; exit 2; }
slurmd || { echo "shard-slurm: slurmd did not start: $(tail -3 slurm/slurmd.log 2>/dev/null)" >&2; exit 2; }
# Wait for the node to register (sinfo retries for minutes when slurmctld is gone, hence the timeout).
state=
for i in $(seq 60); do
    kill -0 "$(cat slurm/slurmctld.pid 2>/dev/null)" 2>/dev/null \
        || { echo "shard-slurm: slurmctld stopped: $(tail -3 slurm/slurmctld.log 2>/dev/null)" >&2; exit 2; }
    state=$(timeout 5 sinfo --noheader --nodes="$NODE" --format=%t 2>/dev/null)
    [ "$state" = idle ] && break
    sleep 0.5
done
[ "$state" = idle ] || { echo "shard-slurm: node $NODE is '$state', not idle: $(tail -3 slurm/slurmd.log 2>/dev/null)" >&2; exit 2; }

# The sweep, on local disk under $ROOT/work.
cd work || exit 2
ffmpeg -v error -f lavfi -i testsrc=size=64x48:rate=25 -frames:v 12 -pix_fmt yuv420p c.y4m || exit 2
cat > sp.json <<'JSON'
{"name": "sp", "clips": ["c.y4m"], "base": {"threads": 1, "preset": "ultrafast"}, "grid": {"crf": [20, 30, 40], "bframes": [0, 2]}}
JSON
cat > sp.sbatch <<'SBATCH'
#!/bin/bash
#SBATCH --job-name=sp
#SBATCH --array=1-3
#SBATCH --cpus-per-task=1
#SBATCH --output=slurm-%A_%a.out
N=3; K=$SLURM_ARRAY_TASK_ID
exec "$ENCLAB" run sp.json --shard $K/$N --jobs 1 --db shard-$K.sqlite --out shard-$K
SBATCH

. "$REPO/scripts/rows-by-key.sh"

failed=0
check() { if [ "$2" = "$3" ]; then echo "PASS  $1"; else echo "FAIL  $1: got '$2', expected '$3'"; failed=1; fi; }

"$ENCLAB" run sp.json --jobs 2 --db whole.sqlite --out whole >/dev/null 2>whole.err \
    || { echo "shard-slurm: the unsharded sweep failed: $(cat whole.err)" >&2; exit 1; }
runs=$(sqlite3 whole.sqlite "SELECT count(*) FROM runs WHERE status = 'done'")

# Three shards as one array job; --wait returns when every task has ended, with the highest task exit status.
timeout -s TERM 600 sbatch --wait --chdir="$ROOT/work" sp.sbatch >sbatch.out 2>sbatch.err
check "sbatch --array=1-3 --wait ran 3 shards" "$?" 0
job=$(sed -n 's/^Submitted batch job \([0-9]*\)$/\1/p' sbatch.out)
check "3 array tasks of job $job ran on $NODE" \
    "$(scontrol show job "$job" 2>/dev/null | grep -c "NodeList=$NODE\$" ) $(ls slurm-"${job}"_[123].out 2>/dev/null | wc -l)" "3 3"
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

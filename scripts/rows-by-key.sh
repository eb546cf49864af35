# rows_by_key DB: every done run's rows in every table with a run_id column, keyed by run key (not by the
# database's local ids), sorted: two databases of the same runs give the same lines. Sourced by kill-resume.sh,
# shard-parallel.sh and shard-slurm.sh.
rows_by_key() {
    local db=$1 table columns
    {
    sqlite3 "$db" "SELECT 'runs', run_key, status, frames, bytes, settings FROM runs WHERE status = 'done'"
    for table in $(sqlite3 "$db" "SELECT name FROM sqlite_master m WHERE type = 'table' AND name != 'runs'
                                  AND EXISTS (SELECT 1 FROM pragma_table_info(m.name) WHERE name = 'run_id')"); do
        columns=$(sqlite3 "$db" "SELECT group_concat('t.\"' || name || '\"', ', ') FROM pragma_table_info('$table') WHERE name != 'run_id'")
        sqlite3 "$db" "SELECT '$table', r.run_key, $columns FROM \"$table\" t JOIN runs r USING (run_id) WHERE r.status = 'done'"
    done
    } | LC_ALL=C sort
}

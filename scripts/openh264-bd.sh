#!/usr/bin/env bash
# BD-rate of each configuration of an experiment against one anchor configuration, with the lab's own bd-rate
# (PCHIP), from a database written by 'enclab run' (docs/openh264-findings.md). Two quality columns: psnr_coded
# (run_metrics.psnr_global, the coded pictures only) and psnr_shown (every input picture, a skipped one as the
# previous decoded picture held: skipped_frames.held_sse_*), each against run_metrics.bitrate_kbps.
#
#   bash scripts/openh264-bd.sh results/openh264-webrtc-rd.sqlite 'x264 abr slices=1'
#
# A configuration is named by its encoder, its rate-control mode (x264's rc, OpenH264's iRCMode and frame skip)
# and its slicing (slices=N, or the size limit); runs of one configuration at several bitrates make its curve.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 DB.sqlite 'ANCHOR CONFIGURATION'" >&2; exit 64; }
db=$1 anchor=$2
[ -f "$db" ] || { echo "$0: $db: no such database" >&2; exit 66; }
enclab=${ENCLAB:-$(cd "$(dirname "$0")/.." && pwd)/.build/debug/enclab}
curves=$(sqlite3 -separator '|' "file:$db?mode=ro" "
WITH held AS (SELECT run_id, sum(held_sse_y + held_sse_u + held_sse_v) AS sse, count(*) AS n FROM skipped_frames GROUP BY run_id),
     coded AS (SELECT run_id, sum(sse_y + sse_u + sse_v) AS sse, count(*) AS n FROM frames GROUP BY run_id),
     p AS (SELECT coalesce(json_extract(r.settings, '\$.encoder.name'), 'x264') || ' '
                  || coalesce(json_extract(r.settings, '\$.axes.mode.iRCMode') || ' skip=' || json_extract(r.settings, '\$.axes.mode.bEnableFrameSkip'),
                              json_extract(r.settings, '\$.axes.mode.rc'))
                  || ' ' || coalesce('slices=' || json_extract(r.settings, '\$.axes.slices'),
                                     'size<=' || coalesce(json_extract(r.settings, '\$.axes.mode.uiSliceSizeConstraint'), json_extract(r.settings, '\$.axes.mode.slice-max-size'))) AS config,
                  m.bitrate_kbps AS kbps, m.psnr_global AS coded,
                  10 * log10(255.0 * 255 * r.width * r.height * 1.5 * (c.n + coalesce(h.n, 0)) / (c.sse + coalesce(h.sse, 0))) AS shown
           FROM runs r JOIN run_metrics m USING (run_id) JOIN coded c USING (run_id) LEFT JOIN held h USING (run_id)
           WHERE r.status = 'done' ORDER BY m.bitrate_kbps)
SELECT config, count(*), group_concat(printf('%.4f:%.4f', kbps, coded), ','), group_concat(printf('%.4f:%.4f', kbps, shown), ',')
FROM p WHERE config IS NOT NULL GROUP BY config ORDER BY config")
a_coded=$(awk -F'|' -v a="$anchor" '$1 == a {print $3}' <<<"$curves")
a_shown=$(awk -F'|' -v a="$anchor" '$1 == a {print $4}' <<<"$curves")
[ -n "$a_coded" ] || { echo "$0: no configuration '$anchor' in $db (configurations: $(cut -d'|' -f1 <<<"$curves" | paste -sd, -))" >&2; exit 64; }
printf '%-40s %6s %16s %16s\n' configuration points "BD-rate coded" "BD-rate shown"
while IFS='|' read -r config n coded shown; do
    bd() { "$enclab" bd-rate --anchor "$1" --test "$2" 2>/dev/null | awk '/BD-rate/ {print $3 " %"}' || true; }
    printf '%-40s %6s %16s %16s\n' "$config" "$n" "$(bd "$a_coded" "$coded")" "$(bd "$a_shown" "$shown")"
done <<<"$curves"
